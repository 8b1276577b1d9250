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

#[derive(Clone, Copy)]
struct SendPtr<T>(*mut T);
// SAFETY: used only to let several threads write disjoint index ranges of one buffer; every
// write target is computed from offsets that partition [0, n).
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: see above.
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The pointer (a method, so closures capture the whole `Send` wrapper, not the field).
    #[inline(always)]
    fn get(self) -> *mut T {
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
    let chunks = if n >= PARALLEL_SORT {
        rayon::current_num_threads().max(1)
    } else {
        1
    };
    let chunk_len = n.div_ceil(chunks);
    let chunks = n.div_ceil(chunk_len);

    // One read: per-chunk histograms of every digit.
    let count_all = |c: &[B]| {
        let mut h = vec![[0usize; 256]; B::DIGITS];
        for &k in c {
            for (p, hp) in h.iter_mut().enumerate() {
                hp[k.digit(p)] += 1;
            }
        }
        h
    };
    let per_chunk: Vec<Vec<Counts>> = if chunks == 1 {
        vec![count_all(keys)]
    } else {
        keys.par_chunks(chunk_len).map(count_all).collect()
    };
    let passes: Vec<usize> = (0..B::DIGITS)
        .filter(|&p| {
            let mut total = [0usize; 256];
            for h in &per_chunk {
                for (t, c) in total.iter_mut().zip(h[p].iter()) {
                    *t += c;
                }
            }
            !total.contains(&n) // a digit shared by all keys: the pass is the identity
        })
        .collect();
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
    let k_in = SendPtr(keys.as_mut_ptr());
    let v_in = SendPtr(vals.as_mut_ptr());
    let k_tmp = SendPtr(kbuf.as_mut_ptr() as *mut B);
    let v_tmp = SendPtr(vbuf.as_mut_ptr() as *mut V);
    let mut in_input = true;

    for (step, &p) in passes.iter().enumerate() {
        let (ks, vs, kd, vd) = if in_input {
            (k_in, v_in, k_tmp, v_tmp)
        } else {
            (k_tmp, v_tmp, k_in, v_in)
        };
        // Per-chunk counts of digit p in the current order: the upfront histograms are still
        // valid for the first pass (data not moved yet); later passes recount.
        let counts: Vec<Counts> = if step == 0 {
            per_chunk.iter().map(|h| h[p]).collect()
        } else {
            let count = |c: usize| {
                let lo = c * chunk_len;
                let hi = (lo + chunk_len).min(n);
                let mut h = [0usize; 256];
                // SAFETY: [lo, hi) lies within the source buffer, fully written by the last pass.
                let src = unsafe { std::slice::from_raw_parts(ks.get().add(lo), hi - lo) };
                for &k in src {
                    h[k.digit(p)] += 1;
                }
                h
            };
            if chunks == 1 {
                vec![count(0)]
            } else {
                (0..chunks).into_par_iter().map(count).collect()
            }
        };
        // offsets[c][d] = (keys with a smaller digit) + (keys with digit d in earlier chunks)
        let mut offsets = vec![[0usize; 256]; chunks];
        let mut running = 0usize;
        for d in 0..256 {
            for c in 0..chunks {
                offsets[c][d] = running;
                running += counts[c][d];
            }
        }
        debug_assert_eq!(running, n);
        let scatter = |c: usize, mut off: Counts| {
            let lo = c * chunk_len;
            let hi = (lo + chunk_len).min(n);
            for i in lo..hi {
                // SAFETY: i < n is in the source; `off[d]` stays within this chunk's slots of
                // digit d, which partition [0, n) across chunks and digits (computed above), so
                // no two writes hit the same slot and all are in bounds.
                unsafe {
                    let k = *ks.get().add(i);
                    let d = k.digit(p);
                    let dst = off[d];
                    off[d] = dst + 1;
                    *kd.get().add(dst) = k;
                    if size_of::<V>() != 0 {
                        *vd.get().add(dst) = *vs.get().add(i);
                    }
                }
            }
        };
        if chunks == 1 {
            scatter(0, offsets[0]);
        } else {
            offsets
                .into_par_iter()
                .enumerate()
                .for_each(|(c, off)| scatter(c, off));
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
