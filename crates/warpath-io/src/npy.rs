//! `.npy` files (NumPy's format, versions 1 to 3): reading any boolean, integer or float array
//! into an [`Element`] type, with clear refusals for everything else, and writing.

use std::io::{Read, Write};

pub use crate::dtype::{Dtype, Kind};
use crate::{Element, IoError};

/// The header of a `.npy` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// The element type.
    pub dtype: Dtype,
    /// Whether the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The shape (empty for a 0-d array).
    pub shape: Vec<usize>,
    /// Byte offset of the data.
    pub data_offset: usize,
}

impl NpyHeader {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whether `bytes` start like a `.npy` file.
///
/// ```
/// assert!(warpath_io::npy::is_npy(b"\x93NUMPY\x01\x00"));
/// assert!(!warpath_io::npy::is_npy(b"1,2\n"));
/// ```
pub fn is_npy(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x93NUMPY")
}

fn npy_err(message: impl Into<String>) -> IoError {
    IoError::Npy {
        path: None,
        message: message.into(),
    }
}

/// The value of `'key':` in a header dict (the text up to the next top-level comma).
fn dict_value<'a>(dict: &'a str, key: &str) -> Option<&'a str> {
    let at = dict
        .find(&format!("'{key}'"))
        .or_else(|| dict.find(&format!("\"{key}\"")))?;
    let rest = dict[at + key.len() + 2..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else {
        rest.find([',', '}']).unwrap_or(rest.len())
    };
    Some(rest[..end].trim())
}

/// Parses the header of a `.npy` file.
///
/// # Errors
/// [`IoError::Npy`] for a bad magic string, an unknown version, a truncated or malformed
/// header, or a dtype that is not bool, an integer or float32/float64 (the message names it).
///
/// # Examples
/// ```
/// let mut f = Vec::new();
/// warpath_io::npy::write_npy(&mut f, &[1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
/// let h = warpath_io::npy::parse_header(&f)?;
/// assert_eq!(h.shape, vec![2, 2]);
/// # Ok::<(), warpath_io::IoError>(())
/// ```
pub fn parse_header(bytes: &[u8]) -> Result<NpyHeader, IoError> {
    let (dict, data_offset) = header_dict(bytes)?;
    let descr = dict_value(dict, "descr").ok_or_else(|| npy_err("the header has no descr"))?;
    if descr.starts_with('[') {
        return Err(npy_err(
            "structured arrays (record dtypes) are not supported: save one plain column per array",
        ));
    }
    let dtype = Dtype::parse(descr.trim_matches(['\'', '"'])).map_err(npy_err)?;
    let fortran_order = match dict_value(dict, "fortran_order") {
        Some("True") => true,
        Some("False") => false,
        _ => return Err(npy_err("the header has no fortran_order")),
    };
    Ok(NpyHeader {
        dtype,
        fortran_order,
        shape: header_shape(dict)?,
        data_offset,
    })
}

/// The bytes before the header dict: magic, version and the dict's length (2 bytes in
/// version 1, 4 in versions 2 and 3). Returns the prefix's length and the dict's.
fn prefix_lengths(bytes: &[u8]) -> Result<(usize, usize), IoError> {
    if !is_npy(bytes) {
        return Err(npy_err("not a .npy file (no \\x93NUMPY magic)"));
    }
    let version = *bytes.get(6).ok_or_else(|| npy_err("truncated header"))?;
    let width = match version {
        1 => 2,
        2 | 3 => 4,
        v => return Err(npy_err(format!("unsupported .npy version {v}"))),
    };
    let len = bytes
        .get(8..8 + width)
        .ok_or_else(|| npy_err("truncated header"))?
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | b as usize);
    Ok((8 + width, len))
}

/// The header dict's text and the byte offset of the data after it.
fn header_dict(bytes: &[u8]) -> Result<(&str, usize), IoError> {
    let (start, len) = prefix_lengths(bytes)?;
    let raw = bytes
        .get(start..start.saturating_add(len))
        .ok_or_else(|| npy_err("truncated header"))?;
    let dict = std::str::from_utf8(raw).map_err(|_| npy_err("the header is not text"))?;
    Ok((dict, start + len))
}

