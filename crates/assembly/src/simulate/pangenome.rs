//! Seeded pangenomes: a base genome and descendants along a random tree, each edge applying
//! SNPs, small indels, gene loss and gene gain (new sequence or horizontal transfer), so that
//! colored-graph benchmarks can be rerun anywhere from a seed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::AssemblyError;
use crate::kmer::reverse_complement_letters;

/// Shortest gene lost or gained, in bases.
pub const GENE_MIN: usize = 500;
/// Longest gene lost or gained, in bases.
pub const GENE_MAX: usize = 5_000;
/// Longest small insertion or deletion, in bases.
pub const INDEL_MAX: usize = 10;

/// What [`write_pangenome`] calls with each genome: its name and sequence.
pub type GenomeFn<'a> = dyn FnMut(&str, &[u8]) -> Result<(), AssemblyError> + 'a;

/// What [`simulate_pangenome`] and [`write_pangenome`] make: how many genomes, how long, and
/// the rates of change along each edge of the tree.
///
/// The rates are per edge, and every edge gets the same ones; a genome at depth `d` (edges
/// from the base) has gone through `d` of them. The tree is a Yule tree (a random leaf splits
/// in two, until there are `genomes` leaves), so the depth of a genome is about `2 ln N`: about
/// 9 edges for 100 genomes, 14 for 1,000. With the defaults a genome differs from the base by
/// about 1% of its bases at 100 genomes, and two genomes from each other by up to twice that,
/// as strains of one bacterial species do; lengths stay near the base's, since genes are
/// gained as often as lost and with the same lengths.
///
/// # Examples
/// ```
/// let mut o = assembly::PangenomeOptions::new(4, 20_000);
/// o.snp_rate = 0.01;
/// o.seed = 7;
/// assert_eq!(o.indel_rate, assembly::PangenomeOptions::DEFAULT_INDEL_RATE);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PangenomeOptions {
    /// Genomes to make (the leaves of the tree): at least 1.
    pub genomes: usize,
    /// Length of the base genome, in bases: at least 1.
    pub length: usize,
    /// Seed of the base genome, the tree and every edge's changes.
    pub seed: u64,
    /// Probability per base and edge of a substitution.
    pub snp_rate: f64,
    /// Probability per base and edge of a small insertion or deletion (equally likely; 1 to
    /// [`INDEL_MAX`] bases, uniform).
    pub indel_rate: f64,
    /// Genes lost per edge and million bases: deletions of [`GENE_MIN`] to [`GENE_MAX`]
    /// bases (uniform; at most a tenth of the genome).
    pub losses_per_mbp: f64,
    /// Genes gained per edge and million bases: insertions of [`GENE_MIN`] to [`GENE_MAX`]
    /// bases (uniform; at most a tenth of the genome).
    pub gains_per_mbp: f64,
    /// Fraction of the gained genes copied from another lineage (horizontal transfer: a
    /// segment of the genome made last, on either strand) rather than new random sequence.
    pub transfer_fraction: f64,
}

impl PangenomeOptions {
    /// Default [`PangenomeOptions::snp_rate`]: 0.1% of the bases per edge.
    pub const DEFAULT_SNP_RATE: f64 = 0.001;
    /// Default [`PangenomeOptions::indel_rate`]: one base in 10,000 per edge.
    pub const DEFAULT_INDEL_RATE: f64 = 0.0001;
    /// Default [`PangenomeOptions::losses_per_mbp`]: one gene per edge and million bases.
    pub const DEFAULT_LOSSES_PER_MBP: f64 = 1.0;
    /// Default [`PangenomeOptions::gains_per_mbp`]: one gene per edge and million bases.
    pub const DEFAULT_GAINS_PER_MBP: f64 = 1.0;
    /// Default [`PangenomeOptions::transfer_fraction`]: half of the gains.
    pub const DEFAULT_TRANSFER_FRACTION: f64 = 0.5;

    /// `genomes` genomes from a base of `length` bases, seed 1, the default rates.
    pub fn new(genomes: usize, length: usize) -> PangenomeOptions {
        PangenomeOptions {
            genomes,
            length,
            seed: 1,
            snp_rate: Self::DEFAULT_SNP_RATE,
            indel_rate: Self::DEFAULT_INDEL_RATE,
            losses_per_mbp: Self::DEFAULT_LOSSES_PER_MBP,
            gains_per_mbp: Self::DEFAULT_GAINS_PER_MBP,
            transfer_fraction: Self::DEFAULT_TRANSFER_FRACTION,
        }
    }

