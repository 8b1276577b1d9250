//! The CPU LSD radix sort on ordered bits, with an optional payload (stable).
//!
//! One read builds the histogram of every 8-bit digit; a digit that is the same for every key
//! (e.g. the high bytes of small numbers) is skipped without touching the data. Each remaining
//! pass counts its digit per chunk and scatters each chunk into its own precomputed slots, on all
//! rayon threads. Small inputs use `sort_unstable` (keys) or a stable merge sort (pairs) on one
//! thread; medium inputs run the radix sort on the calling thread.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::key::RadixBits;

/// Below this many keys a comparison sort on one thread wins.
pub(crate) const SMALL_SORT: usize = 1 << 12;
/// Below this many keys the radix sort runs on the calling thread only.
pub(crate) const PARALLEL_SORT: usize = 1 << 17;

/// A raw pointer that rayon tasks may share, for scatters where every task writes a disjoint
/// set of indices of one buffer (used by the radix sort and by select/split).
#[derive(Clone, Copy)]
pub(crate) struct SendPtr<T>(pub(crate) *mut T);
// SAFETY: used only to let several threads write disjoint index ranges of one buffer; every
// write target is computed from offsets that partition [0, n).
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: see above.
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The pointer (a method, so closures capture the whole `Send` wrapper, not the field).
    #[inline(always)]
    pub(crate) fn get(self) -> *mut T {
        self.0
    }
}

type Counts = [usize; 256];

/// Sorts `keys` ascending, moving `vals` along (stably). `vals` is either empty-typed (`()`)
/// or exactly as long as `keys` (checked by the callers).
pub(crate) fn sort_bits<B: RadixBits, V: Copy + Send + Sync>(keys: &mut [B], vals: &mut [V]) {
    let n = keys.len();
    debug_assert!(size_of::<V>() == 0 || vals.len() == n);
    if n < 2 {
        return;
    }
    if n < SMALL_SORT {
        small_sort(keys, vals);
        return;
    }
    // Several chunks per thread, so that work stealing evens out threads that run slower
    // (e.g. on a loaded machine).
    let chunks = if n >= PARALLEL_SORT {
        rayon::current_num_threads().max(1) * 4
    } else {
        1
    };
    let chunk_len = n.div_ceil(chunks);
    let chunks = n.div_ceil(chunk_len);

    // One read: per-chunk histograms of every digit.
    let per_chunk = digit_histograms(keys, chunks, chunk_len);
    let passes = live_passes::<B>(&per_chunk, n);
    if passes.is_empty() {
        return;
    }

    let mut kbuf: Vec<MaybeUninit<B>> = Vec::with_capacity(n);
    let mut vbuf: Vec<MaybeUninit<V>> = Vec::with_capacity(if size_of::<V>() == 0 { 0 } else { n });
    // SAFETY: MaybeUninit needs no initialisation; the buffers are only read after a pass has
    // written all n slots.
    unsafe {
        kbuf.set_len(n);
        if size_of::<V>() != 0 {
            vbuf.set_len(n);
        }
    }
    advise_huge_pages(&mut kbuf);
    advise_huge_pages(&mut vbuf);
    let k_in = SendPtr(keys.as_mut_ptr());
    let v_in = SendPtr(vals.as_mut_ptr());
    let k_tmp = SendPtr(kbuf.as_mut_ptr() as *mut B);
    let v_tmp = SendPtr(vbuf.as_mut_ptr() as *mut V);
    let mut in_input = true;

    // Per-chunk counts of the current pass's digit in the current order: from the upfront
    // histograms for the first pass (data not moved yet), then counted during each scatter for
    // the next pass (by destination chunk), which saves one read of the data per pass.
    let first = passes[0];
    let mut counts: Vec<Counts> = per_chunk.iter().map(|h| h[first]).collect();
    for (step, &p) in passes.iter().enumerate() {
        let (ks, vs, kd, vd) = if in_input {
            (k_in, v_in, k_tmp, v_tmp)
        } else {
            (k_tmp, v_tmp, k_in, v_in)
        };
        let next = passes.get(step + 1).copied();
        let offsets = pass_offsets(&counts, chunks, n);
        let scatter = |c: usize, off: Counts| -> Vec<Counts> {
            let lo = c * chunk_len;
            let hi = (lo + chunk_len).min(n);
            // SAFETY: [lo, hi) is within the source (fully written by the previous pass, or the
            // input); `off` are this chunk's slot ranges per digit, which partition [0, n)
            // across chunks and digits, so writes are in bounds and disjoint.
            unsafe {
                // `scatter_chunk` with its const `COUNT_NEXT` and the next pass `pn`.
                macro_rules! scatter_with {
                    ($count_next:literal, $pn:expr) => {
                        scatter_chunk::<B, V, $count_next>(
                            ks.get(),
                            vs.get(),
                            kd.get(),
                            vd.get(),
                            lo..hi,
                            p,
                            off,
                            $pn,
                            chunk_len,
                            chunks,
                        )
                    };
                }
                match next {
                    Some(pn) => scatter_with!(true, pn),
                    None => scatter_with!(false, 0),
                }
            }
        };
        let next_counts: Vec<Vec<Counts>> = if chunks == 1 {
            vec![scatter(0, offsets[0])]
        } else {
            offsets
                .into_par_iter()
                .enumerate()
                .map(|(c, off)| scatter(c, off))
                .collect()
        };
        if next.is_some() {
            counts = merge_next_counts(&next_counts, chunks);
        }
        in_input = !in_input;
    }

    if !in_input {
        // The result is in the scratch buffers: copy it back.
        // SAFETY: every slot of the scratch buffers was written by the last pass.
        let kres = unsafe { std::slice::from_raw_parts(k_tmp.get() as *const B, n) };
        copy_back(keys, kres, chunk_len);
        if size_of::<V>() != 0 {
            // SAFETY: as above.
            let vres = unsafe { std::slice::from_raw_parts(v_tmp.get() as *const V, n) };
            copy_back(vals, vres, chunk_len);
        }
    }
}

