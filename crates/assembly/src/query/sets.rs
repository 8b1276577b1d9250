//! The color-sets file: JSON lines `{"id": N, "colors": ["name", ...]}`, ids `0, 1, 2, ...` in
//! order, after an optional header line `{"colors": [every color, by number]}` (plain or
//! gzip). Without the header the colors are numbered by first appearance. With it, a set may
//! also give a color by its number, and a run of colors as an inclusive `[first, last]`
//! ([`crate::SetsFormat::Numbers`]).
//!
//! A query reads only the sets its k-mers reach: [`SetsFile::open`] reads the header line (the
//! whole file when there is none, to number the colors), and [`SetsFile::read`] scans the file
//! once per pass, parsing the lines of the sets asked for (in parallel) and counting the rest.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::AssemblyError;
use crate::reads::ReadSource;
use crate::set_code::{decode_intervals, encode_set};

/// A reader of a source's bytes, inflated when they start with gzip's magic bytes.
fn open<'a>(source: &ReadSource<'a>) -> Result<Box<dyn BufRead + 'a>, AssemblyError> {
    let raw: Box<dyn Read + 'a> = match source {
        ReadSource::File(p) => {
            Box::new(std::fs::File::open(p).map_err(|error| AssemblyError::Io {
                path: p.to_path_buf(),
                error,
            })?)
        }
        ReadSource::Bytes(b, _) => Box::new(*b),
    };
    let mut r = BufReader::with_capacity(1 << 20, raw);
    let gz = r
        .fill_buf()
        .map_err(|error| AssemblyError::Io {
            path: source.name(),
            error,
        })?
        .starts_with(&[0x1f, 0x8b]);
    Ok(if gz {
        Box::new(BufReader::with_capacity(
            1 << 20,
            flate2::bufread::MultiGzDecoder::new(r),
        ))
    } else {
        Box::new(r)
    })
}

/// One line as JSON: `id` absent on the header line.
#[derive(serde::Deserialize)]
struct Line<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    colors: Vec<Member<'a>>,
}

/// One entry of a line's colors.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Member<'a> {
    /// A color by name.
    Name(#[serde(borrow)] Cow<'a, str>),
    /// A color by its number in the header line.
    Number(u64),
    /// The colors `first..=last` by number.
    Run([u64; 2]),
}

/// The color names and their numbers.
#[derive(Default)]
struct Names {
    names: Vec<String>,
    numbers: FxHashMap<String, u32>,
    /// Per color, whether JSON writes its name as it is (no quote, backslash or control
    /// character to escape).
    plain: Vec<bool>,
}

impl Names {
    /// The number of `name`, trying the color after `previous` first (sets list their colors
    /// in order, so that guess is right for nearly every name warpath writes).
    #[inline]
    fn number(&self, name: &str, previous: Option<u32>) -> Option<u32> {
        let guess = previous.map_or(0, |p| p as usize + 1);
        if self.names.get(guess).is_some_and(|n| n == name) {
            return Some(guess as u32);
        }
        self.numbers.get(name).copied()
    }

    /// Adds a color; `false` when it is there already.
    fn add(&mut self, name: &str) -> bool {
        if self.numbers.contains_key(name) {
            return false;
        }
        self.numbers
            .insert(name.to_string(), self.names.len() as u32);
        self.names.push(name.to_string());
        self.plain
            .push(!name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20));
        true
    }

    /// The name of color `i` as JSON text writes it, when that is the name itself.
    #[inline]
    fn plain(&self, i: usize) -> Option<&[u8]> {
        self.plain
            .get(i)
            .is_some_and(|&p| p)
            .then(|| self.names[i].as_bytes())
    }
}

/// What a line parsed to.
enum Parsed<'a> {
    /// The header line's colors.
    Header(Vec<Cow<'a, str>>),
    /// A set line: its id and its colors.
    Set(u64, Vec<Member<'a>>),
}

/// Parses one line (not blank), with messages as [`AssemblyError::ColorSets`] gives them.
fn parse_line(text: &str) -> Result<Parsed<'_>, String> {
    match serde_json::from_str::<Line<'_>>(text) {
        Ok(Line { id: None, colors }) => colors
            .into_iter()
            .map(|c| match c {
                Member::Name(name) => Ok(name),
                _ => Err("the header line lists the colors' names: strings only".into()),
            })
            .collect::<Result<_, String>>()
            .map(Parsed::Header),
        Ok(Line {
            id: Some(id),
            colors,
        }) => Ok(Parsed::Set(id, colors)),
        Err(e) => Err(explain(text, &e)),
    }
}

