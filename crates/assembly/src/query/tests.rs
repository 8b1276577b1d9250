//! The index and the queries against a brute-force oracle: genomes as colors, each k-mer's
//! set computed directly, written as unitigs (runs of several sets, single k-mers, either
//! strand, circular ones) and color sets; queries with N's counted directly.

use std::collections::{BTreeSet, HashMap};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::kmer::reverse_complement_letters;
use crate::simulate::random_genome;

/// The canonical k-mer of a window, as text.
fn canon(w: &[u8]) -> Vec<u8> {
    let r = reverse_complement_letters(w);
    if r.as_slice() < w { r } else { w.to_vec() }
}

/// The oracle: the colors (names) and each canonical k-mer's colors (numbers).
struct Oracle {
    names: Vec<String>,
    sets: HashMap<Vec<u8>, BTreeSet<u32>>,
}

/// Colors: descendants of a base genome (substitutions, a private segment, a lost
/// segment), and a circular plasmid held by the last color.
fn genomes(rng: &mut ChaCha8Rng, colors: usize, len: usize) -> Vec<Vec<u8>> {
    let base = random_genome(len, rng.random());
    (0..colors)
        .map(|c| {
            let mut g = base.clone();
            for _ in 0..len / 50 {
                let i = rng.random_range(0..g.len());
                g[i] = b"ACGT"[rng.random_range(0..4)];
            }
            let at = rng.random_range(0..g.len());
            let cut = rng.random_range(0..len / 4);
            g.drain(at..(at + cut).min(g.len()));
            let extra = random_genome(rng.random_range(0..len / 5), rng.random());
            let at = rng.random_range(0..g.len());
            g.splice(at..at, extra);
            if c % 2 == 1 {
                g = reverse_complement_letters(&g);
            }
            g
        })
        .collect()
}

impl Oracle {
    fn new(genomes: &[Vec<u8>], plasmid: &[u8], k: usize) -> Oracle {
        let mut sets: HashMap<Vec<u8>, BTreeSet<u32>> = HashMap::new();
        let last = genomes.len() as u32 - 1;
        for (c, g) in genomes.iter().enumerate() {
            for w in g.windows(k) {
                sets.entry(canon(w)).or_default().insert(c as u32);
            }
        }
        for w in circular(plasmid, k).windows(k) {
            sets.entry(canon(w)).or_default().insert(last);
        }
        let names = (0..genomes.len()).map(|c| format!("genome_{c}")).collect();
        Oracle { names, sets }
    }

    /// The counts of each color for a query's windows of bases only.
    fn query(&self, seq: &[u8], k: usize) -> (u64, Vec<u32>) {
        let mut counts = vec![0u32; self.names.len()];
        let mut kmers = 0;
        for w in seq.windows(k) {
            if w.iter().all(|&b| crate::kmer::base_code(b).is_some()) {
                kmers += 1;
                let up = w.to_ascii_uppercase();
                for &c in self.sets.get(&canon(&up)).into_iter().flatten() {
                    counts[c as usize] += 1;
                }
            }
        }
        (kmers, counts)
    }
}

/// A circular sequence as a unitig spells it: its first k-1 bases again at its end.
fn circular(s: &[u8], k: usize) -> Vec<u8> {
    [s, &s[..k - 1]].concat()
}

