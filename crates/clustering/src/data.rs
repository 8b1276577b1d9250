//! Inputs: generated data with planted clusters, CSV and `.npy` files, sample-weights files,
//! and row ranges ("shards") of binary or `.npy` files read by offset, as each MPI rank does.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use crate::KMeansError;

/// Points drawn around planted centres.
#[derive(Debug, Clone, PartialEq)]
pub struct Blobs {
    /// The points, `n` rows by `d` columns.
    pub data: Array2<f64>,
    /// The planted centres, `clusters` rows.
    pub centres: Array2<f64>,
    /// The centre each point was drawn around.
    pub truth: Vec<u32>,
}

/// `n` points in `d` dimensions around `clusters` centres drawn uniformly from `[-1, 1]^d`,
/// each point `centre + N(0, sigma^2)` per coordinate, the centre chosen round-robin.
///
/// # Complexity
/// `O(n d)`.
///
/// # Examples
/// ```
/// let b = clustering::data::generate_blobs(100, 3, 4, 0.05, 1);
/// assert_eq!(b.data.dim(), (100, 3));
/// assert_eq!(b.truth[5], 1);
/// ```
pub fn generate_blobs(n: usize, d: usize, clusters: usize, sigma: f64, seed: u64) -> Blobs {
    let clusters = clusters.max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let centres = Array2::from_shape_fn((clusters, d), |_| rng.random_range(-1.0..1.0));
    let noise = Normal::new(0.0, sigma.abs()).unwrap_or_else(|_| Normal::new(0.0, 0.0).unwrap());
    let truth: Vec<u32> = (0..n).map(|i| (i % clusters) as u32).collect();
    let mut data = Array2::zeros((n, d));
    for (i, mut row) in data.rows_mut().into_iter().enumerate() {
        let c = truth[i] as usize;
        for t in 0..d {
            row[t] = centres[[c, t]] + noise.sample(&mut rng);
        }
    }
    Blobs {
        data,
        centres,
        truth,
    }
}

/// The data of the k-means-on-CUDA seed's experiments: two natural clusters, centred at
/// `+0.25` and `-0.25` in every dimension. Each point picks one of the two at random and lies
/// uniformly within `0.2` of its centre in every coordinate, so the clusters never touch (the
/// seed says only "two natural clusters at .25 or -.25 in each dimension"). Points come in
/// random order, as the seed's distributed k-means assumes ("adequately shuffled").
///
/// # Complexity
/// `O(n d)`.
///
/// # Examples
/// ```
/// let b = clustering::data::two_clusters(1000, 3, 1);
/// assert_eq!((b.data.dim(), b.centres.dim()), ((1000, 3), (2, 3)));
/// for (row, &t) in b.data.rows().into_iter().zip(&b.truth) {
///     let c = b.centres.row(t as usize);
///     assert!(row.iter().zip(c).all(|(x, c)| (x - c).abs() <= 0.2));
/// }
/// ```
pub fn two_clusters(n: usize, d: usize, seed: u64) -> Blobs {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let centres = Array2::from_shape_fn((2, d), |(c, _)| if c == 0 { 0.25 } else { -0.25 });
    let truth: Vec<u32> = (0..n).map(|_| rng.random_range(0..2u32)).collect();
    let mut data = Array2::zeros((n, d));
    for (mut row, &c) in data.rows_mut().into_iter().zip(&truth) {
        for (x, centre) in row.iter_mut().zip(centres.row(c as usize)) {
            *x = centre + rng.random_range(-0.2..=0.2);
        }
    }
    Blobs {
        data,
        centres,
        truth,
    }
}

/// Reads a CSV (or whitespace-separated) file of numbers, one point per line. A first line
/// that does not parse is taken as a header; blank lines are skipped.
///
/// # Errors
/// [`KMeansError::Io`]; [`KMeansError::Format`] with the line number for a bad number or a
/// row with a different number of columns.
pub fn read_csv(path: &Path) -> Result<Array2<f64>, KMeansError> {
    let (values, cols) = read_csv_columns(path, None)?;
    let rows = values.len().checked_div(cols).unwrap_or(0);
    Array2::from_shape_vec((rows, cols), values)
        .map_err(|e| KMeansError::format(path, e.to_string()))
}

