//! Helpers for tests of GPU code.

use crate::{Gpu, gpu};

/// Sizes on both sides of a warp (32 threads) and of a block of 1,024, where kernels and
/// their tiling most often go wrong; tests add their own small and large sizes around them.
///
/// ```
/// let sizes: Vec<usize> = [1].into_iter().chain(gpu_runtime::testing::EDGE_SIZES).collect();
/// assert_eq!(sizes, [1, 31, 32, 33, 1023, 1024, 1025]);
/// ```
pub const EDGE_SIZES: [usize; 6] = [31, 32, 33, 1023, 1024, 1025];

/// Whether `WARPATH_REQUIRE_GPU=1` is set (then a missing GPU fails GPU tests).
pub fn gpu_required() -> bool {
    matches!(
        std::env::var("WARPATH_REQUIRE_GPU").as_deref(),
        Ok("1") | Ok("true") | Ok("yes")
    )
}

/// The GPU for a test, or `None` after printing `skipped: no CUDA device (...)`.
///
/// With `WARPATH_REQUIRE_GPU=1` a missing GPU panics instead, so the test fails: that is how
/// the GPU bundle proves the GPU tests really ran.
///
/// ```
/// let Some(gpu) = gpu_runtime::testing::gpu_for_test("doc example") else { return };
/// assert!(gpu.info().multiprocessors > 0);
/// ```
pub fn gpu_for_test(test: &str) -> Option<&'static Gpu> {
    match gpu() {
        Ok(g) => Some(g),
        Err(e) if gpu_required() => {
            panic!("WARPATH_REQUIRE_GPU=1 but there is no usable CUDA device for {test}: {e}")
        }
        Err(e) => {
            println!("skipped: no CUDA device ({e}) [{test}]");
            None
        }
    }
}

/// Whether the GPU under test is warpath's simulated CUDA driver (`cargo xtask sim`, then
/// `LD_LIBRARY_PATH=target/cuda-sim WARPATH_SIM=1`): the real host code and kernels, run on the
/// CPU. `false` without a GPU.
pub fn simulated() -> bool {
    gpu().is_ok_and(|g| g.info().simulated)
}

/// The input size for a GPU test: `hardware` on a GPU, `simulated` under the simulated driver.
///
/// The simulator runs every GPU thread as a CPU fiber, one block after another: a launch costs
/// about a microsecond per thread and barrier, so sizes that take milliseconds on a GPU take
/// minutes there. Pick `simulated` to still cross every tile, block and look-back boundary the
/// test is about (a few tiles), so that every code path runs.
///
/// ```
/// let n = gpu_runtime::testing::gpu_test_size(1 << 24, 5 * 4096 + 3);
/// assert!(n == 1 << 24 || n == 5 * 4096 + 3);
/// ```
pub fn gpu_test_size(hardware: usize, simulated: usize) -> usize {
    if self::simulated() {
        simulated
    } else {
        hardware
    }
}

/// Runs `f` with the calling thread's share of the simulated device limited to `bytes`:
/// allocations beyond it fail with CUDA_ERROR_OUT_OF_MEMORY and the free memory the thread sees
/// shrinks accordingly, so a test can reach an algorithm's out-of-memory path with a small
/// input. Other threads are not affected. Returns `None`, without running `f`, unless the GPU is
/// warpath's simulated driver (a real GPU's memory cannot be limited this way).
///
/// ```
/// use gpu_runtime::testing::with_simulated_memory_limit;
/// let r = with_simulated_memory_limit(1 << 10, || {
///     gpu_runtime::gpu().unwrap().alloc_zeros::<u8>(1 << 20).map(|_| ())
/// });
/// if let Some(result) = r {
///     assert!(matches!(result, Err(gpu_runtime::GpuError::OutOfMemory { .. })));
/// }
/// ```
pub fn with_simulated_memory_limit<R>(bytes: u64, f: impl FnOnce() -> R) -> Option<R> {
    if !simulated() {
        return None;
    }
    let set = crate::simulator::simulator_thread_memory_limit()?;
    struct Restore(unsafe extern "C" fn(usize));
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: the simulator's exported setter takes a byte count; usize::MAX lifts it.
            unsafe { (self.0)(usize::MAX) }
        }
    }
    // SAFETY: as above.
    unsafe { set(usize::try_from(bytes).unwrap_or(usize::MAX)) };
    let _restore = Restore(set);
    Some(f())
}

