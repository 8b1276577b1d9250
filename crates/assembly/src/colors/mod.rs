//! Colored compacted graphs: which inputs ("colors") hold each k-mer.
//!
//! A colored run ([`crate::assemble_colored`]) reads every input with a color
//! ([`Colors`]: one per file, one per name in a list, or one per record), counts the k-mers
//! per color (`count/`: a k-mer is solid when some color holds it `min_count..=max_count`
//! times), builds the same maximal unitigs as the uncolored graph of those k-mers, then paints
//! each unitig with runs of k-mers that share one color set (`paint.rs`). [`ColorTable`] holds
//! the sets by id and the colors by name, and writes them as JSON lines.

mod paint;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::sync::Mutex;

use rayon::prelude::*;

pub(crate) use paint::paint;

use crate::AssemblyError;
use crate::reads::{RecordColors, SourceTags};
use crate::set_code::{decode_intervals, decode_set, encode_set};

/// How the inputs of a colored graph are colored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Colors {
    /// Input `i` has the color named `names[i]`; inputs with the same name share a color
    /// (GGCAT's `-d` list). Colors are numbered in order of first appearance.
    PerSource(Vec<String>),
    /// Every record is a color, named by its header's first word; records with the same name
    /// share a color. Colors are numbered in order of first appearance, the inputs read in
    /// order.
    PerRecord,
}

/// How a color-sets file lists each set's colors (`warpath assemble --color-sets-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SetsFormat {
    /// By name: `{"id": 4, "colors": ["g0", "g1", "g2", "g7"]}`, readable without the header
    /// line, but a pangenome's sets hold hundreds of names each.
    #[default]
    Names,
    /// By number (the header line's order), each run of three or more consecutive colors as
    /// its inclusive `[first, last]`: `{"id": 4, "colors": [[0, 2], 7]}`. A few bytes a set
    /// where the inputs are listed in the order of their tree (related genomes next to each
    /// other), several times smaller than by name where they are not.
    Numbers,
}

impl std::str::FromStr for SetsFormat {
    type Err = String;

    /// `names` or `numbers` (the command line's `--color-sets-format`, Python's
    /// `color_sets_format`).
    ///
    /// # Examples
    /// ```
    /// assert_eq!("numbers".parse(), Ok(assembly::SetsFormat::Numbers));
    /// assert!("ids".parse::<assembly::SetsFormat>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "names" => Ok(SetsFormat::Names),
            "numbers" => Ok(SetsFormat::Numbers),
            _ => Err(format!(
                "the color-sets format must be 'names' or 'numbers', not `{s}`"
            )),
        }
    }
}

/// The colors of a colored graph and its color sets.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColorTable {
    /// The colors' names, by color number.
    pub names: Vec<String>,
    /// The color sets by id (the ids of [`crate::ColorRun::set`]): each set's color numbers,
    /// ascending.
    pub sets: ColorSets,
}

/// Color sets by id, packed: each set's ascending color numbers as the varint gaps between
/// them, as intervals of consecutive colors, or as one bit a color, whichever is shortest (a
/// few bytes a set where sets hold runs of related genomes, an eighth of a byte a color where
/// they hold a large share of them).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColorSets {
    bytes: Vec<u8>,
    /// Where set `i` starts in `bytes`, and after the last, the end.
    offsets: Vec<u64>,
}

impl ColorSets {
    /// The sets of `sets` (each ascending).
    ///
    /// # Examples
    /// ```
    /// let s = assembly::ColorSets::from_sets(&[vec![0, 1, 300], vec![2]]);
    /// assert_eq!((s.len(), s.get(0), s.get(1)), (2, vec![0, 1, 300], vec![2]));
    /// assert_eq!(s.to_vecs(), [vec![0, 1, 300], vec![2]]);
    /// // a run of consecutive colors packs as one interval
    /// let run: Vec<u32> = (100..1100).collect();
    /// let r = assembly::ColorSets::from_sets(&[run.clone(), vec![]]);
    /// assert_eq!((r.get(0), r.get(1)), (run, vec![]));
    /// assert!(r.memory_bytes() < 40);
    /// ```
    pub fn from_sets(sets: &[Vec<u32>]) -> ColorSets {
        let mut s = ColorSets {
            bytes: Vec::new(),
            offsets: vec![0],
        };
        for set in sets {
            encode_set(set, &mut s.bytes);
            s.offsets.push(s.bytes.len() as u64);
        }
        s
    }

    /// How many sets.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Set `id`'s colors, ascending.
    ///
    /// # Panics
    /// When `id >= self.len()`.
    pub fn get(&self, id: usize) -> Vec<u32> {
        let mut out = Vec::new();
        decode_set(
            &self.bytes[self.offsets[id] as usize..self.offsets[id + 1] as usize],
            &mut out,
        );
        out
    }

