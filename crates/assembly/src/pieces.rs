//! Stage 3: compaction inside each bucket. A bucket holds its own solid k-mers and the foreign
//! k-mers that have an end decided there, so for every (k-1)-mer end `w` of the bucket it sees
//! every k-mer that touches `w`: it decides there whether the k-mers on the two sides of `w`
//! are linked (each the other's only neighbour, as `oriented.rs` defines links), and chains its
//! own k-mers along those links into pieces of unitigs.
//!
//! A piece ends where its unitig ends (an end decided here, not linked), or where the unitig
//! may go on in another bucket: an end decided elsewhere ("pending"), or a link decided here
//! to a foreign k-mer. For each such open end the bucket writes a glue record keyed by the
//! end's canonical (k-1)-mer, and for each link decided here that involves a foreign k-mer a
//! mark under the same key: `glue.rs` joins the two piece ends met under a marked key. Every
//! end decided here that is not a link writes its BCALM-style links (to every successor) for
//! the FASTA headers and the GFA.
//!
//! Everything a bucket writes is a function of its k-mers alone, so the result does not depend
//! on the number of threads or on which thread takes which bucket.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use gpu_runtime::{Backend, Exec};

use crate::AssemblyError;
use crate::count::Solid;
use crate::count_word::CountWord;
use crate::error::human_bytes;
use crate::kmer::{Word, canonical};
use crate::oriented::{NONE, Oriented, end_key, flip, index_of, oriented, word_of};
use crate::plan::Plan;
use crate::records::{
    LEFT_HERE, MARK, RIGHT_HERE, foreign_ends, piece_end, put_glue, put_header_link, put_piece,
    solid_runs,
};
use crate::spill::{Spill, SpillWriter};
use crate::work::{Progress, for_each_bucket};

/// Compaction threads sort their buckets' end records on the GPU one at a time.
static GPU_TURN: Mutex<()> = Mutex::new(());

/// What the buckets compacted into.
pub(crate) struct Pieces {
    /// Per bucket, piece records (`records`).
    pub(crate) pieces: Spill,
    /// Per glue bucket (by hash of the key), glue records: the canonical (k-1)-mer of an open
    /// piece end and that end, or [`MARK`] for a link decided here with a foreign k-mer.
    pub(crate) glue: Spill,
    /// Per bucket, header links: oriented k-mer `s` is followed by `t` at an end that is not
    /// a link (BCALM's links, for the FASTA headers and the GFA).
    pub(crate) links: Spill,
    /// Pieces per bucket.
    pub(crate) counts: Vec<u64>,
    /// `(bucket, piece)` of the pieces that are whole circular unitigs.
    pub(crate) circular: Vec<(u32, u32)>,
    /// Bytes of piece records.
    pub(crate) bytes: u64,
    /// K-mers in pieces (all the solid k-mers).
    pub(crate) kmers: u64,
}

/// Bytes compaction holds per k-mer of a bucket: the word, its count and flags, its two end
/// records (key and value, twice for the radix sort), its two links and the walk's marks.
pub(crate) fn bytes_per_kmer<W: Word>() -> u64 {
    5 * W::BYTES as u64 + 36
}

/// Flags of a k-mer in a bucket's array: [`RIGHT_HERE`] (its forward reading's right end is
/// decided here), [`LEFT_HERE`] (its reverse reading's right end is), and this one (it is one
/// of the bucket's own k-mers, not a foreign one).
const LOCAL: u8 = 4;

/// One thread's writers and arrays.
struct Worker<'s, W> {
    w: Writers<'s>,
    a: Arrays<W>,
}

/// What a thread writes.
struct Writers<'s> {
    pieces: SpillWriter<'s>,
    glue: SpillWriter<'s>,
    links: SpillWriter<'s>,
    circular: Vec<(u32, u32)>,
    rec: Vec<u8>,
    kmers_done: u64,
}

/// A thread's arrays, reused from bucket to bucket.
#[derive(Default)]
struct Arrays<W> {
    buf: Vec<u8>,
    kmers: Vec<W>,
    counts: Vec<u32>,
    flags: Vec<u8>,
    ends_k: Vec<W>,
    ends_v: Vec<u32>,
    link: Vec<Oriented>,
    seen: Vec<bool>,
    path: Vec<Oriented>,
    codes: Vec<u8>,
}

