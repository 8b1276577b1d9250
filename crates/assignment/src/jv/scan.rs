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
    /// The best instruction set of this CPU (`WARPATH_LAP_ISA=avx2|portable` caps it, for
    /// comparisons).
    pub(crate) fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            let cap = std::env::var("WARPATH_LAP_ISA").unwrap_or_default();
            if cap != "avx2"
                && cap != "portable"
                && std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512vl")
                && std::is_x86_feature_detected!("avx512dq")
                && std::is_x86_feature_detected!("avx512bw")
            {
                return Isa::Avx512;
            }
            if cap != "portable" && std::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Portable
    }
}

/// Defines `pub(crate) fn $name` dispatching on [`Isa`] to the generic body `$body`
/// instantiated with AVX-512 lanes (compiled with AVX-512 enabled), AVX2 lanes (compiled with
/// AVX2) or single lanes (the target's features).
macro_rules! kernel {
    (
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $body:ident;
    ) => {
        $(#[$doc])*
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn $name<E: Lanes>(isa: Isa, $($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn wide<E: Lanes>($($arg: $ty),*) -> $ret {
                    // SAFETY: AVX-512 is enabled here (the caller checked the CPU).
                    unsafe { $body::<E, E::V8>($($arg),*) }
                }
                #[target_feature(enable = "avx2")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn narrow<E: Lanes>($($arg: $ty),*) -> $ret {
                    // SAFETY: AVX2 is enabled here (the caller checked the CPU).
                    unsafe { $body::<E, E::V4>($($arg),*) }
                }
                match isa {
                    // SAFETY: `Isa::Avx512` is only detected when the CPU has these features.
                    Isa::Avx512 => return unsafe { wide::<E>($($arg),*) },
                    // SAFETY: `Isa::Avx2` is only detected when the CPU has AVX2.
                    Isa::Avx2 => return unsafe { narrow::<E>($($arg),*) },
                    Isa::Portable => {}
                }
            }
            let _ = isa;
            // SAFETY: single lanes need no CPU feature.
            unsafe { $body::<E, E::V1>($($arg),*) }
        }
    };
}

/// The smallest of the first `lanes` values.
#[inline(always)]
fn fold_min<W: Work>(a: &[W]) -> W {
    a.iter().fold(W::INF, |m, &x| m.least(x))
}

kernel! {
    /// One Dijkstra row scan: for every column, the candidate distance through row `i` is
    /// `base + c[j] - ve[j]`; where it is below `sp[j]` it replaces it and `path[j] = i`.
    /// Returns the smallest tentative distance over all columns and over the free ones
    /// (`fpen[j]` is zero for a free column and [`Work::INF`] for an assigned one).
    fn relax(
        row: &[E],
        ve: &[E::W],
        sp: &mut [E::W],
        path: &mut [u32],
        fpen: &[E::W],
        base: E::W,
        i: u32,
    ) -> (E::W, E::W) = relax_v;
}

/// # Safety
/// `V`'s instruction set must be available.
#[inline(always)]
unsafe fn relax_v<E: Lanes, V: Vector<E::W> + Loader<E>>(
    row: &[E],
    ve: &[E::W],
    sp: &mut [E::W],
    path: &mut [u32],
    fpen: &[E::W],
    base: E::W,
    i: u32,
) -> (E::W, E::W) {
    let n = row.len();
    assert!(ve.len() == n && sp.len() == n && path.len() == n && fpen.len() == n);
    let inf = <E::W as Work>::INF;
    let body = n - n % V::LANES;
    // SAFETY: the instruction set is the caller's contract; every access is at j..j + LANES
    // with j + LANES <= body <= n, the length of all five slices (asserted above).
    let (lo, lf) = unsafe {
        let vb = V::splat(base);
        let (mut lo, mut lf) = (V::splat(inf), V::splat(inf));
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
            lo = lo.min(s2);
            lf = lf.min(s2.add(V::load(fpen.as_ptr().add(j))));
            j += V::LANES;
        }
        (lo.to_array(), lf.to_array())
    };
    let (mut lo, mut lf) = (fold_min(&lo[..V::LANES]), fold_min(&lf[..V::LANES]));
    for j in body..n {
        let r = base + row[j].widen() - ve[j];
        if r < sp[j] {
            sp[j] = r;
            path[j] = i;
        }
        lo = lo.least(sp[j]);
        lf = lf.least(sp[j] + fpen[j]);
    }
    (lo, lf)
}

kernel! {
    /// The first column whose tentative distance is `value`, restricted to free columns
    /// (`fpen[j] == 0`) when `only_free`; [`NONE`] if there is none.
    fn find(sp: &[E::W], fpen: &[E::W], value: E::W, only_free: bool) -> usize = find_v;
}

