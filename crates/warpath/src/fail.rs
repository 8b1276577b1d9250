//! What a failed run reports: a message and a kind (`--json` prints both), and the exit code.

use gpu_runtime::GpuError;
use warpath_io::IoError;

/// An error with a kind chosen where it was raised (argument conflicts, missing GPUs, failed
/// verifications). Other errors get their kind from their type ([`kind_of`]).
#[derive(Debug)]
pub(crate) struct Fail {
    pub(crate) kind: &'static str,
    pub(crate) message: String,
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Fail {}

/// A usage error: flags that conflict or do not apply, named in the message.
pub(crate) fn usage(message: impl Into<String>) -> anyhow::Error {
    Fail {
        kind: "usage",
        message: message.into(),
    }
    .into()
}

/// A result that failed its independent check.
pub(crate) fn unverified(message: impl Into<String>) -> anyhow::Error {
    Fail {
        kind: "verification",
        message: message.into(),
    }
    .into()
}

/// `--backend cuda` (or `WARPATH_BACKEND=cuda`) where there is no GPU, or where the path asked
/// for has none.
pub(crate) fn no_gpu(message: impl Into<String>) -> anyhow::Error {
    Fail {
        kind: "no_gpu",
        message: message.into(),
    }
    .into()
}

/// The kind of an error for `--json`: from a [`Fail`] anywhere in the chain, else from the
/// library error types, else `error`.
pub(crate) fn kind_of(e: &anyhow::Error) -> &'static str {
    for cause in e.chain() {
        if let Some(f) = cause.downcast_ref::<Fail>() {
            return f.kind;
        }
        if let Some(io) = cause.downcast_ref::<IoError>() {
            return io.kind();
        }
        if let Some(g) = cause.downcast_ref::<GpuError>() {
            return gpu_kind(g);
        }
        if let Some(g) = cause.downcast_ref::<graph_core::GraphError>() {
            return match g {
                graph_core::GraphError::Parse { .. } => "parse",
                graph_core::GraphError::Io(_) => "io",
                graph_core::GraphError::OutOfMemory { .. } => "out_of_memory",
                _ => "input",
            };
        }
        if let Some(a) = cause.downcast_ref::<assembly::AssemblyError>() {
            return match a {
                assembly::AssemblyError::Gpu(g) => gpu_kind(g),
                assembly::AssemblyError::Io { .. } => "io",
                assembly::AssemblyError::Reads { .. }
                | assembly::AssemblyError::ColorSets { .. } => "parse",
                assembly::AssemblyError::Disk { .. } => "io",
                assembly::AssemblyError::DiskSpace { .. } => "disk_space",
                assembly::AssemblyError::Memory(_) => "out_of_memory",
                assembly::AssemblyError::Interrupted => "interrupted",
                assembly::AssemblyError::Internal(_) => "internal",
                _ => "input",
            };
        }
        if cause.downcast_ref::<graph_core::EulerError>().is_some() {
            return "no_solution";
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return if io.kind() == std::io::ErrorKind::BrokenPipe {
                "broken_pipe"
            } else {
                "io"
            };
        }
        if let Some(assignment::AssignmentError::OutOfMemory { .. }) =
            cause.downcast_ref::<assignment::AssignmentError>()
        {
            return "out_of_memory";
        }
        if cause.downcast_ref::<pde::PdeError>().is_some()
            || cause
                .downcast_ref::<assignment::AssignmentError>()
                .is_some()
            || cause.downcast_ref::<clustering::KMeansError>().is_some()
            || cause.downcast_ref::<combinatorics::PermError>().is_some()
            || cause
                .downcast_ref::<combinatorics::DeBruijnError>()
                .is_some()
            || cause
                .downcast_ref::<gpu_primitives::PrimitiveError>()
                .is_some()
        {
            return "input";
        }
    }
    "error"
}

fn gpu_kind(g: &GpuError) -> &'static str {
    match g {
        GpuError::OutOfMemory { .. } => "out_of_memory",
        GpuError::BadBackendVariable(_) => "usage",
        GpuError::NoDriver
        | GpuError::DriverTooOld { .. }
        | GpuError::NoDevice(_)
        | GpuError::Disabled
        | GpuError::ContextFailed(_) => "no_gpu",
        _ => "gpu",
    }
}

/// Exit code of a failure: 2 for usage errors (as clap), 130 for a run stopped by Ctrl-C (as
/// shells report SIGINT), 1 otherwise.
pub(crate) fn exit_code(kind: &str) -> i32 {
    match kind {
        "usage" => 2,
        "interrupted" => 130,
        _ => 1,
    }
}
