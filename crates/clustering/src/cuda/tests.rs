//! The CUDA stepper against the CPU's (`crate::cpu`), through [`Stepper`] on both: the same
//! labels, bit for bit, for every path and product engine, on data made of near-ties. Under
//! the simulated driver (`cargo xtask sim`, `LD_LIBRARY_PATH=target/cuda-sim WARPATH_SIM=1`)
//! the inputs stay small: every kernel runs on one CPU core.

use gpu_runtime::Gpu;
use gpu_runtime::testing::gpu_for_test;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{CudaStepper, Engine, direct};
use crate::cpu::{CpuKind, CpuStepper};
use crate::lloyd::{LloydParams, ShiftLimit, StepStats, Stepper, lloyd};
use crate::tests::{bisector_pair, centres_around};
use crate::{Element, KMeansError};

/// Every product engine the device has: warpath's two kernels, and cuBLAS where it can be
/// opened (under the simulated driver: the simulated cuBLAS that `cargo xtask sim` builds).
fn engines(gpu: &Gpu) -> Vec<Engine> {
    let mut all = vec![Engine::Simt, Engine::TensorCores];
    match gpu.blas() {
        Ok(_) => all.push(Engine::Blas),
        Err(why) => eprintln!("clustering tests: no cuBLAS engine ({why})"),
    }
    all
}

/// Points and centroids where the product values cannot tell the nearest centre apart: centres
/// around an offset far from the origin (large `|x| |c|`, small distances), points on the
/// bisectors of pairs of centres, exact copies of centres, and a run of `run` centres at or
/// within `1e-6` of centre 0 with points among them (more near-ties than the 4 candidates:
/// the settle step compares every centre).
fn near_ties(
    n: usize,
    d: usize,
    k: usize,
    offset: f64,
    run: usize,
    seed: u64,
) -> (Vec<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let off: Vec<f64> = (0..d)
        .map(|_| offset * (1.0 + 0.5 * rng.random_range(-1.0..1.0)))
        .collect();
    let mut c = centres_around(&mut rng, &off, k);
    for j in k.saturating_sub(run).max(1)..k {
        for t in 0..d {
            c[j * d + t] = c[t]
                + if j % 2 == 1 {
                    1e-6 * rng.random_range(-1.0..1.0)
                } else {
                    0.0
                };
        }
    }
    let mut x = Vec::with_capacity(n * d);
    for i in 0..n {
        let (a, b, s) = bisector_pair(&mut rng, i, k);
        for t in 0..d {
            let v = match i % 13 {
                5 => off[t] + 2.0 * rng.random_range(-1.0..1.0),
                7 => c[a * d + t],
                9 => c[t] + 1e-6 * rng.random_range(-1.0..1.0),
                _ => c[a * d + t] * s + c[b * d + t] * (1.0 - s),
            };
            x.push(v);
        }
    }
    (x, c)
}

fn assert_close(a: &[f64], b: &[f64], rel: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= rel * (1.0 + x.abs().max(y.abs())),
            "{what} [{i}]: {x} vs {y}"
        );
    }
}

