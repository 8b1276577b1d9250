//! The Jonker–Volgenant solver over any element type: column reduction with reduction
//! transfer, augmenting row reduction, then one shortest augmenting path per free row.

use crate::num::{Stop, Work};

use super::simd::Lanes;
use crate::AssignmentError;
use crate::problem::Problem;

use super::scan::{self, Isa, NONE};

/// The solution of the internal problem: `x[i]` the column of row `i`, potentials `u`, `v`.
pub(crate) type Solution<W> = (Vec<usize>, Vec<W>, Vec<W>);

/// Maximum number of chained steps in augmenting row reduction, per row of the problem:
/// ARR can cycle for a long time on float ties; after this budget the remaining free rows go
/// to the (always correct) augmentation phase.
const ARR_BUDGET_PER_ROW: usize = 8;

/// The augmentation looks at the free columns one by one after each row scan (rather than
/// in the scan) when there are at most `1 / FEW_FREE` of the columns.
const FEW_FREE: usize = 16;

/// The working memory of a solve, kept between the solves of a batch so that a small problem
/// allocates nothing. After a solve, `x`, `u` and `v` hold the solution.
#[derive(Debug)]
pub(crate) struct Workspace<W> {
    pub(crate) x: Vec<usize>,
    pub(crate) u: Vec<W>,
    pub(crate) v: Vec<W>,
    y: Vec<usize>,
    free: Vec<usize>,
    next: Vec<usize>,
    arg: Vec<u32>,
    matches: Vec<u32>,
    ve: Vec<W>,
    sp: Vec<W>,
    path: Vec<u32>,
    done: Vec<W>,
    fpen: Vec<W>,
    free_cols: Vec<usize>,
    scanned_rows: Vec<usize>,
    scanned_cols: Vec<usize>,
}

impl<W> Default for Workspace<W> {
    fn default() -> Self {
        Workspace {
            x: Vec::new(),
            u: Vec::new(),
            v: Vec::new(),
            y: Vec::new(),
            free: Vec::new(),
            next: Vec::new(),
            arg: Vec::new(),
            matches: Vec::new(),
            ve: Vec::new(),
            sp: Vec::new(),
            path: Vec::new(),
            done: Vec::new(),
            fpen: Vec::new(),
            free_cols: Vec::new(),
            scanned_rows: Vec::new(),
            scanned_cols: Vec::new(),
        }
    }
}

/// Solves the internal problem (`nr <= nc`, minimising) with the CPU's best instruction set.
pub(crate) fn solve<E: Lanes>(p: &Problem<'_, E>) -> Result<Solution<E::W>, Stop> {
    solve_with(p, Isa::detect())
}

/// [`solve`] with the kernels of `isa` (every instruction set gives the same solution).
pub(crate) fn solve_with<E: Lanes>(p: &Problem<'_, E>, isa: Isa) -> Result<Solution<E::W>, Stop> {
    let mut ws = Workspace::default();
    solve_in(p, isa, &mut ws)?;
    Ok((ws.x, ws.u, ws.v))
}

/// [`solve`] in a workspace (the solution is left in `ws.x`, `ws.u`, `ws.v`).
pub(crate) fn solve_in<E: Lanes>(
    p: &Problem<'_, E>,
    isa: Isa,
    ws: &mut Workspace<E::W>,
) -> Result<(), Stop> {
    let (nr, nc) = (p.nr, p.nc);
    let zero = <E::W as Work>::ZERO;
    reset(&mut ws.v, nc, zero);
    reset(&mut ws.x, nr, NONE);
    reset(&mut ws.y, nc, NONE);
    reset(&mut ws.u, nr, zero);
    if nr == 0 {
        return Ok(());
    }
    if nc > u32::MAX as usize - 1 {
        return Err(Stop::Error(AssignmentError::TooLarge {
            n: nc,
            limit: u32::MAX as usize - 1,
        }));
    }
    ws.free.clear();
    if nr == nc {
        column_reduction(p, isa, ws)?;
    } else {
        ws.free.extend(0..nr);
    }
    augmenting_row_reduction(p, isa, ws)?;
    for i in 0..nr {
        let j = ws.x[i];
        if j != NONE {
            ws.u[i] = p.at(i, j).widen() - ws.v[j];
        }
    }
    augment(p, isa, ws)
}

/// `buf` as `len` copies of `value`, reusing its allocation.
fn reset<T: Copy>(buf: &mut Vec<T>, len: usize, value: T) {
    buf.clear();
    buf.resize(len, value);
}