/// Why a line is not of the format, in words (the fast parse only says that it is not).
fn explain(text: &str, fast: &serde_json::Error) -> String {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return format!("not JSON: {e}"),
    };
    let Some(object) = value.as_object() else {
        return "not a JSON object".into();
    };
    let Some(names) = object.get("colors").and_then(|c| c.as_array()) else {
        return "no \"colors\" array".into();
    };
    let member = |c: &serde_json::Value| {
        c.is_string()
            || c.is_u64()
            || c.as_array()
                .is_some_and(|r| r.len() == 2 && r.iter().all(serde_json::Value::is_u64))
    };
    if let Some(c) = names.iter().find(|c| !member(c)) {
        return format!("color {c} is not a name, a color number or a [first, last] run");
    }
    match object.get("id") {
        Some(id) if !id.is_u64() => {
            format!("id {id}: ids are whole numbers 0, 1, 2, ... in order, none missing")
        }
        _ => format!("not a color-set line: {fast}"),
    }
}

/// The color numbers of a set line's colors, sorted and checked (a known color each, none
/// twice; numbers only below the `header` line's count, and only when there is one).
fn numbers(colors: &[Member<'_>], names: &Names, header: bool) -> Result<Vec<u32>, String> {
    let mut set = Vec::with_capacity(colors.len());
    let mut previous = None;
    let known = |x: u64| {
        if !header {
            return Err(format!(
                "color number {x} without the header line that numbers the colors"
            ));
        }
        u32::try_from(x)
            .ok()
            .filter(|&x| (x as usize) < names.names.len())
            .ok_or_else(|| {
                format!(
                    "color number {x}: the header line names {} colors",
                    names.names.len()
                )
            })
    };
    for c in colors {
        match c {
            Member::Name(name) => {
                let Some(x) = names.number(name, previous) else {
                    return Err(format!(
                        "color {name:?} is not among the header line's colors"
                    ));
                };
                set.push(x);
                previous = Some(x);
            }
            &Member::Number(x) => set.push(known(x)?),
            &Member::Run([first, last]) => {
                let (a, b) = (known(first)?, known(last)?);
                if a > b {
                    return Err(format!("run [{first}, {last}] ends before it starts"));
                }
                set.extend(a..=b);
            }
        }
    }
    sorted_distinct(&mut set, names)?;
    Ok(set)
}

/// Sorts a set's color numbers; an error naming a color listed twice.
fn sorted_distinct(set: &mut [u32], names: &Names) -> Result<(), String> {
    if !set.is_sorted() {
        set.sort_unstable();
    }
    match set.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(format!(
            "color {:?} is twice in the set",
            names.names[w[0] as usize]
        )),
        None => Ok(()),
    }
}

/// The set ids a pass needs: a bit per id.
pub(crate) struct Needed {
    bits: Vec<u64>,
    /// The largest id asked for.
    max: Option<u32>,
}

impl Needed {
    /// No id yet, room for ids below `n`.
    pub(crate) fn new(n: usize) -> Needed {
        Needed {
            bits: vec![0; n.div_ceil(64)],
            max: None,
        }
    }

    /// Asks for set `id` (below the `n` it was made for).
    #[inline]
    pub(crate) fn add(&mut self, id: u32) {
        self.bits[id as usize / 64] |= 1 << (id % 64);
        self.max = self.max.max(Some(id));
    }

    #[inline]
    fn has(&self, id: u64) -> bool {
        self.bits
            .get(id as usize / 64)
            .is_some_and(|w| w >> (id % 64) & 1 == 1)
    }
}

