//! The auction on the GPU (kernels-cuda/assignment.cu): the device-resident round loop of one
//! problem (Jacobi bidding, one warp per bidder) and the one-launch batch. The only file of the
//! auction that touches device buffers; it imports only the shared setup.

use gpu_runtime::{DeviceBuffer, Gpu, GpuError, LaunchConfig};

use super::setup::{AuctionSetup, CsrSetup, eps_schedule};
use crate::kernels::{self, AUCTION_NONE};

/// Bidding rounds queued before the host first reads the bidder count in a phase.
pub(super) const FIRST_BATCH: u32 = 4;

/// At most this many bidding rounds are queued between two reads of the bidder count.
pub(super) const MAX_BATCH: u32 = 64;

/// Rounds to queue before the next read of the bidder count: twice the last batch, up to
/// [`MAX_BATCH`]. A phase of `r` rounds costs about `log2(r)` reads up to 64 rounds, then one
/// read per 64; the rounds queued after its last are no-ops (a few microseconds each).
pub(super) fn next_batch(rounds: u32) -> u32 {
    (rounds * 2).min(MAX_BATCH)
}

/// Warps per block of `assignment_auction_bid` (one warp per bidder).
const BID_WARPS_PER_BLOCK: u32 = 8;

/// Threads per block of the element-wise round kernels and of `assignment_auction_batch`.
const BLOCK: u32 = 256;

/// The device buffers of the round loop. The bidder lists and their counters come in pairs:
/// round `r` reads `bidders`/`count` and collects into `next`/`next_count`; the handles are
/// swapped after each round, on the host, without a synchronisation.
struct RoundBuffers {
    price: DeviceBuffer<f64>,
    owner: DeviceBuffer<u32>,
    assigned: DeviceBuffer<u32>,
    bidders: DeviceBuffer<u32>,
    next: DeviceBuffer<u32>,
    count: DeviceBuffer<u32>,
    next_count: DeviceBuffer<u32>,
    bid_obj: DeviceBuffer<u32>,
    bid_val: DeviceBuffer<f64>,
    high: DeviceBuffer<u64>,
    winner: DeviceBuffer<u32>,
}

/// The column of each of the `s.n` rows (dummy rows included), by Jacobi bidding on the GPU,
/// one warp per bidder.
///
/// The round kernels read the number of bidders from device memory, so the host queues rounds
/// in batches ([`FIRST_BATCH`], doubling up to [`MAX_BATCH`]) and reads the count once per
/// batch; a round queued after the count reached 0 changes nothing. The bids, prices and
/// rounds are those of a loop that reads the count after every round. Every buffer is
/// allocated before the first phase; the loop itself only queues launches.
pub(super) fn solve(gpu: &Gpu, s: &AuctionSetup) -> Result<Vec<usize>, GpuError> {
    let n = s.n;
    if n >= AUCTION_NONE as usize {
        return Err(GpuError::TooLarge(format!(
            "{n} columns exceed the kernels' 32-bit indices"
        )));
    }
    let bytes = (n as u64) * (n as u64) * 8 + (n as u64) * 64;
    gpu.ensure_fits(bytes)?;
    let d_benefit = gpu.upload(&s.benefit)?;
    let n64 = n as u64;
    let bid_cfg = bid_config(gpu, n64);
    round_loop(gpu, n, &eps_schedule(s), |b, eps| {
        // SAFETY: assignment_auction_bid reads bidders[0..*count) (*count <= n, ids < n) and
        // those rows of benefit (n*n elements), writes bid_obj/bid_val[0..*count) (n elements)
        // and high[j] for j < n.
        unsafe {
            kernels::assignment_auction_bid(
                gpu,
                bid_cfg,
                &d_benefit,
                &b.price,
                &b.bidders,
                &b.count,
                n64,
                eps,
                &mut b.bid_obj,
                &mut b.bid_val,
                &mut b.high,
            )
        }
    })
}

/// [`solve`] for a sparse benefit matrix: the same rounds with `assignment_auction_bid_csr`
/// (one warp per bidder over its row's entries). Every row has an entry and a perfect
/// matching exists (the caller checks), so every bidder bids.
pub(super) fn solve_csr(gpu: &Gpu, s: &CsrSetup) -> Result<Vec<usize>, GpuError> {
    let n = s.n;
    if n >= AUCTION_NONE as usize {
        return Err(GpuError::TooLarge(format!(
            "{n} columns exceed the kernels' 32-bit indices"
        )));
    }
    let nnz = s.indices.len() as u64;
    gpu.ensure_fits(nnz * 12 + (n as u64 + 1) * 8 + (n as u64) * 64)?;
    let d_indptr = gpu.upload(&s.indptr)?;
    let d_indices = gpu.upload(&s.indices)?;
    let d_benefit = gpu.upload(&s.benefit)?;
    let bid_cfg = bid_config(gpu, n as u64);
    round_loop(gpu, n, &s.schedule(), |b, eps| {
        // SAFETY: assignment_auction_bid_csr reads bidders[0..*count) (*count <= n, ids < n),
        // indptr[id] and indptr[id + 1] (n + 1 elements) and the entries between them (the
        // row pointers rise to nnz, the length of indices and benefit; columns < n), writes
        // bid_obj/bid_val[0..*count) (n elements) and high[j] for j < n.
        unsafe {
            kernels::assignment_auction_bid_csr(
                gpu,
                bid_cfg,
                &d_indptr,
                &d_indices,
                &d_benefit,
                &b.price,
                &b.bidders,
                &b.count,
                eps,
                &mut b.bid_obj,
                &mut b.bid_val,
                &mut b.high,
            )
        }
    })
}

