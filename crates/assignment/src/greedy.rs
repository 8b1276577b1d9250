//! The greedy heuristic: repeatedly take the smallest entry whose row and column are free.

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::problem::{Cost, Problem};
use crate::{Assignment, AssignmentError, Sense};

/// From this many entries on the sort runs on all cores.
const PARALLEL_SORT_FROM: usize = 1 << 16;

/// The greedy heuristic: sort all allowed entries once (a sorted queue), then walk the queue
/// and take every entry whose row and column are both still free, until every line of the
/// shorter side is assigned.
///
/// **Tie-breaking**, in the caller's orientation: smaller cost first (larger when
/// maximising), then the smaller row index, then the smaller column index — i.e. row-major
/// order among equal values. Ties matter: on matrices with many equal entries an early tie
/// choice can force expensive entries later (see the crate's tests for a 6 x 6 example).
///
/// On `n x n` matrices of i.i.d. Exp(1) costs the expected greedy cost is `H_n` (the harmonic
/// number, `~ ln n`) against the optimum's `H_n^(2) -> pi^2/6`, so its approximation factor
/// grows like `ln n` (the seed's `lap-fig1` experiment, `warpath reproduce`).
///
/// # Complexity
/// `O(n m log(n m))` for an `n x m` matrix (`O(n^2 log n)` square): one sort of the `n m`
/// entries (parallel from 65 536 entries), then one linear pass. `O(n m)` memory.
///
/// # Errors
/// Input errors as [`jonker_volgenant`](crate::jonker_volgenant);
/// [`AssignmentError::Incomplete`] when forbidden pairs leave some line unassigned (an exact
/// solver may still find a complete assignment).
///
/// # Examples
/// ```
/// use assignment::{greedy, jonker_volgenant, Sense};
/// let c = ndarray::array![[1.0, 2.0], [2.0, 100.0]];
/// assert_eq!(greedy(c.view(), Sense::Minimize)?.cost, 101.0); // takes the 1 first
/// assert_eq!(jonker_volgenant(c.view(), Sense::Minimize)?.cost, 4.0);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn greedy<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
) -> Result<Assignment, AssignmentError> {
    Problem::solved(costs, sense, solve)
}

/// One allowed entry of the internal problem: (cost, index in the caller's row-major order,
/// internal row, internal column).
type Entry = (f64, u64, u32, u32);

/// Every allowed entry, sorted by cost, then by the caller's row-major order (so ties follow
/// the documented rule whether or not the problem was transposed internally).
fn sorted_entries(p: &Problem<'_>) -> Vec<Entry> {
    let (nr, nc) = (p.nr, p.nc);
    let orig_index = |i: usize, j: usize| -> u64 {
        if p.transposed {
            (j * nr + i) as u64
        } else {
            (i * nc + j) as u64
        }
    };
    let mut entries: Vec<Entry> = Vec::with_capacity(nr * nc);
    for i in 0..nr {
        for (j, &c) in p.row(i).iter().enumerate() {
            if c < f64::INFINITY {
                entries.push((c, orig_index(i, j), i as u32, j as u32));
            }
        }
    }
    let cmp = |a: &Entry, b: &Entry| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
    if entries.len() >= PARALLEL_SORT_FROM {
        entries.par_sort_unstable_by(cmp);
    } else {
        entries.sort_unstable_by(cmp);
    }
    entries
}

/// Greedy on the internal problem.
pub(crate) fn solve(p: &Problem<'_>) -> Result<Vec<usize>, AssignmentError> {
    walk(p, &sorted_entries(p))
}

/// The greedy pass over the sorted entries.
fn walk(p: &Problem<'_>, entries: &[Entry]) -> Result<Vec<usize>, AssignmentError> {
    let nr = p.nr;
    let mut x = vec![usize::MAX; nr];
    let mut col_used = vec![false; p.nc];
    let mut assigned = 0;
    for &(_, _, i, j) in entries {
        if assigned == nr {
            break;
        }
        let (i, j) = (i as usize, j as usize);
        if x[i] == usize::MAX && !col_used[j] {
            x[i] = j;
            col_used[j] = true;
            assigned += 1;
        }
    }
    if assigned < nr {
        return Err(AssignmentError::Incomplete {
            solver: "greedy",
            assigned,
            needed: nr,
        });
    }
    Ok(x)
}

