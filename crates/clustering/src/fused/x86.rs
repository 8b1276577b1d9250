//! The fused kernels with AVX-512 or AVX2 and FMA, generic over one register of lanes
//! ([`Lanes`]).

use super::narrow::Fold;
use super::{Buffer, GROUP, PREFETCH_ROWS, TILE, band_widths, settle_row};
use crate::Element;
use crate::centres::Centres;
use crate::lloyd::{StepStats, dist2_f64};
use crate::sums::TileSums;
use std::any::TypeId;
use std::arch::x86_64::*;

/// One vector register of lanes of `T`, for the kernel.
///
/// # Safety
/// Every method needs the CPU features of its implementation (AVX-512F for the 512-bit
/// ones, AVX2 and FMA for the 256-bit ones); pointers must be valid for `W` values
/// (one for `bcast`).
pub(super) trait Lanes<T>: Copy {
    /// Lanes per register.
    const W: usize;
    unsafe fn load(p: *const T) -> Self;
    unsafe fn store(self, p: *mut T);
    /// Every lane `*p`.
    unsafe fn bcast(p: *const T) -> Self;
    unsafe fn splat(v: T) -> Self;
    /// `a * b + c` with one rounding.
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self;
    unsafe fn min(a: Self, b: Self) -> Self;
    /// `a + b`.
    unsafe fn add(a: Self, b: Self) -> Self;
    /// The smallest lane.
    unsafe fn hmin(self) -> T;
    /// Bit `l` set when lane `l` is at most `bar` (ordered: NaN lanes are not).
    unsafe fn le(self, bar: Self) -> u32;
}

/// Declares the register types of one instruction set and their [`Lanes`]: per type its
/// register `$v` of `$w` lanes and its operations.
macro_rules! lanes {
    ($($name:ident, $t:ty, $v:ty, $w:literal,
       load $load:ident, store $store:ident, set1 $set1:ident, fma $fma:ident, min $min:ident,
       add $addv:ident,
       le |$a:ident, $b:ident| $le:expr, hmin |$h:ident| $hmin:expr;)*) => {$(
        #[derive(Clone, Copy)]
        pub(super) struct $name(pub(super) $v);
        impl Lanes<$t> for $name {
            const W: usize = $w;
            #[inline(always)]
            unsafe fn load(p: *const $t) -> Self {
                // SAFETY: the trait's contract.
                unsafe { $name($load(p)) }
            }
            #[inline(always)]
            unsafe fn store(self, p: *mut $t) {
                // SAFETY: the trait's contract.
                unsafe { $store(p, self.0) }
            }
            #[inline(always)]
            unsafe fn bcast(p: *const $t) -> Self {
                // SAFETY: the trait's contract.
                unsafe { $name($set1(*p)) }
            }
            #[inline(always)]
            unsafe fn splat(v: $t) -> Self {
                // SAFETY: the trait's contract.
                unsafe { $name($set1(v)) }
            }
            #[inline(always)]
            unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
                // SAFETY: the trait's contract.
                unsafe { $name($fma(a.0, b.0, c.0)) }
            }
            #[inline(always)]
            unsafe fn min(a: Self, b: Self) -> Self {
                // SAFETY: the trait's contract.
                unsafe { $name($min(a.0, b.0)) }
            }
            #[inline(always)]
            unsafe fn add(a: Self, b: Self) -> Self {
                // SAFETY: the trait's contract.
                unsafe { $name($addv(a.0, b.0)) }
            }
            #[inline(always)]
            unsafe fn hmin(self) -> $t {
                let $h = self.0;
                // SAFETY: the trait's contract.
                unsafe { $hmin }
            }
            #[inline(always)]
            unsafe fn le(self, bar: Self) -> u32 {
                let ($a, $b) = (self.0, bar.0);
                // SAFETY: the trait's contract.
                unsafe { $le }
            }
        }
    )*};
}

