//! What every subcommand shares on the way in and out: backend checks, outputs by extension
//! (`-` for standard output), the terminal guard, sizes.

use std::path::Path;

use anyhow::Result;
use gpu_runtime::{Exec, GpuError, Target};
use warpath_io::{Format, Output};

use crate::fail::{no_gpu, usage};

/// The I/O conventions, shown once at the end of `warpath --help`.
pub(crate) const CONVENTIONS: &str = "\
Input and output (every subcommand):
  Tables   CSV, ;-separated or whitespace-separated (spaces, tabs) numbers; # comments; an
           optional header line, only when every field of the first line is a name (starts
           with a letter or _, not nan/inf), named in the report when skipped; anything else
           that is not a number is an error giving file, line and column.
  .npy     read wherever an array goes in (bool, integers, float32/64; other dtypes refused),
           written wherever one comes out.
  Outputs  the file's extension picks the format (.txt .csv .tsv .npy .bin .svg .png ...);
           an unknown extension is refused; - is standard output (the default where a result
           is printable). Output paths are checked before the work starts.
  Counts   1000000, 1_000_000, 1e6, 2^20, 10k, 3M, 1G.
  Checks   sizes that do not fit in memory and runs estimated above a day (unless --force) are
           refused up front; --backend cuda without a GPU, or where there is no GPU path, is an
           error; conflicting flags are errors naming both.
  --json   one JSON object on standard output; errors as {\"error\": ..., \"kind\": ...}.";

/// Checks `exec` (and `WARPATH_BACKEND` under `auto`) before any work: `cuda` needs a GPU
/// path (`gpu_path`, else a usage error naming `what`) and a GPU (else a `no_gpu` error).
pub(crate) fn check_backend(exec: Exec, what: &str, gpu_path: bool) -> Result<()> {
    let source = match exec {
        Exec::Cpu => return Ok(()),
        Exec::Cuda => "--backend cuda",
        Exec::Auto => match Exec::Auto.resolve(0, u64::MAX) {
            // n = 0 below any threshold: only WARPATH_BACKEND=cuda tries the GPU here.
            Ok(Target::Cpu) => return Ok(()),
            Ok(Target::Cuda(_)) | Err(GpuError::NoDriver) => "WARPATH_BACKEND=cuda",
            Err(e @ GpuError::BadBackendVariable(_)) => return Err(usage(e.to_string())),
            Err(_) => "WARPATH_BACKEND=cuda",
        },
    };
    if !gpu_path {
        return Err(usage(format!(
            "{source}: {what} has no GPU path (use --backend cpu or auto)"
        )));
    }
    if let Err(e) = gpu_runtime::gpu() {
        return Err(no_gpu(format!("{source}: {e}")));
    }
    Ok(())
}

/// Prints one JSON value, written as for `serde_json::json!`, as a line of standard output:
/// a command's `--json` report.
macro_rules! print_json {
    ($($json:tt)+) => {
        println!("{}", serde_json::json!($($json)+))
    };
}
pub(crate) use print_json;

/// Prints the JSON object `head` with the fields of the object `rest` added, as one line: a
/// `--json` report whose first fields several commands share.
pub(crate) fn print_merged_json(mut head: serde_json::Value, rest: serde_json::Value) {
    if let (Some(h), serde_json::Value::Object(more)) = (head.as_object_mut(), rest) {
        h.extend(more);
    }
    println!("{head}");
}

/// The output named by `flag`: `-` (or, when `default_stdout`, no flag) is standard output as
/// text; a file's extension must be one of `allowed`. Under `--json`, standard output holds
/// the JSON report: `-` is then a usage error and the default is no output. The path is
/// checked for writability now.
pub(crate) fn output(
    flag: &str,
    arg: Option<&Path>,
    allowed: &[Format],
    json: bool,
    default_stdout: bool,
) -> Result<Option<Output>> {
    let o = match arg {
        Some(p) if p.as_os_str() == "-" && json => {
            return Err(usage(format!(
                "{flag} - and --json both write to standard output: give {flag} a file"
            )));
        }
        Some(p) => {
            Output::parse(flag, p, allowed, Format::Text).map_err(|e| usage(e.to_string()))?
        }
        None if default_stdout && !json => Output::stdout(Format::Text),
        None => return Ok(None),
    };
    o.check()?;
    Ok(Some(o))
}

/// One output of a command for [`outputs`]: its flag, the path given, the formats allowed and
/// whether no flag means standard output (as for [`output`]).
pub(crate) type OutputSpec<'a> = (&'a str, Option<&'a Path>, &'a [Format], bool);

