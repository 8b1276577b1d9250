//! Every reader of warpath-io over arbitrary bytes and table-like text: a typed error, or
//! values that round-trip through the project's writers (`format_rows`, `write_npy`). The
//! same properties as the `table` and `npy` fuzz targets (`cargo xtask fuzz`), without the
//! fuzzer, so that `cargo test` keeps them.

use std::path::Path;

use proptest::prelude::*;
use warpath_io::npy::{read_npy_bytes, write_npy};
use warpath_io::{Element, Header, IoError, TableOptions, format_rows, parse_array, parse_table};

#[path = "common/text.rs"]
pub mod text;
use text::text_of;

// `x != x`: NaN, the only value unequal to itself (`Element` has no `is_nan`).
#[allow(clippy::eq_op)]
fn same<T: Element>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y || (x != x && y != y))
}

fn table_round_trips<T: Element>(bytes: &[u8], header: Header) -> Result<(), TestCaseError> {
    let opts = TableOptions {
        header,
        ..TableOptions::default()
    };
    match parse_table::<T>(bytes, &opts) {
        Ok(t) => {
            prop_assert_eq!(t.data.len(), t.rows * t.cols);
            if t.data.is_empty() {
                return Ok(());
            }
            let mut text = Vec::new();
            format_rows(&t.data, t.cols, b',', &mut text);
            let absent = TableOptions {
                header: Header::Absent,
                ..TableOptions::default()
            };
            let back = parse_table::<T>(&text, &absent).map_err(|e| {
                TestCaseError::fail(format!("{e}: {}", String::from_utf8_lossy(&text)))
            })?;
            prop_assert_eq!((back.rows, back.cols), (t.rows, t.cols));
            prop_assert!(same(&back.data, &t.data));
        }
        Err(e) => prop_assert!(
            matches!(e, IoError::Parse { .. } | IoError::Format(_)),
            "{:?}",
            e
        ),
    }
    Ok(())
}

fn npy_round_trips<T: Element>(bytes: &[u8]) -> Result<(), TestCaseError> {
    match read_npy_bytes::<T>(bytes) {
        Ok(a) => {
            prop_assert_eq!(a.shape.iter().product::<usize>(), a.data.len());
            let mut f = Vec::new();
            write_npy(&mut f, &a.data, &a.shape).unwrap();
            let back = read_npy_bytes::<T>(&f).unwrap();
            prop_assert_eq!(&back.shape, &a.shape);
            prop_assert!(same(&back.data, &a.data));
        }
        Err(e) => prop_assert!(matches!(e, IoError::Npy { .. }), "{:?}", e),
    }
    Ok(())
}

/// Text made of what tables are made of: digits, signs, separators, comments, line ends, a
/// BOM, words, `nan` and `inf`.
fn table_text() -> impl Strategy<Value = Vec<u8>> {
    text_of(
        &[
            b"0",
            b"17",
            b"-3",
            b"+2.5e3",
            b"nan",
            b"-inf",
            b"0x10",
            b"x",
            b"_id",
            b"true",
            b",",
            b";",
            b" ",
            b"\t",
            b"\n",
            b"\r\n",
            b"#",
            b"\xef\xbb\xbf",
            b"\xff",
        ],
        40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn tables_fail_typed_or_round_trip(text in table_text()) {
        for h in [Header::Auto, Header::Absent, Header::Present] {
            table_round_trips::<f64>(&text, h)?;
            table_round_trips::<i64>(&text, h)?;
            table_round_trips::<u8>(&text, h)?;
            table_round_trips::<bool>(&text, h)?;
        }
    }

    #[test]
    fn arbitrary_bytes_fail_typed_or_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        table_round_trips::<f64>(&bytes, Header::Auto)?;
        table_round_trips::<u32>(&bytes, Header::Auto)?;
        let mut npy = b"\x93NUMPY\x01\x00".to_vec();
        npy.extend_from_slice(&bytes);
        for b in [&bytes[..], &npy[..]] {
            npy_round_trips::<f64>(b)?;
            npy_round_trips::<i32>(b)?;
            npy_round_trips::<bool>(b)?;
            for path in ["a.csv", "a.npy", "a.bin"] {
                match parse_array::<f32>(b, Path::new(path)) {
                    Ok(a) => prop_assert_eq!(a.shape.iter().product::<usize>(), a.data.len()),
                    Err(e) => prop_assert!(
                        matches!(e, IoError::Npy { .. } | IoError::Parse { .. } | IoError::Format(_)),
                        "{:?}", e
                    ),
                }
            }
        }
    }
}

/// A sparse matrix file: a typed error, or CSR arrays that hold together (the `sparse` and
/// `npz` fuzz targets' properties, without the fuzzer).
fn sparse_holds_together(bytes: &[u8]) -> Result<(), TestCaseError> {
    match warpath_io::sparse::parse_sparse(bytes) {
        Ok(m) => {
            prop_assert_eq!(m.indptr.len(), m.rows + 1);
            prop_assert_eq!(m.indptr[m.rows], m.nnz());
            prop_assert!(m.indptr.windows(2).all(|w| w[0] <= w[1]));
            prop_assert!(m.indices.iter().all(|&j| j < m.cols));
            prop_assert_eq!(m.values.len(), m.nnz());
        }
        Err(e) => prop_assert!(
            matches!(
                e,
                IoError::Parse { .. }
                    | IoError::Npy { .. }
                    | IoError::Format(_)
                    | IoError::OutOfMemory { .. }
            ),
            "{:?}",
            e
        ),
    }
    Ok(())
}

/// Text made of what Matrix Market files are made of.
fn matrix_market_text() -> impl Strategy<Value = Vec<u8>> {
    const BANNERS: &[&[u8]] = &[
        b"%%MatrixMarket matrix coordinate real general\n",
        b"%%MatrixMarket matrix coordinate integer symmetric\n",
        b"%%MatrixMarket matrix coordinate pattern general\n",
        b"%%MatrixMarket matrix array real skew-symmetric\n",
        b"\xef\xbb\xbf%%MatrixMarket matrix array integer general\n",
    ];
    let banner = proptest::sample::select(BANNERS);
    let body = text_of(
        &[
            b"0", b"1", b"2", b"3", b"-1.5e2", b"nan", b" ", b"\n", b"\r\n", b"%", b"\xff",
        ],
        40,
    );
    (banner, body).prop_map(|(b, body)| [b, &body[..]].concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn matrix_market_fails_typed_or_holds_together(text in matrix_market_text()) {
        sparse_holds_together(&text)?;
    }

    #[test]
    fn zip_like_bytes_fail_typed(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut zip = b"PK\x03\x04".to_vec();
        zip.extend_from_slice(&bytes);
        sparse_holds_together(&zip)?;
        if let Ok(mut z) = warpath_io::npz::Npz::new(&zip) {
            for name in z.names() {
                let _ = z.array::<f64>(&name);
            }
        }
    }
}
