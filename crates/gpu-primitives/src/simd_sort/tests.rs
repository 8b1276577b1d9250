//! The vectorized sorts' tests: networks, partitions and whole sorts of every key type
//! against `sort_unstable`, both instruction sets forced.

use super::avx512::Lane;
use super::{avx2, avx512};

/// Sorts with depth limit and parallel flag (`None`: this CPU lacks the path).
type Sorter<T> = fn(&mut [T], u32, bool) -> Option<()>;
/// Partitions at a pivot.
type Parter<T> = fn(&mut [T], T) -> Option<(usize, T)>;
/// Sorts a small range.
type Smaller<T> = fn(&mut [T]) -> Option<()>;

fn has_avx512() -> bool {
    super::detect().0
}

fn has_avx2() -> bool {
    super::detect().1
}

fn lcg(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed;
    (0..n).map(move |_| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s ^ (s >> 29)
    })
}

/// Adversarial inputs of length `n` over `T`: random, few distinct, all equal, sorted,
/// reversed, organ pipe, only the two largest values, only 0 and MAX, sawtooth.
fn inputs<T: Lane>(n: usize, from: impl Fn(u64) -> T) -> Vec<Vec<T>> {
    let random: Vec<T> = lcg(n, n as u64 + 7).map(&from).collect();
    let few: Vec<T> = lcg(n, 3).map(|x| from(x % 3)).collect();
    let mut sorted = random.clone();
    sorted.sort_unstable();
    let reversed: Vec<T> = sorted.iter().rev().copied().collect();
    let pipe: Vec<T> = (0..n).map(|i| from(i.min(n - i) as u64)).collect();
    let top: Vec<T> = lcg(n, 5)
        .map(|x| {
            if x % 2 == 0 {
                T::MAX
            } else {
                from(u64::MAX - 1)
            }
        })
        .collect();
    let ends: Vec<T> = lcg(n, 9)
        .map(|x| if x % 5 == 0 { T::MAX } else { from(0) })
        .collect();
    let saw: Vec<T> = (0..n).map(|i| from((i % 17) as u64)).collect();
    vec![
        random,
        few,
        vec![from(42); n],
        sorted,
        reversed,
        pipe,
        top,
        ends,
        saw,
    ]
}

fn sizes<T: Lane>() -> Vec<usize> {
    let l = T::LANES;
    let mut s = vec![
        0, 1, 2, 3, 5, 7, 8, 9, 31, 33, 63, 64, 65, 1000, 2047, 2048, 2049, 4099, 20_000, 70_001,
        140_000,
    ];
    for k in [1, 2, 4, 8, 16, 32] {
        s.extend([k * l - 1, k * l, k * l + 1]);
    }
    s
}

fn check_quicksort<T: Lane + std::fmt::Debug>(from: impl Fn(u64) -> T, sort: Sorter<T>) {
    if sort(&mut [], 64, false).is_none() {
        eprintln!("this CPU lacks the path: not tested");
        return;
    }
    for n in sizes::<T>() {
        for (case, input) in inputs(n, &from).into_iter().enumerate() {
            let mut expect = input.clone();
            expect.sort_unstable();
            for parallel in [false, true] {
                let mut v = input.clone();
                sort(&mut v, 64, parallel);
                assert!(v == expect, "n = {n}, case {case}, parallel {parallel}");
            }
            // depth 1: the first partition, then sort_unstable
            let mut v = input.clone();
            sort(&mut v, 1, false);
            assert!(v == expect, "n = {n}, case {case}, depth 1");
        }
    }
}

/// The AVX-512 quicksort, forced.
fn q512<T: avx512::Lane>(v: &mut [T], depth: u32, parallel: bool) -> Option<()> {
    // SAFETY: AVX-512F, POPCNT and BMI2 are detected first.
    has_avx512().then(|| unsafe { avx512::quicksort::<T, avx512::Keep>(v, depth, parallel) })
}

/// The AVX-512 quicksort finishing with the float decode, its output encoded again (so
/// that it compares with `sort_unstable` of the ordered bits): a key decoded twice or
/// never shows as a wrong value.
fn q512_f32(v: &mut [u32], depth: u32, parallel: bool) -> Option<()> {
    use crate::key::SortKey;
    // SAFETY: AVX-512F, POPCNT and BMI2 are detected first.
    has_avx512().then(|| {
        unsafe { avx512::quicksort::<u32, avx512::DecodeF32>(v, depth, parallel) };
        v.iter_mut()
            .for_each(|k| *k = f32::from_bits(*k).to_ordered());
    })
}

