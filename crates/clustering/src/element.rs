//! The element types k-means runs on: `f32` and `f64`.

pub(crate) mod sealed {
    /// Seals [`Element`](super::Element): `f32` and `f64` only (the types
    /// `kernels-cuda/clustering.cu` has entries for).
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A floating-point element type k-means accepts: `f32` or `f64` (sealed).
///
/// Distances are computed in the element type (as scikit-learn does); per-cluster sums,
/// weights and the inertia are accumulated in `f64` on every backend.
pub trait Element:
    Copy
    + Send
    + Sync
    + std::fmt::Debug
    + std::fmt::Display
    + PartialOrd
    + Default
    + 'static
    + ndarray::LinalgScalar
    + gpu_runtime::GemmScalar
    + sealed::Sealed
{
    /// `"f32"` or `"f64"`: the type's name (and the suffix of its CUDA kernels).
    const NAME: &'static str;
    /// The largest finite value (the initial "best distance").
    const MAX: Self;
    /// Widens to `f64` (exact).
    fn to_f64(self) -> f64;
    /// Rounds an `f64` to this type.
    fn from_f64(v: f64) -> Self;
    /// Whether the value is neither NaN nor infinite.
    fn is_finite(self) -> bool;
    /// `self * a + b` with one rounding (use only where the CPU has FMA instructions).
    fn mul_add(self, a: Self, b: Self) -> Self;
}

/// `Element` for the float type `$t`: its name, largest value and methods, from std.
macro_rules! impl_element {
    ($t:ident) => {
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            const MAX: Self = $t::MAX;
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                $t::mul_add(self, a, b)
            }
        }
    };
}

impl_element!(f32);
impl_element!(f64);
