//! What every fuzz target asserts about a reader's answer: a typed error of the kinds the
//! reader documents, or values that round-trip (written with the project's writer and read
//! back, the same values, bit for bit).
//!
//! The functions panic (which libFuzzer reports as a crash, with the input) when a property
//! fails; the targets in `fuzz_targets/` are thin calls into them, so the same checks can run
//! over the committed corpus in an ordinary test (`tests/corpus.rs`).

use std::path::Path;

use graph_core::{Graph, GraphFormat, read_graph};
use warpath_io::npy::{read_npy_bytes, write_npy};
use warpath_io::sparse::{SparseMatrix, SparseValues};
use warpath_io::{Element, Header, IoError, TableOptions, format_rows, parse_table};

mod graphs;
use graphs::typed_graph_error;
pub use graphs::{check_graph, graph_round_trip};

/// Values equal bit for bit, except that every NaN equals every NaN (text has one `nan`).
// `x != x`: NaN, the only value unequal to itself (`Element` has no `is_nan`).
#[allow(clippy::eq_op)]
fn same<T: Element>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y || (x != x && y != y))
}

/// Floats compared by their bits (so `-0.0` differs from `0.0`), NaNs all alike.
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

/// The lines of a table that hold data or a header: after a UTF-8 byte-order mark, what is
/// left of a line before `#` holds something besides spaces, tabs and `\r`.
pub fn table_content_lines(bytes: &[u8]) -> usize {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes
        .split(|&c| c == b'\n')
        .filter(|line| {
            let content = line.split(|&c| c == b'#').next().unwrap_or(&[]);
            content.iter().any(|&c| !matches!(c, b' ' | b'\t' | b'\r'))
        })
        .count()
}

/// Whether a header field is a name (issue 24's header rule): it starts with a letter or
/// `_`, and is not `nan` or `inf` (`infinity`), in any case.
pub fn is_name(field: &str) -> bool {
    let lower = field.to_ascii_lowercase();
    field
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && !matches!(lower.as_str(), "nan" | "inf" | "infinity")
}

/// A table: `parse_table` as `T`; an answer must be `rows x cols` values, one row per line
/// that holds something (less one for a header: no line dropped in silence; a header found
/// by `Header::Auto` must be names only, [`is_name`]) that, written by [`format_rows`]
/// (comma- and space-separated) and read back, are the same values.
pub fn table<T: Element>(bytes: &[u8], header: Header) {
    let opts = TableOptions {
        header,
        ..TableOptions::default()
    };
    match parse_table::<T>(bytes, &opts) {
        Ok(t) => {
            assert_eq!(t.data.len(), t.rows * t.cols, "rows x cols values");
            if let Some(h) = &t.header {
                assert_eq!(h.len(), t.cols, "one header name per column");
            }
            if let (Header::Auto, Some(h)) = (header, &t.header) {
                assert!(
                    h.iter().all(|f| is_name(f)),
                    "a first line taken for a header must be names only: {h:?}"
                );
            }
            assert_eq!(
                t.rows + usize::from(t.header.is_some()),
                table_content_lines(bytes),
                "a row per line that holds something (and the header)"
            );
            if t.data.is_empty() {
                return;
            }
            for sep in [b',', b' '] {
                let mut text = Vec::new();
                format_rows(&t.data, t.cols, sep, &mut text);
                let opts = TableOptions {
                    header: Header::Absent,
                    ..TableOptions::default()
                };
                let back = parse_table::<T>(&text, &opts).unwrap_or_else(|e| {
                    panic!(
                        "written table does not read back: {e}\n{}",
                        String::from_utf8_lossy(&text)
                    )
                });
                assert_eq!((back.rows, back.cols), (t.rows, t.cols), "shape round trip");
                assert!(same(&back.data, &t.data), "values round trip");
            }
        }
        Err(e) => assert!(
            matches!(e, IoError::Parse { .. } | IoError::Format(_)),
            "table error of an unexpected kind: {e:?}"
        ),
    }
}

