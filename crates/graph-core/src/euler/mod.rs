//! Euler circuits and paths: checkers, Hierholzer (sequential), the parallel algorithm on the
//! CPU (rayon) and on the GPU (CUDA), and Euler paths through a virtual edge.

mod cuda;
#[cfg(test)]
mod cuda_model;
mod hierholzer;
mod parallel;
mod undirected;

pub use cuda::GpuEulerTimes;
use gpu_runtime::{Backend, Exec, Target};
pub use parallel::EulerStages;
pub(crate) use parallel::mix32;
use rayon::prelude::*;
pub use undirected::{
    UNDIRECTED_EULER_GPU_THRESHOLD, UNDIRECTED_EULER_ORIENT_THRESHOLD, is_undirected_euler_circuit,
    is_undirected_euler_path, undirected_euler_circuit, undirected_euler_circuit_hierholzer,
    undirected_euler_circuit_oriented, undirected_euler_path, undirected_euler_path_hierholzer,
    verify_undirected_euler_trail,
};

use crate::components::{edge_component_count, first_unbalanced, path_endpoints_by_degree};
use crate::par::PAR_THRESHOLD;
use crate::{EulerError, Graph};

/// The most edges the Euler functions accept (edge ids are `u32`, one value is reserved).
pub const MAX_EULER_EDGES: u64 = u32::MAX as u64 - 1;

/// From this many edges `Exec::Auto` runs the Euler circuit on the GPU when there is one.
/// Not yet measured on a GPU (no device was available while writing it): a conservative
/// guess, where the transfers (12 bytes per edge) are small next to the CPU time.
pub const EULER_GPU_THRESHOLD: u64 = 1 << 22;

/// From this many edges the CPU path uses the parallel algorithm instead of Hierholzer, when
/// rayon has at least [`EULER_PARALLEL_MIN_THREADS`] threads.
pub const EULER_PARALLEL_THRESHOLD: u64 = 1 << 21;

/// From this many edges Hierholzer runs its interleaved walks (below it, one walk: the records
/// fit in cache, so there is no latency to hide). The single walk takes each vertex's out-edges
/// in id order, so its circuit is the greedy smallest-edge-first one; the interleaved walks
/// give another (deterministic) circuit.
pub const EULER_INTERLEAVE_THRESHOLD: u64 = 1 << 16;

/// The CPU path takes the parallel algorithm only with this many rayon threads or more: on one
/// thread it does not beat Hierholzer's interleaved walks, so one thread keeps Hierholzer (the
/// measurements behind this are in the repository's BENCHMARKS.md, graph-core, thresholds).
pub const EULER_PARALLEL_MIN_THREADS: usize = 2;

/// Whether the CPU path should take the parallel algorithm for `edges` edges.
fn prefer_parallel(edges: u64) -> bool {
    edges >= EULER_PARALLEL_THRESHOLD && rayon::current_num_threads() >= EULER_PARALLEL_MIN_THREADS
}

/// An Euler circuit or path: the edges in walk order and the vertices visited.
///
/// `vertices` has `edges.len() + 1` entries (`vertices[i]` is the start of `edges[i]` and
/// `vertices[i + 1]` its end); for a circuit the first and last vertex are equal. A graph
/// without edges has the empty trail.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EulerTrail {
    /// Edge ids (positions in the CSR arrays) in walk order.
    pub edges: Vec<u32>,
    /// The vertex sequence, one longer than `edges` (empty when `edges` is).
    pub vertices: Vec<u32>,
}

impl EulerTrail {
    /// Builds the vertex sequence of an edge sequence that starts at `start`.
    fn from_edges(g: &Graph, edges: Vec<u32>, start: u32) -> Self {
        if edges.is_empty() {
            return EulerTrail::default();
        }
        let t = g.targets();
        let mut vertices = vec![0u32; edges.len() + 1];
        vertices[0] = start;
        if edges.len() < PAR_THRESHOLD {
            for (v, &e) in vertices[1..].iter_mut().zip(&edges) {
                *v = t[e as usize];
            }
        } else {
            vertices[1..]
                .par_iter_mut()
                .zip(edges.par_iter())
                .for_each(|(v, &e)| *v = t[e as usize]);
        }
        EulerTrail { edges, vertices }
    }
}

