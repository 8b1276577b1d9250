//! Sparse linear assignment: a minimum-cost full matching of a bipartite graph given as a
//! compressed sparse row (CSR) or column (CSC) matrix, whose stored entries are the edges
//! (scipy's `scipy.sparse.csgraph.min_weight_full_bipartite_matching`).
//!
//! The solver is LAPJVsp (Jonker and Volgenant's shortest augmenting paths for sparse
//! matrices, the algorithm scipy ports): column reduction with reduction transfer and two
//! rounds of augmenting row reduction on square problems, then one Dijkstra search per free
//! row over the stored entries only, with a binary heap instead of LAPJVsp's linear scan of
//! the reached columns and a reset of only the columns a search touched. Infeasibility is
//! found by the searches themselves (a free row that reaches no free column). Square problems
//! of at least 2048 rows start instead from the prices of Bertsekas' auction (after a
//! Hopcroft–Karp check that a perfect matching exists): the rows the auction left exactly at
//! their least reduced cost keep their column, and the same exact augmentations assign the
//! others.
//!
//! ```
//! use assignment::sparse::{min_weight_full_matching, Csr};
//! use assignment::Sense;
//! // scipy's example: [[3, 3, 6], [4, 3, 5], [10, 1, 8]]
//! let indptr = [0, 3, 6, 9];
//! let indices = [0, 1, 2, 0, 1, 2, 0, 1, 2];
//! let data = [3.0, 3.0, 6.0, 4.0, 3.0, 5.0, 10.0, 1.0, 8.0];
//! let m = Csr::new(3, 3, &indptr[..], &indices[..], &data[..])?;
//! let a = min_weight_full_matching(&m, Sense::Minimize)?;
//! assert_eq!(a.row_to_col, vec![Some(0), Some(2), Some(1)]);
//! assert_eq!(a.cost, 9.0);
//! # Ok::<(), assignment::AssignmentError>(())
//! ```

mod lapjvsp;
mod matching;
#[cfg(test)]
mod tests;
mod verify;

pub use verify::verify;

use std::borrow::Cow;

use crate::num::{I64_FORBIDDEN, KeyedElem};
use crate::problem::{Cost, Direct, TypedSlice, refusal};
use crate::{Assignment, AssignmentError, CostClass, Sense};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for u64 {}
    impl Sealed for i64 {}
    impl Sealed for usize {}
}

/// An integer type for the row pointers and column indices of a sparse matrix: `u32`, `i32`,
/// `u64`, `i64` or `usize` (scipy's index arrays are `int32` or `int64`). Sealed.
pub trait Index: sealed::Sealed + Copy + Send + Sync + std::fmt::Debug + 'static {
    /// The value as an index, `None` when it is negative or beyond `usize`.
    fn to_index(self) -> Option<usize>;
    /// The value as an index, for values already checked.
    #[doc(hidden)]
    fn ix(self) -> usize;
}

macro_rules! index_impl {
    ($($t:ty),*) => {$(
        impl Index for $t {
            #[inline(always)]
            fn to_index(self) -> Option<usize> {
                usize::try_from(self).ok()
            }
            #[inline(always)]
            fn ix(self) -> usize {
                self as usize
            }
        }
    )*};
}
index_impl!(u32, i32, u64, i64, usize);

/// A borrowed sparse matrix: CSR arrays (or CSC arrays, read as the CSR of the transpose),
/// checked on construction.
#[derive(Debug, Clone, Copy)]
pub struct Csr<'a, T, I = usize> {
    rows: usize,
    cols: usize,
    indptr: &'a [I],
    indices: &'a [I],
    data: &'a [T],
    /// The arrays hold the transpose (they came in as CSC).
    transposed: bool,
}

