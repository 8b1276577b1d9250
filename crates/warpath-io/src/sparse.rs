//! Sparse matrices from files: Matrix Market (`.mtx`, [`crate::matrix_market`]'s grammar) and
//! scipy's `scipy.sparse.save_npz` archives (`.npz`: CSR, CSC or COO, compressed or not,
//! through [`crate::npz`]), both read into CSR arrays. Every stored entry is kept, zeros and
//! duplicates included (a duplicate is a parallel entry).

use std::path::Path;

use crate::IoError;
use crate::matrix_market::{MmField, MmHeader, MmSink, MmValue, parse_matrix_market};
use crate::npy::Kind;
use crate::npz::{Npz, is_zip};

/// The stored values: integers stay integers.
#[derive(Debug, Clone, PartialEq)]
pub enum SparseValues {
    /// Real entries.
    F64(Vec<f64>),
    /// Integer (and boolean, and pattern) entries.
    I64(Vec<i64>),
}

impl SparseValues {
    /// The number of values.
    pub fn len(&self) -> usize {
        match self {
            SparseValues::F64(v) => v.len(),
            SparseValues::I64(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type's name: `f64` or `i64`.
    pub fn dtype(&self) -> &'static str {
        match self {
            SparseValues::F64(_) => "f64",
            SparseValues::I64(_) => "i64",
        }
    }

    /// Value `k` as `f64`.
    pub fn at(&self, k: usize) -> f64 {
        match self {
            SparseValues::F64(v) => v[k],
            SparseValues::I64(v) => v[k] as f64,
        }
    }

    /// The values in the order `perm` gives.
    fn permuted(&self, perm: &[usize]) -> SparseValues {
        match self {
            SparseValues::F64(v) => SparseValues::F64(perm.iter().map(|&k| v[k]).collect()),
            SparseValues::I64(v) => SparseValues::I64(perm.iter().map(|&k| v[k]).collect()),
        }
    }
}

/// A sparse matrix as CSR arrays: row `i`'s entries are `indptr[i]..indptr[i + 1]` of
/// `indices` (columns) and `values`.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseMatrix {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Row offsets, `rows + 1` of them.
    pub indptr: Vec<usize>,
    /// The column of each stored entry, row after row.
    pub indices: Vec<usize>,
    /// The value of each stored entry.
    pub values: SparseValues,
}

fn format_err(message: String) -> IoError {
    IoError::Format(message)
}

impl SparseMatrix {
    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// The CSR form of `rows x cols` coordinates `(r[k], c[k])` in any order (their order
    /// within a row is kept; duplicates are kept as parallel entries).
    ///
    /// # Errors
    /// [`IoError::Format`] when the three arrays differ in length or an entry is outside the
    /// matrix; [`IoError::OutOfMemory`] when the rows do not fit.
    ///
    /// # Examples
    /// ```
    /// use warpath_io::sparse::{SparseMatrix, SparseValues};
    /// let m = SparseMatrix::from_coo(2, 2, &[1, 0], &[0, 1], SparseValues::I64(vec![5, 7]))?;
    /// assert_eq!((m.indptr, m.indices), (vec![0, 1, 2], vec![1, 0]));
    /// # Ok::<(), warpath_io::IoError>(())
    /// ```
    pub fn from_coo(
        rows: usize,
        cols: usize,
        r: &[usize],
        c: &[usize],
        values: SparseValues,
    ) -> Result<Self, IoError> {
        if r.len() != c.len() || r.len() != values.len() {
            return Err(format_err(format!(
                "{} rows, {} columns and {} values for the entries",
                r.len(),
                c.len(),
                values.len()
            )));
        }
        if let Some(k) = (0..r.len()).find(|&k| r[k] >= rows || c[k] >= cols) {
            return Err(format_err(format!(
                "entry {k} at ({}, {}) is outside the {rows} x {cols} matrix",
                r[k], c[k]
            )));
        }
        crate::limits::check_claim("the sparse matrix's rows", rows as u64, 8.0, "rows")?;
        let offsets = rows
            .checked_add(1)
            .ok_or_else(|| format_err(format!("{rows} rows do not fit in memory")))?;
        let mut indptr = vec![0usize; offsets];
        for &i in r {
            indptr[i + 1] += 1;
        }
        for i in 0..rows {
            indptr[i + 1] += indptr[i];
        }
        let mut next = indptr.clone();
        let mut perm = vec![0usize; r.len()];
        let mut indices = vec![0usize; r.len()];
        for k in 0..r.len() {
            let at = next[r[k]];
            next[r[k]] += 1;
            perm[at] = k;
            indices[at] = c[k];
        }
        Ok(SparseMatrix {
            rows,
            cols,
            indptr,
            indices,
            values: values.permuted(&perm),
        })
    }
}

/// Whether `path` holds a sparse matrix: a `.mtx` or `.npz` name, or the Matrix Market banner
/// (after a byte-order mark) or a zip archive's signature at its start.
pub fn is_sparse_file(path: &Path) -> bool {
    use std::io::Read;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if matches!(ext.as_deref(), Some("mtx" | "npz")) {
        return true;
    }
    let mut head = [0u8; 17];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let head = &head[..n];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    head.starts_with(b"%%MatrixMarket") || is_zip(head)
}

/// Reads a sparse matrix file: an `.npz` archive when it starts as a zip archive, otherwise
/// Matrix Market ([`parse_sparse`]).
///
/// # Errors
/// [`IoError::Io`]; otherwise as [`parse_sparse`], naming the file.
pub fn read_sparse(path: &Path) -> Result<SparseMatrix, IoError> {
    let bytes = crate::read_bytes(path)?;
    parse_sparse(&bytes).map_err(|e| e.in_file(path))
}

/// [`read_sparse`] of bytes already read: [`sparse_from_npz`] for a zip archive, else
/// [`sparse_from_mtx`].
///
/// # Errors
/// As those two.
pub fn parse_sparse(bytes: &[u8]) -> Result<SparseMatrix, IoError> {
    if is_zip(bytes) {
        sparse_from_npz(bytes)
    } else {
        sparse_from_mtx(bytes)
    }
}

/// Collects a Matrix Market file's entries, mirrored, as coordinates.
struct Coordinates {
    r: Vec<usize>,
    c: Vec<usize>,
    f: Vec<f64>,
    i: Vec<i64>,
}

/// Entries set aside before any is read: the size line is a claim, not data.
const RESERVE_AT_MOST: u64 = 1 << 16;

impl MmSink for Coordinates {
    type Error = IoError;

