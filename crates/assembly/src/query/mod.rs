//! Queries of a colored compacted De Bruijn graph: which colors (genomes, samples) hold the
//! k-mers of each query sequence, as GGCAT's `query --colors` and Bifrost's `query` answer.
//!
//! A query is a join of the queries' k-mers with the graph's, not a lookup in an index of the
//! whole graph: [`ColoredGraph::query`] reads query records in passes bounded by memory; a
//! pass puts its records' distinct canonical k-mers in a table, streams the graph's unitigs
//! (the FASTA with `C:<set id in hex>:<k-mers>` runs in its headers) once to give each of them
//! its color set, reads from the color-sets JSON lines only the sets so reached, and then
//! counts, per record, the k-mers each color holds. Memory follows the queries, not the
//! graph, and nothing is loaded that no query needs.

mod graph;
mod sets;
mod table;

use std::ops::Range;

use rayon::prelude::*;

use crate::AssemblyError;
use crate::kmer::{BASE_CODES, Word, check_k};
use crate::reads::{ReadSource, open_fastx, reads_error};
use sets::{Needed, PassSets, SetsFile};
use table::{NOT_FOUND, PREFETCH_AHEAD, QueryTable};

/// A colored compacted De Bruijn graph opened for queries: its files, its k and its color
/// names (the sets are read as queries reach them).
///
/// # Examples
/// ```
/// use assembly::{ColoredGraph, ReadSource};
/// // one unitig of 7 bases with k = 5: 3 k-mers, the first two in set 0, the last in set 1
/// let unitigs = b">0 LN:i:7 KC:i:3 km:f:1.0 C:0:2 C:1:1\nACGTTGC\n";
/// let sets = b"{\"colors\": [\"A\", \"B\"]}\n\
///              {\"id\": 0, \"colors\": [\"A\", \"B\"]}\n{\"id\": 1, \"colors\": [\"B\"]}\n";
/// let graph = ColoredGraph::open(
///     ReadSource::Bytes(unitigs, "g.fa"),
///     ReadSource::Bytes(sets, "g.jsonl"),
///     5,
/// )?;
/// assert_eq!(graph.colors(), ["A", "B"]);
/// let queries = b">q1 first\nACGTTGCA\n>q2\nGCAACNGT\n";
/// let mut got = Vec::new();
/// let stats = graph.query(&[ReadSource::Bytes(queries, "q.fa")], &mut |m| {
///     got.push((m.name.to_string(), m.kmers, m.matches.to_vec()));
///     Ok(())
/// })?;
/// // q1: ACGTT, CGTTG (A and B), GTTGC (B), TTGCA (none); q2: GCAAC (GTTGC's reverse
/// // complement, B) and no window across the N
/// assert_eq!(got[0], ("q1".to_string(), 4, vec![(0, 2), (1, 3)]));
/// assert_eq!(got[1], ("q2".to_string(), 1, vec![(1, 1)]));
/// assert_eq!((stats.records, stats.kmers, stats.found), (2, 5, 4));
/// assert_eq!((stats.graph_kmers, stats.color_sets), (3, 2));
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub struct ColoredGraph<'a> {
    unitigs: ReadSource<'a>,
    sets: SetsFile<'a>,
    k: usize,
    max_memory: u64,
}

