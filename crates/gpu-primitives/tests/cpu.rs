//! CPU paths against the references over the size matrix and adversarial data.

mod common;

use common::{BIG, SHAPES, all_sizes, ordered, sizes};
use gpu_primitives::*;
use proptest::prelude::*;

fn check_sorts<K: SortKey>(keys: &[K], what: &str) {
    let expect = common::check_radix_sort(keys, Exec::Cpu, Backend::Cpu, what);

    // the sorted copy into a fresh buffer (bits compared: -0.0/+0.0 and NaN payloads)
    let mut dst = vec![std::mem::MaybeUninit::<K>::uninit(); keys.len()];
    assert_eq!(sort_into(keys, &mut dst, Exec::Cpu).unwrap(), Backend::Cpu);
    // SAFETY: sort_into wrote every slot.
    let got: Vec<K> = dst.iter().map(|x| unsafe { x.assume_init() }).collect();
    assert_eq!(ordered(&got), ordered(&expect), "{what} sort_into");

    let mut got = keys.to_vec();
    radix_sort_desc(&mut got, Exec::Cpu).unwrap();
    let mut rev = expect.clone();
    rev.reverse();
    assert_eq!(ordered(&got), ordered(&rev), "{what} desc");

    // pairs with the original index: checks stability and that values follow their keys
    let idx: Vec<u32> = (0..keys.len() as u32).collect();
    let mut expect_pairs: Vec<(K::Bits, u32)> =
        ordered(keys).into_iter().zip(idx.clone()).collect();
    expect_pairs.sort_by_key(|p| p.0);
    let mut k = keys.to_vec();
    let mut v = idx.clone();
    radix_sort_pairs(&mut k, &mut v, Exec::Cpu).unwrap();
    let got: Vec<(K::Bits, u32)> = ordered(&k).into_iter().zip(v).collect();
    assert_eq!(got, expect_pairs, "{what} pairs");
    let perm = common::argsort_numpy(keys);
    assert_eq!(argsort(keys, Exec::Cpu).unwrap(), perm, "{what} argsort");
    assert_eq!(argsort_i64(keys), widen(&perm), "{what} argsort_into");

    // stable descending pairs: by descending key, ties in index order
    expect_pairs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut k = keys.to_vec();
    let mut v = idx;
    radix_sort_pairs_desc(&mut k, &mut v, Exec::Cpu).unwrap();
    let got: Vec<(K::Bits, u32)> = ordered(&k).into_iter().zip(v).collect();
    assert_eq!(got, expect_pairs, "{what} pairs desc");
}

/// `argsort_into` into a fresh buffer.
fn argsort_i64<K: SortKey>(keys: &[K]) -> Vec<i64> {
    let mut dst = vec![std::mem::MaybeUninit::<i64>::uninit(); keys.len()];
    assert_eq!(
        argsort_into(keys, &mut dst, Exec::Cpu).unwrap(),
        Backend::Cpu
    );
    // SAFETY: argsort_into wrote every slot.
    dst.iter().map(|x| unsafe { x.assume_init() }).collect()
}

fn widen(perm: &[u32]) -> Vec<i64> {
    perm.iter().map(|&p| i64::from(p)).collect()
}

