//! The explicit scheme: forward Euler in time, central differences in space.
//!
//! Three CPU paths share one cell update ([`explicit_step_reference`] is the oracle):
//! a fused single-thread loop for small grids (the state stays in L1 across all steps, the
//! loop is compiled for AVX2 / AVX-512 when the CPU has them), a rayon path for large grids,
//! and a batch path (many independent axons, one per task). The CUDA paths are a grid-stride
//! kernel per step for large grids and a fused shared-memory kernel that runs many steps per
//! launch, one block per axon, for small grids and batches.

use gpu_runtime::{Backend, Exec, Target};
use rayon::prelude::*;

use crate::kernel_types::Coeffs;
use crate::params::{Boundary, FhnParams, FhnState, flush_tiny};
use crate::{PdeError, cuda};

/// Defines `fn $name(args) body` so that each call runs `body` compiled for AVX-512F, else
/// AVX2, else the baseline target, whichever the CPU supports (checked at run time): the body
/// is an `#[inline(always)]` inner function, copied into one wrapper per vector unit. The
/// arguments are plain names with their types. No FMA is enabled, so every copy rounds exactly
/// like the reference.
macro_rules! simd_fn {
    ($(#[$m:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        #[allow(clippy::too_many_arguments)]
        fn $name($($arg: $ty),*) {
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            fn body($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                #[allow(clippy::too_many_arguments)]
                fn avx512($($arg: $ty),*) {
                    body($($arg),*)
                }
                #[target_feature(enable = "avx2")]
                #[allow(clippy::too_many_arguments)]
                fn avx2($($arg: $ty),*) {
                    body($($arg),*)
                }
                if gpu_runtime::cpu::has_avx512() {
                    // SAFETY: the CPU supports AVX-512F (checked just above).
                    unsafe { avx512($($arg),*) }
                } else if gpu_runtime::cpu::has_avx2() {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    unsafe { avx2($($arg),*) }
                } else {
                    body($($arg),*)
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                body($($arg),*)
            }
        }
    };
}

/// From this many nodes, `Exec::Auto` runs a single axon on the GPU. Not yet set by a
/// benchmark on a GPU machine (none was available; see BENCHMARKS.md).
pub const EXPLICIT_GPU_THRESHOLD: u64 = 1 << 18;

/// From this many cell updates per call (`batch * n * steps`), `Exec::Auto` sends small
/// grids and batches to the fused GPU kernel.
pub const EXPLICIT_FUSED_GPU_THRESHOLD: u64 = 1 << 26;

/// Below this many nodes one thread runs the whole grid (no rayon fork/join per step).
const PARALLEL_THRESHOLD: usize = 1 << 15;

/// Nodes per rayon task in the large-grid path (with halos, 4 buffers of ~17 KiB; 2048 beat
/// 1024 and 4096 in a quick sweep).
const CHUNK: usize = 1 << 11;

/// One node's update from its neighbours. Every CPU path calls exactly this, so all CPU paths
/// agree bit for bit.
#[inline(always)]
fn cell(vl: f64, vc: f64, vr: f64, wc: f64, k: &Coeffs) -> (f64, f64) {
    let lap = (vl + vr) - 2.0 * vc;
    let react = vc * (1.0 - vc) * (vc - k.a) - wc;
    let vn = vc + k.r * lap + k.dt * react;
    let wn = wc + k.dte * (vc - k.gamma * wc);
    (flush_tiny(vn), flush_tiny(wn))
}

/// An end node: `inner` is its only neighbour (mirrored for no flux).
#[inline(always)]
fn end_cell(inner: f64, vc: f64, wc: f64, b: Boundary, k: &Coeffs) -> (f64, f64) {
    match b {
        // A copy end is overwritten by its neighbour after the step (`copy_ends`); the mirrored
        // value here is a placeholder.
        Boundary::NoFlux | Boundary::Copy => cell(inner, vc, inner, wc, k),
        Boundary::Dirichlet(val) => {
            let wn = wc + k.dte * (val - k.gamma * wc);
            (val, flush_tiny(wn))
        }
    }
}

/// One forward Euler step of the whole grid: the plain, obviously correct reference.
///
/// `v_next[i] = v[i] + dt ((v[i-1] - 2 v[i] + v[i+1]) / dx^2 + f(v[i]) - w[i])`,
/// `w_next[i] = w[i] + dt eps (v[i] - gamma w[i])`, with mirrored ghost nodes at no-flux ends,
/// fixed values at Dirichlet ends, and values below `1e-30` flushed to zero.
///
/// # Complexity
/// `O(n)`.
///
/// # Errors
/// [`PdeError::LengthMismatch`] when the four slices do not all have `p.n` elements;
/// [`PdeError::InvalidParameter`] for bad parameters. The stability limit is not checked.
///
/// # Examples
/// ```
/// use pde::{FhnParams, explicit_step_reference};
/// let p = FhnParams { n: 5, ..FhnParams::default() };
/// let v = [0.0, 0.0, 1.0, 0.0, 0.0];
/// let w = [0.0; 5];
/// let (mut vn, mut wn) = ([0.0; 5], [0.0; 5]);
/// explicit_step_reference(&p, &v, &w, &mut vn, &mut wn).unwrap();
/// assert!(vn[2] < 1.0 && vn[1] > 0.0); // diffusion spreads the bump
/// ```
pub fn explicit_step_reference(
    p: &FhnParams,
    v: &[f64],
    w: &[f64],
    v_next: &mut [f64],
    w_next: &mut [f64],
) -> Result<(), PdeError> {
    p.validate()?;
    let n = p.n;
    for len in [v.len(), w.len(), v_next.len(), w_next.len()] {
        if len != n {
            return Err(PdeError::LengthMismatch {
                expected: n,
                got: len,
            });
        }
    }
    let k = Coeffs::new(p, p.dx());
    for i in 0..n {
        let (vn, wn) = if i == 0 {
            end_cell(v[1], v[0], w[0], k.left, &k)
        } else if i == n - 1 {
            end_cell(v[n - 2], v[n - 1], w[n - 1], k.right, &k)
        } else {
            cell(v[i - 1], v[i], v[i + 1], w[i], &k)
        };
        v_next[i] = vn;
        w_next[i] = wn;
    }
    copy_ends(&k, v_next, w_next);
    Ok(())
}

/// Sets [`Boundary::Copy`] ends to their neighbours' new values.
fn copy_ends(k: &Coeffs, v: &mut [f64], w: &mut [f64]) {
    let n = v.len();
    if k.left == Boundary::Copy {
        v[0] = v[1];
        w[0] = w[1];
    }
    if k.right == Boundary::Copy {
        v[n - 1] = v[n - 2];
        w[n - 1] = w[n - 2];
    }
}

/// `steps` reference steps (the path of grids with [`Boundary::Copy`] ends).
fn run_reference(k: &Coeffs, v: &mut Vec<f64>, w: &mut Vec<f64>, steps: u64) {
    let n = v.len();
    let (mut vn, mut wn) = (vec![0.0; n], vec![0.0; n]);
    for _ in 0..steps {
        for i in 0..n {
            (vn[i], wn[i]) = if i == 0 {
                end_cell(v[1], v[0], w[0], k.left, k)
            } else if i == n - 1 {
                end_cell(v[n - 2], v[n - 1], w[n - 1], k.right, k)
            } else {
                cell(v[i - 1], v[i], v[i + 1], w[i], k)
            };
        }
        copy_ends(k, &mut vn, &mut wn);
        std::mem::swap(v, &mut vn);
        std::mem::swap(w, &mut wn);
    }
}

const COPY_ENDS_CPU_ONLY: &str =
    "copy ends (the seed's v_0 = v_1) are implemented on the CPU only (use Exec::Cpu)";

/// Interior nodes `1..=m` of a window: `v` holds `m + 2` values (with both neighbours),
/// `w`, `vo`, `wo` hold `m`. Equal slice lengths let LLVM drop bounds checks and vectorise.
#[inline(always)]
fn interior(k: &Coeffs, v: &[f64], w: &[f64], vo: &mut [f64], wo: &mut [f64]) {
    let m = vo.len();
    let (vl, vc, vr) = (&v[..m], &v[1..m + 1], &v[2..m + 2]);
    let (w, wo) = (&w[..m], &mut wo[..m]);
    for i in 0..m {
        let (a, b) = cell(vl[i], vc[i], vr[i], w[i], k);
        vo[i] = a;
        wo[i] = b;
    }
}

/// The single-thread fused loop, dispatched to the widest vector unit the CPU has. No FMA is
/// enabled, so every variant rounds exactly like the reference.
pub(crate) fn run_serial(k: &Coeffs, v: &mut [f64], w: &mut [f64], steps: u64) {
    let n = v.len();
    let mut scratch_v = vec![0.0; n];
    let mut scratch_w = vec![0.0; n];
    // The whole grid is one window whose ends are the grid's.
    window_steps(k, v, w, &mut scratch_v, &mut scratch_w, steps, true, true);
}

/// Steps fused per pass of the time-blocked parallel path.
const BLOCK_STEPS: u64 = 32;

/// The halo copies of the time-blocked path, kept across calls by callers that stop often
/// (snapshots), so that each stop does not allocate and fault in fresh memory.
#[derive(Debug, Default)]
pub(crate) struct ExplicitScratch {
    v: Vec<f64>,
    w: Vec<f64>,
}

/// [`explicit_run`] with the time-blocked path's halo copies kept in `scratch`.
pub(crate) fn explicit_run_reusing(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    exec: Exec,
    scratch: &mut ExplicitScratch,
) -> Result<Backend, PdeError> {
    p.validate()?;
    p.check_explicit_dt(p.dx())?;
    run_unchecked(p, state, steps, exec, scratch)
}

/// The step count that callers stopping the explicit scheme along the way (snapshots) should
/// stop at multiples of, so that they never cut a time block short: [`BLOCK_STEPS`] where
/// `explicit_run` takes the time-blocked CPU path for `p` and `exec`, else 1.
pub(crate) fn explicit_step_quantum(p: &FhnParams, exec: Exec) -> u64 {
    if p.n < PARALLEL_THRESHOLD || p.n <= crate::FUSED_MAX_N {
        return 1;
    }
    match exec.resolve(p.n as u64, EXPLICIT_GPU_THRESHOLD) {
        Ok(Target::Cpu) => BLOCK_STEPS,
        _ => 1,
    }
}

/// Large grids with rayon and time blocking, in place: each task copies its `CHUNK` nodes plus
/// `BLOCK_STEPS` halo nodes on each side into cache-resident buffers, runs `BLOCK_STEPS` steps
/// there (the valid region shrinks by one node per side per step; the halo recomputation
/// costs `2 * BLOCK_STEPS / CHUNK` ≈ 3% extra), and writes its own nodes back where it read
/// them. Its halos come from a copy of the nodes around every chunk boundary taken before the
/// pass (`scratch`, `2 * BLOCK_STEPS` nodes per boundary: 3% of the state), since a neighbour
/// may already have written its nodes back; its own nodes only it writes, after reading them.
/// Main memory sees one read and one write per node per `BLOCK_STEPS` steps instead of per
/// step, and no second copy of the state. Bit-identical to the reference (same cell update,
/// same inputs).
fn run_parallel(
    k: &Coeffs,
    v: &mut [f64],
    w: &mut [f64],
    steps: u64,
    scratch: &mut ExplicitScratch,
) {
    let n = v.len();
    let chunks = n.div_ceil(CHUNK);
    let mut left = steps;
    while left > 0 {
        let kk = left.min(BLOCK_STEPS);
        let halo = kk as usize;
        let span = 2 * halo;
        // The nodes around boundary b (between chunks b and b + 1): [end - halo, end + halo)
        // clipped to the grid, at slot b (stride `span`).
        let slots = chunks - 1;
        scratch.v.resize(slots * span, 0.0);
        scratch.w.resize(slots * span, 0.0);
        let bounds = |b: usize| {
            let end = (b + 1) * CHUNK;
            (end - halo, (end + halo).min(n))
        };
        {
            let (vs, ws) = (&*v, &*w);
            scratch
                .v
                .par_chunks_mut(span)
                .zip(scratch.w.par_chunks_mut(span))
                .enumerate()
                .for_each(|(b, (ev, ew))| {
                    let (lo, hi) = bounds(b);
                    ev[..hi - lo].copy_from_slice(&vs[lo..hi]);
                    ew[..hi - lo].copy_from_slice(&ws[lo..hi]);
                });
        }
        let (ev, ew) = (&scratch.v[..], &scratch.w[..]);
        v.par_chunks_mut(CHUNK)
            .zip(w.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(ci, (ov, ow))| {
                let start = ci * CHUNK;
                let end = start + ov.len();
                let lo = start.saturating_sub(halo);
                let hi = (end + halo).min(n);
                let mut lv = Vec::with_capacity(hi - lo);
                let mut lw = Vec::with_capacity(hi - lo);
                if ci > 0 {
                    // the tail of slot ci - 1's first half: [start - halo, start)
                    let s = (ci - 1) * span;
                    lv.extend_from_slice(&ev[s + halo - (start - lo)..s + halo]);
                    lw.extend_from_slice(&ew[s + halo - (start - lo)..s + halo]);
                }
                lv.extend_from_slice(ov);
                lw.extend_from_slice(ow);
                if ci < slots {
                    // the second half of slot ci: [end, min(end + halo, n))
                    let s = ci * span;
                    lv.extend_from_slice(&ev[s + halo..s + halo + (hi - end)]);
                    lw.extend_from_slice(&ew[s + halo..s + halo + (hi - end)]);
                }
                let mut sv = vec![0.0; hi - lo];
                let mut sw = vec![0.0; hi - lo];
                window_steps(k, &mut lv, &mut lw, &mut sv, &mut sw, kk, lo == 0, hi == n);
                ov.copy_from_slice(&lv[start - lo..end - lo]);
                ow.copy_from_slice(&lw[start - lo..end - lo]);
            });
        left -= kk;
    }
}

simd_fn! {
    /// `steps` steps of a window (result in `v`, `w`), on the widest vector unit available;
    /// `l` and `r` say whether its ends are the grid's.
    fn window_steps(
        k: &Coeffs,
        v: &mut [f64],
        w: &mut [f64],
        sv: &mut [f64],
        sw: &mut [f64],
        steps: u64,
        l: bool,
        r: bool,
    ) {
        let mut done = 0;
        while done + 2 <= steps {
            step_window(k, v, w, sv, sw, l, r);
            step_window(k, sv, sw, v, w, l, r);
            done += 2;
        }
        if done < steps {
            step_window(k, v, w, sv, sw, l, r);
            v.copy_from_slice(sv);
            w.copy_from_slice(sw);
        }
    }
}

/// One step of a window of the grid; its first / last node is a true end of the grid only
/// when `left_end` / `right_end`, otherwise it is a halo node whose value goes stale (the
/// caller only keeps nodes far enough from stale halos).
#[inline(always)]
fn step_window(
    k: &Coeffs,
    v: &[f64],
    w: &[f64],
    vo: &mut [f64],
    wo: &mut [f64],
    left_end: bool,
    right_end: bool,
) {
    let m = v.len();
    if m < 3 {
        return;
    }
    interior(k, v, &w[1..m - 1], &mut vo[1..m - 1], &mut wo[1..m - 1]);
    if left_end {
        (vo[0], wo[0]) = end_cell(v[1], v[0], w[0], k.left, k);
    }
    if right_end {
        (vo[m - 1], wo[m - 1]) = end_cell(v[m - 2], v[m - 1], w[m - 1], k.right, k);
    }
}

/// Advances `state` by `steps` forward Euler steps where `exec` says, after checking
/// `p.dt` against the stability limit.
///
/// The CPU runs grids below 2^15 nodes on one thread with the fused, vectorised loop and
/// larger grids with rayon; the GPU runs grids of up to [`crate::FUSED_MAX_N`] nodes with the
/// fused shared-memory kernel (all steps in one launch) and larger grids with one grid-stride
/// launch per step. Results agree with [`explicit_step_reference`] bit for bit on the CPU and
/// to rounding (FMA contraction) on the GPU.
///
/// # Complexity
/// `O(n * steps)` work; `O(n * steps / p)` time on `p` threads. Auxiliary space: on the CPU,
/// grids from 2^15 nodes run in place with `O(n / 32)` halo copies (3% of the state) plus
/// `O(1)` per thread; smaller grids, and grids with [`Boundary::Copy`] ends (the reference
/// loop), use a second `v`, `w` pair (`16 n` bytes); the GPU paths hold the state on the
/// device.
///
/// # Errors
/// [`PdeError::Unstable`] (stating the limit) when `p.dt` is above
/// [`FhnParams::stability_limit`]; [`PdeError::InvalidParameter`],
/// [`PdeError::LengthMismatch`]; [`PdeError::Gpu`] when the GPU path fails or `Exec::Cuda`
/// finds no GPU.
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, FhnState, explicit_run};
/// let p = FhnParams::default();
/// let mut s = FhnState::rest(p.n);
/// s.v[200] = 1.0;
/// explicit_run(&p, &mut s, 100, Exec::Cpu)?;
/// assert!((s.t - 5.0).abs() < 1e-9);
/// // Too large a step is refused with the limit in the message.
/// let bad = FhnParams { dt: 0.2, ..p };
/// let e = explicit_run(&bad, &mut s, 1, Exec::Cpu).unwrap_err();
/// assert!(e.to_string().contains("stability limit"));
/// # Ok::<(), pde::PdeError>(())
/// ```
pub fn explicit_run(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    exec: Exec,
) -> Result<Backend, PdeError> {
    explicit_run_reusing(p, state, steps, exec, &mut ExplicitScratch::default())
}

/// [`explicit_run`] without the stability check: for experiments that show what happens
/// above the limit. Values may grow without bound; nothing is reported.
///
/// # Complexity
/// As [`explicit_run`].
///
/// # Errors
/// As [`explicit_run`], except [`PdeError::Unstable`].
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, FhnState, explicit_run_unchecked};
/// let p = FhnParams { n: 33, length: 16.0, dt: 0.5, ..FhnParams::default() }; // 4x the limit
/// let mut s = FhnState::rest(33);
/// s.v[16] = 1e-3;
/// explicit_run_unchecked(&p, &mut s, 200, Exec::Cpu)?;
/// assert!(s.v.iter().any(|x| !x.is_finite() || x.abs() > 1e6));
/// # Ok::<(), pde::PdeError>(())
/// ```
pub fn explicit_run_unchecked(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    exec: Exec,
) -> Result<Backend, PdeError> {
    run_unchecked(p, state, steps, exec, &mut ExplicitScratch::default())
}

