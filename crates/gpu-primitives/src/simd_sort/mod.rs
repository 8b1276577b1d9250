//! Vectorized quicksort of ordered bits (`u32`, `u64`) on the CPU, chosen at run time.
//!
//! On x86-64 with AVX-512 (`gpu_runtime::cpu::has_avx512`, off under
//! `WARPATH_DISABLE_AVX512`) [`avx512`] sorts in place: a vectorized partition and
//! in-register networks for small ranges (ranges of up to 2048 keys out of place, through a
//! buffer on the stack), the two sides of large partitions on separate rayon threads. With
//! AVX2 only, [`avx2`] does the same on 256-bit registers; [`small_oop`] holds the level of
//! the out-of-place sort of small ranges that both expand. Elsewhere [`sort_unsigned`]
//! returns `false` and the caller uses the LSD radix sort (`radix_cpu`), which is portable.
//! `WARPATH_SIMD_SORT` (read once) overrides the choice: `avx2` picks the AVX2 path on a CPU
//! that also has AVX-512, `off` the radix sort.
//!
//! Signed integers are sorted as themselves (signed compares); unsigned integers and the
//! ordered bits of floats as unsigned.
//!
//! Key sorts use it (equal ordered bits are identical keys, so an unstable sort cannot be
//! told from a stable one), and so does `argsort_into`, through words that make every key
//! distinct. Pair sorts stay on the radix sort.

/// All-ones mask of the first `n` lanes of a register.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn first(n: usize) -> u32 {
    ((1u64 << n) - 1) as u32
}

/// Lanes `l` with `l & d != 0`, for `d` a power of two below 16 (0 for larger `d`); for a
/// register of fewer lanes, masked by [`first`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
const fn upper(d: usize) -> u32 {
    match d {
        1 => 0xAAAA,
        2 => 0xCCCC,
        4 => 0xF0F0,
        8 => 0xFF00,
        _ => 0,
    }
}

/// Batcher's odd–even merge sort network on `N` inputs (`N` a power of two) with its `C`
/// comparators, in an order that respects their dependencies: each pair `(a, b)`, `a < b`, puts
/// the smaller key at `a`.
#[cfg(target_arch = "x86_64")]
const fn batcher<const N: usize, const C: usize>() -> [(usize, usize); C] {
    let mut out = [(0, 0); C];
    let mut c = 0;
    let mut p = 1;
    while p < N {
        let mut k = p;
        while k >= 1 {
            let mut j = k % p;
            while j + k < N {
                let mut i = 0;
                while i < k && i + j + k < N {
                    if (i + j) / (2 * p) == (i + j + k) / (2 * p) {
                        out[c] = (i + j, i + j + k);
                        c += 1;
                    }
                    i += 1;
                }
                j += 2 * k;
            }
            k /= 2;
        }
        p *= 2;
    }
    assert!(c == C, "comparator count");
    out
}

/// `step_all`, one compare-exchange step `step::<T>(v, d, take_max)` of the invoking
/// module on every register `$reg` of an array, which both instruction sets' networks build
/// on. Like `step` it carries no `#[target_feature]` and is always inlined, so it may only be
/// called from functions that enable the module's instruction set.
#[cfg(target_arch = "x86_64")]
macro_rules! network_helpers {
    ($reg:ty) => {
        /// One in-register step on every register (in lockstep, so that the independent
        /// chains of the registers interleave in program order).
        #[inline(always)]
        unsafe fn step_all<T: Lane, const K: usize>(r: &mut [$reg; K], d: usize, take_max: u32) {
            for x in r.iter_mut() {
                // SAFETY: the caller has the module's instruction set (see the note on `step`).
                *x = unsafe { step::<T>(*x, d, take_max) };
            }
        }
    };
}

/// Unrolled stages of a sorting network: `$stage::<T, K, $arg>(r)` for each `$at => $arg`, in
/// order, whose `$at` is at most `$n` (a const generic: the stages not taken compile away).
#[cfg(target_arch = "x86_64")]
macro_rules! stages_up_to {
    ($n:ident, $stage:ident::<$t:ident, $k:ident>($r:ident): $($at:literal => $arg:literal),+) => {
        $(if $n >= $at {
            $stage::<$t, $k, $arg>($r);
        })+
    };
}

/// The level of the out-of-place sort of small ranges both instruction sets share.
#[cfg(target_arch = "x86_64")]
#[macro_use]
mod small_oop;
#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

use crate::key::{RadixBits, SortKey};

/// The vectorized sort this process runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Path {
    /// 512-bit registers (AVX-512F, POPCNT and BMI2).
    Avx512,
    /// 256-bit registers (AVX2).
    Avx2,
    /// None: the radix sort.
    Portable,
}