    /// Checks the options: at least one genome and one base, rates in range.
    ///
    /// # Errors
    /// [`AssemblyError::InvalidParameter`] naming the option out of range.
    ///
    /// # Examples
    /// ```
    /// assert!(assembly::PangenomeOptions::new(2, 100).check().is_ok());
    /// assert!(assembly::PangenomeOptions::new(0, 100).check().is_err());
    /// ```
    pub fn check(&self) -> Result<(), AssemblyError> {
        let bad = |m: String| Err(AssemblyError::InvalidParameter(m));
        if self.genomes == 0 {
            return bad("a pangenome needs at least 1 genome".into());
        }
        if self.length == 0 {
            return bad("the base genome needs at least 1 base".into());
        }
        for (name, r) in [("SNP rate", self.snp_rate), ("indel rate", self.indel_rate)] {
            if !(0.0..1.0).contains(&r) {
                return bad(format!(
                    "the {name} is {r}: it must be at least 0 and below 1"
                ));
            }
        }
        for (name, r) in [
            ("gene losses per Mbp", self.losses_per_mbp),
            ("gene gains per Mbp", self.gains_per_mbp),
        ] {
            if !(0.0..1e6).contains(&r) {
                return bad(format!(
                    "{name} is {r}: it must be at least 0 and below 10^6"
                ));
            }
        }
        if !(0.0..=1.0).contains(&self.transfer_fraction) {
            return bad(format!(
                "the transfer fraction is {}: it must be from 0 to 1",
                self.transfer_fraction
            ));
        }
        Ok(())
    }
}

/// The changes made along all the edges of the tree, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PangenomeEvents {
    /// Substitutions.
    pub snps: u64,
    /// Small insertions (1 to [`INDEL_MAX`] bases).
    pub insertions: u64,
    /// Small deletions (1 to [`INDEL_MAX`] bases).
    pub deletions: u64,
    /// Genes lost.
    pub losses: u64,
    /// Genes gained as new random sequence.
    pub gains: u64,
    /// Genes gained by horizontal transfer from another lineage.
    pub transfers: u64,
}

/// What [`write_pangenome`] made besides the genomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pangenome {
    /// The genomes' names, in the order they were made (`g0000`, `g0001`, ...).
    pub names: Vec<String>,
    /// The tree in Newick (leaves by name, the base at the root), ending in `;`.
    pub newick: String,
    /// Bases of all the genomes together.
    pub bases: u64,
    /// The changes along the tree's edges.
    pub events: PangenomeEvents,
}

/// The genomes of a seeded pangenome, in memory: `(name, sequence)` pairs, names `g0000`,
/// `g0001`, ... (four digits at least, more where `genomes` needs them). See
/// [`PangenomeOptions`] for the model and [`write_pangenome`] to stream them instead.
///
/// # Errors
/// [`AssemblyError::InvalidParameter`] for options out of range.
///
/// # Examples
/// ```
/// let o = assembly::PangenomeOptions::new(3, 10_000);
/// let genomes = assembly::simulate_pangenome(&o)?;
/// assert_eq!(genomes.len(), 3);
/// assert_eq!(genomes[0].0, "g0000");
/// assert!(genomes.iter().all(|(_, g)| g.len() > 9_000 && g.len() < 11_000));
/// assert_eq!(genomes, assembly::simulate_pangenome(&o)?); // seeded
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn simulate_pangenome(o: &PangenomeOptions) -> Result<Vec<(String, Vec<u8>)>, AssemblyError> {
    let mut out = Vec::with_capacity(o.genomes);
    write_pangenome(o, &mut |name, g| {
        out.push((name.to_owned(), g.to_vec()));
        Ok(())
    })?;
    Ok(out)
}

