//! The reverse (transpose) graph: the edges sorted by end vertex, stably, so that the in-edges
//! of every vertex keep edge-id order.
//!
//! CPU: a stable parallel counting sort by end vertex (one histogram pass and one scatter pass
//! over the edges). GPU: gpu-primitives' device API, a stable radix sort of the pairs
//! (end vertex, start vertex [and edge id]) and the row offsets from its histogram of the end
//! vertices.

use gpu_primitives::device;
use gpu_runtime::{Exec, Gpu, Target};
use rayon::prelude::*;

use super::Graph;
use crate::GraphError;
use crate::par::{PAR_THRESHOLD, SharedMut, counting_sort_by_key, par_exclusive_scan};

/// `Exec::Auto` reverses graphs with at least this many edges on the GPU (when there is one).
///
/// Provisional: the threshold of gpu-primitives' sorts ([`gpu_primitives::GPU_THRESHOLD_SORT`]),
/// not yet measured for reversal on a GPU (none was available when it was set). The GPU path
/// moves about 20 bytes per edge over PCIe, against two passes over the edges on the CPU.
pub const REVERSE_GPU_THRESHOLD: u64 = gpu_primitives::GPU_THRESHOLD_SORT;

impl Graph {
    /// The reverse (transpose) graph and, for each of its edges, the id of the edge of `self`
    /// it reverses, on the CPU or the GPU as `exec` chooses. In-edges keep edge-id order (a
    /// stable sort by end vertex), so the result is the same on every backend.
    ///
    /// CPU: a stable parallel counting sort. GPU (`Exec::Cuda`, or `Exec::Auto` from
    /// [`REVERSE_GPU_THRESHOLD`] edges): gpu-primitives' stable radix sort of the pairs
    /// (end, start << 32 | edge id) on the device, with the row offsets from its histogram of
    /// the ends. Vertex names are kept.
    ///
    /// # Complexity
    /// `O(V + E)` work: a few passes over the edges (CPU); `O(E)` device work and about 20
    /// bytes per edge over PCIe (GPU).
    ///
    /// # Errors
    /// [`GraphError::Gpu`] when `exec` asks for a GPU that is missing, or the GPU fails (out of
    /// memory carries the sizes); [`GraphError::TooLarge`] when the GPU is asked for explicitly
    /// and the graph has more than `u32::MAX` edges (the device pairs hold 32-bit edge ids;
    /// `Exec::Auto` runs such graphs on the CPU).
    ///
    /// # Examples
    /// ```
    /// use graph_core::{Exec, Graph};
    /// let g = Graph::from_edges(3, &[(0, 1), (0, 2), (2, 1)])?;
    /// let (r, ids) = g.reverse_with_edge_ids_on(Exec::Auto)?;
    /// assert_eq!(r.successors(1), &[0, 2]);
    /// assert_eq!(ids, vec![0, 2, 1]);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn reverse_with_edge_ids_on(&self, exec: Exec) -> Result<(Graph, Vec<u64>), GraphError> {
        match reverse_target(self.edge_count(), exec, true)? {
            Target::Cpu => Ok(reverse_cpu(self, true)),
            Target::Cuda(gpu) => reverse_cuda(self, gpu, true),
        }
    }

    /// The reverse (transpose) graph, on the CPU or the GPU as `exec` chooses: every edge
    /// `u -> v` becomes `v -> u`, the in-edges of each vertex in edge-id order.
    ///
    /// As [`Graph::reverse_with_edge_ids_on`] without the edge ids (the GPU sorts
    /// (end, start) pairs: about 12 bytes per edge over PCIe).
    ///
    /// # Complexity
    /// `O(V + E)` work.
    ///
    /// # Errors
    /// [`GraphError::Gpu`] when `exec` asks for a GPU that is missing, or the GPU fails (out of
    /// memory carries the sizes).
    ///
    /// # Examples
    /// ```
    /// use graph_core::{Exec, Graph};
    /// let g = Graph::from_edges(2, &[(0, 1), (0, 1), (1, 1)])?;
    /// assert_eq!(g.reverse_on(Exec::Cpu)?.successors(1), &[0, 0, 1]);
    /// assert_eq!(g.reverse_on(Exec::Auto)?, g.reverse());
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn reverse_on(&self, exec: Exec) -> Result<Graph, GraphError> {
        match reverse_target(self.edge_count(), exec, false)? {
            Target::Cpu => Ok(reverse_cpu(self, false).0),
            Target::Cuda(gpu) => Ok(reverse_cuda(self, gpu, false)?.0),
        }
    }

    /// The reverse graph and the edge ids on the CPU: [`Graph::reverse_with_edge_ids_on`]
    /// with `Exec::Cpu`, which cannot fail.
    ///
    /// # Complexity
    /// `O(V + E)` work, a few passes over the edges.
    ///
    /// # Examples
    /// ```
    /// let g = graph_core::Graph::from_edges(3, &[(0, 1), (0, 2), (2, 1)])?;
    /// let (r, ids) = g.reverse_with_edge_ids();
    /// assert_eq!(r.successors(1), &[0, 2]);
    /// assert_eq!(ids, vec![0, 2, 1]);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn reverse_with_edge_ids(&self) -> (Graph, Vec<u64>) {
        reverse_cpu(self, true)
    }

    /// The reverse (transpose) graph on the CPU: [`Graph::reverse_on`] with `Exec::Cpu`, which
    /// cannot fail.
    ///
    /// # Complexity
    /// `O(V + E)` work.
    ///
    /// # Examples
    /// ```
    /// let g = graph_core::Graph::from_edges(2, &[(0, 1), (0, 1)])?;
    /// assert_eq!(g.reverse().successors(1), &[0, 0]);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn reverse(&self) -> Graph {
        reverse_cpu(self, false).0
    }
}

