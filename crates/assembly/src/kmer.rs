//! 2-bit packed k-mers: `A = 0, C = 1, G = 2, T = 3`, the first base in the most significant
//! bits, so that numeric order is lexicographic order. Words are `u64` (k up to 31) or `u128`
//! (k up to 63); [`Word`] is what the pipeline needs of either.

use std::fmt::Debug;
use std::hash::Hash;

use crate::AssemblyError;

/// The code of each byte: `0..4` for a base (either case), 4 for anything else (the table
/// behind [`base_code`] for loops over whole sequences).
pub(crate) static BASE_CODES: [u8; 256] = {
    let mut t = [4u8; 256];
    t[b'A' as usize] = 0;
    t[b'a' as usize] = 0;
    t[b'C' as usize] = 1;
    t[b'c' as usize] = 1;
    t[b'G' as usize] = 2;
    t[b'g' as usize] = 2;
    t[b'T' as usize] = 3;
    t[b't' as usize] = 3;
    t
};

/// The code of a base (`A`/`a` 0, `C`/`c` 1, `G`/`g` 2, `T`/`t` 3), `None` for anything else.
///
/// # Examples
/// ```
/// assert_eq!(assembly::base_code(b'g'), Some(2));
/// assert_eq!(assembly::base_code(b'N'), None);
/// ```
#[inline]
pub fn base_code(b: u8) -> Option<u8> {
    let c = BASE_CODES[b as usize];
    (c < 4).then_some(c)
}

/// The letter of a base code (`0..4`).
#[inline]
pub fn base_letter(code: u8) -> u8 {
    b"ACGT"[(code & 3) as usize]
}

/// The reverse complement of bases written as letters (`ACGT`, either case; anything else
/// becomes `N`).
///
/// # Examples
/// ```
/// assert_eq!(assembly::reverse_complement_letters(b"AACGt"), b"ACGTT".to_vec());
/// ```
pub fn reverse_complement_letters(seq: &[u8]) -> Vec<u8> {
    seq.iter()
        .rev()
        .map(|&b| base_code(b).map_or(b'N', |c| base_letter(3 - c)))
        .collect()
}

/// Checks `k`: odd, from 3 to 63.
///
/// # Errors
/// [`AssemblyError::BadK`] otherwise, with the reason (an even k-mer can be its own reverse
/// complement).
///
/// # Examples
/// ```
/// assert!(assembly::check_k(31).is_ok());
/// assert!(assembly::check_k(32).unwrap_err().to_string().contains("reverse complement"));
/// ```
pub fn check_k(k: usize) -> Result<(), AssemblyError> {
    if (3..=63).contains(&k) && k % 2 == 1 {
        Ok(())
    } else {
        Err(AssemblyError::BadK(k))
    }
}

/// An unsigned word holding a 2-bit packed k-mer (`u64` for k <= 31, `u128` for k <= 63).
pub trait Word:
    Copy + Ord + Eq + Hash + Send + Sync + Default + Debug + 'static + private::Sealed
{
    /// The most bases a word holds for the pipeline (31 or 63: one bit pair spare).
    const MAX_K: usize;
    /// The word of a base code.
    fn from_code(code: u8) -> Self;
    /// `2k` low bits set.
    fn mask(k: usize) -> Self;
    /// Appends a base at the right end, dropping the leftmost: `((x << 2) | b) & mask`.
    fn push_right(self, code: u8, mask: Self) -> Self;
    /// Prepends a base at the left end of a k-mer, dropping the rightmost.
    fn push_left(self, code: u8, k: usize) -> Self;
    /// The reverse complement of a k-mer.
    fn reverse_complement(self, k: usize) -> Self;
    /// The base code at position `i` (0 = leftmost) of a k-mer.
    fn code_at(self, i: usize, k: usize) -> u8;
    /// A 64-bit hash of the word (for partitions and tables).
    fn hash64(self) -> u64;
    /// The word as `u128`.
    fn to_u128(self) -> u128;
    /// The words as `u64` when they are `u64` (the GPU paths take 64-bit k-mers only).
    fn as_u64s(words: &[Self]) -> Option<&[u64]>;
    /// `self & mask`.
    fn and(self, mask: Self) -> Self;
    /// The `m` bases (at most 32) that end `shift / 2` bases before the word's last base:
    /// `(self >> shift) & mask(m)`, as a `u64`.
    fn mmer(self, shift: usize, m: usize) -> u64;
    /// Bytes in a word (8 or 16).
    const BYTES: usize;
    /// Appends the word's little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// The word of [`Word::BYTES`] little-endian bytes at the start of `b`.
    fn get(b: &[u8]) -> Self;
}

mod private {
    pub trait Sealed {}
    impl Sealed for u64 {}
    impl Sealed for u128 {}
}

/// A 64-bit mixer (splitmix64's finaliser): a fixed, well-spread hash.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