/// 8-byte keys that agree in their top bits in runs (the packed argsort sorts such runs a
/// second time by their low bits): few high patterns over random low bits, one outlier that
/// makes the high bits differ, equal keys, and runs longer than a parallel chunk.
#[test]
fn argsort_into_sorts_keys_equal_in_their_top_bits() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for n in [
        2usize,
        3,
        64,
        65,
        1000,
        4097,
        70_000,
        (1 << 17) + 5,
        300_000,
    ] {
        let idx_bits = usize::BITS - (n - 1).leading_zeros();
        let mut cases: Vec<Vec<u64>> = Vec::new();
        // high parts from a few values, low parts (below the bits the words keep) random
        cases.push(
            (0..n)
                .map(|_| (rng.random_range(0..4u64) << 60) | rng.random_range(0..1u64 << idx_bits))
                .collect(),
        );
        // one outlier: every other key agrees in the top 64 - idx_bits differing bits
        let mut v: Vec<u64> = (0..n)
            .map(|_| rng.random_range(0..1u64 << idx_bits))
            .collect();
        v[n / 2] = u64::MAX;
        cases.push(v);
        // equal keys in long runs, with a spread that keeps some bits out of the words
        cases.push(
            (0..n)
                .map(|i| ((i % 7) as u64) << 58 | ((i % 3) as u64))
                .collect(),
        );
        cases.push(
            (0..n)
                .map(|i| if i % 2 == 0 { 0 } else { u64::MAX })
                .collect(),
        );
        // many short runs: a tenth as many high parts as keys (runs start at every position,
        // the last of a parallel chunk included)
        let parts = (n as u64 / 10).max(1);
        cases.push(
            (0..n)
                .map(|_| {
                    let hi = rng
                        .random_range(0..parts)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    (hi << idx_bits) | rng.random_range(0..1u64 << idx_bits)
                })
                .collect(),
        );
        // a run that starts at the last position of the first 2^16-key chunk: distinct high
        // parts but for three keys there, which differ only in the bits the words leave
        // out, in descending input order
        let mut v: Vec<u64> = (0..n as u64).map(|i| (i << 24) | 0xFF_FFFF).collect();
        v[n - 1] = u64::MAX;
        if n > 65_540 {
            for (k, i) in [65_535usize, 65_536, 65_537].into_iter().enumerate() {
                v[i] = (65_535 << 24) | (3 - k as u64);
            }
        }
        cases.push(v);
        for (c, keys) in cases.iter().enumerate() {
            let perm = common::argsort_numpy(keys);
            assert_eq!(argsort_i64(keys), widen(&perm), "u64 case {c} n={n}");
            let signed: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
            let perm = common::argsort_numpy(&signed);
            assert_eq!(argsort_i64(&signed), widen(&perm), "i64 case {c} n={n}");
            let floats: Vec<f64> = keys.iter().map(|&k| f64::from_bits(k >> 1)).collect();
            let perm = common::argsort_numpy(&floats);
            assert_eq!(argsort_i64(&floats), widen(&perm), "f64 case {c} n={n}");
        }
    }
}

fn check_distinct<K: SortKey>(keys: &[K], what: &str) {
    for &equality in common::equalities::<K>(keys.len()) {
        let what = format!("{what} {equality:?}");
        let (values, counts, all) =
            common::check_distinct_all(keys, equality, Exec::Cpu, Backend::Cpu, &what);
        let only_values = DistinctOptions {
            equality,
            ..Default::default()
        };
        let d = distinct_with(keys, only_values, Exec::Cpu).unwrap();
        assert_eq!(ordered(&d.values), ordered(&values), "{what} values only");
        assert_eq!((d.counts, d.inverse), (None, None));
        // counts without the inverse (the parallel grouping on large inputs)
        let with_counts = DistinctOptions {
            counts: true,
            ..only_values
        };
        let d = distinct_with(keys, with_counts, Exec::Cpu).unwrap();
        assert_eq!(ordered(&d.values), ordered(&values), "{what} values+counts");
        assert_eq!(d.counts.as_ref(), Some(&counts), "{what} counts only");
        if equality == Equality::Numeric {
            assert_eq!(
                ordered(&distinct(keys, Exec::Cpu).unwrap()),
                ordered(&values)
            );
        }
        // already sorted input
        let mut sorted = keys.to_vec();
        sort_reference(&mut sorted);
        let (sv, sc, sinv) = common::distinct_reference_for(&sorted, equality);
        let d = distinct_sorted(&sorted, all, Exec::Cpu).unwrap();
        assert_eq!(ordered(&d.values), ordered(&sv), "{what} sorted values");
        assert_eq!(d.counts, Some(sc), "{what} sorted counts");
        assert_eq!(d.inverse, Some(sinv), "{what} sorted inverse");
    }
}