/// The values of [`read_csv`] row by row, and the number of columns; every row must have
/// `want` columns when given (the first row sets the count otherwise).
fn read_csv_columns(path: &Path, want: Option<usize>) -> Result<(Vec<f64>, usize), KMeansError> {
    let f = File::open(path).map_err(|e| KMeansError::io(path, e))?;
    let mut values = Vec::new();
    let mut cols = want;
    for (ln, line) in BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| KMeansError::io(path, e))?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let parsed: Result<Vec<f64>, _> = t
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<f64>())
            .collect();
        let row = match parsed {
            Ok(r) => r,
            // A first line that does not parse is a header.
            Err(_) if ln == 0 => continue,
            Err(e) => {
                return Err(KMeansError::format(path, format!("line {}: {e}", ln + 1)));
            }
        };
        match cols {
            None => cols = Some(row.len()),
            Some(c) if c != row.len() => {
                let earlier = if want.is_some() {
                    "expected"
                } else {
                    "earlier lines"
                };
                return Err(KMeansError::format(
                    path,
                    format!("line {} has {} columns, {earlier} {c}", ln + 1, row.len()),
                ));
            }
            _ => {}
        }
        values.extend(row);
    }
    Ok((values, cols.unwrap_or(0)))
}

/// Element type of a `.npy` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NpyType {
    /// `<f4`.
    F32,
    /// `<f8`.
    F64,
}

/// The header of a 2-D little-endian float `.npy` file in C order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NpyHeader {
    /// Byte offset of the first element.
    pub offset: u64,
    /// Rows.
    pub rows: u64,
    /// Columns.
    pub cols: u64,
    /// Element type.
    pub dtype: NpyType,
}

/// Parses the header of a `.npy` file (versions 1 to 3; 2-D, C order, `<f4` or `<f8`).
///
/// # Errors
/// [`KMeansError::Io`], or [`KMeansError::Format`] for anything else.
pub fn read_npy_header(path: &Path) -> Result<NpyHeader, KMeansError> {
    let bad = |m: &str| KMeansError::format(path, format!("not a supported .npy file: {m}"));
    let mut f = File::open(path).map_err(|e| KMeansError::io(path, e))?;
    let mut magic = [0u8; 8];
    f.read_exact(&mut magic)
        .map_err(|e| KMeansError::io(path, e))?;
    if &magic[..6] != b"\x93NUMPY" {
        return Err(bad("bad magic"));
    }
    let (len, pre) = if magic[6] == 1 {
        let mut b = [0u8; 2];
        f.read_exact(&mut b).map_err(|e| KMeansError::io(path, e))?;
        (u16::from_le_bytes(b) as u64, 10)
    } else {
        let mut b = [0u8; 4];
        f.read_exact(&mut b).map_err(|e| KMeansError::io(path, e))?;
        (u32::from_le_bytes(b) as u64, 12)
    };
    if len > 1 << 20 {
        return Err(bad("header too long"));
    }
    let mut h = vec![0u8; len as usize];
    f.read_exact(&mut h).map_err(|e| KMeansError::io(path, e))?;
    let h = String::from_utf8_lossy(&h).replace(' ', "");
    let dtype = if h.contains("'descr':'<f8'") {
        NpyType::F64
    } else if h.contains("'descr':'<f4'") {
        NpyType::F32
    } else {
        return Err(bad("dtype must be little-endian float32 or float64"));
    };
    if !h.contains("'fortran_order':False") {
        return Err(bad("Fortran order is not supported"));
    }
    let shape = h
        .split("'shape':(")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let dims: Vec<u64> = shape
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad("bad shape"))?;
    let (rows, cols) = match dims[..] {
        [r, c] => (r, c),
        [r] => (r, 1),
        _ => return Err(bad("the array must be 1-D or 2-D")),
    };
    let hdr = NpyHeader {
        offset: pre + len,
        rows,
        cols,
        dtype,
    };
    let size = f.metadata().map_err(|e| KMeansError::io(path, e))?.len();
    let elem = if dtype == NpyType::F64 { 8 } else { 4 };
    if size < hdr.offset + rows * cols * elem {
        return Err(bad("file shorter than its shape says"));
    }
    Ok(hdr)
}

/// Reads a whole 2-D `.npy` file of `f32` or `f64` as `f64`.
///
/// # Errors
/// As [`read_npy_header`].
pub fn read_npy(path: &Path) -> Result<Array2<f64>, KMeansError> {
    let h = read_npy_header(path)?;
    let v = read_rows(path, h.offset, h.dtype, 0, h.rows, h.cols)?;
    Array2::from_shape_vec((h.rows as usize, h.cols as usize), v)
        .map_err(|e| KMeansError::format(path, e.to_string()))
}

