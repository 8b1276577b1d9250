//! `warpath perm`: permutations by lexicographic rank, generated in batches (combinatorics),
//! each batch verified and streamed to the output; `--search` (in `search`) instead finds the
//! best permutation over all n!.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use combinatorics::{
    BatchOptions, MAX_GPU_STEPS, factorial_u64, permutations_into_with, rank_permutation,
};
use gpu_runtime::{Backend, Exec};

use warpath_io::{Format, Output, Sink, npy};

use super::search::{SearchArgs, run_search};
use crate::cli_io::{
    check_backend, guard_terminal, is_dash, output_unless_discarded, report, written,
};
use crate::fail::{unverified, usage};
use crate::report::{format_seconds, progress};

/// Arguments of `warpath perm`.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  warpath perm --n 4                               # all 24 permutations of 0..4, one per line
  warpath perm --n 12 --count 1e6 -o perms.npy     # a (1000000, 12) uint8 array
  warpath perm --n 12 --discard --json             # generate and verify all 12!, for timing
  warpath perm --n 11 --discard --steps 0          # unrank every permutation (the seed's version 1)
  warpath perm --search tour --matrix dist.csv     # the shortest closed tour over all n!")]
pub(crate) struct Args {
    /// Number of elements (permutations of 0..n; at most 20). With --matrix, taken from the
    /// matrix when omitted.
    #[arg(long)]
    n: Option<usize>,
    /// First lexicographic rank.
    #[arg(long, default_value_t = 0, value_parser = crate::cli_io::count64, conflicts_with = "search")]
    start: u64,
    /// Number of permutations (default: all from --start to n! - 1; 1e6, 10M).
    #[arg(long, value_parser = crate::cli_io::count64, conflicts_with = "search")]
    count: Option<u64>,
    /// Write the permutations here (streamed; any size); the extension picks the format: .txt
    /// (one per line, elements separated by spaces), .csv, .npy (uint8, shape (count, n)),
    /// .bin (n bytes per permutation). Default: standard output as text; a terminal gets at
    /// most 10,000 lines unless -o - is given.
    #[arg(long, short, value_name = "FILE", conflicts_with = "search")]
    output: Option<PathBuf>,
    /// No longer accepted: the extension of --output picks the format.
    #[arg(long, hide = true)]
    format: Option<String>,
    /// Generate and verify without writing the permutations (for timing).
    #[arg(long, conflicts_with_all = ["output", "search"])]
    discard: bool,
    /// Permutations per batch (memory use is batch * n bytes).
    #[arg(long, default_value_t = 1 << 22, value_parser = crate::cli_io::count64, conflicts_with = "search")]
    batch: u64,
    /// `next_permutation` steps after each unrank, on the CPU and the GPU alike: every
    /// (S+1)-th rank is unranked (O(n^2)) and the next S permutations are stepped to
    /// (amortised O(1)). The seed's versions 1, 2 and 3 are 0, 1 and 9. At most 15. Default:
    /// the CPU unranks once per 32,768 permutations (the fastest), a GPU thread takes 3 steps.
    #[arg(long, value_name = "S", conflicts_with = "search")]
    steps: Option<u32>,
    #[command(flatten)]
    search: SearchArgs,
    /// Run even when the estimated time is above a day.
    #[arg(long)]
    force: bool,
    /// Where to run: auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Exec,
}

/// Conservative rates for the time estimate of `perm` (permutations per second): generating
/// alone, writing binary, writing text. The measured generation rate is 870 M/s on 2 cores.
const PERM_RATES: [f64; 3] = [3e8, 1e8, 1e7];