macro_rules! key_tests {
    ($name:ident, $large:ident, $t:ty, $gen:path) => {
        #[test]
        fn $name() {
            for n in sizes() {
                for shape in SHAPES {
                    let keys: Vec<$t> = $gen(shape, n, 7);
                    let what = format!("{} {shape} n={n}", stringify!($t));
                    check_sorts(&keys, &what);
                    check_distinct(&keys, &what);
                    common::check_min_max(&keys, Exec::Cpu, &what);
                }
            }
        }

        /// One large size: every parallel path (sort, dense and sorted distinct).
        #[test]
        fn $large() {
            for &n in &BIG[1..] {
                for shape in ["random", "small"] {
                    let keys: Vec<$t> = $gen(shape, n, 11);
                    let what = format!("{} {shape} n={n}", stringify!($t));
                    check_sorts(&keys, &what);
                    check_distinct(&keys, &what);
                }
            }
        }
    };
}

key_tests!(keys_u32, keys_u32_large, u32, common::u32s);
key_tests!(keys_i32, keys_i32_large, i32, common::i32s);
key_tests!(keys_u64, keys_u64_large, u64, common::u64s);
key_tests!(keys_i64, keys_i64_large, i64, common::i64s);
key_tests!(keys_f32, keys_f32_large, f32, common::f32s);
key_tests!(keys_f64, keys_f64_large, f64, common::f64s);

#[test]
fn float_total_order_in_sorted_output() {
    let neg_nan = f64::from_bits(0xFFF8_0000_0000_0001);
    let mut v = vec![
        f64::NAN,
        1.0,
        -0.0,
        neg_nan,
        0.0,
        f64::NEG_INFINITY,
        f64::INFINITY,
        -0.0,
    ];
    radix_sort(&mut v, Exec::Cpu).unwrap();
    let bits: Vec<u64> = v.iter().map(|x| x.to_bits()).collect();
    let expect: Vec<u64> = [
        f64::NEG_INFINITY,
        -0.0,
        -0.0,
        0.0,
        1.0,
        f64::INFINITY,
        f64::NAN,
        neg_nan,
    ]
    .iter()
    .map(|x| x.to_bits())
    .collect();
    assert_eq!(bits, expect);
    let d = distinct(&v, Exec::Cpu).unwrap();
    assert_eq!(
        d.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        [f64::NEG_INFINITY, -0.0, 1.0, f64::INFINITY, f64::NAN]
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>(),
        "numpy: -0.0 == +0.0 (represented by -0.0), all NaNs one value, last"
    );
    let bitwise = DistinctOptions {
        equality: Equality::Bitwise,
        ..Default::default()
    };
    assert_eq!(
        distinct_with(&v, bitwise, Exec::Cpu).unwrap().values.len(),
        7,
        "bitwise: -0.0 and +0.0 are distinct keys, equal NaN bits are one key"
    );
}