/// One step of the CPU's parallel stepper and of the CUDA stepper (`engine`, chunks of
/// `chunk` points; with small chunks the accumulation's tiles hold 3 rows, so clusters span many tiles) from
/// `c`: the same labels, counts and changed count, sums to rounding, and the same exact
/// inertia; a second step from the same centroids changes nothing and, on the product path,
/// gives the same statistics bit for bit (the sums are added in a fixed order).
fn check_step<T: Element>(
    gpu: &'static Gpu,
    x: &[f64],
    c: &[f64],
    d: usize,
    weights: Option<&[f64]>,
    engine: Engine,
    chunk: u64,
) {
    let k = c.len() / d;
    let xt: Vec<T> = x.iter().map(|&v| T::from_f64(v)).collect();
    let what = format!("{} {engine:?} d {d} k {k} chunk {chunk}", T::NAME);
    let mut cpu = CpuStepper::new(&xt, d, weights, CpuKind::Parallel);
    let mut reference = CpuStepper::new(&xt, d, weights, CpuKind::Reference);
    let mut gpu_s = CudaStepper::new(gpu, &xt, d, weights).unwrap();
    gpu_s.set_engine(engine);
    gpu_s.set_chunk(chunk);
    if chunk < 1000 {
        gpu_s.set_rows_per_tile(3);
        // cuBLAS products of 13 points at a time: pieces end inside chunks.
        gpu_s.set_gram_rows(13);
    }
    let sc = cpu.step(c, k).unwrap();
    let sr = reference.step(c, k).unwrap();
    let sg = gpu_s.step(c, k).unwrap();
    let labels = gpu_s.labels().unwrap();
    assert_eq!(cpu.labels, reference.labels, "{what}: the CPU paths");
    assert_eq!(labels, cpu.labels, "{what}: labels");
    assert_eq!(sg.changed, sc.changed, "{what}");
    assert_close(&sg.counts, &sc.counts, 1e-13, &format!("{what} counts"));
    assert_close(&sg.sums, &sc.sums, 1e-12, &format!("{what} sums"));
    // The exact inertia: the step's own on the direct path, exact_inertia's on the product
    // path (the formula's cancellation makes both sides' step values differ in many digits).
    let exact_cpu = cpu.exact_inertia(c, k).unwrap().unwrap_or(sc.inertia);
    let gpu_exact = gpu_s.exact_inertia(c, k).unwrap();
    assert_eq!(
        gpu_exact.is_none(),
        direct(d, k),
        "{what}: exact_inertia applies to products"
    );
    let exact_gpu = gpu_exact.unwrap_or(sg.inertia);
    assert_close(
        &[exact_gpu],
        &[sr.inertia],
        1e-12,
        &format!("{what} inertia"),
    );
    assert_close(
        &[exact_cpu],
        &[sr.inertia],
        1e-12,
        &format!("{what} cpu inertia"),
    );
    // The same centroids again: same labels, nothing changed, same statistics.
    let again = gpu_s.step(c, k).unwrap();
    assert_eq!(again.changed, 0, "{what}");
    assert_eq!(gpu_s.labels().unwrap(), labels, "{what}");
    if direct(d, k) {
        // The direct path's blocks add into shared memory with atomics: the last bits vary.
        assert_close(&again.sums, &sg.sums, 1e-12, &format!("{what} second sums"));
    } else {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&again.sums), bits(&sg.sums), "{what}: second sums");
        assert_eq!(
            bits(&again.counts),
            bits(&sg.counts),
            "{what}: second counts"
        );
    }
}

#[test]
fn gpu_labels_equal_the_cpu_labels_bit_for_bit() {
    let Some(gpu) = gpu_for_test("clustering gpu_labels_equal_the_cpu_labels_bit_for_bit") else {
        return;
    };
    // (n, d, k, offset, run): the direct path (d < 12 or k < 16), the product path with d
    // below, at and above the kernels' 8- and 16-dimension stages, k below and above their
    // 64- and 128-centre tiles, and runs of near-equal centres.
    for &(n, d, k, offset, run) in &[
        (90, 3, 5, 20.0, 2),
        (70, 9, 40, 30.0, 0),
        (150, 16, 20, 50.0, 0),
        (130, 40, 70, 80.0, 6),
        (80, 37, 130, 60.0, 0),
        (70, 130, 17, 40.0, 5),
    ] {
        let (x, c) = near_ties(n, d, k, offset, run, (n * d + k) as u64);
        for engine in engines(gpu) {
            // Chunks of 64 points (several chunks per step) and all points in one chunk.
            for chunk in [64, 1 << 20] {
                check_step::<f32>(gpu, &x, &c, d, None, engine, chunk);
                check_step::<f64>(gpu, &x, &c, d, None, engine, chunk);
            }
        }
    }
}

#[test]
fn gpu_weighted_steps_equal_the_cpu() {
    let Some(gpu) = gpu_for_test("clustering gpu_weighted_steps_equal_the_cpu") else {
        return;
    };
    for &(n, d, k) in &[(100, 5, 6), (120, 24, 33)] {
        let (x, c) = near_ties(n, d, k, 30.0, 3, 17);
        // Weights exact in f32 (the device holds them in the element type).
        let w: Vec<f64> = (0..n).map(|i| 0.25 + (i % 7) as f64 * 0.5).collect();
        for engine in engines(gpu) {
            check_step::<f32>(gpu, &x, &c, d, Some(&w), engine, 1 << 20);
            check_step::<f64>(gpu, &x, &c, d, Some(&w), engine, 50);
        }
    }
}

