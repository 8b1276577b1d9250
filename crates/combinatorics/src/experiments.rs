//! The seeds' experiments of this crate, for `warpath reproduce` (see `warpath_report`).
//!
//! - `debruijn-pin` (seed 000): a De Bruijn sequence over the ten digits that contains every
//!   4-digit PIN, built both ways (FKM and an Euler circuit), every PIN found in it.
//! - `perm-11` (seed 001): all 11! = 39,916,800 permutations of 11 elements with 0, 1 and 9
//!   `next_permutation` steps per unrank (the seed's versions 1, 2 and 3), CPU and GPU.
//! - `perm-12` (seed 001): all 12! = 479,001,600 permutations of 12 elements in 12 batches
//!   of 11! (5.7 GB in all, one batch in memory at a time).

use std::time::Instant;

use gpu_runtime::{Exec, Gpu};
use warpath_report::{Context, Experiment, ExperimentError, FigureSpec, GpuUse, Row, Spec, median};

use crate::{
    BatchOptions, Construction, PermError, de_bruijn, de_bruijn_linear, factorial_u64,
    find_in_de_bruijn, permutations_into_device, permutations_into_with, rank_permutation,
    verify_de_bruijn,
};

/// This crate's experiments, in the order of the seeds.
pub fn specs() -> Vec<Spec> {
    vec![
        Spec {
            id: "debruijn-pin",
            seed: "000",
            title: "the 4-digit PIN De Bruijn sequence: every PIN in 10,003 key presses",
            run: debruijn_pin,
        },
        Spec {
            id: "perm-11",
            seed: "001",
            title: PERM11_TITLE,
            run: perm_11,
        },
        Spec {
            id: "perm-12",
            seed: "001",
            title: PERM12_TITLE,
            run: perm_12,
        },
    ]
}

fn fail(what: &str) -> impl Fn(crate::DeBruijnError) -> ExperimentError + '_ {
    move |e| ExperimentError::from_display(what, e)
}

/// `debruijn-pin`: `B(10, 4)` by FKM and by an Euler circuit of the De Bruijn graph (on the
/// GPU too where one is usable), each verified (every 4-digit word once) and every one of the
/// 10,000 PINs located in its linear form.
///
/// # Errors
/// A construction failing (none is expected for `B(10, 4)`).
pub fn debruijn_pin(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let (k, n) = (10usize, 4usize);
    let mut e = Experiment::new(
        "debruijn-pin",
        "000",
        "the 4-digit PIN De Bruijn sequence: every PIN in 10,003 key presses",
    );
    e.seed_says = "A device unlocked by any 4-digit PIN punched as a contiguous subsequence: a \
                   De Bruijn sequence of 10,000 symbols (cyclic) yields the PIN in at most \
                   10,000 punches instead of 40,000 for trying the PINs one by one."
        .into();
    e.seed_rows.push(
        Row::new()
            .with("construction", "seed")
            .with("cyclic_length", 10_000)
            .with("naive_presses", 40_000),
    );
    e.notes.push(
        "A keypad is not cyclic: the linear sequence repeats the first 3 digits at the end, \
         10,003 presses (the seed counts the cyclic 10,000)."
            .into(),
    );
    let mut runs = vec![("fkm", Construction::Fkm, Exec::Cpu, false)];
    runs.push(("euler", Construction::Euler, Exec::Cpu, false));
    if ctx.gpu_rows() {
        runs.push(("euler", Construction::Euler, Exec::Cuda, true));
    }
    for (name, construction, exec, gpu) in runs {
        ctx.progress(&format!("B(10, 4) by {name}"));
        let t = Instant::now();
        let seq = match (construction, exec) {
            (Construction::Euler, Exec::Cuda) => {
                crate::de_bruijn_euler_with(k, n, Exec::Cuda)
                    .map_err(fail("the Euler construction on the GPU"))?
                    .0
            }
            _ => de_bruijn(k, n, construction).map_err(fail("the De Bruijn sequence"))?,
        };
        let seconds = t.elapsed().as_secs_f64();
        let verified = verify_de_bruijn(&seq, k, n).map_err(fail("verifying"))?;
        let linear = de_bruijn_linear(&seq, n);
        let mut found = 0usize;
        let mut last_press = 0usize;
        for pin in 0..10_000u32 {
            let word = [pin / 1000, pin / 100 % 10, pin / 10 % 10, pin % 10].map(|d| d as u8);
            if let Some(p) = find_in_de_bruijn(&seq, k, &word).map_err(fail("finding a PIN"))? {
                found += 1;
                last_press = last_press.max(p + n);
            }
        }
        let row = Row::new()
            .with("construction", name)
            .with("cyclic_length", seq.len())
            .with("presses", linear.len())
            .with("pins_found", found)
            .with("worst_case_presses", last_press)
            .with("naive_presses", 40_000)
            .with("verified", verified && found == 10_000);
        let row = if gpu {
            row.on_gpu(ctx)
        } else {
            row.with("backend", "cpu")
        };
        e.rows.push(row.secs("seconds", seconds));
    }
    Ok(e)
}

