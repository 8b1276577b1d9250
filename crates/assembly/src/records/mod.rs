//! The records the stages write to their temporary files ([`crate::spill::Spill`]) and the
//! next stage reads: each layout written and read here only. Numbers are little-endian, a
//! `word` is a k-mer word's [`Word::BYTES`] bytes, packed bases are `bases.rs`'s layout.
//!
//! | record | layout | written by | read by |
//! |---|---|---|---|
//! | super-k-mer | `[len: u8][len bases packed][tag]` (tag: none; `[unitig: u32][first k-mer: u32]` for coloring) | bucketing, coloring | counting, the check, coloring |
//! | colored super-k-mer | `[len: u8][len bases packed][n: varint][n color gaps: varint]`, the colors of its `n` occurrences ascending, each the gap from the one before (`colored.rs`) | bucketing (merged in its buffers) | counting |
//! | solid run | `[n: u64][n words][n counts: u32][n flags: u8]` | counting | compaction, `KmerBuckets`, the check |
//! | foreign end | `[word][side: u8]` | counting | compaction |
//! | piece | `[n: u32][count sum: u64][circular: u8][n + k - 1 bases packed]` | compaction | glue |
//! | glue record | `[(k-1)-mer word][piece end or MARK: u64]` | compaction | glue |
//! | header link | `[s word][s reversed: u8][t word][t reversed: u8]` | compaction | ordering |
//! | placed piece | `[unitig: u32][place: u32][piece]` | glue | glue |
//! | run unitig | `[key][kmers: u64][count sum: u64][len: u32][len letters]` | glue | ordering |
//! | unitig | `[kmers: u64][count sum: u64][circular: u8][len: u32][len letters]` | ordering | writers, eulertigs, the check |
//! | end | `[canonical end k-mer word][reversed: u8][role: u8][unitig: u32]` | ordering | ordering |
//! | resolved link | `[from: u32][from reversed: u8][next base: u8][to: u32][to reversed: u8]` | ordering | writers |
//! | k-mer colors | `[n: u64][m: u32][width: u8][m distinct set hashes: u128][n numbers of width bytes]`, one per solid run, in the same order | counting | coloring |
//! | color set | `[hash: u128][n: u32][n bytes]`, the set packed as `set_code.rs` writes it | counting | coloring |
//! | hashed color run | `[unitig: u32][first k-mer: u32][k-mers: u32][set hash: u128]` | coloring | coloring |
//! | unitig color runs | `[n: u32][n x (set: u32, k-mers: u32)]`, one per unitig in order | coloring | writers |

use std::marker::PhantomData;

use crate::bases::{pack_codes, pack_into, packed_len};
use crate::kmer::{Word, base_letter, mix64};

mod colored;
pub(crate) use colored::{
    COLORED_SUPERKMER_MAX_BYTES, CombineColored, SuperkmerGroups, put_colored_superkmer,
};

/// Little-endian `u32` at the start of `b`.
#[inline]
fn u32_at(b: &[u8]) -> u32 {
    u32::from_le_bytes(b[..4].try_into().expect("4 bytes"))
}

/// Little-endian `u64` at the start of `b`.
#[inline]
fn u64_at(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

// ---- super-k-mers ----

/// The most bytes of a super-k-mer record: a length byte and up to 128 bases (a super-k-mer
/// holds at most `2k - m <= 125` bases: its minimizer stays in at most `k - m + 1` windows).
pub(crate) const SUPERKMER_MAX_BYTES: usize = 33;

/// Writes the super-k-mer of base codes `codes` into `rec`; returns the record's bytes.
#[inline]
pub(crate) fn put_superkmer(codes: &[u8], rec: &mut [u8; SUPERKMER_MAX_BYTES]) -> usize {
    debug_assert!(codes.len() <= 4 * (SUPERKMER_MAX_BYTES - 1));
    let n = packed_len(codes.len());
    rec[0] = codes.len() as u8;
    pack_into(codes, |c| c, &mut rec[1..1 + n]);
    1 + n
}

/// The most bytes of a super-k-mer's tag.
pub(crate) const SUPERKMER_TAG_MAX: usize = 8;

/// The super-k-mers of a chunk of records whose tags are `tag_len` bytes: each one's packed
/// bases, number of bases and tag.
#[inline]
pub(crate) fn tagged_superkmer_records(
    chunk: &[u8],
    tag_len: usize,
) -> impl Iterator<Item = (&[u8], usize, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= chunk.len() {
            return None;
        }
        let len = chunk[at] as usize;
        let end = at + 1 + packed_len(len);
        let packed = &chunk[at + 1..end];
        let tag = &chunk[end..end + tag_len];
        at = end + tag_len;
        Some((packed, len, tag))
    })
}

