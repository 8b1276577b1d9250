//! Inputs shared by the CPU and GPU tests: the size matrix and adversarial data.
#![allow(dead_code, unreachable_pub)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Sizes around warp, block, tile and threshold edges, primes, and the parallel paths.
pub fn sizes() -> Vec<usize> {
    [0, 1, 2]
        .into_iter()
        .chain(gpu_runtime::testing::EDGE_SIZES)
        .chain([2047, 2049, 4093, 4096, 4097, 65_537, (1 << 17) + 3])
        .collect()
}

/// [`sizes`], then [`BIG`].
pub fn all_sizes() -> Vec<usize> {
    let mut v = sizes();
    v.extend_from_slice(BIG);
    v
}

/// Larger sizes: multi-tile GPU look-back chains and every CPU parallel path.
pub const BIG: &[usize] = &[1_000_003, (1 << 20) + 1];

/// Named data shapes (`signed` is, for floats, signed zeros and NaNs of many bit patterns).
pub const SHAPES: &[&str] = &[
    "random", "equal", "sorted", "reversed", "two", "extremes", "small", "signed",
];

/// Raw 64-bit patterns of a shape; the caller narrows them to its type.
pub fn bits(shape: &str, n: usize, seed: u64) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed ^ (n as u64) << 8);
    let mut v: Vec<u64> = match shape {
        "random" => (0..n).map(|_| rng.random()).collect(),
        "equal" => vec![0x1234_5678_9abc_def0; n],
        "two" => (0..n)
            .map(|_| {
                if rng.random::<bool>() {
                    3
                } else {
                    u64::MAX - 5
                }
            })
            .collect(),
        "extremes" => (0..n)
            .map(|_| match rng.random_range(0..5) {
                0 => 0,
                1 => u64::MAX,
                2 => 1 << 63,
                3 => (1 << 63) - 1,
                _ => 1 << 31,
            })
            .collect(),
        "small" => (0..n).map(|_| rng.random_range(0..1000)).collect(),
        _ => (0..n).map(|_| rng.random()).collect(),
    };
    match shape {
        "sorted" => v.sort_unstable(),
        "reversed" => {
            v.sort_unstable();
            v.reverse();
        }
        _ => {}
    }
    v
}

pub fn u32s(shape: &str, n: usize, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = bits(shape, n, seed)
        .into_iter()
        .map(|b| (b >> 32) as u32 ^ b as u32)
        .collect();
    if shape == "small" {
        v.iter_mut().for_each(|x| *x %= 1000);
    }
    reorder(shape, &mut v, |a, b| a.cmp(b));
    v
}

pub fn i32s(shape: &str, n: usize, seed: u64) -> Vec<i32> {
    let mut v: Vec<i32> = u32s(shape, n, seed).into_iter().map(|x| x as i32).collect();
    reorder(shape, &mut v, |a, b| a.cmp(b));
    v
}

pub fn u64s(shape: &str, n: usize, seed: u64) -> Vec<u64> {
    bits(shape, n, seed)
}

pub fn i64s(shape: &str, n: usize, seed: u64) -> Vec<i64> {
    let mut v: Vec<i64> = bits(shape, n, seed).into_iter().map(|x| x as i64).collect();
    reorder(shape, &mut v, |a, b| a.cmp(b));
    v
}

const F32_SPECIAL: [f32; 9] = [
    0.0,
    -0.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    f32::MIN_POSITIVE,
    -1.5,
    1e-45,
    f32::MAX,
];

/// Zeros of both signs, NaNs of both signs and several payloads, infinities and a few numbers
/// (the keys numpy's equality groups differently from bitwise equality).
const F32_SIGNED: [u32; 12] = [
    0x0000_0000, // +0.0
    0x8000_0000, // -0.0
    0x7FC0_0000, // NaN
    0xFFC0_0000, // -NaN
    0x7F80_0001, // signalling NaN, smallest payload
    0x7FFF_FFFF, // largest payload
    0xFF80_0001,
    0xFFFF_FFFF,
    0x7F80_0000, // +inf
    0xFF80_0000, // -inf
    0x3F80_0000, // 1.0
    0xBF80_0000, // -1.0
];

