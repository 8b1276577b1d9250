//! Sparse cost matrices for `warpath lap`: Matrix Market coordinate files (`.mtx`) and scipy's
//! `scipy.sparse.save_npz` files (`.npz`: CSR, CSC or COO, compressed or not), read into CSR
//! arrays; a generated sparse matrix; and the dense form of one, when it fits.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, bail};
use assignment::ndarray::Array2;

/// The stored values: integers stay integers (solved in integer arithmetic).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Values {
    /// Real entries.
    F64(Vec<f64>),
    /// Integer entries.
    I64(Vec<i64>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::I64(v) => v.len(),
        }
    }

    /// The element type's name, for the report.
    pub(super) fn dtype(&self) -> &'static str {
        match self {
            Values::F64(_) => "f64",
            Values::I64(_) => "i64",
        }
    }

    /// Entry `k` as `f64`.
    pub(super) fn at(&self, k: usize) -> f64 {
        match self {
            Values::F64(v) => v[k],
            Values::I64(v) => v[k] as f64,
        }
    }

    /// The values in the order `perm` gives.
    fn permuted(&self, perm: &[usize]) -> Values {
        match self {
            Values::F64(v) => Values::F64(perm.iter().map(|&k| v[k]).collect()),
            Values::I64(v) => Values::I64(perm.iter().map(|&k| v[k]).collect()),
        }
    }
}

/// A sparse matrix as CSR arrays: row `i`'s entries are `indptr[i]..indptr[i + 1]` of
/// `indices` (columns) and `values`. Every stored entry is an edge, zeros included.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SparseInput {
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) indptr: Vec<usize>,
    pub(super) indices: Vec<usize>,
    pub(super) values: Values,
}

impl SparseInput {
    /// Stored entries.
    pub(super) fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// Whether the sparse solver works in integer arithmetic here (integer entries small
    /// enough: the rule of `assignment::integer_arithmetic`).
    pub(super) fn integer_arithmetic(&self) -> bool {
        match &self.values {
            Values::F64(_) => false,
            Values::I64(v) => {
                let big = v.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0) as f64;
                big <= (1u64 << 53) as f64
                    && big * 4.0 * (self.rows.max(self.cols) as f64 + 2.0) < (1u64 << 55) as f64
            }
        }
    }

    /// The CSR of `rows x cols` coordinates (any order; duplicates kept as parallel entries).
    fn from_coo(
        rows: usize,
        cols: usize,
        r: &[usize],
        c: &[usize],
        values: Values,
    ) -> Result<Self> {
        if r.len() != c.len() || r.len() != values.len() {
            bail!(
                "{} rows, {} columns and {} values for the entries",
                r.len(),
                c.len(),
                values.len()
            );
        }
        if let Some(k) = (0..r.len()).find(|&k| r[k] >= rows || c[k] >= cols) {
            bail!(
                "entry {k} at ({}, {}) is outside the {rows} x {cols} matrix",
                r[k],
                c[k]
            );
        }
        let mut indptr = vec![0usize; rows + 1];
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
        Ok(SparseInput {
            rows,
            cols,
            indptr,
            indices,
            values: values.permuted(&perm),
        })
    }

    /// The dense matrix, `+inf` where there is no entry (`-inf` when `maximize`, so that the
    /// missing pairs stay forbidden), refused when it does not fit in memory.
    pub(super) fn densify(&self, maximize: bool) -> Result<Array2<f64>> {
        let bytes = (self.rows as u64)
            .saturating_mul(self.cols as u64)
            .saturating_mul(8);
        if let Some(available) = gpu_runtime::host_available_memory()
            && bytes > available
        {
            return Err(assignment::AssignmentError::OutOfMemory {
                what: format!(
                    "the dense {} x {} form of this sparse matrix ({} entries)",
                    self.rows,
                    self.cols,
                    self.nnz()
                ),
                needed: bytes,
                available,
            })
            .context("give --sparse to solve it as a sparse matrix");
        }
        let missing = if maximize {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        let mut d = Array2::from_elem((self.rows, self.cols), missing);
        for i in 0..self.rows {
            for k in self.indptr[i]..self.indptr[i + 1] {
                let j = self.indices[k];
                let v = self.values.at(k);
                // parallel entries: the better one counts, as in the sparse solver
                let better = if maximize {
                    v > d[[i, j]]
                } else {
                    v < d[[i, j]]
                };
                if better || d[[i, j]] == missing {
                    d[[i, j]] = v;
                }
            }
        }
        Ok(d)
    }
}

