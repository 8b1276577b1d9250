//! The directed multigraph in CSR form, with optional vertex names.

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;

use crate::GraphError;
use crate::par::{PAR_THRESHOLD, SharedMut, counting_sort_by_key, counting_sort_pieces};

mod cuda;
mod edges;
mod reverse;

pub use cuda::GpuEdgeListTimes;
pub use edges::{EDGE_LIST_GPU_THRESHOLD, EdgeList, edge_list, edge_list_cuda_timed};

pub use reverse::REVERSE_GPU_THRESHOLD;

/// Vertex names and their ids: an interner (each distinct name gets the next id).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VertexNames {
    names: Vec<String>,
    index: HashMap<String, u32>,
}

impl VertexNames {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `name`, giving it the next free id if it is new.
    ///
    /// # Errors
    /// [`GraphError::TooLarge`] when all `u32` ids are taken.
    pub fn intern(&mut self, name: &str) -> Result<u32, GraphError> {
        if let Some(&id) = self.index.get(name) {
            return Ok(id);
        }
        let id = u32::try_from(self.names.len())
            .ok()
            .filter(|&i| i < u32::MAX)
            .ok_or(GraphError::TooLarge {
                what: "vertices",
                count: self.names.len() as u128 + 1,
                max: u32::MAX as u128 - 1,
            })?;
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), id);
        Ok(id)
    }

    /// The id of `name`, if known.
    pub fn id(&self, name: &str) -> Option<u32> {
        self.index.get(name).copied()
    }

    /// The name of vertex `id`, if it has one.
    pub fn name(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no names.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Builds an interner from a list of distinct names (id = position).
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] when a name repeats.
    pub fn from_names(names: Vec<String>) -> Result<Self, GraphError> {
        let mut index = HashMap::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            if index.insert(n.clone(), i as u32).is_some() {
                return Err(GraphError::InvalidParameter(format!(
                    "vertex name `{n}` appears twice"
                )));
            }
        }
        Ok(VertexNames { names, index })
    }

    /// Checks that there is a name for each of `n` vertices.
    pub(crate) fn check_covers(&self, n: usize) -> Result<(), GraphError> {
        if self.len() < n {
            return Err(GraphError::InvalidParameter(format!(
                "{} names for {n} vertices",
                self.len()
            )));
        }
        Ok(())
    }

    /// The name of `v` in `names`, or its number.
    pub(crate) fn label(names: Option<&VertexNames>, v: u32) -> String {
        names
            .and_then(|n| n.name(v))
            .map_or_else(|| v.to_string(), str::to_owned)
    }
}

/// A directed multigraph in compressed sparse row form.
///
/// Vertices are `0..vertex_count()` (`u32`); the out-edges of `v` are the positions
/// `offsets[v]..offsets[v + 1]` (64-bit) of `targets`, and an edge's id is its position.
/// Parallel edges and self loops are allowed. Vertices may carry names ([`VertexNames`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    offsets: Vec<u64>,
    targets: Vec<u32>,
    names: Option<VertexNames>,
}

/// Bytes per vertex that building a graph needs at its peak: the offsets and the counting
/// sort's cursor copy (the sort uses per-thread histograms only when they stay small).
const BUILD_BYTES_PER_VERTEX: u64 = 16;

/// Vertex counts whose arrays need less than this are never checked against free memory.
const MEMORY_CHECK_FROM_BYTES: u64 = 1 << 30;

/// The vertex methods both multigraphs share (`with_names`, `names`, `vertex_label`,
/// `vertex_count`), for a type with `offsets` of `V + 1` entries and optional `names`.
macro_rules! vertex_methods {
    () => {
        /// Attaches vertex names.
        ///
        /// # Errors
        /// [`GraphError::InvalidParameter`] when there are fewer names than vertices.
        pub fn with_names(mut self, names: VertexNames) -> Result<Self, GraphError> {
            names.check_covers(self.vertex_count())?;
            self.names = Some(names);
            Ok(self)
        }

        /// The vertex names, if any.
        pub fn names(&self) -> Option<&VertexNames> {
            self.names.as_ref()
        }

        /// The name of `v`: its given name, or its number.
        pub fn vertex_label(&self, v: u32) -> String {
            VertexNames::label(self.names.as_ref(), v)
        }

        /// Number of vertices.
        pub fn vertex_count(&self) -> usize {
            self.offsets.len() - 1
        }
    };
}
pub(crate) use vertex_methods;

