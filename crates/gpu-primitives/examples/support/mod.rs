//! What the sort timing examples share.

/// The arguments `[N] [repeats] [type]`, defaulting to `n`, `repeats` and `u32`.
pub(crate) fn args(n: usize, repeats: usize) -> (usize, usize, String) {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(n);
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(repeats);
    let kind = args.get(3).map_or("u32", String::as_str).to_owned();
    (n, repeats, kind)
}