/// Checks the numbers of a run (`--n`, `--start`, `--count`, `--batch`, `--steps`) before
/// any work, and returns `n` and the number of permutations to make.
fn check_range(args: &Args) -> Result<(usize, u64)> {
    let n = args
        .n
        .ok_or_else(|| usage("--n is required (the number of elements)"))?;
    let total =
        factorial_u64(n).ok_or_else(|| usage(format!("--n {n} is too large: at most 20")))?;
    if args.start >= total && total > 0 {
        return Err(usage(format!(
            "--start {} is not below {n}! = {total}",
            args.start
        )));
    }
    let count = args.count.unwrap_or(total - args.start.min(total));
    if count > total - args.start.min(total) {
        return Err(usage(format!(
            "--start {} --count {count} goes past the last rank {n}! - 1 = {}",
            args.start,
            total - 1
        )));
    }
    if args.batch == 0 {
        return Err(usage("--batch must be at least 1"));
    }
    if let Some(s) = args.steps.filter(|&s| s >= MAX_GPU_STEPS) {
        return Err(usage(format!(
            "--steps {s}: at most {} (a GPU thread makes at most {MAX_GPU_STEPS} permutations)",
            MAX_GPU_STEPS - 1
        )));
    }
    Ok((n, count))
}

/// Opens the output, if any, and writes what comes before the first batch: the .npy header
/// (its shape is known: `count` rows of `n`) or the CSV's column names.
fn open_sink(out: Option<&Output>, count: u64, n: usize) -> Result<Option<(Sink, Format)>> {
    let sink = match out {
        Some(o) => {
            let mut s = o.open()?;
            match o.format {
                Format::Npy => npy::write_npy_header::<u8, _>(&mut s, &[count as usize, n])?,
                Format::Csv => {
                    let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
                    s.write_all(format!("{}\n", names.join(",")).as_bytes())?;
                }
                _ => {}
            }
            Some((s, o.format))
        }
        None => None,
    };
    Ok(sink)
}

