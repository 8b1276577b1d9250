//! Queries of a colored compacted De Bruijn graph: which colors (genomes, samples) hold the
//! k-mers of each query sequence, as GGCAT's `query --colors` and Bifrost's `query` answer.
//!
//! [`ColoredIndex::load`] reads the graph that `warpath assemble --colors` writes (the unitigs
//! FASTA with `C:<set id in hex>:<k-mers>` runs in its headers, and the color-sets JSON lines)
//! into a table from each canonical k-mer to its color set; [`query_colors`] streams query
//! records through it in parallel batches and hands each record's counts on in input order.

mod index;
mod sets;

use rayon::prelude::*;

use crate::AssemblyError;
use crate::kmer::{BASE_CODES, Word, canonical, check_k, pack};
use crate::reads::ReadSource;
use index::{KmerTable, open_fastx, read_index};
use sets::{ColorSets, read_color_sets, source_name};

/// The table in the word its `k` needs.
enum Table {
    Narrow(KmerTable<u64>),
    Wide(KmerTable<u128>),
}

/// A colored compacted De Bruijn graph loaded for queries: its color names, its color sets,
/// and each canonical k-mer's set.
///
/// # Examples
/// ```
/// use assembly::{ColoredIndex, ReadSource};
/// // one unitig of 7 bases with k = 5: 3 k-mers, the first two in set 0, the last in set 1
/// let unitigs = b">0 LN:i:7 KC:i:3 km:f:1.0 C:0:2 C:1:1\nACGTTGC\n";
/// let sets = b"{\"colors\": [\"A\", \"B\"]}\n\
///              {\"id\": 0, \"colors\": [\"A\", \"B\"]}\n{\"id\": 1, \"colors\": [\"B\"]}\n";
/// let index = ColoredIndex::load(
///     &ReadSource::Bytes(unitigs, "g.fa"),
///     &ReadSource::Bytes(sets, "g.jsonl"),
///     5,
/// )?;
/// assert_eq!(index.colors(), ["A", "B"]);
/// assert_eq!((index.kmers(), index.sets()), (3, 2));
/// assert_eq!(index.colors_of(b"GTTGC"), Some(&[1][..])); // B only
/// assert_eq!(index.colors_of(b"AACGT"), Some(&[0, 1][..])); // ACGTT's reverse complement
/// assert_eq!(index.colors_of(b"AAAAA"), None);
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub struct ColoredIndex {
    k: usize,
    sets: ColorSets,
    table: Table,
}

impl ColoredIndex {
    /// Reads a colored graph: the unitigs FASTA (plain or gzip) and its color-sets file (JSON
    /// lines, plain or gzip, with or without the header line naming every color), built with
    /// k-mer length `k`.
    ///
    /// # Complexity
    /// `O(bases)` time; the table holds each k-mer once in 16 bytes (`k <= 31`) or 32, at
    /// most two thirds full, and the k-mers are listed once (12 or 20 bytes each) while it is
    /// built.
    ///
    /// # Errors
    /// [`AssemblyError::BadK`] for a `k` that is not odd in 3..=63; [`AssemblyError::Io`]
    /// when a file cannot be opened; [`AssemblyError::ColorSets`] naming the line of the sets
    /// file that is not JSON of the format, has an id out of order or missing, or names a
    /// color the header line does not; [`AssemblyError::Reads`] naming the record and the
    /// unitig whose runs are malformed, do not add up to `LEN - k + 1` k-mers or name a set
    /// the sets file lacks, a unitig shorter than `k` or with a letter other than `ACGT`, a
    /// k-mer in two unitigs (also the sign of a wrong `k`), or a file that is not FASTA.
    ///
    /// # Examples
    /// ```
    /// use assembly::{ColoredIndex, ReadSource};
    /// let sets = b"{\"id\": 0, \"colors\": [\"A\"]}\n";
    /// let load = |fa: &'static [u8]| {
    ///     ColoredIndex::load(&ReadSource::Bytes(fa, "g.fa"), &ReadSource::Bytes(sets, "s"), 5)
    /// };
    /// assert!(load(b">0 C:0:3\nACGTTGC\n").is_ok());
    /// let e = load(b">0 C:0:2\nACGTTGC\n").err().unwrap().to_string();
    /// assert!(e.contains("unitig 0: its color runs cover 2 k-mers"), "{e}");
    /// # Ok::<(), assembly::AssemblyError>(())
    /// ```
    pub fn load(
        unitigs: &ReadSource<'_>,
        color_sets: &ReadSource<'_>,
        k: usize,
    ) -> Result<ColoredIndex, AssemblyError> {
        check_k(k)?;
        let sets = read_color_sets(color_sets)?;
        let table = if k <= u64::MAX_K {
            Table::Narrow(read_index(unitigs, &sets, k)?)
        } else {
            Table::Wide(read_index(unitigs, &sets, k)?)
        };
        Ok(ColoredIndex { k, sets, table })
    }