/// The graph's files: every k-mer in one unitig (stretches of a genome of random lengths,
/// 1 k-mer to 60, some reverse-complemented; the plasmid as one circular unitig), its runs
/// the k-mers' set ids; sets numbered by first use, the header line when `header`.
fn graph_files(
    o: &Oracle,
    genomes: &[Vec<u8>],
    plasmid: &[u8],
    k: usize,
    header: bool,
    rng: &mut ChaCha8Rng,
) -> (Vec<u8>, Vec<u8>) {
    let mut ids: HashMap<BTreeSet<u32>, u32> = HashMap::new();
    let mut done: BTreeSet<Vec<u8>> = BTreeSet::new();
    let mut fasta = Vec::new();
    let write = |seq: &[u8], fasta: &mut Vec<u8>, ids: &mut HashMap<BTreeSet<u32>, u32>| {
        let mut runs: Vec<(u32, usize)> = Vec::new();
        for w in seq.windows(k) {
            let set = o.sets[&canon(w)].clone();
            let next = ids.len() as u32;
            let id = *ids.entry(set).or_insert(next);
            match runs.last_mut() {
                Some(r) if r.0 == id => r.1 += 1,
                _ => runs.push((id, 1)),
            }
        }
        let runs: Vec<String> = runs.iter().map(|(s, n)| format!("C:{s:x}:{n}")).collect();
        let unitig = fasta.iter().filter(|&&b| b == b'>').count();
        fasta.extend(
            format!(
                ">{unitig} LN:i:{} KC:i:1 km:f:1.0 {} L:+:0:+\n",
                seq.len(),
                runs.join(" ")
            )
            .bytes(),
        );
        fasta.extend_from_slice(seq);
        fasta.push(b'\n');
    };
    let ring = circular(plasmid, k);
    write(&ring, &mut fasta, &mut ids);
    done.extend(ring.windows(k).map(canon));
    for g in genomes {
        let mut i = 0;
        while i + k <= g.len() {
            let most = [1, 2, 7, 60][rng.random_range(0..4)];
            let mut j = i;
            let mut mine = BTreeSet::new();
            while j + k <= g.len() && j - i < most {
                let c = canon(&g[j..j + k]);
                if done.contains(&c) || !mine.insert(c) {
                    break;
                }
                j += 1;
            }
            if j == i {
                i += 1;
                continue;
            }
            done.extend(mine);
            let seq = &g[i..j + k - 1];
            if rng.random_bool(0.5) {
                write(&reverse_complement_letters(seq), &mut fasta, &mut ids);
            } else {
                write(seq, &mut fasta, &mut ids);
            }
            i = j;
        }
    }
    let mut by_id: Vec<(u32, &BTreeSet<u32>)> = ids.iter().map(|(s, &i)| (i, s)).collect();
    by_id.sort();
    let mut sets = String::new();
    if header {
        sets.push_str(&serde_json::json!({ "colors": o.names }).to_string());
        sets.push('\n');
    }
    for (i, s) in by_id {
        let names: Vec<&str> = s.iter().map(|&c| o.names[c as usize].as_str()).collect();
        sets.push_str(&serde_json::json!({"id": i, "colors": names}).to_string());
        sets.push('\n');
    }
    (fasta, sets.into_bytes())
}

/// Queries: pieces of the genomes and the plasmid's junction (either strand, some lowercase,
/// some with N's), random sequences, empty and short records.
fn queries(genomes: &[Vec<u8>], plasmid: &[u8], k: usize, rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    let mut out = vec![
        Vec::new(),
        b"ACG".to_vec(),
        circular(plasmid, k)[10..].to_vec(),
    ];
    for _ in 0..700 {
        let g = &genomes[rng.random_range(0..genomes.len())];
        let len = rng.random_range(1..3 * k);
        let at = rng.random_range(0..g.len() - len);
        let mut q = match rng.random_range(0..5) {
            0 => random_genome(len, rng.random()),
            1 => reverse_complement_letters(&g[at..at + len]),
            _ => g[at..at + len].to_vec(),
        };
        for _ in 0..rng.random_range(0..3) {
            let i = rng.random_range(0..q.len());
            q[i] = b'N';
        }
        if rng.random_bool(0.2) {
            q.make_ascii_lowercase();
        }
        out.push(q);
    }
    out
}

