#![doc = include_str!("../README.md")]
// The README links the seed's experiments, a module behind the `experiments` feature: docs
// built without it leave those links unresolved (docs.rs builds them with it; so does
// `cargo doc --features experiments`, which reports every other broken link).
#![cfg_attr(not(feature = "experiments"), allow(rustdoc::broken_intra_doc_links))]

mod adaptive;
mod cuda;
mod error;
#[cfg(feature = "experiments")]
pub mod experiment;
mod explicit;
mod implicit;
mod kernel_types;
mod output;
mod params;
mod scenario;
#[cfg(test)]
mod test_support;
pub mod tridiag;

pub use adaptive::{AdaptiveOptions, AdaptiveStats, adaptive_run};
pub use cuda::{
    BATCH_PCR_MAX_M, FUSED_MAX_N, GpuExplicitTiming, GpuTridiagTiming, explicit_gpu_timing,
    tridiag_gpu_timing,
};
pub use error::{PdeError, TridiagError};
pub use explicit::{
    EXPLICIT_FUSED_GPU_THRESHOLD, EXPLICIT_GPU_THRESHOLD, explicit_run, explicit_run_batch,
    explicit_run_unchecked, explicit_step_reference,
};
pub use implicit::{ImplicitStats, ImplicitVariant, NewtonOptions, implicit_run, newton_trace};
pub use output::{SnapshotWriter, write_snapshots};
pub use params::{
    Boundary, FhnParams, FhnState, LimitRule, StabilityLimit, flush_tiny, reaction,
    reaction_derivative,
};
pub use scenario::{
    KeepSnapshots, Scenario, Scheme, Simulation, SnapshotSink, Stimulus, StreamedRun, crossing,
    fit_speed, nagumo_front, nagumo_speed, simulate, simulate_streamed, simulate_with_stimulus,
};
pub use tridiag::TridiagSolver;
