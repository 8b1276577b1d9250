//! Euler circuits and paths of undirected multigraphs, with NetworkX's conventions
//! (`is_eulerian`, `has_eulerian_path`, `eulerian_circuit(G, source, keys=True)`,
//! `eulerian_path`).
//!
//! Which method runs:
//! - `hierholzer.rs`: Hierholzer's algorithm, plain and iterative: the reference (test oracle)
//!   and the CPU path below [`UNDIRECTED_EULER_ORIENT_THRESHOLD`] edges.
//! - `orient.rs`: a balanced orientation (pair the half-edges at each vertex, number the closed
//!   trails of that transition system with the parallel list ranking, orient each trail one
//!   way), then the directed Euler circuit of the oriented graph ([`euler_circuit`]'s CPU
//!   path: Hierholzer's interleaved walks, or the parallel algorithm on many threads); its
//!   edges map back to undirected edge ids one to one. The CPU path from the threshold up.
//! - `cuda.rs`: the same orientation in CUDA kernels, then the directed GPU pipeline, without
//!   leaving the device.
//!
//! Paths add one virtual edge between the two odd-degree vertices and cut the circuit there.
//!
//! [`euler_circuit`]: crate::euler_circuit

mod cuda;
mod hierholzer;
pub(crate) mod orient;

use gpu_runtime::{Backend, Exec, Target};

use super::{
    EULER_GPU_THRESHOLD, EulerTrail, VirtualEdge, check_trail, circuit_on, path_via_virtual_edge,
};
use crate::components::{connected_components, undirected_edge_component_count};
use crate::undirected::MAX_UNDIRECTED_EDGES;
use crate::{EulerError, UndirectedGraph};

/// From this many edges the CPU path of [`undirected_euler_circuit`] and
/// [`undirected_euler_path`] orients the graph and runs the directed circuit, instead of the
/// reference Hierholzer walk: the size from which the oriented path was measured faster on
/// deep graphs and about as fast on shallow ones (figures in the repository's BENCHMARKS.md,
/// graph-core, thresholds).
pub const UNDIRECTED_EULER_ORIENT_THRESHOLD: u64 = 1 << 18;

/// From this many edges `Exec::Auto` runs undirected Euler circuits and paths on the GPU when
/// there is one. Not measured on a GPU (none was available): the directed pipeline's
/// provisional [`EULER_GPU_THRESHOLD`], which the orientation (about one more pass of list
/// ranking over twice the edges) should not move by much.
pub const UNDIRECTED_EULER_GPU_THRESHOLD: u64 = EULER_GPU_THRESHOLD;

/// A circuit or a path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Circuit,
    Path,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Circuit => "circuit",
            Kind::Path => "path",
        }
    }
}

/// Where a trail must run, once the degrees and the start vertex are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// No edges: the empty trail.
    Empty,
    /// A circuit from `start`.
    Circuit { start: u32 },
    /// A path from `start` to `end` (the two odd-degree vertices).
    Path { start: u32, end: u32 },
}

/// Checks the degrees and the start vertex (not the connectivity, which the algorithms find
/// at no extra cost) and says where the trail runs. With `source` of `None` a circuit starts
/// at the smallest vertex with an edge and a path at the smaller odd-degree vertex.
fn plan(g: &UndirectedGraph, kind: Kind, source: Option<u32>) -> Result<Plan, EulerError> {
    if let Some(s) = source
        && s as usize >= g.vertex_count()
    {
        return Err(EulerError::SourceOutOfRange {
            vertex: s,
            vertices: g.vertex_count() as u64,
        });
    }
    let odd = g.odd_degree_vertices();
    let path_ends = match (kind, odd.as_slice()) {
        (_, []) => None,
        (Kind::Circuit, &[v, ..]) => {
            return Err(EulerError::OddDegree {
                vertex: v,
                degree: g.degree(v),
            });
        }
        (Kind::Path, &[a, b]) => Some((a, b)),
        (Kind::Path, &[_, _, v, ..]) => {
            return Err(EulerError::TooManyOddVertices {
                count: odd.len() as u64,
                vertex: v,
                degree: g.degree(v),
            });
        }
        (Kind::Path, &[v]) => unreachable!("vertex {v} alone has odd degree"),
    };
    if g.edge_count() == 0 {
        return Ok(Plan::Empty);
    }
    Ok(match (path_ends, source) {
        (Some((a, b)), None) => Plan::Path { start: a, end: b },
        (Some((a, b)), Some(s)) if s == a || s == b => Plan::Path {
            start: s,
            end: a ^ b ^ s,
        },
        (Some((a, b)), Some(s)) => {
            return Err(EulerError::SourceNotOdd {
                vertex: s,
                degree: g.degree(s),
                odd: [a, b],
            });
        }
        (None, Some(s)) if g.degree(s) == 0 => {
            return Err(EulerError::SourceWithoutEdges {
                kind: kind.name(),
                vertex: s,
            });
        }
        (None, s) => Plan::Circuit {
            start: s.unwrap_or_else(|| g.first_vertex_with_edges()),
        },
    })
}

