//! The sealed element traits: which types the primitives accept and how keys are ordered.

use std::fmt::Debug;
use std::hash::Hash;

use gpu_runtime::DeviceScalar;

mod sealed {
    pub trait Sealed {}
}

/// A plain 4- or 8-byte number the primitives (and their GPU kernels) move around:
/// `u32`, `i32`, `u64`, `i64`, `f32`, `f64`. Sealed: it cannot be implemented outside this crate.
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + Debug + PartialEq + Default + DeviceScalar + 'static
{
    /// The type's name (`"u32"`, `"f64"`, ...).
    const NAME: &'static str;
}

/// The unsigned integers keys are sorted as (`u32` for 4-byte keys, `u64` for 8-byte keys).
/// Sealed.
pub trait RadixBits:
    sealed::Sealed + Copy + Send + Sync + Debug + Ord + Hash + Default + DeviceScalar + 'static
{
    /// Number of 8-bit digits (4 or 8).
    const DIGITS: usize;
    /// The 8-bit digit `pass` (0 = least significant).
    fn digit(self, pass: usize) -> usize;
    /// All bits complemented (descending order).
    fn complement(self) -> Self;
    /// Widened to `u64`.
    fn to_u64(self) -> u64;
    /// Narrowed from `u64` (the value must fit).
    fn from_u64(v: u64) -> Self;
}

impl sealed::Sealed for u32 {}
impl sealed::Sealed for u64 {}
impl sealed::Sealed for i32 {}
impl sealed::Sealed for i64 {}
impl sealed::Sealed for f32 {}
impl sealed::Sealed for f64 {}

