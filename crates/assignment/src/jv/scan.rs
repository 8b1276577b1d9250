//! The row kernels of the Jonker–Volgenant solver, written once over lanes of `L` columns
//! (plain Rust that the compiler turns into vector instructions) and compiled three times:
//! AVX-512 (8 lanes), AVX2 (4 lanes) and portable, picked at run time ([`Isa`]). Every
//! version does the same arithmetic in the same order, so they give identical results.
//!
//! A row is read in its own element type and widened to the arithmetic type in registers
//! (`f32` to `f64`, `i32` to `i64`): no wider copy of the matrix is made.

use crate::num::Work;

use super::simd::{Lanes, Loader, Vector};

/// `usize::MAX`: no column / no row.
pub(crate) const NONE: usize = usize::MAX;

/// The instruction set the kernels run with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    /// AVX-512 F/VL/DQ/BW: 8 lanes of 64 bits.
    Avx512,
    /// AVX2: 4 lanes of 64 bits.
    Avx2,
    /// Whatever the compilation target has.
    Portable,
}

impl Isa {
    /// The best instruction set of this CPU, detected once (`WARPATH_LAP_ISA=avx2|portable`
    /// caps it, for comparisons; read once too).
    pub(crate) fn detect() -> Isa {
        static ISA: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();
        *ISA.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            {
                let cap = std::env::var("WARPATH_LAP_ISA").unwrap_or_default();
                if cap != "avx2" && cap != "portable" && gpu_runtime::cpu::has_avx512() {
                    return Isa::Avx512;
                }
                if cap != "portable" && gpu_runtime::cpu::has_avx2() {
                    return Isa::Avx2;
                }
            }
            Isa::Portable
        })
    }

    /// Every instruction set this CPU can run (within the `WARPATH_LAP_ISA` cap for
    /// AVX-512), for tests that compare them.
    #[cfg(test)]
    pub(crate) fn testable() -> Vec<Isa> {
        let mut v = vec![Isa::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if gpu_runtime::cpu::has_avx2() {
                v.push(Isa::Avx2);
            }
            if Isa::detect() == Isa::Avx512 {
                v.push(Isa::Avx512);
            }
        }
        v
    }
}

