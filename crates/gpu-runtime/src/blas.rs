//! Dense matrix products through cuBLAS, where the machine has it: [`Gpu::blas`] and
//! [`Blas::product_abt`].
//!
//! cuBLAS is loaded at run time (cudarc's dynamic loading, `libcublas.so`, `.so.13`, `.so.12`,
//! ... on the library path), never linked: a machine without it still runs every GPU path on
//! warpath's own kernels, which callers keep as the fallback. Under warpath's simulated driver
//! only warpath's simulated cuBLAS is used (`cargo xtask sim` builds it beside the driver; it
//! exports `warpath_sim_cublas`), and on a real driver never that one: each reads the other's
//! pointers as something else. `WARPATH_CUBLAS=0` turns cuBLAS off.
//!
//! Products run in the element type with the default math mode: IEEE single (`f32`) or double
//! (`f64`) fused multiply-adds, in an order of the library's choosing (tiles, split sums), no
//! TF32. Callers that bound the rounding error use the bound of a dot product in any summation
//! order.

use std::sync::{Mutex, OnceLock};

use cudarc::cublas::sys;

use crate::buffer::{DeviceScalar, DeviceSink, DeviceSource};
use crate::device::Gpu;
use crate::error::GpuError;

/// The environment variable that turns cuBLAS off (`0`, `false`, `no` or `off`).
const OFF_VARIABLE: &str = "WARPATH_CUBLAS";

/// An open cuBLAS handle bound to the [`Gpu`]'s stream. Obtain it from [`Gpu::blas`].
pub struct Blas {
    handle: Mutex<Handle>,
    version: i32,
}

impl std::fmt::Debug for Blas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blas")
            .field("version", &self.version)
            .finish()
    }
}

/// The raw handle; cuBLAS handles may move between threads but not be used by two at once,
/// which the mutex around it ensures.
struct Handle(sys::cublasHandle_t);

// SAFETY: a cuBLAS handle is not tied to the thread that created it (the cuBLAS docs: a handle
// may be used from any thread whose current context is the handle's, one call at a time); every
// use goes through the mutex and binds the context first.
unsafe impl Send for Handle {}

/// The element types cuBLAS multiplies here: `f32` (`cublasSgemm`) and `f64` (`cublasDgemm`).
pub trait GemmScalar: DeviceScalar + sealed::Sealed {
    /// `C = A^T B` in column-major order (`transa` T, `transb` N), the one form
    /// [`Blas::product_abt`] needs.
    ///
    /// # Safety
    /// `a`, `b`, `c` are device addresses of at least `lda * m`, `ldb * n` and `ldc * n`
    /// elements on the handle's context.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm_tn(
        handle: sys::cublasHandle_t,
        m: i32,
        n: i32,
        k: i32,
        a: u64,
        lda: i32,
        b: u64,
        ldb: i32,
        c: u64,
        ldc: i32,
    ) -> sys::cublasStatus_t {
        let (one, zero) = (Self::ONE, Self::ZERO);
        // SAFETY: the caller's contract; alpha and beta are host scalars (the handle's default
        // pointer mode), beta = 0 so C is only written.
        unsafe {
            Self::GEMM(
                handle,
                sys::cublasOperation_t::CUBLAS_OP_T,
                sys::cublasOperation_t::CUBLAS_OP_N,
                m,
                n,
                k,
                &one,
                a as *const Self,
                lda,
                b as *const Self,
                ldb,
                &zero,
                c as *mut Self,
                ldc,
            )
        }
    }
}

impl GemmScalar for f32 {}
impl GemmScalar for f64 {}

mod sealed {
    use cudarc::cublas::sys;

    /// cuBLAS's `gemm` entry point for elements `T` (`cublasSgemm_v2`, `cublasDgemm_v2`).
    pub(super) type Gemm<T> = unsafe fn(
        sys::cublasHandle_t,
        sys::cublasOperation_t,
        sys::cublasOperation_t,
        i32,
        i32,
        i32,
        *const T,
        *const T,
        i32,
        *const T,
        i32,
        *const T,
        *mut T,
        i32,
    ) -> sys::cublasStatus_t;