/// Compacts every bucket into pieces.
///
/// # Errors
/// [`AssemblyError::Memory`] for a bucket larger than the whole memory bound;
/// [`AssemblyError::Disk`]; [`AssemblyError::Interrupted`].
pub(crate) fn compact_buckets<W: CountWord>(
    plan: &Plan,
    solid: &Solid,
    backend: Backend,
    progress: &mut dyn FnMut(Progress),
) -> Result<Pieces, AssemblyError> {
    let b = plan.buckets;
    let t = plan.threads();
    let per = bytes_per_kmer::<W>();
    let size = |c: usize| (solid.sizes[c] + solid.foreign_sizes[c]) * per;
    let usable = plan.budget.usable();
    if let Some(c) = (0..b).find(|&c| size(c) > usable) {
        return Err(AssemblyError::Memory(format!(
            "bucket {c} holds {} k-mers (its minimizer is very frequent): compacting it needs \
             {}, more than the memory bound allows; raise --max-memory",
            solid.sizes[c] + solid.foreign_sizes[c],
            human_bytes(size(c))
        )));
    }
    let per_thread = plan.budget.per_thread();
    // buckets that fit a thread's share run in parallel, the others one at a time
    let (mut small, large): (Vec<usize>, Vec<usize>) = (0..b).partition(|&c| size(c) <= per_thread);
    small.sort_by_key(|&c| std::cmp::Reverse(size(c)));
    let pieces = plan.compressible_spill("pieces", b);
    let glue = plan.compressible_spill("glue", b);
    let links = plan.compressible_spill("links", b);
    let counts: Vec<AtomicU64> = (0..b).map(|_| AtomicU64::new(0)).collect();
    let circular = Mutex::new(Vec::new());
    let kmers = AtomicU64::new(0);
    let glue_buffer = (usable / 8 / (t * b) as u64).clamp(256, 1 << 16) as usize;
    let init = || {
        Ok(Worker::<W> {
            w: Writers {
                pieces: pieces.writer(1 << 16)?,
                glue: glue.writer(glue_buffer)?,
                links: links.writer(1 << 16)?,
                circular: Vec::new(),
                rec: Vec::new(),
                kmers_done: 0,
            },
            a: Arrays::default(),
        })
    };
    let work = |w: &mut Worker<'_, W>, c: usize| {
        let n = compact_bucket(plan, solid, c, backend, &mut w.a, &mut w.w)?;
        w.w.pieces.close_bucket(c)?;
        w.w.links.close_bucket(c)?;
        counts[c].store(n, Ordering::Relaxed);
        Ok(())
    };
    let finish = |w: Worker<'_, W>| {
        let w = w.w;
        w.pieces.finish()?;
        w.glue.finish()?;
        w.links.finish()?;
        circular.lock().expect("circular").extend(w.circular);
        kmers.fetch_add(w.kmers_done, Ordering::Relaxed);
        Ok(())
    };
    // The small buckets on every thread, then the large ones one at a time.
    for (order, threads) in [(&small, t), (&large, 1)] {
        let cancel = &plan.cancel;
        for_each_bucket(
            "compaction",
            threads,
            order,
            cancel,
            progress,
            &init,
            &work,
            &finish,
        )?;
    }
    let mut circular = circular.into_inner().expect("circular");
    circular.sort_unstable();
    let bytes = pieces.total_bytes();
    Ok(Pieces {
        pieces,
        glue,
        links,
        counts: counts.into_iter().map(AtomicU64::into_inner).collect(),
        circular,
        bytes,
        kmers: kmers.into_inner(),
    })
}

