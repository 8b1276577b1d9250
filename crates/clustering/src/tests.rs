//! Tests of the whole crate against the sequential reference. The helpers shared by the test
//! files are here, with the readers' and checkpoints' tests (`io`); the rest, by concern:
//!
//! - `fit.rs`: steps and fits against the reference, weights, empty clusters, errors, the GPU
//!   against the CPU, property tests;
//! - `algorithms.rs`: every algorithm (the pruned ones, `Auto`'s adaptive bounds, the small-`d`
//!   leaf) gives plain Lloyd's result bit for bit.

use gpu_runtime::Exec;
use gpu_runtime::testing::gpu_for_test;
use ndarray::{Array1, Array2, array};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cpu::{CpuKind, CpuStepper, step_parallel, step_reference};
use crate::cuda::CudaStepper;
use crate::data::generate_blobs;
use crate::lloyd::{Stepper, update_centroids};
use crate::{Draws, Init, KMeans, KMeansError, predict};

/// The numbers of points of the GPU tests: around warps and blocks, and several tiles.
fn sizes() -> impl Iterator<Item = usize> {
    [1, 2]
        .into_iter()
        .chain(gpu_runtime::testing::EDGE_SIZES)
        .chain([4099, 4097, (1 << 14) + 1])
}

pub(crate) fn random_data(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * d).map(|_| rng.random_range(-5.0..5.0)).collect()
}

fn dist2(x: &[f64], c: &[f64]) -> f64 {
    x.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum()
}

/// Labels agree except where both centroids are at (nearly) the same distance.
fn assert_labels_match_up_to_ties(
    data: &[f64],
    d: usize,
    c: &[f64],
    a: &[u32],
    b: &[u32],
    rel: f64,
) {
    assert_eq!(a.len(), b.len());
    for (i, (&la, &lb)) in a.iter().zip(b).enumerate() {
        if la != lb {
            let x = &data[i * d..(i + 1) * d];
            let da = dist2(x, &c[la as usize * d..(la as usize + 1) * d]);
            let db = dist2(x, &c[lb as usize * d..(lb as usize + 1) * d]);
            let scale = x.iter().map(|v| v * v).sum::<f64>() + da + db + 1.0;
            assert!(
                (da - db).abs() <= rel * scale,
                "point {i}: labels {la} vs {lb}, {da} vs {db}"
            );
        }
    }
}

fn assert_close(a: &[f64], b: &[f64], rel: f64) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= rel * (1.0 + x.abs().max(y.abs())),
            "element {i}: {x} vs {y}"
        );
    }
}

mod algorithms;
mod fit;
#[path = "../tests/common/npy_f32.rs"]
mod npy_f32;

/// The reference's nearest centre of every row of `x` (`d` columns) among the centres `c`:
/// the smallest [`dist2_f64`](crate::lloyd::dist2_f64), ties to the lower index, and that
/// squared distance.
pub(crate) fn reference_nearest<T: crate::Element>(
    x: &[T],
    c: &[f64],
    d: usize,
) -> Vec<(u32, f64)> {
    x.chunks_exact(d)
        .map(|xr| {
            let mut best = (0u32, f64::INFINITY);
            for (j, cr) in c.chunks_exact(d).enumerate() {
                let v = crate::lloyd::dist2_f64(xr, cr);
                if v < best.1 {
                    best = (j as u32, v);
                }
            }
            best
        })
        .collect()
}

/// `k` centres, each coordinate `off[t]` plus a draw from `[-1, 1)` (row-major).
pub(crate) fn centres_around(rng: &mut ChaCha8Rng, off: &[f64], k: usize) -> Vec<f64> {
    let d = off.len();
    (0..k * d)
        .map(|i| off[i % d] + rng.random_range(-1.0..1.0))
        .collect()
}

/// The centres `a`, `b` of `k` that point `i` lies between and its weight `t` on `a`: one
/// half for every third point, else drawn from `[0.49, 0.51)` (near the bisector).
pub(crate) fn bisector_pair(rng: &mut ChaCha8Rng, i: usize, k: usize) -> (usize, usize, f64) {
    let (a, b) = (i % k, (i * 7 + 1) % k);
    let t: f64 = if i.is_multiple_of(3) {
        0.5
    } else {
        rng.random_range(0.49..0.51)
    };
    (a, b, t)
}

