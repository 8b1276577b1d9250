//! The assignment engine: the exact nearest centre of every point of a tile, at matrix-product
//! speed.
//!
//! A label is defined once, by the reference: the centre with the smallest squared distance
//! [`dist2_f64`] (the point widened to `f64`, coordinates subtracted in order), ties to the
//! lower centre index. Every CPU path returns exactly that label, so the fast paths, the pruned
//! ones ([`crate::bounds`]) and the reference agree bit for bit, whatever the thread count:
//!
//! - **Direct** (small `d` or `k`): the distances of a point to blocks of [`LANES`] centres are
//!   computed in `f64` in the reference's order of operations (the same eight interleaved
//!   partial sums, combined in the same order, no fused multiply-add), one centre per vector
//!   lane, so each value *is* the reference's value.
//! - **Gemm** (the shapes embeddings come in): a tile of [`TILE_ROWS`] points against a tile of
//!   [`TILE_CENTRES`] centres is one matrix product in the element type (the `gemm` crate:
//!   cache-blocked, AVX-512 or AVX2+FMA micro-kernels chosen at run time), giving
//!   `e_j = |c_j|^2 - 2 x.c_j` (the squared distance less `|x|^2`). Each value is within
//!   `err(x)` of the exact one (a bound on the rounding of a `d`-term dot product,
//!   [`Centres::err`]). A scan of the tile (a vectorised minimum, then the values near it)
//!   keeps every point's [`Band`]: the smallest value and every centre within `2 err(x)` of
//!   it. The label is then settled exactly: a lone candidate is the label; otherwise the
//!   candidates are compared with [`dist2_f64`] (and if more than [`BAND`] are that close,
//!   every centre is). In float32 a few points in a thousand need that check; it costs `O(d)`
//!   each.
//!
//! - **Blocked groups** (the pruned steps' failing groups, with AVX-512): a group's centres
//!   are stored coordinate-major ([`GroupBlocks`]), and eight points at a time are multiplied
//!   straight from their rows ([`blocked_products`]): no gathering, no packing, sums in
//!   registers. The values are the product's up to the order of the sums, within the same
//!   `err(x)`, and are settled the same way.
//!
//! The `n x k` distance matrix never exists beyond one tile (`TILE_ROWS x TILE_CENTRES`).

use crate::Element;
pub(crate) use crate::centres::{
    Centres, DIRECT_MAX_D, LANES, Method, method_for, method_for_group, take,
};
pub(crate) use crate::lloyd::norm2;
use crate::lloyd::{combine8, dist2_f64};

/// Points per tile.
pub(crate) const TILE_ROWS: usize = 256;
/// Points per tile in the assignment steps' full passes (Lloyd's step, the pruned algorithms'
/// first step): every centre is packed for `gemm` once per tile, so larger tiles pack less
/// (Lloyd at 100,000 x 256, k = 4,096, Zen 4, 2 threads: 836 ms an iteration with tiles of
/// 256 points, 777 with 512, 690-730 with 1,024 or 2,048; no change at 10^6 x 16, k = 64).
/// The tile of products (`STEP_TILE_ROWS x TILE_CENTRES` values, 2-4 MiB) is read once, from
/// the L3 cache. Initialisation and `transform` keep [`TILE_ROWS`] (they keep `k` distances
/// per row), and so do the pruned steps' gathered tiles (1,024 rows made the late steps at
/// 200,000 x 128, k = 1,024 slower: 84 -> 94 ms).
pub(crate) const STEP_TILE_ROWS: usize = 1024;
/// Centres per matrix product: a tile of [`TILE_ROWS`] points' products (`TILE_ROWS x
/// TILE_CENTRES` values) stays in the L2 cache while it is scanned.
pub(crate) const TILE_CENTRES: usize = 512;

/// The product values of one point that may belong to its nearest centre: the smallest value
/// scanned, and every scanned centre whose value is within `width` of it (`width` is a little
/// more than twice the point's error bound, so every centre that the rounding could make the
/// nearest is listed), up to [`BAND`] of them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Band<T> {
    /// Listed values (unordered) and their storage slots.
    pub(crate) val: [T; BAND],
    pub(crate) slot: [u32; BAND],
    pub(crate) len: u32,
    /// The smallest value scanned and its slot (`u32::MAX` before any).
    pub(crate) best: T,
    pub(crate) best_slot: u32,
    /// The smallest value of the other scanned centres.
    second: T,
    /// The band's width.
    width: T,
    /// More centres fell within the band than it lists.
    overflow: bool,
}

/// Most centres a [`Band`] lists.
pub(crate) const BAND: usize = 8;

impl<T: Element> Band<T> {
    /// An empty band of `width` (from [`Centres::band_width`]).
    pub(crate) fn new(width: T) -> Self {
        Band {
            val: [T::MAX; BAND],
            slot: [u32::MAX; BAND],
            len: 0,
            best: T::MAX,
            best_slot: u32::MAX,
            second: T::MAX,
            width,
            overflow: false,
        }
    }

    /// Every scanned centre that is not listed has a value at least this: it is not the
    /// best, so at least the second smallest, and (unless the band overflowed) above the band.
    #[inline]
    pub(crate) fn floor(&self) -> T {
        let above = self.best + self.width;
        if self.overflow || self.second > above {
            self.second
        } else {
            above
        }
    }

    /// The smallest listed value of a slot other than `not` (the floor when none).
    pub(crate) fn second(&self, not: u32) -> T {
        let mut v = self.floor();
        for i in 0..self.len as usize {
            if self.slot[i] != not && self.val[i] < v {
                v = self.val[i];
            }
        }
        v
    }

    #[inline(always)]
    fn push(&mut self, v: T, slot: u32) {
        if (self.len as usize) < BAND {
            self.val[self.len as usize] = v;
            self.slot[self.len as usize] = slot;
            self.len += 1;
        } else {
            self.overflow = true;
        }
    }

    /// A new smallest value: drops the entries it leaves out of the band.
    #[inline(always)]
    fn lower_best(&mut self, v: T, slot: u32) {
        self.best = v;
        self.best_slot = slot;
        let bar = v + self.width;
        let mut w = 0;
        for i in 0..self.len as usize {
            if self.val[i] <= bar {
                self.val[w] = self.val[i];
                self.slot[w] = self.slot[i];
                w += 1;
            }
        }
        self.len = w as u32;
    }

