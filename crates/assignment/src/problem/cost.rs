//! The element types of a cost matrix ([`Cost`]) and what one entry means ([`CostClass`]):
//! scipy's rules for infinities and `NaN`, integers beyond `2^53`, and the error for an entry
//! a solver refuses.

use ndarray::ArrayView2;

use crate::{AssignmentError, Sense};

pub(crate) mod sealed {
    use ndarray::ArrayView2;

    pub trait Sealed {}

    /// A slice of cost entries with its element type named.
    #[derive(Debug, Clone, Copy)]
    pub enum TypedSlice<'a> {
        /// `f64` entries.
        F64(&'a [f64]),
        /// `f32` entries.
        F32(&'a [f32]),
        /// `i64` entries.
        I64(&'a [i64]),
        /// `i32` entries.
        I32(&'a [i32]),
        /// `Option<i64>` entries.
        OptI64(&'a [Option<i64>]),
    }
    impl Sealed for f64 {}
    impl Sealed for f32 {}
    impl Sealed for i64 {}
    impl Sealed for i32 {}
    impl Sealed for Option<i64> {}

    /// A cost matrix view with its element type named, so the solvers that read a matrix in
    /// its own type can pick their path once.
    #[derive(Debug, Clone)]
    pub enum Typed<'a> {
        /// `f64` entries.
        F64(ArrayView2<'a, f64>),
        /// `f32` entries.
        F32(ArrayView2<'a, f32>),
        /// `i64` entries.
        I64(ArrayView2<'a, i64>),
        /// `i32` entries.
        I32(ArrayView2<'a, i32>),
        /// `Option<i64>` entries (`None` forbids the pair).
        OptI64(ArrayView2<'a, Option<i64>>),
    }
}

pub(crate) use sealed::{Typed, TypedSlice};

/// What one matrix entry means once read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CostClass {
    /// An allowed pair with this cost.
    Finite(f64),
    /// A forbidden pair: the infinity that can never be optimal (`+inf` when minimising, `-inf`
    /// when maximising), or `None` in the integer API.
    Forbidden,
    /// An invalid entry: `NaN`, or the infinity that would always be optimal (`-inf` when
    /// minimising, `+inf` when maximising); the reason says which.
    Invalid(&'static str),
    /// An integer too large to be represented exactly as `f64` (|v| > 2^53).
    OutOfRange,
}

/// Why an entry is [`CostClass::Invalid`].
pub(super) const NAN_REASON: &str = "NaN is not a cost";
/// See [`NAN_REASON`].
pub(super) const MINUS_INF_REASON: &str =
    "-inf is invalid when minimising (+inf forbids a pair; scipy's rule)";
/// See [`NAN_REASON`].
pub(super) const PLUS_INF_REASON: &str =
    "+inf is invalid when maximising (-inf forbids a pair; scipy's rule)";

/// The element types a cost matrix may hold: `f64`, `f32`, `i64`, `i32` and `Option<i64>`
/// (where `None` forbids the pair). Sealed: it cannot be implemented outside this crate.
///
/// The Jonker–Volgenant solver reads `f32`, `i64` and `i32` matrices in their own type (no
/// `f64` copy) and solves integer matrices in exact integer arithmetic.
///
/// Floats follow scipy's `linear_sum_assignment`, which maximises by minimising the negated
/// matrix: when minimising `+inf` forbids a pair and `-inf` is an error; when maximising `-inf`
/// forbids a pair and `+inf` is an error; `NaN` is always an error.
pub trait Cost: sealed::Sealed + Copy + Send + Sync + std::fmt::Debug {
    /// Classifies one entry of a problem solved in direction `sense`.
    ///
    /// # Examples
    /// ```
    /// use assignment::{Cost, CostClass, Sense};
    /// assert_eq!(f64::INFINITY.classify_cost(Sense::Minimize), CostClass::Forbidden);
    /// assert_eq!(f64::NEG_INFINITY.classify_cost(Sense::Maximize), CostClass::Forbidden);
    /// assert!(matches!(f64::INFINITY.classify_cost(Sense::Maximize), CostClass::Invalid(_)));
    /// assert_eq!(None::<i64>.classify_cost(Sense::Maximize), CostClass::Forbidden);
    /// ```
    fn classify_cost(self, sense: Sense) -> CostClass;
    /// The entry widened to `f64` as is (`NaN` and infinities included) for the floating-point
    /// types, whose validation then runs as one vectorised pass; `None` for the integer types.
    #[doc(hidden)]
    fn raw_float(self) -> Option<f64> {
        None
    }
    /// The slice itself when the element type is `f64` (so it can be used without a copy).
    #[doc(hidden)]
    fn as_f64_slice(_s: &[Self]) -> Option<&[f64]> {
        None
    }
    /// The view with its element type named.
    #[doc(hidden)]
    fn typed(view: ArrayView2<'_, Self>) -> Typed<'_>;
    /// The slice with its element type named.
    #[doc(hidden)]
    fn typed_slice(s: &[Self]) -> TypedSlice<'_>;
}

/// The `typed` and `typed_slice` methods of an impl of [`Cost`]: the variant `$v` of each.
macro_rules! typed_as {
    ($v:ident) => {
        fn typed(view: ArrayView2<'_, Self>) -> Typed<'_> {
            Typed::$v(view)
        }
        fn typed_slice(s: &[Self]) -> TypedSlice<'_> {
            TypedSlice::$v(s)
        }
    };
}

/// Largest integer magnitude accepted (`2^53`, the last exactly representable in `f64`).
pub(super) const EXACT_INT: f64 = 9_007_199_254_740_992.0;

impl Cost for f64 {
    #[inline(always)]
    fn raw_float(self) -> Option<f64> {
        Some(self)
    }
    fn as_f64_slice(s: &[f64]) -> Option<&[f64]> {
        Some(s)
    }
    typed_as!(F64);
    fn classify_cost(self, sense: Sense) -> CostClass {
        if self.is_finite() {
            CostClass::Finite(self)
        } else if self.is_nan() {
            CostClass::Invalid(NAN_REASON)
        } else if self == forbidden_infinity(sense) {
            CostClass::Forbidden
        } else if sense == Sense::Minimize {
            CostClass::Invalid(MINUS_INF_REASON)
        } else {
            CostClass::Invalid(PLUS_INF_REASON)
        }
    }
}

/// The infinity that forbids a pair: `+inf` when minimising, `-inf` when maximising.
pub(crate) fn forbidden_infinity(sense: Sense) -> f64 {
    match sense {
        Sense::Minimize => f64::INFINITY,
        Sense::Maximize => f64::NEG_INFINITY,
    }
}

impl Cost for f32 {
    #[inline(always)]
    fn raw_float(self) -> Option<f64> {
        Some(self as f64)
    }
    typed_as!(F32);
    fn classify_cost(self, sense: Sense) -> CostClass {
        Cost::classify_cost(self as f64, sense)
    }
}

impl Cost for i64 {
    typed_as!(I64);
    fn classify_cost(self, _sense: Sense) -> CostClass {
        let f = self as f64;
        if f.abs() > EXACT_INT {
            CostClass::OutOfRange
        } else {
            CostClass::Finite(f)
        }
    }
}

impl Cost for i32 {
    typed_as!(I32);
    fn classify_cost(self, _sense: Sense) -> CostClass {
        CostClass::Finite(self as f64)
    }
}

impl Cost for Option<i64> {
    typed_as!(OptI64);
    fn classify_cost(self, sense: Sense) -> CostClass {
        match self {
            Some(v) => v.classify_cost(sense),
            None => CostClass::Forbidden,
        }
    }
}

/// The error for entry `v` at the caller's `(row, col)` when `sense` refuses it (invalid, or
/// an integer out of range); `None` when it is a cost or forbids its pair.
pub(crate) fn refusal<T: Cost>(
    v: T,
    row: usize,
    col: usize,
    sense: Sense,
) -> Option<AssignmentError> {
    match v.classify_cost(sense) {
        CostClass::Invalid(reason) => Some(AssignmentError::InvalidCost {
            row,
            col,
            value: format!("{v:?}"),
            reason,
        }),
        CostClass::OutOfRange => Some(AssignmentError::CostOutOfRange {
            row,
            col,
            value: format!("{v:?}"),
        }),
        CostClass::Finite(_) | CostClass::Forbidden => None,
    }
}

/// The error for the first entry refused in `sense` (invalid or out of range), in the
/// caller's row-major order.
pub(crate) fn first_refused<T: Cost>(costs: ArrayView2<'_, T>, sense: Sense) -> AssignmentError {
    costs
        .indexed_iter()
        .find_map(|((r, k), &v)| refusal(v, r, k, sense))
        .expect("called only when an entry is refused")
}