/// The radix words: 8-bit digits, `DIGITS` of them.
macro_rules! radix_bits {
    ($t:ty, $digits:literal) => {
        impl RadixBits for $t {
            const DIGITS: usize = $digits;
            #[inline(always)]
            fn digit(self, pass: usize) -> usize {
                ((self >> (8 * pass)) & 0xFF) as usize
            }
            #[inline(always)]
            fn complement(self) -> Self {
                !self
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                u64::from(self)
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
        }
    };
}
radix_bits!(u32, 4);
radix_bits!(u64, 8);

/// A key the radix sort, `distinct` and min/max accept: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`.
///
/// Keys are ordered through an order-preserving bijection onto unsigned integers
/// ([`SortKey::to_ordered`]). For integers that is their usual order. For floats it is a
/// **total order** that refines numpy's sort order (every NaN last, whatever its sign bit):
///
/// ```text
/// -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN (payload ascending) < -NaN (payload descending)
/// ```
///
/// that is Rust's [`f64::total_cmp`] order with the negative NaNs moved from the front to the
/// back. Where numpy sees ties (`-0.0 == +0.0`, NaN against NaN) this order still decides for
/// the key sorts: every `-0.0` before every `+0.0`, NaNs by their bits ([`crate::argsort`]
/// instead keeps such ties in index order, as numpy's stable argsort). The transform flips all bits of
/// negative numbers and sets the sign bit of non-negative ones, then rotates the range so that
/// the negative-NaN block (which would sort below `-inf`) comes after the positive NaNs. It is a
/// bijection, so sorting never changes a key's bits.
///
/// Which keys `distinct` treats as one value is a separate choice, [`Equality`]: numpy's by
/// default (`-0.0 == +0.0`, all NaNs one value), or bitwise.
///
/// Sealed: it cannot be implemented outside this crate.
pub trait SortKey: Element + PartialOrd {
    /// The unsigned integer the key is ordered as.
    type Bits: RadixBits;
    /// 0 unsigned, 1 signed, 2 float (the kernels' `kind` argument).
    const KIND: u32;
    /// The order-preserving bijection onto [`SortKey::Bits`].
    fn to_ordered(self) -> Self::Bits;
    /// The inverse of [`SortKey::to_ordered`].
    fn from_ordered(bits: Self::Bits) -> Self;
    /// The class of ordered bits under [`Equality::Numeric`]: two keys are numerically equal
    /// exactly when their classes are. The identity for integers; for floats it maps `-0.0`
    /// to `+0.0` and every NaN to the first NaN, so it is non-decreasing in the ordered bits
    /// (sorted keys have sorted classes, and each class is one run).
    #[doc(hidden)]
    #[inline(always)]
    fn numeric_class(bits: Self::Bits) -> Self::Bits {
        bits
    }
}

/// When [`distinct`](crate::distinct) and its variants treat two keys as the same value.
///
/// Integers: both are `==`. Floats: [`Equality::Numeric`] (the default) is numpy's
/// `unique(..., equal_nan=True)`: `-0.0` equals `+0.0` and all NaNs (any sign, any payload) are
/// one value; [`Equality::Bitwise`] compares the bits, so `-0.0` and `+0.0`, and NaNs with
/// different bits, are different values.
///
/// # Examples
/// ```
/// use gpu_primitives::Equality;
/// assert!(Equality::Numeric.eq(-0.0f64, 0.0));
/// assert!(Equality::Numeric.eq(f32::NAN, -f32::NAN));
/// assert!(!Equality::Bitwise.eq(-0.0f64, 0.0));
/// assert!(Equality::Bitwise.eq(f64::NAN, f64::NAN)); // same bits
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Equality {
    /// numpy's: `-0.0 == +0.0`, all NaNs are one value (the default).
    #[default]
    Numeric,
    /// Equal bits: `-0.0` and `+0.0` differ, and so do NaNs whose bits differ.
    Bitwise,
}

impl Equality {
    /// Whether `a` and `b` are the same value under this equality (written with float
    /// comparisons, independently of the bit transforms the algorithms use).
    pub fn eq<K: SortKey>(self, a: K, b: K) -> bool {
        match self {
            // `x != x` only for NaN
            #[allow(clippy::eq_op)]
            Equality::Numeric => a == b || (a != a && b != b),
            Equality::Bitwise => a.to_ordered() == b.to_ordered(),
        }
    }

    /// The class of ordered bits `b` of a `K` key: keys are the same value exactly when their
    /// classes are equal.
    #[inline(always)]
    pub(crate) fn class<K: SortKey>(self, b: K::Bits) -> K::Bits {
        match self {
            Equality::Numeric => K::numeric_class(b),
            Equality::Bitwise => b,
        }
    }
}

/// A number the sum, scan and reduce operations accept. Sums accumulate in a 64-bit type:
/// `u32 -> u64`, `i32 -> i64`, `u64 -> u64`, `i64 -> i64` (integer sums wrap on overflow, like
/// `wrapping_add`), `f32 -> f64`, `f64 -> f64`. Sealed.
pub trait Summable: Element {
    /// The accumulator and result type of sums and scans.
    type Sum: Element + std::ops::Add<Output = Self::Sum>;
    /// `self` converted to the accumulator type.
    fn widen(self) -> Self::Sum;
    /// `a + b` in the accumulator type (wrapping for integers).
    fn add(a: Self::Sum, b: Self::Sum) -> Self::Sum;
}

pub(crate) const F32_NEG_NAN_BLOCK: u32 = 0x007F_FFFF;
pub(crate) const F64_NEG_NAN_BLOCK: u64 = 0x000F_FFFF_FFFF_FFFF;
/// Ordered bits of `-0.0`, `+0.0` and `+inf` (`f32`); every NaN orders above `+inf`.
pub(crate) const F32_ORD_NEG_ZERO: u32 = 0x7F80_0000;
pub(crate) const F32_ORD_POS_ZERO: u32 = 0x7F80_0001;
pub(crate) const F32_ORD_INF: u32 = 0xFF00_0001;
/// The same for `f64`.
pub(crate) const F64_ORD_NEG_ZERO: u64 = 0x7FF0_0000_0000_0000;
pub(crate) const F64_ORD_POS_ZERO: u64 = 0x7FF0_0000_0000_0001;
pub(crate) const F64_ORD_INF: u64 = 0xFFE0_0000_0000_0001;

macro_rules! element {
    ($t:ty, $name:literal) => {
        impl Element for $t {
            const NAME: &'static str = $name;
        }
    };
}
element!(u32, "u32");
element!(i32, "i32");
element!(u64, "u64");
element!(i64, "i64");
element!(f32, "f32");
element!(f64, "f64");

/// The integer keys: unsigned bits as they are, signed ones with the sign bit flipped
/// (`$flip`), so that unsigned order is numeric order.
macro_rules! int_key {
    ($t:ty, $bits:ty, $kind:literal, $flip:literal) => {
        impl SortKey for $t {
            type Bits = $bits;
            const KIND: u32 = $kind;
            #[inline(always)]
            fn to_ordered(self) -> $bits {
                (self as $bits) ^ $flip
            }
            #[inline(always)]
            fn from_ordered(bits: $bits) -> Self {
                (bits ^ $flip) as $t
            }
        }
    };
}
int_key! { u32, u32, 0, 0 }
int_key! { u64, u64, 0, 0 }
int_key! { i32, u32, 1, 0x8000_0000 }
int_key! { i64, u64, 1, 0x8000_0000_0000_0000 }

/// The float keys: the sign bit flipped (all bits of a negative), so that unsigned order is
/// numeric order, then shifted so that negative NaNs order above `+inf` with the positive
/// ones. `$neg_nan`, `$neg_zero`, `$pos_zero` and `$inf` are the type's constants above.
macro_rules! float_key {
    ($t:ty, $bits:ty, $neg_nan:ident, $neg_zero:ident, $pos_zero:ident, $inf:ident) => {
        impl SortKey for $t {
            type Bits = $bits;
            const KIND: u32 = 2;
            #[inline(always)]
            fn to_ordered(self) -> $bits {
                const SIGN: $bits = 1 << (<$bits>::BITS - 1);
                let b = self.to_bits();
                let t = if b & SIGN != 0 { !b } else { b | SIGN };
                t.wrapping_sub($neg_nan)
            }
            #[inline(always)]
            fn from_ordered(bits: $bits) -> Self {
                const SIGN: $bits = 1 << (<$bits>::BITS - 1);
                let t = bits.wrapping_add($neg_nan);
                <$t>::from_bits(if t & SIGN != 0 { t & !SIGN } else { !t })
            }
            #[inline(always)]
            fn numeric_class(b: $bits) -> $bits {
                if b == $neg_zero {
                    $pos_zero
                } else {
                    b.min($inf + 1)
                }
            }
        }
    };
}
float_key! { f32, u32, F32_NEG_NAN_BLOCK, F32_ORD_NEG_ZERO, F32_ORD_POS_ZERO, F32_ORD_INF }
float_key! { f64, u64, F64_NEG_NAN_BLOCK, F64_ORD_NEG_ZERO, F64_ORD_POS_ZERO, F64_ORD_INF }

macro_rules! summable_int {
    ($t:ty, $sum:ty) => {
        impl Summable for $t {
            type Sum = $sum;
            #[inline(always)]
            fn widen(self) -> $sum {
                self as $sum
            }
            #[inline(always)]
            fn add(a: $sum, b: $sum) -> $sum {
                a.wrapping_add(b)
            }
        }
    };
}
summable_int!(u32, u64);
summable_int!(i32, i64);
summable_int!(u64, u64);
summable_int!(i64, i64);

impl Summable for f32 {
    type Sum = f64;
    #[inline(always)]
    fn widen(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn add(a: f64, b: f64) -> f64 {
        a + b
    }
}
impl Summable for f64 {
    type Sum = f64;
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
    #[inline(always)]
    fn add(a: f64, b: f64) -> f64 {
        a + b
    }
}

/// Compares two keys in the crate's total order (see [`SortKey`]).
///
/// # Examples
/// ```
/// use std::cmp::Ordering;
/// use gpu_primitives::total_cmp;
/// assert_eq!(total_cmp(&-0.0f32, &0.0), Ordering::Less);
/// assert_eq!(total_cmp(&f64::NAN, &f64::INFINITY), Ordering::Greater);
/// ```
pub fn total_cmp<K: SortKey>(a: &K, b: &K) -> std::cmp::Ordering {
    a.to_ordered().cmp(&b.to_ordered())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_order_is_total_and_documented() {
        let neg_nan = f32::from_bits(0xFFC0_0000);
        let v = [
            f32::NEG_INFINITY,
            -1.0,
            -f32::MIN_POSITIVE,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
            1.0,
            f32::INFINITY,
            f32::NAN,
            neg_nan,
        ];
        for w in v.windows(2) {
            assert!(w[0].to_ordered() < w[1].to_ordered(), "{w:?}");
        }
        for x in v {
            assert_eq!(f32::from_ordered(x.to_ordered()).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn f32_transform_is_a_bijection_on_samples() {
        for b in (0u32..=u32::MAX).step_by(65_521) {
            let x = f32::from_bits(b);
            assert_eq!(f32::from_ordered(x.to_ordered()).to_bits(), b);
            assert_eq!(f32::from_ordered(b).to_ordered(), b);
        }
        for b in [
            0u32,
            1,
            0x7F_FFFE,
            0x7F_FFFF,
            0x80_0000,
            u32::MAX,
            u32::MAX - 1,
        ] {
            assert_eq!(f32::from_ordered(b).to_ordered(), b);
        }
    }

    #[test]
    fn numeric_classes_match_float_equality() {
        assert_eq!((-0.0f32).to_ordered(), F32_ORD_NEG_ZERO);
        assert_eq!(0.0f32.to_ordered(), F32_ORD_POS_ZERO);
        assert_eq!(f32::INFINITY.to_ordered(), F32_ORD_INF);
        assert_eq!((-0.0f64).to_ordered(), F64_ORD_NEG_ZERO);
        assert_eq!(0.0f64.to_ordered(), F64_ORD_POS_ZERO);
        assert_eq!(f64::INFINITY.to_ordered(), F64_ORD_INF);
        let f32s = [
            f32::NEG_INFINITY,
            -1.0,
            -f32::from_bits(1),
            -0.0,
            0.0,
            f32::from_bits(1),
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7F80_0001),
            f32::from_bits(0xFFFF_FFFF),
            f32::from_bits(0x7FFF_FFFF),
        ];
        for &a in &f32s {
            for &b in &f32s {
                let same = f32::numeric_class(a.to_ordered()) == f32::numeric_class(b.to_ordered());
                assert_eq!(same, Equality::Numeric.eq(a, b), "{a:?} {b:?}");
                let (a, b) = (a as f64, b as f64);
                let same = f64::numeric_class(a.to_ordered()) == f64::numeric_class(b.to_ordered());
                assert_eq!(same, Equality::Numeric.eq(a, b), "{a:?} {b:?}");
            }
        }
        for b in (0u32..=u32::MAX).step_by(65_521).chain([u32::MAX]) {
            // non-decreasing: classes of sorted keys are sorted
            assert!(f32::numeric_class(b) <= f32::numeric_class(b.saturating_add(1)));
            assert_eq!(i32::numeric_class(b), b);
        }
        assert!(Equality::Numeric.eq(3u64, 3) && !Equality::Numeric.eq(3i32, 4));
        assert!(Equality::Bitwise.eq(f32::NAN, f32::NAN));
        assert!(!Equality::Bitwise.eq(f32::NAN, -f32::NAN));
    }

    #[test]
    fn f64_and_ints_round_trip() {
        for x in [f64::NEG_INFINITY, -0.0, 0.0, 1.5, f64::NAN, -f64::NAN] {
            assert_eq!(f64::from_ordered(x.to_ordered()).to_bits(), x.to_bits());
        }
        assert!((-0.0f64).to_ordered() < 0.0f64.to_ordered());
        assert!(f64::INFINITY.to_ordered() < (-f64::NAN).to_ordered());
        assert!(i32::MIN.to_ordered() < (-1i32).to_ordered());
        assert!((-1i32).to_ordered() < 0i32.to_ordered());
        assert!(i64::MIN.to_ordered() < i64::MAX.to_ordered());
        for x in [i64::MIN, -1, 0, i64::MAX] {
            assert_eq!(i64::from_ordered(x.to_ordered()), x);
        }
    }
}