    /// Adds the entries of another band of the same point (other centres, the same width).
    pub(crate) fn merge(&mut self, other: &Band<T>) {
        if other.best_slot == u32::MAX {
            return;
        }
        self.overflow |= other.overflow;
        if self.best_slot == u32::MAX || other.best < self.best {
            let second = if other.second < self.best {
                other.second
            } else {
                self.best
            };
            self.lower_best(other.best, other.best_slot);
            self.second = second;
        } else if other.best < self.second {
            self.second = other.best;
        }
        let bar = self.best + self.width;
        for i in 0..other.len as usize {
            if other.val[i] <= bar {
                self.push(other.val[i], other.slot[i]);
            }
        }
    }

    /// Takes the values `norms[j] + row[j]` of slots `first + j` (a row of
    /// [`blocked_products`], a multiple of 16 long) and returns their smallest, its slot and
    /// the second smallest. A row whose smallest value is beyond this band (most of a point's
    /// groups) only lowers the floor of the band; any other is scanned and merged as
    /// [`Band::merge`] would.
    #[inline(always)]
    pub(crate) fn merge_row(&mut self, row: &[T], norms: &[T], first: usize) -> (T, u32, T) {
        let (m1, m2) = lane_mins::<T, true>(row.as_chunks().0, norms[..row.len()].as_chunks().0);
        let (v1, v2) = min_two(m1, m2);
        if self.best_slot != u32::MAX && v1 > self.best + self.width {
            self.second = if v1 < self.second { v1 } else { self.second };
            let j = row.iter().zip(norms).position(|(&r, &n)| n + r == v1);
            return (
                v1,
                (first + j.expect("the smallest is in the row")) as u32,
                v2,
            );
        }
        let mut band = Band::new(self.width);
        band.scan::<true>(row, norms, first);
        self.merge(&band);
        (v1, band.best_slot, v2)
    }

    /// Takes the values `norms[j] + row[j]` of slots `first + j`: the smallest value of the
    /// row (and with `SECOND` the second smallest, which [`Band::floor`] then uses), vectorised
    /// per lane, then the entries within the band. Without `SECOND` every other centre is only
    /// known to be at least the best.
    #[inline(always)]
    fn scan<const SECOND: bool>(&mut self, row: &[T], norms: &[T], first: usize) {
        const W: usize = 16;
        let (rows, rrest) = row.as_chunks::<W>();
        let (ns, nrest) = norms.as_chunks::<W>();
        let (m1, m2) = lane_mins::<T, SECOND>(rows, ns);
        let (mut m, mut m_2) = min_two(m1, m2);
        let mut add = |v: T| {
            if v < m {
                m_2 = m;
                m = v;
            } else if v < m_2 {
                m_2 = v;
            }
        };
        for (&n, &r) in nrest.iter().zip(rrest) {
            add(n + r);
        }
        // The other centres' smallest value: with a new best, the old best or this tile's
        // second; otherwise this tile's smallest may be it.
        if !SECOND {
            // Nothing known beyond "at least the best" (set once the best is final below).
        } else if self.best_slot == u32::MAX || m < self.best {
            let keep = if self.best < m_2 { self.best } else { m_2 };
            self.second = if keep < self.second {
                keep
            } else {
                self.second
            };
        } else if m < self.second {
            self.second = m;
        }
        let fresh = self.best_slot == u32::MAX || m < self.best;
        if !fresh && m > self.best + self.width {
            return;
        }
        if !SECOND && fresh {
            self.second = m;
        }

        // The tile holds the smallest value so far or values within the band of it.
        if fresh {
            self.lower_best(m, u32::MAX);
        }
        let bar = self.best + self.width;
        let mut found = u32::MAX;
        let avx512 = crate::isa::has_avx512();
        for (b, (r, n)) in rows.iter().zip(ns).enumerate() {
            // One vector compare per chunk, then only the lanes within the band (mostly one
            // lane, the smallest, in one chunk): a scalar pass over the 16 lanes of every
            // chunk holding one was the hottest line of a plain step at k = 64, d = 16.
            let mut mask = le_mask(r, n, bar, avx512);
            while mask != 0 {
                let l = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let v = n[l] + r[l];
                let j = (first + b * W + l) as u32;
                if v == m && found == u32::MAX {
                    found = j;
                }
                self.push(v, j);
            }
        }
        let base = rows.len() * W;
        for (l, (&n, &r)) in nrest.iter().zip(rrest).enumerate() {
            let v = n + r;
            if v <= bar {
                let j = (first + base + l) as u32;
                if v == m && found == u32::MAX {
                    found = j;
                }
                self.push(v, j);
            }
        }
        if fresh {
            self.best_slot = found;
        }
    }
}

/// Bit `l` set when `norms[l] + row[l] <= bar` (`l < 16`): AVX-512 compares when `avx512`
/// ([`crate::isa::has_avx512`]; the compiler's own vectorisation of the loop split the mask into pieces of
/// 1 to 8 lanes), else the loop.
#[inline(always)]
fn le_mask<T: Element>(row: &[T; 16], norms: &[T; 16], bar: T, avx512: bool) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if avx512 {
        // SAFETY: `avx512` comes from `isa::has_avx512`; `T` is f32 or f64.
        return unsafe { avx512::le_mask(row, norms, bar) };
    }
    let _ = avx512;
    let mut mask = 0u32;
    for l in 0..16 {
        mask |= u32::from(norms[l] + row[l] <= bar) << l;
    }
    mask
}

/// Per lane of 16, the smallest of the values `norms + row` of the whole chunks given (and with
/// `SECOND` the second smallest; otherwise `T::MAX`), vectorised lane by lane.
#[inline(always)]
fn lane_mins<T: Element, const SECOND: bool>(
    rows: &[[T; 16]],
    norms: &[[T; 16]],
) -> ([T; 16], [T; 16]) {
    let mut m1 = [T::MAX; 16];
    let mut m2 = [T::MAX; 16];
    for (r, n) in rows.iter().zip(norms) {
        for l in 0..16 {
            let v = n[l] + r[l];
            if SECOND {
                let hi = if v > m1[l] { v } else { m1[l] };
                m2[l] = if hi < m2[l] { hi } else { m2[l] };
            }
            m1[l] = if v < m1[l] { v } else { m1[l] };
        }
    }
    (m1, m2)
}

/// The smallest and second smallest of the values of which `m1` holds each lane's smallest
/// and `m2` each lane's second smallest, branch-free (a scalar pass with a branch per value
/// cost more than the products at k = 64, d = 16): every `m2[l] >= m1[l]`, so the second
/// smallest is the least of the `m2` and of the `m1` other than one lane holding the smallest
/// (the smallest again if two lanes hold it).
#[inline(always)]
fn min_two<T: Element>(m1: [T; 16], m2: [T; 16]) -> (T, T) {
    let m = lanes_min(m1);
    let above = lanes_min(m1.map(|v| if v > m { v } else { T::MAX }));
    let ties: u32 = m1.iter().map(|&v| u32::from(v == m)).sum();
    let low2 = lanes_min(m2);
    let other = if ties > 1 { m } else { above };
    (m, if low2 < other { low2 } else { other })
}