// ---- solid runs and foreign ends ----

/// Flag of a solid k-mer in its run: its right end (last k-1 bases) is decided in its own
/// bucket.
pub(crate) const RIGHT_HERE: u8 = 1;
/// Flag of a solid k-mer in its run: its left end (first k-1 bases) is decided in its own
/// bucket.
pub(crate) const LEFT_HERE: u8 = 2;

/// Appends a solid run: sorted k-mers, their counts and flags ([`RIGHT_HERE`], [`LEFT_HERE`]).
pub(crate) fn put_solid_run<W: Word>(kmers: &[W], counts: &[u32], flags: &[u8], out: &mut Vec<u8>) {
    debug_assert!(kmers.len() == counts.len() && kmers.len() == flags.len());
    out.reserve(8 + kmers.len() * (W::BYTES + 5));
    out.extend_from_slice(&(kmers.len() as u64).to_le_bytes());
    for &x in kmers {
        x.put(out);
    }
    for &c in counts {
        out.extend_from_slice(&c.to_le_bytes());
    }
    out.extend_from_slice(flags);
}

/// One solid run, borrowed from a bucket's bytes.
pub(crate) struct SolidRun<'a, W> {
    kmers: &'a [u8],
    counts: &'a [u8],
    /// Each k-mer's flags.
    pub(crate) flags: &'a [u8],
    _word: PhantomData<W>,
}

impl<W: Word> SolidRun<'_, W> {
    /// The run's k-mers, ascending.
    pub(crate) fn kmers(&self) -> impl Iterator<Item = W> + '_ {
        self.kmers.chunks_exact(W::BYTES).map(W::get)
    }

    /// Their counts.
    pub(crate) fn counts(&self) -> impl Iterator<Item = u32> + '_ {
        self.counts.chunks_exact(4).map(u32_at)
    }
}

/// The solid runs of a bucket's bytes, in order.
pub(crate) fn solid_runs<W: Word>(buf: &[u8]) -> impl Iterator<Item = SolidRun<'_, W>> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= buf.len() {
            return None;
        }
        let n = u64_at(&buf[at..]) as usize;
        let l = SolidRunLayout::of::<W>(at as u64, n as u64);
        let (k, c, f) = (l.kmers as usize, l.counts as usize, l.flags as usize);
        at = l.end as usize;
        Some(SolidRun {
            kmers: &buf[k..c],
            counts: &buf[c..f],
            flags: &buf[f..at],
            _word: PhantomData,
        })
    })
}

/// Where the parts of a solid run lie (byte offsets in its bucket), for reading a run a
/// range at a time.
pub(crate) struct SolidRunLayout {
    /// The first k-mer.
    pub(crate) kmers: u64,
    /// The first count.
    pub(crate) counts: u64,
    /// The first flag.
    pub(crate) flags: u64,
    /// The next run.
    pub(crate) end: u64,
}

impl SolidRunLayout {
    /// Bytes of a run's length (`n`), the head of the run.
    pub(crate) const HEAD: usize = 8;

    /// The layout of a run of `n` k-mers that starts at byte `at`.
    pub(crate) fn of<W: Word>(at: u64, n: u64) -> SolidRunLayout {
        let kmers = at + Self::HEAD as u64;
        let counts = kmers + n * W::BYTES as u64;
        let flags = counts + 4 * n;
        SolidRunLayout {
            kmers,
            counts,
            flags,
            end: flags + n,
        }
    }
}

/// Writes a foreign end, a solid k-mer `x` whose end `side` (0: right, 1: left) is decided in
/// another bucket, into `rec`.
#[inline]
pub(crate) fn put_foreign_end<W: Word>(x: W, side: u8, rec: &mut Vec<u8>) {
    rec.clear();
    x.put(rec);
    rec.push(side);
}