/// Checks that `trail` is an Euler trail of `g`: every edge exactly once, consecutive edges
/// meet, and the vertex sequence matches the edges; with `closed`, it also ends where it
/// starts. Independent of the algorithms: edge `e` leaves vertex `v` when `offsets[v] <= e <
/// offsets[v + 1]`.
///
/// # Complexity
/// `O(E)`, one pass (a 42M-edge circuit in about a second).
///
/// # Errors
/// A message saying what is wrong.
///
/// # Examples
/// ```
/// use graph_core::{Graph, EulerTrail, verify_euler_trail};
/// let g = Graph::from_edges(2, &[(0, 1), (1, 0)])?;
/// let t = EulerTrail { edges: vec![1, 0], vertices: vec![1, 0, 1] };
/// assert!(verify_euler_trail(&g, &t, true).is_ok());
/// let bad = EulerTrail { edges: vec![1, 1], vertices: vec![1, 0, 1] };
/// assert!(verify_euler_trail(&g, &bad, true).is_err());
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn verify_euler_trail(g: &Graph, trail: &EulerTrail, closed: bool) -> Result<(), String> {
    let (offsets, targets) = (g.offsets(), g.targets());
    let n = g.vertex_count();
    check_trail(g.edge_count(), trail, closed, |e, u, w| {
        let leaves_u = (u as usize) < n
            && (offsets[u as usize]..offsets[u as usize + 1]).contains(&u64::from(e));
        let t = targets[e as usize];
        (!leaves_u || w != t).then(|| {
            format!(
                "edge {e} goes {} -> {t}, the vertex sequence says {u} -> {w}",
                g.source(e as u64)
            )
        })
    })
}

/// What every Euler trail check shares: `m` edges, each in range and used once, one more
/// vertex than edges (at most one without edges), closed when asked. `wrong(e, u, w)` says why
/// edge `e` cannot lead from `u` to `w`, if it cannot.
fn check_trail(
    m: u64,
    trail: &EulerTrail,
    closed: bool,
    wrong: impl Fn(u32, u32, u32) -> Option<String>,
) -> Result<(), String> {
    if trail.edges.len() as u64 != m {
        return Err(format!(
            "the trail has {} edges, the graph {m}",
            trail.edges.len()
        ));
    }
    if m == 0 {
        return if trail.vertices.len() <= 1 {
            Ok(())
        } else {
            Err("a trail without edges visits at most one vertex".into())
        };
    }
    if trail.vertices.len() as u64 != m + 1 {
        return Err(format!(
            "{} vertices for {m} edges (expected {})",
            trail.vertices.len(),
            m + 1
        ));
    }
    let mut seen = vec![false; m as usize];
    for (i, &e) in trail.edges.iter().enumerate() {
        if e as u64 >= m {
            return Err(format!("position {i}: edge {e} does not exist"));
        }
        if std::mem::replace(&mut seen[e as usize], true) {
            return Err(format!("position {i}: edge {e} used twice"));
        }
        if let Some(why) = wrong(e, trail.vertices[i], trail.vertices[i + 1]) {
            return Err(format!("position {i}: {why}"));
        }
    }
    if closed && trail.vertices[0] != trail.vertices[m as usize] {
        return Err(format!(
            "the trail starts at {} but ends at {}",
            trail.vertices[0], trail.vertices[m as usize]
        ));
    }
    Ok(())
}

/// Whether `trail` is an Euler circuit of `g` (see [`verify_euler_trail`]).
///
/// # Complexity
/// `O(E)`.
///
/// # Examples
/// ```
/// use graph_core::{Graph, Exec, euler_circuit, is_euler_circuit};
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2), (2, 0), (0, 0)])?;
/// let (t, _) = euler_circuit(&g, Exec::Cpu)?;
/// assert!(is_euler_circuit(&g, &t));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn is_euler_circuit(g: &Graph, trail: &EulerTrail) -> bool {
    verify_euler_trail(g, trail, true).is_ok()
}

/// Whether `trail` is an Euler path of `g` (open or closed; see [`verify_euler_trail`]).
///
/// # Complexity
/// `O(E)`.
///
/// # Examples
/// ```
/// use graph_core::{Graph, Exec, euler_path, is_euler_path};
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2), (2, 0), (0, 2)])?;
/// let (t, _) = euler_path(&g, Exec::Cpu)?;
/// assert!(is_euler_path(&g, &t));
/// assert_eq!(t.vertices, vec![0, 1, 2, 0, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn is_euler_path(g: &Graph, trail: &EulerTrail) -> bool {
    verify_euler_trail(g, trail, false).is_ok()
}