pub(crate) fn check_vertex_count(n: usize) -> Result<(), GraphError> {
    if n >= u32::MAX as usize {
        return Err(GraphError::TooLarge {
            what: "vertices",
            count: n as u128,
            max: u32::MAX as u128 - 1,
        });
    }
    // A file header can declare billions of vertices for a handful of edges: refuse with a
    // typed error, instead of an allocation failure aborting the process.
    let needed = (n as u64 + 1) * BUILD_BYTES_PER_VERTEX;
    if needed >= MEMORY_CHECK_FROM_BYTES
        && let Some(available) = gpu_runtime::host_available_memory()
        && needed > available
    {
        return Err(GraphError::OutOfMemory {
            vertices: n as u64,
            needed,
            available,
        });
    }
    Ok(())
}

/// Checks that every entry of the endpoint arrays (sources, then targets) is a vertex `< n`.
pub(crate) fn check_endpoints(n: usize, arrays: [&[u32]; 2]) -> Result<(), GraphError> {
    for arr in arrays {
        // The largest endpoint first (a vectorised reduction; rayon's `position_first` per
        // element cost ~15 ns, 90 ms of a 3M-edge load), the position only when one is bad.
        let max = if arr.len() < PAR_THRESHOLD {
            arr.iter().copied().max()
        } else {
            arr.par_chunks(1 << 16)
                .map(|c| c.iter().copied().max().unwrap_or(0))
                .max()
        };
        let bad = match max {
            Some(m) if m as usize >= n => arr.iter().position(|&v| v as usize >= n),
            _ => None,
        };
        if let Some(i) = bad {
            return Err(GraphError::VertexOutOfRange {
                edge: i as u64,
                vertex: arr[i] as u64,
                vertices: n as u64,
            });
        }
    }
    Ok(())
}

/// Checks the vertex count `n` and that the endpoint arrays `a` and `b` (named `names` in the
/// error) have the same length.
pub(crate) fn check_edge_arrays(
    n: usize,
    a: &[u32],
    b: &[u32],
    names: [&str; 2],
) -> Result<(), GraphError> {
    check_vertex_count(n)?;
    if a.len() != b.len() {
        return Err(GraphError::InvalidParameter(format!(
            "{} {} but {} {}",
            a.len(),
            names[0],
            b.len(),
            names[1]
        )));
    }
    Ok(())
}

impl Graph {
    /// A graph with `n` vertices and no edges.
    ///
    /// # Errors
    /// [`GraphError::TooLarge`] when `n >= u32::MAX`.
    pub fn empty(n: usize) -> Result<Self, GraphError> {
        check_vertex_count(n)?;
        Ok(Graph {
            offsets: vec![0; n + 1],
            targets: Vec::new(),
            names: None,
        })
    }

