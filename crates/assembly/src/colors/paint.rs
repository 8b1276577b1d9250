//! Stage 6 of a colored run: painting. Every unitig's k-mers get their color sets, as runs.
//!
//! Counting left, per bucket, each solid k-mer's color set by hash (`count.rs`). The unitigs
//! are spelled again into super-k-mers tagged with their unitig and first k-mer, to the same
//! buckets; in each bucket every k-mer finds its set hash, and consecutive k-mers of one
//! unitig with one hash become a run, sent to the range of unitigs it belongs to. Each range
//! is then sorted in memory, in unitig order, and the hashes are numbered in order of first
//! appearance (so the ids do not depend on threads, buckets or the memory bound), and every
//! unitig's runs are written in order for the writers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::AssemblyError;
use crate::bucketing::{emit, for_each_tagged_kmer, superkmers_with};
use crate::count::{KmerColors, Solid};
use crate::graph::UnitigGraph;
use crate::kmer::{Word, base_code};
use crate::plan::Plan;
use crate::records::{
    color_sets, hashed_run, hashed_runs, kmer_colors, put_unitig_colors, solid_runs,
};
use crate::spill::{Spill, SpillWriter};
use crate::store::Store;
use crate::work::{Progress, for_each_bucket};

/// Bytes a k-mer may take in a range while it is sorted: a hashed run each (at worst) and
/// the sort's copy.
const RANGE_BYTES_PER_KMER: u64 = 2 * 28 + 8;