/// The smallest of 16 lanes, by halving (each step an element-wise minimum of two halves,
/// which the compiler vectorises; a running minimum would be a scalar chain).
#[inline(always)]
pub(crate) fn lanes_min<T: Element>(a: [T; 16]) -> T {
    let mut a = a;
    let mut h = 8;
    while h > 0 {
        for l in 0..h {
            a[l] = if a[l + h] < a[l] { a[l + h] } else { a[l] };
        }
        h /= 2;
    }
    a[0]
}

/// `out[i * q + j] = -2 x_i . c_j` for the `p` rows of `x` and the centres in slots
/// `j0..j0 + q` (one matrix product, on the calling thread).
fn product<T: Element>(x: &[T], p: usize, cent: &Centres<T>, j0: usize, q: usize, out: &mut [T]) {
    let d = cent.d;
    debug_assert!(x.len() >= p * d && out.len() >= p * q);
    let c = &cent.ct[j0 * d..(j0 + q) * d];
    let minus_two = T::zero() - T::one() - T::one();
    // SAFETY: dst is p x q row-major (column stride 1, row stride q) inside `out`; lhs is the
    // p x d row-major block of `x`; rhs is the d x q matrix whose element (t, j) is c[j * d + t]
    // (column stride d, row stride 1), inside `c`. All three were bounds-checked above, and
    // they do not overlap (`out` is a distinct mutable slice).
    unsafe {
        gemm::gemm(
            p,
            q,
            d,
            out.as_mut_ptr(),
            1,
            q as isize,
            false,
            x.as_ptr(),
            1,
            d as isize,
            c.as_ptr(),
            d as isize,
            1,
            T::zero(),
            minus_two,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// Scratch space of one thread.
pub(crate) struct Scratch<T> {
    pub(crate) tile: Vec<T>,
    pub(crate) top: Vec<Band<T>>,
    pub(crate) xn2: Vec<f64>,
    /// One row's product values (and 16 more lanes, for [`segment_min`]).
    vals: Vec<T>,
    /// The fused kernel's block of rows.
    pub(crate) fused: crate::fused::Buffer<T>,
}

impl<T: Element> Scratch<T> {
    pub(crate) fn new() -> Self {
        Scratch {
            tile: Vec::new(),
            top: Vec::new(),
            xn2: Vec::new(),
            vals: Vec::new(),
            fused: crate::fused::Buffer::default(),
        }
    }
}

/// `|x|^2` of each row, in `f64`.
#[inline(always)]
pub(crate) fn row_norms<T: Element>(x: &[T], d: usize, out: &mut Vec<f64>) {
    // Written into place (not `extend`): `extend` is a function of its own, compiled without
    // the caller's instruction set.
    out.resize(x.len() / d, 0.0);
    for (o, r) in out.iter_mut().zip(x.chunks_exact(d)) {
        *o = norm2(r);
    }
}

/// The [`Band`] of each row of `x` over the slots `range` (Gemm path), into `s.top` (one per
/// row; with `SECOND`, knowing the second smallest value); `s.xn2` must hold the rows' `|x|^2`.
#[inline(always)]
pub(crate) fn scan_product<T: Element, const SECOND: bool>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
    s: &mut Scratch<T>,
) {
    let d = cent.d;
    let p = x.len() / d;
    s.top.clear();
    s.top
        .extend(s.xn2[..p].iter().map(|&v| Band::new(cent.band_width(v))));
    let width = TILE_CENTRES.min(range.len());
    s.tile.resize(p * width, T::zero());
    let mut j0 = range.start;
    while j0 < range.end {
        let q = TILE_CENTRES.min(range.end - j0);
        product(x, p, cent, j0, q, &mut s.tile);
        let norms = &cent.norms[j0..j0 + q];
        for (top, row) in s.top.iter_mut().zip(s.tile.chunks_exact(q)) {
            top.scan::<SECOND>(row, norms, j0);
        }
        j0 += q;
    }
}

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

/// The kernels of [`blocked_products`], written with intrinsics (the compiler's own
/// vectorisation of the loop kept the sums in memory, or gathered the rows).
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::Element;
    use std::any::TypeId;
    use std::arch::x86_64::*;

    /// `out[p * os + l] = -2 sum_u xs[p][u] c[u * cs + l]` for `l < lanes` (8, 16, 24 or 32).
    ///
    /// # Safety
    /// The CPU has AVX-512F and VL; every `xs[p]` points to `d` values, `c` to `d` rows of
    /// `cs` values of which the first `lanes` are read, `out` to `P` rows of `os` values of
    /// which the first `lanes` are written; `T` is `f32` or `f64`.
    #[inline(always)]
    pub(super) unsafe fn dots<T: Element, const P: usize>(
        xs: [*const T; P],
        c: *const T,
        cs: usize,
        d: usize,
        out: *mut T,
        os: usize,
        lanes: usize,
    ) {
        // SAFETY: the caller's contract, and `T` checked before each cast.
        unsafe {
            if TypeId::of::<T>() == TypeId::of::<f32>() {
                let (xs, c, out) = (
                    xs.map(|p| p.cast::<f32>()),
                    c.cast::<f32>(),
                    out.cast::<f32>(),
                );
                match lanes {
                    32 => f32s::<P, 2, false>(xs, c, cs, d, out, os),
                    24 => f32s::<P, 1, true>(xs, c, cs, d, out, os),
                    16 => f32s::<P, 1, false>(xs, c, cs, d, out, os),
                    _ => f32s::<P, 0, true>(xs, c, cs, d, out, os),
                }
            } else {
                let (xs, c, out) = (
                    xs.map(|p| p.cast::<f64>()),
                    c.cast::<f64>(),
                    out.cast::<f64>(),
                );
                match lanes {
                    32 => f64s::<P, 4>(xs, c, cs, d, out, os),
                    24 => f64s::<P, 3>(xs, c, cs, d, out, os),
                    16 => f64s::<P, 2>(xs, c, cs, d, out, os),
                    _ => f64s::<P, 1>(xs, c, cs, d, out, os),
                }
            }
        }
    }

    /// Bit `l` set when `norms[l] + row[l] <= bar` (`l < 16`): one or two vector compares.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `T` is `f32` or `f64`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
    pub(super) unsafe fn le_mask<T: Element>(row: &[T; 16], norms: &[T; 16], bar: T) -> u32 {
        // SAFETY: the caller's contract; 16 values are read from each array, `T` checked
        // before each cast.
        unsafe {
            if TypeId::of::<T>() == TypeId::of::<f32>() {
                let (r, n) = (row.as_ptr().cast::<f32>(), norms.as_ptr().cast::<f32>());
                let b = _mm512_set1_ps(*(&raw const bar).cast::<f32>());
                let v = _mm512_add_ps(_mm512_loadu_ps(n), _mm512_loadu_ps(r));
                u32::from(_mm512_cmp_ps_mask::<_CMP_LE_OQ>(v, b))
            } else {
                let (r, n) = (row.as_ptr().cast::<f64>(), norms.as_ptr().cast::<f64>());
                let b = _mm512_set1_pd(*(&raw const bar).cast::<f64>());
                let lo = _mm512_add_pd(_mm512_loadu_pd(n), _mm512_loadu_pd(r));
                let hi = _mm512_add_pd(_mm512_loadu_pd(n.add(8)), _mm512_loadu_pd(r.add(8)));
                u32::from(_mm512_cmp_pd_mask::<_CMP_LE_OQ>(lo, b))
                    | (u32::from(_mm512_cmp_pd_mask::<_CMP_LE_OQ>(hi, b)) << 8)
            }
        }
    }

    /// [`dots`] in `f32`: `Z` registers of 16 lanes and, with `Y`, one of 8.
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
    unsafe fn f32s<const P: usize, const Z: usize, const Y: bool>(
        xs: [*const f32; P],
        c: *const f32,
        cs: usize,
        d: usize,
        out: *mut f32,
        os: usize,
    ) {
        // SAFETY: in bounds by the caller's contract (`u < d`, `p < P`, lanes `16 Z + 8 Y`).
        unsafe {
            let mut az = [[_mm512_setzero_ps(); Z]; P];
            let mut ay = [_mm256_setzero_ps(); P];
            for u in 0..d {
                let row = c.add(u * cs);
                let cz: [__m512; Z] = std::array::from_fn(|z| _mm512_loadu_ps(row.add(16 * z)));
                let cy = if Y {
                    _mm256_loadu_ps(row.add(16 * Z))
                } else {
                    _mm256_setzero_ps()
                };
                for ((x, a), b) in xs.iter().zip(&mut az).zip(&mut ay) {
                    let v = *x.add(u);
                    for (a, c) in a.iter_mut().zip(&cz) {
                        *a = _mm512_fmadd_ps(_mm512_set1_ps(v), *c, *a);
                    }
                    if Y {
                        *b = _mm256_fmadd_ps(_mm256_set1_ps(v), cy, *b);
                    }
                }
            }
            for (p, (a, b)) in az.iter().zip(&ay).enumerate() {
                let o = out.add(p * os);
                for (z, a) in a.iter().enumerate() {
                    _mm512_storeu_ps(o.add(16 * z), _mm512_mul_ps(_mm512_set1_ps(-2.0), *a));
                }
                if Y {
                    _mm256_storeu_ps(o.add(16 * Z), _mm256_mul_ps(_mm256_set1_ps(-2.0), *b));
                }
            }
        }
    }

    /// [`dots`] in `f64`: `R` registers of 8 lanes.
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
    unsafe fn f64s<const P: usize, const R: usize>(
        xs: [*const f64; P],
        c: *const f64,
        cs: usize,
        d: usize,
        out: *mut f64,
        os: usize,
    ) {
        // SAFETY: in bounds by the caller's contract (`u < d`, `p < P`, lanes `8 R`).
        unsafe {
            let mut acc = [[_mm512_setzero_pd(); R]; P];
            for u in 0..d {
                let row = c.add(u * cs);
                let cr: [__m512d; R] = std::array::from_fn(|r| _mm512_loadu_pd(row.add(8 * r)));
                for (x, a) in xs.iter().zip(&mut acc) {
                    let v = _mm512_set1_pd(*x.add(u));
                    for (a, c) in a.iter_mut().zip(&cr) {
                        *a = _mm512_fmadd_pd(v, *c, *a);
                    }
                }
            }
            for (p, a) in acc.iter().enumerate() {
                for (r, a) in a.iter().enumerate() {
                    _mm512_storeu_pd(
                        out.add(p * os + 8 * r),
                        _mm512_mul_pd(_mm512_set1_pd(-2.0), *a),
                    );
                }
            }
        }
    }
}

/// [`scan_product`] over every slot (`s.xn2` must hold the rows' `|x|^2`), and the smallest
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

/// Lanes of [`segment_min`].
const SEGMENT: usize = 16;

/// The smallest of `v[a..b]`, [`SEGMENT`] lanes at a time (the lanes past `b` masked, so the
/// loop vectorises whatever the length; `v` holds [`SEGMENT`] values past `b`): a group's
/// minimum in the first step of the pruned algorithms. A scalar running minimum (one
/// dependent comparison per value) cost a fifth of that step: Yinyang with `max_iter = 1`
/// at 200,000 x 128, k = 1,024 took 1,176-1,208 ms with it, 935-1,065 ms with this; at
/// 100,000 x 256, k = 4,096 2,811-2,865 against 2,486-2,789 ms (Zen 4, 2 threads, a loaded
/// host, the two interleaved in one process).
#[inline(always)]
fn segment_min<T: Element>(v: &[T], a: usize, b: usize) -> T {
    let mut m = [T::MAX; SEGMENT];
    let mut s = a;
    while s < b {
        let len = b - s;
        let c: &[T; SEGMENT] = v[s..s + SEGMENT].try_into().expect("padded");
        for l in 0..SEGMENT {
            let x = if l < len { c[l] } else { T::MAX };
            m[l] = if x < m[l] { x } else { m[l] };
        }
        s += SEGMENT;
    }
    lanes_min(m)
}

/// The label (storage slot) of a point, from its [`Band`] (of [`scan_product`], or several
/// merged), and an upper bound on its squared distance (the exact [`dist2_f64`] value whenever
/// it was computed). `incumbent` is a slot whose exact distance is already known (the previous
/// label of the pruned algorithms, or the best of the groups computed directly), compared as
/// any candidate. Exact distances are computed only for candidates that the error bound cannot
/// separate. `None` when the band overflowed and an unlisted centre may be nearest: then every
/// scanned centre must be compared exactly ([`exact_over`]).
#[inline(always)]
pub(crate) fn finish<T: Element>(
    x: &[T],
    xn2: f64,
    band: &Band<T>,
    cent: &Centres<T>,
    incumbent: Option<(u32, f64)>,
) -> Option<(u32, f64)> {
    let mut best = incumbent.unwrap_or((u32::MAX, f64::INFINITY));
    if band.best_slot == u32::MAX {
        return Some(best);
    }
    let err = cent.err(xn2);
    let lead = band.best.to_f64();
    // Candidates whose exact distance may be the smallest: within 2 err of the best product
    // value, or of the incumbent's exact value (product values are distances less |x|^2).
    let limit = lead.min(best.1 - xn2 - err) + 2.0 * err;
    if band.floor().to_f64() <= limit {
        return None;
    }
    let mut near = 0;
    let mut only = (u32::MAX, 0.0);
    for i in 0..band.len as usize {
        if band.val[i].to_f64() > limit || incumbent.is_some_and(|(s, _)| s == band.slot[i]) {
            continue;
        }
        near += 1;
        only = (band.slot[i], band.val[i].to_f64());
    }
    if near == 1 && (incumbent.is_none() || only.1 + err < best.1 - xn2) {
        // One candidate, certainly nearer than the incumbent: no exact distance needed.
        return Some((only.0, xn2 + only.1 + err));
    }
    for i in 0..band.len as usize {
        let j = band.slot[i];
        if band.val[i].to_f64() > limit || incumbent.is_some_and(|(s, _)| s == j) {
            continue;
        }
        take(cent, j, dist2_f64(x, cent.row(j as usize)), &mut best);
    }
    Some(best)
}

/// The nearest slot of a row of product values (`norms[j] + row[j]`, slots from 0) and its
/// distance bound, when a single value lies within the point's band of the smallest: what
/// [`Band::scan`] and [`finish`] would return for that row (the same value, slot and
/// distance), without building the band. `None` when the band holds more than one value or
/// [`finish`] would need exact distances: the caller then settles the row ([`settle`]).
/// `avx512` is [`crate::isa::has_avx512`], read once by the caller.
#[inline(always)]
fn single_nearest<T: Element>(
    row: &[T],
    norms: &[T],
    xn2: f64,
    cent: &Centres<T>,
    avx512: bool,
) -> Option<(u32, f64)> {
    let (rows, rrest) = row.as_chunks::<16>();
    let (ns, nrest) = norms.as_chunks::<16>();
    let rest = || nrest.iter().zip(rrest).map(|(&n, &r)| n + r);
    let m = rest().fold(lanes_min(lane_mins::<T, false>(rows, ns).0), |m, v| {
        if v < m { v } else { m }
    });
    let bar = m + cent.band_width(xn2);
    let mut count = 0;
    let mut first = u32::MAX;
    for (b, (r, n)) in rows.iter().zip(ns).enumerate() {
        let mask = le_mask(r, n, bar, avx512);
        count += mask.count_ones();
        if first == u32::MAX && mask != 0 {
            first = (b * 16) as u32 + mask.trailing_zeros();
        }
    }
    for (l, v) in rest().enumerate() {
        if v <= bar {
            count += 1;
            first = first.min((rows.len() * 16 + l) as u32);
        }
    }
    // The band's floor is `bar` (its second value is the smallest, as `scan` leaves it
    // without `SECOND`); `finish` computes exact distances when that is within its limit.
    let err = cent.err(xn2);
    let lead = m.to_f64();
    (count == 1 && bar.to_f64() > lead + 2.0 * err).then_some((first, xn2 + lead + err))
}

/// The label and distance bound of a point from its band over every centre ([`finish`]
/// without an incumbent), or from every exact distance when the band cannot tell.
fn settle<T: Element>(x: &[T], xn2: f64, band: &Band<T>, cent: &Centres<T>) -> (u32, f64) {
    finish(x, xn2, band, cent, None).unwrap_or_else(|| {
        let mut best = (u32::MAX, f64::INFINITY);
        exact_over(x, cent, 0..cent.k, &mut best);
        best
    })
}

/// The exact nearest slot of `range`, with `best` as the incumbent (the fallback of
/// [`finish`]).
#[inline(never)]
pub(crate) fn exact_over<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
    best: &mut (u32, f64),
) {
    for j in range {
        take(cent, j as u32, dist2_f64(x, cent.row(j)), best);
    }
}

