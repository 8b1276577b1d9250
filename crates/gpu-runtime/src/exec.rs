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

/// Parses a `WARPATH_BACKEND` value (`None` when unset).
fn parse_override(value: Option<&str>) -> Result<Exec, GpuError> {
    match value.map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(Exec::Auto),
        Some(v) => match v.as_str() {
            "" | "auto" => Ok(Exec::Auto),
            "cpu" => Ok(Exec::Cpu),
            "cuda" | "gpu" => Ok(Exec::Cuda),
            _ => Err(GpuError::BadBackendVariable(
                value.unwrap_or_default().to_owned(),
            )),
        },
    }
}

/// The policy itself, free of global state so it can be tested: `env` is `WARPATH_BACKEND`,
/// `detect` yields the GPU (called only when the GPU is a candidate).
fn decide(
    exec: Exec,
    env: Option<&str>,
    n: u64,
    threshold: u64,
    detect: impl FnOnce() -> Result<&'static Gpu, GpuError>,
) -> Result<Target, GpuError> {
    let choice = match exec {
        Exec::Auto => parse_override(env)?,
        explicit => explicit,
    };
    match choice {
        Exec::Cpu => Ok(Target::Cpu),
        Exec::Cuda => detect().map(Target::Cuda),
        Exec::Auto if n >= threshold => Ok(detect().map(Target::Cuda).unwrap_or(Target::Cpu)),
        Exec::Auto => Ok(Target::Cpu),
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
        let env = std::env::var("WARPATH_BACKEND").ok();
        decide(self, env.as_deref(), n, threshold, gpu)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn no_gpu() -> Result<&'static Gpu, GpuError> {
        Err(GpuError::NoDriver)
    }

    #[test]
    fn auto_falls_back_to_cpu_without_gpu() {
        assert!(matches!(
            decide(Exec::Auto, None, 1 << 30, 10, no_gpu),
            Ok(Target::Cpu)
        ));
        assert!(matches!(
            decide(Exec::Auto, Some("auto"), 1 << 30, 10, no_gpu),
            Ok(Target::Cpu)
        ));
    }

    #[test]
    fn explicit_cuda_without_gpu_is_an_error() {
        assert_eq!(
            decide(Exec::Cuda, None, 5, 10, no_gpu).unwrap_err(),
            GpuError::NoDriver
        );
    }

    #[test]
    fn small_inputs_never_probe_the_gpu() {
        let probe = || -> Result<&'static Gpu, GpuError> { panic!("must not detect") };
        assert!(matches!(
            decide(Exec::Auto, None, 9, 10, probe),
            Ok(Target::Cpu)
        ));
    }

    #[test]
    fn environment_overrides_auto_only() {
        assert!(matches!(
            decide(Exec::Auto, Some("cpu"), 1 << 30, 0, no_gpu),
            Ok(Target::Cpu)
        ));
        assert_eq!(
            decide(Exec::Auto, Some("CUDA"), 1, 10, no_gpu).unwrap_err(),
            GpuError::NoDriver
        );
        assert!(matches!(
            decide(Exec::Cpu, Some("cuda"), 1, 0, no_gpu),
            Ok(Target::Cpu)
        ));
        assert_eq!(
            decide(Exec::Cuda, Some("cpu"), 1, 0, no_gpu).unwrap_err(),
            GpuError::NoDriver
        );
    }

    #[test]
    fn bad_environment_value_is_an_error() {
        assert_eq!(
            decide(Exec::Auto, Some("tpu"), 1, 0, no_gpu).unwrap_err(),
            GpuError::BadBackendVariable("tpu".into())
        );
    }

    #[test]
    fn parses_cli_spelling() {
        assert_eq!("CPU".parse::<Exec>(), Ok(Exec::Cpu));
        assert_eq!("auto".parse::<Exec>(), Ok(Exec::Auto));
        assert_eq!("gpu".parse::<Exec>(), Ok(Exec::Cuda));
        assert!("x".parse::<Exec>().is_err());
    }
}
