//! Compaction on the GPU: the kernels of `kernels-cuda/assembly.cu` find every oriented k-mer's
//! link (binary search of its four possible successors in the sorted k-mer array, as
//! `unitigs.rs` does on the CPU), rank every chain by pointer jumping (Wyllie) over the
//! predecessor links, cut the cycles before their smallest k-mer and rank them again, and
//! give each k-mer its unitig key, orientation and rank ([`Placement`]). The host reads back
//! one count (the k-mers on cycles, to skip the cycle stage when there are none) and the
//! placement; `unitigs.rs` numbers the unitigs and spells them.
//!
//! A GPU leaf: it imports only the generated launchers and the shared [`Placement`].

use gpu_runtime::{DeviceBuffer, Gpu, GpuError, LaunchConfig};

use crate::kernels::{self, NONE};
use crate::placement::Placement;

/// The launch shape of the element-wise kernels: a grid-stride loop over `n` elements.
fn grid(gpu: &Gpu, n: usize) -> LaunchConfig {
    gpu.grid_stride(n as u64, 256)
}

/// Enough pointer-jumping rounds for lists of up to `n` elements: `2^rounds >= n`.
fn rounds_for(n: usize) -> u32 {
    usize::BITS - n.leading_zeros() + 1
}

fn alloc_u32(gpu: &Gpu, n: usize) -> Result<DeviceBuffer<u32>, GpuError> {
    // SAFETY: every caller writes all elements with a kernel (or a fill) before reading them.
    unsafe { gpu.alloc_uninit::<u32>(n.max(1)) }
}

/// Device bytes asked for per k-mer. The peak is 64: eight `u32` arrays over the `2n`
/// oriented k-mers (the successor and predecessor links, the first ranking's starts and ranks,
/// the double-buffered minimum over cycles); the rest is margin.
pub(crate) const BYTES_PER_KMER: u64 = 80;

/// List ranking over `pred` (`2n` entries): the start of each oriented k-mer's chain
/// (`anc`) and its distance from it (`rank`), after enough rounds for chains of `n2`.
fn rank_chains(
    gpu: &Gpu,
    pred: &DeviceBuffer<u32>,
    n2: usize,
) -> Result<(DeviceBuffer<u32>, DeviceBuffer<u32>), GpuError> {
    let n2_64 = n2 as u64;
    let mut anc = alloc_u32(gpu, n2)?;
    let mut rank = alloc_u32(gpu, n2)?;
    // SAFETY: reads pred[0..n2), writes anc/rank[0..n2); all hold n2 entries.
    unsafe { kernels::assembly_rank_init(gpu, grid(gpu, n2), pred, n2_64, &mut anc, &mut rank)? };
    jump_rounds(gpu, n2, anc, rank, &|anc, rank, anc_b, rank_b| {
        // SAFETY: anc holds oriented k-mers below n2 (pred's targets or the index itself), so
        // every read stays in [0, n2); writes the other buffers' [0, n2).
        unsafe { kernels::assembly_rank_round(gpu, grid(gpu, n2), anc, rank, n2_64, anc_b, rank_b) }
    })
}

/// One pointer-jumping round: reads a pair of arrays, writes the next pair into the other two.
type JumpRound<'a> = dyn Fn(
        &DeviceBuffer<u32>,
        &DeviceBuffer<u32>,
        &mut DeviceBuffer<u32>,
        &mut DeviceBuffer<u32>,
    ) -> Result<(), GpuError>
    + 'a;

/// A pair of `n2`-entry arrays after enough pointer-jumping rounds for lists of `n2`: each
/// `round` reads the pair and writes the next into the other two buffers, which then swap.
fn jump_rounds(
    gpu: &Gpu,
    n2: usize,
    mut a: DeviceBuffer<u32>,
    mut b: DeviceBuffer<u32>,
    round: &JumpRound<'_>,
) -> Result<(DeviceBuffer<u32>, DeviceBuffer<u32>), GpuError> {
    let mut a_next = alloc_u32(gpu, n2)?;
    let mut b_next = alloc_u32(gpu, n2)?;
    for _ in 0..rounds_for(n2) {
        round(&a, &b, &mut a_next, &mut b_next)?;
        std::mem::swap(&mut a, &mut a_next);
        std::mem::swap(&mut b, &mut b_next);
    }
    Ok((a, b))
}

