//! Bertsekas' auction algorithm with epsilon scaling: sequential, rayon and CUDA.
//!
//! `mod.rs` holds the public API and the `Exec` dispatch; `setup.rs` the benefit matrix and
//! epsilon schedule that both backends use; `cpu.rs` the Gauss–Seidel and Jacobi auctions;
//! `cuda.rs` the device-resident round loop and the one-launch batch (the only file that
//! touches device buffers).

use ndarray::ArrayView2;
use rayon::prelude::*;

use gpu_runtime::{Exec, Gpu, Target};

use crate::problem::{Cost, Problem};
use crate::{Assignment, AssignmentError, Sense};

mod cpu;
mod cuda;
mod setup;
#[cfg(test)]
mod tests;

use setup::{AuctionSetup, setup};
pub(crate) use setup::{CsrSetup, setup_csr};

/// Entries (`n^2` after padding) from which `Exec::Auto` uses the GPU. Measured on an H100
/// (2026-11-27, BENCHMARKS.md): the GPU auction lost to the CPU's at every size tried (n = 1,000:
/// 180 ms against 40 ms; n = 2,000 integer costs: 1.30 s against 0.25 s), and took 1.96 s at
/// n = 5,000 and 8.66 s at n = 10,000. So `Auto` keeps the auction on the CPU up to 2^27 entries
/// (n = 11,585); above that it is still a choice no measurement has settled.
pub const AUCTION_GPU_THRESHOLD: u64 = 1 << 27;

pub use setup::AUCTION_FLOAT_GAP;

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
    Problem::solved(costs, sense, |p| {
        let n = p.nc as u64;
        Ok(match exec.resolve(n * n, AUCTION_GPU_THRESHOLD)? {
            Target::Cpu => cpu::solve(p),
            Target::Cuda(gpu) => solve_cuda(p, gpu)?,
        })
    })
}

/// The auction of a sparse square problem (a perfect matching exists, every row has an
/// entry): on the GPU when `exec` resolves there (`Exec::Auto`: from
/// [`AUCTION_GPU_THRESHOLD`] stored entries), else on the CPU. Returns each row's column.
pub(crate) fn solve_csr(s: &CsrSetup, exec: Exec) -> Result<Vec<usize>, AssignmentError> {
    if s.n == 0 {
        return Ok(Vec::new());
    }
    Ok(
        match exec.resolve(s.indices.len() as u64, AUCTION_GPU_THRESHOLD)? {
            Target::Cpu => cpu::solve_csr(s),
            Target::Cuda(gpu) => cuda::solve_csr(gpu, s)?,
        },
    )
}

/// The CPU auction of a sparse square problem, with its final prices (for a warm start of
/// the exact sparse solver).
pub(crate) fn solve_csr_prices(s: &CsrSetup) -> (Vec<usize>, Vec<f64>) {
    if s.n == 0 {
        return (Vec::new(), Vec::new());
    }
    cpu::solve_csr_prices(s)
}

/// The GPU auction; returns `x` for the internal rows.
fn solve_cuda(p: &Problem<'_>, gpu: &Gpu) -> Result<Vec<usize>, AssignmentError> {
    if p.nr == 0 {
        return Ok(Vec::new());
    }
    let s = setup(p);
    let mut x = cuda::solve(gpu, &s)?;
    x.truncate(p.nr);
    Ok(x)
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
    match cuda::solve_batch(&setups, gpu) {
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