/// The squared distance of a point of `D <= 8` coordinates (already in `f64`) to a centre,
/// with the bits of [`dist2_f64`]: coordinate `t` is its partial sum `t`, the others are
/// empty. They are `-0.0` here where `dist2_f64` has `0.0`: `a + (-0.0)` is `a` for every `a`,
/// so the compiler drops those additions, and `a + 0.0` is `a` too for every `a` but `-0.0`,
/// which no sum of squares is.
#[inline(always)]
pub(crate) fn dist2_small<const D: usize>(x: &[f64; D], c: impl Fn(usize) -> f64) -> f64 {
    debug_assert!(D <= 8);
    combine8(std::array::from_fn(|u| {
        if u < D {
            let t = x[u] - c(u);
            t * t
        } else {
            -0.0
        }
    }))
}

/// The nearest centre of a point of `D <= 8` coordinates (already in `f64`) and its squared
/// distance, for centres in the caller's order ([`Centres::in_order`], direct method): the
/// smallest [`dist2_small`], ties to the lower index, as the reference. No per-point dispatch
/// and no range: the kernel of the small shapes (a few centres in a few dimensions), where
/// anything else per point costs as much as the distances.
/// Centre counts up to which [`nearest_in_order`] takes the centres one after the other.
const IN_ORDER_MAX_K: usize = 32;

