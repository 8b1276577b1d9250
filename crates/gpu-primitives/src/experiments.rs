//! The seeds' experiments of this crate, for `warpath reproduce` (see `warpath_report`).
//!
//! - `distinct-table` (seed 000): the distinct values of 2,097,152 to 300,000,000 integers in
//!   `[0, 1000)`, on the CPU and the GPU, beside the seed's table.
//! - `sort-chart` (seed 000): radix sort time against the number of keys (10M to 300M
//!   non-negative integers), CPU and GPU, beside the standard library's sort.

use std::collections::HashSet;
use std::time::Instant;

use gpu_runtime::Exec;
use rayon::prelude::*;
use warpath_report::{Context, Experiment, ExperimentError, FigureSpec, GpuUse, Row, Spec, median};

use crate::{distinct, radix_sort};

/// This crate's experiments, in the order of the seeds.
pub fn specs() -> Vec<Spec> {
    vec![
        Spec {
            id: "distinct-table",
            seed: "000",
            title: "distinct of 2M to 300M integers in [0, 1000), CPU and GPU",
            run: distinct_table,
        },
        Spec {
            id: "sort-chart",
            seed: "000",
            title: "radix sort time against keys (10M to 300M), CPU and GPU",
            run: sort_chart,
        },
    ]
}

/// SplitMix64 of `x`: the `i`-th draw of a seeded stream, whatever the thread count.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform draw in `[0, 1)` from 53 random bits.
fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// `n` integers uniform in `[0, range)`, seeded (the seed's `rnd.Next(0, 1000)`).
pub fn uniform_ints(n: usize, range: u32, seed: u64) -> Vec<i32> {
    (0..n)
        .into_par_iter()
        .map(|i| {
            (unit(splitmix64(
                seed ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93),
            )) * f64::from(range)) as i32
        })
        .collect()
}

/// `n` non-negative integers `|N(0, 1) * n|` (clamped to `i32::MAX`), seeded: the seed's test
/// data for its radix sort (normal floats times `n`, truncated, absolute value).
pub fn normal_ints(n: usize, seed: u64) -> Vec<i32> {
    let scale = n as f64;
    (0..n)
        .into_par_iter()
        .map(|i| {
            let h = splitmix64(seed ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93));
            // Box-Muller from two 32-bit halves.
            let u1 = ((h >> 32) as f64 + 1.0) / 4_294_967_297.0;
            let u2 = (h & 0xFFFF_FFFF) as f64 / 4_294_967_296.0;
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (z * scale).abs().min(f64::from(i32::MAX)) as i32
        })
        .collect()
}

fn fail<E: std::fmt::Display>(what: String) -> impl Fn(E) -> ExperimentError {
    move |e| ExperimentError::from_display(&what, e)
}

/// Median wall time of `reps` runs of `f` on a fresh copy of `input` (the copy untimed), and
/// the last output.
fn time_on_copy<T: Clone, R>(
    input: &[T],
    reps: usize,
    mut f: impl FnMut(&mut Vec<T>) -> Result<R, ExperimentError>,
) -> Result<(f64, Vec<T>, R), ExperimentError> {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..reps.max(1) {
        let mut v = input.to_vec();
        let t = Instant::now();
        let r = f(&mut v)?;
        times.push(t.elapsed().as_secs_f64());
        last = Some((v, r));
    }
    let (v, r) = last.expect("at least one run");
    Ok((median(&mut times), v, r))
}

/// The seed's distinct table: `(length, CPU seconds, GPU seconds)`.
const SEED_DISTINCT: [(u64, f64, f64); 4] = [
    (2_097_152, 0.026_277_6, 2.916_209_8),
    (26_214_400, 0.562_227_6, 3.229_821_8),
    (262_144_000, 3.871_243_7, 5.754_082_2),
    (300_000_000, 4.201_901_3, 6.772_842_4),
];

