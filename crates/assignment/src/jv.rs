//! Shortest augmenting path in the Jonker–Volgenant style: the production solver.

use ndarray::ArrayView2;

use crate::problem::{Cost, Problem, Solution};
use crate::{Assignment, AssignmentError, Sense};

const NONE: usize = usize::MAX;
const INF: f64 = f64::INFINITY;

/// Solves the linear assignment problem exactly with the Jonker–Volgenant algorithm
/// (LAPJV): column reduction with reduction transfer, two rounds of augmenting row
/// reduction, then one Dijkstra-like shortest augmenting path per remaining free row
/// (Crouse's rectangular form, as in `scipy.optimize.linear_sum_assignment`, with JV's
/// early exit on the first free column at the current distance).
///
/// This is the crate's production solver; [`linear_sum_assignment`](crate::linear_sum_assignment)
/// calls it. The result carries dual potentials ([`Assignment::duals`]).
///
/// Rectangular matrices are solved directly (no padding): the shorter side is assigned
/// completely. The initialisation (column reduction) is used for square matrices only; a
/// rectangular matrix starts from zero potentials, which keeps the unassigned columns' duals
/// at zero.
///
/// # Complexity
/// `O(n^2 m)` time in the worst case for an `n x m` matrix (`n <= m`), typically far less on
/// random data because the initialisation assigns most rows; `O(n m)` memory for the internal
/// copy of the matrix plus `O(m)` per augmentation, allocated once.
///
/// # Errors
/// [`AssignmentError::InvalidCost`] for `NaN` and the infinity that would always be optimal
/// (`-inf` minimising, `+inf` maximising), [`AssignmentError::CostOutOfRange`] for integers
/// beyond 2^53, [`AssignmentError::Infeasible`] when forbidden pairs (`+inf` minimising,
/// `-inf` maximising, `None`) leave no complete assignment, [`AssignmentError::CostOverflow`]
/// when the optimal total is beyond `f64` (the crate README has the rules).
///
/// # Examples
/// ```
/// use assignment::{jonker_volgenant, Sense};
/// let c = ndarray::array![[4, 1, 3], [2, 0, 5], [3, 2, 2]];
/// let a = jonker_volgenant(c.view(), Sense::Minimize)?;
/// assert_eq!(a.row_to_col, vec![Some(1), Some(0), Some(2)]);
/// assert_eq!(a.cost, 5.0);
/// let d = a.duals.unwrap();
/// assert_eq!(d.row.iter().sum::<f64>() + d.col.iter().sum::<f64>(), 5.0);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn jonker_volgenant<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
) -> Result<Assignment, AssignmentError> {
    let p = Problem::new(costs, sense)?;
    let (x, u, v) = solve(&p)?;
    p.finish(&x, Some((u, v)))
}

/// Maximum number of chained steps in augmenting row reduction, per row of the problem:
/// ARR can cycle for a long time on float ties; after this budget the remaining free rows go
/// to the (always correct) augmentation phase.
const ARR_BUDGET_PER_ROW: usize = 8;

/// Solves the internal problem: returns `(x, u, v)` with `x[i]` the column of row `i`.
pub(crate) fn solve(p: &Problem<'_>) -> Result<Solution, AssignmentError> {
    let (nr, nc) = (p.nr, p.nc);
    let mut v = vec![0.0f64; nc];
    let mut x = vec![NONE; nr];
    let mut y = vec![NONE; nc];
    if nr == 0 {
        return Ok((x, Vec::new(), v));
    }
    let mut free: Vec<usize> = Vec::with_capacity(nr);
    if nr == nc {
        column_reduction(p, &mut v, &mut x, &mut y, &mut free)?;
    } else {
        free.extend(0..nr);
    }
    augmenting_row_reduction(p, &mut v, &mut x, &mut y, &mut free)?;
    let mut u = vec![0.0f64; nr];
    for i in 0..nr {
        if x[i] != NONE {
            u[i] = p.at(i, x[i]) - v[x[i]];
        }
    }
    augment(p, &mut u, &mut v, &mut x, &mut y, &free)?;
    Ok((x, u, v))
}

