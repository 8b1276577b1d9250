use super::*;
use crate::{EulerStyle, check_euler_circuit_conditions, de_bruijn_graph, random_euler_graph};
use gpu_runtime::GpuError;
use gpu_runtime::testing::gpu_for_test;
use gpu_runtime::testing::runs_out_of_memory;
use proptest::prelude::*;
use std::fmt::Debug;

/// Edge counts of the Euler tests (directed and undirected): warp and block edges, several
/// blocks, every thread.
pub(super) const SIZES: [u64; 14] = [
    0, 1, 2, 3, 31, 32, 33, 1023, 1024, 1025, 4099, 65_537, 131_071, 200_003,
];

/// The graphs of the GPU tests, made by `make(m, style, m + 5)`: [`SIZES`] and two larger
/// edge counts `m`, up to `sim_limit` under the simulated driver (kernels on one CPU core),
/// each in both styles.
pub(super) fn gpu_graphs<G>(
    sim_limit: usize,
    make: fn(u64, EulerStyle, u64) -> Result<G, crate::GraphError>,
) -> impl Iterator<Item = (u64, EulerStyle, G)> {
    let limit = gpu_runtime::testing::gpu_test_size(usize::MAX, sim_limit) as u64;
    let sizes = SIZES.iter().copied().chain([(1 << 20) + 1, 3_000_017]);
    sizes.filter(move |&m| m <= limit).flat_map(move |m| {
        let styles = [EulerStyle::Deep, EulerStyle::Shallow].into_iter();
        styles.map(move |style| (m, style, make(m, style, m + 5).unwrap()))
    })
}

/// A vertex count in `1..max` and `walks` closed walks of `steps` vertex ids below `max` each
/// ([`closed_walk_edges`] takes the ids modulo the count).
pub(super) fn walks_strategy(
    max: u32,
    steps: std::ops::Range<usize>,
    walks: std::ops::Range<usize>,
) -> impl Strategy<Value = (u32, Vec<Vec<u32>>)> {
    let walk = proptest::collection::vec(0..max, steps);
    (1..max, proptest::collection::vec(walk, walks))
}

/// The edges of the closed walks `walks` over `n` vertices (ids taken modulo `n`): each step
/// of a walk, its last vertex back to its first.
pub(super) fn closed_walk_edges(n: u32, walks: &[Vec<u32>]) -> Vec<(u32, u32)> {
    let mut e = Vec::new();
    for w in walks {
        for i in 0..w.len() {
            e.push((w[i] % n, w[(i + 1) % w.len()] % n));
        }
    }
    e
}

/// Copies of a valid trail of at least five edges, each broken one way (two edges swapped,
/// vertex 2 set to `vertex`, an edge repeated, the last edge or vertex dropped, an edge id out
/// of range): none is an Euler path, directed or undirected.
pub(super) fn broken_copies(t: &EulerTrail, vertex: u32) -> Vec<EulerTrail> {
    let with = |f: &dyn Fn(&mut EulerTrail)| {
        let mut bad = t.clone();
        f(&mut bad);
        bad
    };
    vec![
        with(&|b| b.edges.swap(0, 1)),
        with(&|b| b.vertices[2] = vertex),
        with(&|b| b.edges[4] = b.edges[0]),
        with(&|b| {
            b.edges.pop();
        }),
        with(&|b| {
            b.vertices.pop();
        }),
        with(&|b| b.edges[0] = 99),
    ]
}

/// Every CPU route to a circuit, each checked.
fn all_cpu_circuits(g: &Graph) -> Result<(), EulerError> {
    let a = euler_circuit_hierholzer(g)?;
    assert!(
        is_euler_circuit(g, &a),
        "hierholzer: {:?}",
        verify_euler_trail(g, &a, true)
    );
    let b = euler_circuit_parallel(g)?;
    assert!(
        is_euler_circuit(g, &b),
        "parallel: {:?}",
        verify_euler_trail(g, &b, true)
    );
    let (c, backend) = euler_circuit(g, Exec::Cpu)?;
    assert_eq!(backend, Backend::Cpu);
    assert!(is_euler_circuit(g, &c));
    Ok(())
}