/// `distinct-table`: the distinct values of `n` integers uniform in `[0, 1000)` for the seed's
/// four lengths: a `HashSet` on one thread (what the seed's CPU column, .NET's `Array.distinct`,
/// does), [`distinct`] on the CPU (rayon) and on the GPU (keys uploaded, sorted and grouped on
/// the device, the distinct values downloaded). Every result is checked: the values
/// `0..1000`, sorted. Times are medians of 3 runs.
///
/// # Errors
/// The GPU failing, or a result that is not `0..1000`.
pub fn distinct_table(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "distinct-table",
        "000",
        "distinct of 2M to 300M integers in [0, 1000), CPU and GPU",
    );
    e.seed_says = "Length 2,097,152: CPU 0.026 s, GPU 2.92 s; 26,214,400: CPU 0.56 s, GPU 3.23 s; \
                   262,144,000: CPU 3.87 s, GPU 5.75 s; 300,000,000: CPU 4.20 s, GPU 6.77 s. \
                   \"There is a lot of latency in the Alea.CUDA scan\"; \"if it weren't for the \
                   latency, our GPU implementation would be faster\"."
        .into();
    for (n, cpu, gpu) in SEED_DISTINCT {
        for (backend, s) in [("cpu", cpu), ("cuda", gpu)] {
            e.seed_rows.push(
                Row::new()
                    .with("n", n)
                    .with("method", format!("seed {backend}"))
                    .with("backend", backend)
                    .with("seconds", s),
            );
        }
    }
    e.notes.push(
        "Our CPU `distinct` sees that the keys span a small range and counts them in \
         per-thread tables (no sort); the seed's CPU column is .NET's hash-based \
         `Array.distinct`, which the `hash set` rows reproduce (std `HashSet`, one thread). \
         The GPU row sorts on the device (Onesweep radix sort), flags group heads and \
         compacts them, as the seed's GPU algorithm (sort, flag, scan, scatter); its time \
         includes uploading the keys and downloading the 1,000 values. Keys are i32, as the \
         seed's `int`."
            .into(),
    );
    let sizes: Vec<usize> = ctx.pick(
        vec![2_097_152, 26_214_400],
        SEED_DISTINCT.iter().map(|s| s.0 as usize).collect(),
    );
    let reps = 3;
    let want: Vec<i32> = (0..1000).collect();
    let check = |what: String, v: &[i32]| {
        if v == want.as_slice() {
            Ok(())
        } else {
            Err(ExperimentError(format!(
                "{what}: {} distinct values, not 0..1000",
                v.len()
            )))
        }
    };
    let gpu = ctx.gpu_rows();
    let simulated = ctx.gpu == GpuUse::Simulated;
    if gpu {
        distinct(&uniform_ints(1 << 12, 1000, 1), Exec::Cuda)
            .map_err(fail("warming up the GPU".into()))?;
    }
    // On the simulated driver, one small GPU row (its times are not measured anyway).
    let mut gpu_sizes: Vec<usize> = if simulated {
        vec![1 << 16]
    } else {
        sizes.clone()
    };
    if !gpu {
        gpu_sizes.clear();
    }
    let mut all: Vec<usize> = sizes.clone();
    all.extend(gpu_sizes.iter().filter(|n| !sizes.contains(n)));
    all.sort_unstable();
    for n in all {
        ctx.progress(&format!("distinct-table: {n} keys"));
        let keys = uniform_ints(n, 1000, 26);
        let row = |method: &str| Row::new().with("n", n).with("method", method);
        if sizes.contains(&n) {
            let mut times = Vec::new();
            let mut set = HashSet::new();
            for _ in 0..reps {
                let t = Instant::now();
                set = keys.iter().copied().collect::<HashSet<i32>>();
                times.push(t.elapsed().as_secs_f64());
            }
            let mut v: Vec<i32> = set.into_iter().collect();
            v.sort_unstable();
            check(format!("hash set at {n}"), &v)?;
            e.rows.push(
                row("hash set")
                    .with("backend", "cpu")
                    .with("threads", 1)
                    .secs("seconds", median(&mut times))
                    .with("distinct", v.len()),
            );
            let mut times = Vec::new();
            let mut v = Vec::new();
            for _ in 0..reps {
                let t = Instant::now();
                v = distinct(&keys, Exec::Cpu).map_err(fail(format!("distinct at {n}")))?;
                times.push(t.elapsed().as_secs_f64());
            }
            check(format!("distinct at {n}"), &v)?;
            e.rows.push(
                row("distinct")
                    .with("backend", "rayon")
                    .with("threads", rayon::current_num_threads())
                    .secs("seconds", median(&mut times))
                    .with("distinct", v.len()),
            );
        }
        if gpu_sizes.contains(&n) {
            let mut times = Vec::new();
            let mut v = Vec::new();
            for _ in 0..if simulated { 1 } else { reps } {
                let t = Instant::now();
                v = distinct(&keys, Exec::Cuda)
                    .map_err(fail(format!("distinct on the GPU at {n}")))?;
                times.push(t.elapsed().as_secs_f64());
            }
            check(format!("GPU distinct at {n}"), &v)?;
            e.rows.push(
                row("distinct")
                    .on_gpu(ctx)
                    .secs("seconds", median(&mut times))
                    .with("distinct", v.len()),
            );
        }
    }
    e.figure = Some(
        FigureSpec::lines("n", &["seconds"])
            .title("distinct of n integers in [0, 1000)")
            .series(&["method", "backend"])
            .log(true, true)
            .labels("values", "seconds"),
    );
    Ok(e)
}