lanes!(
    Z32, f32, __m512, 16,
    load _mm512_loadu_ps, store _mm512_storeu_ps, set1 _mm512_set1_ps, fma _mm512_fmadd_ps,
    min _mm512_min_ps, add _mm512_add_ps,
    le |a, b| u32::from(_mm512_cmp_ps_mask::<_CMP_LE_OQ>(a, b)),
    hmin |h| _mm512_reduce_min_ps(h);
    Z64, f64, __m512d, 8,
    load _mm512_loadu_pd, store _mm512_storeu_pd, set1 _mm512_set1_pd, fma _mm512_fmadd_pd,
    min _mm512_min_pd, add _mm512_add_pd,
    le |a, b| u32::from(_mm512_cmp_pd_mask::<_CMP_LE_OQ>(a, b)),
    hmin |h| _mm512_reduce_min_pd(h););
lanes!(
    Y32, f32, __m256, 8,
    load _mm256_loadu_ps, store _mm256_storeu_ps, set1 _mm256_set1_ps, fma _mm256_fmadd_ps,
    min _mm256_min_ps, add _mm256_add_ps,
    le |a, b| _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(a, b)) as u32,
    hmin |h| {
        let m = _mm_min_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps::<1>(h));
        let m = _mm_min_ps(m, _mm_movehl_ps(m, m));
        _mm_cvtss_f32(_mm_min_ss(m, _mm_movehdup_ps(m)))
    };
    Y64, f64, __m256d, 4,
    load _mm256_loadu_pd, store _mm256_storeu_pd, set1 _mm256_set1_pd, fma _mm256_fmadd_pd,
    min _mm256_min_pd, add _mm256_add_pd,
    le |a, b| _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LE_OQ>(a, b)) as u32,
    hmin |h| {
        let m = _mm_min_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd::<1>(h));
        _mm_cvtsd_f64(_mm_min_sd(m, _mm_unpackhi_pd(m, m)))
    };);

/// `T` seen as `U` (the same type, checked).
#[inline(always)]
pub(super) fn same<T: 'static, U: 'static>(s: &[T]) -> &[U] {
    assert!(TypeId::of::<T>() == TypeId::of::<U>());
    // SAFETY: `T` and `U` are the same type (checked just above).
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<U>(), s.len()) }
}

/// `$call` with `$u` the element type `$t` (`f32` or `f64`, checked at run time; the callee
/// checks it again through [`same`]) and `$v` its register of lanes (`$v32` or `$v64`).
macro_rules! by_element {
    ($t:ty, $v32:ty, $v64:ty, |$v:ident, $u:ident| $call:expr) => {
        if TypeId::of::<$t>() == TypeId::of::<f32>() {
            type $v = $v32;
            type $u = f32;
            $call
        } else {
            type $v = $v64;
            type $u = f64;
            $call
        }
    };
}
pub(super) use by_element;