/// Where a reversal of `m` edges runs. The GPU pairs carry 32-bit edge ids, so a graph with more
/// edges goes to the CPU under `Exec::Auto` and is an error under `Exec::Cuda`.
fn reverse_target(m: u64, exec: Exec, with_ids: bool) -> Result<Target, GraphError> {
    let target = exec.resolve(m, REVERSE_GPU_THRESHOLD)?;
    if with_ids && m > u64::from(u32::MAX) && matches!(target, Target::Cuda(_)) {
        if exec == Exec::Cuda {
            return Err(GraphError::TooLarge {
                what: "edges for the GPU reversal with edge ids",
                count: u128::from(m),
                max: u128::from(u32::MAX),
            });
        }
        return Ok(Target::Cpu);
    }
    Ok(target)
}

/// The reverse graph (and the edge ids when `with_ids`, else an empty vector) by a stable
/// parallel counting sort of the edges by end vertex.
fn reverse_cpu(g: &Graph, with_ids: bool) -> (Graph, Vec<u64>) {
    let sources = g.edge_sources();
    let m = g.targets.len();
    let mut t = vec![0u32; m];
    let mut ids = vec![0u64; if with_ids { m } else { 0 }];
    let wt = SharedMut::new(&mut t);
    let wi = SharedMut::new(&mut ids);
    let offsets = counting_sort_by_key(&g.targets, g.vertex_count(), |i, pos| {
        // SAFETY: counting_sort_by_key hands out each position once; `ids` has m entries when
        // with_ids.
        unsafe {
            wt.write(pos as usize, sources[i]);
            if with_ids {
                wi.write(pos as usize, i as u64);
            }
        }
    });
    (
        Graph {
            offsets,
            targets: t,
            names: g.names.clone(),
        },
        ids,
    )
}

/// The reverse graph on the GPU through gpu-primitives' device API: the row offsets from the
/// histogram of the ends (one download of `V` counts, then an in-place exclusive scan on the
/// host: gpu-primitives' scan writes a new array, which measured slower here), the
/// rows from a stable radix sort of (end, value) pairs where the value is the start vertex, or
/// `start << 32 | edge id` when `with_ids` (then `m <= u32::MAX`, checked by the caller).
fn reverse_cuda(g: &Graph, gpu: &Gpu, with_ids: bool) -> Result<(Graph, Vec<u64>), GraphError> {
    let m = g.targets.len();
    let n = g.vertex_count();
    if m == 0 {
        return Ok(reverse_cpu(g, with_ids));
    }
    let value_bytes: u64 = if with_ids { 8 } else { 4 };
    // The keys and values, the sort's copies of both and its temporary of the same size, and
    // the histogram.
    gpu.ensure_fits(3 * (4 + value_bytes) * m as u64 + 8 * n as u64)?;
    let d_ends = gpu.upload(&g.targets)?;
    // n < u32::MAX: every graph checks its vertex count when it is built.
    let offsets = offsets_from_counts(device::histogram(gpu, &d_ends, n as u32)?);
    let (targets, ids) = if with_ids {
        let packed = packed_starts_ids(g);
        let d_packed = gpu.upload(&packed)?;
        drop(packed);
        let (_, d_sorted) = device::radix_sort_pairs(gpu, &d_ends, &d_packed)?;
        drop((d_ends, d_packed));
        unpack_starts_ids(&gpu.download(&d_sorted)?)
    } else {
        let d_starts = gpu.upload(&g.edge_sources())?;
        let (_, d_sorted) = device::radix_sort_pairs(gpu, &d_ends, &d_starts)?;
        drop((d_ends, d_starts));
        (gpu.download(&d_sorted)?, Vec::new())
    };
    Ok((
        Graph {
            offsets,
            targets,
            names: g.names.clone(),
        },
        ids,
    ))
}

