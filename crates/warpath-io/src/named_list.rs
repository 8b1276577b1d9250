//! Lists of named inputs: one `NAME<TAB>PATH` line per file, GGCAT's `-d` list, read by
//! `warpath assemble --colored-inputs` and written by `warpath simulate pangenome`.
//!
//! The grammar, line by line (UTF-8, an optional byte-order mark first, `\n` or `\r\n`):
//!
//! - a blank line (spaces and tabs only) or one starting with `#` is skipped;
//! - any other line is a name, one tab, and a path: the name is everything before the first
//!   tab, the path everything after it (further tabs belong to the path), both as written, and
//!   neither may be empty;
//! - at least one such line.
//!
//! Several lines may share a name (one color over several files), and a name may be any text
//! without a tab or a line break.
//!
//! ```
//! use warpath_io::named_list::{format_named_list, parse_named_list};
//!
//! let list = parse_named_list(b"# genomes\nA\ta.fa\nA\ta2.fa\nB\tdir/b.fa\n").unwrap();
//! assert_eq!(list.len(), 3);
//! assert_eq!((list[2].name.as_str(), list[2].path.to_str()), ("B", Some("dir/b.fa")));
//! let text = format_named_list(&list).unwrap();
//! assert_eq!(text, "A\ta.fa\nA\ta2.fa\nB\tdir/b.fa\n");
//! assert!(parse_named_list(b"a.fa\n").unwrap_err().to_string().contains("NAME<TAB>PATH"));
//! ```

use std::path::{Path, PathBuf};

use crate::IoError;

/// One line of a list: a name and the path of its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// The name (a color's, for `--colored-inputs`): not empty, no tab, no line break.
    pub name: String,
    /// The path as the line gives it (see [`read_named_list`] for relative paths).
    pub path: PathBuf,
}

fn parse_err(line: usize, column: usize, message: String) -> IoError {
    IoError::Parse {
        path: None,
        line,
        column,
        message,
    }
}

/// The entries of a list's bytes, in order (module docs for the grammar). A parse error names
/// the line and says what a line should be.
pub fn parse_named_list(bytes: &[u8]) -> Result<Vec<Named>, IoError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = i + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let line = std::str::from_utf8(raw).map_err(|e| {
            // the valid prefix is UTF-8: the column counts its characters
            let good = String::from_utf8_lossy(&raw[..e.valid_up_to()])
                .chars()
                .count();
            parse_err(
                line_no,
                good + 1,
                "not UTF-8 text (names and paths are read as UTF-8)".into(),
            )
        })?;
        if line.trim_matches([' ', '\t']).is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, path)) = line.split_once('\t') else {
            return Err(parse_err(
                line_no,
                1,
                format!("expected NAME<TAB>PATH, got {line:?}"),
            ));
        };
        if name.is_empty() {
            return Err(parse_err(line_no, 1, "an empty name before the tab".into()));
        }
        if path.is_empty() {
            return Err(parse_err(
                line_no,
                name.chars().count() + 2,
                format!("an empty path after the name {name:?}"),
            ));
        }
        out.push(Named {
            name: name.to_string(),
            path: PathBuf::from(path),
        });
    }
    if out.is_empty() {
        return Err(IoError::Format(
            "no NAME<TAB>PATH line (a list names at least one file)".into(),
        ));
    }
    Ok(out)
}

/// The entries of the list file `list`: [`parse_named_list`], errors naming the file, and a
/// relative path that does not exist from the working directory but does from the list's
/// folder taken from there (so a list beside its files works from anywhere).
pub fn read_named_list(list: &Path) -> Result<Vec<Named>, IoError> {
    let bytes = std::fs::read(list).map_err(|error| IoError::Io {
        path: Some(list.to_owned()),
        error,
    })?;
    let mut entries = parse_named_list(&bytes).map_err(|e| e.in_file(list))?;
    let folder = list.parent().unwrap_or(Path::new("."));
    for e in &mut entries {
        if e.path.is_relative() && !e.path.exists() && folder.join(&e.path).exists() {
            e.path = folder.join(&e.path);
        }
    }
    Ok(entries)
}

