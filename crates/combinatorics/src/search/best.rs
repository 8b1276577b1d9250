//! The order of search results, shared by both backends and the public API: the smaller score
//! wins, ties go to the smaller rank.

/// Whether `(s, r)` beats `(bs, br)`: a smaller score, or an equal score at a smaller rank.
#[inline]
pub(super) fn better(s: f64, r: u64, bs: f64, br: u64) -> bool {
    s < bs || (s == bs && r < br)
}