/// The sets one pass read: by set id, the colors (numbers, ascending) of those asked for,
/// packed as the colored build packs them ([`encode_set`]: a few bytes a set in a pangenome).
#[derive(Default)]
pub(crate) struct PassSets {
    /// Per id, its position among the sets read (`u32::MAX`: not read).
    position: Vec<u32>,
    /// Set at position `i` is `bytes[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    bytes: Vec<u8>,
    /// The sets in the file, when the pass read it to the end.
    pub(crate) total: Option<u64>,
}

impl PassSets {
    /// The position among the sets read of set `id` (one that was asked for).
    #[inline]
    pub(crate) fn position(&self, id: u32) -> u32 {
        self.position[id as usize]
    }

    /// Asks the core to load where the set at position `p` starts.
    #[inline]
    pub(crate) fn prefetch_start(&self, p: u32) {
        gpu_primitives::prefetch(self.starts[p as usize..].as_ptr());
    }

    /// Asks the core to load the first bytes of the set at position `p`.
    #[inline]
    pub(crate) fn prefetch_bytes(&self, p: u32) {
        gpu_primitives::prefetch(self.bytes[self.starts[p as usize]..].as_ptr());
    }

    /// The intervals `(first color, length)` of the set at position `p`, into `out` (cleared
    /// first).
    #[inline]
    pub(crate) fn intervals_into(&self, p: u32, out: &mut Vec<(u32, u32)>) {
        let p = p as usize;
        decode_intervals(&self.bytes[self.starts[p]..self.starts[p + 1]], out);
    }

    /// The colors of set `id` (one that was asked for), ascending.
    #[cfg(test)]
    pub(crate) fn set(&self, id: u32) -> Vec<u32> {
        let mut iv = Vec::new();
        self.intervals_into(self.position(id), &mut iv);
        iv.iter().flat_map(|&(a, l)| a..a + l).collect()
    }

    /// Bytes the sets take.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.len() + 8 * self.starts.len() + 4 * self.position.len()
    }
}

/// Needed lines, back to back: per line its set id, its line number and its end in `text`.
#[derive(Default)]
struct Batch {
    text: Vec<u8>,
    lines: Vec<(u64, u64, usize)>,
}

/// Sets packed back to back, and the end of each.
type Packed = (Vec<u8>, Vec<usize>);

/// Bytes of needed lines parsed together.
const PARSE_BATCH: usize = 1 << 22;

/// A color-sets file opened for queries: its color names, read once.
pub(crate) struct SetsFile<'a> {
    source: ReadSource<'a>,
    pub(crate) path: PathBuf,
    names: Names,
    /// Whether the file starts with a header line.
    header: bool,
}