impl<'a, T: Cost, I: Index> Csr<'a, T, I> {
    /// A `rows x cols` CSR matrix: row `i`'s entries are `data[indptr[i]..indptr[i + 1]]`, in
    /// columns `indices[..]` (in any order; a repeated column is a parallel edge, the cheaper
    /// one counts). Every stored entry is an edge, zeros included; a forbidding infinity
    /// (`+inf` minimising, `-inf` maximising) or `None` is no edge.
    ///
    /// # Complexity
    /// `O(rows + nnz)` time to check the arrays, no allocation.
    ///
    /// # Errors
    /// [`AssignmentError::InvalidSparse`] when `indptr` does not have `rows + 1`
    /// non-decreasing entries from 0 to `nnz`, `indices` and `data` differ in length, or a
    /// column index is not below `cols`.
    ///
    /// # Examples
    /// ```
    /// use assignment::sparse::Csr;
    /// let m = Csr::new(2, 3, &[0u32, 1, 3][..], &[2u32, 0, 1][..], &[5i64, 1, 2][..])?;
    /// assert_eq!((m.rows(), m.cols(), m.nnz()), (2, 3, 3));
    /// assert!(Csr::new(2, 3, &[0u32, 1, 3][..], &[2u32, 0, 3][..], &[5i64, 1, 2][..]).is_err());
    /// # Ok::<(), assignment::AssignmentError>(())
    /// ```
    pub fn new(
        rows: usize,
        cols: usize,
        indptr: &'a [I],
        indices: &'a [I],
        data: &'a [T],
    ) -> Result<Self, AssignmentError> {
        Self::checked(rows, cols, indptr, indices, data, false)
    }

    /// A `rows x cols` matrix from CSC arrays: column `j`'s entries are
    /// `data[indptr[j]..indptr[j + 1]]`, in rows `indices[..]`. No copy is made.
    ///
    /// # Complexity
    /// `O(cols + nnz)` time, no allocation.
    ///
    /// # Errors
    /// As [`Csr::new`], with rows and columns exchanged.
    ///
    /// # Examples
    /// ```
    /// use assignment::sparse::{min_weight_full_matching, Csr};
    /// // [[1, 7], [2, 9], [4, 3]] by columns
    /// let m = Csr::from_csc(3, 2, &[0, 3, 6][..], &[0, 1, 2, 0, 1, 2][..], &[1, 2, 4, 7, 9, 3][..])?;
    /// let a = min_weight_full_matching(&m, assignment::Sense::Minimize)?;
    /// assert_eq!(a.row_to_col, vec![Some(0), None, Some(1)]);
    /// # Ok::<(), assignment::AssignmentError>(())
    /// ```
    pub fn from_csc(
        rows: usize,
        cols: usize,
        indptr: &'a [I],
        indices: &'a [I],
        data: &'a [T],
    ) -> Result<Self, AssignmentError> {
        Self::checked(rows, cols, indptr, indices, data, true)
    }

    /// The matrix of [`Csr::new`] (`transposed` false) or [`Csr::from_csc`] (true), its arrays
    /// checked as compressed lines of the other side.
    fn checked(
        rows: usize,
        cols: usize,
        indptr: &'a [I],
        indices: &'a [I],
        data: &'a [T],
        transposed: bool,
    ) -> Result<Self, AssignmentError> {
        let (lines, width) = if transposed {
            (cols, rows)
        } else {
            (rows, cols)
        };
        check_arrays(lines, width, indptr, indices, data.len())?;
        Ok(Csr {
            rows,
            cols,
            indptr,
            indices,
            data,
            transposed,
        })
    }

    /// Rows of the matrix.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the matrix.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.data.len()
    }
}