fn disconnected(g: &UndirectedGraph, kind: Kind) -> EulerError {
    EulerError::Disconnected {
        kind: kind.name(),
        components: undirected_edge_component_count(g),
    }
}

/// Checks that `trail` is an Euler trail of the undirected graph `g`: every edge exactly once,
/// one more vertex than edges, and edge `trail.edges[i]` joins `trail.vertices[i]` and
/// `trail.vertices[i + 1]` (either way round; so consecutive edges share a vertex); with
/// `closed`, it also ends where it starts. Independent of the algorithms.
///
/// # Complexity
/// `O(E)`, one pass.
///
/// # Errors
/// A message saying what is wrong.
///
/// # Examples
/// ```
/// use graph_core::{EulerTrail, UndirectedGraph, verify_undirected_euler_trail};
/// let g = UndirectedGraph::from_edges(2, &[(0, 1), (0, 1)])?;
/// let t = EulerTrail { edges: vec![1, 0], vertices: vec![1, 0, 1] };
/// assert!(verify_undirected_euler_trail(&g, &t, true).is_ok());
/// let bad = EulerTrail { edges: vec![1, 1], vertices: vec![1, 0, 1] };
/// assert!(verify_undirected_euler_trail(&g, &bad, true).is_err());
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn verify_undirected_euler_trail(
    g: &UndirectedGraph,
    trail: &EulerTrail,
    closed: bool,
) -> Result<(), String> {
    check_trail(g.edge_count(), trail, closed, |e, u, w| {
        let (a, b) = g.endpoints(e);
        ((u, w) != (a, b) && (u, w) != (b, a))
            .then(|| format!("edge {e} joins {a} and {b}, the vertex sequence says {u} -- {w}"))
    })
}

/// Whether `trail` is an Euler circuit of the undirected graph `g` (see
/// [`verify_undirected_euler_trail`]).
///
/// # Complexity
/// `O(E)`.
///
/// # Examples
/// ```
/// use graph_core::{EulerTrail, UndirectedGraph, is_undirected_euler_circuit};
/// let g = UndirectedGraph::from_edges(1, &[(0, 0), (0, 0)])?;
/// let t = EulerTrail { edges: vec![1, 0], vertices: vec![0, 0, 0] };
/// assert!(is_undirected_euler_circuit(&g, &t));
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn is_undirected_euler_circuit(g: &UndirectedGraph, trail: &EulerTrail) -> bool {
    verify_undirected_euler_trail(g, trail, true).is_ok()
}

/// Whether `trail` is an Euler path of the undirected graph `g`, open or closed (see
/// [`verify_undirected_euler_trail`]).
///
/// # Complexity
/// `O(E)`.
///
/// # Examples
/// ```
/// use graph_core::{EulerTrail, UndirectedGraph, is_undirected_euler_path};
/// let g = UndirectedGraph::from_edges(3, &[(0, 1), (2, 1)])?;
/// let t = EulerTrail { edges: vec![1, 0], vertices: vec![2, 1, 0] };
/// assert!(is_undirected_euler_path(&g, &t));
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn is_undirected_euler_path(g: &UndirectedGraph, trail: &EulerTrail) -> bool {
    verify_undirected_euler_trail(g, trail, false).is_ok()
}

