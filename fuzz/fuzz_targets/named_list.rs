//! Fuzz target: see `warpath_fuzz::named_list` for what it asserts. Run with
//! `cargo xtask fuzz named_list`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpath_fuzz::named_list(data);
});