impl<'a> SetsFile<'a> {
    /// Reads the header line, or the whole file when there is none (its colors are then
    /// numbered by first appearance).
    ///
    /// # Errors
    /// [`AssemblyError::Io`]; [`AssemblyError::ColorSets`] for a header line naming a color
    /// twice, or (without one) any line of the file that is not of the format.
    pub(crate) fn open(source: ReadSource<'a>) -> Result<SetsFile<'a>, AssemblyError> {
        let mut file = SetsFile {
            source,
            path: source.name(),
            names: Names::default(),
            header: false,
        };
        let mut reader = open(&source)?;
        let mut line = Vec::new();
        let mut n = 0u64;
        let mut header = None;
        while file.next_line(&mut *reader, &mut line, &mut n)? {
            if !is_blank(&line) {
                header = Some(file.text(&line, n)?.to_string());
                break;
            }
        }
        let Some(first) = header else {
            return Ok(file); // no sets at all
        };
        if let Parsed::Header(colors) = parse_line(&first).map_err(|m| file.bad(n, m))? {
            file.header = true;
            for c in &colors {
                if !file.names.add(c) {
                    return Err(file.bad(n, format!("color {c:?} is named twice")));
                }
            }
            return Ok(file);
        }
        // no header: every line, to number the colors by first appearance
        drop(reader);
        let mut reader = open(&source)?;
        let (mut n, mut id) = (0u64, 0u64);
        while file.next_line(&mut *reader, &mut line, &mut n)? {
            if is_blank(&line) {
                continue;
            }
            let text = file.text(&line, n)?;
            match parse_line(text).map_err(|m| file.bad(n, m))? {
                Parsed::Header(_) => return Err(file.bad(n, misplaced_header())),
                Parsed::Set(got, colors) => {
                    check_id(got, id).map_err(|m| file.bad(n, m))?;
                    for c in &colors {
                        if let Member::Name(name) = c {
                            file.names.add(name);
                        }
                    }
                    numbers(&colors, &file.names, false).map_err(|m| file.bad(n, m))?;
                }
            }
            id += 1;
        }
        Ok(file)
    }

    /// Every color's name, by number.
    pub(crate) fn names(&self) -> &[String] {
        &self.names.names
    }

    /// Reads the sets `needed` asks for: to the end of the file when `to_end` (the count of
    /// sets then in [`PassSets::total`]), else up to the largest id asked for; `None` as soon
    /// as they take more than `limit` bytes.
    ///
    /// # Errors
    /// [`AssemblyError::Io`]; [`AssemblyError::ColorSets`] naming the line for a line read
    /// that is not of the format, an id out of order, a color the header line does not name
    /// or twice in its set, or a header line after the first line.
    pub(crate) fn read(
        &self,
        needed: &Needed,
        to_end: bool,
        limit: usize,
    ) -> Result<Option<PassSets>, AssemblyError> {
        let mut out = PassSets {
            position: vec![u32::MAX; needed.max.map_or(0, |m| m as usize + 1)],
            starts: vec![0],
            ..PassSets::default()
        };
        if needed.max.is_none() && !to_end {
            return Ok(Some(out));
        }
        // a thread scans the lines and hands the needed ones on in batches, parsed here in
        // parallel while it scans on
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(2);
        let total = std::thread::scope(|scope| {
            let scanner = scope.spawn(move || self.scan(needed, to_end, &tx));
            for batch in rx.iter() {
                self.parse_batch(&batch.text, &batch.lines, &mut out)?;
                if out.bytes() > limit {
                    return Ok(None); // the scanner stops at its next batch
                }
            }
            scanner
                .join()
                .map_err(|_| AssemblyError::Internal("the color-sets scanner failed".into()))?
                .map(Some)
        })?;
        let Some(total) = total else {
            return Ok(None);
        };
        if to_end {
            out.total = Some(total);
        }
        Ok(Some(out))
    }

    /// Scans the lines, sending the needed ones in batches; the sets counted. It stops when
    /// the receiver is gone.
    fn scan(
        &self,
        needed: &Needed,
        to_end: bool,
        tx: &std::sync::mpsc::SyncSender<Batch>,
    ) -> Result<u64, AssemblyError> {
        let mut reader = open(&self.source)?;
        let (mut n, mut id) = (0u64, 0u64);
        let mut first = true;
        let mut batch = Batch::default();
        let mut gone = false;
        for_each_line(&mut *reader, &self.path, &mut |line| {
            n += 1;
            if is_blank(line) {
                return Ok(true);
            }
            if std::mem::take(&mut first) && self.header {
                return Ok(true); // the header line, read by `open`
            }
            if needed.has(id) {
                batch.text.extend_from_slice(line);
                batch.lines.push((id, n, batch.text.len()));
                if batch.text.len() >= PARSE_BATCH && tx.send(std::mem::take(&mut batch)).is_err() {
                    gone = true;
                    return Ok(false);
                }
            }
            id += 1;
            Ok(to_end || needed.max.is_some_and(|m| id <= u64::from(m)))
        })?;
        if !gone && !batch.lines.is_empty() {
            let _ = tx.send(batch); // a receiver gone stops the read anyway
        }
        Ok(id)
    }

    /// Parses needed lines in parallel and appends their sets in order.
    fn parse_batch(
        &self,
        text: &[u8],
        lines: &[(u64, u64, usize)],
        out: &mut PassSets,
    ) -> Result<(), AssemblyError> {
        const LINES: usize = 256;
        let parsed: Vec<Result<Packed, AssemblyError>> = (0..lines.len().div_ceil(LINES))
            .into_par_iter()
            .map(|c| {
                let (mut bytes, mut ends) = (Vec::new(), Vec::new());
                let mut scratch = Vec::new();
                for i in c * LINES..lines.len().min((c + 1) * LINES) {
                    let (id, n, end) = lines[i];
                    let start = if i == 0 { 0 } else { lines[i - 1].2 };
                    self.parse_set(&text[start..end], id, n, &mut scratch, &mut bytes)?;
                    ends.push(bytes.len());
                }
                Ok((bytes, ends))
            })
            .collect();
        let mut i = 0;
        for chunk in parsed {
            let (bytes, ends) = chunk?;
            let base = out.bytes.len();
            out.bytes.extend_from_slice(&bytes);
            for end in ends {
                out.position[lines[i].0 as usize] = (out.starts.len() - 1) as u32;
                out.starts.push(base + end);
                i += 1;
            }
        }
        Ok(())
    }

    /// Parses set line `n` (set `id`) and appends its packed colors to `out`: the lines
    /// warpath writes by hand, any other JSON of the format through `serde_json`.
    fn parse_set(
        &self,
        line: &[u8],
        id: u64,
        n: u64,
        scratch: &mut Vec<u32>,
        out: &mut Vec<u8>,
    ) -> Result<(), AssemblyError> {
        let bad = |m: String| self.bad(n, m);
        scratch.clear();
        let fast = fast_set(line, &self.names, self.header, scratch);
        let got = match fast {
            Some(got) => got,
            None => {
                scratch.clear();
                match parse_line(self.text(line, n)?).map_err(bad)? {
                    Parsed::Header(_) => return Err(bad(misplaced_header())),
                    Parsed::Set(got, colors) => {
                        check_id(got, id).map_err(bad)?;
                        *scratch = numbers(&colors, &self.names, self.header).map_err(bad)?;
                        got
                    }
                }
            }
        };
        check_id(got, id).map_err(bad)?;
        sorted_distinct(scratch, &self.names).map_err(bad)?;
        encode_set(scratch, out);
        Ok(())
    }

    /// Reads the next line into `line`, counting it in `n`; `false` at the end.
    fn next_line(
        &self,
        reader: &mut dyn BufRead,
        line: &mut Vec<u8>,
        n: &mut u64,
    ) -> Result<bool, AssemblyError> {
        line.clear();
        let read = reader
            .read_until(b'\n', line)
            .map_err(|error| AssemblyError::Io {
                path: self.path.clone(),
                error,
            })?;
        *n += 1;
        Ok(read > 0)
    }

    /// A line as text.
    fn text<'b>(&self, line: &'b [u8], n: u64) -> Result<&'b str, AssemblyError> {
        std::str::from_utf8(line)
            .map(str::trim)
            .map_err(|_| self.bad(n, "not UTF-8 text".into()))
    }

    /// The error of line `n`.
    fn bad(&self, n: u64, message: String) -> AssemblyError {
        AssemblyError::ColorSets {
            path: self.path.clone(),
            line: n,
            message,
        }
    }
}