impl<'a> ColoredGraph<'a> {
    /// Opens a colored graph: the unitigs FASTA (plain or gzip) and its color-sets file (JSON
    /// lines, plain or gzip, with or without the header line naming every color), built with
    /// k-mer length `k`. Reads the sets file's header line only (the whole file when it has
    /// none, to number the colors by first appearance); the unitigs are read by each query.
    ///
    /// # Errors
    /// [`AssemblyError::BadK`] for a `k` that is not odd in 3..=63; [`AssemblyError::Io`]
    /// when the sets file cannot be opened; [`AssemblyError::ColorSets`] naming the line of a
    /// header line naming a color twice (or, without a header line, of any line that is not
    /// of the format).
    ///
    /// # Examples
    /// ```
    /// use assembly::{ColoredGraph, ReadSource};
    /// let sets = b"{\"colors\": [\"A\", \"A\"]}\n";
    /// let e = ColoredGraph::open(ReadSource::Bytes(b"", "g.fa"), ReadSource::Bytes(sets, "s"), 5);
    /// assert!(e.err().unwrap().to_string().contains("\"A\" is named twice"));
    /// ```
    pub fn open(
        unitigs: ReadSource<'a>,
        color_sets: ReadSource<'a>,
        k: usize,
    ) -> Result<ColoredGraph<'a>, AssemblyError> {
        check_k(k)?;
        Ok(ColoredGraph {
            unitigs,
            sets: SetsFile::open(color_sets)?,
            k,
            max_memory: crate::default_max_memory(),
        })
    }

    /// Bounds the memory of a query's passes to `bytes` (the queries' k-mers table, their
    /// records and the color sets they reach): fewer query records per pass, more passes over
    /// the graph. Default [`crate::default_max_memory`], as `assemble`'s.
    ///
    /// # Examples
    /// ```
    /// # use assembly::{ColoredGraph, ReadSource};
    /// let g = ColoredGraph::open(ReadSource::Bytes(b"", "g"), ReadSource::Bytes(b"", "s"), 31)?
    ///     .with_max_memory(64 << 20);
    /// assert_eq!(g.max_memory(), 64 << 20);
    /// # Ok::<(), assembly::AssemblyError>(())
    /// ```
    pub fn with_max_memory(mut self, bytes: u64) -> ColoredGraph<'a> {
        self.max_memory = bytes;
        self
    }

    /// The memory bound of a query (see [`ColoredGraph::with_max_memory`]).
    pub fn max_memory(&self) -> u64 {
        self.max_memory
    }

    /// The k-mer length.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Every color's name, by color number (the header line's colors, else the colors of the
    /// sets by first appearance).
    ///
    /// # Examples
    /// ```
    /// # use assembly::{ColoredGraph, ReadSource};
    /// let sets = b"{\"colors\": [\"A\", \"B\"]}\n{\"id\": 0, \"colors\": [\"B\"]}\n";
    /// let g = ColoredGraph::open(ReadSource::Bytes(b"", "g"), ReadSource::Bytes(sets, "s"), 5)?;
    /// assert_eq!(g.colors(), ["A", "B"]); // A is in no set, and still a color
    /// # Ok::<(), assembly::AssemblyError>(())
    /// ```
    pub fn colors(&self) -> &[String] {
        self.sets.names()
    }

    /// Counts, for every record of every source in turn (FASTA or FASTQ, plain or gzip), how
    /// many of its k-mers each color holds, and calls `f` with each record's [`QueryMatch`]
    /// in input order. At least one pass over the graph is made (with no queries, it checks
    /// the unitigs and counts their k-mers).
    ///
    /// # Complexity
    /// Per pass: `O(query bases + graph bases + bytes of the sets file read)` time, the
    /// unitigs read on one thread and searched in parallel (rayon) batch by batch, the
    /// records resolved in parallel. Memory: at most about `max_memory` (the table holds
    /// `(8 or 16) + 4` bytes per slot, at most three quarters of them used; the sets reached
    /// 4 bytes a color).
    ///
    /// # Errors
    /// [`AssemblyError::Io`] when a file cannot be opened; [`AssemblyError::Reads`] naming
    /// the file and the record for a query file that is not FASTA/FASTQ or is truncated, a
    /// record of 2^32 k-mers or more, and a unitig whose runs are malformed, do not add up to
    /// `LEN - k + 1` k-mers or name a set the sets file lacks, a unitig shorter than `k` or
    /// with a letter other than `ACGT`, a k-mer of the queries in two unitigs (also the sign
    /// of a wrong `k`); [`AssemblyError::ColorSets`] naming the line of a set that a query
    /// reaches and that is not of the format; [`AssemblyError::Memory`] when one record's
    /// k-mers and sets do not fit in the bound; the first error of `f` (which stops the run).
    pub fn query(
        &self,
        sources: &[ReadSource<'_>],
        f: &mut dyn FnMut(&QueryMatch<'_>) -> Result<(), AssemblyError>,
    ) -> Result<QueryStats, AssemblyError> {
        if self.k <= u64::MAX_K {
            self.query_in::<u64>(sources, f)
        } else {
            self.query_in::<u128>(sources, f)
        }
    }

    /// [`ColoredGraph::query`] in the word `k` needs.
    fn query_in<W: Word>(
        &self,
        sources: &[ReadSource<'_>],
        f: &mut dyn FnMut(&QueryMatch<'_>) -> Result<(), AssemblyError>,
    ) -> Result<QueryStats, AssemblyError> {
        let mut stats = QueryStats::default();
        let half = (self.max_memory / 2) as usize;
        if half < 1 << 10 {
            return Err(AssemblyError::Memory(format!(
                "a query bound of {} bytes is too small: give at least 2048 bytes",
                self.max_memory
            )));
        }
        // a chunk of records at a time, each about a sixteenth of the pass's half
        let chunk_bases = (half / 16 / (W::BYTES + 1)).max(16);
        let mut pass = Pass::<W>::default();
        let mut chunk = Records {
            limit: chunk_bases,
            ..Records::default()
        };
        for source in sources {
            let path = source.name();
            let Some(mut reader) = open_fastx(source)? else {
                continue;
            };
            let mut record = 0u64;
            loop {
                let more = chunk.read(&mut *reader, &mut record, &path, self.k, true)?;
                if chunk.len() > 0 {
                    let keys = chunk_keys::<W>(&chunk, 0..chunk.len(), self.k);
                    let windows: usize = keys.iter().map(|g| g.0.len()).sum();
                    if pass.records.len() > 0 && pass.bytes_with(&chunk, windows) > half {
                        self.passes(&pass.records, Some(&mut pass.kmers), &mut stats, f)?;
                        pass = Pass::default();
                    }
                    if pass.bytes_with(&chunk, windows) > half {
                        return Err(AssemblyError::Memory(format!(
                            "query record {:?} holds more k-mers than a pass of a {}-byte bound \
                             holds: raise the bound or split the record",
                            chunk.name(chunk.len() - 1),
                            self.max_memory
                        )));
                    }
                    pass.records.append(&chunk);
                    pass.kmers.add(keys);
                    chunk.clear();
                }
                if !more {
                    break;
                }
            }
        }
        if pass.records.len() > 0 || stats.passes == 0 {
            // the last records; with no queries at all, the graph is still checked
            self.passes(&pass.records, Some(&mut pass.kmers), &mut stats, f)?;
        }
        Ok(stats)
    }

    /// Passes over `records`: one (with their k-mers in `kmers` when given), or, when the
    /// color sets they reach do not fit in half the bound, one per half, halved again as
    /// needed.
    fn passes<W: Word>(
        &self,
        records: &Records,
        kmers: Option<&mut PassKmers<W>>,
        stats: &mut QueryStats,
        f: &mut dyn FnMut(&QueryMatch<'_>) -> Result<(), AssemblyError>,
    ) -> Result<(), AssemblyError> {
        let mut built;
        let kmers = match kmers {
            Some(k) => k,
            None => {
                built = PassKmers::default();
                built.add(chunk_keys(records, 0..records.len(), self.k));
                &mut built
            }
        };
        if self.pass::<W>(records, kmers, stats, f)? {
            return Ok(());
        }
        if records.len() < 2 {
            return Err(AssemblyError::Memory(format!(
                "query record {:?} reaches color sets of more than {} bytes (half the query \
                 bound): raise the bound",
                records.name(0),
                self.max_memory / 2
            )));
        }
        let mid = records.len() / 2;
        for range in [0..mid, mid..records.len()] {
            let mut half = Records::default();
            half.append_range(records, range);
            self.passes::<W>(&half, None, stats, f)?;
        }
        Ok(())
    }

    /// One pass over `records` (their k-mers in `kmers`): the graph's unitigs streamed
    /// through the table, the sets reached read, each record's counts handed to `f` in
    /// order; `false` (and nothing handed on) when the sets reached exceed half the bound.
    fn pass<W: Word>(
        &self,
        records: &Records,
        kmers: &PassKmers<W>,
        stats: &mut QueryStats,
        f: &mut dyn FnMut(&QueryMatch<'_>) -> Result<(), AssemblyError>,
    ) -> Result<bool, AssemblyError> {
        let table = &kmers.table;
        let unitigs = self.unitigs.name();
        let graph = graph::scan(&self.unitigs, &unitigs, self.k, table)?;
        // the sets reached, read; to the end of the file on the first pass, to count them
        let first = stats.passes == 0;
        let mut needed = Needed::new(graph.max_set.as_ref().map_or(0, |m| m.0 as usize + 1));
        for s in table.sets().filter(|&s| s != NOT_FOUND) {
            needed.add(s);
        }
        let Some(sets) = self
            .sets
            .read(&needed, first, (self.max_memory / 2) as usize)?
        else {
            return Ok(false);
        };
        if let Some(total) = sets.total {
            if let Some((max, record, id)) = &graph.max_set
                && u64::from(*max) >= total
            {
                return Err(AssemblyError::Reads {
                    path: unitigs,
                    record: *record,
                    message: format!(
                        "unitig {id}: color set {max:x} (hex; {max} in the sets file) is not in \
                         the sets file, which has {total} sets"
                    ),
                });
            }
            stats.color_sets = total;
            stats.graph_kmers = graph.kmers;
        }
        // the table's sets become positions among those read, one lookup fewer per set
        table.map_sets(|id| sets.position(id));
        // resolved a slice of records at a time, so that their matches stay few
        let n = kmers.ends.len();
        let step = GROUP * 4 * rayon::current_num_threads();
        for lo in (0..n).step_by(step.max(1)) {
            let found = resolve(kmers, lo..n.min(lo + step), &sets, self.colors().len());
            for (g, group) in found.iter().enumerate() {
                for (j, &kmers) in group.kmers.iter().enumerate() {
                    let start = if j == 0 { 0 } else { group.ends[j - 1] };
                    stats.records += 1;
                    stats.kmers += kmers;
                    stats.found += group.found[j];
                    f(&QueryMatch {
                        name: records.name(lo + g * GROUP + j),
                        kmers,
                        matches: &group.matches[start..group.ends[j]],
                    })?;
                }
            }
        }
        stats.passes += 1;
        Ok(true)
    }
}

/// What a query found: one record's name, its k-mers, and the colors holding them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryMatch<'a> {
    /// The record's name: its header's first word.
    pub name: &'a str,
    /// Its k-mers: the windows of `k` bases that are all `A`, `C`, `G` or `T` (either case);
    /// a window with any other letter (`N`) is not counted.
    pub kmers: u64,
    /// `(color, count)` for every color holding at least one of its k-mers, by color number:
    /// how many of its k-mers (each window once, a repeated k-mer each time) the color holds.
    pub matches: &'a [(u32, u32)],
}

/// What a query run read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct QueryStats {
    /// Query records.
    pub records: u64,
    /// Their k-mers.
    pub kmers: u64,
    /// Their k-mers found in the graph.
    pub found: u64,
    /// The graph's k-mers.
    pub graph_kmers: u64,
    /// The color sets in the sets file.
    pub color_sets: u64,
    /// Passes over the graph (query records are read in passes bounded by memory).
    pub passes: u64,
}

/// Bases a batch of unitigs holds before it is searched (records are whole).
const BATCH_BASES: usize = 1 << 22;
/// Records a batch holds at most (a few in the tests, so that they cross batches).
const BATCH_RECORDS: usize = if cfg!(test) { 300 } else { 1 << 16 };

/// Records read and not yet searched: names (or whole headers) and sequences back to back.
pub(crate) struct Records {
    names: String,
    name_ends: Vec<usize>,
    seqs: Vec<u8>,
    seq_ends: Vec<usize>,
    /// Bases at which the batch is full.
    limit: usize,
}

impl Default for Records {
    fn default() -> Records {
        Records {
            names: String::new(),
            name_ends: Vec::new(),
            seqs: Vec::new(),
            seq_ends: Vec::new(),
            limit: BATCH_BASES,
        }
    }
}

impl Records {
    fn clear(&mut self) {
        self.names.clear();
        self.name_ends.clear();
        self.seqs.clear();
        self.seq_ends.clear();
    }

    fn len(&self) -> usize {
        self.seq_ends.len()
    }

    fn full(&self) -> bool {
        self.seqs.len() >= self.limit
    }

    /// Bytes the records hold.
    fn bytes(&self) -> usize {
        self.names.len() + self.seqs.len() + 16 * self.len()
    }

    /// Appends every record of `other`.
    fn append(&mut self, other: &Records) {
        self.append_range(other, 0..other.len());
    }

    /// Appends records `range` of `other`.
    fn append_range(&mut self, other: &Records, range: Range<usize>) {
        for i in range {
            self.names.push_str(other.name(i));
            self.name_ends.push(self.names.len());
            self.seqs.extend_from_slice(other.seq(i));
            self.seq_ends.push(self.seqs.len());
        }
    }

    fn seq(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.seq_ends[i - 1] };
        &self.seqs[start..self.seq_ends[i]]
    }

    fn name(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.name_ends[i - 1] };
        &self.names[start..self.name_ends[i]]
    }

    /// Reads records until the batch holds its limit of bases (or, for a batch of unitigs,
    /// [`BATCH_RECORDS`] records); `false` when the source is done. `first_word`: keep a
    /// header's first word (a query's name), else the whole header (a unitig's runs).
    fn read(
        &mut self,
        reader: &mut dyn needletail::parser::FastxReader,
        record: &mut u64,
        path: &std::path::Path,
        k: usize,
        first_word: bool,
    ) -> Result<bool, AssemblyError> {
        while !self.full() && (first_word || self.len() < BATCH_RECORDS) {
            let Some(rec) = reader.next() else {
                return Ok(false);
            };
            *record += 1;
            let rec = rec.map_err(|e| reads_error(path, *record, &e))?;
            let id = rec.id();
            let end = if first_word {
                id.iter()
                    .position(|b| b.is_ascii_whitespace())
                    .unwrap_or(id.len())
            } else {
                id.len()
            };
            self.names.push_str(&String::from_utf8_lossy(&id[..end]));
            self.name_ends.push(self.names.len());
            let seq = rec.seq();
            if first_word && seq.len() >= k + u32::MAX as usize {
                return Err(AssemblyError::Reads {
                    path: path.to_path_buf(),
                    record: *record,
                    message: format!(
                        "{} bases: a query of 2^32 k-mers or more (split it into records)",
                        seq.len()
                    ),
                });
            }
            self.seqs.extend_from_slice(&seq);
            self.seq_ends.push(self.seqs.len());
        }
        Ok(true)
    }
}

/// Records a worker handles in a row.
const GROUP: usize = 256;

/// The records of a pass and their k-mers.
struct Pass<W> {
    records: Records,
    kmers: PassKmers<W>,
}

impl<W: Word> Default for Pass<W> {
    fn default() -> Self {
        Pass {
            records: Records::default(),
            kmers: PassKmers::default(),
        }
    }
}

impl<W: Word> Pass<W> {
    /// The most bytes the pass holds while `chunk` (of `windows` k-mers) joins it: its
    /// records and k-mers, the chunk's, and the table as it grows for them all distinct.
    fn bytes_with(&self, chunk: &Records, windows: usize) -> usize {
        self.records.bytes()
            + 2 * chunk.bytes()
            + (self.kmers.keys.len() + 2 * windows) * W::BYTES
            + 8 * (self.kmers.ends.len() + chunk.len())
            + self.kmers.table.bytes_growing(windows)
    }
}

/// The canonical k-mers of a pass's records: in a table of the distinct ones, and per
/// record its windows' (`keys[ends[i - 1]..ends[i]]`).
struct PassKmers<W> {
    table: QueryTable<W>,
    keys: Vec<W>,
    ends: Vec<usize>,
}

impl<W: Word> Default for PassKmers<W> {
    fn default() -> Self {
        PassKmers {
            table: QueryTable::new(),
            keys: Vec::new(),
            ends: Vec::new(),
        }
    }
}

impl<W: Word> PassKmers<W> {
    /// Adds the k-mers of records [`chunk_keys`] listed.
    fn add(&mut self, groups: Vec<(Vec<W>, Vec<u32>)>) {
        let windows: usize = groups.iter().map(|g| g.0.len()).sum();
        self.table.reserve(windows);
        self.keys.reserve(windows);
        for (keys, counts) in groups {
            self.table.insert_all(&keys);
            self.keys.extend_from_slice(&keys);
            let mut end = self.ends.last().copied().unwrap_or(0);
            for c in counts {
                end += c as usize;
                self.ends.push(end);
            }
        }
    }

    /// The windows of record `i`.
    fn of(&self, i: usize) -> &[W] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.keys[start..self.ends[i]]
    }
}