/// Declares a labelling entry point of one instruction set, `unsafe fn $name<T>(x, xn2,
/// extras.., cent, buf, out)`: the band widths of the rows, then `$call` with `V` the element
/// type's register of lanes (`$v32`, `$v64`) and `U` the element type.
macro_rules! labels_entry {
    ($(#[$m:meta])* $name:ident, $feat:literal, $v32:ident, $v64:ident, [$($extra:ident: $et:ty),*],
     |$x:ident, $xn2:ident, $cent:ident, $buf:ident, $out:ident| $call:expr) => {
        $(#[$m])*
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn $name<T: Element>(
            $x: &[T],
            $xn2: &[f64],
            $($extra: $et,)*
            $cent: &Centres<T>,
            $buf: &mut Buffer<T>,
            $out: &mut [u32],
        ) {
            band_widths(&$xn2[..$out.len()], $cent, $buf);
            // SAFETY: the caller's contract; the element type is checked by `same`.
            unsafe {
                by_element! { T, $v32, $v64, |V, U| $call }
            }
        }
    };
}
pub(super) use labels_entry;

/// Declares the entry points of one instruction set: the squared distances and the labels
/// of a tile, and a whole leaf, each with the element type's lanes (`$v32`, `$v64`) and at
/// most `$bmax` registers of centres at a time.
macro_rules! entries {
    ($labels:ident, $leaf:ident, $dist:ident, $feat:literal, $v32:ident, $v64:ident,
     $bmax:expr, |$px:ident, $pn:ident, $pp:ident, $pc:ident, $pb:ident, $po:ident| $narrow:expr) => {
        /// Squared distances of the rows (see `super::sq_distance_rows`).
        ///
        /// # Safety
        /// The CPU has the features enabled here; `buf` is sized for `xn2.len()` rows.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn $dist<T: Element>(
            x: &[T],
            xn2: &[f64],
            cent: &Centres<T>,
            buf: &mut Buffer<T>,
            out: &mut [f32],
        ) {
            // SAFETY: the caller's contract; the element type is checked by `same`.
            unsafe {
                by_element! {
                    T, $v32, $v64, |V, U|
                    distances::<T, V, U, $bmax>(x, xn2, cent, &mut buf.vals, out)
                }
            }
        }

        labels_entry!(
            /// The labels of the rows (see `super::nearest_rows`).
            ///
            /// # Safety
            /// The CPU has the features enabled here; `buf` is sized for `out.len()` rows.
            $labels, $feat, $v32, $v64, [],
            |x, xn2, cent, buf, out| {
                /// The kernel prefetching the rows as it reads them, for data that streams
                /// from memory: a function of its own, so that its copy of the loops leaves
                /// the registers of the other alone (compiled into one function, an AVX2
                /// accumulator spilled to the stack at every coordinate).
                ///
                /// # Safety
                /// As the entry's.
                #[target_feature(enable = $feat)]
                #[inline(never)]
                unsafe fn streamed<T: Element, V: Fold<U>, U: Element>(
                    x: &[T],
                    cent: &Centres<T>,
                    buf: &mut Buffer<T>,
                    out: &mut [u32],
                ) {
                    // SAFETY: the caller's contract.
                    unsafe { by_registers::<T, V, U, $bmax, true>(x, cent, buf, out) }
                }
                if cent.prefetch {
                    streamed::<T, V, U>(x, cent, buf, out)
                } else {
                    by_registers::<T, V, U, $bmax, false>(x, cent, buf, out)
                }
            }
        );

        /// A leaf of a Lloyd step (see `super::leaf`).
        ///
        /// # Safety
        /// The CPU has the features enabled here.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn $leaf<T: Element>(
            x: &[T],
            rows: crate::fused::RowAids<'_, T>,
            cent: &Centres<T>,
            labels: &mut [u32],
            out: (&mut StepStats, &mut [f64], bool),
        ) {
            let labels_of = |$px: &[T],
                             $pn: &[f64],
                             packed: Option<&[T]>,
                             $pc: &Centres<T>,
                             $pb: &mut Buffer<T>,
                             $po: &mut [u32]| {
                let $pp = packed;
                // SAFETY: the caller's contract; the packed blocks, when given, are the
                // tile's.
                if !unsafe { $narrow } {
                    // SAFETY: the caller's contract.
                    unsafe { $labels($px, $pn, $pc, $pb, $po) }
                }
            };
            // SAFETY: the caller's contract; the element type is checked by `same`.
            unsafe {
                by_element! {
                    T, $v32, $v64, |V, U|
                    leaf_tiles::<T, V, U>(x, rows, cent, labels, out, labels_of)
                }
            }
        }
    };
}

entries!(
    labels_avx512,
    leaf_avx512,
    distances_avx512,
    "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi1,bmi2,popcnt",
    Z32,
    Z64,
    4,
    |x, xn2, p, c, b, o| super::narrow::few_centres_avx512(x, xn2, p, c, b, o)
        || super::bf16::labels(x, c, b, o)
);
entries!(
    labels_avx2,
    leaf_avx2,
    distances_avx2,
    "avx2,fma,bmi1,bmi2,popcnt",
    Y32,
    Y64,
    2,
    |x, xn2, p, c, b, o| super::narrow::few_centres_avx2(x, xn2, p, c, b, o)
);