/// The `shape` tuple of a header dict.
fn header_shape(dict: &str) -> Result<Vec<usize>, IoError> {
    let shape_text = dict_value(dict, "shape").ok_or_else(|| npy_err("the header has no shape"))?;
    shape_text
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| npy_err(format!("bad shape {shape_text}")))
}

/// The longest header [`read_header`] reads from a stream (numpy writes a few hundred bytes;
/// it refuses headers over 10,000 bytes unless told otherwise).
const MAX_STREAM_HEADER: usize = 1 << 20;

/// Reads and parses the header of a `.npy` file from a stream (e.g. an open file), leaving
/// the stream at the first byte of the data, so that rows can be read by offset
/// ([`NpyHeader::data_offset`]) without reading the whole file.
///
/// # Errors
/// [`IoError::Npy`] as [`parse_header`], or for a header over 1 MiB; [`IoError::Io`] for a
/// failed read (a file shorter than its header is a truncated header).
///
/// # Examples
/// ```
/// let mut f = Vec::new();
/// warpath_io::npy::write_npy(&mut f, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let h = warpath_io::npy::read_header(&mut &f[..])?;
/// assert_eq!(h.shape, vec![2, 2]);
/// assert_eq!(h.data_offset, f.len() - 16); // the data follows the header
/// # Ok::<(), warpath_io::IoError>(())
/// ```
pub fn read_header<R: Read>(mut r: R) -> Result<NpyHeader, IoError> {
    let mut head = vec![0u8; 12];
    let read_exact = |r: &mut R, buf: &mut [u8]| {
        r.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => npy_err("truncated header"),
            _ => IoError::io(None, e),
        })
    };
    read_exact(&mut r, &mut head[..8])?;
    let width = if head[6] == 1 { 2 } else { 4 };
    read_exact(&mut r, &mut head[8..8 + width])?;
    head.truncate(8 + width);
    let (_, len) = prefix_lengths(&head)?;
    if len > MAX_STREAM_HEADER {
        return Err(npy_err(format!("a header of {len} bytes is too long")));
    }
    let at = head.len();
    head.resize(at + len, 0);
    read_exact(&mut r, &mut head[at..])?;
    parse_header(&head)
}

/// The text of a 0-d (or one-element) string array: NumPy's unicode (`<U5`, UTF-32) or bytes
/// (`|S5`) dtypes, trailing NULs removed. `scipy.sparse.save_npz` stores the sparse format
/// (`'csr'`) so.
///
/// # Errors
/// [`IoError::Npy`] as [`parse_header`], for another dtype or shape, or for truncated data.
///
/// # Examples
/// ```
/// let header = b"{'descr': '|S3', 'fortran_order': False, 'shape': (), }\n";
/// let mut f = b"\x93NUMPY\x01\x00".to_vec();
/// f.extend_from_slice(&(header.len() as u16).to_le_bytes());
/// f.extend_from_slice(header);
/// f.extend_from_slice(b"csr");
/// assert_eq!(warpath_io::npy::read_npy_text(&f)?, "csr");
/// # Ok::<(), warpath_io::IoError>(())
/// ```
pub fn read_npy_text(bytes: &[u8]) -> Result<String, IoError> {
    let (dict, at) = header_dict(bytes)?;
    let descr = dict_value(dict, "descr").ok_or_else(|| npy_err("the header has no descr"))?;
    let descr = descr.trim_matches(['\'', '"']);
    let (unicode, big_endian, count) = match descr.as_bytes() {
        [o @ (b'<' | b'>' | b'='), b'U', ..] => (true, *o == b'>', &descr[2..]),
        [b'|', b'S' | b'a', ..] => (false, false, &descr[2..]),
        _ => return Err(npy_err(format!("dtype `{descr}` is not a string type"))),
    };
    let count: usize = count
        .parse()
        .map_err(|_| npy_err(format!("dtype `{descr}` is not a string type")))?;
    if header_shape(dict)?.iter().product::<usize>() != 1 {
        return Err(npy_err("expected one string (a 0-d array)"));
    }
    let width = if unicode { 4 } else { 1 };
    let body = count
        .checked_mul(width)
        .and_then(|n| bytes.get(at..at.checked_add(n)?))
        .ok_or_else(|| npy_err("truncated data"))?;
    let text: String = if unicode {
        body.chunks_exact(4)
            .map(|c| {
                let c: [u8; 4] = c.try_into().expect("4 bytes");
                if big_endian {
                    u32::from_be_bytes(c)
                } else {
                    u32::from_le_bytes(c)
                }
            })
            .map(|u| char::from_u32(u).ok_or_else(|| npy_err("a string that is not Unicode")))
            .collect::<Result<_, _>>()?
    } else {
        String::from_utf8_lossy(body).into_owned()
    };
    Ok(text.trim_end_matches('\0').to_owned())
}

