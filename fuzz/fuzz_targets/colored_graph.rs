//! Fuzz target: see `warpath_fuzz::colored_graph` for what it asserts. Run with
//! `cargo xtask fuzz colored_graph`. The first byte picks k; the rest, split at its first `0`
//! byte, is a colored unitigs FASTA and a color-sets file.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpath_fuzz::colored_graph(data);
});
