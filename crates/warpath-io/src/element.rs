//! The element types the I/O layer reads and writes: integers, floats and booleans, with their
//! text forms and their `.npy` dtypes.

use crate::dtype::{Dtype, Kind, Scalar};

mod sealed {
    pub trait Sealed {}
}

/// `write_le` and `read_le` of a number type.
macro_rules! le_methods {
    ($t:ty) => {
        #[inline]
        fn write_le(self, out: &mut Vec<u8>) {
            out.extend_from_slice(&self.to_le_bytes());
        }
        #[inline]
        fn read_le(b: &[u8]) -> Self {
            <$t>::from_le_bytes(b.try_into().expect("element size"))
        }
        #[inline]
        fn default_value() -> Self {
            <$t>::default()
        }
    };
}

/// An element type of tables and arrays: `u8`..`u64`, `i8`..`i64`, `f32`, `f64`, `bool`.
///
/// Text: integers are decimal (`-12`, `+7`); floats also take exponents, `inf`, `-inf`,
/// `nan` (any case). `.npy`: see [`Element::accepts`] for which dtypes convert.
pub trait Element:
    Copy + Send + Sync + PartialEq + std::fmt::Debug + sealed::Sealed + 'static
{
    /// The type's name in messages (`u32`, `f64`, ...).
    const NAME: &'static str;
    /// The dtype this type is written as.
    const DTYPE: Dtype;
    /// Parses a number at the start of `text`; returns it and the bytes used, or `None`.
    fn parse_prefix(text: &[u8]) -> Option<(Self, usize)>;
    /// Appends the shortest text that reads back as the same value.
    fn write_text(self, out: &mut Vec<u8>);
    /// Whether arrays of dtype `d` can be read as this type (values are range-checked one by
    /// one): integers take booleans and integers; floats take booleans, integers and floats
    /// no wider than themselves. `Err` says why not.
    fn accepts(d: Dtype) -> Result<(), String>;
    /// The value of a `.npy` scalar, `None` when it is out of range.
    fn from_scalar(s: Scalar) -> Option<Self>;
    /// Little-endian bytes.
    fn write_le(self, out: &mut Vec<u8>);
    /// The value of little-endian bytes (`b.len()` is the type's size).
    fn read_le(b: &[u8]) -> Self;
    /// Zero (`false`), to fill buffers before they are written.
    fn default_value() -> Self;
}

fn refuse_float_to_int(d: Dtype, name: &str) -> Result<(), String> {
    match d.kind {
        Kind::Float => Err(format!(
            "{} values cannot be read as {name} (a float type keeps them: e.g. --type f64)",
            d.numpy_name()
        )),
        _ => Ok(()),
    }
}

fn parse_int_prefix(text: &[u8], signed: bool) -> Option<(i128, usize)> {
    let mut i = 0;
    let neg = match text.first() {
        Some(b'-') if signed => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut v: i128 = 0;
    while let Some(&c) = text.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        v = v * 10 + (c - b'0') as i128;
        if v > u64::MAX as i128 {
            return None;
        }
        i += 1;
    }
    if i == start {
        return None;
    }
    Some((if neg { -v } else { v }, i))
}

macro_rules! int_element {
    ($t:ty, $signed:expr, $kind:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            const DTYPE: Dtype = Dtype::new($kind, size_of::<$t>() as u8);
            #[inline]
            fn parse_prefix(text: &[u8]) -> Option<(Self, usize)> {
                let (v, n) = parse_int_prefix(text, $signed)?;
                Some((<$t>::try_from(v).ok()?, n))
            }
            #[inline]
            fn write_text(self, out: &mut Vec<u8>) {
                out.extend_from_slice(itoa::Buffer::new().format(self).as_bytes());
            }
            fn accepts(d: Dtype) -> Result<(), String> {
                refuse_float_to_int(d, Self::NAME)
            }
            #[inline]
            fn from_scalar(s: Scalar) -> Option<Self> {
                match s {
                    Scalar::Bool(b) => Some(b as $t),
                    Scalar::Int(v) => <$t>::try_from(v).ok(),
                    Scalar::Uint(v) => <$t>::try_from(v).ok(),
                    Scalar::Float(_) => None,
                }
            }
            le_methods!($t);
        }
    };
}
int_element!(u8, false, Kind::Uint);
int_element!(u16, false, Kind::Uint);
int_element!(u32, false, Kind::Uint);
int_element!(u64, false, Kind::Uint);
int_element!(i8, true, Kind::Int);
int_element!(i16, true, Kind::Int);
int_element!(i32, true, Kind::Int);
int_element!(i64, true, Kind::Int);

