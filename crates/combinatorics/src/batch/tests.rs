//! Tests of batch generation: every backend against the reference.

use super::cpu::CHUNK;
use super::*;
use crate::next_permutation;
use crate::test_support::perm_out_of_memory;
use gpu_runtime::testing::gpu_for_test;
use gpu_runtime::testing::runs_out_of_memory;
use proptest::prelude::*;

fn reference(n: usize, start: u64, count: u64) -> Vec<u8> {
    let mut v = vec![0u8; count as usize * n];
    permutations_into_reference(n, start, count, &mut v).unwrap();
    v
}

#[test]
fn all_permutations_small_n() {
    for n in 0..=8usize {
        let total = factorial_u64(n).unwrap();
        let got = generate_permutations(n, 0, total, Exec::Cpu).unwrap();
        assert_eq!(got, reference(n, 0, total), "n = {n}");
    }
}

#[test]
fn ranges_at_odd_offsets_and_sizes() {
    for n in [5usize, 7, 9, 12, 20] {
        let total = factorial_u64(n).unwrap();
        for start in [
            0u64,
            1,
            23,
            24,
            25,
            1000,
            total.saturating_sub(1025),
            total - 33,
        ] {
            for count in [
                0u64, 1, 2, 23, 24, 25, 31, 32, 33, 97, 1023, 1024, 1025, 4099,
            ] {
                if start + count > total {
                    continue;
                }
                let got = generate_permutations(n, start, count, Exec::Cpu).unwrap();
                assert_eq!(
                    got,
                    reference(n, start, count),
                    "n={n} start={start} count={count}"
                );
            }
        }
    }
}

#[test]
fn parallel_path_matches_reference() {
    // Several chunks, an unaligned start, a partial last chunk.
    let (n, start, count) = (10usize, 12_345u64, 3 * CHUNK + 777);
    let got = generate_permutations(n, start, count, Exec::Cpu).unwrap();
    assert_eq!(got, reference(n, start, count));
    // The whole of 9! through the parallel path equals stepping next_permutation.
    let all = generate_permutations(9, 0, 362_880, Exec::Cpu).unwrap();
    let mut p: Vec<u8> = (0..9).collect();
    for chunk in all.chunks_exact(9) {
        assert_eq!(chunk, &p[..]);
        next_permutation(&mut p);
    }
}

#[test]
fn errors() {
    let mut out = vec![0u8; 12];
    assert!(matches!(
        permutations_into(21, 0, 0, &mut [], Exec::Cpu),
        Err(PermError::TooLarge { .. })
    ));
    assert!(matches!(
        permutations_into(3, 5, 2, &mut out[..6], Exec::Cpu),
        Err(PermError::RangeOutOfBounds { .. })
    ));
    assert!(matches!(
        permutations_into(3, u64::MAX, 2, &mut out[..6], Exec::Cpu),
        Err(PermError::RangeOutOfBounds { .. })
    ));
    assert!(matches!(
        permutations_into(3, 0, 2, &mut out, Exec::Cpu),
        Err(PermError::BufferLength { .. })
    ));
    let bad = BatchOptions {
        gpu_steps_per_thread: 0,
        ..Default::default()
    };
    assert!(matches!(
        permutations_into_with(3, 0, 2, &mut out[..6], Exec::Cpu, &bad),
        Err(PermError::BadOption { .. })
    ));
    assert!(matches!(
        generate_permutations(20, 0, u64::MAX / 2, Exec::Cpu),
        Err(PermError::HostOutOfMemory { .. }) | Err(PermError::RangeOutOfBounds { .. })
    ));
    let mut sink = Vec::new();
    assert!(matches!(
        write_permutations(3, 0, 6, 0, &mut sink, Exec::Cpu, |_| {}),
        Err(PermError::BadOption { .. })
    ));
}

#[test]
fn cuda_without_gpu_is_an_error_not_a_fallback() {
    if gpu_runtime::gpu().is_ok() {
        return; // only meaningful without a GPU
    }
    let mut out = vec![0u8; 6];
    assert!(matches!(
        permutations_into(3, 0, 2, &mut out, Exec::Cuda),
        Err(PermError::Gpu(_))
    ));
}

#[test]
fn streaming_equals_one_buffer() {
    let (n, start, count) = (8usize, 777u64, 20_000u64);
    let mut sink = Vec::new();
    let mut progress = Vec::new();
    write_permutations(n, start, count, 3001, &mut sink, Exec::Cpu, |d| {
        progress.push(d)
    })
    .unwrap();
    assert_eq!(sink, reference(n, start, count));
    assert_eq!(progress.len(), 7);
    assert_eq!(*progress.last().unwrap(), count);
}

#[test]
fn gpu_out_of_memory_is_a_typed_error() {
    let mut out = vec![0u8; 5040 * 7];
    let run = || [permutations_into(7, 0, 5040, &mut out, Exec::Cuda)];
    runs_out_of_memory(1024, run, perm_out_of_memory);
}

