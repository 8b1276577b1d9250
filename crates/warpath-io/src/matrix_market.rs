//! Matrix Market files (`.mtx`, NIST's exchange format): the one grammar that every reader of
//! the project uses. A UTF-8 byte-order mark is skipped; the banner
//! `%%MatrixMarket matrix <format> <field> <symmetry>` (any case) names
//! - the format: `coordinate` (a size line `rows columns entries`, then one entry
//!   `row column [value]` per line, 1-based) or `array` (a size line `rows columns`, then the
//!   values one per line in column-major order; for a symmetric matrix the lower triangle
//!   only, and below the diagonal only for a skew-symmetric one);
//! - the field: `real` (also `double`), `integer` or `pattern` (no values; coordinate only);
//!   `complex` is refused;
//! - the symmetry: `general`, `symmetric` or `skew-symmetric` (square matrices only;
//!   `hermitian` is refused).
//!
//! Lines starting with `%` and blank lines are skipped anywhere after the banner; tokens after
//! an entry's value are ignored. The number of entries must be the one the size line
//! announced. Entries are handed, as stored, to a [`MmSink`]: each caller builds what it needs
//! (a graph's edges, a sparse matrix's CSR arrays) without an intermediate copy;
//! [`MmHeader::mirror`] gives the entry a symmetric matrix implies.

use crate::IoError;

/// How the entries are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmFormat {
    /// `coordinate`: one `row column [value]` line per stored entry.
    Coordinate,
    /// `array`: every value, column after column.
    Array,
}

/// What the entries hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmField {
    /// `real` or `double`: floats.
    Real,
    /// `integer`: `i64` values.
    Integer,
    /// `pattern`: no values (every stored entry is present).
    Pattern,
}

/// Which entries the file stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmSymmetry {
    /// Every entry.
    General,
    /// `a[j][i] = a[i][j]`: one of each pair is stored.
    Symmetric,
    /// `a[j][i] = -a[i][j]`: one of each pair is stored, the diagonal is zero.
    SkewSymmetric,
}

/// The banner and size line of a Matrix Market file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MmHeader {
    /// The format.
    pub format: MmFormat,
    /// The field.
    pub field: MmField,
    /// The symmetry.
    pub symmetry: MmSymmetry,
    /// Rows.
    pub rows: u64,
    /// Columns.
    pub cols: u64,
    /// Entries stored in the file (for `array`, the values the symmetry leaves to store).
    pub entries: u64,
}

/// One entry's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MmValue {
    /// A `real` entry.
    Real(f64),
    /// An `integer` entry.
    Integer(i64),
    /// A `pattern` entry.
    Pattern,
}

impl MmValue {
    /// The value negated (for skew-symmetric mirrors; a pattern entry stays one).
    fn negated(self) -> MmValue {
        match self {
            MmValue::Real(v) => MmValue::Real(-v),
            MmValue::Integer(v) => MmValue::Integer(v.wrapping_neg()),
            MmValue::Pattern => MmValue::Pattern,
        }
    }
}

impl MmHeader {
    /// The entry that stored entry `(row, col, value)` implies on the other side of the
    /// diagonal (`(col, row, value)`, negated when skew-symmetric); `None` for a general
    /// matrix and on the diagonal.
    ///
    /// # Examples
    /// ```
    /// use warpath_io::matrix_market::{parse_matrix_market, MmHeader, MmValue};
    /// let mut e = Vec::new();
    /// let h = parse_matrix_market(
    ///     b"%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n",
    ///     &mut |_: &MmHeader, i: u64, j: u64, v: MmValue| {
    ///         e.push((i, j, v));
    ///         Ok::<(), warpath_io::IoError>(())
    ///     },
    /// )?;
    /// assert_eq!(h.mirror(e[0].0, e[0].1, e[0].2), Some((0, 1, MmValue::Real(-3.0))));
    /// # Ok::<(), warpath_io::IoError>(())
    /// ```
    pub fn mirror(&self, row: u64, col: u64, value: MmValue) -> Option<(u64, u64, MmValue)> {
        match self.symmetry {
            _ if row == col => None,
            MmSymmetry::General => None,
            MmSymmetry::Symmetric => Some((col, row, value)),
            MmSymmetry::SkewSymmetric => Some((col, row, value.negated())),
        }
    }
}

