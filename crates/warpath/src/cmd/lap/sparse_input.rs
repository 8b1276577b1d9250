//! Sparse cost matrices for `warpath lap`: the files warpath-io reads (`.mtx`, scipy's `.npz`;
//! see `warpath_io::sparse`), a generated sparse matrix, and the dense form of one, when it
//! fits.

use std::path::Path;

use anyhow::{Context, Result};
use assignment::ndarray::Array2;
use warpath_io::sparse::SparseMatrix;

/// The stored values: integers stay integers (solved in integer arithmetic).
pub(super) use warpath_io::sparse::SparseValues as Values;

/// A sparse cost matrix: warpath-io's CSR arrays (its fields read through `Deref`), with what
/// the solvers need of it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SparseInput(SparseMatrix);

impl std::ops::Deref for SparseInput {
    type Target = SparseMatrix;
    fn deref(&self) -> &SparseMatrix {
        &self.0
    }
}

impl SparseInput {
    /// Whether the sparse solver works in integer arithmetic here (integer entries small
    /// enough: the rule of `assignment::integer_arithmetic`).
    pub(super) fn integer_arithmetic(&self) -> bool {
        match &self.values {
            Values::F64(_) => false,
            Values::I64(v) => {
                let big = v.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0) as f64;
                big <= (1u64 << 53) as f64
                    && big * 4.0 * (self.rows.max(self.cols) as f64 + 2.0) < (1u64 << 55) as f64
            }
        }
    }

    /// The dense matrix, `+inf` where there is no entry (`-inf` when `maximize`, so that the
    /// missing pairs stay forbidden), refused when it does not fit in memory.
    pub(super) fn densify(&self, maximize: bool) -> Result<Array2<f64>> {
        let bytes = (self.rows as u64)
            .saturating_mul(self.cols as u64)
            .saturating_mul(8);
        if let Some(available) = gpu_runtime::host_available_memory()
            && bytes > available
        {
            return Err(assignment::AssignmentError::OutOfMemory {
                what: format!(
                    "the dense {} x {} form of this sparse matrix ({} entries)",
                    self.rows,
                    self.cols,
                    self.nnz()
                ),
                needed: bytes,
                available,
            })
            .context("give --sparse to solve it as a sparse matrix");
        }
        let missing = if maximize {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        let mut d = Array2::from_elem((self.rows, self.cols), missing);
        for i in 0..self.rows {
            for k in self.indptr[i]..self.indptr[i + 1] {
                let j = self.indices[k];
                let v = self.values.at(k);
                // parallel entries: the better one counts, as in the sparse solver
                let better = if maximize {
                    v > d[[i, j]]
                } else {
                    v < d[[i, j]]
                };
                if better || d[[i, j]] == missing {
                    d[[i, j]] = v;
                }
            }
        }
        Ok(d)
    }
}

/// Whether `path` holds a sparse matrix: a `.mtx` or `.npz` name, or the Matrix Market
/// banner / a zip archive's signature at its start.
pub(super) fn is_sparse_file(path: &Path) -> bool {
    warpath_io::sparse::is_sparse_file(path)
}

/// Reads a `.mtx` or `.npz` sparse matrix (by content) through warpath-io.
pub(super) fn read_sparse(path: &Path) -> Result<SparseInput> {
    Ok(SparseInput(warpath_io::sparse::read_sparse(path)?))
}

/// A generated `n x n` sparse matrix: `per_row` random columns per row with costs uniform in
/// `[1, 100)` (integers in `[1, 100)` when `integers`), plus the diagonal so that a full
/// matching exists (the benchmark's matrices).
pub(super) fn generate(n: usize, per_row: usize, integers: bool, seed: u64) -> SparseInput {
    let mut s = seed ^ 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s >> 11
    };
    let mut indptr = Vec::with_capacity(n + 1);
    let mut indices = Vec::with_capacity(n * (per_row + 1));
    let (mut fv, mut iv) = (Vec::new(), Vec::new());
    indptr.push(0);
    let mut row = Vec::with_capacity(per_row + 1);
    for i in 0..n {
        row.clear();
        row.push(i);
        row.extend((0..per_row).map(|_| (next() % n as u64) as usize));
        row.sort_unstable();
        row.dedup();
        for &j in &row {
            indices.push(j);
            let u = (next() as f64) / (1u64 << 53) as f64;
            if integers {
                iv.push(1 + (u * 99.0) as i64);
            } else {
                fv.push(1.0 + u * 99.0);
            }
        }
        indptr.push(indices.len());
    }
    SparseInput(SparseMatrix {
        rows: n,
        cols: n,
        indptr,
        indices,
        values: if integers {
            Values::I64(iv)
        } else {
            Values::F64(fv)
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_forms_keep_the_better_parallel_entry() {
        let s = SparseInput(
            warpath_io::sparse::sparse_from_mtx(
                b"%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 7\n2 1 3\n",
            )
            .unwrap(),
        );
        assert!(s.integer_arithmetic());
        assert_eq!(
            s.densify(false).unwrap(),
            assignment::ndarray::array![[7.0, 3.0], [3.0, f64::INFINITY]]
        );
        let p = SparseInput(
            SparseMatrix::from_coo(1, 1, &[0, 0], &[0, 0], Values::F64(vec![2.0, 5.0])).unwrap(),
        );
        assert_eq!(p.densify(false).unwrap()[[0, 0]], 2.0);
        assert_eq!(p.densify(true).unwrap()[[0, 0]], 5.0);
    }

    #[test]
    fn generated_matrices_have_their_diagonal() {
        let g = generate(50, 4, true, 3);
        assert_eq!(g.indptr.len(), 51);
        for i in 0..50 {
            assert!(g.indices[g.indptr[i]..g.indptr[i + 1]].contains(&i));
        }
    }
}