/// The parallel algorithm with a tiny splitter spacing and a huge one: both extremes of the
/// list ranking (almost everything covered / almost nothing covered).
fn parallel_with_spacing(g: &Graph, spacing: u32) -> Result<EulerTrail, EulerError> {
    if g.edge_count() == 0 {
        return Ok(EulerTrail::default());
    }
    let (edges, vertices) = parallel::circuit_order(
        g.offsets(),
        g.targets(),
        spacing,
        &mut parallel::EulerStages::default(),
    )?;
    Ok(EulerTrail { edges, vertices })
}

#[test]
fn generated_graphs_all_sizes_both_styles() {
    for m in SIZES {
        for style in [EulerStyle::Deep, EulerStyle::Shallow] {
            let g = random_euler_graph(m, style, m ^ 0xabc).unwrap();
            all_cpu_circuits(&g).unwrap_or_else(|e| panic!("m = {m}, {style:?}: {e}"));
            for s in [2u32, 1 << 20] {
                let t = parallel_with_spacing(&g, s).unwrap();
                assert!(is_euler_circuit(&g, &t), "m = {m}, spacing {s}");
            }
        }
    }
}

/// The interleaved walk on every generated size, both styles and a few start vertices (the
/// public entry point takes it only from `EULER_INTERLEAVE_THRESHOLD` edges up).
#[test]
fn interleaved_walk_all_sizes() {
    for m in SIZES.into_iter().filter(|&m| m > 0) {
        for style in [EulerStyle::Deep, EulerStyle::Shallow] {
            let g = random_euler_graph(m, style, m ^ 0x5eed).unwrap();
            let first = first_vertex_with_edges(&g);
            let last = (0..g.vertex_count() as u32)
                .rev()
                .find(|&v| g.out_degree(v) > 0)
                .unwrap();
            for start in [first, last] {
                let (edges, vertices) = hierholzer::hierholzer_interleaved(&g, start);
                let t = EulerTrail { edges, vertices };
                assert_eq!(t.vertices.first(), Some(&start));
                assert!(
                    is_euler_circuit(&g, &t),
                    "m = {m}, {style:?}, start {start}: {:?}",
                    verify_euler_trail(&g, &t, true)
                );
            }
        }
    }
    // Two disjoint cycles: not every edge is reached.
    let g = Graph::from_edges(4, &[(0, 1), (1, 0), (2, 3), (3, 2)]).unwrap();
    assert_eq!(hierholzer::hierholzer_interleaved(&g, 0), (vec![], vec![]));
}

#[test]
fn de_bruijn_graphs_have_circuits() {
    for (k, n) in [
        (1, 1),
        (1, 4),
        (2, 1),
        (2, 2),
        (2, 5),
        (3, 3),
        (4, 4),
        (2, 12),
        (5, 6),
    ] {
        let g = de_bruijn_graph(k, n).unwrap();
        all_cpu_circuits(&g).unwrap();
        let t = parallel_with_spacing(&g, 4).unwrap();
        assert!(is_euler_circuit(&g, &t));
    }
}

#[test]
fn adversarial_shapes() {
    // One long cycle with ids in walk order.
    let n = (1u32 << 18) + 1;
    let e: Vec<(u32, u32)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
    all_cpu_circuits(&Graph::from_edges(n as usize, &e).unwrap()).unwrap();
    // A hub with many self loops: every pairing cycle shares the hub (one long splice run).
    let e: Vec<(u32, u32)> = (0..100_000).map(|_| (0, 0)).collect();
    all_cpu_circuits(&Graph::from_edges(1, &e).unwrap()).unwrap();
    // A flower: petals 0 -> i -> 0.
    let k = 70_000u32;
    let e: Vec<(u32, u32)> = (1..=k).flat_map(|i| [(0, i), (i, 0)]).collect();
    all_cpu_circuits(&Graph::from_edges(k as usize + 1, &e).unwrap()).unwrap();
    // Isolated vertices around the edges, and the edges not starting at vertex 0.
    let g = Graph::from_edges(10, &[(5, 7), (7, 5), (7, 7)]).unwrap();
    all_cpu_circuits(&g).unwrap();
    let t = euler_circuit_hierholzer(&g).unwrap();
    assert_eq!(t.vertices[0], 5);
}