    /// The k-mer length.
    ///
    /// # Examples
    /// ```
    /// # use assembly::{ColoredIndex, ReadSource};
    /// let i = ColoredIndex::load(&ReadSource::Bytes(b"", "g.fa"), &ReadSource::Bytes(b"", "s"), 31)?;
    /// assert_eq!(i.k(), 31);
    /// # Ok::<(), assembly::AssemblyError>(())
    /// ```
    pub fn k(&self) -> usize {
        self.k
    }

    /// Every color's name, by color number (the header line's colors, else the colors of the
    /// sets by first appearance).
    ///
    /// # Examples
    /// ```
    /// # use assembly::{ColoredIndex, ReadSource};
    /// let sets = b"{\"colors\": [\"A\", \"B\"]}\n{\"id\": 0, \"colors\": [\"B\"]}\n";
    /// let i = ColoredIndex::load(&ReadSource::Bytes(b"", "g.fa"), &ReadSource::Bytes(sets, "s"), 5)?;
    /// assert_eq!(i.colors(), ["A", "B"]); // A is in no set, and still a color
    /// # Ok::<(), assembly::AssemblyError>(())
    /// ```
    pub fn colors(&self) -> &[String] {
        &self.sets.names
    }

    /// The number of distinct k-mers in the graph.
    ///
    /// # Examples
    /// ```
    /// # use assembly::{ColoredIndex, ReadSource};
    /// let sets = b"{\"id\": 0, \"colors\": [\"A\"]}\n";
    /// let fa = ReadSource::Bytes(b">0 C:0:3\nACGTTGC\n", "g.fa");
    /// assert_eq!(ColoredIndex::load(&fa, &ReadSource::Bytes(sets, "s"), 5)?.kmers(), 3);
    /// # Ok::<(), assembly::AssemblyError>(())
    /// ```
    pub fn kmers(&self) -> usize {
        match &self.table {
            Table::Narrow(t) => t.len(),
            Table::Wide(t) => t.len(),
        }
    }

    /// The number of color sets.
    ///
    /// # Examples
    /// ```
    /// # use assembly::{ColoredIndex, ReadSource};
    /// let sets = b"{\"id\": 0, \"colors\": [\"A\"]}\n{\"id\": 1, \"colors\": []}\n";
    /// let i = ColoredIndex::load(&ReadSource::Bytes(b"", "g.fa"), &ReadSource::Bytes(sets, "s"), 5)?;
    /// assert_eq!(i.sets(), 2);
    /// # Ok::<(), assembly::AssemblyError>(())
    /// ```
    pub fn sets(&self) -> usize {
        self.sets.len()
    }