    /// Every set, by id.
    pub fn to_vecs(&self) -> Vec<Vec<u32>> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// Bytes the packed sets take.
    pub fn memory_bytes(&self) -> usize {
        self.bytes.len() + 8 * self.offsets.len()
    }

    /// Sets whose packed forms are given by id, as [`encode_set`] writes them.
    pub(crate) fn from_packed(bytes: Vec<u8>, offsets: Vec<u64>) -> ColorSets {
        ColorSets { bytes, offsets }
    }
}

impl ColorTable {
    /// Writes the table as JSON lines: first `{"colors": [every color's name, by number]}`,
    /// then one `{"id": N, "colors": [...]}` per set, ids in order, its colors by name or by
    /// number as `format` says ([`SetsFormat`]).
    ///
    /// # Errors
    /// The writer's.
    ///
    /// # Examples
    /// ```
    /// let t = assembly::ColorTable {
    ///     names: vec!["a.fa".into(), "b \"2\".fa".into()],
    ///     sets: assembly::ColorSets::from_sets(&[vec![0, 1], vec![1]]),
    /// };
    /// let mut out = Vec::new();
    /// t.write_json_lines(&mut out, assembly::SetsFormat::Names)?;
    /// assert_eq!(
    ///     String::from_utf8(out).unwrap(),
    ///     "{\"colors\": [\"a.fa\", \"b \\\"2\\\".fa\"]}\n\
    ///      {\"id\": 0, \"colors\": [\"a.fa\", \"b \\\"2\\\".fa\"]}\n\
    ///      {\"id\": 1, \"colors\": [\"b \\\"2\\\".fa\"]}\n"
    /// );
    /// // by number: runs of three or more as [first, last]
    /// let t = assembly::ColorTable {
    ///     names: (0..8).map(|i| format!("g{i}")).collect(),
    ///     sets: assembly::ColorSets::from_sets(&[vec![0, 1, 2, 7], vec![3, 4]]),
    /// };
    /// let mut out = Vec::new();
    /// t.write_json_lines(&mut out, assembly::SetsFormat::Numbers)?;
    /// let text = String::from_utf8(out).unwrap();
    /// let lines: Vec<&str> = text.lines().skip(1).collect();
    /// assert_eq!(lines, ["{\"id\": 0, \"colors\": [[0, 2], 7]}", "{\"id\": 1, \"colors\": [3, 4]}"]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn write_json_lines(&self, out: &mut dyn Write, format: SetsFormat) -> io::Result<()> {
        let quoted: Vec<String> = self
            .names
            .iter()
            .map(|n| serde_json::to_string(n).expect("a string"))
            .collect();
        let mut line = String::with_capacity(256);
        line.push_str("{\"colors\": [");
        line.push_str(&quoted.join(", "));
        line.push_str("]}\n");
        out.write_all(line.as_bytes())?;
        // Blocks of sets formatted on rayon's threads while the previous group is written:
        // a pangenome's file is gigabytes of names. Two groups of at most
        // JSON_BLOCKS_PER_GROUP blocks are in flight (a few MB at 2 threads, tens at most).
        let n = self.sets.len();
        let blocks = (2 * rayon::current_num_threads()).min(JSON_BLOCKS_PER_GROUP);
        let group = JSON_SETS_PER_BLOCK * blocks;
        let format_group = |first: usize| -> Vec<Vec<u8>> {
            let last = (first + group).min(n);
            (first..last)
                .step_by(JSON_SETS_PER_BLOCK)
                .collect::<Vec<usize>>()
                .into_par_iter()
                .map(|a| self.json_block(&quoted, format, a..(a + JSON_SETS_PER_BLOCK).min(last)))
                .collect()
        };
        let mut ready = format_group(0);
        for first in (group..n).step_by(group) {
            // (the writer need not be `Send`: it stays on this thread)
            ready = std::thread::scope(|s| {
                let next = s.spawn(|| format_group(first));
                ready.iter().try_for_each(|b| out.write_all(b))?;
                Ok::<_, io::Error>(next.join().expect("formatting JSON lines"))
            })?;
        }
        ready.iter().try_for_each(|b| out.write_all(b))
    }

    /// The JSON lines of sets `ids`, names already quoted.
    fn json_block(
        &self,
        quoted: &[String],
        format: SetsFormat,
        ids: std::ops::Range<usize>,
    ) -> Vec<u8> {
        let mut line = String::with_capacity(256 * ids.len());
        let mut runs = Vec::new();
        for id in ids {
            decode_intervals(
                &self.sets.bytes
                    [self.sets.offsets[id] as usize..self.sets.offsets[id + 1] as usize],
                &mut runs,
            );
            // writing to a String cannot fail
            let _ = write!(line, "{{\"id\": {id}, \"colors\": [");
            let mut first = true;
            let mut sep = |line: &mut String| {
                if !std::mem::take(&mut first) {
                    line.push_str(", ");
                }
            };
            let mut digits = itoa::Buffer::new();
            for &(a, len) in &runs {
                match format {
                    SetsFormat::Numbers if len >= 3 => {
                        sep(&mut line);
                        line.push('[');
                        line.push_str(digits.format(a));
                        line.push_str(", ");
                        line.push_str(digits.format(a + len - 1));
                        line.push(']');
                    }
                    SetsFormat::Numbers => {
                        for c in a..a + len {
                            sep(&mut line);
                            line.push_str(digits.format(c));
                        }
                    }
                    SetsFormat::Names => {
                        for c in a..a + len {
                            sep(&mut line);
                            line.push_str(&quoted[c as usize]);
                        }
                    }
                }
            }
            line.push_str("]}\n");
        }
        line.into_bytes()
    }
}

