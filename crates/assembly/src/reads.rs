//! Stage 1: reads. FASTA and FASTQ, plain or gzip, several files in a row (needletail); every
//! read is split at each character that is not a base (`N`, IUPAC codes), lowercase is a base,
//! and the pieces go on in batches of base codes (`0..4`).

use std::path::{Path, PathBuf};

use needletail::parser::FastxReader;

use crate::AssemblyError;
use crate::kmer::{BASE_CODES, base_code};

/// Base codes of many read pieces, back to back: piece `i` is `codes[ends[i-1]..ends[i]]`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Base codes, `0..4`.
    pub codes: Vec<u8>,
    /// End offset of each piece in `codes`.
    pub ends: Vec<usize>,
    /// Each piece's color when the read is colored ([`SourceTags`]); empty otherwise.
    pub(crate) tags: Vec<u32>,
}

/// The color of a record, from its header (see [`SourceTags::tagger`]).
pub(crate) type Tagger<'t> = dyn FnMut(&[u8]) -> u32 + 't;

/// How reading tags each read piece with a color (a colored graph's inputs).
pub(crate) enum SourceTags {
    /// Every piece of source `i` has color `colors[i]`.
    PerSource(Vec<u32>),
    /// Every piece of a record has the color named by the record's name (its header's first
    /// word), the names numbered in order of first appearance (sources are read one at a
    /// time, in order, so the numbers do not depend on threads).
    PerRecord(std::sync::Mutex<RecordColors>),
}

/// The colors of [`SourceTags::PerRecord`]: record names and their numbers.
#[derive(Default)]
pub(crate) struct RecordColors {
    ids: std::collections::HashMap<String, u32>,
    /// The names, by color number.
    pub(crate) names: Vec<String>,
}

impl RecordColors {
    /// The color of a record with header `id` (numbered when first seen). Names are read as
    /// UTF-8 (invalid bytes replaced), so two headers that write the same name share a color.
    fn color_of(&mut self, id: &[u8]) -> u32 {
        let name = id.split(|c| c.is_ascii_whitespace()).next().unwrap_or(b"");
        let name = String::from_utf8_lossy(name);
        if let Some(&c) = self.ids.get(name.as_ref()) {
            return c;
        }
        let c = self.names.len() as u32;
        self.ids.insert(name.clone().into_owned(), c);
        self.names.push(name.into_owned());
        c
    }
}

impl SourceTags {
    /// The tagging of source `i`'s records, or `None` for an uncolored read.
    pub(crate) fn tagger<'t>(tags: Option<&'t SourceTags>, i: usize) -> Option<Box<Tagger<'t>>> {
        match tags? {
            SourceTags::PerSource(colors) => {
                let c = colors[i];
                Some(Box::new(move |_| c))
            }
            SourceTags::PerRecord(names) => Some(Box::new(move |id| {
                names.lock().expect("record colors").color_of(id)
            })),
        }
    }

    /// How many colors the sources have (after reading, for [`SourceTags::PerRecord`]).
    pub(crate) fn colors(&self) -> usize {
        match self {
            SourceTags::PerSource(colors) => colors.iter().max().map_or(0, |&c| c as usize + 1),
            SourceTags::PerRecord(r) => r.lock().expect("record colors").names.len(),
        }
    }

    /// Whether sources must be read one at a time, in order (their colors are numbered as
    /// they are read).
    pub(crate) fn in_order(tags: Option<&SourceTags>) -> bool {
        matches!(tags, Some(SourceTags::PerRecord(_)))
    }
}

impl Batch {
    /// The pieces, in order.
    pub fn pieces(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&e| {
            let p = &self.codes[start..e];
            start = e;
            p
        })
    }
}

/// What reading saw.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ReadStats {
    /// Records read.
    pub reads: u64,
    /// Letters read (bases and others).
    pub letters: u64,
    /// Letters that were not a base (each one splits its read).
    pub non_bases: u64,
}

/// One source of reads: a file, or bytes in memory (tests, standard input).
#[derive(Clone, Copy)]
pub enum ReadSource<'a> {
    /// A FASTA/FASTQ file, plain or gzip.
    File(&'a Path),
    /// FASTA/FASTQ bytes, plain or gzip, with a name for errors.
    Bytes(&'a [u8], &'a str),
}

impl ReadSource<'_> {
    /// The file's path, or the name given to bytes (for messages).
    pub(crate) fn name(&self) -> PathBuf {
        match self {
            ReadSource::File(p) => p.to_path_buf(),
            ReadSource::Bytes(_, name) => PathBuf::from(name),
        }
    }
}