/// # Safety
/// `V`'s instruction set must be available.
#[inline(always)]
unsafe fn find_v<E: Lanes, V: Vector<E::W> + Loader<E>>(
    sp: &[E::W],
    fpen: &[E::W],
    value: E::W,
    only_free: bool,
) -> usize {
    let n = sp.len();
    assert!(fpen.len() == n);
    let zero = <E::W as Work>::ZERO;
    let body = n - n % V::LANES;
    // SAFETY: as in `relax_v`.
    unsafe {
        let (vv, vz) = (V::splat(value), V::splat(zero));
        let mut j = 0;
        while j < body {
            let mut m = V::load(sp.as_ptr().add(j)).eq(vv);
            if only_free {
                m = V::and(m, V::load(fpen.as_ptr().add(j)).eq(vz));
            }
            let b = V::bits(m);
            if b != 0 {
                return j + b.trailing_zeros() as usize;
            }
            j += V::LANES;
        }
    }
    (body..n)
        .find(|&j| sp[j] == value && (!only_free || fpen[j] == zero))
        .unwrap_or(NONE)
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
    // SAFETY: as in `relax_v`.
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
    // SAFETY: as in `relax_v`.
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

kernel! {
    /// The smallest and second smallest reduced costs `row[j] - v[j]` and their columns
    /// `(umin, j1, usub, j2)`: `j1` is the first column holding the minimum, `j2` the first
    /// other column holding `usub` (a tie gives `usub == umin`). Only reduced costs below [`Work::INF`] count; where
    /// there are fewer than two, the missing ones are `(INF, NONE)`.
    fn two_minima(row: &[E], v: &[E::W]) -> (E::W, usize, E::W, usize) = two_minima_v;
}

/// # Safety
/// `V`'s instruction set must be available.
#[inline(always)]
unsafe fn two_minima_v<E: Lanes, V: Vector<E::W> + Loader<E>>(
    row: &[E],
    v: &[E::W],
) -> (E::W, usize, E::W, usize) {
    let n = row.len();
    assert!(v.len() == n);
    let inf = <E::W as Work>::INF;
    let none = <E::W as Work>::from_index(0);
    let body = n - n % V::LANES;
    // Per lane: the smallest (m1 at j1) and second smallest (m2 at j2) reduced cost seen in
    // that lane; a lane's j is meaningful only where its m is below INF.
    // SAFETY: as in `relax_v`.
    let (m1, j1, m2, j2) = unsafe {
        let (mut m1, mut m2) = (V::splat(inf), V::splat(inf));
        let (mut j1, mut j2) = (V::splat(none), V::splat(none));
        let mut j = 0;
        while j < body {
            let h = V::load_elem(row.as_ptr().add(j)).sub(V::load(v.as_ptr().add(j)));
            let jv = V::indices(j);
            let lt1 = h.lt(m1);
            let lt2 = h.lt(m2);
            let nm2 = V::select(lt1, m1, V::select(lt2, h, m2));
            let nj2 = V::select(lt1, j1, V::select(lt2, jv, j2));
            m1 = V::select(lt1, h, m1);
            j1 = V::select(lt1, jv, j1);
            m2 = nm2;
            j2 = nj2;
            j += V::LANES;
        }
        (m1.to_array(), j1.to_array(), m2.to_array(), j2.to_array())
    };
    // Every lane's two candidates and the tail's columns, merged in scalar.
    let mut cands: Vec<(E::W, usize)> = Vec::with_capacity(2 * V::LANES + V::LANES);
    for l in 0..V::LANES {
        cands.push((m1[l], j1[l].to_index()));
        cands.push((m2[l], j2[l].to_index()));
    }
    for j in body..n {
        cands.push((row[j].widen() - v[j], j));
    }
    let mut first = (inf, NONE);
    for &(m, j) in &cands {
        if m < inf && (m < first.0 || (m == first.0 && j < first.1)) {
            first = (m, j);
        }
    }
    let mut second = (inf, NONE);
    for &(m, j) in &cands {
        if m < inf
            && j != first.1
            && (second.1 == NONE || m < second.0 || (m == second.0 && j < second.1))
        {
            second = (m, j);
        }
    }
    (first.0, first.1, second.0, second.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn isas() -> Vec<Isa> {
        let mut v = vec![Isa::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                v.push(Isa::Avx2);
            }
            if Isa::detect() == Isa::Avx512 {
                v.push(Isa::Avx512);
            }
        }
        v
    }

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
                let (mut lo, mut lf) = (E::W::INF, E::W::INF);
                for j in 0..n {
                    let r = base + row[j].widen() - ve[j];
                    if r < sr[j] {
                        sr[j] = r;
                        pr[j] = 3;
                    }
                    lo = lo.least(sr[j]);
                    lf = lf.least(sr[j] + fpen[j]);
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
                for &isa in &isas() {
                    let (mut s, mut p) = (sp0.clone(), vec![9u32; n]);
                    let got = relax::<E>(isa, &row, &ve, &mut s, &mut p, &fpen, base, 3);
                    assert_eq!(got, (lo, lf), "{isa:?} n = {n}");
                    assert_eq!(s, sr, "{isa:?} n = {n}");
                    assert_eq!(p, pr, "{isa:?} n = {n}");
                    for only_free in [false, true] {
                        let want = (0..n)
                            .find(|&j| sr[j] == lo && (!only_free || fpen[j] == E::W::ZERO))
                            .unwrap_or(NONE);
                        assert_eq!(find::<E>(isa, &sr, &fpen, lo, only_free), want);
                    }
                    let (a, ja, b, jb) = two_minima::<E>(isa, &row, &v);
                    assert_eq!(ja, j1, "{isa:?} n = {n}");
                    if j1 != NONE {
                        assert_eq!(a, h[j1]);
                    }
                    assert_eq!(b, usub, "{isa:?} n = {n}");
                    if usub < E::W::INF {
                        let first = (0..n).find(|&j| j != j1 && h[j] == usub);
                        assert_eq!(Some(jb), first, "{isa:?} n = {n}");
                    } else {
                        assert_eq!(jb, NONE);
                    }
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

    #[test]
    fn kernels_agree_on_every_instruction_set() {
        check_kernels::<f64>(
            |r| {
                if r % 11 == 0 {
                    f64::INFINITY
                } else {
                    (r % 8) as f64 * 0.5
                }
            },
            f64::NEG_INFINITY,
        );
        check_kernels::<f32>(
            |r| {
                if r % 11 == 0 {
                    f32::INFINITY
                } else {
                    (r % 8) as f32 * 0.25
                }
            },
            f64::NEG_INFINITY,
        );
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