/// AVX-512 where the CPU has it, else AVX2, else the radix sort; `WARPATH_SIMD_SORT=avx2`
/// picks the AVX2 path on a CPU with AVX2 and `off` the radix sort. Decided once per process.
pub(crate) fn path() -> Path {
    static PATH: std::sync::OnceLock<Path> = std::sync::OnceLock::new();
    *PATH.get_or_init(|| {
        let (wide, narrow) = detect();
        match std::env::var("WARPATH_SIMD_SORT").as_deref() {
            Ok("off") => Path::Portable,
            Ok("avx2") if narrow => Path::Avx2,
            Ok("avx2") => Path::Portable,
            _ if wide => Path::Avx512,
            _ if narrow => Path::Avx2,
            _ => Path::Portable,
        }
    })
}

/// Whether this CPU has (AVX-512F, POPCNT and BMI2; AVX2 and POPCNT).
fn detect() -> (bool, bool) {
    #[cfg(target_arch = "x86_64")]
    {
        (gpu_runtime::cpu::has_avx512(), gpu_runtime::cpu::has_avx2())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (false, false)
    }
}

/// From this many keys the quicksort runs on all rayon threads (the two sides of each
/// partition of at least 2^14 keys on separate threads). Below it, a sort of well under a
/// millisecond, waking a second thread costs more than it saves on a loaded machine: 10^5 u32
/// on 2 threads 0.177 ms, on one 0.161 ms.
const PARALLEL_QUICKSORT: usize = 1 << 17;

/// Whether this process runs a vectorized sort.
pub(crate) fn available() -> bool {
    path() != Path::Portable
}

/// Sorts `keys` ascending with the vectorized quicksort when this CPU has it (on all rayon
/// threads when `parallel`); returns `false`, leaving `keys` untouched, when it does not.
pub(crate) fn sort_unsigned<B: RadixBits>(keys: &mut [B], parallel: bool) -> bool {
    // SAFETY: RadixBits is sealed to u32 and u64.
    unsafe { sort_as(keys, Keys::Unsigned, parallel) }
}

/// What [`sort_as`] sorts: `u32`/`u64` keys, the ordered bits of `f32`/`f64` (decoded in their
/// final place), or `i32`/`i64` keys, the width by the size of the key type.
#[derive(Clone, Copy)]
enum Keys {
    Unsigned,
    FloatBits,
    Signed,
}

/// The vectorized quicksort of `keys` as the [`Keys`] `what` of their size (see [`run`]);
/// `false` (keys untouched) without it.
///
/// # Safety
/// `S` is the 4- or 8-byte type `what` names.
unsafe fn sort_as<S>(keys: &mut [S], what: Keys, parallel: bool) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use avx512::{DecodeF32, DecodeF64, Keep};
        // SAFETY: `S` is the type of each arm (the caller's contract).
        unsafe {
            match (what, size_of::<S>() == 8) {
                (Keys::Unsigned, false) => run::<u32, Keep>(cast(keys), parallel),
                (Keys::Unsigned, true) => run::<u64, Keep>(cast(keys), parallel),
                (Keys::FloatBits, false) => run::<u32, DecodeF32>(cast(keys), parallel),
                (Keys::FloatBits, true) => run::<u64, DecodeF64>(cast(keys), parallel),
                (Keys::Signed, false) => run::<i32, Keep>(cast(keys), parallel),
                (Keys::Signed, true) => run::<i64, Keep>(cast(keys), parallel),
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, what, parallel);
        false
    }
}

/// Sorts the ordered bits of floats (`K::KIND == 2`) ascending and leaves every slot holding
/// the bits of its float, `K::from_ordered` fused into the sort's last stores (which saves a
/// pass over the keys); `false`, leaving `bits` untouched, without the vectorized sort.
pub(crate) fn sort_floats_decoded<K: SortKey>(bits: &mut [K::Bits], parallel: bool) -> bool {
    assert_eq!(K::KIND, 2, "float keys only");
    // SAFETY: a float SortKey is f32 or f64, whose Bits are u32 and u64 (sealed traits).
    unsafe { sort_as(bits, Keys::FloatBits, parallel) }
}

/// Sorts `f64` keys (their own bits) ascending in the total order of `SortKey` with the AVX2
/// float quicksort, when that is this process's path; `false` (keys untouched) otherwise, and
/// for `f32` (sorted as ordered bits: AVX2 has a min/max of `u32`).
///
/// The NaNs are moved to the back first (and sorted there by their ordered bits, usually a
/// handful), so the rest compare as floats (`vcmppd`, `vminpd`, `vmaxpd`: cheaper than 64-bit
/// integer compares and blends of ordered bits, which AVX2 has no min/max for). Floats see
/// `-0.0` and `+0.0` as equal and a compare-exchange may turn one into the other, so the run
/// of zeros is rewritten afterwards from the count of `-0.0` taken in the first pass: every
/// `-0.0` first, as the total order has them. Every key keeps its bits.
pub(crate) fn sort_floats_avx2<K: SortKey>(keys: &mut [K], parallel: bool) -> bool {
    assert_eq!(K::KIND, 2, "float keys only");
    #[cfg(target_arch = "x86_64")]
    {
        // f32 keys stay on the integer path (u32 has a min/max in AVX2)
        if path() != Path::Avx2 || size_of::<K>() == 4 {
            return false;
        }
        // SAFETY: AVX2 was detected (`path`); an 8-byte float key is f64 (sealed traits).
        unsafe { sort_f64_avx2(cast(keys), parallel) };
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, parallel);
        false
    }
}

