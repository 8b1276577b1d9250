//! Stage 5: ordering. The unitigs in their final order, with their links, ready to write.
//!
//! The sorted runs of `glue.rs` are merged: the n-th unitig of the merge is unitig `n`, as
//! `unitigs.rs` numbers them (chains by their first k-mer, then cycles by their smallest).
//! The merge writes the unitigs in that order to one temporary file and, for each end of each
//! chain, a record of its end k-mer and unitig to the bucket where that end was decided.
//! There, the BCALM-style links found by `pieces.rs` (oriented k-mer `s` followed by `t`) are
//! turned into links between unitig numbers and sent to ranges of unitigs small enough to
//! sort in memory. The writers (`output.rs`) then read the unitigs in order and the links of
//! each range through [`UnitigGraph`].

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::AssemblyError;
use crate::bucketing::end_buckets;
use crate::glue::Runs;
use crate::graph::{ColorRun, Link, UnitigGraph, UnitigView, ViewFn};
use crate::kmer::{Word, canonical, word_of_letters};
use crate::plan::Plan;
use crate::records::{
    FIRST, LAST, ResolvedLink, UnitigRecord, end_records, header_link_len, header_links, put_end,
    put_unitig, read_key, read_run_unitig, read_unitig_colors, resolved_link, resolved_links,
    unitig_records,
};
use crate::spill::{Spill, SpillWriter};
use crate::work::Progress;

/// The compacted graph on disk: unitigs in order and their links.
pub(crate) struct Store {
    k: usize,
    /// One bucket of unitig records, in order.
    unitigs: Spill,
    /// Per range of `range` unitigs, the resolved links out of them (unsorted).
    links: Spill,
    range: u64,
    /// Each unitig's color runs, in order (one bucket), in a colored graph.
    colors: Option<Spill>,
    /// Summary figures.
    pub(crate) stats: StoreStats,
}

/// What the store holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StoreStats {
    pub(crate) unitigs: u64,
    pub(crate) circular: u64,
    pub(crate) bases: u64,
    pub(crate) kmers: u64,
    pub(crate) longest: u64,
    /// `length -> unitigs of that length`, for the N50.
    pub(crate) lengths: BTreeMap<u64, u64>,
    /// Links between unitigs, each edge once (a link and its mirror are one edge).
    pub(crate) edges: u64,
}

impl StoreStats {
    /// Counts one more unitig (a cycle with its link to itself).
    fn add(&mut self, u: &UnitigRecord<'_>) {
        let len = u.sequence.len() as u64;
        self.unitigs += 1;
        self.kmers += u.kmers;
        self.bases += len;
        self.longest = self.longest.max(len);
        *self.lengths.entry(len).or_insert(0) += 1;
        if u.circular {
            self.circular += 1;
            self.edges += 1;
        }
    }

    /// The N50 of the unitig lengths.
    pub(crate) fn n50(&self) -> u64 {
        let total: u64 = self.lengths.iter().map(|(l, n)| l * n).sum();
        let mut acc = 0;
        for (&l, &n) in self.lengths.iter().rev() {
            acc += l * n;
            if 2 * acc >= total {
                return l;
            }
        }
        0
    }
}

/// A cursor over one sorted run of run unitigs.
struct Cursor {
    part: usize,
    chunk: usize,
    chunks: usize,
    buf: Vec<u8>,
    at: usize,
}

impl Cursor {
    /// The next record's bytes (the key included), loading the next chunk when needed.
    fn next<'a>(&'a mut self, runs: &Spill) -> Result<Option<&'a [u8]>, AssemblyError> {
        while self.at >= self.buf.len() {
            if self.chunk >= self.chunks {
                return Ok(None);
            }
            runs.read_chunk_of(self.part, self.chunk, &mut self.buf)?;
            self.chunk += 1;
            self.at = 0;
        }
        Ok(Some(&self.buf[self.at..]))
    }
}

/// Merges the runs into the final order and resolves the links.
///
/// # Errors
/// [`AssemblyError::Disk`]; [`AssemblyError::Internal`] for a link whose end no unitig holds;
/// [`AssemblyError::Interrupted`].
pub(crate) fn order_unitigs<W: Word>(
    plan: &Plan,
    runs: Runs,
    links: &Spill,
    progress: &mut dyn FnMut(Progress),
) -> Result<Store, AssemblyError> {
    let unitigs = plan.spill("unitigs", 1);
    let ends = plan.spill("ends", plan.buckets);
    let mut stats = merge_runs::<W>(plan, runs, &unitigs, &ends, progress)?;
    let (resolved, range, edges) = resolve_links::<W>(plan, links, &ends, stats.unitigs, progress)?;
    stats.edges += edges;
    Ok(Store {
        k: plan.k,
        unitigs,
        links: resolved,
        range,
        colors: None,
        stats,
    })
}

