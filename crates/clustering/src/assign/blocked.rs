//! The pruned steps' failing groups with AVX-512: a group's centres stored coordinate-major
//! ([`GroupBlocks`]) and eight points at a time multiplied straight from their rows
//! ([`blocked_products`]); and the per-group minima of a full product tile.

use super::TILE_CENTRES;
#[cfg(target_arch = "x86_64")]
use super::avx512;
use super::band::{Band, Scratch, product};
use super::settle::{SEGMENT, segment_min};
use crate::Element;
use crate::centres::Centres;

/// The smallest group that the pruned steps compute through [`blocked_products`] (a smaller one
/// would leave most lanes idle).
pub(crate) const BLOCKED_MIN: usize = 8;

/// The centres of the pruned algorithms' groups, each group coordinate-major for
/// [`blocked_products`]: coordinate `u` of the group's slot `start + l` is `data[off + u * w + l]`,
/// `w` the group's size rounded up to 8 lanes (padding lanes are 0). A group's products for a
/// few points at a time then come straight from the points' rows (no gathering, no packing):
/// per coordinate one load of the group's row of lanes and one fused multiply-add per point
/// and register of lanes, the accumulators in registers and the group in the L1 or L2 cache
/// (16 KiB for 16 centres at `d = 256`).
pub(crate) struct GroupBlocks<T> {
    d: usize,
    data: Vec<T>,
    /// Per group: the offset of its coordinates in `data` (`usize::MAX` when not blocked).
    off: Vec<usize>,
    /// Per group: the offset of its norms in `norms`.
    noff: Vec<usize>,
    /// The groups' `|c_j|^2` (element type), each group padded with infinity to a multiple of
    /// 16 lanes (the width of a tile row of [`blocked_products`]).
    norms: Vec<T>,
    /// Per group: its number of centres.
    size: Vec<usize>,
}

/// Lanes of the padding of a group's coordinates.
const PAD: usize = 8;

/// The width of a tile row of [`blocked_products`] for a group of `q` centres: whole vectors of
/// 16 lanes for [`Band::scan`].
#[inline]
fn row_width(q: usize) -> usize {
    q.next_multiple_of(16)
}

impl<T: Element> GroupBlocks<T> {
    /// The groups `starts[g]..starts[g + 1]` (slots of `cent`) for which `blocked(g)` holds.
    /// None without AVX-512 (the kernels are written for it): every group then keeps the
    /// matrix product.
    pub(crate) fn new(
        cent: &Centres<T>,
        starts: &[usize],
        blocked: impl Fn(usize) -> bool,
    ) -> Self {
        let avx512 = crate::isa::has_avx512();
        let d = cent.d;
        let t = starts.len() - 1;
        let (mut off, mut noff) = (vec![usize::MAX; t], vec![0; t]);
        let (mut size, mut nsize) = (0, 0);
        for g in 0..t {
            if avx512 && blocked(g) {
                let q = starts[g + 1] - starts[g];
                off[g] = size;
                noff[g] = nsize;
                size += d * q.next_multiple_of(PAD);
                nsize += row_width(q);
            }
        }
        let mut data = vec![T::zero(); size];
        let mut norms = vec![T::from_f64(f64::INFINITY); nsize];
        for g in (0..t).filter(|&g| off[g] != usize::MAX) {
            let q = starts[g + 1] - starts[g];
            let w = q.next_multiple_of(PAD);
            let blk = &mut data[off[g]..off[g] + d * w];
            for l in 0..q {
                let j = starts[g] + l;
                for (u, &v) in cent.row(j).iter().enumerate() {
                    blk[u * w + l] = T::from_f64(v);
                }
                norms[noff[g] + l] = cent.norms[j];
            }
        }
        GroupBlocks {
            d,
            data,
            off,
            noff,
            norms,
            size: (0..t).map(|g| starts[g + 1] - starts[g]).collect(),
        }
    }

    /// Whether group `g` is blocked.
    #[inline]
    pub(crate) fn has(&self, g: usize) -> bool {
        self.off[g] != usize::MAX
    }

    /// The norms of group `g`, padded as a row of [`blocked_products`].
    #[inline]
    pub(crate) fn norms(&self, g: usize) -> &[T] {
        &self.norms[self.noff[g]..self.noff[g] + row_width(self.size[g])]
    }
}

