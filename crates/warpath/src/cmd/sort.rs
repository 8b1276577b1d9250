//! `warpath sort` and `warpath distinct`: radix sort and distinct values (gpu-primitives) of a
//! file or of generated keys.

use std::fmt::Display;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use gpu_primitives::{
    DistinctOptions, Exec, SortKey, distinct_reference, distinct_with, radix_sort, radix_sort_desc,
    sort_reference,
};
use gpu_runtime::Backend;

use crate::cmd::demo::DemoSize;
use crate::report::{DemoRow, progress};

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
    /// Input file: text with one number per line (blank lines are skipped), or raw
    /// little-endian values with --binary.
    #[arg(conflicts_with = "generate")]
    input: Option<PathBuf>,
    /// Read (and write) raw little-endian values of --type instead of text.
    #[arg(long)]
    binary: bool,
    /// Key type.
    #[arg(long = "type", value_enum, default_value_t = KeyType::U32)]
    key_type: KeyType,
    /// Generate N keys instead of reading a file (underscores allowed: 10_000_000).
    #[arg(long, value_name = "N", value_parser = super::parse_count)]
    generate: Option<usize>,
    /// Distribution of generated keys.
    #[arg(long, value_enum, default_value_t = Dist::Uniform)]
    dist: Dist,
    /// Generated keys lie in [0, RANGE) (uniform) or 1..=RANGE (zipf).
    #[arg(long, value_parser = super::parse_count)]
    range: Option<usize>,
    /// Seed of the generator.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Where to run: auto (GPU when present and worth it), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Exec,
    /// Write the result to FILE (text, or binary with --binary).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Arguments of `warpath sort`.
#[derive(clap::Args, Debug)]
pub(crate) struct SortArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Sort descending (the exact reverse order; floats: NaNs first).
    #[arg(long)]
    descending: bool,
}

/// Arguments of `warpath distinct`.
#[derive(clap::Args, Debug)]
pub(crate) struct DistinctArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Write `value<TAB>count` lines instead of values (text output only).
    #[arg(long)]
    counts: bool,
}

/// What the commands need of a key type besides sorting.
trait CliKey: SortKey + FromStr + Display {
    const BYTES: usize;
    fn from_le(b: &[u8]) -> Self;
    fn write_le(self, out: &mut Vec<u8>);
    /// A key from 64 random bits, uniform over the type or over [0, range).
    fn uniform(bits: u64, range: Option<usize>) -> Self;
    /// The key for integer value `v` (zipf ranks).
    fn from_rank(v: u64) -> Self;
}

macro_rules! cli_int {
    ($t:ty) => {
        impl CliKey for $t {
            const BYTES: usize = size_of::<$t>();
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
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
            const BYTES: usize = size_of::<$t>();
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
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

fn read_text<K: CliKey>(path: &Path) -> Result<Vec<K>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        match t.parse::<K>() {
            Ok(x) => v.push(x),
            Err(_) => bail!(
                "{}: line {}: `{}` is not a {} number",
                path.display(),
                i + 1,
                if t.len() > 40 { &t[..40] } else { t },
                K::NAME
            ),
        }
    }
    Ok(v)
}

fn read_binary<K: CliKey>(path: &Path) -> Result<Vec<K>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() % K::BYTES != 0 {
        bail!(
            "{}: {} bytes is not a whole number of {}-byte {} values",
            path.display(),
            bytes.len(),
            K::BYTES,
            K::NAME
        );
    }
    Ok(bytes.chunks_exact(K::BYTES).map(K::from_le).collect())
}

/// Loads the keys; returns them and a description of the input for the report.
fn load<K: CliKey>(a: &InputArgs) -> Result<(Vec<K>, String)> {
    match (&a.input, a.generate) {
        (Some(p), _) => {
            let v = if a.binary {
                read_binary(p)?
            } else {
                read_text(p)?
            };
            Ok((v, p.display().to_string()))
        }
        (None, Some(n)) => {
            let range = a.range.map(|r| format!(" in [0, {r})")).unwrap_or_default();
            Ok((
                generate(n, a.dist, a.range, a.seed),
                format!("generated {:?}{range}, seed {}", a.dist, a.seed).to_lowercase(),
            ))
        }
        (None, None) => bail!("give an input file or --generate N (see --help)"),
    }
}

