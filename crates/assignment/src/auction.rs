//! Bertsekas' auction algorithm with epsilon scaling: sequential, rayon and CUDA.

use ndarray::ArrayView2;
use rayon::prelude::*;

use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{Exec, Gpu, GpuError, PtxModule, Target};

use crate::problem::{Cost, Problem};
use crate::{Assignment, AssignmentError, Sense};

static M: PtxModule = gpu_runtime::ptx_module!("assignment");

const NONE: usize = usize::MAX;

/// Entries (`n^2` after padding) from which `Exec::Auto` uses the GPU. Provisional: set from
/// the bidding phase's arithmetic intensity, not yet from a GPU benchmark run.
pub const AUCTION_GPU_THRESHOLD: u64 = 1 << 22;

/// Below this many `bidders x n` work items a bidding round runs on one thread.
const PARALLEL_BIDS_FROM: usize = 1 << 15;

/// Below this size the CPU uses Gauss–Seidel (one bid at a time), which needs fewer bids.
const JACOBI_FROM: usize = 256;

/// Epsilon is divided by this factor between scaling phases.
const EPS_FACTOR: f64 = 6.0;

/// Relative accuracy of the float mode: the result is within `FLOAT_GAP * (max - min)` of the
/// optimum.
pub const AUCTION_FLOAT_GAP: f64 = 1e-9;

/// Solves the linear assignment problem with Bertsekas' forward auction and epsilon scaling.
///
/// Rows bid for columns; a bidder raises the price of its best column by the margin over its
/// second best plus `eps`; `eps` shrinks by a factor 6 per phase. Rectangular matrices are
/// padded to square with zero-cost dummy rows; forbidden pairs get a finite penalty larger than
/// any complete assignment's cost, and a result that uses one is reported
/// [`AssignmentError::Infeasible`].
///
/// **Accuracy.** When every entry is an integer (any element type) and
/// `(n + 1)^2 (n + 2) (max - min) < 2^52`, costs are multiplied by `n + 1` and the last phase
/// runs with `eps = 1`: the result is then **exactly optimal** (eps-complementary slackness
/// bounds the gap by `n eps < n + 1`, i.e. below one unit of the original costs). Otherwise the
/// result is within `n * eps_final = AUCTION_FLOAT_GAP * (max - min)` of the optimum, as long
/// as that `eps_final` is above the prices' rounding step (a bid always raises a price by at
/// least one ulp, so the auction terminates even where it is not).
///
/// **Where it runs.** `Exec::Cpu`: Gauss–Seidel bidding below `n = 256`, Jacobi bidding (all
/// free rows bid at once, rayon) above. `Exec::Cuda`: Jacobi bidding on the GPU, one warp per
/// bidder, with atomic price resolution; the number of free rows stays in device memory and the
/// host reads it once per batch of up to 64 queued rounds, not once per round.
/// `Exec::Auto`: the GPU from [`AUCTION_GPU_THRESHOLD`] entries.
///
/// # Complexity
/// `O(n^3 log(n C))` worst case for integer costs of range `C` (`n^2` per bid times the number
/// of bids per phase, `O(log (n C))` phases); far fewer bids on random data.
///
/// # Errors
/// As [`jonker_volgenant`](crate::jonker_volgenant), plus [`AssignmentError::Gpu`].
///
/// # Examples
/// ```
/// use assignment::{auction, Sense};
/// use gpu_runtime::Exec;
/// let c = ndarray::array![[4, 1, 3], [2, 0, 5], [3, 2, 2]];
/// assert_eq!(auction(c.view(), Sense::Minimize, Exec::Cpu)?.cost, 5.0); // exact: integers
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn auction<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
    exec: Exec,
) -> Result<Assignment, AssignmentError> {
    let p = Problem::new(costs, sense)?;
    let n = p.nc as u64;
    let x = match exec.resolve(n * n, AUCTION_GPU_THRESHOLD)? {
        Target::Cpu => solve_cpu(&p),
        Target::Cuda(gpu) => solve_cuda(&p, gpu)?,
    };
    p.finish(&x, None)
}

