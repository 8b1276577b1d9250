//! Fuzz target: see `warpath_fuzz` for what it asserts. Run with `cargo xtask fuzz table`.
#![no_main]

use warpath_io::Header;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpath_fuzz::table::<f64>(data, Header::Auto);
    warpath_fuzz::table::<i64>(data, Header::Auto);
    warpath_fuzz::table::<u8>(data, Header::Present);
    warpath_fuzz::table::<f32>(data, Header::Absent);
    warpath_fuzz::array::<u32>(data, "keys.csv");
});
