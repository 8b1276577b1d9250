//! Counting on the GPU: the buckets go to the device in groups (consecutive buckets, up to
//! 2^26 k-mers and within the memory bound), one distinct-with-counts launch a group. The
//! host's work is pipelined around the device's: while the device counts group `g` and the
//! host routes its solid k-mers to their buckets, another thread decodes group `g + 1`'s
//! super-k-mers into k-mers (its buckets in parallel on the rayon pool), so the device never
//! waits for one thread to decode a whole group.

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use gpu_runtime::Exec;
use rayon::prelude::*;

use super::{CountWorker, Tally, write_run};
use crate::AssemblyError;
use crate::bucketing::{Bucketed, end_buckets, for_each_kmer};
use crate::count_word::CountWord;
use crate::kmer::Word;
use crate::plan::Plan;
use crate::spill::Spill;
use crate::work::Progress;

/// The most k-mers of one group (one device launch).
const MAX_GROUP: u64 = 1 << 26;

/// Groups that split a group's k-mers aim at: at least this many, so that decoding the next
/// group overlaps the device's work on this one even when everything fits in one launch.
const MIN_GROUPS: u64 = 4;

/// Groups smaller than this are not split further for the overlap: a launch and its copies
/// cost more than decoding so few k-mers.
const MIN_GROUP: u64 = 1 << 20;

/// Counts every bucket of `bucketed` on the device, group by group: writes each bucket's
/// solid run and foreign ends as the CPU path does, the same bytes.
#[allow(clippy::too_many_arguments)]
pub(super) fn count_on_gpu<W: CountWord>(
    plan: &Plan,
    bucketed: &Bucketed,
    solid: &Spill,
    foreign: &Spill,
    sizes: &[AtomicU64],
    foreign_sizes: &Mutex<Vec<u64>>,
    tally: &Mutex<Tally>,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), AssemblyError> {
    let b = plan.buckets;
    // per k-mer of a group, the host holds at the most: while the device counts it, its
    // k-mers and the distinct values and counts coming back (2W + 8 bytes); while they are
    // routed, the values, counts, home buckets and the routed copy (2W + 16); and, all the
    // while, the next group's k-mers being decoded (W)
    let cap = (plan.budget.usable() / (3 * W::BYTES as u64 + 16)).clamp(1, MAX_GROUP);
    let groups = gpu_groups(&bucketed.occurrences, cap);
    let mut w = CountWorker::<W>::new(
        foreign.writer((plan.budget.usable() / 16 / b as u64).clamp(256, 1 << 16) as usize)?,
        solid.writer(1 << 16)?,
        b,
        None,
    );
    pipelined(
        &groups,
        |g| decode_group::<W>(plan, bucketed, g.clone()),
        |g, mut kmers| {
            plan.cancel.check()?;
            progress(Progress::Stage {
                stage: "counting",
                done: g.start as u64,
                total: b as u64,
            });
            let (distinct, runs) = W::count_words(&mut kmers, Exec::Cuda)?;
            drop(kmers);
            route_group(plan, g.clone(), &distinct, &runs, sizes, &mut w)
        },
    )?;
    w.finish(tally, foreign_sizes)
}

/// Consecutive buckets in groups of at most `cap` k-mers (a larger bucket alone), each group
/// at least [`MIN_GROUP`] k-mers where the total allows, and at least [`MIN_GROUPS`] groups
/// where that leaves them that large.
fn gpu_groups(occurrences: &[u64], cap: u64) -> Vec<Range<usize>> {
    let total: u64 = occurrences.iter().sum();
    let aim = total.div_ceil(MIN_GROUPS).max(MIN_GROUP).min(cap.max(1));
    let mut groups = Vec::new();
    let mut start = 0;
    while start < occurrences.len() {
        let (mut end, mut sum) = (start, 0);
        while end < occurrences.len() && (end == start || sum + occurrences[end] <= aim) {
            sum += occurrences[end];
            end += 1;
        }
        groups.push(start..end);
        start = end;
    }
    groups
}

/// Runs `consume` on `produce`'s result for each item in order, producing item `i + 1` on
/// another thread while item `i` is consumed. The first error stops it (the thread at work is
/// joined first); a panic in `produce` is resumed on the calling thread.
fn pipelined<G: Sync, T: Send>(
    items: &[G],
    produce: impl Fn(&G) -> Result<T, AssemblyError> + Sync,
    mut consume: impl FnMut(&G, T) -> Result<(), AssemblyError>,
) -> Result<(), AssemblyError> {
    let Some(first) = items.first() else {
        return Ok(());
    };
    let produce = &produce;
    std::thread::scope(|s| {
        let mut next = Some(produce(first));
        for (i, g) in items.iter().enumerate() {
            let current = next.take().expect("produced in turn")?;
            let ahead = items.get(i + 1).map(|h| s.spawn(move || produce(h)));
            let done = consume(g, current);
            next = ahead.map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            done?;
        }
        Ok(())
    })
}

