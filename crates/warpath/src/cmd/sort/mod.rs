//! `warpath sort` and `warpath distinct` (gpu-primitives): one file per subcommand (`radix`,
//! `distinct`); here what both share (key types, the input arguments, reading and generating
//! keys, the result's output, the rate), and the rows of `warpath demo`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use gpu_primitives::{
    DistinctOptions, Exec, SortKey, distinct_reference, distinct_with, radix_sort, sort_reference,
};
use gpu_runtime::Backend;

use warpath_io::{Element, Format, Output, npy};

use crate::cli_io::{InputInfo, output_unless_discarded, print_merged_json, report, written};
use crate::fail::{unverified, usage};
use crate::report::{DemoRow, DemoSize, Rows, format_seconds};

/// Calls `$f::<K>(args)` with `K` the Rust type of a [`KeyType`].
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

mod distinct;
mod radix;

pub(crate) use distinct::{DistinctArgs, run_distinct};
pub(crate) use radix::{SortArgs, run_sort};

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

/// One step of SplitMix64: advances `state` and returns 64 random bits.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `n` keys drawn from `dist` with the seed `seed` (the same keys for the same arguments).
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
        _ => {
            let mut v = huge_page_vec(n);
            v.extend((0..n).map(|_| K::uniform(splitmix64(&mut s), range)));
            v
        }
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

/// An empty vector with room for `n` keys whose pages Linux is asked to back with transparent
/// huge pages (`madvise(MADV_HUGEPAGE)`, before the first write; a no-op elsewhere or when
/// refused), as numpy asks for its large arrays: fewer TLB misses in the sort, so the timing
/// compares with numpy's on equal terms.
fn huge_page_vec<K>(n: usize) -> Vec<K> {
    let mut v = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = n * size_of::<K>();
        let start = v.as_mut_ptr() as usize;
        let aligned = start.next_multiple_of(HUGE);
        let len = (start + bytes).saturating_sub(aligned) / HUGE * HUGE;
        if bytes >= 4 * HUGE && len > 0 {
            // SAFETY: the range lies inside the vector's allocation; MADV_HUGEPAGE only changes
            // how the kernel backs the pages, never their contents; failure is harmless.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
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

/// Loads the keys; returns them and a description of the input (with any skipped header)
/// for the report.
fn load<K: CliKey>(a: &InputArgs, bytes_per_key: f64) -> Result<(Vec<K>, InputInfo)> {
    match (&a.input, a.generate) {
        (Some(p), _) => {
            let bytes = warpath_io::read_bytes(p)?;
            let mut header = None;
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
                    .and_then(|a| {
                        header = a.header.clone();
                        a.into_vector("the keys")
                    })
                    .map_err(|e| e.in_file(p))?
            };
            Ok((
                v,
                InputInfo {
                    source: p.display().to_string(),
                    header,
                },
            ))
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
                InputInfo::plain(
                    format!("generated {:?}{range}, seed {}", a.dist, a.seed).to_lowercase(),
                ),
            ))
        }
        (None, None) => Err(usage("give an input file or --generate N (see --help)")),
    }
}

/// The result's output (checked before the work), `None` for --discard or under --json
/// without --output.
fn result_output(a: &InputArgs, json: bool, allowed: &[Format]) -> Result<Option<Output>> {
    output_unless_discarded(a.discard, "--output", a.output.as_deref(), allowed, json)
}

/// A throughput for the reports: `1.23 G keys/s` or `456.7 M keys/s`.
fn rate(n: usize, t: Duration) -> String {
    let r = n as f64 / t.as_secs_f64().max(1e-12);
    if r >= 1e9 {
        format!("{:.2} G keys/s", r / 1e9)
    } else {
        format!("{:.1} M keys/s", r / 1e6)
    }
}

/// The end of a report line: `verified` or `VERIFICATION FAILED`.
fn verdict(verified: bool) -> &'static str {
    if verified {
        "verified"
    } else {
        "VERIFICATION FAILED"
    }
}

/// Outputs `sort` and `distinct` write arrays to.
const ARRAY_OUTPUTS: [Format; 4] = [Format::Text, Format::Csv, Format::Npy, Format::Bin];

/// A demo row: a radix sort of `keys` on `exec`, checked against the plain reference sort.
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

/// The demo row of distinct with counts on `exec`, checked against the plain reference.
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

/// A finished run of `sort` or `distinct`, for [`Finished::report`].
struct Finished<'a> {
    /// `sort` or `distinct`.
    command: &'static str,
    /// How many keys, and their type's name.
    n: usize,
    type_name: &'static str,
    source: &'a InputInfo,
    backend: Backend,
    elapsed: Duration,
    verified: bool,
    out: Option<&'a Output>,
}

impl Finished<'_> {
    /// Prints the report: under `json` one JSON object (the keys' count, type and input, the
    /// run's backend, time, verdict and output, then the fields of `extra`), else the line
    /// `COMMAND: N TYPE keys (INPUT)BEFORE on BACKEND in TIME (RATE)AFTER, VERDICT`; then
    /// fails when the result did not verify (`what` names the result).
    fn report(
        self,
        json: bool,
        extra: serde_json::Value,
        around: [&str; 2],
        what: &str,
    ) -> Result<()> {
        let Finished {
            command,
            n,
            type_name,
            source,
            backend,
            elapsed,
            verified,
            out,
        } = self;
        let seconds = elapsed.as_secs_f64();
        if json {
            let report = serde_json::json!({
                "command": command,
                "n": n,
                "type": type_name,
                "input": source.source,
                "header": source.header,
                "backend": backend,
                "seconds": seconds,
                "keys_per_second": n as f64 / seconds.max(1e-12),
                "verified": verified,
                "output": out.map(Output::describe),
            });
            print_merged_json(report, extra);
        } else {
            let [before, after] = around;
            report(
                &format!(
                    "{command}: {n} {type_name} keys ({}){before} on {backend} in {} ({}){after}, {}{}",
                    source.describe(),
                    format_seconds(seconds),
                    rate(n, elapsed),
                    verdict(verified),
                    written(out)
                ),
                out,
            );
        }
        if !verified {
            return Err(unverified(format!("the {what} failed verification")));
        }
        Ok(())
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