fn check_size(g: &Graph) -> Result<(), EulerError> {
    if g.edge_count() > MAX_EULER_EDGES {
        return Err(EulerError::TooManyEdges {
            edges: g.edge_count(),
            max: MAX_EULER_EDGES,
        });
    }
    Ok(())
}

fn check_balanced(g: &Graph) -> Result<(), EulerError> {
    let out = g.out_degrees();
    let ind = g.in_degrees();
    match first_unbalanced(&out, &ind) {
        Some((vertex, in_degree, out_degree)) => Err(EulerError::Unbalanced {
            vertex,
            in_degree,
            out_degree,
        }),
        None => Ok(()),
    }
}

fn first_vertex_with_edges(g: &Graph) -> u32 {
    g.offsets().partition_point(|&o| o == 0).saturating_sub(1) as u32
}

fn disconnected(g: &Graph, kind: &'static str) -> EulerError {
    EulerError::Disconnected {
        kind,
        components: edge_component_count(g),
    }
}

/// An Euler circuit by Hierholzer's algorithm on one core: iterative, per-vertex edge cursors,
/// no per-step allocation. From 2^16 edges it runs 32 walks interleaved so that their cache
/// misses overlap, and splices the trails they find at their anchors (a single walk waits for
/// one DRAM latency per edge); smaller graphs take the single walk.
///
/// # Complexity
/// `O(V + E)` time, `O(V + E)` memory.
///
/// # Errors
/// [`EulerError::Unbalanced`] (the first vertex with in != out), [`EulerError::Disconnected`]
/// (with the number of weak components), [`EulerError::TooManyEdges`].
///
/// # Examples
/// ```
/// use graph_core::{Graph, euler_circuit_hierholzer, is_euler_circuit};
/// let g = Graph::from_edges(3, &[(0, 1), (1, 0), (0, 2), (2, 0)])?;
/// let t = euler_circuit_hierholzer(&g)?;
/// assert_eq!(t.vertices, vec![0, 1, 0, 2, 0]);
/// assert!(is_euler_circuit(&g, &t));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn euler_circuit_hierholzer(g: &Graph) -> Result<EulerTrail, EulerError> {
    check_size(g)?;
    check_balanced(g)?;
    if g.edge_count() == 0 {
        return Ok(EulerTrail::default());
    }
    let start = first_vertex_with_edges(g);
    let (edges, vertices) = hierholzer::hierholzer_trail(g, start);
    if (edges.len() as u64) < g.edge_count() {
        return Err(disconnected(g, "circuit"));
    }
    Ok(EulerTrail { edges, vertices })
}

/// An Euler path by Hierholzer's algorithm, from the vertex with out = in + 1 (or a circuit
/// when every vertex is balanced).
///
/// # Complexity
/// `O(V + E)`.
///
/// # Errors
/// [`EulerError::PathDegrees`], [`EulerError::Disconnected`], [`EulerError::TooManyEdges`].
///
/// # Examples
/// ```
/// use graph_core::{Graph, euler_path_hierholzer, is_euler_path};
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 1), (1, 3)])?;
/// let t = euler_path_hierholzer(&g)?;
/// assert_eq!(t.vertices, vec![0, 1, 2, 1, 3]);
/// assert!(is_euler_path(&g, &t));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn euler_path_hierholzer(g: &Graph) -> Result<EulerTrail, EulerError> {
    check_size(g)?;
    let ends = path_endpoints_by_degree(g)?;
    if g.edge_count() == 0 {
        return Ok(EulerTrail::default());
    }
    let start = ends.map_or_else(|| first_vertex_with_edges(g), |(s, _)| s);
    let (edges, vertices) = hierholzer::hierholzer_trail(g, start);
    if (edges.len() as u64) < g.edge_count() {
        return Err(disconnected(g, "path"));
    }
    Ok(EulerTrail { edges, vertices })
}

