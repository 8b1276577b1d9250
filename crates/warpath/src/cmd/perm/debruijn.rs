//! `warpath debruijn`: the De Bruijn sequence of every word of length `--k` over an alphabet
//! (combinatorics: FKM, or an Euler circuit of the De Bruijn graph), verified, with the
//! position of a word.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use combinatorics::{
    de_bruijn_euler_with, de_bruijn_fkm, de_bruijn_linear, find_in_de_bruijn, verify_de_bruijn,
    word_to_symbols,
};
use gpu_runtime::{Backend, Exec};

use warpath_io::{Format, Output};

use crate::cli_io::{check_backend, guard_terminal, is_dash, output};
use crate::fail::{unverified, usage};
use crate::report::format_seconds;

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

/// The symbols of an alphabet given by its size.
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

/// `warpath debruijn`: the De Bruijn sequence of the words of length `--k` over the alphabet,
/// built by FKM or as an Euler circuit, verified, written as text.
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
        crate::cli_io::print_json!({
            "alphabet": alphabet_str, "alphabet_size": a, "k": k,
            "construction": format!("{:?}", args.construction).to_lowercase(),
            "linear": args.linear, "length": out_symbols.len(), "backend": backend,
            "seconds": seconds, "verified": verified,
            "find": args.find, "position": position,
            "sequence": if inline { Some(&text) } else { None },
            "output": out.as_ref().map(Output::describe),
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphabets_are_sizes_or_symbols() {
        assert_eq!(alphabet_symbols("2").unwrap(), ['0', '1']);
        assert_eq!(alphabet_symbols("ACGT").unwrap(), ['A', 'C', 'G', 'T']);
        assert_eq!(alphabet_symbols("62").unwrap().last(), Some(&'Z'));
        assert!(alphabet_symbols("0").is_err());
        assert!(alphabet_symbols("63").is_err());
        assert!(alphabet_symbols("AA").is_err());
    }
}