/// The square benefit matrix (negated, scaled costs; dummy rows of zeros; penalised forbidden
/// pairs) and the epsilon schedule.
pub(crate) struct AuctionSetup {
    pub(crate) n: usize,
    pub(crate) benefit: Vec<f64>,
    pub(crate) eps_start: f64,
    pub(crate) eps_final: f64,
}

pub(crate) fn setup(p: &Problem<'_>) -> AuctionSetup {
    let n = p.nc;
    let nf = n as f64;
    let range = p.max - p.min;
    let unit = if range > 0.0 { range } else { 1.0 };
    // Costs are shifted to `c - min` in [0, range], so prices stay on the scale of the range.
    // A forbidden pair costs `(n + 1) * unit`: more than any assignment without one
    // (at most `n * range`), with a margin above the auction's `n * eps` slack.
    let penalty = (nf + 1.0) * unit;
    let magnitude = (penalty + unit) * (nf + 1.0) * (nf + 1.0);
    let exact = p.integral && magnitude < (1u64 << 52) as f64;
    let scale = if exact { nf + 1.0 } else { 1.0 };
    let mut benefit = vec![0.0f64; n * n];
    for i in 0..p.nr {
        for (b, &c) in benefit[i * n..(i + 1) * n].iter_mut().zip(p.row(i)) {
            let shifted = if c == f64::INFINITY {
                penalty
            } else {
                c - p.min
            };
            *b = -shifted * scale;
        }
    }
    let span = unit * scale;
    let eps_final = if exact {
        1.0
    } else {
        span * AUCTION_FLOAT_GAP / nf.max(1.0)
    };
    AuctionSetup {
        n,
        benefit,
        eps_start: (span / 2.0).max(eps_final),
        eps_final,
    }
}

/// The epsilon of each phase, from `eps_start` down to exactly `eps_final`.
pub(crate) fn eps_schedule(s: &AuctionSetup) -> Vec<f64> {
    let mut out = Vec::new();
    let mut eps = s.eps_start;
    loop {
        if eps <= s.eps_final * EPS_FACTOR {
            out.push(s.eps_final);
            break;
        }
        out.push(eps);
        eps /= EPS_FACTOR;
    }
    out
}

/// Best column, best value and second best value of row `i` under `price`.
#[inline]
fn best_two(row: &[f64], price: &[f64]) -> (usize, f64, f64) {
    let (mut bj, mut best, mut second) = (0, f64::NEG_INFINITY, f64::NEG_INFINITY);
    for (j, (&a, &pj)) in row.iter().zip(price).enumerate() {
        let val = a - pj;
        if val > best {
            second = best;
            best = val;
            bj = j;
        } else if val > second {
            second = val;
        }
    }
    (bj, best, second)
}

/// The increment a bidder adds: its margin plus `eps` (just `eps` with a single column).
#[inline]
fn increment(best: f64, second: f64, eps: f64) -> f64 {
    if second == f64::NEG_INFINITY {
        eps
    } else {
        best - second + eps
    }
}

/// A new price: `price + inc`, and at least the next float above `price`, so that a bid
/// always makes progress even where `inc` is below the price's rounding step.
#[inline]
fn raise(price: f64, inc: f64) -> f64 {
    (price + inc).max(price.next_up())
}

/// The CPU auction; returns `x` for the internal rows.
pub(crate) fn solve_cpu(p: &Problem<'_>) -> Vec<usize> {
    if p.nr == 0 {
        return Vec::new();
    }
    let s = setup(p);
    let n = s.n;
    let mut price = vec![0.0f64; n];
    let mut owner = vec![NONE; n];
    let mut assigned = vec![NONE; n];
    for eps in eps_schedule(&s) {
        owner.fill(NONE);
        assigned.fill(NONE);
        if n < JACOBI_FROM {
            gauss_seidel_phase(&s, eps, &mut price, &mut owner, &mut assigned);
        } else {
            jacobi_phase(&s, eps, &mut price, &mut owner, &mut assigned);
        }
    }
    assigned.truncate(p.nr);
    assigned
}

