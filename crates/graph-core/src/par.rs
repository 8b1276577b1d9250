//! Small parallel building blocks shared by the CPU paths: a shared-write pointer for
//! scatters to distinct positions, a parallel exclusive scan, and a stable parallel counting
//! sort (per-chunk histograms + prefix sums).
//!
//! These are private, simple versions; `gpu-primitives` offers the general ones.

use rayon::prelude::*;

/// Below this many items the CPU paths run on one thread (rayon's fork/join costs more).
pub(crate) const PAR_THRESHOLD: usize = 1 << 16;

/// A raw pointer that may be shared between rayon tasks which write to *distinct* indices.
#[derive(Debug)]
pub(crate) struct SharedMut<T>(*mut T, usize);

impl<T> Clone for SharedMut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedMut<T> {}

// SAFETY: the pointer is only used through `write`/`read`, whose callers guarantee that no two
// tasks touch the same index concurrently (and that reads do not race with writes).
unsafe impl<T: Send> Send for SharedMut<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T: Copy> SharedMut<T> {
    pub(crate) fn new(slice: &mut [T]) -> Self {
        SharedMut(slice.as_mut_ptr(), slice.len())
    }

    /// The raw pointer to element 0 (for handing out disjoint sub-slices).
    pub(crate) fn ptr(self) -> *mut T {
        self.0
    }

    /// The address of element `i` (not dereferenced; for [`prefetch`]).
    #[inline(always)]
    pub(crate) fn addr(self, i: usize) -> *const T {
        self.0.wrapping_add(i)
    }

    /// Writes `value` at `i`.
    ///
    /// # Safety
    /// No other task may read or write index `i` concurrently; the slice outlives the use.
    #[inline(always)]
    pub(crate) unsafe fn write(self, i: usize, value: T) {
        debug_assert!(i < self.1);
        // SAFETY: in bounds (checked in debug builds, guaranteed by callers) and exclusive.
        unsafe { self.0.add(i).write(value) }
    }

    /// Reads index `i`.
    ///
    /// # Safety
    /// No other task may write index `i` concurrently; the slice outlives the use.
    #[inline(always)]
    pub(crate) unsafe fn read(self, i: usize) -> T {
        debug_assert!(i < self.1);
        // SAFETY: in bounds and not written concurrently (caller's contract).
        unsafe { self.0.add(i).read() }
    }
}

/// Asks the core to load the cache line holding `*x` (walks over random memory issue it for
/// the element they will touch a few steps later).
pub(crate) use gpu_primitives::prefetch;

/// Reinterprets a vector's allocation as one of `U` without copying: the elements of `T` become
/// `size_of::<T>() / size_of::<U>()` elements of `U` each (checked at compile time to divide
/// exactly, with equal alignments).
///
/// # Safety
/// Every bit pattern of the `T` elements must be a valid sequence of `U` values.
pub(crate) unsafe fn recast_vec<T, U>(v: Vec<T>) -> Vec<U> {
    const {
        assert!(std::mem::align_of::<T>() == std::mem::align_of::<U>());
        assert!(std::mem::size_of::<U>() > 0);
        assert!(std::mem::size_of::<T>().is_multiple_of(std::mem::size_of::<U>()));
    }
    let k = std::mem::size_of::<T>() / std::mem::size_of::<U>();
    let mut v = std::mem::ManuallyDrop::new(v);
    let (ptr, len, cap) = (v.as_mut_ptr(), v.len(), v.capacity());
    // SAFETY: same alignment and `k` U per T, so the allocation of `cap` T is one of `k * cap`
    // U with the same layout (freed correctly), `k * len` of them initialized and valid (the
    // caller's contract).
    unsafe { Vec::from_raw_parts(ptr.cast::<U>(), k * len, k * cap) }
}

