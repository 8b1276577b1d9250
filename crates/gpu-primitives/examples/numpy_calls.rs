//! Times the calls behind `warpath.sort`, `warpath.argsort` and `warpath.unique` (`sort_into`,
//! `argsort_into`, `distinct`) on the inputs of the Python benchmark (`sort_grid.py`):
//! integers uniform over the type, floats standard normal with 1% NaN (both signs) and 1%
//! signed zeros. Best and median of `repeats` calls, in ns per key.
//!
//! `cargo run --release -p gpu-primitives --example numpy_calls -- [N] [repeats] [types] [ops]`
//! (default N = 1000, 2000 repeats, types `u32,u64,i64,f32,f64`, ops `sort,argsort,unique`)

use std::mem::MaybeUninit;
use std::time::Instant;

use gpu_primitives::{Exec, SortKey, argsort_into, distinct, sort_into};
use rand::{Rng, SeedableRng};

fn time(repeats: usize, n: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut t: Vec<f64> = (0..repeats)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[0] / n as f64 * 1e9, t[t.len() / 2] / n as f64 * 1e9)
}

fn run<K: SortKey>(keys: &[K], repeats: usize, ops: &[&str]) {
    let n = keys.len();
    let mut out = vec![MaybeUninit::<K>::uninit(); n];
    let mut idx = vec![MaybeUninit::<i64>::uninit(); n];
    for &op in ops {
        let (b, m) = match op {
            "sort" => time(repeats, n, || {
                sort_into(keys, &mut out, Exec::Cpu).unwrap();
            }),
            "argsort" => time(repeats, n, || {
                argsort_into(keys, &mut idx, Exec::Cpu).unwrap();
            }),
            "unique" => time(repeats, n, || {
                std::hint::black_box(distinct(keys, Exec::Cpu).unwrap());
            }),
            _ => panic!("unknown op {op}"),
        };
        println!(
            "{op:8} {:4} n = {n:>10}  best {b:7.3} ns/key  median {m:7.3} ns/key  ({:.3} us best)",
            K::NAME,
            b * n as f64 / 1e3
        );
    }
}

/// `n` keys uniform over the whole of `T`.
fn uniform<T>(n: usize, rng: &mut impl Rng) -> Vec<T>
where
    rand::distr::StandardUniform: rand::distr::Distribution<T>,
{
    (0..n).map(|_| rng.random()).collect()
}

fn floats(n: usize, rng: &mut impl Rng) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n)
        .map(|_| {
            // Box-Muller
            let (u, w): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * w).cos()
        })
        .collect();
    let k = (n / 100).max(1);
    if n >= 100 {
        for special in [f64::NAN, -f64::NAN, 0.0, -0.0] {
            for _ in 0..k {
                let i = rng.random_range(0..n);
                v[i] = special;
            }
        }
    }
    v
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .map_or(1000, |s| s.parse::<f64>().unwrap() as usize);
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let types = args.get(3).map_or("u32,u64,i64,f32,f64", String::as_str);
    let ops: Vec<&str> = args
        .get(4)
        .map_or("sort,argsort,unique", String::as_str)
        .split(',')
        .collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    println!("{} rayon threads", rayon::current_num_threads());
    for t in types.split(',') {
        match t {
            "u32" => run(&uniform::<u32>(n, &mut rng), repeats, &ops),
            "u64" => run(&uniform::<u64>(n, &mut rng), repeats, &ops),
            "i32" => run(&uniform::<i32>(n, &mut rng), repeats, &ops),
            "i64" => run(&uniform::<i64>(n, &mut rng), repeats, &ops),
            "f32" => run(
                &floats(n, &mut rng)
                    .into_iter()
                    .map(|x| x as f32)
                    .collect::<Vec<_>>(),
                repeats,
                &ops,
            ),
            "f64" => run(&floats(n, &mut rng), repeats, &ops),
            _ => panic!("unknown type {t}"),
        }
    }
}
