//! `warpath perm` (permutation batches, in `batches`, and `--search`, in `search`) and
//! `warpath debruijn` (in `debruijn`), from combinatorics: one file per subcommand; here the
//! generated matrices `--search` and the demo share, and the rows of `warpath demo`.

use std::time::Instant;

use combinatorics::{
    Objective, de_bruijn_euler_with, de_bruijn_fkm, factorial_u64, generate_permutations,
    next_permutation, search_permutations, search_permutations_reference, verify_de_bruijn,
};
use gpu_runtime::{Backend, Exec};

use crate::report::{DemoRow, DemoSize, Rows};

mod batches;
mod debruijn;
mod search;

pub(crate) use batches::{Args, run};
pub(crate) use debruijn::{DeBruijnArgs, run_debruijn};

/// A seeded matrix of integers 0..1000 (SplitMix64); with `zero_diagonal`, a distance matrix.
fn generated_matrix(n: usize, seed: u64, zero_diagonal: bool) -> Vec<f64> {
    let mut s = seed;
    (0..n * n)
        .map(|i| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            if zero_diagonal && i / n == i % n {
                0.0
            } else {
                ((z ^ (z >> 31)) % 1000) as f64
            }
        })
        .collect()
}

/// Demo rows: batches, search, De Bruijn, on the CPU and (when present) the GPU.
pub(crate) fn demo(size: DemoSize, rows: &mut Rows) {
    let (bn, sn, (dk, dn)) = match size {
        DemoSize::Small => (10usize, 9usize, (10usize, 6usize)),
        DemoSize::Large => (12, 11, (2, 24)),
    };
    let gpu = gpu_runtime::gpu().is_ok();
    let mut execs = vec![Exec::Cpu];
    if gpu {
        execs.push(Exec::Cuda);
    }

    // Batches: all n! permutations (Large: the first 2^26 of 12!), checked by stepping
    // next_permutation independently.
    let total = factorial_u64(bn).unwrap_or(0);
    let count = total.min(1 << 26);
    let name = format!("permutations n={bn}");
    for &exec in &execs {
        let t = Instant::now();
        match generate_permutations(bn, 0, count, exec) {
            Ok(v) => {
                let el = t.elapsed();
                let mut p: Vec<u8> = (0..bn as u8).collect();
                let ok = v.chunks_exact(bn).all(|row| {
                    let same = row == &p[..];
                    next_permutation(&mut p);
                    same
                });
                rows.push(
                    DemoRow::new(&name, count, backend_of(exec), el, ok).with_note(format!(
                        "{:.0} M perms/s",
                        count as f64 / el.as_secs_f64() / 1e6
                    )),
                );
            }
            Err(e) => rows.push(DemoRow::failed(&name, count, e)),
        }
    }

    // Search: assignment and tour over all n!, checked against the reference.
    let costs = generated_matrix(sn, 7, false);
    let dists = generated_matrix(sn, 8, true);
    for obj in [Objective::Assignment(&costs), Objective::Tour(&dists)] {
        let name = format!("permutation search ({}) n={sn}", obj.name());
        let want = search_permutations_reference(sn, &obj);
        for &exec in &execs {
            let t = Instant::now();
            match (search_permutations(sn, &obj, exec), &want) {
                (Ok(r), Ok(w)) => {
                    let el = t.elapsed();
                    rows.push(
                        DemoRow::new(
                            &name,
                            r.evaluated,
                            r.backend,
                            el,
                            r.rank == w.rank && r.score.to_bits() == w.score.to_bits(),
                        )
                        .with_note(format!("best {}", r.score)),
                    );
                }
                (Err(e), _) => rows.push(DemoRow::failed(&name, total, e)),
                (_, Err(e)) => rows.push(DemoRow::failed(&name, total, e)),
            }
        }
    }

    // De Bruijn: FKM on the CPU, the Euler construction on each backend, checked by the
    // verifier.
    let len = (dk as u64).pow(dn as u32);
    let runs = std::iter::once(("FKM", None)).chain(execs.iter().map(|&e| ("Euler", Some(e))));
    for (label, exec) in runs {
        let name = format!("De Bruijn B({dk},{dn}) {label}");
        let t = Instant::now();
        let result = match exec {
            None => de_bruijn_fkm(dk, dn).map(|s| (s, Backend::Cpu)),
            Some(exec) => de_bruijn_euler_with(dk, dn, exec),
        };
        match result {
            Ok((s, backend)) => {
                let el = t.elapsed();
                let ok = verify_de_bruijn(&s, dk, dn) == Ok(true);
                rows.push(DemoRow::new(&name, len, backend, el, ok).with_note(format!(
                    "{:.0} M symbols/s",
                    len as f64 / el.as_secs_f64() / 1e6
                )));
            }
            Err(e) => rows.push(DemoRow::failed(&name, len, e)),
        }
    }
}

/// The backend an explicit `Exec::Cpu` or `Exec::Cuda` runs on.
fn backend_of(exec: Exec) -> Backend {
    match exec {
        Exec::Cuda => Backend::Cuda,
        _ => Backend::Cpu,
    }
}