/// A `.npy` file read as `T`: an answer must hold `product(shape)` values that, written by
/// [`write_npy`] and read back, have the same shape and values.
pub fn npy<T: Element>(bytes: &[u8]) {
    match read_npy_bytes::<T>(bytes) {
        Ok(a) => {
            let n = a.shape.iter().try_fold(1usize, |x, &d| x.checked_mul(d));
            assert_eq!(n, Some(a.data.len()), "shape {:?} and values", a.shape);
            let mut f = Vec::new();
            write_npy(&mut f, &a.data, &a.shape).expect("write_npy of a read array");
            let back = read_npy_bytes::<T>(&f).expect("a written .npy reads back");
            assert_eq!(back.shape, a.shape, "shape round trip");
            assert!(same(&back.data, &a.data), "values round trip");
            assert_eq!(back.dtype, T::DTYPE);
        }
        Err(e) => assert!(
            matches!(e, IoError::Npy { .. }),
            "npy error of an unexpected kind: {e:?}"
        ),
    }
}

/// Any input the generic array reader takes (`.npy` by magic, raw little-endian for `.bin`,
/// else a table): no panic, a typed error or `product(shape)` values.
pub fn array<T: Element>(bytes: &[u8], path: &str) {
    match warpath_io::parse_array::<T>(bytes, Path::new(path)) {
        Ok(a) => assert_eq!(
            a.shape.iter().product::<usize>(),
            a.data.len(),
            "shape and values"
        ),
        Err(e) => assert!(
            matches!(
                e,
                IoError::Npy { .. } | IoError::Parse { .. } | IoError::Format(_)
            ),
            "array error of an unexpected kind: {e:?}"
        ),
    }
}

/// A graph file in `format`: a typed error, or a valid graph that round-trips through
/// adjacency lines; edge lists also round-trip through edge-list lines `a b` (one per edge),
/// which keep every name they can hold.
pub fn graph(bytes: &[u8], format: GraphFormat) {
    match read_graph(bytes, format) {
        Ok(g) => {
            check_graph(&g);
            if matches!(format, GraphFormat::EdgeList | GraphFormat::Snap) {
                // One edge per line that is not blank or a comment; a header takes one line.
                let lines = bytes
                    .split(|&c| c == b'\n')
                    .filter(|l| {
                        l.iter()
                            .find(|&&c| !matches!(c, b' ' | b'\t' | b',' | b'\r'))
                            .is_some_and(|&c| c != b'#' && c != b'%')
                    })
                    .count() as u64;
                assert!(
                    g.edge_count() == lines || g.edge_count() + 1 == lines,
                    "{} edges from {lines} lines",
                    g.edge_count()
                );
            }
            graph_round_trip(&g);
            if matches!(format, GraphFormat::EdgeList | GraphFormat::Snap) {
                // A comment first, as tools write one: a name that starts with a
                // byte-order mark is not at the start of the file, where the mark is skipped.
                // Then a header, as pandas writes one: a first edge named `source target`
                // would otherwise be read as the header.
                let mut text = String::from("# edges\nsource target\n");
                for (s, t) in g.edges() {
                    text.push_str(&format!("{} {}\n", g.vertex_label(s), g.vertex_label(t)));
                }
                let back = read_graph(text.as_bytes(), GraphFormat::EdgeList)
                    .unwrap_or_else(|e| panic!("written edges do not read back: {e}\n{text}"));
                // Vertices without edges (ids an integer list skips) are not written.
                assert_eq!(back.edge_count(), g.edge_count(), "edge count");
                let edges = |g: &Graph| {
                    let mut e: Vec<(String, String)> = g
                        .edges()
                        .map(|(s, t)| (g.vertex_label(s), g.vertex_label(t)))
                        .collect();
                    e.sort();
                    e
                };
                assert_eq!(edges(&back), edges(&g), "edges by label");
            }
        }
        Err(e) => assert!(
            typed_graph_error(&e),
            "graph error of an unexpected kind: {e:?}"
        ),
    }
}

