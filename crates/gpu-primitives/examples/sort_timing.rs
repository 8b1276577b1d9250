//! Times u32 sorts of N random keys in one run: `slice::sort_unstable`, rayon's
//! `par_sort_unstable` and `radix_sort` on the CPU (and on the GPU when there is one).
//!
//! `cargo run --release -p gpu-primitives --example sort_timing -- [N] [repeats]`
//! (default N = 10^7, 3 repeats; the best time of each is printed).

use std::time::Instant;

use gpu_primitives::{Exec, radix_sort};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

/// CPU seconds used by the whole process so far (all threads): on a loaded machine this is
/// steadier than wall time for comparing the work algorithms do.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn best(repeats: usize, data: &[u32], mut f: impl FnMut(&mut Vec<u32>)) -> f64 {
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    for _ in 0..repeats {
        let mut v = data.to_vec();
        let t = Instant::now();
        let c = cpu_seconds();
        f(&mut v);
        best = best.min(t.elapsed().as_secs_f64());
        best_cpu = best_cpu.min(cpu_seconds() - c);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }
    print!("(cpu time {best_cpu:.3} s) ");
    best
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let data: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    println!(
        "u32 sort of {n} random keys, {} rayon threads, best of {repeats}",
        rayon::current_num_threads()
    );
    let mut sorted = data.clone();
    sorted.sort_unstable();
    let t_copy = best(repeats, &sorted, |v| {
        let w = std::hint::black_box(v.clone());
        v.copy_from_slice(std::hint::black_box(&w));
    });
    println!("memory baseline: clone + copy (4n bytes moved twice) {t_copy:8.3} s");
    let t_std = best(repeats, &data, |v| v.sort_unstable());
    println!(
        "slice::sort_unstable      {t_std:8.3} s  {:7.1} M keys/s",
        n as f64 / t_std / 1e6
    );
    let t_par = best(repeats, &data, |v| v.par_sort_unstable());
    println!(
        "rayon par_sort_unstable   {t_par:8.3} s  {:7.1} M keys/s",
        n as f64 / t_par / 1e6
    );
    let t_rad = best(repeats, &data, |v| {
        radix_sort(v, Exec::Cpu).unwrap();
    });
    println!(
        "gpu_primitives radix_sort {t_rad:8.3} s  {:7.1} M keys/s",
        n as f64 / t_rad / 1e6
    );
    println!(
        "speed-up: {:.2}x sort_unstable, {:.2}x par_sort_unstable",
        t_std / t_rad,
        t_par / t_rad
    );
    if gpu_runtime::gpu().is_ok() {
        let t_gpu = best(repeats, &data, |v| {
            radix_sort(v, Exec::Cuda).unwrap();
        });
        println!("radix_sort on the GPU (with transfers) {t_gpu:8.3} s");
    }
}
