//! The assignment engine against the reference: both methods, near ties, storage orders,
//! the blocked products and the segment minimum.

use super::TILE_ROWS;
use super::band::{Band, Scratch, product};
use super::blocked::{GroupBlocks, blocked_products};
use super::settle::{SEGMENT, finish, segment_min, single_nearest};
use super::tiles::nearest_tile;
use crate::Element;
use crate::centres::{Centres, Method};
use crate::lloyd::{dist2_f64, norm2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Every method this CPU runs.
fn methods() -> Vec<Method> {
    let mut m = vec![Method::Direct, Method::Gemm];
    if crate::isa::has_avx2() {
        m.push(Method::Fused);
    }
    m
}

fn check<T: Element>(x: &[f64], c: &[f64], d: usize, method: Method) {
    let k = c.len() / d;
    let xt: Vec<T> = x.iter().map(|&v| T::from_f64(v)).collect();
    let xr: Vec<f64> = xt.iter().map(|v| v.to_f64()).collect();
    let want = crate::tests::reference_nearest(&xr, c, d);
    let cent = Centres::<T>::new(c, k, d, None, method, false);
    let mut s = Scratch::new();
    for (ti, tile) in xt.chunks(TILE_ROWS * d).enumerate() {
        let mut out = vec![(0, 0.0); tile.len() / d];
        nearest_tile(tile, &cent, &mut s, &mut out);
        for (i, o) in out.iter().enumerate() {
            let w = want[ti * TILE_ROWS + i];
            let row = ti * TILE_ROWS + i;
            assert_eq!(o.0, w.0, "{} {method:?} k {k} d {d} row {row}", T::NAME);
            if method == Method::Direct {
                assert_eq!(o.1.to_bits(), w.1.to_bits(), "{method:?} row {row}");
            } else if method == Method::Gemm {
                // An upper bound, exact when it was computed.
                assert!(
                    o.1 >= w.1,
                    "{} {method:?} row {row}: {} < {}",
                    T::NAME,
                    o.1,
                    w.1
                );
            }
        }
    }
}

#[test]
fn both_methods_give_the_reference_labels_and_distances() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for &(n, d, k) in &[
        (1, 1, 1),
        (5, 3, 2),
        (300, 2, 9),
        (257, 13, 17),
        (600, 40, 100),
        (300, 128, 600),
        (100, 7, 1),
        // At most eight dimensions: eight rows at a time in the vector lanes, a few left over.
        (203, 4, 5),
        (61, 8, 33),
        (99, 6, 8),
        (45, 5, 3),
        (17, 1, 4),
        (91, 10, 6),
        (40, 11, 40),
        // One tile of centres (every k above but 600): `single_nearest` first, with and
        // without whole chunks of 16.
        (600, 40, 64),
        (300, 16, 48),
        (200, 128, 512),
    ] {
        let x: Vec<f64> = (0..n * d).map(|_| rng.random_range(-1.0..1.0)).collect();
        let c: Vec<f64> = (0..k * d).map(|_| rng.random_range(-1.0..1.0)).collect();
        for m in methods() {
            check::<f32>(&x, &c, d, m);
            check::<f64>(&x, &c, d, m);
        }
    }
}

/// The direct path's squared distances ([`sq_distances_tile`], the k-means++ draws) are
/// [`dist2_f64`]'s, bit for bit, in every dimension (eight rows at a time in the vector lanes
/// up to eleven), including points on centres and distances that overflow.
#[test]
fn direct_squared_distances_are_the_references() {
    use super::tiles::sq_distances_tile;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for d in 1..=13 {
        for k in [1, 3, 8, 21] {
            let n = 45;
            let mut x: Vec<f64> = (0..n * d).map(|_| rng.random_range(-3.0..3.0)).collect();
            let c: Vec<f64> = (0..k * d).map(|_| rng.random_range(-3.0..3.0)).collect();
            x[..d].copy_from_slice(&c[..d]);
            x[d] = 1e300;
            let cent = Centres::<f64>::new(&c, k, d, None, Method::Direct, false);
            let (mut s, mut out) = (Scratch::new(), Vec::new());
            sq_distances_tile(&x, &cent, &mut s, &mut out);
            for i in 0..n {
                for j in 0..k {
                    let want = dist2_f64(&x[i * d..(i + 1) * d], &c[j * d..(j + 1) * d]);
                    let got = out[i * k + j];
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "d {d} k {k} row {i} centre {j}"
                    );
                }
            }
        }
    }
}

