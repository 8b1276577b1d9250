//! Seeded generators: random Eulerian digraphs ("deep" and "shallow") and De Bruijn graphs.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::euler::MAX_EULER_EDGES;
use crate::io::parse_choice;
use crate::par::{PAR_THRESHOLD, SharedMut};
use crate::undirected::MAX_UNDIRECTED_EDGES;
use crate::{Graph, GraphError, UndirectedGraph};

/// How a random Eulerian digraph is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EulerStyle {
    /// One random closed walk over `E / 4` vertices: few long cycles once in-edges are paired
    /// with out-edges (the seed's `GenerateEulerGraph`).
    Deep,
    /// A random connected undirected multigraph with every edge in both directions and
    /// adjacency sorted by target: pairing in-edges with out-edges leaves `E / 2` cycles of
    /// length 2, the worst case for splicing (the seed's `GenerateEulerGraphAlt`).
    Shallow,
}

impl std::str::FromStr for EulerStyle {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let choices: [(&[&str], _); 2] = [
            (&["deep"], EulerStyle::Deep),
            (&["shallow"], EulerStyle::Shallow),
        ];
        parse_choice(s, "style", &choices)
    }
}

const CHUNK: usize = 1 << 16;

fn chunk_rng(seed: u64, chunk: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ (chunk as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Fills `out` with values in `0..n` from a seeded generator, chunk by chunk (the result does
/// not depend on the number of threads).
fn fill_random(out: &mut [u32], n: u32, seed: u64) {
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, xs)| {
        let mut rng = chunk_rng(seed, c);
        for x in xs {
            *x = rng.random_range(0..n);
        }
    });
}

/// A connected random Eulerian digraph with `edges` edges, seeded (same seed, same graph on
/// every machine and thread count).
///
/// # Complexity
/// `O(E)` work, parallel.
///
/// # Errors
/// [`GraphError::TooLarge`] above [`MAX_EULER_EDGES`](crate::MAX_EULER_EDGES) edges.
///
/// # Examples
/// ```
/// use graph_core::{random_euler_graph, EulerStyle, check_euler_circuit_conditions};
/// let g = random_euler_graph(1000, EulerStyle::Shallow, 7)?;
/// assert_eq!(g.edge_count(), 1000);
/// assert!(check_euler_circuit_conditions(&g).is_ok());
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn random_euler_graph(edges: u64, style: EulerStyle, seed: u64) -> Result<Graph, GraphError> {
    if edges > MAX_EULER_EDGES {
        return Err(GraphError::TooLarge {
            what: "edges",
            count: edges as u128,
            max: MAX_EULER_EDGES as u128,
        });
    }
    let m = edges as usize;
    if m == 0 {
        return Graph::empty(1);
    }
    let n = (m / 4).max(2) as u32;
    match style {
        EulerStyle::Deep => {
            let mut walk = vec![0u32; m];
            fill_random(&mut walk, n, seed);
            walk[0] = 0;
            let mut ends = vec![0u32; m];
            ends[..m - 1].copy_from_slice(&walk[1..]);
            ends[m - 1] = walk[0];
            Graph::from_sources_targets(n as usize, &walk, &ends)
        }
        EulerStyle::Shallow => {
            let pairs = m / 2;
            // Undirected edges: a random tree (connectivity) then random pairs.
            let mut a = vec![0u32; pairs];
            let mut b = vec![0u32; pairs];
            let tree = (n as usize - 1).min(pairs);
            // With fewer pairs than tree edges, only the first `pairs + 1` vertices are used.
            let used = if tree < n as usize - 1 {
                tree as u32 + 1
            } else {
                n
            };
            {
                let (wa, wb) = (SharedMut::new(&mut a), SharedMut::new(&mut b));
                (0..pairs.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
                    let mut rng = chunk_rng(seed.wrapping_add(1), c);
                    for i in c * CHUNK..((c + 1) * CHUNK).min(pairs) {
                        let (x, y) = if i < tree {
                            let v = i as u32 + 1;
                            (v, rng.random_range(0..v))
                        } else {
                            (rng.random_range(0..used), rng.random_range(0..used))
                        };
                        // SAFETY: index i belongs to chunk c alone.
                        unsafe {
                            wa.write(i, x);
                            wb.write(i, y);
                        }
                    }
                });
            }
            let mut s = Vec::with_capacity(m);
            let mut t = Vec::with_capacity(m);
            s.extend_from_slice(&a);
            s.extend_from_slice(&b);
            t.extend_from_slice(&b);
            t.extend_from_slice(&a);
            if m % 2 == 1 {
                s.push(0);
                t.push(0);
            }
            drop((a, b));
            let g = Graph::from_sources_targets(n as usize, &s, &t)?;
            drop((s, t));
            // Sort every adjacency list by target.
            let offsets = g.offsets().to_vec();
            let mut targets = g.targets().to_vec();
            drop(g);
            let w = SharedMut::new(&mut targets);
            let sort_row = |v: usize| {
                let (lo, hi) = (offsets[v] as usize, offsets[v + 1] as usize);
                // SAFETY: rows of distinct vertices are disjoint ranges of `targets`.
                let row = unsafe { std::slice::from_raw_parts_mut(w.ptr().add(lo), hi - lo) };
                row.sort_unstable();
            };
            if m < PAR_THRESHOLD {
                (0..n as usize).for_each(sort_row);
            } else {
                (0..n as usize)
                    .into_par_iter()
                    .with_min_len(1 << 10)
                    .for_each(sort_row);
            }
            Graph::from_csr(offsets, targets)
        }
    }
}