/// `out[p * rw + j] = -2 x_p . c_j` for the `P` rows `rows` of `x` (`d` wide) and the `w`
/// lanes of the group at `blk` (coordinate-major, `w` a multiple of [`PAD`]), in column
/// chunks of 32, 16 or 8 lanes.
#[inline(always)]
fn group_rows<T: Element, const P: usize>(
    (x, d): (&[T], usize),
    rows: &[u32],
    blk: &[T],
    w: usize,
    out: &mut [T],
    rw: usize,
) {
    let xs: [&[T]; P] = std::array::from_fn(|p| &x[rows[p] as usize * d..][..d]);
    let blk = &blk[..d * w];
    let out = &mut out[..P * rw];
    let mut col = 0;
    while col < w {
        let lanes = (w - col).min(32);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: blocks exist only when the CPU has AVX-512 ([`GroupBlocks::new`]); every
        // row holds `d` values, the group `d * w` (so `col + lanes <= w` lanes of each
        // coordinate), each output row `rw >= w` values; `T` is `f32` or `f64` (`Element` is
        // sealed), checked before each cast.
        unsafe {
            avx512::dots(
                xs.map(<[T]>::as_ptr),
                blk.as_ptr().add(col),
                w,
                d,
                out.as_mut_ptr().add(col),
                rw,
                lanes,
            );
        }
        col += lanes;
    }
}

/// The product values less the norms, `-2 x.c_j`, of the rows `rows` of `x` (row `i` is
/// `x[i d..(i + 1) d]`) and the centres of group `g` of `blocks`, into `s.tile`: one row of
/// the returned width per point (the group's slots in order, then padding), to be taken
/// with [`Band::merge_row`] and [`GroupBlocks::norms`]. The same values as the matrix
/// product, up to the order of the sums (both within [`Centres::err`]).
#[inline(always)]
pub(crate) fn blocked_products<T: Element>(
    x: &[T],
    rows: &[u32],
    blocks: &GroupBlocks<T>,
    g: usize,
    s: &mut Scratch<T>,
) -> usize {
    let d = blocks.d;
    let p = rows.len();
    let q = blocks.size[g];
    let (w, rw) = (q.next_multiple_of(PAD), row_width(q));
    let blk = &blocks.data[blocks.off[g]..blocks.off[g] + d * w];
    // Lanes `w..rw` are never written: zero, their norms infinite.
    s.tile.clear();
    s.tile.resize(p * rw, T::zero());
    // Eight rows at a time in f32 (8 to 16 registers of sums), four in f64 (each 16 lanes
    // take two registers).
    let wide = size_of::<T>() == 4;
    let mut q0 = 0;
    while wide && q0 + 8 <= p {
        group_rows::<T, 8>((x, d), &rows[q0..], blk, w, &mut s.tile[q0 * rw..], rw);
        q0 += 8;
    }
    while q0 + 4 <= p {
        group_rows::<T, 4>((x, d), &rows[q0..], blk, w, &mut s.tile[q0 * rw..], rw);
        q0 += 4;
    }
    while q0 < p {
        group_rows::<T, 1>((x, d), &rows[q0..], blk, w, &mut s.tile[q0 * rw..], rw);
        q0 += 1;
    }
    rw
}

/// [`scan_product`](super::scan_product) over every slot (`s.xn2` must hold the rows' `|x|^2`), and the smallest
/// product value of every group of slots
/// (group `g` is `starts[g]..starts[g + 1]`; `starts` ends with `cent.k`) of every row, in
/// `gmin[row * t + g]` (`t = starts.len() - 1`).
#[inline(always)]
pub(crate) fn scan_product_groups<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    starts: &[usize],
    s: &mut Scratch<T>,
    gmin: &mut Vec<T>,
) {
    let d = cent.d;
    let p = x.len() / d;
    let t = starts.len() - 1;
    s.top.clear();
    s.top
        .extend(s.xn2[..p].iter().map(|&v| Band::new(cent.band_width(v))));
    gmin.clear();
    gmin.resize(p * t, T::MAX);
    let width = TILE_CENTRES.min(cent.k);
    s.tile.resize(p * width, T::zero());
    let mut j0 = 0;
    // The first group that overlaps the tile.
    let mut g0 = 0;
    while j0 < cent.k {
        let q = TILE_CENTRES.min(cent.k - j0);
        product(x, p, cent, j0, q, &mut s.tile);
        let norms = &cent.norms[j0..j0 + q];
        while starts[g0 + 1] <= j0 {
            g0 += 1;
        }
        let mut vals = std::mem::take(&mut s.vals);
        vals.resize(q + SEGMENT, T::MAX);
        for (i, (top, row)) in s.top.iter_mut().zip(s.tile.chunks_exact(q)).enumerate() {
            top.scan::<true>(row, norms, j0);
            for ((v, n), r) in vals.iter_mut().zip(norms).zip(row) {
                *v = *n + *r;
            }
            let mins = &mut gmin[i * t..(i + 1) * t];
            let mut g = g0;
            while g < t && starts[g] < j0 + q {
                let (a, b) = (starts[g].max(j0) - j0, starts[g + 1].min(j0 + q) - j0);
                let m = if b - a >= SEGMENT / 2 {
                    segment_min(&vals, a, b)
                } else {
                    vals[a..b]
                        .iter()
                        .fold(T::MAX, |m, &v| if v < m { v } else { m })
                };
                mins[g] = if m < mins[g] { m } else { mins[g] };
                g += 1;
            }
        }
        s.vals = vals;
        j0 += q;
    }
}