fn write_keys<K: CliKey>(
    path: &Path,
    keys: &[K],
    counts: Option<&[u64]>,
    binary: bool,
) -> Result<()> {
    let f = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = BufWriter::new(f);
    if binary {
        let mut buf = Vec::with_capacity(keys.len() * K::BYTES);
        for &k in keys {
            k.write_le(&mut buf);
        }
        w.write_all(&buf)?;
    } else {
        for (i, k) in keys.iter().enumerate() {
            match counts {
                Some(c) => writeln!(w, "{k}\t{}", c[i])?,
                None => writeln!(w, "{k}")?,
            }
        }
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
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

/// Independent check of distinct: strictly increasing values, counts summing to n, and every
/// key found among the values with the right count (by a second counting pass).
fn distinct_ok<K: SortKey>(keys: &[K], values: &[K], counts: &[u64]) -> bool {
    let bits: Vec<K::Bits> = values.iter().map(|v| v.to_ordered()).collect();
    if bits.windows(2).any(|w| w[0] >= w[1]) || counts.len() != values.len() {
        return false;
    }
    if counts.iter().sum::<u64>() != keys.len() as u64 {
        return false;
    }
    let mut seen = vec![0u64; values.len()];
    for k in keys {
        match bits.binary_search(&k.to_ordered()) {
            Ok(i) => seen[i] += 1,
            Err(_) => return false,
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

/// `warpath sort`.
pub(crate) fn run_sort(args: SortArgs, json: bool) -> Result<()> {
    dispatch!(args.input.key_type, sort_typed(&args, json))
}

fn sort_typed<K: CliKey>(args: &SortArgs, json: bool) -> Result<()> {
    let a = &args.input;
    let bar = progress(4, "sort: load / sort / verify / write", json);
    let (mut keys, source) = load::<K>(a)?;
    bar.inc(1);
    let n = keys.len();
    let fp = fingerprint(&keys);
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
    if let Some(out) = &a.output {
        write_keys(out, &keys, None, a.binary)?;
    }
    bar.finish_and_clear();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "command": "sort",
                "n": n,
                "type": K::NAME,
                "input": source,
                "descending": args.descending,
                "backend": backend,
                "seconds": elapsed.as_secs_f64(),
                "keys_per_second": n as f64 / elapsed.as_secs_f64().max(1e-12),
                "verified": verified,
                "output": a.output.as_ref().map(|p| p.display().to_string()),
            })
        );
    } else {
        println!(
            "sort: {n} {} keys ({source}) on {backend} in {} ({}){}, {}",
            K::NAME,
            crate::report::format_seconds(elapsed.as_secs_f64()),
            rate(n, elapsed),
            if args.descending { ", descending" } else { "" },
            if verified {
                "verified"
            } else {
                "VERIFICATION FAILED"
            }
        );
    }
    if !verified {
        bail!("the sorted output failed verification");
    }
    Ok(())
}

/// `warpath distinct`.
pub(crate) fn run_distinct(args: DistinctArgs, json: bool) -> Result<()> {
    if args.counts && args.input.binary && args.input.output.is_some() {
        bail!("--counts writes text lines; leave out --binary or --counts");
    }
    dispatch!(args.input.key_type, distinct_typed(&args, json))
}

fn distinct_typed<K: CliKey>(args: &DistinctArgs, json: bool) -> Result<()> {
    let a = &args.input;
    let bar = progress(4, "distinct: load / distinct / verify / write", json);
    let (keys, source) = load::<K>(a)?;
    bar.inc(1);
    let n = keys.len();
    let t = Instant::now();
    let d = distinct_with(
        &keys,
        DistinctOptions {
            counts: true,
            inverse: false,
        },
        a.backend,
    )?;
    let elapsed = t.elapsed();
    bar.inc(1);
    let counts = d.counts.clone().unwrap_or_default();
    let verified = distinct_ok(&keys, &d.values, &counts);
    bar.inc(1);
    if let Some(out) = &a.output {
        write_keys(out, &d.values, args.counts.then_some(&counts[..]), a.binary)?;
    }
    bar.finish_and_clear();
    let max_count = counts.iter().copied().max().unwrap_or(0);
    if json {
        println!(
            "{}",
            serde_json::json!({
                "command": "distinct",
                "n": n,
                "type": K::NAME,
                "input": source,
                "distinct": d.values.len(),
                "max_count": max_count,
                "backend": d.backend,
                "seconds": elapsed.as_secs_f64(),
                "keys_per_second": n as f64 / elapsed.as_secs_f64().max(1e-12),
                "verified": verified,
                "output": a.output.as_ref().map(|p| p.display().to_string()),
            })
        );
    } else {
        println!(
            "distinct: {n} {} keys ({source}) -> {} distinct (most frequent x{max_count}) on {} in {} ({}), {}",
            K::NAME,
            d.values.len(),
            d.backend,
            crate::report::format_seconds(elapsed.as_secs_f64()),
            rate(n, elapsed),
            if verified {
                "verified"
            } else {
                "VERIFICATION FAILED"
            }
        );
    }
    if !verified {
        bail!("the distinct values failed verification");
    }
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
        inverse: false,
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
pub(crate) fn demo(size: DemoSize) -> Vec<DemoRow> {
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
    let mut rows = Vec::new();
    for &e in &execs {
        rows.push(sort_row("radix sort (u32)", &u, e));
        rows.push(sort_row("radix sort (f64, NaN/-0.0)", &f, e));
        rows.push(distinct_row(&d, e));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_in_several_spellings() {
        assert_eq!(super::super::parse_count("1_000"), Ok(1000));
        assert_eq!(super::super::parse_count("1e6"), Ok(1_000_000));
        assert_eq!(super::super::parse_count("2^20"), Ok(1 << 20));
        assert_eq!(super::super::parse_count("10k"), Ok(10_000));
        assert_eq!(super::super::parse_count("3M"), Ok(3_000_000));
        assert!(super::super::parse_count("2^20k").is_err());
        assert!(super::super::parse_count("ten").is_err());
    }

    #[test]
    fn malformed_line_names_its_number() {
        let dir = std::env::temp_dir().join(format!("warpath-sort-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("keys.txt");
        std::fs::write(&p, "5\n3\n\n7x\n1\n").unwrap();
        let e = read_text::<u32>(&p).unwrap_err().to_string();
        assert!(e.contains("line 4"), "{e}");
        std::fs::write(&p, "5\n-3\n\n1e3\nnan\n-0\n").unwrap();
        let v = read_text::<f64>(&p).unwrap();
        assert_eq!(v.len(), 5);
        std::fs::write(&p, [1u8, 2, 3]).unwrap();
        assert!(
            read_binary::<u32>(&p)
                .unwrap_err()
                .to_string()
                .contains("3 bytes")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn checks_catch_wrong_results() {
        let keys = vec![3u32, 1, 2, 2];
        let fp = fingerprint(&keys);
        assert!(sorted_ok(fp, 4, &[1u32, 2, 2, 3], false));
        assert!(!sorted_ok(fp, 4, &[1u32, 2, 3, 3], false));
        assert!(!sorted_ok(fp, 4, &[1u32, 2, 3, 2], false));
        assert!(distinct_ok(&keys, &[1, 2, 3], &[1, 2, 1]));
        assert!(!distinct_ok(&keys, &[1, 2, 3], &[1, 1, 2]));
        assert!(!distinct_ok(&keys, &[1, 3], &[1, 1]));
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
