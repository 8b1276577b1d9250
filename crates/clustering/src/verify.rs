//! An independent check of a fit ([`verify`]): every label names the nearest centroid
//! (distances recomputed directly in `f64`, not through the fit's matrix products or bounds),
//! and the reported inertia is what the labels and centroids give. `warpath kmeans` runs it
//! after every fit, local or distributed, and reports `verified`.

use ndarray::{ArrayView1, ArrayView2};

use crate::{Element, KMeansResult};

/// Most point-centroid distances [`verify`] recomputes: above it, the labels of an even
/// sample of points are checked against every centroid (every point's distance to its own
/// centroid still enters the inertia check).
pub const VERIFY_DISTANCES: usize = 200_000_000;

/// What [`verify`] checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    /// Points whose label was compared with every centroid: all of them, or an even sample
    /// when `n k d` exceeds [`VERIFY_DISTANCES`].
    pub points: usize,
}

/// Why a fit failed [`verify`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The labels do not match the data (one per point, each below `k`), or the centroids'
    /// width is not the data's.
    #[error("{0}")]
    Shape(String),
    /// A centroid holds a NaN or an infinity.
    #[error("centroid {row} holds a value that is not finite")]
    NonFiniteCentroid {
        /// The centroid's row.
        row: usize,
    },
    /// A point's label is not its nearest centroid, beyond the rounding allowed.
    #[error(
        "point {point} is labelled {label} at squared distance {label_distance:e}, but \
         centroid {nearest} is at {nearest_distance:e}"
    )]
    NotNearest {
        /// The point's row.
        point: usize,
        /// Its label.
        label: u32,
        /// The nearest centroid.
        nearest: usize,
        /// Squared distance to the labelled centroid.
        label_distance: f64,
        /// Squared distance to the nearest one.
        nearest_distance: f64,
    },
    /// The reported inertia is not the (weighted) sum of the points' squared distances to
    /// their labelled centroids.
    #[error("the reported inertia is {reported:e}; the labels and centroids give {recomputed:e}")]
    InertiaMismatch {
        /// The fit's inertia.
        reported: f64,
        /// The sum recomputed here.
        recomputed: f64,
    },
}

/// Checks `fit` against the `data` it was fitted on (and the sample `weights`, when it was
/// weighted): every label is the nearest centroid, up to near-ties, and the inertia is the
/// weighted sum of squared distances to the labelled centroids.
///
/// Distances are recomputed point by point in `f64`. The centroids are in the data's type, so
/// a label settled against `f64` centroids may look off by about that type's precision: a
/// label passes when its distance is within `1e-9 (1 + best)` of the best (`float64`), or
/// `1e-5 (1 + best + |x|^2)` (`float32`); the inertia within `1e-6` (`1e-4`) relative.
///
/// # Complexity
/// `O(n k d)` distances, at most [`VERIFY_DISTANCES`] of them (then an even sample of points),
/// plus `O(n d)` for the inertia; one thread.
///
/// # Errors
/// The first rule broken, as a [`VerifyError`].
///
/// # Examples
/// ```
/// use clustering::{KMeans, verify, VerifyError};
/// let data = ndarray::array![[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]];
/// let mut fit = KMeans::new(2).seed(3).fit(data.view())?;
/// assert_eq!(verify(data.view(), None, &fit).map(|v| v.points), Ok(4));
/// fit.labels[0] = 1 - fit.labels[0];
/// assert!(matches!(
///     verify(data.view(), None, &fit),
///     Err(VerifyError::NotNearest { point: 0, .. })
/// ));
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn verify<T: Element>(
    data: ArrayView2<'_, T>,
    weights: Option<ArrayView1<'_, T>>,
    fit: &KMeansResult<T>,
) -> Result<Verified, VerifyError> {
    let (n, d) = data.dim();
    let k = fit.centroids.nrows();
    check_shapes(n, d, weights.map(|w| w.len()), fit)?;
    if let Some(row) = fit
        .centroids
        .outer_iter()
        .position(|c| c.iter().any(|v| !v.is_finite()))
    {
        return Err(VerifyError::NonFiniteCentroid { row });
    }
    let stride = (n * k * d).div_ceil(VERIFY_DISTANCES).max(1);
    let mut inertia = 0.0;
    let mut points = 0;
    for (i, (x, &l)) in data.outer_iter().zip(&fit.labels).enumerate() {
        let dist = |j: usize| -> f64 {
            x.iter()
                .zip(fit.centroids.row(j))
                .map(|(a, b)| (a.to_f64() - b.to_f64()) * (a.to_f64() - b.to_f64()))
                .sum()
        };
        let mine = dist(l as usize);
        if i % stride == 0 {
            points += 1;
            let (nearest, best) = (0..k)
                .map(|j| (j, dist(j)))
                .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
            // The labels were settled against f64 centroids; the centroids here are rounded
            // to the data's type, which moves distances by about that type's precision.
            let slack = if size_of::<T>() == 4 {
                1e-5 * (1.0 + best + x.iter().map(|v| v.to_f64() * v.to_f64()).sum::<f64>())
            } else {
                1e-9 * (1.0 + best)
            };
            if mine > best + slack {
                return Err(VerifyError::NotNearest {
                    point: i,
                    label: l,
                    nearest,
                    label_distance: mine,
                    nearest_distance: best,
                });
            }
        }
        inertia += weights.map_or(1.0, |w| w[i].to_f64()) * mine;
    }
    // The centroids are rounded to the data's type on output: allow that rounding.
    let tol = if size_of::<T>() == 4 { 1e-4 } else { 1e-6 };
    if (inertia - fit.inertia).abs() > tol * (1.0 + inertia) {
        return Err(VerifyError::InertiaMismatch {
            reported: fit.inertia,
            recomputed: inertia,
        });
    }
    Ok(Verified { points })
}

