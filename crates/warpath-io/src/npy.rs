//! `.npy` files (NumPy's format, versions 1 to 3): reading any boolean, integer or float array
//! into an [`Element`] type, with clear refusals for everything else, and writing.

use std::io::Write;

use crate::element::Scalar;
use crate::{Element, IoError};

/// The kind of a dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `b1`.
    Bool,
    /// `i1`, `i2`, `i4`, `i8`.
    Int,
    /// `u1`, `u2`, `u4`, `u8`.
    Uint,
    /// `f4`, `f8`.
    Float,
}

/// A readable dtype: kind, size in bytes and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dtype {
    /// The kind.
    pub kind: Kind,
    /// Bytes per element.
    pub size: u8,
    /// Big-endian (`>`); little-endian and single bytes are `false`.
    pub big_endian: bool,
}

impl Dtype {
    /// A little-endian dtype.
    pub const fn new(kind: Kind, size: u8) -> Self {
        Dtype {
            kind,
            size,
            big_endian: false,
        }
    }

    /// NumPy's name: `float64`, `uint8`, `bool`, ...
    ///
    /// ```
    /// use warpath_io::npy::{Dtype, Kind};
    /// assert_eq!(Dtype::new(Kind::Float, 8).numpy_name(), "float64");
    /// ```
    pub fn numpy_name(&self) -> String {
        let bits = self.size as u32 * 8;
        match self.kind {
            Kind::Bool => "bool".into(),
            Kind::Int => format!("int{bits}"),
            Kind::Uint => format!("uint{bits}"),
            Kind::Float => format!("float{bits}"),
        }
    }

    /// The `descr` string: `<f8`, `|b1`, `>i4`.
    pub fn descr(&self) -> String {
        let order = if self.size == 1 {
            '|'
        } else if self.big_endian {
            '>'
        } else {
            '<'
        };
        let c = match self.kind {
            Kind::Bool => 'b',
            Kind::Int => 'i',
            Kind::Uint => 'u',
            Kind::Float => 'f',
        };
        format!("{order}{c}{}", self.size)
    }

    /// Parses a `descr`; `Err` says why it is not readable.
    fn parse(descr: &str) -> Result<Dtype, String> {
        let refuse = |what: &str| {
            Err(format!(
                "dtype `{descr}` ({what}) is not supported: warpath reads bool, integer and \
                 float32/float64 arrays"
            ))
        };
        let (order, rest) = match descr.chars().next() {
            Some(c @ ('<' | '>' | '|' | '=')) => (c, &descr[1..]),
            _ => ('=', descr),
        };
        // The kind is one ASCII letter; split after the first character, whatever its width
        // (a multi-byte first character is refused below, not split in half).
        let (c, size) = rest.split_at(rest.chars().next().map_or(0, char::len_utf8));
        let size = match (c, size.parse::<u8>()) {
            ("c", _) => return refuse("complex"),
            ("U" | "S" | "a", _) => return refuse("strings"),
            ("O", _) => return refuse("Python objects"),
            ("V", _) => return refuse("structured or void"),
            ("M" | "m", _) => return refuse("dates and times"),
            (_, Ok(size)) => size,
            (_, Err(_)) => return refuse("not a plain number type"),
        };
        let kind = match (c, size) {
            ("b", 1) => Kind::Bool,
            ("i", 1 | 2 | 4 | 8) => Kind::Int,
            ("u", 1 | 2 | 4 | 8) => Kind::Uint,
            ("f", 4 | 8) => Kind::Float,
            ("f", 2) => return refuse("float16"),
            ("f", _) => return refuse("extended-precision float"),
            _ => return refuse("unknown"),
        };
        let big_endian = order == '>' || (order == '=' && cfg!(target_endian = "big"));
        Ok(Dtype {
            kind,
            size,
            big_endian,
        })
    }