/// The foreign ends of a bucket's bytes: `(k-mer, side)`.
pub(crate) fn foreign_ends<W: Word>(buf: &[u8]) -> impl Iterator<Item = (W, u8)> + '_ {
    buf.chunks_exact(W::BYTES + 1)
        .map(|r| (W::get(r), r[W::BYTES]))
}

// ---- pieces and glue records ----

/// Bytes of a piece record before its bases.
const PIECE_HEAD: usize = 13;

/// Appends a piece of `kmers` k-mers whose counts add to `count`, spelled by `codes`
/// (`kmers + k - 1` base codes).
pub(crate) fn put_piece(kmers: u32, count: u64, circular: bool, codes: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&kmers.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.push(circular as u8);
    pack_codes(codes, out);
}

/// Bytes of the piece record at the start of `b`.
#[inline]
pub(crate) fn piece_len(b: &[u8], k: usize) -> usize {
    PIECE_HEAD + packed_len(u32_at(b) as usize + k - 1)
}

/// A piece record, borrowed.
pub(crate) struct Piece<'a> {
    /// Its k-mers.
    pub(crate) kmers: usize,
    /// The sum of their counts.
    pub(crate) count: u64,
    /// Its `kmers + k - 1` bases, packed.
    pub(crate) packed: &'a [u8],
}

/// The piece record at the start of `b`.
#[inline]
pub(crate) fn read_piece(b: &[u8], k: usize) -> Piece<'_> {
    Piece {
        kmers: u32_at(b) as usize,
        count: u64_at(&b[4..]),
        packed: &b[PIECE_HEAD..piece_len(b, k)],
    }
}

/// The piece records of a bucket's bytes, each whole.
pub(crate) fn piece_records(buf: &[u8], k: usize) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    std::iter::from_fn(move || {
        (at < buf.len()).then(|| {
            let len = piece_len(&buf[at..], k);
            at += len;
            &buf[at - len..at]
        })
    })
}

/// The glue record of a key that marks a link between two piece ends (no piece end).
pub(crate) const MARK: u64 = u64::MAX;

/// The number of a piece end: piece `piece` of bucket `bucket`, its start (`side` 0) or its
/// end (1).
#[inline]
pub(crate) fn piece_end(bucket: usize, piece: u64, side: u64) -> u64 {
    ((bucket as u64) << 32 | piece) << 1 | side
}

/// The bucket, piece and side of a piece end.
#[inline]
pub(crate) fn split_piece_end(end: u64) -> (usize, u64, u64) {
    let piece = end >> 1;
    ((piece >> 32) as usize, piece & 0xffff_ffff, end & 1)
}

/// Writes a glue record (`key` a canonical (k-1)-mer, `end` a [`piece_end`] or [`MARK`])
/// into `rec`.
#[inline]
pub(crate) fn put_glue<W: Word>(key: W, end: u64, rec: &mut Vec<u8>) {
    rec.clear();
    key.put(rec);
    rec.extend_from_slice(&end.to_le_bytes());
}

/// The glue records of a bucket's bytes: `(key, piece end or MARK)`.
pub(crate) fn glue_records<W: Word>(buf: &[u8]) -> impl Iterator<Item = (W, u64)> + '_ {
    buf.chunks_exact(W::BYTES + 8)
        .map(|r| (W::get(r), u64_at(&r[W::BYTES..])))
}

/// Bytes of a header link.
pub(crate) fn header_link_len<W: Word>() -> usize {
    2 * W::BYTES + 2
}

/// Writes a header link, oriented k-mer `(s, s_rev)` followed by `(t, t_rev)` (canonical
/// words, reversed or not), into `rec`.
#[inline]
pub(crate) fn put_header_link<W: Word>(s: W, s_rev: u8, t: W, t_rev: u8, rec: &mut Vec<u8>) {
    rec.clear();
    s.put(rec);
    rec.push(s_rev);
    t.put(rec);
    rec.push(t_rev);
}

/// The header links of a bucket's bytes: `(s, s_rev, t, t_rev)`.
pub(crate) fn header_links<W: Word>(buf: &[u8]) -> impl Iterator<Item = (W, u8, W, u8)> + '_ {
    buf.chunks_exact(header_link_len::<W>()).map(|r| {
        (
            W::get(r),
            r[W::BYTES],
            W::get(&r[W::BYTES + 1..]),
            r[2 * W::BYTES + 1],
        )
    })
}

// ---- placed pieces, run unitigs ----

