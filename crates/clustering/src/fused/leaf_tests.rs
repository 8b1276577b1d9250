//! A fused leaf's statistics against the plain computation, bit for bit.

use super::*;
use crate::centres::Method;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A leaf's labels, sums, weights and `q` with every instruction set this CPU has equal the
/// plain computation's, bit for bit: reference labels, then `w x` and `w |x|^2` added in
/// row order.
fn check<T: Element>(n: usize, d: usize, k: usize, weighted: bool, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<T> = (0..n * d)
        .map(|_| T::from_f64(rng.random_range(-3.0..3.0)))
        .collect();
    let c: Vec<f64> = (0..k * d).map(|_| rng.random_range(-3.0..3.0)).collect();
    let w: Vec<f64> = (0..n).map(|_| rng.random_range(0.5..2.0)).collect();
    let weights = weighted.then_some(&w[..]);
    let cent = Centres::<T>::new(&c, k, d, None, Method::Fused, false);
    let mut want = StepStats::zeros(k, d);
    let mut want_q = vec![0.0; k];
    let mut want_labels = vec![0u32; n];
    for (i, xr) in x.chunks_exact(d).enumerate() {
        let mut best = (u32::MAX, f64::INFINITY);
        for j in 0..k {
            take(&cent, j as u32, dist2_f64(xr, cent.row(j)), &mut best);
        }
        let (l, wi) = (best.0 as usize, weights.map_or(1.0, |w| w[i]));
        want_labels[i] = best.0;
        for (s, v) in want.sums[l * d..(l + 1) * d].iter_mut().zip(xr) {
            *s += wi * v.to_f64();
        }
        want.counts[l] += wi;
        want_q[l] += wi * crate::lloyd::norm2(xr);
        want.inertia += wi * best.1;
        want.changed += 1;
    }
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    type Leaf<'a> = &'a dyn Fn(&mut [u32], &mut StepStats, &mut [f64]);
    let mut runs: Vec<(&str, StepStats, Vec<f64>, Vec<u32>)> = Vec::new();
    let mut run = |name, f: Leaf<'_>| {
        let (mut st, mut q, mut labels) = (StepStats::zeros(k, d), vec![0.0; k], vec![u32::MAX; n]);
        f(&mut labels, &mut st, &mut q);
        runs.push((name, st, q, labels));
    };
    run("widest", &|l, st, q| {
        leaf(&x, (weights, None, None), &cent, l, (st, q, false))
    });
    // The kernels' prefetching (on for data that streams from memory) changes no value.
    let mut streamed = Centres::<T>::new(&c, k, d, None, Method::Fused, false);
    streamed.prefetch = true;
    run("prefetch", &|l, st, q| {
        leaf(&x, (weights, None, None), &streamed, l, (st, q, false))
    });
    #[cfg(target_arch = "x86_64")]
    if crate::isa::has_avx512() {
        // SAFETY: a CPU with AVX-512 has AVX2, FMA, BMI2 and POPCNT.
        run("avx2", &|l, st, q| unsafe {
            x86::leaf_avx2(&x, (weights, None, None), &cent, l, (st, q, false))
        });
        // SAFETY: as above; the AVX2 kernels' prefetching copies.
        run("avx2 prefetch", &|l, st, q| unsafe {
            x86::leaf_avx2(&x, (weights, None, None), &streamed, l, (st, q, false))
        });
    }
    #[cfg(target_arch = "x86_64")]
    if narrow::narrow(k) {
        // The narrow kernel, from the rows packed as a fit packs them.
        let packed = narrow::pack_rows(&x, d);
        run("narrow", &|l, st, q| {
            leaf(&x, (weights, None, Some(&packed)), &cent, l, (st, q, false))
        });
        run("narrow exact", &|l, st, q| {
            leaf(&x, (weights, None, Some(&packed)), &cent, l, (st, q, true))
        });
    }
    // With exact distances for the inertia, nothing in `q`.
    run("exact", &|l, st, q| {
        leaf(&x, (weights, None, None), &cent, l, (st, q, true))
    });
    for (name, st, q, labels) in runs {
        let what = format!("{} {name} n {n} d {d} k {k} weighted {weighted}", T::NAME);
        if name.ends_with("exact") {
            assert_eq!(st.inertia.to_bits(), want.inertia.to_bits(), "{what}");
            assert!(q.iter().all(|&v| v == 0.0), "{what}");
        } else {
            assert_eq!(st.inertia, 0.0, "{what}");
            assert_eq!(bits(&q), bits(&want_q), "{what}");
        }
        assert_eq!(labels, want_labels, "{what}");
        assert_eq!(st.changed, n as u64, "{what}");
        assert_eq!(bits(&st.sums), bits(&want.sums), "{what}");
        assert_eq!(bits(&st.counts), bits(&want.counts), "{what}");
    }
}

#[test]
fn a_leaf_has_the_plain_sums_bit_for_bit() {
    if !crate::isa::has_avx2() {
        return;
    }
    // Tiles of 256 rows and their remainders; dimensions around the sums' 8 and 4 lanes;
    // shapes that the row-wise kernel labels (a few centres, longer rows).
    for (i, &(n, d, k)) in [
        (1, 1, 1),
        (300, 3, 5),
        (513, 9, 17),
        (257, 16, 64),
        (700, 33, 100),
        (40, 130, 7),
        (531, 16, 3),
        (1000, 5, 8),
        (17, 64, 2),
        (600, 12, 4),
        (333, 31, 6),
        (301, 40, 4),
    ]
    .iter()
    .enumerate()
    {
        for weighted in [false, true] {
            check::<f32>(n, d, k, weighted, i as u64);
            check::<f64>(n, d, k, weighted, i as u64 + 50);
        }
    }
}