/// An Euler circuit by the parallel algorithm on the CPU (rayon): pairing, cycle labelling by
/// sampled list ranking, a spanning forest of the cycle graph, splicing, ranking (see the
/// stage list in the crate's README). The circuit starts with edge 0.
///
/// # Complexity
/// `O(V + E)` work in a constant number of passes over the edges plus pointer jumping on
/// the rare splitter-free cycles longer than 256 edges (`O(log L)` rounds for the longest such
/// cycle `L`); `O((V + E) / p)` time on `p` threads for the parallel stages. Memory: about 33
/// bytes per edge at the peak besides the graph (16-byte edge records and two arenas of
/// 8-byte pairs), 8 of which are the result.
///
/// # Errors
/// As [`euler_circuit_hierholzer`].
///
/// # Examples
/// ```
/// use graph_core::{Graph, euler_circuit_parallel, is_euler_circuit};
/// let g = Graph::from_edges(3, &[(0, 1), (1, 0), (0, 2), (2, 0), (1, 1)])?;
/// let t = euler_circuit_parallel(&g)?;
/// assert!(is_euler_circuit(&g, &t));
/// assert_eq!(t.edges[0], 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn euler_circuit_parallel(g: &Graph) -> Result<EulerTrail, EulerError> {
    // The degrees are checked by the pairing (its final cursors are the in-degrees).
    euler_circuit_parallel_staged(g).map(|(t, _)| t)
}

/// [`euler_circuit_parallel`] with the wall-clock time of each of its stages and the number of
/// cycles the pairing left (the seed's "partitions"; 1 means the pairing alone was a circuit).
///
/// # Complexity
/// As [`euler_circuit_parallel`].
///
/// # Errors
/// As [`euler_circuit_hierholzer`].
///
/// # Examples
/// ```
/// use graph_core::{Graph, euler_circuit_parallel_staged, is_euler_circuit};
/// // Two 2-cycles through vertex 0: the pairing leaves 2 cycles, one link joins them.
/// let g = Graph::from_edges(3, &[(0, 1), (0, 2), (1, 0), (2, 0)])?;
/// let (t, stages) = euler_circuit_parallel_staged(&g)?;
/// assert!(is_euler_circuit(&g, &t));
/// assert_eq!(stages.cycles_after_pairing, 2);
/// assert_eq!(stages.forest_links, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn euler_circuit_parallel_staged(g: &Graph) -> Result<(EulerTrail, EulerStages), EulerError> {
    check_size(g)?;
    let mut stages = EulerStages::default();
    if g.edge_count() == 0 {
        return Ok((EulerTrail::default(), stages));
    }
    let (edges, vertices) = parallel::circuit_order(
        g.offsets(),
        g.targets(),
        parallel::CPU_SPLITTER_SPACING,
        &mut stages,
    )?;
    Ok((EulerTrail { edges, vertices }, stages))
}

fn circuit_on(g: &Graph, target: Target) -> Result<EulerTrail, EulerError> {
    match target {
        Target::Cpu => {
            if prefer_parallel(g.edge_count()) {
                euler_circuit_parallel(g)
            } else {
                euler_circuit_hierholzer(g)
            }
        }
        Target::Cuda(gpu) => {
            check_size(g)?;
            if g.edge_count() == 0 {
                check_balanced(g)?;
                return Ok(EulerTrail::default());
            }
            let order =
                cuda::circuit_order(gpu, (g.offsets(), g.targets()), &|v| unbalanced(g, v))?;
            Ok(EulerTrail::from_edges(g, order, g.source(0)))
        }
    }
}

/// An Euler circuit where `exec` says: on the CPU, Hierholzer, or the parallel algorithm for
/// large graphs on many threads ([`EULER_PARALLEL_THRESHOLD`], [`EULER_PARALLEL_MIN_THREADS`]);
/// on the GPU, the parallel algorithm in CUDA (every stage
/// a kernel). Returns the circuit and the backend that ran.
///
/// # Complexity
/// `O(V + E)` (see [`euler_circuit_parallel`]).
///
/// # Errors
/// [`EulerError::Unbalanced`], [`EulerError::Disconnected`], [`EulerError::TooManyEdges`];
/// [`EulerError::Gpu`] when the GPU is asked for and missing or fails.
///
/// # Examples
/// ```
/// use graph_core::{Exec, Graph, euler_circuit, is_euler_circuit, EulerError};
/// let g = Graph::from_edges(2, &[(0, 1), (1, 0), (1, 1)])?;
/// let (t, backend) = euler_circuit(&g, Exec::Auto)?;
/// assert!(is_euler_circuit(&g, &t));
/// let g = Graph::from_edges(2, &[(0, 1)])?;
/// assert!(matches!(euler_circuit(&g, Exec::Cpu), Err(EulerError::Unbalanced { vertex: 0, .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn euler_circuit(g: &Graph, exec: Exec) -> Result<(EulerTrail, Backend), EulerError> {
    let target = exec.resolve(g.edge_count(), EULER_GPU_THRESHOLD)?;
    Ok((circuit_on(g, target)?, target.backend()))
}

