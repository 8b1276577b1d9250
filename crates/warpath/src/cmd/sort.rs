//! `warpath sort` and `warpath distinct`: radix sort and distinct values (gpu-primitives) of a
//! file or of generated keys.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use gpu_primitives::{
    DistinctOptions, Equality, Exec, SortKey, distinct_reference, distinct_with, radix_sort,
    radix_sort_desc, sort_reference,
};
use gpu_runtime::Backend;

use warpath_io::{Element, Format, Output, npy};

use crate::cli_io::{check_backend, guard_terminal, is_dash, output, report, written};
use crate::fail::{unverified, usage};
use crate::report::{DemoRow, DemoSize, Rows, format_seconds, progress};

/// Key types the commands read, generate and write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KeyType {
    U32,
    U64,
    I32,
    I64,
    F32,
    F64,
}

/// Distributions for `--generate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Dist {
    /// Uniform over the type's range (integers), `[0, --range)` when given; floats: `[0, range)`
    /// (default range 1).
    Uniform,
    /// Uniform, then sorted ascending.
    Sorted,
    /// Uniform, then sorted descending.
    Reversed,
    /// Every key the same.
    Equal,
    /// Zipf-like (power law with exponent 1.1) over `1..=range` (default 10^6): few values
    /// very frequent.
    Zipf,
}

/// Where the keys come from and where results go (shared by `sort` and `distinct`).
#[derive(clap::Args, Debug)]
pub(crate) struct InputArgs {
    /// Input file (- for standard input): a `.npy` array (bool, integers or floats; its dtype
    /// sets --type), raw little-endian values of --type (`.bin`, or any name with --binary),
    /// or text with one number per line (blank lines and # comments skipped, an optional
    /// header line).
    #[arg(conflicts_with = "generate")]
    input: Option<PathBuf>,
    /// Read the input file as raw little-endian values of --type, whatever its extension.
    #[arg(long)]
    binary: bool,
    /// Key type [default: the .npy file's dtype, else u32].
    #[arg(long = "type", value_enum)]
    key_type: Option<KeyType>,
    /// Generate N keys instead of reading a file (1e7, 10M, 2^24, 10_000_000).
    #[arg(long, value_name = "N", value_parser = crate::cli_io::count)]
    generate: Option<usize>,
    /// Distribution of generated keys.
    #[arg(long, value_enum, default_value_t = Dist::Uniform)]
    dist: Dist,
    /// Generated keys lie in [0, RANGE) (uniform) or 1..=RANGE (zipf).
    #[arg(long, value_parser = crate::cli_io::count)]
    range: Option<usize>,
    /// Seed of the generator.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Where to run: auto (GPU when present and worth it), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Exec,
    /// Write the result here; the extension picks the format: .txt (one per line), .csv,
    /// .npy, .bin (raw little-endian). Default: standard output as text (-), except under
    /// --json; a terminal gets at most 10,000 lines unless -o - is given.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Run and verify without writing the result anywhere (for timing).
    #[arg(long, conflicts_with = "output")]
    discard: bool,
}

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

/// What the commands need of a key type besides sorting and I/O.
trait CliKey: SortKey + Element {
    /// A key from 64 random bits, uniform over the type or over [0, range).
    fn uniform(bits: u64, range: Option<usize>) -> Self;
    /// The key for integer value `v` (zipf ranks).
    fn from_rank(v: u64) -> Self;
}

macro_rules! cli_int {
    ($t:ty) => {
        impl CliKey for $t {
            fn uniform(bits: u64, range: Option<usize>) -> Self {
                match range {
                    Some(r) if r > 0 => (bits % r as u64) as $t,
                    _ => bits as $t,
                }
            }
            fn from_rank(v: u64) -> Self {
                v as $t
            }
        }
    };
}
cli_int!(u32);
cli_int!(u64);
cli_int!(i32);
cli_int!(i64);