/// Makes the genomes of [`simulate_pangenome`] one at a time and hands each to `emit` (name,
/// sequence) as it is made, holding only the genomes the rest of the tree still needs: the
/// ancestors of the next genome (about `2 ln N` of them) and the last genome made (the donor
/// of horizontal transfers). 1,000 genomes of 5 Mbp thus take about 150 MB, not 5 GB.
///
/// The base genome is [`crate::random_genome`]`(length, seed)`; the tree and each edge's
/// changes come from their own streams of the same seed, so the output is the same on every
/// machine and any thread count.
///
/// # Errors
/// [`AssemblyError::InvalidParameter`] for options out of range; `emit`'s errors, which stop
/// the run.
///
/// # Examples
/// ```
/// let o = assembly::PangenomeOptions::new(5, 8_000);
/// let mut lengths = Vec::new();
/// let p = assembly::write_pangenome(&o, &mut |_, g| {
///     lengths.push(g.len());
///     Ok(())
/// })?;
/// assert_eq!(p.names.len(), 5);
/// assert_eq!(p.bases, lengths.iter().sum::<usize>() as u64);
/// assert!(p.newick.ends_with(';') && p.newick.contains("g0004"));
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn write_pangenome(
    o: &PangenomeOptions,
    emit: &mut GenomeFn<'_>,
) -> Result<Pangenome, AssemblyError> {
    o.check()?;
    let tree = Tree::yule(o.genomes, o.seed);
    let base = super::random_genome(o.length, o.seed);
    let width = (o.genomes - 1).to_string().len().max(4);
    let mut walk = Walk {
        o,
        tree: &tree,
        width,
        emit,
        donor: None,
        out: Pangenome {
            names: Vec::with_capacity(o.genomes),
            newick: String::new(),
            bases: 0,
            events: PangenomeEvents::default(),
        },
    };
    let mut newick = walk.visit(0, &base)?;
    newick.push(';');
    walk.out.newick = newick;
    Ok(walk.out)
}

/// The shape of the tree: node 0 is the base genome, every other node has one parent; the
/// leaves are the genomes written.
struct Tree {
    children: Vec<Vec<usize>>,
}

impl Tree {
    /// A Yule tree with `leaves` leaves under a root with one child: a uniformly chosen leaf
    /// splits in two until there are enough.
    fn yule(leaves: usize, seed: u64) -> Tree {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(u64::MAX);
        let mut children = vec![vec![1], vec![]];
        let mut tips = vec![1usize];
        while tips.len() < leaves {
            let v = tips.swap_remove(rng.random_range(0..tips.len()));
            let first = children.len();
            children[v] = vec![first, first + 1];
            children.push(vec![]);
            children.push(vec![]);
            tips.extend([first, first + 1]);
        }
        Tree { children }
    }
}

/// The depth-first walk that makes the genomes: the state between edges.
struct Walk<'a> {
    o: &'a PangenomeOptions,
    tree: &'a Tree,
    width: usize,
    emit: &'a mut GenomeFn<'a>,
    /// The genome made last: the source of horizontal transfers into the next ones.
    donor: Option<Vec<u8>>,
    out: Pangenome,
}

impl Walk<'_> {
    /// Makes the genomes under `node` (whose sequence is `genome`); returns its subtree in
    /// Newick, without the `;`.
    fn visit(&mut self, node: usize, genome: &[u8]) -> Result<String, AssemblyError> {
        let mut parts = Vec::with_capacity(2);
        for &child in &self.tree.children[node] {
            let mut rng = ChaCha8Rng::seed_from_u64(self.o.seed);
            rng.set_stream(child as u64);
            let g = mutate(
                genome,
                self.o,
                self.donor.as_deref(),
                &mut rng,
                &mut self.out.events,
            );
            if self.tree.children[child].is_empty() {
                let name = format!("g{:0w$}", self.out.names.len(), w = self.width);
                (self.emit)(&name, &g)?;
                self.out.bases += g.len() as u64;
                parts.push(name.clone());
                self.out.names.push(name);
                self.donor = Some(g);
            } else {
                parts.push(self.visit(child, &g)?);
            }
        }
        Ok(if node == 0 && parts.len() == 1 {
            parts.pop().unwrap_or_default()
        } else {
            format!("({})", parts.join(","))
        })
    }
}

/// One change at a position of the parent.
enum Change {
    Snp,
    /// A deletion of this many bases: a gene (loss) or not (a small indel).
    Delete {
        bases: usize,
        gene: bool,
    },
    /// An insertion of this sequence.
    Insert(Vec<u8>, Gain),
}

/// Where inserted bases come from.
#[derive(Clone, Copy)]
enum Gain {
    /// A small random insertion.
    Indel,
    /// A new random gene.
    New,
    /// A gene copied from another lineage.
    Transfer,
}