/// Defines `pub(crate) fn $name` dispatching on [`Isa`] to the generic body `$body`
/// instantiated with AVX-512 lanes (compiled with AVX-512 enabled), AVX2 lanes (compiled with
/// AVX2) or single lanes (the target's features); a const generic of `$name` is passed on to
/// `$body` after the lanes. The body is a generic function (`= $body;`) or a block, the body
/// of such a function with lanes `V`.
macro_rules! kernel {
    (
        $(#[$doc:meta])*
        fn $name:ident$(<const $c:ident: $cty:ty>)?($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
            $block:block
    ) => {
        kernel! {
            $(#[$doc])*
            fn $name$(<const $c: $cty>)?($($arg: $ty),*) -> $ret = with_lanes;
            /// # Safety
            /// `V`'s instruction set must be available.
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            unsafe fn with_lanes<E: Lanes, V: Vector<E::W> + Loader<E> $(, const $c: $cty)?>(
                $($arg: $ty),*
            ) -> $ret $block
        }
    };
    (
        $(#[$doc:meta])*
        fn $name:ident$(<const $c:ident: $cty:ty>)?($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
            = $body:ident;
        $($local:item)?
    ) => {
        $(#[$doc])*
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn $name<E: Lanes $(, const $c: $cty)?>(isa: Isa, $($arg: $ty),*) -> $ret {
            $($local)?
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn wide<E: Lanes $(, const $c: $cty)?>($($arg: $ty),*) -> $ret {
                    // SAFETY: AVX-512 is enabled here (the caller checked the CPU).
                    unsafe { $body::<E, E::V8 $(, $c)?>($($arg),*) }
                }
                #[target_feature(enable = "avx2")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn narrow<E: Lanes $(, const $c: $cty)?>($($arg: $ty),*) -> $ret {
                    // SAFETY: AVX2 is enabled here (the caller checked the CPU).
                    unsafe { $body::<E, E::V4 $(, $c)?>($($arg),*) }
                }
                match isa {
                    // SAFETY: `Isa::Avx512` is only detected when the CPU has these features.
                    Isa::Avx512 => return unsafe { wide::<E $(, $c)?>($($arg),*) },
                    // SAFETY: `Isa::Avx2` is only detected when the CPU has AVX2.
                    Isa::Avx2 => return unsafe { narrow::<E $(, $c)?>($($arg),*) },
                    Isa::Portable => {}
                }
            }
            let _ = isa;
            // SAFETY: single lanes need no CPU feature.
            unsafe { $body::<E, E::V1 $(, $c)?>($($arg),*) }
        }
    };
}

/// The smallest of the first `lanes` values.
#[inline(always)]
fn fold_min<W: Work>(a: &[W]) -> W {
    a.iter().fold(W::INF, |m, &x| m.least(x))
}

/// A smallest value and its column (the first column holding it; `(INF, NONE)` for none).
pub(crate) type ArgMin<W> = (W, usize);

kernel! {
    /// One Dijkstra row scan: for every column, the candidate distance through row `i` is
    /// `base + c[j] - ve[j]`; where it is below `sp[j]` it replaces it and `path[j] = i`.
    /// Returns the smallest tentative distance after the scan and its first column; with
    /// `FREE`, also the smallest tentative distance over the free columns and its first column
    /// (`fpen[j]` is zero for a free column and [`Work::INF`] for an assigned one; without
    /// `FREE`, `fpen` is not read and the second minimum is `(INF, NONE)`).
    fn relax<const FREE: bool>(
        row: &[E],
        ve: &[E::W],
        sp: &mut [E::W],
        path: &mut [u32],
        fpen: &[E::W],
        base: E::W,
        i: u32,
    ) -> (ArgMin<E::W>, ArgMin<E::W>) {
        let n = row.len();
        assert!(ve.len() == n && sp.len() == n && path.len() == n && (!FREE || fpen.len() == n));
        let inf = <E::W as Work>::INF;
        let body = n - n % V::LANES;
        // SAFETY: the instruction set is the caller's contract; every access is at j..j + LANES
        // with j + LANES <= body <= n, the length of the slices read (asserted above).
        let (lo, lo_at, lf, lf_at) = unsafe {
            let vb = V::splat(base);
            let step = V::splat(<E::W as Work>::from_index(V::LANES));
            let mut at = V::indices(0);
            let (mut lo, mut lf) = (V::splat(inf), V::splat(inf));
            let (mut lo_at, mut lf_at) = (at, at);
            let mut j = 0;
            while j < body {
                let c = V::load_elem(row.as_ptr().add(j));
                let v = V::load(ve.as_ptr().add(j));
                let s = V::load(sp.as_ptr().add(j));
                let r = vb.add(c).sub(v);
                let m = r.lt(s);
                let s2 = V::select(m, r, s);
                s2.store(sp.as_mut_ptr().add(j));
                V::store_where(m, path.as_mut_ptr().add(j), i);
                let better = s2.lt(lo);
                lo = V::select(better, s2, lo);
                lo_at = V::select(better, at, lo_at);
                if FREE {
                    let g = s2.add(V::load(fpen.as_ptr().add(j)));
                    let better = g.lt(lf);
                    lf = V::select(better, g, lf);
                    lf_at = V::select(better, at, lf_at);
                }
                at = at.add(step);
                j += V::LANES;
            }
            (lo, lo_at, lf, lf_at)
        };
        let (mut tail, mut tail_free) = ((inf, NONE), (inf, NONE));
        for j in body..n {
            let r = base + row[j].widen() - ve[j];
            if r < sp[j] {
                sp[j] = r;
                path[j] = i;
            }
            if sp[j] < tail.0 {
                tail = (sp[j], j);
            }
            if FREE && sp[j] + fpen[j] < tail_free.0 {
                tail_free = (sp[j] + fpen[j], j);
            }
        }
        // SAFETY: register operations only, under the caller's instruction set.
        let all = unsafe { merge_argmin(lo, lo_at, tail) };
        let free = if FREE {
            // SAFETY: as above.
            unsafe { merge_argmin(lf, lf_at, tail_free) }
        } else {
            (inf, NONE)
        };
        (all, free)
    }
}

/// The lanes' minima merged with vector reductions: the smallest value, then the smallest
/// column among the lanes holding it (each lane holds the first column of its own minimum;
/// the tail's columns come after every lane's, so a lane wins a tie with it).
///
/// # Safety
/// `V`'s instruction set must be available.
#[inline(always)]
unsafe fn merge_argmin<W: Work, V: Vector<W>>(vals: V, cols: V, tail: ArgMin<W>) -> ArgMin<W> {
    // SAFETY: forwarded.
    let (m, at) = unsafe {
        let m = vals.reduce_min();
        (
            m,
            V::select(vals.eq(V::splat(m)), cols, V::splat(W::INF)).reduce_min(),
        )
    };
    if m < W::INF && m <= tail.0 {
        (m, at.to_index())
    } else {
        tail
    }
}

kernel! {
    /// Column reduction's pass over one row: where `row[j] < v[j]`, `v[j] = row[j]` and
    /// `arg[j] = i`.
    fn column_minima(row: &[E], v: &mut [E::W], arg: &mut [u32], i: u32) -> () = minima_v;
}

/// # Safety
/// `V`'s instruction set must be available.
#[inline(always)]
unsafe fn minima_v<E: Lanes, V: Vector<E::W> + Loader<E>>(
    row: &[E],
    v: &mut [E::W],
    arg: &mut [u32],
    i: u32,
) {
    let n = row.len();
    assert!(v.len() == n && arg.len() == n);
    let body = n - n % V::LANES;
    // SAFETY: as in `relax`.
    unsafe {
        let mut j = 0;
        while j < body {
            let c = V::load_elem(row.as_ptr().add(j));
            let old = V::load(v.as_ptr().add(j));
            let m = c.lt(old);
            V::select(m, c, old).store(v.as_mut_ptr().add(j));
            V::store_where(m, arg.as_mut_ptr().add(j), i);
            j += V::LANES;
        }
    }
    for j in body..n {
        let x = row[j].widen();
        if x < v[j] {
            v[j] = x;
            arg[j] = i;
        }
    }
}

kernel! {
    /// The smallest reduced cost `row[j] - v[j]` over the columns other than `skip`.
    fn min_reduced_except(row: &[E], v: &[E::W], skip: usize) -> E::W = min_except_v;
}

/// # Safety
/// `V`'s instruction set must be available.
#[inline(always)]
unsafe fn min_except_v<E: Lanes, V: Vector<E::W> + Loader<E>>(
    row: &[E],
    v: &[E::W],
    skip: usize,
) -> E::W {
    let n = row.len();
    assert!(v.len() == n);
    let inf = <E::W as Work>::INF;
    let body = n - n % V::LANES;
    let hole = skip - skip % V::LANES; // the chunk holding `skip`, done one by one
    // SAFETY: as in `relax`.
    let lo = unsafe {
        let mut lo = V::splat(inf);
        let mut j = 0;
        while j < body {
            if j != hole {
                let h = V::load_elem(row.as_ptr().add(j)).sub(V::load(v.as_ptr().add(j)));
                lo = lo.min(h);
            }
            j += V::LANES;
        }
        lo.to_array()
    };
    let mut lo = fold_min(&lo[..V::LANES]);
    let hole_end = if hole < body { hole + V::LANES } else { hole };
    for j in (hole.min(body)..hole_end).chain(body..n) {
        if j != skip {
            lo = lo.least(row[j].widen() - v[j]);
        }
    }
    lo
}

/// Rows shorter than this many vectors are scanned one column at a time: the lanes'
/// reductions at the end of a vector scan cost more than the scan of so few columns.
const SHORT_ROW_LANES: usize = 2;

/// [`two_minima`] over the columns `from..` one at a time, without branches: the smallest
/// reduced cost, its first column and the second smallest (`(INF, NONE, INF)` for none).
/// The second smallest takes `max(h, t1)` before `t1` takes `min(t1, h)`, so each is one
/// min/max on its own chain and only the column index waits for the comparison.
#[inline(always)]
fn two_minima_scalar<E: Lanes>(row: &[E], v: &[E::W], from: usize) -> (E::W, usize, E::W) {
    let inf = <E::W as Work>::INF;
    let (mut t1, mut tj, mut t2) = (inf, NONE, inf);
    let (row, v) = (&row[from..], &v[from..v.len().min(row.len())]);
    for (k, (&c, &vj)) in row.iter().zip(v).enumerate() {
        let h = c.widen() - vj;
        t2 = t2.least(t1.greatest(h));
        tj = if h < t1 { from + k } else { tj };
        t1 = t1.least(h);
    }
    (t1, tj, t2)
}

kernel! {
    /// The smallest and second smallest reduced costs `row[j] - v[j]`, and the first column
    /// holding the smallest: `(umin, j1, usub)` (a tie gives `usub == umin`). Only reduced
    /// costs below [`Work::INF`] count: `(INF, NONE, INF)` for a row without any, `usub = INF`
    /// for a row with one.
    fn two_minima(row: &[E], v: &[E::W]) -> (E::W, usize, E::W) = two_minima_v;
}

/// # Safety
/// `V`'s instruction set must be available.
#[inline(always)]
unsafe fn two_minima_v<E: Lanes, V: Vector<E::W> + Loader<E>>(
    row: &[E],
    v: &[E::W],
) -> (E::W, usize, E::W) {
    let n = row.len();
    assert!(v.len() == n);
    let inf = <E::W as Work>::INF;
    if V::LANES == 1 {
        // One lane: the classic loop, whose branches a random row rarely takes.
        let (mut umin, mut usub, mut j1) = (inf, inf, NONE);
        for (j, (&c, &vj)) in row.iter().zip(v).enumerate() {
            let h = c.widen() - vj;
            if h < usub {
                if h < umin {
                    (usub, umin, j1) = (umin, h, j);
                } else {
                    usub = h;
                }
            }
        }
        return (umin, j1, usub);
    }
    if n < SHORT_ROW_LANES * V::LANES {
        return two_minima_scalar(row, v, 0);
    }
    let body = n - n % V::LANES;
    // Per lane: the smallest reduced cost (m1, first at j1) and the second smallest (m2) of
    // that lane; m2 = min(m2, max(h, m1)) keeps it without a branch.
    // SAFETY: as in `relax`.
    let (m1, j1, m2) = unsafe {
        let step = V::splat(<E::W as Work>::from_index(V::LANES));
        let mut at = V::indices(0);
        let (mut m1, mut m2) = (V::splat(inf), V::splat(inf));
        let mut j1 = V::splat(inf);
        let mut j = 0;
        while j < body {
            let h = V::load_elem(row.as_ptr().add(j)).sub(V::load(v.as_ptr().add(j)));
            let lt1 = h.lt(m1);
            m2 = m2.min(h.max(m1));
            m1 = V::select(lt1, h, m1);
            j1 = V::select(lt1, at, j1);
            at = at.add(step);
            j += V::LANES;
        }
        (m1, j1, m2)
    };
    // The tail as one more lane.
    let (t1, tj, t2) = two_minima_scalar(row, v, body);
    // The lanes merged with vector reductions: the least m1; the first column holding it (the
    // tail's columns come after every lane's); the second smallest is the least of all m2,
    // of the tail, and of the m1 of the other lanes: the least m1 again when two lanes hold
    // it, else the least m1 of the lanes that do not (both reductions after the first run
    // side by side).
    // SAFETY: as above (register operations only).
    let (vm, vj, rest) = unsafe {
        let vm = m1.reduce_min();
        let is_min = m1.eq(V::splat(vm));
        let at_min = V::select(is_min, j1, V::splat(inf)).reduce_min();
        let others = if V::count(is_min) > 1 {
            vm
        } else {
            V::select(is_min, V::splat(inf), m1).reduce_min()
        };
        (vm, at_min, m2.reduce_min().least(others))
    };
    let lane_best = vm < inf;
    if lane_best && vm <= t1 {
        (vm, vj.to_index(), rest.least(t1).least(t2))
    } else if t1 < inf {
        (t1, tj, t2.least(vm).least(rest))
    } else {
        (inf, NONE, inf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 33
    }

    /// Every instruction set gives the results of a plain scalar loop, on rows of every
    /// length around the lane widths, with ties, forbidden entries and scanned columns.
    /// (`make(r)` is forbidden when `r % 11 == 0`; potentials and distances are finite.)
    fn check_kernels<E: Lanes>(make: impl Fn(u64) -> E, neutral: E::W) {
        let mut st = 11u64;
        for n in [0usize, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 100] {
            for round in 0..4 {
                let row: Vec<E> = (0..n).map(|_| make(lcg(&mut st))).collect();
                let ve: Vec<E::W> = (0..n)
                    .map(|k| {
                        if k % 5 == 1 {
                            neutral
                        } else {
                            make(1 + lcg(&mut st) % 4).widen()
                        }
                    })
                    .collect();
                let v: Vec<E::W> = (0..n).map(|_| make(1 + lcg(&mut st) % 4).widen()).collect();
                let sp0: Vec<E::W> = (0..n)
                    .map(|k| {
                        if k % 3 == 0 {
                            E::W::INF
                        } else {
                            make(1 + lcg(&mut st) % 6).widen()
                        }
                    })
                    .collect();
                let fpen: Vec<E::W> = (0..n)
                    .map(|k| {
                        if k % 4 == round {
                            E::W::ZERO
                        } else {
                            E::W::INF
                        }
                    })
                    .collect();
                let base = make(1).widen() - make(2).widen();
                // scalar reference of relax
                let (mut sr, mut pr) = (sp0.clone(), vec![9u32; n]);
                let (mut lo, mut lf) = ((E::W::INF, NONE), (E::W::INF, NONE));
                for j in 0..n {
                    let r = base + row[j].widen() - ve[j];
                    if r < sr[j] {
                        sr[j] = r;
                        pr[j] = 3;
                    }
                    if sr[j] < lo.0 {
                        lo = (sr[j], j);
                    }
                    if sr[j] + fpen[j] < lf.0 {
                        lf = (sr[j] + fpen[j], j);
                    }
                }
                // scalar two minima
                let h: Vec<E::W> = (0..n).map(|j| row[j].widen() - v[j]).collect();
                let j1 = (0..n).fold(NONE, |b, j| {
                    let best = if b == NONE { E::W::INF } else { h[b] };
                    if h[j] < best { j } else { b }
                });
                let usub = (0..n)
                    .filter(|&j| j != j1)
                    .fold(E::W::INF, |m, j| m.least(h[j]));
                for &isa in &Isa::testable() {
                    let (mut s, mut p) = (sp0.clone(), vec![9u32; n]);
                    let got = relax::<E, true>(isa, &row, &ve, &mut s, &mut p, &fpen, base, 3);
                    assert_eq!(got, (lo, lf), "{isa:?} n = {n}");
                    assert_eq!(s, sr, "{isa:?} n = {n}");
                    assert_eq!(p, pr, "{isa:?} n = {n}");
                    let (mut s, mut p) = (sp0.clone(), vec![9u32; n]);
                    let got = relax::<E, false>(isa, &row, &ve, &mut s, &mut p, &[], base, 3).0;
                    assert_eq!((got, &s, &p), (lo, &sr, &pr), "{isa:?} n = {n}");
                    let (a, ja, b) = two_minima::<E>(isa, &row, &v);
                    assert_eq!(ja, j1, "{isa:?} n = {n}");
                    if j1 != NONE {
                        assert_eq!(a, h[j1]);
                    }
                    assert_eq!(b, usub, "{isa:?} n = {n}");
                    let skip = if n > 0 { (round * 7) % n } else { 0 };
                    let want = (0..n)
                        .filter(|&j| j != skip)
                        .fold(E::W::INF, |m, j| m.least(h[j]));
                    assert_eq!(min_reduced_except::<E>(isa, &row, &v, skip), want);
                    let (mut mv, mut ma) = (v.clone(), vec![0u32; n]);
                    column_minima::<E>(isa, &row, &mut mv, &mut ma, 5);
                    for j in 0..n {
                        let x = row[j].widen();
                        assert_eq!(mv[j], if x < v[j] { x } else { v[j] });
                        assert_eq!(ma[j], if x < v[j] { 5 } else { 0 });
                    }
                }
            }
        }
    }

    /// Entries with many ties: multiples of `step` below `8 step`, and forbidden ones.
    fn tied(r: u64, step: f64) -> f64 {
        if r.is_multiple_of(11) {
            f64::INFINITY
        } else {
            (r % 8) as f64 * step
        }
    }

    #[test]
    fn kernels_agree_on_every_instruction_set() {
        check_kernels::<f64>(|r| tied(r, 0.5), f64::NEG_INFINITY);
        // (exact in f32, infinity included)
        check_kernels::<f32>(|r| tied(r, 0.25) as f32, f64::NEG_INFINITY);
        check_kernels::<i64>(
            |r| {
                if r % 11 == 0 {
                    crate::num::I64_FORBIDDEN
                } else {
                    (r % 8) as i64 - 3
                }
            },
            i64::NEUTRAL,
        );
        check_kernels::<i32>(|r| (r % 8) as i32 - 3, i64::NEUTRAL);
    }
}
