//! Checks made before work starts: will it fit in memory, will it finish within a day.

use crate::IoError;

/// Requests estimated to run longer than this are refused unless forced (a day).
pub const MAX_SECONDS_UNFORCED: f64 = 86_400.0;

/// Checks that `count` items of `bytes_per_item` bytes each, plus `fixed` bytes, fit in the
/// memory available now (Linux `MemAvailable`; the check passes where that cannot be read).
/// `what` names the request (e.g. `--generate 1e12`), `unit` the items.
///
/// # Errors
/// [`IoError::OutOfMemory`] with the bytes needed, the bytes available and the largest count
/// that fits.
///
/// # Examples
/// ```
/// use warpath_io::check_memory;
/// assert!(check_memory("tiny", 10, 8.0, 0, "keys").is_ok());
/// let e = check_memory("--generate 1e18", 1_000_000_000_000_000_000, 8.0, 0, "keys");
/// if let Err(e) = e {
///     assert!(e.to_string().contains("at most"));
/// }
/// ```
pub fn check_memory(
    what: &str,
    count: u64,
    bytes_per_item: f64,
    fixed: u64,
    unit: &str,
) -> Result<(), IoError> {
    match gpu_runtime::host_available_memory() {
        Some(available) => {
            check_memory_against(what, count, bytes_per_item, fixed, unit, available)
        }
        None => Ok(()),
    }
}

/// Memory a reader may set aside for what a file only claims (a size line, a declared
/// member size) under the fuzzer (`cfg(fuzzing)`), so that a reader's own refusal, not
/// libFuzzer's memory limit, is what a large claim meets.
#[cfg(fuzzing)]
const FUZZING_CLAIM_BYTES: u64 = 1 << 24;

/// [`check_memory`] of what a file claims before its data is read (`count` items of
/// `bytes_per_item` bytes): the memory available now, or 16 MiB under the fuzzer.
pub(crate) fn check_claim(
    what: &str,
    count: u64,
    bytes_per_item: f64,
    unit: &str,
) -> Result<(), IoError> {
    #[cfg(fuzzing)]
    return check_memory_against(what, count, bytes_per_item, 0, unit, FUZZING_CLAIM_BYTES);
    #[cfg(not(fuzzing))]
    check_memory(what, count, bytes_per_item, 0, unit)
}

/// [`check_memory`] against a given number of available bytes (testable without the machine).
///
/// # Errors
/// As [`check_memory`].
///
/// ```
/// let e = warpath_io::check_memory_against("--n", 1000, 16.0, 0, "nodes", 8000).unwrap_err();
/// assert_eq!(e.to_string(), "--n: 1000 nodes need about 15.6 KiB of memory, 7.8 KiB available: at most 500 nodes fit");
/// ```
pub fn check_memory_against(
    what: &str,
    count: u64,
    bytes_per_item: f64,
    fixed: u64,
    unit: &str,
    available: u64,
) -> Result<(), IoError> {
    let needed = (count as f64 * bytes_per_item + fixed as f64).min(u64::MAX as f64);
    if needed <= available as f64 {
        return Ok(());
    }
    let largest = if bytes_per_item > 0.0 {
        ((available.saturating_sub(fixed)) as f64 / bytes_per_item).floor() as u64
    } else {
        0
    };
    Err(IoError::OutOfMemory {
        what: what.to_owned(),
        count,
        unit: unit.to_owned(),
        needed: needed as u64,
        available,
        largest,
    })
}

/// Refuses a request whose estimated run time `seconds` is above a day unless `force`.
/// `how` says how the estimate was made (e.g. `20! permutations at about 1e9 per second`).
///
/// # Errors
/// [`IoError::TooLong`].
///
/// # Examples
/// ```
/// use warpath_io::check_duration;
/// assert!(check_duration("--n 10", 3.0, "", false).is_ok());
/// assert!(check_duration("--n 20", 1e10, "20! at 1e9/s", false).is_err());
/// assert!(check_duration("--n 20", 1e10, "20! at 1e9/s", true).is_ok());
/// ```
pub fn check_duration(what: &str, seconds: f64, how: &str, force: bool) -> Result<(), IoError> {
    if force || seconds.is_nan() || seconds <= MAX_SECONDS_UNFORCED {
        return Ok(());
    }
    Err(IoError::TooLong {
        what: what.to_owned(),
        seconds,
        how: how.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_message_has_sizes_and_the_largest_fit() {
        let e = check_memory_against(
            "--generate 1e12",
            1_000_000_000_000,
            12.0,
            0,
            "keys",
            24 << 30,
        )
        .unwrap_err();
        let s = e.to_string();
        assert!(s.contains("10.9 TiB"), "{s}");
        assert!(s.contains("24.0 GiB available"), "{s}");
        assert!(
            s.contains(&format!("at most {} keys", (24u64 << 30) / 12)),
            "{s}"
        );
        assert_eq!(e.kind(), "out_of_memory");
        assert!(check_memory_against("x", 2, 12.0, 0, "keys", 24).is_ok());
        assert!(check_memory_against("x", 2, 12.0, 1, "keys", 24).is_err());
        // the fixed part alone may not fit: the largest count is 0
        let e = check_memory_against("x", 0, 1.0, 100, "keys", 10).unwrap_err();
        assert!(e.to_string().contains("at most 0 keys"));
        // absurd sizes do not overflow
        assert!(check_memory_against("x", u64::MAX, 1e6, u64::MAX, "k", 1).is_err());
    }

    #[test]
    fn durations() {
        assert!(check_duration("x", MAX_SECONDS_UNFORCED, "", false).is_ok());
        let e =
            check_duration("perm --n 20", 2.8e9, "20! permutations at 870 M/s", false).unwrap_err();
        assert!(e.to_string().contains("88.7 years"), "{e}");
        assert!(e.to_string().contains("--force"), "{e}");
        assert_eq!(e.kind(), "too_long");
        assert!(check_duration("x", f64::INFINITY, "", true).is_ok());
    }
}