/// The parallel algorithm finds unbalanced vertices in its pairing (its final cursors are the
/// in-degrees): on graphs large enough for the bucketed parallel pairing, it must name the same
/// first vertex, with the same degrees, as the separate degree check, wherever it lies.
#[test]
fn parallel_pairing_reports_the_first_unbalanced_vertex() {
    let g = random_euler_graph(200_003, EulerStyle::Deep, 17).unwrap();
    let edges: Vec<(u32, u32)> = g.edges().collect();
    let n = g.vertex_count();
    // Retarget one edge (one vertex loses an in-edge, another gains one), at several places:
    // early, late, and both ends in the same bucket.
    for (i, new_target) in [(0usize, n as u32 - 1), (150_000, 3), (99_999, 0)] {
        let mut e = edges.clone();
        let new_target = if new_target == e[i].1 {
            (new_target + 1) % n as u32
        } else {
            new_target
        };
        e[i].1 = new_target;
        let h = Graph::from_edges(n, &e).unwrap();
        let want = check_euler_circuit_conditions(&h).unwrap_err();
        assert!(matches!(want, EulerError::Unbalanced { .. }));
        assert_eq!(euler_circuit_parallel(&h), Err(want.clone()), "edge {i}");
        assert_eq!(euler_circuit_hierholzer(&h), Err(want), "edge {i}");
    }
    // Removing an edge unbalances both of its ends.
    let mut e = edges.clone();
    let (a, b) = e.remove(123_456);
    let h = Graph::from_edges(n, &e).unwrap();
    let want = check_euler_circuit_conditions(&h).unwrap_err();
    assert_eq!(
        euler_circuit_parallel(&h),
        Err(want),
        "edge {a} -> {b} removed"
    );
}

#[test]
fn non_eulerian_errors_say_why() {
    let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 0), (3, 3), (1, 3)]).unwrap();
    let want = EulerError::Unbalanced {
        vertex: 1,
        in_degree: 1,
        out_degree: 2,
    };
    assert_eq!(euler_circuit_hierholzer(&g), Err(want.clone()));
    assert_eq!(euler_circuit_parallel(&g), Err(want.clone()));
    assert_eq!(euler_circuit(&g, Exec::Cpu).map(|x| x.0), Err(want));
    // Three components of cycles.
    let g =
        Graph::from_edges(7, &[(0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 6), (6, 4)]).unwrap();
    let want = EulerError::Disconnected {
        kind: "circuit",
        components: 3,
    };
    assert_eq!(euler_circuit_hierholzer(&g), Err(want.clone()));
    assert_eq!(euler_circuit_parallel(&g), Err(want.clone()));
    assert_eq!(parallel_with_spacing(&g, 2), Err(want));
    // Paths.
    let g = Graph::from_edges(3, &[(0, 1), (0, 2)]).unwrap();
    assert!(matches!(
        euler_path(&g, Exec::Cpu),
        Err(EulerError::PathDegrees { vertex: 0, .. })
    ));
    let g = Graph::from_edges(5, &[(0, 1), (1, 2), (3, 4), (4, 3)]).unwrap();
    assert_eq!(
        euler_path(&g, Exec::Cpu).map(|x| x.0),
        Err(EulerError::Disconnected {
            kind: "path",
            components: 2
        })
    );
    assert_eq!(
        path_via_virtual_edge(&g, 0, 2, euler_circuit_parallel).map(|_| ()),
        Err(EulerError::Disconnected {
            kind: "path",
            components: 2
        })
    );
}