/// The id and color numbers (into `out`, as listed) of a set line in a form warpath writes,
/// `{"id": N, "colors": [...]}` with names it knows and no escapes, or (after a `header`
/// line) numbers and `[first, last]` runs below its count; `None` for any other line (which
/// the JSON parser then reads, or explains).
#[inline]
fn fast_set(line: &[u8], names: &Names, header: bool, out: &mut Vec<u32>) -> Option<u64> {
    let line = line.trim_ascii();
    let mut rest = line.strip_prefix(b"{\"id\": ")?;
    let id = fast_number(&mut rest)?;
    rest = rest.strip_prefix(b", \"colors\": [")?;
    let mut previous = None;
    if let Some(end) = rest.strip_prefix(b"]}") {
        return end.is_empty().then_some(id);
    }
    let count = names.names.len() as u64;
    let number = |rest: &mut &[u8]| {
        fast_number(rest)
            .filter(|&x| header && x < count)
            .map(|x| x as u32)
    };
    loop {
        match rest.first()? {
            b'"' => {
                rest = &rest[1..];
                // the color after the previous one, as it nearly always is; else any name
                let guess = previous.map_or(0, |p| p as usize + 1);
                let x = match names.plain(guess) {
                    Some(g) if rest.starts_with(g) && rest.get(g.len()) == Some(&b'"') => {
                        rest = &rest[g.len() + 1..];
                        guess as u32
                    }
                    _ => {
                        let close = memchr::memchr(b'"', rest)?;
                        let name = &rest[..close];
                        if name.contains(&b'\\') {
                            return None;
                        }
                        rest = &rest[close + 1..];
                        names.number(std::str::from_utf8(name).ok()?, previous)?
                    }
                };
                out.push(x);
                previous = Some(x);
            }
            b'[' => {
                rest = &rest[1..];
                let first = number(&mut rest)?;
                rest = rest.strip_prefix(b", ")?;
                let last = number(&mut rest)?;
                rest = rest.strip_prefix(b"]")?;
                if first > last {
                    return None;
                }
                out.extend(first..=last);
            }
            _ => out.push(number(&mut rest)?),
        }
        if let Some(r) = rest.strip_prefix(b", ") {
            rest = r;
        } else {
            return (rest == b"]}").then_some(id);
        }
    }
}