/// [`euler_circuit`], with the stage times and the cycles left after pairing
/// ([`EulerStages`]) when the parallel CPU algorithm is the one that runs (`None` for
/// Hierholzer and the GPU).
///
/// # Complexity
/// As [`euler_circuit`].
///
/// # Errors
/// As [`euler_circuit`].
///
/// # Examples
/// ```
/// use graph_core::{Exec, Graph, euler_circuit_staged, is_euler_circuit};
/// let g = Graph::from_edges(2, &[(0, 1), (1, 0), (1, 1)])?;
/// let (t, _backend, stages) = euler_circuit_staged(&g, Exec::Cpu)?;
/// assert!(is_euler_circuit(&g, &t));
/// assert!(stages.is_none()); // a small graph: Hierholzer
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn euler_circuit_staged(
    g: &Graph,
    exec: Exec,
) -> Result<(EulerTrail, Backend, Option<EulerStages>), EulerError> {
    let target = exec.resolve(g.edge_count(), EULER_GPU_THRESHOLD)?;
    if matches!(target, Target::Cpu) && prefer_parallel(g.edge_count()) {
        let (t, stages) = euler_circuit_parallel_staged(g)?;
        return Ok((t, target.backend(), Some(stages)));
    }
    Ok((circuit_on(g, target)?, target.backend(), None))
}

/// An Euler circuit on the GPU with the device times of its parts (upload, compute,
/// download), measured with CUDA events: what the benchmark reports.
///
/// # Complexity
/// As [`euler_circuit_parallel`], on the device.
///
/// # Errors
/// [`EulerError::Gpu`] without a usable GPU; otherwise as [`euler_circuit`].
///
/// # Examples
/// ```
/// use graph_core::{Graph, euler_circuit_cuda_timed, is_euler_circuit};
/// let g = Graph::from_edges(2, &[(0, 1), (1, 0)])?;
/// match euler_circuit_cuda_timed(&g) {
///     Ok((t, times)) => {
///         assert!(is_euler_circuit(&g, &t));
///         println!("compute {:.3} ms", times.compute * 1e3);
///     }
///     Err(e) => println!("no GPU: {e}"),
/// }
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn euler_circuit_cuda_timed(g: &Graph) -> Result<(EulerTrail, GpuEulerTimes), EulerError> {
    let gpu = gpu_runtime::gpu()?;
    check_size(g)?;
    if g.edge_count() == 0 {
        check_balanced(g)?;
        return Ok((EulerTrail::default(), GpuEulerTimes::default()));
    }
    let (order, times) =
        cuda::circuit_order_timed(gpu, (g.offsets(), g.targets()), &|v| unbalanced(g, v))?;
    Ok((EulerTrail::from_edges(g, order, g.source(0)), times))
}

/// The error for a vertex `v` of `g` whose in-degree differs from its out-degree (the GPU
/// pipeline reports the first one it finds).
fn unbalanced(g: &Graph, v: u32) -> EulerError {
    EulerError::Unbalanced {
        vertex: v,
        in_degree: g.targets().iter().filter(|&&t| t == v).count() as u64,
        out_degree: g.out_degree(v),
    }
}

/// `g` plus one edge `from -> to` appended to `from`'s out-edges; returns the new graph and the
/// id of the added edge (ids at or after it shift by one).
fn with_virtual_edge(g: &Graph, from: u32, to: u32) -> Result<(Graph, u64), EulerError> {
    let ins = g.offsets()[from as usize + 1];
    let mut offsets = g.offsets().to_vec();
    for o in &mut offsets[from as usize + 1..] {
        *o += 1;
    }
    let mut targets = Vec::with_capacity(g.targets().len() + 1);
    targets.extend_from_slice(&g.targets()[..ins as usize]);
    targets.push(to);
    targets.extend_from_slice(&g.targets()[ins as usize..]);
    let aug = Graph::from_csr(offsets, targets).map_err(|_| EulerError::TooManyEdges {
        edges: g.edge_count() + 1,
        max: MAX_EULER_EDGES,
    })?;
    Ok((aug, ins))
}

