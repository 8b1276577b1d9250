//! Fuzz target: see `warpath_fuzz` for what it asserts. Run with `cargo xtask fuzz npz`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpath_fuzz::npz(data);
});