/// The body of a leaf: per tile of [`TILE`] rows, their norms, their labels (`labels_of`,
/// the same instruction set's), then each row's label, and each cluster's sums and weights
/// ([`TileSums`]).
///
/// # Safety
/// `V`'s CPU features are present; `U` is `T` (checked).
#[inline(always)]
unsafe fn leaf_tiles<T: Element, V: Lanes<U>, U: Element>(
    x: &[T],
    (weights, norms, packed): crate::fused::RowAids<'_, T>,
    cent: &Centres<T>,
    labels: &mut [u32],
    (st, q, exact): (&mut StepStats, &mut [f64], bool),
    labels_of: impl Fn(&[T], &[f64], Option<&[T]>, &Centres<T>, &mut Buffer<T>, &mut [u32]),
) {
    let d = cent.d;
    let mut buf = Buffer::default();
    buf.size(cent, TILE);
    let mut computed = std::mem::take(&mut buf.xn2);
    let mut slots = std::mem::take(&mut buf.slots);
    let mut sums = TileSums::default();
    for (ti, xt) in x.chunks(TILE * d).enumerate() {
        let rows = xt.len() / d;
        let xu: &[U] = same(xt);
        let xn2: &[f64] = match norms {
            Some(v) => &v[ti * TILE..ti * TILE + rows],
            None => {
                for (r, o) in computed[..rows].iter_mut().enumerate() {
                    *o = crate::lloyd::norm2(&xu[r * d..(r + 1) * d]);
                }
                &computed[..rows]
            }
        };
        // TILE is a whole number of packed blocks: the tile's blocks start at its first row.
        let tile_packed = packed.map(|p| &p[ti * TILE * d..]);
        labels_of(xt, xn2, tile_packed, cent, &mut buf, &mut slots[..rows]);
        let tile_weights = weights.map(|w| &w[ti * TILE..ti * TILE + rows]);
        let tile_labels = &mut labels[ti * TILE..ti * TILE + rows];
        if cent.in_order && !exact {
            // The slots are the labels: one pass that the compiler vectorizes.
            let mut changed = 0u64;
            for (l, &slot) in tile_labels.iter_mut().zip(&slots[..rows]) {
                changed += u64::from(*l != slot);
                *l = slot;
            }
            st.changed += changed;
        } else {
            settle_tile(
                xt,
                cent,
                &slots[..rows],
                tile_labels,
                tile_weights,
                st,
                exact,
            );
        }
        let q = (!exact).then_some(&mut *q);
        let tile_labels = &labels[ti * TILE..ti * TILE + rows];
        sums.add(st, q, xt, d, tile_weights, tile_labels, xn2);
    }
}

/// A tile's slots as the caller's labels into `labels` (counting the changes in `st`), and
/// with `exact` the rows' weighted exact squared distances to their centres added to
/// `st.inertia`.
#[inline(always)]
fn settle_tile<T: Element>(
    xt: &[T],
    cent: &Centres<T>,
    slots: &[u32],
    labels: &mut [u32],
    tile_weights: Option<&[f64]>,
    st: &mut StepStats,
    exact: bool,
) {
    let d = cent.d;
    for (r, &slot) in slots.iter().enumerate() {
        let label = cent.id(slot);
        if labels[r] != label {
            st.changed += 1;
            labels[r] = label;
        }
        if exact {
            let d2 = dist2_f64(&xt[r * d..(r + 1) * d], cent.row(slot as usize));
            st.inertia += tile_weights.map_or(1.0, |w| w[r]) * d2;
        }
    }
}

/// [`rows`] with the rows per block ([`rows_per_block`]) and the registers per row of
/// values chosen, the register count a constant up to four; with `PF` the rows prefetched
/// ([`group_values`]).
///
/// # Safety
/// As [`rows`].
#[inline(always)]
unsafe fn by_registers<T: Element, V: Fold<U>, U: Element, const BMAX: usize, const PF: bool>(
    x: &[T],
    cent: &Centres<T>,
    buf: &mut Buffer<T>,
    out: &mut [u32],
) {
    // SAFETY: the caller's contract; each constant is the register count it names.
    unsafe {
        match (cent.kp / V::W, rows_per_block::<V, U>(cent.kp)) {
            (1, _) => rows::<T, V, U, BMAX, 8, 1, PF>(x, cent, buf, out),
            (2, 8) => rows::<T, V, U, BMAX, 8, 2, PF>(x, cent, buf, out),
            (2, _) => rows::<T, V, U, BMAX, 6, 2, PF>(x, cent, buf, out),
            (3, _) => rows::<T, V, U, BMAX, 6, 3, PF>(x, cent, buf, out),
            (4, _) => rows::<T, V, U, BMAX, 6, 4, PF>(x, cent, buf, out),
            _ => rows::<T, V, U, BMAX, 6, 0, PF>(x, cent, buf, out),
        }
    }
}