/// A whole number in JSON's form (no sign, no leading zero) off the front of `rest`.
#[inline]
fn fast_number(rest: &mut &[u8]) -> Option<u64> {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 19 || (digits > 1 && rest[0] == b'0') {
        return None;
    }
    let x = rest[..digits]
        .iter()
        .fold(0u64, |x, &d| 10 * x + u64::from(d - b'0'));
    *rest = &rest[digits..];
    Some(x)
}

/// Calls `f` with every line of `reader` (without its newline) until it returns `false`.
fn for_each_line(
    reader: &mut dyn BufRead,
    path: &std::path::Path,
    f: &mut dyn FnMut(&[u8]) -> Result<bool, AssemblyError>,
) -> Result<(), AssemblyError> {
    let io = |error| AssemblyError::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut partial = Vec::new();
    loop {
        let buf = reader.fill_buf().map_err(io)?;
        if buf.is_empty() {
            if !partial.is_empty() {
                f(&partial)?;
            }
            return Ok(());
        }
        let mut start = 0;
        let mut go = true;
        for end in memchr::memchr_iter(b'\n', buf) {
            go = if partial.is_empty() {
                f(&buf[start..end])?
            } else {
                partial.extend_from_slice(&buf[start..end]);
                let line = std::mem::take(&mut partial);
                let go = f(&line)?;
                partial = line;
                partial.clear();
                go
            };
            start = end + 1;
            if !go {
                break;
            }
        }
        if !go {
            return Ok(());
        }
        partial.extend_from_slice(&buf[start..]);
        let used = buf.len();
        reader.consume(used);
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn misplaced_header() -> String {
    "a line without \"id\" (the header line naming every color) may only be the first".into()
}

/// Checks that a line's id is the one expected.
fn check_id(got: u64, want: u64) -> Result<(), String> {
    if want >= u64::from(u32::MAX) {
        return Err(format!("id {want}: too many color sets"));
    }
    if got != want {
        return Err(format!(
            "id {got}: expected {want} (ids go 0, 1, 2, ... in order, none missing)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every set of a sets file, by id.
    fn read(text: &str) -> Result<(Vec<String>, Vec<Vec<u32>>), AssemblyError> {
        read_source(ReadSource::Bytes(text.as_bytes(), "s.jsonl"))
    }

    fn read_source(source: ReadSource<'_>) -> Result<(Vec<String>, Vec<Vec<u32>>), AssemblyError> {
        let file = SetsFile::open(source)?;
        let mut needed = Needed::new(1000);
        for id in 0..1000 {
            needed.add(id);
        }
        let sets = file.read(&needed, true, usize::MAX)?.unwrap();
        let total = sets.total.unwrap() as u32;
        let all = (0..total).map(|i| sets.set(i)).collect();
        Ok((file.names().to_vec(), all))
    }

    #[test]
    fn with_and_without_the_header_line() {
        let body = "{\"id\": 0, \"colors\": [\"B\", \"A\"]}\n{\"id\": 1, \"colors\": [\"A\"]}\n";
        let (names, sets) = read(body).unwrap();
        assert_eq!(names, ["B", "A"]);
        assert_eq!(sets, [vec![0, 1], vec![1]]);
        let (names, sets) =
            read(&format!("{{\"colors\": [\"A\", \"B\", \"C\"]}}\n{body}\n")).unwrap();
        assert_eq!(names, ["A", "B", "C"]);
        assert_eq!(sets, [vec![0, 1], vec![0]]);
        // gzip, and an empty file: no colors, no sets
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, body.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(
            read_source(ReadSource::Bytes(&gz, "s.gz")).unwrap(),
            read(body).unwrap()
        );
        assert_eq!(read("").unwrap(), (vec![], vec![]));
    }

    #[test]
    fn names_that_need_escapes_or_extend_another_are_read() {
        let names = ["g1", "g10", "a\"b", "c\\d", "é"];
        let mut text = serde_json::json!({ "colors": names }).to_string() + "\n";
        let sets = [vec![0, 1], vec![1, 2, 3], vec![0, 1, 2, 3, 4], vec![4, 0]];
        let mut spaced = text.clone();
        for (i, set) in sets.iter().enumerate() {
            let named: Vec<&str> = set.iter().map(|&c| names[c]).collect();
            // serde_json's compact form (keys sorted: colors first), then warpath's own
            text += &(serde_json::json!({ "id": i, "colors": named }).to_string() + "\n");
            let quoted: Vec<String> = named
                .iter()
                .map(|n| serde_json::to_string(n).unwrap())
                .collect();
            spaced += &format!("{{\"id\": {i}, \"colors\": [{}]}}\n", quoted.join(", "));
        }
        assert!(spaced.contains("{\"id\": 1, \"colors\": [\"g10\", \"a\\\"b\", \"c\\\\d\"]}"));
        for t in [&text, &spaced] {
            let (got_names, got) = read(t).unwrap();
            assert_eq!(got_names, names);
            assert_eq!(
                got,
                [vec![0, 1], vec![1, 2, 3], vec![0, 1, 2, 3, 4], vec![0, 4]]
            );
        }
    }

    #[test]
    fn numbers_and_runs_read_as_names_do() {
        let names: Vec<String> = (0..300).map(|i| format!("g{i}")).collect();
        let sets: Vec<Vec<u32>> = vec![
            vec![],
            vec![0, 1, 2, 7],
            vec![3, 4],
            (10..290).collect(),
            vec![299],
            (0..300).filter(|c| c % 3 != 1).collect(),
        ];
        let table = crate::ColorTable {
            names: names.clone(),
            sets: crate::ColorSets::from_sets(&sets),
        };
        let mut by = Vec::new();
        for format in [crate::SetsFormat::Names, crate::SetsFormat::Numbers] {
            let mut out = Vec::new();
            table.write_json_lines(&mut out, format).unwrap();
            by.push(String::from_utf8(out).unwrap());
        }
        assert!(
            by[1].contains("{\"id\": 3, \"colors\": [[10, 289]]}"),
            "{}",
            by[1]
        );
        assert!(by[1].len() < by[0].len());
        for text in &by {
            assert_eq!(read(text).unwrap(), (names.clone(), sets.clone()));
        }
        // any mix, in any order, spaced as JSON allows, through the JSON parser
        let mixed = "{\"colors\": [\"A\", \"B\", \"C\", \"D\"]}\n\
                     {\"id\": 0, \"colors\": [3, \"A\", [1,2]]}\n\
                     {\"id\":1,\"colors\":[[0, 0], [2, 3]]}\n";
        let (_, got) = read(mixed).unwrap();
        assert_eq!(got, [vec![0, 1, 2, 3], vec![0, 2, 3]]);
    }

    #[test]
    fn sets_read_back_as_their_intervals() {
        for set in [
            vec![],
            vec![0],
            vec![5, 6, 7, 200, 202, 203, 1 << 20],
            vec![0, 1, 2, 3],
        ] {
            let mut s = PassSets {
                position: vec![0],
                starts: vec![0],
                ..PassSets::default()
            };
            encode_set(&set, &mut s.bytes);
            s.starts.push(s.bytes.len());
            assert_eq!(s.set(0), set);
            let mut runs = Vec::new();
            s.intervals_into(0, &mut runs);
            let want: Vec<(u32, u32)> = set
                .chunk_by(|a, b| a + 1 == *b)
                .map(|r| (r[0], r.len() as u32))
                .collect();
            assert_eq!(runs, want);
        }
    }

    #[test]
    fn only_the_sets_asked_for_are_read() {
        let text = "{\"colors\": [\"A\", \"B\"]}\n{\"id\": 0, \"colors\": [\"A\"]}\n\n\
                    {\"id\": 1, \"colors\": [\"B\", \"A\"]}\nnot json\n{\"id\": 3, \"colors\": []}\n";
        let file = SetsFile::open(ReadSource::Bytes(text.as_bytes(), "s")).unwrap();
        let mut needed = Needed::new(4);
        needed.add(1);
        let sets = file.read(&needed, false, usize::MAX).unwrap().unwrap();
        assert_eq!((sets.set(1), sets.total), (vec![0, 1], None));
        // to the end: the bad line 5 is read, though not parsed, and counted
        assert_eq!(
            file.read(&needed, true, usize::MAX).unwrap().unwrap().total,
            Some(4)
        );
        // over a limit, nothing
        assert!(file.read(&needed, true, 10).unwrap().is_none());
        needed.add(2);
        let e = file.read(&needed, false, usize::MAX).err().unwrap();
        assert!(matches!(e, AssemblyError::ColorSets { line: 5, .. }), "{e}");
    }

    #[test]
    fn errors_name_the_line_and_the_fault() {
        let cases = [
            (
                "{\"id\": 0, \"colors\": [\"A\"]}\nnot json\n",
                2,
                "not JSON",
            ),
            ("[1, 2]\n", 1, "not a JSON object"),
            ("{\"id\": 0}\n", 1, "no \"colors\" array"),
            ("{\"id\": 1, \"colors\": []}\n", 1, "expected 0"),
            (
                "{\"id\": 0, \"colors\": []}\n{\"id\": 0, \"colors\": []}\n",
                2,
                "expected 1",
            ),
            ("{\"id\": \"0\", \"colors\": []}\n", 1, "whole numbers"),
            (
                "{\"colors\": [\"A\"]}\n{\"id\": 0, \"colors\": [\"B\"]}\n",
                2,
                "\"B\" is not among",
            ),
            ("{\"colors\": [\"A\", \"A\"]}\n", 1, "named twice"),
            (
                "{\"id\": 0, \"colors\": [\"A\", \"A\"]}\n",
                1,
                "twice in the set",
            ),
            (
                "{\"id\": 0, \"colors\": [3]}\n",
                1,
                "color number 3 without the header line",
            ),
            (
                "{\"id\": 0, \"colors\": [true]}\n",
                1,
                "is not a name, a color number or a [first, last] run",
            ),
            (
                "{\"colors\": [\"A\"]}\n{\"id\": 0, \"colors\": [1]}\n",
                2,
                "color number 1: the header line names 1 colors",
            ),
            (
                "{\"colors\": [\"A\", \"B\"]}\n{\"id\": 0, \"colors\": [[1, 0]]}\n",
                2,
                "run [1, 0] ends before it starts",
            ),
            (
                "{\"colors\": [\"A\", \"B\"]}\n{\"id\": 0, \"colors\": [[0, 1], 1]}\n",
                2,
                "\"B\" is twice in the set",
            ),
            ("{\"colors\": [\"A\", 1]}\n", 1, "strings only"),
            (
                "{\"id\": 0, \"colors\": []}\n{\"colors\": []}\n",
                2,
                "may only be the first",
            ),
            (
                "{\"colors\": []}\n{\"colors\": []}\n",
                2,
                "may only be the first",
            ),
        ];
        for (text, line, what) in cases {
            let e = read(text).unwrap_err();
            let m = e.to_string();
            assert!(
                matches!(e, AssemblyError::ColorSets { line: l, .. } if l == line),
                "{text:?}: {m}"
            );
            assert!(m.starts_with(&format!("s.jsonl: line {line}: ")), "{m}");
            assert!(m.contains(what), "{text:?}: {m}");
        }
        let missing = SetsFile::open(ReadSource::File("/nonexistent/s.jsonl".as_ref()));
        assert!(matches!(missing, Err(AssemblyError::Io { .. })));
    }
}