fn run_unchecked(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    exec: Exec,
    scratch: &mut ExplicitScratch,
) -> Result<Backend, PdeError> {
    p.validate()?;
    state.check_len(p.n)?;
    let k = Coeffs::new(p, p.dx());
    let n = p.n;
    if p.has_copy_end() {
        if exec == Exec::Cuda {
            p.refuse_copy_ends(COPY_ENDS_CPU_ONLY)?;
        }
        run_reference(&k, &mut state.v, &mut state.w, steps);
        state.t += steps as f64 * p.dt;
        return Ok(Backend::Cpu);
    }
    let work = (n as u64).saturating_mul(steps);
    let target = if n <= crate::FUSED_MAX_N {
        exec.resolve(work, EXPLICIT_FUSED_GPU_THRESHOLD)?
    } else {
        exec.resolve(n as u64, EXPLICIT_GPU_THRESHOLD)?
    };
    let backend = target.backend();
    match target {
        Target::Cpu => {
            if n < PARALLEL_THRESHOLD {
                run_serial(&k, &mut state.v, &mut state.w, steps);
            } else {
                run_parallel(&k, &mut state.v, &mut state.w, steps, scratch);
            }
        }
        Target::Cuda(gpu) => {
            cuda::explicit_run(gpu, &k, &mut state.v, &mut state.w, n, 1, steps)?;
        }
    }
    state.t += steps as f64 * p.dt;
    Ok(backend)
}