    /// Bytes the index holds in memory (the table and the sets).
    ///
    /// # Examples
    /// ```
    /// # use assembly::{ColoredIndex, ReadSource};
    /// let i = ColoredIndex::load(&ReadSource::Bytes(b"", "g.fa"), &ReadSource::Bytes(b"", "s"), 5)?;
    /// assert!(i.memory_bytes() > 0);
    /// # Ok::<(), assembly::AssemblyError>(())
    /// ```
    pub fn memory_bytes(&self) -> usize {
        let table = match &self.table {
            Table::Narrow(t) => t.bytes(),
            Table::Wide(t) => t.bytes(),
        };
        let names: usize = self.sets.names.iter().map(|n| n.len() + 24).sum();
        table + names + 8 * self.sets.ends.len() + 4 * self.sets.colors.len()
    }

    /// The colors (numbers, ascending) of the k-mer spelled by the first `k` letters of
    /// `kmer` (either strand), `None` when it is not in the graph or `kmer` is not `k` bases.
    ///
    /// # Examples
    /// See [`ColoredIndex`].
    pub fn colors_of(&self, kmer: &[u8]) -> Option<&[u32]> {
        let set = match &self.table {
            Table::Narrow(t) => t.get(canonical(pack::<u64>(kmer, self.k)?, self.k)),
            Table::Wide(t) => t.get(canonical(pack::<u128>(kmer, self.k)?, self.k)),
        }?;
        Some(self.sets.set(set))
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
}

/// Bases a batch of query records holds before it is searched (records are whole).
const BATCH_BASES: usize = 1 << 22;
/// Records a batch holds at most (a few in the tests, so that they cross batches).
const BATCH_RECORDS: usize = if cfg!(test) { 300 } else { 1 << 16 };

/// Query records read and not yet searched: names and sequences back to back.
#[derive(Default)]
struct Records {
    names: String,
    name_ends: Vec<usize>,
    seqs: Vec<u8>,
    seq_ends: Vec<usize>,
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

    fn seq(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.seq_ends[i - 1] };
        &self.seqs[start..self.seq_ends[i]]
    }

    fn name(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.name_ends[i - 1] };
        &self.names[start..self.name_ends[i]]
    }
}

/// The results of a run of consecutive records: per record its k-mers, its k-mers found, and
/// the end of its matches in `matches`.
#[derive(Default)]
struct Found {
    kmers: Vec<u64>,
    found: Vec<u64>,
    ends: Vec<usize>,
    matches: Vec<(u32, u32)>,
}

