//! Inputs: generated data with planted clusters, CSV and `.npy` files, sample-weights files,
//! and row ranges ("shards") of binary or `.npy` files read by offset, as each MPI rank does.
//! Every format is warpath-io's grammar (tables, `.npy` headers and writing); this module
//! adds only the shard reads by offset that the distributed run needs.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use warpath_io::npy::{self, Dtype, Kind};
use warpath_io::{IoError, Table, TableOptions, parse_table};

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

/// An I/O layer error about `path` as a k-means error: operating-system errors as
/// [`KMeansError::Io`], everything else as [`KMeansError::Format`] (the message without the
/// path, which the k-means error adds).
fn from_io(path: &Path, e: IoError) -> KMeansError {
    match e {
        IoError::Io { error, .. } => KMeansError::io(path, error),
        IoError::Parse {
            line,
            column,
            message,
            ..
        } => KMeansError::format(path, format!("line {line}, column {column}: {message}")),
        IoError::Npy { message, .. } => {
            KMeansError::format(path, format!("not a supported .npy file: {message}"))
        }
        e => KMeansError::format(path, e.to_string()),
    }
}

/// A text table of numbers through warpath-io's one table grammar
/// ([`warpath_io::parse_table`]).
fn read_table(path: &Path) -> Result<Table<f64>, KMeansError> {
    let bytes = std::fs::read(path).map_err(|e| KMeansError::io(path, e))?;
    parse_table::<f64>(&bytes, &TableOptions::default()).map_err(|e| from_io(path, e))
}

/// Reads a CSV, `;`-separated or whitespace-separated file of numbers, one point per line,
/// with warpath-io's table grammar ([`warpath_io::parse_table`], the one `warpath kmeans`
/// reads with): the delimiter found from the first line, `#` comments, blank lines skipped,
/// and a first line taken for a header only when every field of it is a name (a letter or
/// `_` first, not `nan`/`inf`), so a malformed first row is an error, never a dropped point.
///
/// # Errors
/// [`KMeansError::Io`]; [`KMeansError::Format`] with the line and column of a bad number or of
/// a row with a different number of columns.
pub fn read_csv(path: &Path) -> Result<Array2<f64>, KMeansError> {
    let t = read_table(path)?;
    Array2::from_shape_vec((t.rows, t.cols), t.data)
        .map_err(|e| KMeansError::format(path, e.to_string()))
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

/// Parses the header of a `.npy` file (warpath-io's parser, [`warpath_io::npy::read_header`])
/// whose rows can be read by offset, as each MPI rank reads its shard: 1-D or 2-D, C order,
/// little-endian float32 or float64.
///
/// # Errors
/// [`KMeansError::Io`], or [`KMeansError::Format`] for anything else.
pub fn read_npy_header(path: &Path) -> Result<NpyHeader, KMeansError> {
    let bad = |m: String| KMeansError::format(path, format!("not a supported .npy file: {m}"));
    let f = File::open(path).map_err(|e| KMeansError::io(path, e))?;
    let size = f.metadata().map_err(|e| KMeansError::io(path, e))?.len();
    let h = npy::read_header(BufReader::new(f)).map_err(|e| from_io(path, e))?;
    let dtype = if h.dtype == Dtype::new(Kind::Float, 8) {
        NpyType::F64
    } else if h.dtype == Dtype::new(Kind::Float, 4) {
        NpyType::F32
    } else {
        return Err(bad(format!(
            "dtype {} ({}): rows are read by offset from little-endian float32 or float64",
            h.dtype.descr(),
            h.dtype.numpy_name()
        )));
    };
    if h.fortran_order {
        return Err(bad("Fortran order is not supported".into()));
    }
    let (rows, cols) = match h.shape[..] {
        [r, c] => (r as u64, c as u64),
        [r] => (r as u64, 1),
        _ => return Err(bad("the array must be 1-D or 2-D".into())),
    };
    let elem = if dtype == NpyType::F64 { 8 } else { 4 };
    let need = rows
        .checked_mul(cols)
        .and_then(|n| n.checked_mul(elem))
        .and_then(|n| n.checked_add(h.data_offset as u64));
    if need.is_none_or(|need| size < need) {
        return Err(bad("file shorter than its shape says".into()));
    }
    Ok(NpyHeader {
        offset: h.data_offset as u64,
        rows,
        cols,
        dtype,
    })
}

/// Reads a whole 2-D `.npy` file of `f32` or `f64` as `f64` (the files [`read_npy_header`]
/// takes).
///
/// # Errors
/// As [`read_npy_header`].
pub fn read_npy(path: &Path) -> Result<Array2<f64>, KMeansError> {
    let h = read_npy_header(path)?;
    let v = read_rows(path, h.offset, h.dtype, 0, h.rows, h.cols)?;
    Array2::from_shape_vec((h.rows as usize, h.cols as usize), v)
        .map_err(|e| KMeansError::format(path, e.to_string()))
}

/// Reads a matrix of points as `warpath kmeans` reads points and given centroids, with
/// [`warpath_io::read_array`]: a `.npy` file (found by its magic bytes; any bool, integer or
/// float dtype; 2-D), raw little-endian `f64` for a `.bin` file, otherwise a text table
/// ([`read_csv`]'s grammar). `kmeans-mpi` reads `--init-centroids` with it, so a file means the
/// same on one machine and under MPI.
///
/// # Complexity
/// `O(n d)`.
///
/// # Errors
/// [`KMeansError::Io`]; [`KMeansError::Format`] for a malformed file or one that is not a
/// matrix.
///
/// # Examples
/// ```
/// use clustering::data::read_matrix;
/// let p = std::env::temp_dir().join(format!("km-matrix-doc-{}.csv", std::process::id()));
/// std::fs::write(&p, "0.5,1\n2,3\n")?;
/// assert_eq!(read_matrix(&p)?, ndarray::array![[0.5, 1.0], [2.0, 3.0]]);
/// std::fs::write(&p, "x,y\n1,oops\n")?;
/// assert!(read_matrix(&p).unwrap_err().to_string().contains("line 2, column 3"));
/// # std::fs::remove_file(&p)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_matrix(path: &Path) -> Result<Array2<f64>, KMeansError> {
    let bytes = std::fs::read(path).map_err(|e| KMeansError::io(path, e))?;
    parse_matrix(&bytes, path)
}