    /// Builds the graph with `n` vertices and the edges `(source, target)`; the out-edges of a
    /// vertex keep their input order (a stable counting sort, parallel for large inputs).
    ///
    /// # Complexity
    /// `O(n + m)` work, two passes over the edges.
    ///
    /// # Errors
    /// [`GraphError::VertexOutOfRange`] when an edge names a vertex `>= n`;
    /// [`GraphError::TooLarge`] when `n >= u32::MAX`.
    ///
    /// # Examples
    /// ```
    /// let g = graph_core::Graph::from_edges(3, &[(0, 1), (1, 2), (2, 0), (0, 2)])?;
    /// assert_eq!(g.edge_count(), 4);
    /// assert_eq!(g.successors(0), &[1, 2]);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn from_edges(n: usize, edges: &[(u32, u32)]) -> Result<Self, GraphError> {
        let (s, t): (Vec<u32>, Vec<u32>) = edges.iter().copied().unzip();
        Self::from_sources_targets(n, &s, &t)
    }

    /// Like [`Graph::from_edges`] with the edges given as two arrays (starts and ends).
    ///
    /// # Complexity
    /// `O(n + m)` work.
    ///
    /// # Errors
    /// As [`Graph::from_edges`]; also [`GraphError::InvalidParameter`] when the arrays differ
    /// in length.
    ///
    /// # Examples
    /// ```
    /// let g = graph_core::Graph::from_sources_targets(2, &[0, 1, 1], &[1, 0, 1])?;
    /// assert_eq!(g.out_degree(1), 2);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn from_sources_targets(
        n: usize,
        sources: &[u32],
        targets: &[u32],
    ) -> Result<Self, GraphError> {
        check_edge_arrays(n, sources, targets, ["sources", "targets"])?;
        check_endpoints(n, [sources, targets])?;
        let mut out = vec![0u32; targets.len()];
        let w = SharedMut::new(&mut out);
        let offsets = counting_sort_by_key(sources, n, |i, pos| {
            // SAFETY: counting_sort_by_key hands out each position exactly once.
            unsafe { w.write(pos as usize, targets[i]) }
        });
        Ok(Graph {
            offsets,
            targets: out,
            names: None,
        })
    }

    /// Builds the graph with `n` vertices from edges `[source, target]` given in consecutive
    /// pieces (a parallel reader's output, not concatenated), as
    /// [`Graph::from_sources_targets`] of their concatenation (crate-internal: the caller
    /// knows every endpoint is below `n`, so there is no `O(E)` check).
    ///
    /// # Errors
    /// [`GraphError::TooLarge`] when `n >= u32::MAX`.
    pub(crate) fn from_edge_pieces_trusted(
        n: usize,
        pieces: &[&[[u32; 2]]],
    ) -> Result<Self, GraphError> {
        check_vertex_count(n)?;
        debug_assert!(
            pieces
                .iter()
                .all(|p| p.iter().flatten().all(|&v| (v as usize) < n))
        );
        let m: usize = pieces.iter().map(|p| p.len()).sum();
        let mut out = crate::par::zeroed_huge::<u32>(m);
        let w = SharedMut::new(&mut out);
        let offsets = counting_sort_pieces(
            pieces,
            n,
            |e| e[0],
            |k, j, pos| {
                // SAFETY: counting_sort_pieces hands out each position exactly once.
                unsafe { w.write(pos as usize, pieces[k][j][1]) }
            },
        );
        Ok(Graph {
            offsets,
            targets: out,
            names: None,
        })
    }

    /// Takes CSR arrays as they are.
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] when `offsets` is empty, does not start at 0, decreases
    /// or does not end at `targets.len()`; [`GraphError::VertexOutOfRange`] for a bad target.
    ///
    /// # Examples
    /// ```
    /// let g = graph_core::Graph::from_csr(vec![0, 2, 2], vec![1, 0])?;
    /// assert_eq!(g.successors(0), &[1, 0]);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn from_csr(offsets: Vec<u64>, targets: Vec<u32>) -> Result<Self, GraphError> {
        let bad = |m: &str| Err(GraphError::InvalidParameter(m.to_owned()));
        if offsets.is_empty() {
            return bad("offsets must have vertex_count + 1 entries");
        }
        check_vertex_count(offsets.len() - 1)?;
        if offsets[0] != 0 || *offsets.last().unwrap_or(&0) != targets.len() as u64 {
            return bad("offsets must start at 0 and end at the number of edges");
        }
        if offsets.windows(2).any(|w| w[0] > w[1]) {
            return bad("offsets must not decrease");
        }
        let n = offsets.len() - 1;
        if let Some(i) = targets.iter().position(|&t| t as usize >= n) {
            return Err(GraphError::VertexOutOfRange {
                edge: i as u64,
                vertex: targets[i] as u64,
                vertices: n as u64,
            });
        }
        Ok(Graph {
            offsets,
            targets,
            names: None,
        })
    }

    /// Takes CSR arrays that the caller built valid (crate-internal: no `O(E)` check).
    pub(crate) fn from_csr_trusted(offsets: Vec<u64>, targets: Vec<u32>) -> Self {
        debug_assert!(offsets.first() == Some(&0));
        debug_assert!(offsets.last() == Some(&(targets.len() as u64)));
        debug_assert!(targets.iter().all(|&t| (t as usize) < offsets.len() - 1));
        Graph {
            offsets,
            targets,
            names: None,
        }
    }

    vertex_methods!();

    /// Number of edges.
    pub fn edge_count(&self) -> u64 {
        self.targets.len() as u64
    }

    /// The CSR row offsets (`vertex_count() + 1` entries).
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The CSR column indices: `targets()[e]` is the end of edge `e` (the edge "ends" array).
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// The ids of the out-edges of `v`.
    ///
    /// # Panics
    /// When `v` is not a vertex.
    pub fn out_edges(&self, v: u32) -> Range<u64> {
        self.offsets[v as usize]..self.offsets[v as usize + 1]
    }

    /// The ends of the out-edges of `v`, in edge order.
    ///
    /// # Panics
    /// When `v` is not a vertex.
    pub fn successors(&self, v: u32) -> &[u32] {
        let r = self.out_edges(v);
        &self.targets[r.start as usize..r.end as usize]
    }

    /// The out-degree of `v`.
    ///
    /// # Panics
    /// When `v` is not a vertex.
    pub fn out_degree(&self, v: u32) -> u64 {
        self.offsets[v as usize + 1] - self.offsets[v as usize]
    }

    /// The start of edge `e` (binary search over the offsets).
    ///
    /// # Complexity
    /// `O(log V)`.
    ///
    /// # Panics
    /// When `e` is not an edge.
    pub fn source(&self, e: u64) -> u32 {
        assert!(e < self.edge_count(), "edge {e} out of range");
        (self.offsets.partition_point(|&o| o <= e) - 1) as u32
    }

    /// All out-degrees.
    ///
    /// # Complexity
    /// `O(V)`.
    pub fn out_degrees(&self) -> Vec<u64> {
        self.offsets.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// All in-degrees (a parallel histogram of the targets for large graphs).
    ///
    /// # Complexity
    /// `O(V + E)` work.
    ///
    /// # Examples
    /// ```
    /// let g = graph_core::Graph::from_edges(3, &[(0, 1), (2, 1), (1, 1)])?;
    /// assert_eq!(g.in_degrees(), vec![0, 3, 0]);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn in_degrees(&self) -> Vec<u64> {
        let n = self.vertex_count();
        if self.targets.len() < PAR_THRESHOLD || n > 4 * self.targets.len() {
            let mut d = vec![0u64; n];
            for &t in &self.targets {
                d[t as usize] += 1;
            }
            return d;
        }
        let chunk = self
            .targets
            .len()
            .div_ceil(rayon::current_num_threads().min(16));
        self.targets
            .par_chunks(chunk)
            .map(|c| {
                let mut d = vec![0u64; n];
                for &t in c {
                    d[t as usize] += 1;
                }
                d
            })
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            })
            .unwrap_or_else(|| vec![0; n])
    }

    /// The start of every edge (the edge "starts" array; `targets()` is the ends array).
    ///
    /// # Complexity
    /// `O(V + E)` work.
    ///
    /// # Examples
    /// ```
    /// let g = graph_core::Graph::from_edges(3, &[(2, 0), (0, 1), (2, 1)])?;
    /// assert_eq!(g.edge_sources(), vec![0, 2, 2]);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn edge_sources(&self) -> Vec<u32> {
        let mut s = vec![0u32; self.targets.len()];
        if s.len() < PAR_THRESHOLD {
            for v in 0..self.vertex_count() {
                let r = self.out_edges(v as u32);
                s[r.start as usize..r.end as usize].fill(v as u32);
            }
            return s;
        }
        let w = SharedMut::new(&mut s);
        let offsets = &self.offsets;
        (0..self.vertex_count())
            .into_par_iter()
            .with_min_len(1 << 12)
            .for_each(|v| {
                for e in offsets[v]..offsets[v + 1] {
                    // SAFETY: the out-edge ranges of distinct vertices are disjoint.
                    unsafe { w.write(e as usize, v as u32) }
                }
            });
        s
    }

    /// The edges as `(source, target)` pairs in id order.
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.vertex_count() as u32)
            .flat_map(move |v| self.successors(v).iter().map(move |&t| (v, t)))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Asserts that `r` is the error for edge 1 naming vertex 2 of a graph of 2 vertices.
    pub(crate) fn assert_edge_1_out_of_range<T: std::fmt::Debug>(r: Result<T, GraphError>) {
        assert!(
            matches!(
                r,
                Err(GraphError::VertexOutOfRange {
                    edge: 1,
                    vertex: 2,
                    vertices: 2
                })
            ),
            "{r:?}"
        );
    }

    fn reference_csr(n: usize, edges: &[(u32, u32)]) -> (Vec<u64>, Vec<u32>) {
        let mut adj = vec![Vec::new(); n];
        for &(s, t) in edges {
            adj[s as usize].push(t);
        }
        let mut off = vec![0u64];
        let mut tg = Vec::new();
        for a in adj {
            tg.extend(a);
            off.push(tg.len() as u64);
        }
        (off, tg)
    }

    /// Seeded random edges (an LCG), shared with the reversal tests.
    pub(super) fn edges_of(n: u32, m: usize, seed: u64) -> Vec<(u32, u32)> {
        let mut s = seed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) % n as u64) as u32
        };
        (0..m).map(|_| (next(), next())).collect()
    }

    #[test]
    fn csr_matches_reference_at_boundaries() {
        for m in [0usize, 1, 31, 32, 33, 1023, 1024, 1025, 65_537, 200_003] {
            let n = (m / 3).max(1) as u32;
            let e = edges_of(n, m, m as u64);
            let g = Graph::from_edges(n as usize, &e).unwrap();
            let (o, t) = reference_csr(n as usize, &e);
            assert_eq!(g.offsets(), &o[..], "m = {m}");
            assert_eq!(g.targets(), &t[..], "m = {m}");
            let mut ind = vec![0u64; n as usize];
            for &(_, t) in &e {
                ind[t as usize] += 1;
            }
            assert_eq!(g.in_degrees(), ind);
            let src = g.edge_sources();
            for (i, &s) in src.iter().enumerate() {
                assert_eq!(s, g.source(i as u64));
            }
            let r = g.reverse();
            let rev: Vec<(u32, u32)> = g.edges().map(|(a, b)| (b, a)).collect();
            let (ro, rt) = reference_csr(n as usize, &rev);
            // The reference reverses in edge-id order too.
            assert_eq!(r.offsets(), &ro[..]);
            assert_eq!(r.targets(), &rt[..]);
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_edge_1_out_of_range(Graph::from_edges(2, &[(0, 1), (2, 0)]));
        assert!(Graph::from_csr(vec![], vec![]).is_err());
        assert!(Graph::from_csr(vec![0, 2, 1], vec![0]).is_err());
        assert!(Graph::from_csr(vec![0, 1], vec![5]).is_err());
        assert!(Graph::from_sources_targets(2, &[0], &[]).is_err());
        assert!(Graph::empty(u32::MAX as usize).is_err());
    }

    #[test]
    fn names_intern() {
        let mut n = VertexNames::new();
        assert_eq!(n.intern("a").unwrap(), 0);
        assert_eq!(n.intern("b").unwrap(), 1);
        assert_eq!(n.intern("a").unwrap(), 0);
        assert_eq!(n.name(1), Some("b"));
        assert!(VertexNames::from_names(vec!["x".into(), "x".into()]).is_err());
        let g = Graph::from_edges(2, &[(0, 1)])
            .unwrap()
            .with_names(n)
            .unwrap();
        assert_eq!(g.vertex_label(1), "b");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn prop_csr(n in 1u32..50, e in proptest::collection::vec((0u32..50, 0u32..50), 0..300)) {
            let e: Vec<(u32, u32)> = e.into_iter().map(|(a, b)| (a % n, b % n)).collect();
            let g = Graph::from_edges(n as usize, &e).unwrap();
            let (o, t) = reference_csr(n as usize, &e);
            prop_assert_eq!(g.offsets(), &o[..]);
            prop_assert_eq!(g.targets(), &t[..]);
            let rr = g.reverse().reverse();
            let mut a: Vec<_> = g.edges().collect();
            let mut b: Vec<_> = rr.edges().collect();
            a.sort_unstable();
            b.sort_unstable();
            prop_assert_eq!(a, b);
        }
    }
}
