//! Every graph reader (edge lists, SNAP, adjacency lines, Matrix Market, FASTA/FASTQ k-mers)
//! over arbitrary bytes and over text made of their tokens: a typed error, or a valid graph
//! that round-trips through `write_adjacency` (or that the writer refuses, typed). The same
//! properties as the fuzz targets (`cargo xtask fuzz`), without the fuzzer.

use graph_core::{
    Graph, GraphError, GraphFormat, kmer_graph_from_reads, read_graph, write_adjacency,
};
use proptest::prelude::*;

fn labelled(g: &Graph) -> Vec<(String, Vec<String>)> {
    let mut v: Vec<_> = (0..g.vertex_count() as u32)
        .map(|v| {
            (
                g.vertex_label(v),
                g.successors(v).iter().map(|&t| g.vertex_label(t)).collect(),
            )
        })
        .collect();
    v.sort();
    v
}

fn typed(e: &GraphError) -> bool {
    matches!(
        e,
        GraphError::Parse { .. }
            | GraphError::TooLarge { .. }
            | GraphError::OutOfMemory { .. }
            | GraphError::InvalidParameter(_)
            | GraphError::Reads(_)
    )
}

fn check(g: &Graph) -> Result<(), TestCaseError> {
    let n = g.vertex_count();
    prop_assert!(g.targets().iter().all(|&t| (t as usize) < n));
    let mut labels: Vec<String> = (0..n as u32).map(|v| g.vertex_label(v)).collect();
    labels.sort();
    labels.dedup();
    prop_assert_eq!(labels.len(), n, "distinct labels");
    let mut text = Vec::new();
    match write_adjacency(g, &mut text) {
        Ok(()) => {
            let back = read_graph(&text[..], GraphFormat::Adjacency)
                .map_err(|e| TestCaseError::fail(format!("{e}")))?;
            prop_assert_eq!(labelled(&back), labelled(g));
        }
        Err(e) => prop_assert!(matches!(e, GraphError::InvalidParameter(_)), "{}", e),
    }
    Ok(())
}

fn read_all(bytes: &[u8]) -> Result<(), TestCaseError> {
    for f in [
        GraphFormat::EdgeList,
        GraphFormat::Snap,
        GraphFormat::Adjacency,
        GraphFormat::MatrixMarket,
    ] {
        match read_graph(bytes, f) {
            Ok(g) => check(&g)?,
            Err(e) => prop_assert!(typed(&e), "{:?}: {}", f, e),
        }
    }
    for k in [1, 2, 3, 5, 33] {
        match kmer_graph_from_reads(bytes, k) {
            Ok(kg) => {
                prop_assert!((2..=32).contains(&k));
                prop_assert!(kg.graph.edge_count() <= kg.kmer_occurrences);
                check(&kg.graph)?;
            }
            Err(e) => prop_assert!(typed(&e), "k = {}: {}", k, e),
        }
    }
    Ok(())
}

/// Up to 29 of the readers' tokens, each drawn uniformly, joined.
fn graph_text() -> impl Strategy<Value = Vec<u8>> {
    const TOKENS: &[&[u8]] = &[
        b"%%MatrixMarket matrix coordinate pattern general\n",
        b"%%MatrixMarket matrix coordinate real symmetric\n",
        b"3 3 2\n",
        b"1 2",
        b"0",
        b"007",
        b"a",
        b"->",
        b">r\n",
        b"@q\nACGT\n+\nIIII\n",
        b"ACGTN",
        b"source target",
        b"{}",
        b",",
        b" ",
        b"\t",
        b"\x0c",
        b"\n",
        b"\r\n",
        b"#",
        b"%",
        b"\xff",
    ];
    proptest::collection::vec(proptest::sample::select(TOKENS), 0..30).prop_map(|t| t.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn readers_fail_typed_or_round_trip_on_arbitrary_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..300)
    ) {
        read_all(&bytes)?;
    }

    #[test]
    fn readers_fail_typed_or_round_trip_on_graph_text(text in graph_text()) {
        read_all(&text)?;
    }
}
