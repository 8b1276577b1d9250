//! The seeds' experiments of this crate, for `warpath reproduce` (see `warpath_report`).
//!
//! - `debruijn-pin` (seed 000): a De Bruijn sequence over the ten digits that contains every
//!   4-digit PIN, built both ways (FKM and an Euler circuit), every PIN found in it.

use std::time::Instant;

use gpu_runtime::Exec;
use warpath_report::{Context, Experiment, ExperimentError, Row, Spec};

use crate::{Construction, de_bruijn, de_bruijn_linear, find_in_de_bruijn, verify_de_bruijn};

/// This crate's experiments, in the order of the seeds.
pub fn specs() -> Vec<Spec> {
    vec![Spec {
        id: "debruijn-pin",
        seed: "000",
        title: "the 4-digit PIN De Bruijn sequence: every PIN in 10,003 key presses",
        run: debruijn_pin,
    }]
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

#[cfg(test)]
mod tests {
    use super::*;
    use warpath_report::Size;

    #[test]
    fn pin_sequence_holds_every_pin_in_10003_presses() {
        let e = debruijn_pin(&Context::new(Size::Quick)).unwrap();
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
