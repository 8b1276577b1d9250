//! The error type of every primitive.

use gpu_runtime::GpuError;

/// Why a primitive could not run. Bad input is reported here, never by a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrimitiveError {
    /// Two inputs that must have the same length do not.
    #[error("{what}: expected {expected} elements, found {found}")]
    LengthMismatch {
        /// Which input is wrong, e.g. `"flags"` or `"values"`.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length it has.
        found: usize,
    },
    /// A histogram key is not below the number of bins.
    #[error("key {key} at index {index} is out of range for a histogram of {bins} bins")]
    KeyOutOfRange {
        /// Index of the first such key.
        index: u64,
        /// The key.
        key: u32,
        /// Number of bins asked for.
        bins: usize,
    },
    /// A histogram of zero bins was asked for (over a non-empty input).
    #[error("a histogram needs at least one bin")]
    ZeroBins,
    /// `distinct_sorted` got input that is not sorted in the crate's total order.
    #[error("input is not sorted: element {index} is smaller than the one before it")]
    NotSorted {
        /// First index `i` with `keys[i - 1] > keys[i]` (0 when the GPU found it, which does
        /// not locate it).
        index: u64,
    },
    /// An operation that returns `u32` indices (argsort, inverse indices) got more than
    /// `u32::MAX` elements.
    #[error("{n} elements do not fit u32 indices (at most {max})", max = u32::MAX)]
    TooManyForU32Index {
        /// Number of elements.
        n: usize,
    },
    /// The GPU path failed (no device, out of memory with sizes, launch failure, ...).
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

impl PrimitiveError {
    /// `Ok` when `found == expected`, else [`PrimitiveError::LengthMismatch`] naming `what`.
    pub(crate) fn check_len(
        what: &'static str,
        expected: usize,
        found: usize,
    ) -> Result<(), PrimitiveError> {
        if found == expected {
            Ok(())
        } else {
            Err(PrimitiveError::LengthMismatch {
                what,
                expected,
                found,
            })
        }
    }
}