/// Loads bucket `c`'s own and foreign k-mers into one sorted array with flags.
fn load_bucket<W: Word>(solid: &Solid, c: usize, w: &mut Arrays<W>) -> Result<(), AssemblyError> {
    let (kmers, counts, flags) = (&mut w.kmers, &mut w.counts, &mut w.flags);
    kmers.clear();
    counts.clear();
    flags.clear();
    solid.spill.read(c, &mut w.buf)?;
    let mut runs = 0;
    for run in solid_runs::<W>(&w.buf) {
        runs += 1;
        kmers.extend(run.kmers());
        counts.extend(run.counts());
        flags.extend(run.flags.iter().map(|&f| f | LOCAL));
    }
    if runs > 1 {
        // several counting passes: their runs are each sorted
        let mut order: Vec<u32> = (0..kmers.len() as u32).collect();
        order.sort_unstable_by_key(|&i| kmers[i as usize]);
        *kmers = order.iter().map(|&i| kmers[i as usize]).collect();
        *counts = order.iter().map(|&i| counts[i as usize]).collect();
        *flags = order.iter().map(|&i| flags[i as usize]).collect();
    }
    let own = kmers.len();
    solid.foreign.read(c, &mut w.buf)?;
    let mut foreign: Vec<(W, u8)> = foreign_ends::<W>(&w.buf)
        .map(|(x, side)| (x, if side == 0 { RIGHT_HERE } else { LEFT_HERE }))
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    foreign.sort_unstable_by_key(|f| f.0);
    // merge the two sorted lists (a foreign k-mer never is one of the bucket's own)
    let mut mk = Vec::with_capacity(own + foreign.len());
    let mut mc = Vec::with_capacity(own + foreign.len());
    let mut mf = Vec::with_capacity(own + foreign.len());
    let (mut i, mut j) = (0, 0);
    while i < own || j < foreign.len() {
        if j == foreign.len() || (i < own && kmers[i] < foreign[j].0) {
            mk.push(kmers[i]);
            mc.push(counts[i]);
            mf.push(flags[i]);
            i += 1;
        } else {
            let x = foreign[j].0;
            let mut f = 0;
            while j < foreign.len() && foreign[j].0 == x {
                f |= foreign[j].1;
                j += 1;
            }
            if i < own && kmers[i] == x {
                return Err(AssemblyError::Internal(format!(
                    "bucket {c}: a k-mer is both its own and foreign"
                )));
            }
            mk.push(x);
            mc.push(0);
            mf.push(f);
        }
    }
    *kmers = mk;
    *counts = mc;
    *flags = mf;
    Ok(())
}

/// Whether oriented k-mer `o`'s right end is decided in this bucket.
#[inline]
fn here(flags: &[u8], o: Oriented) -> bool {
    flags[index_of(o)] & (1 << (o & 1)) != 0
}

#[inline]
fn is_local(flags: &[u8], o: Oriented) -> bool {
    flags[index_of(o)] & LOCAL != 0
}

/// Compacts bucket `c`; returns its number of pieces.
fn compact_bucket<W: CountWord>(
    plan: &Plan,
    solid: &Solid,
    c: usize,
    backend: Backend,
    a: &mut Arrays<W>,
    w: &mut Writers<'_>,
) -> Result<u64, AssemblyError> {
    load_bucket(solid, c, a)?;
    let n = a.kmers.len();
    if n == 0 {
        return Ok(0);
    }
    if n >= 1 << 30 {
        return Err(AssemblyError::Memory(format!(
            "bucket {c} holds {n} k-mers, more than 2^30: use more buckets (--buckets)"
        )));
    }
    end_records(plan.k, a);
    match backend {
        Backend::Cuda => {
            // one bucket's records on the device at a time (the threads take turns)
            let _turn = GPU_TURN.lock().expect("GPU turn");
            W::sort_ends(&mut a.ends_k, &mut a.ends_v, Exec::Cuda)?;
        }
        _ => W::sort_ends(&mut a.ends_k, &mut a.ends_v, Exec::Cpu)?,
    }
    decide_links(plan, c, a, w)?;
    chain_pieces(plan, c, a, w)
}

/// Every end decided in the bucket, keyed by its canonical (k-1)-mer `c`, into `ends_k` and
/// `ends_v`: oriented k-mer `o` whose last k-1 bases are `c` itself enters `c` (it is in
/// `in(c)`, value `o << 1 | 1`); one whose last k-1 bases are `c`'s reverse complement leaves
/// it reversed (its flip is in `out(c)`, value `o << 1`). Sorted by key, each group is one
/// (k-1)-mer with every k-mer that touches it.
fn end_records<W: Word>(k: usize, a: &mut Arrays<W>) {
    let (keys, vals) = (&mut a.ends_k, &mut a.ends_v);
    keys.clear();
    vals.clear();
    let low = W::mask(k - 1);
    for (i, (&x, &f)) in a.kmers.iter().zip(&a.flags).enumerate() {
        if f & (RIGHT_HERE | LEFT_HERE) == 0 {
            continue;
        }
        for r in 0..2 {
            if f & (1 << r) == 0 {
                continue;
            }
            let s = if r == 0 { x } else { x.reverse_complement(k) };
            let v = s.and(low);
            let c = canonical(v, k - 1);
            keys.push(c);
            vals.push(oriented(i, r == 1) << 1 | (c == v) as u32);
        }
    }
}