impl UndirectedGraph {
    /// Whether the graph has an Euler circuit in NetworkX's sense (`nx.is_eulerian`): every
    /// degree even and the graph connected, isolated vertices included, so a graph with a
    /// vertex without edges is not Eulerian unless it is that single vertex.
    ///
    /// Differences: NetworkX raises `NetworkXPointlessConcept` on the graph with no vertex;
    /// this returns `false`. [`undirected_euler_circuit`] ignores vertices without edges (as the
    /// directed functions do), so it finds a circuit on some graphs this calls non-Eulerian;
    /// call this first for NetworkX's strictness.
    ///
    /// # Complexity
    /// `O(V + E α(V))`.
    ///
    /// # Examples
    /// ```
    /// use graph_core::UndirectedGraph;
    /// let triangle = [(0, 1), (1, 2), (2, 0)];
    /// assert!(UndirectedGraph::from_edges(3, &triangle)?.is_eulerian());
    /// assert!(!UndirectedGraph::from_edges(4, &triangle)?.is_eulerian()); // vertex 3 is isolated
    /// assert!(UndirectedGraph::empty(1)?.is_eulerian());
    /// assert!(!UndirectedGraph::empty(2)?.is_eulerian());
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn is_eulerian(&self) -> bool {
        self.vertex_count() > 0
            && self.odd_degree_vertices().is_empty()
            && connected_components(self).count == 1
    }

    /// Whether the graph has an Euler path in NetworkX's sense (`nx.has_eulerian_path(G,
    /// source)`): it is Eulerian ([`UndirectedGraph::is_eulerian`]), or exactly two vertices
    /// have odd degree, `source` (when given) is one of them, and the graph is connected,
    /// isolated vertices included.
    ///
    /// Differences: a `source` that is not a vertex gives `false` (NetworkX raises, or answers
    /// `True` when the graph is Eulerian). [`undirected_euler_path`] ignores vertices without
    /// edges.
    ///
    /// # Complexity
    /// `O(V + E α(V))`.
    ///
    /// # Examples
    /// ```
    /// use graph_core::UndirectedGraph;
    /// let g = UndirectedGraph::from_edges(3, &[(0, 1), (1, 2)])?;
    /// assert!(g.has_euler_path(None));
    /// assert!(g.has_euler_path(Some(2)));
    /// assert!(!g.has_euler_path(Some(1))); // even degree: no path starts there
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn has_euler_path(&self, source: Option<u32>) -> bool {
        if source.is_some_and(|s| s as usize >= self.vertex_count()) {
            return false;
        }
        if self.is_eulerian() {
            return true;
        }
        let odd = self.odd_degree_vertices();
        odd.len() == 2
            && source.is_none_or(|s| odd.contains(&s))
            && connected_components(self).count == 1
    }
}

/// The vertex sequence of the undirected trail `edges` from `start`.
pub(super) fn trail_from_edges(g: &UndirectedGraph, edges: Vec<u32>, start: u32) -> EulerTrail {
    if edges.is_empty() {
        return EulerTrail::default();
    }
    let mut vertices = Vec::with_capacity(edges.len() + 1);
    let mut v = start;
    vertices.push(v);
    for &e in &edges {
        let (a, b) = g.endpoints(e);
        v = if a == v { b } else { a };
        vertices.push(v);
    }
    EulerTrail { edges, vertices }
}

/// Rotates a circuit to start at its first visit of `start`.
fn rotate_to(mut c: EulerTrail, start: u32) -> EulerTrail {
    let Some(i) = c.vertices.iter().position(|&v| v == start) else {
        return c;
    };
    if i > 0 {
        c.edges.rotate_left(i);
        c.vertices.pop();
        c.vertices.rotate_left(i);
        c.vertices.push(start);
    }
    c
}

/// An Euler circuit of `g` (all degrees even, at least one edge) by the method of `target`
/// (see the module docs); starts wherever the method starts.
fn oriented_circuit(
    g: &UndirectedGraph,
    target: Target,
    directed_parallel: bool,
) -> Result<EulerTrail, EulerError> {
    match target {
        Target::Cpu => {
            let (dg, edge_of) = orient::balanced_orientation(g);
            let mut c = if directed_parallel {
                super::euler_circuit_parallel(&dg)?
            } else {
                circuit_on(&dg, Target::Cpu)?
            };
            drop(dg);
            map_edges(&mut c.edges, &edge_of);
            Ok(c)
        }
        Target::Cuda(gpu) => {
            let edges = cuda::circuit_order(gpu, g.half_edges(), g.ends(), g.offsets())?;
            Ok(trail_from_edges(g, edges, g.first_vertex_with_edges()))
        }
    }
}

