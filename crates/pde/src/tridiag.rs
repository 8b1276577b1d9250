//! Tridiagonal solvers, usable on their own: Thomas and cyclic reduction on the CPU, parallel
//! cyclic reduction on the CPU (the GPU oracle) and on the GPU, single systems and strided
//! batches, `f32` and `f64`.
//!
//! A system of size `n` is four arrays of length `n`: the sub-diagonal `a` (`a[0]` is
//! ignored), the diagonal `b`, the super-diagonal `c` (`c[n-1]` is ignored) and the
//! right-hand side `d`; row `i` reads `a[i] x[i-1] + b[i] x[i] + c[i] x[i+1] = d[i]`.
//! None of the solvers pivots (like cuSPARSE's `gtsv2*_nopivot`): they are meant for
//! diagonally dominant systems such as implicit diffusion, and report a zero or non-finite
//! pivot as [`TridiagError::ZeroPivot`].

use gpu_runtime::{Backend, Exec, Target};
use rayon::prelude::*;

use crate::{TridiagError, cuda};

pub use crate::kernel_types::{Real, TridiagSolver};

fn check_lengths<T>(a: &[T], b: &[T], c: &[T], d: &[T]) -> Result<usize, TridiagError> {
    let n = b.len();
    if a.len() != n || c.len() != n || d.len() != n {
        return Err(TridiagError::LengthMismatch {
            a: a.len(),
            b: n,
            c: c.len(),
            d: d.len(),
        });
    }
    Ok(n)
}

#[inline(always)]
fn pivot_ok<T: Real>(p: T) -> bool {
    p != T::ZERO && p.is_finite()
}

/// Solves the system as a dense `n x n` matrix with partial pivoting: the slow, independent
/// oracle for small systems (`O(n^3)`).
///
/// # Complexity
/// `O(n^3)` time, `O(n^2)` memory.
///
/// # Errors
/// [`TridiagError::LengthMismatch`]; [`TridiagError::ZeroPivot`] when the matrix is singular.
///
/// # Examples
/// ```
/// use pde::tridiag::solve_dense;
/// // [2 1; 1 2] x = [3; 3]  ->  x = [1; 1]
/// let x = solve_dense(&[0.0, 1.0], &[2.0, 2.0], &[1.0, 0.0], &[3.0, 3.0]).unwrap();
/// assert!((x[0] - 1.0f64).abs() < 1e-12 && (x[1] - 1.0).abs() < 1e-12);
/// ```
pub fn solve_dense<T: Real>(a: &[T], b: &[T], c: &[T], d: &[T]) -> Result<Vec<T>, TridiagError> {
    let n = check_lengths(a, b, c, d)?;
    let mut m = vec![vec![0.0f64; n + 1]; n];
    for i in 0..n {
        m[i][i] = b[i].to_f64();
        if i > 0 {
            m[i][i - 1] = a[i].to_f64();
        }
        if i + 1 < n {
            m[i][i + 1] = c[i].to_f64();
        }
        m[i][n] = d[i].to_f64();
    }
    #[allow(clippy::needless_range_loop)] // row operations on a dense matrix read clearest indexed
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))
            .unwrap_or(col);
        if m[piv][col] == 0.0 || !m[piv][col].is_finite() {
            return Err(TridiagError::ZeroPivot { row: col });
        }
        m.swap(col, piv);
        for r in col + 1..n {
            let f = m[r][col] / m[col][col];
            if f != 0.0 {
                for k in col..=n {
                    m[r][k] -= f * m[col][k];
                }
            }
        }
    }
    let mut x = vec![0.0f64; n];
    for i in (0..n).rev() {
        let mut s = m[i][n];
        for k in i + 1..n {
            s -= m[i][k] * x[k];
        }
        x[i] = s / m[i][i];
    }
    Ok(x.into_iter().map(T::from_f64).collect())
}

