//! Tests of the edge-list tokeniser's integer fast paths against its general path, and of
//! whole reads in pieces and from mapped files.

use proptest::prelude::*;

use super::*;
use crate::{GraphFormat, read_graph, read_graph_file};

/// The integer sink without the fast path: every line goes the general way.
#[derive(Default, PartialEq, Debug)]
struct General(Vec<(u64, u64)>);

impl PairSink for General {
    fn take(&mut self, b: &[u8], a: (usize, usize), c: (usize, usize)) -> bool {
        self.0.take(b, a, c)
    }
}

/// The `u32` sink without the fast path.
#[derive(Default)]
struct General32(U32Edges);

impl PairSink for General32 {
    fn take(&mut self, b: &[u8], a: (usize, usize), c: (usize, usize)) -> bool {
        self.0.take(b, a, c)
    }
}

type Outcome = Result<Vec<(u64, u64)>, (usize, &'static str)>;

fn both(b: &[u8], snap: bool) -> (Outcome, Outcome) {
    let mut fast = Vec::new();
    let f = tokenize_pairs(b, 0, b.len(), snap, true, &mut fast)
        .map(|()| fast)
        .map_err(|e| (e.offset, e.expected));
    let mut general = General::default();
    let g = tokenize_pairs(b, 0, b.len(), snap, true, &mut general)
        .map(|()| general.0)
        .map_err(|e| (e.offset, e.expected));
    (f, g)
}

type Outcome32 = Result<(Vec<[u32; 2]>, u32), (usize, &'static str)>;

/// The `u32` sink with and without its fast path.
fn both32(b: &[u8], snap: bool) -> (Outcome32, Outcome32) {
    let mut fast = U32Edges::default();
    let f = tokenize_pairs(b, 0, b.len(), snap, true, &mut fast)
        .map(|()| (fast.edges, fast.max))
        .map_err(|e| (e.offset, e.expected));
    let mut general = General32::default();
    let g = tokenize_pairs(b, 0, b.len(), snap, true, &mut general)
        .map(|()| (general.0.edges, general.0.max))
        .map_err(|e| (e.offset, e.expected));
    (f, g)
}

fn text() -> impl Strategy<Value = Vec<u8>> {
    let token = prop::sample::select(vec![
        "0",
        "7",
        "007",
        "00",
        "123",
        "1234567890123456789",
        "12345678901234567890",
        "18446744073709551615",
        "4294967293",
        "4294967294",
        "4294967296",
        "a",
        "1a",
        "#c",
        "%",
        "{}",
        "{'w': 1}",
        "-1",
        "+3",
        "source",
        "target",
        " ",
        "\t",
        ",",
        "\r",
        " , ",
        "\n",
        "\r\n",
    ]);
    prop::collection::vec(token, 0..40).prop_map(|t| t.concat().into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The integer fast path reads every text exactly as the general path does: the same
    /// edges, or the same error at the same line.
    #[test]
    fn integer_fast_path_matches_the_general_path(b in text(), snap in any::<bool>()) {
        let (f, g) = both(&b, snap);
        prop_assert_eq!(f, g);
    }

    /// So does the `u32` sink's (which refuses a name above `u32::MAX - 2` at the same
    /// line both ways), and what it keeps is what the `u64` sink reads.
    #[test]
    fn u32_fast_path_matches_the_general_path(b in text(), snap in any::<bool>()) {
        let (f, g) = both32(&b, snap);
        prop_assert_eq!(&f, &g);
        if let Ok((edges, max)) = f {
            let wide = both(&b, snap).0.unwrap();
            let narrow: Vec<(u64, u64)> =
                edges.iter().map(|&[a, c]| (a as u64, c as u64)).collect();
            prop_assert_eq!(&narrow, &wide);
            prop_assert_eq!(max as u64, wide.iter().map(|&(a, c)| a.max(c)).max().unwrap_or(0));
        }
    }

    /// A whole read (pieces on three threads, the `u32` pass and whichever pass follows
    /// a refusal) gives the graph that numbering the `u64` values in one piece gives.
    #[test]
    fn reads_match_numbering_the_values(
        lines in prop::collection::vec(
            (prop::sample::select(vec![0u64, 1, 2, 5, 70_000, 4_294_967_293, 4_294_967_294, u64::MAX]),
             prop::sample::select(vec![0u64, 1, 3, 9, 4_294_967_295])),
            1..40),
    ) {
        let text: String = lines.iter().map(|(a, c)| format!("{a} {c}\n")).collect();
        let pieces = vec![lines.clone()];
        let (sources, targets, names) = intern_integers(&pieces).unwrap();
        let want = match names {
            Names::Identity(n) => Graph::from_sources_targets(n, &sources, &targets).unwrap(),
            Names::Given(names) => Graph::from_sources_targets(names.len(), &sources, &targets)
                .unwrap()
                .with_names(VertexNames::from_names(names).unwrap())
                .unwrap(),
        };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let got = pool.install(|| parse_pairs(text.as_bytes(), false)).unwrap();
        prop_assert_eq!(got.vertex_count(), want.vertex_count());
        prop_assert_eq!(got.edges().collect::<Vec<_>>(), want.edges().collect::<Vec<_>>());
        for v in 0..want.vertex_count() as u32 {
            prop_assert_eq!(got.vertex_label(v), want.vertex_label(v));
        }
    }
}

/// Files large enough to be mapped and tokenised in pieces read as their bytes do through
/// [`read_graph`] (one thread and three), errors included with their line numbers.
#[test]
fn mapped_files_read_as_their_bytes() {
    let mut text = String::new();
    let mut x = 12345u64;
    while text.len() < 3 * PARALLEL_MIN_BYTES {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let (a, c) = ((x >> 33) % 50_000, (x >> 13) % 50_000);
        text.push_str(&format!("{a} {c}\n"));
    }
    let lines = text.lines().count();
    let dir = std::env::temp_dir();
    let path = dir.join(format!("gc-mapped-{}.txt", std::process::id()));
    for (tail, bad_line) in [
        ("", None),
        ("1 2 extra\n# c\n", None),
        ("1 4294967294\n", None),
        ("x y\n", None),
        ("1\n", Some(lines + 1)),
    ] {
        let file = format!("{text}{tail}");
        std::fs::write(&path, &file).unwrap();
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (mapped, plain) = pool.install(|| {
                (
                    read_graph_file(&path, None),
                    read_graph(file.as_bytes(), GraphFormat::EdgeList),
                )
            });
            match (mapped, plain, bad_line) {
                (Ok(m), Ok(p), None) => {
                    assert_eq!(m.vertex_count(), p.vertex_count(), "{tail:?}");
                    assert_eq!(
                        m.edge_count() as usize,
                        lines + tail.lines().count() - tail.matches('#').count()
                    );
                    assert_eq!(m.edges().collect::<Vec<_>>(), p.edges().collect::<Vec<_>>());
                    assert_eq!(m.names(), p.names());
                }
                (Err(m), Err(p), Some(line)) => {
                    assert_eq!(m.to_string(), p.to_string());
                    assert!(m.to_string().starts_with(&format!("line {line}:")), "{m}");
                }
                (m, p, _) => panic!("{tail:?}: {:?} / {:?}", m.err(), p.err()),
            }
        }
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn fast_path_cases() {
    for (t, snap) in [
        (&b"1 2\n3\t4\r\n5,6 extra 7\n8 9"[..], false),
        (b"0 0\n10 01\n", false),
        (b"007 1\n", true),
        (b"1 2 {'w': 3}\n# c\n\n  4 5\n", false),
        (b"1\n", false),
        (b"1 \n", false),
        (b"12345678901234567890 1\n", false),
        (b"1 4294967293\n2 4294967294\n", false),
    ] {
        let (f, g) = both(t, snap);
        assert_eq!(f, g, "{:?}", String::from_utf8_lossy(t));
        let (f, g) = both32(t, snap);
        assert_eq!(f, g, "{:?}", String::from_utf8_lossy(t));
    }
    // The u32 sink refuses the line of the first name above u32::MAX - 2.
    assert_eq!(
        both32(b"1 4294967293\n2 4294967294\n", false).0,
        Err((13, ""))
    );
    assert_eq!(
        both(b"1 2\n3\t4\r\n5,6 x\n8 9", false).0,
        Ok(vec![(1, 2), (3, 4), (5, 6), (8, 9)])
    );
}