    /// Keeps [`super::GemmScalar`] to the types below, each with its cuBLAS `gemm` and the
    /// scalars 1 and 0 it is called with.
    pub trait Sealed: Sized {
        /// The type's cuBLAS `gemm`.
        const GEMM: Gemm<Self>;
        /// 1, the `alpha` of every call.
        const ONE: Self;
        /// 0, the `beta` of every call.
        const ZERO: Self;
    }
    impl Sealed for f32 {
        const GEMM: Gemm<f32> = sys::cublasSgemm_v2;
        const ONE: f32 = 1.0;
        const ZERO: f32 = 0.0;
    }
    impl Sealed for f64 {
        const GEMM: Gemm<f64> = sys::cublasDgemm_v2;
        const ONE: f64 = 1.0;
        const ZERO: f64 = 0.0;
    }
}

/// cuBLAS of the process's device (there is one [`Gpu`] per process), or why not.
static BLAS: OnceLock<Result<Blas, String>> = OnceLock::new();

impl Gpu {
    /// cuBLAS on this device, opened on the first call, or why it cannot be used (not on the
    /// library path, turned off by `WARPATH_CUBLAS=0`, a simulated/real mismatch, or a failed
    /// `cublasCreate`); see [`Blas`]. Callers fall back to warpath's own kernels on `Err`.
    ///
    /// # Errors
    /// The reason, as text: cuBLAS is optional, so this is a fact to report, not a failure.
    pub fn blas(&self) -> Result<&Blas, &str> {
        BLAS.get_or_init(|| Blas::open(self))
            .as_ref()
            .map_err(String::as_str)
    }
}

/// Whether `WARPATH_CUBLAS` turns cuBLAS off.
fn turned_off() -> bool {
    matches!(
        std::env::var(OFF_VARIABLE).as_deref(),
        Ok("0") | Ok("false") | Ok("no") | Ok("off")
    )
}

fn check(what: &str, status: sys::cublasStatus_t) -> Result<(), String> {
    if status == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} returned {status:?}"))
    }
}

impl Blas {
    /// Opens cuBLAS for `gpu`, or says why not.
    pub(crate) fn open(gpu: &Gpu) -> Result<Blas, String> {
        if turned_off() {
            return Err(format!("{OFF_VARIABLE} turned it off"));
        }
        // SAFETY: only tries to dlopen the library under its usual names.
        if !unsafe { sys::is_culib_present() } {
            return Err("libcublas.so was not found on the library path".into());
        }
        // SAFETY: the library is present (checked above); looks a symbol up, calls nothing.
        let shim = unsafe {
            sys::culib()
                .get::<unsafe extern "C" fn()>(b"warpath_sim_cublas\0")
                .is_ok()
        };
        match (shim, gpu.info().simulated) {
            (true, false) => {
                return Err(
                    "the libcublas.so on the library path is warpath's simulated one \
                            (target/cuda-sim), which a real GPU cannot use"
                        .into(),
                );
            }
            (false, true) => {
                return Err("the simulated driver runs only warpath's simulated cuBLAS".into());
            }
            _ => {}
        }
        gpu.context()
            .bind_to_thread()
            .map_err(|e| format!("binding the context: {e:?}"))?;
        let mut handle: sys::cublasHandle_t = std::ptr::null_mut();
        // SAFETY: writes one handle; the context is current on this thread.
        check("cublasCreate", unsafe { sys::cublasCreate_v2(&mut handle) })?;
        let handle = Handle(handle);
        let mut version = 0i32;
        // SAFETY: a live handle; the stream belongs to its context (the null stream, or one of
        // the context's streams); the math mode is an enum value of the header.
        unsafe {
            check(
                "cublasSetStream",
                sys::cublasSetStream_v2(handle.0, gpu.stream().cu_stream() as sys::cudaStream_t),
            )?;
            check(
                "cublasSetMathMode",
                sys::cublasSetMathMode(handle.0, sys::cublasMath_t::CUBLAS_DEFAULT_MATH),
            )?;
            check(
                "cublasGetVersion",
                sys::cublasGetVersion_v2(handle.0, &mut version),
            )?;
        }
        Ok(Blas {
            handle: Mutex::new(handle),
            version,
        })
    }

