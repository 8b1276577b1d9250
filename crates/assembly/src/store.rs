//! Stage 5: the unitigs in their final order, with their links, ready to write.
//!
//! The sorted runs of `glue.rs` are merged: the n-th unitig of the merge is unitig `n`, as
//! `unitigs.rs` numbers them (chains by their first k-mer, then cycles by their smallest).
//! The merge writes the unitigs in that order to one temporary file and, for each end of each
//! chain, a record of its end k-mer and unitig to the bucket where that end was decided.
//! There, the BCALM-style links found by `pieces.rs` (oriented k-mer `s` followed by `t`) are
//! turned into links between unitig numbers and sent to ranges of unitigs small enough to
//! sort in memory. Writing the FASTA, GFA or DOT then reads the unitigs in order and the
//! links of each range.

use std::collections::{BTreeMap, BinaryHeap};
use std::io::Write;

use crate::AssemblyError;
use crate::bucketing::end_buckets;
use crate::count::Plan;
use crate::glue::{Key, Runs, key_len, read_key};
use crate::kmer::{Word, canonical};
use crate::spill::Spill;
use crate::unitigs::Link;
use crate::work::{Progress, for_each_bucket};

/// The role of an end k-mer in the end maps: the unitig's first k-mer.
const FIRST: u8 = 0;
/// The unitig's last k-mer.
const LAST: u8 = 1;

/// Bytes of one resolved link: `[from: u32][from_rev: u8][base: u8][to: u32][to_rev: u8]`.
const LINK_BYTES: usize = 11;

/// The compacted graph on disk: unitigs in order and their links.
pub(crate) struct Store {
    k: usize,
    /// One bucket: `[kmers: u64][count: u64][circular: u8][len: u32][bases]` per unitig.
    unitigs: Spill,
    /// Per range of `range` unitigs, the links out of them (unsorted).
    links: Spill,
    range: u64,
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

/// What [`crate::Assembly::for_each_unitig`] calls with each unitig and its links.
pub type UnitigFn<'a> = dyn FnMut(&StoredUnitig, &[Link]) -> Result<(), AssemblyError> + 'a;

/// One unitig as the store gives it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredUnitig {
    /// Its number.
    pub id: u32,
    /// Its bases (`ACGT`).
    pub sequence: Vec<u8>,
    /// Its k-mers.
    pub kmers: u64,
    /// The sum of its k-mers' counts.
    pub total_count: u64,
    /// Whether it is a cycle.
    pub circular: bool,
}

/// One unitig record of the store, borrowed from a chunk.
pub(crate) struct Record<'a> {
    /// Its bases (`ACGT`).
    pub(crate) sequence: &'a [u8],
    /// Its k-mers.
    pub(crate) kmers: u64,
    /// The sum of its k-mers' counts.
    pub(crate) count: u64,
    /// Whether it is a cycle.
    pub(crate) circular: bool,
}

/// The records of one chunk of the unitigs' file, in order.
pub(crate) fn records(buf: &[u8]) -> impl Iterator<Item = Record<'_>> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= buf.len() {
            return None;
        }
        let r = &buf[at..];
        let len = u32::from_le_bytes(r[17..21].try_into().expect("length")) as usize;
        at += 21 + len;
        Some(Record {
            sequence: &r[21..21 + len],
            kmers: u64::from_le_bytes(r[..8].try_into().expect("kmers")),
            count: u64::from_le_bytes(r[8..16].try_into().expect("count")),
            circular: r[16] == 1,
        })
    })
}

impl StoredUnitig {
    /// The mean count of its k-mers (`km`).
    pub fn mean_count(&self) -> f64 {
        self.total_count as f64 / self.kmers.max(1) as f64
    }
}

/// A cursor over one sorted run of unitig records.
struct Cursor {
    part: usize,
    chunk: usize,
    chunks: usize,
    buf: Vec<u8>,
    at: usize,
}

impl Cursor {
    /// The next record's bytes (the key included), loading the next chunk when needed.
    fn next<'a>(&'a mut self, runs: &Spill, k: usize) -> Result<Option<&'a [u8]>, AssemblyError> {
        let _ = k;
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