/// A line that does not follow the grammar: where, what was expected, what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MmSyntaxError {
    /// 1-based line number (one past the last line for a file that ends too early).
    pub line: usize,
    /// 1-based column (character position) of what was found.
    pub column: usize,
    /// What the grammar expected there.
    pub expected: String,
    /// What the line held there (shortened), or `end of file`.
    pub found: String,
}

impl std::fmt::Display for MmSyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: expected {}, found `{}`",
            self.line, self.expected, self.found
        )
    }
}

impl std::error::Error for MmSyntaxError {}

impl From<MmSyntaxError> for IoError {
    fn from(e: MmSyntaxError) -> Self {
        IoError::Parse {
            path: None,
            line: e.line,
            column: e.column,
            message: format!("expected {}, found `{}`", e.expected, e.found),
        }
    }
}

/// What a caller does with a Matrix Market file as it is read.
pub trait MmSink {
    /// The caller's error type (a syntax error converts into it).
    type Error: From<MmSyntaxError>;

    /// Whether the caller reads this kind of matrix; `Err` says what it reads instead (e.g.
    /// ``the `coordinate` format (not `array`)``), reported at the banner.
    fn accepts(
        &self,
        _format: MmFormat,
        _field: MmField,
        _symmetry: MmSymmetry,
    ) -> Result<(), String> {
        Ok(())
    }

    /// The header, once the size line is read: check sizes, set aside memory (the size line
    /// is a claim, not data).
    fn header(&mut self, _header: &MmHeader) -> Result<(), Self::Error> {
        Ok(())
    }

    /// One stored entry, 0-based, in file order (a symmetric matrix's mirror is not passed:
    /// see [`MmHeader::mirror`]).
    fn entry(
        &mut self,
        header: &MmHeader,
        row: u64,
        col: u64,
        value: MmValue,
    ) -> Result<(), Self::Error>;
}

/// A closure is a sink that takes the entries only.
impl<E, F> MmSink for F
where
    E: From<MmSyntaxError>,
    F: FnMut(&MmHeader, u64, u64, MmValue) -> Result<(), E>,
{
    type Error = E;
    fn entry(&mut self, h: &MmHeader, row: u64, col: u64, value: MmValue) -> Result<(), E> {
        self(h, row, col, value)
    }
}

/// A line's text shortened for messages.
fn shorten(s: &str) -> String {
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    } else {
        s.to_owned()
    }
}

/// The 1-based column of `token` (a slice of `line`).
fn column_of(line: &str, token: &str) -> usize {
    let at = (token.as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
    line.get(..at.min(line.len()))
        .map_or(1, |s| s.chars().count() + 1)
}

/// The reader's position: the line being read, for errors.
struct At<'a> {
    no: usize,
    line: &'a str,
}

impl At<'_> {
    fn err(&self, expected: impl Into<String>, found: Option<&str>) -> MmSyntaxError {
        MmSyntaxError {
            line: self.no,
            column: found.map_or(1, |t| column_of(self.line, t)),
            expected: expected.into(),
            found: shorten(found.unwrap_or(self.line)),
        }
    }
}

