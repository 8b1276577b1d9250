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

/// Calls `body(args)` compiled for AVX-512F, else AVX2, else the baseline target, whichever the
/// CPU supports (checked at run time). `body` must be `#[inline(always)]`, so that each copy is
/// compiled with the wider vector unit; the arguments are named variables, listed with their
/// types. No FMA is enabled, so every copy rounds exactly like the reference.
macro_rules! dispatch_simd {
    ($body:ident($($arg:ident: $ty:ty),* $(,)?)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f")]
            #[allow(clippy::too_many_arguments)]
            fn avx512($($arg: $ty),*) {
                $body($($arg),*)
            }
            #[target_feature(enable = "avx2")]
            #[allow(clippy::too_many_arguments)]
            fn avx2($($arg: $ty),*) {
                $body($($arg),*)
            }
            if gpu_runtime::cpu::has_avx512() {
                // SAFETY: the CPU supports AVX-512F (checked just above).
                unsafe { avx512($($arg),*) }
            } else if gpu_runtime::cpu::has_avx2() {
                // SAFETY: the CPU supports AVX2 (checked just above).
                unsafe { avx2($($arg),*) }
            } else {
                $body($($arg),*)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $body($($arg),*)
        }
    }};
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

/// One step of a whole grid on one thread.
#[inline(always)]
fn step_serial(k: &Coeffs, v: &[f64], w: &[f64], vo: &mut [f64], wo: &mut [f64]) {
    let n = v.len();
    interior(k, v, &w[1..n - 1], &mut vo[1..n - 1], &mut wo[1..n - 1]);
    let (a, b) = end_cell(v[1], v[0], w[0], k.left, k);
    vo[0] = a;
    wo[0] = b;
    let (a, b) = end_cell(v[n - 2], v[n - 1], w[n - 1], k.right, k);
    vo[n - 1] = a;
    wo[n - 1] = b;
}

/// `steps` steps on one thread, ping-ponging between the state and the scratch buffers; the
/// result ends in `v`, `w`.
#[inline(always)]
fn run_serial_body(
    k: &Coeffs,
    v: &mut [f64],
    w: &mut [f64],
    sv: &mut [f64],
    sw: &mut [f64],
    steps: u64,
) {
    let mut pairs = 0;
    while pairs + 2 <= steps {
        step_serial(k, v, w, sv, sw);
        step_serial(k, sv, sw, v, w);
        pairs += 2;
    }
    if pairs < steps {
        step_serial(k, v, w, sv, sw);
        v.copy_from_slice(sv);
        w.copy_from_slice(sw);
    }
}

