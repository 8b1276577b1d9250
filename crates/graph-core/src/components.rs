//! Connectivity: weakly connected components, spanning forests, strongly connected components,
//! and the Euler conditions.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use crate::par::PAR_THRESHOLD;
use crate::{EulerError, Graph, UndirectedGraph};

/// A lock-free union-find over `0..n` (link the larger root under the smaller, path halving).
///
/// Concurrent `union` calls are safe; every successful `union` merges two distinct sets, so the
/// pairs whose `union` returned `true` form a spanning forest. Each slot stores `parent ^ x`,
/// so the initial state (every element its own root) is all zeros: a fresh union-find is a
/// lazily zeroed allocation and costs nothing for the elements it never touches.
pub(crate) struct UnionFind {
    link: Vec<AtomicU32>,
}

impl UnionFind {
    pub(crate) fn new(n: usize) -> Self {
        // Plain zeroed pages, not `zeroed_huge`: most slots are never touched.
        // SAFETY: AtomicU32 has the size, alignment and bit validity of u32.
        let link = unsafe { crate::par::recast_vec::<u32, AtomicU32>(vec![0; n]) };
        UnionFind { link }
    }

    /// Asks the core to load `x`'s slot (a hint, for callers that know which elements they
    /// will look up next).
    #[inline]
    pub(crate) fn prefetch(&self, x: u32) {
        crate::par::prefetch(self.link.as_ptr().wrapping_add(x as usize));
    }

    #[inline]
    fn parent(&self, x: u32) -> u32 {
        self.link[x as usize].load(Relaxed) ^ x
    }

    #[inline]
    pub(crate) fn find(&self, mut x: u32) -> u32 {
        loop {
            let p = self.parent(x);
            if p == x {
                return x;
            }
            let gp = self.parent(p);
            if gp != p {
                // Path halving: gp is an ancestor of x whatever other threads do, and x is not
                // a root, so no link can be lost.
                self.link[x as usize].store(gp ^ x, Relaxed);
            }
            x = gp;
        }
    }

    /// Merges the sets of `a` and `b`; `true` when they were different.
    #[inline]
    pub(crate) fn union(&self, a: u32, b: u32) -> bool {
        let (mut a, mut b) = (a, b);
        loop {
            a = self.find(a);
            b = self.find(b);
            if a == b {
                return false;
            }
            let (hi, lo) = if a > b { (a, b) } else { (b, a) };
            // A root stores 0 (its parent is itself).
            if self.link[hi as usize]
                .compare_exchange(0, lo ^ hi, Relaxed, Relaxed)
                .is_ok()
            {
                return true;
            }
        }
    }
}

/// A partition of the vertices into components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Components {
    /// Number of components.
    pub count: u32,
    /// Component of each vertex, numbered `0..count` in order of each component's smallest
    /// vertex.
    pub labels: Vec<u32>,
}

fn dense_labels(roots: Vec<u32>) -> Components {
    // Roots are smallest members (union-find links under the smaller root), so numbering in
    // vertex order gives components in order of their smallest vertex.
    let mut labels = vec![0u32; roots.len()];
    let mut count = 0u32;
    for v in 0..roots.len() {
        let r = roots[v] as usize;
        if r == v {
            labels[v] = count;
            count += 1;
        } else {
            labels[v] = labels[r];
        }
    }
    Components { count, labels }
}

/// The components of `0..n` after `link(uf, i)` ran for every `i` in `0..items` (in parallel
/// from `PAR_THRESHOLD` edges).
fn components_of(
    n: usize,
    items: usize,
    edges: usize,
    link: impl Fn(&UnionFind, usize) + Sync,
) -> Components {
    let uf = UnionFind::new(n);
    if edges < PAR_THRESHOLD {
        (0..items).for_each(|i| link(&uf, i));
    } else {
        (0..items)
            .into_par_iter()
            .with_min_len(1 << 10)
            .for_each(|i| link(&uf, i));
    }
    let roots: Vec<u32> = (0..n as u32).map(|v| uf.find(v)).collect();
    dense_labels(roots)
}

/// Number of components of `c` holding a vertex with `has_edge`.
fn count_with_edges(c: &Components, has_edge: impl Fn(usize) -> bool) -> u64 {
    let mut has = vec![false; c.count as usize];
    for (v, &l) in c.labels.iter().enumerate() {
        if has_edge(v) {
            has[l as usize] = true;
        }
    }
    has.iter().filter(|&&b| b).count() as u64
}

/// The edge ids (`0..`) of the pairs that join two trees of a union-find over `0..n`, in
/// order: a spanning forest.
fn forest_of(n: usize, pairs: impl Iterator<Item = (u32, u32)>) -> Vec<u64> {
    let uf = UnionFind::new(n);
    (0u64..)
        .zip(pairs)
        .filter(|&(_, (a, b))| uf.union(a, b))
        .map(|(e, _)| e)
        .collect()
}