fn gauss_seidel_phase(
    s: &AuctionSetup,
    eps: f64,
    price: &mut [f64],
    owner: &mut [usize],
    assigned: &mut [usize],
) {
    let n = s.n;
    let mut queue: Vec<usize> = (0..n).rev().collect();
    while let Some(i) = queue.pop() {
        let (bj, best, second) = best_two(&s.benefit[i * n..(i + 1) * n], price);
        price[bj] = raise(price[bj], increment(best, second, eps));
        let prev = owner[bj];
        if prev != NONE {
            assigned[prev] = NONE;
            queue.push(prev);
        }
        owner[bj] = i;
        assigned[i] = bj;
    }
}

fn jacobi_phase(
    s: &AuctionSetup,
    eps: f64,
    price: &mut [f64],
    owner: &mut [usize],
    assigned: &mut [usize],
) {
    let n = s.n;
    let mut bidders: Vec<usize> = (0..n).collect();
    let mut bids: Vec<(usize, f64)> = Vec::with_capacity(n);
    let mut high = vec![f64::NEG_INFINITY; n];
    let mut winner = vec![NONE; n];
    let mut touched: Vec<usize> = Vec::with_capacity(n);
    while !bidders.is_empty() {
        let bid = |&i: &usize| {
            let (bj, best, second) = best_two(&s.benefit[i * n..(i + 1) * n], price);
            (bj, raise(price[bj], increment(best, second, eps)))
        };
        bids.clear();
        if bidders.len() * n >= PARALLEL_BIDS_FROM {
            bidders.par_iter().map(bid).collect_into_vec(&mut bids);
        } else {
            bids.extend(bidders.iter().map(bid));
        }
        // Each column goes to its highest bidder (the smallest row on equal bids).
        touched.clear();
        for (&i, &(j, b)) in bidders.iter().zip(&bids) {
            if winner[j] == NONE {
                touched.push(j);
            }
            if winner[j] == NONE || b > high[j] || (b == high[j] && i < winner[j]) {
                high[j] = b;
                winner[j] = i;
            }
        }
        let mut next = Vec::with_capacity(bidders.len());
        for (&i, &(j, _)) in bidders.iter().zip(&bids) {
            if winner[j] != i {
                next.push(i);
            }
        }
        for &j in &touched {
            let prev = owner[j];
            if prev != NONE {
                assigned[prev] = NONE;
                next.push(prev);
            }
            owner[j] = winner[j];
            assigned[winner[j]] = j;
            price[j] = high[j];
            winner[j] = NONE;
            high[j] = f64::NEG_INFINITY;
        }
        bidders = next;
    }
}

/// Bidding rounds queued before the host first reads the bidder count in a phase.
const FIRST_BATCH: u32 = 4;

/// At most this many bidding rounds are queued between two reads of the bidder count.
const MAX_BATCH: u32 = 64;

/// Rounds to queue before the next read of the bidder count: twice the last batch, up to
/// [`MAX_BATCH`]. A phase of `r` rounds costs about `log2(r)` reads up to 64 rounds, then one
/// read per 64; the rounds queued after its last are no-ops (a few microseconds each).
fn next_batch(rounds: u32) -> u32 {
    (rounds * 2).min(MAX_BATCH)
}

/// Warps per block of `assignment_auction_bid` (one warp per bidder).
const BID_WARPS_PER_BLOCK: u32 = 8;

/// The device buffers of the round loop. The bidder lists and their counters come in pairs:
/// round `r` reads `bidders`/`count` and collects into `next`/`next_count`; the handles are
/// swapped after each round, on the host, without a synchronisation.
struct RoundBuffers {
    price: CudaSlice<f64>,
    owner: CudaSlice<u32>,
    assigned: CudaSlice<u32>,
    bidders: CudaSlice<u32>,
    next: CudaSlice<u32>,
    count: CudaSlice<u32>,
    next_count: CudaSlice<u32>,
    bid_obj: CudaSlice<u32>,
    bid_val: CudaSlice<f64>,
    high: CudaSlice<u64>,
    winner: CudaSlice<u32>,
}

