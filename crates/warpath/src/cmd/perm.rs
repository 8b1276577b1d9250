//! `warpath perm` (permutation batches and permutation search) and `warpath debruijn`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use combinatorics::{
    Objective, SearchResult, de_bruijn_euler_with, de_bruijn_fkm, de_bruijn_linear, factorial_u64,
    find_in_de_bruijn, generate_permutations, next_permutation, permutations_into,
    rank_permutation, search_permutations, search_permutations_range,
    search_permutations_reference, verify_de_bruijn, word_to_symbols,
};
use gpu_runtime::{Backend, Exec};

use crate::cmd::demo::DemoSize;
use crate::report::{DemoRow, format_seconds, progress};

/// Built-in objective of `warpath perm --search`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SearchKind {
    /// Assignment cost sum_i M[i, p(i)].
    Assignment,
    /// Closed tour length over a distance matrix.
    Tour,
}

/// How `warpath perm --output` writes permutations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// `n` bytes per permutation, no separators.
    Binary,
    /// One permutation per line, elements separated by spaces.
    Text,
}

/// Arguments of `warpath perm`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Number of elements (permutations of 0..n; at most 20). With --matrix, taken from the
    /// matrix when omitted.
    #[arg(long)]
    n: Option<usize>,
    /// First lexicographic rank.
    #[arg(long, default_value_t = 0)]
    start: u64,
    /// Number of permutations (default: all from --start to n! - 1).
    #[arg(long)]
    count: Option<u64>,
    /// Write the permutations to this file (streamed in batches; any size).
    #[arg(long)]
    output: Option<PathBuf>,
    /// Format of --output.
    #[arg(long, value_enum, default_value_t = Format::Binary)]
    format: Format,
    /// Permutations per batch (memory use is batch * n bytes).
    #[arg(long, default_value_t = 1 << 22)]
    batch: u64,
    /// Instead of listing permutations, find the one minimising this objective over all n!.
    #[arg(long, value_enum)]
    search: Option<SearchKind>,
    /// The n x n matrix of --search as CSV (commas or spaces; `inf` = forbidden). Default: a
    /// random matrix (seeded by --seed).
    #[arg(long)]
    matrix: Option<PathBuf>,
    /// Seed of the generated matrix.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to run: auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Exec,
}

pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    if args.search.is_some() {
        return run_search(args, json);
    }
    let n = args.n.context("--n is required (the number of elements)")?;
    let total = factorial_u64(n).with_context(|| format!("n = {n} is too large: at most 20"))?;
    if args.start >= total && total > 0 {
        bail!("--start {} is not below {n}! = {total}", args.start);
    }
    let count = args.count.unwrap_or(total - args.start.min(total));
    if args.batch == 0 {
        bail!("--batch must be at least 1");
    }
    let mut writer = match &args.output {
        Some(p) => Some(BufWriter::with_capacity(
            1 << 20,
            File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => None,
    };
    let started = Instant::now();
    let batch = args.batch.min(count.max(1));
    let mut buf = vec![0u8; (batch as usize).saturating_mul(n)];
    let bar = progress(count, "permutations", json);
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
        if let Some(w) = writer.as_mut() {
            write_batch(w, part, n, args.format)?;
        }
        done += m;
        bar.set_position(done);
    }
    bar.finish_and_clear();
    if let Some(mut w) = writer {
        w.flush()?;
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
                "output": args.output.as_ref().map(|p| p.display().to_string()),
                "first": first_perm, "last": prev_last,
                "verified": verified,
            })
        );
    } else {
        println!(
            "perm: n = {n}, ranks [{}, {}), {count} permutations on {backend} in {} ({:.1} M/s), verified: {}",
            args.start,
            args.start + count,
            format_seconds(generating.as_secs_f64()),
            rate / 1e6,
            if verified { "yes" } else { "NO" }
        );
        if let (Some(f), Some(l)) = (&first_perm, &prev_last) {
            println!("  first {f:?}\n  last  {l:?}");
        }
        if let Some(p) = &args.output {
            println!("  written to {} ({:?})", p.display(), args.format);
        }
    }
    if !verified {
        bail!("verification failed");
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

fn write_batch(w: &mut impl Write, rows: &[u8], n: usize, format: Format) -> Result<()> {
    match format {
        Format::Binary => w.write_all(rows)?,
        Format::Text => {
            let mut line = String::with_capacity(3 * n + 1);
            for row in rows.chunks_exact(n.max(1)) {
                line.clear();
                for (i, e) in row.iter().enumerate() {
                    if i > 0 {
                        line.push(' ');
                    }
                    line.push_str(&e.to_string());
                }
                line.push('\n');
                w.write_all(line.as_bytes())?;
            }
        }
    }
    Ok(())
}

/// Reads a square matrix from CSV: commas and/or whitespace between numbers, `#` comments.
fn read_matrix(path: &Path) -> Result<(usize, Vec<f64>)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let row = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse::<f64>()
                    .with_context(|| format!("{}:{}: `{s}` is not a number", path.display(), i + 1))
            })
            .collect::<Result<Vec<_>>>()?;
        rows.push(row);
    }
    let n = rows.len();
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != n) {
        bail!(
            "{}: the matrix must be square: {n} rows but row {} has {} entries",
            path.display(),
            i + 1,
            r.len()
        );
    }
    Ok((n, rows.into_iter().flatten().collect()))
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
                bail!("--n {want} but the matrix is {n} x {n}");
            }
            (n, m)
        }
        None => {
            let n = args.n.unwrap_or(10);
            (n, generated_matrix(n, args.seed, kind == SearchKind::Tour))
        }
    };
    let obj = match kind {
        SearchKind::Assignment => Objective::Assignment(&m),
        SearchKind::Tour => Objective::Tour(&m),
    };
    let total = factorial_u64(n).with_context(|| format!("n = {n} is too large: at most 20"))?;
    let started = Instant::now();
    // Pieces of the rank range, for the progress bar; combined by (score, rank).
    let pieces = if total >= 1 << 24 { 64 } else { 1 };
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
        bail!("verification failed");
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
pub(crate) struct DeBruijnArgs {
    /// Alphabet size (symbols 0..k, shown as 0-9a-zA-Z...). Ignored with --alphabet.
    #[arg(long, default_value_t = 2)]
    k: usize,
    /// Word length.
    #[arg(long)]
    n: usize,
    /// The alphabet as a string of distinct characters, e.g. 0123456789 or ACGT.
    #[arg(long)]
    alphabet: Option<String>,
    /// Print the linear form (k^n + n - 1 symbols: every word as a plain window, e.g. PINs).
    #[arg(long)]
    linear: bool,
    /// Construction.
    #[arg(long, value_enum, default_value_t = ConstructionArg::Fkm)]
    construction: ConstructionArg,
    /// Report the position of this word (over the alphabet) in the sequence.
    #[arg(long)]
    find: Option<String>,
    /// Write the sequence to this file instead of printing it.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Where the Euler construction's circuit runs: auto, cpu or cuda (FKM runs on the CPU).
    #[arg(long, default_value = "auto")]
    backend: Exec,
}