/// The child of `parent` along one edge: SNPs, indels, gene loss and gain at `o`'s rates,
/// drawn from `rng`, counted into `events` (changes that fall inside a deletion drawn at an
/// earlier position are dropped, and not counted).
fn mutate(
    parent: &[u8],
    o: &PangenomeOptions,
    donor: Option<&[u8]>,
    rng: &mut ChaCha8Rng,
    events: &mut PangenomeEvents,
) -> Vec<u8> {
    let changes = draw_changes(parent.len(), o, donor, rng);
    let mut child = Vec::with_capacity(parent.len() + parent.len() / 50);
    let mut cursor = 0;
    for (at, change) in changes {
        if at < cursor {
            continue; // inside a deletion
        }
        child.extend_from_slice(&parent[cursor..at]);
        cursor = at;
        match change {
            Change::Snp => {
                child.push(other_base(parent[at], rng));
                cursor = at + 1;
                events.snps += 1;
            }
            Change::Delete { bases, gene } => {
                cursor = (at + bases).min(parent.len());
                *(if gene {
                    &mut events.losses
                } else {
                    &mut events.deletions
                }) += 1;
            }
            Change::Insert(s, gain) => {
                child.extend_from_slice(&s);
                *match gain {
                    Gain::Indel => &mut events.insertions,
                    Gain::New => &mut events.gains,
                    Gain::Transfer => &mut events.transfers,
                } += 1;
            }
        }
    }
    child.extend_from_slice(&parent[cursor..]);
    child
}

/// The changes of one edge of a genome of `len` bases, sorted by position (changes at one
/// position in the order they were drawn).
fn draw_changes(
    len: usize,
    o: &PangenomeOptions,
    donor: Option<&[u8]>,
    rng: &mut ChaCha8Rng,
) -> Vec<(usize, Change)> {
    let gene_max = GENE_MAX.min(len / 10).max(1);
    let gene_min = GENE_MIN.min(gene_max);
    let mut changes: Vec<(usize, Change)> = Vec::new();
    for at in positions(len, o.snp_rate, rng) {
        changes.push((at, Change::Snp));
    }
    for at in positions(len, o.indel_rate, rng) {
        let bases = rng.random_range(1..=INDEL_MAX);
        changes.push((
            at,
            if rng.random_bool(0.5) {
                Change::Delete { bases, gene: false }
            } else {
                Change::Insert(random_bases(bases, rng), Gain::Indel)
            },
        ));
    }
    for at in positions(len, o.losses_per_mbp / 1e6, rng) {
        let bases = rng.random_range(gene_min..=gene_max);
        changes.push((at, Change::Delete { bases, gene: true }));
    }
    for at in positions(len, o.gains_per_mbp / 1e6, rng) {
        let n = rng.random_range(gene_min..=gene_max);
        let gene = match donor {
            Some(d) if d.len() >= n && rng.random_bool(o.transfer_fraction) => {
                let s = rng.random_range(0..=d.len() - n);
                let piece = &d[s..s + n];
                let piece = if rng.random_bool(0.5) {
                    reverse_complement_letters(piece)
                } else {
                    piece.to_vec()
                };
                Change::Insert(piece, Gain::Transfer)
            }
            _ => Change::Insert(random_bases(n, rng), Gain::New),
        };
        changes.push((at, gene));
    }
    changes.sort_by_key(|c| c.0);
    changes
}

/// The positions in `0..len` each chosen with probability `p`, in order (geometric gaps:
/// the number of draws follows the number of events, not `len`).
fn positions(len: usize, p: f64, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut out = Vec::new();
    if p <= 0.0 {
        return out;
    }
    let log_q = (-p).ln_1p();
    let mut at = 0usize;
    loop {
        // 1 - u lies in (0, 1]: its logarithm is finite and at most 0
        let u: f64 = 1.0 - rng.random::<f64>();
        let gap = (u.ln() / log_q).floor();
        if gap >= (len - at) as f64 {
            return out;
        }
        at += gap as usize;
        out.push(at);
        at += 1;
        if at >= len {
            return out;
        }
    }
}

/// `n` uniformly random bases.
fn random_bases(n: usize, rng: &mut ChaCha8Rng) -> Vec<u8> {
    (0..n).map(|_| b"ACGT"[rng.random_range(0..4)]).collect()
}

