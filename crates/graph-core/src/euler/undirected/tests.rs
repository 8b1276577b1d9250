use super::*;
use crate::euler::tests::{
    SIZES, broken_copies, closed_walk_edges, fails_without_gpu, gpu_graphs, out_of_memory,
    walks_strategy,
};
use crate::{EulerStyle, random_undirected_euler_graph};
use gpu_runtime::testing::gpu_for_test;
use gpu_runtime::testing::runs_out_of_memory;
use proptest::prelude::*;

fn g_of(n: usize, e: &[(u32, u32)]) -> UndirectedGraph {
    UndirectedGraph::from_edges(n, e).unwrap()
}

/// The three CPU methods: the reference walk, the orientation with the directed dispatch
/// (Hierholzer's interleaved walks or the parallel algorithm), the orientation with the
/// directed parallel algorithm.
fn cpu_trails(
    g: &UndirectedGraph,
    kind: Kind,
    source: Option<u32>,
) -> [Result<EulerTrail, EulerError>; 3] {
    let run = |hierholzer, parallel| {
        let p = plan(g, kind, source)?;
        trail_on(g, kind, p, Target::Cpu, hierholzer, parallel)
    };
    [run(true, false), run(false, false), run(false, true)]
}

/// Every CPU method on `g` gives a valid trail of `kind` from `start` (or the error `want`).
fn check_all(g: &UndirectedGraph, kind: Kind, source: Option<u32>, what: &str) -> Vec<EulerTrail> {
    let closed = kind == Kind::Circuit;
    let mut out = Vec::new();
    for (i, r) in cpu_trails(g, kind, source).into_iter().enumerate() {
        let t = r.unwrap_or_else(|e| panic!("{what}, method {i}: {e}"));
        if let Err(e) = verify_undirected_euler_trail(g, &t, closed) {
            panic!("{what}, method {i}: {e}");
        }
        if let (Some(s), false) = (source, t.edges.is_empty()) {
            assert_eq!(t.vertices[0], s, "{what}, method {i}");
        }
        out.push(t);
    }
    out
}

/// The same error from every CPU method.
fn fails_with(g: &UndirectedGraph, kind: Kind, source: Option<u32>, want: EulerError) {
    for (i, r) in cpu_trails(g, kind, source).into_iter().enumerate() {
        assert_eq!(r.as_ref().err(), Some(&want), "method {i}");
    }
    let public = match kind {
        Kind::Circuit => undirected_euler_circuit(g, source, Exec::Cpu),
        Kind::Path => undirected_euler_path(g, source, Exec::Cpu),
    };
    assert_eq!(public.map(|x| x.0), Err(want));
}

#[test]
fn generated_graphs_all_sizes_both_styles() {
    for m in SIZES {
        for style in [EulerStyle::Deep, EulerStyle::Shallow] {
            let g = random_undirected_euler_graph(m, style, m ^ 0xabc).unwrap();
            let what = format!("m = {m}, {style:?}");
            let t = check_all(&g, Kind::Circuit, None, &what);
            if m > 0 {
                assert_eq!(t[0].vertices[0], g.first_vertex_with_edges());
                // A source: the largest vertex with an edge.
                let last = (0..g.vertex_count() as u32)
                    .rev()
                    .find(|&v| g.degree(v) > 0)
                    .unwrap();
                check_all(&g, Kind::Circuit, Some(last), &what);
                check_all(&g, Kind::Path, Some(last), &what);
            }
            let (c, b) = undirected_euler_circuit(&g, None, Exec::Cpu).unwrap();
            assert_eq!(b, Backend::Cpu);
            assert!(is_undirected_euler_circuit(&g, &c), "{what}");
        }
    }
}