/// The greedy heuristic that follows ties (the seed's proposal: "try all minimum positions
/// and keep the top `k` performing paths"): a beam of at most `k` partial assignments. Each
/// step, every path takes the smallest entry whose row and column it has left free; where
/// several such entries tie, it branches on each of them (in row-major order). Of all the
/// branches, the `k` with the smallest cost so far are kept (equal costs: earlier paths and
/// earlier tie entries first; paths holding the same pairs count once). The best complete
/// path is returned, compared with plain [`greedy`] too, so the result is **never worse than
/// `k = 1`**, which is exactly [`greedy`]. (A larger `k` is not always better than a smaller
/// one above 1: the beam ranks partial costs, not final ones.)
///
/// On costs without ties (continuous distributions) every `k` gives [`greedy`]'s assignment.
///
/// # Complexity
/// `O(n m log(n m))` for the sort (as [`greedy`]) plus `O(k n (n + m + s))` for the beam on
/// an `n x m` matrix, where `s` is the number of entries a path scans to collect its tied
/// minima (a few on most inputs, at most `n m`). `O(n m + k (n + m))` memory.
///
/// # Errors
/// As [`greedy`]; [`AssignmentError::BadOption`] when `k` is 0.
///
/// # Examples
/// The seed's 6 x 6 example: after 1, 6 and 9 two 25s tie in row 3; the one in column 6
/// leads to 174, the one in column 3 to 167.
/// ```
/// use assignment::{greedy, greedy_ties, Sense};
/// let c = ndarray::array![
///     [62.0, 31.0, 79.0, 6.0, 21.0, 37.0],
///     [45.0, 27.0, 23.0, 66.0, 9.0, 17.0],
///     [83.0, 59.0, 25.0, 38.0, 63.0, 25.0],
///     [1.0, 37.0, 53.0, 100.0, 80.0, 51.0],
///     [69.0, 72.0, 74.0, 32.0, 82.0, 31.0],
///     [34.0, 95.0, 61.0, 64.0, 100.0, 82.0],
/// ];
/// assert_eq!(greedy(c.view(), Sense::Minimize)?.cost, 167.0); // row-major: (3, 3) first
/// assert_eq!(greedy_ties(c.view(), Sense::Minimize, 1)?.cost, 167.0);
/// let mirrored = c.slice(ndarray::s![.., ..;-1]); // now the 25 leading to 174 comes first
/// assert_eq!(greedy(mirrored, Sense::Minimize)?.cost, 174.0);
/// assert_eq!(greedy_ties(mirrored, Sense::Minimize, 2)?.cost, 167.0);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn greedy_ties<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
    k: usize,
) -> Result<Assignment, AssignmentError> {
    let mut paths = greedy_tie_paths(costs, sense, k)?;
    Ok(paths.swap_remove(0))
}

/// Every complete path that [`greedy_ties`] ends with (its beam, and plain [`greedy`]'s
/// path), distinct, best first (equal costs: greedy's path first, then beam order). The
/// first is [`greedy_ties`]'s answer; with `k` at least the number of tie paths, the list
/// shows what every tie choice leads to.
///
/// # Complexity
/// As [`greedy_ties`].
///
/// # Errors
/// As [`greedy_ties`]; [`AssignmentError::Incomplete`] only when every path got stuck.
///
/// # Examples
/// ```
/// use assignment::{greedy_tie_paths, Sense};
/// let c = ndarray::array![[1.0, 1.0], [1.0, 5.0]];
/// let paths = greedy_tie_paths(c.view(), Sense::Minimize, 4)?;
/// let costs: Vec<f64> = paths.iter().map(|a| a.cost).collect();
/// assert_eq!(costs, [2.0, 6.0]); // taking (0, 1) first, then (0, 0) first
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn greedy_tie_paths<T: Cost>(
    costs: ArrayView2<'_, T>,
    sense: Sense,
    k: usize,
) -> Result<Vec<Assignment>, AssignmentError> {
    if k == 0 {
        return Err(AssignmentError::BadOption {
            name: "ties",
            value: 0,
            expected: "at least 1 (1 is plain greedy)",
        });
    }
    let p = Problem::new(costs, sense)?;
    let entries = sorted_entries(&p);
    let plain = walk(&p, &entries);
    let mut found: Vec<(f64, Vec<usize>)> = Vec::new();
    let stuck = match plain {
        Ok(x) => {
            found.push((path_cost(&p, &x), x));
            None
        }
        Err(e) => Some(e),
    };
    if k > 1 {
        for x in beam(&p, &entries, k) {
            if !found.iter().any(|(_, y)| *y == x) {
                found.push((path_cost(&p, &x), x));
            }
        }
    }
    if found.is_empty() {
        return Err(stuck.unwrap_or(AssignmentError::Incomplete {
            solver: "greedy",
            assigned: 0,
            needed: p.nr,
        }));
    }
    // Stable: equal costs keep greedy's path first, then the beam's order.
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    found.into_iter().map(|(_, x)| p.finish(&x, None)).collect()
}

