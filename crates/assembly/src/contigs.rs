//! Stage 5: contigs. The compacted graph is cleaned of what sequencing errors leave behind,
//! then every chain of unitigs that has no choice left is spelled as one contig:
//!
//! - **tips**: a unitig with a dead end on one side, shorter than `2k`, hanging off the graph
//!   (an error near the end of a read);
//! - **bubbles**: two branches (chains of unitigs, at most `5k` bases) that leave the same
//!   oriented unitig and merge into the same one, of similar length, one far weaker than the
//!   other (a substitution error): the weaker goes. Two branches both well covered are two
//!   copies of a repeat that differ: both stay, and contigs end there rather than glue the
//!   copies into one that matches neither;
//! - **low coverage**: a unitig shorter than `2k` whose mean count is below a tenth of its
//!   strongest neighbour's (a repeated error beside the true path);
//! - **far below the median**: before the rounds, unitigs whose mean count is below a fifth of
//!   the median coverage (an error repeated in a few reads, apart from the graph).
//!
//! Rounds repeat until nothing changes (at most `rounds`). Then oriented unitigs are joined
//! while the link between them is the only one out of the first and into the second.

use crate::graph::Link;
use crate::unitigs::Compacted;

/// How to clean the graph before walking it into contigs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContigOptions {
    /// Tips shorter than this many bases go (`0`: `2k`).
    pub tip_length: usize,
    /// A short unitig goes when its mean count is below this share of its strongest
    /// neighbour's.
    pub low_coverage_ratio: f64,
    /// A bubble is popped only when its weaker branch's mean count is below this share of the
    /// stronger's: two branches both well covered are two copies of a repeat that differ (or
    /// two alleles), and popping one would glue the copies into a contig that matches neither.
    pub bubble_ratio: f64,
    /// Unitigs whose mean count is below this share of the median coverage (the median of the
    /// unitigs' mean counts, weighted by their k-mers) go wherever they are: errors repeated
    /// often enough to be solid, that no neighbour-based rule reaches (an isolated piece).
    pub min_coverage_ratio: f64,
    /// At most this many cleaning rounds.
    pub rounds: usize,
    /// Contigs shorter than this many bases are not returned (`0`: `2k`).
    pub min_length: usize,
}

impl Default for ContigOptions {
    fn default() -> Self {
        ContigOptions {
            tip_length: 0,
            low_coverage_ratio: 0.1,
            bubble_ratio: 0.5,
            min_coverage_ratio: 0.2,
            rounds: 5,
            min_length: 0,
        }
    }
}

/// One contig: its bases and the unitigs it joins, in order, with their strands.
#[derive(Debug, Clone, PartialEq)]
pub struct Contig {
    /// The bases.
    pub sequence: Vec<u8>,
    /// `(unitig, reversed)` in the order spelled.
    pub unitigs: Vec<(u32, bool)>,
    /// The mean k-mer count over the contig's unitigs, weighted by their k-mers.
    pub mean_count: f64,
}

/// An oriented unitig: `2u + reversed`.
type Node = usize;

struct Graph<'a> {
    g: &'a Compacted,
    alive: Vec<bool>,
    /// successors of each oriented unitig (`2u + rev`), as oriented unitigs
    succ: Vec<Vec<Node>>,
}

impl Graph<'_> {
    fn out(&self, n: Node) -> impl Iterator<Item = Node> + '_ {
        self.succ[n].iter().copied().filter(|&m| self.alive[m / 2])
    }
    fn out_degree(&self, n: Node) -> usize {
        self.out(n).count()
    }
    /// predecessors of `n` are the successors of its reverse, reversed
    fn in_degree(&self, n: Node) -> usize {
        self.out_degree(n ^ 1)
    }
    fn len(&self, u: usize) -> usize {
        self.g.unitigs[u].sequence.len()
    }
    fn mean(&self, u: usize) -> f64 {
        self.g.unitigs[u].mean_count()
    }
}