/// The banner's format, field and symmetry.
fn banner(at: &At<'_>) -> Result<(MmFormat, MmField, MmSymmetry), MmSyntaxError> {
    let words: Vec<String> = at
        .line
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    if words.len() != 5 || words[0] != "%%matrixmarket" || words[1] != "matrix" {
        return Err(at.err(
            "the header `%%MatrixMarket matrix coordinate pattern general`",
            None,
        ));
    }
    let format = match words[2].as_str() {
        "coordinate" => MmFormat::Coordinate,
        "array" => MmFormat::Array,
        _ => return Err(at.err("the format `coordinate` or `array`", None)),
    };
    let field = match words[3].as_str() {
        "real" | "double" => MmField::Real,
        "integer" => MmField::Integer,
        "pattern" if format == MmFormat::Coordinate => MmField::Pattern,
        _ => return Err(at.err("field `pattern`, `integer` or `real`", None)),
    };
    let symmetry = match words[4].as_str() {
        "general" => MmSymmetry::General,
        "symmetric" => MmSymmetry::Symmetric,
        "skew-symmetric" if field != MmField::Pattern => MmSymmetry::SkewSymmetric,
        _ => {
            return Err(at.err("symmetry `general`, `symmetric` or `skew-symmetric`", None));
        }
    };
    Ok((format, field, symmetry))
}

/// The size line: `rows columns entries` (coordinate) or `rows columns` (array).
fn size_line(
    at: &At<'_>,
    format: MmFormat,
    field: MmField,
    symmetry: MmSymmetry,
) -> Result<MmHeader, MmSyntaxError> {
    let (expected, count) = match format {
        MmFormat::Coordinate => ("the size line `rows columns entries`", 3),
        MmFormat::Array => ("the size line `rows columns`", 2),
    };
    let v: Vec<Option<u64>> = at.line.split_whitespace().map(|s| s.parse().ok()).collect();
    if v.len() != count || v.iter().any(Option::is_none) {
        return Err(at.err(expected, None));
    }
    let (rows, cols) = (v[0].unwrap_or(0), v[1].unwrap_or(0));
    if symmetry != MmSymmetry::General && rows != cols {
        return Err(at.err("a square matrix (the symmetry says so)", None));
    }
    let entries = match (format, symmetry) {
        (MmFormat::Coordinate, _) => v[2].unwrap_or(0),
        (MmFormat::Array, MmSymmetry::General) => rows.saturating_mul(cols),
        (MmFormat::Array, MmSymmetry::Symmetric) => rows.saturating_mul(rows.saturating_add(1)) / 2,
        (MmFormat::Array, MmSymmetry::SkewSymmetric) => {
            rows.saturating_mul(rows.saturating_sub(1)) / 2
        }
    };
    Ok(MmHeader {
        format,
        field,
        symmetry,
        rows,
        cols,
        entries,
    })
}

/// The value token of an entry.
fn value(at: &At<'_>, field: MmField, token: Option<&str>) -> Result<MmValue, MmSyntaxError> {
    match field {
        MmField::Pattern => Ok(MmValue::Pattern),
        MmField::Integer => token
            .and_then(|t| t.parse::<i64>().ok())
            .map(MmValue::Integer)
            .ok_or_else(|| at.err("an integer value", token)),
        MmField::Real => token
            .and_then(|t| t.parse::<f64>().ok())
            .map(MmValue::Real)
            .ok_or_else(|| at.err("a real value", token)),
    }
}

/// Where the next value of an `array` file goes: column-major, every row of a general matrix;
/// for a symmetric one the lower triangle (without the diagonal when skew-symmetric).
struct ArrayCursor {
    row: u64,
    col: u64,
    /// The first row of each column: 0, `col` or `col + 1`.
    below: Option<u64>,
}

impl ArrayCursor {
    fn new(h: &MmHeader) -> Self {
        let below = match h.symmetry {
            MmSymmetry::General => None,
            MmSymmetry::Symmetric => Some(0),
            MmSymmetry::SkewSymmetric => Some(1),
        };
        ArrayCursor {
            row: below.unwrap_or(0),
            col: 0,
            below,
        }
    }

