//! Probes of warpath's simulated CUDA driver (`cargo xtask sim`): whether the loaded
//! `libcuda.so` is it, whether `WARPATH_SIM` allows it, and its extra entry points (the last
//! diagnostic, a per-thread memory limit). The device handle, the errors and the test helpers
//! all ask here, so none of them depends on another for it.

use cudarc::driver::sys;

/// The environment variable that allows warpath's simulated CUDA driver to be used.
pub(crate) const SIM_VARIABLE: &str = "WARPATH_SIM";

/// Whether `WARPATH_SIM` allows the simulated driver (`1`, `true` or `yes`).
pub(crate) fn simulation_allowed() -> bool {
    matches!(
        std::env::var(SIM_VARIABLE).as_deref(),
        Ok("1") | Ok("true") | Ok("yes")
    )
}

/// Whether the loaded `libcuda.so` is warpath's simulated driver: it alone exports
/// `warpath_sim_version`. Call only after `is_culib_present()` returned true.
pub(crate) fn driver_is_simulated() -> bool {
    // SAFETY: looks a symbol up by name in the driver library cudarc has loaded; the symbol is
    // not called here.
    unsafe {
        sys::culib()
            .get::<unsafe extern "C" fn() -> *const std::ffi::c_char>(b"warpath_sim_version\0")
            .is_ok()
    }
}

/// The simulated driver's last diagnostic (why a call failed, where a kernel faulted), cleared
/// by the call; `None` on a real driver or when it has nothing to say.
pub(crate) fn simulator_diagnostic() -> Option<String> {
    // SAFETY: `is_culib_present` is a dlopen probe; `culib` returns the loaded library.
    if !unsafe { sys::is_culib_present() } || !driver_is_simulated() {
        return None;
    }
    // SAFETY: the simulated driver exports `const char* warpath_sim_take_error(void)`, which
    // returns a NUL-terminated string that stays valid until the calling thread's next call.
    unsafe {
        let f = sys::culib()
            .get::<unsafe extern "C" fn() -> *const std::ffi::c_char>(b"warpath_sim_take_error\0")
            .ok()?;
        let p = f();
        if p.is_null() {
            return None;
        }
        let text = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
        (!text.is_empty()).then_some(text)
    }
}

/// The simulated driver's `warpath_sim_set_thread_memory_limit`, when it is the driver.
pub(crate) fn simulator_thread_memory_limit() -> Option<unsafe extern "C" fn(usize)> {
    // SAFETY: `is_culib_present` is a dlopen probe; `culib` returns the loaded library, and the
    // symbol, when present, is `void warpath_sim_set_thread_memory_limit(size_t)`.
    unsafe {
        if !sys::is_culib_present() || !driver_is_simulated() {
            return None;
        }
        sys::culib()
            .get::<unsafe extern "C" fn(usize)>(b"warpath_sim_set_thread_memory_limit\0")
            .ok()
            .map(|f| *f)
    }
}
