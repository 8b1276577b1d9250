//! The Hungarian algorithm (Kuhn–Munkres) with starred and primed zeros.

use ndarray::ArrayView2;

use crate::problem::{Cost, Problem, Solution};
use crate::{Assignment, AssignmentError, Sense};

const NONE: usize = usize::MAX;
const INF: f64 = f64::INFINITY;

/// Solves the linear assignment problem exactly with Munkres' formulation of the Hungarian
/// algorithm: subtract row minima, star independent zeros, cover the starred columns, then
/// repeatedly prime an uncovered zero — covering its row and uncovering its star's column, or
/// augmenting along the alternating starred/primed path when its row has no star — and, when
/// no uncovered zero remains, add the smallest uncovered value to the covered rows and subtract
/// it from the uncovered columns (Bourgeois & Lassalle's rectangular form).
///
/// The matrix is never rewritten: the reduced matrix is `c[i][j] - u[i] - v[j]` with the row and
/// column potentials returned in [`Assignment::duals`]. For every uncovered row the smallest
/// reduced cost over the uncovered columns is kept up to date (columns only get uncovered
/// within a phase), which makes "find an uncovered zero" and "smallest uncovered value" `O(n)`
/// instead of `O(n^2)`.
///
/// # Complexity
/// `O(n^2 m)` for an `n x m` matrix with `n <= m` (`O(n^3)` square); a column-major copy of
/// the matrix (`O(n m)`) plus `O(n + m)` memory beyond the internal copy.
///
/// # Errors
/// As [`jonker_volgenant`](crate::jonker_volgenant).
///
/// # Examples
/// ```
/// use assignment::{hungarian, Sense};
/// let c = ndarray::array![[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]];
/// let a = hungarian(c.view(), Sense::Maximize)?;
/// assert_eq!(a.cost, 11.0); // 4 + 5 + 2
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn hungarian<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
) -> Result<Assignment, AssignmentError> {
    let p = Problem::new(costs, sense)?;
    let (x, u, v) = solve(&p)?;
    p.finish(&x, Some((u, v)))
}

/// Solves the internal problem: `(x, u, v)`.
pub(crate) fn solve(p: &Problem<'_>) -> Result<Solution, AssignmentError> {
    let (nr, nc) = (p.nr, p.nc);
    let mut u = vec![0.0f64; nr];
    let mut v = vec![0.0f64; nc];
    let mut row_star = vec![NONE; nr];
    let mut col_star = vec![NONE; nc];
    if nr == 0 {
        return Ok((row_star, u, v));
    }
    // Step 1: subtract row minima. Step 2: star independent zeros.
    let mut stars = 0;
    for i in 0..nr {
        let m = p.row(i).iter().copied().fold(INF, f64::min);
        if m == INF {
            return Err(AssignmentError::Infeasible);
        }
        u[i] = m;
        for (j, &c) in p.row(i).iter().enumerate() {
            if c - m == 0.0 && col_star[j] == NONE {
                row_star[i] = j;
                col_star[j] = i;
                stars += 1;
                break;
            }
        }
    }
    // Column-major copy: uncovering a column scans it over all rows, contiguously.
    let mut ct = vec![0.0f64; nr * nc];
    for i in 0..nr {
        for (j, &c) in p.row(i).iter().enumerate() {
            ct[j * nr + i] = c;
        }
    }
    let mut col_covered = vec![false; nc];
    let mut row_covered = vec![false; nr];
    let mut prime = vec![NONE; nr];
    let mut slack = vec![INF; nr];
    let mut slack_col = vec![NONE; nr];
    let mut uncovered_cols: Vec<usize> = Vec::with_capacity(nc);
    let mut covered_rows: Vec<usize> = Vec::with_capacity(nr);
    while stars < nr {
        // Step 3: cover the starred columns.
        uncovered_cols.clear();
        for j in 0..nc {
            col_covered[j] = col_star[j] != NONE;
            if !col_covered[j] {
                uncovered_cols.push(j);
            }
        }
        row_covered.fill(false);
        covered_rows.clear();
        prime.fill(NONE);
        for i in 0..nr {
            let row = p.row(i);
            let (mut m, mut arg) = (INF, NONE);
            for &j in &uncovered_cols {
                let r = row[j] - u[i] - v[j];
                if r < m {
                    m = r;
                    arg = j;
                }
            }
            slack[i] = m;
            slack_col[i] = arg;
        }
        loop {
            // Step 4: the uncovered row holding the smallest uncovered value.
            let (mut best, mut bi) = (INF, NONE);
            for i in 0..nr {
                if !row_covered[i] && slack[i] < best {
                    best = slack[i];
                    bi = i;
                    if best <= 0.0 {
                        break;
                    }
                }
            }
            if bi == NONE {
                return Err(AssignmentError::Infeasible);
            }
            if best > 0.0 {
                // Step 6: add `best` to the covered rows, subtract it from the uncovered columns.
                for &i in &covered_rows {
                    u[i] -= best;
                }
                for &j in &uncovered_cols {
                    v[j] += best;
                }
                for i in 0..nr {
                    if !row_covered[i] {
                        slack[i] -= best;
                    }
                }
                slack[bi] = 0.0;
            }
            // Prime the uncovered zero at (bi, j).
            let j = slack_col[bi];
            prime[bi] = j;
            let js = row_star[bi];
            if js != NONE {
                // Cover its row, uncover its star's column, and fold that column into the slacks.
                row_covered[bi] = true;
                covered_rows.push(bi);
                col_covered[js] = false;
                uncovered_cols.push(js);
                let col = &ct[js * nr..(js + 1) * nr];
                for i in 0..nr {
                    if !row_covered[i] {
                        let r = col[i] - u[i] - v[js];
                        if r < slack[i] {
                            slack[i] = r;
                            slack_col[i] = js;
                        }
                    }
                }
            } else {
                // Step 5: augment along primed, starred, primed, ... zeros.
                let (mut i, mut j) = (bi, j);
                loop {
                    let i2 = col_star[j];
                    row_star[i] = j;
                    col_star[j] = i;
                    if i2 == NONE {
                        break;
                    }
                    i = i2;
                    j = prime[i2];
                }
                stars += 1;
                break;
            }
        }
    }
    // Rectangular: shift potentials so the unassigned columns' duals are zero.
    if let Some(shift) = (0..nc).find(|&j| col_star[j] == NONE).map(|j| v[j]) {
        v.iter_mut().for_each(|t| *t -= shift);
        u.iter_mut().for_each(|t| *t += shift);
    }
    Ok((row_star, u, v))
}