/// FASTA/FASTQ reads to a k-mer graph with `k` from the first byte (2 to 32; other values
/// must be refused): a typed error, or a graph whose vertices are distinct (k-1)-mers over
/// `ACGT`, whose edges are distinct k-mers (no more than the occurrences counted), and that
/// round-trips through adjacency lines.
pub fn fastx(data: &[u8]) {
    let Some((&k, reads)) = data.split_first() else {
        return;
    };
    let k = u32::from(k % 40);
    match graph_core::kmer_graph_from_reads(reads, k) {
        Ok(kg) => {
            assert!((2..=32).contains(&k), "k = {k} accepted");
            let g = &kg.graph;
            check_graph(g);
            assert!(g.edge_count() <= kg.kmer_occurrences, "distinct k-mers");
            for v in 0..g.vertex_count() as u32 {
                let l = g.vertex_label(v);
                assert_eq!(l.len(), k as usize - 1, "vertex {l} is a (k-1)-mer");
                assert!(l.bytes().all(|b| b"ACGT".contains(&b)), "vertex {l}");
            }
            let mut kmers: Vec<String> = g
                .edges()
                .map(|(s, t)| {
                    let (s, t) = (g.vertex_label(s), g.vertex_label(t));
                    assert_eq!(s[1..], t[..t.len() - 1], "an edge overlaps by k-2");
                    format!("{s}{}", &t[t.len() - 1..])
                })
                .collect();
            let m = kmers.len();
            kmers.sort();
            kmers.dedup();
            assert_eq!(kmers.len(), m, "each k-mer once");
            graph_round_trip(g);
        }
        Err(e) => assert!(
            typed_graph_error(&e),
            "k-mer reader error of an unexpected kind: {e:?}"
        ),
    }
}

/// A k-means checkpoint: a typed error, or a checkpoint consistent with its `k` and `d` that,
/// serialised again ([`clustering::checkpoint::Checkpoint::to_json`]) and parsed back, is
/// the same, bit for bit.
pub fn checkpoint(bytes: &[u8]) {
    use clustering::KMeansError;
    use clustering::checkpoint::Checkpoint;
    let path = Path::new("fuzz.ckpt.json");
    match Checkpoint::parse(bytes, path) {
        Ok(ck) => {
            assert_eq!(Some(ck.centroid_bits.len()), ck.k.checked_mul(ck.d));
            assert_eq!(ck.initial_bits.len(), ck.centroid_bits.len());
            let text = ck.to_json().expect("a read checkpoint serialises");
            let back = Checkpoint::parse(&text, path).unwrap_or_else(|e| {
                panic!(
                    "written checkpoint does not read back: {e}\n{}",
                    String::from_utf8_lossy(&text)
                )
            });
            assert_eq!(back, ck, "checkpoint round trip");
            assert!(same_bits(&[back.tol_abs], &[ck.tol_abs]), "tol_abs bits");
            if let (Some(a), Some(b)) = (&back.job, &ck.job) {
                assert!(same_bits(&[a.tol], &[b.tol]), "tol bits");
            }
        }
        Err(e) => assert!(
            matches!(e, KMeansError::Format { .. }),
            "checkpoint error of an unexpected kind: {e:?}"
        ),
    }
}

