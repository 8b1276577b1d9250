//! `warpath sort`: radix sort (gpu-primitives) of a file or of generated keys, verified by an
//! independent check, and written by the output's extension.

use std::time::Instant;

use anyhow::Result;
use gpu_primitives::{SortKey, radix_sort, radix_sort_desc};

use warpath_io::{Element, Output};

use super::{
    ARRAY_OUTPUTS, CliKey, Finished, InputArgs, KeyType, load, resolve_key_type, result_output,
    splitmix64,
};
use crate::cli_io::{check_backend, guard_terminal, is_dash};
use crate::report::progress;

/// Arguments of `warpath sort`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  warpath sort keys.npy -o sorted.npy            # dtype from the file, result as .npy
  warpath sort numbers.txt > sorted.txt          # text in, text out (standard output)
  warpath sort --generate 1e8 --type f64 --discard --json   # time a generated sort")]
pub(crate) struct SortArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Sort descending (the exact reverse order; floats: NaNs first).
    #[arg(long)]
    descending: bool,
}

/// A multiset fingerprint: order-independent, so a sort must preserve it.
fn fingerprint<K: SortKey>(keys: &[K]) -> u64 {
    keys.iter().fold(0u64, |acc, k| {
        let mut s = gpu_primitives::RadixBits::to_u64(k.to_ordered());
        acc.wrapping_add(splitmix64(&mut s))
    })
}

/// Independent check of a sort: same length, same multiset fingerprint, in order.
fn sorted_ok<K: SortKey>(input_fp: u64, n: usize, out: &[K], descending: bool) -> bool {
    out.len() == n
        && fingerprint(out) == input_fp
        && out.windows(2).all(|w| {
            let (a, b) = (w[0].to_ordered(), w[1].to_ordered());
            if descending { a >= b } else { a <= b }
        })
}

/// `warpath sort`.
pub(crate) fn run_sort(args: SortArgs, json: bool) -> Result<()> {
    check_backend(args.input.backend, "sort", true)?;
    let out = result_output(&args.input, json, &ARRAY_OUTPUTS)?;
    dispatch!(
        resolve_key_type(&args.input)?,
        sort_typed(&args, out.as_ref(), json)
    )
}

/// `warpath sort` on keys of type `K`: load, sort, verify, write, report.
fn sort_typed<K: CliKey>(args: &SortArgs, out: Option<&Output>, json: bool) -> Result<()> {
    let a = &args.input;
    let bar = progress(4, "sort: load / sort / verify / write", json);
    // The keys and the radix sort's scratch buffer of the same size.
    let (mut keys, source) = load::<K>(a, 2.0)?;
    bar.inc(1);
    let n = keys.len();
    if let Some(o) = out {
        guard_terminal(o, n as u64, is_dash(a.output.as_deref()), "--output")?;
    }
    let fp = fingerprint(&keys);
    // Start rayon's workers before the clock, as a library caller's warm process has them.
    rayon::broadcast(|_| ());
    let t = Instant::now();
    let backend = if args.descending {
        radix_sort_desc(&mut keys, a.backend)?
    } else {
        radix_sort(&mut keys, a.backend)?
    };
    let elapsed = t.elapsed();
    bar.inc(1);
    let verified = sorted_ok(fp, n, &keys, args.descending);
    bar.inc(1);
    if let Some(o) = out {
        o.write_array(&keys, None, None)?;
    }
    bar.finish_and_clear();
    Finished {
        command: "sort",
        n,
        type_name: <K as Element>::NAME,
        source: &source,
        backend,
        elapsed,
        verified,
        out,
    }
    .report(
        json,
        serde_json::json!({ "descending": args.descending }),
        ["", if args.descending { ", descending" } else { "" }],
        "sorted output",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_check_catches_wrong_results() {
        let keys = vec![3u32, 1, 2, 2];
        let fp = fingerprint(&keys);
        assert!(sorted_ok(fp, 4, &[1u32, 2, 2, 3], false));
        assert!(!sorted_ok(fp, 4, &[1u32, 2, 3, 3], false));
        assert!(!sorted_ok(fp, 4, &[1u32, 2, 3, 2], false));
    }
}