const PERM11_TITLE: &str =
    "all 11! permutations of 11 elements: 0, 1 and 9 next_permutation steps per unrank";
const PERM12_TITLE: &str = "all 12! permutations of 12 elements in 12 batches of 11!";

fn perm_fail(what: &str) -> impl Fn(PermError) -> ExperimentError + '_ {
    move |e| ExperimentError::from_display(what, e)
}

/// Whether `buf` holds consecutive lexicographic permutations of `0..n` with ranks
/// `[first, first + buf.len() / n)`: every row a permutation, each greater than the one
/// before, the ends of the expected ranks (an independent check of the generator).
fn consecutive_from(n: usize, buf: &[u8], first: u64) -> bool {
    let count = (buf.len() / n) as u64;
    if count == 0 {
        return true;
    }
    crate::lexicographic_rows(n, buf, None)
        && rank_permutation(&buf[..n]).ok() == Some(first)
        && rank_permutation(&buf[buf.len() - n..]).ok() == Some(first + count - 1)
}

/// The GPU situation: the device, and whether it is the simulator.
fn gpu_of(ctx: &Context) -> Result<Option<(&'static Gpu, bool)>, ExperimentError> {
    if !ctx.gpu_rows() {
        return Ok(None);
    }
    let gpu = gpu_runtime::gpu().map_err(|e| ExperimentError::from_display("the GPU", e))?;
    Ok(Some((gpu, ctx.gpu == GpuUse::Simulated)))
}

/// Kernel time (device events, median of `reps`) of the batch `[start, start + count)` into a
/// device buffer, then the same batch downloaded to `host` (wall time of
/// `permutations_into_with`, kernel and download, median of `reps`).
fn gpu_batch_times(
    gpu: &Gpu,
    n: usize,
    start: u64,
    count: u64,
    options: &BatchOptions,
    reps: usize,
    host: &mut [u8],
) -> Result<(f64, f64), ExperimentError> {
    let mut d = gpu
        .alloc_zeros::<u8>(count as usize * n)
        .map_err(|e| ExperimentError::from_display("the device buffer", e))?;
    let mut kernel = Vec::new();
    for _ in 0..reps.max(1) {
        let timer = gpu
            .timer()
            .map_err(|e| ExperimentError::from_display("a GPU timer", e))?;
        permutations_into_device(gpu, n, start, count, &mut d, options)
            .map_err(perm_fail("the GPU batch"))?;
        kernel.push(
            timer
                .stop()
                .map_err(|e| ExperimentError::from_display("the GPU batch", e))?,
        );
    }
    drop(d);
    let mut with_download = Vec::new();
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        permutations_into_with(n, start, count, host, Exec::Cuda, options)
            .map_err(perm_fail("the GPU batch with its download"))?;
        with_download.push(t.elapsed().as_secs_f64());
    }
    Ok((median(&mut kernel), median(&mut with_download)))
}

/// The seed's step variants: (version, steps per unrank).
const SEED_VERSIONS: [(&str, u32); 3] = [("1", 0), ("2", 1), ("3", 9)];

/// `row` with the cells that name a run of `perm-11`: the version, its `next_permutation`
/// steps per unrank (none for the chunked CPU default), `n` and how many permutations.
fn perm_row(row: Row, version: &str, steps: Option<u32>, n: usize, permutations: u64) -> Row {
    row.with("version", version)
        .with("steps", steps)
        .with("n", n)
        .with("permutations", permutations)
}