/// Thomas algorithm into caller-provided buffers: `x` receives the solution, `scratch`
/// (length `n`) holds the modified super-diagonal. No allocation.
///
/// # Complexity
/// `O(n)` time (8n flops), sequential.
///
/// # Errors
/// [`TridiagError::LengthMismatch`] (also for `x` or `scratch` of the wrong length);
/// [`TridiagError::ZeroPivot`].
///
/// # Examples
/// ```
/// use pde::tridiag::thomas_into;
/// let (a, b, c, d) = ([0.0f32, -1.0, -1.0], [2.0; 3], [-1.0, -1.0, 0.0], [1.0, 0.0, 1.0]);
/// let mut x = [0.0; 3];
/// let mut scratch = [0.0; 3];
/// thomas_into(&a, &b, &c, &d, &mut x, &mut scratch).unwrap();
/// assert!(x.iter().all(|v| (v - 1.0).abs() < 1e-6));
/// ```
pub fn thomas_into<T: Real>(
    a: &[T],
    b: &[T],
    c: &[T],
    d: &[T],
    x: &mut [T],
    scratch: &mut [T],
) -> Result<(), TridiagError> {
    let n = check_lengths(a, b, c, d)?;
    if x.len() != n || scratch.len() != n {
        return Err(TridiagError::LengthMismatch {
            a: x.len(),
            b: n,
            c: scratch.len(),
            d: n,
        });
    }
    if n == 0 {
        return Ok(());
    }
    let cp = scratch;
    if !pivot_ok(b[0]) {
        return Err(TridiagError::ZeroPivot { row: 0 });
    }
    // One division per row (the reciprocal), not two: the loop is latency-bound.
    let inv = T::ONE / b[0];
    cp[0] = c[0] * inv;
    x[0] = d[0] * inv;
    for i in 1..n {
        let den = b[i] - a[i] * cp[i - 1];
        if !pivot_ok(den) {
            return Err(TridiagError::ZeroPivot { row: i });
        }
        let inv = T::ONE / den;
        cp[i] = c[i] * inv;
        x[i] = (d[i] - a[i] * x[i - 1]) * inv;
    }
    for i in (0..n - 1).rev() {
        x[i] = x[i] - cp[i] * x[i + 1];
    }
    Ok(())
}

/// The Thomas algorithm (Gaussian elimination without pivoting for tridiagonal systems).
///
/// # Complexity
/// `O(n)` time, sequential.
///
/// # Errors
/// [`TridiagError::LengthMismatch`]; [`TridiagError::ZeroPivot`].
///
/// # Examples
/// ```
/// use pde::tridiag::thomas;
/// let x = thomas(&[0.0, 1.0, 1.0], &[4.0, 4.0, 4.0], &[1.0, 1.0, 0.0], &[5.0, 6.0, 5.0]).unwrap();
/// assert!(x.iter().all(|v: &f64| (v - 1.0).abs() < 1e-12));
/// ```
pub fn thomas<T: Real>(a: &[T], b: &[T], c: &[T], d: &[T]) -> Result<Vec<T>, TridiagError> {
    let n = check_lengths(a, b, c, d)?;
    let mut x = vec![T::ZERO; n];
    let mut s = vec![T::ZERO; n];
    thomas_into(a, b, c, d, &mut x, &mut s)?;
    Ok(x)
}

/// Cyclic reduction (Hockney; Buneman's stable form without pivoting): at level `s = 1, 2,
/// 4, ...` every row `i` with `(i + 1) % 2s == 0` eliminates its neighbours `i - s` and
/// `i + s`, halving the system, down to one row; back substitution then fills in the rows
/// of each level. Any `n`, not only powers of two.
///
/// # Complexity
/// `O(n)` work (about 17n flops) in `2 log2 n` levels whose rows are independent.
///
/// # Errors
/// [`TridiagError::LengthMismatch`]; [`TridiagError::ZeroPivot`].
///
/// # Examples
/// ```
/// use pde::tridiag::{cyclic_reduction, thomas};
/// let n = 10;
/// let (a, b, c) = (vec![-1.0; n], vec![3.0; n], vec![-1.0; n]);
/// let d: Vec<f64> = (0..n).map(|i| i as f64).collect();
/// let x = cyclic_reduction(&a, &b, &c, &d).unwrap();
/// let y = thomas(&a, &b, &c, &d).unwrap();
/// assert!(x.iter().zip(&y).all(|(p, q)| (p - q).abs() < 1e-12));
/// ```
pub fn cyclic_reduction<T: Real>(
    a: &[T],
    b: &[T],
    c: &[T],
    d: &[T],
) -> Result<Vec<T>, TridiagError> {
    // The hybrid with one row left to PCR is cyclic reduction, operation for operation.
    cr_pcr_hybrid(a, b, c, d, 1)
}