/// The histograms of every digit of `keys`, one set per chunk of `chunk_len` keys (`chunks`
/// of them), in one read of the data: the first pass's counts and which passes can be skipped.
fn digit_histograms<B: RadixBits>(keys: &[B], chunks: usize, chunk_len: usize) -> Vec<Vec<Counts>> {
    let count_all = |c: &[B]| {
        let mut h = vec![[0usize; 256]; B::DIGITS];
        for &k in c {
            for (p, hp) in h.iter_mut().enumerate() {
                hp[k.digit(p)] += 1;
            }
        }
        h
    };
    if chunks == 1 {
        vec![count_all(keys)]
    } else {
        keys.par_chunks(chunk_len).map(count_all).collect()
    }
}

/// The digits whose pass moves anything, in order: a digit shared by all `n` keys makes its
/// pass the identity, so it is skipped without touching the data.
fn live_passes<B: RadixBits>(per_chunk: &[Vec<Counts>], n: usize) -> Vec<usize> {
    (0..B::DIGITS)
        .filter(|&p| {
            let mut total = [0usize; 256];
            for h in per_chunk {
                for (t, c) in total.iter_mut().zip(h[p].iter()) {
                    *t += c;
                }
            }
            !total.contains(&n) // a digit shared by all keys: the pass is the identity
        })
        .collect()
}

/// Each chunk's first slot per digit for one pass, from the per-chunk `counts` of its digit:
/// `offsets[c][d]` = (keys with a smaller digit) + (keys with digit `d` in earlier chunks),
/// which keeps the scatter stable.
#[inline(always)]
fn pass_offsets(counts: &[Counts], chunks: usize, n: usize) -> Vec<Counts> {
    let mut offsets = vec![[0usize; 256]; chunks];
    let mut running = 0usize;
    for d in 0..256 {
        for c in 0..chunks {
            offsets[c][d] = running;
            running += counts[c][d];
        }
    }
    debug_assert_eq!(running, n);
    offsets
}

/// The next pass's per-chunk counts: the sum over source chunks of what each scatter counted
/// by destination chunk (`next_counts[source][destination]`).
#[inline(always)]
fn merge_next_counts(next_counts: &[Vec<Counts>], chunks: usize) -> Vec<Counts> {
    let mut counts = vec![[0usize; 256]; chunks];
    for per_dest in next_counts {
        for (acc, h) in counts.iter_mut().zip(per_dest) {
            for (a, x) in acc.iter_mut().zip(h.iter()) {
                *a += x;
            }
        }
    }
    counts
}

/// Scatters source elements `range` by digit `p` to `off[d]..` (stable). With `COUNT_NEXT`, also counts digit `pn` of every element by
/// the destination chunk (`chunk_len` positions each, `chunks` of them) it lands in, which is
/// the histogram the next pass needs; otherwise returns an empty vector.
///
/// # Safety
/// `range` must be readable in `ks` (and `vs` unless `V` is zero-sized); for every digit `d`
/// the slots `off[d] .. off[d] + (count of digit d in range)` must be writable in `kd`/`vd`
/// and written by no one else concurrently.
#[allow(clippy::too_many_arguments)]
unsafe fn scatter_chunk<B: RadixBits, V: Copy, const COUNT_NEXT: bool>(
    ks: *const B,
    vs: *const V,
    kd: *mut B,
    vd: *mut V,
    range: std::ops::Range<usize>,
    p: usize,
    mut off: Counts,
    pn: usize,
    chunk_len: usize,
    chunks: usize,
) -> Vec<Counts> {
    let mut next: Vec<Counts> = if COUNT_NEXT {
        vec![[0usize; 256]; chunks]
    } else {
        Vec::new()
    };
    // Destination chunk of a position, floor(pos / chunk_len), without a division in the hot
    // loop: pos * ceil(2^64 / chunk_len) / 2^64 is exact while n * chunk_len < 2^64 (the
    // rounding error of the reciprocal times pos stays below one unit of the quotient).
    let magic =
        if (range_end_bound(chunks, chunk_len) as u128) * (chunk_len as u128) < (1u128 << 64) {
            Some(u64::MAX / chunk_len as u64 + 1)
        } else {
            None
        };
    for i in range {
        // SAFETY: i is in `range` (readable per the contract); `off[d]` stays within digit d's
        // slots of this chunk (contract), so the writes are in bounds and not shared; d < 256
        // and c < chunks index the local tables.
        unsafe {
            let k = *ks.add(i);
            let d = k.digit(p);
            let pos = *off.get_unchecked(d);
            *off.get_unchecked_mut(d) = pos + 1;
            if COUNT_NEXT {
                let c = if chunks == 1 {
                    0
                } else if let Some(m) = magic {
                    ((pos as u128 * m as u128) >> 64) as usize
                } else {
                    pos / chunk_len
                };
                next[c][k.digit(pn)] += 1;
            }
            *kd.add(pos) = k;
            if size_of::<V>() != 0 {
                *vd.add(pos) = *vs.add(i);
            }
        }
    }
    next
}

