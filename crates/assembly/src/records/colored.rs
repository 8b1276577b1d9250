//! Colored super-k-mer records (what colored counting's bucketing writes): a super-k-mer's
//! bases with the colors of all its occurrences, and the grouping of identical super-k-mers
//! that merges them, in a writer's full buffer ([`CombineColored`]) and in a whole bucket
//! (colored counting).

use super::{SUPERKMER_MAX_BYTES, put_superkmer};
use crate::bases::packed_len;
use crate::kmer::mix64;
use crate::set_code::{get_varint, put_varint, varint_into};
use crate::spill::Combine;

/// The most bytes of a colored super-k-mer record of one occurrence
/// ([`put_colored_superkmer`]): the super-k-mer, a count of 1 and a color of up to five bytes.
pub(crate) const COLORED_SUPERKMER_MAX_BYTES: usize = SUPERKMER_MAX_BYTES + 6;

/// Writes a colored super-k-mer record of one occurrence into `rec`: the super-k-mer of base
/// codes `codes` ([`put_superkmer`]) met once, in `color`. Returns the record's bytes.
///
/// A colored record lists every occurrence of its bases: their number, then their colors in
/// ascending order, each as the LEB128 gap from the one before (the first from 0; a color met
/// twice, a gap of 0). [`combine_colored_superkmers`] merges the records of the same bases
/// into one.
#[inline]
pub(crate) fn put_colored_superkmer(
    codes: &[u8],
    color: u32,
    rec: &mut [u8; COLORED_SUPERKMER_MAX_BYTES],
) -> usize {
    let n = put_superkmer(
        codes,
        (&mut rec[..SUPERKMER_MAX_BYTES]).try_into().expect("size"),
    );
    rec[n] = 1;
    n + 1 + varint_into(color, &mut rec[n + 1..])
}

/// Calls `f(packed bases, number of bases, colors)` for each colored super-k-mer record of
/// `chunk` ([`put_colored_superkmer`]), its colors (one per occurrence, ascending) decoded
/// into `colors`.
#[inline]
fn for_each_colored_superkmer(
    chunk: &[u8],
    colors: &mut Vec<u32>,
    mut f: impl FnMut(&[u8], usize, &[u32]),
) {
    let mut rest = chunk;
    while let Some((&len, after)) = rest.split_first() {
        let len = len as usize;
        let (packed, mut after) = after.split_at(packed_len(len));
        let n = get_varint(&mut after);
        colors.clear();
        let mut c = 0u32;
        for _ in 0..n {
            c += get_varint(&mut after);
            colors.push(c);
        }
        rest = after;
        f(packed, len, colors);
    }
}

/// A hash of a super-k-mer's packed bases and number of bases.
#[inline]
fn superkmer_hash(packed: &[u8], len: usize) -> u64 {
    let mut h = mix64(len as u64 ^ 0x9e37_79b9_7f4a_7c15);
    for chunk in packed.chunks(8) {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        h = mix64(h ^ u64::from_le_bytes(b));
    }
    h
}

/// Identical super-k-mers of colored records grouped ([`SuperkmerGroups::group`]): a hash
/// table of the groups' first records, compared base for base, and every occurrence's color
/// listed by group. Its vectors are kept between calls.
#[derive(Default)]
pub(crate) struct SuperkmerGroups {
    /// Per group: where its first record's packed bases start in the bytes grouped, and its
    /// number of bases.
    pub(crate) leaders: Vec<(usize, usize)>,
    /// Per group, where its colors start in [`SuperkmerGroups::colors`] (one entry more than
    /// groups).
    pub(crate) starts: Vec<u32>,
    /// Every occurrence's color, by group (within a group, in the order of the records).
    pub(crate) colors: Vec<u32>,
    hashes: Vec<u64>,
    slots: Vec<u32>,
    members: Vec<(u32, u32)>,
    scratch: Vec<u32>,
}

