//! GPU paths against the CPU references. Without a GPU every test prints
//! `skipped: no CUDA device` and passes; `WARPATH_REQUIRE_GPU=1` makes a missing GPU fail.

mod common;

use common::{SHAPES, all_sizes, ordered};
use gpu_primitives::*;
use gpu_runtime::testing::{gpu_for_test, gpu_test_size};

/// The tests of this file share one device and run in parallel; the out-of-memory test takes
/// half of the free memory on a GPU, so it runs alone (write) while the others share (read).
static MEMORY: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// The start of every GPU test but the out-of-memory one: a shared hold on [`MEMORY`] and the
/// GPU, or `None` (the test skips, see `gpu_for_test`).
fn gpu_test_start(
    test: &str,
) -> Option<(
    std::sync::RwLockReadGuard<'static, ()>,
    &'static gpu_runtime::Gpu,
)> {
    let memory = MEMORY.read().unwrap_or_else(|e| e.into_inner());
    Some((memory, gpu_for_test(test)?))
}

/// Sizes for the GPU: the matrix plus multi-tile look-back chains (the Onesweep tile is 3072
/// or 4096 keys, the scan tile 2048). Under the simulated driver, only sizes up to a few tiles:
/// they still cross every warp, block and tile boundary.
fn gpu_sizes() -> Vec<usize> {
    let mut v = all_sizes();
    v.extend([3071, 3072, 3073, 4095, 8193]);
    if gpu_runtime::testing::simulated() {
        v.retain(|&n| n <= 8193);
    }
    v
}

/// Shapes at size `n`: all of them for small inputs, fewer for big ones (and under the
/// simulator, where every launch runs on one CPU core, for everything beyond two tiles).
fn gpu_shapes(n: usize) -> &'static [&'static str] {
    let big = if gpu_runtime::testing::simulated() {
        4097
    } else {
        1 << 22
    };
    if n > big {
        &["random", "small"]
    } else {
        SHAPES
    }
}

#[test]
fn gpu_large_u32_sort_scan_distinct() {
    let Some((_memory, _)) = gpu_test_start("gpu_large_u32_sort_scan_distinct") else {
        return;
    };
    // A 4097-tile look-back chain on a GPU; 17 tiles under the simulator.
    let n = gpu_test_size((1 << 24) + 5, (1 << 16) + 5);
    for shape in ["random", "small"] {
        let keys = common::u32s(shape, n, 99);
        let mut got = keys.clone();
        radix_sort(&mut got, Exec::Cuda).unwrap();
        let mut expect = keys.clone();
        expect.sort_unstable();
        assert_eq!(got, expect, "{shape}");
        assert_eq!(
            exclusive_scan(&keys, Exec::Cuda).unwrap(),
            exclusive_scan_reference(&keys),
            "{shape}"
        );
        let d = distinct(&keys, Exec::Cuda).unwrap();
        expect.dedup();
        assert_eq!(d, expect, "{shape}");
    }
}

fn gpu_sorts<K: SortKey>(keys: &[K], what: &str) {
    let mut expect = common::check_radix_sort(keys, Exec::Cuda, Backend::Cuda, what);

    let mut got = keys.to_vec();
    radix_sort_desc(&mut got, Exec::Cuda).unwrap();
    expect.reverse();
    assert_eq!(ordered(&got), ordered(&expect), "{what} desc");

    let mut k = keys.to_vec();
    let mut v: Vec<u32> = (0..keys.len() as u32).collect();
    radix_sort_pairs(&mut k, &mut v, Exec::Cuda).unwrap();
    let mut e: Vec<(K::Bits, u32)> = ordered(keys).into_iter().zip(0..).collect();
    e.sort_by_key(|p| p.0);
    let got: Vec<(K::Bits, u32)> = ordered(&k).into_iter().zip(v).collect();
    assert_eq!(got, e, "{what} pairs (stable)");

    // argsort: numpy's stable argsort, from the host and on device buffers
    let numpy = common::argsort_numpy(keys);
    assert_eq!(argsort(keys, Exec::Cuda).unwrap(), numpy, "{what} argsort");
    if !keys.is_empty() {
        let gpu = gpu_runtime::gpu().unwrap();
        let perm = device::argsort(gpu, &gpu.upload(keys).unwrap()).unwrap();
        assert_eq!(gpu.download(&perm).unwrap(), numpy, "{what} device argsort");
    }
}

