//! The undirected multigraph (NetworkX's `MultiGraph`): an edge list whose positions are the
//! edge ids, and an incidence CSR of half-edges.

use std::ops::Range;

use crate::graph::{check_edge_arrays, check_endpoints};
use crate::par::{PAR_THRESHOLD, SharedMut, counting_sort_by_key};
use crate::{GraphError, VertexNames};

use rayon::prelude::*;

/// The most edges an [`UndirectedGraph`] holds: each edge has two half-edges with `u32` ids
/// (`2e` and `2e + 1`), and one id value is reserved.
pub const MAX_UNDIRECTED_EDGES: u64 = (u32::MAX as u64 - 1) / 2;

/// An undirected multigraph: parallel edges and self-loops allowed and told apart by edge id,
/// as in NetworkX's `MultiGraph` (the id plays the role of NetworkX's edge key).
///
/// Edge `e` is the `e`-th `(u, v)` pair the graph was built from. It has two *half-edges*,
/// `2e` at `u` and `2e + 1` at `v`; the degree of a vertex is its number of half-edges, so a
/// self-loop adds 2 to its vertex's degree (NetworkX's convention). The half-edges at each
/// vertex are kept in a CSR array, in increasing id order.
///
/// Memory: 16 bytes per edge and 8 per vertex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndirectedGraph {
    /// `ends[h]` is the vertex of half-edge `h`: `ends[2e]`, `ends[2e + 1]` are edge `e`'s ends
    /// as given.
    ends: Vec<u32>,
    /// The half-edges at `v` are `halves[offsets[v]..offsets[v + 1]]`.
    offsets: Vec<u64>,
    /// Half-edge ids grouped by vertex, increasing within a vertex.
    halves: Vec<u32>,
    names: Option<VertexNames>,
}

impl UndirectedGraph {
    /// A graph with `n` vertices and no edges.
    ///
    /// # Errors
    /// [`GraphError::TooLarge`] when `n >= u32::MAX`; [`GraphError::OutOfMemory`] when the
    /// vertex arrays cannot fit in the memory available.
    ///
    /// # Examples
    /// ```
    /// let g = graph_core::UndirectedGraph::empty(3)?;
    /// assert_eq!((g.vertex_count(), g.edge_count()), (3, 0));
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn empty(n: usize) -> Result<Self, GraphError> {
        Self::from_endpoints(n, &[], &[])
    }