/// Bids: one warp per bidder, as many warps as bidders at most (n), and at most the device
/// full (2048 threads per SM); the kernel strides over the bidders with its warps.
fn bid_config(gpu: &Gpu, n: u64) -> LaunchConfig {
    gpu_runtime::grid_stride_config(
        n * 32,
        32 * BID_WARPS_PER_BLOCK,
        gpu.info().multiprocessors,
        2048 / (32 * BID_WARPS_PER_BLOCK),
    )
}

/// The phases and rounds of an `n`-person auction on the device, `bid` queuing one round's
/// bidding kernel; returns each person's column.
fn round_loop(
    gpu: &Gpu,
    n: usize,
    schedule: &[f64],
    mut bid: impl FnMut(&mut RoundBuffers, f64) -> Result<(), GpuError>,
) -> Result<Vec<usize>, GpuError> {
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
    let n64 = n as u64;
    let per_elem = gpu.grid_stride(n64, BLOCK);
    for &eps in schedule {
        // SAFETY: assignment_auction_reset writes indices [0, n) of owner, assigned, bidders,
        // high and winner (n elements each) and count[0].
        unsafe {
            kernels::assignment_auction_reset(
                gpu,
                per_elem,
                &mut b.owner,
                &mut b.assigned,
                &mut b.bidders,
                &mut b.high,
                &mut b.winner,
                &mut b.count,
                n64,
            )?;
        }
        let mut batch = FIRST_BATCH;
        loop {
            for _ in 0..batch {
                bid(&mut b, eps)?;
                // SAFETY: assignment_auction_claim reads [0, *count) of the bid arrays (n
                // elements) and updates winner[bid_obj[k]] (< n).
                unsafe {
                    kernels::assignment_auction_claim(
                        gpu,
                        per_elem,
                        &b.bidders,
                        &b.bid_obj,
                        &b.bid_val,
                        &b.high,
                        &mut b.winner,
                        &b.count,
                    )?;
                }
                // SAFETY: assignment_auction_assign touches indices [0, n) of n-element
                // buffers, assigned[person] for person ids < n, and next_count[0] (a different
                // buffer from count).
                unsafe {
                    kernels::assignment_auction_assign(
                        gpu,
                        per_elem,
                        &mut b.high,
                        &mut b.winner,
                        &mut b.owner,
                        &mut b.assigned,
                        &mut b.price,
                        &b.count,
                        &mut b.next_count,
                        n64,
                    )?;
                }
                // SAFETY: assignment_auction_collect appends the ids of unassigned persons
                // (< n) to next (n elements); at most n are written.
                unsafe {
                    kernels::assignment_auction_collect(
                        gpu,
                        per_elem,
                        &b.assigned,
                        &b.count,
                        &mut b.next,
                        &mut b.next_count,
                        n64,
                    )?;
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
    Ok(columns(&assigned))
}

/// Device columns as host indices; every row is assigned when the auction ends.
fn columns(assigned: &[u32]) -> Vec<usize> {
    debug_assert!(assigned.iter().all(|&j| j != AUCTION_NONE));
    assigned.iter().map(|&j| j as usize).collect()
}

/// Uploads the batch, runs `assignment_auction_batch`, and returns each problem's `assigned` (empty for
/// the problems without a setup).
pub(super) fn solve_batch(
    setups: &[Option<AuctionSetup>],
    gpu: &Gpu,
) -> Result<Vec<Vec<usize>>, GpuError> {
    let mut boff = Vec::new();
    let mut soff = Vec::new();
    let mut sizes = Vec::new();
    let mut eps_start = Vec::new();
    let mut eps_final = Vec::new();
    let (mut bt, mut st) = (0u64, 0u64);
    for s in setups.iter().flatten() {
        if s.n >= AUCTION_NONE as usize {
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
    let cfg = LaunchConfig::blocks(problems.min(1 << 20) as u32, BLOCK);
    // SAFETY: assignment_auction_batch reads problem p's benefit at [boff[p], boff[p] + n_p^2) (inside the
    // concatenated buffer of bt elements) and its scratch at [soff[p], soff[p] + n_p) of eight
    // buffers of st elements; the per-problem arrays hold `problems` entries.
    unsafe {
        kernels::assignment_auction_batch(
            gpu,
            cfg,
            &d_benefit,
            &d_boff,
            &d_sizes,
            &d_soff,
            &d_eps_start,
            &d_eps_final,
            problems,
            &mut d_price,
            &mut d_owner,
            &mut d_assigned,
            &mut d_high,
            &mut d_winner,
            &mut d_bidders,
            &mut d_bid_obj,
            &mut d_bid_val,
        )?;
    }
    let assigned = gpu.download(&d_assigned)?;
    let mut k = 0;
    for s in setups {
        match s {
            Some(s) => {
                let off = soff[k] as usize;
                out.push(columns(&assigned[off..off + s.n]));
                k += 1;
            }
            None => out.push(Vec::new()),
        }
    }
    Ok(out)
}