/// The body of [`sort_floats_avx2`].
///
/// # Safety
/// The CPU has AVX2 and POPCNT.
#[cfg(target_arch = "x86_64")]
unsafe fn sort_f64_avx2(keys: &mut [f64], parallel: bool) {
    // NaNs out (to a side buffer), `-0.0` counted
    let mut nans: Vec<f64> = Vec::new();
    // SAFETY: the caller's contract.
    let (m, neg_zeros) = unsafe { avx2::nans_out_f64(keys, &mut nans) };
    let depth = 2 * (usize::BITS - m.leading_zeros());
    let parallel = parallel && m >= PARALLEL_QUICKSORT && rayon::current_num_threads() > 1;
    // SAFETY: the caller's contract; `avx2::Float<f64>` is `f64` (repr(transparent)); no NaN
    // is left in `keys[..m]`.
    unsafe {
        avx2::quicksort(
            cast::<f64, avx2::Float<f64>>(&mut keys[..m]),
            depth,
            parallel,
        )
    };
    let a = keys[..m].partition_point(|&k| k < 0.0);
    let b = keys[..m].partition_point(|&k| k <= 0.0);
    keys[a..a + neg_zeros].fill(-0.0);
    keys[a + neg_zeros..b].fill(0.0);
    if !nans.is_empty() {
        let mut bits: Vec<u64> = nans.iter().map(|k| k.to_ordered()).collect();
        if !sort_unsigned(&mut bits, parallel) {
            bits.sort_unstable();
        }
        for (d, b) in keys[m..].iter_mut().zip(bits) {
            *d = f64::from_ordered(b);
        }
    }
}

/// `distinct`'s values of `f64` keys under numpy's equality with the AVX2 float sort: a copy
/// sorted as floats ([`sort_floats_avx2`]), then grouped by float compares in place (no
/// ordered bits to encode and decode). `None` off the AVX2 path or for other keys.
pub(crate) fn distinct_f64_avx2<K: SortKey>(keys: &[K], parallel: bool) -> Option<Vec<K>> {
    #[cfg(target_arch = "x86_64")]
    {
        if path() != Path::Avx2 || K::KIND != 2 || size_of::<K>() != 8 {
            return None;
        }
        let mut v = keys.to_vec();
        // SAFETY: AVX2 was detected (`path`); an 8-byte float key is f64 (sealed traits).
        unsafe {
            let f = cast::<K, f64>(&mut v);
            sort_f64_avx2(f, parallel);
            let m = avx2::group_f64(f);
            v.truncate(m);
        }
        if v.len() < v.capacity() / 2 {
            v.shrink_to_fit();
        }
        Some(v)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, parallel);
        None
    }
}

/// Sorts signed integer keys (`K::KIND == 1`: `i32` or `i64`) in their own order, without the
/// ordered-bits transform; `false` (keys untouched) without the vectorized sort.
pub(crate) fn sort_signed<K: SortKey>(keys: &mut [K], parallel: bool) -> bool {
    assert_eq!(K::KIND, 1, "signed keys only");
    // SAFETY: a signed SortKey is i32 or i64 (the trait is sealed).
    unsafe { sort_as(keys, Keys::Signed, parallel) }
}

/// Sorts the integer keys (`K::KIND` 0 or 1) of `src` into `dst` (same length) with the
/// AVX-512 sort when there are at most [`avx512::SMALL_OOP`] of them: the first partition
/// reads `src`, so no copy pass comes first. `false` (nothing written) otherwise.
pub(crate) fn sort_small_into<K: SortKey>(src: &[K], dst: &mut [std::mem::MaybeUninit<K>]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let n = src.len();
        assert_eq!(n, dst.len());
        if K::KIND == 2 || n > avx512::SMALL_OOP || path() != Path::Avx512 {
            return false;
        }
        let depth = 2 * (usize::BITS - n.leading_zeros());
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        // SAFETY (every call): AVX-512F, POPCNT and BMI2 were detected (`path`); `K` is the
        // lane type named (sealed key traits: KIND 0 is u32/u64, KIND 1 is i32/i64, by size);
        // `src` and `dst` are distinct borrows of `n` keys and `n` slots.
        unsafe {
            match (K::KIND, size_of::<K>()) {
                (0, 4) => avx512::sort_small_oop::<u32, avx512::Keep>(s.cast(), d.cast(), n, depth),
                (0, _) => avx512::sort_small_oop::<u64, avx512::Keep>(s.cast(), d.cast(), n, depth),
                (_, 4) => avx512::sort_small_oop::<i32, avx512::Keep>(s.cast(), d.cast(), n, depth),
                _ => avx512::sort_small_oop::<i64, avx512::Keep>(s.cast(), d.cast(), n, depth),
            }
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, dst);
        false
    }
}