/// Decides every (k-1)-mer of the sorted end records: the two k-mers on its sides are linked
/// when each is the other's only neighbour there ([`link_group`], into `link`); otherwise
/// every k-mer into it is followed by every k-mer out of it ([`write_header_links`]).
fn decide_links<W: Word>(
    plan: &Plan,
    bucket: usize,
    a: &mut Arrays<W>,
    w: &mut Writers<'_>,
) -> Result<(), AssemblyError> {
    let Arrays {
        kmers,
        flags,
        ends_k: keys,
        ends_v: vals,
        link,
        ..
    } = a;
    link.clear();
    link.resize(2 * kmers.len(), NONE);
    let mut g = 0;
    while g < keys.len() {
        let c = keys[g];
        let mut h = g + 1;
        while h < keys.len() && keys[h] == c {
            h += 1;
        }
        let group = &vals[g..h];
        let palindrome = c.reverse_complement(plan.k - 1) == c;
        if !link_group(plan, c, group, palindrome, flags, link, w)? {
            write_header_links(bucket, group, palindrome, kmers, w)?;
        }
        g = h;
    }
    Ok(())
}

/// Links the two sides of (k-1)-mer `c` when one k-mer enters it and one leaves it, and they
/// are different k-mers; a link with a foreign k-mer also writes a mark under `c` for the
/// glue. Whether `c` is a link.
fn link_group<W: Word>(
    plan: &Plan,
    c: W,
    group: &[u32],
    palindrome: bool,
    flags: &[u8],
    link: &mut [Oriented],
    w: &mut Writers<'_>,
) -> Result<bool, AssemblyError> {
    // in(c): entries with the bit; out(c): the flips of the others (of all, for a
    // palindrome, whose in and out sets mirror each other)
    let n_in = group.iter().filter(|&&e| e & 1 == 1).count();
    let n_out = if palindrome { n_in } else { group.len() - n_in };
    let first_in = group.iter().find(|&&e| e & 1 == 1).map(|&e| e >> 1);
    let first_out = if palindrome {
        first_in.map(flip)
    } else {
        group.iter().find(|&&e| e & 1 == 0).map(|&e| flip(e >> 1))
    };
    match (n_in, n_out, first_in, first_out) {
        (1, 1, Some(s), Some(t)) if index_of(s) != index_of(t) => {
            link[s as usize] = t;
            link[flip(t) as usize] = flip(s);
            if !(is_local(flags, s) && is_local(flags, t)) {
                // a link with a foreign k-mer: the glue joins the pieces on its two sides
                let key = (c.hash64() % plan.buckets as u64) as usize;
                put_glue(c, MARK, &mut w.rec);
                w.glue.push(key, &w.rec)?;
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Writes the BCALM-style links through a (k-1)-mer that is not a link: every k-mer into it
/// followed by every k-mer out of it.
fn write_header_links<W: Word>(
    bucket: usize,
    group: &[u32],
    palindrome: bool,
    kmers: &[W],
    w: &mut Writers<'_>,
) -> Result<(), AssemblyError> {
    for &e in group {
        let o = e >> 1;
        let into = e & 1 == 1;
        for &f in group {
            let t = if palindrome || (into && f & 1 == 0) {
                // o into c, then out of c: the flip of an entry with its reverse end here
                // (for a palindrome, the flip of any entry)
                flip(f >> 1)
            } else if !into && f & 1 == 1 {
                // o leaves c reversed: followed by the flips of the k-mers into c
                flip(f >> 1)
            } else {
                continue;
            };
            put_header_link(
                kmers[index_of(o)],
                (o & 1) as u8,
                kmers[index_of(t)],
                (t & 1) as u8,
                &mut w.rec,
            );
            w.links.push(bucket, &w.rec)?;
        }
    }
    Ok(())
}

/// Chains the bucket's own k-mers along the links between two of them into pieces, chains
/// read from an end first, then the cycles closed inside the bucket; writes each
/// ([`emit_piece`]). Returns the number of pieces.
fn chain_pieces<W: Word>(
    plan: &Plan,
    c: usize,
    a: &mut Arrays<W>,
    w: &mut Writers<'_>,
) -> Result<u64, AssemblyError> {
    let Arrays {
        kmers,
        counts,
        flags,
        link,
        seen,
        path,
        codes,
        ..
    } = a;
    let n = kmers.len();
    let next = |o: Oriented| -> Oriented {
        let t = link[o as usize];
        if t != NONE && is_local(flags, o) && is_local(flags, t) {
            t
        } else {
            NONE
        }
    };
    seen.clear();
    seen.resize(n, false);
    let bucket = Bucket {
        c,
        kmers,
        counts,
        flags,
        link,
    };
    let mut piece = 0u64;
    for o in 0..2 * n as u32 {
        if !is_local(flags, o) || next(flip(o)) != NONE || seen[index_of(o)] {
            continue;
        }
        path.clear();
        let mut cur = o;
        path.push(cur);
        while next(cur) != NONE {
            cur = next(cur);
            path.push(cur);
        }
        if o > flip(cur) {
            continue; // the same chain, read from its other end
        }
        for &p in path.iter() {
            seen[index_of(p)] = true;
        }
        emit_piece(plan, &bucket, piece, path, false, codes, w)?;
        piece += 1;
    }
    for i in 0..n {
        if flags[i] & LOCAL == 0 || seen[i] {
            continue;
        }
        path.clear();
        let start = oriented(i, false);
        let mut cur = start;
        loop {
            path.push(cur);
            seen[index_of(cur)] = true;
            cur = next(cur);
            if cur == start || cur == NONE {
                break;
            }
        }
        if cur != start {
            return Err(AssemblyError::Internal(format!(
                "bucket {c}: a k-mer without a chain end is not on a cycle"
            )));
        }
        w.circular.push((c as u32, piece as u32));
        emit_piece(plan, &bucket, piece, path, true, codes, w)?;
        piece += 1;
    }
    Ok(piece)
}

/// A bucket's arrays, as `emit_piece` reads them.
struct Bucket<'a, W> {
    c: usize,
    kmers: &'a [W],
    counts: &'a [u32],
    flags: &'a [u8],
    link: &'a [Oriented],
}

/// Writes one piece and the glue records of its open ends.
fn emit_piece<W: Word>(
    plan: &Plan,
    bucket: &Bucket<'_, W>,
    piece: u64,
    path: &[Oriented],
    circular: bool,
    codes: &mut Vec<u8>,
    w: &mut Writers<'_>,
) -> Result<(), AssemblyError> {
    let k = plan.k;
    let Bucket {
        c,
        kmers,
        counts,
        flags,
        link,
    } = *bucket;
    // the bases: the first k-mer, then the last base of each next one
    codes.clear();
    let first = word_of(kmers, path[0], k);
    codes.extend((0..k).map(|i| first.code_at(i, k)));
    let mut total = 0u64;
    for (j, &o) in path.iter().enumerate() {
        total += counts[index_of(o)] as u64;
        if j > 0 {
            codes.push(word_of(kmers, o, k).code_at(k - 1, k));
        }
    }
    w.kmers_done += path.len() as u64;
    let rec = &mut w.rec;
    rec.clear();
    put_piece(path.len() as u32, total, circular, codes, rec);
    w.pieces.push(c, rec)?;
    if circular {
        return Ok(());
    }
    let ends = [flip(path[0]), *path.last().expect("a piece has a k-mer")];
    for (side, e) in ends.into_iter().enumerate() {
        let open = if here(flags, e) {
            // decided here: open only when linked (then to a foreign k-mer)
            link[e as usize] != NONE
        } else {
            true // decided in another bucket
        };
        if open {
            let key = end_key(kmers, e, k);
            let g = (key.hash64() % plan.buckets as u64) as usize;
            put_glue(key, piece_end(c, piece, side as u64), rec);
            w.glue.push(g, rec)?;
        }
    }
    Ok(())
}