/// A random undirected multigraph with every degree even and its edges connected (so it has
/// an Euler circuit) and `edges` edges, seeded: the edges of [`random_euler_graph`]`(edges,
/// style, seed)` without their directions. Edge ids follow one endpoint (as in an edge list
/// sorted by its first column), and each edge's two ends are listed in a random order. `Deep`
/// gives long trails; `Shallow` has every edge twice (pairs of parallel edges). Some vertices
/// may have no edge (so NetworkX would not call the graph Eulerian).
///
/// # Complexity
/// `O(V + E)` work, parallel.
///
/// # Errors
/// [`GraphError::TooLarge`] above [`MAX_UNDIRECTED_EDGES`](crate::MAX_UNDIRECTED_EDGES) edges.
///
/// # Examples
/// ```
/// use graph_core::{random_undirected_euler_graph, undirected_euler_circuit, EulerStyle, Exec};
/// let g = random_undirected_euler_graph(1000, EulerStyle::Deep, 7)?;
/// assert_eq!(g.edge_count(), 1000);
/// assert!(g.odd_degree_vertices().is_empty());
/// assert_eq!(undirected_euler_circuit(&g, None, Exec::Cpu)?.0.edges.len(), 1000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn random_undirected_euler_graph(
    edges: u64,
    style: EulerStyle,
    seed: u64,
) -> Result<UndirectedGraph, GraphError> {
    if edges > MAX_UNDIRECTED_EDGES {
        return Err(GraphError::TooLarge {
            what: "undirected edges",
            count: edges as u128,
            max: MAX_UNDIRECTED_EDGES as u128,
        });
    }
    let g = random_euler_graph(edges, style, seed)?;
    let sources = g.edge_sources();
    let mut ends = vec![0u32; 2 * sources.len()];
    let flip_seed = (seed as u32) ^ (seed >> 32) as u32 ^ 0x5bd1_e995;
    let fill = |(e, (pair, (&u, &v))): (usize, (&mut [u32], (&u32, &u32)))| {
        let flip = crate::euler::mix32(e as u32 ^ flip_seed) & 1 == 1;
        (pair[0], pair[1]) = if flip { (v, u) } else { (u, v) };
    };
    let it = ends.chunks_mut(2).zip(sources.iter().zip(g.targets()));
    if sources.len() < PAR_THRESHOLD {
        it.enumerate().for_each(fill);
    } else {
        ends.par_chunks_mut(2)
            .zip(sources.par_iter().zip(g.targets().par_iter()))
            .enumerate()
            .for_each(fill);
    }
    Ok(UndirectedGraph::from_ends(g.vertex_count(), ends))
}

