//! What the fuzz targets assert about a graph a reader gave: a typed error of the kinds the
//! readers document, or a valid graph that round-trips through adjacency lines. Also compiled
//! into graph-core's `tests/readers_arbitrary_bytes.rs` (through `#[path]`), so that the
//! proptests there assert the very same properties; it uses nothing but graph-core.

use graph_core::{Graph, GraphError, GraphFormat, read_graph};

/// Whether a graph error is one a reader documents for bad input.
pub fn typed_graph_error(e: &GraphError) -> bool {
    matches!(
        e,
        GraphError::Parse { .. }
            | GraphError::TooLarge { .. }
            | GraphError::OutOfMemory { .. }
            | GraphError::InvalidParameter(_)
            | GraphError::Reads(_)
    )
}

/// The edges of `g` by their endpoints' labels, per source in CSR order (the order of each
/// vertex's out-edges is part of the graph), sources in label order.
fn labelled(g: &Graph) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = (0..g.vertex_count() as u32)
        .map(|v| {
            (
                g.vertex_label(v),
                g.successors(v).iter().map(|&t| g.vertex_label(t)).collect(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Checks that `g` is a valid graph: endpoints below the vertex count, a distinct label per
/// vertex, offsets that end at the edge count.
pub fn check_graph(g: &Graph) {
    let n = g.vertex_count();
    assert!(g.targets().iter().all(|&t| (t as usize) < n), "targets < n");
    assert_eq!(*g.offsets().last().expect("offsets"), g.edge_count());
    let mut labels: Vec<String> = (0..n as u32).map(|v| g.vertex_label(v)).collect();
    labels.sort();
    labels.dedup();
    assert_eq!(labels.len(), n, "vertex labels are distinct");
}

/// Writes `g` with [`graph_core::write_adjacency`] and reads it back: the same vertices (by
/// label) with the same out-edges in the same order. A writer refusal must be typed.
pub fn graph_round_trip(g: &Graph) {
    let mut text = Vec::new();
    match graph_core::write_adjacency(g, &mut text) {
        Ok(()) => {
            let back = read_graph(&text[..], GraphFormat::Adjacency).unwrap_or_else(|e| {
                panic!(
                    "written adjacency does not read back: {e}\n{}",
                    String::from_utf8_lossy(&text)
                )
            });
            assert_eq!(back.vertex_count(), g.vertex_count(), "vertex count");
            assert_eq!(back.edge_count(), g.edge_count(), "edge count");
            assert_eq!(labelled(&back), labelled(g), "edges by label");
        }
        Err(e) => assert!(
            matches!(e, GraphError::InvalidParameter(_)),
            "write_adjacency error of an unexpected kind: {e:?}"
        ),
    }
}
