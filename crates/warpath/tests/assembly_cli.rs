//! `warpath kmers` and `warpath assemble` as a user runs them: outputs in each format, the
//! JSON report, and the errors of bad input.

use std::collections::HashMap;

mod common;

use common::{assert_errors, dir, json_of, ok_json, run_in, warpath};

fn rc(s: &str) -> String {
    String::from_utf8(assembly::reverse_complement_letters(s.as_bytes())).expect("ACGT letters")
}

fn canon(s: &str) -> String {
    let r = rc(s);
    if r.as_str() < s { r } else { s.to_string() }
}

/// A small genome and reads covering it from both strands, every k-mer at least twice.
fn reads() -> (String, String) {
    let genome =
        "ATGGCGTACCTTGACAGTCCATGACGGTATCAGGCTTACGATCGGTAACGTTAGCATCCGGATTACAGGTCGATCGTTAGC";
    let mut fa = String::new();
    for (i, s) in (0..genome.len() - 30).step_by(5).enumerate() {
        let r = &genome[s..s + 30];
        fa.push_str(&format!(">f{i}\n{r}\n>r{i}\n{}\n", rc(r).to_lowercase()));
    }
    (genome.to_string(), fa)
}

/// A fresh folder `name` holding the reads of [`reads`] as `r.fa`, and the genome.
fn folder_with_reads(name: &str) -> (common::Folder, String) {
    let d = dir(name);
    let (genome, fa) = reads();
    std::fs::write(d.join("r.fa"), fa).unwrap();
    (d, genome)
}

/// Runs `warpath COMMAND r.fa ARGS --json` (words split at white space) on the reads of
/// [`reads`] in a fresh folder named after the command; the run must succeed and say
/// `verified`. Returns the folder, the genome and the JSON.
fn run_on_reads(command: &str, args: &str) -> (common::Folder, String, serde_json::Value) {
    let (d, genome) = folder_with_reads(command);
    let v = ok_json(&run_in(&d, &format!("{command} r.fa {args} --json")));
    assert_eq!(v["verified"], true);
    (d, genome, v)
}