#[test]
fn the_orientation_is_balanced_and_one_to_one() {
    for m in [1u64, 2, 33, 1025, 65_537, 200_003] {
        for style in [EulerStyle::Deep, EulerStyle::Shallow] {
            let g = random_undirected_euler_graph(m, style, m + 11).unwrap();
            let (dg, edge_of) = orient::balanced_orientation(&g);
            crate::check_euler_circuit_conditions(&dg).unwrap();
            let mut seen = vec![false; m as usize];
            for (j, (s, t)) in dg.edges().enumerate() {
                let e = edge_of[j];
                assert!(!std::mem::replace(&mut seen[e as usize], true));
                let (a, b) = g.endpoints(e);
                assert!((s, t) == (a, b) || (s, t) == (b, a), "m = {m}: {s} -> {t}");
            }
        }
    }
}

#[test]
fn adversarial_shapes() {
    // Many parallel edges between two vertices.
    let e: Vec<(u32, u32)> = (0..40_000)
        .map(|i| if i % 3 == 0 { (1, 0) } else { (0, 1) })
        .collect();
    let t = check_all(&g_of(2, &e), Kind::Circuit, Some(1), "parallel edges");
    assert_eq!(t[0].vertices[0], 1);
    // Self-loops only, at one vertex (isolated vertices around it).
    let e: Vec<(u32, u32)> = vec![(3, 3); 70_001];
    let g = g_of(5, &e);
    assert_eq!(g.degree(3), 140_002);
    let t = check_all(&g, Kind::Circuit, None, "self-loops");
    assert!(t[0].vertices.iter().all(|&v| v == 3));
    check_all(&g, Kind::Path, Some(3), "self-loops, path");
    // A star of triangles: hub 0, triangle (0, 2i - 1, 2i).
    let k = 30_000u32;
    let e: Vec<(u32, u32)> = (1..=k)
        .flat_map(|i| [(0, 2 * i - 1), (2 * i - 1, 2 * i), (2 * i, 0)])
        .collect();
    check_all(
        &g_of(2 * k as usize + 1, &e),
        Kind::Circuit,
        Some(7),
        "star of triangles",
    );
    // A long cycle, ids in walk order and reversed ends.
    let n = (1u32 << 17) + 1;
    let e: Vec<(u32, u32)> = (0..n).map(|i| ((i + 1) % n, i)).collect();
    check_all(
        &g_of(n as usize, &e),
        Kind::Circuit,
        Some(n - 1),
        "long cycle",
    );
    // The same cycle with one edge removed: a path between its ends.
    let g = g_of(n as usize, &e[1..]);
    let t = check_all(&g, Kind::Path, None, "long path");
    assert_eq!((t[0].vertices[0], *t[0].vertices.last().unwrap()), (0, 1));
    // Self-loops hanging off a path.
    let e = [(0, 1), (1, 1), (1, 2), (2, 2), (2, 2), (0, 0)];
    let t = check_all(&g_of(3, &e), Kind::Path, Some(2), "loops on a path");
    assert_eq!(*t[0].vertices.last().unwrap(), 0);
    // Sizes around the GPU's block (256) and the scan tile (1024): a cycle of doubled edges.
    for m in [255u32, 256, 257, 1023, 1024, 1025] {
        let e: Vec<(u32, u32)> = (0..m).flat_map(|i| [(i, (i + 1) % m); 2]).collect();
        check_all(
            &g_of(m as usize, &e),
            Kind::Circuit,
            None,
            &format!("doubled cycle {m}"),
        );
    }
}