/// [`q512_f32`] for `f64`.
fn q512_f64(v: &mut [u64], depth: u32, parallel: bool) -> Option<()> {
    use crate::key::SortKey;
    // SAFETY: AVX-512F, POPCNT and BMI2 are detected first.
    has_avx512().then(|| {
        unsafe { avx512::quicksort::<u64, avx512::DecodeF64>(v, depth, parallel) };
        v.iter_mut()
            .for_each(|k| *k = f64::from_bits(*k).to_ordered());
    })
}

#[test]
fn quicksort_with_the_float_decode_finishes_every_key_once() {
    check_quicksort::<u32>(|x| x as u32, q512_f32);
    check_quicksort::<u32>(|x| (x >> 40) as u32, q512_f32); // many repeats
    check_quicksort::<u64>(|x| x, q512_f64);
    check_quicksort::<u64>(|x| x >> 50, q512_f64);
}

/// The AVX2 quicksort, forced (also on CPUs with AVX-512).
fn q256<T: avx2::Lane>(v: &mut [T], depth: u32, parallel: bool) -> Option<()> {
    // SAFETY: AVX2 is detected first.
    has_avx2().then(|| unsafe { avx2::quicksort(v, depth, parallel) })
}

/// The AVX2 float sort of f64, forced: NaNs of both signs and several payloads, zeros of
/// both signs, infinities, repeats, against the total order, bits compared.
#[test]
fn avx2_f64_sort_follows_the_total_order() {
    use crate::key::SortKey;
    if !has_avx2() {
        return;
    }
    let specials = [
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7FF0_0000_0000_0001),
        f64::from_bits(0xFFF0_0000_0000_0002),
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        -5e-324,
    ];
    for n in sizes::<u64>() {
        for case in 0..4u64 {
            let v: Vec<f64> = lcg(n, n as u64 ^ case)
                .map(|x| match (case, x % 8) {
                    (0, _) => f64::from_bits(x), // any bits, NaNs included
                    (1, 0..=3) => specials[(x >> 8) as usize % specials.len()],
                    (1, _) => (x >> 40) as f64 - 1000.0, // repeats
                    (2, _) => specials[(x >> 8) as usize % 2], // only zeros
                    _ => specials[(x >> 8) as usize % 6], // zeros and NaNs
                })
                .collect();
            let mut expect: Vec<u64> = v.iter().map(|x| x.to_ordered()).collect();
            expect.sort_unstable();
            for parallel in [false, true] {
                let mut got = v.clone();
                // SAFETY: AVX2 was detected above.
                unsafe { super::sort_f64_avx2(&mut got, parallel) };
                let got: Vec<u64> = got.iter().map(|x| x.to_ordered()).collect();
                assert!(got == expect, "n = {n}, case {case}, parallel {parallel}");
            }
        }
    }
}

/// The AVX2 groupings of sorted floats, forced, against `distinct_reference`: values
/// equal as numbers, the representative the group's first key in the total order.
#[test]
fn avx2_float_groupings_follow_numpy_equality() {
    use crate::key::SortKey;
    if !has_avx2() {
        return;
    }
    let specials = [0.0, -0.0, f64::NAN, -f64::NAN, f64::INFINITY, 1.5, -1.5];
    for n in sizes::<u64>() {
        for case in 0..3u64 {
            let v: Vec<f64> = lcg(n, n as u64 ^ case)
                .map(|x| match case {
                    0 => specials[(x >> 8) as usize % specials.len()],
                    1 => f64::from_bits(x),
                    _ => ((x >> 56) as f64) * 0.25,
                })
                .collect();
            let (want, _, _) = crate::distinct_reference(&v);
            let want: Vec<u64> = want.iter().map(|x| x.to_ordered()).collect();
            let mut sorted = v.clone();
            // SAFETY: AVX2 was detected above.
            let m = unsafe {
                super::sort_f64_avx2(&mut sorted, false);
                avx2::group_f64(&mut sorted)
            };
            let got: Vec<u64> = sorted[..m].iter().map(|x| x.to_ordered()).collect();
            assert!(got == want, "f64 n = {n}, case {case}");

            let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            let (want, _, _) = crate::distinct_reference(&v32);
            let want: Vec<u32> = want.iter().map(|x| x.to_ordered()).collect();
            let mut bits: Vec<u32> = v32.iter().map(|x| x.to_ordered()).collect();
            bits.sort_unstable();
            // SAFETY: AVX2 was detected above.
            let m = unsafe { avx2::group_f32_bits(&mut bits) };
            let got: Vec<u32> = bits[..m]
                .iter()
                .map(|&b| f32::from_bits(b).to_ordered())
                .collect();
            assert!(got == want, "f32 n = {n}, case {case}");
        }
    }
}