/// Writes a piece record `piece` with its unitig and its place there (`place << 1 |
/// reversed`) into `rec`.
#[inline]
pub(crate) fn put_placed_piece(unitig: u32, place: u32, piece: &[u8], rec: &mut Vec<u8>) {
    rec.clear();
    rec.extend_from_slice(&unitig.to_le_bytes());
    rec.extend_from_slice(&place.to_le_bytes());
    rec.extend_from_slice(piece);
}

/// The placed pieces of a partition's bytes: `(unitig, place, offset of the piece record)`.
pub(crate) fn placed_pieces(buf: &[u8], k: usize) -> impl Iterator<Item = (u32, u32, usize)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        (at < buf.len()).then(|| {
            let r = (u32_at(&buf[at..]), u32_at(&buf[at + 4..]), at + 8);
            at += 8 + piece_len(&buf[at + 8..], k);
            r
        })
    })
}

/// A unitig's sort key: chains first, by their first k-mer (canonical word, then reversed or
/// not), then cycles by their smallest k-mer (the order `unitigs.rs` numbers them in).
pub(crate) type Key<W> = (u8, W, u8);

/// Bytes of a key.
pub(crate) fn key_len<W: Word>() -> usize {
    W::BYTES + 2
}

/// Appends a key.
pub(crate) fn put_key<W: Word>(key: &Key<W>, out: &mut Vec<u8>) {
    out.push(key.0);
    key.1.put(out);
    out.push(key.2);
}

/// The key at the start of `b`.
pub(crate) fn read_key<W: Word>(b: &[u8]) -> Key<W> {
    (b[0], W::get(&b[1..]), b[1 + W::BYTES])
}

/// Appends the body of a run unitig (what follows its key): `kmers` k-mers whose counts add
/// to `count`, spelled by `codes`.
pub(crate) fn put_run_unitig(kmers: u64, count: u64, codes: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&kmers.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&(codes.len() as u32).to_le_bytes());
    out.extend(codes.iter().map(|&c| base_letter(c)));
}

/// A unitig: its letters, k-mers, count sum and whether it is a cycle (a unitig record, or a
/// run unitig with its key's cycle mark).
pub(crate) struct UnitigRecord<'a> {
    /// Its bases (`ACGT`).
    pub(crate) sequence: &'a [u8],
    /// Its k-mers.
    pub(crate) kmers: u64,
    /// The sum of its k-mers' counts.
    pub(crate) count: u64,
    /// Whether it is a cycle.
    pub(crate) circular: bool,
}

/// The run unitig at the start of `b` and its bytes: its key and the unitig.
pub(crate) fn read_run_unitig<W: Word>(b: &[u8]) -> (Key<W>, UnitigRecord<'_>, usize) {
    let key = read_key::<W>(b);
    let body = &b[key_len::<W>()..];
    let len = u32_at(&body[16..]) as usize;
    let u = UnitigRecord {
        sequence: &body[20..20 + len],
        kmers: u64_at(body),
        count: u64_at(&body[8..]),
        circular: key.0 == 1,
    };
    (key, u, key_len::<W>() + 20 + len)
}

// ---- the store: unitigs, ends, resolved links ----

/// Appends a unitig record.
pub(crate) fn put_unitig(u: &UnitigRecord<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(&u.kmers.to_le_bytes());
    out.extend_from_slice(&u.count.to_le_bytes());
    out.push(u.circular as u8);
    out.extend_from_slice(&(u.sequence.len() as u32).to_le_bytes());
    out.extend_from_slice(u.sequence);
}

/// The unitig records of a chunk, in order.
pub(crate) fn unitig_records(buf: &[u8]) -> impl Iterator<Item = UnitigRecord<'_>> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= buf.len() {
            return None;
        }
        let r = &buf[at..];
        let len = u32_at(&r[17..]) as usize;
        at += 21 + len;
        Some(UnitigRecord {
            sequence: &r[21..21 + len],
            kmers: u64_at(r),
            count: u64_at(&r[8..]),
            circular: r[16] == 1,
        })
    })
}

/// The role of an end k-mer in an end record: the unitig's first k-mer.
pub(crate) const FIRST: u8 = 0;
/// The role of an end k-mer in an end record: the unitig's last k-mer.
pub(crate) const LAST: u8 = 1;