#[test]
fn networkx_edge_cases() {
    // The graph without vertices: NetworkX raises; here not Eulerian, and the empty trail.
    let g = UndirectedGraph::empty(0).unwrap();
    assert!(!g.is_eulerian() && !g.has_euler_path(None));
    assert_eq!(
        undirected_euler_circuit(&g, None, Exec::Cpu).unwrap().0,
        EulerTrail::default()
    );
    // One vertex without edges: Eulerian (connected), the empty circuit from it.
    let g = UndirectedGraph::empty(1).unwrap();
    assert!(g.is_eulerian() && g.has_euler_path(Some(0)));
    for kind in [Kind::Circuit, Kind::Path] {
        for t in check_all(&g, kind, Some(0), "single vertex") {
            assert_eq!(t, EulerTrail::default());
        }
    }
    // Edgeless with two vertices: not connected, so not Eulerian for NetworkX; the empty trail
    // here (vertices without edges are ignored).
    let g = UndirectedGraph::empty(2).unwrap();
    assert!(!g.is_eulerian() && !g.has_euler_path(None));
    assert!(
        check_all(&g, Kind::Circuit, None, "edgeless")[0]
            .edges
            .is_empty()
    );
    // Isolated vertices: NetworkX says no; the trail ignores them.
    let tri = [(0, 1), (1, 2), (2, 0)];
    let g = g_of(4, &tri);
    assert!(!g.is_eulerian() && !g.has_euler_path(None));
    check_all(&g, Kind::Circuit, None, "isolated vertex");
    fails_with(
        &g,
        Kind::Circuit,
        Some(3),
        EulerError::SourceWithoutEdges {
            kind: "circuit",
            vertex: 3,
        },
    );
    assert!(g_of(3, &tri).is_eulerian());
    // Self-loops only: Eulerian at one vertex, disconnected at two.
    let g = g_of(1, &[(0, 0), (0, 0)]);
    assert!(g.is_eulerian());
    let g = g_of(2, &[(0, 0), (1, 1)]);
    assert!(!g.is_eulerian() && !g.has_euler_path(None));
    let disc = EulerError::Disconnected {
        kind: "circuit",
        components: 2,
    };
    fails_with(&g, Kind::Circuit, None, disc);
    // A path graph: path from the smaller odd vertex; a source must be an odd vertex.
    let g = g_of(3, &[(1, 2), (0, 1)]);
    assert!(!g.is_eulerian());
    assert!(g.has_euler_path(None) && g.has_euler_path(Some(2)) && !g.has_euler_path(Some(1)));
    assert!(!g.has_euler_path(Some(7)));
    let t = check_all(&g, Kind::Path, None, "path graph");
    assert_eq!(t[0].vertices, vec![0, 1, 2]);
    assert_eq!(t[0].edges, vec![1, 0]);
    let t = check_all(&g, Kind::Path, Some(2), "path graph from 2");
    assert_eq!(t[0].vertices, vec![2, 1, 0]);
    fails_with(
        &g,
        Kind::Path,
        Some(1),
        EulerError::SourceNotOdd {
            vertex: 1,
            degree: 2,
            odd: [0, 2],
        },
    );
    // An Eulerian graph: has_euler_path from any vertex, and the path is a circuit.
    let g = g_of(3, &tri);
    assert!(g.has_euler_path(Some(1)));
    let t = check_all(&g, Kind::Path, Some(1), "eulerian path");
    assert_eq!((t[0].vertices[0], t[0].vertices[3]), (1, 1));
}

#[test]
fn errors_name_the_vertex_and_its_degree() {
    // Odd degrees: vertex 0 has degree 1, vertex 1 degree 3 (a self-loop counts twice).
    let g = g_of(4, &[(0, 1), (1, 1), (2, 3), (3, 2)]);
    fails_with(
        &g,
        Kind::Circuit,
        None,
        EulerError::OddDegree {
            vertex: 0,
            degree: 1,
        },
    );
    let e = EulerError::OddDegree {
        vertex: 0,
        degree: 1,
    };
    assert_eq!(e.to_string(), "no Euler circuit: vertex 0 has odd degree 1");
    // Four odd vertices: the third is named.
    let g = g_of(6, &[(0, 1), (2, 3), (3, 4), (4, 4), (4, 5)]);
    assert_eq!(g.odd_degree_vertices(), vec![0, 1, 2, 5]);
    fails_with(
        &g,
        Kind::Path,
        None,
        EulerError::TooManyOddVertices {
            count: 4,
            vertex: 2,
            degree: 1,
        },
    );
    // Degrees are checked before the source's edges, the source's range before all.
    fails_with(
        &g,
        Kind::Circuit,
        Some(6),
        EulerError::SourceOutOfRange {
            vertex: 6,
            vertices: 6,
        },
    );
    // Disconnected paths and circuits count the components with edges.
    let g = g_of(7, &[(0, 1), (1, 2), (3, 4), (4, 3), (6, 6)]);
    fails_with(
        &g,
        Kind::Path,
        Some(2),
        EulerError::Disconnected {
            kind: "path",
            components: 3,
        },
    );
    let g = g_of(7, &[(0, 1), (1, 0), (3, 4), (4, 3), (6, 6)]);
    fails_with(
        &g,
        Kind::Path,
        None,
        EulerError::Disconnected {
            kind: "path",
            components: 3,
        },
    );
    fails_with(
        &g,
        Kind::Circuit,
        Some(6),
        EulerError::Disconnected {
            kind: "circuit",
            components: 3,
        },
    );
}