macro_rules! float_element {
    ($t:ty) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            const DTYPE: Dtype = Dtype::new(Kind::Float, size_of::<$t>() as u8);
            #[inline]
            fn parse_prefix(text: &[u8]) -> Option<(Self, usize)> {
                fast_float2::parse_partial::<$t, _>(text).ok()
            }
            #[inline]
            fn write_text(self, out: &mut Vec<u8>) {
                if self.is_nan() {
                    out.extend_from_slice(b"nan");
                } else if self.is_infinite() {
                    out.extend_from_slice(if self > 0.0 { b"inf" } else { b"-inf" });
                } else {
                    out.extend_from_slice(ryu::Buffer::new().format_finite(self).as_bytes());
                }
            }
            fn accepts(d: Dtype) -> Result<(), String> {
                if d.kind == Kind::Float && d.size as usize > size_of::<$t>() {
                    return Err(format!(
                        "{} values cannot be read as {} without rounding (use a 64-bit float type)",
                        d.numpy_name(),
                        Self::NAME
                    ));
                }
                Ok(())
            }
            #[inline]
            fn from_scalar(s: Scalar) -> Option<Self> {
                Some(match s {
                    Scalar::Bool(b) => b as u8 as $t,
                    Scalar::Int(v) => v as $t,
                    Scalar::Uint(v) => v as $t,
                    Scalar::Float(v) => v as $t,
                })
            }
            le_methods!($t);
        }
    };
}
float_element!(f32);
float_element!(f64);

impl sealed::Sealed for bool {}
impl Element for bool {
    const NAME: &'static str = "bool";
    const DTYPE: Dtype = Dtype::new(Kind::Bool, 1);
    fn parse_prefix(text: &[u8]) -> Option<(Self, usize)> {
        for (word, v) in [
            (&b"true"[..], true),
            (b"false", false),
            (b"True", true),
            (b"False", false),
            (b"1", true),
            (b"0", false),
        ] {
            if text.starts_with(word) {
                return Some((v, word.len()));
            }
        }
        None
    }
    fn write_text(self, out: &mut Vec<u8>) {
        out.extend_from_slice(if self { b"true" } else { b"false" });
    }
    fn accepts(d: Dtype) -> Result<(), String> {
        match d.kind {
            Kind::Bool => Ok(()),
            _ => Err(format!("{} values cannot be read as bool", d.numpy_name())),
        }
    }
    fn from_scalar(s: Scalar) -> Option<Self> {
        match s {
            Scalar::Bool(b) => Some(b),
            _ => None,
        }
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
    fn read_le(b: &[u8]) -> Self {
        b[0] != 0
    }
    fn default_value() -> Self {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_exactly_and_refuse_overflow() {
        assert_eq!(u32::parse_prefix(b"4294967295,"), Some((u32::MAX, 10)));
        assert_eq!(u32::parse_prefix(b"4294967296"), None);
        assert_eq!(u32::parse_prefix(b"-1"), None);
        assert_eq!(i32::parse_prefix(b"-2147483648"), Some((i32::MIN, 11)));
        assert_eq!(i64::parse_prefix(b"+7x"), Some((7, 2)));
        assert_eq!(
            u64::parse_prefix(b"18446744073709551615"),
            Some((u64::MAX, 20))
        );
        assert_eq!(u64::parse_prefix(b"99999999999999999999999"), None);
        assert_eq!(u8::parse_prefix(b"x"), None);
        assert_eq!(u8::parse_prefix(b""), None);
    }

    #[test]
    fn floats_round_trip_including_specials() {
        for v in [
            0.0,
            -0.0,
            1.5,
            -1e-300,
            5e-324,
            f64::MAX,
            1.0 / 3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let mut s = Vec::new();
            v.write_text(&mut s);
            let (back, n) = f64::parse_prefix(&s).unwrap();
            assert_eq!(n, s.len());
            assert_eq!(
                back.to_bits(),
                v.to_bits(),
                "{}",
                String::from_utf8_lossy(&s)
            );
        }
        let mut s = Vec::new();
        f64::NAN.write_text(&mut s);
        assert!(f64::parse_prefix(&s).unwrap().0.is_nan());
        for t in ["NaN", "nan", "-inf", "Infinity", "1e3", "1E-3", ".5", "+2"] {
            assert!(f64::parse_prefix(t.as_bytes()).is_some(), "{t}");
        }
        assert_eq!(f32::parse_prefix(b"0.1").unwrap().0, 0.1f32);
    }

    #[test]
    fn scalar_conversions_check_ranges() {
        assert_eq!(u8::from_scalar(Scalar::Int(255)), Some(255));
        assert_eq!(u8::from_scalar(Scalar::Int(256)), None);
        assert_eq!(u32::from_scalar(Scalar::Int(-1)), None);
        assert_eq!(i64::from_scalar(Scalar::Uint(u64::MAX)), None);
        assert_eq!(u32::from_scalar(Scalar::Float(1.0)), None);
        assert_eq!(f64::from_scalar(Scalar::Bool(true)), Some(1.0));
        assert_eq!(u32::from_scalar(Scalar::Bool(true)), Some(1));
        assert!(u32::accepts(Dtype::new(Kind::Float, 8)).is_err());
        assert!(f32::accepts(Dtype::new(Kind::Float, 8)).is_err());
        assert!(f64::accepts(Dtype::new(Kind::Int, 8)).is_ok());
        assert!(bool::accepts(Dtype::new(Kind::Int, 1)).is_err());
    }
}
