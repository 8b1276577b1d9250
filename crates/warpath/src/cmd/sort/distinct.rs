//! `warpath distinct`: distinct values, with counts, (gpu-primitives) of a file or of generated
//! keys, under numpy's float equality or bit for bit, verified by a second counting pass.

use std::time::Instant;

use anyhow::Result;
use gpu_primitives::{DistinctOptions, Equality, SortKey, distinct_with};

use warpath_io::{Element, Format, Output};

use super::{
    ARRAY_OUTPUTS, CliKey, Finished, InputArgs, KeyType, load, resolve_key_type, result_output,
};
use crate::cli_io::{check_backend, guard_terminal, is_dash};
use crate::fail::usage;
use crate::report::progress;

/// Arguments of `warpath distinct`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  warpath distinct ids.npy -o unique.npy
  warpath distinct words.txt --counts -o counts.csv   # value,count with a header")]
pub(crate) struct DistinctArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Write `value count` rows (a `value,count` header in .csv) instead of values; text
    /// outputs only (.txt, .csv, standard output).
    #[arg(long)]
    counts: bool,
    /// Compare floats bit for bit: -0.0 and +0.0 are two values, and so are NaNs whose bits
    /// differ. The default is numpy's `unique`: -0.0 == +0.0 and all NaNs are one value, last
    /// (each group is shown by its first key in sort order).
    #[arg(long)]
    bitwise: bool,
}

/// Independent check of distinct under `equality`: strictly increasing values no two of which
/// are equal, counts summing to n, and every key equal to one value, with the right count (by
/// a second counting pass).
fn distinct_ok<K: SortKey>(keys: &[K], values: &[K], counts: &[u64], equality: Equality) -> bool {
    let bits: Vec<K::Bits> = values.iter().map(|v| v.to_ordered()).collect();
    if bits.windows(2).any(|w| w[0] >= w[1])
        || values.windows(2).any(|w| equality.eq(w[0], w[1]))
        || counts.len() != values.len()
    {
        return false;
    }
    if counts.iter().sum::<u64>() != keys.len() as u64 {
        return false;
    }
    let mut seen = vec![0u64; values.len()];
    for &k in keys {
        // The value the key equals: bit for bit, or (numeric equality) a neighbour in the
        // order, e.g. -0.0 for +0.0 or the group's first NaN for another NaN.
        let i = match bits.binary_search(&k.to_ordered()) {
            Ok(i) => Some(i),
            Err(i) => [i.wrapping_sub(1), i]
                .into_iter()
                .find(|&j| j < values.len() && equality.eq(k, values[j])),
        };
        match i {
            Some(i) => seen[i] += 1,
            None => return false,
        }
    }
    seen == counts
}

/// `warpath distinct`.
pub(crate) fn run_distinct(args: DistinctArgs, json: bool) -> Result<()> {
    check_backend(args.input.backend, "distinct", true)?;
    let out = result_output(&args.input, json, &ARRAY_OUTPUTS)?;
    if args.counts
        && let Some(o) = &out
        && !matches!(o.format, Format::Text | Format::Csv)
    {
        return Err(usage(format!(
            "--counts writes `value count` text rows, but --output {} is {}: use .txt or .csv, \
             or leave out --counts",
            o.describe(),
            o.format.extension()
        )));
    }
    if args.counts && out.is_none() && !json {
        return Err(usage(
            "--counts and --discard: the counts are written nowhere",
        ));
    }
    dispatch!(
        resolve_key_type(&args.input)?,
        distinct_typed(&args, out.as_ref(), json)
    )
}

/// `warpath distinct` on keys of type `K`: load, distinct, verify, write, report.
fn distinct_typed<K: CliKey>(args: &DistinctArgs, out: Option<&Output>, json: bool) -> Result<()> {
    let a = &args.input;
    let equality = if args.bitwise {
        Equality::Bitwise
    } else {
        Equality::Numeric
    };
    let bar = progress(4, "distinct: load / distinct / verify / write", json);
    // The keys, a sorted copy with its scratch, the values and their counts.
    let (keys, source) = load::<K>(a, 4.0 + 8.0 / K::DTYPE.size as f64)?;
    bar.inc(1);
    let n = keys.len();
    rayon::broadcast(|_| ());
    let t = Instant::now();
    let d = distinct_with(
        &keys,
        DistinctOptions {
            counts: true,
            inverse: false,
            equality,
        },
        a.backend,
    )?;
    let elapsed = t.elapsed();
    bar.inc(1);
    let counts = d.counts.clone().unwrap_or_default();
    let verified = distinct_ok(&keys, &d.values, &counts, equality);
    bar.inc(1);
    if let Some(o) = out {
        guard_terminal(
            o,
            d.values.len() as u64,
            is_dash(a.output.as_deref()),
            "--output",
        )?;
        if args.counts {
            write_counts(o, &d.values, &counts)?;
        } else {
            o.write_array(&d.values, None, None)?;
        }
    }
    bar.finish_and_clear();
    let max_count = counts.iter().copied().max().unwrap_or(0);
    let distinct = d.values.len();
    Finished {
        command: "distinct",
        n,
        type_name: <K as Element>::NAME,
        source: &source,
        backend: d.backend,
        elapsed,
        verified,
        out,
    }
    .report(
        json,
        serde_json::json!({
            "distinct": distinct,
            "equality": if args.bitwise { "bitwise" } else { "numeric" },
            "max_count": max_count,
        }),
        [
            &format!(" -> {distinct} distinct (most frequent x{max_count})"),
            "",
        ],
        "distinct values",
    )
}

/// `value count` rows (space-separated text, or CSV with a `value,count` header).
fn write_counts<K: CliKey>(o: &Output, values: &[K], counts: &[u64]) -> Result<()> {
    let csv = o.format == Format::Csv;
    let mut sink = o.open()?;
    let mut buf = Vec::with_capacity(1 << 16);
    if csv {
        buf.extend_from_slice(b"value,count\n");
    }
    for (v, c) in values.iter().zip(counts) {
        v.write_text(&mut buf);
        buf.push(if csv { b',' } else { b' ' });
        c.write_text(&mut buf);
        buf.push(b'\n');
        if buf.len() > 1 << 16 {
            sink.write_all(&buf)?;
            buf.clear();
        }
    }
    sink.write_all(&buf)?;
    sink.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_check_catches_wrong_results() {
        let keys = vec![3u32, 1, 2, 2];
        let n = Equality::Numeric;
        assert!(distinct_ok(&keys, &[1, 2, 3], &[1, 2, 1], n));
        assert!(!distinct_ok(&keys, &[1, 2, 3], &[1, 1, 2], n));
        assert!(!distinct_ok(&keys, &[1, 3], &[1, 1], n));
        // numpy's float equality: -0.0 == +0.0 and NaNs are one value; bitwise they differ.
        let nan2 = f64::from_bits(f64::NAN.to_bits() | 1);
        let floats = [0.0, -0.0, f64::NAN, 1.0, nan2, -f64::NAN];
        assert!(distinct_ok(&floats, &[-0.0, 1.0, f64::NAN], &[2, 1, 3], n));
        assert!(!distinct_ok(
            &floats,
            &[-0.0, 0.0, 1.0, f64::NAN],
            &[1, 1, 1, 3],
            n
        ));
        let b = Equality::Bitwise;
        assert!(!distinct_ok(&floats, &[-0.0, 1.0, f64::NAN], &[2, 1, 3], b));
        assert!(distinct_ok(
            &floats,
            &[-0.0, 0.0, 1.0, f64::NAN, nan2, -f64::NAN],
            &[1; 6],
            b
        ));
    }
}