/// An Euler path where `exec` says. Small graphs on the CPU use Hierholzer from the start
/// vertex; otherwise a virtual edge from the path's end to its start turns the path into a
/// circuit of the augmented graph, which is cut at the virtual edge.
///
/// # Complexity
/// `O(V + E)`.
///
/// # Errors
/// [`EulerError::PathDegrees`], [`EulerError::Disconnected`], [`EulerError::TooManyEdges`],
/// [`EulerError::Gpu`].
///
/// # Examples
/// ```
/// use graph_core::{Exec, Graph, euler_path, is_euler_path};
/// let g = Graph::from_edges(3, &[(2, 0), (0, 1), (1, 0)])?;
/// let (t, _) = euler_path(&g, Exec::Cpu)?;
/// assert_eq!(t.vertices, vec![2, 0, 1, 0]);
/// assert!(is_euler_path(&g, &t));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn euler_path(g: &Graph, exec: Exec) -> Result<(EulerTrail, Backend), EulerError> {
    let target = exec.resolve(g.edge_count(), EULER_GPU_THRESHOLD)?;
    check_size(g)?;
    let ends = path_endpoints_by_degree(g)?;
    if g.edge_count() == 0 {
        return Ok((EulerTrail::default(), target.backend()));
    }
    if matches!(target, Target::Cpu) && !prefer_parallel(g.edge_count()) {
        return Ok((euler_path_hierholzer(g)?, Backend::Cpu));
    }
    let Some((s, t)) = ends else {
        return match circuit_on(g, target) {
            Ok(c) => Ok((c, target.backend())),
            Err(EulerError::Disconnected { components, .. }) => Err(EulerError::Disconnected {
                kind: "path",
                components,
            }),
            Err(e) => Err(e),
        };
    };
    let trail = path_via_virtual_edge(g, s, t, |aug| circuit_on(aug, target))?;
    Ok((trail, target.backend()))
}

/// A multigraph whose Euler paths are found as circuits of the graph plus one virtual edge
/// from the path's end to its start, cut there: the directed and the undirected one.
trait VirtualEdge: Sized {
    /// The most edges a graph of this kind holds.
    const MAX_EDGES: u64;
    /// The number of edges.
    fn edges(&self) -> u64;
    /// The graph plus the virtual edge from `end` to `start`, and the virtual edge's id.
    fn augment(&self, start: u32, end: u32) -> Result<(Self, u32), EulerError>;
    /// The error for a path of this graph when the augmented graph is disconnected.
    fn disconnected_path(&self) -> EulerError;
    /// The Euler path from `start` that the `circuit` of the augmented graph gives, cut at the
    /// virtual edge `virt`.
    fn cut(&self, circuit: EulerTrail, virt: u32, start: u32) -> EulerTrail;
}

/// An Euler path from `start` to `end` (the two ends the degrees allow) through a circuit of
/// `g` plus the virtual edge `end -> start`, computed by `circuit`.
fn path_via_virtual_edge<G: VirtualEdge>(
    g: &G,
    start: u32,
    end: u32,
    circuit: impl Fn(&G) -> Result<EulerTrail, EulerError>,
) -> Result<EulerTrail, EulerError> {
    let edges = g.edges() + 1;
    if edges > G::MAX_EDGES {
        let max = G::MAX_EDGES;
        return Err(EulerError::TooManyEdges { edges, max });
    }
    let (aug, virt) = g.augment(start, end)?;
    let c = match circuit(&aug) {
        Ok(c) => c,
        Err(EulerError::Disconnected { .. }) => return Err(g.disconnected_path()),
        Err(e) => return Err(e),
    };
    drop(aug);
    Ok(g.cut(c, virt, start))
}

impl VirtualEdge for Graph {
    const MAX_EDGES: u64 = MAX_EULER_EDGES;

    fn edges(&self) -> u64 {
        self.edge_count()
    }

    fn augment(&self, start: u32, end: u32) -> Result<(Self, u32), EulerError> {
        with_virtual_edge(self, end, start).map(|(aug, ins)| (aug, ins as u32))
    }

    fn disconnected_path(&self) -> EulerError {
        disconnected(self, "path")
    }

    fn cut(&self, circuit: EulerTrail, ins: u32, s: u32) -> EulerTrail {
        let p = circuit
            .edges
            .iter()
            .position(|&e| e == ins)
            .unwrap_or_default();
        let m = circuit.edges.len();
        let unshift = |e: u32| if e > ins { e - 1 } else { e };
        let edges: Vec<u32> = circuit.edges[p + 1..]
            .iter()
            .chain(&circuit.edges[..p])
            .map(|&e| unshift(e))
            .collect();
        debug_assert_eq!(edges.len(), m - 1);
        EulerTrail::from_edges(self, edges, s)
    }
}

#[cfg(test)]
mod tests;