#[test]
fn paths_from_circuits_minus_one_edge() {
    for m in [2u64, 3, 33, 1025, 65_537, 200_003] {
        for style in [EulerStyle::Deep, EulerStyle::Shallow] {
            let g = random_euler_graph(m, style, m).unwrap();
            // Drop the last edge u -> v: the rest is an Euler path from v to u.
            let mut e: Vec<(u32, u32)> = g.edges().collect();
            let (u, v) = e.pop().unwrap();
            let h = Graph::from_edges(g.vertex_count(), &e).unwrap();
            let h_conn = crate::edge_component_count(&h);
            let (t, _) = match euler_path(&h, Exec::Cpu) {
                Ok(x) => x,
                Err(EulerError::Disconnected { components, .. }) => {
                    assert!(h_conn > 1 || m <= 1, "m = {m}");
                    assert_eq!(components, h_conn);
                    continue;
                }
                Err(err) => panic!("m = {m}: {err}"),
            };
            assert!(
                is_euler_path(&h, &t),
                "{:?}",
                verify_euler_trail(&h, &t, false)
            );
            if u != v && !t.edges.is_empty() {
                assert_eq!((t.vertices[0], *t.vertices.last().unwrap()), (v, u));
            }
            let hp = euler_path_hierholzer(&h).unwrap();
            assert!(is_euler_path(&h, &hp));
            if u != v {
                let pp = path_via_virtual_edge(&h, v, u, euler_circuit_parallel).unwrap();
                assert!(
                    is_euler_path(&h, &pp),
                    "{:?}",
                    verify_euler_trail(&h, &pp, false)
                );
                assert_eq!(pp.vertices[0], v);
            }
        }
    }
}

#[test]
fn checker_rejects_broken_trails() {
    let g = Graph::from_edges(3, &[(0, 1), (1, 2), (2, 0), (0, 2), (2, 0)]).unwrap();
    let t = euler_circuit_hierholzer(&g).unwrap();
    assert!(is_euler_circuit(&g, &t));
    for bad in broken_copies(&t, 0) {
        assert!(!is_euler_path(&g, &bad), "{bad:?}");
        assert!(!is_euler_circuit(&g, &bad), "{bad:?}");
    }
    // An open path is a path but not a circuit.
    let g = Graph::from_edges(2, &[(0, 1)]).unwrap();
    let p = EulerTrail {
        edges: vec![0],
        vertices: vec![0, 1],
    };
    assert!(is_euler_path(&g, &p));
    assert!(!is_euler_circuit(&g, &p));
    let empty = Graph::empty(3).unwrap();
    assert!(is_euler_circuit(&empty, &EulerTrail::default()));
}

#[test]
fn gpu_out_of_memory_is_a_typed_error() {
    // A device share of 4 KiB (the simulated driver only): every GPU path must fail with the
    // typed error, never a panic.
    let g = random_euler_graph(5000, EulerStyle::Deep, 3).unwrap();
    let run = || [euler_circuit(&g, Exec::Cuda), euler_path(&g, Exec::Cuda)];
    runs_out_of_memory(4096, run, out_of_memory);
}

#[test]
fn gpu_matches_checker() {
    let Some(_gpu) = gpu_for_test("euler gpu_matches_checker") else {
        return;
    };
    // Under the simulated driver (kernels on one CPU core) the sizes stop at 2^16 + 1.
    for (m, style, g) in gpu_graphs(65_537, random_euler_graph) {
        let (t, b) = euler_circuit(&g, Exec::Cuda).unwrap();
        assert_eq!(b, Backend::Cuda);
        assert!(
            is_euler_circuit(&g, &t),
            "m = {m} {style:?}: {:?}",
            verify_euler_trail(&g, &t, true)
        );
    }
    for (k, n) in [(2, 1), (2, 10), (4, 6)] {
        let g = de_bruijn_graph(k, n).unwrap();
        let (t, _) = euler_circuit(&g, Exec::Cuda).unwrap();
        assert!(is_euler_circuit(&g, &t));
    }
    let e: Vec<(u32, u32)> = (0..100_000).map(|_| (0, 0)).collect();
    let g = Graph::from_edges(1, &e).unwrap();
    assert!(is_euler_circuit(
        &g,
        &euler_circuit(&g, Exec::Cuda).unwrap().0
    ));
    let g =
        Graph::from_edges(7, &[(0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 6), (6, 4)]).unwrap();
    assert_eq!(
        euler_circuit(&g, Exec::Cuda).map(|x| x.0),
        Err(EulerError::Disconnected {
            kind: "circuit",
            components: 3
        })
    );
    let g = Graph::from_edges(3, &[(0, 1), (1, 2), (2, 0), (1, 2)]).unwrap();
    assert!(matches!(
        euler_circuit(&g, Exec::Cuda),
        Err(EulerError::Unbalanced { vertex: 1, .. })
    ));
    let g = random_euler_graph(100_000, EulerStyle::Deep, 3).unwrap();
    let mut e: Vec<(u32, u32)> = g.edges().collect();
    e.pop();
    let h = Graph::from_edges(g.vertex_count(), &e).unwrap();
    if let Ok((p, _)) = euler_path(&h, Exec::Cuda) {
        assert!(is_euler_path(&h, &p));
    }
}