/// Weakly connected components (edge directions ignored; isolated vertices are components).
///
/// # Complexity
/// `O(V + E α(V))` work with a lock-free union-find, parallel over the edges.
///
/// # Examples
/// ```
/// let g = graph_core::Graph::from_edges(5, &[(0, 1), (2, 1), (3, 4)])?;
/// let c = graph_core::weakly_connected_components(&g);
/// assert_eq!(c.count, 2);
/// assert_eq!(c.labels, vec![0, 0, 0, 1, 1]);
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn weakly_connected_components(g: &Graph) -> Components {
    let off = g.offsets();
    let tg = g.targets();
    components_of(g.vertex_count(), g.vertex_count(), tg.len(), |uf, v| {
        for e in off[v]..off[v + 1] {
            uf.union(v as u32, tg[e as usize]);
        }
    })
}

/// The connected components of an undirected graph (isolated vertices are components), as
/// NetworkX's `connected_components` numbered in order of each component's smallest vertex.
///
/// # Complexity
/// `O(V + E α(V))` work with a lock-free union-find, parallel over the edges.
///
/// # Examples
/// ```
/// let g = graph_core::UndirectedGraph::from_edges(5, &[(0, 1), (2, 1), (4, 4)])?;
/// let c = graph_core::connected_components(&g);
/// assert_eq!(c.count, 3);
/// assert_eq!(c.labels, vec![0, 0, 0, 1, 2]);
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn connected_components(g: &UndirectedGraph) -> Components {
    let ends = g.ends();
    let m = ends.len() / 2;
    components_of(g.vertex_count(), m, m, |uf, e| {
        uf.union(ends[2 * e], ends[2 * e + 1]);
    })
}

/// Number of weakly connected components among the vertices that have at least one edge.
///
/// # Complexity
/// `O(V + E α(V))`.
///
/// # Examples
/// ```
/// let g = graph_core::Graph::from_edges(6, &[(0, 1), (3, 4)])?;
/// assert_eq!(graph_core::edge_component_count(&g), 2);
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn edge_component_count(g: &Graph) -> u64 {
    let c = weakly_connected_components(g);
    let out = g.out_degrees();
    let ind = g.in_degrees();
    count_with_edges(&c, |v| out[v] + ind[v] > 0)
}

/// Number of connected components of an undirected graph among the vertices that have at
/// least one edge.
pub(crate) fn undirected_edge_component_count(g: &UndirectedGraph) -> u64 {
    count_with_edges(&connected_components(g), |v| g.degree(v as u32) > 0)
}

/// A spanning forest of the underlying undirected graph: the ids of `V - components` edges
/// that connect every weak component without a cycle.
///
/// # Complexity
/// `O(V + E α(V))`.
///
/// # Examples
/// ```
/// let g = graph_core::Graph::from_edges(3, &[(0, 1), (1, 0), (1, 2), (2, 0)])?;
/// let f = graph_core::spanning_forest(&g);
/// assert_eq!(f.len(), 2);
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn spanning_forest(g: &Graph) -> Vec<u64> {
    forest_of(g.vertex_count(), g.edges())
}

/// A spanning forest of an undirected graph: the ids of `V - components` edges, the first
/// edge (in id order) that joins two trees each time.
///
/// # Complexity
/// `O(V + E α(V))`.
///
/// # Examples
/// ```
/// let g = graph_core::UndirectedGraph::from_edges(3, &[(0, 1), (1, 0), (1, 2), (2, 0)])?;
/// assert_eq!(graph_core::undirected_spanning_forest(&g), vec![0, 2]);
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn undirected_spanning_forest(g: &UndirectedGraph) -> Vec<u64> {
    forest_of(g.vertex_count(), g.edges())
}