/// [`read_matrix`] of bytes already read; `path` names the file in errors and decides only
/// whether the bytes are raw (`.bin`).
///
/// # Errors
/// [`KMeansError::Format`] as [`read_matrix`].
///
/// # Examples
/// ```
/// use clustering::data::parse_matrix;
/// let m = parse_matrix(b"\xEF\xBB\xBFx;y\n1;2\n", "c.csv".as_ref())?;
/// assert_eq!(m, ndarray::array![[1.0, 2.0]]);
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn parse_matrix(bytes: &[u8], path: &Path) -> Result<Array2<f64>, KMeansError> {
    let (r, c, data) = warpath_io::parse_array::<f64>(bytes, path)
        .and_then(|a| a.into_matrix("the matrix"))
        .map_err(|e| from_io(path, e))?;
    Array2::from_shape_vec((r, c), data).map_err(|e| KMeansError::format(path, e.to_string()))
}

/// Whether a sample-weights file is text (`.csv` or `.txt`: one weight per line, read by
/// [`read_csv`]'s grammar), or binary.
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
/// - `.csv` or `.txt`: one weight per line, in [`read_csv`]'s grammar (a first line of names is
///   a header, blank lines and `#` comments are skipped);
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
/// its line and column), a `.npy` file with more than one column or that [`read_npy_header`]
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
        let t = read_table(path)?;
        if t.cols > 1 {
            return Err(KMeansError::format(
                path,
                format!(
                    "{} numbers on a line: sample weights are one number per line",
                    t.cols
                ),
            ));
        }
        return Ok(t.data);
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

