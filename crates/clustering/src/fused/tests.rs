//! The fused kernel's labels against the reference: register boundaries, near and exact
//! ties, products that would overflow.

use super::*;
use crate::centres::Method;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The kernel's labels of every row of `x` with every instruction set this CPU has.
fn labels<T: Element>(x: &[T], c: &[f64], d: usize) -> Vec<(&'static str, Vec<u32>)> {
    let k = c.len() / d;
    let cent = Centres::<T>::new(c, k, d, None, Method::Fused, false);
    let xn2: Vec<f64> = x.chunks_exact(d).map(crate::lloyd::norm2).collect();
    let n = xn2.len();
    let mut runs = Vec::new();
    let mut buf = Buffer::default();
    let mut out = vec![u32::MAX; n];
    nearest_rows(x, &xn2, &cent, &mut buf, &mut out);
    runs.push(("widest", out));
    #[cfg(target_arch = "x86_64")]
    if crate::isa::has_avx512() {
        // The AVX2 kernel on the same packing (a multiple of its lanes too), and the general
        // AVX-512 kernel where the widest choice is another.
        let mut out = vec![u32::MAX; n];
        // SAFETY: a CPU with AVX-512 has AVX2, FMA, BMI2 and POPCNT; `buf` was sized for
        // `n` rows by the call above.
        unsafe { x86::labels_avx2(x, &xn2, &cent, &mut buf, &mut out) };
        runs.push(("avx2", out));
        let mut out = vec![u32::MAX; n];
        // SAFETY: as above.
        unsafe { x86::labels_avx512(x, &xn2, &cent, &mut buf, &mut out) };
        runs.push(("general", out));
    }
    #[cfg(target_arch = "x86_64")]
    {
        /// A row-wise kernel's name, whether this CPU has its instructions, and the kernel.
        type Rowwise<T> = (
            &'static str,
            bool,
            unsafe fn(&[T], &[f64], &Centres<T>, &mut Buffer<T>, &mut [u32]),
        );
        let rowwise: [Rowwise<T>; 2] = [
            // The row-wise kernel, wherever it would pay or not.
            (
                "rowwise",
                crate::isa::has_avx512(),
                narrow::labels_rowwise_avx512::<T>,
            ),
            // The row-wise kernel on AVX2 registers, from the rows as this CPU pads them.
            (
                "rowwise-avx2",
                crate::isa::has_avx2(),
                narrow::labels_rowwise_avx2::<T>,
            ),
        ];
        for (name, has, kernel) in rowwise {
            if has && k <= narrow::ROWWISE_MAX_K {
                let (mut buf, mut out) = (Buffer::default(), vec![u32::MAX; n]);
                buf.size(&cent, n);
                // SAFETY: the CPU has the kernel's instructions (AVX-512, or AVX2, FMA, BMI2
                // and POPCNT); `k` is within the kernel's; `buf` is sized for the rows.
                unsafe { kernel(x, &xn2, &cent, &mut buf, &mut out) };
                runs.push((name, out));
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    if crate::isa::has_bf16() {
        // The bfloat16 pass wherever it would pay or not, its rows read as they are and
        // prefetched as from memory.
        let mut forced = Centres::<T>::new(c, k, d, None, Method::Fused, false);
        forced.bf16 = Some(Box::new(crate::bf16::Packed::new(&forced.c64, k, d)));
        for (name, prefetch) in [("bf16", false), ("bf16-prefetch", true)] {
            forced.prefetch = prefetch;
            let (mut buf, mut out) = (Buffer::default(), vec![u32::MAX; n]);
            buf.size(&forced, n);
            // SAFETY: the CPU has AVX-512 and AVX-512 BF16; `buf` is sized for the rows.
            assert!(unsafe { bf16::labels(x, &forced, &mut buf, &mut out) });
            runs.push((name, out));
        }
    }
    #[cfg(target_arch = "x86_64")]
    if narrow::narrow(k) {
        // The narrow kernel, from the rows packed as a fit packs them.
        let packed = narrow::pack_rows(x, d);
        let (mut buf, mut out) = (Buffer::default(), vec![u32::MAX; n]);
        buf.size(&cent, n);
        // SAFETY: the CPU has AVX-512; `k` is within the kernel's; the blocks are the rows';
        // `buf` is sized for the rows.
        unsafe { narrow::labels_narrow_avx512(x, &xn2, &packed, &cent, &mut buf, &mut out) };
        runs.push(("narrow", out));
    }
    runs
}

/// [`check`] with the points and centres rounded to `f32`, then as they are (`f64`).
fn check_both(x: &[f64], c: &[f64], d: usize, what: &str) {
    check::<f32>(x, c, d, what);
    check::<f64>(x, c, d, what);
}

fn check<T: Element>(x: &[f64], c: &[f64], d: usize, what: &str) {
    let xt: Vec<T> = x.iter().map(|&v| T::from_f64(v)).collect();
    let want: Vec<u32> = crate::tests::reference_nearest(&xt, c, d)
        .into_iter()
        .map(|(j, _)| j)
        .collect();
    for (isa, got) in labels(&xt, c, d) {
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                w,
                "{what} {} {isa} k {} d {d} row {i}",
                T::NAME,
                c.len() / d
            );
        }
    }
}

#[test]
fn labels_are_the_reference_labels_at_every_register_boundary() {
    if !crate::isa::has_avx2() {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    for d in [1, 2, 3, 9, 16, 17, 50, 64, 65, 130] {
        for k in [
            1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 129, 256, 300,
        ] {
            // Row counts around the blocks of six and eight rows and the narrow kernel's 16.
            let n = [1, 5, 6, 7, 13, 40, 49][(d + k) % 7];
            let x: Vec<f64> = (0..n * d).map(|_| rng.random_range(-1.0..1.0)).collect();
            let c: Vec<f64> = (0..k * d).map(|_| rng.random_range(-1.0..1.0)).collect();
            check_both(&x, &c, d, "random");
        }
    }
}

/// Points on the bisectors of pairs of centres, far from the origin (the rounding of the
/// products at its worst against the gaps), exact duplicates of centres (ties to the
/// lower index) and integer grids (exact ties of distinct centres).
#[test]
fn near_and_exact_ties_are_settled_as_the_reference() {
    if !crate::isa::has_avx2() {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (d, k) in [(2, 3), (12, 16), (40, 33), (128, 64), (40, 200), (130, 300)] {
        let (x, c) = crate::tests::bisector_points(&mut rng, d, k, 300, 100.0..1000.0);
        check_both(&x, &c, d, "bisectors");
    }
    // Integer points and centres: many exact ties between distinct centres.
    let d = 3;
    let c: Vec<f64> = (0..20 * d).map(|i| ((i * 7) % 5) as f64).collect();
    let x: Vec<f64> = (0..90 * d).map(|i| ((i * 3) % 4) as f64 + 0.5).collect();
    check_both(&x, &c, d, "grid");
}

/// Points and centres far from the origin, close together (the bfloat16 pass's shift), and
/// coordinates as small as `f32`'s subnormal range (its flushing to zero).
#[test]
fn offsets_and_tiny_values_are_settled_as_the_reference() {
    if !crate::isa::has_avx2() {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for (d, k, offset, spread) in [
        (48, 130, 1e4, 1.0),
        (64, 160, -3e3, 1e-2),
        (33, 129, 0.0, 1e-38),
        (96, 140, 1.0, 1e-30),
    ] {
        let n = 97;
        let mut point = |_| offset + spread * rng.random_range(-1.0..1.0);
        let c: Vec<f64> = (0..k * d).map(&mut point).collect();
        let mut x: Vec<f64> = (0..n * d).map(&mut point).collect();
        // A few points exactly on centres (ties to the lower index among duplicates).
        x[..d].copy_from_slice(&c[..d]);
        x[d..2 * d].copy_from_slice(&c[5 * d..6 * d]);
        check_both(&x, &c, d, "offset");
    }
}

/// Values whose products overflow the element type: the labels come from exact distances.
#[test]
fn products_that_would_overflow_fall_back_to_exact_distances() {
    if !crate::isa::has_avx2() {
        return;
    }
    let d = 4;
    for scale in [1e18, 3e19, 1e30] {
        // Two far centres and one near the origin; points near each.
        let c = [
            0.0, 0.0, 0.0, 0.0, scale, scale, 0.0, 0.0, 0.0, scale, scale, scale,
        ];
        let x: Vec<f64> = [
            [1.0, 2.0, 0.0, 0.0],
            [scale * 0.9, scale, 1.0, 0.0],
            [0.0, scale * 1.1, scale * 0.8, scale],
            [scale * 0.5, scale * 0.5, scale * 0.5, scale * 0.5],
        ]
        .concat();
        check_both(&x, &c, d, "huge");
    }
    for scale in [1e150, 1e200] {
        let c = [0.0, 0.0, 0.0, 0.0, scale, scale, 0.0, 0.0];
        let x = [1.0, 2.0, 0.0, 0.0, scale * 0.9, scale, 1.0, 0.0];
        check::<f64>(&x, &c, d, "huge");
    }
}