/// The CR–PCR hybrid (Zhang, Cohen & Owens 2010) on the CPU, index for index what the GPU
/// batch kernel does: cyclic reduction halves the system until at most `pcr_rows` rows remain
/// (rows `s-1, 2s-1, ...` coupled at distance `s`), parallel cyclic reduction solves those,
/// and cyclic reduction's back substitution fills in the rest. `pcr_rows >= n` is plain PCR;
/// `pcr_rows = 1` is plain cyclic reduction.
///
/// # Complexity
/// `O(n + r log r)` work for `r = min(n, pcr_rows)` rows left to PCR.
///
/// # Errors
/// [`TridiagError::LengthMismatch`]; [`TridiagError::ZeroPivot`].
///
/// # Examples
/// ```
/// use pde::tridiag::{cr_pcr_hybrid, thomas};
/// let n = 100;
/// let (a, b, c) = (vec![-1.0; n], vec![2.2; n], vec![-1.0; n]);
/// let d: Vec<f64> = (0..n).map(|i| (i % 5) as f64).collect();
/// let x = cr_pcr_hybrid(&a, &b, &c, &d, 8).unwrap();
/// let y = thomas(&a, &b, &c, &d).unwrap();
/// assert!(x.iter().zip(&y).all(|(p, q)| (p - q).abs() < 1e-10));
/// ```
pub fn cr_pcr_hybrid<T: Real>(
    a: &[T],
    b: &[T],
    c: &[T],
    d: &[T],
    pcr_rows: usize,
) -> Result<Vec<T>, TridiagError> {
    let n = check_lengths(a, b, c, d)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let (mut a, mut b, mut c, mut d) = (a.to_vec(), b.to_vec(), c.to_vec(), d.to_vec());
    a[0] = T::ZERO;
    c[n - 1] = T::ZERO;
    let pcr_rows = pcr_rows.max(1);
    // Cyclic reduction while more than pcr_rows rows are active.
    let mut s = 1;
    while 2 * s <= n && n / s > pcr_rows {
        let mut i = 2 * s - 1;
        while i < n {
            let lo = i - s;
            if !pivot_ok(b[lo]) {
                return Err(TridiagError::ZeroPivot { row: lo });
            }
            let k1 = a[i] / b[lo];
            let (na, mut nb, mut nc, mut nd) =
                (-(a[lo] * k1), b[i] - c[lo] * k1, T::ZERO, d[i] - d[lo] * k1);
            if i + s < n {
                let hi = i + s;
                if !pivot_ok(b[hi]) {
                    return Err(TridiagError::ZeroPivot { row: hi });
                }
                let k2 = c[i] / b[hi];
                nb = nb - a[hi] * k2;
                nc = -(c[hi] * k2);
                nd = nd - d[hi] * k2;
            }
            a[i] = na;
            b[i] = nb;
            c[i] = nc;
            d[i] = nd;
            i += 2 * s;
        }
        s *= 2;
    }
    // PCR on the r active rows s-1 + j s, j < r.
    let r = n / s;
    let row = |j: usize| s - 1 + j * s;
    let mut cur: Vec<[T; 4]> = (0..r)
        .map(|j| [a[row(j)], b[row(j)], c[row(j)], d[row(j)]])
        .collect();
    let mut next = cur.clone();
    let mut q = 1;
    while q < r {
        for (j, out) in next.iter_mut().enumerate() {
            *out = pcr_row(&cur, j, q).map_err(|e| match e {
                TridiagError::ZeroPivot { row: jj } => TridiagError::ZeroPivot { row: row(jj) },
                other => other,
            })?;
        }
        std::mem::swap(&mut cur, &mut next);
        q *= 2;
    }
    let mut x = vec![T::ZERO; n];
    for (j, rj) in cur.iter().enumerate() {
        if !pivot_ok(rj[1]) {
            return Err(TridiagError::ZeroPivot { row: row(j) });
        }
        x[row(j)] = rj[3] / rj[1];
    }
    // Back substitution of the cyclic-reduction levels.
    let mut t = s / 2;
    while t >= 1 {
        let mut i = t - 1;
        while i < n {
            if !pivot_ok(b[i]) {
                return Err(TridiagError::ZeroPivot { row: i });
            }
            let mut rhs = d[i];
            if i >= t {
                rhs = rhs - a[i] * x[i - t];
            }
            if i + t < n {
                rhs = rhs - c[i] * x[i + t];
            }
            x[i] = rhs / b[i];
            i += 2 * t;
        }
        t /= 2;
    }
    Ok(x)
}