/// The labels (one per point, each below `k`), the centroids' width and the weights' length
/// against the data's `n x d`.
fn check_shapes<T>(
    n: usize,
    d: usize,
    weights: Option<usize>,
    fit: &KMeansResult<T>,
) -> Result<(), VerifyError> {
    let (k, cd) = fit.centroids.dim();
    if fit.labels.len() != n {
        return Err(VerifyError::Shape(format!(
            "{} labels for {n} points (a fit without labels cannot be checked)",
            fit.labels.len()
        )));
    }
    if cd != d {
        return Err(VerifyError::Shape(format!(
            "centroids of {cd} coordinates for points of {d}"
        )));
    }
    if let Some((i, l)) = fit
        .labels
        .iter()
        .enumerate()
        .find(|&(_, &l)| l as usize >= k)
    {
        return Err(VerifyError::Shape(format!(
            "point {i} is labelled {l}, but there are {k} centroids"
        )));
    }
    match weights {
        Some(w) if w != n => Err(VerifyError::Shape(format!("{w} weights for {n} points"))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KMeans;
    use ndarray::{Array2, array};

    fn fitted() -> (Array2<f64>, KMeansResult<f64>) {
        let data = array![[0.0, 0.0], [0.2, 0.1], [4.0, 4.0], [4.2, 3.9], [8.0, 0.0]];
        let fit = KMeans::new(3).seed(1).fit(data.view()).unwrap();
        (data, fit)
    }

    #[test]
    fn a_fit_passes_and_each_broken_rule_is_named() {
        let (data, fit) = fitted();
        assert_eq!(verify(data.view(), None, &fit), Ok(Verified { points: 5 }));
        let w = ndarray::Array1::from_elem(5, 2.0);
        let mut weighted = fit.clone();
        weighted.inertia *= 2.0;
        assert!(verify(data.view(), Some(w.view()), &weighted).is_ok());

        let mut wrong = fit.clone();
        wrong.inertia *= 1.01;
        assert!(matches!(
            verify(data.view(), None, &wrong),
            Err(VerifyError::InertiaMismatch { .. })
        ));
        let mut wrong = fit.clone();
        wrong.labels[4] = (wrong.labels[4] + 1) % 3;
        assert!(matches!(
            verify(data.view(), None, &wrong),
            Err(VerifyError::NotNearest { point: 4, .. })
        ));
        let mut wrong = fit.clone();
        wrong.centroids[[1, 0]] = f64::NAN;
        assert_eq!(
            verify(data.view(), None, &wrong),
            Err(VerifyError::NonFiniteCentroid { row: 1 })
        );
        for broken in [
            KMeansResult {
                labels: vec![0; 4],
                ..fit.clone()
            },
            KMeansResult {
                labels: vec![3; 5],
                ..fit.clone()
            },
            KMeansResult {
                centroids: Array2::zeros((3, 1)),
                ..fit.clone()
            },
        ] {
            assert!(matches!(
                verify(data.view(), None, &broken),
                Err(VerifyError::Shape(_))
            ));
        }
        assert!(matches!(
            verify(data.view(), Some(w.slice(ndarray::s![..4])), &fit),
            Err(VerifyError::Shape(_))
        ));
    }

    #[test]
    fn float32_centroids_pass_within_their_rounding() {
        let data = crate::data::generate_blobs(2_000, 8, 4, 0.5, 11)
            .data
            .mapv(|v| v as f32);
        let fit = KMeans::new(4).seed(2).fit(data.view()).unwrap();
        assert_eq!(verify(data.view(), None, &fit).unwrap().points, 2_000);
    }
}