/// CSR offsets from the in-degree of every vertex: an in-place exclusive scan with the total
/// appended (gpu-primitives' scan writes a new array, which measured slower here).
fn offsets_from_counts(mut counts: Vec<u64>) -> Vec<u64> {
    counts.push(0);
    par_exclusive_scan(&mut counts);
    counts
}

/// The sort values of the GPU reversal with edge ids: `start << 32 | edge id` for every edge
/// (edge ids fit 32 bits: checked by [`reverse_target`]).
fn packed_starts_ids(g: &Graph) -> Vec<u64> {
    g.edge_sources()
        .par_iter()
        .with_min_len(PAR_THRESHOLD)
        .enumerate()
        .map(|(e, &s)| (u64::from(s) << 32) | e as u64)
        .collect()
}

/// Splits sorted packed values into the reverse graph's targets (the starts) and edge ids.
fn unpack_starts_ids(sorted: &[u64]) -> (Vec<u32>, Vec<u64>) {
    let starts = sorted
        .par_iter()
        .with_min_len(PAR_THRESHOLD)
        .map(|&p| (p >> 32) as u32)
        .collect();
    let ids = sorted
        .par_iter()
        .with_min_len(PAR_THRESHOLD)
        .map(|&p| p & u64::from(u32::MAX))
        .collect();
    (starts, ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_runtime::testing::gpu_for_test;
    use gpu_runtime::testing::runs_out_of_memory;

    /// The reference: for every vertex in order, its in-edges in edge-id order.
    fn reference(g: &Graph) -> (Vec<u64>, Vec<u32>, Vec<u64>) {
        let n = g.vertex_count();
        let mut rows: Vec<Vec<(u32, u64)>> = vec![Vec::new(); n];
        for v in 0..n as u32 {
            for e in g.out_edges(v) {
                rows[g.targets()[e as usize] as usize].push((v, e));
            }
        }
        let mut off = vec![0u64];
        let (mut t, mut ids) = (Vec::new(), Vec::new());
        for r in rows {
            for (s, e) in r {
                t.push(s);
                ids.push(e);
            }
            off.push(t.len() as u64);
        }
        (off, t, ids)
    }

    fn random_graph(n: usize, m: usize, seed: u64) -> Graph {
        Graph::from_edges(n, &crate::graph::tests::edges_of(n as u32, m, seed)).unwrap()
    }

    /// Sizes around warp, block and tile boundaries, and a graph with one vertex (every key
    /// equal) and one with many more vertices than edges.
    fn cases() -> Vec<Graph> {
        let mut gs: Vec<Graph> = [0usize, 1, 31, 32, 33, 1023, 1024, 1025, 65_537, 200_003]
            .iter()
            .map(|&m| random_graph((m / 3).max(1), m, m as u64 + 7))
            .collect();
        gs.push(random_graph(1, 5000, 3));
        gs.push(random_graph(100_000, 1000, 4));
        gs.push(Graph::empty(10).unwrap());
        gs
    }

    #[test]
    fn cpu_matches_reference() {
        for g in cases() {
            let (off, t, ids) = reference(&g);
            let (r, got) = g.reverse_with_edge_ids_on(Exec::Cpu).unwrap();
            assert_eq!(r.offsets(), &off[..]);
            assert_eq!(r.targets(), &t[..]);
            assert_eq!(got, ids);
            assert_eq!(g.reverse_on(Exec::Cpu).unwrap(), r);
            assert_eq!(g.reverse(), r);
            assert_eq!(g.reverse_with_edge_ids(), (r, ids));
        }
    }

    #[test]
    fn names_are_kept() {
        let names = crate::VertexNames::from_names(vec!["a".into(), "b".into()]).unwrap();
        let g = Graph::from_edges(2, &[(0, 1)])
            .unwrap()
            .with_names(names)
            .unwrap();
        let r = g.reverse_on(Exec::Cpu).unwrap();
        assert_eq!(r.vertex_label(0), "a");
        assert_eq!(r.successors(1), &[0]);
    }

    /// The GPU path's data flow with gpu-primitives' CPU histogram and stable pair sort in
    /// place of the device calls (checks the packing, the offsets and the stability argument
    /// without a GPU).
    #[test]
    fn sort_model_of_the_gpu_path_matches_cpu() {
        for g in cases() {
            let n = g.vertex_count();
            let (cpu, cpu_ids) = reverse_cpu(&g, true);
            let counts = gpu_primitives::histogram(g.targets(), n, Exec::Cpu).unwrap();
            let offsets = offsets_from_counts(counts);
            let mut keys = g.targets().to_vec();
            let mut packed = packed_starts_ids(&g);
            gpu_primitives::radix_sort_pairs(&mut keys, &mut packed, Exec::Cpu).unwrap();
            let (targets, ids) = unpack_starts_ids(&packed);
            assert_eq!(offsets, cpu.offsets(), "{} edges", g.edge_count());
            assert_eq!(targets, cpu.targets(), "{} edges", g.edge_count());
            assert_eq!(ids, cpu_ids, "{} edges", g.edge_count());
            let mut keys = g.targets().to_vec();
            let mut starts = g.edge_sources();
            gpu_primitives::radix_sort_pairs(&mut keys, &mut starts, Exec::Cpu).unwrap();
            assert_eq!(starts, cpu.targets());
        }
    }

    #[test]
    fn gpu_matches_cpu() {
        let Some(_) = gpu_for_test("reverse_on GPU against CPU") else {
            return;
        };
        for g in cases() {
            let (cpu, cpu_ids) = g.reverse_with_edge_ids_on(Exec::Cpu).unwrap();
            let (gpu, gpu_ids) = g.reverse_with_edge_ids_on(Exec::Cuda).unwrap();
            assert_eq!(gpu, cpu, "{} edges", g.edge_count());
            assert_eq!(gpu_ids, cpu_ids, "{} edges", g.edge_count());
            assert_eq!(g.reverse_on(Exec::Cuda).unwrap(), cpu);
        }
    }

    #[test]
    fn gpu_reverse_out_of_memory_is_a_typed_error() {
        let g = random_graph(100, 5000, 2);
        runs_out_of_memory(
            1024,
            || [g.reverse_on(Exec::Cuda)],
            |e| {
                matches!(
                    e,
                    GraphError::Gpu(gpu_runtime::GpuError::OutOfMemory { .. })
                )
            },
        );
    }

    #[test]
    fn cuda_without_a_gpu_is_a_typed_error() {
        let g = random_graph(10, 100, 1);
        if gpu_runtime::gpu().is_err() {
            assert!(matches!(g.reverse_on(Exec::Cuda), Err(GraphError::Gpu(_))));
            assert!(matches!(
                g.reverse_with_edge_ids_on(Exec::Cuda),
                Err(GraphError::Gpu(_))
            ));
        }
        // Auto on a small graph never needs the GPU.
        assert_eq!(g.reverse_on(Exec::Auto).unwrap(), g.reverse());
    }

    #[test]
    fn too_many_edges_for_gpu_ids() {
        let big = u64::from(u32::MAX) + 1;
        // The CPU is always allowed; the GPU check only applies when the GPU was chosen.
        assert!(matches!(
            reverse_target(big, Exec::Cpu, true),
            Ok(Target::Cpu)
        ));
        match reverse_target(big, Exec::Cuda, true) {
            Err(GraphError::TooLarge { count, max, .. }) => {
                assert_eq!((count, max), (u128::from(big), u128::from(u32::MAX)));
            }
            Err(GraphError::Gpu(_)) => assert!(gpu_runtime::gpu().is_err()),
            other => panic!("unexpected {other:?}"),
        }
        if gpu_runtime::gpu().is_ok() {
            assert!(matches!(
                reverse_target(big, Exec::Cuda, false),
                Ok(Target::Cuda(_))
            ));
        }
    }
}