/// `sort-chart`: sort time against the number of keys, non-negative integers `|N(0,1) * n|`
/// (the seed's data): [`radix_sort`] on the CPU (rayon) and on the GPU (upload, sort,
/// download), and the standard library's `sort_unstable` on one thread (the seed compared
/// with F#'s `Array.sort`). Every result is checked sorted and equal to the others. Medians
/// of 3 runs, each on a fresh copy.
///
/// # Errors
/// The GPU failing, or a result out of order.
pub fn sort_chart(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "sort-chart",
        "000",
        "radix sort time against keys (10M to 300M), CPU and GPU",
    );
    e.seed_says = "A GPU radix sort (split by one bit per pass, scans from Alea.CUDA) \
                   \"performance tested on large datasets (10,000,000 - 300,000,000) integers, \
                   any more and I'm out of memory on my 6 Gb Titan GPU. The chart below goes up \
                   to 100,000,000.\" The chart (not in the text, so no seed numbers here) \
                   compared it with F#'s Array.sort and showed \"a lot of latency in our GPU \
                   implementation\"."
        .into();
    e.notes.push(
        "Data: |N(0, 1) * n| truncated to i32, as the seed's generator (ours seeded SplitMix64 \
         with Box-Muller instead of Alea.CUDA's XorShift7). Our radix sort is LSD with 8-bit \
         digits on the CPU (or, on AVX-512 machines, a vectorized quicksort: the `cpu_algorithm` \
         column says which ran), Onesweep on the GPU; the seed's splits one bit per \
         pass for bitCount(max) passes. The GPU time includes the upload and the download."
            .into(),
    );
    let sizes: Vec<usize> = ctx.pick(
        vec![1_000_000, 10_000_000],
        vec![10_000_000, 30_000_000, 100_000_000, 300_000_000],
    );
    let reps = 3;
    let gpu = ctx.gpu_rows();
    let simulated = ctx.gpu == GpuUse::Simulated;
    if gpu {
        let mut w = normal_ints(1 << 12, 1);
        radix_sort(&mut w, Exec::Cuda).map_err(fail("warming up the GPU".into()))?;
    }
    let mut all = sizes.clone();
    if gpu && simulated {
        all.insert(0, 1 << 16);
    }
    for n in all {
        ctx.progress(&format!("sort-chart: {n} keys"));
        let keys = normal_ints(n, 7);
        let cpu_rows = sizes.contains(&n);
        let row = |method: &str| Row::new().with("n", n).with("method", method);
        let mut reference: Option<Vec<i32>> = None;
        let mut check = |what: &str, v: Vec<i32>| -> Result<(), ExperimentError> {
            if !v.windows(2).all(|w| w[0] <= w[1]) {
                return Err(ExperimentError(format!("{what} at {n}: not sorted")));
            }
            match &reference {
                Some(r) if *r != v => Err(ExperimentError(format!("{what} at {n}: differs"))),
                Some(_) => Ok(()),
                None => {
                    reference = Some(v);
                    Ok(())
                }
            }
        };
        if cpu_rows {
            let (s, v, _) = time_on_copy(&keys, reps, |v| {
                v.sort_unstable();
                Ok(())
            })?;
            check("sort_unstable", v)?;
            e.rows.push(
                row("std sort_unstable")
                    .with("backend", "cpu")
                    .with("threads", 1)
                    .secs("seconds", s),
            );
            let (s, v, _) = time_on_copy(&keys, reps, |v| {
                radix_sort(v, Exec::Cpu).map_err(fail(format!("radix_sort at {n}")))
            })?;
            check("radix_sort", v)?;
            let algorithm = if crate::simd_sort::available() {
                "avx-512 quicksort"
            } else {
                "lsd radix"
            };
            e.rows.push(
                row("radix_sort")
                    .with("backend", "rayon")
                    .with("cpu_algorithm", algorithm)
                    .with("threads", rayon::current_num_threads())
                    .secs("seconds", s),
            );
            if crate::simd_sort::available() {
                // The LSD radix sort itself (what the seed's chart is about), on the keys' bits:
                // they are non-negative, so their u32 order is their i32 order.
                let bits: Vec<u32> = keys.iter().map(|&k| k as u32).collect();
                let (s, v, _) = time_on_copy(&bits, reps, |v| {
                    let mut unit_values = vec![(); v.len()];
                    crate::radix_cpu::sort_bits(v, &mut unit_values);
                    Ok(())
                })?;
                check("lsd radix", v.into_iter().map(|k| k as i32).collect())?;
                e.rows.push(
                    row("radix_sort")
                        .with("backend", "rayon")
                        .with("cpu_algorithm", "lsd radix")
                        .with("threads", rayon::current_num_threads())
                        .secs("seconds", s),
                );
            }
        }
        if gpu && (!simulated || !cpu_rows) {
            let (s, v, _) = time_on_copy(&keys, if simulated { 1 } else { reps }, |v| {
                radix_sort(v, Exec::Cuda).map_err(fail(format!("radix_sort on the GPU at {n}")))
            })?;
            check("GPU radix_sort", v)?;
            e.rows
                .push(row("radix_sort").on_gpu(ctx).secs("seconds", s));
        }
    }
    for r in &mut e.rows {
        if let (Some(n), Some(s)) = (r.get_f64("n"), r.get_f64("seconds")) {
            r.set("m_keys_per_second", n / s.max(1e-12) / 1e6);
        }
    }
    e.figure = Some(
        FigureSpec::lines("n", &["seconds"])
            .title("sort time against keys (|N(0,1) n| as i32)")
            .series(&["method", "backend", "cpu_algorithm"])
            .log(true, true)
            .labels("keys", "seconds"),
    );
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpath_report::Size;

    #[test]
    fn data_generators_have_the_seeds_distributions() {
        let u = uniform_ints(200_000, 1000, 3);
        assert!(u.iter().all(|&x| (0..1000).contains(&x)));
        let mean = u.iter().map(|&x| f64::from(x)).sum::<f64>() / u.len() as f64;
        assert!((mean - 499.5).abs() < 3.0, "{mean}");
        assert_eq!(u, uniform_ints(200_000, 1000, 3));
        let n = 100_000;
        let g = normal_ints(n, 5);
        assert!(g.iter().all(|&x| x >= 0));
        // E|Z| = sqrt(2 / pi) for a standard normal.
        let mean = g.iter().map(|&x| f64::from(x)).sum::<f64>() / (n as f64 * n as f64);
        assert!(
            (mean - (2.0 / std::f64::consts::PI).sqrt()).abs() < 0.01,
            "{mean}"
        );
    }

    #[test]
    fn distinct_table_quick_finds_the_1000_values() {
        let e = distinct_table(&Context::new(Size::Quick)).unwrap();
        // 2 sizes x (hash set, distinct).
        assert_eq!(e.rows.len(), 4);
        for r in &e.rows {
            assert_eq!(r.get_f64("distinct"), Some(1000.0));
            assert!(r.get_f64("seconds").unwrap() > 0.0);
        }
        assert_eq!(e.seed_rows.len(), 8);
        assert_eq!(specs()[0].id, e.id);
    }

    #[test]
    fn sort_chart_quick_sorts_with_every_method() {
        let e = sort_chart(&Context::new(Size::Quick)).unwrap();
        // 2 sizes x (std, radix_sort, and the LSD radix apart where radix_sort is vectorized).
        let per_size = if crate::simd_sort::available() { 3 } else { 2 };
        assert_eq!(e.rows.len(), 2 * per_size);
        for r in &e.rows {
            let (n, s) = (r.get_f64("n").unwrap(), r.get_f64("seconds").unwrap());
            assert!(s > 0.0);
            assert!((r.get_f64("m_keys_per_second").unwrap() - n / s / 1e6).abs() < 1e-6 * n / s);
        }
    }
}