    fn header(&mut self, h: &MmHeader) -> Result<(), IoError> {
        let per = if h.symmetry == crate::matrix_market::MmSymmetry::General {
            1
        } else {
            2
        };
        crate::limits::check_claim(
            "the Matrix Market entries",
            h.entries.saturating_mul(per),
            32.0,
            "entries",
        )?;
        for (what, n) in [("rows", h.rows), ("columns", h.cols)] {
            if usize::try_from(n).is_err() {
                return Err(format_err(format!("{n} {what} do not fit in memory")));
            }
        }
        let n = (h.entries.saturating_mul(per)).min(RESERVE_AT_MOST) as usize;
        self.r.reserve(n);
        self.c.reserve(n);
        match h.field {
            MmField::Real => self.f.reserve(n),
            _ => self.i.reserve(n),
        }
        Ok(())
    }

    fn entry(&mut self, h: &MmHeader, row: u64, col: u64, v: MmValue) -> Result<(), IoError> {
        for (row, col, v) in std::iter::once((row, col, v)).chain(h.mirror(row, col, v)) {
            self.r.push(row as usize);
            self.c.push(col as usize);
            match v {
                MmValue::Real(x) => self.f.push(x),
                MmValue::Integer(x) => self.i.push(x),
                MmValue::Pattern => self.i.push(1),
            }
        }
        Ok(())
    }
}

/// A Matrix Market matrix (any format, field and symmetry of [`crate::matrix_market`]) as CSR
/// arrays: `real` values as `f64`, `integer` as `i64`, `pattern` entries as `1`; a symmetric
/// matrix's mirrored entries added (negated when skew-symmetric); an `array` file stores every
/// entry.
///
/// # Errors
/// [`IoError::Parse`] with the line and column of the first line that breaks the grammar;
/// [`IoError::OutOfMemory`] for a size line that declares more than fits.
///
/// # Examples
/// ```
/// use warpath_io::sparse::{sparse_from_mtx, SparseValues};
/// let m = sparse_from_mtx(b"%%MatrixMarket matrix coordinate real general\n2 3 2\n1 3 2.5\n2 1 -1\n")?;
/// assert_eq!((m.rows, m.cols, m.indices.clone()), (2, 3, vec![2, 0]));
/// assert_eq!(m.values, SparseValues::F64(vec![2.5, -1.0]));
/// # Ok::<(), warpath_io::IoError>(())
/// ```
pub fn sparse_from_mtx(bytes: &[u8]) -> Result<SparseMatrix, IoError> {
    let mut sink = Coordinates {
        r: Vec::new(),
        c: Vec::new(),
        f: Vec::new(),
        i: Vec::new(),
    };
    let h = parse_matrix_market(bytes, &mut sink)?;
    let values = match h.field {
        MmField::Real => SparseValues::F64(sink.f),
        _ => SparseValues::I64(sink.i),
    };
    SparseMatrix::from_coo(h.rows as usize, h.cols as usize, &sink.r, &sink.c, values)
}

/// An index or count array of an archive, whatever its integer dtype.
fn indices(z: &mut Npz<'_>, name: &str) -> Result<Vec<usize>, IoError> {
    z.array::<i64>(name)?
        .data
        .into_iter()
        .map(|v| usize::try_from(v).map_err(|_| format_err(format!("{name}.npy holds {v}"))))
        .collect()
}

/// The `data` array of an archive: booleans and integers as `i64`, floats as `f64`.
fn data_values(z: &mut Npz<'_>) -> Result<SparseValues, IoError> {
    Ok(match z.dtype("data")?.kind {
        Kind::Int | Kind::Uint | Kind::Bool => SparseValues::I64(z.array::<i64>("data")?.data),
        Kind::Float => SparseValues::F64(z.array::<f64>("data")?.data),
    })
}

/// A `scipy.sparse.save_npz` archive as CSR arrays: `format` (`csr`, `csc` or `coo`),
/// `shape`, `data`, and `indices` / `indptr` (or `row` / `col` for `coo`); integer and boolean
/// data as `i64`, float data as `f64`.
///
/// # Errors
/// [`IoError::Npy`] for an archive that does not open or lacks a member (named);
/// [`IoError::Format`] for arrays that do not describe a matrix of the shape, or a sparse
/// format other than those three.
pub fn sparse_from_npz(bytes: &[u8]) -> Result<SparseMatrix, IoError> {
    let mut z = Npz::new(bytes)?;
    let format = z.text("format").map_err(|e| match e {
        IoError::Npy { message, .. } if message.contains("no member") => {
            format_err(format!("{message} (not a scipy.sparse.save_npz file?)"))
        }
        e => e,
    })?;
    let shape = indices(&mut z, "shape")?;
    let [rows, cols] = shape[..] else {
        return Err(format_err(format!(
            "shape.npy holds {} numbers, not 2",
            shape.len()
        )));
    };
    let values = data_values(&mut z)?;
    match format.as_str() {
        "coo" => {
            let r = indices(&mut z, "row")?;
            let c = indices(&mut z, "col")?;
            SparseMatrix::from_coo(rows, cols, &r, &c, values)
        }
        "csr" | "csc" => {
            let indptr = indices(&mut z, "indptr")?;
            let idx = indices(&mut z, "indices")?;
            let (lines, width) = if format == "csr" {
                (rows, cols)
            } else {
                (cols, rows)
            };
            if indptr.len() != lines.saturating_add(1)
                || indptr[0] != 0
                || indptr.windows(2).any(|w| w[0] > w[1])
                || indptr[lines] != idx.len()
                || idx.len() != values.len()
                || idx.iter().any(|&j| j >= width)
            {
                return Err(format_err(format!(
                    "the {format} arrays do not describe a {rows} x {cols} matrix"
                )));
            }
            if format == "csr" {
                return Ok(SparseMatrix {
                    rows,
                    cols,
                    indptr,
                    indices: idx,
                    values,
                });
            }
            let mut c = Vec::with_capacity(idx.len());
            for j in 0..cols {
                c.extend(std::iter::repeat_n(j, indptr[j + 1] - indptr[j]));
            }
            SparseMatrix::from_coo(rows, cols, &idx, &c, values)
        }
        f => Err(format_err(format!(
            "sparse format '{f}' (warpath reads csr, csc and coo)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::npz::tests::archive;

    #[test]
    fn matrix_market_general_symmetric_pattern_and_array() {
        let m = sparse_from_mtx(
            b"%%MatrixMarket matrix coordinate real general\n% c\n2 3 3\n1 3 2.5\n2 1 -1\n1 1 4\n",
        )
        .unwrap();
        assert_eq!((m.rows, m.cols), (2, 3));
        assert_eq!(m.indptr, vec![0, 2, 3]);
        assert_eq!(m.indices, vec![2, 0, 0]);
        assert_eq!(m.values, SparseValues::F64(vec![2.5, 4.0, -1.0]));
        let s = sparse_from_mtx(
            b"%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 7\n2 1 3\n",
        )
        .unwrap();
        assert_eq!(s.nnz(), 3);
        assert_eq!(s.values, SparseValues::I64(vec![7, 3, 3]));
        let p = sparse_from_mtx(b"%%MatrixMarket matrix coordinate pattern general\n1 2 1\n1 2\n")
            .unwrap();
        assert_eq!(p.values, SparseValues::I64(vec![1]));
        let a = sparse_from_mtx(b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n")
            .unwrap();
        assert_eq!((a.indptr, a.indices), (vec![0, 2, 4], vec![0, 1, 0, 1]));
        assert_eq!(a.values, SparseValues::F64(vec![1.0, 3.0, 2.0, 4.0]));
        // a byte-order mark before the banner (Windows editors write one)
        let b = sparse_from_mtx(
            b"\xEF\xBB\xBF%%MatrixMarket matrix coordinate pattern general\n1 2 1\n1 2\n",
        )
        .unwrap();
        assert_eq!(b, p);
        for bad in [
            &b"%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n"[..],
            b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n",
            b"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
            b"%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n1 1 1\n2 1 1\n",
            b"1 2 3\n",
        ] {
            assert!(
                matches!(sparse_from_mtx(bad), Err(IoError::Parse { .. })),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    fn npy<T: crate::Element>(v: &[T]) -> Vec<u8> {
        let mut b = Vec::new();
        crate::npy::write_npy(&mut b, v, &[v.len()]).unwrap();
        b
    }

    /// `np.array('csr')` as numpy saves it: a 0-d `<U3` array.
    fn format_npy(f: &str) -> Vec<u8> {
        let h = format!(
            "{{'descr': '<U{}', 'fortran_order': False, 'shape': (), }}\n",
            f.len()
        );
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(h.as_bytes());
        for ch in f.chars() {
            b.extend_from_slice(&(ch as u32).to_le_bytes());
        }
        b
    }

    /// A `scipy.sparse.save_npz` archive in `format`: its two index arrays (`indices` and
    /// `indptr`, or `row` and `col` for COO), then `format.npy`, `shape.npy` and `data.npy`.
    fn save_npz(
        (format, first, second, data): (&str, Vec<u8>, Vec<u8>, Vec<u8>),
        shape: [i64; 2],
        deflate: bool,
    ) -> Vec<u8> {
        let names = match format {
            "coo" => ["row.npy", "col.npy"],
            _ => ["indices.npy", "indptr.npy"],
        };
        let members = [
            (names[0], first),
            (names[1], second),
            ("format.npy", format_npy(format)),
            ("shape.npy", npy(&shape)),
            ("data.npy", data),
        ];
        archive(&members, deflate)
    }

    #[test]
    fn scipy_npz_in_every_format() {
        // [[0, 5, .], [2, ., 3]]
        let want = SparseMatrix {
            rows: 2,
            cols: 3,
            indptr: vec![0, 2, 4],
            indices: vec![0, 1, 0, 2],
            values: SparseValues::F64(vec![0.0, 5.0, 2.0, 3.0]),
        };
        for deflate in [false, true] {
            let [csr, csc, coo] = [
                (
                    "csr",
                    npy(&[0i32, 1, 0, 2]),
                    npy(&[0i32, 2, 4]),
                    npy(&[0.0f64, 5.0, 2.0, 3.0]),
                ),
                (
                    "csc",
                    npy(&[0i64, 1, 0, 1]),
                    npy(&[0i64, 2, 3, 4]),
                    npy(&[0.0f64, 2.0, 5.0, 3.0]),
                ),
                (
                    "coo",
                    npy(&[1i32, 0, 1, 0]),
                    npy(&[0i32, 0, 2, 1]),
                    npy(&[2i64, 0, 3, 5]),
                ),
            ]
            .map(|arrays| save_npz(arrays, [2, 3], deflate));
            assert_eq!(sparse_from_npz(&csr).unwrap(), want);
            assert_eq!(parse_sparse(&csr).unwrap(), want);
            assert_eq!(sparse_from_npz(&csc).unwrap(), want);
            let got = sparse_from_npz(&coo).unwrap();
            assert_eq!(got.indices, want.indices);
            assert_eq!(got.values, SparseValues::I64(vec![0, 5, 2, 3]));
        }
        assert!(sparse_from_npz(b"PK\x03\x04 not really").is_err());
    }

    #[test]
    fn broken_npz_arrays_are_named_errors() {
        for (indptr, format, want) in [
            (&[0, 2, 1], "csr", "do not describe a 2 x 2 matrix"),
            (&[0, 1, 2], "bsr", "sparse format 'bsr'"),
            (&[0, -1, 2], "csr", "indptr.npy holds -1"),
        ] {
            let arrays = (
                format,
                npy(&[0i32, 1]),
                npy::<i32>(indptr),
                npy(&[1.0f64, 2.0]),
            );
            let f = save_npz(arrays, [2, 2], false);
            let e = sparse_from_npz(&f).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        let no_format = archive(&[("x.npy", npy(&[1u8]))], false);
        let e = sparse_from_npz(&no_format).unwrap_err().to_string();
        assert!(e.contains("not a scipy.sparse.save_npz file"), "{e}");
    }

    #[test]
    fn files_are_found_by_name_or_content() {
        let d = std::env::temp_dir().join(format!("wio-sparse-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("m.txt");
        std::fs::write(
            &p,
            "\u{feff}%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1\n",
        )
        .unwrap();
        assert!(is_sparse_file(&p));
        assert_eq!(read_sparse(&p).unwrap().nnz(), 1);
        std::fs::write(&p, "1 2\n3 4\n").unwrap();
        assert!(!is_sparse_file(&p));
        let e = read_sparse(&p).unwrap_err().to_string();
        assert!(e.contains("m.txt") && e.contains("line 1"), "{e}");
        assert!(is_sparse_file(&d.join("missing.npz")));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
