//! Tests of graph reading and writing, every format (through the public readers).

use super::edge_list::PARALLEL_MIN_BYTES;
use super::*;
use crate::VertexNames;

fn rd(s: &str, f: GraphFormat) -> Result<Graph, GraphError> {
    read_graph(s.as_bytes(), f)
}

/// Reads `s` as `f` and checks that the graph has `vertices` vertices and `edges` edges.
fn rd_sized(s: &str, f: GraphFormat, vertices: usize, edges: u64) -> Graph {
    let g = rd(s, f).unwrap();
    assert_eq!(
        (g.vertex_count(), g.edge_count()),
        (vertices, edges),
        "{f:?}"
    );
    g
}

fn line_of(e: GraphError) -> usize {
    match e {
        GraphError::Parse { line, .. } => line,
        other => panic!("expected a parse error, got {other}"),
    }
}

/// A UTF-8 byte-order mark (as Windows editors write) is not part of the first name, in
/// any format, nor does it hide a Matrix Market banner.
#[test]
fn a_byte_order_mark_is_not_a_name() {
    let bom = "\u{feff}";
    for (text, f) in [
        ("0 1\r\n1 2\r\n2 0\r\n", GraphFormat::EdgeList),
        ("0\t1\n1\t2\n2\t0\n", GraphFormat::Snap),
        ("0 -> 1\n1 -> 2\n2 -> 0\n", GraphFormat::Adjacency),
    ] {
        let plain = rd(text, f).unwrap();
        let marked = rd(&format!("{bom}{text}"), f).unwrap();
        assert_eq!(marked.vertex_count(), 3, "{f:?}");
        for v in 0..3 {
            assert_eq!(marked.vertex_label(v), plain.vertex_label(v), "{f:?}");
            assert_eq!(marked.successors(v), plain.successors(v), "{f:?}");
        }
    }
    let mm = "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n3 1\n";
    let g = rd(&format!("{bom}{mm}"), GraphFormat::MatrixMarket).unwrap();
    assert_eq!(g.edge_count(), 3);
    let p = std::env::temp_dir().join(format!("gc-bom-{}.txt", std::process::id()));
    std::fs::write(&p, format!("{bom}{mm}")).unwrap();
    assert_eq!(detect_format(&p).unwrap(), GraphFormat::MatrixMarket);
    assert_eq!(read_graph_file(&p, None).unwrap().edge_count(), 3);
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn edge_list_and_snap() {
    let g = rd("# c\nx y\n\ny,z\nz x\n", GraphFormat::EdgeList).unwrap();
    assert_eq!(g.edge_count(), 3);
    assert_eq!(g.vertex_label(0), "x");
    assert_eq!(g.successors(0), &[1]);
    assert_eq!(
        line_of(rd("a b\na\n", GraphFormat::EdgeList).unwrap_err()),
        2
    );
    // dense integer ids: vertex v is the file's v (ids 2..6 have no edges)
    let g = rd_sized(
        "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n1\t007\n7\t0\t0.5\n",
        GraphFormat::Snap,
        8,
        3,
    );
    assert_eq!(g.vertex_label(7), "7");
    assert_eq!(g.edges().collect::<Vec<_>>(), vec![(0, 1), (1, 7), (7, 0)]);
    // sparse ids: numbered in order of appearance, named by the file's ids
    let g = rd("5000000000 7\n7 5000000000\n", GraphFormat::Snap).unwrap();
    assert_eq!(g.vertex_count(), 2);
    assert_eq!(
        (g.vertex_label(0), g.vertex_label(1)),
        ("5000000000".into(), "7".into())
    );
    assert_eq!(
        line_of(rd("0\t1\n1\tx\n", GraphFormat::Snap).unwrap_err()),
        2
    );
    assert_eq!(line_of(rd("0\t-1\n", GraphFormat::Snap).unwrap_err()), 1);
}

/// NetworkX's `write_edgelist` (data=True, data=False, data=["weight"]) and pandas
/// exports read as NetworkX reads them.
#[test]
fn networkx_dialects() {
    let want = vec![(0, 1), (1, 2), (2, 0)];
    for text in [
        "a b {}\nb c {}\nc a {}\n",
        "a b {'weight': 3}\nb c {'weight': 1.5, 'color': 'red'}\nc a {}\n",
        "a b 3\nb c 1.5\nc a 0\n",
        "a b 3 red\nb c 1 blue\nc a 0 x\n",
        "source,target\na,b\nb,c\nc,a\n",
        "Source\tTarget\tweight\na\tb\t1\nb\tc\t2\nc\ta\t3\n",
        "from to\na b\nb c\nc a\n",
        "# made by NetworkX\nsource target\na b\r\nb c\r\nc a\r\n",
    ] {
        let g = rd(text, GraphFormat::EdgeList).unwrap();
        assert_eq!(g.edges().collect::<Vec<_>>(), want, "{text:?}");
        assert_eq!(
            (g.vertex_label(0), g.vertex_label(2)),
            ("a".into(), "c".into())
        );
    }
    // a header only on the first data line; elsewhere `source target` is an edge
    let g = rd("a b\nsource target\n", GraphFormat::EdgeList).unwrap();
    assert_eq!(g.vertex_count(), 4);
    // one name, or a dict where the second name should be, is an error with its line
    assert_eq!(
        line_of(rd("a b\nc {}\n", GraphFormat::EdgeList).unwrap_err()),
        2
    );
    assert_eq!(
        line_of(rd("a b {}\n\nc\n", GraphFormat::EdgeList).unwrap_err()),
        3
    );
    // empty and comment-only inputs are edgeless graphs
    assert_eq!(rd("", GraphFormat::EdgeList).unwrap().vertex_count(), 0);
    assert_eq!(
        rd("# x\n% y\n\n", GraphFormat::EdgeList)
            .unwrap()
            .edge_count(),
        0
    );
    let g = rd("source target\n", GraphFormat::EdgeList).unwrap();
    assert_eq!(g.vertex_count(), 0);
}

/// Large inputs are tokenised in pieces on every core: the same graph, the same names in
/// the same order, errors at their own line.
#[test]
fn parallel_reading_matches_order_of_appearance() {
    let m = 120_000u64;
    let mut text = String::from("source,target,weight\n");
    for i in 0..m {
        // names appear in a scrambled order; ids differ from positions
        let a = (i * 7919) % m;
        let b = (i * 104_729 + 1) % m;
        text.push_str(&format!("v{a},v{b},{i}\n"));
    }
    assert!(text.len() > PARALLEL_MIN_BYTES);
    let g = rd(&text, GraphFormat::EdgeList).unwrap();
    assert_eq!(g.edge_count(), m);
    // the reference: interning line by line
    let mut names = VertexNames::new();
    let mut edges = Vec::new();
    for line in text.lines().skip(1) {
        let mut it = line.split(',');
        let a = names.intern(it.next().unwrap()).unwrap();
        let b = names.intern(it.next().unwrap()).unwrap();
        edges.push((a, b));
    }
    let want = Graph::from_edges(names.len(), &edges).unwrap();
    assert_eq!(g.offsets(), want.offsets());
    assert_eq!(g.targets(), want.targets());
    for v in [0u32, 1, 1000, names.len() as u32 - 1] {
        assert_eq!(g.vertex_label(v), names.name(v).unwrap());
    }
    let bad = text
        .replacen("v0,", "v0 ", 1)
        .replacen(",5\n", "\nlonely\n", 1);
    let e = rd(&bad, GraphFormat::EdgeList).unwrap_err();
    let want_line = bad.lines().position(|l| l == "lonely").unwrap() + 1;
    assert_eq!(line_of(e), want_line);
}

#[test]
fn adjacency_round_trip_and_errors() {
    let g = rd_sized(
        "0 -> 1, 2\n1 -> 0\n2 -> 0, 2\n3 ->\n",
        GraphFormat::Adjacency,
        4,
        5,
    );
    let mut out = Vec::new();
    write_adjacency(&g, &mut out).unwrap();
    let h = read_graph(&out[..], GraphFormat::Adjacency).unwrap();
    assert_eq!(g.offsets(), h.offsets());
    assert_eq!(g.targets(), h.targets());
    assert_eq!(
        line_of(rd("a -> b\nc d\n", GraphFormat::Adjacency).unwrap_err()),
        2
    );
    assert_eq!(
        line_of(rd("a -> b,,c\n", GraphFormat::Adjacency).unwrap_err()),
        1
    );
    assert_eq!(
        line_of(rd(" -> b\n", GraphFormat::Adjacency).unwrap_err()),
        1
    );
    assert_eq!(
        line_of(rd("a -> b -> c\n", GraphFormat::Adjacency).unwrap_err()),
        1
    );
}

#[test]
fn matrix_market() {
    let s = "%%MatrixMarket matrix coordinate pattern general\n% comment\n3 3 3\n1 2\n2 3\n3 1\n";
    let g = rd(s, GraphFormat::MatrixMarket).unwrap();
    assert_eq!(g.edges().collect::<Vec<_>>(), vec![(0, 1), (1, 2), (2, 0)]);
    // vertices carry the file's 1-based ids as names
    assert_eq!(
        (g.vertex_label(0), g.vertex_label(2)),
        ("1".into(), "3".into())
    );
    let s = "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 2 0.5\n2 2 1\n";
    let g = rd(s, GraphFormat::MatrixMarket).unwrap();
    assert_eq!(g.edge_count(), 3);
    let bad = [
        ("%%MatrixMarket matrix array real general\n2 2\n", 1),
        ("hello\n", 1),
        ("%%MatrixMarket matrix coordinate pattern general\n2 2\n", 2),
        (
            "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n",
            3,
        ),
        (
            "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n2 2\n",
            4,
        ),
        (
            "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 1\n",
            4,
        ),
        ("%%MatrixMarket matrix coordinate pattern general\n", 2),
        ("", 1),
    ];
    for (s, line) in bad {
        assert_eq!(
            line_of(rd(s, GraphFormat::MatrixMarket).unwrap_err()),
            line,
            "{s:?}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
    /// Arbitrary text never panics any reader: it is a graph or an error.
    #[test]
    fn prop_readers_never_panic(text in "[ab0-9 ,%#>\\-\n\t.]{0,200}", mm in proptest::bool::ANY) {
        let text = if mm {
            format!("%%MatrixMarket matrix coordinate pattern general\n4 4 3\n{text}")
        } else {
            text
        };
        for f in [GraphFormat::EdgeList, GraphFormat::Adjacency, GraphFormat::Snap, GraphFormat::MatrixMarket] {
            match read_graph(text.as_bytes(), f) {
                Ok(g) => proptest::prop_assert!(g.targets().iter().all(|&t| (t as usize) < g.vertex_count())),
                Err(GraphError::Parse { line, .. }) => proptest::prop_assert!(line >= 1),
                Err(GraphError::TooLarge { .. }) => {}
                Err(e) => proptest::prop_assert!(false, "unexpected error kind: {e}"),
            }
        }
    }
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let bytes = b"a b\n\xff\xfe c\n";
    assert_eq!(
        line_of(read_graph(&bytes[..], GraphFormat::EdgeList).unwrap_err()),
        2
    );
}

#[test]
fn absurd_vertex_count_is_an_error_not_a_crash() {
    // 4e9 vertices need about 64 GB to build: refused cleanly wherever that much memory is
    // not available (every machine this project runs on).
    let text = "%%MatrixMarket matrix coordinate pattern general\n4000000000 4000000000 1\n1 2\n";
    let needed = 4_000_000_001u64 * 16;
    match gpu_runtime::host_available_memory() {
        Some(available) if available < needed => {
            let err = read_graph(text.as_bytes(), GraphFormat::MatrixMarket).unwrap_err();
            assert!(
                matches!(
                    err,
                    GraphError::OutOfMemory {
                        vertices: 4_000_000_000,
                        ..
                    }
                ),
                "{err}"
            );
        }
        _ => println!("skipped: this machine has {needed} bytes available"),
    }
}

/// Found by the `edge_list` fuzz target: an edge-list name the adjacency format cannot
/// hold (here a leading form feed, which adjacency lines trim away) was written anyway,
/// and read back as another vertex; `write_adjacency` refuses it before writing.
#[test]
fn regression_adjacency_writer_refuses_names_it_cannot_hold() {
    for bad in ["\u{c}b", "a->b", "#x", "%x", "x\u{a0}", "\u{feff}x"] {
        let text = format!("ok {bad}\n");
        let g = read_graph(text.as_bytes(), GraphFormat::EdgeList).unwrap();
        let mut out = Vec::new();
        let e = write_adjacency(&g, &mut out).unwrap_err();
        assert!(matches!(e, GraphError::InvalidParameter(_)), "{bad:?}: {e}");
        assert!(out.is_empty(), "nothing written for {bad:?}");
    }
    let g = read_graph(&b"new york -> la, x#y\n"[..], GraphFormat::Adjacency).unwrap();
    let mut out = Vec::new();
    write_adjacency(&g, &mut out).unwrap();
    let back = read_graph(&out[..], GraphFormat::Adjacency).unwrap();
    assert_eq!(back, g);
}

/// A UTF-8 byte-order mark (as Windows editors write) was read as part of the first
/// name: `\u{feff}1` and `1` were two vertices of an integer edge list, and a Matrix
/// Market header after one was refused.
#[test]
fn regression_byte_order_mark_is_not_part_of_a_name() {
    for (text, format) in [
        ("\u{feff}1 2\n2 1\n", GraphFormat::EdgeList),
        ("\u{feff}1\t2\n2\t1\n", GraphFormat::Snap),
        ("\u{feff}1 -> 2\n2 -> 1\n", GraphFormat::Adjacency),
        (
            "\u{feff}%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n",
            GraphFormat::MatrixMarket,
        ),
    ] {
        let g = read_graph(text.as_bytes(), format).unwrap();
        let plain = read_graph(&text.as_bytes()[3..], format).unwrap();
        assert_eq!(g, plain, "{format:?}");
        assert_eq!(g.edge_count(), 2, "{format:?}");
        let dir = std::env::temp_dir().join(format!("gc-bom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("g.txt");
        std::fs::write(&p, text).unwrap();
        assert_eq!(detect_format(&p).unwrap(), format_detected(format));
        std::fs::remove_dir_all(&dir).unwrap();
    }
    fn format_detected(f: GraphFormat) -> GraphFormat {
        match f {
            GraphFormat::Snap => GraphFormat::EdgeList,
            f => f,
        }
    }
}

/// Found while writing the `matrix_market` fuzz target: a size line whose vertices fit the CSR
/// arrays in memory, but not with their names, was accepted and its names allocated
/// (an abort); it is refused before anything is allocated for the vertices.
#[test]
fn regression_vertex_names_count_against_memory() {
    let Some(available) = gpu_runtime::host_available_memory() else {
        return println!("skipped: no MemAvailable");
    };
    let n = available / 64;
    if n >= u32::MAX as u64 - 1 || n * 16 >= available {
        return println!("skipped: {available} bytes available");
    }
    let text = format!("%%MatrixMarket matrix coordinate pattern general\n{n} {n} 1\n1 2\n");
    let err = read_graph(text.as_bytes(), GraphFormat::MatrixMarket).unwrap_err();
    assert!(
        matches!(err, GraphError::OutOfMemory { vertices, .. } if vertices == n),
        "{err}"
    );
    // Entries announced but absent: an error, after reserving room for a few only.
    let text = "%%MatrixMarket matrix coordinate pattern general\n3 3 4000000000\n1 2\n";
    let err = read_graph(text.as_bytes(), GraphFormat::MatrixMarket).unwrap_err();
    assert!(err.to_string().contains("only 1 given"), "{err}");
}

#[test]
fn format_and_style_names_parse_in_any_case() {
    assert_eq!("ADJ".parse::<GraphFormat>(), Ok(GraphFormat::Adjacency));
    assert_eq!(
        "Matrix-Market".parse::<GraphFormat>(),
        Ok(GraphFormat::MatrixMarket)
    );
    assert_eq!(
        "x".parse::<GraphFormat>(),
        Err("format must be edges, adjacency, snap or mtx, not `x`".to_string())
    );
    assert_eq!(
        "Shallow".parse::<crate::EulerStyle>(),
        Ok(crate::EulerStyle::Shallow)
    );
    assert_eq!(
        "x".parse::<crate::EulerStyle>(),
        Err("style must be deep or shallow, not `x`".to_string())
    );
}