/// Advances `batch` independent axons (the same parameters, different states) by `steps`
/// steps. `v` and `w` hold the axons one after another (`batch * p.n` values each).
///
/// On the CPU each rayon task runs whole axons with the fused single-thread loop; on the GPU
/// one launch runs all steps of all axons (one block per axon) when `p.n <=`
/// [`crate::FUSED_MAX_N`], and one grid-stride launch per step otherwise.
///
/// # Complexity
/// `O(batch * n * steps)` work.
///
/// # Errors
/// As [`explicit_run`]; [`PdeError::LengthMismatch`] when `v` or `w` is not `batch * p.n`
/// long.
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, explicit_run_batch};
/// let p = FhnParams { n: 101, ..FhnParams::default() };
/// let mut v = vec![0.0; 4 * 101];
/// let mut w = vec![0.0; 4 * 101];
/// for b in 0..4 { v[b * 101 + 50] = 0.2 * (b + 1) as f64; }
/// explicit_run_batch(&p, &mut v, &mut w, 4, 50, Exec::Cpu)?;
/// assert!(v[50] < v[3 * 101 + 50]);
/// # Ok::<(), pde::PdeError>(())
/// ```
pub fn explicit_run_batch(
    p: &FhnParams,
    v: &mut [f64],
    w: &mut [f64],
    batch: usize,
    steps: u64,
    exec: Exec,
) -> Result<Backend, PdeError> {
    p.validate()?;
    p.check_explicit_dt(p.dx())?;
    let n = p.n;
    let total = batch.checked_mul(n).ok_or(PdeError::LengthMismatch {
        expected: usize::MAX,
        got: v.len(),
    })?;
    for len in [v.len(), w.len()] {
        if len != total {
            return Err(PdeError::LengthMismatch {
                expected: total,
                got: len,
            });
        }
    }
    if batch == 0 {
        return Ok(Backend::Cpu);
    }
    let k = Coeffs::new(p, p.dx());
    if p.has_copy_end() {
        if exec == Exec::Cuda {
            p.refuse_copy_ends(COPY_ENDS_CPU_ONLY)?;
        }
        for (v, w) in v.chunks_mut(n).zip(w.chunks_mut(n)) {
            let (mut vv, mut ww) = (v.to_vec(), w.to_vec());
            run_reference(&k, &mut vv, &mut ww, steps);
            v.copy_from_slice(&vv);
            w.copy_from_slice(&ww);
        }
        return Ok(Backend::Cpu);
    }
    let work = (total as u64).saturating_mul(steps);
    match exec.resolve(work, EXPLICIT_FUSED_GPU_THRESHOLD)? {
        Target::Cpu => {
            v.par_chunks_mut(n)
                .zip(w.par_chunks_mut(n))
                .for_each(|(v, w)| run_serial(&k, v, w, steps));
            Ok(Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            cuda::explicit_run(gpu, &k, v, w, n, batch, steps)?;
            Ok(Backend::Cuda)
        }
    }
}

#[cfg(test)]
mod tests;