#[test]
fn gpu_batches_equal_cpu_batches() {
    let Some(gpu) = gpu_for_test("gpu_batches_equal_cpu_batches") else {
        return;
    };
    // Under the simulated driver (kernels on one CPU core): batches of a few blocks.
    let batch = gpu_runtime::testing::gpu_test_size(100_000, 5_000) as u64;
    for n in [1usize, 2, 3, 5, 8, 12, 20] {
        let total = factorial_u64(n).unwrap();
        for (start, count) in [
            (0, total.min(batch)),
            (total - total.min(1025), total.min(1025)),
        ] {
            for steps in [1u32, 3, 4, 16] {
                let opts = BatchOptions {
                    gpu_steps_per_thread: steps,
                    ..Default::default()
                };
                let mut g = vec![0u8; count as usize * n];
                let b = permutations_into_with(n, start, count, &mut g, Exec::Cuda, &opts).unwrap();
                assert_eq!(b, Backend::Cuda);
                let mut c = vec![0u8; count as usize * n];
                permutations_into(n, start, count, &mut c, Exec::Cpu).unwrap();
                assert_eq!(g, c, "n={n} start={start} count={count} steps={steps}");
            }
        }
    }
    // 10! in full (8! under the simulator), several tiles per block and an odd count.
    let n = gpu_runtime::testing::gpu_test_size(10, 8);
    let count = factorial_u64(n).unwrap() - 13;
    let mut g = vec![0u8; count as usize * n];
    permutations_into(n, 13, count, &mut g, Exec::Cuda).unwrap();
    let c = generate_permutations(n, 13, count, Exec::Cpu).unwrap();
    assert_eq!(g, c);
    let count = gpu_runtime::testing::gpu_test_size(1 << 20, 1 << 14) as u64;
    let d = permutations_on_device(gpu, 11, 0, count, &BatchOptions::default()).unwrap();
    let host = gpu.download(&d).unwrap();
    assert_eq!(
        host,
        generate_permutations(11, 0, count, Exec::Cpu).unwrap()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn prop_matches_reference(n in 0usize..=20, a in any::<u64>(), count in 0u64..3000) {
        let total = factorial_u64(n).unwrap();
        let count = count.min(total);
        let start = a % (total - count + 1);
        let got = generate_permutations(n, start, count, Exec::Cpu).unwrap();
        prop_assert_eq!(got, reference(n, start, count));
    }
}

#[test]
fn cpu_steps_per_unrank_give_the_same_permutations() {
    // The seed's versions 1-3 (0, 1 and 9 steps per unrank) and group sizes around the task
    // size, on ranges that start and end inside a group, serial and parallel sizes.
    for n in [1usize, 3, 7, 9, 11] {
        let total = factorial_u64(n).unwrap();
        for (start, count) in [
            (0, total.min(40_000)),
            (total - total.min(70_001), total.min(70_001)),
            (total / 3, 5.min(total - total / 3)),
        ] {
            let want = reference(n, start, count);
            for k in [1u64, 2, 10, 7, 32_768, 40_000] {
                let opts = BatchOptions {
                    cpu_perms_per_unrank: Some(k),
                    ..Default::default()
                };
                let mut got = vec![0u8; count as usize * n];
                permutations_into_with(n, start, count, &mut got, Exec::Cpu, &opts).unwrap();
                assert!(got == want, "n={n} start={start} count={count} k={k}");
            }
        }
    }
    for s in [0u32, 1, 9] {
        let o = BatchOptions::with_steps(s);
        assert_eq!(o.gpu_steps_per_thread, s + 1);
        assert_eq!(o.cpu_perms_per_unrank, Some(s as u64 + 1));
    }
    let zero = BatchOptions {
        cpu_perms_per_unrank: Some(0),
        ..Default::default()
    };
    let mut out = vec![0u8; 6];
    assert!(matches!(
        permutations_into_with(3, 0, 2, &mut out, Exec::Cpu, &zero),
        Err(PermError::BadOption {
            name: "cpu_perms_per_unrank",
            ..
        })
    ));
}

#[test]
fn batch_check_wants_increasing_permutations() {
    assert!(lexicographic_rows(3, &[0, 1, 2, 0, 2, 1], None));
    assert!(lexicographic_rows(3, &[1, 0, 2], Some(&[0, 2, 1])));
    // not a permutation, out of range, not increasing (also across batches)
    assert!(!lexicographic_rows(3, &[0, 0, 2], None));
    assert!(!lexicographic_rows(3, &[0, 1, 3], None));
    assert!(!lexicographic_rows(3, &[0, 2, 1, 0, 1, 2], None));
    assert!(!lexicographic_rows(3, &[0, 2, 1], Some(&[0, 2, 1])));
    // every generated batch passes, and the next batch follows the last row of this one
    let v = reference(5, 0, 120);
    assert!(lexicographic_rows(5, &v[..300], None));
    assert!(lexicographic_rows(5, &v[300..], Some(&v[295..300])));
}
