//! Tests of the permutation search: every backend against the reference.

use super::*;
use crate::test_support::perm_out_of_memory;
use gpu_runtime::testing::gpu_for_test;
use gpu_runtime::testing::runs_out_of_memory;
use proptest::prelude::*;
use rand::{Rng, SeedableRng, rngs::StdRng};

fn random_matrix(n: usize, seed: u64, levels: u32) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n * n)
        .map(|_| rng.random_range(0..levels) as f64 * 0.37)
        .collect()
}

fn check_against_reference(n: usize, m: &[f64], exec: Exec) {
    for obj in [Objective::Assignment(m), Objective::Tour(m)] {
        let want = search_permutations_reference(n, &obj).unwrap();
        let got = search_permutations(n, &obj, exec).unwrap();
        assert_eq!(got.rank, want.rank, "n={n} {}", obj.name());
        assert_eq!(got.score.to_bits(), want.score.to_bits());
        assert_eq!(got.permutation, want.permutation);
        assert_eq!(got.evaluated, want.evaluated);
        assert_eq!(
            obj.score(&got.permutation).unwrap().to_bits(),
            got.score.to_bits()
        );
    }
}

#[test]
fn matches_reference_small_n() {
    for n in 0..=8usize {
        for seed in 0..3 {
            // Few levels: many ties, so the smallest-rank rule is exercised.
            check_against_reference(n, &random_matrix(n, seed, 3), Exec::Cpu);
            check_against_reference(n, &random_matrix(n, seed + 100, 1000), Exec::Cpu);
        }
    }
}

#[test]
fn all_equal_costs_pick_rank_zero() {
    for n in [1usize, 4, 8] {
        let m = vec![1.5; n * n];
        let r = search_permutations(n, &Objective::Assignment(&m), Exec::Cpu).unwrap();
        assert_eq!(r.rank, 0);
        assert_eq!(r.permutation, (0..n).collect::<Vec<_>>());
    }
}

#[test]
fn forbidden_entries() {
    // Identity forbidden everywhere on the diagonal: a derangement is optimal.
    let n = 6;
    let mut m = random_matrix(n, 7, 50);
    for i in 0..n {
        m[i * n + i] = f64::INFINITY;
    }
    let r = search_permutations(n, &Objective::Assignment(&m), Exec::Cpu).unwrap();
    assert!(r.score.is_finite());
    assert!(r.permutation.iter().enumerate().all(|(i, &p)| p != i));
    // Everything forbidden: +inf, rank 0.
    let all = vec![f64::INFINITY; 9];
    let r = search_permutations(3, &Objective::Assignment(&all), Exec::Cpu).unwrap();
    assert_eq!((r.score, r.rank), (f64::INFINITY, 0));
}

#[test]
fn parallel_path_and_ranges() {
    // 9! = 362,880 > the parallel threshold: several chunks.
    let n = 9;
    let m = random_matrix(n, 42, 20);
    check_against_reference(n, &m, Exec::Cpu);
    let obj = Objective::Tour(&m);
    let whole = search_permutations(n, &obj, Exec::Cpu).unwrap();
    let mut best: Option<SearchResult> = None;
    let total = 362_880u64;
    let mut s = 0;
    for len in [1u64, 1023, 1025, 100_000, total] {
        let len = len.min(total - s);
        if len == 0 {
            break;
        }
        let r = search_permutations_range(n, &obj, s, len, Exec::Cpu).unwrap();
        assert!(r.rank >= s && r.rank < s + len);
        if best.as_ref().is_none_or(|b| r.is_better_than(b)) {
            best = Some(r);
        }
        s += len;
    }
    assert_eq!(s, total);
    assert_eq!(best.unwrap().rank, whole.rank);
}

#[test]
fn errors() {
    let m = vec![0.0; 9];
    assert!(matches!(
        search_permutations(2, &Objective::Assignment(&m), Exec::Cpu),
        Err(PermError::MatrixShape { len: 9, n: 2 })
    ));
    let mut bad = m.clone();
    bad[5] = f64::NAN;
    assert!(matches!(
        search_permutations(3, &Objective::Tour(&bad), Exec::Cpu),
        Err(PermError::BadEntry { row: 1, col: 2, .. })
    ));
    bad[5] = f64::NEG_INFINITY;
    assert!(matches!(
        search_permutations(3, &Objective::Assignment(&bad), Exec::Cpu),
        Err(PermError::BadEntry { .. })
    ));
    let big = vec![0.0; 21 * 21];
    assert!(matches!(
        search_permutations(21, &Objective::Assignment(&big), Exec::Cpu),
        Err(PermError::TooLarge { .. })
    ));
    assert!(matches!(
        search_permutations_range(3, &Objective::Assignment(&m), 2, 0, Exec::Cpu),
        Err(PermError::EmptyRange)
    ));
    assert!(matches!(
        search_permutations_range(3, &Objective::Assignment(&m), 2, 5, Exec::Cpu),
        Err(PermError::RangeOutOfBounds { .. })
    ));
    assert!(Objective::Assignment(&m).score(&[0, 1]).is_err());
    assert!(Objective::Assignment(&m).score(&[0, 1, 3]).is_err());
}

#[test]
fn cuda_without_gpu_is_an_error_not_a_fallback() {
    if gpu_runtime::gpu().is_ok() {
        return; // only meaningful without a GPU
    }
    let m = [0.0; 4];
    assert!(matches!(
        search_permutations(2, &Objective::Tour(&m), Exec::Cuda),
        Err(PermError::Gpu(_))
    ));
}

#[test]
fn gpu_search_out_of_memory_is_a_typed_error() {
    let m = random_matrix(6, 1, 10);
    let run = || {
        [search_permutations(
            6,
            &Objective::Assignment(&m),
            Exec::Cuda,
        )]
    };
    runs_out_of_memory(64, run, perm_out_of_memory);
}

#[test]
fn gpu_search_equals_cpu() {
    let Some(_gpu) = gpu_for_test("gpu_search_equals_cpu") else {
        return;
    };
    for n in [1usize, 2, 3, 5, 8, 9, 10] {
        for seed in 0..2 {
            let m = random_matrix(n, seed, if seed == 0 { 3 } else { 1000 });
            for obj in [Objective::Assignment(&m), Objective::Tour(&m)] {
                let c = search_permutations(n, &obj, Exec::Cpu).unwrap();
                let g = search_permutations(n, &obj, Exec::Cuda).unwrap();
                assert_eq!(g.backend, Backend::Cuda);
                assert_eq!(
                    (g.rank, g.score.to_bits()),
                    (c.rank, c.score.to_bits()),
                    "n={n}"
                );
                let total = factorial_u64(n).unwrap();
                let (s, len) = (total / 3, (total / 2).max(1));
                let c = search_permutations_range(n, &obj, s, len, Exec::Cpu).unwrap();
                let g = search_permutations_range(n, &obj, s, len, Exec::Cuda).unwrap();
                assert_eq!(
                    (g.rank, g.score.to_bits()),
                    (c.rank, c.score.to_bits()),
                    "n={n}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn prop_matches_reference(n in 0usize..=7, seed in any::<u64>(), levels in 1u32..50) {
        let m = random_matrix(n, seed, levels);
        for obj in [Objective::Assignment(&m), Objective::Tour(&m)] {
            let want = search_permutations_reference(n, &obj).unwrap();
            let got = search_permutations(n, &obj, Exec::Cpu).unwrap();
            prop_assert_eq!(got.rank, want.rank);
            prop_assert_eq!(got.score.to_bits(), want.score.to_bits());
        }
    }
}
