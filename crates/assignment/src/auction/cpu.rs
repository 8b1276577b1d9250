//! The CPU auction: Gauss–Seidel bidding (one bid at a time) for small problems, Jacobi
//! bidding (every free row at once, rayon) above. One round loop serves the dense benefit
//! matrix and the CSR one: they differ only in how a bidder's candidate columns are scanned
//! ([`Bids`]).

use rayon::prelude::*;

use super::setup::{AuctionSetup, CsrSetup, eps_schedule, setup};
use crate::problem::Problem;

/// "No row" / "no column" in the CPU arrays.
const NONE: usize = usize::MAX;

/// Below this many `bidders x entries per row` work items a bidding round runs on one thread.
const PARALLEL_BIDS_FROM: usize = 1 << 15;

/// Below this size the CPU uses Gauss–Seidel (one bid at a time), which needs fewer bids.
const JACOBI_FROM: usize = 256;

/// How a bidder finds its best two columns: a dense row of the benefit matrix or the entries
/// of a CSR row.
trait Bids: Sync {
    /// Rows (and columns) of the square problem.
    fn n(&self) -> usize;
    /// Entries a bid scans, on average (for the choice of a parallel round).
    fn per_row(&self) -> usize;
    /// Best column, best value and second best value of row `i` under `price`.
    fn best_two(&self, i: usize, price: &[f64]) -> (usize, f64, f64);
}

impl Bids for AuctionSetup {
    fn n(&self) -> usize {
        self.n
    }

    fn per_row(&self) -> usize {
        self.n
    }

    /// The first column among equal best values.
    #[inline]
    fn best_two(&self, i: usize, price: &[f64]) -> (usize, f64, f64) {
        let n = self.n;
        let row = &self.benefit[i * n..(i + 1) * n];
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
}

impl Bids for CsrSetup {
    fn n(&self) -> usize {
        self.n
    }

    fn per_row(&self) -> usize {
        (self.indices.len() / self.n.max(1)).max(1)
    }

    /// The first entry, i.e. the smallest column, among equal best values.
    #[inline]
    fn best_two(&self, i: usize, price: &[f64]) -> (usize, f64, f64) {
        let (a, b) = (self.indptr[i] as usize, self.indptr[i + 1] as usize);
        let (mut bj, mut best, mut second) = (NONE, f64::NEG_INFINITY, f64::NEG_INFINITY);
        for (&j, &ben) in self.indices[a..b].iter().zip(&self.benefit[a..b]) {
            let val = ben - price[j as usize];
            if val > best || bj == NONE {
                second = best;
                best = val;
                bj = j as usize;
            } else if val > second {
                second = val;
            }
        }
        (bj, best, second)
    }
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
pub(super) fn solve(p: &Problem<'_>) -> Vec<usize> {
    if p.nr == 0 {
        return Vec::new();
    }
    let s = setup(p);
    let (mut assigned, _) = run(&s, &eps_schedule(&s));
    assigned.truncate(p.nr);
    assigned
}

/// The CPU auction of a sparse square problem (every row has an entry and a perfect
/// matching exists), with the bids of the GPU kernel. Returns the column of each row.
pub(super) fn solve_csr(s: &CsrSetup) -> Vec<usize> {
    solve_csr_prices(s).0
}

/// [`solve_csr`], with the final prices.
pub(super) fn solve_csr_prices(s: &CsrSetup) -> (Vec<usize>, Vec<f64>) {
    run(s, &s.schedule())
}

/// The scaling phases: one auction per `eps` of the schedule, from the prices of the last
/// (Gauss–Seidel below [`JACOBI_FROM`] rows, Jacobi above). Returns each row's column and the
/// final prices.
fn run<B: Bids>(rows: &B, schedule: &[f64]) -> (Vec<usize>, Vec<f64>) {
    let n = rows.n();
    let mut st = State {
        price: vec![0.0f64; n],
        owner: vec![NONE; n],
        assigned: vec![NONE; n],
    };
    for &eps in schedule {
        st.owner.fill(NONE);
        st.assigned.fill(NONE);
        if n < JACOBI_FROM {
            gauss_seidel_phase(rows, eps, &mut st);
        } else {
            jacobi_phase(rows, eps, &mut st);
        }
    }
    (st.assigned, st.price)
}

/// What a phase updates: each column's price and row (`owner`), each row's column.
struct State {
    price: Vec<f64>,
    owner: Vec<usize>,
    assigned: Vec<usize>,
}

impl State {
    /// Gives column `j` to row `i`; the row that held `j`, if any, loses it and is pushed on
    /// `displaced` to bid again.
    #[inline]
    fn give(&mut self, j: usize, i: usize, displaced: &mut Vec<usize>) {
        let prev = self.owner[j];
        if prev != NONE {
            self.assigned[prev] = NONE;
            displaced.push(prev);
        }
        self.owner[j] = i;
        self.assigned[i] = j;
    }
}

/// One phase of one bid at a time: the bidder takes its best column at once, and the row it
/// displaces bids next.
fn gauss_seidel_phase<B: Bids>(rows: &B, eps: f64, st: &mut State) {
    let mut queue: Vec<usize> = (0..rows.n()).rev().collect();
    while let Some(i) = queue.pop() {
        let (bj, best, second) = rows.best_two(i, &st.price);
        st.price[bj] = raise(st.price[bj], increment(best, second, eps));
        st.give(bj, i, &mut queue);
    }
}

/// One phase of rounds in which every free row bids at once (in parallel when the round is
/// large), and each column goes to its highest bidder.
fn jacobi_phase<B: Bids>(rows: &B, eps: f64, st: &mut State) {
    let n = rows.n();
    let per_row = rows.per_row();
    let mut bidders: Vec<usize> = (0..n).collect();
    let mut bids: Vec<(usize, f64)> = Vec::with_capacity(n);
    let mut high = vec![f64::NEG_INFINITY; n];
    let mut winner = vec![NONE; n];
    let mut touched: Vec<usize> = Vec::with_capacity(n);
    while !bidders.is_empty() {
        let price = &st.price;
        let bid = |&i: &usize| {
            let (bj, best, second) = rows.best_two(i, price);
            (bj, raise(price[bj], increment(best, second, eps)))
        };
        bids.clear();
        if bidders.len() * per_row >= PARALLEL_BIDS_FROM {
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
            st.give(j, winner[j], &mut next);
            st.price[j] = high[j];
            winner[j] = NONE;
            high[j] = f64::NEG_INFINITY;
        }
        bidders = next;
    }
}