/// The outputs of `specs`, in order, each as [`output`] gives it (checked before the work).
pub(crate) fn outputs<const N: usize>(
    json: bool,
    specs: [OutputSpec<'_>; N],
) -> Result<[Option<Output>; N]> {
    let mut outs = [const { None }; N];
    for (o, (flag, arg, allowed, default_stdout)) in outs.iter_mut().zip(specs) {
        *o = output(flag, arg, allowed, json, default_stdout)?;
    }
    Ok(outs)
}

/// The output of `flag` as [`output`] gives it, standard output by default, or `None` when
/// `discard` (--discard: run and verify without writing the result).
pub(crate) fn output_unless_discarded(
    discard: bool,
    flag: &str,
    arg: Option<&Path>,
    allowed: &[Format],
    json: bool,
) -> Result<Option<Output>> {
    if discard {
        return Ok(None);
    }
    output(flag, arg, allowed, json, true)
}

/// A usage error when more than one of the outputs (each with its flag) is standard output:
/// `A - and B - both write ...` for two, `only one of A, B and C can write ...` for more.
pub(crate) fn one_stdout(named: &[(&str, &Option<Output>)]) -> Result<()> {
    let to_stdout = named
        .iter()
        .filter(|(_, o)| o.as_ref().is_some_and(Output::is_stdout))
        .count();
    if to_stdout <= 1 {
        return Ok(());
    }
    let flags: Vec<&str> = named.iter().map(|(flag, _)| *flag).collect();
    Err(usage(match flags.as_slice() {
        [a, b] => format!("{a} - and {b} - both write to standard output"),
        [rest @ .., last] => format!(
            "only one of {} and {last} can write to standard output",
            rest.join(", ")
        ),
        [] => unreachable!("two outputs or more write to standard output"),
    }))
}

/// Lines above which a result that went to a terminal by default is refused (the user did not
/// ask for standard output explicitly).
pub(crate) const TERMINAL_MAX_LINES: u64 = 10_000;

/// Refuses to flood a terminal: `lines` lines to standard output when it is a terminal and
/// the user did not ask for it (`explicit`: `--output -` given).
pub(crate) fn guard_terminal(o: &Output, lines: u64, explicit: bool, flag: &str) -> Result<()> {
    if o.is_terminal() && !explicit && lines > TERMINAL_MAX_LINES {
        return Err(usage(format!(
            "the result has {lines} lines: give {flag} FILE (see --help for the formats), \
             {flag} - to print them anyway, or redirect standard output"
        )));
    }
    Ok(())
}

/// Whether `arg` is `-` (standard output asked for explicitly).
pub(crate) fn is_dash(arg: Option<&Path>) -> bool {
    arg.is_some_and(|p| p.as_os_str() == "-")
}

/// A count argument of clap (`value_parser`): the one size syntax.
pub(crate) fn count(s: &str) -> Result<usize, String> {
    warpath_io::parse_count_usize(s)
}

/// A count argument of clap as `u64`.
pub(crate) fn count64(s: &str) -> Result<u64, String> {
    warpath_io::parse_count(s)
}

/// Prints a run's report: to standard error when the result itself is on standard output,
/// else to standard output.
pub(crate) fn report(text: &str, out: Option<&Output>) {
    if out.is_some_and(Output::is_stdout) {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
}

/// `, written to FILE` for a file output, else nothing.
pub(crate) fn written(out: Option<&Output>) -> String {
    match out.and_then(Output::path) {
        Some(p) => format!(", written to {}", p.display()),
        None => String::new(),
    }
}

/// Where an input came from, for the reports: a description (a path, or how it was
/// generated) and the header line the table reader skipped, so that no line of a user's file
/// is dropped without the report saying so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InputInfo {
    /// The path, or how the input was generated.
    pub(crate) source: String,
    /// The column names of a skipped header line (`"header"` under `--json`).
    pub(crate) header: Option<Vec<String>>,
}

impl InputInfo {
    /// An input with no header line (generated, `.npy`, raw, or a table without one).
    pub(crate) fn plain(source: impl Into<String>) -> Self {
        InputInfo {
            source: source.into(),
            header: None,
        }
    }

    /// The description for a text report: `k.txt`, or `k.txt; header line skipped: "a", "b"`.
    pub(crate) fn describe(&self) -> String {
        format!("{}{}", self.source, skipped_header(self.header.as_deref()))
    }
}

/// `; header line skipped: "a", "b"` for a header the table reader skipped, else nothing.
pub(crate) fn skipped_header(header: Option<&[String]>) -> String {
    match header {
        None => String::new(),
        Some(h) => {
            let names: Vec<String> = h.iter().map(|n| format!("{n:?}")).collect();
            format!("; header line skipped: {}", names.join(", "))
        }
    }
}

/// Parses `argv` (a command name, then its words) into a subcommand's arguments, as clap
/// parses them under `warpath`: for the subcommands' unit tests.
#[cfg(test)]
pub(crate) fn parse_args<A: clap::Args>(argv: &[&str]) -> Result<A, clap::Error> {
    let matches = A::augment_args(clap::Command::new("warpath")).try_get_matches_from(argv)?;
    A::from_arg_matches(&matches)
}

#[cfg(test)]
mod input_info_tests {
    use super::InputInfo;

    #[test]
    fn a_skipped_header_is_named_in_the_description() {
        assert_eq!(InputInfo::plain("k.txt").describe(), "k.txt");
        let i = InputInfo {
            source: "k.txt".into(),
            header: Some(vec!["a".into(), "b c".into()]),
        };
        assert_eq!(i.describe(), "k.txt; header line skipped: \"a\", \"b c\"");
    }
}