/// The GPU auction (Jacobi bidding, one warp per bidder); returns `x` for the internal rows.
///
/// The round kernels read the number of bidders from device memory, so the host queues rounds
/// in batches ([`FIRST_BATCH`], doubling up to [`MAX_BATCH`]) and reads the count once per
/// batch; a round queued after the count reached 0 changes nothing. The bids, prices and
/// rounds are those of a loop that reads the count after every round.
pub(crate) fn solve_cuda(p: &Problem<'_>, gpu: &Gpu) -> Result<Vec<usize>, AssignmentError> {
    use gpu_runtime::cudarc::driver::PushKernelArg;
    if p.nr == 0 {
        return Ok(Vec::new());
    }
    let s = setup(p);
    let n = s.n;
    if n >= u32::MAX as usize {
        return Err(
            GpuError::TooLarge(format!("{n} columns exceed the kernels' 32-bit indices")).into(),
        );
    }
    let bytes = (n as u64) * (n as u64) * 8 + (n as u64) * 64;
    gpu.ensure_fits(bytes)?;
    let d_benefit = gpu.upload(&s.benefit)?;
    let mut b = RoundBuffers {
        price: gpu.alloc_zeros::<f64>(n)?,
        owner: gpu.alloc_zeros::<u32>(n)?,
        assigned: gpu.alloc_zeros::<u32>(n)?,
        bidders: gpu.alloc_zeros::<u32>(n)?,
        next: gpu.alloc_zeros::<u32>(n)?,
        count: gpu.alloc_zeros::<u32>(1)?,
        next_count: gpu.alloc_zeros::<u32>(1)?,
        bid_obj: gpu.alloc_zeros::<u32>(n)?,
        bid_val: gpu.alloc_zeros::<f64>(n)?,
        high: gpu.alloc_zeros::<u64>(n)?,
        winner: gpu.alloc_zeros::<u32>(n)?,
    };
    let f_reset = gpu.function(&M, "assignment_auction_reset")?;
    let f_bid = gpu.function(&M, "assignment_auction_bid")?;
    let f_claim = gpu.function(&M, "assignment_auction_claim")?;
    let f_assign = gpu.function(&M, "assignment_auction_assign")?;
    let f_collect = gpu.function(&M, "assignment_auction_collect")?;
    let n64 = n as u64;
    let per_elem = gpu.grid_stride(n64, 256);
    // Bids: one warp per bidder, as many warps as bidders at most (n), and at most the device
    // full (2048 threads per SM); the kernel strides over the bidders with its warps.
    let bid_cfg = gpu_runtime::grid_stride_config(
        n64 * 32,
        32 * BID_WARPS_PER_BLOCK,
        gpu.info().multiprocessors,
        2048 / (32 * BID_WARPS_PER_BLOCK),
    );
    let stream = gpu.stream();
    for eps in eps_schedule(&s) {
        // SAFETY: assignment_auction_reset(u32* owner, u32* assigned, u32* bidders, u64* high,
        // u32* winner, u32* count, u64 n) writes indices [0, n) of five buffers of n elements
        // and count[0].
        unsafe {
            stream
                .launch_builder(&f_reset)
                .arg(&mut b.owner)
                .arg(&mut b.assigned)
                .arg(&mut b.bidders)
                .arg(&mut b.high)
                .arg(&mut b.winner)
                .arg(&mut b.count)
                .arg(&n64)
                .launch(per_elem)
                .map_err(GpuError::launch)?;
        }
        let mut batch = FIRST_BATCH;
        loop {
            for _ in 0..batch {
                // SAFETY: assignment_auction_bid(const f64* benefit [n*n], const f64* price [n],
                // const u32* bidders [n], const u32* count [1], u64 n, f64 eps,
                // u32* bid_obj [n], f64* bid_val [n], u64* high [n]) reads bidders[0..*count)
                // (*count <= n, ids < n) and rows of benefit, writes bid_obj/bid_val[0..*count)
                // and high[j] for j < n.
                unsafe {
                    stream
                        .launch_builder(&f_bid)
                        .arg(&d_benefit)
                        .arg(&b.price)
                        .arg(&b.bidders)
                        .arg(&b.count)
                        .arg(&n64)
                        .arg(&eps)
                        .arg(&mut b.bid_obj)
                        .arg(&mut b.bid_val)
                        .arg(&mut b.high)
                        .launch(bid_cfg)
                        .map_err(GpuError::launch)?;
                }
                // SAFETY: assignment_auction_claim(const u32* bidders, const u32* bid_obj,
                // const f64* bid_val, const u64* high, u32* winner, const u32* count) reads
                // [0, *count) of the bid arrays (n elements) and updates winner[bid_obj[k]] (< n).
                unsafe {
                    stream
                        .launch_builder(&f_claim)
                        .arg(&b.bidders)
                        .arg(&b.bid_obj)
                        .arg(&b.bid_val)
                        .arg(&b.high)
                        .arg(&mut b.winner)
                        .arg(&b.count)
                        .launch(per_elem)
                        .map_err(GpuError::launch)?;
                }
                // SAFETY: assignment_auction_assign(u64* high, u32* winner, u32* owner, u32* assigned,
                // f64* price, const u32* count, u32* next_count, u64 n) touches indices [0, n)
                // of n-element buffers, assigned[person] for person ids < n, and
                // next_count[0] (a different buffer from count).
                unsafe {
                    stream
                        .launch_builder(&f_assign)
                        .arg(&mut b.high)
                        .arg(&mut b.winner)
                        .arg(&mut b.owner)
                        .arg(&mut b.assigned)
                        .arg(&mut b.price)
                        .arg(&b.count)
                        .arg(&mut b.next_count)
                        .arg(&n64)
                        .launch(per_elem)
                        .map_err(GpuError::launch)?;
                }
                // SAFETY: assignment_auction_collect(const u32* assigned [n], const u32* count,
                // u32* next [n], u32* next_count, u64 n) appends the ids of unassigned persons
                // to next; at most n are written.
                unsafe {
                    stream
                        .launch_builder(&f_collect)
                        .arg(&b.assigned)
                        .arg(&b.count)
                        .arg(&mut b.next)
                        .arg(&mut b.next_count)
                        .arg(&n64)
                        .launch(per_elem)
                        .map_err(GpuError::launch)?;
                }
                std::mem::swap(&mut b.bidders, &mut b.next);
                std::mem::swap(&mut b.count, &mut b.next_count);
            }
            if gpu.download(&b.count)?[0] == 0 {
                break;
            }
            batch = next_batch(batch);
        }
    }
    let assigned = gpu.download(&b.assigned)?;
    Ok(assigned[..p.nr].iter().map(|&j| j as usize).collect())
}