macro_rules! word {
    ($t:ty, $bits:expr, $m2:expr, $m4:expr, $as64:expr) => {
        impl Word for $t {
            const MAX_K: usize = $bits / 2 - 1;
            #[inline]
            fn from_code(code: u8) -> Self {
                code as $t
            }
            #[inline]
            fn mask(k: usize) -> Self {
                if 2 * k >= $bits {
                    <$t>::MAX
                } else {
                    ((1 as $t) << (2 * k)) - 1
                }
            }
            #[inline]
            fn push_right(self, code: u8, mask: Self) -> Self {
                ((self << 2) | code as $t) & mask
            }
            #[inline]
            fn push_left(self, code: u8, k: usize) -> Self {
                (self >> 2) | ((code as $t) << (2 * (k - 1)))
            }
            #[inline]
            fn reverse_complement(self, k: usize) -> Self {
                let mut x = !self;
                x = ((x >> 2) & $m2) | ((x & $m2) << 2);
                x = ((x >> 4) & $m4) | ((x & $m4) << 4);
                x = x.swap_bytes();
                x >> ($bits - 2 * k)
            }
            #[inline]
            fn code_at(self, i: usize, k: usize) -> u8 {
                ((self >> (2 * (k - 1 - i))) & 3) as u8
            }
            #[inline]
            fn hash64(self) -> u64 {
                let x = self.to_u128();
                mix64((x as u64) ^ mix64((x >> 64) as u64))
            }
            #[inline]
            fn to_u128(self) -> u128 {
                self as u128
            }
            #[inline]
            fn as_u64s(words: &[Self]) -> Option<&[u64]> {
                $as64(words)
            }
            #[inline]
            fn and(self, mask: Self) -> Self {
                self & mask
            }
            #[inline]
            fn mmer(self, shift: usize, m: usize) -> u64 {
                ((self >> shift) as u64) & <u64 as Word>::mask(m)
            }
            const BYTES: usize = $bits / 8;
            #[inline]
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn get(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b[..$bits / 8].try_into().expect("word bytes"))
            }
        }
    };
}

/// No `u64` view of other words.
fn not_u64<T>(_: &[T]) -> Option<&[u64]> {
    None
}

word!(
    u64,
    64,
    0x3333_3333_3333_3333u64,
    0x0F0F_0F0F_0F0F_0F0Fu64,
    Some
);
word!(
    u128,
    128,
    0x3333_3333_3333_3333_3333_3333_3333_3333u128,
    0x0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0Fu128,
    not_u64
);

/// The canonical form of a k-mer: the smaller of it and its reverse complement.
#[inline]
pub fn canonical<W: Word>(x: W, k: usize) -> W {
    let r = x.reverse_complement(k);
    if r < x { r } else { x }
}

/// Packs `seq` (letters `ACGT`, any case; at least `k` of them) into a k-mer word: its first
/// `k` bases. `None` when a letter is not a base or `seq` is shorter than `k`.
///
/// # Examples
/// ```
/// use assembly::{canonical, pack, unpack};
/// let x: u64 = pack(b"GATTACA", 7).unwrap();
/// assert_eq!(unpack(canonical(x, 7), 7), "GATTACA"); // TGTAATC is larger
/// assert_eq!(unpack(canonical(pack::<u64>(b"TTT", 3).unwrap(), 3), 3), "AAA");
/// ```
pub fn pack<W: Word>(seq: &[u8], k: usize) -> Option<W> {
    if seq.len() < k || k > W::MAX_K {
        return None;
    }
    let mask = W::mask(k);
    let mut x = W::default();
    for &b in &seq[..k] {
        x = x.push_right(base_code(b)?, mask);
    }
    Some(x)
}

/// The k-mer word of the first `k` base codes of `codes`.
#[inline]
pub(crate) fn word_of_codes<W: Word>(codes: &[u8], k: usize) -> W {
    let mask = W::mask(k);
    codes[..k]
        .iter()
        .fold(W::default(), |x, &c| x.push_right(c, mask))
}

/// The k-mer word of the first `k` letters of `letters` (a byte that is not a base as `A`:
/// for sequences the pipeline spelled itself, in `ACGT` only).
#[inline]
pub(crate) fn word_of_letters<W: Word>(letters: &[u8], k: usize) -> W {
    let mask = W::mask(k);
    letters[..k].iter().fold(W::default(), |x, &b| {
        x.push_right(BASE_CODES[b as usize] & 3, mask)
    })
}

/// The letters of a k-mer word.
pub fn unpack<W: Word>(x: W, k: usize) -> String {
    (0..k)
        .map(|i| base_letter(x.code_at(i, k)) as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rc_text(s: &str) -> String {
        s.bytes()
            .rev()
            .map(|b| match b {
                b'A' => 'T',
                b'C' => 'G',
                b'G' => 'C',
                _ => 'A',
            })
            .collect()
    }

    #[test]
    fn reverse_complement_matches_text_for_both_words() {
        let s = "ACGTTGCAAGGCTTACGATCGATCGGATCCATGCATGCAAGTCCGTAGCTAGCTAGGACTTGCA";
        for k in (3..=63).step_by(2) {
            let t = &s[..k];
            if k <= 31 {
                let x: u64 = pack(t.as_bytes(), k).unwrap();
                assert_eq!(unpack(x.reverse_complement(k), k), rc_text(t), "k={k}");
                assert_eq!(unpack(x, k), t);
            }
            let y: u128 = pack(t.as_bytes(), k).unwrap();
            assert_eq!(unpack(y.reverse_complement(k), k), rc_text(t), "k={k}");
            assert_eq!(unpack(canonical(y, k), k), t.min(&rc_text(t)).to_string());
        }
    }

    #[test]
    fn k_rules() {
        for k in [0, 1, 2, 4, 32, 64, 65] {
            assert!(check_k(k).is_err(), "{k}");
        }
        for k in [3, 5, 31, 33, 63] {
            assert!(check_k(k).is_ok(), "{k}");
        }
        assert!(pack::<u64>(b"ACGNA", 5).is_none());
        assert!(pack::<u64>(b"ACG", 5).is_none());
        assert!(pack::<u64>(&[b'A'; 33], 33).is_none()); // u64 holds 31
    }
}
