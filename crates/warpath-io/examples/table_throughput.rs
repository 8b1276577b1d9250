//! Throughput of the numeric-table reader: MB/s on generated tables, one thread and all.
//!
//! `cargo run --release -p warpath-io --example table_throughput [MB] [reps]`

use std::time::Instant;

use warpath_io::{Header, TableOptions, parse_table};

fn table(mb: usize, cols: usize, float: bool) -> Vec<u8> {
    let mut s = Vec::with_capacity(mb << 20);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while s.len() < mb << 20 {
        for c in 0..cols {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if c > 0 {
                s.push(b',');
            }
            if float {
                let v = (x >> 11) as f64 / (1u64 << 53) as f64 * 2000.0 - 1000.0;
                s.extend_from_slice(format!("{v:.6}").as_bytes());
            } else {
                s.extend_from_slice((x >> 34).to_string().as_bytes());
            }
        }
        s.push(b'\n');
    }
    s
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mb: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let opts = TableOptions {
        header: Header::Absent,
        ..TableOptions::default()
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let threads = rayon::current_num_threads();
    println!("{mb} MB per table, median of {reps}; {threads} threads available");
    for (name, cols, float) in [
        ("u64, 1 column", 1, false),
        ("u64, 8 columns", 8, false),
        ("f64, 1 column", 1, true),
        ("f64, 8 columns", 8, true),
    ] {
        let text = table(mb, cols, float);
        let mut single = Vec::new();
        let mut all = Vec::new();
        for _ in 0..reps {
            // Alternate the contenders so that a noisy neighbour hits both alike.
            let t = Instant::now();
            let n = one.install(|| {
                if float {
                    parse_table::<f64>(&text, &opts).expect("table").data.len()
                } else {
                    parse_table::<u64>(&text, &opts).expect("table").data.len()
                }
            });
            single.push(text.len() as f64 / t.elapsed().as_secs_f64() / 1e6);
            let t = Instant::now();
            let m = if float {
                parse_table::<f64>(&text, &opts).expect("table").data.len()
            } else {
                parse_table::<u64>(&text, &opts).expect("table").data.len()
            };
            all.push(text.len() as f64 / t.elapsed().as_secs_f64() / 1e6);
            assert_eq!(n, m);
        }
        println!(
            "{name:<16} 1 thread {:>7.0} MB/s   {threads} threads {:>7.0} MB/s",
            median(single),
            median(all)
        );
    }
}
