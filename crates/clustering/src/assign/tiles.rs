//! One tile of points against every centre: labels with exact distances, or the distances
//! themselves (`transform`, the half gaps of the pruned steps).

use super::band::{Band, Scratch, product, row_norms, scan_product};
use super::direct::{nearest_direct, nearest_rows_lanes, sq_distances_lanes};
use super::settle::{settle, single_nearest};
use super::{STEP_TILE_ROWS, TILE_CENTRES};
use crate::Element;
use crate::centres::{Centres, Method};
use crate::lloyd::dist2_f64;

/// Euclidean distances of the rows of `x` (at most [`TILE_ROWS`](super::TILE_ROWS)) to
/// every centre, `p x k` row-major into `out`: `sqrt(max(0, |x|^2 + |c|^2 - 2 x.c))` from the tiles' products.
pub(crate) fn distances_tile<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    s: &mut Scratch<T>,
    out: &mut Vec<f64>,
) {
    out.clear();
    out.resize(x.len() / cent.d * cent.k, 0.0);
    product_values(x, cent, s, out, |xn2, n, g| {
        (xn2 + n.to_f64() + g.to_f64()).max(0.0).sqrt()
    });
}

isa_versions!(
    /// [`sq_distances_lanes`], compiled for the CPU's vector width: its callers (the
    /// k-means++ draws, the groups' setup) run outside the versioned hot loops.
    fn sq_distances_small<T: Element>(x: &[T], cent: &Centres<T>, out: &mut [f64]) -> usize
        => sq_distances_lanes;
);

/// Squared distances of the rows of `x` (at most [`TILE_ROWS`](super::TILE_ROWS)) to every
/// centre, `p x k` row-major into `out`: exact ([`dist2_f64`]) on the direct path, `max(0, |x|^2 + e_j)` from
/// the products (within [`Centres::err`]) on the product path.
pub(crate) fn sq_distances_tile<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    s: &mut Scratch<T>,
    out: &mut Vec<f64>,
) {
    let (d, k) = (cent.d, cent.k);
    out.clear();
    out.resize(x.len() / d * k, 0.0);
    if cent.method == Method::Direct {
        // In at most eleven dimensions, eight rows at a time in the vector lanes (the same
        // bits); the rest one by one.
        let done = sq_distances_small(x, cent, out);
        for (o, xr) in out.chunks_exact_mut(k).zip(x.chunks_exact(d)).skip(done) {
            for (j, v) in o.iter_mut().enumerate() {
                *v = dist2_f64(xr, cent.row(j));
            }
        }
        return;
    }
    product_values(x, cent, s, out, |xn2, n, g| {
        (xn2 + (n + g).to_f64()).max(0.0)
    });
}

/// `out[i k + j] = value(|x_i|^2, |c_j|^2, -2 x_i.c_j)` for the rows of `x` (at most
/// [`TILE_ROWS`](super::TILE_ROWS)) and every centre, the products a tile of
/// [`TILE_CENTRES`] centres at a time.
#[inline(always)]
fn product_values<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    s: &mut Scratch<T>,
    out: &mut [f64],
    value: impl Fn(f64, T, T) -> f64,
) {
    let (d, k) = (cent.d, cent.k);
    let p = x.len() / d;
    row_norms(x, d, &mut s.xn2);
    s.tile.resize(p * TILE_CENTRES.min(k), T::zero());
    let mut j0 = 0;
    while j0 < k {
        let q = TILE_CENTRES.min(k - j0);
        product(x, p, cent, j0, q, &mut s.tile);
        for (i, row) in s.tile.chunks_exact(q).enumerate().take(p) {
            let o = &mut out[i * k + j0..i * k + j0 + q];
            for ((o, &g), &n) in o.iter_mut().zip(row).zip(&cent.norms[j0..j0 + q]) {
                *o = value(s.xn2[i], n, g);
            }
        }
        j0 += q;
    }
}

/// Labels (storage slots) and squared distances of the rows of `x` (at most
/// [`STEP_TILE_ROWS`]) against every centre: exact on the direct path, an upper bound on the
/// product path, NaN from the fused kernel (which keeps none).
#[inline(always)]
pub(crate) fn nearest_tile<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    s: &mut Scratch<T>,
    out: &mut [(u32, f64)],
) {
    let d = cent.d;
    match cent.method {
        Method::Direct => {
            // In at most eleven dimensions (centres in order), eight rows at a time in the
            // vector lanes (the same labels and distances); the rest one by one.
            let done = nearest_rows_lanes(x, cent, out);
            for (o, xr) in out.iter_mut().zip(x.chunks_exact(d)).skip(done) {
                *o = nearest_direct(xr, cent, 0..cent.k);
            }
        }
        Method::Fused => {
            // Labels only: the distances of this method are not kept (NaN).
            row_norms(x, d, &mut s.xn2);
            let mut labels = [0u32; STEP_TILE_ROWS];
            let labels = &mut labels[..out.len()];
            crate::fused::nearest_rows(x, &s.xn2, cent, &mut s.fused, labels);
            for (o, &l) in out.iter_mut().zip(labels.iter()) {
                *o = (l, f64::NAN);
            }
        }
        Method::Gemm if cent.k <= TILE_CENTRES => {
            // One tile of centres (else the bands are merged over tiles): most rows have a single centre within their band, found
            // without building the band (`single_nearest`); the others as below.
            row_norms(x, d, &mut s.xn2);
            let (p, k) = (x.len() / d, cent.k);
            s.tile.resize(p * k, T::zero());
            product(x, p, cent, 0, k, &mut s.tile);
            let norms = &cent.norms[..k];
            let avx512 = crate::isa::has_avx512();
            for (i, (o, xr)) in out.iter_mut().zip(x.chunks_exact(d)).enumerate() {
                let (row, xn2) = (&s.tile[i * k..(i + 1) * k], s.xn2[i]);
                *o = single_nearest(row, norms, xn2, cent, avx512).unwrap_or_else(|| {
                    let mut band = Band::new(cent.band_width(xn2));
                    band.scan::<false>(row, norms, 0);
                    settle(xr, xn2, &band, cent)
                });
            }
        }
        Method::Gemm => {
            row_norms(x, d, &mut s.xn2);
            scan_product::<T, false>(x, cent, 0..cent.k, s);
            for (i, (o, xr)) in out.iter_mut().zip(x.chunks_exact(d)).enumerate() {
                *o = settle(xr, s.xn2[i], &s.top[i], cent);
            }
        }
    }
}