/// Reads every source in turn and calls `f` with batches of about `batch_letters` base codes
/// (pieces shorter than `min_len` are dropped: they hold no k-mer). Reads are split at IUPAC
/// ambiguity codes (`N`, ...), gaps and stops; any other character is an error, so a file
/// that is not reads is never read as sequence. `progress(stats)` is called after each batch.
///
/// # Complexity
/// `O(letters)` time; `O(batch_letters)` memory.
///
/// # Errors
/// [`AssemblyError::Io`] when a file cannot be opened; [`AssemblyError::Reads`] naming the
/// file and the record when it is not FASTA/FASTQ, a sequence holds a character that is not a
/// nucleotide symbol, a FASTQ quality line has another length, or the file (or its gzip
/// stream) is truncated; the first error of `f`.
///
/// # Examples
/// ```
/// use assembly::{for_each_batch, ReadSource};
/// let fa = b">r1\nACGTNacgt\n>r2\nGG\n";
/// let mut pieces = Vec::new();
/// let stats = for_each_batch(&[ReadSource::Bytes(fa, "mem.fa")], 3, 1 << 20, &mut |_| {}, &mut |b| {
///     pieces.extend(b.pieces().map(|p| p.to_vec()));
///     Ok(())
/// })?;
/// assert_eq!(pieces, vec![vec![0, 1, 2, 3], vec![0, 1, 2, 3]]); // split at N; GG too short
/// assert_eq!((stats.reads, stats.non_bases), (2, 1));
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn for_each_batch(
    sources: &[ReadSource<'_>],
    min_len: usize,
    batch_letters: usize,
    progress: &mut dyn FnMut(ReadStats),
    f: &mut dyn FnMut(&Batch) -> Result<(), AssemblyError>,
) -> Result<ReadStats, AssemblyError> {
    let mut stats = ReadStats::default();
    let mut batch = Batch::default();
    for source in sources {
        read_source(
            source,
            min_len,
            batch_letters,
            &mut batch,
            &mut stats,
            None,
            &mut |b, s| {
                f(b)?;
                progress(*s);
                b.clear();
                Ok(())
            },
        )?;
    }
    progress(stats);
    Ok(stats)
}

impl Batch {
    /// Empties the batch, keeping its memory.
    pub(crate) fn clear(&mut self) {
        self.codes.clear();
        self.ends.clear();
        self.tags.clear();
    }
}

/// Reads one source into batches of about `batch_letters` base codes, adding to `stats`; `f`
/// is called with each full batch and with the last one (when not empty) and must leave an
/// empty batch behind (it may swap in another). With `tag`, each piece is tagged with
/// `tag(record header)` ([`Batch::tags`]). Errors as [`for_each_batch`].
pub(crate) fn read_source(
    source: &ReadSource<'_>,
    min_len: usize,
    batch_letters: usize,
    batch: &mut Batch,
    stats: &mut ReadStats,
    mut tag: Option<&mut Tagger<'_>>,
    f: &mut dyn FnMut(&mut Batch, &ReadStats) -> Result<(), AssemblyError>,
) -> Result<(), AssemblyError> {
    let name = source.name();
    let Some(mut reader) = open_fastx(source)? else {
        return Ok(());
    };
    let mut record = 0u64;
    while let Some(rec) = reader.next() {
        record += 1;
        let rec = rec.map_err(|e| reads_error(&name, record, &e))?;
        let color = tag.as_mut().map(|t| t(rec.id()));
        stats.reads += 1;
        let seq = rec.seq();
        stats.letters += seq.len() as u64;
        // A record longer than a batch (a genome) goes in segments of about a batch, each
        // after the first starting k-1 letters back: every k-mer lies in exactly one segment,
        // and no batch holds a whole chromosome.
        let step = batch_letters.max(4 * min_len.max(1));
        let overlap = min_len.saturating_sub(1);
        let mut at = 0;
        loop {
            let end = (at + step).min(seq.len());
            let from = if at == 0 { 0 } else { at - overlap };
            let letters = Letters {
                seq: &seq[from..end],
                counted_from: at - from,
                color,
                record,
            };
            push_letters(batch, &letters, min_len, stats, &name)?;
            if batch.codes.len() >= batch_letters {
                f(batch, stats)?;
            }
            if end >= seq.len() {
                break;
            }
            at = end;
        }
    }
    if !batch.ends.is_empty() {
        f(batch, stats)?;
    }
    Ok(())
}

/// A stretch of one record's letters for [`push_letters`].
struct Letters<'s> {
    seq: &'s [u8],
    /// Letters before this index were counted with the stretch before (an overlap).
    counted_from: usize,
    /// The record's color, when the read is colored.
    color: Option<u32>,
    /// The record's number in its file, for errors.
    record: u64,
}

/// Appends a stretch of a record's letters to `batch` as base codes, split into pieces at
/// every symbol that is not a base (each such symbol counted in `stats` once).
///
/// # Errors
/// [`AssemblyError::Reads`] for a character that is no nucleotide symbol.
fn push_letters(
    batch: &mut Batch,
    l: &Letters<'_>,
    min_len: usize,
    stats: &mut ReadStats,
    name: &Path,
) -> Result<(), AssemblyError> {
    let mut start = batch.codes.len();
    // the common case, bases only: one table lookup a letter, no branch
    batch
        .codes
        .extend(l.seq.iter().map(|&c| BASE_CODES[c as usize]));
    if batch.codes[start..].iter().all(|&c| c < 4) {
        end_piece(batch, &mut start, min_len, l.color);
        return Ok(());
    }
    batch.codes.truncate(start);
    for (i, &c) in l.seq.iter().enumerate() {
        match base_code(c) {
            Some(code) => batch.codes.push(code),
            None if is_nucleotide_symbol(c) => {
                if i >= l.counted_from {
                    stats.non_bases += 1;
                }
                end_piece(batch, &mut start, min_len, l.color);
            }
            None => {
                return Err(AssemblyError::Reads {
                    path: name.to_path_buf(),
                    record: l.record,
                    message: format!(
                        "{:?} is not a nucleotide letter (IUPAC codes, `-`, `.` and `*` are; is \
                         this a reads file?)",
                        c as char
                    ),
                });
            }
        }
    }
    end_piece(batch, &mut start, min_len, l.color);
    Ok(())
}

