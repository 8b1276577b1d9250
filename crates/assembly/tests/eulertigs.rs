//! Eulertigs against independent computations: the strings hold exactly the unitigs' k-mers,
//! each once; their number is the minimum, computed here from the k-mer set alone (the
//! imbalance of every (k-1)-mer, per connected component) and, on tiny sets, by exhaustive
//! search over every way to spell the set.

use std::collections::{HashMap, HashSet};

use assembly::{
    Assembly, CountOptions, Exec, ReadSource, assemble, random_genome, reads_to_fasta,
    simulate_reads,
};

mod common;
use common::{canon, cpu_options, rc};

/// The strings of a FASTA file.
fn records(fa: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(fa)
        .lines()
        .filter(|l| !l.starts_with('>'))
        .map(str::to_string)
        .collect()
}

/// Canonical k-mers of strings, with how often each occurs.
fn kmer_counts(strings: &[String], k: usize) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for s in strings {
        for i in 0..=s.len().saturating_sub(k) {
            if s.len() >= k {
                *m.entry(canon(&s[i..i + k])).or_insert(0) += 1;
            }
        }
    }
    m
}

/// The fewest strings that spell `kmers` (canonical) with no k-mer twice, from the k-mers
/// alone: each (k-1)-mer is a node; a k-mer enters the node of its last k-1 bases and leaves
/// the node of its first k-1 (read canonically: a reversed end counts on the other side); a
/// palindromic (k-1)-mer pairs any two. A component needs max(1, sum of imbalances / 2).
fn minimum_strings(kmers: &HashSet<String>, k: usize) -> usize {
    let mut sides: HashMap<String, [usize; 2]> = HashMap::new();
    let mut parent: HashMap<String, String> = HashMap::new();
    fn find(p: &mut HashMap<String, String>, x: &str) -> String {
        let mut r = x.to_string();
        while let Some(q) = p.get(&r) {
            if *q == r {
                break;
            }
            r = q.clone();
        }
        r
    }
    for x in kmers {
        let (left, right) = (&x[..k - 1], &x[1..]);
        // right end: into canon(right) when it reads forward there
        let cr = canon(right);
        sides.entry(cr.clone()).or_default()[if cr == right { 0 } else { 1 }] += 1;
        let cl = canon(left);
        sides.entry(cl.clone()).or_default()[if cl == left { 1 } else { 0 }] += 1;
        for c in [&cl, &cr] {
            parent.entry(c.clone()).or_insert_with(|| c.clone());
        }
        let (a, b) = (find(&mut parent, &cl), find(&mut parent, &cr));
        if a != b {
            parent.insert(a, b);
        }
    }
    let mut imbalance: HashMap<String, usize> = HashMap::new();
    for (c, [i, o]) in &sides {
        let imb = if rc(c) == *c {
            (i + o) % 2
        } else {
            i.abs_diff(*o)
        };
        *imbalance.entry(find(&mut parent, c)).or_insert(0) += imb;
    }
    imbalance.values().map(|&s| (s / 2).max(1)).sum()
}

/// The fewest strings spelling `kmers` exactly (each once), by exhaustive search (tiny sets).
fn brute_force(kmers: &[String], k: usize) -> usize {
    let n = kmers.len();
    let oriented: Vec<[String; 2]> = kmers.iter().map(|x| [x.clone(), rc(x)]).collect();
    let mut memo: HashMap<(u32, usize), usize> = HashMap::new();
    // fewest more strings after the current one, which ends with oriented k-mer `last`
    // (index 2i + o, or usize::MAX before the first string)
    fn go(
        used: u32,
        last: usize,
        n: usize,
        k: usize,
        o: &[[String; 2]],
        memo: &mut HashMap<(u32, usize), usize>,
    ) -> usize {
        if used == (1 << n) - 1 {
            return 0;
        }
        if let Some(&v) = memo.get(&(used, last)) {
            return v;
        }
        let mut best = usize::MAX;
        for i in 0..n {
            if used & (1 << i) != 0 {
                continue;
            }
            for r in 0..2 {
                let next = 2 * i + r;
                // extend the current string, or start a new one
                let extends = last != usize::MAX && o[last / 2][last % 2][1..] == o[i][r][..k - 1];
                let cost = if extends { 0 } else { 1 };
                let v = cost + go(used | (1 << i), next, n, k, o, memo);
                best = best.min(v);
            }
        }
        memo.insert((used, last), best);
        best
    }
    go(0, usize::MAX, n, k, &oriented, &mut memo)
}

