//! The undirected fast path on the GPU: the balanced orientation of `orient.rs` as kernels of
//! `kernels-cuda/graph.cu` (`graph_undirected_slot_of`, `graph_undirected_next_dart`, the directed
//! pipeline's cycle labelling on the `2 E` darts, `graph_undirected_orient`), then the directed
//! pipeline on the oriented graph and `graph_undirected_map_edges`; everything per edge stays on the
//! device, and only the edge order comes back.

use gpu_runtime::{Gpu, GpuError};

use crate::euler::cuda::{Sublists, alloc_u32, cycle_labels, device_circuit, grid, launch};
use crate::{EulerError, UndirectedGraph};

/// The undirected edge ids of an Euler circuit of `g` (every degree even, `0 < E`), from the
/// smallest vertex with an edge (the directed circuit starts with edge 0, the first slot pair).
pub(super) fn circuit_order(gpu: &Gpu, g: &UndirectedGraph) -> Result<Vec<u32>, EulerError> {
    let m = g.edge_count() as usize;
    let n = g.vertex_count();
    let (m64, m2, m2_64) = (m as u64, 2 * m, 2 * m as u64);
    // The orientation holds about 11 u32 arrays of 2 E entries at its peak (half-edges, ends,
    // successors, the sublists' four, the labels' four), the directed pipeline about 50 bytes
    // per edge besides the oriented graph.
    gpu.ensure_fits(100 * m64 + 16 * n as u64 + (1 << 20))?;
    let d_halves = gpu.upload(g.half_edges())?;
    let d_ends = gpu.upload(g.ends())?;
    let mut slot_of = alloc_u32(gpu, m2)?;
    // SAFETY: halves is a permutation of 0..m2, so slot_of[0..m2) is written once per entry.
    unsafe {
        launch!(
            gpu,
            "graph_undirected_slot_of",
            grid(gpu, m2),
            &d_halves,
            &m2_64,
            &mut slot_of
        )
    };
    let mut succ = alloc_u32(gpu, m2)?;
    // SAFETY: reads halves[s] and slot_of[h ^ 1] (h < m2), writes succ[s] for s < m2.
    unsafe {
        launch!(
            gpu,
            "graph_undirected_next_dart",
            grid(gpu, m2),
            &d_halves,
            &slot_of,
            &m2_64,
            &mut succ
        )
    };
    drop(slot_of);
    let mut subs = Sublists::new(gpu, m2)?;
    let lab = cycle_labels(gpu, &succ, m2, &mut subs)?;
    drop((subs, succ));
    let mut targets = alloc_u32(gpu, m)?;
    let mut edge_of = alloc_u32(gpu, m)?;
    // SAFETY: reads lab/halves at 2j, 2j + 1 < m2 and ends at h ^ 1 < m2; writes targets[j]
    // and edge_of[j] for j < m.
    unsafe {
        launch!(
            gpu,
            "graph_undirected_orient",
            grid(gpu, m),
            &d_halves,
            &d_ends,
            &lab,
            &m64,
            &mut targets,
            &mut edge_of
        )
    };
    drop((lab, d_halves, d_ends));
    let offsets: Vec<u64> = g.offsets().iter().map(|&o| o / 2).collect();
    let d_off = gpu.upload(&offsets)?;
    let unbalanced = |v: u32| {
        EulerError::Gpu(GpuError::LaunchFailed(format!(
            "internal error: the GPU orientation left vertex {v} unbalanced"
        )))
    };
    let mut order = device_circuit(gpu, (m, n), &d_off, &targets, &unbalanced)?;
    drop((d_off, targets));
    // SAFETY: order holds directed edge ids < m; edge_of has m entries; in place, one thread
    // per position.
    unsafe {
        launch!(
            gpu,
            "graph_undirected_map_edges",
            grid(gpu, m),
            &mut order,
            &edge_of,
            &m64
        )
    };
    let mut order = gpu.download(&order)?;
    order.truncate(m);
    Ok(order)
}