#[test]
fn checker_rejects_broken_trails() {
    let g = g_of(3, &[(0, 1), (1, 2), (2, 0), (0, 2), (2, 0)]);
    let t = undirected_euler_circuit_hierholzer(&g, None).unwrap();
    assert!(is_undirected_euler_circuit(&g, &t));
    for bad in broken_copies(&t, 1) {
        assert!(!is_undirected_euler_path(&g, &bad), "{bad:?}");
    }
    // Reversed, a circuit is still a circuit; an open path is not one.
    let g = g_of(3, &[(0, 1), (1, 2)]);
    let p = EulerTrail {
        edges: vec![1, 0],
        vertices: vec![2, 1, 0],
    };
    assert!(is_undirected_euler_path(&g, &p) && !is_undirected_euler_circuit(&g, &p));
    assert!(is_undirected_euler_circuit(
        &UndirectedGraph::empty(2).unwrap(),
        &EulerTrail::default()
    ));
}

#[test]
fn gpu_matches_checker() {
    let Some(_gpu) = gpu_for_test("undirected euler gpu_matches_checker") else {
        return;
    };
    // Under the simulated driver (kernels on one CPU core) the sizes stop at 4099.
    for (m, style, g) in gpu_graphs(4099, random_undirected_euler_graph) {
        let (t, b) = undirected_euler_circuit(&g, None, Exec::Cuda).unwrap();
        assert_eq!(b, Backend::Cuda);
        assert!(
            is_undirected_euler_circuit(&g, &t),
            "m = {m} {style:?}: {:?}",
            verify_undirected_euler_trail(&g, &t, true)
        );
        if m > 1 {
            let mut e: Vec<(u32, u32)> = g.edges().collect();
            let (u, v) = e.pop().unwrap();
            let h = g_of(g.vertex_count(), &e);
            if let Ok((p, _)) = undirected_euler_path(&h, Some(v), Exec::Cuda) {
                assert!(is_undirected_euler_path(&h, &p));
                if u != v {
                    assert_eq!((p.vertices[0], *p.vertices.last().unwrap()), (v, u));
                }
            }
        }
    }
    let e: Vec<(u32, u32)> = vec![(0, 0); gpu_runtime::testing::gpu_test_size(100_000, 5_000)];
    let g = g_of(1, &e);
    assert!(is_undirected_euler_circuit(
        &g,
        &undirected_euler_circuit(&g, None, Exec::Cuda).unwrap().0
    ));
    let g = g_of(6, &[(0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 4)]);
    assert_eq!(
        undirected_euler_circuit(&g, None, Exec::Cuda).map(|x| x.0),
        Err(EulerError::Disconnected {
            kind: "circuit",
            components: 3
        })
    );
}

#[test]
fn gpu_out_of_memory_is_a_typed_error() {
    let g = random_undirected_euler_graph(5000, EulerStyle::Deep, 3).unwrap();
    let run = || {
        let mut e: Vec<(u32, u32)> = g.edges().collect();
        e.pop();
        let h = g_of(g.vertex_count(), &e);
        [
            undirected_euler_circuit(&g, None, Exec::Cuda),
            undirected_euler_path(&h, None, Exec::Cuda),
        ]
    };
    runs_out_of_memory(4096, run, out_of_memory);
}