pub fn f32s(shape: &str, n: usize, seed: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0xf32);
    let mut v: Vec<f32> = match shape {
        "signed" => (0..n)
            .map(|_| f32::from_bits(F32_SIGNED[rng.random_range(0..F32_SIGNED.len())]))
            .collect(),
        "random" => (0..n).map(|_| rng.random_range(-1e6f32..1e6)).collect(),
        "extremes" | "two" => (0..n)
            .map(|_| {
                let x = F32_SPECIAL[rng.random_range(0..F32_SPECIAL.len())];
                if rng.random_range(0..50) == 0 {
                    f32::from_bits(0xFFC0_0001) // a negative NaN with a payload
                } else {
                    x
                }
            })
            .collect(),
        "small" => (0..n)
            .map(|_| rng.random_range(0..100) as f32 * 0.5)
            .collect(),
        "equal" => vec![2.5; n],
        _ => (0..n).map(|_| rng.random_range(-1e3f32..1e3)).collect(),
    };
    reorder(shape, &mut v, |a, b| a.total_cmp(b));
    v
}

pub fn f64s(shape: &str, n: usize, seed: u64) -> Vec<f64> {
    // f32 -> f64 keeps sign and payload of NaNs (shifted into the high mantissa bits)
    let mut v: Vec<f64> = f32s(shape, n, seed).into_iter().map(f64::from).collect();
    if shape == "signed" {
        // and f64-only payloads: the lowest bit set
        let mut rng = StdRng::seed_from_u64(seed ^ 0xf64);
        for x in v.iter_mut().filter(|x| x.is_nan()) {
            if rng.random::<bool>() {
                *x = f64::from_bits(x.to_bits() | 1);
            }
        }
    }
    if shape == "random" {
        v.iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x += i as f64 * 1e-9);
    }
    reorder(shape, &mut v, |a, b| a.total_cmp(b));
    v
}

fn reorder<T>(shape: &str, v: &mut [T], cmp: impl Fn(&T, &T) -> std::cmp::Ordering) {
    match shape {
        "sorted" => v.sort_by(&cmp),
        "reversed" => {
            v.sort_by(&cmp);
            v.reverse();
        }
        _ => {}
    }
}

/// distinct under [`gpu_primitives::Equality::Bitwise`]: sort the ordered bits, deduplicate,
/// count, and binary-search every key. Returns `(values, counts, inverse)`.
pub fn distinct_bitwise_reference<K: gpu_primitives::SortKey>(
    keys: &[K],
) -> (Vec<K>, Vec<u64>, Vec<u32>) {
    let mut bits: Vec<K::Bits> = keys.iter().map(|k| k.to_ordered()).collect();
    bits.sort();
    let mut values: Vec<K::Bits> = Vec::new();
    let mut counts: Vec<u64> = Vec::new();
    for b in bits {
        if values.last() == Some(&b) {
            *counts.last_mut().unwrap() += 1;
        } else {
            values.push(b);
            counts.push(1);
        }
    }
    let inverse = keys
        .iter()
        .map(|k| values.binary_search(&k.to_ordered()).unwrap() as u32)
        .collect();
    (
        values.into_iter().map(K::from_ordered).collect(),
        counts,
        inverse,
    )
}

/// The reference of `equality`.
pub fn distinct_reference_for<K: gpu_primitives::SortKey>(
    keys: &[K],
    equality: gpu_primitives::Equality,
) -> (Vec<K>, Vec<u64>, Vec<u32>) {
    match equality {
        gpu_primitives::Equality::Numeric => gpu_primitives::distinct_reference(keys),
        gpu_primitives::Equality::Bitwise => distinct_bitwise_reference(keys),
    }
}