/// Appends an end record: `unitig`'s end k-mer of role `role` ([`FIRST`], [`LAST`]) is
/// canonical word `x`, reversed or not.
#[inline]
pub(crate) fn put_end<W: Word>(x: W, rev: u8, role: u8, unitig: u32, out: &mut Vec<u8>) {
    x.put(out);
    out.push(rev);
    out.push(role);
    out.extend_from_slice(&unitig.to_le_bytes());
}

/// The end records of a bucket's bytes: `(k-mer, reversed, role, unitig)`.
pub(crate) fn end_records<W: Word>(buf: &[u8]) -> impl Iterator<Item = (W, u8, u8, u32)> + '_ {
    buf.chunks_exact(W::BYTES + 6).map(|r| {
        (
            W::get(r),
            r[W::BYTES],
            r[W::BYTES + 1],
            u32_at(&r[W::BYTES + 2..]),
        )
    })
}

/// A link between unitig ends as the store keeps it: `(from, from_rev, next base, to,
/// to_rev)`, sorted in this order (a unitig's links out of its `+` end first, each end's in
/// order of the next base).
pub(crate) type ResolvedLink = (u32, u8, u8, u32, u8);

/// Bytes of a resolved link.
const RESOLVED_LINK_BYTES: usize = 11;

/// A resolved link's record.
#[inline]
pub(crate) fn resolved_link(l: ResolvedLink) -> [u8; RESOLVED_LINK_BYTES] {
    let mut rec = [0u8; RESOLVED_LINK_BYTES];
    rec[..4].copy_from_slice(&l.0.to_le_bytes());
    rec[4] = l.1;
    rec[5] = l.2;
    rec[6..10].copy_from_slice(&l.3.to_le_bytes());
    rec[10] = l.4;
    rec
}

// ---- colors ----

/// Slots of [`KmerColorsScratch`]'s cache of recent hashes.
const RECENT_NUMBERS: usize = 1024;

/// Scratch space of [`put_kmer_colors`]: a run's distinct set hashes and their numbers.
#[derive(Default)]
pub(crate) struct KmerColorsScratch {
    numbers: SetHashMap<u32>,
    /// The last hashes numbered, by their low bits (a bucket's k-mers share few sets: most
    /// lookups end here).
    recent: Vec<(u128, u32)>,
    distinct: Vec<u128>,
    ids: Vec<u32>,
}

/// Appends the k-mer colors of a solid run, each k-mer's color set by hash, as a dictionary:
/// the number of k-mers (`u64`), of distinct hashes (`u32`), the width of a number (1, 2 or 4
/// bytes), the distinct hashes in order of first appearance, then each k-mer's number (a
/// bucket's tens of thousands of k-mers share a few thousand sets: about 2 bytes a k-mer,
/// not 16).
pub(crate) fn put_kmer_colors(hashes: &[u128], scratch: &mut KmerColorsScratch, out: &mut Vec<u8>) {
    let KmerColorsScratch {
        numbers,
        recent,
        distinct,
        ids,
    } = scratch;
    numbers.clear();
    distinct.clear();
    ids.clear();
    recent.clear();
    recent.resize(RECENT_NUMBERS, (0, u32::MAX));
    for &h in hashes {
        let slot = &mut recent[h as usize % RECENT_NUMBERS];
        if slot.0 == h && slot.1 != u32::MAX {
            ids.push(slot.1);
            continue;
        }
        let fresh = distinct.len() as u32;
        let id = *numbers.entry(h).or_insert(fresh);
        if id == fresh {
            distinct.push(h);
        }
        *slot = (h, id);
        ids.push(id);
    }
    let width = number_width(distinct.len());
    out.reserve(13 + 16 * distinct.len() + width * ids.len());
    out.extend_from_slice(&(hashes.len() as u64).to_le_bytes());
    out.extend_from_slice(&(distinct.len() as u32).to_le_bytes());
    out.push(width as u8);
    for h in distinct.iter() {
        out.extend_from_slice(&h.to_le_bytes());
    }
    for &id in ids.iter() {
        out.extend_from_slice(&id.to_le_bytes()[..width]);
    }
}

/// Bytes a number takes among `distinct` of them.
fn number_width(distinct: usize) -> usize {
    match distinct {
        0..=256 => 1,
        257..=65_536 => 2,
        _ => 4,
    }
}