    /// The position of this value; moves to the next.
    fn advance(&mut self, rows: u64) -> (u64, u64) {
        let at = (self.row, self.col);
        self.row += 1;
        if self.row >= rows {
            self.col += 1;
            self.row = self.below.map_or(0, |skip| self.col + skip);
        }
        at
    }
}

/// Reads a Matrix Market file (the grammar of this module's documentation), handing the
/// header and every stored entry to `sink`; returns the header.
///
/// # Complexity
/// `O(bytes)`; memory is the sink's.
///
/// # Errors
/// An [`MmSyntaxError`] (as the sink's error type) for the first line that breaks the grammar:
/// a bad banner, size line, index (outside `1..=rows` / `1..=columns`) or value, more or fewer
/// entries than announced, text that is not UTF-8; and whatever the sink returns.
///
/// # Examples
/// ```
/// use warpath_io::matrix_market::{parse_matrix_market, MmHeader, MmValue};
/// let mut entries = Vec::new();
/// let h = parse_matrix_market(
///     b"\xEF\xBB\xBF%%MatrixMarket matrix coordinate integer general\n% c\n2 3 2\n1 3 7\n2 1 -1\n",
///     &mut |_: &MmHeader, i: u64, j: u64, v: MmValue| {
///         entries.push((i, j, v));
///         Ok::<(), warpath_io::IoError>(())
///     },
/// )?;
/// assert_eq!((h.rows, h.cols), (2, 3));
/// assert_eq!(entries, vec![(0, 2, MmValue::Integer(7)), (1, 0, MmValue::Integer(-1))]);
/// let e = parse_matrix_market(b"%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n",
///     &mut |_: &MmHeader, _: u64, _: u64, _: MmValue| Ok::<(), warpath_io::IoError>(()))
///     .unwrap_err();
/// assert!(e.to_string().starts_with("line 3, column 1: expected an entry"));
/// # Ok::<(), warpath_io::IoError>(())
/// ```
pub fn parse_matrix_market<S: MmSink>(bytes: &[u8], sink: &mut S) -> Result<MmHeader, S::Error> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // A final newline ends the last line; it does not start another.
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let mut lines = body.split(|&c| c == b'\n').enumerate().map(|(i, l)| {
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        let at = |line| At { no: i + 1, line };
        std::str::from_utf8(l)
            .map(at)
            .map_err(|_| at("").err("UTF-8 text", Some("invalid UTF-8")))
    });
    let eof = |last: usize, expected: &str| MmSyntaxError {
        line: last + 1,
        column: 1,
        expected: expected.to_owned(),
        found: "end of file".into(),
    };
    // The banner is the first line (an empty file has no banner).
    let first = match lines.next() {
        Some(l) if !bytes.is_empty() => l?,
        _ => return Err(eof(0, "the Matrix Market header").into()),
    };
    let first = At {
        line: first.line.trim(),
        ..first
    };
    let (format, field, symmetry) = banner(&first)?;
    sink.accepts(format, field, symmetry)
        .map_err(|expected| first.err(expected, None))?;
    let mut last = 1;
    let mut header = None;
    let mut cursor = None;
    let mut seen = 0u64;
    for at in lines {
        let at = at?;
        let at = At {
            line: at.line.trim(),
            ..at
        };
        last = at.no;
        if at.line.is_empty() || at.line.starts_with('%') {
            continue;
        }
        let Some(h) = header else {
            let h = size_line(&at, format, field, symmetry)?;
            sink.header(&h)?;
            header = Some(h);
            continue;
        };
        if seen == h.entries {
            return Err(at
                .err(
                    format!(
                        "no more than the {} entries the size line announced",
                        h.entries
                    ),
                    None,
                )
                .into());
        }
        let mut it = at.line.split_whitespace();
        let (i, j, v) = match format {
            MmFormat::Coordinate => {
                let expected = "an entry `row column` with 1-based indices within the size";
                let mut index = |bound: u64| {
                    let t = it.next();
                    t.and_then(|s| s.parse::<u64>().ok())
                        .filter(|&x| x >= 1 && x <= bound)
                        .ok_or_else(|| at.err(expected, t.or(Some(at.line))))
                };
                let i = index(h.rows)?;
                let j = index(h.cols)?;
                (i - 1, j - 1, value(&at, field, it.next())?)
            }
            MmFormat::Array => {
                let cursor = cursor.get_or_insert_with(|| ArrayCursor::new(&h));
                let (i, j) = cursor.advance(h.rows);
                (i, j, value(&at, field, it.next())?)
            }
        };
        seen += 1;
        sink.entry(&h, i, j, v)?;
    }
    let Some(h) = header else {
        return Err(eof(last, "the size line").into());
    };
    if seen != h.entries {
        return Err(eof(
            last,
            &format!(
                "{} entries (the size line says so), only {seen} given",
                h.entries
            ),
        )
        .into());
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Entries = Vec<(u64, u64, MmValue)>;

    fn read(text: &str) -> Result<(MmHeader, Entries), IoError> {
        let mut e = Vec::new();
        let h = parse_matrix_market(
            text.as_bytes(),
            &mut |h: &MmHeader, i: u64, j: u64, v: MmValue| {
                e.push((i, j, v));
                if let Some(m) = h.mirror(i, j, v) {
                    e.push(m);
                }
                Ok::<(), IoError>(())
            },
        )?;
        Ok((h, e))
    }

    fn line_of(text: &str) -> usize {
        match read(text).unwrap_err() {
            IoError::Parse { line, .. } => line,
            e => panic!("not a parse error: {e}"),
        }
    }

    #[test]
    fn coordinate_fields_and_symmetries() {
        let (h, e) =
            read("%%MatrixMarket matrix coordinate pattern general\n% c\n\n3 3 2\n1 2\n3 1 9\n")
                .unwrap();
        assert_eq!((h.rows, h.cols, h.entries), (3, 3, 2));
        assert_eq!(e, vec![(0, 1, MmValue::Pattern), (2, 0, MmValue::Pattern)]);
        let (_, e) =
            read("%%MatrixMarket MATRIX Coordinate double symmetric\n2 2 2\n1 1 4\r\n2 1 0.5\n")
                .unwrap();
        assert_eq!(
            e,
            vec![
                (0, 0, MmValue::Real(4.0)),
                (1, 0, MmValue::Real(0.5)),
                (0, 1, MmValue::Real(0.5))
            ]
        );
        let (_, e) =
            read("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n")
                .unwrap();
        assert_eq!(e[1], (0, 1, MmValue::Integer(-3)));
        // rectangular general matrices keep their shape
        let (h, _) =
            read("%%MatrixMarket matrix coordinate real general\n2 5 1\n2 5 1e3\n").unwrap();
        assert_eq!((h.rows, h.cols), (2, 5));
    }

    #[test]
    fn array_format_in_column_major_order() {
        let (h, e) =
            read("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n").unwrap();
        assert_eq!((h.format, h.entries), (MmFormat::Array, 6));
        assert_eq!(e[1], (1, 0, MmValue::Real(2.0)));
        assert_eq!(e[2], (0, 1, MmValue::Real(3.0)));
        let (_, e) = read("%%MatrixMarket matrix array integer symmetric\n2 2\n1\n2\n3\n").unwrap();
        assert_eq!(
            e,
            vec![
                (0, 0, MmValue::Integer(1)),
                (1, 0, MmValue::Integer(2)),
                (0, 1, MmValue::Integer(2)),
                (1, 1, MmValue::Integer(3))
            ]
        );
        let (_, e) =
            read("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n").unwrap();
        let stored: Vec<(u64, u64)> = e.iter().step_by(2).map(|&(i, j, _)| (i, j)).collect();
        assert_eq!(stored, vec![(1, 0), (2, 0), (2, 1)]);
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let plain = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n";
        assert_eq!(
            read(&format!("\u{feff}{plain}")).unwrap(),
            read(plain).unwrap()
        );
    }

    #[test]
    fn bad_input_is_an_error_at_its_line() {
        for (text, line) in [
            ("", 1),
            ("hello\n", 1),
            (
                "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
                1,
            ),
            (
                "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
                1,
            ),
            ("%%MatrixMarket matrix array pattern general\n1 1\n", 1),
            (
                "%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n",
                1,
            ),
            ("%%MatrixMarket matrix coordinate pattern general\n", 2),
            ("%%MatrixMarket matrix coordinate pattern general\n2 2\n", 2),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 1 4\n",
                2,
            ),
            (
                "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n",
                2,
            ),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n",
                3,
            ),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n0 1\n",
                3,
            ),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1\n",
                3,
            ),
            (
                "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
                3,
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n",
                3,
            ),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n2 2\n",
                4,
            ),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 1\n",
                4,
            ),
            ("%%MatrixMarket matrix array real general\n2 1\n1\n", 4),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n\u{ff}\n",
                3,
            ),
        ] {
            assert_eq!(line_of(text), line, "{text:?}");
        }
        let e = read("%%MatrixMarket matrix coordinate pattern general\n3 3 4000000000\n1 2\n")
            .unwrap_err();
        assert!(e.to_string().contains("only 1 given"), "{e}");
        let e = read("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 3, column 3: expected an entry `row column` with 1-based indices within the \
             size, found `x`"
        );
        let bad = [0xffu8, b'\n'];
        let mut ok = |_: &MmHeader, _: u64, _: u64, _: MmValue| Ok::<(), IoError>(());
        assert!(parse_matrix_market(&bad, &mut ok).is_err());
    }

    #[test]
    fn a_sink_refuses_kinds_at_the_banner_and_sizes_at_the_size_line() {
        struct Graphs;
        impl MmSink for Graphs {
            type Error = IoError;
            fn accepts(&self, f: MmFormat, _: MmField, _: MmSymmetry) -> Result<(), String> {
                match f {
                    MmFormat::Coordinate => Ok(()),
                    MmFormat::Array => Err("the `coordinate` format (not `array`)".into()),
                }
            }
            fn header(&mut self, h: &MmHeader) -> Result<(), IoError> {
                match h.rows {
                    0..=10 => Ok(()),
                    _ => Err(IoError::Format("too large".into())),
                }
            }
            fn entry(&mut self, _: &MmHeader, _: u64, _: u64, _: MmValue) -> Result<(), IoError> {
                Ok(())
            }
        }
        let e = parse_matrix_market(
            b"%%MatrixMarket matrix array real general\n1 1\n1\n",
            &mut Graphs,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 1, column 1: expected the `coordinate`"),
            "{e}"
        );
        let e = parse_matrix_market(
            b"%%MatrixMarket matrix coordinate real general\n11 11 0\n",
            &mut Graphs,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "too large");
    }

    proptest::proptest! {
        /// Arbitrary text after a banner: entries or a parse error inside the text, never a
        /// panic.
        #[test]
        fn prop_never_panics(
            banner in proptest::sample::select(vec![
                "%%MatrixMarket matrix coordinate pattern general\n",
                "%%MatrixMarket matrix coordinate real symmetric\n",
                "%%MatrixMarket matrix coordinate integer skew-symmetric\n",
                "%%MatrixMarket matrix array real general\n",
                "%%MatrixMarket matrix array real skew-symmetric\n",
                "",
            ]),
            text in "[0-9 %.\\-e\n]{0,80}",
        ) {
            match read(&format!("{banner}{text}")) {
                Ok((h, e)) => proptest::prop_assert!(e.iter().all(|&(i, j, _)| i < h.rows && j < h.cols)),
                Err(IoError::Parse { line, .. }) => proptest::prop_assert!(line >= 1),
                Err(e) => proptest::prop_assert!(false, "{e}"),
            }
        }
    }
}