/// Column reduction (`v[j]` = column minimum, each column to its minimum row if that row is
/// still free, scanning columns from the last) and reduction transfer for rows assigned once.
///
/// Among rows tied for a column's minimum, the row on the diagonal (`i == j`) is taken, else
/// the first: a matrix whose diagonal is among the column minima, a constant matrix above all,
/// then starts from (and, with nothing left to augment, ends at) the identity, which is what
/// scipy's solver returns there (its test `test_constant_cost_matrix`). The rule costs one read
/// of the diagonal and changes nothing else.
fn column_reduction(
    p: &Problem<'_>,
    v: &mut [f64],
    x: &mut [usize],
    y: &mut [usize],
    free: &mut Vec<usize>,
) -> Result<(), AssignmentError> {
    let (nr, nc) = (p.nr, p.nc);
    let mut arg = vec![0usize; nc];
    v.fill(INF);
    for i in 0..nr {
        for (j, &c) in p.row(i).iter().enumerate() {
            if c < v[j] {
                v[j] = c;
                arg[j] = i;
            }
        }
    }
    // Ties go to the diagonal (one read per column, outside the row-major pass).
    for j in 0..nr.min(nc) {
        if p.at(j, j) == v[j] {
            arg[j] = j;
        }
    }
    if v.contains(&INF) {
        return Err(AssignmentError::Infeasible);
    }
    let mut matches = vec![0u32; nr];
    for j in (0..nc).rev() {
        let i = arg[j];
        matches[i] += 1;
        if matches[i] == 1 {
            x[i] = j;
            y[j] = i;
        }
    }
    for i in 0..nr {
        match matches[i] {
            0 => free.push(i),
            1 => {
                // Reduction transfer: lower v[j1] so that row i's reduced cost there equals its
                // second smallest one (row i keeps j1 as a minimum).
                let j1 = x[i];
                let row = p.row(i);
                let mut m = INF;
                for (j, (&c, &vj)) in row.iter().zip(v.iter()).enumerate() {
                    if j != j1 {
                        let h = c - vj;
                        if h < m {
                            m = h;
                        }
                    }
                }
                if m.is_finite() {
                    v[j1] -= m;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Two rounds of augmenting row reduction (JV 1987). Invariant kept: every assigned row is
/// assigned to a column minimising `c[i][j] - v[j]`; `v` only decreases, and only on columns
/// that are (or become) assigned.
fn augmenting_row_reduction(
    p: &Problem<'_>,
    v: &mut [f64],
    x: &mut [usize],
    y: &mut [usize],
    free: &mut Vec<usize>,
) -> Result<(), AssignmentError> {
    let mut budget = ARR_BUDGET_PER_ROW * p.nr + 16;
    let mut next: Vec<usize> = Vec::with_capacity(free.len());
    for _round in 0..2 {
        let mut k = 0;
        let mut current = NONE;
        next.clear();
        loop {
            let i = if current != NONE {
                std::mem::replace(&mut current, NONE)
            } else if k < free.len() {
                k += 1;
                free[k - 1]
            } else {
                break;
            };
            let row = p.row(i);
            // Smallest and second smallest reduced cost in the row.
            let (mut umin, mut usub) = (INF, INF);
            let (mut j1, mut j2) = (NONE, NONE);
            for (j, (&c, &vj)) in row.iter().zip(v.iter()).enumerate() {
                let h = c - vj;
                if h < usub {
                    if h >= umin {
                        usub = h;
                        j2 = j;
                    } else {
                        usub = umin;
                        j2 = j1;
                        umin = h;
                        j1 = j;
                    }
                }
            }
            if j1 == NONE {
                return Err(AssignmentError::Infeasible); // the row is entirely forbidden
            }
            let mut i0 = y[j1];
            let raise = umin < usub && usub.is_finite();
            if raise {
                v[j1] -= usub - umin;
            } else if i0 != NONE && i < p.nc && y[i] == NONE && row[i] - v[i] == umin {
                // Tie: the diagonal column when it is free and among the minima (as in the
                // column reduction), so a constant matrix ends at the identity, as in scipy.
                j1 = i;
                i0 = NONE;
            } else if i0 != NONE && j2 != NONE && usub == umin {
                // Tie: take the second minimum column, which may be free.
                j1 = j2;
                i0 = y[j2];
            }
            x[i] = j1;
            y[j1] = i;
            if i0 != NONE {
                x[i0] = NONE;
                if raise && budget > 0 {
                    budget -= 1;
                    current = i0;
                } else {
                    next.push(i0);
                }
            }
        }
        std::mem::swap(free, &mut next);
        if free.is_empty() {
            break;
        }
    }
    Ok(())
}

/// Shortest augmenting paths from each free row (Dijkstra on reduced costs).
///
/// Every row scan walks the whole cost row in column order (sequential, prefetcher-friendly;
/// gathering only the unscanned columns in a compacted order costs a cache miss per element
/// on large matrices). Scanned columns are neutralised by setting their working potential to
/// `-inf` (so their reduced cost is `+inf` and never updates) and their distance to `+inf`
/// (so they are never the minimum); their final distances are kept in `done`.
fn augment(
    p: &Problem<'_>,
    u: &mut [f64],
    v: &mut [f64],
    x: &mut [usize],
    y: &mut [usize],
    free: &[usize],
) -> Result<(), AssignmentError> {
    // Integer costs below 2^24 in magnitude are exact in f32: scanning an f32 copy halves the
    // memory traffic of the row reads, which bound the scan on large matrices. The arithmetic
    // stays f64 (each entry is widened exactly), so the result is the same.
    let bound = p.min.abs().max(p.max.abs());
    if !free.is_empty() && p.integral && bound < (1u32 << 24) as f64 && p.c.len() >= 1 << 16 {
        let c32: Vec<f32> = p.c.iter().map(|&c| c as f32).collect();
        augment_with(p, &c32, u, v, x, y, free)
    } else {
        augment_with(p, &p.c, u, v, x, y, free)
    }
}

/// A matrix entry type for the row scan: `f64`, or `f32` holding exact integers.
trait RowElem: Copy {
    /// The entry as f64 (exact).
    fn wide(self) -> f64;
    /// Loads four entries as f64 lanes.
    ///
    /// # Safety
    /// `p` must be valid for reading four elements, and AVX2 must be available.
    #[cfg(target_arch = "x86_64")]
    unsafe fn load4(p: *const Self) -> std::arch::x86_64::__m256d;
}

impl RowElem for f64 {
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load4(p: *const f64) -> std::arch::x86_64::__m256d {
        // SAFETY: forwarded to the caller.
        unsafe { std::arch::x86_64::_mm256_loadu_pd(p) }
    }
}

impl RowElem for f32 {
    #[inline(always)]
    fn wide(self) -> f64 {
        self as f64
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load4(p: *const f32) -> std::arch::x86_64::__m256d {
        // SAFETY: forwarded to the caller (four f32 = 16 bytes readable; AVX2 implies AVX).
        unsafe { std::arch::x86_64::_mm256_cvtps_pd(std::arch::x86_64::_mm_loadu_ps(p)) }
    }
}

#[allow(clippy::too_many_arguments)]
fn augment_with<R: RowElem>(
    p: &Problem<'_>,
    c: &[R],
    u: &mut [f64],
    v: &mut [f64],
    x: &mut [usize],
    y: &mut [usize],
    free: &[usize],
) -> Result<(), AssignmentError> {
    let nc = p.nc;
    let mut ve: Vec<f64> = vec![0.0; nc];
    let mut sp: Vec<f64> = vec![INF; nc];
    let mut path: Vec<u64> = vec![u64::MAX; nc];
    let mut done = vec![INF; nc];
    let mut scanned_rows: Vec<usize> = Vec::with_capacity(nc);
    let mut scanned_cols: Vec<usize> = Vec::with_capacity(nc);
    // All ones for a free column (the AVX2 blends test the top bit), zero for an assigned one.
    let mut free_mask: Vec<u64> = y
        .iter()
        .map(|&r| if r == NONE { u64::MAX } else { 0 })
        .collect();
    let avx2 = has_avx2();

    for &f in free {
        ve.copy_from_slice(v);
        sp.fill(INF);
        scanned_rows.clear();
        scanned_cols.clear();
        u[f] = 0.0;
        let mut min_val = 0.0f64;
        let mut i = f;
        let sink;
        loop {
            scanned_rows.push(i);
            let base = min_val - u[i];
            let row = &c[i * nc..(i + 1) * nc];
            let (lowest, index) = scan_row(
                avx2, row, &ve, &mut sp, &mut path, &free_mask, base, i as u64,
            );
            if index == NONE {
                return Err(AssignmentError::Infeasible);
            }
            min_val = lowest;
            let j = index;
            done[j] = lowest;
            ve[j] = f64::NEG_INFINITY;
            sp[j] = INF;
            scanned_cols.push(j);
            if y[j] == NONE {
                sink = j;
                break;
            }
            i = y[j];
        }
        // Dual update.
        u[f] += min_val;
        for &r in &scanned_rows[1..] {
            u[r] += min_val - done[x[r]];
        }
        for &c in &scanned_cols {
            v[c] -= min_val - done[c];
        }
        // Augment along the alternating path.
        free_mask[sink] = 0;
        let mut j = sink;
        loop {
            let r = path[j] as usize;
            y[j] = r;
            let prev = x[r];
            x[r] = j;
            if r == f {
                break;
            }
            j = prev;
        }
    }
    Ok(())
}

/// Whether the CPU has AVX2 (the row scan has an AVX2 version picked at run time).
fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// One Dijkstra row scan: relax every column through row `i` (reduced cost `base + c - ve`),
/// then return the smallest tentative distance and its column (`NONE` if all are `+inf`).
/// Among equal distances a free column wins (the first free one), which ends the search early
/// and matters a lot on integer costs with many ties; otherwise the first column wins.
/// The relaxation keeps two minima, over all columns and over the free ones, so the tie rule
/// costs no extra pass.
#[allow(clippy::too_many_arguments)]
#[inline]
fn scan_row<R: RowElem>(
    avx2: bool,
    row: &[R],
    ve: &[f64],
    sp: &mut [f64],
    path: &mut [u64],
    free_mask: &[u64],
    base: f64,
    i: u64,
) -> (f64, usize) {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        // SAFETY: `avx2` is true only when the CPU reports AVX2 (`has_avx2`).
        let (lowest, lowest_free) = unsafe { relax_avx2(row, ve, sp, path, free_mask, base, i) };
        if lowest == INF {
            return (INF, NONE);
        }
        let only_free = lowest_free == lowest;
        // SAFETY: as above.
        return (lowest, unsafe {
            find_avx2(sp, free_mask, lowest, only_free)
        });
    }
    let _ = avx2;
    relax_scalar(row, ve, sp, path, base, i);
    let (mut lowest, mut lowest_free) = (INF, INF);
    for (&d, &f) in sp.iter().zip(free_mask) {
        lowest = lowest.min(d);
        if f != 0 {
            lowest_free = lowest_free.min(d);
        }
    }
    if lowest == INF {
        return (INF, NONE);
    }
    let only_free = lowest_free == lowest;
    let index = sp
        .iter()
        .zip(free_mask)
        .position(|(&d, &f)| d == lowest && (!only_free || f != 0))
        .unwrap_or(NONE);
    (lowest, index)
}

/// Relaxation, branch-free (the compiler turns the selects into blends).
#[inline(always)]
fn relax_scalar<R: RowElem>(
    row: &[R],
    ve: &[f64],
    sp: &mut [f64],
    path: &mut [u64],
    base: f64,
    i: u64,
) {
    for ((&c, &vj), (s, pth)) in row
        .iter()
        .zip(ve.iter())
        .zip(sp.iter_mut().zip(path.iter_mut()))
    {
        let r = base + c.wide() - vj;
        let upd = r < *s;
        *s = if upd { r } else { *s };
        *pth = if upd { i } else { *pth };
    }
}

/// AVX2 relaxation fused with the two minima (all columns, free columns): four columns per
/// instruction. Same arithmetic (`(base + c) - ve`, compare, select) as [`relax_scalar`], so
/// both give identical distances.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn relax_avx2<R: RowElem>(
    row: &[R],
    ve: &[f64],
    sp: &mut [f64],
    path: &mut [u64],
    free_mask: &[u64],
    base: f64,
    i: u64,
) -> (f64, f64) {
    use std::arch::x86_64::*;
    let n = row.len();
    assert!(ve.len() == n && sp.len() == n && path.len() == n && free_mask.len() == n);
    let vb = _mm256_set1_pd(base);
    let vi = _mm256_castsi256_pd(_mm256_set1_epi64x(i as i64));
    let vinf = _mm256_set1_pd(INF);
    let mut vmin = vinf;
    let mut vmin_free = vinf;
    let mut j = 0;
    while j + 4 <= n {
        // SAFETY: j + 4 <= n and all five slices hold n elements (asserted above); unaligned
        // loads and stores; u64 and f64 lanes have the same size, and the path and mask lanes
        // are only moved by blends (which read their top bit), never used as floats.
        unsafe {
            let c = R::load4(row.as_ptr().add(j));
            let v = _mm256_loadu_pd(ve.as_ptr().add(j));
            let s = _mm256_loadu_pd(sp.as_ptr().add(j));
            let r = _mm256_sub_pd(_mm256_add_pd(vb, c), v);
            let m = _mm256_cmp_pd::<_CMP_LT_OQ>(r, s);
            let s2 = _mm256_blendv_pd(s, r, m);
            _mm256_storeu_pd(sp.as_mut_ptr().add(j), s2);
            let pp = path.as_mut_ptr().add(j) as *mut f64;
            _mm256_storeu_pd(pp, _mm256_blendv_pd(_mm256_loadu_pd(pp), vi, m));
            vmin = _mm256_min_pd(vmin, s2);
            let fm = _mm256_loadu_pd(free_mask.as_ptr().add(j) as *const f64);
            vmin_free = _mm256_min_pd(vmin_free, _mm256_blendv_pd(vinf, s2, fm));
        }
        j += 4;
    }
    let (mut a, mut b) = ([0.0f64; 4], [0.0f64; 4]);
    // SAFETY: `a` and `b` hold four f64 each.
    unsafe {
        _mm256_storeu_pd(a.as_mut_ptr(), vmin);
        _mm256_storeu_pd(b.as_mut_ptr(), vmin_free);
    }
    let mut lowest = a.iter().copied().fold(INF, f64::min);
    let mut lowest_free = b.iter().copied().fold(INF, f64::min);
    relax_scalar(&row[j..], &ve[j..], &mut sp[j..], &mut path[j..], base, i);
    for (&d, &f) in sp[j..].iter().zip(&free_mask[j..]) {
        lowest = lowest.min(d);
        if f != 0 {
            lowest_free = lowest_free.min(d);
        }
    }
    (lowest, lowest_free)
}

/// The first index holding `value` (restricted to free columns when `only_free`), four
/// columns at a time. `value` must occur there.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn find_avx2(sp: &[f64], free_mask: &[u64], value: f64, only_free: bool) -> usize {
    use std::arch::x86_64::*;
    let n = sp.len();
    assert!(free_mask.len() == n);
    let vv = _mm256_set1_pd(value);
    let mut j = 0;
    while j + 4 <= n {
        // SAFETY: j + 4 <= n for both slices.
        let mask = unsafe {
            let eq = _mm256_cmp_pd::<_CMP_EQ_OQ>(_mm256_loadu_pd(sp.as_ptr().add(j)), vv);
            let eq = if only_free {
                _mm256_and_pd(eq, _mm256_loadu_pd(free_mask.as_ptr().add(j) as *const f64))
            } else {
                eq
            };
            _mm256_movemask_pd(eq)
        };
        if mask != 0 {
            return j + mask.trailing_zeros() as usize;
        }
        j += 4;
    }
    j + sp[j..]
        .iter()
        .zip(&free_mask[j..])
        .position(|(&d, &f)| d == value && (!only_free || f != 0))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 row scan and the portable one give identical distances, paths and choices.
    #[test]
    fn avx2_and_portable_row_scans_agree() {
        if !has_avx2() {
            return;
        }
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for n in [0usize, 1, 3, 4, 5, 31, 32, 33, 1023, 1025] {
            for round in 0..3 {
                let row: Vec<f64> = (0..n)
                    .map(|k| {
                        if k % 7 == 3 {
                            INF
                        } else {
                            (next() * 8.0).floor()
                        }
                    })
                    .collect();
                let ve: Vec<f64> = (0..n)
                    .map(|k| {
                        if k % 5 == 1 {
                            f64::NEG_INFINITY
                        } else {
                            (next() * 4.0).floor()
                        }
                    })
                    .collect();
                let sp0: Vec<f64> = (0..n)
                    .map(|k| {
                        if k % 3 == 0 {
                            INF
                        } else {
                            (next() * 6.0).floor()
                        }
                    })
                    .collect();
                let free: Vec<u64> = (0..n)
                    .map(|k| if k % 4 == round { u64::MAX } else { 0 })
                    .collect();
                let (mut sa, mut sb) = (sp0.clone(), sp0.clone());
                let (mut pa, mut pb) = (vec![9u64; n], vec![9u64; n]);
                for _repeat in 0..2 {
                    let a = scan_row(true, &row, &ve, &mut sa, &mut pa, &free, -1.0, 3);
                    let b = scan_row(false, &row, &ve, &mut sb, &mut pb, &free, -1.0, 3);
                    assert_eq!(a, b, "n = {n}");
                    assert_eq!(sa, sb);
                    assert_eq!(pa, pb);
                }
            }
        }
    }
}