/// numpy's sort: every NaN after every number whatever its sign bit; among NaNs and between
/// -0.0 and +0.0 the documented total order, in every sort variant and for both widths.
#[test]
fn float_sorts_put_every_nan_last() {
    let keys: Vec<f32> = common::f32s("signed", 5000, 3)
        .into_iter()
        .chain(common::f32s("random", 5000, 4))
        .collect();
    let nans = keys.iter().filter(|x| x.is_nan()).count();
    assert!(nans > 1000);
    let check = |v: &[f32], what: &str| {
        let numbers = v.len() - nans;
        assert!(v[..numbers].iter().all(|x| !x.is_nan()), "{what}");
        assert!(v[numbers..].iter().all(|x| x.is_nan()), "{what}");
        // numbers ascending; within equal numbers, -0.0 first
        for w in v[..numbers].windows(2) {
            assert!(w[0] <= w[1], "{what}: {w:?}");
            if w[0] == 0.0 && w[1] == 0.0 {
                assert!(w[0].is_sign_negative() || w[1].is_sign_positive(), "{what}");
            }
        }
        // NaNs: positive ones by ascending payload, then negative ones by descending payload
        let key = |x: &f32| {
            let b = x.to_bits();
            if b >> 31 == 0 {
                (0, b)
            } else {
                (1, u32::MAX - b)
            }
        };
        assert!(
            v[numbers..].windows(2).all(|w| key(&w[0]) <= key(&w[1])),
            "{what}"
        );
    };
    let mut v = keys.clone();
    radix_sort(&mut v, Exec::Cpu).unwrap();
    check(&v, "radix_sort");
    let mut k = keys.clone();
    let mut idx: Vec<u32> = (0..keys.len() as u32).collect();
    radix_sort_pairs(&mut k, &mut idx, Exec::Cpu).unwrap();
    check(&k, "radix_sort_pairs");
    // stable: equal bits keep input order
    for (w, p) in k.windows(2).zip(idx.windows(2)) {
        if w[0].to_bits() == w[1].to_bits() {
            assert!(p[0] < p[1]);
        }
    }
    // argsort: numpy's stable argsort, so zeros of both signs and all NaNs in index order
    let perm = argsort(&keys, Exec::Cpu).unwrap();
    assert_eq!(perm, common::argsort_numpy(&keys));
    let gathered: Vec<f32> = perm.iter().map(|&i| keys[i as usize]).collect();
    let numbers = keys.len() - nans;
    assert!(gathered[numbers..].iter().all(|x| x.is_nan()));
    assert!(gathered[..numbers].windows(2).all(|w| w[0] <= w[1]));
    for (w, p) in gathered.windows(2).zip(perm.windows(2)) {
        if w[0] == w[1] || (w[0].is_nan() && w[1].is_nan()) {
            assert!(p[0] < p[1], "ties in index order");
        }
    }
    assert_ne!(
        perm, idx,
        "the pair sort puts every -0.0 first, argsort does not"
    );
    // descending is the exact reverse (so NaNs first, like np.sort(x)[::-1])
    let mut d = keys.clone();
    radix_sort_desc(&mut d, Exec::Cpu).unwrap();
    d.reverse();
    assert_eq!(
        d.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    // f64: numbers ascending, then every NaN, in the reference's order
    let wide = common::f64s("signed", 10_000, 5);
    let mut w = wide.clone();
    radix_sort(&mut w, Exec::Cpu).unwrap();
    let numbers = w.iter().filter(|x| !x.is_nan()).count();
    assert!(w[numbers..].iter().all(|x| x.is_nan()) && numbers < w.len());
    assert!(w[..numbers].windows(2).all(|p| p[0] <= p[1]));
    let mut expect = wide;
    sort_reference(&mut expect);
    assert!(
        w.iter()
            .zip(&expect)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
}

/// The numpy conventions of distinct, spelled out: np.unique(x, return_inverse=True,
/// return_counts=True) with its default equal_nan=True.
#[test]
fn distinct_follows_numpy_unique() {
    let all = DistinctOptions {
        counts: true,
        inverse: true,
        ..Default::default()
    };
    let neg_nan = -f64::NAN;
    let payload = f64::from_bits(0x7FF0_0000_0000_0001);
    let x = [
        payload,
        0.0,
        neg_nan,
        1.0,
        -0.0,
        f64::NAN,
        0.0,
        f64::NEG_INFINITY,
    ];
    // np.unique: [-inf, 0., 1., nan], counts [1, 3, 1, 3], inverse [3, 1, 3, 2, 1, 3, 1, 0]
    for exec in [Exec::Cpu, Exec::Auto] {
        let d = distinct_with(&x, all, exec).unwrap();
        assert_eq!(d.values.len(), 4);
        assert_eq!(d.values[0], f64::NEG_INFINITY);
        assert_eq!(
            d.values[1].to_bits(),
            (-0.0f64).to_bits(),
            "the first zero in the order"
        );
        assert_eq!(d.values[2], 1.0);
        assert_eq!(
            d.values[3].to_bits(),
            payload.to_bits(),
            "the first NaN in the order"
        );
        assert_eq!(d.counts, Some(vec![1, 3, 1, 3]));
        assert_eq!(d.inverse, Some(vec![3, 1, 3, 2, 1, 3, 1, 0]));
    }
    // the representative does not depend on the input order
    let mut r = x;
    r.reverse();
    assert_eq!(
        ordered(&distinct(&r, Exec::Cpu).unwrap()),
        ordered(&distinct(&x, Exec::Cpu).unwrap())
    );
    // only +0.0: +0.0; only negative NaNs: the one with the largest payload comes first
    let d = distinct(&[0.0f32, 0.0], Exec::Cpu).unwrap();
    assert_eq!(d[0].to_bits(), 0);
    let d = distinct(
        &[f32::from_bits(0xFFC0_0000), f32::from_bits(0xFFC0_0001)],
        Exec::Cpu,
    )
    .unwrap();
    assert_eq!(ordered(&d), ordered(&[f32::from_bits(0xFFC0_0001)]));
    // the counting path (a small range of ordered bits) and the sorting path agree
    let many: Vec<f32> = (0..100_000)
        .map(|i| [-0.0, 0.0, 1.0, f32::NAN, -f32::NAN][i % 5])
        .collect();
    let d = distinct_with(&many, all, Exec::Cpu).unwrap();
    assert_eq!(d.counts, Some(vec![40_000, 20_000, 40_000]));
    assert_eq!(ordered(&d.values)[0], (-0.0f32).to_ordered());
    // integers: both equalities are ==
    let ints = [3i64, -3, 3, 0];
    let bitwise = DistinctOptions {
        equality: Equality::Bitwise,
        ..all
    };
    assert_eq!(
        distinct_with(&ints, all, Exec::Cpu).unwrap(),
        distinct_with(&ints, bitwise, Exec::Cpu).unwrap()
    );
    // empty and one element
    assert_eq!(
        distinct_with::<f64>(&[], all, Exec::Cpu).unwrap().counts,
        Some(vec![])
    );
    let d = distinct_with(&[-0.0f64], all, Exec::Cpu).unwrap();
    assert_eq!(
        (d.values[0].to_bits(), d.inverse),
        ((-0.0f64).to_bits(), Some(vec![0]))
    );
}

#[test]
fn reduce_and_scan_match_reference() {
    for n in all_sizes() {
        for shape in ["random", "extremes", "small", "equal"] {
            let what = format!("{shape} n={n}");
            common::check_sum_scan_int(&common::u32s(shape, n, 3), Exec::Cpu, &what);
            common::check_sum_scan_int(&common::i32s(shape, n, 3), Exec::Cpu, &what);
            common::check_sum_scan_int(&common::u64s(shape, n, 3), Exec::Cpu, &what); // wraps
            common::check_sum_scan_int(&common::i64s(shape, n, 3), Exec::Cpu, &what);
            let f: Vec<f32> = common::f32s(shape, n, 3)
                .into_iter()
                .filter(|x| x.is_finite())
                .collect();
            common::check_sum_scan_float(&f, Exec::Cpu, common::abs_sum(&f), &what);
            let d: Vec<f64> = f.iter().map(|&x| x as f64).collect();
            common::check_sum_scan_float(&d, Exec::Cpu, common::abs_sum(&d), &what);
        }
    }
    // u32 sums widen instead of overflowing
    assert_eq!(
        reduce_sum(&vec![u32::MAX; 1 << 17], Exec::Cpu).unwrap(),
        u32::MAX as u64 * (1 << 17)
    );
}

#[test]
fn float_sum_does_not_depend_on_the_thread_count() {
    let v = common::f32s("random", 1_000_003, 5);
    let a = reduce_sum(&v, Exec::Cpu).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let b = pool.install(|| reduce_sum(&v, Exec::Cpu).unwrap());
    assert_eq!(a.to_bits(), b.to_bits());
}

#[test]
fn select_and_split_match_reference() {
    for n in all_sizes() {
        for (fi, shape) in ["random", "two", "equal", "sorted"].iter().enumerate() {
            let v = common::u64s(shape, n, 9);
            let flags: Vec<bool> = common::u32s("random", n, fi as u64)
                .iter()
                .enumerate()
                .map(|(i, x)| match fi {
                    0 => x & 1 == 1,
                    1 => true,
                    2 => false,
                    _ => i.is_multiple_of(3),
                })
                .collect();
            let what = format!("{shape} n={n}");
            common::check_select_split(&v, &flags, Exec::Cpu, &what);
            let keep = |x: &u64| x.is_multiple_of(3);
            let f2: Vec<bool> = v.iter().map(keep).collect();
            assert_eq!(compact(&v, keep), select_by_flags_reference(&v, &f2));
            assert_eq!(partition(&v, keep), split_by_flags_reference(&v, &f2));
            for bit in [0u32, 31, 63] {
                let fb: Vec<bool> = v.iter().map(|x| (x >> bit) & 1 == 1).collect();
                assert_eq!(
                    split_by_bit(&v, bit, Exec::Cpu).unwrap(),
                    split_by_flags_reference(&v, &fb),
                    "{what} bit {bit}"
                );
            }
            let f: Vec<f32> = common::f32s(shape, n, 1);
            let fb: Vec<bool> = f.iter().map(|x| x.to_bits() >> 31 == 1).collect();
            assert_eq!(
                split_by_bit(&f, 31, Exec::Cpu)
                    .unwrap()
                    .values
                    .iter()
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>(),
                split_by_flags_reference(&f, &fb)
                    .values
                    .iter()
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn histogram_matches_reference() {
    for n in all_sizes() {
        for bins in [1usize, 7, 1000, 70_000] {
            let keys: Vec<u32> = common::u32s("random", n, 2)
                .into_iter()
                .map(|k| k % bins as u32)
                .collect();
            assert_eq!(
                histogram(&keys, bins, Exec::Cpu).unwrap(),
                histogram_reference(&keys, bins).unwrap(),
                "n={n} bins={bins}"
            );
        }
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    assert_eq!(
        select_by_flags(&[1u32, 2], &[true], Exec::Cpu),
        Err(PrimitiveError::LengthMismatch {
            what: "flags",
            expected: 2,
            found: 1
        })
    );
    assert!(matches!(
        split_by_flags(&[1u32], &[], Exec::Cpu),
        Err(PrimitiveError::LengthMismatch { .. })
    ));
    assert!(matches!(
        radix_sort_pairs(&mut [1u32, 2], &mut [0u8], Exec::Cpu),
        Err(PrimitiveError::LengthMismatch { .. })
    ));
    let mut keys: Vec<u32> = (0..200_000).collect();
    keys[150_000] = 5_000_000;
    common::check_key_out_of_range(&keys, 200_000, Exec::Cpu, 150_000);
    common::check_key_out_of_range(&[3], 3, Exec::Cpu, 0);
    assert_eq!(histogram(&[1], 0, Exec::Cpu), Err(PrimitiveError::ZeroBins));
    assert_eq!(histogram(&[], 0, Exec::Cpu), Ok(vec![]));
    let mut big: Vec<i64> = (0..300_000).collect();
    big.swap(200_000, 200_001);
    assert_eq!(
        distinct_sorted(&big, DistinctOptions::default(), Exec::Cpu),
        Err(PrimitiveError::NotSorted { index: 200_001 })
    );
}

#[test]
fn cuda_without_gpu_is_an_error_not_a_fallback() {
    if gpu_runtime::gpu().is_ok() {
        return; // only meaningful without a GPU
    }
    let mut v = vec![3u32, 1, 2];
    assert!(matches!(
        radix_sort(&mut v, Exec::Cuda),
        Err(PrimitiveError::Gpu(_))
    ));
    assert!(matches!(
        inclusive_scan(&v, Exec::Cuda),
        Err(PrimitiveError::Gpu(_))
    ));
    assert!(matches!(
        distinct(&v, Exec::Cuda),
        Err(PrimitiveError::Gpu(_))
    ));
    assert_eq!(v, [3, 1, 2], "input untouched on error");
}

#[test]
fn passes_needed_counts_varying_digits() {
    assert_eq!(radix_passes_needed::<u32>(&[]), 0);
    assert_eq!(radix_passes_needed(&[5u32, 5]), 0);
    assert_eq!(radix_passes_needed(&[0u32, 999]), 2);
    assert_eq!(radix_passes_needed(&[0u64, 1 << 60]), 1);
}

/// `distinct` with counts and inverse against [`distinct_reference`].
fn distinct_matches_reference<K: SortKey + std::fmt::Debug>(v: &[K]) -> Result<(), TestCaseError> {
    let options = DistinctOptions {
        counts: true,
        inverse: true,
        ..Default::default()
    };
    let d = distinct_with(v, options, Exec::Cpu).unwrap();
    let (vals, counts, inv) = distinct_reference(v);
    prop_assert_eq!(d.values, vals);
    prop_assert_eq!(d.counts, Some(counts));
    prop_assert_eq!(d.inverse, Some(inv));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn prop_sort_u32(v in proptest::collection::vec(any::<u32>(), 0..6000)) {
        let mut got = v.clone();
        radix_sort(&mut got, Exec::Cpu).unwrap();
        let mut e = v;
        e.sort_unstable();
        prop_assert_eq!(got, e);
    }

    #[test]
    fn prop_sort_pairs_f32_bits_stable(bits in proptest::collection::vec(any::<u32>(), 0..6000)) {
        let keys: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b & 0xFF80_000F)).collect();
        let mut k = keys.clone();
        let mut idx: Vec<u32> = (0..keys.len() as u32).collect();
        radix_sort_pairs(&mut k, &mut idx, Exec::Cpu).unwrap();
        let mut e: Vec<(u32, u32)> = keys.iter().map(|x| x.to_ordered()).zip(0..).collect();
        e.sort_by_key(|p| p.0);
        let got: Vec<(u32, u32)> = k.iter().map(|x| x.to_ordered()).zip(idx).collect();
        prop_assert_eq!(got, e);
    }

    #[test]
    fn prop_argsort_into_f64_bits(bits in proptest::collection::vec(any::<u64>(), 0..3000), mask in any::<u64>()) {
        // masked bit patterns: NaNs, zeros of both signs, runs equal in their high bits
        let keys: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b & (mask | 0xFFF0_0000_0000_0001))).collect();
        prop_assert_eq!(argsort_i64(&keys), widen(&common::argsort_numpy(&keys)));
        let small: Vec<i64> = bits.iter().map(|&b| (b & mask) as i64 >> 40).collect();
        prop_assert_eq!(argsort_i64(&small), widen(&common::argsort_numpy(&small)));
    }

    #[test]
    fn prop_distinct_i64(v in proptest::collection::vec(-50i64..50, 0..3000)) {
        distinct_matches_reference(&v)?;
    }

    #[test]
    fn prop_distinct_wide_range(v in proptest::collection::vec(any::<u64>(), 0..3000)) {
        distinct_matches_reference(&v)?;
    }

    #[test]
    fn prop_scan_i32(v in proptest::collection::vec(any::<i32>(), 0..5000)) {
        prop_assert_eq!(exclusive_scan(&v, Exec::Cpu).unwrap(), exclusive_scan_reference(&v));
        prop_assert_eq!(reduce_sum(&v, Exec::Cpu).unwrap(), reduce_sum_reference(&v));
    }

    #[test]
    fn prop_split_select(v in proptest::collection::vec(any::<i32>(), 0..5000), bit in 0u32..32) {
        let flags: Vec<bool> = v.iter().map(|x| (*x as u32 >> bit) & 1 == 1).collect();
        prop_assert_eq!(split_by_bit(&v, bit, Exec::Cpu).unwrap(), split_by_flags_reference(&v, &flags));
        prop_assert_eq!(select_by_flags(&v, &flags, Exec::Cpu).unwrap(), select_by_flags_reference(&v, &flags));
    }

    #[test]
    fn prop_histogram(v in proptest::collection::vec(0u32..300, 0..5000)) {
        prop_assert_eq!(histogram(&v, 300, Exec::Cpu).unwrap(), histogram_reference(&v, 300).unwrap());
    }
}
