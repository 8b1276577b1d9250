//! `warpath perm` (permutation batches and permutation search) and `warpath debruijn`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use combinatorics::{
    Objective, SearchResult, de_bruijn_euler_with, de_bruijn_fkm, de_bruijn_linear, factorial_u64,
    find_in_de_bruijn, generate_permutations, next_permutation, permutations_into,
    rank_permutation, search_permutations, search_permutations_range,
    search_permutations_reference, verify_de_bruijn, word_to_symbols,
};
use gpu_runtime::{Backend, Exec};

use warpath_io::{Format, Output, Sink, npy};

use crate::cli_io::{check_backend, guard_terminal, is_dash, output, report, written};
use crate::fail::{unverified, usage};
use crate::report::{DemoRow, DemoSize, Rows, format_seconds, progress};

/// Built-in objective of `warpath perm --search`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SearchKind {
    /// Assignment cost sum_i M[i, p(i)].
    Assignment,
    /// Closed tour length over a distance matrix.
    Tour,
}

/// Arguments of `warpath perm`.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  warpath perm --n 4                               # all 24 permutations of 0..4, one per line
  warpath perm --n 12 --count 1e6 -o perms.npy     # a (1000000, 12) uint8 array
  warpath perm --n 12 --discard --json             # generate and verify all 12!, for timing
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
    /// Instead of listing permutations, find the one minimising this objective over all n!.
    #[arg(long, value_enum)]
    search: Option<SearchKind>,
    /// The n x n matrix of --search: a text table (commas, tabs or spaces; an optional header;
    /// `inf` = forbidden) or a 2-D `.npy` array. Default: a random matrix (seeded by --seed).
    #[arg(long, requires = "search")]
    matrix: Option<PathBuf>,
    /// Seed of the generated matrix (only with --search and no --matrix) [default: 1].
    #[arg(long, conflicts_with = "matrix")]
    seed: Option<u64>,
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

/// Conservative rate of `--search` in permutation elements per second (CPU).
const SEARCH_RATE: f64 = 1e9;

pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    if let Some(f) = &args.format {
        return Err(usage(format!(
            "--format {f}: the extension of --output picks the format (.txt, .csv, .npy, .bin); \
             standard output is text"
        )));
    }
    check_backend(args.backend, "perm", true)?;
    if args.search.is_some() {
        return run_search(args, json);
    }
    if args.seed.is_some() {
        return Err(usage(
            "--seed seeds the matrix of --search: it needs --search",
        ));
    }
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
    let out = if args.discard {
        None
    } else {
        output(
            "--output",
            args.output.as_deref(),
            &[Format::Text, Format::Csv, Format::Npy, Format::Bin],
            json,
            true,
        )?
    };
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
    let mut sink = match &out {
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
        backend = permutations_into(n, args.start + done, m, part, args.backend)?;
        generating += t.elapsed();
        verified &= verify_batch(n, part, prev_last.as_deref());
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
        println!(
            "{}",
            serde_json::json!({
                "n": n, "start": args.start, "count": count, "backend": backend,
                "seconds": generating.as_secs_f64(),
                "total_seconds": started.elapsed().as_secs_f64(),
                "permutations_per_second": rate,
                "output": out.as_ref().map(Output::describe),
                "first": first_perm, "last": prev_last,
                "verified": verified,
            })
        );
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

/// Every row is a permutation of 0..n and each row is lexicographically greater than the one
/// before (also across batches): an independent check of the generator.
fn verify_batch(n: usize, rows: &[u8], prev_last: Option<&[u8]>) -> bool {
    if n == 0 {
        return true;
    }
    let mut prev = prev_last;
    for row in rows.chunks_exact(n) {
        let mut seen = 0u32;
        for &e in row {
            if e as usize >= n || seen & (1 << e) != 0 {
                return false;
            }
            seen |= 1 << e;
        }
        if prev.is_some_and(|p| p >= row) {
            return false;
        }
        prev = Some(row);
    }
    true
}

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

/// Reads a square matrix through the shared reader (a text table or a 2-D `.npy` array).
fn read_matrix(path: &Path) -> Result<(usize, Vec<f64>)> {
    let (r, c, data) = warpath_io::read_array::<f64>(path)?
        .into_matrix("the matrix")
        .map_err(|e| e.in_file(path))?;
    if r != c {
        return Err(usage(format!(
            "{}: the matrix must be square, it is {r} x {c}",
            path.display()
        )));
    }
    Ok((r, data))
}

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

fn run_search(args: Args, json: bool) -> Result<()> {
    let kind = args.search.unwrap_or(SearchKind::Assignment);
    let (n, m) = match &args.matrix {
        Some(p) => {
            let (n, m) = read_matrix(p)?;
            if let Some(want) = args.n
                && want != n
            {
                return Err(usage(format!("--n {want} but the matrix is {n} x {n}")));
            }
            (n, m)
        }
        None => {
            let n = args.n.unwrap_or(10);
            (
                n,
                generated_matrix(n, args.seed.unwrap_or(1), kind == SearchKind::Tour),
            )
        }
    };
    let obj = match kind {
        SearchKind::Assignment => Objective::Assignment(&m),
        SearchKind::Tour => Objective::Tour(&m),
    };
    let total =
        factorial_u64(n).ok_or_else(|| usage(format!("--n {n} is too large: at most 20")))?;
    warpath_io::check_duration(
        &format!("--search over all {n}! = {total} permutations"),
        total as f64 * n as f64 / SEARCH_RATE,
        &format!("{n}! x {n} elements at about {SEARCH_RATE:.0e} per second"),
        args.force,
    )?;
    let started = Instant::now();
    // Pieces of the rank range (about 2^22 permutations each, at most 4096), so the progress
    // bar moves steadily; combined by (score, rank).
    let pieces = if total >= 1 << 24 {
        (total >> 22).clamp(64, 4096)
    } else {
        1
    };
    let piece = total.div_ceil(pieces);
    let bar = progress(total, "search", json || pieces == 1);
    let mut best: Option<SearchResult> = None;
    let mut s = 0u64;
    while s < total {
        let len = piece.min(total - s);
        let r = search_permutations_range(n, &obj, s, len, args.backend)?;
        if best.as_ref().is_none_or(|b| r.is_better_than(b)) {
            best = Some(r);
        }
        s += len;
        bar.set_position(s);
    }
    bar.finish_and_clear();
    let best = match best {
        Some(b) => b,
        None => search_permutations(n, &obj, args.backend)?,
    };
    let seconds = started.elapsed().as_secs_f64();
    // Verify: the score of the reported permutation recomputed directly; the rank of the
    // permutation; and, where affordable, the reference search.
    let mut verified = obj.score(&best.permutation)?.to_bits() == best.score.to_bits()
        && rank_permutation(&best.permutation)? == best.rank;
    if n <= 9 {
        let want = search_permutations_reference(n, &obj)?;
        verified &= want.rank == best.rank && want.score.to_bits() == best.score.to_bits();
    }
    if json {
        println!(
            "{}",
            serde_json::json!({
                "n": n, "objective": obj.name(), "backend": best.backend, "seconds": seconds,
                "permutation": best.permutation, "rank": best.rank, "score": best.score,
                "evaluated": total, "verified": verified,
            })
        );
    } else {
        println!(
            "perm --search {}: n = {n}, best score {} at rank {} on {} in {} ({} permutations), verified: {}",
            obj.name(),
            best.score,
            best.rank,
            best.backend,
            format_seconds(seconds),
            total,
            if verified { "yes" } else { "NO" }
        );
        println!("  permutation {:?}", best.permutation);
    }
    if !verified {
        return Err(unverified("verification failed"));
    }
    Ok(())
}

/// Which De Bruijn construction to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ConstructionArg {
    /// Lyndon words (Fredricksen-Kessler-Maiorana): the lexicographically smallest sequence.
    Fkm,
    /// Euler circuit of the De Bruijn graph (graph-core: Hierholzer, the parallel algorithm or
    /// the GPU, as --backend says).
    Euler,
}