fn gpu_distinct<K: SortKey>(keys: &[K], what: &str) {
    for &equality in common::equalities::<K>(keys.len()) {
        let what = format!("{what} {equality:?}");
        let (values, counts, all) =
            common::check_distinct_all(keys, equality, Exec::Cuda, Backend::Cuda, &what);
        let mut sorted = keys.to_vec();
        sort_reference(&mut sorted);
        let d = distinct_sorted(&sorted, all, Exec::Cuda).unwrap();
        assert_eq!(ordered(&d.values), ordered(&values), "{what} sorted values");
        // the device API (an empty device buffer cannot be allocated)
        if keys.is_empty() {
            continue;
        }
        let gpu = gpu_runtime::gpu().unwrap();
        let dk = gpu.upload(&sorted).unwrap();
        let dd = device::distinct_sorted(gpu, &dk, equality).unwrap();
        let dv = gpu.download(&dd.values.slice(0..dd.len)).unwrap();
        assert_eq!(ordered(&dv), ordered(&values), "{what} device values");
        let dc = gpu.download(&dd.counts.slice(0..dd.len)).unwrap();
        assert_eq!(dc, counts, "{what} device counts");
    }
}

macro_rules! gpu_key_test {
    ($name:ident, $t:ty, $gen:path) => {
        #[test]
        fn $name() {
            let Some((_memory, _)) = gpu_test_start(stringify!($name)) else {
                return;
            };
            for n in gpu_sizes() {
                for shape in gpu_shapes(n) {
                    let keys: Vec<$t> = $gen(shape, n, 21);
                    let what = format!("{} {shape} n={n}", stringify!($t));
                    gpu_sorts(&keys, &what);
                    gpu_distinct(&keys, &what);
                    common::check_min_max(&keys, Exec::Cuda, &what);
                }
            }
        }
    };
}

gpu_key_test!(gpu_keys_u32, u32, common::u32s);
gpu_key_test!(gpu_keys_i32, i32, common::i32s);
gpu_key_test!(gpu_keys_u64, u64, common::u64s);
gpu_key_test!(gpu_keys_i64, i64, common::i64s);
gpu_key_test!(gpu_keys_f32, f32, common::f32s);
gpu_key_test!(gpu_keys_f64, f64, common::f64s);

#[test]
fn gpu_scan_reduce_match_reference() {
    let Some((_memory, _)) = gpu_test_start("gpu_scan_reduce_match_reference") else {
        return;
    };
    for n in gpu_sizes() {
        for shape in ["random", "extremes", "equal"] {
            let what = format!("{shape} n={n}");
            let u = common::u32s(shape, n, 4);
            common::check_sum_scan_int(&u, Exec::Cuda, &format!("{what} u32"));
            common::check_sum_scan_int(
                &common::i32s(shape, n, 4),
                Exec::Cuda,
                &format!("{what} i32"),
            );
            let w = common::i64s(shape, n, 4);
            common::check_sum_scan_int(&w, Exec::Cuda, &format!("{what} i64"));
            let v: Vec<u64> = w.iter().map(|&x| x as u64).collect();
            common::check_sum_scan_int(&v, Exec::Cuda, &format!("{what} u64"));
            let f: Vec<f32> = common::f32s("random", n, 4);
            let scale: f64 = f.iter().map(|x| x.abs() as f64).sum::<f64>().max(1.0);
            common::check_sum_scan_float(&f, Exec::Cuda, scale, &format!("{what} f32"));
            let d: Vec<f64> = f.iter().map(|&x| x as f64 * 0.5).collect();
            common::check_sum_scan_float(&d, Exec::Cuda, scale, &format!("{what} f64"));
        }
    }
}

#[test]
fn gpu_select_split_histogram_match_reference() {
    let Some((_memory, _)) = gpu_test_start("gpu_select_split_histogram_match_reference") else {
        return;
    };
    for n in gpu_sizes() {
        let v = common::u64s("random", n, 8);
        let flags: Vec<bool> = v.iter().map(|x| x.is_multiple_of(3)).collect();
        common::check_select_split(&v, &flags, Exec::Cuda, &format!("n={n}"));
        let u = common::u32s("random", n, 8);
        let fb: Vec<bool> = u.iter().map(|x| (x >> 5) & 1 == 1).collect();
        assert_eq!(
            split_by_bit(&u, 5, Exec::Cuda).unwrap(),
            split_by_flags_reference(&u, &fb),
            "split_by_bit n={n}"
        );
        for bins in [1usize, 1000, 8192, 8193, 100_000] {
            let k: Vec<u32> = u.iter().map(|x| x % bins as u32).collect();
            assert_eq!(
                histogram(&k, bins, Exec::Cuda).unwrap(),
                histogram_reference(&k, bins).unwrap(),
                "histogram n={n} bins={bins}"
            );
        }
    }
    let mut keys: Vec<u32> = (0..100_000).map(|i| i % 10).collect();
    keys[77_777] = 10;
    keys[90_000] = 11;
    common::check_key_out_of_range(&keys, 10, Exec::Cuda, 77_777);
    assert!(matches!(
        distinct_sorted(&[3u32, 1], DistinctOptions::default(), Exec::Cuda),
        Err(PrimitiveError::NotSorted { .. })
    ));
}

