//! Every graph reader (edge lists, SNAP, adjacency lines, Matrix Market, FASTA/FASTQ k-mers)
//! over arbitrary bytes and over text made of their tokens: a typed error, or a valid graph
//! that round-trips through `write_adjacency` (or that the writer refuses, typed). The same
//! properties as the fuzz targets (`cargo xtask fuzz`), without the fuzzer.

use graph_core::{GraphFormat, kmer_graph_from_reads, read_graph};
use proptest::prelude::*;

/// The fuzz targets' properties of a graph (`fuzz/src/graphs.rs`, public there).
#[path = "../../../fuzz/src/graphs.rs"]
pub mod fuzz_graphs;

/// Text made of a format's fragments (warpath-io's proptests' `tests/common/text.rs`).
#[path = "../../warpath-io/tests/common/text.rs"]
pub mod text;

use fuzz_graphs::{check_graph, graph_round_trip, typed_graph_error};
use text::text_of;

/// A valid graph that round-trips through adjacency lines (or that the writer refuses, typed);
/// a failed property panics, which proptest reports and shrinks like a failed assertion.
fn check(g: &graph_core::Graph) {
    check_graph(g);
    graph_round_trip(g);
}

fn read_all(bytes: &[u8]) -> Result<(), TestCaseError> {
    for f in [
        GraphFormat::EdgeList,
        GraphFormat::Snap,
        GraphFormat::Adjacency,
        GraphFormat::MatrixMarket,
    ] {
        match read_graph(bytes, f) {
            Ok(g) => check(&g),
            Err(e) => prop_assert!(typed_graph_error(&e), "{:?}: {}", f, e),
        }
    }
    for k in [1, 2, 3, 5, 33] {
        match kmer_graph_from_reads(bytes, k) {
            Ok(kg) => {
                prop_assert!((2..=32).contains(&k));
                prop_assert!(kg.graph.edge_count() <= kg.kmer_occurrences);
                check(&kg.graph);
            }
            Err(e) => prop_assert!(typed_graph_error(&e), "k = {}: {}", k, e),
        }
    }
    Ok(())
}

/// Up to 29 of the readers' tokens, each drawn uniformly, joined.
fn graph_text() -> impl Strategy<Value = Vec<u8>> {
    text_of(
        &[
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
        ],
        30,
    )
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
