//! Kernel launches. Host code never builds an argument list by hand: `cargo xtask kernels`
//! generates, next to each `kernels-cuda/ptx/<module>.ptx`, a `<module>.rs` with one typed
//! function per `extern "C" __global__` entry (see [`kernels!`](crate::kernels)), and those
//! functions are the only callers of [`Launch`]. This file is the only place that talks to the
//! driver's launch API.

use std::ffi::c_void;

use crate::{DeviceScalar, DeviceSink, DeviceSource, Gpu, GpuError, LaunchConfig, PtxModule};

/// Whether `A` is `B`: how a generated family launcher picks the entry for its element types
/// (the test folds to a constant once the types are known).
#[doc(hidden)]
#[inline(always)]
pub fn is<A: 'static, B: 'static>() -> bool {
    std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>()
}

/// The error of a family launcher called with element types `Types` (a tuple) that none of its
/// entries takes.
#[doc(hidden)]
#[cold]
pub fn no_kernel_for<Types>(family: &'static str) -> GpuError {
    GpuError::NoKernelForTypes {
        family,
        types: std::any::type_name::<Types>(),
    }
}

/// The most argument words (8 bytes) and arguments one launch takes; warpath's largest kernel
/// signatures use about a third of each.
const MAX_WORDS: usize = 64;
const MAX_ARGS: usize = 32;

/// One launch being assembled by a generated launcher: the kernel, then its arguments in the
/// order of the CUDA signature. Not for hand-written host code (`cargo xtask tidy` checks).
#[doc(hidden)]
pub struct Launch<'g> {
    gpu: &'g Gpu,
    module: &'static PtxModule,
    kernel: &'static str,
    /// Argument bytes, each argument starting on an 8-byte boundary (inline: a launch makes no
    /// heap allocation, also inside device-resident loops).
    words: [u64; MAX_WORDS],
    /// Words used so far.
    used: usize,
    /// First word of each argument.
    args: [usize; MAX_ARGS],
    /// Arguments pushed so far.
    nargs: usize,
    /// Set when the arguments did not fit (reported by `run`).
    overflow: bool,
}

impl<'g> Launch<'g> {
    /// Starts a launch of `kernel` from `module`.
    pub fn new(gpu: &'g Gpu, module: &'static PtxModule, kernel: &'static str) -> Self {
        Launch {
            gpu,
            module,
            kernel,
            words: [0; MAX_WORDS],
            used: 0,
            args: [0; MAX_ARGS],
            nargs: 0,
            overflow: false,
        }
    }

    fn push_bytes(&mut self, bytes: &[u8]) {
        let first = self.used;
        let n = bytes.len().div_ceil(8).max(1);
        if first + n > MAX_WORDS || self.nargs == MAX_ARGS {
            self.overflow = true;
            return;
        }
        // SAFETY: words[first..first + n] lies inside the array and holds at least
        // `bytes.len()` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.words.as_mut_ptr().add(first).cast::<u8>(),
                bytes.len(),
            );
        }
        self.used += n;
        self.args[self.nargs] = first;
        self.nargs += 1;
    }

    /// A `const T*` parameter.
    pub fn read<T: DeviceScalar>(mut self, buf: &impl DeviceSource<T>) -> Self {
        let address = buf.view().address(self.gpu.stream());
        self.push_bytes(&address.to_ne_bytes());
        self
    }

    /// A `T*` parameter.
    pub fn write<T: DeviceScalar>(mut self, buf: &mut impl DeviceSink<T>) -> Self {
        let address = buf.view_mut().address(self.gpu.stream());
        self.push_bytes(&address.to_ne_bytes());
        self
    }

    /// A parameter passed by value (a number or a `#[repr(C)]` struct).
    pub fn value<T: DeviceScalar>(mut self, v: T) -> Self {
        self.push_bytes(crate::buffer::bytes_of(std::slice::from_ref(&v)));
        self
    }

    /// Queues the kernel on the GPU's stream. Does not synchronise: a fault inside the kernel is
    /// reported by the next synchronising call.
    ///
    /// # Safety
    /// The kernel's own contract: every address it computes from the arguments and the launch
    /// shape lies inside the buffers passed, and buffers it writes are not read concurrently.
    ///
    /// # Errors
    /// [`GpuError::ModuleLoad`], [`GpuError::KernelNotFound`], or [`GpuError::LaunchFailed`]
    /// when the driver refuses the launch (e.g. too many threads or too much shared memory).
    pub unsafe fn run(self, cfg: LaunchConfig) -> Result<(), GpuError> {
        let f = self.gpu.function(self.module, self.kernel)?;
        if self.overflow {
            return Err(GpuError::TooLarge(format!(
                "kernel `{}` takes more than {MAX_ARGS} arguments or {} bytes of them",
                self.kernel,
                MAX_WORDS * 8
            )));
        }
        let mut words = self.words;
        let base = words.as_mut_ptr();
        let mut params = [std::ptr::null_mut::<c_void>(); MAX_ARGS];
        for (p, &first) in params.iter_mut().zip(&self.args[..self.nargs]) {
            // SAFETY: `first` indexes inside `words`, which does not move any more.
            *p = unsafe { base.add(first) }.cast::<c_void>();
        }
        let params = &mut params[..self.nargs];
        self.gpu.context().bind_to_thread()?;
        // SAFETY: `params` points at one correctly sized value per kernel parameter (the
        // generated launcher pushes them in the signature's order, and `cargo xtask kernels`
        // checks their sizes against the PTX); the kernel's memory contract is the caller's.
        unsafe {
            cudarc::driver::result::launch_kernel(
                f.cu_function(),
                cfg.grid_dim,
                cfg.block_dim,
                cfg.shared_mem_bytes,
                self.gpu.stream().cu_stream(),
                params,
            )
        }
        .map_err(GpuError::launch)
    }
}

