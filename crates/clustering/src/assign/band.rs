//! A point's band of candidate centres ([`Band`]) and the scans of product tiles that fill
//! it: the vectorised minimum, then the values near it.

use super::TILE_CENTRES;
#[cfg(target_arch = "x86_64")]
use super::avx512;
use crate::Element;
use crate::centres::Centres;
use crate::lloyd::norm2;

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
    pub(super) second: T,
    /// The band's width.
    pub(super) width: T,
    /// More centres fell within the band than it lists.
    pub(super) overflow: bool,
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
    pub(super) fn push(&mut self, v: T, slot: u32) {
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
    pub(super) fn lower_best(&mut self, v: T, slot: u32) {
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
    /// [`blocked_products`](super::blocked_products), a multiple of 16 long) and returns their smallest, its slot and
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
    pub(super) fn scan<const SECOND: bool>(&mut self, row: &[T], norms: &[T], first: usize) {
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
pub(super) fn le_mask<T: Element>(row: &[T; 16], norms: &[T; 16], bar: T, avx512: bool) -> u32 {
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
pub(super) fn lane_mins<T: Element, const SECOND: bool>(
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
pub(super) fn product<T: Element>(
    x: &[T],
    p: usize,
    cent: &Centres<T>,
    j0: usize,
    q: usize,
    out: &mut [T],
) {
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
    /// One row's product values (and 16 more lanes, for [`segment_min`](super::settle::segment_min)).
    pub(super) vals: Vec<T>,
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
    row_norms_into(x, d, out);
}

/// `|x|^2` of each row into `out` (one per row), in `f64`.
#[inline(always)]
pub(crate) fn row_norms_into<T: Element>(x: &[T], d: usize, out: &mut [f64]) {
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