/// Reads a matrix of points: a `.npy` file (by its extension, as [`read_npy`]) or otherwise a
/// CSV file ([`read_csv`]). `warpath kmeans` and `kmeans-mpi` read data and given centroids
/// with it.
///
/// # Complexity
/// `O(n d)`.
///
/// # Errors
/// As [`read_npy`] or [`read_csv`].
///
/// # Examples
/// ```
/// use clustering::data::read_matrix;
/// let p = std::env::temp_dir().join(format!("km-matrix-doc-{}.csv", std::process::id()));
/// std::fs::write(&p, "0.5,1\n2,3\n")?;
/// assert_eq!(read_matrix(&p)?, ndarray::array![[0.5, 1.0], [2.0, 3.0]]);
/// # std::fs::remove_file(&p)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_matrix(path: &Path) -> Result<Array2<f64>, KMeansError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("npy") => read_npy(path),
        _ => read_csv(path),
    }
}

/// Whether a sample-weights file is text (`.csv` or `.txt`: one weight per line, read by
/// [`read_csv`]'s rules), or binary.
fn weights_are_text(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("csv" | "txt")
    )
}

/// The layout of a binary sample-weights file: a `.npy` file (by its extension) of shape
/// `(n,)` or `(n, 1)`, `f32` or `f64`; otherwise raw little-endian `f64` without a header.
fn binary_weights_header(path: &Path) -> Result<NpyHeader, KMeansError> {
    if path.extension().and_then(|e| e.to_str()) == Some("npy") {
        let h = read_npy_header(path)?;
        if h.cols != 1 {
            return Err(KMeansError::format(
                path,
                format!(
                    "sample weights must be 1-D (one per row), not {} x {}",
                    h.rows, h.cols
                ),
            ));
        }
        return Ok(h);
    }
    let len = std::fs::metadata(path)
        .map_err(|e| KMeansError::io(path, e))?
        .len();
    if len % 8 != 0 {
        return Err(KMeansError::format(
            path,
            format!("{len} bytes is not a whole number of f64 weights"),
        ));
    }
    Ok(NpyHeader {
        offset: 0,
        rows: len / 8,
        cols: 1,
        dtype: NpyType::F64,
    })
}

/// Reads a whole sample-weights file as `f64`, one weight per row of the data. The format
/// follows the extension:
/// - `.csv` or `.txt`: one weight per line, as [`read_csv`] reads (a first line that does not
///   parse is a header, blank lines are skipped, separators `,` `;` or white space);
/// - `.npy`: shape `(n,)` or `(n, 1)`, `f32` or `f64`;
/// - anything else: raw little-endian `f64` without a header.
///
/// The values are not checked here; [`crate::KMeans::fit_weighted`] and the distributed run
/// check them.
///
/// # Complexity
/// `O(n)`.
///
/// # Errors
/// [`KMeansError::Io`]; [`KMeansError::Format`] for a text line that is not one number (with
/// its line number), a `.npy` file with more than one column or that [`read_npy_header`]
/// refuses, or a raw file whose size is not a multiple of 8 bytes.
///
/// # Examples
/// ```
/// use clustering::data::read_weights;
/// let dir = std::env::temp_dir();
/// let raw = dir.join(format!("km-weights-all-doc-{}.bin", std::process::id()));
/// std::fs::write(&raw, [3.0f64, 0.25].iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>())?;
/// assert_eq!(read_weights(&raw)?, vec![3.0, 0.25]);
/// let csv = dir.join(format!("km-weights-all-doc-{}.csv", std::process::id()));
/// std::fs::write(&csv, "weight\n3\n0.25\n")?;
/// assert_eq!(read_weights(&csv)?, vec![3.0, 0.25]);
/// # std::fs::remove_file(&raw)?;
/// # std::fs::remove_file(&csv)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_weights(path: &Path) -> Result<Vec<f64>, KMeansError> {
    if weights_are_text(path) {
        return Ok(read_csv_columns(path, Some(1))?.0);
    }
    let h = binary_weights_header(path)?;
    read_rows(path, h.offset, h.dtype, 0, h.rows, 1)
}