/// Whether `path` holds a sparse matrix: a `.mtx` or `.npz` name, or the Matrix Market
/// banner / a zip archive's signature at its start.
pub(super) fn is_sparse_file(path: &Path) -> bool {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if matches!(ext.as_deref(), Some("mtx" | "npz")) {
        return true;
    }
    let mut head = [0u8; 14];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    head[..n].starts_with(b"%%MatrixMarket") || head[..n].starts_with(b"PK\x03\x04")
}

/// Reads a `.mtx` or `.npz` sparse matrix (by content).
pub(super) fn read_sparse(path: &Path) -> Result<SparseInput> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let m = if bytes.starts_with(b"PK") {
        read_npz(&bytes)
    } else {
        read_mtx(&bytes)
    };
    m.with_context(|| format!("{} is not a sparse matrix warpath can read", path.display()))
}

/// A Matrix Market `coordinate` matrix: `real`, `integer` or `pattern` (every entry 1)
/// values, `general`, `symmetric` or `skew-symmetric` (the mirrored entries added).
pub(super) fn read_mtx(bytes: &[u8]) -> Result<SparseInput> {
    let text = std::str::from_utf8(bytes).context("the file is not UTF-8 text")?;
    let mut lines = text.lines().enumerate();
    let (_, banner) = lines.next().context("the file is empty")?;
    let words: Vec<String> = banner
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    if words.len() != 5 || words[0] != "%%matrixmarket" || words[1] != "matrix" {
        bail!(
            "the first line is not a Matrix Market banner (%%MatrixMarket matrix coordinate real general)"
        );
    }
    if words[2] != "coordinate" {
        bail!(
            "a Matrix Market '{}' matrix is dense: only 'coordinate' matrices are sparse",
            words[2]
        );
    }
    let field = words[3].as_str();
    if !matches!(field, "real" | "integer" | "pattern" | "double") {
        bail!("Matrix Market field '{field}' is not real, integer or pattern");
    }
    let symmetry = words[4].as_str();
    if !matches!(symmetry, "general" | "symmetric" | "skew-symmetric") {
        bail!("Matrix Market symmetry '{symmetry}' is not general, symmetric or skew-symmetric");
    }
    let mut size = None;
    let (mut r, mut c) = (Vec::new(), Vec::new());
    let (mut fv, mut iv) = (Vec::new(), Vec::new());
    for (no, line) in lines {
        let line = line.trim();
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        let mut it = line.split_whitespace();
        let mut num = |what: &str| -> Result<usize> {
            let w = it
                .next()
                .with_context(|| format!("line {}: no {what}", no + 1))?;
            w.parse::<usize>()
                .with_context(|| format!("line {}: {what} '{w}' is not a count", no + 1))
        };
        let Some((rows, cols, nnz)) = size else {
            let s = (num("row count")?, num("column count")?, num("entry count")?);
            let per = if symmetry == "general" { 1 } else { 2 };
            warpath_io::check_memory(
                "the Matrix Market entries",
                (s.2 as u64).saturating_mul(per),
                32.0,
                0,
                "entries",
            )?;
            r.reserve(s.2 * per as usize);
            c.reserve(s.2 * per as usize);
            size = Some(s);
            continue;
        };
        let i = num("row")?;
        let j = num("column")?;
        if i == 0 || j == 0 || i > rows || j > cols {
            bail!(
                "line {}: entry ({i}, {j}) outside the {rows} x {cols} matrix (1-based)",
                no + 1
            );
        }
        let rest = it.next();
        match field {
            "pattern" => iv.push(1i64),
            "integer" => {
                let w = rest.with_context(|| format!("line {}: no value", no + 1))?;
                iv.push(
                    w.parse::<i64>()
                        .with_context(|| format!("line {}: '{w}' is not an integer", no + 1))?,
                );
            }
            _ => {
                let w = rest.with_context(|| format!("line {}: no value", no + 1))?;
                fv.push(
                    w.parse::<f64>()
                        .with_context(|| format!("line {}: '{w}' is not a number", no + 1))?,
                );
            }
        }
        r.push(i - 1);
        c.push(j - 1);
        if symmetry != "general" && i != j {
            r.push(j - 1);
            c.push(i - 1);
            let sign = if symmetry == "skew-symmetric" { -1 } else { 1 };
            if field == "real" || field == "double" {
                let v = *fv.last().expect("pushed above");
                fv.push(sign as f64 * v);
            } else {
                let v = *iv.last().expect("pushed above");
                iv.push(sign * v);
            }
        }
        if r.len() > 2 * nnz {
            bail!("more entries than the size line's {nnz}");
        }
    }
    let (rows, cols, nnz) = size.context("no size line")?;
    let stored = if symmetry == "general" {
        r.len()
    } else {
        r.iter().zip(&c).filter(|(i, j)| i <= j).count()
    };
    if stored != nnz && symmetry == "general" {
        bail!("{} entries, the size line says {nnz}", r.len());
    }
    let values = if field == "real" || field == "double" {
        Values::F64(fv)
    } else {
        Values::I64(iv)
    };
    SparseInput::from_coo(rows, cols, &r, &c, values)
}