/// `n` points on the bisectors of pairs of `k` centres of `d` coordinates near an offset drawn
/// from `off` (far from the origin: the products' rounding is at its worst, and most points
/// are near-ties), then the first centre again, as a point and as a centre `k + 1` (exact
/// ties to the lower index). Returns the points and the centres.
pub(crate) fn bisector_points(
    rng: &mut ChaCha8Rng,
    d: usize,
    k: usize,
    n: usize,
    off: std::ops::Range<f64>,
) -> (Vec<f64>, Vec<f64>) {
    let off: Vec<f64> = (0..d).map(|_| rng.random_range(off.clone())).collect();
    let mut c = centres_around(rng, &off, k);
    let mut x = Vec::new();
    for i in 0..n {
        let (a, b, t) = bisector_pair(rng, i, k);
        for u in 0..d {
            x.push(c[a * d + u] * t + c[b * d + u] * (1.0 - t));
        }
    }
    x.extend_from_slice(&c[..d]);
    c.extend_from_within(..d);
    (x, c)
}

mod io {
    use std::io::Write;

    use ndarray::Array2;

    use crate::KMeansError;
    use crate::checkpoint::{Checkpoint, Job, JobParams, digest_part, to_bits};
    use crate::data::{
        NpyType, read_csv, read_matrix, read_npy, read_npy_header, read_rows, read_weights,
        read_weights_shard, shard_range, write_npy,
    };
    use crate::{Init, KMeans};

