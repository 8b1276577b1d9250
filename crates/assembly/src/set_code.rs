//! The packed form of a color set, shared by counting (which writes each set's definition in
//! it), painting (which keeps the table of sets in it) and queries: an ascending set of color
//! numbers as LEB128 varints, the shorter of its gaps and its intervals of consecutive colors.

/// Writes a LEB128 varint at the start of `out` (room for five bytes); returns its bytes.
#[inline]
pub(crate) fn varint_into(mut v: u32, out: &mut [u8]) -> usize {
    let mut at = 0;
    while v >= 0x80 {
        out[at] = (v as u8) | 0x80;
        v >>= 7;
        at += 1;
    }
    out[at] = v as u8;
    at + 1
}

/// Appends a LEB128 varint.
#[inline]
pub(crate) fn put_varint(v: u32, out: &mut Vec<u8>) {
    let mut b = [0u8; 5];
    let n = varint_into(v, &mut b);
    out.extend_from_slice(&b[..n]);
}

/// Reads a LEB128 varint off the front of `b`.
pub(crate) fn get_varint(b: &mut &[u8]) -> u32 {
    let (mut v, mut shift) = (0u32, 0);
    while let Some((&byte, rest)) = b.split_first() {
        *b = rest;
        v |= u32::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

/// Appends the packed form of an ascending set, the shortest of three, after a form byte:
/// `0`, its length, then the gaps between its colors as LEB128 varints (scattered colors);
/// `1`, then per interval of consecutive colors its gap from the last one's end and its
/// length, then `0, 0` (long runs of colors); or `2`, a byte count `n`, then `n` bytes with
/// one bit a color from 0 to `8 n - 1`, least significant first (a large share of few
/// colors: a pangenome's sets of tens of its hundred genomes take 15 bytes, not 70).
pub(crate) fn encode_set(set: &[u32], out: &mut Vec<u8>) {
    let runs = || set.chunk_by(|a, b| a + 1 == *b);
    // sized first, so that the set is written once, in the shortest form
    let (gaps, intervals, bitmap) = form_lengths(set);
    if bitmap < gaps.min(intervals) {
        out.push(2);
        let n = bitmap_bytes(set);
        put_varint(n as u32, out);
        let at = out.len();
        out.resize(at + n, 0);
        for &c in set {
            out[at + c as usize / 8] |= 1 << (c % 8);
        }
    } else if intervals < gaps {
        out.push(1);
        let mut end = 0;
        for run in runs() {
            put_varint(run[0] - end, out);
            put_varint(run.len() as u32, out);
            end = run[0] + run.len() as u32;
        }
        put_varint(0, out);
        put_varint(0, out);
    } else {
        out.push(0);
        put_varint(set.len() as u32, out);
        let mut last = 0;
        for &c in set {
            put_varint(c - last, out);
            last = c;
        }
    }
}

/// Bytes of `set`'s bitmap: one bit a color up to its largest.
fn bitmap_bytes(set: &[u32]) -> usize {
    set.last().map_or(0, |&c| c as usize / 8 + 1)
}

/// The bytes after the form byte of `set`'s three forms: as gaps, as intervals, as a bitmap.
fn form_lengths(set: &[u32]) -> (usize, usize, usize) {
    // one pass: each color's gap, and each interval's gap and length as it closes
    let (mut gaps, mut intervals) = (varint_len(set.len() as u32), 2);
    let (mut last, mut start, mut end) = (0u32, 0u32, 0u32);
    for (i, &c) in set.iter().enumerate() {
        gaps += varint_len(c - last);
        if i == 0 || c != last + 1 {
            if i > 0 {
                intervals += varint_len(last + 1 - start);
                end = last + 1;
            }
            intervals += varint_len(c - end);
            start = c;
        }
        last = c;
    }
    if !set.is_empty() {
        intervals += varint_len(last + 1 - start);
    }
    let bitmap = bitmap_bytes(set);
    (gaps, intervals, varint_len(bitmap as u32) + bitmap)
}

/// The bytes of a LEB128 varint.
fn varint_len(v: u32) -> usize {
    (32 - v.leading_zeros() as usize).max(1).div_ceil(7)
}

/// The colors of a packed set, into `out`.
pub(crate) fn decode_set(b: &[u8], out: &mut Vec<u32>) {
    let mut runs = Vec::new();
    decode_intervals(b, &mut runs);
    out.extend(runs.iter().flat_map(|&(a, len)| a..a + len));
}

/// The intervals `(first color, length)` of consecutive colors of a packed set, into `out`
/// (cleared first): what adds a count to every color of the set fastest.
pub(crate) fn decode_intervals(mut b: &[u8], out: &mut Vec<(u32, u32)>) {
    out.clear();
    let Some((&form, rest)) = b.split_first() else {
        return;
    };
    b = rest;
    if form == 0 {
        let n = get_varint(&mut b);
        let mut c = 0;
        for i in 0..n {
            c = if i == 0 {
                get_varint(&mut b)
            } else {
                c + get_varint(&mut b)
            };
            match out.last_mut() {
                Some((a, len)) if *a + *len == c => *len += 1,
                _ => out.push((c, 1)),
            }
        }
    } else if form == 1 {
        let mut end = 0;
        loop {
            let (gap, len) = (get_varint(&mut b), get_varint(&mut b));
            if len == 0 {
                return;
            }
            out.push((end + gap, len));
            end += gap + len;
        }
    } else {
        let n = get_varint(&mut b) as usize;
        for (i, &byte) in b[..n].iter().enumerate() {
            let mut x = byte;
            while x != 0 {
                let c = 8 * i as u32 + x.trailing_zeros();
                match out.last_mut() {
                    Some((a, len)) if *a + *len == c => *len += 1,
                    _ => out.push((c, 1)),
                }
                x &= x - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn each_form_is_chosen_where_shortest() {
        let form = |set: &[u32]| {
            let mut packed = Vec::new();
            encode_set(set, &mut packed);
            let mut back = Vec::new();
            decode_set(&packed, &mut back);
            assert_eq!(back, set);
            (packed[0], packed.len())
        };
        assert_eq!(form(&[3, 900, 70_000]), (0, 8));
        assert_eq!(form(&(500..1500).collect::<Vec<_>>()), (1, 7));
        let half: Vec<u32> = (0..100).filter(|c| c % 3 != 1).collect();
        assert_eq!(form(&half), (2, 15));
        assert_eq!(form(&[]), (0, 2));
    }

    proptest! {
        #[test]
        fn packed_sets_decode_to_themselves(
            mut set in proptest::collection::vec(0u32..5000, 0..300),
            run in 0u32..400,
            colors in prop_oneof![Just(5000u32), 1u32..200],
        ) {
            // scattered colors (or a dense share of a few), and a long run of consecutive
            // ones added
            for c in &mut set {
                *c %= colors;
            }
            set.extend(1000..1000 + run);
            set.sort_unstable();
            set.dedup();
            let mut packed = Vec::new();
            encode_set(&set, &mut packed);
            let (gaps, intervals, bitmap) = form_lengths(&set);
            prop_assert_eq!(1 + gaps.min(intervals).min(bitmap), packed.len());
            let mut gaps_only = 2 + 5 * set.len();
            if set.is_empty() {
                gaps_only = 2;
            }
            prop_assert!(packed.len() <= gaps_only);
            let mut back = Vec::new();
            decode_set(&packed, &mut back);
            prop_assert_eq!(&back, &set);
            // either form decodes to the maximal intervals of consecutive colors
            let mut runs = Vec::new();
            decode_intervals(&packed, &mut runs);
            let want: Vec<(u32, u32)> =
                set.chunk_by(|a, b| a + 1 == *b).map(|r| (r[0], r.len() as u32)).collect();
            prop_assert_eq!(runs, want);
        }
    }
}
