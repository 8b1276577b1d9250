//! The undirected fast path on the GPU: the balanced orientation of `orient.rs` as kernels of
//! `kernels-cuda/graph.cu` (`graph_undirected_slot_of`, `graph_undirected_next_dart`, the directed
//! pipeline's cycle labelling on the `2 E` darts, `graph_undirected_orient`), then the directed
//! pipeline on the oriented graph and `graph_undirected_map_edges`; everything per edge stays on the
//! device, and only the edge order comes back.
//!
//! A GPU leaf: it imports only the directed pipeline's device stages (`euler/cuda.rs`, itself a
//! leaf), the generated launchers and the error type, and takes the graph as plain slices.

use gpu_runtime::{Gpu, GpuError};

use crate::EulerError;
use crate::euler::cuda::{Sublists, alloc_u32, cycle_labels, device_circuit, grid, written_pair};
use crate::kernels;

/// The undirected edge ids of an Euler circuit (every degree even, `0 < E`) of the undirected
/// multigraph with `halves` (the `2 E` half-edges grouped by vertex), `ends` (the vertex of
/// every half-edge) and the incidence `offsets` (`V + 1` entries), from the smallest vertex
/// with an edge (the directed circuit starts with edge 0, the first slot pair).
pub(super) fn circuit_order(
    gpu: &Gpu,
    halves: &[u32],
    ends: &[u32],
    offsets: &[u64],
) -> Result<Vec<u32>, EulerError> {
    let m = halves.len() / 2;
    let n = offsets.len() - 1;
    let (m64, m2, m2_64) = (m as u64, 2 * m, 2 * m as u64);
    // The orientation holds about 11 u32 arrays of 2 E entries at its peak (half-edges, ends,
    // successors, the sublists' four, the labels' four), the directed pipeline about 50 bytes
    // per edge besides the oriented graph.
    gpu.ensure_fits(100 * m64 + 16 * n as u64 + (1 << 20))?;
    let d_halves = gpu.upload(halves)?;
    let d_ends = gpu.upload(ends)?;
    let mut slot_of = alloc_u32(gpu, m2)?;
    // SAFETY: halves is a permutation of 0..m2, so slot_of[0..m2) is written once per entry.
    unsafe {
        kernels::graph_undirected_slot_of(gpu, grid(gpu, m2), &d_halves, m2_64, &mut slot_of)?
    };
    let mut succ = alloc_u32(gpu, m2)?;
    // SAFETY: reads halves[s] and slot_of[h ^ 1] (h < m2), writes succ[s] for s < m2.
    unsafe {
        kernels::graph_undirected_next_dart(
            gpu,
            grid(gpu, m2),
            &d_halves,
            &slot_of,
            m2_64,
            &mut succ,
        )?
    };
    drop(slot_of);
    let mut subs = Sublists::new(gpu, m2)?;
    let lab = cycle_labels(gpu, &succ, m2, &mut subs)?;
    drop((subs, succ));
    let (targets, edge_of) = written_pair(gpu, m, |targets, edge_of| {
        // SAFETY: reads lab/halves at 2j, 2j + 1 < m2 and ends at h ^ 1 < m2; writes
        // targets[j] and edge_of[j] for j < m.
        unsafe {
            kernels::graph_undirected_orient(
                gpu,
                grid(gpu, m),
                &d_halves,
                &d_ends,
                &lab,
                m64,
                targets,
                edge_of,
            )
        }
    })?;
    drop((lab, d_halves, d_ends));
    let offsets: Vec<u64> = offsets.iter().map(|&o| o / 2).collect();
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
    unsafe { kernels::graph_undirected_map_edges(gpu, grid(gpu, m), &mut order, &edge_of, m64)? };
    let mut order = gpu.download(&order)?;
    order.truncate(m);
    Ok(order)
}