/// Counts, for every record of every source in turn (FASTA or FASTQ, plain or gzip), how many
/// of its k-mers each color holds, and calls `f` with each record's [`QueryMatch`] in input
/// order. Records are read in batches of a few MB, searched in parallel (rayon) while the
/// next batch is read; a record's k-mers are grouped by color set first, then spread to the
/// colors once.
///
/// # Complexity
/// `O(bases + Σ matches)` time; memory: the index and two batches.
///
/// # Errors
/// [`AssemblyError::Io`] when a file cannot be opened; [`AssemblyError::Reads`] naming the
/// file and the record for a file that is not FASTA/FASTQ or is truncated, or a record of
/// 2^32 k-mers or more; the first error of `f` (which stops the run).
///
/// # Examples
/// ```
/// use assembly::{ColoredIndex, ReadSource, query_colors};
/// let unitigs = b">0 LN:i:7 KC:i:3 km:f:1.0 C:0:2 C:1:1\nACGTTGC\n";
/// let sets = b"{\"id\": 0, \"colors\": [\"A\", \"B\"]}\n{\"id\": 1, \"colors\": [\"B\"]}\n";
/// let index = ColoredIndex::load(
///     &ReadSource::Bytes(unitigs, "g.fa"),
///     &ReadSource::Bytes(sets, "g.jsonl"),
///     5,
/// )?;
/// let queries = b">q1 first\nACGTTGCA\n>q2\nGCAACNGT\n";
/// let mut got = Vec::new();
/// let stats = query_colors(&index, &[ReadSource::Bytes(queries, "q.fa")], &mut |m| {
///     got.push((m.name.to_string(), m.kmers, m.matches.to_vec()));
///     Ok(())
/// })?;
/// // q1: ACGTT, CGTTG (A and B), GTTGC (B), TTGCA (none); q2: GCAAC (GTTGC's reverse
/// // complement, B) and no window across the N
/// assert_eq!(got[0], ("q1".to_string(), 4, vec![(0, 2), (1, 3)]));
/// assert_eq!(got[1], ("q2".to_string(), 1, vec![(1, 1)]));
/// assert_eq!((stats.records, stats.kmers, stats.found), (2, 5, 4));
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn query_colors(
    index: &ColoredIndex,
    sources: &[ReadSource<'_>],
    f: &mut dyn FnMut(&QueryMatch<'_>) -> Result<(), AssemblyError>,
) -> Result<QueryStats, AssemblyError> {
    let mut stats = QueryStats::default();
    for source in sources {
        match &index.table {
            Table::Narrow(t) => query_source(index, t, source, &mut stats, f)?,
            Table::Wide(t) => query_source(index, t, source, &mut stats, f)?,
        }
    }
    Ok(stats)
}

/// [`query_colors`] over one source, in the index's word.
fn query_source<W: Word>(
    index: &ColoredIndex,
    table: &KmerTable<W>,
    source: &ReadSource<'_>,
    stats: &mut QueryStats,
    f: &mut dyn FnMut(&QueryMatch<'_>) -> Result<(), AssemblyError>,
) -> Result<(), AssemblyError> {
    let path = source_name(source);
    let Some(mut reader) = open_fastx(source, &path)? else {
        return Ok(());
    };
    let mut record = stats.records;
    let (mut current, mut next) = (Records::default(), Records::default());
    // `more`: the source may hold records after `current`
    let mut more = read_batch(&mut *reader, &mut current, &mut record, &path, index.k)?;
    while current.len() > 0 {
        let (read, found) = rayon::join(
            || {
                if more {
                    read_batch(&mut *reader, &mut next, &mut record, &path, index.k)
                } else {
                    Ok(false)
                }
            },
            || search(index, table, &current),
        );
        for (i, chunk) in found.iter().enumerate() {
            for (j, &kmers) in chunk.kmers.iter().enumerate() {
                let start = if j == 0 { 0 } else { chunk.ends[j - 1] };
                stats.records += 1;
                stats.kmers += kmers;
                stats.found += chunk.found[j];
                f(&QueryMatch {
                    name: current.name(i * CHUNK + j),
                    kmers,
                    matches: &chunk.matches[start..chunk.ends[j]],
                })?;
            }
        }
        more = read?;
        std::mem::swap(&mut current, &mut next);
        next.clear();
    }
    Ok(())
}

/// Reads records into `batch` until it holds [`BATCH_BASES`] bases or [`BATCH_RECORDS`]
/// records; `false` when the source is done.
fn read_batch(
    reader: &mut dyn needletail::parser::FastxReader,
    batch: &mut Records,
    record: &mut u64,
    path: &std::path::Path,
    k: usize,
) -> Result<bool, AssemblyError> {
    while batch.seqs.len() < BATCH_BASES && batch.len() < BATCH_RECORDS {
        let Some(rec) = reader.next() else {
            return Ok(false);
        };
        *record += 1;
        let rec = rec.map_err(|e| AssemblyError::Reads {
            path: path.to_path_buf(),
            record: *record,
            message: e.to_string(),
        })?;
        let id = rec.id();
        let end = id
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(id.len());
        batch.names.push_str(&String::from_utf8_lossy(&id[..end]));
        batch.name_ends.push(batch.names.len());
        let seq = rec.seq();
        if seq.len() >= k + u32::MAX as usize {
            return Err(AssemblyError::Reads {
                path: path.to_path_buf(),
                record: *record,
                message: format!(
                    "{} bases: a query of 2^32 k-mers or more (split it into records)",
                    seq.len()
                ),
            });
        }
        batch.seqs.extend_from_slice(&seq);
        batch.seq_ends.push(batch.seqs.len());
    }
    Ok(true)
}

/// Records a worker searches in a row.
const CHUNK: usize = 256;

/// How many k-mers ahead of its lookup a k-mer's slot is prefetched: enough lookups in flight
/// to hide a table far larger than the caches.
const PREFETCH_AHEAD: usize = 8;

/// A worker's buffers, reused from record to record.
struct Scratch<W> {
    /// A record's canonical k-mers and their home slots.
    windows: Vec<(W, usize)>,
    /// The set ids of its k-mers found, as runs `(set, k-mers)`.
    found: Vec<(u32, u32)>,
    /// Per color, its count in the record (all zero between records).
    per_color: Vec<u32>,
    /// The colors with a count.
    touched: Vec<u32>,
}

/// Searches every record of a batch, [`CHUNK`] records per task, results in order.
fn search<W: Word>(index: &ColoredIndex, table: &KmerTable<W>, batch: &Records) -> Vec<Found> {
    let n = batch.len();
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map_init(
            || Scratch {
                windows: Vec::new(),
                found: Vec::new(),
                per_color: vec![0u32; index.sets.names.len()],
                touched: Vec::new(),
            },
            |scratch, c| {
                let mut out = Found::default();
                for i in c * CHUNK..n.min((c + 1) * CHUNK) {
                    let (kmers, found) = record_sets(table, batch.seq(i), index.k, scratch);
                    out.kmers.push(kmers);
                    out.found.push(found);
                    spread(&index.sets, scratch, &mut out.matches);
                    out.ends.push(out.matches.len());
                }
                out
            },
        )
        .collect()
}

/// The number of k-mers of `seq` (windows of bases only) and of those found in the table;
/// the set ids of those found go to `scratch.found` as runs.
#[inline]
fn record_sets<W: Word>(
    table: &KmerTable<W>,
    seq: &[u8],
    k: usize,
    scratch: &mut Scratch<W>,
) -> (u64, u64) {
    let mask = W::mask(k);
    let (mut fw, mut rc) = (W::default(), W::default());
    let mut run = 0usize;
    let windows = &mut scratch.windows;
    windows.clear();
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
            let x = if rc < fw { rc } else { fw };
            windows.push((x, table.home(x)));
        }
    }
    // the lookups, each slot asked for a few lookups before it is read
    for &(_, home) in &windows[..windows.len().min(PREFETCH_AHEAD)] {
        table.prefetch(home);
    }
    let found = &mut scratch.found;
    found.clear();
    let mut hits = 0u64;
    for (j, &(x, home)) in windows.iter().enumerate() {
        if let Some(&(_, ahead)) = windows.get(j + PREFETCH_AHEAD) {
            table.prefetch(ahead);
        }
        if let Some(s) = table.get_from(x, home) {
            hits += 1;
            match found.last_mut() {
                Some(r) if r.0 == s => r.1 += 1,
                _ => found.push((s, 1)),
            }
        }
    }
    (windows.len() as u64, hits)
}

/// Turns the runs of set ids of one record's k-mers into `(color, count)` pairs appended to
/// `out` by color: each distinct set once, its count added to each of its colors.
fn spread<W>(sets: &ColorSets, scratch: &mut Scratch<W>, out: &mut Vec<(u32, u32)>) {
    let Scratch {
        found,
        per_color,
        touched,
        ..
    } = scratch;
    found.sort_unstable();
    touched.clear();
    for run in found.chunk_by(|a, b| a.0 == b.0) {
        let n: u32 = run.iter().map(|r| r.1).sum();
        for &c in sets.set(run[0].0) {
            if per_color[c as usize] == 0 {
                touched.push(c);
            }
            per_color[c as usize] += n;
        }
    }
    touched.sort_unstable();
    for &c in touched.iter() {
        out.push((c, per_color[c as usize]));
        per_color[c as usize] = 0;
    }
}

#[cfg(test)]
mod tests;
