//! The edge list of a CSR graph: the start and end vertex of every edge, as two arrays (the
//! seed's `getEdges`). The ends are the CSR targets; the starts come from the offsets.
//!
//! CPU: [`Graph::edge_sources`], parallel over the vertices (rayon). GPU: one thread per edge
//! finds its start vertex by binary search over the offsets (`graph/cuda.rs`).

use gpu_runtime::{Exec, Target};
use rayon::prelude::*;

use super::Graph;
use super::cuda::{self, GpuEdgeListTimes};
use crate::GraphError;
use crate::par::PAR_THRESHOLD;

/// `Exec::Auto` extracts the edge list of graphs with at least this many edges on the GPU (when
/// there is one).
///
/// Provisional, not measured on a GPU: the extraction is one pass of memory traffic on the CPU
/// (4 bytes written per edge, parallel), against 8 bytes per vertex up and 4 bytes per edge
/// down over PCIe, so the GPU pays off only when the edges are wanted on the device or the
/// CPU has few cores.
pub const EDGE_LIST_GPU_THRESHOLD: u64 = 1 << 26;

/// Every edge of a graph as its start and end vertex, edge `e` being
/// `(sources[e], targets[e])`, in edge-id order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EdgeList {
    /// The start vertex of every edge.
    pub sources: Vec<u32>,
    /// The end vertex of every edge (a copy of [`Graph::targets`]).
    pub targets: Vec<u32>,
}

impl EdgeList {
    /// The number of edges.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Whether there is no edge.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

/// The edge list of `g` (start and end of every edge, in edge-id order) on the CPU or the GPU,
/// as `exec` chooses, and the backend that ran: the seed's "edges from CSR".
///
/// CPU: parallel over the vertices (rayon), each filling its out-edge range. GPU (`Exec::Cuda`,
/// or `Exec::Auto` from [`EDGE_LIST_GPU_THRESHOLD`] edges): the offsets are uploaded, one
/// thread per edge binary-searches its start vertex, the starts are downloaded; the ends are
/// the host's targets, copied.
///
/// # Complexity
/// `O(V + E)` work on the CPU; `O(E log V)` device work and `8 V + 4 E` bytes over PCIe on the
/// GPU. `8 E` bytes for the result.
///
/// # Errors
/// [`GraphError::Gpu`] when `exec` asks for a GPU that is missing or fails (out of memory
/// carries the sizes); [`GraphError::TooLarge`] when the GPU is asked for a graph of
/// `2^32` edges or more.
///
/// # Examples
/// ```
/// use graph_core::{Exec, Graph, edge_list};
/// let g = Graph::from_edges(3, &[(2, 0), (0, 1), (2, 1)])?;
/// let (list, _backend) = edge_list(&g, Exec::Cpu)?;
/// assert_eq!(list.sources, vec![0, 2, 2]);
/// assert_eq!(list.targets, vec![1, 0, 1]);
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn edge_list(g: &Graph, exec: Exec) -> Result<(EdgeList, gpu_runtime::Backend), GraphError> {
    let m = g.edge_count();
    let target = exec.resolve(m, EDGE_LIST_GPU_THRESHOLD)?;
    let backend = target.backend();
    match target {
        Target::Cpu => Ok((
            EdgeList {
                sources: g.edge_sources(),
                targets: copy_targets(g),
            },
            backend,
        )),
        Target::Cuda(_) => edge_list_cuda_timed(g).map(|(l, _)| (l, backend)),
    }
}

/// The edge list of `g` on the GPU, with the device times of its parts (upload, kernel,
/// download), measured with CUDA events.
///
/// # Complexity
/// As [`edge_list`] on the GPU.
///
/// # Errors
/// [`GraphError::Gpu`] without a usable GPU or when it fails; [`GraphError::TooLarge`] for
/// `2^32` edges or more.
///
/// # Examples
/// ```
/// use graph_core::{Graph, edge_list_cuda_timed};
/// let g = Graph::from_edges(2, &[(0, 1), (1, 0)])?;
/// match edge_list_cuda_timed(&g) {
///     Ok((list, times)) => {
///         assert_eq!(list.sources, vec![0, 1]);
///         println!("kernel {:.3} ms", times.compute * 1e3);
///     }
///     Err(e) => println!("no GPU: {e}"),
/// }
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn edge_list_cuda_timed(g: &Graph) -> Result<(EdgeList, GpuEdgeListTimes), GraphError> {
    let gpu = gpu_runtime::gpu()?;
    let m = g.edge_count();
    if m >= u64::from(u32::MAX) {
        return Err(GraphError::TooLarge {
            what: "edges for the GPU edge list",
            count: u128::from(m),
            max: u128::from(u32::MAX) - 1,
        });
    }
    let (sources, times) = cuda::edge_sources(gpu, g.offsets(), m as usize)?;
    Ok((
        EdgeList {
            sources,
            targets: copy_targets(g),
        },
        times,
    ))
}

/// A copy of the targets, parallel above [`PAR_THRESHOLD`] edges.
fn copy_targets(g: &Graph) -> Vec<u32> {
    let t = g.targets();
    if t.len() < PAR_THRESHOLD {
        return t.to_vec();
    }
    let mut out = vec![0u32; t.len()];
    out.par_chunks_mut(1 << 16)
        .zip(t.par_chunks(1 << 16))
        .for_each(|(o, i)| o.copy_from_slice(i));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EulerStyle, random_euler_graph};