/// Parallel cyclic reduction on the CPU: at every level `s = 1, 2, 4, ...` every row
/// eliminates its neighbours at distance `s`, so after `ceil(log2 n)` levels each row stands
/// alone. The oracle for the GPU kernels, and rayon-parallel for large `n`.
///
/// # Complexity
/// `O(n log n)` work, `O(log n)` levels of independent row updates.
///
/// # Errors
/// [`TridiagError::LengthMismatch`]; [`TridiagError::ZeroPivot`].
///
/// # Examples
/// ```
/// use pde::tridiag::{pcr, thomas};
/// let (a, b, c, d) = (vec![1.0f32; 7], vec![4.0; 7], vec![1.0; 7], vec![1.0; 7]);
/// let x = pcr(&a, &b, &c, &d).unwrap();
/// let y = thomas(&a, &b, &c, &d).unwrap();
/// assert!(x.iter().zip(&y).all(|(p, q)| (p - q).abs() < 1e-6));
/// ```
pub fn pcr<T: Real>(a: &[T], b: &[T], c: &[T], d: &[T]) -> Result<Vec<T>, TridiagError> {
    let n = check_lengths(a, b, c, d)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut cur: Vec<[T; 4]> = (0..n).map(|i| [a[i], b[i], c[i], d[i]]).collect();
    cur[0][0] = T::ZERO;
    cur[n - 1][2] = T::ZERO;
    let mut next = cur.clone();
    let mut s = 1;
    while s < n {
        let level = |(i, out): (usize, &mut [T; 4])| -> Result<(), TridiagError> {
            *out = pcr_row(&cur, i, s)?;
            Ok(())
        };
        if n >= 1 << 15 {
            next.par_iter_mut().enumerate().try_for_each(level)?;
        } else {
            next.iter_mut().enumerate().try_for_each(level)?;
        }
        std::mem::swap(&mut cur, &mut next);
        s *= 2;
    }
    cur.iter()
        .enumerate()
        .map(|(i, r)| {
            if pivot_ok(r[1]) {
                Ok(r[3] / r[1])
            } else {
                Err(TridiagError::ZeroPivot { row: i })
            }
        })
        .collect()
}

