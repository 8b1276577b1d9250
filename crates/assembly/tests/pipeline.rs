//! The pipeline against plain references: counts against a hash map of canonical k-mers,
//! unitigs against a union-find over the links as the definition states them, and the
//! property that unitigs re-spell every solid k-mer exactly once.

use std::collections::{BTreeSet, HashMap, HashSet};

use assembly::{
    AssemblyError, CountOptions, KmerCounts, ReadSource, canonical, compact, count_kmers, pack,
    unpack, verify_unitigs,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod common;
use common::{canon, cpu_options, rc};

/// Canonical k-mer counts of reads, the obvious way (pieces split at non-bases, any case).
fn reference_counts(reads: &[String], k: usize) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for r in reads {
        let up = r.to_ascii_uppercase();
        for piece in up.split(|c: char| !"ACGT".contains(c)) {
            if piece.len() < k {
                continue;
            }
            for i in 0..=piece.len() - k {
                *m.entry(canon(&piece[i..i + k])).or_insert(0) += 1;
            }
        }
    }
    m
}

/// The unitigs of a k-mer set as a partition, from the definition: union-find over links.
fn reference_partition(solid: &HashSet<String>) -> BTreeSet<BTreeSet<String>> {
    let succ = |s: &str| -> Vec<String> {
        "ACGT"
            .chars()
            .map(|b| format!("{}{b}", &s[1..]))
            .filter(|t| solid.contains(&canon(t)))
            .collect()
    };
    let names: Vec<&String> = solid.iter().collect();
    let id: HashMap<&String, usize> = names.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let mut parent: Vec<usize> = (0..names.len()).collect();
    fn find(p: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while p[r] != r {
            r = p[r];
        }
        p[x] = r;
        r
    }
    for s in &names {
        for o in [s.to_string(), rc(s)] {
            let out = succ(&o);
            if out.len() != 1 {
                continue;
            }
            let t = &out[0];
            if canon(t) == **s || succ(&rc(t)).len() != 1 {
                continue;
            }
            let (a, b) = (id[*s], id[&canon(t)]);
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            parent[ra] = rb;
        }
    }
    let mut groups: HashMap<usize, BTreeSet<String>> = HashMap::new();
    for (i, s) in names.iter().enumerate() {
        let r = find(&mut parent, i);
        groups.entry(r).or_default().insert((*s).clone());
    }
    groups.into_values().collect()
}

fn fasta(reads: &[String]) -> Vec<u8> {
    reads
        .iter()
        .enumerate()
        .map(|(i, r)| format!(">r{i}\n{r}\n"))
        .collect::<String>()
        .into_bytes()
}

fn random_dna(rng: &mut ChaCha8Rng, n: usize) -> String {
    (0..n)
        .map(|_| b"ACGT"[rng.random_range(0..4)] as char)
        .collect()
}

/// `n` reads of `len` bases at random places of a random genome of `genome_len` bases (from
/// `seed`), each changed by `edit` with the same generator.
fn reads_of_genome(
    seed: u64,
    genome_len: usize,
    n: usize,
    len: usize,
    mut edit: impl FnMut(&mut ChaCha8Rng, &str) -> String,
) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let genome = random_dna(&mut rng, genome_len);
    (0..n)
        .map(|_| {
            let s = rng.random_range(0..genome.len() - len);
            edit(&mut rng, &genome[s..s + len])
        })
        .collect()
}

/// The k-mers of the FASTA or FASTQ bytes `fa` (as the file `name`), counted in memory with
/// the default options.
fn counted(fa: &[u8], name: &str, k: usize) -> Result<KmerCounts<u64>, AssemblyError> {
    count_kmers::<u64>(
        &[ReadSource::Bytes(fa, name)],
        &CountOptions::new(k),
        &mut |_| {},
    )
}