/// The equalities whose distinct results differ for `K`: both for floats (except on inputs of
/// `BIG` size, where the default is checked, to keep the tests short), numpy's for integers.
pub fn equalities<K: gpu_primitives::SortKey>(n: usize) -> &'static [gpu_primitives::Equality] {
    use gpu_primitives::Equality::{Bitwise, Numeric};
    if K::KIND == 2 && n < BIG[0] {
        &[Numeric, Bitwise]
    } else {
        &[Numeric]
    }
}

/// Options asking for counts and the inverse under `equality`.
pub fn all_outputs(equality: gpu_primitives::Equality) -> gpu_primitives::DistinctOptions {
    gpu_primitives::DistinctOptions {
        counts: true,
        inverse: true,
        equality,
    }
}

/// numpy's `argsort(keys, kind="stable")`, written with comparisons: NaNs after every number
/// and equal among themselves, `-0.0 == +0.0`, ties in index order.
pub fn argsort_numpy<K: gpu_primitives::SortKey>(keys: &[K]) -> Vec<u32> {
    use std::cmp::Ordering;
    #[allow(clippy::eq_op)]
    let nan = |x: K| x != x;
    let cmp = |a: K, b: K| match (nan(a), nan(b)) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).expect("numbers compare"),
    };
    let mut idx: Vec<u32> = (0..keys.len() as u32).collect();
    idx.sort_by(|&i, &j| cmp(keys[i as usize], keys[j as usize]));
    idx
}

/// The ordered bits of each key (compares floats bit by bit: `-0.0`/`+0.0` and NaN payloads).
pub fn ordered<K: gpu_primitives::SortKey>(v: &[K]) -> Vec<K::Bits> {
    v.iter().map(|k| k.to_ordered()).collect()
}

/// Sorts a copy of `keys` with `exec`, checks that `backend` ran it and that it matches the
/// reference (bits compared); returns the reference.
pub fn check_radix_sort<K: gpu_primitives::SortKey>(
    keys: &[K],
    exec: gpu_primitives::Exec,
    backend: gpu_primitives::Backend,
    what: &str,
) -> Vec<K> {
    let mut expect = keys.to_vec();
    gpu_primitives::sort_reference(&mut expect);
    let mut got = keys.to_vec();
    assert_eq!(gpu_primitives::radix_sort(&mut got, exec).unwrap(), backend);
    assert_eq!(ordered(&got), ordered(&expect), "{what} asc");
    expect
}

/// Checks `distinct_with` asking for every output under `equality`, run with `exec` on
/// `backend`, against the reference; returns the reference values and counts and the options.
pub fn check_distinct_all<K: gpu_primitives::SortKey>(
    keys: &[K],
    equality: gpu_primitives::Equality,
    exec: gpu_primitives::Exec,
    backend: gpu_primitives::Backend,
    what: &str,
) -> (Vec<K>, Vec<u64>, gpu_primitives::DistinctOptions) {
    let (values, counts, inverse) = distinct_reference_for(keys, equality);
    let all = all_outputs(equality);
    let d = gpu_primitives::distinct_with(keys, all, exec).unwrap();
    assert_eq!(d.backend, backend);
    assert_eq!(ordered(&d.values), ordered(&values), "{what} values");
    assert_eq!(d.counts.as_ref(), Some(&counts), "{what} counts");
    assert_eq!(d.inverse, Some(inverse), "{what} inverse");
    (values, counts, all)
}

/// Checks `reduce_min_max` with `exec` against the reference (bits compared).
pub fn check_min_max<K: gpu_primitives::SortKey>(
    keys: &[K],
    exec: gpu_primitives::Exec,
    what: &str,
) {
    let bits = |(a, b): (K, K)| (a.to_ordered(), b.to_ordered());
    assert_eq!(
        gpu_primitives::reduce_min_max(keys, exec)
            .unwrap()
            .map(bits),
        gpu_primitives::reduce_min_max_reference(keys).map(bits),
        "{what} min/max"
    );
}

