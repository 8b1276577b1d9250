//! The host CPU's vector instruction sets, as every crate's run-time dispatch sees them.
//!
//! Each hot loop of the workspace that has an AVX-512 or AVX2 version asks these functions
//! which to run, so one switch turns the wide versions off everywhere:
//! `WARPATH_DISABLE_AVX512=1` makes [`has_avx512`] false (the AVX2 versions run instead), the
//! way numpy's `NPY_DISABLE_CPU_FEATURES` narrows numpy's dispatch. It stands in for the
//! AVX2-only CPUs of most laptops and many cloud machines when comparing with a peer limited
//! the same way. The variable is read once per process.
//!
//! The `gemm` crate (k-means' large matrix products) chooses its kernels by itself and does
//! not see the switch.

use std::sync::OnceLock;

/// Whether the CPU has the AVX-512 subsets the workspace's kernels are compiled for (F, VL,
/// BW, DQ, with AVX2, FMA, BMI2 and POPCNT), and `WARPATH_DISABLE_AVX512` is not set (or is
/// `0`). Always false off x86-64.
///
/// # Examples
/// ```
/// if gpu_runtime::cpu::has_avx512() {
///     assert!(gpu_runtime::cpu::has_avx2());
/// }
/// ```
#[inline]
pub fn has_avx512() -> bool {
    static AVX512: OnceLock<bool> = OnceLock::new();
    *AVX512.get_or_init(|| detect_avx512() && !disabled("WARPATH_DISABLE_AVX512"))
}

/// Whether the CPU has AVX2 with FMA, BMI2 and POPCNT (x86-64-v3's vector part). Always false
/// off x86-64.
///
/// # Examples
/// ```
/// let wide = gpu_runtime::cpu::has_avx2();
/// # let _ = wide;
/// ```
#[inline]
pub fn has_avx2() -> bool {
    static AVX2: OnceLock<bool> = OnceLock::new();
    *AVX2.get_or_init(detect_avx2)
}

/// Whether the CPU has AVX-512 BF16 (`vdpbf16ps`: dot products of bfloat16 pairs into `f32`,
/// twice the multiply-adds of an `f32` fused multiply-add per instruction) beside
/// [`has_avx512`], and `WARPATH_DISABLE_BF16` is not set (or is `0`). k-means' steps use it
/// to find each point's few candidate centres, then settle them exactly.
///
/// # Examples
/// ```
/// if gpu_runtime::cpu::has_avx512_bf16() {
///     assert!(gpu_runtime::cpu::has_avx512());
/// }
/// ```
#[inline]
pub fn has_avx512_bf16() -> bool {
    static BF16: OnceLock<bool> = OnceLock::new();
    *BF16.get_or_init(|| has_avx512() && detect_bf16() && !disabled("WARPATH_DISABLE_BF16"))
}

/// The widest instruction set [`has_avx512`] and [`has_avx2`] allow, by name (`"avx512"`,
/// `"avx2"` or `"baseline"`), for reports and benchmark headers.
pub fn widest() -> &'static str {
    if has_avx512() {
        "avx512"
    } else if has_avx2() {
        "avx2"
    } else {
        "baseline"
    }
}

fn disabled(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty() && v != "0")
}

#[cfg(target_arch = "x86_64")]
fn detect_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("popcnt")
}

#[cfg(target_arch = "x86_64")]
fn detect_avx512() -> bool {
    detect_avx2()
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
}

#[cfg(target_arch = "x86_64")]
fn detect_bf16() -> bool {
    std::arch::is_x86_feature_detected!("avx512bf16")
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_bf16() -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_avx2() -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_avx512() -> bool {
    false
}

/// CPU seconds this process has used so far, all threads together
/// (`CLOCK_PROCESS_CPUTIME_ID`): the timing examples print it beside wall time, to tell a
/// slow run from a machine busy with other work.
///
/// ```
/// let t = gpu_runtime::cpu::process_cpu_seconds();
/// assert!(t >= 0.0 && gpu_runtime::cpu::process_cpu_seconds() >= t);
/// ```
#[cfg(unix)]
pub fn process_cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
