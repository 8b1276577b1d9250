//! Time per iteration of the seed's small k-means fits (the quick sizes of `kmeans-vary-n`,
//! `kmeans-vary-d` and `kmeans-vary-k`), as `warpath reproduce` times them: the whole fit
//! (checks, random initial centroids, iterations, final labels) of `seed_kmeans(k, r)` on
//! `two_clusters(n, d, 2016)`, divided by its iteration count.
//!
//! `cargo run --release -p clustering --example seed_small -- [REPEATS] [SHAPES] [BACKENDS]
//! [ALGORITHM]`
//!
//! Prints one line per fit, `n d k backend run seconds iterations inertia`, so that two builds
//! run alternately can be compared fit by fit (`crates/clustering/scripts/seed_small_vs.sh`
//! does that). `SHAPES` is `all` (default) or `n,d,k[;n,d,k...]`; `BACKENDS` (default
//! `cpu,rayon-1-thread,rayon`) picks the backends, `ALGORITHM` (default `auto`) the assignment
//! algorithm.

use std::time::Instant;

use clustering::data::two_clusters;
use clustering::experiments::seed_kmeans;
use gpu_runtime::Exec;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let repeats: usize = a.first().and_then(|s| s.parse().ok()).unwrap_or(5);
    let shapes: Vec<(usize, usize, usize)> = match a.get(1).map(String::as_str) {
        None | Some("all") => {
            let mut v: Vec<_> = (1..=5).map(|p| (10usize.pow(p), 2, 2)).collect();
            v.extend([8, 32, 128].map(|d| (10_000, d, 2)));
            v.extend([8, 32, 128].map(|k| (10_000, 2, k)));
            v
        }
        Some(s) => s
            .split(';')
            .map(|t| {
                let f: Vec<usize> = t.split(',').map(|x| x.parse().expect("n,d,k")).collect();
                (f[0], f[1], f[2])
            })
            .collect(),
    };
    let backends: Vec<String> = a
        .get(2)
        .map_or("cpu,rayon-1-thread,rayon", String::as_str)
        .split(',')
        .map(String::from)
        .collect();
    let algorithm: clustering::Algorithm = a
        .get(3)
        .map_or("auto", String::as_str)
        .parse()
        .expect("algorithm");
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    for (n, d, k) in shapes {
        let blobs = two_clusters(n, d, 2016);
        let x = blobs.data.view();
        for backend in backends.iter().map(String::as_str) {
            for r in 0..repeats {
                let p = seed_kmeans(k, r as u64).algorithm(algorithm);
                let t = Instant::now();
                let fit = match backend {
                    "cpu" => p.fit_reference(x, None),
                    "rayon-1-thread" => one.install(|| p.exec(Exec::Cpu).fit(x)),
                    _ => p.exec(Exec::Cpu).fit(x),
                }
                .expect("fit");
                let s = t.elapsed().as_secs_f64();
                println!(
                    "{n} {d} {k} {backend} {r} {s:.9} {} {:.17e}",
                    fit.iterations, fit.inertia
                );
            }
        }
    }
}
