//! LAPJVsp: shortest augmenting paths over the stored entries of a sparse matrix.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::num::{Keyed, KeyedElem, Potentials, Stop, Work};
use crate::{Assignment, AssignmentError, Duals};

use super::{Index, Progress, SparseProblem};

/// No row / no column.
const NONE: usize = usize::MAX;

/// Maximum number of chained steps of augmenting row reduction per row. A step costs one
/// sparse row (a few entries) against a shortest-path search's many rows: on random
/// problems with 10 entries per row (n = 10^5) 128 to 256 steps per row were fastest, 8
/// (the dense solver's budget) about 3x slower, 2048 about 3x slower too.
const ARR_BUDGET_PER_ROW: usize = 200;

/// Solves the internal problem: in its own arithmetic when `integer_ok` (always for floats),
/// else, and when an integer potential leaves the checked range, in `f64`.
pub(crate) fn run<E: KeyedElem, I: Index>(
    p: &SparseProblem<'_, E, I>,
    integer_ok: bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Assignment, AssignmentError> {
    run_with(p, integer_ok, progress, WARM_FROM)
}

/// [`run`], starting square problems of at least `warm_from` rows from the auction.
pub(super) fn run_with<E: KeyedElem, I: Index>(
    p: &SparseProblem<'_, E, I>,
    integer_ok: bool,
    progress: &mut dyn FnMut(Progress),
    warm_from: usize,
) -> Result<Assignment, AssignmentError> {
    if integer_ok || !E::INTEGER {
        match solve(p, progress, warm_from) {
            Ok((x, u, v)) => return finish(p, &x, u, v),
            Err(Stop::Error(e)) => return Err(e),
            Err(Stop::Range) => {}
        }
    }
    // Integers beyond the checked range: the same problem in f64.
    crate::types::check_memory(
        || format!("an f64 copy of the {} sparse entries", p.data.len()),
        (p.data.len() * 8) as u64,
    )?;
    let data: Vec<f64> = p
        .data
        .iter()
        .map(|c| {
            let w = c.widen();
            if w.finite() {
                w.to_f64()
            } else {
                f64::INFINITY
            }
        })
        .collect();
    let q = SparseProblem {
        nr: p.nr,
        nc: p.nc,
        indptr: Cow::Borrowed(&p.indptr[..]),
        indices: Cow::Borrowed(&p.indices[..]),
        data: Cow::Owned(data),
        transposed: p.transposed,
        negated: p.negated,
        offset: p.offset,
    };
    match solve(&q, progress, warm_from) {
        Ok((x, u, v)) => finish(&q, &x, u, v),
        Err(Stop::Error(e)) => Err(e),
        Err(Stop::Range) => unreachable!("f64 potentials are always in range"),
    }
}

type Solution<W> = (Vec<usize>, Vec<W>, Vec<W>);

/// Everything the solver keeps about a column, side by side: the random accesses of a row
/// scan then touch one cache line per column instead of one per array.
#[derive(Debug, Clone, Copy)]
struct Col<W> {
    /// Potential.
    v: W,
    /// Tentative distance of the current search (meaningful when `seen == epoch`).
    d: W,
    /// Assigned row, or `FREE`.
    y: u32,
    /// Row the search reached the column from.
    pred: u32,
    /// Search in which the column was last reached.
    seen: u32,
    /// Search in which the column was last scanned (its distance final).
    done: u32,
}

/// No row.
const FREE: u32 = u32::MAX;

/// The solver proper (`nr <= nc`).
fn solve<E: KeyedElem, I: Index>(
    p: &SparseProblem<'_, E, I>,
    progress: &mut dyn FnMut(Progress),
    warm_from: usize,
) -> Result<Solution<E::W>, Stop> {
    let (nr, nc) = (p.nr, p.nc);
    let zero = <E::W as Work>::ZERO;
    if nr == 0 {
        return Ok((Vec::new(), Vec::new(), vec![zero; nc]));
    }
    if nc >= u32::MAX as usize {
        return Err(Stop::Error(AssignmentError::TooLarge {
            n: nc,
            limit: u32::MAX as usize - 1,
        }));
    }
    let mut cols = vec![
        Col {
            v: zero,
            d: zero,
            y: FREE,
            pred: 0,
            seen: 0,
            done: 0,
        };
        nc
    ];
    if nr == nc && nr >= warm_from {
        return solve_warm(p, cols, progress);
    }
    let mut x = vec![NONE; nr];
    let mut free = if nr == nc {
        column_reduction(p, &mut cols, &mut x)?
    } else {
        (0..nr).collect()
    };
    progress(Progress {
        matched: nr - free.len(),
        rows: nr,
    });
    augmenting_row_reduction(p, &mut cols, &mut x, &mut free)?;
    progress(Progress {
        matched: nr - free.len(),
        rows: nr,
    });
    let mut u = vec![zero; nr];
    for i in 0..nr {
        if x[i] != NONE {
            u[i] = reduced_to(p, i, x[i], cols[x[i]].v);
        }
    }
    augment(p, &mut u, &mut cols, &mut x, &free, progress)?;
    Ok((x, u, cols.iter().map(|c| c.v).collect()))
}

/// Square problems from this size start from the auction's prices ([`solve_warm`]).
const WARM_FROM: usize = 2048;

/// A square problem solved from a warm start: Bertsekas' auction (epsilon scaling, on the
/// CPU) finds a nearly optimal assignment and prices; the prices become the column
/// potentials (`v = min - price / scale`), each row's potential its least reduced cost, the
/// rows whose auction column is not exactly at that least cost are freed, and the exact
/// shortest augmenting paths assign them. On large random sparse problems the augmenting row
/// reduction and the last, graph-wide searches of the cold start cost several times the
/// auction, while from near-optimal potentials the few searches left are short. The result is
/// exact (the augmentation keeps the optimality conditions whatever the potentials it starts
/// from). The auction needs a perfect matching to end: Hopcroft–Karp checks for one first.
fn solve_warm<E: KeyedElem, I: Index>(
    p: &SparseProblem<'_, E, I>,
    mut cols: Vec<Col<E::W>>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Solution<E::W>, Stop> {
    let n = p.nr;
    // The rows' allowed entries, as f64 for the auction.
    let (indptr, indices, costs) = super::auction_rows(n, p.data.len(), |i, row| {
        row.extend(
            p.row(i)
                .filter(|(_, c)| c.widen().finite())
                .map(|(j, c)| (j as u32, c.widen().to_f64())),
        );
        Ok::<(), Stop>(())
    })?;
    if super::matching::maximum_matching(n, n, &indptr, &indices) < n {
        return Err(AssignmentError::Infeasible.into());
    }
    let setup = crate::auction::setup_csr(n, indptr, indices, &costs);
    drop(costs);
    let (start, price) = crate::auction::solve_csr_prices(&setup);
    for (c, &pj) in cols.iter_mut().zip(&price) {
        c.v = E::W::from_f64_near(setup.min - pj / setup.scale).ok_or(Stop::Range)?;
    }
    drop(setup);
    // Each row's potential is its least reduced cost; a row keeps its auction column only
    // where that column is exactly at it.
    let mut x = vec![NONE; n];
    let mut u = vec![E::W::ZERO; n];
    let mut free = Vec::new();
    for i in 0..n {
        let least = p
            .row(i)
            .filter(|(_, c)| c.widen().finite())
            .fold(E::W::INF, |m, (j, c)| m.least(c.widen() - cols[j].v));
        let j = start[i];
        if reduced_to(p, i, j, cols[j].v) == least {
            x[i] = j;
            cols[j].y = i as u32;
            u[i] = least;
        } else {
            free.push(i);
        }
    }
    progress(Progress {
        matched: n - free.len(),
        rows: n,
    });
    augment(p, &mut u, &mut cols, &mut x, &free, progress)?;
    Ok((x, u, cols.iter().map(|c| c.v).collect()))
}

/// The smallest reduced cost `c - vj` of row `i`'s entries in column `j` (parallel entries:
/// the cheapest).
fn reduced_to<E: KeyedElem, I: Index>(
    p: &SparseProblem<'_, E, I>,
    i: usize,
    j: usize,
    vj: E::W,
) -> E::W {
    p.row(i)
        .filter(|&(k, c)| k == j && c.widen().finite())
        .fold(E::W::INF, |m, (_, c)| m.least(c.widen() - vj))
}

/// Column reduction and reduction transfer, as in the dense solver, over the entries;
/// returns the rows left free.
fn column_reduction<E: KeyedElem, I: Index>(
    p: &SparseProblem<'_, E, I>,
    cols: &mut [Col<E::W>],
    x: &mut [usize],
) -> Result<Vec<usize>, Stop> {
    let nr = p.nr;
    let mut free = Vec::with_capacity(nr);
    let mut arg = vec![FREE; p.nc];
    for c in cols.iter_mut() {
        c.v = E::W::INF;
    }
    for i in 0..nr {
        for (j, c) in p.row(i) {
            let w = c.widen();
            if w.finite() && w < cols[j].v {
                cols[j].v = w;
                arg[j] = i as u32;
            }
        }
    }
    // A square problem matches every column: one without entries has no match.
    if arg.contains(&FREE) {
        return Err(AssignmentError::Infeasible.into());
    }
    let mut matches = vec![0u32; nr];
    for j in (0..p.nc).rev() {
        let i = arg[j] as usize;
        matches[i] += 1;
        if matches[i] == 1 {
            x[i] = j;
            cols[j].y = i as u32;
        }
    }
    for i in 0..nr {
        match matches[i] {
            0 => free.push(i),
            1 => {
                let j1 = x[i];
                let m = p
                    .row(i)
                    .filter(|&(j, c)| j != j1 && c.widen().finite())
                    .fold(E::W::INF, |m, (j, c)| m.least(c.widen() - cols[j].v));
                if m.finite() {
                    cols[j1].v = cols[j1].v - m;
                    if !cols[j1].v.in_range() {
                        return Err(Stop::Range);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(free)
}

/// Two rounds of augmenting row reduction (see the dense solver), with the same tie rule: a
/// free column among a row's tied minima is taken before displacing another row.
fn augmenting_row_reduction<E: KeyedElem, I: Index>(
    p: &SparseProblem<'_, E, I>,
    cols: &mut [Col<E::W>],
    x: &mut [usize],
    free: &mut Vec<usize>,
) -> Result<(), Stop> {
    let inf = <E::W as Work>::INF;
    let mut budget = ARR_BUDGET_PER_ROW * p.nr + 16;
    let mut next: Vec<usize> = Vec::with_capacity(free.len());
    for _round in 0..2 {
        let mut k = 0;
        let mut current = NONE;
        next.clear();
        while let Some(i) = crate::num::next_arr_row(&mut current, &mut k, free) {
            // Smallest and second smallest reduced cost of the row.
            let (mut umin, mut usub) = (inf, inf);
            let (mut j1, mut j2) = (NONE, NONE);
            for (j, c) in p.row(i) {
                let w = c.widen();
                if !w.finite() {
                    continue;
                }
                let h = w - cols[j].v;
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
                return Err(AssignmentError::Infeasible.into()); // a row without entries
            }
            let mut i0 = cols[j1].y;
            let raise = umin < usub && usub.finite();
            if raise {
                cols[j1].v = cols[j1].v - (usub - umin);
                if !cols[j1].v.in_range() {
                    return Err(Stop::Range);
                }
            } else if i0 != FREE && usub == umin {
                let free_min = p.row(i).find(|&(j, c)| {
                    cols[j].y == FREE && c.widen().finite() && c.widen() - cols[j].v == umin
                });
                j1 = match free_min {
                    Some((j, _)) => j,
                    None => j2,
                };
                i0 = cols[j1].y;
            }
            x[i] = j1;
            cols[j1].y = i as u32;
            if i0 != FREE {
                let i0 = i0 as usize;
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

/// The heap key of a reached column: its distance, then free before assigned (a free column
/// at the current distance ends the search), then the column.
#[inline]
fn key<W: Keyed>(d: W, assigned: bool, j: usize) -> u128 {
    ((d.order_key() as u128) << 64) | ((assigned as u128) << 32) | j as u128
}

/// One Dijkstra search per free row over the entries, with a binary heap of reached columns
/// (stale entries skipped when popped). Columns are marked with the number of the search
/// that reached or scanned them, so nothing is reset between searches.
fn augment<E: KeyedElem, I: Index>(
    p: &SparseProblem<'_, E, I>,
    u: &mut [E::W],
    cols: &mut [Col<E::W>],
    x: &mut [usize],
    free: &[usize],
    progress: &mut dyn FnMut(Progress),
) -> Result<(), Stop> {
    let zero = <E::W as Work>::ZERO;
    let matched = p.nr - free.len();
    let mut scanned_rows: Vec<usize> = Vec::new();
    let mut scanned_cols: Vec<usize> = Vec::new();
    let mut heap: BinaryHeap<Reverse<u128>> = BinaryHeap::new();
    for (search, &f) in free.iter().enumerate() {
        // Marks 1, 2, ...: 0 is "never" (free.len() <= nr < u32::MAX).
        let epoch = search as u32 + 1;
        u[f] = zero;
        let mut min_val = zero;
        let mut i = f;
        let sink;
        loop {
            scanned_rows.push(i);
            let base = min_val - u[i];
            for (j, c) in p.row(i) {
                let col = &mut cols[j];
                if col.done == epoch {
                    continue;
                }
                let w = c.widen();
                if !w.finite() {
                    continue;
                }
                let r = base + w - col.v;
                if col.seen != epoch || r < col.d {
                    col.seen = epoch;
                    col.d = r;
                    col.pred = i as u32;
                    heap.push(Reverse(key(r, col.y != FREE, j)));
                }
            }
            // The nearest reached column (stale heap entries are skipped).
            let j = loop {
                match heap.pop() {
                    None => return Err(AssignmentError::Infeasible.into()),
                    Some(Reverse(k)) => {
                        let j = (k & 0xffff_ffff) as usize;
                        let col = &cols[j];
                        if col.done != epoch && (k >> 64) as u64 == col.d.order_key() {
                            break j;
                        }
                    }
                }
            };
            min_val = cols[j].d;
            if !min_val.in_range() {
                return Err(Stop::Range);
            }
            cols[j].done = epoch;
            scanned_cols.push(j);
            if cols[j].y == FREE {
                sink = j;
                break;
            }
            i = cols[j].y as usize;
        }
        // Dual update (the scanned columns' distances are final).
        u[f] = u[f] + min_val;
        for &r in &scanned_rows[1..] {
            u[r] = u[r] + (min_val - cols[x[r]].d);
        }
        for &c in &scanned_cols {
            cols[c].v = cols[c].v - (min_val - cols[c].d);
        }
        if scanned_rows.iter().any(|&r| !u[r].in_range())
            || scanned_cols.iter().any(|&c| !cols[c].v.in_range())
        {
            return Err(Stop::Range);
        }
        // Augment along the alternating path.
        let mut j = sink;
        loop {
            let r = cols[j].pred as usize;
            cols[j].y = r as u32;
            let prev = x[r];
            x[r] = j;
            if r == f {
                break;
            }
            j = prev;
        }
        scanned_rows.clear();
        scanned_cols.clear();
        heap.clear();
        progress(Progress {
            matched: matched + search + 1,
            rows: p.nr,
        });
    }
    Ok(())
}

/// Maps the internal solution back to the caller's matrix: pairs, total cost, duals.
fn finish<E: KeyedElem, I: Index>(
    p: &SparseProblem<'_, E, I>,
    x: &[usize],
    u: Vec<E::W>,
    v: Vec<E::W>,
) -> Result<Assignment, AssignmentError> {
    let mut sum = E::W::ZERO;
    for (i, &j) in x.iter().enumerate() {
        let c = p
            .row(i)
            .filter(|&(k, c)| k == j && c.widen().finite())
            .fold(E::W::INF, |m, (_, c)| m.least(c.widen()));
        debug_assert!(c.finite());
        sum = sum + c;
    }
    let internal = sum.to_f64() - p.offset as f64 * p.nr as f64;
    if !internal.is_finite() {
        return Err(AssignmentError::CostOverflow {
            total: format!("{internal:e}"),
        });
    }
    let cost = if p.negated { -internal } else { internal };
    let offset = p.offset as f64;
    let sign = if p.negated { -1.0 } else { 1.0 };
    let (u, v): Potentials<f64> = (
        u.into_iter()
            .map(|t| sign * (t.to_f64() - offset))
            .collect(),
        v.into_iter().map(|t| sign * t.to_f64()).collect(),
    );
    let (row_to_col, duals) = if p.transposed {
        let mut out = vec![None; p.nc];
        for (i, &j) in x.iter().enumerate() {
            out[j] = Some(i);
        }
        (out, Duals { row: v, col: u })
    } else {
        (
            x.iter().map(|&j| Some(j)).collect(),
            Duals { row: u, col: v },
        )
    };
    Ok(Assignment {
        row_to_col,
        cost,
        duals: Some(duals),
    })
}
