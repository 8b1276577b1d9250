//! Queries against a brute-force oracle: genomes as colors, each k-mer's
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

/// A record's name, k-mers and matches (colors by name).
type Answer = (String, u64, Vec<(String, u32)>);

/// Runs queries (FASTA text) through a graph with a memory bound; the records' names, k-mers
/// and matches (colors by name).
fn run(graph: &ColoredGraph<'_>, sources: &[ReadSource<'_>]) -> (Vec<Answer>, QueryStats) {
    let mut got = Vec::new();
    let stats = graph
        .query(sources, &mut |m| {
            assert!(m.matches.windows(2).all(|w| w[0].0 < w[1].0));
            let named = m
                .matches
                .iter()
                .map(|&(c, n)| {
                    assert!(n > 0);
                    (graph.colors()[c as usize].clone(), n)
                })
                .collect();
            got.push((m.name.to_string(), m.kmers, named));
            Ok(())
        })
        .unwrap();
    (got, stats)
}

/// Dense counts by the oracle's color numbers.
fn dense(o: &Oracle, named: &[(String, u32)]) -> Vec<u32> {
    let mut d = vec![0u32; o.names.len()];
    for (name, n) in named {
        d[o.names.iter().position(|x| x == name).unwrap()] = *n;
    }
    d
}