    /// The library's version number (`cublasGetVersion`: major * 10000 + minor * 100 + patch;
    /// warpath's simulated cuBLAS reports 0).
    pub fn version(&self) -> i32 {
        self.version
    }

    /// `out = A B^T` for row-major `A` (`m` rows of `d`) and `B` (`n` rows of `d`): `out` is
    /// row-major `m x n`, `out[i * n + j] = a_i . b_j` — the products of points with centres, of
    /// queries with a database. Queued on the stream (does not synchronise); `m = a.len() / d`,
    /// `n = b.len() / d`.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] when `d` is 0, does not divide both lengths, `out` holds fewer than
    /// `m * n` elements, or a dimension exceeds `i32::MAX`; [`GpuError::LaunchFailed`] when
    /// cuBLAS reports an error.
    ///
    /// # Examples
    /// ```
    /// if let Ok(gpu) = gpu_runtime::gpu() {
    ///     if let Ok(blas) = gpu.blas() {
    ///         let a = gpu.upload(&[1.0f32, 2.0, 3.0, 4.0]).unwrap(); // 2 rows of 2
    ///         let b = gpu.upload(&[1.0f32, 0.0, 1.0, 1.0, 0.0, 2.0]).unwrap(); // 3 rows of 2
    ///         let mut out = gpu.alloc_zeros::<f32>(6).unwrap();
    ///         blas.product_abt(gpu, &a, &b, 2, &mut out).unwrap();
    ///         assert_eq!(gpu.download(&out).unwrap(), vec![1.0, 3.0, 4.0, 3.0, 7.0, 8.0]);
    ///     }
    /// }
    /// ```
    pub fn product_abt<T: GemmScalar>(
        &self,
        gpu: &Gpu,
        a: &impl DeviceSource<T>,
        b: &impl DeviceSource<T>,
        d: usize,
        out: &mut impl DeviceSink<T>,
    ) -> Result<(), GpuError> {
        let shape = || format!("A of {}, B of {}, d {d}", a.len(), b.len());
        if d == 0 || a.len() % d != 0 || b.len() % d != 0 {
            return Err(GpuError::TooLarge(format!(
                "a product needs rows of d > 0 elements: {}",
                shape()
            )));
        }
        let (m, n) = (a.len() / d, b.len() / d);
        if m == 0 || n == 0 {
            return Ok(());
        }
        let fits = |v: usize| i32::try_from(v).is_ok();
        if !fits(m) || !fits(n) || !fits(d) {
            return Err(GpuError::TooLarge(format!(
                "cuBLAS dimensions above 2^31: {}",
                shape()
            )));
        }
        if out.len() < m * n {
            return Err(GpuError::TooLarge(format!(
                "the product of {m} x {n} needs {} elements, out holds {}",
                m * n,
                out.len()
            )));
        }
        let stream = gpu.stream();
        let (pa, pb) = (a.view().address(stream), b.view().address(stream));
        let pc = out.view_mut().address(stream);
        let handle = self.handle.lock().unwrap_or_else(|p| p.into_inner());
        gpu.context().bind_to_thread()?;
        // cuBLAS is column-major: the row-major out (m x n) is the column-major n x m matrix
        // C = B^T A, with B and A read as d x n and d x m (op(B) = T, op(A) = N, leading
        // dimensions d, d and n).
        // SAFETY: pb holds n * d, pa m * d and pc at least m * n elements (checked above), all
        // on this context; dimensions fit i32.
        let status = unsafe {
            T::gemm_tn(
                handle.0, n as i32, m as i32, d as i32, pb, d as i32, pa, d as i32, pc, n as i32,
            )
        };
        check("cublasGemm", status).map_err(GpuError::LaunchFailed)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::gpu_for_test;

    /// `A B^T` of odd shapes against the host's products: exact for small integers, within a
    /// dot product's rounding bound for random values.
    #[test]
    fn gpu_blas_products_equal_the_host() {
        let Some(gpu) = gpu_for_test("gpu-runtime gpu_blas_products_equal_the_host") else {
            return;
        };
        let blas = match gpu.blas() {
            Ok(b) => b,
            Err(why) if gpu.info().simulated => panic!("the simulated cuBLAS: {why}"),
            Err(why) => {
                eprintln!("skipped: no cuBLAS ({why})");
                return;
            }
        };
        for &(m, n, d) in &[(1, 1, 1), (3, 5, 2), (17, 9, 33), (40, 70, 130)] {
            let a: Vec<f64> = (0..m * d).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
            let b: Vec<f64> = (0..n * d).map(|i| ((i * 5) % 13) as f64 - 6.0).collect();
            let want: Vec<f64> = (0..m * n)
                .map(|e| (0..d).map(|t| a[e / n * d + t] * b[e % n * d + t]).sum())
                .collect();
            let mut out = gpu.alloc_zeros::<f64>(m * n + 3).unwrap();
            let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
            blas.product_abt(gpu, &da, &db, d, &mut out).unwrap();
            let got = gpu.download(&out).unwrap();
            assert_eq!(&got[..m * n], &want[..], "f64 {m} x {n} x {d}");
            assert_eq!(&got[m * n..], &[0.0; 3], "beyond the product");
            // f32 with fractions: within d * 2^-24 of the sum of |a_t b_t|.
            let af: Vec<f32> = a.iter().map(|&v| (v / 3.0) as f32).collect();
            let bf: Vec<f32> = b.iter().map(|&v| (v / 7.0) as f32).collect();
            let mut out = gpu.alloc_zeros::<f32>(m * n).unwrap();
            let (da, db) = (gpu.upload(&af).unwrap(), gpu.upload(&bf).unwrap());
            blas.product_abt(gpu, &da, &db, d, &mut out).unwrap();
            let got = gpu.download(&out).unwrap();
            for (e, g) in got.iter().enumerate() {
                let (i, j) = (e / n, e % n);
                let terms = (0..d).map(|t| f64::from(af[i * d + t]) * f64::from(bf[j * d + t]));
                let exact: f64 = terms.clone().sum();
                let size: f64 = terms.map(f64::abs).sum();
                let bound = (d + 2) as f64 * 2f64.powi(-24) * size;
                assert!(
                    (f64::from(*g) - exact).abs() <= bound,
                    "f32 {m} x {n} x {d} [{e}]: {g} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn gpu_blas_product_of_mismatched_shapes_is_an_error() {
        let Some(gpu) = gpu_for_test("gpu-runtime gpu_blas_product_of_mismatched_shapes") else {
            return;
        };
        let Ok(blas) = gpu.blas() else { return };
        let a = gpu.upload(&[1.0f32; 6]).unwrap();
        let b = gpu.upload(&[1.0f32; 4]).unwrap();
        let mut small = gpu.alloc_zeros::<f32>(5).unwrap();
        // d = 4 does not divide 6; d = 0; 3 x 2 needs 6 elements.
        for (d, what) in [(4, "rows of d"), (0, "rows of d"), (2, "needs 6 elements")] {
            let e = blas.product_abt(gpu, &a, &b, d, &mut small).unwrap_err();
            assert!(e.to_string().contains(what), "{d}: {e}");
        }
    }
}
