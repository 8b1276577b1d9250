//! Hand-written `.npy` bytes in numpy's layout, for the tests that read `f32` files (unit
//! tests and `tests/mpi.rs` both include this file).

/// A version-1 `.npy` file of little-endian `f32` values in C order, its shape as numpy
/// prints it (`"(2, 2)"`, `"(3,)"`), the header padded with spaces and a newline so that the
/// data starts at a multiple of 64 bytes.
pub(crate) fn npy_f32_bytes(shape: &str, values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    for v in values {
        bytes.extend(v.to_le_bytes());
    }
    bytes
}