/// Groups the sorted ordered bits of `K` keys in place with AVX-512: the first key of every
/// run of keys equal under `equality` is written, turned back into a `K` (`from_ordered`),
/// to the front of `bits`, in order. Returns how many, or `None` (bits untouched) without
/// AVX-512.
pub(crate) fn group_sorted_bits<K: SortKey>(
    bits: &mut [K::Bits],
    equality: crate::key::Equality,
) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::key::Equality;
        if path() == Path::Avx2 && size_of::<K>() == 4 && K::KIND == 2 {
            if equality != Equality::Numeric {
                return None;
            }
            // SAFETY: AVX2 was detected (`path`); a 4-byte float key's bits are u32.
            return Some(unsafe { avx2::group_f32_bits(cast(bits)) });
        }
        if path() != Path::Avx512 {
            return None;
        }
        let numeric = K::KIND == 2 && equality == Equality::Numeric;
        // SAFETY (every call): AVX-512F, POPCNT and BMI2 were detected (`path`); the casts
        // are to `K::Bits`, u32 for 4-byte keys and u64 for 8-byte keys (sealed traits).
        unsafe {
            Some(match (size_of::<K>(), K::KIND, numeric) {
                (4, 0, _) => avx512::group_heads::<u32, avx512::Keep, avx512::SameBits>(cast(bits)),
                (4, 1, _) => {
                    avx512::group_heads::<u32, avx512::FlipSign, avx512::SameBits>(cast(bits))
                }
                (4, _, false) => {
                    avx512::group_heads::<u32, avx512::DecodeF32, avx512::SameBits>(cast(bits))
                }
                (4, _, true) => {
                    avx512::group_heads::<u32, avx512::DecodeF32, avx512::NumericF32>(cast(bits))
                }
                (_, 0, _) => avx512::group_heads::<u64, avx512::Keep, avx512::SameBits>(cast(bits)),
                (_, 1, _) => {
                    avx512::group_heads::<u64, avx512::FlipSign, avx512::SameBits>(cast(bits))
                }
                (_, _, false) => {
                    avx512::group_heads::<u64, avx512::DecodeF64, avx512::SameBits>(cast(bits))
                }
                (_, _, true) => {
                    avx512::group_heads::<u64, avx512::DecodeF64, avx512::NumericF64>(cast(bits))
                }
            })
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (bits, equality);
        None
    }
}

/// `keys` as a slice of `T`.
///
/// # Safety
/// `S` must be `T` (the callers check it through the sealed key traits).
unsafe fn cast<S, T>(keys: &mut [S]) -> &mut [T] {
    debug_assert!(size_of::<S>() == size_of::<T>() && align_of::<S>() == align_of::<T>());
    // SAFETY: S is T (the caller's contract); the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(keys.as_mut_ptr().cast::<T>(), keys.len()) }
}

/// The vectorized quicksort of `keys`, each key finished by `F` in its final place; `false`
/// (keys untouched) without it.
#[cfg(target_arch = "x86_64")]
fn run<T: avx512::Lane + avx2::Lane, F: avx512::Finish<T>>(keys: &mut [T], parallel: bool) -> bool {
    let path = path();
    if path == Path::Portable {
        return false;
    }
    let depth = 2 * (usize::BITS - keys.len().leading_zeros());
    let parallel = parallel && keys.len() >= PARALLEL_QUICKSORT && rayon::current_num_threads() > 1;
    if path == Path::Avx512 {
        // SAFETY: AVX-512F, POPCNT and BMI2 were detected (`path`).
        unsafe { avx512::quicksort::<T, F>(keys, depth, parallel) };
    } else {
        // SAFETY: AVX2 was detected (`path`).
        unsafe {
            if std::any::TypeId::of::<T>() == std::any::TypeId::of::<u64>() {
                // u64: sorted as i64 with the top bit flipped (AVX2 compares only signed
                // 64-bit lanes; unsigned ones take two more instructions per compare)
                let signed = cast::<T, i64>(keys);
                flip_avx2(signed);
                avx2::quicksort(&mut *signed, depth, parallel);
                flip_avx2(signed);
            } else {
                avx2::quicksort(keys, depth, parallel);
            }
            finish_all_avx2::<T, F>(keys); // a pass of its own (nothing for `Keep`)
        }
    }
    true
}

