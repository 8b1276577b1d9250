//! The sorts and counts of k-mer words: [`CountWord`], `u64` through gpu-primitives' radix
//! sorts (on the CPU or the GPU), `u128` through the standard library's sorts (CPU only).

use gpu_runtime::Exec;
use rayon::prelude::*;

use crate::AssemblyError;
use crate::kmer::Word;

/// A k-mer word the counter can sort and count: `u64` through gpu-primitives (the radix sort
/// on the CPU; on the GPU sort and run lengths both on the device, only the distinct k-mers
/// and their counts coming back), `u128` through the standard library's sort (CPU only).
pub trait CountWord: Word {
    /// The distinct words of `v` ascending, with how often each occurs; `v` may be reordered.
    ///
    /// # Errors
    /// [`AssemblyError::Primitive`] from the primitives; `Exec::Cuda` for `u128` is
    /// [`AssemblyError::InvalidParameter`].
    fn count_words(v: &mut [Self], exec: Exec) -> Result<(Vec<Self>, Vec<u64>), AssemblyError>;
    /// Sorts words ascending on the CPU (one bucket's k-mers: on the calling thread for the
    /// most part).
    ///
    /// # Errors
    /// [`AssemblyError::Primitive`] from the radix sort.
    fn sort_words(v: &mut [Self]) -> Result<(), AssemblyError>;
    /// Sorts the end records of a bucket by key (their (k-1)-mers), moving the values along:
    /// on the CPU, or with gpu-primitives' device radix sort under `Exec::Cuda`.
    ///
    /// # Errors
    /// [`AssemblyError::Primitive`] from the radix sort (a GPU that is missing or too small);
    /// `Exec::Cuda` for `u128` is [`AssemblyError::InvalidParameter`].
    fn sort_ends(keys: &mut [Self], vals: &mut [u32], exec: Exec) -> Result<(), AssemblyError>;
    /// Sorts k-mers with their counts, ascending by k-mer, on the CPU.
    ///
    /// # Errors
    /// [`AssemblyError::Primitive`] from the radix sort.
    fn sort_pairs(kmers: &mut [Self], counts: &mut [u32]) -> Result<(), AssemblyError>;
}

impl CountWord for u64 {
    fn count_words(v: &mut [u64], exec: Exec) -> Result<(Vec<u64>, Vec<u64>), AssemblyError> {
        if exec == Exec::Cuda {
            let options = gpu_primitives::DistinctOptions {
                counts: true,
                ..Default::default()
            };
            let d = gpu_primitives::distinct_with(v, options, Exec::Cuda)?;
            let counts = d.counts.unwrap_or_default();
            return Ok((d.values, counts));
        }
        gpu_primitives::radix_sort(v, Exec::Cpu)?;
        Ok(run_lengths(v))
    }
    fn sort_words(v: &mut [u64]) -> Result<(), AssemblyError> {
        gpu_primitives::radix_sort(v, Exec::Cpu)?;
        Ok(())
    }
    fn sort_pairs(kmers: &mut [u64], counts: &mut [u32]) -> Result<(), AssemblyError> {
        gpu_primitives::radix_sort_pairs(kmers, counts, Exec::Cpu)?;
        Ok(())
    }
    fn sort_ends(keys: &mut [u64], vals: &mut [u32], exec: Exec) -> Result<(), AssemblyError> {
        gpu_primitives::radix_sort_pairs(keys, vals, exec)?;
        Ok(())
    }
}

impl CountWord for u128 {
    fn count_words(v: &mut [u128], exec: Exec) -> Result<(Vec<u128>, Vec<u64>), AssemblyError> {
        if exec == Exec::Cuda {
            return Err(AssemblyError::InvalidParameter(
                "k above 31 is counted on the CPU only (128-bit k-mers have no GPU sort): use \
                 --backend cpu or auto"
                    .into(),
            ));
        }
        if v.len() >= 1 << 16 {
            v.par_sort_unstable();
        } else {
            v.sort_unstable();
        }
        Ok(run_lengths(v))
    }
    fn sort_words(v: &mut [u128]) -> Result<(), AssemblyError> {
        v.sort_unstable();
        Ok(())
    }
    fn sort_ends(keys: &mut [u128], vals: &mut [u32], exec: Exec) -> Result<(), AssemblyError> {
        if exec == Exec::Cuda {
            return Err(AssemblyError::InvalidParameter(
                "k above 31 is compacted on the CPU only (128-bit k-mers have no GPU sort)".into(),
            ));
        }
        let mut pairs: Vec<(u128, u32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
        pairs.sort_unstable();
        for (i, (x, v)) in pairs.into_iter().enumerate() {
            keys[i] = x;
            vals[i] = v;
        }
        Ok(())
    }
    fn sort_pairs(kmers: &mut [u128], counts: &mut [u32]) -> Result<(), AssemblyError> {
        let mut pairs: Vec<(u128, u32)> =
            kmers.iter().copied().zip(counts.iter().copied()).collect();
        pairs.par_sort_unstable_by_key(|p| p.0);
        for (i, (x, n)) in pairs.into_iter().enumerate() {
            kmers[i] = x;
            counts[i] = n;
        }
        Ok(())
    }
}

/// Counts sorted k-mers into `(kmer, count)` runs.
fn run_lengths<W: Word>(sorted: &[W]) -> (Vec<W>, Vec<u64>) {
    sorted
        .chunk_by(|a, b| a == b)
        .map(|run| (run[0], run.len() as u64))
        .unzip()
}
