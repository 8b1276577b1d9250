//! Using fitted centroids: [`predict`] (the nearest centroid of each point) and [`transform`]
//! (the distances to every centroid).

use gpu_runtime::{Exec, Target};
use ndarray::{Array2, ArrayView2, CowArray, Ix2};

use super::validate::contiguous;
use super::{KMEANS_GPU_THRESHOLD, check_finite};
use crate::cpu::assign_parallel;
use crate::cuda::CudaStepper;
use crate::lloyd::Stepper;
use crate::{Element, KMeansError};

/// Euclidean distances of every row of `data` to every centroid (scikit-learn's
/// `KMeans.transform`), `n x k`, in the data's type. Computed in `f64` (float32 data widened
/// tile by tile, as scikit-learn's `euclidean_distances` does), through the same tiled matrix
/// products as the assignment: `sqrt(max(0, |x|^2 + |c|^2 - 2 x.c))`.
///
/// # Complexity
/// `O(n k d)` time, `O(n k)` for the result; on all CPU threads.
///
/// # Errors
/// As [`predict`] (never [`KMeansError::Gpu`]: the distances are computed on the CPU), and
/// [`KMeansError::OutOfMemory`] when the `n x k` result does not fit.
///
/// # Examples
/// ```
/// use clustering::transform;
/// use ndarray::array;
/// let centroids = array![[0.0f32, 0.0], [3.0, 4.0]];
/// let points = array![[0.0f32, 0.0], [3.0, 0.0]];
/// assert_eq!(transform(centroids.view(), points.view())?, array![[0.0, 5.0], [3.0, 4.0]]);
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn transform<T: Element>(
    centroids: ArrayView2<'_, T>,
    data: ArrayView2<'_, T>,
) -> Result<Array2<T>, KMeansError> {
    let (k, d) = centroids.dim();
    let (c, x) = checked_pair(centroids, data)?;
    let n = data.nrows();
    let bytes = (n as u64).saturating_mul(k as u64) * size_of::<T>() as u64;
    if let Some(available) = gpu_runtime::host_available_memory()
        && bytes > available
    {
        return Err(KMeansError::OutOfMemory {
            what: format!("the {n} x {k} distances"),
            needed: bytes,
            available,
            hint: "transform the points in parts",
        });
    }
    let out = crate::cpu::distances_parallel(x.as_slice().expect("standard layout"), d, &c, k);
    Ok(Array2::from_shape_vec((n, k), out).expect("n * k distances"))
}

/// Centroids (in `f64`) and data checked for [`predict`] and [`transform`].
fn checked_pair<'a, T: Element>(
    centroids: ArrayView2<'_, T>,
    data: ArrayView2<'a, T>,
) -> Result<(Vec<f64>, CowArray<'a, T, Ix2>), KMeansError> {
    let (k, d) = centroids.dim();
    if k == 0 {
        return Err(KMeansError::ZeroClusters);
    }
    KMeansError::check_shape("data columns (the centroids' dimension)", d, data.ncols())?;
    if d == 0 {
        return Err(KMeansError::ZeroDimensions);
    }
    let c = centroids.as_standard_layout();
    check_finite(c.as_slice().expect("standard layout"), d, 0)?;
    let c: Vec<f64> = c.iter().map(|v| v.to_f64()).collect();
    let x = contiguous(data);
    check_finite(x.as_slice().expect("standard layout"), d, 0)?;
    Ok((c, x))
}

/// Index of the nearest centroid (ties to the lower index) of every row of `data`.
///
/// # Complexity
/// `O(n k d)`, `O(n k d / p)` time on `p` threads.
///
/// # Errors
/// [`KMeansError::ZeroClusters`] without centroids, [`KMeansError::ShapeMismatch`] when the
/// column counts differ, [`KMeansError::NonFiniteData`] (data or centroids), [`KMeansError::Gpu`].
///
/// # Examples
/// ```
/// use clustering::predict;
/// use gpu_runtime::Exec;
/// use ndarray::array;
/// let centroids = array![[0.0, 0.0], [10.0, 10.0]];
/// let points = array![[1.0, 1.0], [9.0, 8.0], [-3.0, 0.0]];
/// assert_eq!(predict(centroids.view(), points.view(), Exec::Cpu)?, vec![0, 1, 0]);
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn predict<T: Element>(
    centroids: ArrayView2<'_, T>,
    data: ArrayView2<'_, T>,
    exec: Exec,
) -> Result<Vec<u32>, KMeansError> {
    let (k, d) = centroids.dim();
    let n = data.nrows();
    if n == 0 && k > 0 && data.ncols() == d {
        return Ok(Vec::new());
    }
    let (c, x) = checked_pair(centroids, data)?;
    let xs = x.as_slice().expect("standard layout");
    match exec.resolve(
        (n as u64).saturating_mul((k * d) as u64),
        KMEANS_GPU_THRESHOLD,
    )? {
        Target::Cpu => Ok(assign_parallel(xs, d, &c, k)),
        Target::Cuda(gpu) => {
            let mut s = CudaStepper::new(gpu, xs, d, None)?;
            s.step(&c, k)?;
            s.labels()
        }
    }
}