#[test]
fn cuda_without_gpu_is_an_error() {
    fails_without_gpu(|| {
        let g = g_of(1, &[(0, 0)]);
        [
            undirected_euler_circuit(&g, None, Exec::Cuda),
            undirected_euler_path(&g, None, Exec::Cuda),
        ]
    });
}

/// The conditions from first principles: the number of odd vertices and of components with
/// edges (a breadth-first search).
fn reference_conditions(g: &UndirectedGraph) -> (usize, u64) {
    let n = g.vertex_count();
    let mut adj = vec![Vec::new(); n];
    let mut deg = vec![0u64; n];
    for (u, v) in g.edges() {
        adj[u as usize].push(v);
        adj[v as usize].push(u);
        deg[u as usize] += 1;
        deg[v as usize] += 1;
    }
    let mut seen = vec![false; n];
    let mut comps = 0;
    for s in 0..n {
        if seen[s] || deg[s] == 0 {
            continue;
        }
        comps += 1;
        seen[s] = true;
        let mut q = vec![s];
        while let Some(x) = q.pop() {
            for &y in &adj[x] {
                if !std::mem::replace(&mut seen[y as usize], true) {
                    q.push(y as usize);
                }
            }
        }
    }
    (deg.iter().filter(|&&d| d % 2 == 1).count(), comps)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Unions of random closed walks (every degree even; connected or not), plus a few extra
    /// edges that make degrees odd: every method agrees with the conditions computed from
    /// first principles, and every trail passes the checker.
    #[test]
    fn prop_random_multigraphs(
        (n, walks) in walks_strategy(30, 1..10, 0..8),
        extra in proptest::collection::vec((0u32..30, 0u32..30), 0..3),
        source in proptest::option::of(0u32..30),
    ) {
        let mut e = closed_walk_edges(n, &walks);
        e.extend(extra.iter().map(|&(a, b)| (a % n, b % n)));
        let g = g_of(n as usize, &e);
        let (odd, comps) = reference_conditions(&g);
        let source = source.map(|s| s % (n + 1));
        for kind in [Kind::Circuit, Kind::Path] {
            let max_odd = if kind == Kind::Circuit { 0 } else { 2 };
            for r in cpu_trails(&g, kind, source) {
                match r {
                    Ok(t) => {
                        prop_assert!(odd <= max_odd && comps <= 1);
                        let closed = odd == 0;
                        prop_assert!(verify_undirected_euler_trail(&g, &t, closed).is_ok(),
                            "{:?}", verify_undirected_euler_trail(&g, &t, closed));
                        if let (Some(s), false) = (source, t.edges.is_empty()) {
                            prop_assert_eq!(t.vertices[0], s);
                        }
                    }
                    Err(EulerError::OddDegree { degree, .. }) => {
                        prop_assert!(kind == Kind::Circuit && odd > 0 && degree % 2 == 1);
                    }
                    Err(EulerError::TooManyOddVertices { count, .. }) => {
                        prop_assert!(kind == Kind::Path && count as usize == odd && odd > 2);
                    }
                    Err(EulerError::Disconnected { components, .. }) => {
                        prop_assert!(odd <= max_odd);
                        prop_assert_eq!(components, comps);
                    }
                    Err(EulerError::SourceNotOdd { degree, .. }) => {
                        prop_assert!(odd == 2 && degree % 2 == 0);
                    }
                    Err(EulerError::SourceWithoutEdges { vertex, .. }) => {
                        prop_assert!(odd == 0 && g.degree(vertex) == 0 && g.edge_count() > 0);
                    }
                    Err(EulerError::SourceOutOfRange { vertex, .. }) => {
                        prop_assert_eq!(vertex, n);
                    }
                    Err(other) => prop_assert!(false, "unexpected error {other}"),
                }
            }
        }
        // NetworkX's predicates, from first principles (isolated vertices count).
        let connected_all = comps <= 1
            && (0..n).all(|v| g.degree(v) > 0 || n == 1);
        prop_assert_eq!(g.is_eulerian(), odd == 0 && connected_all);
        prop_assert_eq!(g.has_euler_path(None), (odd == 0 || odd == 2) && connected_all);
    }
}