/// The single-thread fused loop, dispatched to the widest vector unit the CPU has. No FMA is
/// enabled, so every variant rounds exactly like the reference.
pub(crate) fn run_serial(k: &Coeffs, v: &mut [f64], w: &mut [f64], steps: u64) {
    let n = v.len();
    let mut scratch_v = vec![0.0; n];
    let mut scratch_w = vec![0.0; n];
    let (sv, sw) = (&mut scratch_v[..], &mut scratch_w[..]);
    dispatch_simd!(run_serial_body(
        k: &Coeffs,
        v: &mut [f64],
        w: &mut [f64],
        sv: &mut [f64],
        sw: &mut [f64],
        steps: u64,
    ));
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

/// `steps` steps of a window (result in `v`, `w`), on the widest vector unit available.
#[allow(clippy::too_many_arguments)]
fn window_steps(
    k: &Coeffs,
    v: &mut [f64],
    w: &mut [f64],
    sv: &mut [f64],
    sw: &mut [f64],
    steps: u64,
    left_end: bool,
    right_end: bool,
) {
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn body(
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
    dispatch_simd!(body(
        k: &Coeffs,
        v: &mut [f64],
        w: &mut [f64],
        sv: &mut [f64],
        sw: &mut [f64],
        steps: u64,
        left_end: bool,
        right_end: bool,
    ));
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
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference_steps(p: &FhnParams, s: &mut FhnState, steps: u64) {
        let mut vn = vec![0.0; p.n];
        let mut wn = vec![0.0; p.n];
        for _ in 0..steps {
            explicit_step_reference(p, &s.v, &s.w, &mut vn, &mut wn).unwrap();
            std::mem::swap(&mut s.v, &mut vn);
            std::mem::swap(&mut s.w, &mut wn);
        }
        s.t += steps as f64 * p.dt;
    }

    fn bumpy(n: usize, seed: u64) -> FhnState {
        let mut s = FhnState::rest(n);
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s.v[i] = (x % 1000) as f64 / 1000.0 * 1.1 - 0.1;
            s.w[i] = (x % 977) as f64 / 977.0 * 0.2;
        }
        s
    }

    #[test]
    fn fused_and_parallel_match_reference_bit_for_bit() {
        for (n, right) in [
            (3, Boundary::NoFlux),
            (4, Boundary::Dirichlet(1.0)),
            (31, Boundary::NoFlux),
            (32, Boundary::Dirichlet(1.0)),
            (33, Boundary::NoFlux),
            (401, Boundary::Dirichlet(1.0)),
            (1023, Boundary::NoFlux),
            (1024, Boundary::NoFlux),
            (1025, Boundary::NoFlux),
            (PARALLEL_THRESHOLD + 7, Boundary::Dirichlet(0.5)),
            (3 * CHUNK + 5, Boundary::NoFlux),
            (2 * CHUNK, Boundary::Dirichlet(0.3)),
            (CHUNK + 1, Boundary::NoFlux),
        ] {
            let p = FhnParams {
                n,
                length: (n - 1) as f64 * 0.5,
                right,
                left: if n % 2 == 0 {
                    Boundary::Dirichlet(0.2)
                } else {
                    Boundary::NoFlux
                },
                ..FhnParams::default()
            };
            let mut s = bumpy(n, n as u64);
            s.apply_boundaries(&p);
            let mut r = s.clone();
            let steps = if n > 20_000 { 3 } else { 37 };
            reference_steps(&p, &mut r, steps);
            explicit_run(&p, &mut s, steps, Exec::Cpu).unwrap();
            assert_eq!(s.v, r.v, "v, n = {n}");
            assert_eq!(s.w, r.w, "w, n = {n}");
            // the other CPU path on the same data
            let mut s2 = bumpy(n, n as u64);
            s2.apply_boundaries(&p);
            let k = Coeffs::new(&p, p.dx());
            if n < PARALLEL_THRESHOLD {
                run_parallel(
                    &k,
                    &mut s2.v,
                    &mut s2.w,
                    steps,
                    &mut ExplicitScratch::default(),
                );
            } else {
                run_serial(&k, &mut s2.v, &mut s2.w, steps);
            }
            assert_eq!(s2.v, r.v, "other path v, n = {n}");
        }
    }

    #[test]
    fn batch_matches_single_runs() {
        let p = FhnParams {
            n: 97,
            length: 48.0,
            ..FhnParams::default()
        };
        let batch = 5;
        let mut v = Vec::new();
        let mut w = Vec::new();
        let mut singles = Vec::new();
        for b in 0..batch {
            let s = bumpy(97, b as u64 + 1);
            v.extend_from_slice(&s.v);
            w.extend_from_slice(&s.w);
            singles.push(s);
        }
        explicit_run_batch(&p, &mut v, &mut w, batch, 21, Exec::Cpu).unwrap();
        for (b, s) in singles.iter_mut().enumerate() {
            reference_steps(&p, s, 21);
            assert_eq!(&v[b * 97..(b + 1) * 97], &s.v[..]);
            assert_eq!(&w[b * 97..(b + 1) * 97], &s.w[..]);
        }
        assert!(matches!(
            explicit_run_batch(&p, &mut v[..10], &mut w, batch, 1, Exec::Cpu),
            Err(PdeError::LengthMismatch { .. })
        ));
        let mut e: [f64; 0] = [];
        let mut e2: [f64; 0] = [];
        assert_eq!(
            explicit_run_batch(&p, &mut e, &mut e2, 0, 5, Exec::Cpu).unwrap(),
            Backend::Cpu
        );
    }

    #[test]
    fn dt_above_limit_is_an_error_that_states_the_limit() {
        let p = FhnParams::default();
        let lim = p.stability_limit(p.dx()).dt_max;
        let bad = FhnParams {
            dt: lim * 1.001,
            ..p
        };
        let mut s = FhnState::rest(p.n);
        match explicit_run(&bad, &mut s, 1, Exec::Cpu) {
            Err(PdeError::Unstable { limit, .. }) => assert_eq!(limit, lim),
            other => panic!("expected Unstable, got {other:?}"),
        }
        let msg = explicit_run(&bad, &mut s, 1, Exec::Cpu)
            .unwrap_err()
            .to_string();
        assert!(msg.contains(&format!("{lim:.6}")), "{msg}");
        let ok = FhnParams { dt: lim, ..p };
        explicit_run(&ok, &mut s, 1, Exec::Cpu).unwrap();
    }

    /// Nagumo (eps = 0) at v = 1, where f'(1) = a - 1 is the minimum of f' over [0, 1]: the
    /// checkerboard mode's amplification is exactly 1 + dt (-4/dx^2 + a - 1), so the limit is
    /// sharp. Just below it a perturbation decays; just above it grows without bound.
    #[test]
    fn just_below_the_limit_is_bounded_just_above_blows_up() {
        let p0 = FhnParams {
            n: 64,
            length: 63.0 * 0.5,
            ..FhnParams::nagumo(0.1)
        };
        let lim = p0.stability_limit(p0.dx());
        assert!((lim.reaction - 0.9).abs() < 1e-12);
        let start = |n: usize| {
            let mut s = FhnState::rest(n);
            for (i, v) in s.v.iter_mut().enumerate() {
                *v = 1.0 + if i % 2 == 0 { 1e-6 } else { -1e-6 };
            }
            s
        };
        let below = FhnParams {
            dt: lim.dt_max * 0.98,
            ..p0
        };
        let mut s = start(64);
        explicit_run(&below, &mut s, 3000, Exec::Cpu).unwrap();
        let dev = s.v.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);
        assert!(
            dev < 1e-6,
            "below the limit the perturbation must not grow: {dev}"
        );

        // Just above: the checkerboard grows by |1 - 2.04| = 1.04 per step until the cubic
        // term takes over (10^4-fold growth from 1e-6 means the steady state is lost).
        let above = FhnParams {
            dt: lim.dt_max * 1.02,
            ..p0
        };
        let mut s = start(64);
        assert!(explicit_run(&above, &mut s, 1, Exec::Cpu).is_err());
        explicit_run_unchecked(&above, &mut s, 400, Exec::Cpu).unwrap();
        let dev = max_dev(&s.v);
        assert!(
            dev > 1e-2,
            "above the limit the perturbation must grow: {dev}"
        );
        // Further above, the oscillation no longer saturates: values diverge.
        let far = FhnParams {
            dt: lim.dt_max * 1.25,
            ..p0
        };
        let mut s = start(64);
        explicit_run_unchecked(&far, &mut s, 3000, Exec::Cpu).unwrap();
        assert!(max_dev(&s.v) > 1e6, "{}", max_dev(&s.v));
    }

    fn max_dev(v: &[f64]) -> f64 {
        v.iter().map(|v| (v - 1.0).abs()).fold(0.0, |m: f64, x| {
            if x.is_nan() { f64::INFINITY } else { m.max(x) }
        })
    }

    #[test]
    fn decaying_activity_never_produces_subnormals() {
        // Tiny activity decays towards rest; without the flush it would pass through the
        // subnormal range (below 2.2e-308) on its way to zero.
        let p = FhnParams {
            n: 65,
            length: 32.0,
            dt: 0.1,
            a: 0.5,
            eps: 0.1,
            gamma: 1.0,
            ..FhnParams::default()
        };
        let mut s = FhnState::rest(65);
        for (i, v) in s.v.iter_mut().enumerate() {
            *v = 1e-20 * (1.0 + i as f64);
        }
        s.w[3] = 1e-22;
        let mut rounds = 0;
        while s.v.iter().chain(&s.w).any(|&x| x != 0.0) {
            explicit_run(&p, &mut s, 10, Exec::Cpu).unwrap();
            assert!(
                s.v.iter().chain(&s.w).all(|x| !x.is_subnormal()),
                "subnormal at t = {}",
                s.t
            );
            rounds += 1;
            assert!(rounds < 5000, "activity never reached exact zero");
        }
        let mut r = FhnState::rest(65);
        r.v[0] = 1e-31;
        let mut vn = vec![1.0; 65];
        let mut wn = vec![1.0; 65];
        explicit_step_reference(&p, &r.v, &r.w, &mut vn, &mut wn).unwrap();
        assert!(vn.iter().all(|&x| x == 0.0));
    }

    #[test]
    fn copy_ends_follow_the_seeds_formulas() {
        // The seed's scheme written out: interior nodes by the stencil, then v_0 = v_1 and
        // v_{N-1} = v_{N-2} (and w likewise).
        let p = FhnParams {
            n: 41,
            length: 20.0,
            dt: 0.05,
            left: Boundary::Copy,
            right: Boundary::Copy,
            ..FhnParams::default()
        };
        let mut s = bumpy(p.n, 7);
        s.apply_boundaries(&p);
        assert_eq!((s.v[0], s.w[0]), (s.v[1], s.w[1]));
        let (mut v, mut w) = (s.v.clone(), s.w.clone());
        let r = p.dt / (p.dx() * p.dx());
        for _ in 0..50 {
            let (mut vn, mut wn) = (v.clone(), w.clone());
            for i in 1..p.n - 1 {
                vn[i] = r * (v[i + 1] - 2.0 * v[i] + v[i - 1])
                    + v[i]
                    + p.dt * (v[i] * (1.0 - v[i]) * (v[i] - p.a) - w[i]);
                wn[i] = p.dt * p.eps * (v[i] - p.gamma * w[i]) + w[i];
            }
            (vn[0], wn[0]) = (vn[1], wn[1]);
            (vn[p.n - 1], wn[p.n - 1]) = (vn[p.n - 2], wn[p.n - 2]);
            (v, w) = (vn, wn);
        }
        explicit_run(&p, &mut s, 50, Exec::Auto).unwrap();
        for i in 0..p.n {
            assert!(
                (s.v[i] - v[i]).abs() < 1e-13 && (s.w[i] - w[i]).abs() < 1e-13,
                "{i}"
            );
        }
        // a batch of two runs the same way
        let mut s0 = bumpy(p.n, 7);
        s0.apply_boundaries(&p);
        let mut bv = [s0.v.clone(), s0.v.clone()].concat();
        let mut bw = [s0.w.clone(), s0.w.clone()].concat();
        explicit_run_batch(&p, &mut bv, &mut bw, 2, 50, Exec::Cpu).unwrap();
        assert_eq!(&bv[p.n..], &s.v[..]);
        // ends differ from the mirrored ghost node's
        let mut m = s0.clone();
        let mirror = FhnParams {
            left: Boundary::NoFlux,
            right: Boundary::NoFlux,
            ..p
        };
        explicit_run(&mirror, &mut m, 50, Exec::Cpu).unwrap();
        assert!((m.v[0] - s.v[0]).abs() > 1e-9);
        // only the explicit scheme takes copy ends
        let e = crate::implicit_run(&p, &mut s0.clone(), 1, Default::default(), Exec::Cpu);
        assert!(matches!(
            e,
            Err(PdeError::InvalidParameter {
                name: "boundary",
                ..
            })
        ));
        let e = crate::adaptive_run(&p, &mut s0, 1, &Default::default());
        assert!(matches!(
            e,
            Err(PdeError::InvalidParameter {
                name: "boundary",
                ..
            })
        ));
    }

    #[test]
    fn bad_inputs_are_errors() {
        let p = FhnParams::default();
        let mut s = FhnState::rest(10);
        assert!(matches!(
            explicit_run(&p, &mut s, 1, Exec::Cpu),
            Err(PdeError::LengthMismatch {
                expected: 401,
                got: 10
            })
        ));
        for bad in [
            FhnParams { n: 2, ..p },
            FhnParams { dt: -1.0, ..p },
            FhnParams { eps: f64::NAN, ..p },
            FhnParams { length: 0.0, ..p },
        ] {
            let mut s = FhnState::rest(bad.n);
            assert!(matches!(
                explicit_run(&bad, &mut s, 1, Exec::Cpu),
                Err(PdeError::InvalidParameter { .. })
            ));
        }
    }

    #[test]
    fn gpu_out_of_memory_is_a_typed_error() {
        let p = FhnParams::default();
        let mut s = bumpy(p.n, 1);
        s.apply_boundaries(&p);
        let (mut v, mut w) = (s.v.clone(), s.w.clone());
        let Some(r) = gpu_runtime::testing::with_simulated_memory_limit(1024, || {
            explicit_run_batch(&p, &mut v, &mut w, 1, 10, Exec::Cuda)
        }) else {
            return;
        };
        assert!(
            matches!(
                r,
                Err(PdeError::Gpu(gpu_runtime::GpuError::OutOfMemory { .. }))
            ),
            "{r:?}"
        );
        assert_eq!(
            (v, w),
            (s.v, s.w),
            "the state is untouched when the GPU run fails"
        );
    }

    #[test]
    fn gpu_matches_cpu() {
        let Some(_gpu) = gpu_runtime::testing::gpu_for_test("pde explicit gpu_matches_cpu") else {
            return;
        };
        for (n, batch) in [
            (3, 1),
            (31, 3),
            (33, 1),
            (401, 7),
            (1025, 2),
            (crate::FUSED_MAX_N, 2),
            (crate::FUSED_MAX_N + 1, 3),
            ((1 << 20) + 1, 1),
        ]
        .into_iter()
        // Under the simulated driver (kernels on one CPU core) the unfused path is covered by
        // FUSED_MAX_N + 1; the 2^20 + 1 case would take minutes.
        .filter(|&(n, _)| {
            n <= gpu_runtime::testing::gpu_test_size(usize::MAX, crate::FUSED_MAX_N + 1)
        }) {
            let p = FhnParams {
                n,
                length: (n - 1) as f64 * 0.5,
                right: Boundary::Dirichlet(1.0),
                ..FhnParams::default()
            };
            let mut v = Vec::new();
            let mut w = Vec::new();
            for b in 0..batch {
                let mut s = bumpy(n, (n + b) as u64);
                s.apply_boundaries(&p);
                v.extend_from_slice(&s.v);
                w.extend_from_slice(&s.w);
            }
            let (mut cv, mut cw) = (v.clone(), w.clone());
            let steps = if n > 100_000 { 5 } else { 300 };
            explicit_run_batch(&p, &mut cv, &mut cw, batch, steps, Exec::Cpu).unwrap();
            assert_eq!(
                explicit_run_batch(&p, &mut v, &mut w, batch, steps, Exec::Cuda).unwrap(),
                Backend::Cuda
            );
            for (g, c) in v.iter().zip(&cv).chain(w.iter().zip(&cw)) {
                assert!(
                    (g - c).abs() <= 1e-9 * (1.0 + c.abs()),
                    "n = {n}: {g} vs {c}"
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]
        #[test]
        fn prop_time_blocked_parallel_matches_reference(
            n in 3usize..12_000,
            steps in 0u64..70,
            seed in any::<u64>(),
        ) {
            let p = FhnParams {
                n,
                length: (n - 1) as f64 * 0.5,
                left: Boundary::Dirichlet(0.3),
                ..FhnParams::default()
            };
            let mut s = bumpy(n, seed);
            s.apply_boundaries(&p);
            let mut r = s.clone();
            reference_steps(&p, &mut r, steps);
            run_parallel(
                &Coeffs::new(&p, p.dx()),
                &mut s.v,
                &mut s.w,
                steps,
                &mut ExplicitScratch::default(),
            );
            prop_assert_eq!(s.v, r.v);
            prop_assert_eq!(s.w, r.w);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn prop_fast_path_matches_reference(
            n in 3usize..300,
            steps in 0u64..40,
            seed in any::<u64>(),
            dirichlet in any::<bool>(),
        ) {
            let p = FhnParams {
                n,
                length: (n - 1) as f64 * 0.5,
                right: if dirichlet { Boundary::Dirichlet(1.0) } else { Boundary::NoFlux },
                ..FhnParams::default()
            };
            let mut s = bumpy(n, seed);
            s.apply_boundaries(&p);
            let mut r = s.clone();
            reference_steps(&p, &mut r, steps);
            explicit_run(&p, &mut s, steps, Exec::Cpu).unwrap();
            prop_assert_eq!(s.v, r.v);
            prop_assert_eq!(s.w, r.w);
        }
    }
}