/// Counts and unitigs of `reads` with our pipeline, checked against the references.
fn check(reads: &[String], k: usize, min_count: u32) {
    let bytes = fasta(reads);
    let opts = cpu_options(k, min_count);
    let want = reference_counts(reads, k);
    let solid: HashSet<String> = want
        .iter()
        .filter(|&(_, &n)| n >= min_count as u64)
        .map(|(s, _)| s.clone())
        .collect();
    let partition = reference_partition(&solid);
    macro_rules! run {
        ($w:ty) => {{
            let c = count_kmers::<$w>(&[ReadSource::Bytes(&bytes, "t.fa")], &opts, &mut |_| {})
                .unwrap();
            assert_eq!(c.stats.distinct as usize, want.len(), "k={k}");
            assert_eq!(c.stats.kmers_seen, want.values().sum::<u64>());
            assert!(c.kmers.windows(2).all(|w| w[0] < w[1]), "sorted, distinct");
            let got: HashMap<String, u64> = c
                .kmers
                .iter()
                .zip(&c.counts)
                .map(|(&x, &n)| (unpack(x, k), n as u64))
                .collect();
            let want_solid: HashMap<String, u64> = want
                .iter()
                .filter(|&(_, &n)| n >= min_count as u64)
                .map(|(s, &n)| (s.clone(), n))
                .collect();
            assert_eq!(got, want_solid, "k={k}");
            let hist_total: u64 = c.stats.histogram.values().sum();
            assert_eq!(hist_total, c.stats.distinct);
            let g = compact(&c.kmers, &c.counts, k);
            // every unitig re-spells its k-mers; together, every solid k-mer exactly once
            let mut seen = HashSet::new();
            let mut ours = BTreeSet::new();
            for u in &g.unitigs {
                let s = String::from_utf8(u.sequence.clone()).unwrap();
                assert_eq!(s.len(), k + u.kmers - 1);
                let mut set = BTreeSet::new();
                let mut total = 0;
                for i in 0..=s.len() - k {
                    let km = canon(&s[i..i + k]);
                    assert!(seen.insert(km.clone()), "k-mer {km} spelled twice");
                    total += want[&km];
                    set.insert(km);
                }
                assert_eq!(u.total_count, total);
                ours.insert(set);
            }
            assert_eq!(seen.len(), solid.len());
            assert_eq!(verify_unitigs(&g, &c.kmers, &c.counts), Ok(()));
            if let Some(u) = g.unitigs.iter().position(|u| u.kmers > 1) {
                // a corrupted unitig is caught
                let mut bad = g.clone();
                let last = bad.unitigs[u].sequence.len() - 1;
                bad.unitigs[u].sequence.truncate(last);
                bad.unitigs[u].kmers -= 1;
                assert!(verify_unitigs(&bad, &c.kmers, &c.counts).is_err());
            }
            assert_eq!(ours, partition, "k={k}: unitigs differ from the definition");
            // links enter unitigs at their ends, and come in mirror pairs
            let links = g.all_links(&c.kmers);
            let mut set = HashSet::new();
            for l in links.iter().flatten() {
                set.insert((l.from, l.from_rev, l.to, l.to_rev));
            }
            for &(a, ar, b, br) in &set {
                assert!(set.contains(&(b, !br, a, !ar)), "link without its mirror");
            }
        }};
    }
    if k <= 31 {
        run!(u64);
    }
    run!(u128);
}

#[test]
fn error_free_reads_of_a_genome_give_the_reference_unitigs() {
    let reads = reads_of_genome(7, 3000, 400, 60, |rng, r| {
        if rng.random_bool(0.5) {
            rc(r)
        } else {
            r.to_string()
        }
    });
    for k in [5, 9, 15, 21, 31, 33, 63] {
        check(&reads, k, 2);
    }
}

#[test]
fn reads_with_errors_ns_and_lowercase() {
    let reads = reads_of_genome(11, 2000, 300, 80, |rng, r| {
        let mut r: Vec<u8> = r.bytes().collect();
        for c in r.iter_mut() {
            let x: f64 = rng.random();
            if x < 0.01 {
                *c = b"ACGT"[rng.random_range(0..4)];
            } else if x < 0.015 {
                *c = b'N';
            } else if x < 0.2 {
                *c = c.to_ascii_lowercase();
            }
        }
        String::from_utf8(r).unwrap()
    });
    for (k, min) in [(7, 1), (11, 2), (21, 2), (25, 3), (35, 2)] {
        check(&reads, k, min);
    }
}

#[test]
fn a_circular_genome_is_one_circular_unitig() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let genome = random_dna(&mut rng, 500);
    let twice = format!("{genome}{genome}");
    let reads: Vec<String> = (0..genome.len())
        .step_by(10)
        .flat_map(|s| [twice[s..s + 50].to_string(), rc(&twice[s..s + 50])])
        .collect();
    check(&reads, 21, 2);
    let bytes = fasta(&reads);
    let c = counted(&bytes, "c.fa", 21).unwrap();
    let g = compact(&c.kmers, &c.counts, 21);
    assert_eq!(g.unitigs.len(), 1);
    assert!(g.unitigs[0].circular);
    assert_eq!(g.unitigs[0].kmers, 500);
    let links = g.all_links(&c.kmers);
    assert_eq!(links[0].len(), 2, "a self-link on each strand");
}