#[inline(always)]
pub(crate) fn nearest_in_order<T: Element, const D: usize>(
    x: &[f64; D],
    cent: &Centres<T>,
) -> (u32, f64) {
    debug_assert!(cent.in_order && cent.d == D && cent.method == Method::Direct);
    // Strictly smaller replaces: ties keep the lower index; a NaN distance never wins.
    let mut best = (0u32, f64::INFINITY);
    // Up to IN_ORDER_MAX_K centres, one after the other: faster in wall-clock time than the
    // blocks below (10^4 points, d = 2, Zen 4, one thread: 0.085 against 0.28 ms an iteration
    // at k = 8, 0.25 against 0.34 at k = 32; the blocks win at k = 128).
    if cent.k <= IN_ORDER_MAX_K {
        let (rows, _) = cent.c64.as_chunks::<D>();
        for (j, c) in rows.iter().enumerate() {
            let v = dist2_small(x, |u| c[u]);
            if v < best.1 {
                best = (j as u32, v);
            }
        }
        return best;
    }
    // Blocks of LANES centres, transposed (slots past k are infinitely far): one vector per
    // coordinate, and per lane the running minimum over the blocks and its block (strictly
    // smaller replaces, so the earlier block keeps a tie; the block number is kept as an `f64`
    // so that the selects vectorise); then the lanes, ties to the lower index.
    let mut bv = [f64::INFINITY; LANES];
    let mut bb = [0f64; LANES];
    for (b, blk) in cent.dt.chunks_exact(D * LANES).enumerate() {
        let (rows, _) = blk.as_chunks::<LANES>();
        let rows = &rows[..D];
        let bf = b as f64;
        for l in 0..LANES {
            let v = dist2_small(x, |u| rows[u][l]);
            let better = v < bv[l];
            bv[l] = if better { v } else { bv[l] };
            bb[l] = if better { bf } else { bb[l] };
        }
    }
    // Every lane of block 0 is a centre (k >= LANES); a lane that found nothing below
    // infinity keeps block 0, so that all-infinite distances give centre 0, as the reference.
    // Without branches (the lanes' order is data): the smallest value, then the smallest centre
    // among the lanes that hold it.
    let m = bv
        .iter()
        .fold(f64::INFINITY, |a, &v| if v < a { v } else { a });
    let mut j = f64::INFINITY;
    for l in 0..LANES {
        let c = bb[l] * LANES as f64 + l as f64;
        let c = if bv[l] == m { c } else { f64::INFINITY };
        j = if c < j { c } else { j };
    }
    (j as u32, m)
}