/// The entries of a zip archive: name and bytes (stored or deflated; no zip64).
fn zip_entries(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>> {
    let u16_at = |p: usize| -> Result<usize> {
        bytes
            .get(p..p + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
            .context("the zip archive is truncated")
    };
    let u32_at = |p: usize| -> Result<usize> {
        bytes
            .get(p..p + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .context("the zip archive is truncated")
    };
    // The end-of-central-directory record: the last "PK\x05\x06".
    let eocd = (0..bytes.len().saturating_sub(21))
        .rev()
        .find(|&p| bytes[p..].starts_with(b"PK\x05\x06"))
        .context("no zip central directory (a truncated file?)")?;
    let count = u16_at(eocd + 10)?;
    let mut at = u32_at(eocd + 16)?;
    if count == 0xffff || at == 0xffff_ffff {
        bail!("zip64 archives (over 4 GiB) are not supported: save the matrix as .mtx");
    }
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        if !bytes
            .get(at..)
            .is_some_and(|b| b.starts_with(b"PK\x01\x02"))
        {
            bail!("a broken zip central directory");
        }
        let method = u16_at(at + 10)?;
        let csize = u32_at(at + 20)?;
        let usize_ = u32_at(at + 24)?;
        let (nlen, xlen, clen) = (u16_at(at + 28)?, u16_at(at + 30)?, u16_at(at + 32)?);
        let local = u32_at(at + 42)?;
        let name = String::from_utf8_lossy(
            bytes
                .get(at + 46..at + 46 + nlen)
                .context("the zip archive is truncated")?,
        )
        .into_owned();
        at += 46 + nlen + xlen + clen;
        if !bytes
            .get(local..)
            .is_some_and(|b| b.starts_with(b"PK\x03\x04"))
        {
            bail!("a broken zip entry {name}");
        }
        let start = local + 30 + u16_at(local + 26)? + u16_at(local + 28)?;
        let data = bytes
            .get(start..start + csize)
            .with_context(|| format!("zip entry {name} is truncated"))?;
        let data = match method {
            0 => data.to_vec(),
            8 => {
                let mut v = Vec::with_capacity(usize_);
                flate2::read::DeflateDecoder::new(data)
                    .read_to_end(&mut v)
                    .with_context(|| format!("zip entry {name} does not inflate"))?;
                v
            }
            m => bail!("zip entry {name} uses compression method {m} (only stored and deflate)"),
        };
        out.push((name, data));
    }
    Ok(out)
}

/// An index or count array of an `.npz` entry, whatever its integer dtype.
fn npy_indices(bytes: &[u8], what: &str) -> Result<Vec<usize>> {
    let a = warpath_io::npy::read_npy_bytes::<i64>(bytes).with_context(|| format!("{what}.npy"))?;
    a.data
        .into_iter()
        .map(|v| usize::try_from(v).with_context(|| format!("{what}.npy holds {v}")))
        .collect()
}

/// The values of an `.npz` entry: integer dtypes as `i64`, the others as `f64`.
fn npy_values(bytes: &[u8]) -> Result<Values> {
    let h = warpath_io::npy::parse_header(bytes).context("data.npy")?;
    Ok(match h.dtype.kind {
        warpath_io::npy::Kind::Int | warpath_io::npy::Kind::Uint | warpath_io::npy::Kind::Bool => {
            Values::I64(
                warpath_io::npy::read_npy_bytes::<i64>(bytes)
                    .context("data.npy")?
                    .data,
            )
        }
        _ => Values::F64(
            warpath_io::npy::read_npy_bytes::<f64>(bytes)
                .context("data.npy")?
                .data,
        ),
    })
}

/// The text of a 0-d unicode `.npy` array (`format.npy` of `save_npz`: `'csr'`).
fn npy_text(bytes: &[u8]) -> Result<String> {
    if !warpath_io::npy::is_npy(bytes) || bytes.len() < 10 {
        bail!("format.npy is not a .npy array");
    }
    let (len, at) = if bytes[6] == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    let header = String::from_utf8_lossy(bytes.get(at..at + len).context("format.npy")?);
    let body = bytes.get(at + len..).context("format.npy")?;
    if header.contains("<U") {
        Ok(body
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .filter_map(char::from_u32)
            .filter(|&ch| ch != '\0')
            .collect())
    } else {
        Ok(String::from_utf8_lossy(body).trim_matches('\0').to_owned())
    }
}

/// A scipy `save_npz` file: `format` (csr, csc or coo), `shape`, `data` and `indices` /
/// `indptr` (or `row` / `col` for coo).
pub(super) fn read_npz(bytes: &[u8]) -> Result<SparseInput> {
    let entries = zip_entries(bytes)?;
    let get = |name: &str| -> Result<&[u8]> {
        entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
            .with_context(|| {
                format!("no {name} in the archive (not a scipy.sparse.save_npz file?)")
            })
    };
    let format = npy_text(get("format.npy")?)?;
    let shape = npy_indices(get("shape.npy")?, "shape")?;
    if shape.len() != 2 {
        bail!("shape.npy holds {} numbers, not 2", shape.len());
    }
    let (rows, cols) = (shape[0], shape[1]);
    let values = npy_values(get("data.npy")?)?;
    match format.as_str() {
        "coo" => {
            let r = npy_indices(get("row.npy")?, "row")?;
            let c = npy_indices(get("col.npy")?, "col")?;
            SparseInput::from_coo(rows, cols, &r, &c, values)
        }
        "csr" | "csc" => {
            let indptr = npy_indices(get("indptr.npy")?, "indptr")?;
            let indices = npy_indices(get("indices.npy")?, "indices")?;
            let lines = if format == "csr" { rows } else { cols };
            let width = if format == "csr" { cols } else { rows };
            if indptr.len() != lines + 1
                || indptr[0] != 0
                || indptr.windows(2).any(|w| w[0] > w[1])
                || indptr[lines] != indices.len()
                || indices.len() != values.len()
                || indices.iter().any(|&j| j >= width)
            {
                bail!("the {format} arrays do not describe a {rows} x {cols} matrix");
            }
            if format == "csr" {
                Ok(SparseInput {
                    rows,
                    cols,
                    indptr,
                    indices,
                    values,
                })
            } else {
                let mut r = Vec::with_capacity(indices.len());
                for j in 0..cols {
                    r.extend(std::iter::repeat_n(j, indptr[j + 1] - indptr[j]));
                }
                SparseInput::from_coo(rows, cols, &indices, &r, values)
            }
        }
        f => bail!("sparse format '{f}' (warpath reads csr, csc and coo)"),
    }
}

/// A generated `n x n` sparse matrix: `per_row` random columns per row with costs uniform in
/// `[1, 100)` (integers in `[1, 100)` when `integers`), plus the diagonal so that a full
/// matching exists (the benchmark's matrices).
pub(super) fn generate(n: usize, per_row: usize, integers: bool, seed: u64) -> SparseInput {
    let mut s = seed ^ 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s >> 11
    };
    let mut indptr = Vec::with_capacity(n + 1);
    let mut indices = Vec::with_capacity(n * (per_row + 1));
    let (mut fv, mut iv) = (Vec::new(), Vec::new());
    indptr.push(0);
    let mut row = Vec::with_capacity(per_row + 1);
    for i in 0..n {
        row.clear();
        row.push(i);
        row.extend((0..per_row).map(|_| (next() % n as u64) as usize));
        row.sort_unstable();
        row.dedup();
        for &j in &row {
            indices.push(j);
            let u = (next() as f64) / (1u64 << 53) as f64;
            if integers {
                iv.push(1 + (u * 99.0) as i64);
            } else {
                fv.push(1.0 + u * 99.0);
            }
        }
        indptr.push(indices.len());
    }
    SparseInput {
        rows: n,
        cols: n,
        indptr,
        indices,
        values: if integers {
            Values::I64(iv)
        } else {
            Values::F64(fv)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_market_general_symmetric_and_pattern() {
        let m = read_mtx(
            b"%%MatrixMarket matrix coordinate real general\n% c\n2 3 3\n1 3 2.5\n2 1 -1\n1 1 4\n",
        )
        .unwrap();
        assert_eq!((m.rows, m.cols), (2, 3));
        assert_eq!(m.indptr, vec![0, 2, 3]);
        assert_eq!(m.indices, vec![2, 0, 0]);
        assert_eq!(m.values, Values::F64(vec![2.5, 4.0, -1.0]));
        let s =
            read_mtx(b"%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 7\n2 1 3\n")
                .unwrap();
        assert_eq!(s.nnz(), 3);
        assert_eq!(
            s.densify(false).unwrap(),
            assignment::ndarray::array![[7.0, 3.0], [3.0, f64::INFINITY]]
        );
        let p =
            read_mtx(b"%%MatrixMarket matrix coordinate pattern general\n1 2 1\n1 2\n").unwrap();
        assert_eq!(p.values, Values::I64(vec![1]));
        for bad in [
            &b"%%MatrixMarket matrix array real general\n1 1\n3\n"[..],
            b"%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n",
            b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n",
            b"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
            b"1 2 3\n",
        ] {
            assert!(read_mtx(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    /// A `save_npz`-like archive written by hand (stored and deflated entries).
    fn npz(entries: &[(&str, Vec<u8>)], deflate: bool) -> Vec<u8> {
        use std::io::Write;
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, data) in entries {
            let body = if deflate {
                let mut e =
                    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            } else {
                data.clone()
            };
            let method: u16 = if deflate { 8 } else { 0 };
            let local = out.len() as u32;
            out.extend_from_slice(b"PK\x03\x04");
            out.extend_from_slice(&[20, 0, 0, 0]);
            out.extend_from_slice(&method.to_le_bytes());
            out.extend_from_slice(&[0; 8]); // time, date, crc
            out.extend_from_slice(&(body.len() as u32).to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&body);
            central.extend_from_slice(b"PK\x01\x02");
            central.extend_from_slice(&[20, 0, 20, 0, 0, 0]);
            central.extend_from_slice(&method.to_le_bytes());
            central.extend_from_slice(&[0; 8]);
            central.extend_from_slice(&(body.len() as u32).to_le_bytes());
            central.extend_from_slice(&(data.len() as u32).to_le_bytes());
            central.extend_from_slice(&(name.len() as u16).to_le_bytes());
            central.extend_from_slice(&[0; 12]);
            central.extend_from_slice(&local.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
        }
        let at = out.len() as u32;
        out.extend_from_slice(&central);
        out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
        out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&at.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }

    fn npy<T: warpath_io::Element>(v: &[T]) -> Vec<u8> {
        let mut b = Vec::new();
        warpath_io::npy::write_npy(&mut b, v, &[v.len()]).unwrap();
        b
    }

    fn format_npy(f: &str) -> Vec<u8> {
        let header = format!(
            "{{'descr': '<U{}', 'fortran_order': False, 'shape': (), }}",
            f.len()
        );
        let mut h = header.into_bytes();
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(b' ');
        }
        h.push(b'\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(&h);
        for ch in f.chars() {
            b.extend_from_slice(&(ch as u32).to_le_bytes());
        }
        b
    }

    #[test]
    fn scipy_npz_in_every_format() {
        // [[0, 5, .], [2, ., 3]]
        let want = SparseInput {
            rows: 2,
            cols: 3,
            indptr: vec![0, 2, 4],
            indices: vec![0, 1, 0, 2],
            values: Values::F64(vec![0.0, 5.0, 2.0, 3.0]),
        };
        for deflate in [false, true] {
            let csr = npz(
                &[
                    ("indices.npy", npy(&[0i32, 1, 0, 2])),
                    ("indptr.npy", npy(&[0i32, 2, 4])),
                    ("format.npy", format_npy("csr")),
                    ("shape.npy", npy(&[2i64, 3])),
                    ("data.npy", npy(&[0.0f64, 5.0, 2.0, 3.0])),
                ],
                deflate,
            );
            assert_eq!(read_npz(&csr).unwrap(), want);
            let csc = npz(
                &[
                    ("indices.npy", npy(&[0i64, 1, 0, 1])),
                    ("indptr.npy", npy(&[0i64, 2, 3, 4])),
                    ("format.npy", format_npy("csc")),
                    ("shape.npy", npy(&[2i64, 3])),
                    ("data.npy", npy(&[0.0f64, 2.0, 5.0, 3.0])),
                ],
                deflate,
            );
            assert_eq!(read_npz(&csc).unwrap(), want);
            let coo = npz(
                &[
                    ("row.npy", npy(&[1i32, 0, 1, 0])),
                    ("col.npy", npy(&[0i32, 0, 2, 1])),
                    ("format.npy", format_npy("coo")),
                    ("shape.npy", npy(&[2i64, 3])),
                    ("data.npy", npy(&[2i64, 0, 3, 5])),
                ],
                deflate,
            );
            let got = read_npz(&coo).unwrap();
            assert_eq!(got.indices, want.indices);
            assert_eq!(got.values, Values::I64(vec![0, 5, 2, 3]));
        }
        assert!(read_npz(b"PK\x03\x04 not really").is_err());
    }

    #[test]
    fn generated_matrices_have_their_diagonal() {
        let g = generate(50, 4, true, 3);
        assert_eq!(g.indptr.len(), 51);
        for i in 0..50 {
            assert!(g.indices[g.indptr[i]..g.indptr[i + 1]].contains(&i));
        }
    }
}
