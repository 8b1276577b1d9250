//! One module per subcommand. Each has `Args` (clap) and `run(args, json)`; algorithm
//! subcommands also have `demo(size) -> Vec<DemoRow>` for `warpath demo`.

pub(crate) mod demo;
pub(crate) mod fhn;
pub(crate) mod graph;
pub(crate) mod info;
pub(crate) mod kmeans;
pub(crate) mod lap;
pub(crate) mod perm;
pub(crate) mod sort;

/// A count from the command line: `1000000`, `1_000_000`, `1e6`, `2^20`, or with a decimal
/// suffix `10k`, `3M`, `1G`. Errors say what was expected.
pub(crate) fn parse_count(s: &str) -> Result<usize, String> {
    let t = s.trim().replace('_', "");
    let too_large = || format!("{s} is too large");
    let (body, scale) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000usize),
        Some((i, 'm' | 'M')) => (&t[..i], 1_000_000),
        Some((i, 'g' | 'G')) => (&t[..i], 1_000_000_000),
        _ => (t.as_str(), 1),
    };
    if let Ok(v) = body.parse::<usize>() {
        return v.checked_mul(scale).ok_or_else(too_large);
    }
    if scale == 1 {
        if let Some((a, b)) = body.split_once('^')
            && let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<u32>())
        {
            return a.checked_pow(b).ok_or_else(too_large);
        }
        if let Some((a, b)) = body.split_once(['e', 'E'])
            && let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<u32>())
        {
            return 10usize
                .checked_pow(b)
                .and_then(|p| p.checked_mul(a))
                .ok_or_else(too_large);
        }
    }
    Err(format!(
        "`{s}` is not a count (e.g. 1000000, 1_000_000, 1e6, 2^20, 10k, 3M)"
    ))
}
