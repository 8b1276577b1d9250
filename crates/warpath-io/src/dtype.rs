//! The element types of arrays on disk (`.npy` dtypes): kind, size and byte order, and a
//! value of any of them widened on its way to an [`crate::Element`]. Both the `.npy` reader
//! and the element types use it; it uses neither.

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
    pub(crate) fn parse(descr: &str) -> Result<Dtype, String> {
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

    pub(crate) fn scalar(&self, b: &[u8]) -> Scalar {
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

/// A value of a `.npy` array, widened, on its way to an [`crate::Element`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    Uint(u64),
    /// A float.
    Float(f64),
}