/// The nearest slot of `x` among the slots `range` by the direct path, exactly: the
/// reference's distances (see the module docs), ties to the lower caller index.
#[inline(always)]
pub(crate) fn nearest_direct<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
) -> (u32, f64) {
    let (best, _) = direct_dispatch::<T, false>(x, cent, range);
    best
}

/// [`nearest_direct`] and the second smallest distance of the range (`f64::INFINITY` for a
/// range of one centre).
#[inline(always)]
pub(crate) fn nearest_two_direct<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
) -> ((u32, f64), f64) {
    direct_dispatch::<T, true>(x, cent, range)
}

#[inline(always)]
fn direct_dispatch<T: Element, const SECOND: bool>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
) -> ((u32, f64), f64) {
    match cent.d {
        1 => direct_d::<T, 1, SECOND>(x, cent, range),
        2 => direct_d::<T, 2, SECOND>(x, cent, range),
        3 => direct_d::<T, 3, SECOND>(x, cent, range),
        4 => direct_d::<T, 4, SECOND>(x, cent, range),
        _ => direct_d::<T, 0, SECOND>(x, cent, range),
    }
}

/// The direct path for `d == D` (`D > 0`) or any `d` (`D == 0`); with `SECOND`, also the
/// second smallest distance.
// Index loops over fixed-size register blocks: the shape LLVM vectorises.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn direct_d<T: Element, const D: usize, const SECOND: bool>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
) -> ((u32, f64), f64) {
    let d = if D > 0 { D } else { cent.d };
    let mut best = (u32::MAX, f64::INFINITY);
    let mut second = f64::INFINITY;
    let consider = |j: usize, v: f64, best: &mut (u32, f64), second: &mut f64| {
        let old = *best;
        take(cent, j as u32, v, best);
        if SECOND {
            // The loser of the comparison is a candidate for second place.
            let loser = if best.0 == old.0 { v } else { old.1 };
            if loser < *second {
                *second = loser;
            }
        }
    };
    if D > 0 && range.len() < LANES {
        // Fewer centres than lanes at d <= 4: one partial sum per coordinate, added by
        // dist2_f64's own combine8 (the zero sums change no bits), with the point converted once.
        let mut xs = [0f64; 4];
        for (o, v) in xs.iter_mut().zip(x) {
            *o = v.to_f64();
        }
        for j in range {
            let c = cent.row(j);
            let p: [f64; 8] = std::array::from_fn(|t| {
                if t < D {
                    let u = xs[t] - c[t];
                    u * u
                } else {
                    0.0
                }
            });
            consider(j, combine8(p), &mut best, &mut second);
        }
        return (best, second);
    }
    if d > DIRECT_MAX_D || range.len() < LANES {
        for j in range {
            let v = dist2_f64(x, cent.row(j));
            consider(j, v, &mut best, &mut second);
        }
        return (best, second);
    }
    let mut xs = [0f64; DIRECT_MAX_D];
    for (o, v) in xs.iter_mut().zip(x) {
        *o = v.to_f64();
    }
    let (b0, b1) = (range.start / LANES, range.end.div_ceil(LANES));
    for b in b0..b1 {
        let blk = &cent.dt[b * d * LANES..(b + 1) * d * LANES];
        let (rows, _) = blk.as_chunks::<LANES>();
        // acc[u][l]: partial sum u (coordinates t with t % 8 == u) of lane l, as dist2_f64.
        let mut acc = [[0f64; LANES]; 8];
        let full = d / 8;
        for ch in 0..full {
            for u in 0..8 {
                let t = ch * 8 + u;
                let (xv, r) = (xs[t], &rows[t]);
                for l in 0..LANES {
                    let diff = xv - r[l];
                    acc[u][l] += diff * diff;
                }
            }
        }
        for u in 0..d % 8 {
            let t = full * 8 + u;
            let (xv, r) = (xs[t], &rows[t]);
            for l in 0..LANES {
                let diff = xv - r[l];
                acc[u][l] += diff * diff;
            }
        }
        let v: [f64; LANES] = std::array::from_fn(|l| combine8(std::array::from_fn(|u| acc[u][l])));
        let mut m = v[0];
        for &a in &v[1..] {
            m = if a < m { a } else { m };
        }
        let bar = if SECOND { second } else { best.1 };
        if m <= bar {
            for (l, &a) in v.iter().enumerate() {
                let j = b * LANES + l;
                if range.contains(&j) {
                    consider(j, a, &mut best, &mut second);
                }
            }
        }
    }
    (best, second)
}

/// Euclidean distances of the rows of `x` (at most [`TILE_ROWS`]) to every centre, `p x k`
/// row-major into `out`: `sqrt(max(0, |x|^2 + |c|^2 - 2 x.c))` from the tiles' products.
pub(crate) fn distances_tile<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    s: &mut Scratch<T>,
    out: &mut Vec<f64>,
) {
    let (d, k) = (cent.d, cent.k);
    let p = x.len() / d;
    row_norms(x, d, &mut s.xn2);
    out.clear();
    out.resize(p * k, 0.0);
    s.tile.resize(p * TILE_CENTRES.min(k), T::zero());
    let mut j0 = 0;
    while j0 < k {
        let q = TILE_CENTRES.min(k - j0);
        product(x, p, cent, j0, q, &mut s.tile);
        for (i, row) in s.tile.chunks_exact(q).enumerate().take(p) {
            let o = &mut out[i * k + j0..i * k + j0 + q];
            for ((o, &g), &n) in o.iter_mut().zip(row).zip(&cent.norms[j0..j0 + q]) {
                *o = (s.xn2[i] + n.to_f64() + g.to_f64()).max(0.0).sqrt();
            }
        }
        j0 += q;
    }
}