    /// A checkpoint of a run on 10 points of 2 columns into 2 clusters, 7 iterations done
    /// (absolute tolerance `1e-9`, not converged), from `initial` now at `centroids`.
    fn checkpoint_after_7(
        version: u32,
        centroids: &[f64],
        initial: &[f64],
        weights_digest: Option<u64>,
        job: Option<JobParams>,
    ) -> Checkpoint {
        Checkpoint {
            version,
            n: 10,
            d: 2,
            k: 2,
            iteration: 7,
            tol_abs: 1e-9,
            converged: false,
            centroid_bits: to_bits(centroids),
            initial_bits: to_bits(initial),
            weights_digest,
            job,
        }
    }

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("clustering-io-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn csv_with_header_and_errors() {
        let d = dir("csv");
        let p = d.join("a.csv");
        std::fs::write(&p, "x,y\n1,2\n\n3.5, -4\n").unwrap();
        assert_eq!(
            read_csv(&p).unwrap(),
            ndarray::array![[1.0, 2.0], [3.5, -4.0]]
        );
        std::fs::write(&p, "1 2\n3 4 5\n").unwrap();
        assert!(matches!(read_csv(&p), Err(KMeansError::Format { .. })));
        std::fs::write(&p, "1,2\n3,oops\n").unwrap();
        let e = read_csv(&p).unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(matches!(
            read_csv(&d.join("missing.csv")),
            Err(KMeansError::Io { .. })
        ));
        std::fs::write(&p, "").unwrap();
        assert_eq!(read_csv(&p).unwrap().dim(), (0, 0));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn npy_round_trip_and_shards() {
        let d = dir("npy");
        let p = d.join("a.npy");
        let a = Array2::from_shape_fn((1025, 3), |(i, j)| i as f64 * 0.5 - j as f64);
        write_npy(&p, &a).unwrap();
        assert_eq!(read_npy(&p).unwrap(), a);
        let h = read_npy_header(&p).unwrap();
        assert_eq!((h.rows, h.cols, h.dtype), (1025, 3, NpyType::F64));
        // Shards of any count cover every row exactly once, in order.
        for ranks in [1u64, 2, 3, 7, 1025, 2000] {
            let mut rows = Vec::new();
            for r in 0..ranks {
                let s = shard_range(1025, ranks, r);
                rows.extend(read_rows(&p, h.offset, h.dtype, s.start, s.end - s.start, 3).unwrap());
            }
            assert_eq!(
                rows,
                a.iter().copied().collect::<Vec<_>>(),
                "ranks = {ranks}"
            );
        }
        assert!(read_rows(&p, h.offset, h.dtype, 1000, 100, 3).is_err());
        // An f32 file written by hand (numpy's layout).
        let bytes = super::npy_f32::npy_f32_bytes("(2, 2)", [1.5f32, -2.0, 3.25, 4.0]);
        let p32 = d.join("b.npy");
        std::fs::File::create(&p32)
            .unwrap()
            .write_all(&bytes)
            .unwrap();
        assert_eq!(
            read_npy(&p32).unwrap(),
            ndarray::array![[1.5, -2.0], [3.25, 4.0]]
        );
        // Truncated, wrong magic, Fortran order: format errors.
        std::fs::write(&p32, &bytes[..bytes.len() - 4]).unwrap();
        assert!(matches!(read_npy(&p32), Err(KMeansError::Format { .. })));
        std::fs::write(&p32, b"not an npy file at all").unwrap();
        assert!(matches!(read_npy(&p32), Err(KMeansError::Format { .. })));
        let fortran = String::from_utf8_lossy(&bytes).replace("False", "True ");
        std::fs::write(&p32, fortran.as_bytes()).unwrap();
        assert!(read_npy(&p32).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn weights_files_npy_and_raw() {
        let d = dir("weights");
        // Raw f64, read whole and by shard.
        let raw = d.join("w.bin");
        let w = [0.5f64, 0.0, 2.0, 1e300, 7.0];
        std::fs::write(
            &raw,
            w.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        )
        .unwrap();
        assert_eq!(read_weights(&raw).unwrap(), w);
        assert_eq!(read_weights_shard(&raw, 5, 3..5).unwrap(), w[3..]);
        assert!(matches!(
            read_weights_shard(&raw, 6, 0..2),
            Err(KMeansError::ShapeMismatch {
                expected: 6,
                found: 5,
                ..
            })
        ));
        assert!(matches!(
            read_weights_shard(&raw, 5, 4..6),
            Err(KMeansError::InvalidParameter(_))
        ));
        // A (n, 1) .npy file holds weights too; (n, 2) does not.
        let npy = d.join("w.npy");
        write_npy(&npy, &Array2::from_shape_vec((5, 1), w.to_vec()).unwrap()).unwrap();
        assert_eq!(read_weights(&npy).unwrap(), w);
        assert_eq!(read_matrix(&npy).unwrap().dim(), (5, 1));
        write_npy(&npy, &Array2::zeros((5, 2))).unwrap();
        let e = read_weights(&npy).unwrap_err();
        assert!(
            matches!(&e, KMeansError::Format { reason, .. } if reason.contains("1-D")),
            "{e}"
        );
        // A raw file that is not whole f64 values; a missing file.
        std::fs::write(&raw, [0u8; 12]).unwrap();
        assert!(matches!(
            read_weights(&raw),
            Err(KMeansError::Format { .. })
        ));
        assert!(matches!(
            read_weights_shard(&d.join("missing"), 1, 0..1),
            Err(KMeansError::Io { .. })
        ));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn weights_files_csv() {
        let d = dir("weights-csv");
        let w = [0.5f64, 0.0, 2.0, 1e300, 7.0];
        let raw = d.join("w.f64");
        std::fs::write(
            &raw,
            w.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        )
        .unwrap();
        // A header, blank lines, spaces; `.txt` is text too. Every shard equals the binary's.
        let csv = d.join("w.csv");
        std::fs::write(&csv, "weight\n0.5\n0\n\n 2 \n1e300\n7\n").unwrap();
        assert_eq!(read_weights(&csv).unwrap(), w);
        for (lo, hi) in [(0, 5), (0, 2), (2, 5), (3, 3)] {
            assert_eq!(
                read_weights_shard(&csv, 5, lo..hi).unwrap(),
                read_weights_shard(&raw, 5, lo..hi).unwrap()
            );
        }
        let txt = d.join("w.txt");
        std::fs::write(&txt, "0.5\n0\n2\n1e300\n7").unwrap();
        assert_eq!(read_weights(&txt).unwrap(), w);
        // Malformed lines name their line and column (warpath-io's table grammar); a second
        // column is an error.
        std::fs::write(&csv, "w\n1\n2\nx\n").unwrap();
        let e = read_weights(&csv).unwrap_err();
        assert!(
            matches!(&e, KMeansError::Format { reason, .. } if reason.starts_with("line 4, column 1:")),
            "{e}"
        );
        std::fs::write(&csv, "1\n2,3\n").unwrap();
        let e = read_weights(&csv).unwrap_err();
        assert!(e.to_string().contains("line 2, column 1"), "{e}");
        std::fs::write(&csv, "1,2\n").unwrap();
        let e = read_weights(&csv).unwrap_err();
        assert!(e.to_string().contains("one number per line"), "{e}");
        // A count other than the data's.
        std::fs::write(&csv, "1\n2\n").unwrap();
        assert!(matches!(
            read_weights_shard(&csv, 3, 0..1),
            Err(KMeansError::ShapeMismatch {
                expected: 3,
                found: 2,
                ..
            })
        ));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn digest_parts_do_not_depend_on_the_sharding_but_on_every_value() {
        let w: Vec<f64> = (0..1001).map(|i| (i % 7) as f64 * 0.25).collect();
        let whole = digest_part(0, &w);
        for ranks in [2u64, 3, 7, 1001] {
            let parts = (0..ranks).fold(0, |acc, r| {
                let s = shard_range(w.len() as u64, ranks, r);
                acc ^ digest_part(s.start, &w[s.start as usize..s.end as usize])
            });
            assert_eq!(parts, whole, "ranks = {ranks}");
        }
        let mut other = w.clone();
        other[500] += 0.25;
        assert_ne!(digest_part(0, &other), whole);
        other = w.clone();
        other.swap(1, 2);
        assert_ne!(digest_part(0, &other), whole);
        // -0.0 is 0.0.
        other = w.clone();
        other[0] = -0.0;
        assert_eq!(digest_part(0, &other), whole);
    }

    #[test]
    fn checkpoints_are_exact_and_checked() {
        let d = dir("ck");
        let p = d.join("ck.json");
        let c = vec![0.1, 1.0 / 3.0, -2.5e-300, f64::MAX];
        let ck = checkpoint_after_7(2, &c, &c, Some(u64::MAX), None);
        ck.write_atomic(&p).unwrap();
        let back = Checkpoint::read(&p).unwrap();
        assert_eq!(back, ck);
        assert_eq!(back.centroids(), c);
        // A version-1 checkpoint (no weights digest) reads as unweighted.
        let mut v1: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        v1.as_object_mut().unwrap().remove("weights_digest");
        std::fs::write(&p, v1.to_string()).unwrap();
        assert_eq!(Checkpoint::read(&p).unwrap().weights_digest, None);
        // Overwriting leaves no temporary files behind.
        ck.write_atomic(&p).unwrap();
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::write(&p, "{\"garbage\": 1}").unwrap();
        assert!(matches!(
            Checkpoint::read(&p),
            Err(KMeansError::Format { .. })
        ));
        let mut bad = ck.clone();
        bad.k = 3;
        bad.write_atomic(&p).unwrap();
        assert!(matches!(
            Checkpoint::read(&p),
            Err(KMeansError::Format { .. })
        ));
        // Unknown versions, and a version 3 without its job, are refused.
        for (version, job) in [(0, None), (4, None), (3, None)] {
            let bad = Checkpoint {
                version,
                job,
                ..ck.clone()
            };
            bad.write_atomic(&p).unwrap();
            let e = Checkpoint::read(&p).unwrap_err();
            assert!(matches!(e, KMeansError::Format { .. }), "{e}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// What differs, or `None` when `ck` may be resumed by `job`.
    fn mismatch(ck: &Checkpoint, job: &Job<'_>) -> Option<(&'static str, String, String)> {
        match ck.check_resume("ck.json".as_ref(), job) {
            Ok(()) => None,
            Err(KMeansError::CheckpointMismatch {
                path,
                what,
                checkpoint,
                run,
            }) => {
                assert_eq!(path, "ck.json");
                Some((what, checkpoint, run))
            }
            Err(e) => panic!("not a CheckpointMismatch: {e}"),
        }
    }

    #[test]
    fn resume_is_refused_for_another_job() {
        let given = ndarray::array![[0.0, 1.0], [2.0, 3.0]];
        let pp = KMeans::new(2).seed(5).tol(1e-4).max_iter(20);
        let job = Job {
            params: &pp,
            n: 10,
            d: 2,
            data_digest: 0xda7a,
            weights_digest: None,
        };
        let initial = given.as_slice().unwrap();
        let ck = checkpoint_after_7(3, &[0.5; 4], initial, None, Some(job.recorded()));
        assert_eq!(mismatch(&ck, &job), None);
        let says = |what: &'static str, ck: &str, run: &str| Some((what, ck.into(), run.into()));
        let run_on = |ck: &Checkpoint, params: &KMeans| mismatch(ck, &Job { params, ..job });
        let run = |params: &KMeans| run_on(&ck, params);
        // Another seed, init, tol, k.
        assert_eq!(run(&pp.clone().seed(6)), says("seed", "5", "6"));
        assert_eq!(
            run(&pp.clone().init(Init::Random)),
            says("init", "k-means++", "random")
        );
        assert_eq!(
            run(&pp.clone().init(Init::Given(given.clone()))),
            says("init", "k-means++", "given")
        );
        assert_eq!(run(&pp.clone().tol(1e-3)), says("tol", "0.0001", "0.001"));
        let other = KMeans::new(3).seed(5).tol(1e-4).max_iter(20);
        assert_eq!(run(&other), says("k (clusters)", "2", "3"));
        // Other data shape or values, other weights.
        assert_eq!(
            mismatch(&ck, &Job { n: 11, ..job }).map(|m| m.0),
            Some("n (points)")
        );
        assert_eq!(
            mismatch(&ck, &Job { d: 3, ..job }).map(|m| m.0),
            Some("d (dimensions)")
        );
        let r = mismatch(
            &ck,
            &Job {
                data_digest: 0xbad,
                ..job
            },
        );
        assert_eq!(
            r,
            Some((
                "data values",
                "digest 000000000000da7a".into(),
                "digest 0000000000000bad".into()
            ))
        );
        let r = mismatch(
            &ck,
            &Job {
                weights_digest: Some(1),
                ..job
            },
        );
        assert_eq!(
            r,
            Some((
                "sample weights",
                "no sample weights".into(),
                "sample weights with digest 0000000000000001".into()
            ))
        );
        // max_iter: any value at or past the checkpoint's iteration continues the same run.
        assert_eq!(run(&pp.clone().max_iter(7)), None);
        assert_eq!(run(&pp.clone().max_iter(300)), None);
        assert_eq!(
            run(&pp.clone().max_iter(6)),
            says("max_iter", "7 iterations done", "max_iter = 6")
        );
        // Given centroids: the seed plays no part; other centroids are another job.
        let g = pp.clone().init(Init::Given(given.clone()));
        let gck = Checkpoint {
            job: Some(Job { params: &g, ..job }.recorded()),
            ..ck.clone()
        };
        assert_eq!(gck.job.as_ref().unwrap().seed, None);
        assert_eq!(run_on(&gck, &g), None);
        assert_eq!(run_on(&gck, &g.clone().seed(99)), None);
        let mut moved = given.clone();
        moved[[1, 1]] = 3.5;
        let other = g.clone().init(Init::Given(moved));
        assert_eq!(run_on(&gck, &other).map(|m| m.0), Some("given centroids"));
        // Version 2 records no init, seed, tol or data digest: those are not checked; the
        // shape, weights, given centroids and max_iter still are.
        let v2 = Checkpoint {
            version: 2,
            job: None,
            ..ck.clone()
        };
        let other = pp.clone().seed(6).tol(1.0);
        let job2 = Job {
            params: &other,
            data_digest: 1,
            ..job
        };
        assert_eq!(mismatch(&v2, &job2), None);
        assert_eq!(
            mismatch(&v2, &Job { n: 9, ..job }).map(|m| m.0),
            Some("n (points)")
        );
        let other = g.clone().init(Init::Given(given.clone() * 2.0));
        assert_eq!(run_on(&v2, &other).map(|m| m.0), Some("given centroids"));
        assert_eq!(
            run_on(&v2, &pp.clone().max_iter(3)).map(|m| m.0),
            Some("max_iter")
        );
        // The message names both sides.
        let reseeded = pp.clone().seed(6);
        let e = ck.check_resume(
            "ck.json".as_ref(),
            &Job {
                params: &reseeded,
                ..job
            },
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "ck.json: the checkpoint belongs to another job: seed: checkpoint says 5, this run says 6"
        );
    }
}