/// Merges the sorted runs: the n-th unitig of the merge is written n-th to `unitigs`, and
/// the end records of each chain go to `ends`, in the buckets where its ends were decided.
/// Returns the figures of the unitigs (their edges to come).
fn merge_runs<W: Word>(
    plan: &Plan,
    runs: Runs,
    unitigs: &Spill,
    ends: &Spill,
    progress: &mut dyn FnMut(Progress),
) -> Result<StoreStats, AssemblyError> {
    let mut stats = StoreStats::default();
    let mut out = unitigs.writer(1 << 20)?;
    let mut end_out = ends
        .writer((plan.budget.usable() / 16 / plan.buckets as u64).clamp(256, 1 << 16) as usize)?;
    let mut cursors: Vec<Cursor> = (0..runs.runs.buckets())
        .map(|p| Cursor {
            part: p,
            chunk: 0,
            chunks: runs.runs.chunk_count(p),
            buf: Vec::new(),
            at: 0,
        })
        .collect();
    let mut heap = BinaryHeap::new();
    for (p, c) in cursors.iter_mut().enumerate() {
        if let Some(r) = c.next(&runs.runs)? {
            heap.push(Reverse((read_key::<W>(r), p)));
        }
    }
    let mut rec = Vec::new();
    let mut id: u64 = 0;
    while let Some(Reverse((_, p))) = heap.pop() {
        if id.is_multiple_of(1 << 16) {
            plan.cancel.check()?;
            progress(Progress::Stage {
                stage: "ordering",
                done: id,
                total: runs.unitigs,
            });
        }
        let c = &mut cursors[p];
        let (_, u, len) = read_run_unitig::<W>(&c.buf[c.at..]);
        rec.clear();
        put_unitig(&u, &mut rec);
        out.push(0, &rec)?;
        stats.add(&u);
        if !u.circular {
            push_ends::<W>(plan, u.sequence, id as u32, &mut end_out)?;
        }
        id += 1;
        c.at += len;
        if let Some(r) = c.next(&runs.runs)? {
            heap.push(Reverse((read_key::<W>(r), p)));
        }
    }
    out.finish()?;
    end_out.finish()?;
    Ok(stats)
}

/// Sends the end records of chain unitig `id`, spelled `seq`: its first and its last k-mer,
/// each to the bucket where that end of the unitig was decided.
fn push_ends<W: Word>(
    plan: &Plan,
    seq: &[u8],
    id: u32,
    out: &mut SpillWriter<'_>,
) -> Result<(), AssemblyError> {
    let (k, b) = (plan.k, plan.buckets);
    let f: W = word_of_letters(&seq[..k], k);
    let l: W = word_of_letters(&seq[seq.len() - k..], k);
    let (left, _, _) = end_buckets(f, k, plan.m, b);
    let (_, right, _) = end_buckets(l, k, plan.m, b);
    for (x, role, bucket) in [(f, FIRST, left), (l, LAST, right)] {
        let cx = canonical(x, k);
        put_end(cx, (cx != x) as u8, role, id, out.buffer(bucket));
        out.record_done(bucket)?;
    }
    Ok(())
}