/// The k-mer colors of a bucket's bytes, run after run, as one sequence of set hashes.
pub(crate) fn kmer_colors(buf: &[u8]) -> impl Iterator<Item = u128> + '_ {
    let mut at = 0;
    let (mut left, mut dict, mut width) = (0usize, 0usize, 1usize);
    std::iter::from_fn(move || {
        while left == 0 {
            if at >= buf.len() {
                return None;
            }
            left = u64_at(&buf[at..]) as usize;
            let distinct = u32_at(&buf[at + 8..]) as usize;
            width = buf[at + 12] as usize;
            dict = at + 13;
            at = dict + 16 * distinct;
        }
        left -= 1;
        let mut id = [0u8; 4];
        id[..width].copy_from_slice(&buf[at..at + width]);
        at += width;
        Some(u128_at(&buf[dict + 16 * u32::from_le_bytes(id) as usize..]))
    })
}

/// Little-endian `u128` at the start of `b`.
#[inline]
fn u128_at(b: &[u8]) -> u128 {
    u128::from_le_bytes(b[..16].try_into().expect("16 bytes"))
}

/// The hashes that name color sets between the stages: each color has a random 128-bit key
/// and a set's hash is the XOR of its colors' keys (one load and one XOR a color, in any
/// order). Sets with equal hashes are checked to be equal when the set table is built, so a
/// collision is an error, never a wrong color.
pub(crate) struct ColorKeys(Vec<u128>);

impl ColorKeys {
    /// Keys for colors `0..colors`.
    pub(crate) fn new(colors: usize) -> ColorKeys {
        ColorKeys(
            (0..colors as u64)
                .map(|c| {
                    let hi = mix64(c ^ 0x243f_6a88_85a3_08d3);
                    let lo = mix64(c.wrapping_add(0x1319_8a2e_0370_7344).rotate_left(29));
                    ((hi as u128) << 64) | lo as u128
                })
                .collect(),
        )
    }

    /// Color `c`'s key.
    #[inline]
    pub(crate) fn key(&self, c: u32) -> u128 {
        self.0[c as usize]
    }

    /// How many colors have keys.
    pub(crate) fn colors(&self) -> usize {
        self.0.len()
    }
}

/// A hasher for keys that are already color set hashes ([`ColorKeys`]): it keeps their bits.
#[derive(Default, Clone, Copy)]
pub(crate) struct SetHasher(u64);

impl std::hash::Hasher for SetHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64 ^ (v >> 64) as u64;
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Hash maps keyed by color set hashes.
pub(crate) type SetHashMap<V> =
    std::collections::HashMap<u128, V, std::hash::BuildHasherDefault<SetHasher>>;

/// Hash maps keyed by the low 64 bits of color set hashes: half the bytes an entry (16, not
/// 32, with a `u32` value). Two sets that share those bits share a key; whoever uses one
/// must catch that (painting does, where it meets both definitions of one id).
pub(crate) type SetHashMap64<V> =
    std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<SetHasher>>;

/// Appends a color set's definition: its hash and its packed colors (`set_code.rs`).
pub(crate) fn put_color_set(hash: u128, packed: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&hash.to_le_bytes());
    out.extend_from_slice(&(packed.len() as u32).to_le_bytes());
    out.extend_from_slice(packed);
}

/// The color set definitions of a bucket's bytes: `(hash, packed colors)`.
pub(crate) fn color_sets(buf: &[u8]) -> impl Iterator<Item = (u128, &[u8])> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= buf.len() {
            return None;
        }
        let hash = u128_at(&buf[at..]);
        let n = u32_at(&buf[at + 16..]) as usize;
        let packed = &buf[at + 20..at + 20 + n];
        at += 20 + n;
        Some((hash, packed))
    })
}

/// A hashed color run: `(unitig, first k-mer, k-mers, set hash)`.
pub(crate) type HashedRun = (u32, u32, u32, u128);

/// Bytes of a hashed color run.
const HASHED_RUN_BYTES: usize = 28;

/// A hashed color run's record.
pub(crate) fn hashed_run(r: HashedRun) -> [u8; HASHED_RUN_BYTES] {
    let mut rec = [0u8; HASHED_RUN_BYTES];
    rec[..4].copy_from_slice(&r.0.to_le_bytes());
    rec[4..8].copy_from_slice(&r.1.to_le_bytes());
    rec[8..12].copy_from_slice(&r.2.to_le_bytes());
    rec[12..].copy_from_slice(&r.3.to_le_bytes());
    rec
}

