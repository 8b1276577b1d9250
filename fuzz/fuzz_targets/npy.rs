//! Fuzz target: see `warpath_fuzz` for what it asserts. Run with `cargo xtask fuzz npy`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpath_fuzz::npy::<f64>(data);
    warpath_fuzz::npy::<f32>(data);
    warpath_fuzz::npy::<i64>(data);
    warpath_fuzz::npy::<u32>(data);
    warpath_fuzz::npy::<i8>(data);
    warpath_fuzz::npy::<bool>(data);
    warpath_fuzz::array::<f64>(data, "a.npy");
    warpath_fuzz::array::<u16>(data, "a.bin");
});