/// Rows per block of the kernel for rows of `kp` lanes of `V`: as many as keep the
/// accumulators (rows times registers) within the register file with room for the
/// centres, and at least eight independent sums in flight (the fused multiply-add's
/// latency times its throughput): eight rows of one or two registers with 512-bit
/// registers (32 of them), eight rows of one register with 256-bit registers (16), six rows
/// otherwise. Twelve rows of one 512-bit register ran out of general registers for the rows'
/// pointers, and an accumulator went through the stack at every coordinate.
#[inline(always)]
fn rows_per_block<V: Lanes<U>, U>(kp: usize) -> usize {
    let regs = kp / V::W;
    let wide = V::W * size_of::<U>() == 64;
    match (wide, regs) {
        (true, 1) | (true, 2) | (false, 1) => 8,
        _ => 6,
    }
}

/// The labels of the rows of `x` into `out`: each row's smallest value `m`, the lanes
/// within its band `m + width` (widths from [`band_widths`], already in `buf`), then the
/// label: the lone lane, or [`settle_row`]'s.
///
/// # Safety
/// `V`'s CPU features are present; `U` is `T` (checked); `buf` is sized for the rows.
#[inline(always)]
unsafe fn rows<
    T: Element,
    V: Fold<U>,
    U: Element,
    const BMAX: usize,
    const P: usize,
    const NV: usize,
    const PF: bool,
>(
    x: &[T],
    cent: &Centres<T>,
    buf: &mut Buffer<T>,
    out: &mut [u32],
) {
    let (d, kp, w) = (cent.d, cent.kp, V::W);
    // Registers per row: a constant for the common few (the loops below unroll).
    let nv = if NV > 0 { NV } else { kp / w };
    debug_assert_eq!(nv, kp / w);
    let widths: &[U] = same(&buf.width);
    let err2 = &buf.err2;
    // SAFETY: the caller's contract.
    unsafe {
        let n = out.len();
        let mut i0 = 0;
        while i0 < n {
            // A plain loop over the groups rather than a callback: a closure that is not
            // inlined runs without this function's CPU features, and its intrinsics become
            // calls.
            let rows = group_values::<T, V, U, BMAX, P, PF>(x, cent, &mut buf.vals, n, i0);
            let vals: &[U] = same(&buf.vals[..rows * kp]);
            if nv == 1 {
                // One register a row: a block of rows settled at once.
                debug_assert!(i0.is_multiple_of(w));
                let (xs, out) = (&x[i0 * d..], &mut out[i0..i0 + rows]);
                let (widths, err2) = (&widths[i0..], &err2[i0..]);
                super::narrow::settle_rows::<T, V, U>(xs, cent, vals, widths, err2, out);
            } else {
                for (p, i) in (i0..i0 + rows).enumerate() {
                    // Each row holds `kp` values, `nv` registers.
                    let (xi, row) = (&x[i * d..(i + 1) * d], &vals[p * kp..(p + 1) * kp]);
                    out[i] = row_label::<T, V, U>(xi, cent, row, nv, widths[i], err2[i]);
                }
            }
            i0 += rows;
        }
    }
}

