//! Fuzz target: see `warpath_fuzz` for what it asserts. Run with `cargo xtask fuzz fastx`.
//! The first byte picks k (mod 40, so that refused values are tried too); the rest is the
//! FASTA/FASTQ text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpath_fuzz::fastx(data);
});
