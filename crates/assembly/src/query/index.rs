//! The k-mer index of a colored graph: each canonical k-mer of the unitigs to its color-set
//! id, read from the `C:<hex id>:<k-mers>` runs of the unitig headers, in an open-addressing
//! table sized once.

use std::path::Path;

use needletail::parser::FastxReader;

use super::sets::{ColorSets, source_name};
use crate::AssemblyError;
use crate::kmer::{BASE_CODES, Word, canonical};
use crate::reads::ReadSource;

/// The set id of an empty slot (no set has it: the sets reader stops below it).
const EMPTY: u32 = u32::MAX;

/// Canonical k-mers to set ids: linear probing over `(key, set)` slots, a power of two of
/// them, at most two thirds full.
pub(crate) struct KmerTable<W> {
    slots: Vec<(W, u32)>,
    mask: usize,
    len: usize,
}

impl<W: Word> KmerTable<W> {
    /// An empty table for `n` k-mers.
    fn with_capacity(n: usize) -> Self {
        let cap = (n + n / 2 + 1).next_power_of_two().max(16);
        KmerTable {
            slots: vec![(W::default(), EMPTY); cap],
            mask: cap - 1,
            len: 0,
        }
    }

    /// Inserts `key` with `set`; `false` (and no change) when `key` is there already.
    fn insert(&mut self, key: W, set: u32) -> bool {
        let mut i = self.home(key);
        loop {
            let slot = &mut self.slots[i];
            if slot.1 == EMPTY {
                *slot = (key, set);
                self.len += 1;
                return true;
            }
            if slot.0 == key {
                return false;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The slot where the search for `key` starts.
    #[inline]
    pub(crate) fn home(&self, key: W) -> usize {
        key.hash64() as usize & self.mask
    }

    /// Asks the core to load slot `i`'s cache line (a hint, for a lookup soon).
    #[inline]
    pub(crate) fn prefetch(&self, i: usize) {
        gpu_primitives::prefetch(self.slots[i..].as_ptr());
    }

    /// The set id of a canonical k-mer, `None` when it is not in the graph.
    #[inline]
    pub(crate) fn get(&self, key: W) -> Option<u32> {
        self.get_from(key, self.home(key))
    }

    /// [`KmerTable::get`] from the key's [`KmerTable::home`] slot.
    #[inline]
    pub(crate) fn get_from(&self, key: W, home: usize) -> Option<u32> {
        let mut i = home;
        loop {
            let (k, s) = self.slots[i];
            if s == EMPTY {
                return None;
            }
            if k == key {
                return Some(s);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The k-mers in the table.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Bytes the table holds.
    pub(crate) fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<(W, u32)>()
    }
}

/// The k-mers and set ids of the unitigs as read, before the table: k-mer `i` belongs to the
/// first unitig whose end is above `i`.
struct Collected<W> {
    kmers: Vec<W>,
    sets: Vec<u32>,
    /// Per unitig: the end of its k-mers in `kmers`, and its ID (for messages).
    unitigs: Vec<(usize, Box<str>)>,
}

/// Reads the unitigs FASTA and indexes its k-mers.
///
/// # Errors
/// [`AssemblyError::Io`] or [`AssemblyError::Reads`] as the reads reader gives them; then
/// [`AssemblyError::Reads`] naming the record and the unitig for a header whose runs are
/// malformed, do not add up to `LEN - k + 1` k-mers or name a set the sets file lacks, a
/// unitig shorter than `k` or holding a letter other than `ACGT`, and a k-mer in two unitigs.
pub(crate) fn read_index<W: Word>(
    unitigs: &ReadSource<'_>,
    sets: &ColorSets,
    k: usize,
) -> Result<KmerTable<W>, AssemblyError> {
    let path = source_name(unitigs);
    let c = collect::<W>(unitigs, &path, sets, k)?;
    let mut table = KmerTable::with_capacity(c.kmers.len());
    for (i, (&x, &s)) in c.kmers.iter().zip(&c.sets).enumerate() {
        if !table.insert(x, s) {
            let first = c.kmers.iter().position(|&y| y == x).unwrap_or(i);
            let unitig = |j: usize| c.unitigs.partition_point(|u| u.0 <= j);
            let (a, b) = (unitig(first), unitig(i));
            return Err(AssemblyError::Reads {
                path,
                record: b as u64 + 1,
                message: format!(
                    "unitig {}: k-mer {} is in unitig {} (record {}) too: a k-mer is in one \
                     unitig only",
                    c.unitigs[b].1,
                    crate::kmer::unpack(x, k),
                    c.unitigs[a].1,
                    a + 1
                ),
            });
        }
    }
    Ok(table)
}

/// Opens a FASTA/FASTQ source with needletail (`None` for an empty one).
pub(crate) fn open_fastx<'a>(
    source: &ReadSource<'a>,
    path: &Path,
) -> Result<Option<Box<dyn FastxReader + 'a>>, AssemblyError> {
    let parse_error = |e: needletail::errors::ParseError| AssemblyError::Reads {
        path: path.to_path_buf(),
        record: 1,
        message: e.to_string(),
    };
    Ok(Some(match source {
        ReadSource::File(p) => {
            let file = std::fs::File::open(p).map_err(|error| AssemblyError::Io {
                path: p.to_path_buf(),
                error,
            })?;
            if file.metadata().is_ok_and(|m| m.is_file() && m.len() == 0) {
                return Ok(None);
            }
            needletail::parse_fastx_reader(file).map_err(parse_error)?
        }
        ReadSource::Bytes([], _) => return Ok(None),
        ReadSource::Bytes(b, _) => {
            needletail::parse_fastx_reader(std::io::Cursor::new(*b)).map_err(parse_error)?
        }
    }))
}

/// Reads every unitig: its runs checked against its length and the sets, its k-mers listed.
fn collect<W: Word>(
    source: &ReadSource<'_>,
    path: &Path,
    sets: &ColorSets,
    k: usize,
) -> Result<Collected<W>, AssemblyError> {
    let mut c = Collected {
        kmers: Vec::new(),
        sets: Vec::new(),
        unitigs: Vec::new(),
    };
    let Some(mut reader) = open_fastx(source, path)? else {
        return Ok(c);
    };
    let mut record = 0u64;
    let mut runs: Vec<(u32, u64)> = Vec::new();
    while let Some(rec) = reader.next() {
        record += 1;
        let rec = rec.map_err(|e| AssemblyError::Reads {
            path: path.to_path_buf(),
            record,
            message: e.to_string(),
        })?;
        let header = String::from_utf8_lossy(rec.id());
        let id = header.split_whitespace().next().unwrap_or("").to_string();
        let bad = |message: String| AssemblyError::Reads {
            path: path.to_path_buf(),
            record,
            message: format!("unitig {id}: {message}"),
        };
        let seq = rec.seq();
        if let Some(&b) = seq.iter().find(|&&b| BASE_CODES[b as usize] > 3) {
            return Err(bad(format!(
                "{:?} is not a base (a unitig holds A, C, G and T only)",
                b as char
            )));
        }
        if seq.len() < k {
            return Err(bad(format!(
                "{} bases, shorter than k = {k}: it holds no k-mer",
                seq.len()
            )));
        }
        parse_runs(&header, &mut runs).map_err(&bad)?;
        let n = (seq.len() - k + 1) as u64;
        let covered: u64 = runs.iter().map(|r| r.1).sum();
        if covered != n {
            return Err(bad(format!(
                "its color runs cover {covered} k-mers, and its {} bases hold {n} {k}-mers",
                seq.len()
            )));
        }
        if let Some(&(s, _)) = runs.iter().find(|r| r.0 as usize >= sets.len()) {
            return Err(bad(format!(
                "color set {s:x} (hex; {s} in the sets file) is not in the sets file, which \
                 has {} sets",
                sets.len()
            )));
        }
        push_kmers(&seq, k, &runs, &mut c);
        c.unitigs.push((c.kmers.len(), id.into()));
    }
    Ok(c)
}

/// The `C:<hex id>:<k-mers>` runs of a header, in order, into `runs`.
fn parse_runs(header: &str, runs: &mut Vec<(u32, u64)>) -> Result<(), String> {
    runs.clear();
    for token in header.split_whitespace().skip(1) {
        let Some(run) = token.strip_prefix("C:") else {
            continue;
        };
        let parsed = run.split_once(':').and_then(|(id, n)| {
            let id = u32::from_str_radix(id, 16).ok().filter(|&s| s != EMPTY)?;
            Some((id, n.parse::<u64>().ok().filter(|&n| n > 0)?))
        });
        match parsed {
            Some(r) => runs.push(r),
            None => {
                return Err(format!(
                    "{token:?} is not a color run C:<set id in hex>:<k-mers, at least 1>"
                ));
            }
        }
    }
    if runs.is_empty() {
        return Err("no color run (C:<set id in hex>:<k-mers>) in its header".into());
    }
    Ok(())
}

/// Appends the canonical k-mers of `seq` (bases only) and their sets along `runs`.
fn push_kmers<W: Word>(seq: &[u8], k: usize, runs: &[(u32, u64)], c: &mut Collected<W>) {
    let mask = W::mask(k);
    let mut x = W::default();
    for &b in &seq[..k - 1] {
        x = x.push_right(BASE_CODES[b as usize], mask);
    }
    let mut next = seq[k - 1..].iter();
    for &(set, n) in runs {
        for &b in next.by_ref().take(n as usize) {
            x = x.push_right(BASE_CODES[b as usize], mask);
            c.kmers.push(canonical(x, k));
            c.sets.push(set);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_finds_what_it_holds_only() {
        let mut t = KmerTable::<u64>::with_capacity(1000);
        for x in 0..1000u64 {
            assert!(t.insert(x * 7919, (x % 13) as u32));
        }
        assert!(!t.insert(7919, 3));
        assert_eq!(t.len(), 1000);
        for x in 0..1000u64 {
            assert_eq!(t.get(x * 7919), Some((x % 13) as u32));
            assert_eq!(t.get(x * 7919 + 1), None);
        }
        assert!(t.bytes() >= 1500 * 12);
    }

    #[test]
    fn runs_are_parsed_in_order() {
        let mut runs = Vec::new();
        parse_runs("7 LN:i:40 KC:i:3 km:f:1.0 C:1a:5 C:0:5 L:+:3:-", &mut runs).unwrap();
        assert_eq!(runs, [(26, 5), (0, 5)]);
        for bad in [
            "1 C:g:1",
            "1 C:1",
            "1 C:1:0",
            "1 C:1:x",
            "1 C:ffffffff:1",
            "1 LN:i:3",
        ] {
            assert!(parse_runs(bad, &mut runs).is_err(), "{bad}");
        }
    }
}
