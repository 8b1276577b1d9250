//! Fuzz target: see `warpath_fuzz::reads` for what it asserts. Run with `cargo xtask fuzz reads`.
//! The first byte picks k (mod 40, so that refused values are tried too); the rest is the
//! FASTA/FASTQ text read by the assembly crate.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpath_fuzz::reads(data);
});