/// The internal cost of a complete path.
fn path_cost(p: &Problem<'_>, x: &[usize]) -> f64 {
    x.iter().enumerate().map(|(i, &j)| p.at(i, j)).sum()
}

/// One partial assignment of the beam.
#[derive(Clone)]
struct Path {
    /// Column of each internal row (`usize::MAX` while free).
    x: Vec<usize>,
    col_used: Vec<bool>,
    /// Internal cost so far.
    cost: f64,
    /// Every entry before this one in the sorted order is covered on this path.
    cursor: usize,
}

impl Path {
    fn is_free(&self, e: &Entry) -> bool {
        self.x[e.2 as usize] == usize::MAX && !self.col_used[e.3 as usize]
    }
}

/// The beam of [`greedy_tie_paths`]: the complete paths left after `p.nr` steps, best first
/// (empty when every path got stuck on forbidden pairs).
fn beam(p: &Problem<'_>, entries: &[Entry], k: usize) -> Vec<Vec<usize>> {
    let mut paths = vec![Path {
        x: vec![usize::MAX; p.nr],
        col_used: vec![false; p.nc],
        cost: 0.0,
        cursor: 0,
    }];
    for _ in 0..p.nr {
        // Each path's tied minima: at most k of them matter (children of one parent share
        // their new cost, so its later ties rank after its first k).
        let mut cands: Vec<(f64, usize, usize)> = Vec::new(); // (new cost, parent, entry)
        for (pi, path) in paths.iter_mut().enumerate() {
            while path.cursor < entries.len() && !path.is_free(&entries[path.cursor]) {
                path.cursor += 1;
            }
            let Some(first) = entries.get(path.cursor) else {
                continue; // stuck: no free allowed entry
            };
            let v = first.0;
            let mut taken = 0;
            for (ei, e) in entries[path.cursor..].iter().enumerate() {
                if e.0 != v || taken == k {
                    break;
                }
                if path.is_free(e) {
                    cands.push((path.cost + v, pi, path.cursor + ei));
                    taken += 1;
                }
            }
        }
        // Stable sort: equal costs keep parent order, then tie order.
        cands.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut next: Vec<Path> = Vec::with_capacity(k);
        for (cost, pi, ei) in cands {
            if next.len() == k {
                break;
            }
            let (_, _, i, j) = entries[ei];
            let (i, j) = (i as usize, j as usize);
            let parent = &paths[pi];
            // The same pairs reached in another order: one path.
            let same = next.iter().any(|q| {
                q.x[i] == j
                    && q.x
                        .iter()
                        .zip(&parent.x)
                        .enumerate()
                        .all(|(r, (&a, &b))| a == b || r == i)
            });
            if same {
                continue;
            }
            let mut child = parent.clone();
            child.x[i] = j;
            child.col_used[j] = true;
            child.cost = cost;
            next.push(child);
        }
        if next.is_empty() {
            return Vec::new();
        }
        paths = next;
    }
    paths.into_iter().map(|q| q.x).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::int_matrix;
    use crate::{hungarian, jonker_volgenant};
    use ndarray::{Array2, array, s};

    /// The seed's 6 x 6 example (1-based in the seed: the 25s at (3, 3) and (3, 6) tie).
    fn seed_matrix() -> Array2<f64> {
        crate::generate::seed_6x6()
    }

    #[test]
    fn seed_example_both_tie_choices_and_the_optimum() {
        let c = seed_matrix();
        let paths = greedy_tie_paths(c.view(), Sense::Minimize, 8).unwrap();
        let got: Vec<(f64, Option<usize>)> =
            paths.iter().map(|a| (a.cost, a.row_to_col[2])).collect();
        // 25 at (3, 3) -> 167, 25 at (3, 6) -> 174 (0-based columns 2 and 5).
        assert_eq!(got, [(167.0, Some(2)), (174.0, Some(5))]);
        let optimum = hungarian(c.view(), Sense::Minimize).unwrap().cost;
        assert_eq!(
            optimum,
            jonker_volgenant(c.view(), Sense::Minimize).unwrap().cost
        );
        assert!(optimum < 167.0, "{optimum}");
        // Both orders of the tie: K = 1 follows row-major order, K >= 2 always finds 167.
        let mirrored = c.slice(s![.., ..;-1]);
        for k in 1..=8 {
            assert_eq!(
                greedy_ties(c.view(), Sense::Minimize, k).unwrap().cost,
                167.0
            );
            let want = if k == 1 { 174.0 } else { 167.0 };
            assert_eq!(
                greedy_ties(mirrored, Sense::Minimize, k).unwrap().cost,
                want,
                "k={k}"
            );
        }
        // Maximising the negated matrix is the same problem.
        let neg = c.mapv(|v| -v);
        assert_eq!(
            greedy_ties(neg.view(), Sense::Maximize, 2).unwrap().cost,
            -167.0
        );
    }

    #[test]
    fn one_path_is_plain_greedy_and_more_are_never_worse() {
        for seed in 0..60u64 {
            let (r, c) = (2 + (seed % 7) as usize, 2 + (seed / 7 % 8) as usize);
            let m = int_matrix(r, c, 1 + (seed % 4) as i64, seed);
            for sense in [Sense::Minimize, Sense::Maximize] {
                let g = greedy(m.view(), sense).unwrap();
                assert_eq!(greedy_ties(m.view(), sense, 1).unwrap(), g, "seed {seed}");
                let exact = jonker_volgenant(m.view(), sense).unwrap().cost;
                for k in [2, 3, 8, 64] {
                    let t = greedy_ties(m.view(), sense, k).unwrap();
                    let better = match sense {
                        Sense::Minimize => t.cost <= g.cost && t.cost >= exact,
                        Sense::Maximize => t.cost >= g.cost && t.cost <= exact,
                    };
                    assert!(
                        better,
                        "seed {seed} k {k}: {} vs greedy {} exact {exact}",
                        t.cost, g.cost
                    );
                    // A valid assignment whose cost is its entries' sum.
                    let (rows, cols) = t.pairs();
                    let sum: f64 = rows
                        .iter()
                        .zip(&cols)
                        .map(|(&i, &j)| m[[i, j]] as f64)
                        .sum();
                    assert_eq!(sum, t.cost);
                    let mut seen = cols.clone();
                    seen.sort_unstable();
                    seen.dedup();
                    assert_eq!((seen.len(), rows.len()), (r.min(c), r.min(c)));
                }
            }
        }
    }

    #[test]
    fn ties_of_an_all_equal_matrix_collapse_to_one_path() {
        let m = Array2::from_elem((5, 5), 3.0);
        let paths = greedy_tie_paths(m.view(), Sense::Minimize, 16).unwrap();
        assert!(paths.iter().all(|a| a.cost == 15.0));
        // Paths differ as assignments (the same pairs reached in another order count once).
        for (a, b) in paths
            .iter()
            .enumerate()
            .flat_map(|(i, a)| paths[i + 1..].iter().map(move |b| (a, b)))
        {
            assert_ne!(a.row_to_col, b.row_to_col);
        }
        assert_eq!(paths[0], greedy(m.view(), Sense::Minimize).unwrap());
    }

    #[test]
    fn zero_paths_is_an_error_and_stuck_paths_are_reported() {
        let c = array![[1.0, 2.0], [3.0, 4.0]];
        assert!(matches!(
            greedy_ties(c.view(), Sense::Minimize, 0),
            Err(AssignmentError::BadOption {
                name: "ties",
                value: 0,
                ..
            })
        ));
        // Greedy takes the 1 and is stuck; one tie path avoids it.
        let inf = f64::INFINITY;
        let c = array![[1.0, 1.0], [1.0, inf]];
        assert!(matches!(
            greedy(c.view(), Sense::Minimize),
            Err(AssignmentError::Incomplete { .. })
        ));
        assert!(greedy_ties(c.view(), Sense::Minimize, 1).is_err());
        assert_eq!(greedy_ties(c.view(), Sense::Minimize, 2).unwrap().cost, 2.0);
        let c = array![[1.0, inf], [2.0, inf]];
        assert!(matches!(
            greedy_ties(c.view(), Sense::Minimize, 4),
            Err(AssignmentError::Incomplete { .. })
        ));
    }
}