/// Turns every bucket's header links (oriented k-mer `s` followed by `t`) into links between
/// unitig numbers, through the bucket's end records, and sends each to the range of unitigs
/// it leaves, ranges small enough to sort in memory. Returns the ranges, the unitigs in a
/// range and the edges (each once).
fn resolve_links<W: Word>(
    plan: &Plan,
    links: &Spill,
    ends: &Spill,
    unitigs: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Spill, u64, u64), AssemblyError> {
    let k = plan.k;
    let total_links = links.total_bytes() / header_link_len::<W>() as u64;
    // A range's links are read and sorted in memory, 23 bytes a link (its record and its
    // tuple), whenever painting and writing reach the range's first unitig: at most a quarter
    // of the bound, and about 2^19 links (12 MB), past which a range only takes memory from
    // those stages. Ranges are spans of unitig numbers, so their links are uneven (a span of
    // short, branching unitigs holds several times the mean).
    let ranges = (total_links * 23)
        .div_ceil(plan.budget.usable() / 4)
        .max(total_links.div_ceil(1 << 19))
        .clamp(1, 1 << 16);
    let range = unitigs.div_ceil(ranges).max(1);
    let resolved = plan.spill("resolved", ranges as usize);
    let edges = AtomicU64::new(0);
    // a writer's buffers: up to 2^16 links a range, 2^21 (23 MB) in all
    let buffer = (plan.budget.usable() / 16 / (plan.threads() as u64 * ranges))
        .min(1 << 16)
        .min((1 << 21) / ranges)
        .max(256);
    plan.for_buckets_writing(
        "links",
        plan.buckets,
        progress,
        &resolved,
        buffer as usize,
        &|| (Vec::<u8>::new(), Vec::<(W, u8, u8, u32)>::new()),
        &|out, (buf, map), c| {
            ends.read(c, buf)?;
            map.clear();
            map.extend(end_records::<W>(buf));
            map.sort_unstable();
            links.read(c, buf)?;
            let mut mine = 0u64;
            for link in header_links::<W>(buf) {
                let l = resolve(map, k, link).ok_or_else(|| {
                    AssemblyError::Internal(format!(
                        "bucket {c}: a link's end k-mer is no unitig's end"
                    ))
                })?;
                out.push((l.0 as u64 / range) as usize, &resolved_link(l))?;
                // each edge of the bidirected graph once: the link and its mirror are one
                let (from, from_rev, _, to, to_rev) = l;
                if (from, from_rev, to, to_rev) <= (to, 1 - to_rev, from, 1 - from_rev) {
                    mine += 1;
                }
            }
            edges.fetch_add(mine, Ordering::Relaxed);
            Ok(())
        },
    )?;
    Ok((resolved, range, edges.into_inner()))
}

/// The link between unitig numbers of header link `(s, s_rev)` -> `(t, t_rev)`, found in a
/// bucket's sorted end records: `s` must be the last k-mer of a unitig read forward or the
/// first of one read backward, `t` the first of one read forward or the last of one read
/// backward. `None` when an end k-mer is no unitig's end.
fn resolve<W: Word>(
    ends: &[(W, u8, u8, u32)],
    k: usize,
    (s, s_rev, t, t_rev): (W, u8, W, u8),
) -> Option<ResolvedLink> {
    let find = |x: W, rev: u8, role: u8| -> Option<u32> {
        let i = ends.partition_point(|e| (e.0, e.1, e.2) < (x, rev, role));
        (i < ends.len() && (ends[i].0, ends[i].1, ends[i].2) == (x, rev, role)).then(|| ends[i].3)
    };
    let (from, from_rev) = match find(s, s_rev, LAST) {
        Some(u) => (u, 0u8),
        None => (find(s, 1 - s_rev, FIRST)?, 1u8),
    };
    let (to, to_rev) = match find(t, t_rev, FIRST) {
        Some(v) => (v, 0u8),
        None => (find(t, 1 - t_rev, LAST)?, 1u8),
    };
    let tw = if t_rev == 1 {
        t.reverse_complement(k)
    } else {
        t
    };
    Some((from, from_rev, tw.code_at(k - 1, k), to, to_rev))
}

/// A resolved link as a [`Link`].
fn link_of(l: &ResolvedLink) -> Link {
    Link {
        from: l.0,
        from_rev: l.1 == 1,
        to: l.3,
        to_rev: l.4 == 1,
    }
}

impl Store {
    /// The k-mer length.
    pub(crate) fn k(&self) -> usize {
        self.k
    }

    /// Gives the unitigs their color runs: one record per unitig, in order (`records`).
    pub(crate) fn set_colors(&mut self, runs: Spill) {
        self.colors = Some(runs);
    }

    /// The links out of the unitigs of `range`, sorted (by unitig, its end, the next base).
    fn range_links(
        &self,
        range: usize,
        lbuf: &mut Vec<u8>,
        links: &mut Vec<ResolvedLink>,
    ) -> Result<(), AssemblyError> {
        self.links.read(range, lbuf)?;
        links.clear();
        links.extend(resolved_links(lbuf));
        links.sort_unstable();
        Ok(())
    }

    /// Calls `f` with the stored links in [`UnitigGraph::for_each_unitig`]'s order (by
    /// unitig, then as it gives them; a cycle's two links to itself are not stored links).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`].
    pub(crate) fn for_each_link(&self, f: &mut dyn FnMut(Link)) -> Result<(), AssemblyError> {
        let (mut lbuf, mut links) = (Vec::new(), Vec::new());
        let ranges = self.stats.unitigs.div_ceil(self.range.max(1));
        for range in 0..ranges as usize {
            self.range_links(range, &mut lbuf, &mut links)?;
            for l in &links {
                f(link_of(l));
            }
        }
        Ok(())
    }

