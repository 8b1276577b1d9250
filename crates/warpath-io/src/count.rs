//! The one size syntax of every count on the command line.

/// Parses a count: `1000000`, `1_000_000`, `1e6`, `2.5e3`, `2^20`, or a decimal suffix
/// `10k`, `3M`, `1G`, `2T` (also after a mantissa: `1.5M`). The result must be a whole,
/// non-negative number that fits in a `u64`.
///
/// # Errors
/// A message that names the text and shows the accepted spellings.
///
/// # Examples
/// ```
/// use warpath_io::parse_count;
/// assert_eq!(parse_count("10_000"), Ok(10_000));
/// assert_eq!(parse_count("1e6"), Ok(1_000_000));
/// assert_eq!(parse_count("2^20"), Ok(1 << 20));
/// assert_eq!(parse_count("1.5M"), Ok(1_500_000));
/// assert!(parse_count("1.5").is_err());
/// ```
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let bad =
        || format!("`{s}` is not a count (write e.g. 1000000, 1_000_000, 1e6, 2^20, 10k, 3M, 1G)");
    let too_large = || format!("`{s}` is too large for a count (at most {})", u64::MAX);
    if t.is_empty() || t.starts_with(['-', '+']) {
        return Err(bad());
    }
    if let Some((a, b)) = t.split_once('^') {
        let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u32>()) else {
            return Err(bad());
        };
        return a.checked_pow(b).ok_or_else(too_large);
    }
    let (body, scale) = match t.as_bytes().last() {
        Some(b'k' | b'K') => (&t[..t.len() - 1], 1e3),
        Some(b'm' | b'M') => (&t[..t.len() - 1], 1e6),
        Some(b'g' | b'G') => (&t[..t.len() - 1], 1e9),
        Some(b't' | b'T') => (&t[..t.len() - 1], 1e12),
        _ => (t.as_str(), 1.0),
    };
    if let Ok(v) = body.parse::<u64>() {
        return v.checked_mul(scale as u64).ok_or_else(too_large);
    }
    // A decimal mantissa and/or exponent: exact when the value is a whole number below 2^53
    // (checked by recomputing it), which every count people type is.
    if !body
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E'))
    {
        return Err(bad());
    }
    let v: f64 = body.parse().map_err(|_| bad())?;
    let v = v * scale;
    if !v.is_finite() || v >= u64::MAX as f64 {
        return Err(too_large());
    }
    if v.fract() != 0.0 || v > (1u64 << 53) as f64 {
        return Err(format!("`{s}` is not a whole number"));
    }
    Ok(v as u64)
}

/// [`parse_count`] as a `usize` (for clap's `value_parser`).
///
/// # Errors
/// As [`parse_count`], or when the count does not fit in a `usize`.
///
/// ```
/// assert_eq!(warpath_io::parse_count_usize("4k"), Ok(4000));
/// ```
pub fn parse_count_usize(s: &str) -> Result<usize, String> {
    let v = parse_count(s)?;
    usize::try_from(v).map_err(|_| format!("`{s}` is too large for this machine"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling() {
        for (s, want) in [
            ("0", 0),
            ("1", 1),
            ("10_000", 10_000),
            (" 1e6 ", 1_000_000),
            ("1E6", 1_000_000),
            ("2.5e3", 2_500),
            ("2^20", 1 << 20),
            ("2^0", 1),
            ("10k", 10_000),
            ("3M", 3_000_000),
            ("1G", 1_000_000_000),
            ("2T", 2_000_000_000_000),
            ("1.5M", 1_500_000),
            ("1e12", 1_000_000_000_000),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(parse_count(s), Ok(want), "{s}");
        }
    }

    #[test]
    fn refusals_say_why() {
        for s in [
            "", "-1", "+3", "1.5", "ten", "1e", "2^", "^2", "1e-3", "0x10", "1kk", "k",
        ] {
            assert!(parse_count(s).is_err(), "{s:?} accepted");
        }
        assert!(parse_count("1.5").unwrap_err().contains("whole"));
        assert!(parse_count("2^64").unwrap_err().contains("too large"));
        assert!(parse_count("1e30").unwrap_err().contains("too large"));
        assert!(parse_count("99999999999999999999").is_err());
        assert!(parse_count("abc").unwrap_err().contains("1e6"));
    }
}