/// `edges[i] = edge_of[edges[i]]`.
fn map_edges(edges: &mut [u32], edge_of: &[u32]) {
    use rayon::prelude::*;
    if edges.len() < crate::par::PAR_THRESHOLD {
        edges.iter_mut().for_each(|e| *e = edge_of[*e as usize]);
    } else {
        edges
            .par_iter_mut()
            .with_min_len(1 << 12)
            .for_each(|e| *e = edge_of[*e as usize]);
    }
}

/// The virtual edge `end -- start` is the last edge; a circuit is cut there.
impl VirtualEdge for UndirectedGraph {
    const MAX_EDGES: u64 = MAX_UNDIRECTED_EDGES;

    fn edges(&self) -> u64 {
        self.edge_count()
    }

    fn augment(&self, start: u32, end: u32) -> Result<(Self, u32), EulerError> {
        let mut ends = Vec::with_capacity(self.ends().len() + 2);
        ends.extend_from_slice(self.ends());
        ends.extend([end, start]);
        let virt = self.edge_count() as u32;
        Ok((UndirectedGraph::from_ends(self.vertex_count(), ends), virt))
    }

    fn disconnected_path(&self) -> EulerError {
        disconnected(self, Kind::Path)
    }

    fn cut(&self, c: EulerTrail, virt: u32, start: u32) -> EulerTrail {
        let p = c.edges.iter().position(|&e| e == virt).unwrap_or_default();
        let (mut edges, mut vertices) = (c.edges, c.vertices);
        // Edges after the virtual one, then those before it; vertices from the virtual edge's
        // end round to its start.
        edges.remove(p);
        edges.rotate_left(p);
        vertices.pop();
        vertices.rotate_left(p + 1);
        if vertices.first() != Some(&start) {
            edges.reverse();
            vertices.reverse();
        }
        EulerTrail { edges, vertices }
    }
}

/// The trail of `plan` on `target`: the reference walk when `hierholzer`, else the oriented
/// circuit (with the directed parallel algorithm forced when `directed_parallel`).
fn trail_on(
    g: &UndirectedGraph,
    kind: Kind,
    plan: Plan,
    target: Target,
    hierholzer: bool,
    directed_parallel: bool,
) -> Result<EulerTrail, EulerError> {
    let (start, end) = match plan {
        Plan::Empty => return Ok(EulerTrail::default()),
        Plan::Circuit { start } => (start, None),
        Plan::Path { start, end } => (start, Some(end)),
    };
    if hierholzer && matches!(target, Target::Cpu) {
        let (edges, vertices) = hierholzer::hierholzer_trail(g, start);
        if (edges.len() as u64) < g.edge_count() {
            return Err(disconnected(g, kind));
        }
        return Ok(EulerTrail { edges, vertices });
    }
    match end {
        None => match oriented_circuit(g, target, directed_parallel) {
            Ok(c) => Ok(rotate_to(c, start)),
            Err(EulerError::Disconnected { components, .. }) => Err(EulerError::Disconnected {
                kind: kind.name(),
                components,
            }),
            Err(e) => Err(e),
        },
        Some(end) => path_via_virtual_edge(g, start, end, |aug| {
            oriented_circuit(aug, target, directed_parallel)
        }),
    }
}