/// The checks of [`Csr::new`] on arrays of `lines` compressed lines of `width` entries.
fn check_arrays<I: Index>(
    lines: usize,
    width: usize,
    indptr: &[I],
    indices: &[I],
    nnz: usize,
) -> Result<(), AssignmentError> {
    let bad = |m: String| Err(AssignmentError::InvalidSparse(m));
    if indptr.len() != lines + 1 {
        return bad(format!(
            "the row pointers have {} entries, {} expected (one per row, plus one)",
            indptr.len(),
            lines + 1
        ));
    }
    if indices.len() != nnz {
        return bad(format!("{} column indices for {nnz} values", indices.len()));
    }
    let mut prev = 0usize;
    for (k, p) in indptr.iter().enumerate() {
        match p.to_index() {
            Some(p) if p >= prev && p <= nnz && (k > 0 || p == 0) => prev = p,
            _ => {
                return bad(format!(
                    "row pointer {k} is {p:?}: they must rise from 0 to the number of entries ({nnz})"
                ));
            }
        }
    }
    if prev != nnz {
        return bad(format!(
            "the last row pointer is {prev}, not the number of entries ({nnz})"
        ));
    }
    if let Some((k, j)) = indices
        .iter()
        .enumerate()
        .find(|(_, j)| j.to_index().is_none_or(|j| j >= width))
    {
        return bad(format!("index {k} is {j:?}, outside 0..{width}"));
    }
    Ok(())
}

/// The internal problem: `nr <= nc` rows of CSR entries in element type `E`, minimised (the
/// caller's entries negated when maximising), forbidden entries (`+inf`, [`I64_FORBIDDEN`])
/// skipped by the solver.
#[derive(Debug)]
pub(crate) struct SparseProblem<'a, E: Clone, I: Clone> {
    pub(crate) nr: usize,
    pub(crate) nc: usize,
    pub(crate) indptr: Cow<'a, [I]>,
    pub(crate) indices: Cow<'a, [I]>,
    pub(crate) data: Cow<'a, [E]>,
    /// Internal rows are the caller's columns.
    pub(crate) transposed: bool,
    pub(crate) negated: bool,
    /// Added to every internal entry after the negation (see `Problem::offset`).
    pub(crate) offset: i64,
}

impl<E: KeyedElem, I: Index> SparseProblem<'_, E, I> {
    /// Entries of internal row `i`: `(column, cost)` pairs.
    #[inline]
    pub(crate) fn row(&self, i: usize) -> impl Iterator<Item = (usize, E)> + '_ {
        let (a, b) = (self.indptr[i].ix(), self.indptr[i + 1].ix());
        self.indices[a..b]
            .iter()
            .zip(&self.data[a..b])
            .map(|(j, &c)| (j.ix(), c))
    }
}

