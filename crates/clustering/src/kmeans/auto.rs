//! Which algorithm [`Algorithm::Auto`] runs, and how many centre groups the pruned algorithms
//! keep: as many as the rules and the available memory allow.

use crate::assign::BLOCKED_MIN;
use crate::bounds::BoundsStepper;
use crate::{Algorithm, KMeansError};

/// Centres per group that [`Algorithm::Yinyang`] aims at (Ding et al. use ten): smaller
/// groups prune more finely but cost more bounds per point, and groups of 16 fill the
/// blocked products of the pruned steps.
pub(crate) const YINYANG_GROUP_SIZE: usize = 16;

/// ... but [`Algorithm::Yinyang`] makes at least this many groups while they keep 8 centres
/// or more (`k < 128`): with fewer groups a failing group is a large share of the centres
/// (a quarter with four groups of 16 at k = 64). From `k = 128` on, `k / 16` groups are
/// already this many.
const YINYANG_MIN_GROUPS: usize = 8;

/// The share of the available memory [`Algorithm::Auto`] and [`Algorithm::Yinyang`] let the
/// bounds take at most (the number of groups shrinks to fit).
const BOUNDS_MEMORY_SHARE: u64 = 4;
/// ... and never more than this many times the data's own bytes (or 256 MiB), so that the
/// bounds do not dominate the memory of a run.
const BOUNDS_DATA_MULTIPLE: u64 = 2;

/// `Algorithm::Auto` runs plain Lloyd steps below this many clusters: there a step of the
/// register-blocked kernel ([`crate::assign`]'s fused method) costs about what the pruned
/// steps' upkeep costs per point, so the bounds cannot pay. From this many on it runs
/// Yinyang's bounds adaptively ([`crate::bounds`]): plain steps until the labels settle, then
/// the bounds for as long as their steps take clearly less time than a plain one.
const AUTO_BOUNDS_MIN_K: usize = 128;

/// `Algorithm::Auto` prunes even a fit of one iteration (whose final labelling pass the first
/// pass's bounds then prune) when `k * d` is at least this: from there the final pass's
/// savings outweigh what setting the bounds costs the first pass; below, a plain second
/// pass is faster.
const AUTO_ONE_ITERATION_BOUNDS_KD: usize = 1 << 20;

/// Bounds smaller than this are not checked against the available memory (which costs a
/// read of `/proc/meminfo`, more than a whole fit of a few hundred points).
const BOUNDS_CHECK_MIN_BYTES: u64 = 1 << 20;

/// The algorithm [`Algorithm::Auto`] runs for `d` dimensions, `k` clusters and at most
/// `passes` assignment passes (`max_iter`, and one for the final labels; never `Auto`;
/// `Yinyang` stands for every group count). A single pass has nothing to prune.
pub(crate) fn auto_algorithm(d: usize, k: usize, passes: usize) -> Algorithm {
    if passes <= 1
        || (passes <= 2 && k * d < AUTO_ONE_ITERATION_BOUNDS_KD)
        || (passes > 2 && k < AUTO_BOUNDS_MIN_K)
    {
        Algorithm::Lloyd
    } else {
        Algorithm::Yinyang
    }
}

/// The number of centre groups of the pruned algorithms (`None`: plain Lloyd) for `n` points,
/// `d` dimensions and `k` clusters; checks that the bounds fit in memory. The available memory
/// is read only when bounds of at least [`BOUNDS_CHECK_MIN_BYTES`] are asked for.
///
/// # Errors
/// [`KMeansError::OutOfMemory`] when [`Algorithm::Elkan`]'s `n k` bounds (or even Hamerly's)
/// do not fit in the available memory.
pub(crate) fn groups_for(
    algorithm: Algorithm,
    n: usize,
    d: usize,
    elem_bytes: usize,
    k: usize,
    passes: usize,
) -> Result<Option<usize>, KMeansError> {
    let algorithm = match algorithm {
        Algorithm::Auto => auto_algorithm(d, k, passes),
        a => a,
    };
    let bytes = |t: usize| BoundsStepper::<f32>::bound_bytes(n, t);
    let by_size = (k / YINYANG_GROUP_SIZE)
        .max(YINYANG_MIN_GROUPS.min(k / BLOCKED_MIN))
        .max(1);
    let largest = match algorithm {
        Algorithm::Auto | Algorithm::Lloyd => return Ok(None),
        Algorithm::Hamerly => 1,
        Algorithm::Elkan => k,
        Algorithm::Yinyang => by_size,
    };
    let available = if bytes(largest) < BOUNDS_CHECK_MIN_BYTES {
        None
    } else {
        gpu_runtime::host_available_memory()
    };
    let fits = |t: usize| available.is_none_or(|a| bytes(t) <= a / 2);
    let refuse = |what: String, t: usize| KMeansError::OutOfMemory {
        what,
        needed: bytes(t),
        available: available.unwrap_or(0) / 2,
        hint: "use algorithm yinyang (fewer groups), hamerly or lloyd",
    };
    let data_bytes = (n as u64) * (d as u64) * elem_bytes as u64;
    let budget = available
        .map_or(1 << 30, |a| a / BOUNDS_MEMORY_SHARE)
        .min((BOUNDS_DATA_MULTIPLE * data_bytes).max(256 << 20));
    Ok(Some(match algorithm {
        Algorithm::Hamerly => {
            if !fits(1) {
                return Err(refuse(format!("hamerly's bounds for {n} points"), 1));
            }
            1
        }
        Algorithm::Elkan => {
            if !fits(k) {
                return Err(refuse(
                    format!("elkan's bounds for {n} points and {k} centres"),
                    k,
                ));
            }
            k
        }
        _ => {
            let by_memory = (budget / (4 * n.max(1) as u64)).max(1) as usize;
            by_size.min(by_memory)
        }
    }))
}