/// Whole Lloyd runs from the same centroids: the GPU with either engine takes the same path
/// as the CPU (labels, iterations); its centroids differ from the CPU's by the order of the
/// sums only.
#[test]
fn gpu_lloyd_runs_equal_the_cpu_runs() {
    let Some(gpu) = gpu_for_test("clustering gpu_lloyd_runs_equal_the_cpu_runs") else {
        return;
    };
    let (n, d, k) = (400, 20, 24);
    let b = crate::data::generate_blobs(n, d, k, 0.3, 8);
    let x: Vec<f32> = b.data.iter().map(|&v| v as f32).collect();
    let start: Vec<f64> = b.data.as_slice().unwrap()[..k * d].to_vec();
    let params = LloydParams {
        k,
        max_iter: 30,
        limit: ShiftLimit::Absolute(0.0),
        start_iteration: 0,
        final_labels: true,
    };
    let none = |_: usize, _: &[f64], _: &StepStats| Ok::<(), KMeansError>(());
    let mut cpu = CpuStepper::new(&x, d, None, CpuKind::Parallel);
    let want = lloyd(&mut cpu, start.clone(), &params, none).unwrap();
    for engine in engines(gpu) {
        let mut s = CudaStepper::new(gpu, &x, d, None).unwrap();
        s.set_engine(engine);
        let got = lloyd(&mut s, start.clone(), &params, none).unwrap();
        assert_eq!(got.iterations, want.iterations, "{engine:?}");
        assert_eq!(s.labels().unwrap(), cpu.labels, "{engine:?}");
        assert_close(&got.centroids, &want.centroids, 1e-12, "centroids");
        assert_close(
            &[got.last.inertia],
            &[want.last.inertia],
            1e-12,
            "final inertia",
        );
    }
}

#[test]
fn cuda_engine_follows_cublas_the_compute_capability_and_the_override() {
    let big = super::BLAS_MIN_WORK;
    let yes = || Ok(());
    let no = || Err("not on the library path".to_string());
    let never = || -> Result<(), String> { panic!("cuBLAS opened for a small product") };
    for cc in [(8, 0), (8, 6), (9, 0), (12, 0)] {
        assert_eq!(Engine::choose(cc, None, big, yes).unwrap(), Engine::Blas);
        assert_eq!(
            Engine::choose(cc, Some("blas"), 1, yes).unwrap(),
            Engine::Blas
        );
    }
    // Below the size where loading cuBLAS pays, or without it: the own kernels.
    assert_eq!(
        Engine::choose((9, 0), None, big - 1, never).unwrap(),
        Engine::TensorCores
    );
    assert_eq!(
        Engine::choose((8, 0), None, big, no).unwrap(),
        Engine::TensorCores
    );
    assert_eq!(
        Engine::choose((9, 0), None, big, no).unwrap(),
        Engine::TensorCores
    );
    assert_eq!(Engine::choose((8, 6), None, big, no).unwrap(), Engine::Simt);
    assert_eq!(Engine::choose((8, 9), None, big, no).unwrap(), Engine::Simt);
    assert_eq!(
        Engine::choose((12, 0), None, big, no).unwrap(),
        Engine::Simt
    );
    assert_eq!(
        Engine::choose((8, 6), Some("tensor"), big, never).unwrap(),
        Engine::TensorCores
    );
    assert_eq!(
        Engine::choose((9, 0), Some("simt"), big, never).unwrap(),
        Engine::Simt
    );
    assert!(matches!(
        Engine::choose((9, 0), Some("fast"), big, never),
        Err(KMeansError::InvalidParameter(m)) if m.contains("WARPATH_KMEANS_PRODUCT")
    ));
    assert!(matches!(
        Engine::choose((9, 0), Some("blas"), big, no),
        Err(KMeansError::InvalidParameter(m)) if m.contains("not on the library path")
    ));
    // The error bound's unit: float's and double's own on CUDA cores, wider on tensor cores.
    assert_eq!(Engine::Simt.unit::<f32>(), 2f64.powi(-24));
    assert_eq!(Engine::Simt.unit::<f64>(), 2f64.powi(-53));
    assert_eq!(Engine::Blas.unit::<f32>(), 2f64.powi(-24));
    assert_eq!(Engine::Blas.unit::<f64>(), 2f64.powi(-53));
    assert_eq!(Engine::TensorCores.unit::<f32>(), 2f64.powi(-21));
    assert_eq!(Engine::TensorCores.unit::<f64>(), 2f64.powi(-52));
}