/// Solves the linear assignment problem on a sparse matrix: a matching of the stored entries
/// (the edges of a bipartite graph) that covers every row when there are no more rows than
/// columns, else every column, and has the least total cost (the greatest with
/// [`Sense::Maximize`]). This is scipy's `min_weight_full_bipartite_matching`.
///
/// The entries are read in their own type: `f32`, `i32` and `i64` are not converted to
/// `f64`, and integers are solved in exact integer arithmetic (as in
/// [`jonker_volgenant`](crate::jonker_volgenant)). The matrix is copied only when it has
/// more rows than columns (to transpose it) or is maximised (to negate it).
///
/// # Complexity
/// `O(nnz log n)` per shortest-path search, one search per row left unassigned by the
/// initialisation (in the worst case `O(n nnz log n)`, typically far less); the warm start of
/// square problems adds `O(nnz sqrt(n))` for the matching check and the auction's bids
/// (`O(n nnz log(n C))` worst case, far fewer on random data). `O(n)` auxiliary memory plus
/// the heap of one search (at most its reached entries), `O(nnz)` for the warm start's copy of
/// the entries as `f64`, and the copy above when one is made.
///
/// # Errors
/// [`AssignmentError::Infeasible`] when no such matching exists (scipy's "no full matching
/// exists"), [`AssignmentError::InvalidCost`] for `NaN` and the infinity that would always
/// be optimal, [`AssignmentError::CostOutOfRange`] for integers beyond 2^53,
/// [`AssignmentError::CostOverflow`] when the optimal total is beyond `f64`,
/// [`AssignmentError::OutOfMemory`] when the copy does not fit.
///
/// # Examples
/// ```
/// use assignment::sparse::{min_weight_full_matching, Csr};
/// use assignment::{AssignmentError, Sense};
/// // 2 x 3, rows [0 . 5] and [1 2 .]: every row is matched
/// let m = Csr::new(2, 3, &[0u32, 2, 4][..], &[0u32, 2, 0, 1][..], &[0.0, 5.0, 1.0, 2.0][..])?;
/// let a = min_weight_full_matching(&m, Sense::Minimize)?;
/// assert_eq!((a.row_to_col.clone(), a.cost), (vec![Some(0), Some(1)], 2.0));
/// assert_eq!(min_weight_full_matching(&m, Sense::Maximize)?.cost, 7.0);
/// // a row without entries has no match
/// let e = Csr::new(2, 2, &[0u32, 2, 2][..], &[0u32, 1][..], &[1.0, 1.0][..])?;
/// assert_eq!(min_weight_full_matching(&e, Sense::Minimize), Err(AssignmentError::Infeasible));
/// # Ok::<(), AssignmentError>(())
/// ```
pub fn min_weight_full_matching<T: Cost, I: Index>(
    m: &Csr<'_, T, I>,
    sense: Sense,
) -> Result<Assignment, AssignmentError> {
    min_weight_full_matching_with_progress(m, sense, &mut |_| {})
}

/// How far [`min_weight_full_matching_with_progress`] has come: rows (internal rows: the
/// shorter side) matched so far, of all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Rows matched (the initialisation matches most; each search one more).
    pub matched: usize,
    /// Rows to match: the shorter side of the matrix.
    pub rows: usize,
}

/// [`min_weight_full_matching`], calling `progress` after the initialisation and after each
/// shortest-path search (a long solve spends most of its time in its last searches).
///
/// # Complexity
/// As [`min_weight_full_matching`].
///
/// # Errors
/// As [`min_weight_full_matching`].
///
/// # Examples
/// ```
/// use assignment::sparse::{min_weight_full_matching_with_progress, Csr};
/// let m = Csr::new(2, 2, &[0, 2, 4][..], &[0, 1, 0, 1][..], &[1.0, 2.0, 2.0, 1.0][..])?;
/// let mut last = None;
/// let a = min_weight_full_matching_with_progress(&m, assignment::Sense::Minimize, &mut |p| last = Some(p))?;
/// assert_eq!(a.cost, 2.0);
/// assert_eq!(last.map(|p| (p.matched, p.rows)), Some((2, 2)));
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn min_weight_full_matching_with_progress<T: Cost, I: Index>(
    m: &Csr<'_, T, I>,
    sense: Sense,
    progress: &mut dyn FnMut(Progress),
) -> Result<Assignment, AssignmentError> {
    match T::typed_slice(m.data) {
        TypedSlice::F64(d) => solve_direct(m, d, sense, progress),
        TypedSlice::F32(d) => solve_direct(m, d, sense, progress),
        TypedSlice::I64(d) => solve_direct(m, d, sense, progress),
        TypedSlice::I32(d) => solve_direct(m, d, sense, progress),
        TypedSlice::OptI64(d) => {
            // `None` is a missing edge: the internal forbidden value, whatever the sense.
            let limit = 1i64 << 53;
            let (mut min, mut max) = (i64::MAX, i64::MIN);
            check_entries_memory::<i64>(d.len(), "a converted copy")?;
            let mut data = Vec::with_capacity(d.len());
            for (k, v) in d.iter().enumerate() {
                data.push(match *v {
                    None => I64_FORBIDDEN,
                    Some(x) if x < -limit || x > limit => {
                        let (row, col) = position(m, k);
                        return Err(AssignmentError::CostOutOfRange {
                            row,
                            col,
                            value: format!("{v:?}"),
                        });
                    }
                    Some(x) => {
                        let x = if sense == Sense::Maximize { -x } else { x };
                        (min, max) = (min.min(x), max.max(x));
                        x
                    }
                });
            }
            let stats = if min > max {
                (0.0, 0.0)
            } else {
                (min as f64, max as f64)
            };
            build_and_run(
                m,
                Cow::Owned(data),
                sense == Sense::Maximize,
                0,
                stats,
                progress,
            )
        }
    }
}