/// Reads for assembly (FASTA/FASTQ, the first byte picks k): a typed error, or canonical
/// k-mer counts that add up to the k-mers seen, and unitigs that pass `verify_unitigs` and,
/// written as FASTA and counted again, hold exactly the same k-mers.
pub fn reads(data: &[u8]) {
    use assembly::{AssemblyError, CountOptions, Exec, ReadSource, compact, count_kmers};
    let Some((&k, text)) = data.split_first() else {
        return;
    };
    let k = usize::from(k % 40);
    let mut o = CountOptions::new(k);
    o.min_count = 1;
    o.exec = Exec::Cpu;
    match count_kmers::<u128>(&[ReadSource::Bytes(text, "fuzz.fa")], &o, &mut |_| {}) {
        Ok(c) => {
            assert!(k % 2 == 1 && (3..=63).contains(&k), "k = {k} accepted");
            let total: u64 = c.counts.iter().map(|&n| u64::from(n)).sum();
            assert_eq!(total, c.stats.kmers_seen, "every k-mer occurrence counted");
            assert_eq!(
                c.kmers.len() as u64,
                c.stats.distinct,
                "min count 1 keeps all"
            );
            assert!(c.kmers.windows(2).all(|w| w[0] < w[1]), "sorted, distinct");
            let g = compact(&c.kmers, &c.counts, k);
            assert_eq!(assembly::verify_unitigs(&g, &c.kmers, &c.counts), Ok(()));
            // round trip: the unitigs, as reads, hold the same k-mers
            let mut fa = Vec::new();
            let links = g.all_links(&c.kmers);
            assembly::write_unitigs_fasta::<u128>(&mut fa, &g, &links).unwrap();
            let back =
                count_kmers::<u128>(&[ReadSource::Bytes(&fa, "unitigs.fa")], &o, &mut |_| {})
                    .unwrap_or_else(|e| panic!("written unitigs do not read back: {e}"));
            assert_eq!(back.kmers, c.kmers, "unitigs hold the same k-mers");
            assert!(
                back.counts.iter().all(|&n| n == 1),
                "each k-mer in one unitig, once"
            );
        }
        Err(e) => assert!(
            matches!(
                e,
                AssemblyError::BadK(_)
                    | AssemblyError::Reads { .. }
                    | AssemblyError::InvalidParameter(_)
            ),
            "reads error of an unexpected kind: {e:?}"
        ),
    }
}

/// The colored graph's readers (`warpath query`): the first byte picks k (mod 40, so refused
/// values are tried too); the rest, split at its first `0` byte, is a colored unitigs FASTA
/// and a color-sets file, queried with the FASTA part itself. The query fails with a reader's
/// error or succeeds; and when the FASTA part is reads, the colored graph built from them
/// (each record a color) and written by the project's writers answers the reads as queries:
/// every k-mer found, each read's own color holding all of its k-mers.
pub fn colored_graph(data: &[u8]) {
    use assembly::{AssemblyError, ColoredGraph, Colors, CountOptions, Exec, ReadSource};
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let k = usize::from(k % 40);
    let (fa, sets) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &b""[..]),
    };
    let query = |unitigs: &[u8], sets: &[u8], per_record: &mut dyn FnMut(u64, u32)| {
        ColoredGraph::open(
            ReadSource::Bytes(unitigs, "g.fa"),
            ReadSource::Bytes(sets, "g.jsonl"),
            k,
        )?
        .with_max_memory(1 << 20)
        .query(&[ReadSource::Bytes(fa, "q.fa")], &mut |m| {
            per_record(m.kmers, m.matches.iter().map(|x| x.1).max().unwrap_or(0));
            Ok(())
        })
    };
    if let Err(e) = query(fa, sets, &mut |_, _| {}) {
        assert!(
            matches!(
                e,
                AssemblyError::BadK(_)
                    | AssemblyError::Reads { .. }
                    | AssemblyError::ColorSets { .. }
                    | AssemblyError::Io { .. }
            ),
            "colored graph error of an unexpected kind: {e:?}"
        );
    }
    let mut o = CountOptions::new(k);
    o.min_count = 1;
    o.exec = Exec::Cpu;
    let source = [ReadSource::Bytes(fa, "reads.fa")];
    let Ok(g) =
        assembly::assemble_colored::<u128>(&source, &Colors::PerRecord, &o, true, &mut |_| {})
    else {
        return;
    };
    assert_eq!(g.stats.check, Ok(()));
    let (mut unitigs, mut table) = (Vec::new(), Vec::new());
    g.write_fasta(&mut unitigs).expect("to memory");
    // by name or by number, as the reads' length says
    let format = if fa.len() % 2 == 0 {
        assembly::SetsFormat::Names
    } else {
        assembly::SetsFormat::Numbers
    };
    g.write_color_sets(&mut table, format).expect("to memory");
    let stats = query(&unitigs, &table, &mut |kmers, most| {
        assert_eq!(
            u64::from(most),
            kmers,
            "a read's own color holds all its k-mers"
        );
    })
    .unwrap_or_else(|e| panic!("the written graph cannot be queried: {e}"));
    assert_eq!(
        stats.graph_kmers, g.stats.counting.solid,
        "every solid k-mer"
    );
    assert_eq!(stats.found, stats.kmers, "every k-mer of the reads");
    assert_eq!(
        stats.color_sets as usize,
        g.colors().expect("colored").sets.len(),
        "every set"
    );
}