/// The canonical k-mers of records `range`, listed in parallel, [`GROUP`] records per task:
/// per group its records' windows back to back and their counts.
fn chunk_keys<W: Word>(
    records: &Records,
    range: Range<usize>,
    k: usize,
) -> Vec<(Vec<W>, Vec<u32>)> {
    (0..range.len().div_ceil(GROUP))
        .into_par_iter()
        .map(|g| {
            let (mut keys, mut counts) = (Vec::new(), Vec::new());
            for i in range.start + g * GROUP..range.end.min(range.start + (g + 1) * GROUP) {
                let before = keys.len();
                canonical_windows(records.seq(i), k, &mut keys);
                counts.push((keys.len() - before) as u32);
            }
            (keys, counts)
        })
        .collect()
}

/// Appends the canonical k-mers of `seq`'s windows of bases only.
#[inline]
fn canonical_windows<W: Word>(seq: &[u8], k: usize, out: &mut Vec<W>) {
    let mask = W::mask(k);
    let (mut fw, mut rc) = (W::default(), W::default());
    let mut run = 0usize;
    for &b in seq {
        let c = BASE_CODES[b as usize];
        if c > 3 {
            run = 0;
            continue;
        }
        fw = fw.push_right(c, mask);
        rc = rc.push_left(3 - c, k);
        run += 1;
        if run >= k {
            out.push(if rc < fw { rc } else { fw });
        }
    }
}

