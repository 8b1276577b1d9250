//! Fuzz target: see `warpath_fuzz` for what it asserts. Run with `cargo xtask fuzz edge_list`.
#![no_main]

use graph_core::GraphFormat;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpath_fuzz::graph(data, GraphFormat::EdgeList);
    warpath_fuzz::graph(data, GraphFormat::Snap);
});