/// Whether a sequence character that is not a base is still a nucleotide symbol: an IUPAC
/// ambiguity code (`N`, `R`, `Y`, ..., and `U`), a gap (`-`, `.`) or a stop (`*`). Anything
/// else means the file is not reads.
fn is_nucleotide_symbol(c: u8) -> bool {
    matches!(
        c.to_ascii_uppercase(),
        b'N' | b'U' | b'R' | b'Y' | b'K' | b'M' | b'S' | b'W' | b'B' | b'D' | b'H' | b'V'
    ) || matches!(c, b'-' | b'.' | b'*')
}

/// Closes the piece that began at `start`: kept when at least `min_len` long (tagged with
/// `color` when the read is colored), else dropped.
fn end_piece(batch: &mut Batch, start: &mut usize, min_len: usize, color: Option<u32>) {
    if batch.codes.len() - *start >= min_len.max(1) {
        batch.ends.push(batch.codes.len());
        if let Some(c) = color {
            batch.tags.push(c);
        }
    } else {
        batch.codes.truncate(*start);
    }
    *start = batch.codes.len();
}

/// A FASTA/FASTQ source opened with needletail, plain or gzip; `None` for an empty one (an
/// empty file holds no records, as jellyfish and numpy read empty inputs, not an error).
///
/// # Errors
/// [`AssemblyError::Io`] when the file cannot be opened (before any format error);
/// [`AssemblyError::Reads`] (record 1) when its start is not FASTA/FASTQ.
pub(crate) fn open_fastx<'a>(
    source: &ReadSource<'a>,
) -> Result<Option<Box<dyn FastxReader + 'a>>, AssemblyError> {
    let name = source.name();
    Ok(Some(
        match source {
            ReadSource::File(p) => {
                let file = std::fs::File::open(p).map_err(|error| AssemblyError::Io {
                    path: p.to_path_buf(),
                    error,
                })?;
                if file.metadata().is_ok_and(|m| m.is_file() && m.len() == 0) {
                    return Ok(None);
                }
                needletail::parse_fastx_reader(file)
            }
            ReadSource::Bytes([], _) => return Ok(None),
            ReadSource::Bytes(b, _) => needletail::parse_fastx_reader(std::io::Cursor::new(*b)),
        }
        .map_err(|e| reads_error(&name, 1, &e))?,
    ))
}

/// A reader's error at `record` (1-based) of `path`.
pub(crate) fn reads_error(
    path: &Path,
    record: u64,
    e: &needletail::errors::ParseError,
) -> AssemblyError {
    AssemblyError::Reads {
        path: path.to_path_buf(),
        record,
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record longer than a batch is read in overlapping segments: the k-mers of the pieces
    /// are exactly the record's (each once), and every `N` is counted once.
    #[test]
    fn long_records_are_cut_into_segments_without_losing_or_repeating_a_kmer() {
        let k = 11;
        let mut state = 7u64;
        let mut seq = Vec::new();
        for i in 0..20_000 {
            state = crate::kmer::mix64(state + i);
            seq.push(if state.is_multiple_of(97) {
                b'N'
            } else {
                b"ACGT"[(state % 4) as usize]
            });
        }
        let fa = [b">g long genome\n", &seq[..], b"\n"].concat();
        let mut kmers: Vec<Vec<u8>> = Vec::new();
        let mut batches = 0;
        let stats = for_each_batch(
            &[ReadSource::Bytes(&fa, "g.fa")],
            k,
            300,
            &mut |_| {},
            &mut |b| {
                batches += 1;
                assert!(
                    b.codes.len() < 2 * 300 + 4 * k,
                    "a batch of {}",
                    b.codes.len()
                );
                for p in b.pieces() {
                    kmers.extend(p.windows(k).map(<[u8]>::to_vec));
                }
                Ok(())
            },
        )
        .expect("read");
        let mut want: Vec<Vec<u8>> = seq
            .split(|&c| c == b'N')
            .flat_map(|p| {
                p.windows(k)
                    .map(|w| w.iter().map(|&c| base_code(c).expect("base")).collect())
            })
            .collect();
        kmers.sort();
        want.sort();
        assert_eq!(kmers, want);
        assert!(batches > 20);
        assert_eq!(
            stats.non_bases,
            seq.iter().filter(|&&c| c == b'N').count() as u64
        );
        assert_eq!((stats.reads, stats.letters), (1, 20_000));
    }
}