    fn scalar(&self, b: &[u8]) -> Scalar {
        macro_rules! num {
            ($t:ty) => {{
                let a: [u8; size_of::<$t>()] = b.try_into().expect("element size");
                if self.big_endian {
                    <$t>::from_be_bytes(a)
                } else {
                    <$t>::from_le_bytes(a)
                }
            }};
        }
        match (self.kind, self.size) {
            (Kind::Bool, _) => Scalar::Bool(b[0] != 0),
            (Kind::Int, 1) => Scalar::Int(b[0] as i8 as i64),
            (Kind::Int, 2) => Scalar::Int(num!(i16) as i64),
            (Kind::Int, 4) => Scalar::Int(num!(i32) as i64),
            (Kind::Int, _) => Scalar::Int(num!(i64)),
            (Kind::Uint, 1) => Scalar::Uint(b[0] as u64),
            (Kind::Uint, 2) => Scalar::Uint(num!(u16) as u64),
            (Kind::Uint, 4) => Scalar::Uint(num!(u32) as u64),
            (Kind::Uint, _) => Scalar::Uint(num!(u64)),
            (Kind::Float, 4) => Scalar::Float(num!(f32) as f64),
            (Kind::Float, _) => Scalar::Float(num!(f64)),
        }
    }
}

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
    if !is_npy(bytes) {
        return Err(npy_err("not a .npy file (no \\x93NUMPY magic)"));
    }
    let version = *bytes.get(6).ok_or_else(|| npy_err("truncated header"))?;
    let (len, start): (usize, usize) = match version {
        1 => (
            u16::from_le_bytes(
                bytes
                    .get(8..10)
                    .ok_or_else(|| npy_err("truncated header"))?
                    .try_into()
                    .expect("2 bytes"),
            ) as usize,
            10,
        ),
        2 | 3 => (
            u32::from_le_bytes(
                bytes
                    .get(8..12)
                    .ok_or_else(|| npy_err("truncated header"))?
                    .try_into()
                    .expect("4 bytes"),
            ) as usize,
            12,
        ),
        v => return Err(npy_err(format!("unsupported .npy version {v}"))),
    };
    let raw = bytes
        .get(start..start.saturating_add(len))
        .ok_or_else(|| npy_err("truncated header"))?;
    let dict = std::str::from_utf8(raw).map_err(|_| npy_err("the header is not text"))?;
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
    let shape_text = dict_value(dict, "shape").ok_or_else(|| npy_err("the header has no shape"))?;
    let shape = shape_text
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| npy_err(format!("bad shape {shape_text}")))?;
    Ok(NpyHeader {
        dtype,
        fortran_order,
        shape,
        data_offset: start + len,
    })
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

    #[test]
    fn conversions_bool_ints_big_endian_fortran() {
        let f = numpy_file("|b1", false, "(3,)", &[1, 0, 1]);
        assert_eq!(read_npy_bytes::<f64>(&f).unwrap().data, vec![1.0, 0.0, 1.0]);
        let f = numpy_file(">i4", false, "(2,)", &[0, 0, 1, 0, 0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(read_npy_bytes::<i64>(&f).unwrap().data, vec![256, -2]);
        assert!(
            read_npy_bytes::<u32>(&f)
                .unwrap_err()
                .to_string()
                .contains("element 1")
        );
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
            let e = read_npy_bytes::<f64>(&f).unwrap_err().to_string();
            assert!(e.contains(want), "{descr}: {e}");
        }
        let f = numpy_file("<f8", false, "(4,)", &[0; 16]);
        assert!(
            read_npy_bytes::<f64>(&f)
                .unwrap_err()
                .to_string()
                .contains("truncated")
        );
        let f = numpy_file("<f8", false, "(1,)", &[0; 8]);
        assert!(
            read_npy_bytes::<u32>(&f)
                .unwrap_err()
                .to_string()
                .contains("float64")
        );
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
            let e = read_npy_bytes::<f64>(&f).unwrap_err().to_string();
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