/// `perm-11`: every permutation of `n` elements (11 in `--full`, 10 in `--quick`) with 0, 1
/// and 9 `next_permutation` steps per unrank (the seed's versions 1–3) and with the CPU's
/// default (one unrank per 32,768), on the CPU and, where usable, the GPU (kernel alone and
/// with the download); each result checked to be the `n!` permutations in order.
///
/// # Errors
/// A generation failing (none is expected), or the host buffer (439 MB at 11) not fitting.
pub fn perm_11(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let n = ctx.pick(10usize, 11);
    let reps = ctx.pick(3, 5);
    let mut e = Experiment::new("perm-11", "001", PERM11_TITLE);
    e.seed_says = "All 39,916,800 permutations of 11 elements (439,084,800 bytes, the most a \
                   1 GB GeForce 460 holds), average timings: CPU (i7 870, 8 threads, each \
                   unranking its first permutation and stepping std::next_permutation) 550 ms; \
                   version 1 (pure factorial decomposition) CUDA 550 ms, OpenCL 581 ms; \
                   version 2 (1 next_permutation per decomposition) CUDA 317 ms, OpenCL 373 ms; \
                   version 3 (9 per decomposition) CUDA 681 ms, OpenCL 456 ms. 2, 3 or 4 steps \
                   gave the lowest time, about 300 ms."
        .into();
    for (backend, version, steps, ms) in [
        ("cpu", "chunked", None, 550.0),
        ("cuda", "1", Some(0), 550.0),
        ("cuda", "2", Some(1), 317.0),
        ("cuda", "3", Some(9), 681.0),
        ("opencl", "1", Some(0), 581.0),
        ("opencl", "2", Some(1), 373.0),
        ("opencl", "3", Some(9), 456.0),
    ] {
        e.seed_rows.push(
            perm_row(
                Row::new().with("backend", backend),
                version,
                steps,
                11,
                39_916_800,
            )
            .with("seconds", ms / 1e3),
        );
    }
    e.notes.push(format!(
        "Ours on {} CPU threads (the seed's CPU had 8). The seed's versions are kept as \
         options: `warpath perm --n 11 --discard --steps S` (S = 0, 1, 9), on the CPU and the \
         GPU alike. `chunked` is our default CPU path: one unrank per 32,768 permutations, \
         the last four positions of each block of 24 from a table.",
        rayon::current_num_threads()
    ));
    e.notes.push(
        "GPU `seconds` is the kernel alone (device events), as the seed's kernel timings; \
         `with_download_seconds` adds the copy of the 439 MB to the host."
            .into(),
    );
    if n != 11 {
        e.notes.push(format!(
            "--quick: all {n}! permutations of {n} elements instead of 11!."
        ));
    }
    let total = factorial_u64(n).expect("n <= 20");
    let bytes = total as usize * n;
    let mut reference = Vec::new();
    reference
        .try_reserve_exact(bytes)
        .map_err(|_| ExperimentError(format!("{bytes} bytes of host memory for {n}!")))?;
    reference.resize(bytes, 0);
    let mut buf = vec![0u8; bytes];
    let mut variants: Vec<(&str, Option<u32>)> = vec![("chunked", None)];
    variants.extend(SEED_VERSIONS.iter().map(|&(v, s)| (v, Some(s))));
    for (i, &(version, steps)) in variants.iter().enumerate() {
        ctx.progress(&format!("{n}! on the CPU, version {version}"));
        let opts = steps.map(BatchOptions::with_steps).unwrap_or_default();
        let target = if i == 0 { &mut reference } else { &mut buf };
        let mut times = Vec::new();
        for _ in 0..reps {
            let t = Instant::now();
            permutations_into_with(n, 0, total, target, Exec::Cpu, &opts)
                .map_err(perm_fail("the CPU batch"))?;
            times.push(t.elapsed().as_secs_f64());
        }
        let verified = if i == 0 {
            consecutive_from(n, &reference, 0)
        } else {
            buf == reference
        };
        let seconds = median(&mut times);
        e.rows.push(
            perm_row(Row::new().with("backend", "cpu"), version, steps, n, total)
                .with("threads", rayon::current_num_threads())
                .secs("seconds", seconds)
                .with("m_perms_per_second", total as f64 / seconds / 1e6)
                .with("verified", verified),
        );
    }
    if let Some((gpu, simulated)) = gpu_of(ctx)? {
        // The simulator runs kernels on one CPU core: a small n there.
        let gn = if simulated { 7 } else { n };
        let gtotal = factorial_u64(gn).expect("n <= 20");
        let want = if gn == n {
            reference
        } else {
            let mut w = vec![0u8; gtotal as usize * gn];
            permutations_into_with(gn, 0, gtotal, &mut w, Exec::Cpu, &BatchOptions::default())
                .map_err(perm_fail("the CPU batch"))?;
            w
        };
        let mut host = vec![0u8; gtotal as usize * gn];
        let mut variants: Vec<(&str, u32)> = SEED_VERSIONS.to_vec();
        variants.push(("default", BatchOptions::default().gpu_steps_per_thread - 1));
        for (version, steps) in variants {
            ctx.progress(&format!("{gn}! on the GPU, version {version}"));
            let opts = BatchOptions::with_steps(steps);
            let (kernel, with_download) =
                gpu_batch_times(gpu, gn, 0, gtotal, &opts, reps, &mut host)?;
            e.rows.push(
                perm_row(Row::new(), version, Some(steps), gn, gtotal)
                    .on_gpu(ctx)
                    .secs("seconds", kernel)
                    .secs("with_download_seconds", with_download)
                    .with("verified", host == want),
            );
        }
    }
    e.figure = Some(
        FigureSpec::points("steps", &["seconds"])
            .title("all n! permutations: time against next_permutation steps per unrank")
            .series(&["backend"])
            .labels("next_permutation steps per unrank", "seconds"),
    );
    Ok(e)
}