impl SuperkmerGroups {
    /// Groups the colored super-k-mer records of `bytes` by their bases. The groups are
    /// numbered in the order their first records come.
    pub(crate) fn group(&mut self, bytes: &[u8]) {
        self.leaders.clear();
        self.hashes.clear();
        self.members.clear();
        // sized for a group per 8 bytes at half load (a record of 31-mers takes 11 bytes or
        // more), so that the table seldom grows as it fills
        self.slots.clear();
        self.slots
            .resize((bytes.len() / 4).next_power_of_two().max(1 << 10), u32::MAX);
        let base = bytes.as_ptr() as usize;
        let (leaders, hashes, slots, members) = (
            &mut self.leaders,
            &mut self.hashes,
            &mut self.slots,
            &mut self.members,
        );
        let mut colors = std::mem::take(&mut self.scratch);
        for_each_colored_superkmer(bytes, &mut colors, |packed, len, cs| {
            if 2 * leaders.len() >= slots.len() {
                let size = 2 * slots.len();
                slots.clear();
                slots.resize(size, u32::MAX);
                let mask = size - 1;
                for (i, &h) in hashes.iter().enumerate() {
                    let mut s = h as usize & mask;
                    while slots[s] != u32::MAX {
                        s = (s + 1) & mask;
                    }
                    slots[s] = i as u32;
                }
            }
            let h = superkmer_hash(packed, len);
            let mask = slots.len() - 1;
            let mut s = h as usize & mask;
            let group = loop {
                let i = slots[s];
                if i == u32::MAX {
                    slots[s] = leaders.len() as u32;
                    hashes.push(h);
                    leaders.push((packed.as_ptr() as usize - base, len));
                    break slots[s];
                }
                let (at, l) = leaders[i as usize];
                if hashes[i as usize] == h && l == len && &bytes[at..at + packed.len()] == packed {
                    break i;
                }
                s = (s + 1) & mask;
            };
            members.extend(cs.iter().map(|&c| (group, c)));
        });
        self.scratch = colors;
        // the members' colors by group (a counting sort)
        let groups = self.leaders.len();
        self.starts.clear();
        self.starts.resize(groups + 1, 0);
        for &(group, _) in &self.members {
            self.starts[group as usize + 1] += 1;
        }
        for i in 1..=groups {
            self.starts[i] += self.starts[i - 1];
        }
        self.colors.clear();
        self.colors.resize(self.members.len(), 0);
        let next = &mut self.scratch;
        next.clear();
        next.extend_from_slice(&self.starts[..groups]);
        for &(group, color) in &self.members {
            self.colors[next[group as usize] as usize] = color;
            next[group as usize] += 1;
        }
    }

    /// The number of groups.
    pub(crate) fn len(&self) -> usize {
        self.leaders.len()
    }

    /// The range of group `g`'s colors in [`SuperkmerGroups::colors`].
    pub(crate) fn range(&self, g: usize) -> std::ops::Range<usize> {
        self.starts[g] as usize..self.starts[g + 1] as usize
    }
}

/// Rewrites the colored super-k-mer records of `records` as one record per distinct
/// super-k-mer with all their occurrences ([`put_colored_superkmer`]'s form), in the order
/// of their first records; `groups` and `out` are scratch. The same occurrences in fewer
/// bytes: a pangenome's genomes share most of their super-k-mers.
fn combine_colored_superkmers(
    records: &mut Vec<u8>,
    groups: &mut SuperkmerGroups,
    out: &mut Vec<u8>,
) {
    groups.group(records);
    out.clear();
    for g in 0..groups.len() {
        let (at, len) = groups.leaders[g];
        out.push(len as u8);
        out.extend_from_slice(&records[at..at + packed_len(len)]);
        let r = groups.range(g);
        let colors = &mut groups.colors[r];
        colors.sort_unstable();
        put_varint(colors.len() as u32, out);
        let mut last = 0;
        for &c in colors.iter() {
            put_varint(c - last, out);
            last = c;
        }
    }
    // copied back rather than swapped: the writer's buffer keeps its capacity
    records.clear();
    records.extend_from_slice(out);
}

/// The [`Combine`] of colored super-k-mers: the records of the same bases in a full buffer
/// merged into one ([`combine_colored_superkmers`]).
#[derive(Default)]
pub(crate) struct CombineColored {
    groups: SuperkmerGroups,
    out: Vec<u8>,
}

