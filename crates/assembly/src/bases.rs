//! Base sequences packed 2 bits a base, four bases a byte, the first base in the low bits:
//! the one layout of every packed sequence on disk and in memory (super-k-mers, pieces, the
//! unitigs the eulertigs spell). Codes are `A = 0, C = 1, G = 2, T = 3` as in `kmer.rs`;
//! the padding bits of a last, partial byte are 0.

use crate::kmer::BASE_CODES;

/// Bytes of `n` packed bases.
#[inline]
pub(crate) fn packed_len(n: usize) -> usize {
    n.div_ceil(4)
}

/// Packs `bases` into the first [`packed_len`] bytes of `out`, each base through `code` (the
/// one packing routine: [`pack_codes`] and [`pack_letters`] are it with a code of their own).
#[inline]
pub(crate) fn pack_into(bases: &[u8], code: impl Fn(u8) -> u8, out: &mut [u8]) {
    let (fours, rest) = bases.as_chunks::<4>();
    for (byte, f) in out.iter_mut().zip(fours) {
        *byte = code(f[0]) | code(f[1]) << 2 | code(f[2]) << 4 | code(f[3]) << 6;
    }
    if !rest.is_empty() {
        out[fours.len()] = rest
            .iter()
            .enumerate()
            .fold(0, |byte, (i, &b)| byte | code(b) << (2 * i));
    }
}

/// Appends `bases` packed through `code` to `out`.
#[inline]
fn append_packed(bases: &[u8], code: impl Fn(u8) -> u8, out: &mut Vec<u8>) {
    let at = out.len();
    out.resize(at + packed_len(bases.len()), 0);
    pack_into(bases, code, &mut out[at..]);
}

/// Appends base codes (`0..4`), packed.
pub(crate) fn pack_codes(codes: &[u8], out: &mut Vec<u8>) {
    append_packed(codes, |c| c, out);
}

/// Appends letters, packed; a byte that is not a base packs as `A` (the pipeline spells its
/// unitigs in `ACGT` only).
pub(crate) fn pack_letters(letters: &[u8], out: &mut Vec<u8>) {
    append_packed(letters, |b| BASE_CODES[b as usize] & 3, out);
}

/// The code of base `j` of a packed sequence.
#[inline]
pub(crate) fn code_at(packed: &[u8], j: usize) -> u8 {
    (packed[j / 4] >> (2 * (j % 4))) & 3
}

/// The codes of the first `len` packed bases, appended to `out`.
pub(crate) fn unpack_codes(packed: &[u8], len: usize, out: &mut Vec<u8>) {
    out.extend((0..len).map(|j| code_at(packed, j)));
}

/// Reverse-complements base codes in place.
pub(crate) fn reverse_complement_codes(codes: &mut [u8]) {
    codes.reverse();
    for c in codes.iter_mut() {
        *c = 3 - *c;
    }
}

/// The four letters of each packed byte, forward and as the reverse complement of the four.
const LETTERS_OF: [[u8; 4]; 256] = letters_of(false);
const RC_LETTERS_OF: [[u8; 4]; 256] = letters_of(true);

const fn letters_of(rc: bool) -> [[u8; 4]; 256] {
    let mut t = [[0u8; 4]; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 4 {
            let c = (b >> (2 * i)) & 3;
            if rc {
                t[b][3 - i] = b"ACGT"[3 - c];
            } else {
                t[b][i] = b"ACGT"[c];
            }
            i += 1;
        }
        b += 1;
    }
    t
}

/// Appends the four letters of each of `n` packed bytes through `table`.
#[inline]
fn append_bytes<'a>(
    bytes: impl Iterator<Item = &'a u8>,
    n: usize,
    table: &[[u8; 4]; 256],
    out: &mut Vec<u8>,
) {
    let at = out.len();
    out.resize(at + 4 * n, 0);
    for (dst, &b) in out[at..].as_chunks_mut::<4>().0.iter_mut().zip(bytes) {
        *dst = table[b as usize];
    }
}

/// Appends letters `skip..len` of `len` packed bases, or of their reverse complement, to
/// `out`: a table lookup per four letters.
pub(crate) fn append_letters(packed: &[u8], len: usize, skip: usize, rev: bool, out: &mut Vec<u8>) {
    if skip >= len {
        return;
    }
    let at = out.len();
    if !rev {
        // bytes skip / 4 .. : the first from letter skip % 4, then whole bytes, the end cut
        let b0 = skip / 4;
        let nb = packed_len(len);
        out.extend_from_slice(&LETTERS_OF[packed[b0] as usize][skip % 4..]);
        append_bytes(packed[b0 + 1..nb].iter(), nb - b0 - 1, &LETTERS_OF, out);
    } else {
        // letters skip.. of the reverse complement are the reverse complement of the first
        // len - skip bases: their bytes from the last, whose padding letters come first
        let m = len - skip;
        let nb = packed_len(m);
        let pad = 4 * nb - m;
        out.extend_from_slice(&RC_LETTERS_OF[packed[nb - 1] as usize][pad..]);
        append_bytes(packed[..nb - 1].iter().rev(), nb - 1, &RC_LETTERS_OF, out);
    }
    out.truncate(at + len - skip);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kmer::{base_code, base_letter, mix64};

    /// Letters and codes pack alike, and spelling packed bases (every suffix, both strands)
    /// is unpacking them, for every length mod 4.
    #[test]
    fn letters_pack_and_spell_as_codes() {
        let mut state = 7u64;
        for len in 0..40usize {
            let letters: Vec<u8> = (0..len)
                .map(|_| {
                    state = mix64(state);
                    b"ACGTacgt"[(state % 8) as usize]
                })
                .collect();
            let codes: Vec<u8> = letters.iter().map(|&b| base_code(b).unwrap_or(0)).collect();
            let (mut a, mut b) = (vec![0xAAu8], vec![0xAAu8]);
            pack_letters(&letters, &mut a);
            pack_codes(&codes, &mut b);
            assert_eq!(a, b, "packed, length {len}");
            assert_eq!(a.len(), 1 + packed_len(len));
            let mut one = vec![0u8; packed_len(len)];
            pack_into(&codes, |c| c, &mut one);
            assert_eq!(one, b[1..], "in place, length {len}");
            for rev in [false, true] {
                let mut want = Vec::new();
                unpack_codes(&b[1..], len, &mut want);
                assert_eq!(want.len(), len);
                if rev {
                    reverse_complement_codes(&mut want);
                }
                let want: Vec<u8> = want.iter().map(|&c| base_letter(c)).collect();
                for skip in 0..=len {
                    let mut got = b"xy".to_vec();
                    append_letters(&a[1..], len, skip, rev, &mut got);
                    assert_eq!(&got[..2], b"xy");
                    assert_eq!(
                        got[2..],
                        want[skip..],
                        "length {len}, skip {skip}, reversed {rev}"
                    );
                }
            }
        }
    }
}