/// The label of row `x` from its values `row` (`nv` registers of `V`, `|c_j|^2 - 2 x.c_j` or
/// its shifted form): the smallest value `m`, the lanes within the band `m + width`, then the
/// lone lane when it is clear of the others by `err2` (twice the values' error bound), else
/// [`settle_row`]'s exact choice.
///
/// # Safety
/// `V`'s CPU features are present; `row` holds `nv * V::W` values.
#[inline(always)]
pub(super) unsafe fn row_label<T: Element, V: Lanes<U>, U: Element>(
    x: &[T],
    cent: &Centres<T>,
    row: &[U],
    nv: usize,
    width: U,
    err2: f64,
) -> u32 {
    let w = V::W;
    // SAFETY: the caller's contract.
    unsafe {
        // The smallest value, then the lanes within the band, 64 at a time (one count and
        // one search per 64 lanes), the first few of them kept.
        let mut mv = V::load(row.as_ptr());
        for b in 1..nv {
            mv = V::min(mv, V::load(row.as_ptr().add(b * w)));
        }
        let m = mv.hmin();
        let bar = m + width;
        let bv = V::splat(bar);
        let (mut count, mut first) = (0u32, u32::MAX);
        let mut few = [0u32; FEW];
        for b0 in (0..nv).step_by(64 / w) {
            let mut mask = 0u64;
            for b in b0..(b0 + 64 / w).min(nv) {
                let m = V::load(row.as_ptr().add(b * w)).le(bv);
                mask |= u64::from(m) << ((b - b0) * w);
            }
            if mask != 0 {
                if first == u32::MAX {
                    first = (b0 * w) as u32 + mask.trailing_zeros();
                }
                let mut bits = mask;
                let mut c = count as usize;
                while bits != 0 && c < FEW {
                    few[c] = (b0 * w) as u32 + bits.trailing_zeros();
                    bits &= bits - 1;
                    c += 1;
                }
                count += mask.count_ones();
            }
        }
        // The common case, inline: one lane in a finite band.
        let (lead, limit) = (m.to_f64(), bar.to_f64());
        if count == 1 && limit.is_finite() && limit > lead + err2 {
            return first;
        }
        let kept = few.len().min(count as usize);
        settle_row(x, cent, row, (m, bar, err2), (count, first, &few[..kept]))
    }
}

/// The most lanes within a band that [`row_label`] lists for [`settle_row`], which then need
/// not scan the row again.
const FEW: usize = 8;

/// The squared distances of the rows of `x` (`xn2` their `|x|^2`) to every centre,
/// `max(0, |x|^2 + value)` in `f64` rounded to `f32`, into `out` (`k` per row).
///
/// # Safety
/// `V`'s CPU features are present; `U` is `T` (checked); `vals` holds `GROUP * 6 *
/// cent.kp` values.
#[inline(always)]
unsafe fn distances<T: Element, V: Lanes<U>, U: Element, const BMAX: usize>(
    x: &[T],
    xn2: &[f64],
    cent: &Centres<T>,
    vals: &mut [T],
    out: &mut [f32],
) {
    let (k, kp, n) = (cent.k, cent.kp, xn2.len());
    let mut i0 = 0;
    while i0 < n {
        // SAFETY: the caller's contract.
        let rows = unsafe {
            match (rows_per_block::<V, U>(kp), cent.prefetch) {
                (8, false) => group_values::<T, V, U, BMAX, 8, false>(x, cent, vals, n, i0),
                (8, true) => group_values::<T, V, U, BMAX, 8, true>(x, cent, vals, n, i0),
                (_, false) => group_values::<T, V, U, BMAX, 6, false>(x, cent, vals, n, i0),
                (_, true) => group_values::<T, V, U, BMAX, 6, true>(x, cent, vals, n, i0),
            }
        };
        let vu: &[U] = same(&vals[..rows * kp]);
        for (p, i) in (i0..i0 + rows).enumerate() {
            let row = &vu[p * kp..(p + 1) * kp];
            for (o, v) in out[i * k..(i + 1) * k].iter_mut().zip(row) {
                *o = (xn2[i] + v.to_f64()).max(0.0) as f32;
            }
        }
        i0 += rows;
    }
}

/// The group of [`GROUP`] blocks of `P` rows of `x` (`n` rows) that starts at row `i0`: the
/// values against every register of centres, chunk by chunk of at most `BMAX` registers
/// (each chunk through every block of the group), into `vals` (row `p` of the group at `p *
/// kp`). Returns the group's row count. The last block repeats its last row to fill the
/// registers (the copies' values are not read). With `PF` every chunk prefetches the rows
/// ([`PREFETCH_ROWS`] ahead), the later ones finding them cached at the cost of a load slot
/// a line: one copy of the loops rather than a prefetching first chunk beside the others,
/// which left an AVX2 accumulator in memory.
///
/// # Safety
/// `V`'s CPU features are present; `U` is `T` (checked); `vals` holds `GROUP * P *
/// cent.kp` values; `i0 < n`.
#[inline(always)]
unsafe fn group_values<
    T: Element,
    V: Lanes<U>,
    U: Element,
    const BMAX: usize,
    const P: usize,
    const PF: bool,