/// A zeroed vector of `n` elements whose pages the kernel is asked to back with transparent huge
/// pages (Linux `madvise(MADV_HUGEPAGE)`; a no-op elsewhere or when refused). For arrays that are
/// accessed at random: 2 MiB pages remove most TLB misses, which otherwise cost as much as the
/// cache misses themselves on arrays of hundreds of megabytes. Only for arrays that are touched
/// *densely*: the first touch of a huge page zeroes all 2 MiB of it, so an array touched at a
/// few places (union-find slots, pointer-jumping scratch) belongs in a plain `vec![0; n]`,
/// whose untouched pages cost nothing (each touched huge page costs a 2 MiB zeroing).
pub(crate) fn zeroed_huge<T: Copy + Default>(n: usize) -> Vec<T> {
    let v = vec![T::default(); n];
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = n * std::mem::size_of::<T>();
        if bytes >= 4 * HUGE {
            let start = v.as_ptr() as usize;
            let aligned = start.next_multiple_of(HUGE);
            let len = (start + bytes).saturating_sub(aligned) / HUGE * HUGE;
            if len > 0 {
                // SAFETY: the range lies inside the vector's allocation; MADV_HUGEPAGE only
                // changes how the kernel backs the pages, never their contents, and its failure
                // is harmless (ignored).
                unsafe {
                    libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    v
}

/// Replaces `v` by its exclusive prefix sums and returns the total.
pub(crate) fn par_exclusive_scan(v: &mut [u64]) -> u64 {
    if v.len() < PAR_THRESHOLD {
        let mut run = 0u64;
        for x in v.iter_mut() {
            let t = *x;
            *x = run;
            run += t;
        }
        return run;
    }
    let chunk = v
        .len()
        .div_ceil(rayon::current_num_threads() * 4)
        .max(1 << 12);
    let sums: Vec<u64> = v.par_chunks(chunk).map(|c| c.iter().sum()).collect();
    let mut starts = Vec::with_capacity(sums.len());
    let mut run = 0u64;
    for s in &sums {
        starts.push(run);
        run += s;
    }
    v.par_chunks_mut(chunk)
        .zip(starts.par_iter())
        .for_each(|(c, &start)| {
            let mut r = start;
            for x in c.iter_mut() {
                let t = *x;
                *x = r;
                r += t;
            }
        });
    run
}

/// Stable counting sort of the indices `0..keys.len()` by `keys[i] < buckets`.
///
/// Returns the bucket offsets (`buckets + 1` entries) and calls `place(i, pos)` exactly once for
/// every `i`, with distinct `pos` in `0..keys.len()`; items of one bucket get increasing
/// positions in increasing `i` (stable). `place` runs on several threads at once.
///
/// Work `O(n + p * buckets)` for `p` chunks; two passes over the keys.
pub(crate) fn counting_sort_by_key<F>(keys: &[u32], buckets: usize, place: F) -> Vec<u64>
where
    F: Fn(usize, u64) + Sync,
{
    let n = keys.len();
    let threads = rayon::current_num_threads();
    // Few chunks when the histograms would dwarf the keys.
    let mut chunks = if n < PAR_THRESHOLD {
        1
    } else {
        threads.min(16)
    };
    while chunks > 1 && chunks * buckets > 4 * n + (1 << 20) {
        chunks -= 1;
    }
    if chunks <= 1 {
        let mut offsets = vec![0u64; buckets + 1];
        for &k in keys {
            offsets[k as usize] += 1;
        }
        par_exclusive_scan(&mut offsets);
        let mut cursor = offsets.clone();
        for (i, &k) in keys.iter().enumerate() {
            let c = &mut cursor[k as usize];
            place(i, *c);
            *c += 1;
        }
        return offsets;
    }
    let chunk_len = n.div_ceil(chunks);
    let mut hist = vec![0u64; chunks * buckets];
    hist.par_chunks_mut(buckets)
        .zip(keys.par_chunks(chunk_len))
        .for_each(|(h, ks)| {
            for &k in ks {
                h[k as usize] += 1;
            }
        });
    let mut offsets = vec![0u64; buckets + 1];
    histograms_to_starts(&mut hist, chunks, &mut offsets, threads);
    hist.par_chunks_mut(buckets)
        .zip(keys.par_chunks(chunk_len))
        .enumerate()
        .for_each(|(c, (h, ks))| {
            let first = c * chunk_len;
            for (j, &k) in ks.iter().enumerate() {
                let slot = &mut h[k as usize];
                place(first + j, *slot);
                *slot += 1;
            }
        });
    offsets
}

/// The bucket offsets and each row's start positions from per-row histograms: `hist` holds
/// `rows` rows of `buckets` counts (row-major); `offsets` (`buckets + 1` zeros on entry) gets
/// the exclusive scan of the bucket totals, and each count of `hist` is replaced, in place, by
/// where that row's items of that bucket start. Buckets are split in blocks across threads.
fn histograms_to_starts(hist: &mut [u64], rows: usize, offsets: &mut [u64], threads: usize) {
    let buckets = offsets.len() - 1;
    debug_assert_eq!(hist.len(), rows * buckets);
    let block = (1usize << 14).max(buckets.div_ceil(threads * 4));
    {
        let hist = &*hist;
        offsets[..buckets]
            .par_chunks_mut(block)
            .enumerate()
            .for_each(|(b, out)| {
                let base = b * block;
                for (j, o) in out.iter_mut().enumerate() {
                    *o = (0..rows).map(|c| hist[c * buckets + base + j]).sum();
                }
            });
    }
    par_exclusive_scan(offsets);
    let h = SharedMut::new(hist);
    let offsets = &*offsets;
    (0..buckets.div_ceil(block)).into_par_iter().for_each(|b| {
        let hi = ((b + 1) * block).min(buckets);
        for (v, &start) in offsets.iter().enumerate().take(hi).skip(b * block) {
            let mut run = start;
            for c in 0..rows {
                // SAFETY: column v belongs to this task alone.
                unsafe {
                    let t = h.read(c * buckets + v);
                    h.write(c * buckets + v, run);
                    run += t;
                }
            }
        }
    });
}

/// Stable counting sort of items given in consecutive pieces (as a parallel reader leaves
/// them, not concatenated) by `key(item) < buckets`.
///
/// Returns the bucket offsets (`buckets + 1` entries) and calls `place(piece, j, pos)` exactly
/// once for item `j` of every piece, with distinct `pos` in `0..total`; items of one bucket get
/// increasing positions in the pieces' order (stable). `place` runs on several threads at once.
///
/// Work `O(total + p * buckets)` for `p` groups of consecutive pieces (at most one per thread,
/// fewer when the histograms would dwarf the items); two passes over the items. One group
/// counts into the offsets themselves and scatters with them as cursors (no second array).
pub(crate) fn counting_sort_pieces<T, K, F>(
    pieces: &[&[T]],
    buckets: usize,
    key: K,
    place: F,
) -> Vec<u64>
where
    T: Sync,
    K: Fn(&T) -> u32 + Sync,
    F: Fn(usize, usize, u64) + Sync,
{
    let n: usize = pieces.iter().map(|p| p.len()).sum();
    let threads = rayon::current_num_threads();
    let mut groups = if n < PAR_THRESHOLD {
        1
    } else {
        threads.min(16).min(pieces.len())
    };
    while groups > 1 && groups * buckets > 4 * n + (1 << 20) {
        groups -= 1;
    }
    if groups <= 1 {
        let mut offsets = zeroed_huge::<u64>(buckets + 1);
        for p in pieces {
            for x in p.iter() {
                offsets[key(x) as usize] += 1;
            }
        }
        par_exclusive_scan(&mut offsets[..buckets]);
        for (k, p) in pieces.iter().enumerate() {
            for (j, x) in p.iter().enumerate() {
                let c = &mut offsets[key(x) as usize];
                place(k, j, *c);
                *c += 1;
            }
        }
        // Each cursor now ends its bucket, which is where the next one starts.
        offsets.copy_within(..buckets, 1);
        offsets[0] = 0;
        return offsets;
    }
    // Groups of consecutive pieces with about n / groups items each: group g is
    // pieces[bounds[g]..bounds[g + 1]].
    let mut bounds = vec![0usize];
    let mut run = 0usize;
    for (k, p) in pieces.iter().enumerate() {
        run += p.len();
        if run * groups >= n * bounds.len() && bounds.len() < groups {
            bounds.push(k + 1);
        }
    }
    bounds.push(pieces.len());
    bounds.dedup();
    let groups = bounds.len() - 1;
    let mut hist = zeroed_huge::<u64>(groups * buckets);
    hist.par_chunks_mut(buckets).enumerate().for_each(|(g, h)| {
        for p in &pieces[bounds[g]..bounds[g + 1]] {
            for x in p.iter() {
                h[key(x) as usize] += 1;
            }
        }
    });
    let mut offsets = zeroed_huge::<u64>(buckets + 1);
    histograms_to_starts(&mut hist, groups, &mut offsets, threads);
    hist.par_chunks_mut(buckets).enumerate().for_each(|(g, h)| {
        let first = bounds[g];
        for (k, p) in pieces[first..bounds[g + 1]].iter().enumerate() {
            let k = first + k;
            for (j, x) in p.iter().enumerate() {
                let slot = &mut h[key(x) as usize];
                place(k, j, *slot);
                *slot += 1;
            }
        }
    });
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_matches_sequential() {
        for n in [0usize, 1, 31, 1025, PAR_THRESHOLD + 7, 300_001] {
            let v: Vec<u64> = (0..n as u64).map(|i| i % 7).collect();
            let mut a = v.clone();
            let total = par_exclusive_scan(&mut a);
            let mut run = 0;
            for i in 0..n {
                assert_eq!(a[i], run);
                run += v[i];
            }
            assert_eq!(total, run);
        }
    }

    /// `(keys, buckets)` of the counting-sort tests: empty, one bucket, a block's edge, and
    /// inputs on every thread with few and many buckets.
    const SORT_CASES: [(usize, usize); 5] =
        [(0, 3), (1, 1), (1025, 7), (200_003, 1000), (300_000, 5)];

    #[test]
    fn counting_sort_is_stable_and_complete() {
        for (n, b) in SORT_CASES {
            let keys: Vec<u32> = (0..n).map(|i| ((i * 7919) % b) as u32).collect();
            let out: Vec<std::sync::atomic::AtomicU64> = (0..n)
                .map(|_| std::sync::atomic::AtomicU64::new(u64::MAX))
                .collect();
            let offs = counting_sort_by_key(&keys, b, |i, pos| {
                out[pos as usize].store(i as u64, std::sync::atomic::Ordering::Relaxed)
            });
            let out: Vec<u64> = out.into_iter().map(|a| a.into_inner()).collect();
            let mut expect: Vec<u64> = (0..n as u64).collect();
            expect.sort_by_key(|&i| keys[i as usize]);
            assert_eq!(out, expect);
            assert_eq!(offs.len(), b + 1);
            assert_eq!(offs[b], n as u64);
        }
    }

    /// The pieces' sort equals the sort of their concatenation, on one thread and on several
    /// (pieces of unequal lengths, empty ones included).
    #[test]
    fn counting_sort_of_pieces_is_stable_and_complete() {
        for (n, b) in SORT_CASES.into_iter().chain([(300_000, 2_000_000)]) {
            let keys: Vec<u32> = (0..n).map(|i| ((i * 7919) % b) as u32).collect();
            let cuts = [0, n / 7, n / 7, n / 2, n - n / 5, n];
            let pieces: Vec<&[u32]> = cuts.windows(2).map(|w| &keys[w[0]..w[1]]).collect();
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let out: Vec<std::sync::atomic::AtomicU64> = (0..n)
                    .map(|_| std::sync::atomic::AtomicU64::new(u64::MAX))
                    .collect();
                let offs = pool.install(|| {
                    counting_sort_pieces(
                        &pieces,
                        b,
                        |&k| k,
                        |p, j, pos| {
                            let i = cuts[p] + j;
                            out[pos as usize].store(i as u64, std::sync::atomic::Ordering::Relaxed)
                        },
                    )
                });
                let out: Vec<u64> = out.into_iter().map(|a| a.into_inner()).collect();
                let mut expect: Vec<u64> = (0..n as u64).collect();
                expect.sort_by_key(|&i| keys[i as usize]);
                assert_eq!(out, expect, "n {n}, {threads} threads");
                let mut want = vec![0u64; b + 1];
                for &k in &keys {
                    want[k as usize + 1] += 1;
                }
                for v in 0..b {
                    want[v + 1] += want[v];
                }
                assert_eq!(offs, want, "n {n}, {threads} threads");
            }
        }
    }
}
