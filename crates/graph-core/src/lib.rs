#![doc = include_str!("../README.md")]
// The README links the seed's experiments, a module behind the `experiments` feature: docs
// built without it leave those links unresolved (docs.rs builds them with it; so does
// `cargo doc --features experiments`, which reports every other broken link).
#![cfg_attr(not(feature = "experiments"), allow(rustdoc::broken_intra_doc_links))]

mod components;
mod debruijn;
mod dot;
mod error;
mod euler;
#[cfg(feature = "experiments")]
pub mod experiments;
mod generate;
mod graph;
mod io;
mod par;
mod undirected;

/// The typed launchers of `kernels-cuda/graph.cu` (used by `euler/cuda.rs`,
/// `euler/undirected/cuda.rs` and `graph/cuda.rs`).
mod kernels {
    gpu_runtime::kernels!("graph");
}

pub use components::{
    Components, check_euler_circuit_conditions, connected_components, edge_component_count,
    euler_path_endpoints, is_strongly_connected, spanning_forest, strongly_connected_components,
    undirected_spanning_forest, weakly_connected_components,
};
pub use debruijn::{KmerGraph, kmer_graph_from_file, kmer_graph_from_reads, spell_walk};
pub use dot::{DotOptions, dot_available, dot_quote, render_dot, write_dot, write_dot_undirected};
pub use error::{EulerError, GraphError};
pub use euler::{
    EULER_GPU_THRESHOLD, EULER_INTERLEAVE_THRESHOLD, EULER_PARALLEL_MIN_THREADS,
    EULER_PARALLEL_THRESHOLD, EulerStages, EulerTrail, GpuEulerTimes, MAX_EULER_EDGES,
    UNDIRECTED_EULER_GPU_THRESHOLD, UNDIRECTED_EULER_ORIENT_THRESHOLD, euler_circuit,
    euler_circuit_cuda_timed, euler_circuit_hierholzer, euler_circuit_parallel,
    euler_circuit_parallel_staged, euler_circuit_staged, euler_path, euler_path_hierholzer,
    is_euler_circuit, is_euler_path, is_undirected_euler_circuit, is_undirected_euler_path,
    undirected_euler_circuit, undirected_euler_circuit_hierholzer,
    undirected_euler_circuit_oriented, undirected_euler_path, undirected_euler_path_hierholzer,
    verify_euler_trail, verify_undirected_euler_trail,
};
pub use generate::{
    EulerStyle, de_bruijn_graph, de_bruijn_word, random_euler_graph, random_undirected_euler_graph,
};
pub use gpu_runtime::{Backend, Exec};
pub use graph::{
    EDGE_LIST_GPU_THRESHOLD, EdgeList, GpuEdgeListTimes, Graph, REVERSE_GPU_THRESHOLD, VertexNames,
    edge_list, edge_list_cuda_timed,
};
pub use io::{GraphFormat, detect_format, read_graph, read_graph_file, write_adjacency};
pub use undirected::{MAX_UNDIRECTED_EDGES, UndirectedGraph};