/// Checks that `m` is a valid CSR matrix: `rows + 1` non-decreasing offsets from 0 to the entry
/// count, every column below `cols`, one value per entry.
pub fn check_csr(m: &SparseMatrix) {
    assert_eq!(m.indptr.len(), m.rows + 1, "rows + 1 offsets");
    assert_eq!(m.indptr[0], 0, "offsets start at 0");
    assert!(m.indptr.windows(2).all(|w| w[0] <= w[1]), "offsets ascend");
    assert_eq!(m.indptr[m.rows], m.nnz(), "offsets end at the entry count");
    assert!(m.indices.iter().all(|&j| j < m.cols), "columns < cols");
    assert_eq!(m.values.len(), m.nnz(), "a value per entry");
}

/// `m` as a Matrix Market `coordinate general` file (integers as `integer`, floats as `real`
/// in the shortest text that reads back), the way a test writes one.
pub fn matrix_market_text(m: &SparseMatrix) -> String {
    let field = match m.values {
        SparseValues::F64(_) => "real",
        SparseValues::I64(_) => "integer",
    };
    let mut t = format!(
        "%%MatrixMarket matrix coordinate {field} general\n{} {} {}\n",
        m.rows,
        m.cols,
        m.nnz()
    );
    for i in 0..m.rows {
        for k in m.indptr[i]..m.indptr[i + 1] {
            let mut v = Vec::new();
            match &m.values {
                SparseValues::F64(x) => x[k].write_text(&mut v),
                SparseValues::I64(x) => x[k].write_text(&mut v),
            }
            t.push_str(&format!(
                "{} {} {}\n",
                i + 1,
                m.indices[k] + 1,
                String::from_utf8_lossy(&v)
            ));
        }
    }
    t
}

/// Whether a reader's error is one the sparse and `.npz` readers document for bad input.
fn typed_io_error(e: &IoError) -> bool {
    matches!(
        e,
        IoError::Parse { .. }
            | IoError::Npy { .. }
            | IoError::Format(_)
            | IoError::OutOfMemory { .. }
    )
}

/// A sparse matrix file (`warpath_io::sparse::parse_sparse`: Matrix Market text, or an `.npz`
/// archive by its signature): a typed error, or valid CSR arrays that, written as Matrix
/// Market text and read back, are the same matrix, bit for bit.
pub fn sparse(bytes: &[u8]) {
    match warpath_io::sparse::parse_sparse(bytes) {
        Ok(m) => {
            check_csr(&m);
            let text = matrix_market_text(&m);
            let back = warpath_io::sparse::sparse_from_mtx(text.as_bytes())
                .unwrap_or_else(|e| panic!("written matrix does not read back: {e}\n{text}"));
            assert_eq!((back.rows, back.cols), (m.rows, m.cols), "shape round trip");
            assert_eq!(back.indptr, m.indptr, "offsets round trip");
            assert_eq!(back.indices, m.indices, "columns round trip");
            match (&back.values, &m.values) {
                (SparseValues::F64(a), SparseValues::F64(b)) => {
                    assert!(same_bits(a, b), "values round trip")
                }
                (a, b) => assert_eq!(a, b, "values round trip"),
            }
        }
        Err(e) => assert!(
            typed_io_error(&e),
            "sparse reader error of an unexpected kind: {e:?}"
        ),
    }
}