/// Writes a 2-D `f64` array as a `.npy` file (version 1, C order; warpath-io's writer).
///
/// # Errors
/// [`KMeansError::Io`].
pub fn write_npy(path: &Path, a: &Array2<f64>) -> Result<(), KMeansError> {
    use std::io::Write;
    let a = a.as_standard_layout();
    let values = a.as_slice().expect("a standard-layout array is contiguous");
    let mut out = Vec::with_capacity(128 + values.len() * 8);
    npy::write_npy(&mut out, values, &[a.nrows(), a.ncols()]).map_err(|e| from_io(path, e))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use warpath_io::HEADER_RULE;

    fn temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("clustering-data-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// `--init-centroids` means the same under MPI (`read_matrix`) as in `warpath kmeans`
    /// (`warpath_io::read_array`): the same values, the same refusals.
    #[test]
    fn read_matrix_is_the_command_lines_reader() {
        let mut npy_f4 = Vec::new();
        npy::write_npy(&mut npy_f4, &[1.5f32, -2.0, 3.25, 4.0], &[2, 2]).unwrap();
        let mut npy_i8_1d = Vec::new();
        npy::write_npy(&mut npy_i8_1d, &[1i64, 2], &[2]).unwrap();
        for (name, bytes) in [
            ("a.csv", &b"x,y\n0.5,1\n2,3\n"[..]),
            ("b.csv", b"\xEF\xBB\xBF1;2\n3;4\n"),
            ("c.txt", b"# c\n1 2\n\n3\t4 # x\n"),
            ("d.npy", &npy_f4),
            ("e.dat", &npy_f4),
            ("f.npy", &npy_i8_1d),
            ("g.csv", b"1,x,3\n4,5,6\n"),
            ("h.csv", b"1 2\n3\n"),
        ] {
            let p = temp(name, bytes);
            let local = warpath_io::read_array::<f64>(&p)
                .and_then(|a| a.into_matrix("the matrix"))
                .map(|(r, c, v)| Array2::from_shape_vec((r, c), v).unwrap());
            match (read_matrix(&p), local) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}"),
                (Err(KMeansError::Format { reason, .. }), Err(e)) => {
                    let e = e.to_string();
                    assert!(e.ends_with(&reason), "{name}: {reason} / {e}");
                }
                (a, b) => panic!("{name}: {a:?} / {b:?}"),
            }
        }
    }

    /// The header rule, stated in the error a user sees: a first line of names is a header, a
    /// first line with a number in it is data, and a typo there is an error, never dropped.
    #[test]
    fn header_rule_is_warpath_ios() {
        let p = temp("h1.csv", b"weight,height\n1,2\n");
        assert_eq!(read_csv(&p).unwrap(), ndarray::array![[1.0, 2.0]]);
        let p = temp("h2.csv", b"1,x,3\n4,5,6\n");
        let e = read_csv(&p).unwrap_err().to_string();
        assert!(
            e.contains("line 1, column 3") && e.contains(HEADER_RULE),
            "{e}"
        );
        let p = temp("h3.csv", b"0x10\n5\n");
        let e = read_weights(&p).unwrap_err().to_string();
        assert!(
            e.contains("line 1, column 1") && e.contains(HEADER_RULE),
            "{e}"
        );
        // a BOM before the header is not part of its first name
        let p = temp("h4.csv", b"\xEF\xBB\xBFw\n2\n3\n");
        assert_eq!(read_weights(&p).unwrap(), vec![2.0, 3.0]);
    }

    #[test]
    fn npy_headers_for_shards_are_checked_not_trusted() {
        let mut f = Vec::new();
        npy::write_npy(&mut f, &[1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        let p = temp("s.npy", &f);
        let h = read_npy_header(&p).unwrap();
        assert_eq!((h.rows, h.cols, h.dtype), (2, 2, NpyType::F64));
        assert_eq!(h.offset as usize, f.len() - 32);
        let p = temp("short.npy", &f[..f.len() - 1]);
        let e = read_npy_header(&p).unwrap_err().to_string();
        assert!(e.contains("shorter than its shape"), "{e}");
        let mut g = Vec::new();
        npy::write_npy(&mut g, &[1i32, 2], &[2]).unwrap();
        let p = temp("i4.npy", &g);
        let e = read_npy_header(&p).unwrap_err().to_string();
        assert!(e.contains("<i4") && e.contains("float32 or float64"), "{e}");
        for bad in [
            &b"\x93NUM"[..],
            b"\x93NUMPY\x01\x00\xff\xff{",
            b"not numpy at all",
        ] {
            let p = temp("bad.npy", bad);
            assert!(
                matches!(read_npy_header(&p), Err(KMeansError::Format { .. })),
                "{bad:?}"
            );
        }
    }
}