impl Combine for CombineColored {
    fn combine(&mut self, records: &mut Vec<u8>) {
        combine_colored_superkmers(records, &mut self.groups, &mut self.out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spill::Spill;
    use proptest::prelude::*;

    /// Every occurrence of a chunk of colored records, as (number of bases, packed bases,
    /// color), sorted.
    fn occurrences(chunk: &[u8]) -> Vec<(usize, Vec<u8>, u32)> {
        let mut all = Vec::new();
        let mut colors = Vec::new();
        for_each_colored_superkmer(chunk, &mut colors, |packed, len, cs| {
            assert!(cs.is_sorted(), "colors in ascending order: {cs:?}");
            all.extend(cs.iter().map(|&c| (len, packed.to_vec(), c)));
        });
        all.sort();
        all
    }

    /// Records of one occurrence each: super-k-mers drawn from a small pool (so that many
    /// repeat), with colors up to `max_color`.
    fn singles(draws: &[(usize, u32)], pool: &[Vec<u8>]) -> Vec<u8> {
        let mut chunk = Vec::new();
        let mut rec = [0u8; COLORED_SUPERKMER_MAX_BYTES];
        for &(i, color) in draws {
            let n = put_colored_superkmer(&pool[i % pool.len()], color, &mut rec);
            chunk.extend_from_slice(&rec[..n]);
        }
        chunk
    }

    fn pool() -> Vec<Vec<u8>> {
        (0..12usize)
            .map(|i| {
                (0..31 + 7 * i)
                    .map(|j| ((i * 7 + j * 3 + j / 5) % 4) as u8)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let pool = pool();
        let chunk = singles(&[(0, 0), (3, 127), (5, 128), (11, u32::MAX)], &pool);
        let mut got = Vec::new();
        let mut colors = Vec::new();
        for_each_colored_superkmer(&chunk, &mut colors, |packed, len, cs| {
            got.push((len, packed.to_vec(), cs.to_vec()));
        });
        let want: Vec<(usize, Vec<u8>, Vec<u32>)> = [(0, 0), (3, 127), (5, 128), (11, u32::MAX)]
            .iter()
            .map(|&(i, c)| {
                let mut packed = Vec::new();
                crate::bases::pack_codes(&pool[i], &mut packed);
                (pool[i].len(), packed, vec![c])
            })
            .collect();
        assert_eq!(got, want);
    }

    proptest! {
        /// Combining keeps every occurrence (colors with their multiplicities), leaves one
        /// record per distinct super-k-mer, and combining again (with more records after the
        /// combined ones, as a writer's buffer fills again) changes nothing more.
        #[test]
        fn combining_keeps_every_occurrence(
            draws in proptest::collection::vec((0usize..12, 0u32..300), 0..400),
            more in proptest::collection::vec((0usize..12, 0u32..300), 0..50),
        ) {
            let pool = pool();
            let mut chunk = singles(&draws, &pool);
            let want = occurrences(&chunk);
            let (mut groups, mut out) = (SuperkmerGroups::default(), Vec::new());
            combine_colored_superkmers(&mut chunk, &mut groups, &mut out);
            prop_assert_eq!(occurrences(&chunk), want);
            let mut records = 0;
            for_each_colored_superkmer(&chunk, &mut Vec::new(), |_, _, _| records += 1);
            let distinct: std::collections::HashSet<usize> =
                draws.iter().map(|&(i, _)| i % pool.len()).collect();
            prop_assert_eq!(records, distinct.len());

            chunk.extend_from_slice(&singles(&more, &pool));
            let want = occurrences(&chunk);
            combine_colored_superkmers(&mut chunk, &mut groups, &mut out);
            prop_assert_eq!(occurrences(&chunk), want);
        }
    }

    /// A combining writer with a small buffer: what reads back holds every occurrence pushed,
    /// in fewer bytes than the records pushed.
    #[test]
    fn a_combining_writer_keeps_every_occurrence() {
        let pool = pool();
        let spill = Spill::new(None, "colored", 2);
        let mut w = spill
            .writer(2048)
            .unwrap()
            .combining(Box::new(CombineColored::default()));
        let mut pushed = [Vec::new(), Vec::new()];
        let mut rec = [0u8; COLORED_SUPERKMER_MAX_BYTES];
        for i in 0..3000usize {
            let b = i % 2;
            let n = put_colored_superkmer(&pool[(i * 5) % 12], (i / 40) as u32, &mut rec);
            w.push(b, &rec[..n]).unwrap();
            pushed[b].extend_from_slice(&rec[..n]);
        }
        w.finish().unwrap();
        for (b, raw) in pushed.iter().enumerate() {
            let mut back = Vec::new();
            spill.read(b, &mut back).unwrap();
            assert_eq!(occurrences(&back), occurrences(raw));
            assert!(
                back.len() * 3 < raw.len(),
                "{} of {} bytes",
                back.len(),
                raw.len()
            );
        }
    }
}