/// The weights of rows `rows` of a sample-weights file (the formats of [`read_weights`])
/// that must hold one weight for each of `n` rows, as each MPI rank reads its shard: a binary
/// file with one seek and one read; a text file is parsed whole (text cannot be sought by
/// row; use `.npy` when it is too large for each rank to parse).
///
/// # Complexity
/// `O(|rows|)` for binary files, `O(n)` for text.
///
/// # Errors
/// As [`read_weights`]; [`KMeansError::ShapeMismatch`] when the file does not hold `n`
/// weights; [`KMeansError::InvalidParameter`] when `rows` is not within `0..n`.
///
/// # Examples
/// ```
/// use clustering::data::read_weights_shard;
/// let p = std::env::temp_dir().join(format!("km-weights-doc-{}.f64", std::process::id()));
/// let bytes: Vec<u8> = [1.0f64, 2.0, 0.5].iter().flat_map(|w| w.to_le_bytes()).collect();
/// std::fs::write(&p, bytes)?;
/// assert_eq!(read_weights_shard(&p, 3, 1..3)?, vec![2.0, 0.5]);
/// assert!(read_weights_shard(&p, 4, 0..2).is_err());
/// # std::fs::remove_file(&p)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_weights_shard(
    path: &Path,
    n: u64,
    rows: std::ops::Range<u64>,
) -> Result<Vec<f64>, KMeansError> {
    let mismatch = |found: u64| KMeansError::ShapeMismatch {
        what: "sample weights (one per row)",
        expected: n as usize,
        found: found as usize,
    };
    if rows.start > rows.end || rows.end > n {
        return Err(KMeansError::InvalidParameter(format!(
            "weights of rows {rows:?} asked for, of {n} rows"
        )));
    }
    if weights_are_text(path) {
        let mut w = read_weights(path)?;
        if w.len() as u64 != n {
            return Err(mismatch(w.len() as u64));
        }
        w.truncate(rows.end as usize);
        return Ok(w.split_off(rows.start as usize));
    }
    let h = binary_weights_header(path)?;
    if h.rows != n {
        return Err(mismatch(h.rows));
    }
    read_rows(
        path,
        h.offset,
        h.dtype,
        rows.start,
        rows.end - rows.start,
        1,
    )
}

/// Writes a 2-D `f64` array as a `.npy` file (version 1, C order).
///
/// # Errors
/// [`KMeansError::Io`].
pub fn write_npy(path: &Path, a: &Array2<f64>) -> Result<(), KMeansError> {
    use std::io::Write;
    let mut header = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}",
        a.nrows(),
        a.ncols()
    );
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + a.len() * 8);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in a.iter() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let mut f = File::create(path).map_err(|e| KMeansError::io(path, e))?;
    f.write_all(&out).map_err(|e| KMeansError::io(path, e))
}

/// Rows `[start, start + count)` of a row-major little-endian matrix with `cols` columns whose
/// first element is at byte `offset`, as `f64`: one seek and one read.
///
/// # Errors
/// [`KMeansError::Io`] when the file is shorter than the rows asked for.
pub fn read_rows(
    path: &Path,
    offset: u64,
    dtype: NpyType,
    start: u64,
    count: u64,
    cols: u64,
) -> Result<Vec<f64>, KMeansError> {
    let elem = if dtype == NpyType::F64 { 8 } else { 4 };
    let mut f = File::open(path).map_err(|e| KMeansError::io(path, e))?;
    f.seek(SeekFrom::Start(offset + start * cols * elem))
        .map_err(|e| KMeansError::io(path, e))?;
    let mut bytes = vec![0u8; (count * cols * elem) as usize];
    f.read_exact(&mut bytes).map_err(|e| {
        KMeansError::io(
            path,
            format!("reading rows {start}..{}: {e}", start + count),
        )
    })?;
    Ok(match dtype {
        NpyType::F64 => bytes
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect(),
        NpyType::F32 => bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")) as f64)
            .collect(),
    })
}

/// The contiguous rows rank `rank` of `ranks` owns: `[n r / R, n (r + 1) / R)`.
///
/// # Examples
/// ```
/// use clustering::data::shard_range;
/// assert_eq!(shard_range(10, 3, 0), 0..3);
/// assert_eq!(shard_range(10, 3, 2), 6..10);
/// ```
pub fn shard_range(n: u64, ranks: u64, rank: u64) -> std::ops::Range<u64> {
    let ranks = ranks.max(1) as u128;
    let lo = (n as u128 * rank as u128 / ranks) as u64;
    let hi = (n as u128 * (rank as u128 + 1) / ranks) as u64;
    lo..hi
}