#[test]
fn kmers_text_npy_and_histogram() {
    let (d, _, v) = run_on_reads("kmers", "--k 11 --min-count 1 -o c.txt --histo h.txt");
    let fa = reads().1;
    // the counts are a hash map's of canonical 11-mers
    let mut want: HashMap<String, u64> = HashMap::new();
    for line in fa.lines().filter(|l| !l.starts_with('>')) {
        let up = line.to_ascii_uppercase();
        for i in 0..=up.len() - 11 {
            *want.entry(canon(&up[i..i + 11])).or_default() += 1;
        }
    }
    let text = std::fs::read_to_string(d.join("c.txt")).unwrap();
    let got: HashMap<String, u64> = text
        .lines()
        .map(|l| {
            let (k, n) = l.split_once('\t').unwrap();
            (k.to_string(), n.parse().unwrap())
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(v["distinct"].as_u64(), Some(want.len() as u64));
    assert_eq!(v["kmers_seen"].as_u64(), Some(want.values().sum()));
    let histo = std::fs::read_to_string(d.join("h.txt")).unwrap();
    let in_histo: u64 = histo
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(in_histo, want.len() as u64);
    // .npy: (n, 2) uint64 [kmer, count]
    let out = run_in(&d, "kmers r.fa --k 11 --min-count 1 -o c.npy");
    assert!(out.status.success());
    let a = warpath_io::read_array::<u64>(&d.join("c.npy")).unwrap();
    assert_eq!(a.shape, vec![want.len(), 2]);
    assert_eq!(
        a.data.chunks(2).map(|p| p[1]).sum::<u64>(),
        want.values().sum::<u64>()
    );
}

#[test]
fn assemble_writes_fasta_gfa_and_dot() {
    let (d, genome, v) = run_on_reads("assemble", "--k 15 --unitigs u.fa --gfa g.gfa --dot g.dot");
    for key in [
        "reads",
        "kmers_seen",
        "distinct",
        "solid",
        "unitigs",
        "total_length",
        "n50",
        "stages",
        "peak_memory_bytes",
    ] {
        assert!(!v[key].is_null(), "{key} missing: {v}");
    }
    // a repeat-free genome read error-free is one unitig: the genome, on one strand
    let u = std::fs::read_to_string(d.join("u.fa")).unwrap();
    let lines: Vec<&str> = u.lines().collect();
    assert!(
        lines[0].starts_with(">0 LN:i:")
            && lines[0].contains(" KC:i:")
            && lines[0].contains(" km:f:"),
        "{u}"
    );
    let covered = &genome[..(genome.len() - 30) / 5 * 5 + 30];
    assert!(lines[1] == covered || lines[1] == rc(covered), "{u}");
    let gfa = std::fs::read_to_string(d.join("g.gfa")).unwrap();
    assert!(gfa.starts_with("H\tVN:Z:1.0\nS\t0\t"), "{gfa}");
    assert!(
        std::fs::read_to_string(d.join("g.dot"))
            .unwrap()
            .starts_with("digraph unitigs {")
    );
    // text report, unitigs to standard output by default
    let out = warpath()
        .args(["assemble", "r.fa", "--k", "15"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(">0 LN:i:"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("verified"));
}

#[test]
fn assembly_errors_have_kinds() {
    let (d, _) = folder_with_reads("assemble-errors");
    std::fs::write(d.join("bad.fq"), "@r1\nACGT\n+\nII\n").unwrap();
    std::fs::write(d.join("not.fa"), "name,value\nx,1\n").unwrap();
    assert_errors(
        &d,
        &[
            (vec!["kmers", "r.fa", "--k", "10"], "input", "must be odd"),
            (
                vec!["assemble", "r.fa", "--k", "65"],
                "input",
                "between 3 and 63",
            ),
            (
                vec!["kmers", "bad.fq", "--k", "3"],
                "parse",
                "bad.fq: record 1",
            ),
            (vec!["assemble", "not.fa", "--k", "3"], "parse", "not.fa"),
            (vec!["kmers", "missing.fa", "--k", "3"], "io", "missing.fa"),
            (
                vec!["assemble", "r.fa", "--k", "33", "--backend", "cuda"],
                "usage",
                "no GPU path",
            ),
            (
                vec!["kmers", "r.fa", "--k", "5", "-o", "c.csv"],
                "usage",
                ".csv",
            ),
        ],
    );
}

/// About `len * 20` bytes of FASTA: 150 bp reads at 20x with 1% errors from a random genome.
fn simulated(len: usize, seed: u64) -> Vec<u8> {
    let g = assembly::random_genome(len, seed);
    assembly::reads_to_fasta(&assembly::simulate_reads(&g, 150, 20.0, 0.01, seed + 1))
}

/// The temporary folders (`warpath-tmp-*`) and partial outputs (`.NAME.partial-*`) in `d`.
fn leftovers(d: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("warpath-tmp-") || n.contains(".partial-"))
        .collect()
}

/// `warpath assemble r.fa --k 31 --unitigs UNITIGS --json`, to run in `d`.
fn assemble_k31(d: &std::path::Path, unitigs: &str) -> std::process::Command {
    let mut c = warpath();
    c.args([
        "assemble",
        "r.fa",
        "--k",
        "31",
        "--unitigs",
        unitigs,
        "--json",
    ])
    .current_dir(d);
    c
}

#[test]
fn assemble_stays_within_max_memory_and_gives_the_same_files_whatever_the_bound() {
    let d = dir("assemble-bound");
    std::fs::write(d.join("r.fa"), simulated(200_000, 3)).unwrap();
    let run = |bound: &str, threads: &str, out: &str| {
        let v = ok_json(
            &assemble_k31(&d, out)
                .args(["--max-memory", bound, "--threads", threads])
                .output()
                .unwrap(),
        );
        assert_eq!(v["verified"], true);
        assert!(v["temp_disk_bytes"].as_u64().unwrap() > 1_000_000, "{v}");
        v
    };
    let small = run("48M", "2", "a.fa");
    let peak = small["peak_memory_bytes"].as_u64().unwrap();
    assert!(
        peak <= 48_000_000,
        "peak {peak} bytes over --max-memory 48M"
    );
    let large = run("2G", "1", "b.fa");
    assert_ne!(
        small["buckets"], large["buckets"],
        "the bound changed the buckets"
    );
    assert!(std::fs::read(d.join("a.fa")).unwrap() == std::fs::read(d.join("b.fa")).unwrap());
    // counting alone streams its sorted k-mers from the buckets within the bound too
    let count = |bound: &str, out: &str| {
        ok_json(
            &warpath()
                .args(["kmers", "r.fa", "--k", "31", "-o", out, "--json"])
                .args(["--max-memory", bound])
                .current_dir(&d)
                .output()
                .unwrap(),
        )
    };
    let small = count("48M", "a.txt");
    let peak = small["peak_memory_bytes"].as_u64().unwrap();
    assert!(
        peak <= 48_000_000,
        "kmers: peak {peak} bytes over --max-memory 48M"
    );
    assert_eq!(small["verified"], true);
    count("2G", "b.txt");
    assert!(std::fs::read(d.join("a.txt")).unwrap() == std::fs::read(d.join("b.txt")).unwrap());
    assert!(leftovers(&d).is_empty(), "{:?}", leftovers(&d));
}

#[test]
fn ctrl_c_stops_assemble_and_removes_its_files() {
    let d = dir("assemble-ctrl-c");
    std::fs::write(d.join("r.fa"), simulated(1_000_000, 4)).unwrap();
    let child = assemble_k31(&d, "u.fa")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // wait for the run to start writing temporary files, then press Ctrl-C
    let t = std::time::Instant::now();
    while leftovers(&d).is_empty() && t.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert!(
        !leftovers(&d).is_empty(),
        "the run never made its temporary folder"
    );
    // SAFETY: kill sends a signal to the child's pid; no memory is involved.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(json_of(&out)["kind"], "interrupted");
    assert!(leftovers(&d).is_empty(), "{:?}", leftovers(&d));
    assert!(!d.join("u.fa").exists(), "no output after Ctrl-C");
}

#[test]
fn a_full_disk_leaves_no_partial_output() {
    let d = dir("assemble-full");
    std::fs::write(d.join("r.fa"), simulated(100_000, 5)).unwrap();
    let out_dir = d.join("small");
    std::fs::create_dir_all(&out_dir).unwrap();
    // 32 KB for the output: the unitigs (about 100 KB) do not fit
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=32768", "tmpfs"])
        .arg(&out_dir)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    }
    let out = assemble_k31(&d, "small/u.fa")
        .args(["--temp-dir", "."])
        .output()
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(&out_dir).unwrap().collect();
    let _ = std::process::Command::new("umount").arg(&out_dir).status();
    assert!(!out.status.success());
    let v = json_of(&out);
    assert_eq!(v["kind"], "io", "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("the disk is full"),
        "{v}"
    );
    assert!(left.is_empty(), "left on the full disk: {left:?}");
    assert!(leftovers(&d).is_empty(), "{:?}", leftovers(&d));
}

#[test]
fn assemble_writes_eulertigs_with_the_unitigs_kmers() {
    let d = dir("assemble-eulertigs");
    std::fs::write(d.join("r.fa"), simulated(30_000, 6)).unwrap();
    let v = ok_json(
        &warpath()
            .args(["assemble", "r.fa", "--k", "21", "--min-count", "1"])
            .args(["--unitigs", "u.fa", "--eulertigs", "e.fa", "--json"])
            .current_dir(&d)
            .output()
            .unwrap(),
    );
    let e = &v["eulertigs"];
    let (strings, bases) = (
        e["count"].as_u64().unwrap(),
        e["total_length"].as_u64().unwrap(),
    );
    let unitigs = v["unitigs"].as_u64().unwrap();
    assert!(strings < unitigs, "{v}");
    // the same k-mers, each once: k - 1 fewer bases for each join
    let solid = v["solid"].as_u64().unwrap();
    assert_eq!(e["kmers"], solid);
    assert_eq!(bases, solid + strings * 20);
    let kmers = |file: &str| {
        let text = std::fs::read_to_string(d.join(file)).unwrap();
        let mut all: Vec<String> = text
            .lines()
            .filter(|l| !l.starts_with('>'))
            .flat_map(|l| (0..=l.len() - 21).map(move |i| canon(&l[i..i + 21])))
            .collect();
        all.sort();
        all
    };
    let (u, e) = (kmers("u.fa"), kmers("e.fa"));
    assert_eq!(u.len() as u64, solid);
    assert_eq!(u, e);
}