/// The results of a group of consecutive records: per record its k-mers, its k-mers found,
/// and the end of its matches in `matches`.
#[derive(Default)]
struct Found {
    kmers: Vec<u64>,
    found: Vec<u64>,
    ends: Vec<usize>,
    matches: Vec<(u32, u32)>,
}

/// A worker's buffers, reused from record to record.
struct Scratch {
    /// The set ids of a record's k-mers found, as runs `(set, k-mers)`.
    runs: Vec<(u32, u32)>,
    /// Per color, its count in the record (all zero between records).
    per_color: Vec<u32>,
    /// A bit per color with a count (all clear between records).
    touched: Vec<u64>,
    /// A set's intervals.
    intervals: Vec<(u32, u32)>,
    /// A record's distinct sets (positions) and their k-mers.
    distinct: Vec<(u32, u32)>,
}

impl Scratch {
    fn new(colors: usize) -> Scratch {
        Scratch {
            runs: Vec::new(),
            per_color: vec![0; colors],
            touched: vec![0; colors.div_ceil(64)],
            intervals: Vec::new(),
            distinct: Vec::new(),
        }
    }
}

/// Counts the colors of records `range` of a pass, [`GROUP`] records per task, results in
/// order.
fn resolve<W: Word>(
    kmers: &PassKmers<W>,
    range: Range<usize>,
    sets: &PassSets,
    colors: usize,
) -> Vec<Found> {
    let (lo, n) = (range.start, range.end);
    (0..(lo..n).len().div_ceil(GROUP))
        .into_par_iter()
        .map_init(
            || Scratch::new(colors),
            |scratch, g| {
                let mut out = Found::default();
                for i in lo + g * GROUP..n.min(lo + (g + 1) * GROUP) {
                    let keys = kmers.of(i);
                    out.kmers.push(keys.len() as u64);
                    out.found
                        .push(record_runs(&kmers.table, keys, &mut scratch.runs));
                    spread(sets, scratch, &mut out.matches);
                    out.ends.push(out.matches.len());
                }
                out
            },
        )
        .collect()
}