/// Strongly connected components (iterative Tarjan; no recursion, so deep graphs are fine).
///
/// # Complexity
/// `O(V + E)`.
///
/// # Examples
/// ```
/// let g = graph_core::Graph::from_edges(4, &[(0, 1), (1, 0), (1, 2), (2, 3), (3, 2)])?;
/// let c = graph_core::strongly_connected_components(&g);
/// assert_eq!(c.count, 2);
/// assert_eq!(c.labels[0], c.labels[1]);
/// assert_ne!(c.labels[1], c.labels[2]);
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn strongly_connected_components(g: &Graph) -> Components {
    const NONE: u32 = u32::MAX;
    let n = g.vertex_count();
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![NONE; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut call: Vec<(u32, u64)> = Vec::new(); // (vertex, next edge)
    let mut next_index = 0u32;
    let mut count = 0u32;
    for root in 0..n as u32 {
        if index[root as usize] != NONE {
            continue;
        }
        call.push((root, g.offsets()[root as usize]));
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&(v, e)) = call.last() {
            let end = g.offsets()[v as usize + 1];
            if e < end {
                let w = g.targets()[e as usize];
                if let Some(top) = call.last_mut() {
                    top.1 += 1;
                }
                if index[w as usize] == NONE {
                    index[w as usize] = next_index;
                    low[w as usize] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    call.push((w, g.offsets()[w as usize]));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
            } else {
                call.pop();
                if let Some(&(p, _)) = call.last() {
                    low[p as usize] = low[p as usize].min(low[v as usize]);
                }
                if low[v as usize] == index[v as usize] {
                    while let Some(w) = stack.pop() {
                        on_stack[w as usize] = false;
                        comp[w as usize] = count;
                        if w == v {
                            break;
                        }
                    }
                    count += 1;
                }
            }
        }
    }
    // Renumber in order of smallest vertex, like the other component functions.
    let mut map = vec![NONE; count as usize];
    let mut next = 0u32;
    for c in comp.iter_mut() {
        if map[*c as usize] == NONE {
            map[*c as usize] = next;
            next += 1;
        }
        *c = map[*c as usize];
    }
    Components {
        count,
        labels: comp,
    }
}

/// Whether every vertex reaches every other (a graph with at most one vertex is).
///
/// # Complexity
/// `O(V + E)`.
///
/// # Examples
/// ```
/// let g = graph_core::Graph::from_edges(3, &[(0, 1), (1, 2), (2, 0)])?;
/// assert!(graph_core::is_strongly_connected(&g));
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn is_strongly_connected(g: &Graph) -> bool {
    strongly_connected_components(g).count <= 1
}

/// The first vertex with in-degree != out-degree, with both degrees.
pub(crate) fn first_unbalanced(out: &[u64], ind: &[u64]) -> Option<(u32, u64, u64)> {
    let pos = if out.len() < PAR_THRESHOLD {
        out.iter().zip(ind).position(|(a, b)| a != b)
    } else {
        out.par_iter()
            .zip(ind.par_iter())
            .position_first(|(a, b)| a != b)
    };
    pos.map(|v| (v as u32, ind[v], out[v]))
}

/// Checks the Euler circuit conditions: in-degree = out-degree at every vertex, and the
/// non-isolated vertices form one weakly connected component.
///
/// # Complexity
/// `O(V + E α(V))`.
///
/// # Errors
/// [`EulerError::Unbalanced`] naming the first vertex with in != out;
/// [`EulerError::Disconnected`] with the number of components.
///
/// # Examples
/// ```
/// use graph_core::{Graph, EulerError, check_euler_circuit_conditions};
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2), (2, 0)])?;
/// assert!(check_euler_circuit_conditions(&g).is_ok());
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)])?;
/// assert!(matches!(check_euler_circuit_conditions(&g), Err(EulerError::Unbalanced { vertex: 0, .. })));
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn check_euler_circuit_conditions(g: &Graph) -> Result<(), EulerError> {
    let out = g.out_degrees();
    let ind = g.in_degrees();
    if let Some((vertex, in_degree, out_degree)) = first_unbalanced(&out, &ind) {
        return Err(EulerError::Unbalanced {
            vertex,
            in_degree,
            out_degree,
        });
    }
    let components = edge_component_count(g);
    if components > 1 {
        return Err(EulerError::Disconnected {
            kind: "circuit",
            components,
        });
    }
    Ok(())
}

/// The start and end vertex an Euler path must have, from the degrees alone (the ±1 rule):
/// `Some((s, t))` with `out(s) = in(s) + 1` and `in(t) = out(t) + 1`, or `None` when every
/// vertex is balanced (then any circuit is a path).
pub(crate) fn path_endpoints_by_degree(g: &Graph) -> Result<Option<(u32, u32)>, EulerError> {
    let out = g.out_degrees();
    let ind = g.in_degrees();
    let mut start = None;
    let mut end = None;
    for v in 0..g.vertex_count() {
        let (o, i) = (out[v], ind[v]);
        if o == i {
            continue;
        }
        let err = |reason| EulerError::PathDegrees {
            vertex: v as u32,
            in_degree: i,
            out_degree: o,
            reason,
        };
        if o == i + 1 {
            if start.is_some() {
                return Err(err("a second vertex with out-degree = in-degree + 1"));
            }
            start = Some(v as u32);
        } else if i == o + 1 {
            if end.is_some() {
                return Err(err("a second vertex with in-degree = out-degree + 1"));
            }
            end = Some(v as u32);
        } else {
            return Err(err("in-degree and out-degree differ by more than 1"));
        }
    }
    match (start, end) {
        (Some(s), Some(t)) => Ok(Some((s, t))),
        (None, None) => Ok(None),
        (Some(s), None) => Err(EulerError::PathDegrees {
            vertex: s,
            in_degree: ind[s as usize],
            out_degree: out[s as usize],
            reason: "no vertex has in-degree = out-degree + 1",
        }),
        (None, Some(t)) => Err(EulerError::PathDegrees {
            vertex: t,
            in_degree: ind[t as usize],
            out_degree: out[t as usize],
            reason: "no vertex has out-degree = in-degree + 1",
        }),
    }
}