/// The text of a list of `entries`, one `NAME<TAB>PATH` line each; an error for a name that is
/// blank, starts with `#` or a byte-order mark, or holds a tab or a line break, or a path that
/// is empty, not UTF-8 or holds a line break (the list would not read back as written).
pub fn format_named_list(entries: &[Named]) -> Result<String, IoError> {
    let mut out = String::new();
    for e in entries {
        // what the reader would take for a blank line, a comment or a byte-order mark
        let misread = e.name.trim_matches(' ').is_empty() || e.name.starts_with(['#', '\u{feff}']);
        if misread || e.name.contains(['\t', '\n', '\r']) {
            return Err(IoError::Format(format!(
                "the name {:?} cannot be written in a NAME<TAB>PATH list (blank, a leading '#' \
                 or byte-order mark, a tab or a line break)",
                e.name
            )));
        }
        let path = e
            .path
            .to_str()
            .filter(|p| !p.is_empty() && !p.contains(['\n', '\r']));
        let Some(path) = path else {
            return Err(IoError::Format(format!(
                "the path {} cannot be written in a NAME<TAB>PATH list (empty, not UTF-8 or a \
                 line break)",
                e.path.display()
            )));
        };
        out.push_str(&e.name);
        out.push('\t');
        out.push_str(path);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str, path: &str) -> Named {
        Named {
            name: name.into(),
            path: path.into(),
        }
    }

    #[test]
    fn lines_comments_blanks_and_line_ends() {
        let text = b"\xEF\xBB\xBF# a comment\r\n\r\n  \t \nA\ta.fa\r\nB c\tx\ty.fa\nA\ta2.fa";
        let got = parse_named_list(text).unwrap();
        assert_eq!(
            got,
            vec![
                named("A", "a.fa"),
                named("B c", "x\ty.fa"),
                named("A", "a2.fa")
            ]
        );
    }

    #[test]
    fn bad_lines_name_their_line_and_column() {
        let cases: [(&[u8], usize, usize, &str); 5] = [
            (b"A\ta.fa\nb.fa\n", 2, 1, "expected NAME<TAB>PATH"),
            (b"\ta.fa\n", 1, 1, "an empty name"),
            (b"# x\nname\t\n", 2, 6, "an empty path"),
            (b"A\ta\xff.fa\n", 1, 4, "not UTF-8"),
            (b" A a.fa\n", 1, 1, "expected NAME<TAB>PATH"),
        ];
        for (text, line, column, what) in cases {
            match parse_named_list(text) {
                Err(IoError::Parse {
                    line: l,
                    column: c,
                    message,
                    ..
                }) => {
                    assert_eq!((l, c), (line, column), "{message}");
                    assert!(message.contains(what), "{message}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
        for empty in [&b""[..], b"\n\n", b"# only\n", b"\xEF\xBB\xBF"] {
            let e = parse_named_list(empty).unwrap_err();
            assert_eq!(e.kind(), "format");
            assert!(e.to_string().contains("no NAME<TAB>PATH line"), "{e}");
        }
    }

    #[test]
    fn format_round_trips_and_refuses_what_it_cannot_write() {
        let list = vec![named("g 1", "/a/b.fa"), named("g2", "rel/c.fa.gz")];
        let text = format_named_list(&list).unwrap();
        assert_eq!(parse_named_list(text.as_bytes()).unwrap(), list);
        for bad in [
            named("", "a"),
            named("a\tb", "a"),
            named("a\nb", "a"),
            named("#a", "a"),
            named("  ", "a"),
            named("\u{feff}a", "a"),
            named("a", ""),
            named("a", "x\ny"),
        ] {
            let e = format_named_list(std::slice::from_ref(&bad)).unwrap_err();
            assert_eq!(e.kind(), "format", "{bad:?}");
        }
    }

    #[test]
    fn relative_paths_resolve_from_the_list_folder() {
        let dir =
            std::env::temp_dir().join(format!("warpath-io-named-list-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("g.fa"), ">g\nACGT\n").unwrap();
        let list = dir.join("list.tsv");
        std::fs::write(&list, "G\tg.fa\nH\t/nowhere/h.fa\n").unwrap();
        let got = read_named_list(&list).unwrap();
        assert_eq!(got[0].path, dir.join("g.fa"));
        assert_eq!(got[1].path, PathBuf::from("/nowhere/h.fa"));
        std::fs::write(&list, "G g.fa\n").unwrap();
        let e = read_named_list(&list).unwrap_err();
        assert!(
            e.to_string().starts_with(&list.display().to_string()),
            "{e}"
        );
        let e = read_named_list(&dir.join("absent.tsv")).unwrap_err();
        assert_eq!(e.kind(), "io");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