/// Cleans the compacted graph and walks it into contigs, longest first.
///
/// # Complexity
/// `O((U + L) * rounds)` for `U` unitigs and `L` links, plus the contigs' length.
///
/// # Examples
/// ```
/// use assembly::{compact, contigs, count_kmers, CountOptions, ContigOptions, ReadSource};
/// use assembly::{random_genome, reads_to_fasta, simulate_reads};
/// let genome = random_genome(5_000, 1);
/// let reads = reads_to_fasta(&simulate_reads(&genome, 100, 20.0, 0.005, 2));
/// let c = count_kmers::<u64>(&[ReadSource::Bytes(&reads, "r.fa")], &CountOptions::new(21), &mut |_| {})?;
/// let g = compact(&c.kmers, &c.counts, 21);
/// let links = g.all_links(&c.kmers);
/// let found = contigs(&g, &links, &ContigOptions::default());
/// assert!(found[0].sequence.len() > 4_000); // errors cleaned: the genome in one piece
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn contigs(graph: &Compacted, links: &[Vec<Link>], options: &ContigOptions) -> Vec<Contig> {
    let k = graph.k;
    let n = graph.unitigs.len();
    let mut succ = vec![Vec::new(); 2 * n];
    for l in links.iter().flatten() {
        succ[2 * l.from as usize + l.from_rev as usize].push(2 * l.to as usize + l.to_rev as usize);
    }
    let mut gr = Graph {
        g: graph,
        alive: vec![true; n],
        succ,
    };
    let tip = if options.tip_length == 0 {
        2 * k
    } else {
        options.tip_length
    };
    let floor = options.min_coverage_ratio * median_coverage(graph);
    for u in 0..n {
        if gr.mean(u) < floor {
            gr.alive[u] = false;
        }
    }
    for _ in 0..options.rounds {
        let mut changed = false;
        // tips: a dead end on one side, attached on the other, short
        for u in 0..n {
            if !gr.alive[u] || gr.len(u) >= tip {
                continue;
            }
            let (fwd, rev) = (gr.out_degree(2 * u), gr.out_degree(2 * u + 1));
            if (fwd == 0) != (rev == 0) {
                gr.alive[u] = false;
                changed = true;
            }
        }
        // bubbles: two parallel branches (chains of unitigs) between the same oriented
        // unitigs; the branch with the lower mean count goes
        for a in 0..2 * n {
            if !gr.alive[a / 2] {
                continue;
            }
            let outs: Vec<Node> = gr.out(a).collect();
            if outs.len() != 2 || outs[0] / 2 == outs[1] / 2 {
                continue;
            }
            let (Some(b1), Some(b2)) = (branch(&gr, outs[0], 5 * k), branch(&gr, outs[1], 5 * k))
            else {
                continue;
            };
            if b1.end == b2.end
                && b1.end / 2 != a / 2
                && b1.bases.abs_diff(b2.bases) <= k
                && b1.mean.min(b2.mean) < options.bubble_ratio * b1.mean.max(b2.mean)
            {
                let weaker = if b1.mean < b2.mean { b1 } else { b2 };
                for u in weaker.unitigs {
                    gr.alive[u] = false;
                }
                changed = true;
            }
        }
        // low coverage beside a much stronger neighbour
        for u in 0..n {
            if !gr.alive[u] || gr.len(u) >= tip {
                continue;
            }
            let strongest = gr
                .out(2 * u)
                .chain(gr.out(2 * u + 1))
                .map(|m| gr.mean(m / 2))
                .fold(0.0f64, f64::max);
            if gr.mean(u) < options.low_coverage_ratio * strongest {
                gr.alive[u] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    walk(&gr, options)
}

/// The median of the unitigs' mean counts, each unitig weighted by its k-mers (the coverage
/// of the median k-mer's unitig); 0 for no unitigs.
fn median_coverage(graph: &Compacted) -> f64 {
    let mut means: Vec<(f64, usize)> = graph
        .unitigs
        .iter()
        .map(|u| (u.mean_count(), u.kmers))
        .collect();
    means.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: usize = means.iter().map(|m| m.1).sum();
    let mut seen = 0;
    for (mean, kmers) in means {
        seen += kmers;
        if 2 * seen >= total {
            return mean;
        }
    }
    0.0
}

/// One side of a possible bubble: the chain of unitigs from `start` to where it merges.
struct Branch {
    /// The oriented unitig the chain enters (with another way in).
    end: Node,
    /// The chain's unitigs.
    unitigs: Vec<usize>,
    /// Its bases, overlaps not counted twice.
    bases: usize,
    /// Its mean k-mer count.
    mean: f64,
}

/// Follows `start` (which must have one way in) through unitigs with one way in and one way
/// out, up to `max_bases`, to the first oriented unitig with another way in.
fn branch(gr: &Graph<'_>, start: Node, max_bases: usize) -> Option<Branch> {
    let k = gr.g.k;
    if gr.in_degree(start) != 1 {
        return None;
    }
    let mut cur = start;
    let mut unitigs = Vec::new();
    let (mut bases, mut kmers, mut total) = (0usize, 0usize, 0u64);
    loop {
        let u = &gr.g.unitigs[cur / 2];
        unitigs.push(cur / 2);
        bases += u.sequence.len() - (k - 1);
        kmers += u.kmers;
        total += u.total_count;
        if bases > max_bases {
            return None;
        }
        let mut it = gr.out(cur);
        let next = match (it.next(), it.next()) {
            (Some(x), None) => x,
            _ => return None,
        };
        if gr.in_degree(next) > 1 {
            return Some(Branch {
                end: next,
                unitigs,
                bases,
                mean: total as f64 / kmers.max(1) as f64,
            });
        }
        if unitigs.contains(&(next / 2)) {
            return None;
        }
        cur = next;
    }
}

/// Joins oriented unitigs along links that are the only way out of one and into the other.
fn walk(gr: &Graph<'_>, options: &ContigOptions) -> Vec<Contig> {
    let k = gr.g.k;
    let n = gr.g.unitigs.len();
    let min_length = if options.min_length == 0 {
        2 * k
    } else {
        options.min_length
    };
    let unique_next = |a: Node| -> Option<Node> {
        let mut it = gr.out(a);
        match (it.next(), it.next()) {
            (Some(b), None) if gr.in_degree(b) == 1 && b / 2 != a / 2 => Some(b),
            _ => None,
        }
    };
    let mut used = vec![false; n];
    let mut out = Vec::new();
    let mut emit = |path: Vec<Node>, used: &mut Vec<bool>| {
        let mut seq: Vec<u8> = Vec::new();
        let (mut kmers, mut total) = (0usize, 0u64);
        for (i, &node) in path.iter().enumerate() {
            let u = &gr.g.unitigs[node / 2];
            used[node / 2] = true;
            let s: Vec<u8> = if node % 2 == 1 {
                crate::kmer::reverse_complement_letters(&u.sequence)
            } else {
                u.sequence.clone()
            };
            seq.extend_from_slice(if i == 0 { &s[..] } else { &s[k - 1..] });
            kmers += u.kmers;
            total += u.total_count;
        }
        if seq.len() >= min_length {
            out.push(Contig {
                sequence: seq,
                unitigs: path.iter().map(|&x| ((x / 2) as u32, x % 2 == 1)).collect(),
                mean_count: total as f64 / kmers.max(1) as f64,
            });
        }
    };
    // chains from their starts: an oriented unitig with no unique predecessor
    for u in 0..n {
        if !gr.alive[u] || used[u] {
            continue;
        }
        for start in [2 * u, 2 * u + 1] {
            if used[u] || unique_next(start ^ 1).is_some() {
                continue;
            }
            let mut path = vec![start];
            let mut cur = start;
            while let Some(next) = unique_next(cur) {
                if used[next / 2] || path.contains(&next) || path.contains(&(next ^ 1)) {
                    break;
                }
                path.push(next);
                cur = next;
            }
            emit(path, &mut used);
        }
    }
    // what is left lies on cycles of unique links
    for u in 0..n {
        if gr.alive[u] && !used[u] {
            let mut path = vec![2 * u];
            let mut cur = 2 * u;
            while let Some(next) = unique_next(cur) {
                if used[next / 2] || next / 2 == u || path.contains(&next) {
                    break;
                }
                path.push(next);
                cur = next;
            }
            emit(path, &mut used);
        }
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.sequence.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        CountOptions, ReadSource, compact, count_kmers, random_genome, reads_to_fasta,
        reverse_complement_letters, simulate_reads,
    };

    /// Contigs of error-free reads from `genome` at 40x (k = 31) with `options`.
    fn contigs_of(genome: &[u8], extra: &[Vec<u8>], options: &ContigOptions) -> Vec<Contig> {
        let mut reads = simulate_reads(genome, 100, 40.0, 0.0, 7);
        reads.extend_from_slice(extra);
        let fa = reads_to_fasta(&reads);
        let c = count_kmers::<u64>(
            &[ReadSource::Bytes(&fa, "r.fa")],
            &CountOptions::new(31),
            &mut |_| {},
        )
        .unwrap();
        let g = compact(&c.kmers, &c.counts, 31);
        let links = g.all_links(&c.kmers);
        contigs(&g, &links, options)
    }

    fn in_genome(genome: &[u8], s: &[u8]) -> bool {
        let back = reverse_complement_letters(s);
        genome.windows(s.len()).any(|w| w == s || w == &back[..])
    }

    /// A genome with two copies of a 900-base repeat that differ at three bases, 250 apart
    /// (E. coli's diverged repeats, in small): each difference is a bubble whose branches are
    /// both covered as well as the genome. Popping them (the weaker branch by a hair) glued
    /// the copies into one contig that matched neither (15 of 787 contigs on 30x E. coli fell
    /// below 99% identity so); a bubble is popped only when one branch is far weaker.
    #[test]
    fn a_repeat_with_differing_copies_is_not_glued_into_a_chimera() {
        let repeat = random_genome(900, 11);
        let mut copy = repeat.clone();
        for at in [200, 450, 700] {
            copy[at] = match copy[at] {
                b'A' => b'C',
                b'C' => b'G',
                b'G' => b'T',
                _ => b'A',
            };
        }
        let mut genome = random_genome(3000, 12);
        genome.extend_from_slice(&repeat);
        genome.extend_from_slice(&random_genome(3000, 13));
        genome.extend_from_slice(&copy);
        genome.extend_from_slice(&random_genome(3000, 14));
        let found = contigs_of(&genome, &[], &ContigOptions::default());
        let total: usize = found.iter().map(|c| c.sequence.len()).sum();
        assert!(total > 9_000, "contigs of {total} bases");
        for c in &found {
            assert!(
                in_genome(&genome, &c.sequence),
                "a contig of {} bases that is not in the genome",
                c.sequence.len()
            );
        }
        // the old rule (any bubble popped, whatever its branches' counts) makes the chimera
        let glued = contigs_of(
            &genome,
            &[],
            &ContigOptions {
                bubble_ratio: f64::INFINITY,
                ..ContigOptions::default()
            },
        );
        assert!(glued.iter().any(|c| !in_genome(&genome, &c.sequence)));
    }

    /// A piece seen only twice, apart from everything (an error repeated in two reads, or a
    /// contaminant): no neighbour-based rule reaches it; the median-coverage floor does.
    #[test]
    fn an_isolated_piece_far_below_the_median_coverage_goes() {
        let genome = random_genome(5000, 21);
        let stray = random_genome(90, 22);
        let found = contigs_of(
            &genome,
            &[stray.clone(), stray.clone()],
            &ContigOptions::default(),
        );
        assert!(found.iter().all(|c| in_genome(&genome, &c.sequence)));
        assert!(found[0].sequence.len() >= 4900);
        let kept = contigs_of(
            &genome,
            &[stray.clone(), stray],
            &ContigOptions {
                min_coverage_ratio: 0.0,
                ..ContigOptions::default()
            },
        );
        assert!(kept.iter().any(|c| !in_genome(&genome, &c.sequence)));
    }
}