/// Checks that [`minimum_strings`] of the canonical k-mers `set` equals [`brute_force`]'s.
fn formula_is_minimum(set: &[String], k: usize) {
    let hs: HashSet<String> = set.iter().cloned().collect();
    assert_eq!(
        minimum_strings(&hs, k),
        brute_force(set, k),
        "{k}-mers {set:?}"
    );
}

fn assembled(fa: &[u8], k: usize, min_count: u32) -> Assembly {
    let mut o = cpu_options(k, min_count);
    o.partitions = 7;
    assemble::<u128>(&[ReadSource::Bytes(fa, "r.fa")], &o, true, &mut |_| {}).unwrap()
}

/// Checks the eulertigs of `fa`: the unitigs' k-mers each once, the minimum number of strings.
fn check(fa: &[u8], k: usize, min_count: u32, what: &str) -> (u64, u64) {
    let a = assembled(fa, k, min_count);
    let mut unitigs = Vec::new();
    a.write_fasta(&mut unitigs).unwrap();
    let mut eulertigs = Vec::new();
    let stats = a.write_eulertigs(&mut eulertigs, Exec::Cpu).unwrap();
    let (u, e) = (records(&unitigs), records(&eulertigs));
    let (ku, ke) = (kmer_counts(&u, k), kmer_counts(&e, k));
    assert!(
        ke.values().all(|&c| c == 1),
        "{what}: an eulertig k-mer twice"
    );
    assert_eq!(
        ke.keys().collect::<HashSet<_>>(),
        ku.keys().collect::<HashSet<_>>(),
        "{what}: not the unitigs' k-mers"
    );
    assert_eq!(stats.strings as usize, e.len(), "{what}");
    assert_eq!(stats.kmers as usize, ke.len(), "{what}");
    let set: HashSet<String> = ku.keys().cloned().collect();
    let want = if set.is_empty() {
        0
    } else {
        minimum_strings(&set, k)
    };
    assert_eq!(
        e.len(),
        want,
        "{what}: {} eulertigs, the minimum is {want}",
        e.len()
    );
    // the total length is the unitigs' minus k - 1 per join
    let bases: usize = e.iter().map(String::len).sum();
    assert_eq!(bases, ke.len() + e.len() * (k - 1), "{what}");
    (a.stats.unitigs, stats.strings)
}

#[test]
fn the_formula_is_the_minimum_on_tiny_sets() {
    // every set of up to 6 canonical 3-mers drawn from a few seeds, and some 5-mers
    let mut all3: Vec<String> = Vec::new();
    for x in 0..64u32 {
        let s: String = (0..3)
            .map(|i| b"ACGT"[(x >> (2 * (2 - i)) & 3) as usize] as char)
            .collect();
        let c = canon(&s);
        if !all3.contains(&c) {
            all3.push(c);
        }
    }
    let mut state = 12345u64;
    let mut rnd = |n: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize % n
    };
    for trial in 0..300 {
        let size = 1 + trial % 6;
        let mut set: Vec<String> = Vec::new();
        while set.len() < size {
            let x = all3[rnd(all3.len())].clone();
            if !set.contains(&x) {
                set.push(x);
            }
        }
        formula_is_minimum(&set, 3);
    }
    // 5-mers along a few random strings (chains, branches, palindromic 4-mers)
    for seed in 0..60u64 {
        let g = String::from_utf8(random_genome(8, seed)).unwrap();
        let h = String::from_utf8(random_genome(7, seed + 1000)).unwrap();
        let mut set: Vec<String> = Vec::new();
        for s in [&g, &h] {
            for i in 0..=s.len() - 5 {
                let c = canon(&s[i..i + 5]);
                if !set.contains(&c) && set.len() < 7 {
                    set.push(c);
                }
            }
        }
        formula_is_minimum(&set, 5);
    }
}