    fn reference(g: &Graph) -> EdgeList {
        let (sources, targets) = g.edges().unzip();
        EdgeList { sources, targets }
    }

    fn cases() -> Vec<Graph> {
        let mut gs = vec![
            Graph::empty(1).unwrap(),
            Graph::from_edges(1, &[(0, 0)]).unwrap(),
            // Empty rows first, between and last.
            Graph::from_edges(6, &[(1, 2), (1, 1), (3, 0), (3, 3), (3, 4)]).unwrap(),
            Graph::from_edges(3, &[(2, 0), (2, 1), (2, 2)]).unwrap(),
        ];
        for m in [31u64, 1000, 70_001] {
            gs.push(random_euler_graph(m, EulerStyle::Deep, m).unwrap());
            gs.push(random_euler_graph(m, EulerStyle::Shallow, m).unwrap());
        }
        gs
    }

    #[test]
    fn cpu_edge_list_matches_the_edges_iterator() {
        for g in cases() {
            let (l, b) = edge_list(&g, Exec::Cpu).unwrap();
            assert_eq!(b, gpu_runtime::Backend::Cpu);
            assert_eq!(l, reference(&g));
            assert_eq!(l.len() as u64, g.edge_count());
        }
    }

    #[test]
    fn gpu_edge_list_matches_cpu() {
        let Some(_gpu) = gpu_runtime::testing::gpu_for_test("edge_list on the GPU against the CPU")
        else {
            return;
        };
        for g in cases() {
            let (l, b) = edge_list(&g, Exec::Cuda).unwrap();
            assert_eq!(b, gpu_runtime::Backend::Cuda);
            assert_eq!(l, reference(&g), "{} edges", g.edge_count());
            let (t, times) = edge_list_cuda_timed(&g).unwrap();
            assert_eq!(t, l);
            assert!(times.compute >= 0.0);
        }
    }

    #[test]
    fn cuda_without_a_gpu_is_a_typed_error() {
        if gpu_runtime::gpu().is_ok() {
            return;
        }
        let g = Graph::from_edges(2, &[(0, 1), (1, 0)]).unwrap();
        assert!(matches!(edge_list(&g, Exec::Cuda), Err(GraphError::Gpu(_))));
        assert!(edge_list(&g, Exec::Auto).is_ok());
    }
}