#[test]
fn cuda_without_gpu_is_an_error() {
    fails_without_gpu(|| {
        let g = Graph::from_edges(1, &[(0, 0)]).unwrap();
        [euler_circuit(&g, Exec::Cuda)]
    });
}

/// Whether `e` is the device's out-of-memory error.
pub(super) fn out_of_memory(e: &EulerError) -> bool {
    matches!(e, EulerError::Gpu(GpuError::OutOfMemory { .. }))
}

/// Without a GPU, asserts that each result of `run` is the typed GPU error (with one, runs
/// nothing).
pub(super) fn fails_without_gpu<T: Debug, const N: usize>(
    run: impl FnOnce() -> [Result<T, EulerError>; N],
) {
    if gpu_runtime::gpu().is_ok() {
        return;
    }
    for r in run() {
        assert!(matches!(r, Err(EulerError::Gpu(_))), "{r:?}");
    }
}

/// A union of random closed walks over few vertices (so they often share vertices, sometimes
/// not): Eulerian, possibly disconnected.
fn cycles_graph(n: u32, walks: &[Vec<u32>]) -> Graph {
    Graph::from_edges(n as usize, &closed_walk_edges(n, walks)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn prop_random_unions_of_cycles(
        (n, walks) in walks_strategy(40, 1..12, 0..12),
        spacing_log in 1u32..6,
    ) {
        let g = cycles_graph(n, &walks);
        let comps = crate::edge_component_count(&g);
        let results = [
            euler_circuit_hierholzer(&g),
            euler_circuit_parallel(&g),
            parallel_with_spacing(&g, 1 << spacing_log),
        ];
        // The interleaved walk directly (the public entry uses it only for large graphs).
        if g.edge_count() > 0 {
            let (edges, vertices) =
                hierholzer::hierholzer_interleaved(&g, first_vertex_with_edges(&g));
            if comps <= 1 {
                let t = EulerTrail { edges, vertices };
                prop_assert!(is_euler_circuit(&g, &t), "{:?}", verify_euler_trail(&g, &t, true));
            } else {
                prop_assert!(edges.is_empty() && vertices.is_empty());
            }
        }
        // And paths: drop the last edge u -> v (u != v), leaving a path from v to u.
        let mut e: Vec<(u32, u32)> = g.edges().collect();
        if let Some((u, v)) = e.pop().filter(|&(u, v)| u != v) {
            let h = Graph::from_edges(g.vertex_count(), &e).unwrap();
            let (edges, vertices) = hierholzer::hierholzer_interleaved(&h, v);
            if crate::edge_component_count(&h) <= 1 {
                let t = EulerTrail { edges, vertices };
                prop_assert!(is_euler_path(&h, &t), "{:?}", verify_euler_trail(&h, &t, false));
                prop_assert_eq!((t.vertices[0], *t.vertices.last().unwrap()), (v, u));
            } else {
                prop_assert!(edges.is_empty() && vertices.is_empty());
            }
        }
        for r in results {
            match r {
                Ok(t) => {
                    prop_assert!(comps <= 1);
                    prop_assert!(is_euler_circuit(&g, &t), "{:?}", verify_euler_trail(&g, &t, true));
                }
                Err(EulerError::Disconnected { components, .. }) => {
                    prop_assert!(comps > 1);
                    prop_assert_eq!(components, comps);
                }
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
        }
    }
}