/// The parameter type of one launcher argument: `read T` a device buffer the kernel reads,
/// `write T` one it writes, `value T` a scalar or a `#[repr(C)]` struct passed by value.
#[doc(hidden)]
#[macro_export]
macro_rules! launch_arg {
    (read $t:ty) => { &impl $crate::DeviceSource<$t> };
    (write $t:ty) => { &mut impl $crate::DeviceSink<$t> };
    (value $t:ty) => { $t };
}

/// The body of the files `cargo xtask kernels` generates (`kernels-cuda/ptx/<module>.rs`, read
/// through [`kernels!`](crate::kernels)): the module's `MODULE` static, the constants its `.cu`
/// file shares with the host, and one `unsafe fn` launcher per entry, or per family of entries
/// that differ only in their element types (the launcher then picks the entry from its type
/// parameters: by word width or by exact type). Each argument is `name: read T`, `write T` or
/// `value T` (see `launch_arg!`), in the CUDA signature's order. Not for hand-written code.
#[doc(hidden)]
#[macro_export]
macro_rules! launchers {
    (
        module $m:literal;
        constants { $($c:ident: $ct:ty = $cv:literal),* $(,)? }
        $(fn $name:ident $sig:literal ($($p:ident: $k:ident $t:ty),* $(,)?);)*
        $(family $fam:ident<$($g:ident),+> by $how:ident $phrase:literal
            [$($member:ident ($($mg:ident $mv:tt),+) $mdoc:literal),+]
            ($($fp:ident: $fk:ident $ft:ty),* $(,)?);)*
    ) => {
        #[doc = concat!("The PTX of `kernels-cuda/", $m, ".cu`.")]
        #[allow(dead_code)]
        pub(crate) static MODULE: $crate::PtxModule = $crate::ptx_module!($m);
        $(
            #[doc = concat!("`", stringify!($c), "` in `kernels-cuda/", $m, ".cu` (`WARPATH_SHARE_WITH_HOST`).")]
            #[allow(dead_code)]
            pub(crate) const $c: $ct = $cv;
        )*
        $(
            #[doc = concat!("Launches `", $sig, "` (kernels-cuda/", $m, ".cu) on `gpu`'s stream; does not synchronise.")]
            #[doc = $crate::launch_safety_doc!()]
            #[doc = "A module or kernel that cannot be loaded, or a launch the driver refuses."]
            #[allow(dead_code, clippy::too_many_arguments)]
            pub(crate) unsafe fn $name(
                gpu: &$crate::Gpu,
                cfg: $crate::LaunchConfig,
                $($p: $crate::launch_arg!($k $t)),*
            ) -> ::std::result::Result<(), $crate::GpuError> {
                // SAFETY: the kernel's contract is forwarded to the caller.
                unsafe {
                    $crate::launch::Launch::new(gpu, &MODULE, stringify!($name))$(.$k($p))*.run(cfg)
                }
            }
        )*
        $(
            #[doc = concat!("Launches the entry of the `", stringify!($fam), "_*` family (kernels-cuda/", $m, ".cu) ", $phrase, " the element types of the arguments, on `gpu`'s stream; does not synchronise. The entries:")]
            #[doc = ""]
            $(#[doc = concat!("- ", $mdoc)])+
            #[doc = $crate::launch_safety_doc!()]
            #[doc = "[`GpuError::NoKernelForTypes`](::gpu_runtime::GpuError::NoKernelForTypes) when no entry"]
            #[doc = "takes these element types; a module or kernel that cannot be loaded, or a launch the"]
            #[doc = "driver refuses."]
            #[allow(dead_code, clippy::too_many_arguments)]
            pub(crate) unsafe fn $fam<$($g: $crate::DeviceScalar),+>(
                gpu: &$crate::Gpu,
                cfg: $crate::LaunchConfig,
                $($fp: $crate::launch_arg!($fk $ft)),*
            ) -> ::std::result::Result<(), $crate::GpuError> {
                let kernel = $(if true $(&& $crate::launch_member!($how $mg $mv))+ {
                    stringify!($member)
                } else)+ {
                    return Err($crate::launch::no_kernel_for::<($($g),+)>(stringify!($fam)));
                };
                // SAFETY: the kernel's contract is forwarded to the caller.
                unsafe {
                    $crate::launch::Launch::new(gpu, &MODULE, kernel)$(.$fk($fp))*.run(cfg)
                }
            }
        )*
    };
}

/// Whether a family launcher's type parameter `G` fits one entry: `width G 4` (4 bytes) or
/// `exact G f32` (exactly `f32`). Folds to a constant once the types are known.
#[doc(hidden)]
#[macro_export]
macro_rules! launch_member {
    (width $g:ident $bytes:literal) => {
        ::std::mem::size_of::<$g>() == $bytes
    };
    (exact $g:ident $ty:ty) => {
        $crate::launch::is::<$g, $ty>()
    };
}

/// The `# Safety` section of every generated launcher's doc, and the `# Errors` heading.
#[doc(hidden)]
#[macro_export]
macro_rules! launch_safety_doc {
    () => {
        "\n# Safety\nThe kernel's memory contract (see its source): every access it derives \
         from these arguments and `cfg` stays inside the buffers passed.\n\n# Errors"
    };
}