/// Declares public entry points `(g, source) -> EulerTrail` that plan a trail of `kind` and
/// run it on the CPU with [`trail_on`]'s `hierholzer` and `directed_parallel` switches.
macro_rules! cpu_entry_points {
    ($($(#[$doc:meta])* pub fn $name:ident($kind:expr, $hierholzer:expr, $parallel:expr);)*) => {$(
        $(#[$doc])*
        pub fn $name(g: &UndirectedGraph, source: Option<u32>) -> Result<EulerTrail, EulerError> {
            trail_on(g, $kind, plan(g, $kind, source)?, Target::Cpu, $hierholzer, $parallel)
        }
    )*};
}

/// Declares public entry points `(g, source, exec) -> (EulerTrail, Backend)` that run a trail
/// of `kind` where `exec` says ([`trail_where`]).
macro_rules! exec_entry_points {
    ($($(#[$doc:meta])* pub fn $name:ident($kind:expr);)*) => {$(
        $(#[$doc])*
        pub fn $name(
            g: &UndirectedGraph,
            source: Option<u32>,
            exec: Exec,
        ) -> Result<(EulerTrail, Backend), EulerError> {
            trail_where(g, $kind, source, exec)
        }
    )*};
}

cpu_entry_points! {
/// An Euler circuit of an undirected multigraph by Hierholzer's algorithm (plain and
/// iterative, one core): the reference. Starts at `source`, or at the smallest vertex with an
/// edge; returns the edge ids in walk order (parallel edges told apart, as NetworkX's
/// `keys=True`) and the vertex sequence.
///
/// # Complexity
/// `O(V + E)` time, `O(V + E)` memory.
///
/// # Errors
/// [`EulerError::SourceOutOfRange`]; [`EulerError::OddDegree`] naming the first vertex of odd
/// degree; [`EulerError::SourceWithoutEdges`]; [`EulerError::Disconnected`] with the number of
/// components among the vertices with edges (vertices without edges are ignored).
///
/// # Examples
/// ```
/// use graph_core::{UndirectedGraph, undirected_euler_circuit_hierholzer, is_undirected_euler_circuit};
/// // Two parallel edges and a self-loop.
/// let g = UndirectedGraph::from_edges(2, &[(0, 1), (1, 0), (1, 1)])?;
/// let t = undirected_euler_circuit_hierholzer(&g, Some(1))?;
/// assert_eq!(t.edges, vec![0, 1, 2]);
/// assert_eq!(t.vertices, vec![1, 0, 1, 1]);
/// assert!(is_undirected_euler_circuit(&g, &t));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn undirected_euler_circuit_hierholzer(Kind::Circuit, true, false);

/// An Euler path of an undirected multigraph by Hierholzer's algorithm (the reference), from
/// `source` or the smaller odd-degree vertex, to the other one; a circuit when every degree
/// is even.
///
/// # Complexity
/// `O(V + E)` time and memory.
///
/// # Errors
/// [`EulerError::SourceOutOfRange`]; [`EulerError::TooManyOddVertices`];
/// [`EulerError::SourceNotOdd`] when two vertices have odd degree and `source` is neither;
/// [`EulerError::SourceWithoutEdges`]; [`EulerError::Disconnected`].
///
/// # Examples
/// ```
/// use graph_core::{UndirectedGraph, undirected_euler_path_hierholzer};
/// let g = UndirectedGraph::from_edges(3, &[(0, 1), (1, 2), (2, 1)])?;
/// let t = undirected_euler_path_hierholzer(&g, None)?;
/// assert_eq!(t.vertices, vec![0, 1, 2, 1]); // from the odd vertex 0 to the odd vertex 1
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn undirected_euler_path_hierholzer(Kind::Path, true, false);

/// An Euler circuit of an undirected multigraph through a balanced orientation on the CPU and
/// the directed parallel algorithm ([`euler_circuit_parallel`](crate::euler_circuit_parallel))
/// on the oriented graph: the fast CPU path with its directed half fixed, for tests and
/// benchmarks ([`undirected_euler_circuit`] picks the directed half by size and threads).
///
/// # Complexity
/// `O(V + E)` work in a constant number of parallel passes (list ranking over the `2 E`
/// darts, then over the `E` oriented edges); about 48 bytes per edge at the peak besides the
/// graph.
///
/// # Errors
/// As [`undirected_euler_circuit_hierholzer`]; [`EulerError::TooManyEdges`] cannot occur
/// (undirected graphs hold at most [`MAX_UNDIRECTED_EDGES`] edges).
///
/// # Examples
/// ```
/// use graph_core::{UndirectedGraph, undirected_euler_circuit_oriented, is_undirected_euler_circuit};
/// let g = UndirectedGraph::from_edges(4, &[(0, 1), (1, 2), (2, 0), (0, 3), (3, 0)])?;
/// let t = undirected_euler_circuit_oriented(&g, Some(3))?;
/// assert!(is_undirected_euler_circuit(&g, &t));
/// assert_eq!(t.vertices[0], 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn undirected_euler_circuit_oriented(Kind::Circuit, false, true);
}

/// Whether the CPU path runs the reference walk for `edges` edges.
fn prefer_hierholzer(edges: u64) -> bool {
    edges < UNDIRECTED_EULER_ORIENT_THRESHOLD
}

/// A trail of `kind` from `source` where `exec` says: on the CPU, the reference walk below
/// [`UNDIRECTED_EULER_ORIENT_THRESHOLD`] edges, else the oriented circuit; and the backend
/// that ran.
fn trail_where(
    g: &UndirectedGraph,
    kind: Kind,
    source: Option<u32>,
    exec: Exec,
) -> Result<(EulerTrail, Backend), EulerError> {
    let target = exec.resolve(g.edge_count(), UNDIRECTED_EULER_GPU_THRESHOLD)?;
    let plan = plan(g, kind, source)?;
    let hierholzer = prefer_hierholzer(g.edge_count());
    let trail = trail_on(g, kind, plan, target, hierholzer, false)?;
    Ok((trail, target.backend()))
}

exec_entry_points! {
/// An Euler circuit of an undirected multigraph where `exec` says (NetworkX's
/// `eulerian_circuit(G, source, keys=True)` on a `MultiGraph`): on the CPU, Hierholzer's walk
/// below [`UNDIRECTED_EULER_ORIENT_THRESHOLD`] edges, else a balanced orientation and the
/// directed circuit; on the GPU, the orientation in CUDA and the directed GPU pipeline.
/// Returns the circuit, from `source` (or the smallest vertex with an edge), with the edge
/// ids in walk order so that parallel edges are told apart; and the backend that ran.
///
/// Vertices without edges are ignored (NetworkX refuses graphs with isolated vertices: use
/// [`UndirectedGraph::is_eulerian`] for its answer). A graph without edges has the empty
/// circuit.
///
/// # Complexity
/// `O(V + E)` (see [`undirected_euler_circuit_oriented`]).
///
/// # Errors
/// [`EulerError::SourceOutOfRange`], [`EulerError::OddDegree`],
/// [`EulerError::SourceWithoutEdges`], [`EulerError::Disconnected`]; [`EulerError::Gpu`] when
/// the GPU is asked for and missing or fails.
///
/// # Examples
/// ```
/// use graph_core::{Exec, UndirectedGraph, EulerError, undirected_euler_circuit, is_undirected_euler_circuit};
/// // Two triangles sharing vertex 2, and a double edge.
/// let g = UndirectedGraph::from_edges(5, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2), (0, 1), (1, 0)])?;
/// let (t, _backend) = undirected_euler_circuit(&g, Some(4), Exec::Auto)?;
/// assert!(is_undirected_euler_circuit(&g, &t));
/// assert_eq!((t.vertices[0], t.vertices[8]), (4, 4));
/// let path = UndirectedGraph::from_edges(2, &[(0, 1)])?;
/// assert_eq!(
///     undirected_euler_circuit(&path, None, Exec::Cpu).unwrap_err(),
///     EulerError::OddDegree { vertex: 0, degree: 1 }
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn undirected_euler_circuit(Kind::Circuit);

/// An Euler path of an undirected multigraph where `exec` says (NetworkX's
/// `eulerian_path(G, source, keys=True)` on a `MultiGraph`): from `source`, or the smaller of
/// the two odd-degree vertices, to the other one; a circuit (from `source` or the smallest
/// vertex with an edge) when every degree is even. Large graphs and the GPU add a virtual
/// edge between the two odd vertices, take a circuit ([`undirected_euler_circuit`]'s methods)
/// and cut it there.
///
/// Vertices without edges are ignored (see [`UndirectedGraph::has_euler_path`] for
/// NetworkX's answer).
///
/// # Complexity
/// `O(V + E)`.
///
/// # Errors
/// [`EulerError::SourceOutOfRange`], [`EulerError::TooManyOddVertices`] (with the third
/// odd-degree vertex), [`EulerError::SourceNotOdd`] (a source of even degree when two
/// vertices have odd degree), [`EulerError::SourceWithoutEdges`],
/// [`EulerError::Disconnected`], [`EulerError::Gpu`].
///
/// # Examples
/// ```
/// use graph_core::{Exec, UndirectedGraph, EulerError, undirected_euler_path, is_undirected_euler_path};
/// // A triangle with a tail: vertices 0 and 3 have odd degree.
/// let g = UndirectedGraph::from_edges(4, &[(0, 1), (1, 2), (2, 0), (0, 3)])?;
/// let (t, _) = undirected_euler_path(&g, Some(3), Exec::Cpu)?;
/// assert!(is_undirected_euler_path(&g, &t));
/// assert_eq!((t.vertices[0], t.vertices[4]), (3, 0));
/// assert!(matches!(
///     undirected_euler_path(&g, Some(1), Exec::Cpu),
///     Err(EulerError::SourceNotOdd { vertex: 1, degree: 2, odd: [0, 3] })
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn undirected_euler_path(Kind::Path);
}

#[cfg(test)]
mod tests;