/// Solves a batch of problems with one GPU launch (one thread block per problem, every phase
/// and round inside the kernel). Input errors are per problem; a GPU error fails them all.
pub(crate) fn solve_batch_cuda<T: Cost>(
    problems: &[ArrayView2<'_, T>],
    sense: Sense,
    gpu: &Gpu,
) -> Vec<Result<Assignment, AssignmentError>> {
    let probs: Vec<Result<Problem<'_>, AssignmentError>> = problems
        .par_iter()
        .map(|c| Problem::new(c.view(), sense))
        .collect();
    let setups: Vec<Option<AuctionSetup>> = probs
        .par_iter()
        .map(|p| match p {
            Ok(p) if p.nr > 0 => Some(setup(p)),
            _ => None,
        })
        .collect();
    match batch_kernel(&setups, gpu) {
        Ok(xs) => probs
            .into_iter()
            .zip(xs)
            .map(|(p, x)| {
                let p = p?;
                p.finish(&x[..p.nr.min(x.len())], None)
            })
            .collect(),
        Err(e) => {
            let e = AssignmentError::from(e);
            probs
                .into_iter()
                .map(|p| Err(p.err().unwrap_or_else(|| e.clone())))
                .collect()
        }
    }
}

/// Uploads the batch, runs `assignment_auction_batch`, and returns each problem's `assigned` (empty for
/// the problems without a setup).
fn batch_kernel(setups: &[Option<AuctionSetup>], gpu: &Gpu) -> Result<Vec<Vec<usize>>, GpuError> {
    use gpu_runtime::cudarc::driver::PushKernelArg;
    let mut boff = Vec::new();
    let mut soff = Vec::new();
    let mut sizes = Vec::new();
    let mut eps_start = Vec::new();
    let mut eps_final = Vec::new();
    let (mut bt, mut st) = (0u64, 0u64);
    for s in setups.iter().flatten() {
        if s.n >= u32::MAX as usize {
            return Err(GpuError::TooLarge(format!(
                "{} columns exceed 32-bit indices",
                s.n
            )));
        }
        boff.push(bt);
        soff.push(st);
        sizes.push(s.n as u32);
        eps_start.push(s.eps_start);
        eps_final.push(s.eps_final);
        bt += (s.n * s.n) as u64;
        st += s.n as u64;
    }
    let problems = sizes.len() as u64;
    let mut out: Vec<Vec<usize>> = Vec::with_capacity(setups.len());
    if problems == 0 {
        out.resize(setups.len(), Vec::new());
        return Ok(out);
    }
    gpu.ensure_fits(bt * 8 + st * 48 + problems * 40)?;
    let mut benefit = Vec::with_capacity(bt as usize);
    for s in setups.iter().flatten() {
        benefit.extend_from_slice(&s.benefit);
    }
    let d_benefit = gpu.upload(&benefit)?;
    drop(benefit);
    let d_boff = gpu.upload(&boff)?;
    let d_soff = gpu.upload(&soff)?;
    let d_sizes = gpu.upload(&sizes)?;
    let d_eps_start = gpu.upload(&eps_start)?;
    let d_eps_final = gpu.upload(&eps_final)?;
    let total = st as usize;
    let mut d_price = gpu.alloc_zeros::<f64>(total)?;
    let mut d_owner = gpu.alloc_zeros::<u32>(total)?;
    let mut d_assigned = gpu.alloc_zeros::<u32>(total)?;
    let mut d_high = gpu.alloc_zeros::<u64>(total)?;
    let mut d_winner = gpu.alloc_zeros::<u32>(total)?;
    let mut d_bidders = gpu.alloc_zeros::<u32>(total)?;
    let mut d_bid_obj = gpu.alloc_zeros::<u32>(total)?;
    let mut d_bid_val = gpu.alloc_zeros::<f64>(total)?;
    let f = gpu.function(&M, "assignment_auction_batch")?;
    let cfg = gpu_runtime::LaunchConfig {
        grid_dim: (problems.min(1 << 20) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: assignment_auction_batch reads problem p's benefit at [boff[p], boff[p] + n_p^2) (inside the
    // concatenated buffer of bt elements) and its scratch at [soff[p], soff[p] + n_p) of eight
    // buffers of st elements; the per-problem arrays hold `problems` entries.
    unsafe {
        gpu.stream()
            .launch_builder(&f)
            .arg(&d_benefit)
            .arg(&d_boff)
            .arg(&d_sizes)
            .arg(&d_soff)
            .arg(&d_eps_start)
            .arg(&d_eps_final)
            .arg(&problems)
            .arg(&mut d_price)
            .arg(&mut d_owner)
            .arg(&mut d_assigned)
            .arg(&mut d_high)
            .arg(&mut d_winner)
            .arg(&mut d_bidders)
            .arg(&mut d_bid_obj)
            .arg(&mut d_bid_val)
            .launch(cfg)
            .map_err(GpuError::launch)?;
    }
    let assigned = gpu.download(&d_assigned)?;
    let mut k = 0;
    for s in setups {
        match s {
            Some(s) => {
                let off = soff[k] as usize;
                out.push(
                    assigned[off..off + s.n]
                        .iter()
                        .map(|&j| j as usize)
                        .collect(),
                );
                k += 1;
            }
            None => out.push(Vec::new()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The batch schedule reads the counter about `log2(r)` times for a phase of `r <= 64`
    /// rounds and once per 64 rounds beyond, and queues fewer than 64 no-op rounds.
    #[test]
    fn batch_schedule_bounds_reads_and_idle_rounds() {
        for rounds in 1u32..=3000 {
            let (mut queued, mut reads, mut batch) = (0u32, 0u32, FIRST_BATCH);
            loop {
                queued += batch;
                reads += 1;
                if queued >= rounds {
                    break;
                }
                batch = next_batch(batch);
            }
            assert!(
                queued - rounds < MAX_BATCH,
                "{rounds} rounds: {queued} queued"
            );
            let ramp = (MAX_BATCH / FIRST_BATCH).ilog2() + 1;
            assert!(
                reads <= ramp + rounds.div_ceil(MAX_BATCH),
                "{rounds}: {reads} reads"
            );
        }
    }
}