/// Column reduction (`v[j]` = column minimum, each column to its minimum row if that row is
/// still free, scanning columns from the last) and reduction transfer for rows assigned once.
///
/// Among rows tied for a column's minimum, the row on the diagonal (`i == j`) is taken, else
/// the first: a matrix whose diagonal is among the column minima, a constant matrix above all,
/// then starts from (and, with nothing left to augment, ends at) the identity, which is what
/// scipy's solver returns there (its test `test_constant_cost_matrix`). The rule costs one read
/// of the diagonal and changes nothing else.
fn column_reduction<E: Lanes>(
    p: &Problem<'_, E>,
    isa: Isa,
    ws: &mut Workspace<E::W>,
) -> Result<(), Stop> {
    let (nr, nc) = (p.nr, p.nc);
    let Workspace {
        v,
        x,
        y,
        free,
        arg,
        matches,
        ..
    } = ws;
    reset(arg, nc, 0);
    v.fill(E::W::INF);
    for i in 0..nr {
        scan::column_minima::<E>(isa, p.row(i), v, arg, i as u32);
    }
    if v.iter().any(|t| !t.finite()) {
        return Err(AssignmentError::Infeasible.into());
    }
    // Ties go to the diagonal (one read per column, outside the row-major pass).
    for j in 0..nr.min(nc) {
        if p.at(j, j).widen() == v[j] {
            arg[j] = j as u32;
        }
    }
    reset(matches, nr, 0);
    // Each row takes the first column (from the last) whose minimum it holds; selects, not
    // branches: which row holds which minimum is as random as the matrix.
    for j in (0..nc).rev() {
        let i = arg[j] as usize;
        let first = matches[i] == 0;
        matches[i] += 1;
        x[i] = if first { j } else { x[i] };
        y[j] = if first { i } else { NONE };
    }
    for i in 0..nr {
        match matches[i] {
            0 => free.push(i),
            1 => {
                // Reduction transfer: lower v[j1] so that row i's reduced cost there equals its
                // second smallest one (row i keeps j1 as a minimum).
                let j1 = x[i];
                let m = scan::min_reduced_except::<E>(isa, p.row(i), v, j1);
                if m.finite() {
                    v[j1] = v[j1] - m;
                    if !v[j1].in_range() {
                        return Err(Stop::Range);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Two rounds of augmenting row reduction (JV 1987). Invariant kept: every assigned row is
/// assigned to a column minimising `c[i][j] - v[j]`; `v` only decreases, and only on columns
/// that are (or become) assigned.
///
/// When a row's minimum is tied, a free column among the minima is taken if there is one
/// (the diagonal first, as in the column reduction), so that no other row is displaced: on
/// integer costs with many ties this assigns nearly every row here, where taking the second
/// minimum column would displace a row each time.
fn augmenting_row_reduction<E: Lanes>(
    p: &Problem<'_, E>,
    isa: Isa,
    ws: &mut Workspace<E::W>,
) -> Result<(), Stop> {
    let Workspace {
        v,
        x,
        y,
        free,
        next,
        ..
    } = ws;
    let mut budget = ARR_BUDGET_PER_ROW * p.nr + 16;
    for _round in 0..2 {
        let mut k = 0;
        let mut current = NONE;
        next.clear();
        while let Some(i) = crate::num::next_arr_row(&mut current, &mut k, free) {
            let row = p.row(i);
            let (umin, mut j1, usub) = scan::two_minima::<E>(isa, row, v);
            if j1 == NONE || !umin.finite() {
                return Err(AssignmentError::Infeasible.into()); // the row is entirely forbidden
            }
            let mut i0 = y[j1];
            let raise = umin < usub && usub.finite();
            if raise {
                v[j1] = v[j1] - (usub - umin);
                if !v[j1].in_range() {
                    return Err(Stop::Range);
                }
            } else if i0 != NONE && usub == umin {
                if i < p.nc && y[i] == NONE && row[i].widen() - v[i] == umin {
                    // The diagonal column when it is free and among the minima (as in the
                    // column reduction), so a constant matrix ends at the identity, as in scipy.
                    j1 = i;
                    i0 = NONE;
                } else {
                    // A free column among the minima if there is one; else the next minimum
                    // column, displacing its row.
                    let (free_col, other) = tied_columns(row, v, y, umin, j1);
                    j1 = if free_col != NONE { free_col } else { other };
                    i0 = y[j1];
                }
            }
            x[i] = j1;
            y[j1] = i;
            if i0 != NONE {
                x[i0] = NONE;
                if raise && budget > 0 {
                    budget -= 1;
                    current = i0;
                } else {
                    next.push(i0);
                }
            }
        }
        std::mem::swap(free, next);
        if free.is_empty() {
            break;
        }
    }
    Ok(())
}

/// Among the columns whose reduced cost in `row` is `value` (a tied minimum): the first
/// free one and the first other than `j1` ([`NONE`] where there is none); the search stops
/// at the first free one.
fn tied_columns<E: Lanes>(
    row: &[E],
    v: &[E::W],
    y: &[usize],
    value: E::W,
    j1: usize,
) -> (usize, usize) {
    let mut other = NONE;
    for (j, ((&c, &vj), &r)) in row.iter().zip(v).zip(y).enumerate() {
        if c.widen() - vj == value {
            if r == NONE {
                return (j, if other == NONE { j } else { other });
            }
            if other == NONE && j != j1 {
                other = j;
            }
        }
    }
    (NONE, other)
}

/// Shortest augmenting paths from each free row (Dijkstra on reduced costs).
///
/// Every row scan walks the whole cost row in column order (sequential, prefetcher-friendly;
/// gathering only the unscanned columns in a compacted order costs a cache miss per element
/// on large matrices). Scanned columns are neutralised by setting their working potential to
/// [`Work::NEUTRAL`] (so they are never updated again) and their distance to [`Work::INF`]
/// (so they are never the minimum); their final distances are kept in `done`.
///
/// Among equal tentative distances a free column wins, which ends the search early and
/// matters a lot on integer costs with many ties; otherwise the first column wins.
fn augment<E: Lanes>(p: &Problem<'_, E>, isa: Isa, ws: &mut Workspace<E::W>) -> Result<(), Stop> {
    let nc = p.nc;
    let inf = <E::W as Work>::INF;
    let zero = <E::W as Work>::ZERO;
    let Workspace {
        x,
        u,
        v,
        y,
        free,
        ve,
        sp,
        path,
        done,
        fpen,
        free_cols,
        scanned_rows,
        scanned_cols,
        ..
    } = ws;
    if free.is_empty() {
        return Ok(());
    }
    reset(ve, nc, zero);
    reset(sp, nc, inf);
    reset(path, nc, u32::MAX);
    reset(done, nc, inf);
    // Zero for a free column, INF for an assigned one (added to the distances for the minimum
    // over free columns).
    fpen.clear();
    fpen.extend(y.iter().map(|&r| if r == NONE { zero } else { inf }));
    // The free columns, when they are few enough to look at one by one after each scan
    // instead of carrying `fpen` through it.
    free_cols.clear();
    free_cols.extend((0..nc).filter(|&j| y[j] == NONE));

    for &f in free.iter() {
        let few_free = free_cols.len() * FEW_FREE <= nc;
        ve.copy_from_slice(v);
        sp.fill(inf);
        scanned_rows.clear();
        scanned_cols.clear();
        u[f] = zero;
        let mut min_val = zero;
        let mut i = f;
        let sink;
        loop {
            scanned_rows.push(i);
            let base = min_val - u[i];
            let row = p.row(i);
            let (all, free_best) = if few_free {
                let (all, _) = scan::relax::<E, false>(isa, row, ve, sp, path, &[], base, i as u32);
                let mut best = (inf, NONE);
                for &j in free_cols.iter() {
                    if sp[j] < best.0 || (sp[j] == best.0 && j < best.1) {
                        best = (sp[j], j);
                    }
                }
                (all, best)
            } else {
                scan::relax::<E, true>(isa, row, ve, sp, path, fpen, base, i as u32)
            };
            let lowest = all.0;
            if !lowest.finite() {
                return Err(AssignmentError::Infeasible.into());
            }
            if !lowest.in_range() {
                return Err(Stop::Range);
            }
            // A free column wins ties (the search ends there).
            let j = if free_best.0 == lowest {
                free_best.1
            } else {
                all.1
            };
            debug_assert!(j != NONE);
            min_val = lowest;
            done[j] = lowest;
            ve[j] = E::W::NEUTRAL;
            sp[j] = inf;
            scanned_cols.push(j);
            if y[j] == NONE {
                sink = j;
                break;
            }
            i = y[j];
        }
        // Dual update.
        u[f] = u[f] + min_val;
        for &r in &scanned_rows[1..] {
            u[r] = u[r] + (min_val - done[x[r]]);
        }
        for &c in scanned_cols.iter() {
            v[c] = v[c] - (min_val - done[c]);
        }
        let rows_ok = scanned_rows.iter().all(|&r| u[r].in_range());
        if !rows_ok || scanned_cols.iter().any(|&c| !v[c].in_range()) {
            return Err(Stop::Range);
        }
        // Augment along the alternating path.
        fpen[sink] = inf;
        if let Some(k) = free_cols.iter().position(|&c| c == sink) {
            free_cols.swap_remove(k);
        }
        let mut j = sink;
        loop {
            let r = path[j] as usize;
            y[j] = r;
            let prev = x[r];
            x[r] = j;
            if r == f {
                break;
            }
            j = prev;
        }
    }
    Ok(())
}