#[test]
fn quicksort_u32_matches_sort_unstable() {
    for sort in [q512::<u32> as Sorter<u32>, q256::<u32>] {
        check_quicksort::<u32>(|x| x as u32, sort);
        check_quicksort::<u32>(|x| (x >> 40) as u32, sort); // small values: many repeats
    }
}

#[test]
fn quicksort_u64_matches_sort_unstable() {
    for sort in [q512::<u64> as Sorter<u64>, q256::<u64>] {
        check_quicksort::<u64>(|x| x, sort);
        check_quicksort::<u64>(|x| x >> 50, sort);
    }
}

fn check_small<T: Lane + std::fmt::Debug>(from: impl Fn(u64) -> T, small: Smaller<T>, max: usize) {
    if small(&mut []).is_none() {
        return;
    }
    for n in 0..=max {
        for input in inputs(n, &from) {
            let mut expect = input.clone();
            expect.sort_unstable();
            let mut v = input.clone();
            small(&mut v);
            assert!(v == expect, "network, n = {n}");
        }
    }
}

fn s512<T: avx512::Lane>(v: &mut [T]) -> Option<()> {
    // SAFETY: AVX-512F is detected first; callers pass at most small_max keys.
    has_avx512().then(|| unsafe { avx512::sort_small::<T, avx512::Keep>(v) })
}

fn s256<T: avx2::Lane>(v: &mut [T]) -> Option<()> {
    // SAFETY: AVX2 is detected first; callers pass at most small_max keys.
    has_avx2().then(|| unsafe { avx2::sort_small(v) })
}

#[test]
fn quicksort_signed_matches_sort_unstable() {
    for sort in [q512::<i32> as Sorter<i32>, q256::<i32>] {
        check_quicksort::<i32>(|x| x as i32, sort);
        check_quicksort::<i32>(|x| (x >> 40) as i32 - 7, sort); // around zero, repeated
    }
    for sort in [q512::<i64> as Sorter<i64>, q256::<i64>] {
        check_quicksort::<i64>(|x| x as i64, sort);
        check_quicksort::<i64>(|x| (x >> 50) as i64 - 3, sort);
    }
}

/// The test `$test`: [`check_small`] of every key type with the small sort `$sort` of the
/// module `$isa`.
macro_rules! small_sort_test {
    ($test:ident, $sort:ident, $isa:ident) => {
        #[test]
        fn $test() {
            check_small::<u32>(|x| x as u32, $sort, $isa::small_max::<u32>());
            check_small::<u64>(|x| x, $sort, $isa::small_max::<u64>());
            check_small::<i32>(|x| x as i32, $sort, $isa::small_max::<i32>());
            check_small::<i64>(|x| x as i64, $sort, $isa::small_max::<i64>());
        }
    };
}
small_sort_test!(networks_sort_every_small_length, s512, avx512);
small_sort_test!(avx2_networks_sort_every_small_length, s256, avx2);

/// Whether `small` (a network of up to `max` keys) sorts many random 0-1 inputs of every
/// length and density, `zero` and `one` standing for 0 and 1: by the 0-1 principle, a
/// comparator network sorts every input when it sorts every input of zeros and ones.
fn check_zero_one<T: Copy + PartialEq + std::fmt::Debug>(
    small: impl Fn(&mut [T]) -> Option<()>,
    max: usize,
    (zero, one): (T, T),
) {
    for n in 1..=max {
        for (seed, x) in lcg(4000, n as u64).enumerate() {
            // a density from x's top bits, ones where each hash falls below it
            let bar = x >> 58;
            let mut v: Vec<T> = lcg(n, x ^ seed as u64)
                .map(|h| if h >> 58 < bar { one } else { zero })
                .collect();
            let ones = v.iter().filter(|&&k| k == one).count();
            if small(&mut v).is_none() {
                return;
            }
            let expect: Vec<T> = (0..n)
                .map(|i| if i < n - ones { zero } else { one })
                .collect();
            assert!(v == expect, "n = {n}, input {seed}");
        }
    }
}