/// `warpath perm`: the permutations of ranks `[--start, --start + --count)` in batches, each
/// batch verified and streamed to the output; with `--search`, the search instead.
pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    if let Some(f) = &args.format {
        return Err(usage(format!(
            "--format {f}: the extension of --output picks the format (.txt, .csv, .npy, .bin); \
             standard output is text"
        )));
    }
    check_backend(args.backend, "perm", true)?;
    if args.search.search.is_some() {
        return run_search(&args.search, args.n, args.force, args.backend, json);
    }
    if args.search.seed.is_some() {
        return Err(usage(
            "--seed seeds the matrix of --search: it needs --search",
        ));
    }
    let (n, count) = check_range(&args)?;
    let options = args.steps.map(BatchOptions::with_steps).unwrap_or_default();
    let out = output_unless_discarded(
        args.discard,
        "--output",
        args.output.as_deref(),
        &[Format::Text, Format::Csv, Format::Npy, Format::Bin],
        json,
    )?;
    let rate = match out.as_ref().map(|o| o.format) {
        None => PERM_RATES[0],
        Some(Format::Npy | Format::Bin) => PERM_RATES[1],
        Some(_) => PERM_RATES[2],
    };
    warpath_io::check_duration(
        &format!("{count} permutations of {n}"),
        count as f64 / rate,
        &format!("at about {rate:.0e} per second"),
        args.force,
    )?;
    let batch = args.batch.min(count.max(1));
    warpath_io::check_memory("--batch", batch, n as f64, 0, "permutations")?;
    if let Some(o) = &out {
        guard_terminal(o, count, is_dash(args.output.as_deref()), "--output")?;
    }
    let mut sink = open_sink(out.as_ref(), count, n)?;
    let started = Instant::now();
    let mut buf = vec![0u8; (batch as usize).saturating_mul(n)];
    let bar = progress(
        count,
        "permutations",
        json || out.as_ref().is_some_and(Output::is_stdout),
    );
    let mut generating = Duration::ZERO;
    let mut backend = Backend::Cpu;
    let mut verified = true;
    let mut prev_last: Option<Vec<u8>> = None;
    let mut first_perm: Option<Vec<u8>> = None;
    let mut done = 0u64;
    while done < count {
        let m = batch.min(count - done);
        let part = &mut buf[..m as usize * n];
        let t = Instant::now();
        backend = permutations_into_with(n, args.start + done, m, part, args.backend, &options)?;
        generating += t.elapsed();
        verified &= combinatorics::lexicographic_rows(n, part, prev_last.as_deref());
        if first_perm.is_none() && n > 0 {
            first_perm = Some(part[..n].to_vec());
        }
        if n > 0 {
            prev_last = Some(part[part.len() - n..].to_vec());
        }
        if let Some((s, format)) = sink.as_mut() {
            write_batch(s, part, n, *format)?;
        }
        done += m;
        bar.set_position(done);
    }
    bar.finish_and_clear();
    if let Some((s, _)) = sink {
        s.finish()?;
    }
    // The ends must have the ranks asked for (an independent check of the unrank).
    if count > 0 && n > 0 {
        let first = first_perm.as_deref().unwrap_or_default();
        let last = prev_last.as_deref().unwrap_or_default();
        verified &= rank_permutation(first)? == args.start;
        verified &= rank_permutation(last)? == args.start + count - 1;
    }
    let rate = count as f64 / generating.as_secs_f64().max(1e-9);
    if json {
        crate::cli_io::print_json!({
            "n": n, "start": args.start, "count": count, "backend": backend,
            "steps": args.steps,
            "seconds": generating.as_secs_f64(),
            "total_seconds": started.elapsed().as_secs_f64(),
            "permutations_per_second": rate,
            "output": out.as_ref().map(Output::describe),
            "first": first_perm, "last": prev_last,
            "verified": verified,
        });
    } else {
        let mut text = format!(
            "perm: n = {n}, ranks [{}, {}), {count} permutations on {backend} in {} ({:.1} M/s), verified: {}",
            args.start,
            args.start + count,
            format_seconds(generating.as_secs_f64()),
            rate / 1e6,
            if verified { "yes" } else { "NO" }
        );
        if let (Some(f), Some(l)) = (&first_perm, &prev_last) {
            text.push_str(&format!("\n  first {f:?}\n  last  {l:?}"));
        }
        text.push_str(&written(out.as_ref()));
        report(&text, out.as_ref());
    }
    if !verified {
        return Err(unverified("verification failed"));
    }
    Ok(())
}

/// Writes a batch of permutations (`n` bytes each) in `format`: raw bytes for .npy and .bin
/// (the .npy header is written before the first batch), text rows otherwise.
fn write_batch(w: &mut Sink, rows: &[u8], n: usize, format: Format) -> Result<()> {
    match format {
        Format::Bin | Format::Npy => w.write_all(rows)?,
        _ => {
            let sep = if format == Format::Csv { b',' } else { b' ' };
            let mut text = Vec::with_capacity(rows.len() * 4);
            warpath_io::format_rows(rows, n, sep, &mut text);
            w.write_all(&text)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli_io::parse_args;

    fn perm(extra: &[&str]) -> Result<()> {
        let argv: Vec<&str> = ["perm", "--discard", "--backend", "cpu"]
            .iter()
            .chain(extra)
            .copied()
            .collect();
        run(parse_args(&argv)?, true)
    }

    #[test]
    fn steps_give_verified_permutations_and_are_bounded() {
        // The seed's versions 1, 2, 3, over ranges that start and end inside a group.
        for s in ["0", "1", "9", "15"] {
            perm(&["--n", "8", "--steps", s]).unwrap();
            perm(&[
                "--n", "9", "--start", "7", "--count", "50001", "--batch", "999", "--steps", s,
            ])
            .unwrap();
        }
        let e = perm(&["--n", "5", "--steps", "16"]).unwrap_err();
        assert!(e.to_string().contains("at most 15"), "{e}");
        assert!(perm(&["--n", "5", "--steps", "-1"]).is_err());
    }
}