/// An array read from a `.npy` file: its shape (C order) and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct NpyArray<T> {
    /// The shape in C order (rows first).
    pub shape: Vec<usize>,
    /// The values in C order.
    pub data: Vec<T>,
    /// The dtype in the file.
    pub dtype: Dtype,
}

/// Reads a whole `.npy` file from memory as `T`: the same dtype is copied, other accepted
/// dtypes are converted value by value (range-checked), Fortran-order 2-D arrays are
/// transposed into C order.
///
/// # Errors
/// [`IoError::Npy`]: as [`parse_header`]; a dtype `T` does not accept (see
/// [`Element::accepts`]); a value out of `T`'s range (with its index); data shorter than the
/// shape; Fortran order with more than two dimensions.
///
/// # Examples
/// ```
/// let mut f = Vec::new();
/// warpath_io::npy::write_npy(&mut f, &[1i64, -2, 3], &[3])?;
/// let a = warpath_io::npy::read_npy_bytes::<f64>(&f)?;
/// assert_eq!(a.data, vec![1.0, -2.0, 3.0]);
/// assert!(warpath_io::npy::read_npy_bytes::<u32>(&f).is_err()); // -2 is not a u32
/// # Ok::<(), warpath_io::IoError>(())
/// ```
pub fn read_npy_bytes<T: Element>(bytes: &[u8]) -> Result<NpyArray<T>, IoError> {
    let h = parse_header(bytes)?;
    T::accepts(h.dtype).map_err(npy_err)?;
    let n = h
        .shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| npy_err("the shape's size overflows"))?;
    let size = h.dtype.size as usize;
    let body = &bytes[h.data_offset.min(bytes.len())..];
    let need = n.saturating_mul(size);
    if body.len() < need {
        return Err(npy_err(format!(
            "truncated data: the shape {:?} needs {need} bytes, the file has {}",
            h.shape,
            body.len()
        )));
    }
    let body = &body[..need];
    let data: Vec<T> = if h.dtype == T::DTYPE && !h.dtype.big_endian {
        // Same type: a plain little-endian decode (element by element, so alignment is free).
        body.chunks_exact(size).map(T::read_le).collect()
    } else {
        let mut out = Vec::with_capacity(n);
        for (i, c) in body.chunks_exact(size).enumerate() {
            let s = h.dtype.scalar(c);
            out.push(T::from_scalar(s).ok_or_else(|| {
                npy_err(format!(
                    "element {i} ({s:?}) of the {} array does not fit in {}",
                    h.dtype.numpy_name(),
                    T::NAME
                ))
            })?);
        }
        out
    };
    let data = if h.fortran_order && h.shape.len() == 2 {
        let (r, c) = (h.shape[0], h.shape[1]);
        let mut t = Vec::with_capacity(n);
        for i in 0..r {
            for j in 0..c {
                t.push(data[j * r + i]);
            }
        }
        t
    } else if h.fortran_order && h.shape.len() > 2 {
        return Err(npy_err(
            "Fortran-order arrays of more than two dimensions are not supported (save with np.ascontiguousarray)",
        ));
    } else {
        data
    };
    Ok(NpyArray {
        shape: h.shape,
        data,
        dtype: h.dtype,
    })
}

/// Writes the header of a version 1.0 `.npy` file of `T`'s dtype and `shape`; the data (C
/// order, little-endian, [`Element::write_le`]) follows. For streaming arrays whose size is
/// known before their values.
///
/// # Errors
/// [`IoError::Io`] on a failed write.
///
/// # Examples
/// ```
/// use warpath_io::npy::{read_npy_bytes, write_npy_header};
/// let mut f = Vec::new();
/// write_npy_header::<u8, _>(&mut f, &[2, 3])?;
/// f.extend_from_slice(&[0, 1, 2, 2, 1, 0]); // streamed rows
/// assert_eq!(read_npy_bytes::<u8>(&f)?.shape, vec![2, 3]);
/// # Ok::<(), warpath_io::IoError>(())
/// ```
pub fn write_npy_header<T: Element, W: Write>(mut w: W, shape: &[usize]) -> Result<(), IoError> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let shape_text = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}",
        T::DTYPE.descr()
    );
    // Pad with spaces so that the data starts at a multiple of 64 bytes, ending in a newline.
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    header.push('\n');
    let io = |e| IoError::io(None, e);
    w.write_all(b"\x93NUMPY\x01\x00").map_err(io)?;
    w.write_all(&(header.len() as u16).to_le_bytes())
        .map_err(io)?;
    w.write_all(header.as_bytes()).map_err(io)
}