/// The hashed color runs of a range's bytes.
pub(crate) fn hashed_runs(buf: &[u8]) -> impl Iterator<Item = HashedRun> + '_ {
    buf.chunks_exact(HASHED_RUN_BYTES).map(|r| {
        (
            u32_at(r),
            u32_at(&r[4..]),
            u32_at(&r[8..]),
            u128_at(&r[12..]),
        )
    })
}

/// Appends a unitig's color runs, `(set, k-mers)` each.
pub(crate) fn put_unitig_colors(runs: &[(u32, u32)], out: &mut Vec<u8>) {
    out.extend_from_slice(&(runs.len() as u32).to_le_bytes());
    for &(set, n) in runs {
        out.extend_from_slice(&set.to_le_bytes());
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// The unitig color runs at the start of `b`: `(set, k-mers)` each, and the record's bytes.
pub(crate) fn read_unitig_colors(b: &[u8]) -> (impl Iterator<Item = (u32, u32)> + '_, usize) {
    let n = u32_at(b) as usize;
    let runs = b[4..4 + 8 * n]
        .chunks_exact(8)
        .map(|r| (u32_at(r), u32_at(&r[4..])));
    (runs, 4 + 8 * n)
}

/// The resolved links of a range's bytes.
pub(crate) fn resolved_links(buf: &[u8]) -> impl Iterator<Item = ResolvedLink> + '_ {
    buf.chunks_exact(RESOLVED_LINK_BYTES)
        .map(|r| (u32_at(r), r[4], r[5], u32_at(&r[6..]), r[10]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_as_written() {
        let codes = [0u8, 1, 2, 3, 3, 2, 1];
        let mut rec = [0u8; SUPERKMER_MAX_BYTES];
        let n = put_superkmer(&codes, &mut rec);
        let mut chunk = rec[..n].to_vec();
        chunk.extend_from_slice(&rec[..n]);
        let got: Vec<(Vec<u8>, usize)> = tagged_superkmer_records(&chunk, 0)
            .map(|(p, l, _)| (p.to_vec(), l))
            .collect();
        assert_eq!(got, vec![(vec![0b1110_0100, 0b0001_1011], 7); 2]);

        let mut runs = Vec::new();
        put_solid_run::<u64>(&[3, 9], &[2, 5], &[RIGHT_HERE, LEFT_HERE], &mut runs);
        put_solid_run::<u64>(&[1], &[7], &[0], &mut runs);
        let r: Vec<(Vec<u64>, Vec<u32>, Vec<u8>)> = solid_runs::<u64>(&runs)
            .map(|r| (r.kmers().collect(), r.counts().collect(), r.flags.to_vec()))
            .collect();
        assert_eq!(
            r,
            [
                (vec![3, 9], vec![2, 5], vec![1, 2]),
                (vec![1], vec![7], vec![0])
            ]
        );
        assert_eq!(SolidRunLayout::of::<u64>(0, 2).end, 8 + 2 * 13);

        let mut pieces = Vec::new();
        put_piece(2, 9, false, &[0, 1, 2, 3, 0, 1], &mut pieces); // k = 5
        put_piece(1, 4, true, &[3, 3, 3, 3, 3], &mut pieces);
        let recs: Vec<&[u8]> = piece_records(&pieces, 5).collect();
        assert_eq!(recs.len(), 2);
        let p = read_piece(recs[1], 5);
        assert_eq!((p.kmers, p.count, p.packed), (1, 4, &[0xff, 0x03][..]));
        assert_eq!(split_piece_end(piece_end(7, 12, 1)), (7, 12, 1));

        let mut placed = Vec::new();
        let mut rec = Vec::new();
        put_placed_piece(4, 3, recs[0], &mut rec);
        placed.extend_from_slice(&rec);
        put_placed_piece(5, 0, recs[1], &mut rec);
        placed.extend_from_slice(&rec);
        let pl: Vec<(u32, u32, usize)> = placed_pieces(&placed, 5).collect();
        assert_eq!(pl, [(4, 3, 8), (5, 0, 8 + recs[0].len() + 8)]);

        let mut run = Vec::new();
        put_key::<u64>(&(1, 77, 0), &mut run);
        put_run_unitig(3, 10, &[0, 1, 2, 3, 0, 1, 2], &mut run);
        let (key, u, len) = read_run_unitig::<u64>(&run);
        assert_eq!(
            (key, u.sequence, u.kmers, u.count, u.circular),
            ((1, 77, 0), &b"ACGTACG"[..], 3, 10, true)
        );
        assert_eq!(len, run.len());
        let mut store = Vec::new();
        put_unitig(&u, &mut store);
        put_unitig(&u, &mut store);
        let back: Vec<UnitigRecord<'_>> = unitig_records(&store).collect();
        assert_eq!(back.len(), 2);
        assert_eq!(
            (
                back[1].sequence,
                back[1].kmers,
                back[1].count,
                back[1].circular
            ),
            (&b"ACGTACG"[..], 3, 10, true)
        );

        let l = (9, 1, 2, 4, 0);
        assert_eq!(resolved_links(&resolved_link(l)).collect::<Vec<_>>(), [l]);
        let mut ends = Vec::new();
        put_end::<u128>(5, 1, LAST, 8, &mut ends);
        assert_eq!(
            end_records::<u128>(&ends).collect::<Vec<_>>(),
            [(5, 1, LAST, 8)]
        );
        put_header_link::<u64>(5, 0, 6, 1, &mut rec);
        assert_eq!(
            header_links::<u64>(&rec).collect::<Vec<_>>(),
            [(5, 0, 6, 1)]
        );
        put_glue::<u64>(5, MARK, &mut rec);
        assert_eq!(glue_records::<u64>(&rec).collect::<Vec<_>>(), [(5, MARK)]);
        put_foreign_end::<u64>(5, 1, &mut rec);
        assert_eq!(foreign_ends::<u64>(&rec).collect::<Vec<_>>(), [(5, 1)]);
    }

    #[test]
    fn color_records_read_back_as_written() {
        let mut chunk = Vec::new();
        let mut rec = [0u8; SUPERKMER_MAX_BYTES];
        for (codes, tag) in [(&[0u8, 1, 2, 3, 3][..], 7u32), (&[2, 2, 1][..], 9)] {
            let n = put_superkmer(codes, &mut rec);
            chunk.extend_from_slice(&rec[..n]);
            chunk.extend_from_slice(&tag.to_le_bytes());
        }
        let got: Vec<(usize, u32)> = tagged_superkmer_records(&chunk, 4)
            .map(|(_, l, t)| (l, u32_at(t)))
            .collect();
        assert_eq!(got, [(5, 7), (3, 9)]);

        let mut buf = Vec::new();
        let mut scratch = KmerColorsScratch::default();
        put_kmer_colors(&[1, u128::MAX, 1], &mut scratch, &mut buf);
        put_kmer_colors(&[], &mut scratch, &mut buf);
        put_kmer_colors(&[3], &mut scratch, &mut buf);
        assert_eq!(kmer_colors(&buf).collect::<Vec<_>>(), [1, u128::MAX, 1, 3]);
        // two and four bytes a number, with colliding cache slots
        for distinct in [300u128, 70_000] {
            let hashes: Vec<u128> = (0..3 * distinct)
                .map(|i| (i % distinct + 1) << 10)
                .collect();
            buf.clear();
            put_kmer_colors(&hashes, &mut scratch, &mut buf);
            assert_eq!(kmer_colors(&buf).collect::<Vec<_>>(), hashes);
        }

        buf.clear();
        put_color_set(5, &[0, 2, 9], &mut buf);
        put_color_set(6, &[], &mut buf);
        put_color_set(7, &[1], &mut buf);
        let sets: Vec<(u128, &[u8])> = color_sets(&buf).collect();
        assert_eq!(sets, [(5, &[0, 2, 9][..]), (6, &[][..]), (7, &[1][..])]);

        let r = (3, 10, 4, 1 << 100);
        assert_eq!(hashed_runs(&hashed_run(r)).collect::<Vec<_>>(), [r]);

        buf.clear();
        put_unitig_colors(&[(0, 4), (2, 1)], &mut buf);
        let (runs, len) = read_unitig_colors(&buf);
        assert_eq!(runs.collect::<Vec<_>>(), [(0, 4), (2, 1)]);
        assert_eq!(len, buf.len());
    }
}
