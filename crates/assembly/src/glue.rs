//! Stage 4: glue. The pieces of every bucket are joined across buckets into whole unitigs.
//!
//! - **Joins** ([`join_ends`]): the glue records (`pieces.rs`) are bucketed by the hash of
//!   their key, a canonical (k-1)-mer; a key that carries a mark is a link, and its two piece
//!   ends are joined. Each piece end has at most one partner: an array of 4 bytes per piece
//!   end (8 a piece) is all the glue holds in memory for the whole genome.
//! - **Walk** ([`walk`]): chains of pieces are walked from their free ends, then the cycles
//!   from their smallest piece: each piece learns its unitig (a number in walk order), its
//!   place in it and its orientation, written over the partner array.
//! - **Assembly** ([`scatter_pieces`], [`assemble_partitions`]): the pieces are sent to
//!   partitions by unitig, each partition small enough for a thread's share of memory; there
//!   each unitig is spelled from its pieces, turned to its canonical reading (a chain starts
//!   at the smaller of its two end k-mers, a cycle at its smallest k-mer, read forward) and
//!   written, sorted by that start, to a run per partition. Those runs, merged (`store.rs`),
//!   give every unitig its final number.
//!
//! The unitigs, their readings and their order depend only on the solid k-mers, not on how the
//! k-mers fell into buckets and pieces: the output is the same for any thread count and any
//! memory bound.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::AssemblyError;
use crate::bases::{reverse_complement_codes, unpack_codes};
use crate::error::human_bytes;
use crate::kmer::{Word, canonical, word_of_codes};
use crate::pieces::Pieces;
use crate::plan::Plan;
use crate::records::{
    Key, MARK, glue_records, piece_records, placed_pieces, put_key, put_placed_piece,
    put_run_unitig, read_piece, split_piece_end,
};
use crate::spill::{Spill, SpillWriter};
use crate::work::Progress;

/// No partner: the piece end is a unitig end.
const FREE: u32 = u32::MAX;

/// The most a glue partition holds (its pieces and the unitigs spelled from them), whatever
/// the memory bound: partitions that small share the work among the threads and sort in
/// cache.
const PARTITION_BYTES: u64 = 64 << 20;

/// The unitigs, spelled and sorted within partitions.
pub(crate) struct Runs {
    /// Per partition, run unitig records sorted by key.
    pub(crate) runs: Spill,
    /// Unitigs.
    pub(crate) unitigs: u64,
}

/// Glues the pieces into unitigs and writes them, spelled and sorted, in partitions. The
/// pieces' glue records and piece records are removed once read (their spills left empty).
///
/// # Errors
/// [`AssemblyError::Memory`] when the pieces' partner array does not fit the memory bound;
/// [`AssemblyError::Disk`]; [`AssemblyError::Internal`] for a broken invariant;
/// [`AssemblyError::Interrupted`].
pub(crate) fn glue<W: Word>(
    plan: &Plan,
    pieces: &mut Pieces,
    progress: &mut dyn FnMut(Progress),
) -> Result<Runs, AssemblyError> {
    let b = plan.buckets;
    let mut offsets = vec![0u64; b + 1];
    for c in 0..b {
        offsets[c + 1] = offsets[c] + pieces.counts[c];
    }
    let total = offsets[b];
    if 2 * total >= u32::MAX as u64 {
        return Err(AssemblyError::Memory(format!(
            "{total} unitig pieces: the glue numbers piece ends in 32 bits (fewer than 2^31 \
             pieces); use fewer, larger buckets (--max-memory)"
        )));
    }
    let need = 8 * total + total / 8;
    if need > plan.budget.usable() {
        return Err(AssemblyError::Memory(format!(
            "gluing {total} unitig pieces holds {} (8 bytes a piece), more than the memory \
             bound allows; raise --max-memory",
            human_bytes(need)
        )));
    }
    let partner = join_ends::<W>(plan, pieces, &offsets, progress)?;
    // the glue records and then the pieces are read for the last time: each spill's files go
    // as soon as it is, so that the temporary disk holds each stage's input or output, not both
    pieces.glue = plan.spill("glue", 0);
    let (unitigs, first_cycle) = walk(&partner, total)?;
    let parts = partitions(plan, pieces);
    let placed = scatter_pieces(plan, pieces, &offsets, &partner, parts, progress)?;
    pieces.pieces = plan.spill("pieces", 0);
    drop(partner);
    let runs = assemble_partitions::<W>(plan, &placed, first_cycle, unitigs, progress)?;
    placed.remove();
    Ok(Runs { runs, unitigs })
}