#[test]
fn bad_inputs_are_errors_naming_file_and_record() {
    let run = |b: &[u8], k: usize| counted(b, "in.fq", k);
    let e = run(b">a\nACGT\n", 4).unwrap_err();
    assert!(matches!(e, AssemblyError::BadK(4)), "{e}");
    assert!(e.to_string().contains("own reverse"));
    assert!(run(b">a\nACGT\n", 1).is_err());
    assert!(run(b">a\nACGT\n", 65).is_err());
    // k above 31 does not fit u64 words
    assert!(matches!(
        run(b">a\nACGT\n", 33),
        Err(AssemblyError::BadK(33))
    ));
    let e = run(b"@r1\nACGT\n+\nIII\n@r2\nAC\n+\nII\n", 3).unwrap_err();
    match &e {
        AssemblyError::Reads { path, record, .. } => {
            assert_eq!((path.to_str(), *record), (Some("in.fq"), 1), "{e}");
        }
        other => panic!("{other}"),
    }
    // FASTA lines that are not sequence: an error naming the record, not pieces of "reads"
    let e = run(b">ok\nACGT\n>two\nACGTTGGA\nthis is not: DNA\n", 3).unwrap_err();
    assert!(matches!(e, AssemblyError::Reads { record: 2, .. }), "{e}");
    assert!(e.to_string().contains("not a nucleotide"), "{e}");
    // IUPAC codes, gaps and U split reads without an error
    assert!(run(b">ok\nACGTRYACGT-ACG.TT*ACGUNN\n", 3).is_ok());
    assert!(matches!(
        run(b"hello world", 3),
        Err(AssemblyError::Reads { .. })
    ));
    // an empty file has no reads: empty counts, not an error
    let c = run(b"", 5).unwrap();
    assert_eq!((c.stats.reads.reads, c.kmers.len()), (0, 0));
    // a truncated gzip
    use std::io::Write;
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&fasta(&vec!["ACGTACGTTTGA".to_string(); 50]))
        .unwrap();
    let gz = z.finish().unwrap();
    assert!(run(&gz, 5).is_ok());
    assert!(matches!(
        run(&gz[..gz.len() - 10], 5),
        Err(AssemblyError::Reads { .. })
    ));
    // a missing file
    let p = std::path::Path::new("/nonexistent/reads.fa");
    let e = count_kmers::<u64>(&[ReadSource::File(p)], &CountOptions::new(5), &mut |_| {});
    assert!(matches!(e, Err(AssemblyError::Io { .. })));
    // counts
    let mut o = CountOptions::new(5);
    o.min_count = 0;
    assert!(
        count_kmers::<u64>(&[ReadSource::Bytes(b">a\nACGTA\n", "a")], &o, &mut |_| {}).is_err()
    );
}

#[test]
fn max_count_and_several_sources() {
    let a = b">x\nACGTACGTAC\n";
    let b = b">y\nACGTACGTAC\n>z\nGGGGGGGG\n";
    let mut o = CountOptions::new(5);
    o.min_count = 1;
    o.max_count = 2;
    let c = count_kmers::<u64>(
        &[ReadSource::Bytes(a, "a.fa"), ReadSource::Bytes(b, "b.fa")],
        &o,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(c.stats.reads.reads, 3);
    // GGGGG (4 occurrences, as CCCCC's reverse complement) is above max_count
    let want: u64 = canonical(pack::<u64>(b"CCCCC", 5).unwrap(), 5);
    assert!(!c.kmers.contains(&want));
    assert!(c.stats.histogram.contains_key(&4));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Unitigs of random genomes re-spell every solid k-mer exactly once, as the definition's
    /// partition.
    #[test]
    fn prop_unitigs_of_random_genomes(seed in 0u64..1000, len in 30usize..400, k in proptest::sample::select(vec![3usize, 5, 7, 11, 13, 31, 33])) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let genome = random_dna(&mut rng, len.max(k + 1));
        // every k-mer twice: the genome on both strands
        let reads = vec![genome.clone(), rc(&genome)];
        check(&reads, k, 2);
    }
}

/// Reads with errors from a random genome: the cleaned graph walks into contigs that are
/// pieces of the genome (either strand), the longest nearly all of it.
#[test]
fn contigs_of_noisy_reads_are_pieces_of_the_genome() {
    use assembly::{ContigOptions, contigs, random_genome, reads_to_fasta, simulate_reads};
    for seed in 1..4 {
        let genome = random_genome(20_000, seed);
        let text = String::from_utf8(genome.clone()).unwrap();
        let back = rc(&text);
        let reads = reads_to_fasta(&simulate_reads(&genome, 150, 25.0, 0.005, seed + 10));
        let c = counted(&reads, "r.fa", 31).unwrap();
        let g = compact(&c.kmers, &c.counts, 31);
        let links = g.all_links(&c.kmers);
        let found = contigs(&g, &links, &ContigOptions::default());
        assert!(!found.is_empty());
        assert!(
            found[0].sequence.len() >= 19_000,
            "longest {}",
            found[0].sequence.len()
        );
        for ctg in &found {
            let s = String::from_utf8(ctg.sequence.clone()).unwrap();
            assert!(
                text.contains(&s) || back.contains(&s),
                "a contig that is not in the genome"
            );
        }
    }
}
