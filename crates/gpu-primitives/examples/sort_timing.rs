//! Times sorts of N random keys in one run: `slice::sort_unstable`, rayon's
//! `par_sort_unstable` and `radix_sort` on the CPU (and on the GPU when there is one); for
//! float keys also `argsort` and `distinct`.
//!
//! `cargo run --release -p gpu-primitives --example sort_timing -- [N] [repeats] [type]`
//! (default N = 10^7, 3 repeats, type `u32`; `f32` and `f64` draw uniform values in
//! `[-1000, 1000)` rounded to 1/8, so they repeat, with 1% of them replaced by `-0.0`, `+0.0`
//! and NaNs of both signs; the best time of each is printed).

use std::time::Instant;

use gpu_primitives::{DistinctOptions, Exec, SortKey, argsort, distinct_with, radix_sort};
use gpu_runtime::cpu::process_cpu_seconds;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

mod support;

fn best<K: SortKey>(repeats: usize, data: &[K], mut f: impl FnMut(&mut Vec<K>)) -> f64 {
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    for _ in 0..repeats {
        let mut v = data.to_vec();
        let t = Instant::now();
        let c = process_cpu_seconds();
        f(&mut v);
        best = best.min(t.elapsed().as_secs_f64());
        best_cpu = best_cpu.min(process_cpu_seconds() - c);
    }
    print!("(cpu time {best_cpu:.3} s) ");
    best
}

fn is_sorted<K: SortKey>(v: &[K]) -> bool {
    v.windows(2).all(|w| w[0].to_ordered() <= w[1].to_ordered())
}

/// Best time of `radix_sort` on the CPU, printed.
fn time_radix_sort<K: SortKey>(data: &[K], repeats: usize) -> f64 {
    let t = best(repeats, data, |v| {
        radix_sort(v, Exec::Cpu).unwrap();
        assert!(is_sorted(v));
    });
    println!(
        "gpu_primitives radix_sort {t:8.3} s  {:7.1} M keys/s",
        data.len() as f64 / t / 1e6
    );
    t
}

fn time_u32(data: &[u32], repeats: usize) {
    let n = data.len();
    println!(
        "u32 sort of {n} random keys, {} rayon threads, best of {repeats}",
        rayon::current_num_threads()
    );
    let mut sorted = data.to_vec();
    sorted.sort_unstable();
    let t_copy = best(repeats, &sorted, |v| {
        let w = std::hint::black_box(v.clone());
        v.copy_from_slice(std::hint::black_box(&w));
    });
    println!("memory baseline: clone + copy (4n bytes moved twice) {t_copy:8.3} s");
    let t_std = best(repeats, data, |v| v.sort_unstable());
    println!(
        "slice::sort_unstable      {t_std:8.3} s  {:7.1} M keys/s",
        n as f64 / t_std / 1e6
    );
    let t_par = best(repeats, data, |v| v.par_sort_unstable());
    println!(
        "rayon par_sort_unstable   {t_par:8.3} s  {:7.1} M keys/s",
        n as f64 / t_par / 1e6
    );
    let t_rad = time_radix_sort(data, repeats);
    println!(
        "speed-up: {:.2}x sort_unstable, {:.2}x par_sort_unstable",
        t_std / t_rad,
        t_par / t_rad
    );
    if gpu_runtime::gpu().is_ok() {
        let t_gpu = best(repeats, data, |v| {
            radix_sort(v, Exec::Cuda).unwrap();
        });
        println!("radix_sort on the GPU (with transfers) {t_gpu:8.3} s");
    }
}

fn time_float<K: SortKey>(data: &[K], repeats: usize) {
    let n = data.len();
    println!(
        "{} sort of {n} keys with repeats, signed zeros and NaNs, {} rayon threads, best of {repeats}",
        K::NAME,
        rayon::current_num_threads()
    );
    let t_std = best(repeats, data, |v| {
        v.sort_unstable_by_key(|k| k.to_ordered())
    });
    println!(
        "sort_unstable_by_key      {t_std:8.3} s  {:7.1} M keys/s",
        n as f64 / t_std / 1e6
    );
    let t_rad = time_radix_sort(data, repeats);
    println!("speed-up: {:.2}x sort_unstable_by_key", t_std / t_rad);
    let t_arg = best(repeats, data, |v| {
        std::hint::black_box(argsort(v, Exec::Cpu).unwrap());
    });
    println!(
        "argsort                   {t_arg:8.3} s  {:7.1} M keys/s",
        n as f64 / t_arg / 1e6
    );
    let mut groups = 0;
    let t_dis = best(repeats, data, |v| {
        groups = distinct_with(v, DistinctOptions::default(), Exec::Cpu)
            .unwrap()
            .values
            .len();
    });
    println!(
        "distinct ({groups} values)    {t_dis:8.3} s  {:7.1} M keys/s",
        n as f64 / t_dis / 1e6
    );
}

/// Uniform values on a 1/8 grid in [-1000, 1000), 1% replaced by signed zeros and NaNs.
fn floats(n: usize, rng: &mut impl Rng) -> Vec<f64> {
    let specials = [
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7FF0_0000_0000_0001),
    ];
    (0..n)
        .map(|_| {
            if rng.random_range(0..100) == 0 {
                specials[rng.random_range(0..specials.len())]
            } else {
                (rng.random_range(-8000..8000) as f64) / 8.0
            }
        })
        .collect()
}

fn main() {
    let (n, repeats, kind) = support::args(10_000_000, 3);
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    match kind.as_str() {
        "f64" => time_float(&floats(n, &mut rng), repeats),
        "f32" => {
            let v: Vec<f32> = floats(n, &mut rng).into_iter().map(|x| x as f32).collect();
            time_float(&v, repeats)
        }
        _ => {
            let data: Vec<u32> = (0..n).map(|_| rng.random()).collect();
            time_u32(&data, repeats)
        }
    }
}