>(
    x: &[T],
    cent: &Centres<T>,
    vals: &mut [T],
    n: usize,
    i0: usize,
) -> usize {
    let (d, kp) = (cent.d, cent.kp);
    let xu: &[U] = same(x);
    let cu: &[U] = same(&cent.packed);
    let nu: &[U] = same(&cent.packed_norms);
    let vu: &mut [U] = {
        assert!(TypeId::of::<T>() == TypeId::of::<U>() && vals.len() >= GROUP * P * kp);
        // SAFETY: the same type (checked just above).
        unsafe { std::slice::from_raw_parts_mut(vals.as_mut_ptr().cast::<U>(), vals.len()) }
    };
    let w = V::W;
    let blocks = (n - i0).div_ceil(P).min(GROUP);
    let mut col = 0;
    while col < kp {
        let regs = ((kp - col) / w).min(BMAX);
        let (c, nm) = (cu[col..].as_ptr(), nu[col..].as_ptr());
        for blk in 0..blocks {
            let first = i0 + blk * P;
            let xs: [*const U; P] =
                std::array::from_fn(|p| xu[(first + p).min(n - 1) * d..].as_ptr());
            let o = vu[blk * P * kp + col..].as_mut_ptr();
            // SAFETY: `col + regs * w <= kp` lanes of each of the `d` rows of `c`, of the
            // norms and of the block's `P` rows of `vals`; each row pointer has `d` values.
            unsafe {
                match regs {
                    1 => chunk::<U, V, 1, P, PF>(xs, c, kp, nm, d, o),
                    2 => chunk::<U, V, 2, P, PF>(xs, c, kp, nm, d, o),
                    3 => chunk::<U, V, 3, P, PF>(xs, c, kp, nm, d, o),
                    _ => chunk::<U, V, 4, P, PF>(xs, c, kp, nm, d, o),
                }
            }
        }
        col += regs * w;
    }
    (i0 + blocks * P).min(n) - i0
}

/// The values of `P` rows against `B` registers of centres: `out[p * kp + l] =
/// norms[l] + sum_u xs[p][u] c[u * kp + l]`, accumulated with fused multiply-adds in
/// coordinate order; with `PF`, each row's lines [`PREFETCH_ROWS`] rows ahead asked for.
///
/// # Safety
/// `V`'s CPU features are present; each `xs[p]` points to `d` values; `c` to `d` rows of
/// `kp` values, `norms` to `B * W` values and `out` to `P` rows of `kp` values, of which
/// the first `B * W` are read or written.
#[inline(always)]
unsafe fn chunk<U: Copy, V: Lanes<U>, const B: usize, const P: usize, const PF: bool>(
    xs: [*const U; P],
    c: *const U,
    kp: usize,
    norms: *const U,
    d: usize,
    out: *mut U,
) {
    let w = V::W;
    // SAFETY: in bounds by the caller's contract.
    unsafe {
        // Plain loops rather than `array::from_fn`: a closure that is not inlined runs
        // without the caller's CPU features, and its intrinsics become calls.
        let mut n0: [V; B] = [V::bcast(norms); B];
        for (b, v) in n0.iter_mut().enumerate() {
            *v = V::load(norms.add(b * w));
        }
        let mut acc = [n0; P];
        let mut cv = n0;
        let line = 64 / size_of::<U>();
        for u in 0..d {
            if PF && u % line == 0 {
                // Each row's line [`PREFETCH_ROWS`] rows ahead (past the leaf's last row: a
                // hint that never faults), among the multiply-adds: issued all at once before
                // them, they came too early to help.
                for x in &xs {
                    let ahead = x.wrapping_add(u + PREFETCH_ROWS * d);
                    _mm_prefetch::<_MM_HINT_T0>(ahead.cast::<i8>());
                }
            }
            let row = c.add(u * kp);
            for (b, v) in cv.iter_mut().enumerate() {
                *v = V::load(row.add(b * w));
            }
            for (a, x) in acc.iter_mut().zip(&xs) {
                let xv = V::bcast(x.add(u));
                for (a, c) in a.iter_mut().zip(&cv) {
                    *a = V::fma(xv, *c, *a);
                }
            }
        }
        for (p, a) in acc.iter().enumerate() {
            for (b, a) in a.iter().enumerate() {
                a.store(out.add(p * kp + b * w));
            }
        }
    }
}