/// The placement of sorted, distinct canonical `kmers` (k <= 31) in their maximal unitigs.
///
/// # Errors
/// [`GpuError::OutOfMemory`] when the arrays (about [`BYTES_PER_KMER`] bytes a k-mer) do not
/// fit on the device; launch and copy failures.
pub(crate) fn place_kmers(gpu: &Gpu, kmers: &[u64], k: usize) -> Result<Placement, GpuError> {
    let n = kmers.len();
    if n == 0 {
        return Ok(Placement::default());
    }
    debug_assert!(k <= 31 && k % 2 == 1);
    debug_assert!(2 * (n as u64) < NONE as u64);
    gpu.ensure_fits(BYTES_PER_KMER * n as u64 + (1 << 20))?;
    let n2 = 2 * n;
    let (n64, n2_64) = (n as u64, n2 as u64);
    let d_kmers = gpu.upload(kmers)?;
    let mut out = alloc_u32(gpu, n2)?;
    // SAFETY: reads kmers[0..n) (binary searches stay in [0, n)), writes out[2i], out[2i+1]
    // for i < n: out holds 2n entries.
    unsafe { kernels::assembly_successors(gpu, grid(gpu, n), &d_kmers, n64, k as u32, &mut out)? };
    drop(d_kmers);
    let mut pred = alloc_u32(gpu, n2)?;
    // SAFETY: reads out[o], out[o ^ 1] and out[t ^ 1] for t an oriented k-mer (< 2n) found
    // by the successor search; writes pred[0..n2).
    unsafe { kernels::assembly_predecessors(gpu, grid(gpu, n2), &out, n2_64, &mut pred)? };
    let (mut anc, mut rank) = rank_chains(gpu, &pred, n2)?;
    let mut count = gpu.alloc_zeros::<u32>(1)?;
    // SAFETY: reads pred[anc[o]] with anc[o] < n2; increments the one counter.
    unsafe {
        kernels::assembly_count_unsettled(gpu, grid(gpu, n2), &pred, &anc, n2_64, &mut count)?
    };
    let on_cycles = gpu.download(&count)?[0];
    let mut lab = alloc_u32(gpu, n2)?;
    if on_cycles == 0 {
        gpu_runtime::fill(gpu, &mut lab, NONE)?;
    } else {
        // the smallest k-mer of each cycle, by pointer jumping of the minimum over pred
        let mut jmp = alloc_u32(gpu, n2)?;
        // SAFETY: writes lab/jmp[0..n2) from pred[0..n2).
        unsafe {
            kernels::assembly_min_init(gpu, grid(gpu, n2), &pred, n2_64, &mut lab, &mut jmp)?
        };
        (lab, _) = jump_rounds(gpu, n2, lab, jmp, &|lab, jmp, lab_b, jmp_b| {
            // SAFETY: jmp holds oriented k-mers below n2; reads and writes [0, n2).
            unsafe {
                kernels::assembly_min_round(gpu, grid(gpu, n2), lab, jmp, n2_64, lab_b, jmp_b)
            }
        })?;
        // cut each cycle before its smallest k-mer (the successor array is reused for the cut
        // links) and rank again: the cycles are now chains from 2m and 2m + 1
        let mut cut = out;
        // SAFETY: reads pred[o], anc[o] (< n2) and pred[anc[o]]; writes lab[o] and cut[o].
        unsafe {
            kernels::assembly_cut_cycles(
                gpu,
                grid(gpu, n2),
                &pred,
                &anc,
                n2_64,
                &mut lab,
                &mut cut,
            )?
        };
        drop((anc, rank));
        (anc, rank) = rank_chains(gpu, &cut, n2)?;
        out = cut;
    }
    drop((out, pred));
    let mut node = alloc_u32(gpu, n)?;
    let mut pos = alloc_u32(gpu, n)?;
    // SAFETY: key is written for every i < n before it is read back.
    let mut key = unsafe { gpu.alloc_uninit::<u64>(n)? };
    // SAFETY: reads anc/rank/lab at 2i and 2i + 1 (< n2) for i < n; writes node/key/pos[i].
    unsafe {
        kernels::assembly_place(
            gpu,
            grid(gpu, n),
            &anc,
            &rank,
            &lab,
            n64,
            &mut node,
            &mut key,
            &mut pos,
        )?
    };
    Ok(Placement {
        node: gpu.download(&node)?,
        key: gpu.download(&key)?,
        rank: gpu.download(&pos)?,
    })
}
