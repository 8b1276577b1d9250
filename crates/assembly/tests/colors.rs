//! Colored graphs against a brute-force oracle: every k-mer's color set is exactly the set of
//! inputs holding it, the unitigs are the uncolored graph's, and the files are the same for
//! any threads, buckets and memory bound.

use std::collections::{BTreeMap, BTreeSet};

use assembly::{
    AssemblyError, Colors, CountOptions, ReadSource, SetsFormat, assemble, assemble_colored,
    canonical, pack, random_genome,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod common;
use common::temp_dir;

/// A base genome and `n` descendants with SNPs, deletions and insertions.
fn family(n: usize, len: usize, seed: u64) -> Vec<Vec<u8>> {
    let base = random_genome(len, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed + 1);
    (0..n)
        .map(|_| {
            let mut g = base.clone();
            for _ in 0..len / 150 {
                let i = rng.random_range(0..g.len());
                g[i] = b"ACGT"[rng.random_range(0..4)];
            }
            let cut = rng.random_range(0..g.len() - 300);
            g.drain(cut..cut + rng.random_range(20..300));
            let at = rng.random_range(0..g.len());
            let extra = random_genome(rng.random_range(10..200), rng.random());
            g.splice(at..at, extra);
            g
        })
        .collect()
}

/// [`family`] as inputs `g<i>.fa`, one record each.
fn family_inputs(n: usize, len: usize, seed: u64) -> Vec<(String, Vec<u8>)> {
    family(n, len, seed)
        .iter()
        .enumerate()
        .map(|(i, g)| (format!("g{i}.fa"), fasta(&format!("g{i}"), g)))
        .collect()
}

/// Options for k-mers of length `k` that keep every k-mer seen.
fn every_kmer(k: usize) -> CountOptions {
    let mut o = CountOptions::new(k);
    o.min_count = 1;
    o
}

fn fasta(name: &str, seq: &[u8]) -> Vec<u8> {
    let mut f = format!(">{name}\n").into_bytes();
    f.extend_from_slice(seq);
    f.push(b'\n');
    f
}

/// Canonical k-mers of `seq` with their counts.
fn kmers_of(seq: &[u8], k: usize, into: &mut BTreeMap<u64, u32>) {
    for w in seq.windows(k) {
        if let Some(x) = pack::<u64>(w, k) {
            *into.entry(canonical(x, k)).or_insert(0) += 1;
        }
    }
}

/// Each unitig's header and sequence.
fn records(fa: &[u8]) -> Vec<(String, Vec<u8>)> {
    let text = String::from_utf8(fa.to_vec()).expect("text");
    let lines: Vec<&str> = text.lines().collect();
    lines
        .chunks(2)
        .map(|c| (c[0].to_string(), c[1].as_bytes().to_vec()))
        .collect()
}

/// The color runs of a header: `(set id, k-mers)`.
fn runs_of(header: &str) -> Vec<(u32, usize)> {
    header
        .split(' ')
        .filter_map(|f| f.strip_prefix("C:"))
        .map(|r| {
            let (id, n) = r.split_once(':').expect("a run");
            (
                u32::from_str_radix(id, 16).expect("hex"),
                n.parse().expect("count"),
            )
        })
        .collect()
}

/// The header without its color runs.
fn uncolored(header: &str) -> String {
    header
        .split(' ')
        .filter(|f| !f.starts_with("C:"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Builds the colored graph and checks it against the oracle; returns its files.
fn check(inputs: &[(String, Vec<u8>)], k: usize, o: &CountOptions) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let sources: Vec<ReadSource<'_>> = inputs
        .iter()
        .map(|(n, b)| ReadSource::Bytes(b, n))
        .collect();
    let names: Vec<String> = inputs.iter().map(|(n, _)| n.clone()).collect();
    let g = assemble_colored::<u64>(
        &sources,
        &Colors::PerSource(names.clone()),
        o,
        true,
        &mut |_| {},
    )
    .expect("colored");
    assert_eq!(g.stats.check, Ok(()));
    let table = g.colors().expect("colors").clone();
    let mut fa = Vec::new();
    g.write_fasta(&mut fa).expect("fasta");
    let mut gfa = Vec::new();
    g.write_gfa(&mut gfa).expect("gfa");
    let mut sets = Vec::new();
    g.write_color_sets(&mut sets, SetsFormat::Names)
        .expect("sets");

    // the oracle: each color's solid k-mers
    let mut solid_in: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
    let mut by_name: BTreeMap<&str, BTreeMap<u64, u32>> = BTreeMap::new();
    for (n, b) in inputs {
        let counts = by_name.entry(n.as_str()).or_default();
        for (_, seq) in records(b) {
            kmers_of(&seq, k, counts);
        }
    }
    for (n, counts) in &by_name {
        for (&x, &c) in counts {
            if c >= o.min_count {
                solid_in.entry(x).or_default().insert(n.to_string());
            }
        }
    }
    let mut seen = 0usize;
    let mut ids_seen = BTreeSet::new();
    for (h, seq) in records(&fa) {
        let runs = runs_of(&h);
        assert_eq!(
            runs.iter().map(|r| r.1).sum::<usize>(),
            seq.len() - k + 1,
            "{h}"
        );
        assert!(runs.windows(2).all(|w| w[0].0 != w[1].0), "{h}");
        let mut at = 0;
        for (id, n) in runs {
            ids_seen.insert(id);
            let want: BTreeSet<String> = table
                .sets
                .get(id as usize)
                .iter()
                .map(|&c| table.names[c as usize].clone())
                .collect();
            for w in seq[at..at + n + k - 1].windows(k) {
                let x = canonical(pack::<u64>(w, k).expect("bases"), k);
                assert_eq!(solid_in.get(&x), Some(&want), "k-mer of {h}");
                seen += 1;
            }
            at += n;
        }
    }
    assert_eq!(seen, solid_in.len(), "every solid k-mer once");
    assert_eq!(ids_seen.len(), table.sets.len(), "every set used");
    assert!(ids_seen.iter().copied().eq(0..table.sets.len() as u32));
    (fa, gfa, sets)
}

#[test]
fn assemblies_colors_match_the_oracle_and_the_uncolored_graph() {
    let k = 21;
    let inputs = family_inputs(5, 6_000, 7);
    let o = every_kmer(k);
    let (fa, gfa, sets) = check(&inputs, k, &o);

    // the same unitigs as the uncolored graph of all inputs
    let all: Vec<ReadSource<'_>> = inputs
        .iter()
        .map(|(n, b)| ReadSource::Bytes(b, n))
        .collect();
    let plain = assemble::<u64>(&all, &o, false, &mut |_| {}).expect("plain");
    let mut pfa = Vec::new();
    plain.write_fasta(&mut pfa).expect("fasta");
    let stripped: Vec<(String, Vec<u8>)> = records(&fa)
        .into_iter()
        .map(|(h, s)| (uncolored(&h), s))
        .collect();
    assert_eq!(stripped, records(&pfa));
    assert!(String::from_utf8_lossy(&gfa).contains("\tCR:Z:"));
    let text = String::from_utf8(sets).expect("json");
    assert!(text.starts_with("{\"colors\": [\"g0.fa\", \"g1.fa\""));

    // the same bytes for any threads, buckets and memory bound (temporary files, passes)
    let dir = temp_dir("warpath-colors");
    for (threads, buckets, memory) in [(1, 4, 0), (2, 64, 0), (2, 16, 48 << 20)] {
        let mut o2 = o.clone();
        o2.threads = threads;
        o2.partitions = buckets;
        o2.max_memory = memory;
        if memory > 0 {
            o2.temp_dir = Some(dir.clone());
        }
        let again = check(&inputs, k, &o2);
        assert_eq!(again.0, fa, "threads {threads} buckets {buckets}");
        assert_eq!(again.1, gfa);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn min_count_holds_per_input_and_names_may_repeat() {
    let k = 15;
    let genome = random_genome(3_000, 11);
    // input a: the genome twice (every k-mer solid at 2); b and c: one copy each of the
    // second half, so their k-mers reach 2 only pooled; c shares b's name
    let half = &genome[1_500..];
    let a = [fasta("a1", &genome), fasta("a2", &genome)].concat();
    let b = fasta("b", half);
    let c = fasta("c", &genome[..1_600]);
    let inputs = vec![
        ("a".to_string(), a),
        ("b".to_string(), b),
        ("b".to_string(), c),
    ];
    let mut o = CountOptions::new(k);
    o.min_count = 2;
    let (_, _, sets) = check(&inputs, k, &o);
    let text = String::from_utf8(sets).expect("json");
    // b's k-mers where its two files overlap (100 bases) are held twice by b
    assert!(text.contains("[\"a\", \"b\"]"), "{text}");
    assert!(text.starts_with("{\"colors\": [\"a\", \"b\"]}"), "{text}");
}

#[test]
fn each_record_its_own_color() {
    let k = 17;
    let gs = family(3, 2_000, 3);
    let mut multi = Vec::new();
    for (i, g) in gs.iter().enumerate() {
        multi.extend(fasta(&format!("r{i} some description"), g));
    }
    // a record named again joins its color
    multi.extend(fasta("r0 again", &random_genome(200, 99)));
    let o = every_kmer(k);
    let src = [ReadSource::Bytes(&multi, "multi.fa")];
    let g =
        assemble_colored::<u64>(&src, &Colors::PerRecord, &o, true, &mut |_| {}).expect("colored");
    let t = g.colors().expect("colors");
    assert_eq!(t.names, ["r0", "r1", "r2"]);
    // the oracle with one input per name
    let per_name: Vec<(String, Vec<u8>)> = vec![
        (
            "r0".into(),
            [fasta("x", &gs[0]), fasta("y", &random_genome(200, 99))].concat(),
        ),
        ("r1".into(), fasta("x", &gs[1])),
        ("r2".into(), fasta("x", &gs[2])),
    ];
    let (fa, _, _) = check(&per_name, k, &o);
    let mut mine = Vec::new();
    g.write_fasta(&mut mine).expect("fasta");
    assert_eq!(mine, fa);
}

#[test]
fn names_must_match_the_inputs() {
    let a = fasta("a", &random_genome(100, 1));
    let o = CountOptions::new(11);
    let r = assemble_colored::<u64>(
        &[ReadSource::Bytes(&a, "a.fa")],
        &Colors::PerSource(vec!["a".into(), "b".into()]),
        &o,
        false,
        &mut |_| {},
    );
    assert!(matches!(r, Err(AssemblyError::InvalidParameter(m)) if m.contains("2 color names")));
    let plain =
        assemble::<u64>(&[ReadSource::Bytes(&a, "a.fa")], &o, false, &mut |_| {}).expect("plain");
    assert!(plain.colors().is_none());
    assert!(matches!(
        plain.write_color_sets(&mut Vec::new(), SetsFormat::Names),
        Err(AssemblyError::InvalidParameter(_))
    ));
}

#[test]
fn a_colored_bucket_too_large_is_counted_in_passes_with_the_same_files() {
    let k = 31;
    let inputs = family_inputs(4, 150_000, 21);
    let mut o = every_kmer(k);
    o.threads = 1;
    let (fa, _, sets) = check(&inputs, k, &o);
    // one bucket of 600,000 occurrences in a bound that holds a fraction of them: passes
    let dir = temp_dir("warpath-colors-passes");
    let mut small = o.clone();
    small.partitions = 1;
    small.max_memory = 44 << 20;
    small.temp_dir = Some(dir.clone());
    let again = check(&inputs, k, &small);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(again.0, fa);
    assert_eq!(again.2, sets);
}