/// Flips the top bit of every key (u64 <-> i64 order), compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn flip_avx2(keys: &mut [i64]) {
    keys.iter_mut().for_each(|k| *k ^= i64::MIN);
}

/// [`avx512::finish_all`] compiled for AVX2 (the loop vectorises).
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn finish_all_avx2<T: avx512::Lane, F: avx512::Finish<T>>(keys: &mut [T]) {
    avx512::finish_all::<T, F>(keys);
}

/// Sorts each `chunk` keys of `keys` by the AVX-512 network alone (for timing); `false` on
/// another path or when `chunk` is larger than the largest network.
pub(crate) fn sort_chunks<B: RadixBits>(keys: &mut [B], chunk: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        fn each<T: avx512::Lane>(keys: &mut [T], chunk: usize) -> bool {
            if path() != Path::Avx512 || chunk == 0 || chunk > avx512::small_max::<T>() {
                return false;
            }
            for c in keys.chunks_mut(chunk) {
                // SAFETY: AVX-512F, POPCNT and BMI2 were detected above; `c` fits the network.
                unsafe { avx512::sort_small::<T, avx512::Keep>(c) };
            }
            true
        }
        if size_of::<B>() == 4 {
            // SAFETY: B is u32 (sealed to u32 and u64, and this one is 4 bytes).
            each::<u32>(unsafe { cast(keys) }, chunk)
        } else {
            // SAFETY: B is u64.
            each::<u64>(unsafe { cast(keys) }, chunk)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, chunk);
        false
    }
}