/// The caller's `(row, col)` of stored entry `k`.
fn position<T, I: Index>(m: &Csr<'_, T, I>, k: usize) -> (usize, usize) {
    let line = m.indptr.partition_point(|p| p.ix() <= k) - 1;
    let other = m.indices[k].ix();
    if m.transposed {
        (other, line)
    } else {
        (line, other)
    }
}

/// The error for stored entry `k`, `value`, which `sense` refuses, at the caller's position.
fn refused_entry<T, I: Index, V: Cost>(
    m: &Csr<'_, T, I>,
    k: usize,
    value: V,
    sense: Sense,
) -> AssignmentError {
    let (row, col) = position(m, k);
    refusal(value, row, col, sense).expect("a refused entry")
}

/// Refuses a copy of `nnz` entries of `E` that does not fit.
fn check_entries_memory<E>(nnz: usize, what: &str) -> Result<(), AssignmentError> {
    crate::types::check_memory(
        || format!("{what} of the {nnz} sparse entries"),
        (nnz as u64).saturating_mul(std::mem::size_of::<E>() as u64),
    )
}

/// Validates the entries (`NaN`, the always-optimal infinity, integers beyond 2^53), then
/// builds the internal problem in `E` and solves it.
fn solve_direct<T, I: Index, E: Direct + KeyedElem>(
    m: &Csr<'_, T, I>,
    data: &[E],
    sense: Sense,
    progress: &mut dyn FnMut(Progress),
) -> Result<Assignment, AssignmentError> {
    let (bad, mut min, mut max) = E::scan(data, sense);
    if bad {
        let k = data
            .iter()
            .position(|v| {
                matches!(
                    v.classify_cost(sense),
                    CostClass::Invalid(_) | CostClass::OutOfRange
                )
            })
            .expect("a refused entry");
        return Err(refused_entry(m, k, data[k], sense));
    }
    if min > max {
        (min, max) = (0.0, 0.0);
    }
    let negated = sense == Sense::Maximize;
    let offset = if negated { E::MAX_OFFSET } else { 0 };
    if negated {
        (min, max) = (offset as f64 - max, offset as f64 - min);
    }
    let data: Cow<'_, [E]> = if negated {
        check_entries_memory::<E>(data.len(), "a negated copy")?;
        Cow::Owned(data.iter().map(|&c| c.internal(sense)).collect())
    } else {
        Cow::Borrowed(data)
    };
    build_and_run(m, data, negated, offset, (min, max), progress)
}

/// The internal problem (transposed when the caller's matrix has more rows than columns),
/// solved in `i64` when integer entries fit the checked range, else in `f64`.
fn build_and_run<T, I: Index, E: KeyedElem>(
    m: &Csr<'_, T, I>,
    data: Cow<'_, [E]>,
    negated: bool,
    offset: i64,
    (min, max): (f64, f64),
    progress: &mut dyn FnMut(Progress),
) -> Result<Assignment, AssignmentError> {
    let (lines, width) = if m.transposed {
        (m.cols, m.rows)
    } else {
        (m.rows, m.cols)
    };
    let magnitude = min.abs().max(max.abs());
    let integer_ok =
        magnitude * 4.0 * (width.max(lines) as f64 + 2.0) < crate::num::I64_RANGE as f64 / 2.0;
    if lines <= width {
        let p = SparseProblem {
            nr: lines,
            nc: width,
            indptr: Cow::Borrowed(m.indptr),
            indices: Cow::Borrowed(m.indices),
            data,
            transposed: m.transposed,
            negated,
            offset,
        };
        lapjvsp::run(&p, integer_ok, progress)
    } else {
        let p = transpose(
            lines,
            width,
            m.indptr,
            m.indices,
            &data,
            !m.transposed,
            negated,
            offset,
        )?;
        lapjvsp::run(&p, integer_ok, progress)
    }
}

