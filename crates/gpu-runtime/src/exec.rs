//! Where an algorithm runs: the [`Exec`] choice callers make and the [`Target`] it resolves to.

use crate::{Gpu, GpuError, gpu};

/// The caller's choice of where an algorithm runs. Every public algorithm in warpath takes one.
///
/// - [`Exec::Auto`] (the default) runs on the GPU when one is present *and* the input is at
///   least the algorithm's threshold (set from its benchmark), otherwise on the CPU. The
///   environment variable `WARPATH_BACKEND=cpu|cuda|auto` overrides `Auto`: `cpu` never uses
///   the GPU, `cuda` always does and makes a missing GPU an error.
/// - [`Exec::Cpu`] always runs on the CPU.
/// - [`Exec::Cuda`] always runs on the GPU; no GPU is an error, never a silent fallback.
///
/// Explicit `Cpu` and `Cuda` are not affected by `WARPATH_BACKEND`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Exec {
    /// GPU when present and worth it, else CPU.
    #[default]
    Auto,
    /// CPU only.
    Cpu,
    /// GPU only.
    Cuda,
}

/// Which backend actually ran, for reports (`warpath ... --json` prints it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The CPU (possibly several threads).
    Cpu,
    /// An NVIDIA GPU through CUDA.
    Cuda,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        })
    }
}

/// Where a call will run, with the GPU handle when it is the GPU.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    /// Run on the CPU.
    Cpu,
    /// Run on this GPU.
    Cuda(&'static Gpu),
}

impl Target {
    /// The backend this target runs on.
    pub fn backend(&self) -> Backend {
        match self {
            Target::Cpu => Backend::Cpu,
            Target::Cuda(_) => Backend::Cuda,
        }
    }
}

/// The value of `WARPATH_BACKEND`, parsed.
fn backend_override() -> Result<Exec, GpuError> {
    match std::env::var("WARPATH_BACKEND") {
        Err(_) => Ok(Exec::Auto),
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Exec::Auto),
            "cpu" => Ok(Exec::Cpu),
            "cuda" | "gpu" => Ok(Exec::Cuda),
            _ => Err(GpuError::BadBackendVariable(v)),
        },
    }
}

impl Exec {
    /// Decides where a call on `n` elements runs, given the algorithm's GPU `threshold`
    /// (the input size from which the GPU pays, measured by its benchmark).
    ///
    /// # Errors
    /// [`Exec::Cuda`] (or `Auto` under `WARPATH_BACKEND=cuda`) without a usable GPU returns the
    /// detection error; a malformed `WARPATH_BACKEND` is [`GpuError::BadBackendVariable`].
    ///
    /// # Examples
    /// ```
    /// use gpu_runtime::{Exec, Target};
    /// // Small inputs never go to the GPU under Auto.
    /// let t = Exec::Auto.resolve(10, 1 << 20).unwrap();
    /// assert!(matches!(t, Target::Cpu));
    /// assert!(matches!(Exec::Cpu.resolve(1 << 30, 0).unwrap(), Target::Cpu));
    /// ```
    pub fn resolve(self, n: u64, threshold: u64) -> Result<Target, GpuError> {
        let choice = match self {
            Exec::Auto => backend_override()?,
            explicit => explicit,
        };
        match choice {
            Exec::Cpu => Ok(Target::Cpu),
            Exec::Cuda => gpu().map(Target::Cuda),
            Exec::Auto => {
                if n >= threshold {
                    Ok(gpu().map(Target::Cuda).unwrap_or(Target::Cpu))
                } else {
                    Ok(Target::Cpu)
                }
            }
        }
    }
}

impl std::str::FromStr for Exec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Exec::Auto),
            "cpu" => Ok(Exec::Cpu),
            "cuda" | "gpu" => Ok(Exec::Cuda),
            _ => Err(format!("backend must be auto, cpu or cuda, not `{s}`")),
        }
    }
}