macro_rules! cli_float {
    ($t:ty) => {
        impl CliKey for $t {
            fn uniform(bits: u64, range: Option<usize>) -> Self {
                let u = (bits >> 11) as f64 / (1u64 << 53) as f64;
                (u * range.unwrap_or(1) as f64) as $t
            }
            fn from_rank(v: u64) -> Self {
                v as $t
            }
        }
    };
}
cli_float!(f32);
cli_float!(f64);

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn generate<K: CliKey>(n: usize, dist: Dist, range: Option<usize>, seed: u64) -> Vec<K> {
    let mut s = seed;
    let mut v: Vec<K> = match dist {
        Dist::Equal => vec![K::uniform(splitmix64(&mut s), range); n],
        Dist::Zipf => {
            // continuous power law on [1, N + 1) by inversion, floored: P(k) ~ k^-1.1
            let big_n = range.unwrap_or(1_000_000).max(1) as f64;
            let e = 1.0 - 1.1f64;
            let top = (big_n + 1.0).powf(e);
            (0..n)
                .map(|_| {
                    let u = (splitmix64(&mut s) >> 11) as f64 / (1u64 << 53) as f64;
                    let x = ((top - 1.0) * u + 1.0).powf(1.0 / e);
                    K::from_rank((x.floor() as u64).clamp(1, big_n as u64))
                })
                .collect()
        }
        _ => (0..n)
            .map(|_| K::uniform(splitmix64(&mut s), range))
            .collect(),
    };
    match dist {
        Dist::Sorted => sort_reference(&mut v),
        Dist::Reversed => {
            sort_reference(&mut v);
            v.reverse();
        }
        _ => {}
    }
    v
}

/// The key type of a `.npy` dtype: the narrowest of ours that holds every value.
fn key_type_of(d: npy::Dtype) -> KeyType {
    use npy::Kind;
    match (d.kind, d.size) {
        (Kind::Bool, _) | (Kind::Uint, 1 | 2 | 4) => KeyType::U32,
        (Kind::Uint, _) => KeyType::U64,
        (Kind::Int, 1 | 2 | 4) => KeyType::I32,
        (Kind::Int, _) => KeyType::I64,
        (Kind::Float, 4) => KeyType::F32,
        (Kind::Float, _) => KeyType::F64,
    }
}

/// The key type to use: --type, else the `.npy` input's dtype, else u32.
fn resolve_key_type(a: &InputArgs) -> Result<KeyType> {
    if let Some(t) = a.key_type {
        return Ok(t);
    }
    match &a.input {
        Some(p) if !a.binary => Ok(warpath_io::npy_dtype(p)?.map_or(KeyType::U32, key_type_of)),
        _ => Ok(KeyType::U32),
    }
}

/// Loads the keys; returns them and a description of the input for the report.
fn load<K: CliKey>(a: &InputArgs, bytes_per_key: f64) -> Result<(Vec<K>, String)> {
    match (&a.input, a.generate) {
        (Some(p), _) => {
            let bytes = warpath_io::read_bytes(p)?;
            let v = if a.binary {
                if npy::is_npy(&bytes) {
                    return Err(usage(format!(
                        "--binary reads raw values, but {} is a .npy file (its header would be \
                         read as keys): leave out --binary",
                        p.display()
                    )));
                }
                warpath_io::parse_raw::<K>(&bytes)
                    .map_err(|e| anyhow::Error::new(e).context(p.display().to_string()))?
            } else {
                warpath_io::parse_array::<K>(&bytes, p)
                    .and_then(|a| a.into_vector("the keys"))
                    .map_err(|e| e.in_file(p))?
            };
            Ok((v, p.display().to_string()))
        }
        (None, Some(n)) => {
            warpath_io::check_memory(
                &format!("--generate {n}"),
                n as u64,
                bytes_per_key * K::DTYPE.size as f64,
                0,
                &format!("{} keys", <K as Element>::NAME),
            )?;
            let range = a.range.map(|r| format!(" in [0, {r})")).unwrap_or_default();
            Ok((
                generate(n, a.dist, a.range, a.seed),
                format!("generated {:?}{range}, seed {}", a.dist, a.seed).to_lowercase(),
            ))
        }
        (None, None) => Err(usage("give an input file or --generate N (see --help)")),
    }
}