/// Paints the unitigs of `store` with the colors counting recorded; returns the color sets
/// by id (sorted color numbers each) and leaves each unitig's runs in the store.
///
/// # Errors
/// [`AssemblyError::Disk`]; [`AssemblyError::Interrupted`]; [`AssemblyError::Internal`] when
/// a unitig's k-mer has no color or two different sets share a hash (a bug, or a 2^-128
/// accident).
pub(crate) fn paint<W: Word>(
    plan: &Plan,
    store: &mut Store,
    solid: &Solid,
    colors: &KmerColors,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<Vec<u32>>, AssemblyError> {
    let (spelled, ranges) = spell(plan, store)?;
    let runs = plan.spill("color-runs", ranges.len().max(1));
    join::<W>(plan, &spelled, &ranges, solid, colors, &runs, progress)?;
    spelled.remove();
    let unitig_colors = plan.spill("unitig-colors", 1);
    let ids = number_runs(plan, &runs, &ranges, store.stats.unitigs, &unitig_colors)?;
    runs.remove();
    let sets = set_table(colors, &ids)?;
    store.set_colors(unitig_colors);
    Ok(sets)
}

/// Spells every unitig's super-k-mers to the buckets, each tagged with its unitig and the
/// index of its first k-mer; returns them and the first unitig of each range (ranges of
/// about a memory share of k-mers, in order).
fn spell(plan: &Plan, store: &Store) -> Result<(Spill, Vec<u32>), AssemblyError> {
    let (k, b) = (plan.k, plan.buckets);
    let per_range = (plan.budget.usable() / 4 / RANGE_BYTES_PER_KMER).max(1 << 16);
    let spelled = plan.spill("paint", b);
    let mut starts: Vec<u32> = Vec::new();
    let mut in_range = u64::MAX;
    let mut occ = vec![0u64; b];
    let (mut keys, mut codes) = (Vec::new(), Vec::new());
    {
        let mut out =
            spelled.writer((plan.budget.usable() / 8 / b as u64).clamp(256, 1 << 16) as usize)?;
        store.for_each_unitig(&mut |u, _| {
            if u.kmers > u32::MAX as u64 {
                return Err(AssemblyError::InvalidParameter(format!(
                    "unitig {} holds {} k-mers: colors number at most 2^32 a unitig",
                    u.id, u.kmers
                )));
            }
            if in_range.saturating_add(u.kmers) > per_range {
                starts.push(u.id);
                in_range = 0;
            }
            in_range += u.kmers;
            codes.clear();
            codes.extend(u.sequence.iter().map(|&l| base_code(l).unwrap_or(0)));
            let id = u.id.to_le_bytes();
            superkmers_with(
                &codes,
                k,
                plan.m,
                &mut occ,
                &mut keys,
                &mut |bucket, first, s| {
                    let mut tag = [0u8; 8];
                    tag[..4].copy_from_slice(&id);
                    tag[4..].copy_from_slice(&(first as u32).to_le_bytes());
                    emit(s, &tag, bucket, &mut out)
                },
            )?;
            Ok(())
        })?;
        out.finish()?;
    }
    Ok((spelled, starts))
}

/// The range of unitig `u`, given the first unitig of each range.
#[inline]
fn range_of(starts: &[u32], u: u32) -> usize {
    starts.partition_point(|&s| s <= u).saturating_sub(1)
}

/// In each bucket, finds every spelled k-mer's set hash and sends the runs of one hash to
/// their unitig's range.
fn join<W: Word>(
    plan: &Plan,
    spelled: &Spill,
    ranges: &[u32],
    solid: &Solid,
    colors: &KmerColors,
    runs: &Spill,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), AssemblyError> {
    let k = plan.k;
    let order: Vec<usize> = (0..plan.buckets).collect();
    let buffer = (plan.budget.usable() / 16 / (plan.threads() * ranges.len().max(1)) as u64)
        .clamp(256, 1 << 16) as usize;
    let missing = AtomicU64::new(0);
    for_each_bucket(
        "colors",
        plan.threads(),
        &order,
        &plan.cancel,
        progress,
        &|| {
            Ok((
                runs.writer(buffer)?,
                Vec::<u8>::new(),
                Vec::<(W, u128)>::new(),
                Vec::<u32>::new(),
            ))
        },
        &|(out, buf, table, index), c| {
            table.clear();
            solid.spill.read(c, buf)?;
            // one sorted run per counting pass: several need a sort
            let mut filled = 0;
            for run in solid_runs::<W>(buf) {
                let before = table.len();
                table.extend(run.kmers().map(|x| (x, 0)));
                filled += usize::from(table.len() > before);
            }
            colors.hashes.read(c, buf)?;
            let mut n = 0;
            for (slot, h) in table.iter_mut().zip(kmer_colors(buf)) {
                slot.1 = h;
                n += 1;
            }
            if n != table.len() {
                return Err(AssemblyError::Internal(format!(
                    "bucket {c}: {} solid k-mers, {n} colors",
                    table.len()
                )));
            }
            if filled > 1 {
                table.sort_unstable_by_key(|e| e.0);
            }
            let shift = prefix_index(table, k, index);
            let mut run: Option<(u32, u32, u32, u128)> = None;
            let mut failed = false;
            let mut result: Result<(), AssemblyError> = Ok(());
            spelled.for_each_chunk(c, buf, &mut |chunk| {
                for_each_tagged_kmer::<W>(chunk, k, 8, |fw, rc, j, tag| {
                    if failed {
                        return;
                    }
                    let x = if rc < fw { rc } else { fw };
                    let p = (x.to_u128() >> shift) as usize;
                    let (lo, hi) = (index[p] as usize, index[p + 1] as usize);
                    let i = lo + table[lo..hi].partition_point(|e| e.0 < x);
                    if i == hi || table[i].0 != x {
                        failed = true;
                        return;
                    }
                    let h = table[i].1;
                    let u = u32::from_le_bytes(tag[..4].try_into().expect("unitig"));
                    let pos = u32::from_le_bytes(tag[4..].try_into().expect("k-mer")) + j as u32;
                    match &mut run {
                        Some(r) if r.0 == u && r.1 + r.2 == pos && r.3 == h => r.2 += 1,
                        _ => {
                            if let Some(r) = run.replace((u, pos, 1, h))
                                && result.is_ok()
                            {
                                result = flush(out, ranges, r);
                            }
                        }
                    }
                });
                Ok(())
            })?;
            if let Some(r) = run
                && result.is_ok()
            {
                result = flush(out, ranges, r);
            }
            if failed {
                missing.fetch_add(1, Ordering::Relaxed);
            }
            result
        },
        &|(out, _, _, _)| out.finish(),
    )?;
    if missing.into_inner() > 0 {
        return Err(AssemblyError::Internal(
            "a unitig's k-mer is not among the solid k-mers".into(),
        ));
    }
    Ok(())
}

/// Indexes a sorted table by its k-mers' leading bits, about two k-mers a slot: the k-mers
/// whose leading bits are `p` lie at `index[p]..index[p + 1]`. Returns the shift that takes a
/// k-mer (of `2k` bits) to its leading bits.
fn prefix_index<W: Word>(table: &[(W, u128)], k: usize, index: &mut Vec<u32>) -> usize {
    let bits = (usize::BITS - (table.len() / 2).leading_zeros()).clamp(1, 24) as usize;
    let bits = bits.min(2 * k);
    let shift = 2 * k - bits;
    index.clear();
    index.resize((1 << bits) + 1, 0);
    // counts per slot, then their running sums
    for e in table {
        index[(e.0.to_u128() >> shift) as usize + 1] += 1;
    }
    for p in 1..index.len() {
        index[p] += index[p - 1];
    }
    shift
}

/// Sends one run to its range.
fn flush(
    out: &mut SpillWriter<'_>,
    ranges: &[u32],
    r: (u32, u32, u32, u128),
) -> Result<(), AssemblyError> {
    out.push(range_of(ranges, r.0), &hashed_run(r))
}

/// Reads the ranges in order, sorts and merges each one's runs, numbers the set hashes in
/// order of first appearance and writes every unitig's runs in order. Returns the numbers.
fn number_runs(
    plan: &Plan,
    runs: &Spill,
    ranges: &[u32],
    unitigs: u64,
    out: &Spill,
) -> Result<HashMap<u128, u32>, AssemblyError> {
    let mut ids: HashMap<u128, u32> = HashMap::new();
    let mut w = out.writer(1 << 20)?;
    let (mut buf, mut all, mut mine, mut rec) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut next: u32 = 0;
    for r in 0..ranges.len() {
        plan.cancel.check()?;
        runs.read(r, &mut buf)?;
        all.clear();
        all.extend(hashed_runs(&buf));
        all.sort_unstable_by_key(|x| (x.0, x.1));
        let mut i = 0;
        while i < all.len() {
            let u = all[i].0;
            if u != next {
                return Err(AssemblyError::Internal(format!(
                    "unitig {next} has no colors"
                )));
            }
            mine.clear();
            let mut end = 0u32;
            while i < all.len() && all[i].0 == u {
                let (_, first, n, h) = all[i];
                if first != end {
                    return Err(AssemblyError::Internal(format!(
                        "unitig {u}: k-mer {end} has no colors"
                    )));
                }
                let fresh = ids.len() as u32;
                let id = *ids.entry(h).or_insert(fresh);
                match mine.last_mut() {
                    Some((set, count)) if *set == id => *count += n,
                    _ => mine.push((id, n)),
                }
                end += n;
                i += 1;
            }
            rec.clear();
            put_unitig_colors(&mine, &mut rec);
            w.push(0, &rec)?;
            next += 1;
        }
    }
    if u64::from(next) != unitigs {
        return Err(AssemblyError::Internal(format!(
            "{unitigs} unitigs, {next} painted"
        )));
    }
    w.finish()?;
    Ok(ids)
}

/// The color sets by id, from the definitions counting wrote.
fn set_table(
    colors: &KmerColors,
    ids: &HashMap<u128, u32>,
) -> Result<Vec<Vec<u32>>, AssemblyError> {
    let mut sets: Vec<Option<Vec<u32>>> = vec![None; ids.len()];
    let mut buf = Vec::new();
    for b in 0..colors.sets.buckets() {
        colors.sets.read(b, &mut buf)?;
        for (hash, set) in color_sets(&buf) {
            let Some(&id) = ids.get(&hash) else { continue };
            match &sets[id as usize] {
                None => sets[id as usize] = Some(set),
                Some(s) if *s == set => {}
                Some(_) => {
                    return Err(AssemblyError::Internal(
                        "two color sets share a hash".into(),
                    ));
                }
            }
        }
    }
    sets.into_iter()
        .enumerate()
        .map(|(i, s)| {
            s.ok_or_else(|| AssemblyError::Internal(format!("color set {i} is never defined")))
        })
        .collect()
}