/// Checks the Euler path conditions (the ±1 rule and one weak component among non-isolated
/// vertices) and returns where the path must start and end. When every vertex is balanced the
/// path is a circuit: it starts and ends at the first vertex with an edge.
///
/// # Complexity
/// `O(V + E α(V))`.
///
/// # Errors
/// [`EulerError::PathDegrees`] or [`EulerError::Disconnected`]. A graph without edges has no
/// endpoints: [`EulerError::Disconnected`] with 0 components.
///
/// # Examples
/// ```
/// let g = graph_core::Graph::from_edges(3, &[(0, 1), (1, 2)])?;
/// assert_eq!(graph_core::euler_path_endpoints(&g)?, (0, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn euler_path_endpoints(g: &Graph) -> Result<(u32, u32), EulerError> {
    let ends = path_endpoints_by_degree(g)?;
    let components = edge_component_count(g);
    if components != 1 {
        return Err(EulerError::Disconnected {
            kind: "path",
            components,
        });
    }
    Ok(match ends {
        Some(st) => st,
        None => {
            let v = g
                .offsets()
                .windows(2)
                .position(|w| w[1] > w[0])
                .unwrap_or(0) as u32;
            (v, v)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bfs_components(g: &Graph) -> Vec<u32> {
        let n = g.vertex_count();
        let mut adj = vec![Vec::new(); n];
        for (a, b) in g.edges() {
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
        let mut lab = vec![u32::MAX; n];
        let mut c = 0;
        for s in 0..n {
            if lab[s] != u32::MAX {
                continue;
            }
            let mut q = vec![s];
            lab[s] = c;
            while let Some(v) = q.pop() {
                for &w in &adj[v] {
                    if lab[w as usize] == u32::MAX {
                        lab[w as usize] = c;
                        q.push(w as usize);
                    }
                }
            }
            c += 1;
        }
        lab
    }

    #[test]
    fn wcc_matches_bfs() {
        for (n, m) in [(1usize, 0usize), (33, 20), (1025, 700), (100_000, 90_000)] {
            let mut s = 7u64 + n as u64;
            let mut r = || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % n as u64) as u32
            };
            let e: Vec<(u32, u32)> = (0..m).map(|_| (r(), r())).collect();
            let g = Graph::from_edges(n, &e).unwrap();
            let c = weakly_connected_components(&g);
            assert_eq!(c.labels, bfs_components(&g));
            let f = spanning_forest(&g);
            assert_eq!(f.len() as u64, n as u64 - c.count as u64);
        }
    }

    #[test]
    fn scc_small() {
        let g = Graph::from_edges(6, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3)]).unwrap();
        let c = strongly_connected_components(&g);
        assert_eq!(c.count, 3);
        assert_eq!(c.labels, vec![0, 0, 0, 1, 1, 2]);
        assert!(!is_strongly_connected(&g));
        // A long path: recursion would overflow, the iterative version must not.
        let n = 200_000u32;
        let e: Vec<(u32, u32)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
        let g = Graph::from_edges(n as usize, &e).unwrap();
        assert!(is_strongly_connected(&g));
    }

    #[test]
    fn euler_conditions() {
        let g = Graph::from_edges(4, &[(0, 1), (1, 0), (2, 3), (3, 2)]).unwrap();
        assert_eq!(
            check_euler_circuit_conditions(&g),
            Err(EulerError::Disconnected {
                kind: "circuit",
                components: 2
            })
        );
        let g = Graph::from_edges(3, &[(0, 1), (1, 2), (2, 0), (0, 2)]).unwrap();
        assert_eq!(euler_path_endpoints(&g), Ok((0, 2)));
        let g = Graph::from_edges(3, &[(0, 1), (0, 2)]).unwrap();
        assert!(matches!(
            euler_path_endpoints(&g),
            Err(EulerError::PathDegrees { .. })
        ));
        let g = Graph::from_edges(3, &[(1, 2), (2, 1)]).unwrap();
        assert_eq!(euler_path_endpoints(&g), Ok((1, 1)));
    }
}