/// Arguments of `warpath debruijn`.
#[derive(clap::Args)]
#[command(after_help = "\
--k is the word (k-mer) length, as in debruijn-graph; --alphabet is the alphabet's size or its
symbols.

Examples:
  warpath debruijn --alphabet 10 --k 4 --linear    # every 4-digit PIN: 10,003 presses
  warpath debruijn --alphabet ACGT --k 8 -o seq.txt
  warpath debruijn --k 20 --construction euler --backend cpu --json")]
pub(crate) struct DeBruijnArgs {
    /// Word length (every word of this length appears once).
    #[arg(long)]
    k: usize,
    /// The alphabet: a size N (symbols 0-9a-zA-Z..., so 10 gives the digits) or its symbols
    /// as a string of distinct characters (ACGT). A value of digits only is a size.
    #[arg(long, default_value = "2")]
    alphabet: String,
    /// No longer accepted: the word length is --k and the alphabet is --alphabet.
    #[arg(long, hide = true)]
    n: Option<String>,
    /// Print the linear form (a^k + k - 1 symbols: every word as a plain window, e.g. PINs).
    #[arg(long)]
    linear: bool,
    /// Construction.
    #[arg(long, value_enum, default_value_t = ConstructionArg::Fkm)]
    construction: ConstructionArg,
    /// Report the position of this word (over the alphabet) in the sequence.
    #[arg(long)]
    find: Option<String>,
    /// Write the sequence here (.txt), or - for standard output (the default, except under
    /// --json, which then holds the sequence when it has at most 10,000 symbols).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Run even when the estimated time is above a day.
    #[arg(long)]
    force: bool,
    /// Where the Euler construction's circuit runs: auto, cpu or cuda (FKM runs on the CPU:
    /// cuda with it is an error).
    #[arg(long, default_value = "auto")]
    backend: Exec,
}

const DEFAULT_SYMBOLS: &str = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The symbols of `--alphabet`: a size (digits only) or the symbols themselves.
fn alphabet_symbols(arg: &str) -> Result<Vec<char>> {
    if !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_digit()) {
        let size: usize = arg
            .parse()
            .map_err(|_| usage(format!("--alphabet {arg}: too large")))?;
        if size < 1 || size > DEFAULT_SYMBOLS.len() {
            return Err(usage(format!(
                "--alphabet {arg}: a size must be from 1 to {} (give the symbols for larger \
                 alphabets)",
                DEFAULT_SYMBOLS.len()
            )));
        }
        return Ok(DEFAULT_SYMBOLS.chars().take(size).collect());
    }
    Ok(combinatorics::alphabet_chars(arg)?)
}

/// Conservative speed of the constructions, symbols per second (FKM about 800 M/s measured).
const DEBRUIJN_RATE: f64 = 5e7;