/// Sets a block of [`ColorTable::write_json_lines`] formats on one thread.
const JSON_SETS_PER_BLOCK: usize = 1024;
/// Blocks [`ColorTable::write_json_lines`] formats at once, at most (bounding its memory on
/// machines with many threads: about 0.7 MB a block in a pangenome of 100 genomes).
const JSON_BLOCKS_PER_GROUP: usize = 16;

/// The reading tags of `colors` for `sources` inputs, and the color names known before
/// reading (all of them per source; none per record).
///
/// # Errors
/// [`AssemblyError::InvalidParameter`] when the names do not match the inputs one to one.
pub(crate) fn source_tags(
    colors: &Colors,
    sources: usize,
) -> Result<(SourceTags, Vec<String>), AssemblyError> {
    match colors {
        Colors::PerSource(names) => {
            if names.len() != sources {
                return Err(AssemblyError::InvalidParameter(format!(
                    "{} color names for {sources} inputs: give each input one",
                    names.len()
                )));
            }
            let mut ids: HashMap<&str, u32> = HashMap::new();
            let mut unique = Vec::new();
            let tags = names
                .iter()
                .map(|n| {
                    *ids.entry(n.as_str()).or_insert_with(|| {
                        unique.push(n.clone());
                        unique.len() as u32 - 1
                    })
                })
                .collect();
            Ok((SourceTags::PerSource(tags), unique))
        }
        Colors::PerRecord => Ok((
            SourceTags::PerRecord(Mutex::new(RecordColors::default())),
            Vec::new(),
        )),
    }
}

/// The color names after reading: those known before, or the records' names.
pub(crate) fn color_names(tags: SourceTags, known: Vec<String>) -> Vec<String> {
    match tags {
        SourceTags::PerSource(_) => known,
        SourceTags::PerRecord(r) => r.into_inner().expect("record colors").names,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many blocks of sets (formatted on several threads) come out in id order, each line as
    /// one set alone would be written.
    #[test]
    fn json_lines_keep_their_order_across_blocks() {
        let names: Vec<String> = (0..7).map(|i| format!("g{i}")).collect();
        let sets: Vec<Vec<u32>> = (0..10_000u32)
            .map(|i| (0..7).filter(|c| (i >> c) & 1 == 1).collect())
            .collect();
        let t = ColorTable {
            names: names.clone(),
            sets: ColorSets::from_sets(&sets),
        };
        let mut out = Vec::new();
        t.write_json_lines(&mut out, SetsFormat::Names).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        let header = "{\"colors\": [\"g0\", \"g1\", \"g2\", \"g3\", \"g4\", \"g5\", \"g6\"]}";
        assert_eq!(lines.next(), Some(header));
        for (id, set) in sets.iter().enumerate() {
            let names: Vec<String> = set.iter().map(|&c| format!("\"g{c}\"")).collect();
            let want = format!("{{\"id\": {id}, \"colors\": [{}]}}", names.join(", "));
            assert_eq!(lines.next(), Some(want.as_str()), "set {id}");
        }
        assert_eq!(lines.next(), None);
        // by number: the same header, runs of three or more as [first, last]
        let mut out = Vec::new();
        t.write_json_lines(&mut out, SetsFormat::Numbers).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(header));
        for (id, set) in sets.iter().enumerate() {
            let members: Vec<String> = set
                .chunk_by(|a, b| a + 1 == *b)
                .flat_map(|r| match r {
                    [a, .., b] if r.len() >= 3 => vec![format!("[{a}, {b}]")],
                    _ => r.iter().map(u32::to_string).collect(),
                })
                .collect();
            let want = format!("{{\"id\": {id}, \"colors\": [{}]}}", members.join(", "));
            assert_eq!(lines.next(), Some(want.as_str()), "set {id}");
        }
        assert_eq!(lines.next(), None);
    }
}