/// One partition of `keys` at `pivot` (for timing): the split point, `None` without AVX-512.
pub(crate) fn partition_u32(keys: &mut [u32], pivot: u32) -> Option<usize> {
    if path() != Path::Avx512 || keys.len() < 32 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: AVX-512F, POPCNT and BMI2 were detected above; at least two registers of keys.
        Some(unsafe { avx512::partition(keys, pivot) }.0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::avx512::Lane;
    use super::{avx2, avx512};

    /// Sorts with depth limit and parallel flag (`None`: this CPU lacks the path).
    type Sorter<T> = fn(&mut [T], u32, bool) -> Option<()>;
    /// Partitions at a pivot.
    type Parter<T> = fn(&mut [T], T) -> Option<(usize, T)>;
    /// Sorts a small range.
    type Smaller<T> = fn(&mut [T]) -> Option<()>;

    fn has_avx512() -> bool {
        super::detect().0
    }

    fn has_avx2() -> bool {
        super::detect().1
    }

    fn lcg(n: usize, seed: u64) -> impl Iterator<Item = u64> {
        let mut s = seed;
        (0..n).map(move |_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s ^ (s >> 29)
        })
    }

    /// Adversarial inputs of length `n` over `T`: random, few distinct, all equal, sorted,
    /// reversed, organ pipe, only the two largest values, only 0 and MAX, sawtooth.
    fn inputs<T: Lane>(n: usize, from: impl Fn(u64) -> T) -> Vec<Vec<T>> {
        let random: Vec<T> = lcg(n, n as u64 + 7).map(&from).collect();
        let few: Vec<T> = lcg(n, 3).map(|x| from(x % 3)).collect();
        let mut sorted = random.clone();
        sorted.sort_unstable();
        let reversed: Vec<T> = sorted.iter().rev().copied().collect();
        let pipe: Vec<T> = (0..n).map(|i| from(i.min(n - i) as u64)).collect();
        let top: Vec<T> = lcg(n, 5)
            .map(|x| {
                if x % 2 == 0 {
                    T::MAX
                } else {
                    from(u64::MAX - 1)
                }
            })
            .collect();
        let ends: Vec<T> = lcg(n, 9)
            .map(|x| if x % 5 == 0 { T::MAX } else { from(0) })
            .collect();
        let saw: Vec<T> = (0..n).map(|i| from((i % 17) as u64)).collect();
        vec![
            random,
            few,
            vec![from(42); n],
            sorted,
            reversed,
            pipe,
            top,
            ends,
            saw,
        ]
    }

    fn sizes<T: Lane>() -> Vec<usize> {
        let l = T::LANES;
        let mut s = vec![
            0, 1, 2, 3, 5, 7, 8, 9, 31, 33, 63, 64, 65, 1000, 2047, 2048, 2049, 4099, 20_000,
            70_001, 140_000,
        ];
        for k in [1, 2, 4, 8, 16, 32] {
            s.extend([k * l - 1, k * l, k * l + 1]);
        }
        s
    }

    fn check_quicksort<T: Lane + std::fmt::Debug>(from: impl Fn(u64) -> T, sort: Sorter<T>) {
        if sort(&mut [], 64, false).is_none() {
            eprintln!("this CPU lacks the path: not tested");
            return;
        }
        for n in sizes::<T>() {
            for (case, input) in inputs(n, &from).into_iter().enumerate() {
                let mut expect = input.clone();
                expect.sort_unstable();
                for parallel in [false, true] {
                    let mut v = input.clone();
                    sort(&mut v, 64, parallel);
                    assert!(v == expect, "n = {n}, case {case}, parallel {parallel}");
                }
                // depth 1: the first partition, then sort_unstable
                let mut v = input.clone();
                sort(&mut v, 1, false);
                assert!(v == expect, "n = {n}, case {case}, depth 1");
            }
        }
    }

    /// The AVX-512 quicksort, forced.
    fn q512<T: avx512::Lane>(v: &mut [T], depth: u32, parallel: bool) -> Option<()> {
        // SAFETY: AVX-512F, POPCNT and BMI2 are detected first.
        has_avx512().then(|| unsafe { avx512::quicksort::<T, avx512::Keep>(v, depth, parallel) })
    }

    /// The AVX-512 quicksort finishing with the float decode, its output encoded again (so
    /// that it compares with `sort_unstable` of the ordered bits): a key decoded twice or
    /// never shows as a wrong value.
    fn q512_f32(v: &mut [u32], depth: u32, parallel: bool) -> Option<()> {
        use crate::key::SortKey;
        // SAFETY: AVX-512F, POPCNT and BMI2 are detected first.
        has_avx512().then(|| {
            unsafe { avx512::quicksort::<u32, avx512::DecodeF32>(v, depth, parallel) };
            v.iter_mut()
                .for_each(|k| *k = f32::from_bits(*k).to_ordered());
        })
    }

    /// [`q512_f32`] for `f64`.
    fn q512_f64(v: &mut [u64], depth: u32, parallel: bool) -> Option<()> {
        use crate::key::SortKey;
        // SAFETY: AVX-512F, POPCNT and BMI2 are detected first.
        has_avx512().then(|| {
            unsafe { avx512::quicksort::<u64, avx512::DecodeF64>(v, depth, parallel) };
            v.iter_mut()
                .for_each(|k| *k = f64::from_bits(*k).to_ordered());
        })
    }

    #[test]
    fn quicksort_with_the_float_decode_finishes_every_key_once() {
        check_quicksort::<u32>(|x| x as u32, q512_f32);
        check_quicksort::<u32>(|x| (x >> 40) as u32, q512_f32); // many repeats
        check_quicksort::<u64>(|x| x, q512_f64);
        check_quicksort::<u64>(|x| x >> 50, q512_f64);
    }

    /// The AVX2 quicksort, forced (also on CPUs with AVX-512).
    fn q256<T: avx2::Lane>(v: &mut [T], depth: u32, parallel: bool) -> Option<()> {
        // SAFETY: AVX2 is detected first.
        has_avx2().then(|| unsafe { avx2::quicksort(v, depth, parallel) })
    }

    /// The AVX2 float sort of f64, forced: NaNs of both signs and several payloads, zeros of
    /// both signs, infinities, repeats, against the total order, bits compared.
    #[test]
    fn avx2_f64_sort_follows_the_total_order() {
        use crate::key::SortKey;
        if !has_avx2() {
            return;
        }
        let specials = [
            0.0,
            -0.0,
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7FF0_0000_0000_0001),
            f64::from_bits(0xFFF0_0000_0000_0002),
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -5e-324,
        ];
        for n in sizes::<u64>() {
            for case in 0..4u64 {
                let v: Vec<f64> = lcg(n, n as u64 ^ case)
                    .map(|x| match (case, x % 8) {
                        (0, _) => f64::from_bits(x), // any bits, NaNs included
                        (1, 0..=3) => specials[(x >> 8) as usize % specials.len()],
                        (1, _) => (x >> 40) as f64 - 1000.0, // repeats
                        (2, _) => specials[(x >> 8) as usize % 2], // only zeros
                        _ => specials[(x >> 8) as usize % 6], // zeros and NaNs
                    })
                    .collect();
                let mut expect: Vec<u64> = v.iter().map(|x| x.to_ordered()).collect();
                expect.sort_unstable();
                for parallel in [false, true] {
                    let mut got = v.clone();
                    // SAFETY: AVX2 was detected above.
                    unsafe { super::sort_f64_avx2(&mut got, parallel) };
                    let got: Vec<u64> = got.iter().map(|x| x.to_ordered()).collect();
                    assert!(got == expect, "n = {n}, case {case}, parallel {parallel}");
                }
            }
        }
    }

    /// The AVX2 groupings of sorted floats, forced, against `distinct_reference`: values
    /// equal as numbers, the representative the group's first key in the total order.
    #[test]
    fn avx2_float_groupings_follow_numpy_equality() {
        use crate::key::SortKey;
        if !has_avx2() {
            return;
        }
        let specials = [0.0, -0.0, f64::NAN, -f64::NAN, f64::INFINITY, 1.5, -1.5];
        for n in sizes::<u64>() {
            for case in 0..3u64 {
                let v: Vec<f64> = lcg(n, n as u64 ^ case)
                    .map(|x| match case {
                        0 => specials[(x >> 8) as usize % specials.len()],
                        1 => f64::from_bits(x),
                        _ => ((x >> 56) as f64) * 0.25,
                    })
                    .collect();
                let (want, _, _) = crate::distinct_reference(&v);
                let want: Vec<u64> = want.iter().map(|x| x.to_ordered()).collect();
                let mut sorted = v.clone();
                // SAFETY: AVX2 was detected above.
                let m = unsafe {
                    super::sort_f64_avx2(&mut sorted, false);
                    avx2::group_f64(&mut sorted)
                };
                let got: Vec<u64> = sorted[..m].iter().map(|x| x.to_ordered()).collect();
                assert!(got == want, "f64 n = {n}, case {case}");

                let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                let (want, _, _) = crate::distinct_reference(&v32);
                let want: Vec<u32> = want.iter().map(|x| x.to_ordered()).collect();
                let mut bits: Vec<u32> = v32.iter().map(|x| x.to_ordered()).collect();
                bits.sort_unstable();
                // SAFETY: AVX2 was detected above.
                let m = unsafe { avx2::group_f32_bits(&mut bits) };
                let got: Vec<u32> = bits[..m]
                    .iter()
                    .map(|&b| f32::from_bits(b).to_ordered())
                    .collect();
                assert!(got == want, "f32 n = {n}, case {case}");
            }
        }
    }

    #[test]
    fn quicksort_u32_matches_sort_unstable() {
        for sort in [q512::<u32> as Sorter<u32>, q256::<u32>] {
            check_quicksort::<u32>(|x| x as u32, sort);
            check_quicksort::<u32>(|x| (x >> 40) as u32, sort); // small values: many repeats
        }
    }

    #[test]
    fn quicksort_u64_matches_sort_unstable() {
        for sort in [q512::<u64> as Sorter<u64>, q256::<u64>] {
            check_quicksort::<u64>(|x| x, sort);
            check_quicksort::<u64>(|x| x >> 50, sort);
        }
    }

    fn check_small<T: Lane + std::fmt::Debug>(
        from: impl Fn(u64) -> T,
        small: Smaller<T>,
        max: usize,
    ) {
        if small(&mut []).is_none() {
            return;
        }
        for n in 0..=max {
            for input in inputs(n, &from) {
                let mut expect = input.clone();
                expect.sort_unstable();
                let mut v = input.clone();
                small(&mut v);
                assert!(v == expect, "network, n = {n}");
            }
        }
    }

    fn s512<T: avx512::Lane>(v: &mut [T]) -> Option<()> {
        // SAFETY: AVX-512F is detected first; callers pass at most small_max keys.
        has_avx512().then(|| unsafe { avx512::sort_small::<T, avx512::Keep>(v) })
    }

    fn s256<T: avx2::Lane>(v: &mut [T]) -> Option<()> {
        // SAFETY: AVX2 is detected first; callers pass at most small_max keys.
        has_avx2().then(|| unsafe { avx2::sort_small(v) })
    }

    #[test]
    fn quicksort_signed_matches_sort_unstable() {
        for sort in [q512::<i32> as Sorter<i32>, q256::<i32>] {
            check_quicksort::<i32>(|x| x as i32, sort);
            check_quicksort::<i32>(|x| (x >> 40) as i32 - 7, sort); // around zero, repeated
        }
        for sort in [q512::<i64> as Sorter<i64>, q256::<i64>] {
            check_quicksort::<i64>(|x| x as i64, sort);
            check_quicksort::<i64>(|x| (x >> 50) as i64 - 3, sort);
        }
    }

    /// The test `$test`: [`check_small`] of every key type with the small sort `$sort` of the
    /// module `$isa`.
    macro_rules! small_sort_test {
        ($test:ident, $sort:ident, $isa:ident) => {
            #[test]
            fn $test() {
                check_small::<u32>(|x| x as u32, $sort, $isa::small_max::<u32>());
                check_small::<u64>(|x| x, $sort, $isa::small_max::<u64>());
                check_small::<i32>(|x| x as i32, $sort, $isa::small_max::<i32>());
                check_small::<i64>(|x| x as i64, $sort, $isa::small_max::<i64>());
            }
        };
    }
    small_sort_test!(networks_sort_every_small_length, s512, avx512);
    small_sort_test!(avx2_networks_sort_every_small_length, s256, avx2);

    /// The AVX2 networks against the 0-1 principle (a comparator network sorts every input
    /// when it sorts every input of zeros and ones): for each register count and partial
    /// length, many random 0-1 inputs of every density, on integer lanes of both widths and on
    /// the float lanes (whose min and max are the float instructions).
    #[test]
    fn avx2_networks_sort_random_zero_one_inputs() {
        fn check<T: avx2::Lane + std::fmt::Debug>(zero: T, one: T) {
            let max = avx2::small_max::<T>();
            for n in 1..=max {
                for (seed, x) in lcg(4000, n as u64).enumerate() {
                    // density from x's top bits, ones where the hash of (x, i) falls below it
                    let bar = x >> 58;
                    let mut v: Vec<T> = lcg(n, x ^ seed as u64)
                        .map(|h| if h >> 58 < bar { one } else { zero })
                        .collect();
                    let ones = v.iter().filter(|&&k| k == one).count();
                    let _ = s256(&mut v);
                    let expect: Vec<T> = (0..n)
                        .map(|i| if i < n - ones { zero } else { one })
                        .collect();
                    assert!(v == expect, "n = {n}, input {seed}");
                }
            }
        }
        if !has_avx2() {
            return;
        }
        check::<u32>(0, 1);
        check::<u64>(u64::MAX - 1, u64::MAX);
        check::<i64>(-1, 0);
        check::<avx2::Float<f32>>(avx2::Float(-0.5), avx2::Float(2.0));
        check::<avx2::Float<f64>>(avx2::Float(-1e300), avx2::Float(-1e-300));
    }

    fn check_partition<T: Lane + std::fmt::Debug>(
        from: impl Fn(u64) -> T,
        part: Parter<T>,
        min_len: usize,
    ) {
        for n in [
            16,
            17,
            23,
            2 * T::LANES,
            2 * T::LANES + 1,
            3 * T::LANES - 1,
            3 * T::LANES,
            1000,
            1001,
        ] {
            for input in inputs(n, &from) {
                for pivot in [input[0], input[n / 2], T::MAX, from(0), from(1)] {
                    let mut v = input.clone();
                    if n < min_len {
                        continue; // the partition needs two registers
                    }
                    let Some((m, max)) = part(&mut v, pivot) else {
                        return;
                    };
                    assert!(v[..m].iter().all(|&x| x < pivot), "n = {n}");
                    assert!(v[m..].iter().all(|&x| x >= pivot), "n = {n}");
                    assert_eq!(max, (*input.iter().max().unwrap()).max(pivot));
                    let (mut a, mut b) = (v, input.clone());
                    a.sort_unstable();
                    b.sort_unstable();
                    assert!(a == b, "partition is a permutation, n = {n}");
                }
            }
        }
    }

    /// `$name`: the partition of the module `$isa`, when `$has` (its instruction set is
    /// there); an empty probe returns before partitioning.
    macro_rules! partition_of {
        ($name:ident, $isa:ident, $has:ident) => {
            fn $name<T: $isa::Lane>(v: &mut [T], pivot: T) -> Option<(usize, T)> {
                // SAFETY: the instruction set is detected first; callers pass at least two
                // registers of keys (the empty probe aside).
                $has().then(|| {
                    if v.is_empty() {
                        (0, pivot)
                    } else {
                        unsafe { $isa::partition(v, pivot) }
                    }
                })
            }
        };
    }
    partition_of!(p512, avx512, has_avx512);
    partition_of!(p256, avx2, has_avx2);

    /// The test `$test`: [`check_partition`] of every key type with the partition `$part` of
    /// the module `$isa`, all-negative signed keys included (whose maximum a zero from the
    /// head's padding would spoil).
    macro_rules! partition_test {
        ($test:ident, $part:ident, $isa:ident) => {
            #[test]
            fn $test() {
                let min = |lanes: usize| 2 * lanes;
                check_partition::<u32>(|x| x as u32, $part, min(<u32 as $isa::Lane>::LANES));
                check_partition::<u32>(|x| (x % 4) as u32, $part, min(<u32 as $isa::Lane>::LANES));
                check_partition::<u64>(|x| x, $part, min(<u64 as $isa::Lane>::LANES));
                check_partition::<u64>(|x| x % 4, $part, min(<u64 as $isa::Lane>::LANES));
                check_partition::<i64>(|x| x as i64, $part, min(<i64 as $isa::Lane>::LANES));
                let small = |x: u64| (x % 5) as i32 - 2;
                check_partition::<i32>(small, $part, min(<i32 as $isa::Lane>::LANES));
                let negative = |x: u64| -((x % 3) as i64) - 1;
                check_partition::<i64>(negative, $part, min(<i64 as $isa::Lane>::LANES));
                let negative32 = |x: u64| negative(x) as i32;
                check_partition::<i32>(negative32, $part, min(<i32 as $isa::Lane>::LANES));
            }
        };
    }
    partition_test!(
        partition_splits_at_the_pivot_and_keeps_every_key,
        p512,
        avx512
    );
    partition_test!(
        avx2_partition_splits_at_the_pivot_and_keeps_every_key,
        p256,
        avx2
    );
}