/// The sets of a record's windows found in the graph, as runs into `runs`; how many were
/// found.
#[inline]
fn record_runs<W: Word>(table: &QueryTable<W>, keys: &[W], runs: &mut Vec<(u32, u32)>) -> u64 {
    runs.clear();
    for &x in &keys[..keys.len().min(PREFETCH_AHEAD)] {
        table.prefetch_both(table.home(x));
    }
    let mut hits = 0u64;
    for (j, &x) in keys.iter().enumerate() {
        if let Some(&ahead) = keys.get(j + PREFETCH_AHEAD) {
            table.prefetch_both(table.home(ahead));
        }
        // every key of a pass is in its table: `None` cannot happen
        let s = table
            .find(x, table.home(x))
            .map_or(NOT_FOUND, |slot| table.set(slot));
        if s != NOT_FOUND {
            hits += 1;
            match runs.last_mut() {
                Some(r) if r.0 == s => r.1 += 1,
                _ => runs.push((s, 1)),
            }
        }
    }
    hits
}

/// Turns the runs of sets (positions) of one record's k-mers into `(color, count)` pairs
/// appended to `out` by color: each distinct set once, its count added over each of its
/// intervals. The sets' places are prefetched for all of them, then their bytes.
fn spread(sets: &PassSets, scratch: &mut Scratch, out: &mut Vec<(u32, u32)>) {
    let Scratch {
        runs,
        per_color,
        touched,
        intervals,
        distinct,
    } = scratch;
    runs.sort_unstable();
    distinct.clear();
    for run in runs.chunk_by(|a, b| a.0 == b.0) {
        distinct.push((run[0].0, run.iter().map(|r| r.1).sum()));
        sets.prefetch_start(run[0].0);
    }
    for &(p, _) in distinct.iter() {
        sets.prefetch_bytes(p);
    }
    let (mut lo, mut hi) = (usize::MAX, 0);
    for &(p, n) in distinct.iter() {
        sets.intervals_into(p, intervals);
        for &(a, len) in intervals.iter() {
            let (a, b) = (a as usize, (a + len) as usize);
            for c in &mut per_color[a..b] {
                *c += n;
            }
            mark(touched, a, b);
            (lo, hi) = (lo.min(a / 64), hi.max((b - 1) / 64));
        }
    }
    for w in lo..=hi.min(touched.len().saturating_sub(1)) {
        let mut bits = std::mem::take(&mut touched[w]);
        while bits != 0 {
            let c = w * 64 + bits.trailing_zeros() as usize;
            out.push((c as u32, std::mem::take(&mut per_color[c])));
            bits &= bits - 1;
        }
    }
}

/// Sets bits `a..b` of a bitmap.
#[inline]
fn mark(bits: &mut [u64], a: usize, b: usize) {
    let (wa, wb) = (a / 64, (b - 1) / 64);
    let head = !0u64 << (a % 64);
    let tail = !0u64 >> (63 - (b - 1) % 64);
    if wa == wb {
        bits[wa] |= head & tail;
    } else {
        bits[wa] |= head;
        for w in &mut bits[wa + 1..wb] {
            *w = !0;
        }
        bits[wb] |= tail;
    }
}

#[cfg(test)]
mod tests;
