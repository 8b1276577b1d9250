//! What both backends of the auction share: the square benefit matrix and the epsilon
//! schedule (the bottom of the module; it imports nothing from its siblings).

use crate::problem::Problem;

/// Epsilon is divided by this factor between scaling phases (`auction_batch` in
/// kernels-cuda/assignment.cu divides by the same 6).
const EPS_FACTOR: f64 = 6.0;

/// Relative accuracy of the float mode: the result is within `FLOAT_GAP * (max - min)` of the
/// optimum.
pub const AUCTION_FLOAT_GAP: f64 = 1e-9;

/// The square benefit matrix (negated, scaled costs; dummy rows of zeros; penalised forbidden
/// pairs) and the epsilon schedule.
pub(crate) struct AuctionSetup {
    pub(crate) n: usize,
    pub(crate) benefit: Vec<f64>,
    pub(crate) eps_start: f64,
    pub(crate) eps_final: f64,
}

/// The benefit matrix and epsilon range of `p` (exact integer mode when the scaled costs fit
/// in 52 bits).
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
    let exact = p.integral() && magnitude < (1u64 << 52) as f64;
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
    let (eps_start, eps_final) = eps_bounds(unit * scale, exact, nf);
    AuctionSetup {
        n,
        benefit,
        eps_start,
        eps_final,
    }
}

/// The first and last epsilon of a problem of `nf` rows whose benefits span `span`: half the
/// span down to 1 in the exact mode, down to `span * AUCTION_FLOAT_GAP / n` in the float mode.
fn eps_bounds(span: f64, exact: bool, nf: f64) -> (f64, f64) {
    let eps_final = if exact {
        1.0
    } else {
        span * AUCTION_FLOAT_GAP / nf.max(1.0)
    };
    ((span / 2.0).max(eps_final), eps_final)
}

/// The epsilon of each phase, from `eps_start` down to exactly `eps_final`.
pub(crate) fn eps_schedule(s: &AuctionSetup) -> Vec<f64> {
    eps_range(s.eps_start, s.eps_final)
}

/// The epsilon of each phase from `start` down to exactly `last`, divided by
/// [`EPS_FACTOR`] in between.
fn eps_range(start: f64, last: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut eps = start;
    loop {
        if eps <= last * EPS_FACTOR {
            out.push(last);
            break;
        }
        out.push(eps);
        eps /= EPS_FACTOR;
    }
    out
}

/// A sparse benefit matrix for the auction: `n` rows of CSR entries (columns sorted and
/// distinct within a row; every row has one), benefits negated, shifted and scaled as in
/// [`setup`], and the epsilon range.
pub(crate) struct CsrSetup {
    pub(crate) n: usize,
    pub(crate) indptr: Vec<u64>,
    pub(crate) indices: Vec<u32>,
    pub(crate) benefit: Vec<f64>,
    pub(crate) eps_start: f64,
    pub(crate) eps_final: f64,
    /// `benefit = -(cost - min) * scale`: the potential of column `j` with price `p` is
    /// `min - p / scale` (the cost-side dual the prices stand for).
    pub(crate) min: f64,
    pub(crate) scale: f64,
}

impl CsrSetup {
    /// The epsilon of each phase (as [`eps_schedule`]).
    pub(crate) fn schedule(&self) -> Vec<f64> {
        eps_range(self.eps_start, self.eps_final)
    }
}

/// The auction's setup of a square sparse problem (`indptr`/`indices` sorted, distinct
/// columns per row; `costs` the internal, minimised costs of the entries): exact integer mode
/// (costs scaled by `n + 1`, last phase at `eps = 1`) when every cost is an integer and the
/// prices stay below 2^52, else the float mode of [`setup`]. No penalty entries: the caller
/// makes sure a perfect matching exists.
pub(crate) fn setup_csr(n: usize, indptr: Vec<u64>, indices: Vec<u32>, costs: &[f64]) -> CsrSetup {
    let nf = n as f64;
    let (min, max) = costs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &c| {
            (a.min(c), b.max(c))
        });
    let (min, max) = if min > max { (0.0, 0.0) } else { (min, max) };
    let range = max - min;
    let unit = if range > 0.0 { range } else { 1.0 };
    let integral = costs.iter().all(|c| c.fract() == 0.0);
    let magnitude = unit * (nf + 1.0) * (nf + 1.0) * (nf + 1.0);
    let exact = integral && magnitude < (1u64 << 52) as f64;
    let scale = if exact { nf + 1.0 } else { 1.0 };
    let benefit = costs.iter().map(|&c| -(c - min) * scale).collect();
    let (eps_start, eps_final) = eps_bounds(unit * scale, exact, nf);
    CsrSetup {
        n,
        indptr,
        indices,
        benefit,
        eps_start,
        eps_final,
        min,
        scale,
    }
}
