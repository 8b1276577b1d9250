//! Times each CPU sort path on the same random unsigned keys: `slice::sort_unstable`, the LSD
//! radix sort and the vectorized quicksort (one thread, then all rayon threads).
//!
//! `cargo run --release -p gpu-primitives --example sort_paths -- [N] [repeats] [u32|u64]`
//! (`SORT_PATHS_ONLY_SIMD=1`: the vectorized quicksort only, e.g. under `perf record`)

use std::time::Instant;

use gpu_primitives::__paths::{radix_sort_bits, simd_sort_bits, simd_sort_chunks};
use gpu_primitives::RadixBits;
use rand::{Rng, SeedableRng};

mod support;

fn best<B: Copy>(repeats: usize, data: &[B], mut f: impl FnMut(&mut [B])) -> (f64, f64) {
    let mut times = Vec::new();
    let mut v = data.to_vec();
    for _ in 0..repeats {
        v.copy_from_slice(data);
        let t = Instant::now();
        f(&mut v);
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    (times[0], times[times.len() / 2])
}

fn run<B: RadixBits>(data: &[B], repeats: usize) {
    let n = data.len();
    let mut expect = data.to_vec();
    expect.sort_unstable();
    let report = |name: &str, (b, m): (f64, f64)| {
        println!(
            "{name:28} best {:9.3} ms  median {:9.3} ms  {:6.2} ns/key",
            b * 1e3,
            m * 1e3,
            b / n as f64 * 1e9
        )
    };
    if std::env::var_os("SORT_PATHS_ONLY_SIMD").is_none() {
        report(
            "slice::sort_unstable",
            best(repeats, data, |v| v.sort_unstable()),
        );
        report("radix (LSD)", best(repeats, data, |v| radix_sort_bits(v)));
    }
    let l = 64 / size_of::<B>();
    for regs in [4, 8, 16] {
        let chunk = regs * l;
        if simd_sort_chunks(&mut data.to_vec(), chunk) {
            report(
                &format!("network, {regs} registers"),
                best(repeats, data, |v| {
                    simd_sort_chunks(v, chunk);
                }),
            );
        }
    }
    let mut check = data.to_vec();
    if simd_sort_bits(&mut check, false) {
        assert!(check == expect);
        report(
            "simd quicksort 1 thread",
            best(repeats, data, |v| {
                simd_sort_bits(v, false);
            }),
        );
        report(
            "simd quicksort all threads",
            best(repeats, data, |v| {
                simd_sort_bits(v, true);
            }),
        );
    }
}

fn main() {
    let (n, repeats, kind) = support::args(1_000_000, 5);
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    println!(
        "{kind} n = {n}, {} rayon threads",
        rayon::current_num_threads()
    );
    if kind == "u64" {
        let d: Vec<u64> = (0..n).map(|_| rng.random()).collect();
        run(&d, repeats);
    } else {
        let d: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        run(&d, repeats);
        let (b, _) = best(repeats, &d, |v| {
            gpu_primitives::__paths::simd_partition_u32(v, 1 << 31);
        });
        println!(
            "one partition at the median: {:.3} ns/key",
            b / n as f64 * 1e9
        );
    }
}