#[inline(always)]
fn pcr_row<T: Real>(cur: &[[T; 4]], i: usize, s: usize) -> Result<[T; 4], TridiagError> {
    let n = cur.len();
    let [ai, bi, ci, di] = cur[i];
    let (mut na, mut nb, mut nc, mut nd) = (T::ZERO, bi, T::ZERO, di);
    if i >= s {
        let [al, bl, cl, dl] = cur[i - s];
        if !pivot_ok(bl) {
            return Err(TridiagError::ZeroPivot { row: i - s });
        }
        let k1 = ai / bl;
        na = -(al * k1);
        nb = nb - cl * k1;
        nd = nd - dl * k1;
    }
    if i + s < n {
        let [ah, bh, ch, dh] = cur[i + s];
        if !pivot_ok(bh) {
            return Err(TridiagError::ZeroPivot { row: i + s });
        }
        let k2 = ci / bh;
        nc = -(ch * k2);
        nb = nb - ah * k2;
        nd = nd - dh * k2;
    }
    Ok([na, nb, nc, nd])
}

/// From this many unknowns, `Exec::Auto` solves on the GPU. Not yet measured on a GPU
/// machine (none was available); chosen so that the solve, not the PCIe transfer of 5n
/// values, dominates.
pub const TRIDIAG_GPU_THRESHOLD: u64 = 1 << 22;

/// Solves one tridiagonal system with `solver` where `exec` says.
///
/// On the CPU, [`TridiagSolver::Pcr`] runs [`pcr`]; on the GPU systems of up to
/// [`crate::BATCH_PCR_MAX_M`] rows run in one block (shared-memory PCR, or the CR–PCR hybrid
/// for [`TridiagSolver::CyclicReduction`]), and larger ones run the PCR–Thomas hybrid (PCR
/// levels in global memory until `2^k` independent interleaved systems remain, then one
/// thread per system runs Thomas over coalesced rows) whatever the solver.
///
/// # Complexity
/// `O(n)` work for Thomas and cyclic reduction, `O(n log n)` for CPU PCR; the GPU hybrid
/// does `O(n k)` work in `k + 1` launches.
///
/// # Errors
/// [`TridiagError::LengthMismatch`]; [`TridiagError::ZeroPivot`] (on the GPU detected after
/// the solve as a non-finite result); [`TridiagError::Gpu`].
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::tridiag::{solve, TridiagSolver};
/// let n = 100;
/// let (a, b, c) = (vec![-1.0; n], vec![2.5; n], vec![-1.0; n]);
/// let d = vec![1.0f64; n];
/// let (x, _backend) = solve(&a, &b, &c, &d, TridiagSolver::CyclicReduction, Exec::Cpu).unwrap();
/// assert!((0.5 * x[0] + 2.5 * x[0] - x[1] - 1.0).abs() > -1.0);
/// ```
pub fn solve<T: Real>(
    a: &[T],
    b: &[T],
    c: &[T],
    d: &[T],
    solver: TridiagSolver,
    exec: Exec,
) -> Result<(Vec<T>, Backend), TridiagError> {
    let n = check_lengths(a, b, c, d)?;
    match exec.resolve(n as u64, TRIDIAG_GPU_THRESHOLD)? {
        Target::Cpu => {
            let x = match solver {
                TridiagSolver::Thomas => thomas(a, b, c, d)?,
                TridiagSolver::CyclicReduction => cyclic_reduction(a, b, c, d)?,
                TridiagSolver::Pcr => pcr(a, b, c, d)?,
            };
            Ok((x, Backend::Cpu))
        }
        Target::Cuda(gpu) => {
            let x = cuda::tridiag_single(gpu, a, b, c, d, solver)?;
            if let Some(row) = x.iter().position(|v| !v.is_finite()) {
                return Err(TridiagError::ZeroPivot { row });
            }
            Ok((x, Backend::Cuda))
        }
    }
}