/// `single_nearest` answers exactly when the band holds one value and `finish` needs no
/// exact distance, and then as the band and `finish` do.
#[test]
fn single_nearest_is_the_band_when_it_answers() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    // Whole chunks of 16, and a remainder of 2 lanes past them.
    for (d, k) in [(24, 64), (24, 50)] {
        let c: Vec<f64> = (0..k * d).map(|_| rng.random_range(-1.0..1.0)).collect();
        let cent = Centres::<f64>::new(&c, k, d, None, Method::Gemm, false);
        let (mut some, mut none) = (0, 0);
        for i in 0..2000 {
            // Random points, and points halfway between two centres (bands of two).
            let x: Vec<f64> = if i % 2 == 0 {
                (0..d).map(|_| rng.random_range(-1.0..1.0)).collect()
            } else {
                let (a, b) = (i % k, (i * 5 + 3) % k);
                (0..d)
                    .map(|u| 0.5 * (c[a * d + u] + c[b * d + u]))
                    .collect()
            };
            let xn2 = norm2(&x);
            let mut row = vec![0.0; k];
            product(&x, 1, &cent, 0, k, &mut row);
            let norms = &cent.norms[..k];
            let mut band = Band::new(cent.band_width(xn2));
            band.scan::<false>(&row, norms, 0);
            let want = finish(&x, xn2, &band, &cent, None);
            for avx512 in [false, crate::isa::has_avx512()] {
                match single_nearest(&row, norms, xn2, &cent, avx512) {
                    Some(got) => {
                        assert_eq!(band.len, 1, "point {i}");
                        assert_eq!(Some(got), want, "point {i}");
                        some += 1;
                    }
                    None => none += 1,
                }
            }
        }
        assert!(
            some > 1000 && none > 100,
            "{some} answered, {none} left to the band"
        );
    }
}

/// Near-ties everywhere: points on the bisectors of pairs of centres, far from the origin
/// (large `|x| |c|` against small distances: the product's rounding is at its worst).
#[test]
fn near_ties_and_offset_data_are_settled_exactly() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    // With the duplicate below k = 32, 201 and 64: `single_nearest` with and without a
    // remainder past the chunks of 16.
    for &(d, k) in &[(16, 31), (64, 200), (200, 63)] {
        // Exact duplicates of centres and of each other (exact ties to the lower index).
        let (x, c2) = crate::tests::bisector_points(&mut rng, d, k, 700, 50.0..100.0);
        for m in methods() {
            check::<f32>(&x, &c2, d, m);
            check::<f64>(&x, &c2, d, m);
        }
    }
}

#[test]
fn a_storage_order_keeps_ties_to_the_lower_caller_index() {
    // Two identical centres stored in reverse order: the lower caller index wins.
    let c = vec![1.0, 2.0, 1.0, 2.0, 5.0, 5.0];
    let order = [2u32, 1, 0];
    for m in methods() {
        let cent = Centres::<f64>::new(&c, 3, 2, Some(&order), m, false);
        let mut s = Scratch::new();
        let mut out = vec![(0, 0.0); 1];
        nearest_tile(&[1.0, 2.0], &cent, &mut s, &mut out);
        assert_eq!(cent.id(out[0].0), 0, "{m:?}");
    }
}

