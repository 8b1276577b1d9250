//! The simulated CUDA driver's own rules (`kernels-cuda/sim/driver.cpp`), checked by calling the
//! driver API directly through cudarc's `sys` bindings, the same ABI warpath's host code uses.
//!
//! Every test's name starts with `sim_`, so that CI's simulated-GPU step (which runs the tests
//! whose names contain `gpu`, `cuda` or `sim_`) includes them.
//!
//! These run only under the simulator (`cargo xtask sim`, then
//! `LD_LIBRARY_PATH=target/cuda-sim WARPATH_SIM=1`); elsewhere they print `skipped` and pass.
//! Each case runs in a fresh child process (this test binary, re-executed with
//! `WARPATH_SIM_CHILD=<case>`): some need a driver nobody has initialised yet, and a kernel
//! fault makes the context's error sticky for the rest of the process, as on hardware.

use std::ffi::{CStr, CString, c_void};
use std::process::Command;

use cudarc::driver::sys::{self, CUresult};

/// Runs `case` in a child process with extra environment variables; fails with its output
/// when the child fails.
fn run_child(case: &str, env: &[(&str, Option<&str>)]) {
    let mut cmd = Command::new(std::env::current_exe().expect("test executable"));
    cmd.args([
        "--exact",
        "sim_child_process_entry",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("WARPATH_SIM_CHILD", case);
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = cmd.output().expect("could not start the child process");
    assert!(
        out.status.success(),
        "case `{case}` failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether the simulator is the driver under test (else the test prints `skipped`).
fn under_simulator(test: &str) -> bool {
    if gpu_runtime::testing::simulated() {
        return true;
    }
    println!("skipped: not running under the simulated CUDA driver [{test}]");
    false
}

macro_rules! sim_cases {
    ($($name:ident $(with $($k:literal = $v:expr),*)?;)*) => {
        $(
            #[test]
            fn $name() {
                if under_simulator(stringify!($name)) {
                    run_child(stringify!($name), &[$($(($k, $v)),*)?]);
                }
            }
        )*

        /// Not a test of its own: the entry point of the child processes the tests above start.
        #[test]
        fn sim_child_process_entry() {
            let Ok(case) = std::env::var("WARPATH_SIM_CHILD") else { return };
            match case.as_str() {
                $(stringify!($name) => cases::$name(),)*
                other => panic!("unknown case {other}"),
            }
        }
    };
}

sim_cases! {
    sim_refused_without_warpath_sim with "WARPATH_SIM" = None;
    sim_init_devices_and_contexts;
    sim_memory_rules with "WARPATH_SIM_MEM" = Some("64M");
    sim_event_timing_rules;
    sim_module_rules;
    sim_kernel_attributes_match_ptxas;
    sim_launch_rules;
    sim_fault_write_past_the_end;
    sim_fault_read_into_the_guard_page;
    sim_fault_argument_after_free;
    sim_fault_argument_in_host_memory;
    sim_fault_deadlock;
    sim_fault_shared_memory_overrun;
    sim_fault_spin_until_the_watchdog with "WARPATH_SIM_TIMEOUT" = Some("1");
    sim_fault_division_by_zero;
}

/// A PTX module declaring the simulator's self-test kernels (`sim/driver_selftest.cpp`).
const SELFTEST_PTX: &str = "\
.version 9.0
.target sm_80
.address_size 64
.visible .entry sim_selftest_fill(.param .u64 p0, .param .u64 p1) { ret; }
.visible .entry sim_selftest_copy(.param .u64 p0, .param .u64 p1, .param .u64 p2) { ret; }
.visible .entry sim_selftest_deadlock(.param .u64 p0) { ret; }
.visible .entry sim_selftest_spin(.param .u64 p0) { ret; }
.visible .entry sim_selftest_divide(.param .u64 p0, .param .u32 p1, .param .u32 p2) { ret; }
.visible .entry sim_selftest_bounded(.param .u64 p0, .param .u64 p1) .maxntid 128, 1, 1 { ret; }
.visible .entry sim_selftest_heavy(.param .u64 p0, .param .u64 p1) { ret; }
.extern .shared .align 16 .b8 warpath_dyn_smem_s[];
.visible .entry sim_selftest_shared(.param .u64 p0, .param .u32 p1) { mov.u64 %rd1, warpath_dyn_smem_s; ret; }
";

mod cases {
    use super::*;

    macro_rules! expect {
        ($call:expr, $code:ident) => {{
            // SAFETY: every pointer passed is valid for the call (the cases check the driver's
            // answers to bad *values*, never hand it dangling host pointers).
            let r = unsafe { $call };
            assert_eq!(r, CUresult::$code, "{}", stringify!($call));
        }};
    }

    /// The simulator's last diagnostic, cleared.
    fn diagnostic() -> String {
        // SAFETY: the simulated driver exports this function; it returns a NUL-terminated
        // string valid until the next call.
        unsafe {
            let f = sys::culib()
                .get::<unsafe extern "C" fn() -> *const std::ffi::c_char>(b"warpath_sim_take_error")
                .expect("the simulated driver exports warpath_sim_take_error");
            CStr::from_ptr(f()).to_string_lossy().into_owned()
        }
    }

    /// cuInit, device 0's primary context, current on this thread.
    fn context() -> sys::CUcontext {
        let mut ctx = std::ptr::null_mut();
        expect!(sys::cuInit(0), CUDA_SUCCESS);
        expect!(sys::cuDevicePrimaryCtxRetain(&mut ctx, 0), CUDA_SUCCESS);
        expect!(sys::cuCtxSetCurrent(ctx), CUDA_SUCCESS);
        ctx
    }

    fn alloc(bytes: usize) -> sys::CUdeviceptr {
        let mut p = 0;
        expect!(sys::cuMemAlloc_v2(&mut p, bytes), CUDA_SUCCESS);
        p
    }

    fn module(ptx: &str) -> sys::CUmodule {
        let text = CString::new(ptx).unwrap();
        let mut m = std::ptr::null_mut();
        expect!(
            sys::cuModuleLoadData(&mut m, text.as_ptr().cast()),
            CUDA_SUCCESS
        );
        m
    }

    fn function(m: sys::CUmodule, name: &str) -> sys::CUfunction {
        let name = CString::new(name).unwrap();
        let mut f = std::ptr::null_mut();
        expect!(
            sys::cuModuleGetFunction(&mut f, m, name.as_ptr()),
            CUDA_SUCCESS
        );
        f
    }

    /// Launches `f` on a 1-D grid with the given argument values.
    fn launch(
        f: sys::CUfunction,
        grid: u32,
        block: u32,
        smem: u32,
        args: &mut [*mut c_void],
    ) -> CUresult {
        // SAFETY: `args` holds one pointer per kernel parameter, each to a live value of the
        // parameter's type; the simulator copies them before returning.
        unsafe {
            sys::cuLaunchKernel(
                f,
                grid,
                1,
                1,
                block,
                1,
                1,
                smem,
                std::ptr::null_mut(),
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
    }

    fn download_u32(p: sys::CUdeviceptr, n: usize) -> Vec<u32> {
        let mut v = vec![0u32; n];
        expect!(
            sys::cuMemcpyDtoH_v2(v.as_mut_ptr().cast(), p, n * 4),
            CUDA_SUCCESS
        );
        v
    }

    /// Launches `name` with (pointer, count) arguments.
    fn fill(m: sys::CUmodule, name: &str, p: sys::CUdeviceptr, n: u64, block: u32) -> CUresult {
        let f = function(m, name);
        let (mut p, mut n) = (p, n);
        launch(
            f,
            2,
            block,
            0,
            &mut [(&raw mut p).cast(), (&raw mut n).cast()],
        )
    }

    /// Launches `sim_selftest_fill` over `n` u32 at `p` (2 blocks of 64), which must succeed,
    /// then checks the fault it leaves behind (see [`assert_sticky`]) says `why`.
    fn fill_then_fault(m: sys::CUmodule, p: sys::CUdeviceptr, n: u64, why: &str) {
        assert_eq!(
            fill(m, "sim_selftest_fill", p, n, 64),
            CUresult::CUDA_SUCCESS
        );
        assert_sticky(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, why);
    }

    /// Launches `f` with `args` once per `(grid, block, dynamic shared bytes, expected result)`.
    fn check_launches(
        f: sys::CUfunction,
        args: &mut [*mut c_void],
        cases: &[(u32, u32, u32, CUresult)],
    ) {
        for &(grid, block, smem, want) in cases {
            assert_eq!(
                launch(f, grid, block, smem, args),
                want,
                "grid {grid}, block {block}, {smem} bytes of dynamic shared memory"
            );
        }
    }

    /// After a fault: the launch itself succeeded, every later call returns `code`, the
    /// diagnostic says `why`, and a reset of the primary context clears it.
    fn assert_sticky(code: CUresult, why: &str) {
        let mut free = 0;
        let mut total = 0;
        // SAFETY: no arguments.
        let r = unsafe { sys::cuCtxSynchronize() };
        assert_eq!(r, code, "synchronize after the fault");
        let text = diagnostic();
        assert!(
            text.contains(why),
            "diagnostic `{text}` should mention `{why}`"
        );
        // SAFETY: valid out-pointers.
        let r = unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) };
        assert_eq!(r, code, "every call in the context returns the error");
        let mut p = 0;
        // SAFETY: a valid out-pointer.
        let r = unsafe { sys::cuMemAlloc_v2(&mut p, 16) };
        assert_eq!(r, code, "the error is sticky");
        expect!(sys::cuDevicePrimaryCtxReset_v2(0), CUDA_SUCCESS);
        // SAFETY: a valid out-pointer.
        let r = unsafe { sys::cuMemAlloc_v2(&mut p, 16) };
        assert_eq!(r, CUresult::CUDA_SUCCESS, "a reset clears it");
    }

    pub(super) fn sim_refused_without_warpath_sim() {
        expect!(sys::cuInit(0), CUDA_ERROR_NO_DEVICE);
        let e = gpu_runtime::gpu().unwrap_err().to_string();
        assert!(e.contains("WARPATH_SIM=1"), "{e}");
    }

    pub(super) fn sim_init_devices_and_contexts() {
        let mut n = 0;
        let mut v = 0;
        expect!(sys::cuDriverGetVersion(&mut v), CUDA_SUCCESS);
        assert_eq!(v, 13000);
        expect!(sys::cuDeviceGetCount(&mut n), CUDA_ERROR_NOT_INITIALIZED);
        expect!(sys::cuInit(1), CUDA_ERROR_INVALID_VALUE);
        expect!(sys::cuInit(0), CUDA_SUCCESS);
        expect!(sys::cuDeviceGetCount(&mut n), CUDA_SUCCESS);
        assert_eq!(n, 1);
        let mut dev = 0;
        expect!(sys::cuDeviceGet(&mut dev, 1), CUDA_ERROR_INVALID_DEVICE);
        expect!(sys::cuDeviceGet(&mut dev, -1), CUDA_ERROR_INVALID_DEVICE);
        expect!(sys::cuDeviceGet(&mut dev, 0), CUDA_SUCCESS);
        let mut name = [0i8; 128];
        expect!(
            sys::cuDeviceGetName(name.as_mut_ptr(), 128, dev),
            CUDA_SUCCESS
        );
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        assert!(
            name.contains("simulated") && name.contains("not a GPU"),
            "{name}"
        );
        let mut major = 0;
        expect!(
            sys::cuDeviceGetAttribute(
                &mut major,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                dev
            ),
            CUDA_SUCCESS
        );
        assert_eq!(major, 9);
        // No current context yet: memory calls are refused.
        let mut p = 0;
        expect!(sys::cuMemAlloc_v2(&mut p, 64), CUDA_ERROR_INVALID_CONTEXT);
        expect!(
            sys::cuCtxSetCurrent(0x1234 as sys::CUcontext),
            CUDA_ERROR_INVALID_CONTEXT
        );
        let ctx = context();
        let mut current = std::ptr::null_mut();
        expect!(sys::cuCtxGetCurrent(&mut current), CUDA_SUCCESS);
        assert_eq!(current, ctx);
        expect!(sys::cuMemAlloc_v2(&mut p, 64), CUDA_SUCCESS);
        // Another thread has no current context until it sets one.
        std::thread::spawn(|| {
            let mut p = 0;
            expect!(sys::cuMemAlloc_v2(&mut p, 64), CUDA_ERROR_INVALID_CONTEXT);
        })
        .join()
        .unwrap();
        expect!(sys::cuMemFree_v2(p), CUDA_SUCCESS);
    }

    pub(super) fn sim_memory_rules() {
        context();
        let mut p = 0;
        expect!(sys::cuMemAlloc_v2(&mut p, 0), CUDA_ERROR_INVALID_VALUE);
        expect!(
            sys::cuMemAllocAsync(&mut p, 0, std::ptr::null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        // WARPATH_SIM_MEM=64M is the whole device.
        let (mut free, mut total) = (0, 0);
        expect!(sys::cuMemGetInfo_v2(&mut free, &mut total), CUDA_SUCCESS);
        assert_eq!((free, total), (64 << 20, 64 << 20));
        expect!(
            sys::cuMemAlloc_v2(&mut p, 65 << 20),
            CUDA_ERROR_OUT_OF_MEMORY
        );
        let a = alloc(100 * 4);
        expect!(sys::cuMemGetInfo_v2(&mut free, &mut total), CUDA_SUCCESS);
        assert_eq!(free, (64 << 20) - 400);
        assert_eq!(a % 256, 0, "allocations are 256-byte aligned");
        // Fresh memory holds the poison pattern, not zeros.
        assert!(download_u32(a, 100).iter().all(|&x| x == 0xCDCD_CDCD));
        // Copies must stay inside one live allocation.
        let host = vec![7u32; 101];
        expect!(
            sys::cuMemcpyHtoD_v2(a, host.as_ptr().cast(), 404),
            CUDA_ERROR_INVALID_VALUE
        );
        expect!(
            sys::cuMemcpyHtoD_v2(a + 4, host.as_ptr().cast(), 400),
            CUDA_ERROR_INVALID_VALUE
        );
        expect!(
            sys::cuMemcpyHtoD_v2(a, host.as_ptr().cast(), 400),
            CUDA_SUCCESS
        );
        expect!(
            sys::cuMemcpyHtoD_v2(a, host.as_ptr().cast(), 0),
            CUDA_SUCCESS
        );
        assert_eq!(download_u32(a, 100), vec![7; 100]);
        let mut back = [0u32; 4];
        expect!(
            sys::cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), a + 396, 8),
            CUDA_ERROR_INVALID_VALUE
        );
        // memsets: bounds and alignment.
        expect!(sys::cuMemsetD32_v2(a + 2, 0, 4), CUDA_ERROR_INVALID_VALUE);
        expect!(sys::cuMemsetD32_v2(a, 0, 101), CUDA_ERROR_INVALID_VALUE);
        expect!(sys::cuMemsetD8_v2(a, 1, 400), CUDA_SUCCESS);
        assert!(download_u32(a, 100).iter().all(|&x| x == 0x0101_0101));
        // Device-to-device copies check both sides.
        let b = alloc(200);
        expect!(sys::cuMemcpyDtoD_v2(b, a, 400), CUDA_ERROR_INVALID_VALUE);
        expect!(sys::cuMemcpyDtoD_v2(b, a, 200), CUDA_SUCCESS);
        // Frees: only the start of a live allocation, once.
        expect!(sys::cuMemFree_v2(a + 4), CUDA_ERROR_INVALID_VALUE);
        expect!(sys::cuMemFree_v2(a), CUDA_SUCCESS);
        expect!(sys::cuMemFree_v2(a), CUDA_ERROR_INVALID_VALUE);
        assert!(diagnostic().contains("double free"));
        expect!(
            sys::cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), a, 4),
            CUDA_ERROR_INVALID_VALUE
        );
        expect!(sys::cuMemFreeAsync(b, std::ptr::null_mut()), CUDA_SUCCESS);
        expect!(sys::cuMemGetInfo_v2(&mut free, &mut total), CUDA_SUCCESS);
        assert_eq!(free, 64 << 20);
    }

    pub(super) fn sim_event_timing_rules() {
        use sys::CUevent_flags::{CU_EVENT_DEFAULT, CU_EVENT_DISABLE_TIMING};
        context();
        let stream = std::ptr::null_mut();
        let (mut timed_a, mut timed_b, mut untimed) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        expect!(
            sys::cuEventCreate(&mut timed_a, CU_EVENT_DEFAULT as u32),
            CUDA_SUCCESS
        );
        expect!(
            sys::cuEventCreate(&mut timed_b, CU_EVENT_DEFAULT as u32),
            CUDA_SUCCESS
        );
        expect!(
            sys::cuEventCreate(&mut untimed, CU_EVENT_DISABLE_TIMING as u32),
            CUDA_SUCCESS
        );
        let mut ms = 0f32;
        // Not recorded yet.
        expect!(
            sys::cuEventElapsedTime_v2(&mut ms, timed_a, timed_b),
            CUDA_ERROR_INVALID_HANDLE
        );
        expect!(sys::cuEventRecord(timed_a, stream), CUDA_SUCCESS);
        expect!(sys::cuEventRecord(untimed, stream), CUDA_SUCCESS);
        expect!(sys::cuEventRecord(timed_b, stream), CUDA_SUCCESS);
        expect!(sys::cuEventSynchronize(timed_b), CUDA_SUCCESS);
        expect!(
            sys::cuEventElapsedTime_v2(&mut ms, timed_a, timed_b),
            CUDA_SUCCESS
        );
        assert!(ms >= 0.0);
        // Timing disabled on either side: what cudarc's `new_event(None)` creates.
        expect!(
            sys::cuEventElapsedTime_v2(&mut ms, timed_a, untimed),
            CUDA_ERROR_INVALID_HANDLE
        );
        assert!(diagnostic().contains("CU_EVENT_DISABLE_TIMING"));
        expect!(sys::cuEventDestroy_v2(untimed), CUDA_SUCCESS);
        expect!(sys::cuEventDestroy_v2(untimed), CUDA_ERROR_INVALID_HANDLE);
        expect!(
            sys::cuEventRecord(timed_a, 0x9999 as sys::CUstream),
            CUDA_ERROR_INVALID_HANDLE
        );
        // gpu-runtime's timer (the bug the simulator found: it used to disable timing).
        let gpu = gpu_runtime::gpu().unwrap();
        let t = gpu.timer().unwrap();
        assert!(t.stop().unwrap() >= 0.0);
    }

    pub(super) fn sim_module_rules() {
        context();
        let mut m = std::ptr::null_mut();
        let not_ptx = CString::new("hello, driver").unwrap();
        expect!(
            sys::cuModuleLoadData(&mut m, not_ptx.as_ptr().cast()),
            CUDA_ERROR_INVALID_IMAGE
        );
        let newer = SELFTEST_PTX.replace(".version 9.0", ".version 9.9");
        let newer = CString::new(newer).unwrap();
        expect!(
            sys::cuModuleLoadData(&mut m, newer.as_ptr().cast()),
            CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        );
        let blackwell = CString::new(SELFTEST_PTX.replace("sm_80", "sm_100")).unwrap();
        expect!(
            sys::cuModuleLoadData(&mut m, blackwell.as_ptr().cast()),
            CUDA_ERROR_INVALID_PTX
        );
        // warpath's own PTX loads; a changed copy is a stale simulator and is refused.
        static RUNTIME: gpu_runtime::PtxModule = gpu_runtime::ptx_module!("runtime");
        let runtime = module(RUNTIME.ptx);
        let stale = RUNTIME.ptx.replacen("(inputs ", "(inputs 0", 1);
        let stale = CString::new(stale).unwrap();
        expect!(
            sys::cuModuleLoadData(&mut m, stale.as_ptr().cast()),
            CUDA_ERROR_INVALID_IMAGE
        );
        assert!(diagnostic().contains("cargo xtask sim"));
        let mut f = std::ptr::null_mut();
        let missing = CString::new("no_such_kernel").unwrap();
        expect!(
            sys::cuModuleGetFunction(&mut f, runtime, missing.as_ptr()),
            CUDA_ERROR_NOT_FOUND
        );
        let _ = function(runtime, "runtime_iota_u32");
        expect!(sys::cuModuleUnload(runtime), CUDA_SUCCESS);
        expect!(sys::cuModuleUnload(runtime), CUDA_ERROR_INVALID_HANDLE);
        // Static shared memory of foreign PTX (no ptxas figures): the declarations in the body,
        // each at its alignment.
        let declares = SELFTEST_PTX.replace(
            "sim_selftest_fill(.param .u64 p0, .param .u64 p1) { ret; }",
            "sim_selftest_fill(.param .u64 p0, .param .u64 p1)\n{\n\t.shared .align 4 .b8 a[1001];\n\t.shared .align 8 .u64 b;\n\tret;\n}",
        );
        let declares = module(&declares);
        let mut smem = 0;
        let shared = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES;
        expect!(
            sys::cuFuncGetAttribute(&mut smem, shared, function(declares, "sim_selftest_fill")),
            CUDA_SUCCESS
        );
        assert_eq!(smem, 1016, "1001 bytes, padded to 8, then 8");
        // Parameter sizes in PTX must match the kernel's C++ signature.
        let wrong = CString::new(SELFTEST_PTX.replace(
            "sim_selftest_divide(.param .u64 p0, .param .u32 p1, .param .u32 p2)",
            "sim_selftest_divide(.param .u64 p0, .param .u64 p1, .param .u32 p2)",
        ))
        .unwrap();
        expect!(
            sys::cuModuleLoadData(&mut m, wrong.as_ptr().cast()),
            CUDA_ERROR_INVALID_PTX
        );
    }

    pub(super) fn sim_kernel_attributes_match_ptxas() {
        // The simulator reads static shared memory from the PTX (and takes ptxas's figure where
        // ptxas reserves more) and registers from ptxas; both must agree with
        // kernels-cuda/RESOURCES.md (ptxas, sm_90) for every kernel.
        context();
        let table = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../kernels-cuda/RESOURCES.md"
        ))
        .expect("kernels-cuda/RESOURCES.md");
        let modules = [
            gpu_runtime::ptx_module!("assignment"),
            gpu_runtime::ptx_module!("clustering"),
            gpu_runtime::ptx_module!("combinatorics"),
            gpu_runtime::ptx_module!("graph"),
            gpu_runtime::ptx_module!("pde"),
            gpu_runtime::ptx_module!("primitives"),
            gpu_runtime::ptx_module!("runtime"),
        ];
        let mut checked = 0;
        let mut bad: Vec<String> = Vec::new();
        for pm in modules {
            let m = module(pm.ptx);
            for line in pm.ptx.lines() {
                let Some(rest) = line.strip_prefix(".visible .entry ") else {
                    continue;
                };
                let name = rest.split('(').next().unwrap();
                let row = table
                    .lines()
                    .find(|l| l.starts_with(&format!("| `{name}` |")))
                    .unwrap_or_else(|| panic!("{name} missing from RESOURCES.md"));
                let cells: Vec<&str> = row.split('|').map(str::trim).collect();
                let (regs, smem): (i32, i32) =
                    (cells[5].parse().unwrap(), cells[6].parse().unwrap());
                let f = function(m, name);
                let (mut got_smem, mut got_regs) = (0, 0);
                let shared = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES;
                let num_regs = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS;
                expect!(
                    sys::cuFuncGetAttribute(&mut got_smem, shared, f),
                    CUDA_SUCCESS
                );
                expect!(
                    sys::cuFuncGetAttribute(&mut got_regs, num_regs, f),
                    CUDA_SUCCESS
                );
                if (got_regs, got_smem) != (regs, smem) {
                    bad.push(format!(
                        "{name}: simulator ({got_regs}, {got_smem}), ptxas ({regs}, {smem})"
                    ));
                }
                checked += 1;
            }
        }
        assert!(checked > 50, "only {checked} kernels checked");
        assert!(
            bad.is_empty(),
            "(registers, static shared bytes) differ:\n{}",
            bad.join("\n")
        );
    }

    pub(super) fn sim_launch_rules() {
        context();
        let m = module(SELFTEST_PTX);
        let out = alloc(4096 * 4);
        let f = function(m, "sim_selftest_fill");
        let (mut p, mut n) = (out, 4096u64);
        let mut args = [(&raw mut p).cast(), (&raw mut n).cast()];
        // Dynamic shared memory: 48 KiB without the opt-in attribute, 227 KiB with it.
        let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
        check_launches(
            f,
            &mut args,
            &[
                (1, 1025, 0, invalid),
                (0, 64, 0, invalid),
                (1, 64, 48 * 1024 + 1, invalid),
            ],
        );
        let max_dyn = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        expect!(
            sys::cuFuncSetAttribute(f, max_dyn, 300 * 1024),
            CUDA_ERROR_INVALID_VALUE
        );
        expect!(
            sys::cuFuncSetAttribute(f, max_dyn, 100 * 1024),
            CUDA_SUCCESS
        );
        assert_eq!(
            launch(f, 1, 64, 64 * 1024, &mut args),
            CUresult::CUDA_SUCCESS
        );
        // A grid smaller than the data: the grid-stride loop covers all of it.
        assert_eq!(launch(f, 3, 96, 0, &mut args), CUresult::CUDA_SUCCESS);
        expect!(sys::cuCtxSynchronize(), CUDA_SUCCESS);
        assert_eq!(download_u32(out, 4096), (0..4096).collect::<Vec<u32>>());
        // .maxntid (`__launch_bounds__`): more threads are refused.
        let bounded = function(m, "sim_selftest_bounded");
        check_launches(
            bounded,
            &mut args,
            &[(1, 129, 0, invalid), (1, 128, 0, CUresult::CUDA_SUCCESS)],
        );
        let mut max = 0;
        let max_threads = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
        expect!(
            sys::cuFuncGetAttribute(&mut max, max_threads, bounded),
            CUDA_SUCCESS
        );
        assert_eq!(max, 128);
        // Registers: 128 a thread leave room for 512 threads in a block.
        let heavy = function(m, "sim_selftest_heavy");
        expect!(
            sys::cuFuncGetAttribute(&mut max, max_threads, heavy),
            CUDA_SUCCESS
        );
        assert_eq!(max, 512);
        check_launches(
            heavy,
            &mut args,
            &[
                (1, 513, 0, CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
                (1, 512, 0, CUresult::CUDA_SUCCESS),
            ],
        );
        // A kernel's exact time is not simulated, but its results are.
        expect!(sys::cuCtxSynchronize(), CUDA_SUCCESS);
        assert_eq!(download_u32(out, 4096), (0..4096).collect::<Vec<u32>>());
    }

    pub(super) fn sim_fault_write_past_the_end() {
        context();
        let m = module(SELFTEST_PTX);
        // 100 u32: the 101st lands in the padding up to 256-byte alignment, which is checked
        // after every launch.
        let out = alloc(400);
        fill_then_fault(
            m,
            out,
            101,
            "0 bytes past the end of the 400-byte allocation",
        );
    }

    pub(super) fn sim_fault_read_into_the_guard_page() {
        context();
        let m = module(SELFTEST_PTX);
        // 1024 u32 end exactly at a page: the next read hits the inaccessible guard page.
        let input = alloc(4096);
        let out = alloc(8192);
        expect!(sys::cuMemsetD32_v2(input, 1, 1024), CUDA_SUCCESS);
        let f = function(m, "sim_selftest_copy");
        let (mut a, mut b, mut n) = (input, out, 1025u64);
        let r = launch(
            f,
            4,
            256,
            0,
            &mut [
                (&raw mut a).cast(),
                (&raw mut b).cast(),
                (&raw mut n).cast(),
            ],
        );
        assert_eq!(
            r,
            CUresult::CUDA_SUCCESS,
            "the fault shows at the next call, not the launch"
        );
        assert_sticky(
            CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
            "0 bytes past the end of the 4096-byte allocation",
        );
    }

    pub(super) fn sim_fault_argument_after_free() {
        context();
        let m = module(SELFTEST_PTX);
        let out = alloc(4096);
        expect!(sys::cuMemFree_v2(out), CUDA_SUCCESS);
        fill_then_fault(m, out, 16, "use after free");
    }

    pub(super) fn sim_fault_argument_in_host_memory() {
        context();
        let m = module(SELFTEST_PTX);
        let mut host = vec![0u32; 16];
        let p = host.as_mut_ptr() as sys::CUdeviceptr;
        fill_then_fault(m, p, 16, "not device memory");
        assert_eq!(host, vec![0; 16], "the kernel never ran");
    }

    pub(super) fn sim_fault_shared_memory_overrun() {
        context();
        let m = module(SELFTEST_PTX);
        let out = alloc(4);
        let f = function(m, "sim_selftest_shared");
        // One block of 32 writing `n` u32 into 256 bytes of dynamic shared memory.
        let shared = |n: u32| {
            let (mut p, mut n) = (out, n);
            let r = launch(
                f,
                1,
                32,
                256,
                &mut [(&raw mut p).cast(), (&raw mut n).cast()],
            );
            assert_eq!(r, CUresult::CUDA_SUCCESS);
        };
        // 64 u32 fit in 256 bytes of dynamic shared memory.
        shared(64);
        expect!(sys::cuCtxSynchronize(), CUDA_SUCCESS);
        assert_eq!(download_u32(out, 1), [63]);
        // 65 do not: the 65th write hits the guard page after the launch's shared memory.
        shared(65);
        assert_sticky(
            CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
            "past the end of the launch's 256 bytes of dynamic shared memory",
        );
    }

    pub(super) fn sim_fault_deadlock() {
        context();
        let m = module(SELFTEST_PTX);
        let out = alloc(256 * 4);
        let f = function(m, "sim_selftest_deadlock");
        let mut p = out;
        assert_eq!(
            launch(f, 1, 64, 0, &mut [(&raw mut p).cast()]),
            CUresult::CUDA_SUCCESS
        );
        assert_sticky(CUresult::CUDA_ERROR_LAUNCH_FAILED, "deadlock in block 0");
    }

    pub(super) fn sim_fault_spin_until_the_watchdog() {
        context();
        let m = module(SELFTEST_PTX);
        let flag = alloc(4);
        expect!(sys::cuMemsetD32_v2(flag, 0, 1), CUDA_SUCCESS);
        let f = function(m, "sim_selftest_spin");
        let mut p = flag;
        let t = std::time::Instant::now();
        assert_eq!(
            launch(f, 1, 32, 0, &mut [(&raw mut p).cast()]),
            CUresult::CUDA_SUCCESS
        );
        assert!(
            t.elapsed().as_secs_f64() < 30.0,
            "WARPATH_SIM_TIMEOUT=1 ends it"
        );
        assert_sticky(CUresult::CUDA_ERROR_LAUNCH_TIMEOUT, "WARPATH_SIM_TIMEOUT");
    }

    pub(super) fn sim_fault_division_by_zero() {
        context();
        let m = module(SELFTEST_PTX);
        let out = alloc(4);
        let f = function(m, "sim_selftest_divide");
        let (mut p, mut a, mut b) = (out, 7u32, 0u32);
        let r = launch(
            f,
            1,
            1,
            0,
            &mut [
                (&raw mut p).cast(),
                (&raw mut a).cast(),
                (&raw mut b).cast(),
            ],
        );
        assert_eq!(r, CUresult::CUDA_SUCCESS);
        assert_sticky(CUresult::CUDA_ERROR_LAUNCH_FAILED, "division by zero");
    }
}