/// Checks `select_by_flags` and `split_by_flags` with `exec` against the references.
pub fn check_select_split<T: gpu_primitives::Element + std::fmt::Debug + PartialEq>(
    v: &[T],
    flags: &[bool],
    exec: gpu_primitives::Exec,
    what: &str,
) {
    use gpu_primitives::{select_by_flags, split_by_flags};
    use gpu_primitives::{select_by_flags_reference, split_by_flags_reference};
    assert_eq!(
        select_by_flags(v, flags, exec).unwrap(),
        select_by_flags_reference(v, flags),
        "{what} select"
    );
    assert_eq!(
        split_by_flags(v, flags, exec).unwrap(),
        split_by_flags_reference(v, flags),
        "{what} split"
    );
}

/// Checks that `histogram` with `exec` reports `keys[index]` as the first key out of range.
pub fn check_key_out_of_range(keys: &[u32], bins: usize, exec: gpu_primitives::Exec, index: usize) {
    assert_eq!(
        gpu_primitives::histogram(keys, bins, exec),
        Err(gpu_primitives::PrimitiveError::KeyOutOfRange {
            index: index as u64,
            key: keys[index],
            bins
        })
    );
}

/// Checks `reduce_sum` and both scans of integers `v` with `exec` against the references,
/// exactly.
pub fn check_sum_scan_int<T: gpu_primitives::Summable>(
    v: &[T],
    exec: gpu_primitives::Exec,
    what: &str,
) where
    T::Sum: PartialEq + std::fmt::Debug,
{
    use gpu_primitives::{exclusive_scan, inclusive_scan, reduce_sum};
    use gpu_primitives::{
        exclusive_scan_reference, inclusive_scan_reference, reduce_sum_reference,
    };
    assert_eq!(
        reduce_sum(v, exec).unwrap(),
        reduce_sum_reference(v),
        "{what} sum"
    );
    assert_eq!(
        inclusive_scan(v, exec).unwrap(),
        inclusive_scan_reference(v),
        "{what} inclusive"
    );
    assert_eq!(
        exclusive_scan(v, exec).unwrap(),
        exclusive_scan_reference(v),
        "{what} exclusive"
    );
}

/// The sum of the magnitudes of `v`, the scale of [`check_sum_scan_float`]'s tolerance.
pub fn abs_sum<T: gpu_primitives::Summable<Sum = f64>>(v: &[T]) -> f64 {
    v.iter().map(|x| x.widen().abs()).sum()
}

/// Checks `reduce_sum` and both scans of floats `v` with `exec` against the references, each
/// value within `1e-9 * max(scale, 1)`.
pub fn check_sum_scan_float<T: gpu_primitives::Summable<Sum = f64>>(
    v: &[T],
    exec: gpu_primitives::Exec,
    scale: f64,
    what: &str,
) {
    use gpu_primitives::{exclusive_scan, inclusive_scan, reduce_sum};
    use gpu_primitives::{
        exclusive_scan_reference, inclusive_scan_reference, reduce_sum_reference,
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * scale.max(1.0);
    let s = reduce_sum(v, exec).unwrap();
    assert!(close(s, reduce_sum_reference(v)), "{what} sum");
    for (inc, r) in [
        (true, inclusive_scan_reference(v)),
        (false, exclusive_scan_reference(v)),
    ] {
        let got = if inc {
            inclusive_scan(v, exec).unwrap()
        } else {
            exclusive_scan(v, exec).unwrap()
        };
        assert_eq!(got.len(), r.len());
        assert!(
            got.iter().zip(&r).all(|(a, b)| close(*a, *b)),
            "{what} scan inclusive={inc}"
        );
    }
}