/// The De Bruijn graph of order `n` over an alphabet of `k` letters: vertices are the words of
/// length `n - 1` (numbered in base `k`, first letter most significant), edges the words of
/// length `n` (edge id = the word's number), from its prefix to its suffix. An Euler circuit
/// spells a De Bruijn sequence B(k, n).
///
/// # Complexity
/// `O(k^n)`.
///
/// # Errors
/// [`GraphError::InvalidParameter`] for `k = 0` or `n = 0`; [`GraphError::TooLarge`] when `k^n`
/// exceeds [`MAX_EULER_EDGES`](crate::MAX_EULER_EDGES).
///
/// # Examples
/// ```
/// let g = graph_core::de_bruijn_graph(2, 3)?;
/// assert_eq!((g.vertex_count(), g.edge_count()), (4, 8));
/// assert_eq!(g.successors(0b01), &[0b10, 0b11]);
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn de_bruijn_graph(k: u32, n: u32) -> Result<Graph, GraphError> {
    if k == 0 || n == 0 {
        return Err(GraphError::InvalidParameter(format!(
            "a De Bruijn graph needs k >= 1 letters and order n >= 1 (got k = {k}, n = {n})"
        )));
    }
    let edges = (k as u128).checked_pow(n).unwrap_or(u128::MAX);
    if edges > MAX_EULER_EDGES as u128 {
        return Err(GraphError::TooLarge {
            what: "De Bruijn graph edges (k^n)",
            count: edges,
            max: MAX_EULER_EDGES as u128,
        });
    }
    let vertices = (k as u64).pow(n - 1);
    let offsets: Vec<u64> = (0..=vertices).map(|v| v * k as u64).collect();
    let targets: Vec<u32> = (0..edges as u64).map(|w| (w % vertices) as u32).collect();
    Graph::from_csr(offsets, targets)
}

/// The word of length `len` numbered `x` in base `alphabet.len()` (first letter most
/// significant), e.g. a De Bruijn vertex or edge label.
///
/// # Examples
/// ```
/// assert_eq!(graph_core::de_bruijn_word(6, 3, &['a', 'b']), "bba");
/// ```
pub fn de_bruijn_word(mut x: u64, len: u32, alphabet: &[char]) -> String {
    let k = alphabet.len().max(1) as u64;
    let mut w = vec![alphabet.first().copied().unwrap_or('?'); len as usize];
    for c in w.iter_mut().rev() {
        *c = alphabet.get((x % k) as usize).copied().unwrap_or('?');
        x /= k;
    }
    w.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check_euler_circuit_conditions;

    #[test]
    fn generators_are_eulerian_connected_and_seeded() {
        for m in [1u64, 2, 3, 31, 32, 33, 1023, 1024, 1025, 65_537, 200_001] {
            for style in [EulerStyle::Deep, EulerStyle::Shallow] {
                let g = random_euler_graph(m, style, 42).unwrap();
                assert_eq!(g.edge_count(), m);
                check_euler_circuit_conditions(&g).unwrap();
                assert_eq!(g, random_euler_graph(m, style, 42).unwrap());
            }
        }
        assert_ne!(
            random_euler_graph(1000, EulerStyle::Deep, 1).unwrap(),
            random_euler_graph(1000, EulerStyle::Deep, 2).unwrap()
        );
    }

    #[test]
    fn undirected_generator_is_eulerian_and_seeded() {
        for m in [0u64, 1, 2, 33, 1025, 65_537, 200_001] {
            for style in [EulerStyle::Deep, EulerStyle::Shallow] {
                let g = random_undirected_euler_graph(m, style, 9).unwrap();
                assert_eq!(g.edge_count(), m);
                assert!(g.odd_degree_vertices().is_empty());
                let d = random_euler_graph(m, style, 9).unwrap();
                let mut a: Vec<(u32, u32)> = g.edges().map(|(u, v)| (u.min(v), u.max(v))).collect();
                let mut b: Vec<(u32, u32)> = d.edges().map(|(u, v)| (u.min(v), u.max(v))).collect();
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b, "m = {m}");
                assert_eq!(g, random_undirected_euler_graph(m, style, 9).unwrap());
            }
        }
        // Both orders of the ends occur.
        let g = random_undirected_euler_graph(1000, EulerStyle::Deep, 3).unwrap();
        let d = random_euler_graph(1000, EulerStyle::Deep, 3).unwrap();
        let flipped = g.edges().zip(d.edges()).filter(|(a, b)| a != b).count();
        assert!((300..700).contains(&flipped), "{flipped}");
        assert!(random_undirected_euler_graph(1 << 31, EulerStyle::Deep, 1).is_err());
    }

    #[test]
    fn de_bruijn_small() {
        let g = de_bruijn_graph(3, 2).unwrap();
        assert_eq!(g.vertex_count(), 3);
        assert_eq!(g.successors(2), &[0, 1, 2]);
        check_euler_circuit_conditions(&g).unwrap();
        let g = de_bruijn_graph(5, 1).unwrap();
        assert_eq!((g.vertex_count(), g.edge_count()), (1, 5));
        assert!(de_bruijn_graph(0, 3).is_err());
        assert!(de_bruijn_graph(2, 40).is_err());
        assert!(de_bruijn_graph(u32::MAX, 3).is_err());
        assert_eq!(de_bruijn_word(5, 4, &['0', '1']), "0101");
    }
}