/// The CSR of the transpose of a `lines x width` CSR, with `usize` indices.
#[allow(clippy::too_many_arguments)]
fn transpose<I: Index, E: KeyedElem>(
    lines: usize,
    width: usize,
    indptr: &[I],
    indices: &[I],
    data: &[E],
    transposed: bool,
    negated: bool,
    offset: i64,
) -> Result<SparseProblem<'static, E, usize>, AssignmentError> {
    let nnz = data.len();
    crate::types::check_memory(
        || format!("a transposed copy of the {nnz} sparse entries"),
        (nnz * (std::mem::size_of::<E>() + 8) + (width + 1) * 8) as u64,
    )?;
    let mut ptr = vec![0usize; width + 1];
    for j in indices {
        ptr[j.ix() + 1] += 1;
    }
    for k in 0..width {
        ptr[k + 1] += ptr[k];
    }
    let mut next = ptr.clone();
    let mut idx = vec![0usize; nnz];
    let mut val = vec![E::default(); nnz];
    for i in 0..lines {
        for t in indptr[i].ix()..indptr[i + 1].ix() {
            let j = indices[t].ix();
            idx[next[j]] = i;
            val[next[j]] = data[t];
            next[j] += 1;
        }
    }
    Ok(SparseProblem {
        nr: width,
        nc: lines,
        indptr: Cow::Owned(ptr),
        indices: Cow::Owned(idx),
        data: Cow::Owned(val),
        transposed,
        negated,
        offset,
    })
}

/// CSR arrays for the auction: `indptr`, `indices` and `f64` costs.
type AuctionCsr = (Vec<u64>, Vec<u32>, Vec<f64>);

/// The CSR arrays the auction takes (`indptr`, `indices`, `f64` costs) of `n` rows of at most
/// `nnz` entries in all: `fill(i, row)` pushes row `i`'s `(column, cost)` entries (or fails),
/// which are then sorted, a repeated column kept once at its least cost.
pub(super) fn auction_rows<X>(
    n: usize,
    nnz: usize,
    mut fill: impl FnMut(usize, &mut Vec<(u32, f64)>) -> Result<(), X>,
) -> Result<AuctionCsr, X> {
    let mut indptr = Vec::with_capacity(n + 1);
    let mut indices: Vec<u32> = Vec::with_capacity(nnz);
    let mut costs: Vec<f64> = Vec::with_capacity(nnz);
    let mut row: Vec<(u32, f64)> = Vec::new();
    indptr.push(0u64);
    for i in 0..n {
        row.clear();
        fill(i, &mut row)?;
        row.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        row.dedup_by_key(|e| e.0);
        indices.extend(row.iter().map(|e| e.0));
        costs.extend(row.iter().map(|e| e.1));
        indptr.push(indices.len() as u64);
    }
    Ok((indptr, indices, costs))
}