#[test]
fn eulertigs_hold_each_kmer_once_in_the_fewest_strings() {
    // noisy reads: many branches and dead ends
    for (seed, len, k, errors) in [
        (1u64, 3_000usize, 21usize, 0.01f64),
        (2, 2_000, 15, 0.03),
        (3, 600, 7, 0.02),
        (4, 400, 5, 0.0),
        (5, 3_000, 33, 0.01),
    ] {
        let g = random_genome(len, seed);
        let fa = reads_to_fasta(&simulate_reads(&g, 80, 10.0, errors, seed + 9));
        for min_count in [1, 2] {
            let (unitigs, strings) = check(&fa, k, min_count, &format!("seed {seed} k {k}"));
            assert!(strings <= unitigs);
        }
    }
}

#[test]
fn eulertigs_of_dense_graphs_cycles_and_palindromes() {
    // every 5-mer: dense, with palindromic 4-mers
    let mut reads = Vec::new();
    for x in 0..1024u32 {
        let s: Vec<u8> = (0..5)
            .map(|i| b"ACGT"[(x >> (2 * (4 - i)) & 3) as usize])
            .collect();
        reads.push(s.clone());
        reads.push(s);
    }
    check(&reads_to_fasta(&reads), 5, 2, "all 5-mers");
    // a third of them
    let third: Vec<Vec<u8>> = reads
        .iter()
        .step_by(6)
        .flat_map(|r| [r.clone(), r.clone()])
        .collect();
    check(&reads_to_fasta(&third), 5, 2, "a third of the 5-mers");
    // circular genomes beside a linear one
    let mut rs = Vec::new();
    for j in 0..3u64 {
        let g = random_genome(200 + 13 * j as usize, 40 + j);
        let mut c = g.clone();
        c.extend_from_slice(&g[..20]);
        rs.push(c.clone());
        rs.push(c);
    }
    rs.push(random_genome(150, 77));
    rs.push(random_genome(150, 77));
    check(&reads_to_fasta(&rs), 21, 2, "cycles");
    // hairpins: x + rc(x), with and without a loop
    let mut hp = Vec::new();
    for j in 0..8u64 {
        let x = random_genome(12, 90 + j);
        let mut r = random_genome(9, 190 + j);
        r.extend_from_slice(&x);
        r.extend_from_slice(&assembly::reverse_complement_letters(&x));
        hp.push(r.clone());
        hp.push(r);
    }
    check(&reads_to_fasta(&hp), 7, 2, "hairpins");
}

#[test]
fn eulertigs_do_not_depend_on_threads_or_buckets() {
    let g = random_genome(20_000, 61);
    let fa = reads_to_fasta(&simulate_reads(&g, 100, 12.0, 0.01, 62));
    let mut seen = Vec::new();
    for (threads, partitions) in [(1, 3), (2, 3), (2, 64)] {
        let mut o = CountOptions::new(31);
        o.threads = threads;
        o.partitions = partitions;
        o.exec = Exec::Cpu;
        let a = assemble::<u64>(&[ReadSource::Bytes(&fa, "r.fa")], &o, true, &mut |_| {}).unwrap();
        let mut e = Vec::new();
        a.write_eulertigs(&mut e, Exec::Cpu).unwrap();
        seen.push(e);
    }
    assert!(seen.iter().all(|e| *e == seen[0]));
}