    /// `f` of every chunk of unitig records (see [`unitig_records`]), `threads` chunks at a
    /// time; the results in the unitigs' order, chunk by chunk.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`].
    pub(crate) fn map_chunks<T: Send>(
        &self,
        threads: usize,
        f: &(dyn Fn(&[u8]) -> T + Sync),
    ) -> Result<Vec<T>, AssemblyError> {
        let chunks = self.unitigs.chunk_count(0);
        let next = AtomicUsize::new(0);
        let parts: Vec<Result<Vec<(usize, T)>, AssemblyError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads.clamp(1, chunks.max(1)))
                .map(|_| {
                    scope.spawn(|| {
                        let (mut buf, mut done) = (Vec::new(), Vec::new());
                        loop {
                            let c = next.fetch_add(1, Ordering::Relaxed);
                            if c >= chunks {
                                return Ok(done);
                            }
                            self.unitigs.read_chunk_of(0, c, &mut buf)?;
                            done.push((c, f(&buf)));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("store reader"))
                .collect()
        });
        let mut all: Vec<(usize, T)> = Vec::with_capacity(chunks);
        for p in parts {
            all.extend(p?);
        }
        all.sort_unstable_by_key(|&(c, _)| c);
        Ok(all.into_iter().map(|(_, t)| t).collect())
    }
}

impl UnitigGraph for Store {
    type Error = AssemblyError;

    fn k(&self) -> usize {
        self.k
    }

    /// The unitigs in order, read chunk by chunk, each with its links (its range's links
    /// loaded and sorted when it starts).
    fn for_each_unitig(&self, f: &mut ViewFn<'_, AssemblyError>) -> Result<(), AssemblyError> {
        let mut links: Vec<ResolvedLink> = Vec::new();
        let mut loaded = u64::MAX;
        let (mut buf, mut lbuf) = (Vec::new(), Vec::new());
        let mut id: u32 = 0;
        let mut mine: Vec<Link> = Vec::new();
        let mut li = 0;
        let mut painted = self.colors.as_ref().map(|c| ColorCursor {
            runs: c,
            chunk: 0,
            buf: Vec::new(),
            at: 0,
        });
        let mut runs: Vec<ColorRun> = Vec::new();
        for chunk in 0..self.unitigs.chunk_count(0) {
            self.unitigs.read_chunk_of(0, chunk, &mut buf)?;
            for r in unitig_records(&buf) {
                let range = id as u64 / self.range;
                if range != loaded {
                    self.range_links(range as usize, &mut lbuf, &mut links)?;
                    loaded = range;
                    li = 0;
                }
                mine.clear();
                if r.circular {
                    for rev in [false, true] {
                        mine.push(Link {
                            from: id,
                            from_rev: rev,
                            to: id,
                            to_rev: rev,
                        });
                    }
                }
                while li < links.len() && links[li].0 == id {
                    mine.push(link_of(&links[li]));
                    li += 1;
                }
                if let Some(p) = &mut painted {
                    p.next(id, r.kmers, &mut runs)?;
                }
                let view = UnitigView {
                    id,
                    sequence: r.sequence,
                    kmers: r.kmers,
                    total_count: r.count,
                    circular: r.circular,
                    colors: &runs,
                };
                f(&view, &mine)?;
                id += 1;
            }
        }
        Ok(())
    }
}

/// Reads the unitigs' color runs alongside the unitigs.
struct ColorCursor<'a> {
    runs: &'a Spill,
    chunk: usize,
    buf: Vec<u8>,
    at: usize,
}

impl ColorCursor<'_> {
    /// The runs of the next unitig (`id`, of `kmers` k-mers) into `out`.
    fn next(&mut self, id: u32, kmers: u64, out: &mut Vec<ColorRun>) -> Result<(), AssemblyError> {
        while self.at >= self.buf.len() {
            if self.chunk >= self.runs.chunk_count(0) {
                return Err(AssemblyError::Internal(format!(
                    "unitig {id} has no colors"
                )));
            }
            self.runs.read_chunk_of(0, self.chunk, &mut self.buf)?;
            self.chunk += 1;
            self.at = 0;
        }
        let (runs, len) = read_unitig_colors(&self.buf[self.at..]);
        self.at += len;
        out.clear();
        out.extend(runs.map(|(set, kmers)| ColorRun { set, kmers }));
        let covered: u64 = out.iter().map(|r| u64::from(r.kmers)).sum();
        if covered != kmers {
            return Err(AssemblyError::Internal(format!(
                "unitig {id}: {kmers} k-mers, colors for {covered}"
            )));
        }
        Ok(())
    }
}