/// One random graph and its queries, against the oracle: every k-mer of the graph as a query
/// of its own (its set exactly), then pieces of the genomes, in one pass and in many.
fn check(k: usize, seed: u64, header: bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let g = genomes(&mut rng, 5, 600);
    let plasmid = random_genome(k + 30, rng.random());
    let o = Oracle::new(&g, &plasmid, k);
    let (fasta, sets) = graph_files(&o, &g, &plasmid, k, header, &mut rng);
    let graph = ColoredGraph::open(
        ReadSource::Bytes(&fasta, "g.fa"),
        ReadSource::Bytes(&sets, "g.jsonl"),
        k,
    )
    .unwrap();
    assert_eq!(graph.colors().len(), 5);
    let mut each = Vec::new();
    let mut want = Vec::new();
    for (i, (w, set)) in o.sets.iter().enumerate() {
        each.extend(format!(">k{i}\n").bytes());
        each.extend_from_slice(w);
        each.push(b'\n');
        want.push(
            set.iter()
                .map(|&c| (o.names[c as usize].clone(), 1))
                .collect::<Vec<_>>(),
        );
    }
    let (got, stats) = run(&graph, &[ReadSource::Bytes(&each, "each.fa")]);
    assert_eq!(stats.graph_kmers, o.sets.len() as u64);
    assert_eq!(stats.found, o.sets.len() as u64);
    for (i, (name, kmers, mut named)) in got.into_iter().enumerate() {
        named.sort();
        let mut w = want[i].clone();
        w.sort();
        assert_eq!((name, kmers, named), (format!("k{i}"), 1, w));
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
    let sources = [
        ReadSource::Bytes(&fa, "q.fa"),
        ReadSource::Bytes(&fq, "q.fq"),
    ];
    let (got, stats) = run(&graph, &sources);
    assert_eq!(got.len(), 2 * qs.len());
    assert_eq!((stats.records, stats.passes), (2 * qs.len() as u64, 1));
    let mut all = 0;
    for (i, (name, kmers, named)) in got.iter().enumerate() {
        let q = &qs[i % qs.len()];
        let (want_kmers, want) = o.query(q, k);
        assert_eq!(name, &format!("q{}", i % qs.len()));
        assert_eq!(
            (*kmers, dense(&o, named)),
            (want_kmers, want),
            "query {i} k {k}"
        );
        all += kmers;
    }
    assert_eq!(stats.kmers, all);
    assert!(stats.found > 0 && stats.found <= stats.kmers);
    // a bound of a few thousand k-mers a pass: many passes, the same answers
    let small = ColoredGraph::open(
        ReadSource::Bytes(&fasta, "g.fa"),
        ReadSource::Bytes(&sets, "g.jsonl"),
        k,
    )
    .unwrap()
    .with_max_memory(1 << 17);
    let (again, many) = run(&small, &sources);
    assert!(many.passes > 2, "{many:?}");
    assert_eq!((again, many.found), (got, stats.found));
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

/// Queries `q` (FASTA text) in a graph of k = 5 from text.
fn query5(fasta: &str, sets: &str, q: &str) -> Result<QueryStats, AssemblyError> {
    ColoredGraph::open(
        ReadSource::Bytes(fasta.as_bytes(), "g.fa"),
        ReadSource::Bytes(sets.as_bytes(), "g.jsonl"),
        5,
    )?
    .query(&[ReadSource::Bytes(q.as_bytes(), "q.fa")], &mut |_| Ok(()))
}

#[test]
fn bad_unitigs_are_errors_naming_the_unitig() {
    let sets = "{\"id\": 0, \"colors\": [\"A\"]}\n{\"id\": 1, \"colors\": [\"B\"]}\n";
    let good = ">u0 LN:i:7 C:0:2 C:1:1\nACGTTGC\n";
    let q = ">q\nGCAAC\n";
    let s = query5(good, sets, q).unwrap();
    assert_eq!((s.graph_kmers, s.color_sets, s.found), (3, 2, 1));
    // with no queries the graph is still read and checked
    assert_eq!(query5(good, sets, "").unwrap().graph_kmers, 3);
    let cases = [
        (
            ">u1 C:0:2\nACGTTGC\n",
            1,
            "unitig u1: its color runs cover 2 k-mers, and its 7 bases hold 3",
        ),
        (">u1 C:0:4\nACGTTGC\n", 1, "cover 4 k-mers"),
        (
            ">u0 C:0:3\nACGTTGC\n>u1 C:2:3\nACGTTGA\n",
            2,
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
        ("not fasta\n", 1, ""),
    ];
    for (fasta, record, what) in cases {
        let e = query5(fasta, sets, q).err().unwrap();
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
    // a k-mer of the queries in two unitigs: either one is named
    let twice = ">u1 C:0:3\nACGTTGC\n>u2 C:1:1\nTTTTT\n>u3 C:1:2\nGCAACG\n";
    let m = query5(twice, sets, q).err().unwrap().to_string();
    assert!(m.contains("k-mer GCAAC is in another unitig too"), "{m}");
    // a bad sets line the queries reach, a bad k, a missing file
    let e = query5(good, "{\"id\": 1, \"colors\": []}\n", q)
        .err()
        .unwrap();
    assert!(matches!(e, AssemblyError::ColorSets { line: 1, .. }), "{e}");
    assert!(matches!(
        query5(good, &sets.replace("1,", "2,"), q),
        Err(AssemblyError::ColorSets { line: 2, .. })
    ));
    let bad_k = ColoredGraph::open(ReadSource::Bytes(b"", "g"), ReadSource::Bytes(b"", "s"), 4);
    assert!(matches!(bad_k, Err(AssemblyError::BadK(4))));
    let missing = ColoredGraph::open(
        ReadSource::File("/nonexistent/g.fa".as_ref()),
        ReadSource::Bytes(sets.as_bytes(), "s"),
        5,
    )
    .unwrap()
    .query(&[], &mut |_| Ok(()));
    assert!(matches!(missing, Err(AssemblyError::Io { .. })));
}

#[test]
fn query_errors_name_the_record_and_stop_at_the_callers_error() {
    let graph = ColoredGraph::open(
        ReadSource::Bytes(b">u0 C:0:3\nACGTTGC\n", "g.fa"),
        ReadSource::Bytes(b"{\"id\": 0, \"colors\": [\"A\"]}\n", "g.jsonl"),
        5,
    )
    .unwrap();
    let truncated = b"@q1\nACGTT\n+\nIIIII\n@q2\nACGTT\n+\nII\n";
    let e = graph.query(&[ReadSource::Bytes(truncated, "q.fq")], &mut |_| Ok(()));
    assert!(
        matches!(e, Err(AssemblyError::Reads { record: 2, .. })),
        "{e:?}"
    );
    let mut seen = 0;
    let fa = b">a\nACGTTGC\n>b\nACGTT\n>c\nACGTT\n";
    let e = graph.query(&[ReadSource::Bytes(fa, "q.fa")], &mut |_| {
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
    let none = graph
        .query(&[ReadSource::Bytes(b"", "q.fa")], &mut |_| Ok(()))
        .unwrap();
    assert_eq!((none.records, none.graph_kmers, none.passes), (0, 3, 1));
    let missing = graph.query(
        &[ReadSource::File("/nonexistent/q.fa".as_ref())],
        &mut |_| Ok(()),
    );
    assert!(matches!(missing, Err(AssemblyError::Io { .. })));
    // a bound too small for any pass
    let tiny = ColoredGraph::open(ReadSource::Bytes(b"", "g"), ReadSource::Bytes(b"", "s"), 5)
        .unwrap()
        .with_max_memory(2000);
    let e = tiny.query(&[], &mut |_| Ok(()));
    assert!(matches!(e, Err(AssemblyError::Memory(_))), "{e:?}");
}

#[test]
fn passes_halve_when_the_sets_reached_exceed_half_the_bound() {
    // 27,000 colors; 24 unitigs, each of its own set of every ninth color (about 3 KB packed:
    // too sparse for one bit a color)
    let colors: Vec<String> = (0..27_000).map(|c| format!("c{c}")).collect();
    let mut sets = serde_json::json!({ "colors": colors }).to_string() + "\n";
    let (mut fasta, mut queries) = (String::new(), String::new());
    for u in 0..24u64 {
        let seq = String::from_utf8(random_genome(40, 100 + u)).unwrap();
        let names: Vec<&String> = colors.iter().skip(u as usize % 9).step_by(9).collect();
        sets += &(serde_json::json!({ "id": u, "colors": names }).to_string() + "\n");
        fasta += &format!(">{u} C:{u:x}:10\n{seq}\n");
        queries += &format!(">q{u}\n{seq}\n");
    }
    let open = |bound: u64| {
        ColoredGraph::open(
            ReadSource::Bytes(fasta.as_bytes(), "g.fa"),
            ReadSource::Bytes(sets.as_bytes(), "g.jsonl"),
            31,
        )
        .unwrap()
        .with_max_memory(bound)
    };
    let q = [ReadSource::Bytes(queries.as_bytes(), "q.fa")];
    let (one, s1) = run(&open(1 << 30), &q);
    assert_eq!(s1.passes, 1);
    let (many, s2) = run(&open(1 << 16), &q);
    assert!(s2.passes >= 4, "{s2:?}");
    assert_eq!(many, one);
    for (u, (name, kmers, matches)) in one.iter().enumerate() {
        assert_eq!((name, *kmers, matches.len()), (&format!("q{u}"), 10, 3000));
        assert!(
            matches
                .iter()
                .all(|(c, n)| *n == 10 && c[1..].parse::<usize>().unwrap() % 9 == u % 9)
        );
    }
    // one record alone over the bound: an error naming it
    let e = open(1 << 12).query(&q, &mut |_| Ok(())).err().unwrap();
    assert!(
        matches!(&e, AssemblyError::Memory(m) if m.contains("\"q0\"")),
        "{e:?}"
    );
}
