//! The packed form of a color set, shared by counting (which writes each set's definition in
//! it), painting (which keeps the table of sets in it) and queries: an ascending set of color
//! numbers as LEB128 varints, the shorter of its gaps and its intervals of consecutive colors.

/// Appends a LEB128 varint.
fn put_varint(mut v: u32, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a LEB128 varint off the front of `b`.
fn get_varint(b: &mut &[u8]) -> u32 {
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

/// Appends the packed form of an ascending set, the shorter of two, as LEB128 varints: `0`,
/// its length, then the gaps between its colors (scattered colors), or `1`, then per
/// interval of consecutive colors its gap from the last one's end and its length, then
/// `0, 0` (runs of related genomes, which a pangenome's sets mostly are).
pub(crate) fn encode_set(set: &[u32], out: &mut Vec<u8>) {
    let runs = || set.chunk_by(|a, b| a + 1 == *b);
    // sized first, so that the set is written once, in the shorter form
    let (gaps, intervals) = form_lengths(set);
    if intervals < gaps {
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

/// The bytes after the form byte of `set`'s two forms: as gaps, as intervals.
fn form_lengths(set: &[u32]) -> (usize, usize) {
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
    (gaps, intervals)
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
    } else {
        let mut end = 0;
        loop {
            let (gap, len) = (get_varint(&mut b), get_varint(&mut b));
            if len == 0 {
                return;
            }
            out.push((end + gap, len));
            end += gap + len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn packed_sets_decode_to_themselves(
            mut set in proptest::collection::vec(0u32..5000, 0..300),
            run in 0u32..400,
        ) {
            // scattered colors, and a long run of consecutive ones added
            set.extend(1000..1000 + run);
            set.sort_unstable();
            set.dedup();
            let mut packed = Vec::new();
            encode_set(&set, &mut packed);
            let (gaps, intervals) = form_lengths(&set);
            prop_assert_eq!(1 + gaps.min(intervals), packed.len());
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
