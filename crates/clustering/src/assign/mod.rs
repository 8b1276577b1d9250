//! The assignment engine: the exact nearest centre of every point of a tile, at matrix-product
//! speed.
//!
//! A label is defined once, by the reference: the centre with the smallest squared distance
//! [`dist2_f64`](crate::lloyd::dist2_f64) (the point widened to `f64`, coordinates subtracted in order), ties to the
//! lower centre index. Every CPU path returns exactly that label, so the fast paths, the pruned
//! ones ([`crate::bounds`]) and the reference agree bit for bit, whatever the thread count:
//!
//! - **Direct** (small `d` or `k`): the distances of a point to blocks of
//!   [`LANES`](crate::centres::LANES) centres are computed in `f64` in the reference's order
//!   of operations (the same eight interleaved partial sums, combined in the same order, no
//!   fused multiply-add), one centre per vector lane, so each value *is* the reference's value.
//!   The Lloyd step in at most eight dimensions, and the pruned steps' first step, the
//!   k-means++ draws and `predict` in at most eleven, turn this around: eight points in the
//!   lanes ([`nearest8_in_order`], [`nearest_two8`]), the centres one after the other, the
//!   same values and the same choice with no horizontal step per point.
//! - **Gemm** (the shapes embeddings come in): a tile of [`TILE_ROWS`] points against a tile of
//!   [`TILE_CENTRES`] centres is one matrix product in the element type (the `gemm` crate:
//!   cache-blocked, AVX-512 or AVX2+FMA micro-kernels chosen at run time), giving
//!   `e_j = |c_j|^2 - 2 x.c_j` (the squared distance less `|x|^2`). Each value is within
//!   `err(x)` of the exact one (a bound on the rounding of a `d`-term dot product,
//!   [`Centres::err`]). A scan of the tile (a vectorised minimum, then the values near it)
//!   keeps every point's [`Band`]: the smallest value and every centre within `2 err(x)` of
//!   it. The label is then settled exactly: a lone candidate is the label; otherwise the
//!   candidates are compared with [`dist2_f64`](crate::lloyd::dist2_f64) (and if more than
//!   [`BAND`](band::BAND) are that close, every centre is). In float32 a few points in a thousand need
//!   that check; it costs `O(d)` each.
//!
//! - **Blocked groups** (the pruned steps' failing groups, with AVX-512): a group's centres
//!   are stored coordinate-major ([`GroupBlocks`]), and eight points at a time are multiplied
//!   straight from their rows ([`blocked_products`]): no gathering, no packing, sums in
//!   registers. The values are the product's up to the order of the sums, within the same
//!   `err(x)`, and are settled the same way.
//!
//! The `n x k` distance matrix never exists beyond one tile (`TILE_ROWS x TILE_CENTRES`).
//!
//! **Files.** `band.rs`: the band of candidates and the scans that fill it; `settle.rs`: the
//! exact settling of a band; `direct.rs`: the direct path; `blocked.rs`: the blocked group
//! products (`avx512.rs`: their intrinsics); `tiles.rs`: a tile of points against every
//! centre, by whichever method.

pub(crate) use crate::centres::{Centres, Method, method_for, method_for_group, take};
pub(crate) use crate::lloyd::norm2;

#[cfg(target_arch = "x86_64")]
mod avx512;
mod band;
mod blocked;
mod direct;
mod settle;
#[cfg(test)]
mod tests;
mod tiles;

pub(crate) use band::{Band, Scratch, lanes_min, row_norms, row_norms_into, scan_product};
pub(crate) use blocked::{BLOCKED_MIN, GroupBlocks, blocked_products, scan_product_groups};
pub(crate) use direct::{
    EVERY_MAX_K, Lanes2, POINT_LANES, dist2_small, every_dist2, every_serves, lanes_by_d,
    nearest_in_order, nearest_two_direct, nearest_two8, nearest8_in_order, transpose8,
};
pub(crate) use settle::{exact_over, finish};
pub(crate) use tiles::{distances_tile, nearest_tile, sq_distances_tile};

/// Points per tile.
pub(crate) const TILE_ROWS: usize = 256;
/// Points per tile in the assignment steps' full passes (Lloyd's step, the pruned algorithms'
/// first step): every centre is packed for `gemm` once per tile, so larger tiles pack less.
/// The tile of products (`STEP_TILE_ROWS x TILE_CENTRES` values, 2-4 MiB) is read once, from
/// the L3 cache. Initialisation and `transform` keep [`TILE_ROWS`] (they keep `k` distances
/// per row), and so do the pruned steps' gathered tiles (whose late steps larger tiles slow
/// down: the gathered rows no longer stay in the cache).
pub(crate) const STEP_TILE_ROWS: usize = 1024;
/// Centres per matrix product: a tile of [`TILE_ROWS`] points' products (`TILE_ROWS x
/// TILE_CENTRES` values) stays in the L2 cache while it is scanned.
pub(crate) const TILE_CENTRES: usize = 512;