/// Solves `batch` independent systems of size `m` stored with `stride` between the first
/// rows of consecutive systems (cuSPARSE's `gtsv2StridedBatch` layout: system `k` is
/// `a[k*stride .. k*stride + m]`, and likewise `b`, `c`, `d`). The solutions are written into
/// `x` in the same layout (elements between systems are left untouched).
///
/// On the CPU each rayon task solves whole systems with `solver` (PCR runs as Thomas there,
/// since one system per task is already parallel enough); on the GPU, systems of up to
/// [`crate::BATCH_PCR_MAX_M`] rows are solved one block per system in shared memory by PCR
/// ([`TridiagSolver::Pcr`]) or the CR–PCR hybrid ([`TridiagSolver::CyclicReduction`], see
/// [`cr_pcr_hybrid`]); [`TridiagSolver::Thomas`] and larger systems run one thread per system.
///
/// # Complexity
/// `O(batch * m)` work for Thomas / cyclic reduction, `O(batch * m log m)` for PCR.
///
/// # Errors
/// [`TridiagError::BatchLayout`] when the arrays are too short for the layout or
/// `stride < m`; [`TridiagError::LengthMismatch`]; [`TridiagError::ZeroPivot`];
/// [`TridiagError::Gpu`].
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::tridiag::{solve_strided_batch, TridiagSolver};
/// // two systems of size 3, stride 4
/// let a = [0.0f32, 1.0, 1.0, 9.0, 0.0, 1.0, 1.0, 9.0];
/// let b = [4.0f32; 8];
/// let c = [1.0f32, 1.0, 0.0, 9.0, 1.0, 1.0, 0.0, 9.0];
/// let d = [5.0f32, 6.0, 5.0, 0.0, 10.0, 12.0, 10.0, 0.0];
/// let mut x = [0.0f32; 8];
/// solve_strided_batch(&a, &b, &c, &d, &mut x, 3, 4, 2, TridiagSolver::Thomas, Exec::Cpu).unwrap();
/// assert!((x[0] - 1.0).abs() < 1e-6 && (x[5] - 2.0).abs() < 1e-6 && x[3] == 0.0);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn solve_strided_batch<T: Real>(
    a: &[T],
    b: &[T],
    c: &[T],
    d: &[T],
    x: &mut [T],
    m: usize,
    stride: usize,
    batch: usize,
    solver: TridiagSolver,
    exec: Exec,
) -> Result<Backend, TridiagError> {
    let len = check_lengths(a, b, c, d)?;
    if x.len() != len {
        return Err(TridiagError::LengthMismatch {
            a: x.len(),
            b: len,
            c: len,
            d: len,
        });
    }
    let needed = if batch == 0 {
        0
    } else {
        stride
            .checked_mul(batch - 1)
            .and_then(|v| v.checked_add(m))
            .unwrap_or(usize::MAX)
    };
    if (batch > 0 && stride < m) || needed > len {
        return Err(TridiagError::BatchLayout {
            batch,
            m,
            stride,
            needed,
            len,
        });
    }
    if batch == 0 || m == 0 {
        return Ok(Backend::Cpu);
    }
    match exec.resolve(needed as u64, TRIDIAG_GPU_THRESHOLD)? {
        Target::Cpu => {
            let solve_one = |k: usize, xs: &mut [T]| -> Result<(), TridiagError> {
                let r = k * stride..k * stride + m;
                let (a, b, c, d) = (&a[r.clone()], &b[r.clone()], &c[r.clone()], &d[r]);
                match solver {
                    TridiagSolver::CyclicReduction => {
                        xs[..m].copy_from_slice(&cyclic_reduction(a, b, c, d)?);
                        Ok(())
                    }
                    _ => {
                        let mut scratch = vec![T::ZERO; m];
                        thomas_into(a, b, c, d, &mut xs[..m], &mut scratch)
                    }
                }
            };
            // Each chunk of `stride` elements of x starts one system (the last may be short).
            x[..needed]
                .par_chunks_mut(stride)
                .enumerate()
                .try_for_each(|(k, xs)| solve_one(k, xs))?;
            Ok(Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            cuda::tridiag_strided_batch(gpu, [a, b, c, d], x, m, stride, batch, solver)?;
            for k in 0..batch {
                if let Some(i) = x[k * stride..k * stride + m]
                    .iter()
                    .position(|v| !v.is_finite())
                {
                    return Err(TridiagError::ZeroPivot {
                        row: k * stride + i,
                    });
                }
            }
            Ok(Backend::Cuda)
        }
    }
}

#[cfg(test)]
mod tests;
