//! The compacted graph as its readers see it, whichever way it was built: unitigs with their
//! sequence and counts ([`UnitigView`]), links between their ends ([`Link`]), and
//! [`UnitigGraph`], what both the in-memory [`crate::Compacted`] (`output.rs`) and the disk
//! store (`store.rs`) provide to the writers (`output.rs`).

use crate::AssemblyError;

/// A link between unitig ends, BCALM2's `L:<a>:<to>:<b>`: leaving unitig `from` on strand `a`
/// (`+` its end, `-` its start read backwards) enters unitig `to` on strand `b` (`+` its
/// start, `-` its end read backwards), overlapping by k-1 bases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Link {
    /// The unitig left.
    pub from: u32,
    /// `false` for `+`, `true` for `-`.
    pub from_rev: bool,
    /// The unitig entered.
    pub to: u32,
    /// `false` for `+`, `true` for `-`.
    pub to_rev: bool,
}

impl Link {
    /// The same edge of the bidirected graph seen from its other end (`a + b -` and `b + a -`).
    pub(crate) fn mirror(&self) -> Link {
        Link {
            from: self.to,
            from_rev: !self.to_rev,
            to: self.from,
            to_rev: !self.from_rev,
        }
    }

    /// Whether this link is the one of its edge that is written (the smaller of it and its
    /// mirror): each edge once in GFA and DOT.
    pub(crate) fn is_first_of_edge(&self) -> bool {
        *self <= self.mirror()
    }
}

/// A run of consecutive k-mers along a unitig that share one color set (GGCAT's
/// `C:<set>:<k-mers>`): `kmers` k-mers, each held by exactly the colors of set `set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColorRun {
    /// The color set's id (see [`crate::ColorTable::sets`]).
    pub set: u32,
    /// How many consecutive k-mers of the unitig it covers.
    pub kmers: u32,
}

/// One unitig as the writers read it, borrowed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UnitigView<'a> {
    /// Its number.
    pub(crate) id: u32,
    /// Its bases (`ACGT`).
    pub(crate) sequence: &'a [u8],
    /// Its k-mers.
    pub(crate) kmers: u64,
    /// The sum of its k-mers' counts (`KC`).
    pub(crate) total_count: u64,
    /// Whether it is a cycle.
    pub(crate) circular: bool,
    /// Its color runs along its k-mers, left to right (empty in an uncolored graph).
    pub(crate) colors: &'a [ColorRun],
}

impl UnitigView<'_> {
    /// Its bases as codes into `codes` (a letter that is no base as `A`), for spelling its
    /// k-mers again; records in `problem`, unless it already holds one, what is wrong with
    /// its text: a length other than `kmers + k - 1`, or such a letter.
    pub(crate) fn codes_checked(
        &self,
        k: usize,
        codes: &mut Vec<u8>,
        problem: &mut Option<String>,
    ) {
        if problem.is_none() && self.sequence.len() as u64 != self.kmers + k as u64 - 1 {
            *problem = Some(format!(
                "unitig {}: length {} for {} k-mers",
                self.id,
                self.sequence.len(),
                self.kmers
            ));
        }
        codes.clear();
        for &l in self.sequence {
            codes.push(crate::kmer::base_code(l).unwrap_or_else(|| {
                problem.get_or_insert_with(|| {
                    format!("unitig {}: `{}` is not a base", self.id, l as char)
                });
                0
            }));
        }
    }

    /// The mean count of its k-mers (`km`).
    pub(crate) fn mean_count(&self) -> f64 {
        self.total_count as f64 / self.kmers.max(1) as f64
    }
}

/// What [`UnitigGraph::for_each_unitig`] calls with each unitig and its links.
pub(crate) type ViewFn<'a, E> = dyn FnMut(&UnitigView<'_>, &[Link]) -> Result<(), E> + 'a;

/// A compacted graph the writers can read: its unitigs in order, each with its links.
pub(crate) trait UnitigGraph {
    /// What reading it can fail with (the writer's errors included).
    type Error;

    /// The k-mer length.
    fn k(&self) -> usize;

    /// Calls `f` with every unitig in order and its links: those out of its `+` end first,
    /// then those out of its `-` end, each in order of the next base (a cycle's two links to
    /// itself, `+` to `+` and `-` to `-`).
    ///
    /// # Errors
    /// The graph's own reading errors; the first error of `f`.
    fn for_each_unitig(&self, f: &mut ViewFn<'_, Self::Error>) -> Result<(), Self::Error>;
}

/// What [`crate::Assembly::for_each_unitig`] calls with each unitig and its links.
pub type UnitigFn<'a> = dyn FnMut(&StoredUnitig, &[Link]) -> Result<(), AssemblyError> + 'a;

/// One unitig as [`crate::Assembly::for_each_unitig`] gives it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredUnitig {
    /// Its number.
    pub id: u32,
    /// Its bases (`ACGT`).
    pub sequence: Vec<u8>,
    /// Its k-mers.
    pub kmers: u64,
    /// The sum of its k-mers' counts.
    pub total_count: u64,
    /// Whether it is a cycle.
    pub circular: bool,
    /// Its color runs along its k-mers, left to right (empty in an uncolored graph): the
    /// runs' `kmers` add up to [`StoredUnitig::kmers`].
    pub colors: Vec<ColorRun>,
}

impl StoredUnitig {
    /// The mean count of its k-mers (`km`).
    pub fn mean_count(&self) -> f64 {
        self.total_count as f64 / self.kmers.max(1) as f64
    }

    /// Sets it to the unitig `u`, reusing its buffer.
    pub(crate) fn set(&mut self, u: &UnitigView<'_>) {
        self.id = u.id;
        self.sequence.clear();
        self.sequence.extend_from_slice(u.sequence);
        self.kmers = u.kmers;
        self.total_count = u.total_count;
        self.circular = u.circular;
        self.colors.clear();
        self.colors.extend_from_slice(u.colors);
    }
}