/// Joins the piece ends met under a marked key: the partner of each piece end (its dense
/// number `2 (offsets[bucket] + piece) + side`), [`FREE`] for a unitig end. A circular piece
/// is its own partner, end to start.
fn join_ends<W: Word>(
    plan: &Plan,
    pieces: &Pieces,
    offsets: &[u64],
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<AtomicU32>, AssemblyError> {
    let total = offsets[plan.buckets];
    let partner: Vec<AtomicU32> = (0..2 * total).map(|_| AtomicU32::new(FREE)).collect();
    for &(c, l) in &pieces.circular {
        let p = (offsets[c as usize] + l as u64) as u32;
        partner[2 * p as usize].store(2 * p + 1, Ordering::Relaxed);
        partner[2 * p as usize + 1].store(2 * p, Ordering::Relaxed);
    }
    let dense = |end: u64| -> u32 {
        let (c, piece, side) = split_piece_end(end);
        ((offsets[c] + piece) * 2 + side) as u32
    };
    plan.for_buckets(
        "glue",
        pieces.glue.buckets(),
        progress,
        &|| Ok((Vec::<u8>::new(), Vec::<(W, u64)>::new())),
        &|(buf, recs), g| {
            pieces.glue.read(g, buf)?;
            recs.clear();
            recs.extend(glue_records::<W>(buf));
            recs.sort_unstable();
            for group in recs.chunk_by(|a, b| a.0 == b.0) {
                let marks = group.iter().filter(|r| r.1 == MARK).count();
                if marks == 0 {
                    continue;
                }
                if marks != 1 || group.len() != 3 {
                    return Err(AssemblyError::Internal(format!(
                        "a link's key holds {marks} marks and {} piece ends",
                        group.len() - marks
                    )));
                }
                // sorted: the two piece ends, then the mark
                let (a, c) = (dense(group[0].1), dense(group[1].1));
                partner[a as usize].store(c, Ordering::Relaxed);
                partner[c as usize].store(a, Ordering::Relaxed);
            }
            Ok(())
        },
        &|_| Ok(()),
    )?;
    Ok(partner)
}

/// The number of partitions the pieces go to: each holds its piece records and the unitigs
/// spelled from them (a byte a base), at most a thread's share of the bound and at most
/// [`PARTITION_BYTES`].
fn partitions(plan: &Plan, pieces: &Pieces) -> usize {
    let held = pieces.bytes * 6;
    (held.div_ceil(plan.budget.per_thread().max(1)))
        .max(held.div_ceil(PARTITION_BYTES))
        .clamp(1, 1 << 16) as usize
}

/// Sends every piece, with its unitig and its place there (read from the walked partner
/// array), to the partition of its unitig.
fn scatter_pieces(
    plan: &Plan,
    pieces: &Pieces,
    offsets: &[u64],
    partner: &[AtomicU32],
    parts: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<Spill, AssemblyError> {
    let placed = plan.compressible_spill("assembly", parts);
    let buffer = (plan.budget.usable() / 8 / (plan.threads() * parts) as u64).clamp(256, 1 << 16);
    plan.for_buckets_writing(
        "unitigs",
        plan.buckets,
        progress,
        &placed,
        buffer as usize,
        &|| (Vec::<u8>::new(), Vec::<u8>::new()),
        &|out, (buf, rec), c| {
            pieces.pieces.read(c, buf)?;
            for (l, piece) in piece_records(buf, plan.k).enumerate() {
                let p = (offsets[c] + l as u64) as usize;
                let u = partner[2 * p].load(Ordering::Relaxed);
                let place = partner[2 * p + 1].load(Ordering::Relaxed);
                put_placed_piece(u, place, piece, rec);
                out.push(u as usize % parts, rec)?;
            }
            Ok(())
        },
    )?;
    Ok(placed)
}

/// Spells, sorts and writes the unitigs of every partition of `placed` (see
/// [`assemble_partition`]), one run per partition.
fn assemble_partitions<W: Word>(
    plan: &Plan,
    placed: &Spill,
    first_cycle: u64,
    unitigs: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<Spill, AssemblyError> {
    let parts = placed.buckets();
    let runs = plan.compressible_spill("runs", parts);
    let assembled = AtomicU64::new(0);
    plan.for_buckets_writing(
        "unitigs",
        parts,
        progress,
        &runs,
        1 << 16,
        &Vec::<u8>::new,
        &|out, buf, g| {
            placed.read(g, buf)?;
            let n = assemble_partition::<W>(plan.k, buf, first_cycle, g, out)?;
            out.close_bucket(g)?;
            assembled.fetch_add(n, Ordering::Relaxed);
            Ok(())
        },
    )?;
    if assembled.into_inner() != unitigs {
        return Err(AssemblyError::Internal(format!(
            "{unitigs} unitigs walked, a different number assembled"
        )));
    }
    Ok(runs)
}

/// Walks the chains of pieces, then the cycles; writes each piece's unitig over
/// `partner[2p]` and its place and orientation (`place << 1 | reversed`) over
/// `partner[2p + 1]`. Returns the number of unitigs and the first cycle's number.
fn walk(partner: &[AtomicU32], total: u64) -> Result<(u64, u64), AssemblyError> {
    let mut visited = vec![0u64; total.div_ceil(64) as usize];
    let is_visited = |v: &[u64], p: usize| v[p / 64] >> (p % 64) & 1 != 0;
    let get = |e: u32| partner[e as usize].load(Ordering::Relaxed);
    let broken = || AssemblyError::Internal("the glued pieces do not form chains".into());
    let mut u: u64 = 0;
    // walks from `entry` until the next entry is `stop` (FREE for a chain)
    let run =
        |entry0: u32, stop: u32, u: u32, visited: &mut Vec<u64>| -> Result<(), AssemblyError> {
            let mut entry = entry0;
            let mut place = 0u32;
            loop {
                let p = (entry / 2) as usize;
                if is_visited(visited, p) {
                    return Err(broken());
                }
                visited[p / 64] |= 1 << (p % 64);
                let side = entry & 1;
                let next = get(2 * p as u32 + (1 - side));
                partner[2 * p].store(u, Ordering::Relaxed);
                partner[2 * p + 1].store(place << 1 | side, Ordering::Relaxed);
                place = place.checked_add(1).ok_or_else(broken)?;
                if next == stop {
                    return Ok(());
                }
                if next == FREE {
                    return Err(broken());
                }
                entry = next;
            }
        };
    for e in 0..2 * total as u32 {
        let p = (e / 2) as usize;
        if is_visited(&visited, p) || get(e) != FREE {
            continue;
        }
        run(e, FREE, u as u32, &mut visited)?;
        u += 1;
    }
    let first_cycle = u;
    for p in 0..total as usize {
        if is_visited(&visited, p) {
            continue;
        }
        run(2 * p as u32, 2 * p as u32, u as u32, &mut visited)?;
        u += 1;
    }
    if u > u32::MAX as u64 {
        return Err(AssemblyError::Memory(format!(
            "{u} unitigs: at most 2^32 can be numbered"
        )));
    }
    Ok((u, first_cycle))
}

/// Spells the unitigs of one partition from their pieces, turns each to its canonical
/// reading, sorts them by key and writes them as one run. Returns the unitigs written.
fn assemble_partition<W: Word>(
    k: usize,
    buf: &[u8],
    first_cycle: u64,
    g: usize,
    out: &mut SpillWriter<'_>,
) -> Result<u64, AssemblyError> {
    // (unitig, place, offset of the piece record), in order of unitig and place
    let mut entries: Vec<(u32, u32, u32)> = placed_pieces(buf, k)
        .map(|(u, place, at)| (u, place, at as u32))
        .collect();
    entries.sort_unstable();
    let mut spelled: Vec<(Key<W>, Vec<u8>)> = Vec::new();
    let mut codes: Vec<u8> = Vec::new();
    let mut piece: Vec<u8> = Vec::new();
    for unitig in entries.chunk_by(|a, b| a.0 == b.0) {
        let u = unitig[0].0;
        codes.clear();
        let (mut n, mut count) = (0u64, 0u64);
        for (j, &(_, place, at)) in unitig.iter().enumerate() {
            if place >> 1 != j as u32 {
                return Err(AssemblyError::Internal(format!(
                    "unitig {u}: piece {j} placed at {}",
                    place >> 1
                )));
            }
            let p = read_piece(&buf[at as usize..], k);
            n += p.kmers as u64;
            count += p.count;
            piece.clear();
            unpack_codes(p.packed, p.kmers + k - 1, &mut piece);
            if place & 1 == 1 {
                reverse_complement_codes(&mut piece);
            }
            if codes.is_empty() {
                codes.extend_from_slice(&piece);
            } else {
                debug_assert_eq!(
                    &codes[codes.len() - (k - 1)..],
                    &piece[..k - 1],
                    "glued pieces overlap by k - 1 bases"
                );
                codes.extend_from_slice(&piece[k - 1..]);
            }
        }
        let circular = u as u64 >= first_cycle;
        let key = canonical_reading::<W>(&mut codes, k, circular);
        let mut body = Vec::with_capacity(codes.len() + 32);
        put_run_unitig(n, count, &codes, &mut body);
        spelled.push((key, body));
    }
    spelled.sort_unstable_by_key(|a| a.0);
    let mut rec = Vec::new();
    for (key, body) in &spelled {
        rec.clear();
        put_key(key, &mut rec);
        rec.extend_from_slice(body);
        out.push(g, &rec)?;
    }
    Ok(spelled.len() as u64)
}

/// Turns a unitig's codes to its canonical reading and returns its key: a chain is read from
/// the end whose k-mer, as (canonical word, reversed), is smaller; a cycle (its last k-1 bases
/// repeat its first) starts at its smallest canonical k-mer, read forward.
pub(crate) fn canonical_reading<W: Word>(codes: &mut Vec<u8>, k: usize, circular: bool) -> Key<W> {
    if !circular {
        let f: W = word_of_codes(codes, k);
        let l: W = word_of_codes(&codes[codes.len() - k..], k);
        let rl = l.reverse_complement(k);
        let cf = canonical(f, k);
        let cl = canonical(rl, k);
        let key_f = (0u8, cf, (cf != f) as u8);
        let key_r = (0u8, cl, (cl != rl) as u8);
        if key_r < key_f {
            reverse_complement_codes(codes);
            return key_r;
        }
        return key_f;
    }
    let n = codes.len() + 1 - k; // k-mers on the cycle
    let mask = W::mask(k);
    let (mut fw, mut rc) = (W::default(), W::default());
    let mut best = (W::default(), usize::MAX, false);
    for (i, &c) in codes[..n + k - 1].iter().enumerate() {
        fw = fw.push_right(c, mask);
        rc = rc.push_left(3 - c, k);
        if i + 1 >= k {
            let (m, rev) = if rc < fw { (rc, true) } else { (fw, false) };
            if best.1 == usize::MAX || m < best.0 {
                best = (m, i + 1 - k, rev);
            }
        }
    }
    let (m, mut j, rev) = best;
    if rev {
        reverse_complement_codes(codes);
        j = n - 1 - j;
    }
    codes.truncate(n);
    codes.rotate_left(j);
    // The first k - 1 bases again; a cycle of fewer than k - 1 k-mers repeats its n bases
    // (base i + n is base i), so the bases are copied one at a time.
    for i in 0..k - 1 {
        let c = codes[i];
        codes.push(c);
    }
    (1, m, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cycle of fewer k-mers than k - 1 (`GTTGTTG` at k = 5: three k-mers, each base three
    /// on from the same base) is read from its smallest k-mer with its first k - 1 bases
    /// repeated, as a longer cycle is; the fuzzer's `colored_graph` found it panicking.
    #[test]
    fn a_cycle_shorter_than_k_minus_one_is_read_whole() {
        let k = 5;
        for seq in [&b"GTTGTTG"[..], b"ACACAC", b"AAAAA", b"GTTGTTGTTG"] {
            let mut codes: Vec<u8> = seq
                .iter()
                .map(|&b| crate::kmer::base_code(b).unwrap())
                .collect();
            let n = codes.len() + 1 - k;
            let key = canonical_reading::<u64>(&mut codes, k, true);
            assert_eq!(codes.len(), n + k - 1, "{:?}", std::str::from_utf8(seq));
            for i in n..codes.len() {
                assert_eq!(codes[i], codes[i - n], "periodic");
            }
            // The key is the first k-mer read, canonical and the smallest on the cycle.
            let first: u64 = word_of_codes(&codes, k);
            assert_eq!(key.1, canonical(first, k));
            for i in 0..n {
                let w: u64 = word_of_codes(&codes[i..], k);
                assert!(key.1 <= canonical(w, k));
            }
        }
    }
}