pub(crate) fn run_debruijn(args: DeBruijnArgs, json: bool) -> Result<()> {
    if let Some(n) = &args.n {
        return Err(usage(format!(
            "--n {n}: the word length is now --k (as in debruijn-graph) and the alphabet is \
             --alphabet SIZE|SYMBOLS"
        )));
    }
    check_backend(
        args.backend,
        "the FKM construction (--construction euler has one)",
        args.construction == ConstructionArg::Euler,
    )?;
    let out = output(
        "--output",
        args.output.as_deref(),
        &[Format::Text],
        json,
        true,
    )?;
    let alphabet = alphabet_symbols(&args.alphabet)?;
    let alphabet_str: String = alphabet.iter().collect();
    let a = alphabet.len();
    let k = args.k;
    let length = (a as f64).powi(k.min(i32::MAX as usize) as i32);
    // The sequence (a byte per symbol) and its text (up to 4 bytes per symbol); the Euler
    // construction's graph adds about 24 bytes per edge (one per symbol).
    let per_symbol = match args.construction {
        ConstructionArg::Fkm => 2.0 + alphabet_str.len() as f64 / a as f64,
        ConstructionArg::Euler => 26.0 + alphabet_str.len() as f64 / a as f64,
    };
    let what = format!("the De Bruijn sequence of {a}^{k} symbols");
    if length > u64::MAX as f64 / 64.0 {
        return Err(usage(format!("{what} is too long to build")));
    }
    warpath_io::check_memory(&what, length as u64, per_symbol, 0, "symbols")?;
    warpath_io::check_duration(
        &what,
        length / DEBRUIJN_RATE,
        &format!("at about {DEBRUIJN_RATE:.0e} symbols per second"),
        args.force,
    )?;
    if let Some(o) = &out {
        // Printed as one line: a terminal gets at most TERMINAL_MAX_LINES x 80 symbols.
        let lines = (length as u64).div_ceil(80);
        guard_terminal(o, lines, is_dash(args.output.as_deref()), "--output")?;
    }
    let started = Instant::now();
    let (seq, backend) = match args.construction {
        ConstructionArg::Fkm => (de_bruijn_fkm(a, k)?, Backend::Cpu),
        ConstructionArg::Euler => de_bruijn_euler_with(a, k, args.backend)?,
    };
    let seconds = started.elapsed().as_secs_f64();
    let verified = verify_de_bruijn(&seq, a, k)?;
    let position = match &args.find {
        Some(w) => {
            let word = word_to_symbols(&alphabet_str, w)?;
            if word.len() != k {
                return Err(usage(format!(
                    "--find {w:?} has {} symbols, the words have --k {k}",
                    word.len()
                )));
            }
            find_in_de_bruijn(&seq, a, &word)?
        }
        None => None,
    };
    let out_symbols = if args.linear {
        de_bruijn_linear(&seq, k)
    } else {
        seq
    };
    let text: String = out_symbols.iter().map(|&s| alphabet[s as usize]).collect();
    if let Some(o) = &out {
        let mut sink = o.open()?;
        sink.write_all(text.as_bytes())?;
        sink.write_all(b"\n")?;
        sink.finish()?;
    }
    if json {
        let inline = out.is_none() && text.len() <= 10_000;
        println!(
            "{}",
            serde_json::json!({
                "alphabet": alphabet_str, "alphabet_size": a, "k": k,
                "construction": format!("{:?}", args.construction).to_lowercase(),
                "linear": args.linear, "length": out_symbols.len(), "backend": backend,
                "seconds": seconds, "verified": verified,
                "find": args.find, "position": position,
                "sequence": if inline { Some(&text) } else { None },
                "output": out.as_ref().map(Output::describe),
            })
        );
    } else {
        eprintln!(
            "debruijn: B({a}, {k}) {}{}, {} symbols on {backend} in {}, verified: {}",
            match args.construction {
                ConstructionArg::Fkm => "FKM",
                ConstructionArg::Euler => "Euler",
            },
            if args.linear { " linear" } else { "" },
            out_symbols.len(),
            format_seconds(seconds),
            if verified { "yes" } else { "NO" }
        );
        if let Some(w) = &args.find {
            match position {
                Some(p) => eprintln!("  {w:?} starts at position {p}"),
                None => eprintln!("  {w:?} not found"),
            }
        }
    }
    if !verified {
        return Err(unverified("verification failed"));
    }
    Ok(())
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

fn backend_of(exec: Exec) -> Backend {
    match exec {
        Exec::Cuda => Backend::Cuda,
        _ => Backend::Cpu,
    }
}