/// One random graph and its queries through the index, against the oracle.
fn check(k: usize, seed: u64, header: bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let g = genomes(&mut rng, 5, 600);
    let plasmid = random_genome(k + 30, rng.random());
    let o = Oracle::new(&g, &plasmid, k);
    let (fasta, sets) = graph_files(&o, &g, &plasmid, k, header, &mut rng);
    let index = ColoredIndex::load(
        &ReadSource::Bytes(&fasta, "g.fa"),
        &ReadSource::Bytes(&sets, "g.jsonl"),
        k,
    )
    .unwrap();
    assert_eq!(index.kmers(), o.sets.len());
    // the index's colors are numbered its way: map them to the oracle's by name
    let number: HashMap<&str, u32> = o
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i as u32))
        .collect();
    assert_eq!(index.colors().len(), 5);
    for (w, set) in &o.sets {
        let got: BTreeSet<u32> = index
            .colors_of(w)
            .unwrap()
            .iter()
            .map(|&c| number[index.colors()[c as usize].as_str()])
            .collect();
        assert_eq!(&got, set, "{}", String::from_utf8_lossy(w));
    }
    let qs = queries(&g, &plasmid, k, &mut rng);
    let mut fa = Vec::new();
    for (i, q) in qs.iter().enumerate() {
        fa.extend(format!(">q{i} some description\n").bytes());
        fa.extend_from_slice(q);
        fa.push(b'\n');
    }
    // the same queries twice (one source, then as FASTQ): records go on in order across both
    let fq: Vec<u8> = qs
        .iter()
        .enumerate()
        .flat_map(|(i, q)| {
            format!(
                "@q{i}\n{}\n+\n{}\n",
                String::from_utf8_lossy(q),
                "I".repeat(q.len())
            )
            .into_bytes()
        })
        .collect();
    let mut got = Vec::new();
    let stats = query_colors(
        &index,
        &[
            ReadSource::Bytes(&fa, "q.fa"),
            ReadSource::Bytes(&fq, "q.fq"),
        ],
        &mut |m| {
            let mut dense = vec![0u32; 5];
            for &(c, n) in m.matches {
                assert!(n > 0);
                dense[number[index.colors()[c as usize].as_str()] as usize] = n;
            }
            assert!(m.matches.windows(2).all(|w| w[0].0 < w[1].0));
            got.push((m.name.to_string(), m.kmers, dense));
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(got.len(), 2 * qs.len());
    assert_eq!(stats.records, 2 * qs.len() as u64);
    let mut all = 0;
    for (i, (name, kmers, dense)) in got.iter().enumerate() {
        let q = &qs[i % qs.len()];
        let (want_kmers, want) = o.query(q, k);
        assert_eq!(name, &format!("q{}", i % qs.len()));
        assert_eq!((*kmers, dense), (want_kmers, &want), "query {i} k {k}");
        all += kmers;
    }
    assert_eq!(stats.kmers, all);
    assert!(stats.found > 0 && stats.found <= stats.kmers);
}

#[test]
fn queries_match_the_oracle_for_k31_with_the_header_line() {
    check(31, 1, true);
}

#[test]
fn queries_match_the_oracle_for_k33_in_u128_words_without_the_header_line() {
    check(33, 2, false);
}

#[test]
fn queries_match_the_oracle_for_small_k_with_repeats() {
    check(9, 3, true);
    check(63, 4, false);
}

/// Loads a graph of k = 5 from text.
fn load(fasta: &str, sets: &str) -> Result<ColoredIndex, AssemblyError> {
    ColoredIndex::load(
        &ReadSource::Bytes(fasta.as_bytes(), "g.fa"),
        &ReadSource::Bytes(sets.as_bytes(), "g.jsonl"),
        5,
    )
}

#[test]
fn bad_unitigs_are_errors_naming_the_unitig() {
    let sets = "{\"id\": 0, \"colors\": [\"A\"]}\n{\"id\": 1, \"colors\": [\"B\"]}\n";
    let good = ">u0 LN:i:7 C:0:2 C:1:1\nACGTTGC\n";
    assert_eq!(load(good, sets).unwrap().kmers(), 3);
    let cases = [
        (
            ">u1 C:0:2\nACGTTGC\n",
            1,
            "unitig u1: its color runs cover 2 k-mers, and its 7 bases hold 3",
        ),
        (">u1 C:0:4\nACGTTGC\n", 1, "cover 4 k-mers"),
        (
            ">u1 C:2:3\nACGTTGC\n",
            1,
            "unitig u1: color set 2 (hex; 2 in the sets file) is not in",
        ),
        (
            ">u1 C:0:1\nACGT\n",
            1,
            "unitig u1: 4 bases, shorter than k = 5",
        ),
        (">u1 C:0:3\nACGNTGC\n", 1, "unitig u1: 'N' is not a base"),
        (">u1 LN:i:7 KC:i:3\nACGTTGC\n", 1, "unitig u1: no color run"),
        (
            ">u1 C:0:x\nACGTTGC\n",
            1,
            "unitig u1: \"C:0:x\" is not a color run",
        ),
        (
            ">u1 C:0:3\nACGTTGC\n>u2 C:1:1\nTTTTT\n>u3 C:1:2\nGCAACG\n",
            3,
            "unitig u3: k-mer GCAAC is in unitig u1 (record 1) too",
        ),
        ("not fasta\n", 1, ""),
    ];
    for (fasta, record, what) in cases {
        let e = load(fasta, sets).err().unwrap();
        let m = e.to_string();
        assert!(
            matches!(e, AssemblyError::Reads { record: r, .. } if r == record),
            "{fasta:?}: {m}"
        );
        assert!(
            m.starts_with(&format!("g.fa: record {record}: ")) && m.contains(what),
            "{m}"
        );
    }
    // a bad sets file, a bad k, a missing file
    let e = load(good, "{\"id\": 1, \"colors\": []}\n").err().unwrap();
    assert!(matches!(e, AssemblyError::ColorSets { line: 1, .. }), "{e}");
    assert!(matches!(
        load(good, sets.replace("1,", "2,").as_str()),
        Err(AssemblyError::ColorSets { line: 2, .. })
    ));
    let bad_k = ColoredIndex::load(
        &ReadSource::Bytes(b"", "g"),
        &ReadSource::Bytes(b"", "s"),
        4,
    );
    assert!(matches!(bad_k, Err(AssemblyError::BadK(4))));
    let missing = ColoredIndex::load(
        &ReadSource::File("/nonexistent/g.fa".as_ref()),
        &ReadSource::Bytes(sets.as_bytes(), "s"),
        5,
    );
    assert!(matches!(missing, Err(AssemblyError::Io { .. })));
}

#[test]
fn query_errors_name_the_record_and_stop_at_the_callers_error() {
    let index = load(">u0 C:0:3\nACGTTGC\n", "{\"id\": 0, \"colors\": [\"A\"]}\n").unwrap();
    let truncated = b"@q1\nACGTT\n+\nIIIII\n@q2\nACGTT\n+\nII\n";
    let e = query_colors(&index, &[ReadSource::Bytes(truncated, "q.fq")], &mut |_| {
        Ok(())
    });
    assert!(
        matches!(e, Err(AssemblyError::Reads { record: 2, .. })),
        "{e:?}"
    );
    let mut seen = 0;
    let fa = b">a\nACGTTGC\n>b\nACGTT\n>c\nACGTT\n";
    let e = query_colors(&index, &[ReadSource::Bytes(fa, "q.fa")], &mut |_| {
        seen += 1;
        if seen == 2 {
            Err(AssemblyError::Interrupted)
        } else {
            Ok(())
        }
    });
    assert!(matches!(e, Err(AssemblyError::Interrupted)));
    assert_eq!(seen, 2);
    // an empty file holds no records; a missing one is an I/O error
    let none = query_colors(&index, &[ReadSource::Bytes(b"", "q.fa")], &mut |_| Ok(())).unwrap();
    assert_eq!(none, QueryStats::default());
    let missing = query_colors(
        &index,
        &[ReadSource::File("/nonexistent/q.fa".as_ref())],
        &mut |_| Ok(()),
    );
    assert!(matches!(missing, Err(AssemblyError::Io { .. })));
}