/// An upper bound of the positions a scatter writes (`chunks * chunk_len >= n`).
fn range_end_bound(chunks: usize, chunk_len: usize) -> usize {
    chunks.saturating_mul(chunk_len)
}

/// Asks Linux for transparent huge pages on a large scratch buffer (when THP is in `madvise`
/// mode): fewer page faults when it is first written and fewer TLB misses in the scatter.
pub(crate) fn advise_huge_pages<T>(buf: &mut [MaybeUninit<T>]) {
    #[cfg(target_os = "linux")]
    {
        let bytes = std::mem::size_of_val(buf);
        if bytes >= 1 << 22 {
            let page = 4096usize;
            let start = (buf.as_mut_ptr() as usize).next_multiple_of(page);
            let end = (buf.as_mut_ptr() as usize + bytes) & !(page - 1);
            if end > start {
                // SAFETY: [start, end) lies inside the buffer we own; MADV_HUGEPAGE only changes
                // how the kernel backs these pages, never their contents. Failure is harmless.
                unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

fn copy_back<T: Copy + Send + Sync>(dst: &mut [T], src: &[T], chunk_len: usize) {
    if dst.len() < PARALLEL_SORT {
        dst.copy_from_slice(src);
    } else {
        dst.par_chunks_mut(chunk_len)
            .zip(src.par_chunks(chunk_len))
            .for_each(|(d, s)| d.copy_from_slice(s));
    }
}

fn small_sort<B: RadixBits, V: Copy>(keys: &mut [B], vals: &mut [V]) {
    if size_of::<V>() == 0 {
        // Equal ordered bits are identical keys: an unstable sort is indistinguishable.
        keys.sort_unstable();
    } else {
        let mut pairs: Vec<(B, V)> = keys.iter().copied().zip(vals.iter().copied()).collect();
        pairs.sort_by_key(|p| p.0); // stable
        for (i, (k, v)) in pairs.into_iter().enumerate() {
            keys[i] = k;
            vals[i] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(n: usize, seed: u64, mask: u64) -> Vec<u64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 11) & mask
            })
            .collect()
    }

    #[test]
    fn reciprocal_chunk_index_is_exact_at_every_boundary() {
        for d in [2usize, 3, 7, 4097, 1 << 20, 25_000_001, (1 << 30) + 3] {
            for chunks in [2usize, 8, 64] {
                if ((chunks * d) as u128) * (d as u128) >= 1u128 << 64 {
                    continue; // the sort divides instead
                }
                let m = u64::MAX / d as u64 + 1;
                for c in 0..chunks {
                    for pos in [c * d, (c * d + d).saturating_sub(1), c * d + d / 2] {
                        let q = ((pos as u128 * m as u128) >> 64) as usize;
                        assert_eq!(q, pos / d, "d={d} pos={pos}");
                    }
                }
            }
        }
    }

    #[test]
    fn sorts_across_paths_and_is_stable() {
        for &n in &[
            0usize,
            1,
            2,
            100,
            SMALL_SORT - 1,
            SMALL_SORT,
            50_000,
            PARALLEL_SORT + 7,
        ] {
            for mask in [u64::MAX, 0xFF, 0xFF00, 0] {
                let keys: Vec<u64> = lcg(n, n as u64 + 1, mask);
                let mut k = keys.clone();
                let mut v: Vec<u32> = (0..n as u32).collect();
                sort_bits(&mut k, &mut v);
                let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..n as u32).collect();
                expect.sort_by_key(|p| p.0);
                let got: Vec<(u64, u32)> = k.into_iter().zip(v).collect();
                assert_eq!(got, expect, "n = {n}, mask = {mask:x}");

                let mut k32: Vec<u32> = keys.iter().map(|&x| x as u32 ^ (x >> 32) as u32).collect();
                let mut e32 = k32.clone();
                e32.sort_unstable();
                sort_bits(&mut k32, &mut vec![(); n]);
                assert_eq!(k32, e32, "u32 n = {n}");
            }
        }
    }
}