/// The result's output (checked before the work), `None` for --discard or under --json
/// without --output.
fn result_output(a: &InputArgs, json: bool, allowed: &[Format]) -> Result<Option<Output>> {
    if a.discard {
        return Ok(None);
    }
    output("--output", a.output.as_deref(), allowed, json, true)
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

fn rate(n: usize, t: Duration) -> String {
    let r = n as f64 / t.as_secs_f64().max(1e-12);
    if r >= 1e9 {
        format!("{:.2} G keys/s", r / 1e9)
    } else {
        format!("{:.1} M keys/s", r / 1e6)
    }
}

macro_rules! dispatch {
    ($ty:expr, $f:ident ( $($arg:expr),* )) => {
        match $ty {
            KeyType::U32 => $f::<u32>($($arg),*),
            KeyType::U64 => $f::<u64>($($arg),*),
            KeyType::I32 => $f::<i32>($($arg),*),
            KeyType::I64 => $f::<i64>($($arg),*),
            KeyType::F32 => $f::<f32>($($arg),*),
            KeyType::F64 => $f::<f64>($($arg),*),
        }
    };
}

/// Outputs `sort` and `distinct` write arrays to.
const ARRAY_OUTPUTS: [Format; 4] = [Format::Text, Format::Csv, Format::Npy, Format::Bin];

/// `warpath sort`.
pub(crate) fn run_sort(args: SortArgs, json: bool) -> Result<()> {
    check_backend(args.input.backend, "sort", true)?;
    let out = result_output(&args.input, json, &ARRAY_OUTPUTS)?;
    dispatch!(
        resolve_key_type(&args.input)?,
        sort_typed(&args, out.as_ref(), json)
    )
}

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
    if json {
        println!(
            "{}",
            serde_json::json!({
                "command": "sort",
                "n": n,
                "type": <K as Element>::NAME,
                "input": source,
                "descending": args.descending,
                "backend": backend,
                "seconds": elapsed.as_secs_f64(),
                "keys_per_second": n as f64 / elapsed.as_secs_f64().max(1e-12),
                "verified": verified,
                "output": out.map(Output::describe),
            })
        );
    } else {
        report(
            &format!(
                "sort: {n} {} keys ({source}) on {backend} in {} ({}){}, {}{}",
                <K as Element>::NAME,
                format_seconds(elapsed.as_secs_f64()),
                rate(n, elapsed),
                if args.descending { ", descending" } else { "" },
                if verified {
                    "verified"
                } else {
                    "VERIFICATION FAILED"
                },
                written(out)
            ),
            out,
        );
    }
    if !verified {
        return Err(unverified("the sorted output failed verification"));
    }
    Ok(())
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
    if json {
        println!(
            "{}",
            serde_json::json!({
                "command": "distinct",
                "n": n,
                "type": <K as Element>::NAME,
                "input": source,
                "distinct": d.values.len(),
                "equality": if args.bitwise { "bitwise" } else { "numeric" },
                "max_count": max_count,
                "backend": d.backend,
                "seconds": elapsed.as_secs_f64(),
                "keys_per_second": n as f64 / elapsed.as_secs_f64().max(1e-12),
                "verified": verified,
                "output": out.map(Output::describe),
            })
        );
    } else {
        report(
            &format!(
                "distinct: {n} {} keys ({source}) -> {} distinct (most frequent x{max_count}) on {} in {} ({}), {}{}",
                <K as Element>::NAME,
                d.values.len(),
                d.backend,
                format_seconds(elapsed.as_secs_f64()),
                rate(n, elapsed),
                if verified {
                    "verified"
                } else {
                    "VERIFICATION FAILED"
                },
                written(out)
            ),
            out,
        );
    }
    if !verified {
        return Err(unverified("the distinct values failed verification"));
    }
    Ok(())
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

fn sort_row<K: CliKey>(what: &str, keys: &[K], exec: Exec) -> DemoRow {
    let mut v = keys.to_vec();
    let n = v.len() as u64;
    let t = Instant::now();
    match radix_sort(&mut v, exec) {
        Ok(b) => {
            let elapsed = t.elapsed();
            let mut expect = keys.to_vec();
            sort_reference(&mut expect);
            let ok = v
                .iter()
                .map(|k| k.to_ordered())
                .eq(expect.iter().map(|k| k.to_ordered()));
            DemoRow::new(what, n, b, elapsed, ok).with_note(rate(n as usize, elapsed))
        }
        Err(e) => DemoRow::failed(what, n, e),
    }
}

fn distinct_row(keys: &[u32], exec: Exec) -> DemoRow {
    let what = "distinct (u32 in [0, 1000))";
    let n = keys.len() as u64;
    let t = Instant::now();
    let opts = DistinctOptions {
        counts: true,
        ..DistinctOptions::default()
    };
    match distinct_with(keys, opts, exec) {
        Ok(d) => {
            let elapsed = t.elapsed();
            let (values, counts, _) = distinct_reference(keys);
            let ok = d.values == values && d.counts == Some(counts);
            let note = format!("{} distinct, {}", d.values.len(), rate(n as usize, elapsed));
            let note = if d.backend == Backend::Cuda {
                format!("{note}, includes transfers")
            } else {
                note
            };
            DemoRow::new(what, n, d.backend, elapsed, ok).with_note(note)
        }
        Err(e) => DemoRow::failed(what, n, e),
    }
}

/// Rows of `warpath demo`: u32 and f64 sorts and the distinct experiment, on the CPU and, when
/// there is one, on the GPU; each checked against the plain reference.
pub(crate) fn demo(size: DemoSize, rows: &mut Rows) {
    let (n_sort, n_distinct) = match size {
        DemoSize::Small => (1 << 20, 1 << 21),
        DemoSize::Large => (1 << 26, 1 << 26),
    };
    let u: Vec<u32> = generate(n_sort, Dist::Uniform, None, 1);
    let mut f: Vec<f64> = generate(n_sort, Dist::Uniform, Some(1000), 2);
    // the documented float order: -0.0 before +0.0, NaNs last
    for (i, x) in [
        -0.0,
        0.0,
        f64::NAN,
        f64::NEG_INFINITY,
        f64::INFINITY,
        -f64::NAN,
    ]
    .into_iter()
    .enumerate()
    {
        if let Some(slot) = f.get_mut(i * 7919) {
            *slot = x;
        }
    }
    let d: Vec<u32> = generate(n_distinct, Dist::Uniform, Some(1000), 3);
    let mut execs = vec![Exec::Cpu];
    if gpu_runtime::gpu().is_ok() {
        execs.push(Exec::Cuda);
    }
    for &e in &execs {
        rows.push(sort_row("radix sort (u32)", &u, e));
        rows.push(sort_row("radix sort (f64, NaN/-0.0)", &f, e));
        rows.push(distinct_row(&d, e));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_dtypes_pick_the_narrowest_key_type() {
        use npy::{Dtype, Kind};
        for (d, want) in [
            (Dtype::new(Kind::Bool, 1), KeyType::U32),
            (Dtype::new(Kind::Uint, 2), KeyType::U32),
            (Dtype::new(Kind::Uint, 8), KeyType::U64),
            (Dtype::new(Kind::Int, 1), KeyType::I32),
            (Dtype::new(Kind::Int, 8), KeyType::I64),
            (Dtype::new(Kind::Float, 4), KeyType::F32),
            (Dtype::new(Kind::Float, 8), KeyType::F64),
        ] {
            assert_eq!(key_type_of(d), want, "{d:?}");
        }
    }

    #[test]
    fn checks_catch_wrong_results() {
        let keys = vec![3u32, 1, 2, 2];
        let fp = fingerprint(&keys);
        assert!(sorted_ok(fp, 4, &[1u32, 2, 2, 3], false));
        assert!(!sorted_ok(fp, 4, &[1u32, 2, 3, 3], false));
        assert!(!sorted_ok(fp, 4, &[1u32, 2, 3, 2], false));
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

    #[test]
    fn generators_follow_their_distribution() {
        let v: Vec<u32> = generate(1000, Dist::Uniform, Some(10), 1);
        assert!(v.iter().all(|&x| x < 10));
        let s: Vec<i64> = generate(1000, Dist::Sorted, None, 1);
        assert!(s.windows(2).all(|w| w[0] <= w[1]));
        let z: Vec<u64> = generate(10_000, Dist::Zipf, Some(100), 1);
        assert!(z.iter().all(|&x| (1..=100).contains(&x)));
        assert!(z.iter().filter(|&&x| x == 1).count() > z.iter().filter(|&&x| x == 50).count());
    }
}
