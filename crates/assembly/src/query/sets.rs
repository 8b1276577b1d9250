//! The color-sets file: JSON lines `{"id": N, "colors": ["name", ...]}`, ids `0, 1, 2, ...` in
//! order, after an optional header line `{"colors": [every color, by number]}` (plain or
//! gzip). Without the header the colors are numbered by first appearance.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

use crate::AssemblyError;
use crate::reads::ReadSource;

/// The color names and, per set id, its color numbers (sorted, distinct), as CSR arrays.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ColorSets {
    /// Every color's name, by number.
    pub(crate) names: Vec<String>,
    /// Set `i` is `colors[ends[i - 1]..ends[i]]` (`ends[-1]` = 0).
    pub(crate) ends: Vec<usize>,
    /// The color numbers of every set, back to back.
    pub(crate) colors: Vec<u32>,
}

impl ColorSets {
    /// The color numbers of set `id` (which must exist).
    #[inline]
    pub(crate) fn set(&self, id: u32) -> &[u32] {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.colors[start..self.ends[i]]
    }

    /// The number of sets.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }
}

/// The name of a source, for messages.
pub(crate) fn source_name(source: &ReadSource<'_>) -> PathBuf {
    match source {
        ReadSource::File(p) => p.to_path_buf(),
        ReadSource::Bytes(_, name) => PathBuf::from(name),
    }
}

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
    let mut r = BufReader::with_capacity(1 << 16, raw);
    let gz = r
        .fill_buf()
        .map_err(|error| AssemblyError::Io {
            path: source_name(source),
            error,
        })?
        .starts_with(&[0x1f, 0x8b]);
    Ok(if gz {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(r)))
    } else {
        Box::new(r)
    })
}

/// Reads a color-sets file.
///
/// # Errors
/// [`AssemblyError::Io`] when it cannot be opened or read; [`AssemblyError::ColorSets`]
/// naming the line for a line that is not a JSON object of the format, ids out of order or
/// missing, a color the header line does not name, a color twice in a set or in the header.
pub(crate) fn read_color_sets(source: &ReadSource<'_>) -> Result<ColorSets, AssemblyError> {
    let path = source_name(source);
    let mut reader = open(source)?;
    let mut sets = ColorSets::default();
    let mut numbers: HashMap<String, u32> = HashMap::new();
    let mut header = false;
    let mut line = String::new();
    let mut n = 0u64;
    let mut set: Vec<u32> = Vec::new();
    loop {
        line.clear();
        let read = reader
            .read_line(&mut line)
            .map_err(|error| AssemblyError::Io {
                path: path.clone(),
                error,
            })?;
        if read == 0 {
            break;
        }
        n += 1;
        let bad = |message: String| AssemblyError::ColorSets {
            path: path.clone(),
            line: n,
            message,
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let object = value
            .as_object()
            .ok_or_else(|| bad("not a JSON object".into()))?;
        let names = object
            .get("colors")
            .and_then(|c| c.as_array())
            .ok_or_else(|| bad("no \"colors\" array".into()))?;
        let Some(id) = object.get("id") else {
            // the header line: only first, only once
            if header || !sets.ends.is_empty() {
                return Err(bad(
                    "a line without \"id\" (the header line naming every color) may only \
                     be the first"
                        .into(),
                ));
            }
            header = true;
            for c in names {
                let name = c
                    .as_str()
                    .ok_or_else(|| bad(format!("color {c} is not a string")))?;
                if numbers
                    .insert(name.to_string(), sets.names.len() as u32)
                    .is_some()
                {
                    return Err(bad(format!("color {name:?} is named twice")));
                }
                sets.names.push(name.to_string());
            }
            continue;
        };
        let want = sets.ends.len() as u64;
        match id.as_u64() {
            Some(i) if i == want => {}
            _ => {
                return Err(bad(format!(
                    "id {id}: expected {want} (ids go 0, 1, 2, ... in order, none missing)"
                )));
            }
        }
        if want >= u64::from(u32::MAX) {
            return Err(bad(format!("id {want}: too many color sets")));
        }
        set.clear();
        for c in names {
            let name = c
                .as_str()
                .ok_or_else(|| bad(format!("color {c} is not a string")))?;
            let number = match numbers.get(name) {
                Some(&x) => x,
                None if header => {
                    return Err(bad(format!(
                        "color {name:?} is not among the header line's colors"
                    )));
                }
                None => {
                    let x = sets.names.len() as u32;
                    numbers.insert(name.to_string(), x);
                    sets.names.push(name.to_string());
                    x
                }
            };
            set.push(number);
        }
        set.sort_unstable();
        if let Some(w) = set.windows(2).find(|w| w[0] == w[1]) {
            return Err(bad(format!(
                "color {:?} is twice in the set",
                sets.names[w[0] as usize]
            )));
        }
        sets.colors.extend_from_slice(&set);
        sets.ends.push(sets.colors.len());
    }
    Ok(sets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ColorSets, AssemblyError> {
        read_color_sets(&ReadSource::Bytes(text.as_bytes(), "s.jsonl"))
    }

    #[test]
    fn with_and_without_the_header_line() {
        let body = "{\"id\": 0, \"colors\": [\"B\", \"A\"]}\n{\"id\": 1, \"colors\": [\"A\"]}\n";
        let s = read(body).unwrap();
        assert_eq!(s.names, ["B", "A"]);
        assert_eq!((s.len(), s.set(0), s.set(1)), (2, &[0, 1][..], &[1][..]));
        let s = read(&format!("{{\"colors\": [\"A\", \"B\", \"C\"]}}\n{body}\n")).unwrap();
        assert_eq!(s.names, ["A", "B", "C"]);
        assert_eq!((s.set(0), s.set(1)), (&[0, 1][..], &[0][..]));
        // gzip, and an empty file: no colors, no sets
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, body.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(
            read_color_sets(&ReadSource::Bytes(&gz, "s.gz")).unwrap(),
            read(body).unwrap()
        );
        assert_eq!(read("").unwrap(), ColorSets::default());
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
            ("{\"id\": \"0\", \"colors\": []}\n", 1, "expected 0"),
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
            ("{\"id\": 0, \"colors\": [3]}\n", 1, "is not a string"),
            (
                "{\"id\": 0, \"colors\": []}\n{\"colors\": []}\n",
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
        let missing = read_color_sets(&ReadSource::File("/nonexistent/s.jsonl".as_ref()));
        assert!(matches!(missing, Err(AssemblyError::Io { .. })));
    }
}