/// Bytes of the unitig record at the start of `b` (after its key).
fn record_len(b: &[u8]) -> usize {
    let len = u32::from_le_bytes(b[16..20].try_into().expect("length")) as usize;
    20 + len
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
    let k = plan.k;
    let b = plan.buckets;
    let parts = runs.runs.buckets();
    let kl = key_len::<W>();
    let unitigs = plan.spill("unitigs", 1);
    let ends = plan.spill("ends", b);
    let mut stats = StoreStats::default();
    {
        let mut out = unitigs.writer(1 << 20)?;
        let mut end_out =
            ends.writer((plan.budget.usable() / 16 / b as u64).clamp(256, 1 << 16) as usize)?;
        let mut cursors: Vec<Cursor> = (0..parts)
            .map(|p| Cursor {
                part: p,
                chunk: 0,
                chunks: runs.runs.chunk_count(p),
                buf: Vec::new(),
                at: 0,
            })
            .collect();
        let mut heap: BinaryHeap<std::cmp::Reverse<(Key<W>, usize)>> = BinaryHeap::new();
        for (p, c) in cursors.iter_mut().enumerate() {
            if let Some(r) = c.next(&runs.runs, k)? {
                heap.push(std::cmp::Reverse((read_key::<W>(r), p)));
            }
        }
        let mut rec = Vec::new();
        let mut id: u64 = 0;
        while let Some(std::cmp::Reverse((key, p))) = heap.pop() {
            if id.is_multiple_of(1 << 16) {
                plan.cancel.check()?;
                progress(Progress::Stage {
                    stage: "ordering",
                    done: id,
                    total: runs.unitigs,
                });
            }
            let c = &mut cursors[p];
            let r = &c.buf[c.at..];
            let body = &r[kl..];
            let len = record_len(body);
            let n = u64::from_le_bytes(body[..8].try_into().expect("kmers"));
            let seq = &body[20..len];
            rec.clear();
            rec.extend_from_slice(&body[..16]);
            rec.push((key.0 == 1) as u8);
            rec.extend_from_slice(&body[16..len]);
            out.push(0, &rec)?;
            stats.unitigs += 1;
            stats.kmers += n;
            stats.bases += seq.len() as u64;
            stats.longest = stats.longest.max(seq.len() as u64);
            *stats.lengths.entry(seq.len() as u64).or_insert(0) += 1;
            if key.0 == 1 {
                stats.circular += 1;
                stats.edges += 1; // its link to itself
            } else {
                // the end maps: (canonical end k-mer, reversed, role, unitig)
                let f: W = word_of_letters(&seq[..k], k);
                let l: W = word_of_letters(&seq[seq.len() - k..], k);
                let (left, _, _) = end_buckets(f, k, plan.m, b);
                let (_, right, _) = end_buckets(l, k, plan.m, b);
                for (x, role, bucket) in [(f, FIRST, left), (l, LAST, right)] {
                    let cx = canonical(x, k);
                    let buf = end_out.buffer(bucket);
                    cx.put(buf);
                    buf.push((cx != x) as u8);
                    buf.push(role);
                    buf.extend_from_slice(&(id as u32).to_le_bytes());
                    end_out.record_done(bucket)?;
                }
            }
            id += 1;
            c.at += kl + len;
            if let Some(r) = c.next(&runs.runs, k)? {
                heap.push(std::cmp::Reverse((read_key::<W>(r), p)));
            }
        }
        out.finish()?;
        end_out.finish()?;
    }
    drop(runs);
    // links: resolved per bucket, sent to ranges of unitigs
    let total_links = links.total_bytes() / (2 * W::BYTES as u64 + 2);
    let ranges = (total_links * 16)
        .div_ceil(plan.budget.usable() / 4)
        .clamp(1, 1 << 16);
    let range = stats.unitigs.div_ceil(ranges).max(1);
    let resolved = plan.spill("resolved", ranges as usize);
    let order: Vec<usize> = (0..b).collect();
    let edges = std::sync::atomic::AtomicU64::new(0);
    for_each_bucket(
        "links",
        plan.threads(),
        &order,
        &plan.cancel,
        progress,
        &|| {
            Ok((
                resolved.writer(
                    (plan.budget.usable() / 16 / (plan.threads() as u64 * ranges))
                        .clamp(256, 1 << 16) as usize,
                )?,
                Vec::<u8>::new(),
                Vec::<(W, u8, u8, u32)>::new(),
            ))
        },
        &|(out, buf, map), c| {
            ends.read(c, buf)?;
            map.clear();
            let er = W::BYTES + 6;
            map.extend(buf.chunks_exact(er).map(|r| {
                (
                    W::get(r),
                    r[W::BYTES],
                    r[W::BYTES + 1],
                    u32::from_le_bytes(r[W::BYTES + 2..].try_into().expect("unitig")),
                )
            }));
            map.sort_unstable();
            let find = |x: W, rev: u8, role: u8| -> Option<u32> {
                let i = map.partition_point(|e| (e.0, e.1, e.2) < (x, rev, role));
                (i < map.len() && (map[i].0, map[i].1, map[i].2) == (x, rev, role))
                    .then(|| map[i].3)
            };
            links.read(c, buf)?;
            let lr = 2 * W::BYTES + 2;
            let mut rec = [0u8; LINK_BYTES];
            let mut mine = 0u64;
            for r in buf.chunks_exact(lr) {
                let s = W::get(r);
                let s_rev = r[W::BYTES];
                let t = W::get(&r[W::BYTES + 1..]);
                let t_rev = r[2 * W::BYTES + 1];
                let (from, from_rev) = match find(s, s_rev, LAST) {
                    Some(u) => (u, 0u8),
                    None => (find(s, 1 - s_rev, FIRST).ok_or_else(|| lost(c))?, 1u8),
                };
                let (to, to_rev) = match find(t, t_rev, FIRST) {
                    Some(v) => (v, 0u8),
                    None => (find(t, 1 - t_rev, LAST).ok_or_else(|| lost(c))?, 1u8),
                };
                let tw = if t_rev == 1 {
                    t.reverse_complement(k)
                } else {
                    t
                };
                rec[..4].copy_from_slice(&from.to_le_bytes());
                rec[4] = from_rev;
                rec[5] = tw.code_at(k - 1, k);
                rec[6..10].copy_from_slice(&to.to_le_bytes());
                rec[10] = to_rev;
                out.push((from as u64 / range) as usize, &rec)?;
                // each edge of the bidirected graph once: the link and its mirror are one
                let mirror = (to, 1 - to_rev, from, 1 - from_rev);
                if (from, from_rev, to, to_rev) <= mirror {
                    mine += 1;
                }
            }
            edges.fetch_add(mine, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        },
        &|(out, _, _)| out.finish(),
    )?;
    stats.edges += edges.into_inner();
    Ok(Store {
        k,
        unitigs,
        links: resolved,
        range,
        stats,
    })
}

fn lost(c: usize) -> AssemblyError {
    AssemblyError::Internal(format!("bucket {c}: a link's end k-mer is no unitig's end"))
}

/// The word of k letters.
fn word_of_letters<W: Word>(letters: &[u8], k: usize) -> W {
    let mask = W::mask(k);
    letters.iter().fold(W::default(), |x, &b| {
        x.push_right(crate::kmer::base_code(b).unwrap_or(0), mask)
    })
}

impl Store {
    /// The k-mer length.
    pub(crate) fn k(&self) -> usize {
        self.k
    }

    /// Calls `f` with every unitig in order and its links (those out of its `+` end first,
    /// then out of its `-` end, each in order of the next base; a cycle's two links to itself).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`]; the first error of `f`.
    pub(crate) fn for_each(&self, f: &mut UnitigFn<'_>) -> Result<(), AssemblyError> {
        let mut links: Vec<(u32, u8, u8, u32, u8)> = Vec::new();
        let mut loaded = u64::MAX;
        let mut buf = Vec::new();
        let mut lbuf = Vec::new();
        let mut id: u32 = 0;
        let mut mine: Vec<Link> = Vec::new();
        let mut li = 0;
        let mut u = StoredUnitig {
            id: 0,
            sequence: Vec::new(),
            kmers: 0,
            total_count: 0,
            circular: false,
        };
        for chunk in 0..self.unitigs.chunk_count(0) {
            self.unitigs.read_chunk_of(0, chunk, &mut buf)?;
            for r in records(&buf) {
                // one buffer for every unitig's bases
                u.id = id;
                u.sequence.clear();
                u.sequence.extend_from_slice(r.sequence);
                u.kmers = r.kmers;
                u.total_count = r.count;
                u.circular = r.circular;
                let circular = r.circular;
                let range = id as u64 / self.range;
                if range != loaded {
                    self.range_links(range as usize, &mut lbuf, &mut links)?;
                    loaded = range;
                    li = 0;
                }
                mine.clear();
                if circular {
                    mine.push(Link {
                        from: id,
                        from_rev: false,
                        to: id,
                        to_rev: false,
                    });
                    mine.push(Link {
                        from: id,
                        from_rev: true,
                        to: id,
                        to_rev: true,
                    });
                }
                while li < links.len() && links[li].0 == id {
                    let l = links[li];
                    mine.push(Link {
                        from: l.0,
                        from_rev: l.1 == 1,
                        to: l.3,
                        to_rev: l.4 == 1,
                    });
                    li += 1;
                }
                f(&u, &mine)?;
                id += 1;
            }
        }
        Ok(())
    }

    /// The links out of the unitigs of `range`, sorted (by unitig, its end, the next base):
    /// `(from, from_rev, base, to, to_rev)`.
    fn range_links(
        &self,
        range: usize,
        lbuf: &mut Vec<u8>,
        links: &mut Vec<(u32, u8, u8, u32, u8)>,
    ) -> Result<(), AssemblyError> {
        self.links.read(range, lbuf)?;
        links.clear();
        links.extend(lbuf.chunks_exact(LINK_BYTES).map(|r| {
            (
                u32::from_le_bytes(r[..4].try_into().expect("from")),
                r[4],
                r[5],
                u32::from_le_bytes(r[6..10].try_into().expect("to")),
                r[10],
            )
        }));
        links.sort_unstable();
        Ok(())
    }

    /// Calls `f` with the stored links in [`Store::for_each`]'s order (by unitig, then as it
    /// gives them; a cycle's two links to itself are not stored links).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`].
    pub(crate) fn for_each_link(&self, f: &mut dyn FnMut(Link)) -> Result<(), AssemblyError> {
        let (mut lbuf, mut links) = (Vec::new(), Vec::new());
        let ranges = self.stats.unitigs.div_ceil(self.range.max(1));
        for range in 0..ranges as usize {
            self.range_links(range, &mut lbuf, &mut links)?;
            for &l in &links {
                f(Link {
                    from: l.0,
                    from_rev: l.1 == 1,
                    to: l.3,
                    to_rev: l.4 == 1,
                });
            }
        }
        Ok(())
    }

    /// `f` of every chunk of unitig records (see [`records`]), `threads` chunks at a time;
    /// the results in the unitigs' order, chunk by chunk.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`].
    pub(crate) fn map_chunks<T: Send>(
        &self,
        threads: usize,
        f: &(dyn Fn(&[u8]) -> T + Sync),
    ) -> Result<Vec<T>, AssemblyError> {
        let chunks = self.unitigs.chunk_count(0);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let parts: Vec<Result<Vec<(usize, T)>, AssemblyError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads.clamp(1, chunks.max(1)))
                .map(|_| {
                    scope.spawn(|| {
                        let (mut buf, mut done) = (Vec::new(), Vec::new());
                        loop {
                            let c = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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

    /// Writes the unitigs as FASTA with BCALM2's headers (see [`crate::write_unitigs_fasta`]).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] for the store or the writer.
    pub(crate) fn write_fasta(
        &self,
        out: &mut dyn Write,
        path: &std::path::Path,
    ) -> Result<(), AssemblyError> {
        let err = |error| AssemblyError::Disk {
            path: path.to_path_buf(),
            error,
        };
        let mut line = Vec::with_capacity(256);
        self.for_each(&mut |u, links| {
            line.clear();
            write!(
                line,
                ">{} LN:i:{} KC:i:{} km:f:{:.1}",
                u.id,
                u.sequence.len(),
                u.total_count,
                u.mean_count()
            )
            .expect("to memory");
            for l in links {
                write!(line, " L:{}:{}:{}", sign(l.from_rev), l.to, sign(l.to_rev))
                    .expect("to memory");
            }
            line.push(b'\n');
            out.write_all(&line).map_err(err)?;
            out.write_all(&u.sequence).map_err(err)?;
            out.write_all(b"\n").map_err(err)
        })
    }

    /// Writes GFA 1.0 (see [`crate::write_gfa`]): S lines, then each edge once as an L line.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] for the store or the writer.
    pub(crate) fn write_gfa(
        &self,
        out: &mut dyn Write,
        path: &std::path::Path,
    ) -> Result<(), AssemblyError> {
        let err = |error| AssemblyError::Disk {
            path: path.to_path_buf(),
            error,
        };
        out.write_all(b"H\tVN:Z:1.0\n").map_err(err)?;
        let mut line = Vec::with_capacity(256);
        self.for_each(&mut |u, _| {
            line.clear();
            write!(line, "S\t{}\t", u.id).expect("to memory");
            line.extend_from_slice(&u.sequence);
            writeln!(
                line,
                "\tLN:i:{}\tKC:i:{}\tkm:f:{:.1}",
                u.sequence.len(),
                u.total_count,
                u.mean_count()
            )
            .expect("to memory");
            out.write_all(&line).map_err(err)
        })?;
        let overlap = self.k - 1;
        self.for_each(&mut |_, links| {
            for l in unique(links) {
                writeln!(
                    out,
                    "L\t{}\t{}\t{}\t{}\t{overlap}M",
                    l.from,
                    sign(l.from_rev),
                    l.to,
                    sign(l.to_rev)
                )
                .map_err(err)?;
            }
            Ok(())
        })
    }

    /// Writes GraphViz DOT (see [`crate::write_dot`]).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] for the store or the writer.
    pub(crate) fn write_dot(
        &self,
        out: &mut dyn Write,
        path: &std::path::Path,
    ) -> Result<(), AssemblyError> {
        let err = |error| AssemblyError::Disk {
            path: path.to_path_buf(),
            error,
        };
        writeln!(out, "digraph unitigs {{").map_err(err)?;
        writeln!(out, "  node [shape=box, fontname=\"Helvetica\"];").map_err(err)?;
        self.for_each(&mut |u, _| {
            writeln!(
                out,
                "  {} [label=\"{}\\nLN {} km {:.1}{}\"];",
                u.id,
                u.id,
                u.sequence.len(),
                u.mean_count(),
                if u.circular { "\\ncircular" } else { "" }
            )
            .map_err(err)
        })?;
        self.for_each(&mut |_, links| {
            for l in unique(links) {
                writeln!(
                    out,
                    "  {} -> {} [label=\"{}{}\"];",
                    l.from,
                    l.to,
                    sign(l.from_rev),
                    sign(l.to_rev)
                )
                .map_err(err)?;
            }
            Ok(())
        })?;
        writeln!(out, "}}").map_err(err)
    }
}

fn sign(rev: bool) -> char {
    if rev { '-' } else { '+' }
}

/// The links of one unitig that are the first of their edge (as `output::unique_links`).
fn unique(links: &[Link]) -> impl Iterator<Item = &Link> {
    links.iter().filter(|l| {
        let mirror = Link {
            from: l.to,
            from_rev: !l.to_rev,
            to: l.from,
            to_rev: !l.from_rev,
        };
        **l <= mirror
    })
}