/// Writes `data` (C order) of the given `shape` as a version 1.0 `.npy` file of `T`'s dtype.
///
/// # Errors
/// [`IoError::Format`] when the shape does not match the length; [`IoError::Io`] on a failed
/// write.
///
/// # Examples
/// ```
/// let mut f = Vec::new();
/// warpath_io::npy::write_npy(&mut f, &[1u32, 2, 3], &[3])?;
/// assert_eq!(warpath_io::npy::read_npy_bytes::<u32>(&f)?.data, vec![1, 2, 3]);
/// # Ok::<(), warpath_io::IoError>(())
/// ```
pub fn write_npy<T: Element, W: Write>(
    mut w: W,
    data: &[T],
    shape: &[usize],
) -> Result<(), IoError> {
    if shape.iter().product::<usize>() != data.len() {
        return Err(IoError::Format(format!(
            "shape {shape:?} does not hold {} values",
            data.len()
        )));
    }
    write_npy_header::<T, _>(&mut w, shape)?;
    let io = |e| IoError::io(None, e);
    let mut buf = Vec::with_capacity(data.len().min(1 << 16) * T::DTYPE.size as usize);
    for chunk in data.chunks(1 << 16) {
        buf.clear();
        for &v in chunk {
            v.write_le(&mut buf);
        }
        w.write_all(&buf).map_err(io)?;
    }
    w.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header written the way numpy writes it, for dtypes we do not write ourselves.
    fn numpy_file(descr: &str, fortran: bool, shape: &str, body: &[u8]) -> Vec<u8> {
        let mut h = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        let total = 10 + h.len() + 1;
        h.push_str(&" ".repeat(total.next_multiple_of(64) - total));
        h.push('\n');
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        f.extend_from_slice(&(h.len() as u16).to_le_bytes());
        f.extend_from_slice(h.as_bytes());
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn round_trip_every_type() {
        fn rt<T: Element>(v: &[T]) {
            let mut f = Vec::new();
            write_npy(&mut f, v, &[v.len()]).unwrap();
            assert_eq!((f.len() - v.len() * T::DTYPE.size as usize) % 64, 0);
            let a = read_npy_bytes::<T>(&f).unwrap();
            assert_eq!(a.data, v);
            assert_eq!(a.shape, vec![v.len()]);
        }
        rt(&[0u8, 255]);
        rt(&[0u16, 65535]);
        rt(&[u32::MAX, 0, 7]);
        rt(&[u64::MAX]);
        rt(&[-1i8, 127]);
        rt(&[i16::MIN]);
        rt(&[i32::MIN, 5]);
        rt(&[i64::MIN, i64::MAX]);
        rt(&[1.5f32, -0.0]);
        rt(&[f64::INFINITY, -0.0, 1e-310]);
        rt(&[true, false]);
        rt::<f64>(&[]);
    }

    /// The error message of reading `f` as `T`, which must fail.
    fn refusal<T: Element>(f: &[u8]) -> String {
        read_npy_bytes::<T>(f).unwrap_err().to_string()
    }

    #[test]
    fn conversions_bool_ints_big_endian_fortran() {
        let f = numpy_file("|b1", false, "(3,)", &[1, 0, 1]);
        assert_eq!(read_npy_bytes::<f64>(&f).unwrap().data, vec![1.0, 0.0, 1.0]);
        let f = numpy_file(">i4", false, "(2,)", &[0, 0, 1, 0, 0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(read_npy_bytes::<i64>(&f).unwrap().data, vec![256, -2]);
        assert!(refusal::<u32>(&f).contains("element 1"));
        // 2 x 3 in Fortran order: columns stored one after another
        let body: Vec<u8> = [1.0f64, 4.0, 2.0, 5.0, 3.0, 6.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let f = numpy_file("<f8", true, "(2, 3)", &body);
        let a = read_npy_bytes::<f64>(&f).unwrap();
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.data, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let f = numpy_file("<u1", false, "()", &[9]);
        assert_eq!(read_npy_bytes::<u8>(&f).unwrap().data, vec![9]);
    }

    #[test]
    fn refusals_name_the_problem() {
        for (descr, want) in [
            ("<c16", "complex"),
            ("<U5", "strings"),
            ("|O", "objects"),
            ("<f2", "float16"),
            ("<M8[ns]", "dates"),
        ] {
            let f = numpy_file(descr, false, "(1,)", &[0; 16]);
            let e = refusal::<f64>(&f);
            assert!(e.contains(want), "{descr}: {e}");
        }
        let f = numpy_file("<f8", false, "(4,)", &[0; 16]);
        assert!(refusal::<f64>(&f).contains("truncated"));
        let f = numpy_file("<f8", false, "(1,)", &[0; 8]);
        assert!(refusal::<u32>(&f).contains("float64"));
        assert!(read_npy_bytes::<f32>(&f).is_err());
        assert!(parse_header(b"\x93NUMPY\x09\x00").is_err());
        assert!(parse_header(b"\x93NUMPY\x01").is_err());
        assert!(parse_header(b"1,2,3").is_err());
        let mut s = numpy_file("<f8", false, "(1,)", &[0; 8]);
        s[8] = 0xff; // header length beyond the file
        assert!(parse_header(&s).is_err());
    }

    /// Found while writing the `npy` fuzz target: a dtype whose first character after the
    /// byte order is not ASCII was split inside that character (a panic).
    #[test]
    fn regression_multibyte_dtype_is_refused() {
        for descr in ["<\u{e9}8", "\u{e9}", "|\u{1f600}1", "<"] {
            let f = numpy_file(descr, false, "(1,)", &[0; 8]);
            let e = refusal::<f64>(&f);
            assert!(e.contains("not supported"), "{descr}: {e}");
        }
    }

    /// A valid file read as `T`, written again and read back: the same shape and values
    /// (`x != x`: every NaN alike).
    #[allow(clippy::eq_op)]
    fn assert_round_trips<T: Element>(f: &[u8]) {
        if let Ok(a) = read_npy_bytes::<T>(f) {
            assert_eq!(a.shape.iter().product::<usize>(), a.data.len());
            let mut g = Vec::new();
            write_npy(&mut g, &a.data, &a.shape).unwrap();
            let b = read_npy_bytes::<T>(&g).unwrap();
            assert_eq!(b.shape, a.shape);
            assert!(
                b.data
                    .iter()
                    .zip(&a.data)
                    .all(|(x, y)| x == y || (x != x && y != y))
            );
        }
    }

    proptest::proptest! {
        /// A valid header followed by arbitrary bytes (any dtype byte, order, shape): a typed
        /// error or values that round-trip, never a panic.
        #[test]
        fn prop_mutated_files_fail_typed_or_round_trip(
            kind in proptest::sample::select(vec!["b", "i", "u", "f", "c", "U", "\u{e9}", ""]),
            size in 0u8..10,
            order in proptest::sample::select(vec!["<", ">", "|", "=", ""]),
            dims in proptest::collection::vec(0usize..4, 0..4),
            fortran in proptest::bool::ANY,
            body in proptest::collection::vec(proptest::num::u8::ANY, 0..100),
        ) {
            let shape = match dims.len() {
                1 => format!("({},)", dims[0]),
                _ => format!("({})", dims.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
            };
            let f = numpy_file(&format!("{order}{kind}{size}"), fortran, &shape, &body);
            assert_round_trips::<f64>(&f);
            assert_round_trips::<f32>(&f);
            assert_round_trips::<i16>(&f);
            assert_round_trips::<u64>(&f);
            assert_round_trips::<bool>(&f);
        }

        /// Arbitrary bytes after the magic never panic the reader.
        #[test]
        fn prop_never_panics(tail in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let mut f = b"\x93NUMPY\x01\x00".to_vec();
            f.extend_from_slice(&tail);
            let _ = read_npy_bytes::<f64>(&f);
            let _ = read_npy_bytes::<u8>(&f);
        }
    }
}