/// A base other than `b`, uniformly.
fn other_base(b: u8, rng: &mut ChaCha8Rng) -> u8 {
    let others: Vec<u8> = b"ACGT".iter().copied().filter(|&c| c != b).collect();
    others[rng.random_range(0..others.len())]
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// Options with every rate 0 but those the test sets.
    fn only(genomes: usize, length: usize) -> PangenomeOptions {
        PangenomeOptions {
            snp_rate: 0.0,
            indel_rate: 0.0,
            losses_per_mbp: 0.0,
            gains_per_mbp: 0.0,
            ..PangenomeOptions::new(genomes, length)
        }
    }

    /// Named genomes, as [`simulate_pangenome`] returns them.
    type Named = Vec<(String, Vec<u8>)>;

    /// The base genome of `o`, its genomes, and the run's summary.
    fn simulated(o: &PangenomeOptions) -> (Vec<u8>, Named, Pangenome) {
        let base = crate::random_genome(o.length, o.seed);
        let genomes = simulate_pangenome(o).unwrap();
        let p = write_pangenome(o, &mut |_, _| Ok(())).unwrap();
        (base, genomes, p)
    }

    fn kmers(g: &[u8], k: usize) -> HashSet<&[u8]> {
        g.windows(k).collect()
    }

    #[test]
    fn seeded_and_seed_dependent() {
        let mut o = PangenomeOptions::new(6, 30_000);
        o.losses_per_mbp = 50.0;
        o.gains_per_mbp = 50.0;
        let a = simulate_pangenome(&o).unwrap();
        assert_eq!(a, simulate_pangenome(&o).unwrap());
        let names: Vec<&str> = a.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["g0000", "g0001", "g0002", "g0003", "g0004", "g0005"]
        );
        o.seed = 2;
        let b = simulate_pangenome(&o).unwrap();
        assert_ne!(a, b);
        // no two genomes alike
        let distinct: HashSet<&Vec<u8>> = a.iter().map(|(_, g)| g).collect();
        assert_eq!(distinct.len(), 6);
    }

    #[test]
    fn one_edge_of_snps_changes_about_the_rate() {
        let mut o = only(1, 200_000);
        o.snp_rate = 0.01;
        let base = crate::random_genome(o.length, o.seed);
        let mut events = PangenomeEvents::default();
        let p = write_pangenome(&o, &mut |name, g| {
            assert_eq!(name, "g0000");
            assert_eq!(g.len(), base.len());
            let diff = g.iter().zip(&base).filter(|(a, b)| a != b).count();
            // expected 2,000; the binomial's standard deviation is about 45
            assert!((1_800..=2_200).contains(&diff), "{diff} differences");
            events.snps = diff as u64;
            Ok(())
        })
        .unwrap();
        assert_eq!(p.events, events);
        assert_eq!(p.newick, "g0000;");
    }

    #[test]
    fn indels_change_the_length_a_little() {
        let mut o = only(1, 200_000);
        o.indel_rate = 0.001;
        let base = crate::random_genome(o.length, o.seed);
        let p = write_pangenome(&o, &mut |_, g| {
            let moved = g.len().abs_diff(base.len());
            assert!(g.len() != base.len() && moved < 1_000, "{} bases", g.len());
            Ok(())
        })
        .unwrap();
        let n = p.events.insertions + p.events.deletions;
        assert!((160..=240).contains(&n), "{n} indels");
        assert!(p.events.insertions > 60 && p.events.deletions > 60);
    }

    #[test]
    fn gene_loss_removes_segments_of_the_base() {
        let mut o = only(1, 500_000);
        o.losses_per_mbp = 20.0;
        let (base, genomes, p) = simulated(&o);
        let g = &genomes[0].1;
        let lost = p.events.losses as usize;
        assert!((4..=20).contains(&lost), "{lost} losses");
        let removed = base.len() - g.len();
        assert!(removed >= lost * GENE_MIN && removed <= lost * GENE_MAX);
        // every k-mer of the child is the base's but those across a junction
        let b = kmers(&base, 31);
        let foreign = g.windows(31).filter(|w| !b.contains(w)).count();
        assert!(foreign <= lost * 30, "{foreign} new k-mers");
    }

    #[test]
    fn genes_gained_new_and_transferred() {
        let mut o = only(8, 200_000);
        o.gains_per_mbp = 20.0;
        let (base, genomes, p) = simulated(&o);
        assert!(
            p.events.gains > 0 && p.events.transfers > 0,
            "{:?}",
            p.events
        );
        assert_eq!(p.events.losses + p.events.snps, 0);
        let b = kmers(&base, 31);
        for (name, g) in &genomes {
            assert!(g.len() > base.len(), "{name} gained nothing");
            assert!(
                g.len() < base.len() + 20 * GENE_MAX,
                "{name}: {} bases",
                g.len()
            );
            // the base survives but for the k-mers across an insertion point
            let here = kmers(g, 31);
            let broken = b.iter().filter(|w| !here.contains(*w)).count();
            assert!(
                broken > 0 && broken < b.len() / 50,
                "{name}: {broken} k-mers broken"
            );
        }
        // new genes are random: some k-mers are in no other genome nor the base
        let last = kmers(&genomes[7].1, 31);
        let others: HashSet<&[u8]> = genomes[..7]
            .iter()
            .flat_map(|(_, g)| g.windows(31))
            .chain(base.windows(31))
            .collect();
        assert!(last.iter().any(|w| !others.contains(w)));
    }

    #[test]
    fn defaults_keep_lengths_near_the_base_and_share_most_kmers() {
        let o = PangenomeOptions::new(8, 200_000);
        let base = crate::random_genome(o.length, o.seed);
        let b = kmers(&base, 31);
        let p = write_pangenome(&o, &mut |name, g| {
            let ratio = g.len() as f64 / base.len() as f64;
            assert!((0.95..1.05).contains(&ratio), "{name}: {ratio}");
            let shared = g.windows(31).filter(|w| b.contains(w)).count();
            let f = shared as f64 / (g.len() - 30) as f64;
            // a few edges of 0.1% SNPs: most k-mers survive, not all
            assert!(
                (0.6..0.99).contains(&f),
                "{name} shares {f} of its k-mers with the base"
            );
            Ok(())
        })
        .unwrap();
        assert!(p.events.snps > 0 && p.events.insertions > 0 && p.events.deletions > 0);
        assert!(p.bases > 8 * 190_000);
    }

    #[test]
    fn the_tree_names_every_genome_once() {
        let o = PangenomeOptions::new(50, 2_000);
        let p = write_pangenome(&o, &mut |_, _| Ok(())).unwrap();
        assert_eq!(p.names.len(), 50);
        for name in &p.names {
            assert_eq!(p.newick.matches(name.as_str()).count(), 1, "{name}");
        }
        assert_eq!(p.newick.matches('(').count(), 49); // a binary tree of 50 leaves
        assert_eq!(p.newick.matches(')').count(), 49);
        let names = simulate_pangenome(&PangenomeOptions::new(10_001, 1)).unwrap();
        assert_eq!(names[0].0, "g00000");
    }

    #[test]
    fn bad_options_are_refused() {
        for o in [
            PangenomeOptions::new(0, 100),
            PangenomeOptions::new(1, 0),
            PangenomeOptions {
                snp_rate: 1.0,
                ..PangenomeOptions::new(1, 100)
            },
            PangenomeOptions {
                indel_rate: -0.1,
                ..PangenomeOptions::new(1, 100)
            },
            PangenomeOptions {
                gains_per_mbp: f64::NAN,
                ..PangenomeOptions::new(1, 100)
            },
            PangenomeOptions {
                transfer_fraction: 1.5,
                ..PangenomeOptions::new(1, 100)
            },
        ] {
            assert!(matches!(
                simulate_pangenome(&o),
                Err(AssemblyError::InvalidParameter(_))
            ));
        }
    }

    #[test]
    fn emit_errors_stop_the_run() {
        let mut seen = 0;
        let r = write_pangenome(&PangenomeOptions::new(5, 1_000), &mut |_, _| {
            seen += 1;
            Err(AssemblyError::Interrupted)
        });
        assert!(matches!(r, Err(AssemblyError::Interrupted)));
        assert_eq!(seen, 1);
    }

    #[test]
    fn positions_come_at_the_rate_asked() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let p = positions(1_000_000, 0.001, &mut rng);
        assert!((900..=1_100).contains(&p.len()), "{}", p.len());
        assert!(p.windows(2).all(|w| w[0] < w[1]) && p.last() < Some(&1_000_000));
        assert!(positions(10, 0.0, &mut rng).is_empty());
        assert_eq!(positions(5, 0.999_999_9, &mut rng), [0, 1, 2, 3, 4]);
    }
}