/// The canonical k-mers of the buckets of `group`, bucket after bucket (each bucket's in the
/// order of its super-k-mers): the buckets decoded in parallel, each into its own share of
/// the array, sized by the k-mers the bucketing counted.
fn decode_group<W: Word>(
    plan: &Plan,
    bucketed: &Bucketed,
    group: Range<usize>,
) -> Result<Vec<W>, AssemblyError> {
    let total: u64 = bucketed.occurrences[group.clone()].iter().sum();
    let mut kmers = vec![W::default(); total as usize];
    let mut shares = Vec::with_capacity(group.len());
    let mut rest = kmers.as_mut_slice();
    for bucket in group {
        let (share, tail) = rest.split_at_mut(bucketed.occurrences[bucket] as usize);
        shares.push((bucket, share));
        rest = tail;
    }
    shares
        .into_par_iter()
        .try_for_each_init(Vec::new, |scratch, (bucket, share)| {
            let mut i = 0;
            bucketed
                .spill
                .for_each_chunk(bucket, scratch, &mut |chunk| {
                    for_each_kmer::<W>(chunk, plan.k, |fw, rc| {
                        if let Some(x) = share.get_mut(i) {
                            *x = if rc < fw { rc } else { fw };
                        }
                        i += 1;
                    });
                    Ok(())
                })?;
            if i == share.len() {
                Ok(())
            } else {
                Err(AssemblyError::Internal(format!(
                    "bucket {bucket}: {i} k-mers read back, {} counted when bucketing",
                    share.len()
                )))
            }
        })?;
    Ok(kmers)
}

/// Sends the distinct k-mers of `group` (sorted, with their counts) to their buckets: tallies
/// every one, and writes each bucket's solid ones as its run (a counting sort by bucket keeps
/// each bucket's share sorted).
fn route_group<W: Word>(
    plan: &Plan,
    group: Range<usize>,
    distinct: &[W],
    runs: &[u64],
    sizes: &[AtomicU64],
    w: &mut CountWorker<'_, W>,
) -> Result<(), AssemblyError> {
    let (k, m, b) = (plan.k, plan.m, plan.buckets);
    let is_solid = |c: u64| c >= plan.min_count as u64 && c <= plan.max_count as u64;
    let homes: Vec<u32> = distinct
        .par_iter()
        .map(|&x| end_buckets(x, k, m, b).2 as u32)
        .collect();
    let mut starts = vec![0usize; group.len() + 1];
    for (&home, &c) in homes.iter().zip(runs) {
        w.tally.record(c);
        if !group.contains(&(home as usize)) {
            return Err(AssemblyError::Internal(format!(
                "a k-mer of bucket {home} counted with buckets {group:?}"
            )));
        }
        if is_solid(c) {
            starts[home as usize - group.start + 1] += 1;
        }
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let n = starts[group.len()];
    let (mut kmers, mut counts) = (vec![W::default(); n], vec![0u32; n]);
    let mut at = starts.clone();
    for ((&x, &c), &home) in distinct.iter().zip(runs).zip(&homes) {
        if is_solid(c) {
            let slot = &mut at[home as usize - group.start];
            kmers[*slot] = x;
            counts[*slot] = c.min(u32::MAX as u64) as u32;
            *slot += 1;
        }
    }
    for (i, bucket) in group.enumerate() {
        let r = starts[i]..starts[i + 1];
        w.tally.solid += r.len() as u64;
        sizes[bucket].store(r.len() as u64, Ordering::Relaxed);
        if !r.is_empty() {
            write_run(plan, bucket, &kmers[r.clone()], &counts[r], w)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{MIN_GROUP, gpu_groups, pipelined};
    use crate::AssemblyError;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Groups cover the buckets in order, each within the cap (but a bucket larger than the
    /// cap, alone), at least four where each keeps `MIN_GROUP` k-mers.
    #[test]
    #[allow(clippy::single_range_in_vec_init)] // a list of one group
    fn groups_cover_the_buckets_within_the_cap() {
        let big = MIN_GROUP;
        for (occ, cap, expect) in [
            (vec![], 10, vec![]),
            (vec![5, 5, 5], 1 << 26, vec![0..3]),
            (vec![big; 8], 1 << 26, vec![0..2, 2..4, 4..6, 6..8]),
            (vec![big; 8], big, (0..8).map(|i| i..i + 1).collect()),
            (vec![1, 3 * big, 1, 1], big, vec![0..1, 1..2, 2..4]),
        ] {
            assert_eq!(gpu_groups(&occ, cap), expect, "{occ:?} cap {cap}");
        }
    }

    /// Each item is consumed in order, once; item `i + 1` is produced while item `i` is
    /// consumed (here: its production waits for the consumption of `i` to start).
    #[test]
    fn pipelined_consumes_in_order_while_the_next_is_produced() {
        let started = AtomicUsize::new(0);
        let mut seen = Vec::new();
        pipelined(
            &[0usize, 1, 2, 3],
            |&i| {
                while i > 0 && started.load(Ordering::Acquire) < i {
                    std::thread::yield_now();
                }
                Ok(i * 10)
            },
            |&i, v| {
                started.store(i + 1, Ordering::Release);
                seen.push((i, v));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, vec![(0, 0), (1, 10), (2, 20), (3, 30)]);
    }

    /// The first error stops the pipeline, whether producing or consuming.
    #[test]
    fn pipelined_stops_at_the_first_error() {
        let fail = |what: &str| AssemblyError::Internal(what.into());
        let mut consumed = Vec::new();
        let r = pipelined(
            &[0, 1, 2, 3],
            |&i| {
                if i == 2 {
                    Err(fail("produce 2"))
                } else {
                    Ok(i)
                }
            },
            |_, v| {
                consumed.push(v);
                Ok(())
            },
        );
        assert!(matches!(r, Err(AssemblyError::Internal(ref s)) if s == "produce 2"));
        assert_eq!(consumed, vec![0, 1]);
        let mut consumed = Vec::new();
        let r = pipelined(
            &[0, 1, 2],
            |&i| Ok(i),
            |_, v| {
                consumed.push(v);
                if v == 1 {
                    Err(fail("consume 1"))
                } else {
                    Ok(())
                }
            },
        );
        assert!(matches!(r, Err(AssemblyError::Internal(ref s)) if s == "consume 1"));
        assert_eq!(consumed, vec![0, 1]);
    }
}