/// Compiles `kernels-cuda/sim/<harness>.cpp` with g++ and runs it: the kernel file it includes
/// executes on the CPU under `kernels-cuda/sim/cuda_sim.hpp` (block threads as OS threads,
/// barriers, warp exchanges) and the harness checks the results against CPU references.
///
/// The harness runs twice, with the threads of a block taking turns in increasing and then in
/// decreasing order between barriers, so that a missing barrier shows up as a mismatch.
///
/// This checks a kernel's *logic* without a GPU; it is not a GPU result. Prints
/// `skipped: ...` and returns when g++ or the kernel sources are not available (e.g. inside the
/// GPU bundle). Panics, failing the calling test, when compilation fails, the harness reports a
/// mismatch or a deadlock (exit code 3), or a run does not finish within `limit`.
pub fn run_cuda_sim(harness: &str, limit: std::time::Duration) {
    use std::process::Command;
    let kernels = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels-cuda");
    let source = kernels.join("sim").join(format!("{harness}.cpp"));
    if !source.exists() {
        println!(
            "skipped: {} not found (not run from a source checkout)",
            source.display()
        );
        return;
    }
    if Command::new("g++").arg("--version").output().is_err() {
        println!("skipped: g++ not installed, cannot simulate kernels on the CPU");
        return;
    }
    let exe = std::env::temp_dir().join(format!("warpath-sim-{harness}-{}", std::process::id()));
    let out = Command::new("g++")
        .args(["-std=c++20", "-O1", "-ffp-contract=off", "-w", "-I"])
        .arg(&kernels)
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("g++ could not be started");
    assert!(
        out.status.success(),
        "g++ failed on {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    // Forward, then reverse thread order between barriers: a missing barrier shows up in one.
    let mut runs = Vec::new();
    for order in ["forward", "reverse"] {
        runs.push((
            order,
            run_with_limit(Command::new(&exe).env("WARPATH_SIM_ORDER", order), limit),
        ));
    }
    let _ = std::fs::remove_file(&exe);
    for (order, run) in runs {
        match run {
            None => panic!("{harness} ({order} order) did not finish within {limit:?}"),
            Some(output) => {
                print!("[{order}] {}", String::from_utf8_lossy(&output.stdout));
                assert!(
                    output.status.success(),
                    "{harness} failed in {order} thread order ({}):\n{}{}",
                    output.status,
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
    }
}

/// Runs a command, killing it after `limit`; `None` when it was killed.
fn run_with_limit(
    cmd: &mut std::process::Command,
    limit: std::time::Duration,
) -> Option<std::process::Output> {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("harness could not be started");
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().expect("waiting for the harness").is_some() {
            return Some(
                child
                    .wait_with_output()
                    .expect("reading the harness output"),
            );
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Runs `run` with the simulated device's memory limited to `bytes`
/// ([`with_simulated_memory_limit`]) and asserts that each of its results is an error that
/// `out_of_memory` accepts; `false` (nothing run) without the simulated driver. The
/// out-of-memory tests of the GPU crates share it.
///
/// ```
/// use gpu_runtime::testing::runs_out_of_memory;
/// let ran = runs_out_of_memory(
///     1 << 10,
///     || [gpu_runtime::gpu().and_then(|g| g.alloc_zeros::<u8>(1 << 20)).map(|_| ())],
///     |e| matches!(e, gpu_runtime::GpuError::OutOfMemory { .. }),
/// );
/// assert_eq!(ran, gpu_runtime::testing::simulated());
/// ```
pub fn runs_out_of_memory<T: std::fmt::Debug, E: std::fmt::Debug, const N: usize>(
    bytes: u64,
    run: impl FnOnce() -> [Result<T, E>; N],
    out_of_memory: impl Fn(&E) -> bool,
) -> bool {
    let results = with_simulated_memory_limit(bytes, run);
    for r in results.iter().flatten() {
        assert!(r.as_ref().is_err_and(&out_of_memory), "{r:?}");
    }
    results.is_some()
}