const DEFAULT_SYMBOLS: &str = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

pub(crate) fn run_debruijn(args: DeBruijnArgs, json: bool) -> Result<()> {
    let alphabet: Vec<char> = match &args.alphabet {
        Some(a) => combinatorics::alphabet_chars(a)?,
        None => {
            if args.k > DEFAULT_SYMBOLS.len() {
                bail!(
                    "--k {} needs --alphabet (the default symbols cover k <= {})",
                    args.k,
                    DEFAULT_SYMBOLS.len()
                );
            }
            DEFAULT_SYMBOLS.chars().take(args.k).collect()
        }
    };
    let alphabet_str: String = alphabet.iter().collect();
    let k = alphabet.len();
    let started = Instant::now();
    let (seq, backend) = match args.construction {
        ConstructionArg::Fkm => {
            if args.backend == Exec::Cuda {
                bail!(
                    "the FKM construction runs on the CPU; --backend cuda needs --construction euler"
                );
            }
            (de_bruijn_fkm(k, args.n)?, Backend::Cpu)
        }
        ConstructionArg::Euler => de_bruijn_euler_with(k, args.n, args.backend)?,
    };
    let seconds = started.elapsed().as_secs_f64();
    let verified = verify_de_bruijn(&seq, k, args.n)?;
    let position = match &args.find {
        Some(w) => {
            let word = word_to_symbols(&alphabet_str, w)?;
            if word.len() != args.n {
                bail!(
                    "--find {w:?} has {} symbols, the words have {}",
                    word.len(),
                    args.n
                );
            }
            find_in_de_bruijn(&seq, k, &word)?
        }
        None => None,
    };
    let out_symbols = if args.linear {
        de_bruijn_linear(&seq, args.n)
    } else {
        seq
    };
    let text: String = out_symbols.iter().map(|&s| alphabet[s as usize]).collect();
    if let Some(p) = &args.output {
        std::fs::write(p, &text).with_context(|| format!("writing {}", p.display()))?;
    }
    let shown = args.output.is_none();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "k": k, "n": args.n, "construction": format!("{:?}", args.construction).to_lowercase(),
                "linear": args.linear, "length": out_symbols.len(), "backend": backend,
                "seconds": seconds, "verified": verified,
                "find": args.find, "position": position,
                "sequence": if shown { Some(&text) } else { None },
                "output": args.output.as_ref().map(|p| p.display().to_string()),
            })
        );
    } else {
        if shown {
            println!("{text}");
        }
        eprintln!(
            "debruijn: B({k}, {}) {}{}, {} symbols on {backend} in {}, verified: {}",
            args.n,
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
        bail!("verification failed");
    }
    Ok(())
}

/// Demo rows: batches, search, De Bruijn, on the CPU and (when present) the GPU.
pub(crate) fn demo(size: DemoSize) -> Vec<DemoRow> {
    let (bn, sn, (dk, dn)) = match size {
        DemoSize::Small => (10usize, 9usize, (10usize, 6usize)),
        DemoSize::Large => (12, 11, (2, 24)),
    };
    let mut rows = Vec::new();
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
    rows
}

fn backend_of(exec: Exec) -> Backend {
    match exec {
        Exec::Cuda => Backend::Cuda,
        _ => Backend::Cpu,
    }
}
