//! What the tests of several modules share.

use crate::PermError;
use gpu_runtime::GpuError;

/// Whether `e` is the device's out-of-memory error.
pub(crate) fn perm_out_of_memory(e: &PermError) -> bool {
    matches!(e, PermError::Gpu(GpuError::OutOfMemory { .. }))
}