/// The blocked products of a group agree with the exact dot products within the error
/// bound, and taking their rows into a point's band (`merge_row`) gives what scanning and
/// merging gives (the same band), for every width of group and count of rows.
fn blocked_case<T: Element>(d: usize, sizes: &[usize], seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let k: usize = sizes.iter().sum();
    let c: Vec<f64> = (0..k * d).map(|_| rng.random_range(-1.0..1.0)).collect();
    let n = 40;
    let x: Vec<T> = (0..n * d)
        .map(|_| T::from_f64(rng.random_range(-1.0..1.0)))
        .collect();
    let mut starts = vec![0];
    for &q in sizes {
        starts.push(starts.last().unwrap() + q);
    }
    let cent = Centres::<T>::new(&c, k, d, None, Method::Gemm, false);
    let blocks = GroupBlocks::new(&cent, &starts, |_| true);
    let avx512 = crate::isa::has_avx512();
    let mut s = Scratch::new();
    for g in 0..sizes.len() {
        assert_eq!(
            blocks.has(g),
            avx512,
            "blocks exactly where the kernels run"
        );
        if !avx512 {
            continue;
        }
        let range = starts[g]..starts[g + 1];
        // Every count of rows (the kernels take 8, 4 and 1 at a time), rows out of order.
        for p in [1, 3, 4, 7, 8, 9, 13, 21] {
            let rows: Vec<u32> = (0..p).map(|i| ((i * 17 + g) % n) as u32).collect();
            let rw = blocked_products(&x, &rows, &blocks, g, &mut s);
            assert_eq!(rw % 16, 0);
            assert!(rw >= range.len());
            let norms = blocks.norms(g).to_vec();
            for (q, &i) in rows.iter().enumerate() {
                let xr = &x[i as usize * d..(i as usize + 1) * d];
                let xn2 = norm2(xr);
                let row = &s.tile[q * rw..(q + 1) * rw];
                for (l, j) in range.clone().enumerate() {
                    let exact = dist2_f64(xr, cent.row(j)) - xn2;
                    let got = (norms[l] + row[l]).to_f64();
                    assert!(
                        (got - exact).abs() <= cent.err(xn2),
                        "d {d} group {g} row {q} centre {j}: {got} vs {exact}"
                    );
                }
                for v in &norms[range.len()..rw] {
                    assert!(v.to_f64().is_infinite(), "padding never chosen");
                }
                // merge_row against scan + merge, from an empty band and from a band
                // whose best is far below (the fast path) or between.
                let width = cent.band_width(xn2);
                let mut scanned = Band::new(width);
                scanned.scan::<true>(row, &norms, range.start);
                for start in [None, Some(-1e3), Some(scanned.best.to_f64())] {
                    let mut a = Band::new(width);
                    let mut b = Band::new(width);
                    if let Some(v) = start {
                        let other = Band {
                            best: T::from_f64(v),
                            best_slot: u32::MAX - 1,
                            second: T::MAX,
                            ..Band::new(width)
                        };
                        a.merge(&other);
                        b.merge(&other);
                    }
                    let (v1, s1, v2) = a.merge_row(row, &norms, range.start);
                    b.merge(&scanned);
                    assert_eq!((v1, s1), (scanned.best, scanned.best_slot));
                    assert!(v2 >= v1 && v2 <= scanned.second(s1));
                    assert_eq!((a.best, a.best_slot, a.len), (b.best, b.best_slot, b.len));
                    assert_eq!(a.floor(), b.floor(), "start {start:?}");
                    assert_eq!(a.second(a.best_slot), b.second(b.best_slot));
                }
            }
        }
    }
}

#[test]
fn blocked_products_match_the_product_and_merge_like_a_scan() {
    // Groups of 8 to 47 centres: one register of 8 lanes, of 16, 16 + 8, 32 + 8, ...
    let sizes = [8, 13, 16, 20, 24, 31, 33, 47];
    for d in [3, 16, 67, 256] {
        blocked_case::<f32>(d, &sizes, d as u64);
        blocked_case::<f64>(d, &sizes, d as u64 + 1);
    }
}

#[test]
fn segment_min_is_the_minimum_of_the_segment() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let v: Vec<f32> = (0..200).map(|_| rng.random_range(-5.0..5.0)).collect();
    let mut padded = v.clone();
    padded.extend([f32::MAX; SEGMENT]);
    for a in [0, 1, 5, 17, 100] {
        for len in [1, 7, 8, 15, 16, 17, 31, 33, 64, 99] {
            let b = (a + len).min(v.len());
            let want = v[a..b].iter().copied().fold(f32::MAX, f32::min);
            assert_eq!(segment_min(&padded, a, b), want, "{a}..{b}");
        }
    }
}
