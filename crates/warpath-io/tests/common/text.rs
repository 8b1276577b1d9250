//! Text for the readers' proptests, made of a format's fragments: warpath-io's
//! `tests/arbitrary_bytes.rs` and graph-core's `tests/readers_arbitrary_bytes.rs` include it.

use proptest::prelude::*;

/// Up to `max - 1` fragments drawn from `parts`, each uniformly, joined.
pub fn text_of(parts: &'static [&'static [u8]], max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::sample::select(parts), 0..max).prop_map(|p| p.concat())
}