/// `perm-12`: every permutation of `n` elements (12 in `--full`, 11 in `--quick`) in `n`
/// batches of `(n-1)!` (one batch in memory), timed per batch on the CPU and, where usable,
/// the GPU; every batch checked.
///
/// # Errors
/// A generation failing, or the batch buffer (479 MB at 12) not fitting.
pub fn perm_12(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let n = ctx.pick(11usize, 12);
    let mut e = Experiment::new("perm-12", "001", PERM12_TITLE);
    e.seed_says = "All 479,001,600 permutations of 12 elements (5,748,019,200 bytes) in 12 \
                   batches of 39,916,800 on a 1 GB GeForce 460: the first batch by factorial \
                   decomposition 649 ms, the other 11 by pure next_permutation 18-32 ms each, \
                   905 ms in all, against 6.5 s for the CPU version (i7 870, 8 threads): 7x."
        .into();
    let seed_later = [
        18.0, 29.0, 18.0, 29.0, 18.0, 32.0, 18.0, 28.0, 18.0, 29.0, 19.0,
    ];
    for (b, ms) in std::iter::once(649.0).chain(seed_later).enumerate() {
        e.seed_rows.push(
            Row::new()
                .with("backend", "cuda")
                .with("batch", b + 1)
                .with("seconds", ms / 1e3),
        );
    }
    for (backend, seconds) in [("cuda", 0.905), ("cpu", 6.5)] {
        e.seed_rows.push(
            Row::new()
                .with("backend", backend)
                .with("batch", "all")
                .with("seconds", seconds),
        );
    }
    e.notes.push(
        "Every batch of ours is generated from its own ranks (the CPU unranks once per \
         32,768 permutations, a GPU thread once per 4); the seed generated only its first \
         batch by unranking and the other 11 from the batch before by next_permutation, \
         which the seed does not publish in detail."
            .into(),
    );
    e.notes.push(format!(
        "Ours on {} CPU threads (the seed's CPU had 8). GPU `seconds` is the kernel alone \
         (device events); `with_download_seconds` adds the copy of the batch to the host.",
        rayon::current_num_threads()
    ));
    if n != 12 {
        e.notes.push(format!(
            "--quick: {n} batches of {}! permutations of {n} elements instead of 12 of 11!.",
            n - 1
        ));
    }
    let mut runs = vec![(n, false)];
    if let Some((_, simulated)) = gpu_of(ctx)? {
        runs.push((if simulated { 7 } else { n }, true));
    }
    for (n, on_gpu) in runs {
        let per = factorial_u64(n - 1).expect("n <= 20");
        let bytes = per as usize * n;
        let mut buf = Vec::new();
        buf.try_reserve_exact(bytes)
            .map_err(|_| ExperimentError(format!("{bytes} bytes of host memory")))?;
        buf.resize(bytes, 0);
        let mut total = 0.0;
        let mut total_dl = 0.0;
        let mut all_ok = true;
        for b in 0..n as u64 {
            ctx.progress(&format!(
                "{n}!: batch {} of {n} on the {}",
                b + 1,
                if on_gpu { "GPU" } else { "CPU" }
            ));
            let row = Row::new()
                .with("batch", b + 1)
                .with("n", n)
                .with("permutations", per);
            let row = if on_gpu {
                let (gpu, _) = gpu_of(ctx)?.expect("asked for above");
                let opts = BatchOptions::default();
                let (kernel, with_download) =
                    gpu_batch_times(gpu, n, b * per, per, &opts, 1, &mut buf)?;
                total += kernel;
                total_dl += with_download;
                row.on_gpu(ctx)
                    .secs("seconds", kernel)
                    .secs("with_download_seconds", with_download)
            } else {
                let t = Instant::now();
                permutations_into_with(n, b * per, per, &mut buf, Exec::Cpu, &Default::default())
                    .map_err(perm_fail("the CPU batch"))?;
                let s = t.elapsed().as_secs_f64();
                total += s;
                row.with("backend", "cpu").secs("seconds", s)
            };
            let ok = consecutive_from(n, &buf, b * per) && buf[0] == b as u8;
            all_ok &= ok;
            e.rows.push(row.with("verified", ok));
        }
        let row = Row::new()
            .with("batch", "all")
            .with("n", n)
            .with("permutations", per * n as u64);
        let row = if on_gpu {
            row.on_gpu(ctx)
                .secs("seconds", total)
                .secs("with_download_seconds", total_dl)
        } else {
            row.with("backend", "cpu").secs("seconds", total)
        };
        e.rows.push(row.with("verified", all_ok));
    }
    e.figure = Some(
        FigureSpec::lines("batch", &["seconds"])
            .title("time per batch of (n-1)! permutations")
            .series(&["backend"])
            .labels("batch", "seconds")
            .log(false, true),
    );
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpath_report::run_quick;

    #[test]
    fn pin_sequence_holds_every_pin_in_10003_presses() {
        let e = run_quick(debruijn_pin);
        assert_eq!(e.rows.len(), 2);
        for r in &e.rows {
            assert_eq!(r.get_f64("cyclic_length"), Some(10_000.0));
            assert_eq!(r.get_f64("presses"), Some(10_003.0));
            assert_eq!(r.get_f64("pins_found"), Some(10_000.0));
            assert_eq!(r.get_f64("worst_case_presses"), Some(10_003.0));
            assert_eq!(r.get("verified"), Some(&true.into()));
            assert_eq!(r.get_text("backend").as_deref(), Some("cpu"));
        }
        assert_eq!(specs()[0].id, e.id);
    }
}