/// Solves a sparse square problem with Bertsekas' auction and epsilon scaling on the stored
/// entries, on the CPU or the GPU (one warp per bidder over its row's entries): the sparse
/// form of [`auction`](crate::auction), with the same accuracy rules (exactly optimal for
/// integer costs whose scaled prices stay below 2^52, else within
/// [`AUCTION_FLOAT_GAP`](crate::AUCTION_FLOAT_GAP) of the range times `n`). A repeated
/// column in a row counts once, at its best cost.
///
/// The auction only terminates when a perfect matching exists, so one is looked for first
/// (Hopcroft–Karp, `O(nnz sqrt(n))`); there is none: [`AssignmentError::Infeasible`].
/// [`min_weight_full_matching`] is the exact solver for any element type, rectangular
/// matrices included; this one is for GPUs.
///
/// # Complexity
/// `O(nnz log(nnz))` to sort the rows and `O(nnz sqrt(n))` for the feasibility check, then
/// `O(n nnz log(n C))` bids in the worst case for integer costs of range `C` (far fewer on
/// random data); `O(nnz + n)` memory (the entries as `f64` benefits).
///
/// # Errors
/// [`AssignmentError::NotSquare`] for a rectangular matrix, the entry errors of
/// [`min_weight_full_matching`], [`AssignmentError::Infeasible`], and
/// [`AssignmentError::Gpu`] for a GPU failure or `Exec::Cuda` without a GPU.
///
/// # Examples
/// ```
/// use assignment::sparse::{auction, Csr};
/// use assignment::Sense;
/// use gpu_runtime::Exec;
/// let data = [3, 3, 6, 4, 3, 5, 10, 1, 8];
/// let m = Csr::new(3, 3, &[0, 3, 6, 9][..], &[0, 1, 2, 0, 1, 2, 0, 1, 2][..], &data[..])?;
/// let a = auction(&m, Sense::Minimize, Exec::Cpu)?;
/// assert_eq!((a.row_to_col, a.cost), (vec![Some(0), Some(2), Some(1)], 9.0));
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn auction<T: Cost, I: Index>(
    m: &Csr<'_, T, I>,
    sense: Sense,
    exec: gpu_runtime::Exec,
) -> Result<Assignment, AssignmentError> {
    if m.rows != m.cols {
        return Err(AssignmentError::NotSquare {
            rows: m.rows,
            cols: m.cols,
            solver: "the sparse auction",
        });
    }
    let n = m.rows;
    if n >= u32::MAX as usize {
        return Err(AssignmentError::TooLarge {
            n,
            limit: u32::MAX as usize - 1,
        });
    }
    // The internal rows (the caller's columns for CSC arrays) at their internal costs;
    // validation as in min_weight_full_matching.
    let (indptr, indices, costs) = auction_rows(n, m.data.len(), |i, row| {
        for k in m.indptr[i].ix()..m.indptr[i + 1].ix() {
            match m.data[k].classify_cost(sense) {
                CostClass::Finite(v) => {
                    let v = if sense == Sense::Maximize { -v } else { v };
                    row.push((m.indices[k].ix() as u32, v));
                }
                CostClass::Forbidden => {}
                CostClass::Invalid(_) | CostClass::OutOfRange => {
                    return Err(refused_entry(m, k, m.data[k], sense));
                }
            }
        }
        Ok(())
    })?;
    if matching::maximum_matching(n, n, &indptr, &indices) < n {
        return Err(AssignmentError::Infeasible);
    }
    let setup = crate::auction::setup_csr(n, indptr, indices, &costs);
    let x = crate::auction::solve_csr(&setup, exec)?;
    // The caller's cost: each row's chosen entry (the least internal cost of its column).
    let mut total = 0.0;
    for (i, &j) in x.iter().enumerate() {
        let (a, b) = (setup.indptr[i] as usize, setup.indptr[i + 1] as usize);
        let k = a + setup.indices[a..b]
            .binary_search(&(j as u32))
            .expect("the auction assigns stored entries");
        total += costs[k];
    }
    let cost = if sense == Sense::Maximize {
        -total
    } else {
        total
    };
    let row_to_col = if m.transposed {
        let mut out = vec![None; n];
        for (i, &j) in x.iter().enumerate() {
            out[j] = Some(i);
        }
        out
    } else {
        x.into_iter().map(Some).collect()
    };
    Ok(Assignment {
        row_to_col,
        cost,
        duals: None,
    })
}