/// An `.npz` archive: every member read as `f64` and as `i64` and as text (a typed error or
/// values that round-trip as in [`npy`]), and the archive read as a scipy sparse matrix (as
/// [`sparse`]).
pub fn npz(bytes: &[u8]) {
    match warpath_io::npz::Npz::new(bytes) {
        Ok(mut z) => {
            for name in z.names() {
                npz_member::<f64>(&mut z, &name);
                npz_member::<i64>(&mut z, &name);
                if let Err(e) = z.text(&name) {
                    assert!(typed_io_error(&e), "npz text error: {e:?}");
                }
            }
        }
        Err(e) => assert!(
            matches!(e, IoError::Npy { .. }),
            "npz error of an unexpected kind: {e:?}"
        ),
    }
    if bytes.starts_with(b"PK") {
        sparse(bytes);
    }
}

/// Member `name` of an archive as `T`: a typed error, or an array that round-trips ([`npy`]'s
/// checks on the member's bytes).
fn npz_member<T: Element>(z: &mut warpath_io::npz::Npz<'_>, name: &str) {
    match z.member(name) {
        Ok(b) => npy::<T>(&b),
        Err(e) => assert!(typed_io_error(&e), "npz member error: {e:?}"),
    }
}

/// The k-means worker's matrix reader (`clustering::data::parse_matrix`, what `kmeans-mpi`
/// reads `--init-centroids` with and `warpath kmeans` reads points with): a typed error, or a
/// matrix that, written as CSV and read back, is the same, bit for bit.
pub fn kmeans_matrix(bytes: &[u8], name: &str) {
    use clustering::KMeansError;
    let path = Path::new(name);
    match clustering::data::parse_matrix(bytes, path) {
        Ok(m) => {
            let (r, c) = m.dim();
            let values: Vec<f64> = m.iter().copied().collect();
            if values.is_empty() {
                return;
            }
            let mut text = Vec::new();
            format_rows(&values, c, b',', &mut text);
            let back =
                clustering::data::parse_matrix(&text, Path::new("back.csv")).unwrap_or_else(|e| {
                    panic!(
                        "written matrix does not read back: {e}\n{}",
                        String::from_utf8_lossy(&text)
                    )
                });
            assert_eq!(back.dim(), (r, c), "shape round trip");
            let back: Vec<f64> = back.iter().copied().collect();
            assert!(same_bits(&back, &values), "values round trip");
        }
        Err(e) => assert!(
            matches!(e, KMeansError::Format { .. }),
            "k-means matrix error of an unexpected kind: {e:?}"
        ),
    }
}

/// The named-inputs list reader (`warpath_io::named_list`, what `assemble --colored-inputs`
/// reads): a parse error on a line that exists, or entries that are what the lines say (a
/// non-empty name without a tab or a line break, a non-empty path) and that the writer writes
/// and the reader reads back unchanged (when the writer accepts them: it refuses what the
/// reader would misread, e.g. a name starting with `#`).
pub fn named_list(bytes: &[u8]) {
    use warpath_io::named_list::{format_named_list, parse_named_list};
    let lines = bytes.split(|&b| b == b'\n').count();
    match parse_named_list(bytes) {
        Ok(list) => {
            assert!(!list.is_empty(), "an empty list parsed");
            assert!(list.len() <= lines, "more entries than lines");
            for e in &list {
                assert!(
                    !e.name.is_empty() && !e.name.contains(['\t', '\n']),
                    "a name with a tab or a line break, or empty: {:?}",
                    e.name
                );
                let path = e.path.to_str().expect("paths parsed from UTF-8 text");
                assert!(!path.is_empty() && !path.contains('\n'), "path {path:?}");
            }
            if let Ok(text) = format_named_list(&list) {
                let back = parse_named_list(text.as_bytes()).expect("the writer's list reads");
                assert_eq!(back, list, "a list that does not round-trip");
            }
        }
        Err(IoError::Parse { line, column, .. }) => {
            assert!((1..=lines).contains(&line), "line {line} of {lines}");
            assert!(column >= 1, "column {column}");
        }
        Err(IoError::Format(m)) => assert!(m.contains("no NAME<TAB>PATH line"), "{m}"),
        Err(e) => panic!("named list error of an unexpected kind: {e:?}"),
    }
}