/// The networks of both instruction sets against the 0-1 principle, on integer lanes of
/// both widths and (AVX2) on the float lanes, whose min and max are the float
/// instructions.
#[test]
fn networks_sort_random_zero_one_inputs() {
    check_zero_one(s512::<u32>, avx512::small_max::<u32>(), (0, 1));
    check_zero_one(
        s512::<u64>,
        avx512::small_max::<u64>(),
        (u64::MAX - 1, u64::MAX),
    );
    check_zero_one(s512::<i32>, avx512::small_max::<i32>(), (-1, 0));
    check_zero_one(s512::<i64>, avx512::small_max::<i64>(), (i64::MIN, 7));
    check_zero_one(s256::<u32>, avx2::small_max::<u32>(), (0, 1));
    check_zero_one(
        s256::<u64>,
        avx2::small_max::<u64>(),
        (u64::MAX - 1, u64::MAX),
    );
    check_zero_one(s256::<i64>, avx2::small_max::<i64>(), (-1, 0));
    let (f32s, f64s) = ((-0.5, 2.0), (-1e300, -1e-300));
    let f32s = (avx2::Float(f32s.0), avx2::Float(f32s.1));
    let f64s = (avx2::Float(f64s.0), avx2::Float(f64s.1));
    check_zero_one(
        s256::<avx2::Float<f32>>,
        avx2::small_max::<avx2::Float<f32>>(),
        f32s,
    );
    check_zero_one(
        s256::<avx2::Float<f64>>,
        avx2::small_max::<avx2::Float<f64>>(),
        f64s,
    );
}

fn check_partition<T: Lane + std::fmt::Debug>(
    from: impl Fn(u64) -> T,
    part: Parter<T>,
    min_len: usize,
) {
    for n in [
        16,
        17,
        23,
        2 * T::LANES,
        2 * T::LANES + 1,
        3 * T::LANES - 1,
        3 * T::LANES,
        1000,
        1001,
    ] {
        for input in inputs(n, &from) {
            for pivot in [input[0], input[n / 2], T::MAX, from(0), from(1)] {
                let mut v = input.clone();
                if n < min_len {
                    continue; // the partition needs two registers
                }
                let Some((m, max)) = part(&mut v, pivot) else {
                    return;
                };
                assert!(v[..m].iter().all(|&x| x < pivot), "n = {n}");
                assert!(v[m..].iter().all(|&x| x >= pivot), "n = {n}");
                assert_eq!(max, (*input.iter().max().unwrap()).max(pivot));
                let (mut a, mut b) = (v, input.clone());
                a.sort_unstable();
                b.sort_unstable();
                assert!(a == b, "partition is a permutation, n = {n}");
            }
        }
    }
}

/// `$name`: the partition of the module `$isa`, when `$has` (its instruction set is
/// there); an empty probe returns before partitioning.
macro_rules! partition_of {
    ($name:ident, $isa:ident, $has:ident) => {
        fn $name<T: $isa::Lane>(v: &mut [T], pivot: T) -> Option<(usize, T)> {
            // SAFETY: the instruction set is detected first; callers pass at least two
            // registers of keys (the empty probe aside).
            $has().then(|| {
                if v.is_empty() {
                    (0, pivot)
                } else {
                    unsafe { $isa::partition(v, pivot) }
                }
            })
        }
    };
}
partition_of!(p512, avx512, has_avx512);
partition_of!(p256, avx2, has_avx2);

/// The test `$test`: [`check_partition`] of every key type with the partition `$part` of
/// the module `$isa`, all-negative signed keys included (whose maximum a zero from the
/// head's padding would spoil).
macro_rules! partition_test {
    ($test:ident, $part:ident, $isa:ident) => {
        #[test]
        fn $test() {
            let min = |lanes: usize| 2 * lanes;
            check_partition::<u32>(|x| x as u32, $part, min(<u32 as $isa::Lane>::LANES));
            check_partition::<u32>(|x| (x % 4) as u32, $part, min(<u32 as $isa::Lane>::LANES));
            check_partition::<u64>(|x| x, $part, min(<u64 as $isa::Lane>::LANES));
            check_partition::<u64>(|x| x % 4, $part, min(<u64 as $isa::Lane>::LANES));
            check_partition::<i64>(|x| x as i64, $part, min(<i64 as $isa::Lane>::LANES));
            let small = |x: u64| (x % 5) as i32 - 2;
            check_partition::<i32>(small, $part, min(<i32 as $isa::Lane>::LANES));
            let negative = |x: u64| -((x % 3) as i64) - 1;
            check_partition::<i64>(negative, $part, min(<i64 as $isa::Lane>::LANES));
            let negative32 = |x: u64| negative(x) as i32;
            check_partition::<i32>(negative32, $part, min(<i32 as $isa::Lane>::LANES));
        }
    };
}
partition_test!(
    partition_splits_at_the_pivot_and_keeps_every_key,
    p512,
    avx512
);
partition_test!(
    avx2_partition_splits_at_the_pivot_and_keeps_every_key,
    p256,
    avx2
);