#[test]
fn gpu_device_api_chains_without_host_round_trips() {
    let Some((_memory, gpu)) = gpu_test_start("gpu_device_api_chains_without_host_round_trips")
    else {
        return;
    };
    let n = gpu_test_size((1 << 20) + 3, 10_003);
    let keys = common::u32s("small", n, 1);
    let d = gpu.upload(&keys).unwrap();
    let sorted = device::radix_sort(gpu, &d).unwrap();
    let dd = device::distinct_sorted(gpu, &sorted, Equality::Numeric).unwrap();
    let (values, counts, _) = distinct_reference(&keys);
    assert_eq!(gpu.download(&dd.values.slice(0..dd.len)).unwrap(), values);
    assert_eq!(gpu.download(&dd.counts.slice(0..dd.len)).unwrap(), counts);

    let vals: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let dv = gpu.upload(&vals).unwrap();
    let (sk, sv) = device::radix_sort_pairs(gpu, &d, &dv).unwrap();
    let mut e: Vec<(u32, f64)> = keys.iter().copied().zip(vals).collect();
    e.sort_by_key(|p| p.0);
    assert_eq!(
        gpu.download(&sk).unwrap(),
        e.iter().map(|p| p.0).collect::<Vec<_>>()
    );
    assert_eq!(
        gpu.download(&sv).unwrap(),
        e.iter().map(|p| p.1).collect::<Vec<_>>()
    );

    let scan = device::exclusive_scan(gpu, &d).unwrap();
    assert_eq!(
        gpu.download(&scan).unwrap(),
        exclusive_scan_reference(&keys)
    );
    let flags: Vec<bool> = keys.iter().map(|k| k.is_multiple_of(2)).collect();
    let df = gpu.upload(&flags).unwrap();
    let sel = device::select_by_flags(gpu, &d, &df).unwrap();
    assert_eq!(
        gpu.download(&sel.buf.slice(0..sel.len)).unwrap(),
        select_by_flags_reference(&keys, &flags)
    );
    let perm = device::argsort(gpu, &d).unwrap();
    assert_eq!(
        gpu.download(&perm).unwrap(),
        argsort(&keys, Exec::Cpu).unwrap()
    );
}

#[test]
fn gpu_out_of_memory_is_an_error_with_sizes() {
    let _memory = MEMORY.write().unwrap_or_else(|e| e.into_inner());
    let Some(gpu) = gpu_for_test("gpu_out_of_memory_is_an_error_with_sizes") else {
        return;
    };
    // A u64 pair sort needs ~4x its input. Under the simulated driver the limit is this
    // thread's own (tests run in parallel on one memory budget, so taking half of it would
    // starve the others); on a GPU, take half of what is free.
    if gpu_runtime::testing::simulated() {
        let r = gpu_runtime::testing::with_simulated_memory_limit(1 << 20, || {
            let d = gpu.alloc_zeros::<u64>(40_000)?;
            device::radix_sort_pairs(gpu, &d, &d)
        })
        .expect("simulated");
        assert!(
            matches!(
                r,
                Err(PrimitiveError::Gpu(
                    gpu_runtime::GpuError::OutOfMemory { .. }
                ))
            ),
            "{r:?}"
        );
        return;
    }
    let (free, _) = gpu.memory().unwrap();
    let n = (free / 8 / 2) as usize;
    let d = match gpu.alloc_zeros::<u64>(n) {
        Ok(d) => d,
        Err(e) => {
            assert!(matches!(e, gpu_runtime::GpuError::OutOfMemory { .. }));
            return;
        }
    };
    let r = device::radix_sort_pairs(gpu, &d, &d);
    assert!(
        matches!(
            r,
            Err(PrimitiveError::Gpu(
                gpu_runtime::GpuError::OutOfMemory { .. }
            ))
        ),
        "{r:?}"
    );
}