/// Squared distances of the rows of `x` (at most [`TILE_ROWS`]) to every centre, `p x k`
/// row-major into `out`: exact ([`dist2_f64`]) on the direct path, `max(0, |x|^2 + e_j)` from
/// the products (within [`Centres::err`]) on the product path.
pub(crate) fn sq_distances_tile<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    s: &mut Scratch<T>,
    out: &mut Vec<f64>,
) {
    let (d, k) = (cent.d, cent.k);
    let p = x.len() / d;
    out.clear();
    out.resize(p * k, 0.0);
    if cent.method == Method::Direct {
        for (o, xr) in out.chunks_exact_mut(k).zip(x.chunks_exact(d)) {
            for (j, v) in o.iter_mut().enumerate() {
                *v = dist2_f64(xr, cent.row(j));
            }
        }
        return;
    }
    row_norms(x, d, &mut s.xn2);
    s.tile.resize(p * TILE_CENTRES.min(k), T::zero());
    let mut j0 = 0;
    while j0 < k {
        let q = TILE_CENTRES.min(k - j0);
        product(x, p, cent, j0, q, &mut s.tile);
        for (i, row) in s.tile.chunks_exact(q).enumerate().take(p) {
            let o = &mut out[i * k + j0..i * k + j0 + q];
            for ((o, &g), &n) in o.iter_mut().zip(row).zip(&cent.norms[j0..j0 + q]) {
                *o = (s.xn2[i] + (n + g).to_f64()).max(0.0);
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
            for (o, xr) in out.iter_mut().zip(x.chunks_exact(d)) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn reference(x: &[f64], c: &[f64], d: usize) -> Vec<(u32, f64)> {
        x.chunks_exact(d)
            .map(|xr| {
                let mut best = (0u32, f64::INFINITY);
                for (j, cr) in c.chunks_exact(d).enumerate() {
                    let v = dist2_f64(xr, cr);
                    if v < best.1 {
                        best = (j as u32, v);
                    }
                }
                best
            })
            .collect()
    }

    /// Every method this CPU runs.
    fn methods() -> Vec<Method> {
        let mut m = vec![Method::Direct, Method::Gemm];
        if crate::isa::has_avx2() {
            m.push(Method::Fused);
        }
        m
    }

    fn check<T: Element>(x: &[f64], c: &[f64], d: usize, method: Method) {
        let k = c.len() / d;
        let xt: Vec<T> = x.iter().map(|&v| T::from_f64(v)).collect();
        let xr: Vec<f64> = xt.iter().map(|v| v.to_f64()).collect();
        let want = reference(&xr, c, d);
        let cent = Centres::<T>::new(c, k, d, None, method, false);
        let mut s = Scratch::new();
        for (ti, tile) in xt.chunks(TILE_ROWS * d).enumerate() {
            let mut out = vec![(0, 0.0); tile.len() / d];
            nearest_tile(tile, &cent, &mut s, &mut out);
            for (i, o) in out.iter().enumerate() {
                let w = want[ti * TILE_ROWS + i];
                let row = ti * TILE_ROWS + i;
                assert_eq!(o.0, w.0, "{} {method:?} k {k} d {d} row {row}", T::NAME);
                if method == Method::Direct {
                    assert_eq!(o.1.to_bits(), w.1.to_bits(), "{method:?} row {row}");
                } else if method == Method::Gemm {
                    // An upper bound, exact when it was computed.
                    assert!(
                        o.1 >= w.1,
                        "{} {method:?} row {row}: {} < {}",
                        T::NAME,
                        o.1,
                        w.1
                    );
                }
            }
        }
    }

    #[test]
    fn both_methods_give_the_reference_labels_and_distances() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for &(n, d, k) in &[
            (1, 1, 1),
            (5, 3, 2),
            (300, 2, 9),
            (257, 13, 17),
            (600, 40, 100),
            (300, 128, 600),
            (100, 7, 1),
            // One tile of centres (every k above but 600): `single_nearest` first, with and
            // without whole chunks of 16.
            (600, 40, 64),
            (300, 16, 48),
            (200, 128, 512),
        ] {
            let x: Vec<f64> = (0..n * d).map(|_| rng.random_range(-1.0..1.0)).collect();
            let c: Vec<f64> = (0..k * d).map(|_| rng.random_range(-1.0..1.0)).collect();
            for m in methods() {
                check::<f32>(&x, &c, d, m);
                check::<f64>(&x, &c, d, m);
            }
        }
    }

    /// `single_nearest` answers exactly when the band holds one value and `finish` needs no
    /// exact distance, and then as the band and `finish` do.
    #[test]
    fn single_nearest_is_the_band_when_it_answers() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Whole chunks of 16, and a remainder of 2 lanes past them.
        for (d, k) in [(24, 64), (24, 50)] {
            let c: Vec<f64> = (0..k * d).map(|_| rng.random_range(-1.0..1.0)).collect();
            let cent = Centres::<f64>::new(&c, k, d, None, Method::Gemm, false);
            let (mut some, mut none) = (0, 0);
            for i in 0..2000 {
                // Random points, and points halfway between two centres (bands of two).
                let x: Vec<f64> = if i % 2 == 0 {
                    (0..d).map(|_| rng.random_range(-1.0..1.0)).collect()
                } else {
                    let (a, b) = (i % k, (i * 5 + 3) % k);
                    (0..d)
                        .map(|u| 0.5 * (c[a * d + u] + c[b * d + u]))
                        .collect()
                };
                let xn2 = norm2(&x);
                let mut row = vec![0.0; k];
                product(&x, 1, &cent, 0, k, &mut row);
                let norms = &cent.norms[..k];
                let mut band = Band::new(cent.band_width(xn2));
                band.scan::<false>(&row, norms, 0);
                let want = finish(&x, xn2, &band, &cent, None);
                for avx512 in [false, crate::isa::has_avx512()] {
                    match single_nearest(&row, norms, xn2, &cent, avx512) {
                        Some(got) => {
                            assert_eq!(band.len, 1, "point {i}");
                            assert_eq!(Some(got), want, "point {i}");
                            some += 1;
                        }
                        None => none += 1,
                    }
                }
            }
            assert!(
                some > 1000 && none > 100,
                "{some} answered, {none} left to the band"
            );
        }
    }

    /// Near-ties everywhere: points on the bisectors of pairs of centres, far from the origin
    /// (large `|x| |c|` against small distances: the product's rounding is at its worst).
    #[test]
    fn near_ties_and_offset_data_are_settled_exactly() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        // With the duplicate below k = 32, 201 and 64: `single_nearest` with and without a
        // remainder past the chunks of 16.
        for &(d, k) in &[(16, 31), (64, 200), (200, 63)] {
            let off: Vec<f64> = (0..d).map(|_| rng.random_range(50.0..100.0)).collect();
            let c: Vec<f64> = (0..k * d)
                .map(|i| off[i % d] + rng.random_range(-1.0..1.0))
                .collect();
            let mut x = Vec::new();
            for i in 0..700 {
                let (a, b) = (i % k, (i * 7 + 1) % k);
                let t: f64 = if i % 3 == 0 {
                    0.5
                } else {
                    rng.random_range(0.49..0.51)
                };
                for u in 0..d {
                    x.push(c[a * d + u] * t + c[b * d + u] * (1.0 - t));
                }
            }
            // Exact duplicates of centres and of each other (exact ties to the lower index).
            x.extend_from_slice(&c[..d]);
            let mut c2 = c.clone();
            c2.extend_from_slice(&c[..d]);
            for m in methods() {
                check::<f32>(&x, &c2, d, m);
                check::<f64>(&x, &c2, d, m);
            }
        }
    }

    #[test]
    fn a_storage_order_keeps_ties_to_the_lower_caller_index() {
        // Two identical centres stored in reverse order: the lower caller index wins.
        let c = vec![1.0, 2.0, 1.0, 2.0, 5.0, 5.0];
        let order = [2u32, 1, 0];
        for m in methods() {
            let cent = Centres::<f64>::new(&c, 3, 2, Some(&order), m, false);
            let mut s = Scratch::new();
            let mut out = vec![(0, 0.0); 1];
            nearest_tile(&[1.0, 2.0], &cent, &mut s, &mut out);
            assert_eq!(cent.id(out[0].0), 0, "{m:?}");
        }
    }

    /// The blocked products of a group agree with the exact dot products within the error
    /// bound, and taking their rows into a point's band (`merge_row`) gives what scanning and
    /// merging gives (the same band), for every width of group and count of rows.
    fn blocked_case<T: Element>(d: usize, sizes: &[usize], seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let k: usize = sizes.iter().sum();
        let c: Vec<f64> = (0..k * d).map(|_| rng.random_range(-1.0..1.0)).collect();
        let n = 40;
        let x: Vec<T> = (0..n * d)
            .map(|_| T::from_f64(rng.random_range(-1.0..1.0)))
            .collect();
        let mut starts = vec![0];
        for &q in sizes {
            starts.push(starts.last().unwrap() + q);
        }
        let cent = Centres::<T>::new(&c, k, d, None, Method::Gemm, false);
        let blocks = GroupBlocks::new(&cent, &starts, |_| true);
        let avx512 = crate::isa::has_avx512();
        let mut s = Scratch::new();
        for g in 0..sizes.len() {
            assert_eq!(
                blocks.has(g),
                avx512,
                "blocks exactly where the kernels run"
            );
            if !avx512 {
                continue;
            }
            let range = starts[g]..starts[g + 1];
            // Every count of rows (the kernels take 8, 4 and 1 at a time), rows out of order.
            for p in [1, 3, 4, 7, 8, 9, 13, 21] {
                let rows: Vec<u32> = (0..p).map(|i| ((i * 17 + g) % n) as u32).collect();
                let rw = blocked_products(&x, &rows, &blocks, g, &mut s);
                assert_eq!(rw % 16, 0);
                assert!(rw >= range.len());
                let norms = blocks.norms(g).to_vec();
                for (q, &i) in rows.iter().enumerate() {
                    let xr = &x[i as usize * d..(i as usize + 1) * d];
                    let xn2 = norm2(xr);
                    let row = &s.tile[q * rw..(q + 1) * rw];
                    for (l, j) in range.clone().enumerate() {
                        let exact = dist2_f64(xr, cent.row(j)) - xn2;
                        let got = (norms[l] + row[l]).to_f64();
                        assert!(
                            (got - exact).abs() <= cent.err(xn2),
                            "d {d} group {g} row {q} centre {j}: {got} vs {exact}"
                        );
                    }
                    for v in &norms[range.len()..rw] {
                        assert!(v.to_f64().is_infinite(), "padding never chosen");
                    }
                    // merge_row against scan + merge, from an empty band and from a band
                    // whose best is far below (the fast path) or between.
                    let width = cent.band_width(xn2);
                    let mut scanned = Band::new(width);
                    scanned.scan::<true>(row, &norms, range.start);
                    for start in [None, Some(-1e3), Some(scanned.best.to_f64())] {
                        let mut a = Band::new(width);
                        let mut b = Band::new(width);
                        if let Some(v) = start {
                            let other = Band {
                                best: T::from_f64(v),
                                best_slot: u32::MAX - 1,
                                second: T::MAX,
                                ..Band::new(width)
                            };
                            a.merge(&other);
                            b.merge(&other);
                        }
                        let (v1, s1, v2) = a.merge_row(row, &norms, range.start);
                        b.merge(&scanned);
                        assert_eq!((v1, s1), (scanned.best, scanned.best_slot));
                        assert!(v2 >= v1 && v2 <= scanned.second(s1));
                        assert_eq!((a.best, a.best_slot, a.len), (b.best, b.best_slot, b.len));
                        assert_eq!(a.floor(), b.floor(), "start {start:?}");
                        assert_eq!(a.second(a.best_slot), b.second(b.best_slot));
                    }
                }
            }
        }
    }

    #[test]
    fn blocked_products_match_the_product_and_merge_like_a_scan() {
        // Groups of 8 to 47 centres: one register of 8 lanes, of 16, 16 + 8, 32 + 8, ...
        let sizes = [8, 13, 16, 20, 24, 31, 33, 47];
        for d in [3, 16, 67, 256] {
            blocked_case::<f32>(d, &sizes, d as u64);
            blocked_case::<f64>(d, &sizes, d as u64 + 1);
        }
    }

    #[test]
    fn segment_min_is_the_minimum_of_the_segment() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let v: Vec<f32> = (0..200).map(|_| rng.random_range(-5.0..5.0)).collect();
        let mut padded = v.clone();
        padded.extend([f32::MAX; SEGMENT]);
        for a in [0, 1, 5, 17, 100] {
            for len in [1, 7, 8, 15, 16, 17, 31, 33, 64, 99] {
                let b = (a + len).min(v.len());
                let want = v[a..b].iter().copied().fold(f32::MAX, f32::min);
                assert_eq!(segment_min(&padded, a, b), want, "{a}..{b}");
            }
        }
    }
}
