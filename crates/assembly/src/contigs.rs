//! Stage 5: contigs. The compacted graph is cleaned of what sequencing errors leave behind,
//! then every chain of unitigs that has no choice left is spelled as one contig:
//!
//! - **tips**: a unitig with a dead end on one side, shorter than `2k`, hanging off the graph
//!   (an error near the end of a read);
//! - **bubbles**: two branches (chains of unitigs, at most `5k` bases) that leave the same
//!   oriented unitig and merge into the same one, of similar length (a substitution error, or
//!   a SNP): the one with the lower mean count goes;
//! - **low coverage**: a unitig shorter than `2k` whose mean count is below a tenth of its
//!   strongest neighbour's (a repeated error beside the true path).
//!
//! Rounds repeat until nothing changes (at most `rounds`). Then oriented unitigs are joined
//! while the link between them is the only one out of the first and into the second.

use crate::unitigs::{Compacted, Link};

/// How to clean the graph before walking it into contigs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContigOptions {
    /// Tips shorter than this many bases go (`0`: `2k`).
    pub tip_length: usize,
    /// A short unitig goes when its mean count is below this share of its strongest
    /// neighbour's.
    pub low_coverage_ratio: f64,
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
            if b1.end == b2.end && b1.end / 2 != a / 2 && b1.bases.abs_diff(b2.bases) <= k {
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