#[cfg(test)]
mod perm_tests {
    use super::*;
    use warpath_report::run_quick;

    #[test]
    fn perm_11_quick_makes_every_permutation_with_every_step_count() {
        let e = run_quick(perm_11);
        let versions: Vec<String> = e
            .rows
            .iter()
            .filter_map(|r| r.get_text("version"))
            .collect();
        assert_eq!(versions, ["chunked", "1", "2", "3"]);
        for r in &e.rows {
            assert_eq!(r.get_f64("permutations"), Some(3_628_800.0));
            assert_eq!(r.get("verified"), Some(&true.into()), "{r:?}");
            assert!(r.get_f64("seconds").unwrap() > 0.0);
        }
        let steps: Vec<Option<f64>> = e.rows.iter().map(|r| r.get_f64("steps")).collect();
        assert_eq!(steps, [None, Some(0.0), Some(1.0), Some(9.0)]);
        // Unranking every permutation costs more than stepping from one in 32,768.
        assert!(e.rows[1].get_f64("seconds") > e.rows[0].get_f64("seconds"));
        assert_eq!(e.seed_rows.len(), 7);
        assert_eq!(specs()[1].id, e.id);
    }

    #[test]
    fn perm_12_quick_batches_cover_every_rank_once() {
        let e = run_quick(perm_12);
        assert_eq!(e.rows.len(), 12); // 11 batches of 10! and the total
        let per_batch: f64 = e.rows[..11]
            .iter()
            .map(|r| r.get_f64("permutations").unwrap())
            .sum();
        assert_eq!(per_batch, 39_916_800.0);
        let last = &e.rows[11];
        assert_eq!(last.get_text("batch").as_deref(), Some("all"));
        assert_eq!(last.get_f64("permutations"), Some(39_916_800.0));
        let sum: f64 = e.rows[..11]
            .iter()
            .map(|r| r.get_f64("seconds").unwrap())
            .sum();
        assert!((last.get_f64("seconds").unwrap() - sum).abs() < 1e-9);
        assert!(
            e.rows
                .iter()
                .all(|r| r.get("verified") == Some(&true.into()))
        );
    }

    #[test]
    fn the_check_rejects_wrong_batches() {
        let mut b = vec![0u8; 6 * 3];
        permutations_into_with(3, 0, 6, &mut b, Exec::Cpu, &Default::default()).unwrap();
        assert!(consecutive_from(3, &b, 0));
        assert!(!consecutive_from(3, &b, 1));
        b.swap(3, 4);
        assert!(!consecutive_from(3, &b, 0));
    }
}