    /// Builds the graph with `n` vertices and the edges `(u, v)`; edge `e` is `edges[e]`.
    ///
    /// # Complexity
    /// `O(V + E)` work (a stable counting sort of the half-edges by vertex, parallel for
    /// large inputs); 16 bytes per edge and 8 per vertex.
    ///
    /// # Errors
    /// [`GraphError::VertexOutOfRange`] when an edge names a vertex `>= n` (the first such
    /// edge); [`GraphError::TooLarge`] when `n >= u32::MAX` or there are more than
    /// [`MAX_UNDIRECTED_EDGES`] edges; [`GraphError::OutOfMemory`] when the vertex arrays
    /// cannot fit in the memory available.
    ///
    /// # Examples
    /// ```
    /// use graph_core::UndirectedGraph;
    /// // A triangle, a parallel edge and a self-loop.
    /// let g = UndirectedGraph::from_edges(3, &[(0, 1), (1, 2), (2, 0), (1, 0), (2, 2)])?;
    /// assert_eq!(g.degrees(), vec![3, 3, 4]); // the self-loop counts twice
    /// assert_eq!(g.endpoints(3), (1, 0));
    /// assert_eq!(g.incident_edges(0).collect::<Vec<_>>(), vec![0, 2, 3]);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn from_edges(n: usize, edges: &[(u32, u32)]) -> Result<Self, GraphError> {
        let (us, vs): (Vec<u32>, Vec<u32>) = edges.iter().copied().unzip();
        Self::from_endpoints(n, &us, &vs)
    }

    /// Like [`UndirectedGraph::from_edges`] with the edges as two arrays: edge `e` joins
    /// `us[e]` and `vs[e]` (what numpy users hold: two columns).
    ///
    /// # Complexity
    /// `O(V + E)` work.
    ///
    /// # Errors
    /// As [`UndirectedGraph::from_edges`]; also [`GraphError::InvalidParameter`] when the
    /// arrays differ in length.
    ///
    /// # Examples
    /// ```
    /// let g = graph_core::UndirectedGraph::from_endpoints(2, &[0, 1, 1], &[1, 0, 1])?;
    /// assert_eq!(g.degree(1), 4);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn from_endpoints(n: usize, us: &[u32], vs: &[u32]) -> Result<Self, GraphError> {
        check_edge_arrays(n, us, vs, ["first endpoints", "second endpoints"])?;
        if us.len() as u64 > MAX_UNDIRECTED_EDGES {
            return Err(GraphError::TooLarge {
                what: "undirected edges",
                count: us.len() as u128,
                max: MAX_UNDIRECTED_EDGES as u128,
            });
        }
        check_endpoints(n, [us, vs])?;
        let mut ends = vec![0u32; 2 * us.len()];
        let fill = |(pair, (&u, &v)): (&mut [u32], (&u32, &u32))| {
            pair[0] = u;
            pair[1] = v;
        };
        if us.len() < PAR_THRESHOLD {
            ends.chunks_mut(2).zip(us.iter().zip(vs)).for_each(fill);
        } else {
            ends.par_chunks_mut(2)
                .zip(us.par_iter().zip(vs.par_iter()))
                .for_each(fill);
        }
        Ok(Self::from_ends(n, ends))
    }

    /// The graph of the half-edge ends `ends` (valid vertices of `0..n`, even length).
    pub(crate) fn from_ends(n: usize, ends: Vec<u32>) -> Self {
        let mut halves = vec![0u32; ends.len()];
        let w = SharedMut::new(&mut halves);
        let offsets = counting_sort_by_key(&ends, n, |h, pos| {
            // SAFETY: counting_sort_by_key hands out each position exactly once.
            unsafe { w.write(pos as usize, h as u32) }
        });
        UndirectedGraph {
            ends,
            offsets,
            halves,
            names: None,
        }
    }

    crate::graph::vertex_methods!();

    /// Number of edges.
    pub fn edge_count(&self) -> u64 {
        self.ends.len() as u64 / 2
    }

    /// The ends of edge `e`, as given.
    ///
    /// # Panics
    /// When `e` is not an edge.
    pub fn endpoints(&self, e: u32) -> (u32, u32) {
        let h = 2 * e as usize;
        (self.ends[h], self.ends[h + 1])
    }

    /// The edges as `(u, v)` pairs in id order.
    pub fn edges(&self) -> impl ExactSizeIterator<Item = (u32, u32)> + '_ {
        self.ends.chunks_exact(2).map(|p| (p[0], p[1]))
    }

    /// The degree of `v`: its number of edge ends (a self-loop counts twice).
    ///
    /// # Panics
    /// When `v` is not a vertex.
    pub fn degree(&self, v: u32) -> u64 {
        self.offsets[v as usize + 1] - self.offsets[v as usize]
    }

    /// All degrees.
    ///
    /// # Complexity
    /// `O(V)`.
    pub fn degrees(&self) -> Vec<u64> {
        self.offsets.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// The ids of the edges at `v`, in increasing order; a self-loop appears twice (once per
    /// end).
    ///
    /// # Panics
    /// When `v` is not a vertex.
    pub fn incident_edges(&self, v: u32) -> impl Iterator<Item = u32> + '_ {
        self.halves[self.half_range(v)].iter().map(|&h| h >> 1)
    }

    /// The vertices of odd degree, in increasing order (always an even number of them).
    ///
    /// # Complexity
    /// `O(V)`.
    ///
    /// # Examples
    /// ```
    /// let g = graph_core::UndirectedGraph::from_edges(4, &[(0, 1), (1, 2), (1, 3)])?;
    /// assert_eq!(g.odd_degree_vertices(), vec![0, 1, 2, 3]);
    /// # Ok::<(), graph_core::GraphError>(())
    /// ```
    pub fn odd_degree_vertices(&self) -> Vec<u32> {
        let odd = |v: usize| (self.offsets[v + 1] - self.offsets[v]) % 2 == 1;
        let n = self.vertex_count();
        if n < PAR_THRESHOLD {
            (0..n).filter(|&v| odd(v)).map(|v| v as u32).collect()
        } else {
            (0..n)
                .into_par_iter()
                .filter(|&v| odd(v))
                .map(|v| v as u32)
                .collect()
        }
    }

    /// The positions of `v`'s half-edges in [`UndirectedGraph::half_edges`].
    pub(crate) fn half_range(&self, v: u32) -> Range<usize> {
        self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize
    }

    /// The vertex of every half-edge (`2 E` entries).
    pub(crate) fn ends(&self) -> &[u32] {
        &self.ends
    }

    /// The incidence offsets (`V + 1` entries).
    pub(crate) fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The half-edges grouped by vertex (`2 E` entries).
    pub(crate) fn half_edges(&self) -> &[u32] {
        &self.halves
    }

    /// The smallest vertex with an edge (0 when there is none).
    pub(crate) fn first_vertex_with_edges(&self) -> u32 {
        self.offsets.partition_point(|&o| o == 0).saturating_sub(1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::assert_edge_1_out_of_range;

    #[test]
    fn incidence_matches_a_plain_build() {
        for m in [0usize, 1, 31, 32, 33, 1023, 1024, 1025, 65_537, 200_003] {
            let n = (m / 3).max(1) as u32;
            let mut s = m as u64 + 1;
            let mut r = || {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
                ((s >> 33) % n as u64) as u32
            };
            let mut e: Vec<(u32, u32)> = (0..m).map(|_| (r(), r())).collect();
            if m > 5 {
                e[3] = (e[3].0, e[3].0); // a self-loop
                e[5] = e[4]; // a parallel edge
            }
            let g = UndirectedGraph::from_edges(n as usize, &e).unwrap();
            assert_eq!(g.edge_count(), m as u64);
            let mut inc = vec![Vec::new(); n as usize];
            for (i, &(u, v)) in e.iter().enumerate() {
                inc[u as usize].push(i as u32);
                inc[v as usize].push(i as u32);
            }
            for v in 0..n {
                assert_eq!(g.incident_edges(v).collect::<Vec<_>>(), inc[v as usize]);
                assert_eq!(g.degree(v), inc[v as usize].len() as u64);
            }
            assert_eq!(g.edges().collect::<Vec<_>>(), e);
            let odd: Vec<u32> = (0..n).filter(|&v| inc[v as usize].len() % 2 == 1).collect();
            assert_eq!(g.odd_degree_vertices(), odd);
        }
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        assert_edge_1_out_of_range(UndirectedGraph::from_edges(2, &[(0, 1), (1, 2)]));
        assert!(matches!(
            UndirectedGraph::from_endpoints(2, &[0], &[]),
            Err(GraphError::InvalidParameter(_))
        ));
        assert!(matches!(
            UndirectedGraph::empty(u32::MAX as usize),
            Err(GraphError::TooLarge { .. })
        ));
        let names = VertexNames::from_names(vec!["a".into()]).unwrap();
        let g = UndirectedGraph::from_edges(2, &[(0, 1)]).unwrap();
        assert!(g.clone().with_names(names).is_err());
        let names = VertexNames::from_names(vec!["a".into(), "b\"".into()]).unwrap();
        let g = g.with_names(names).unwrap();
        assert_eq!(g.vertex_label(1), "b\"");
        let g = UndirectedGraph::empty(0).unwrap();
        assert_eq!(g.vertex_count(), 0);
        assert!(g.odd_degree_vertices().is_empty());
    }
}
