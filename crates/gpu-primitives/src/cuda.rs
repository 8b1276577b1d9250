//! Host side of `kernels-cuda/primitives.cu`: launches on device buffers. Nothing here
//! synchronises with the host except the functions that return a host value or a
//! data-dependent length (they say so).

use gpu_runtime::cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};
use gpu_runtime::{Gpu, GpuError, PtxModule};

use crate::key::{Element, Equality, RadixBits, SortKey, Summable};

pub(crate) static PRIMITIVES: PtxModule = gpu_runtime::ptx_module!("primitives");

/// Threads per block of every kernel (`PRIM_BLOCK`).
const BLOCK: u32 = 256;
/// Scan tile (`SCAN_TILE` = 256 x 8).
const SCAN_TILE: u64 = 2048;
/// Onesweep tiles (`256 x OS_ITEMS_NARROW` and `256 x OS_ITEMS_WIDE`).
const SORT_TILE_NARROW: u64 = 256 * 16;
const SORT_TILE_WIDE: u64 = 256 * 12;
/// `HIST_SHARED_BINS`: no limit on bins, this only picks shared vs global counters.
const MAX_GRID: u64 = i32::MAX as u64;

fn tiles_config(tiles: u64) -> Result<LaunchConfig, GpuError> {
    if tiles > MAX_GRID {
        return Err(GpuError::TooLarge(format!(
            "{tiles} tiles exceed the grid limit of {MAX_GRID} blocks"
        )));
    }
    Ok(LaunchConfig {
        grid_dim: (tiles.max(1) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    })
}

fn block_config(blocks: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A device pointer argument of value 0 (kernels ignore it).
const NULL: u64 = 0;

fn wide<T>() -> bool {
    size_of::<T>() == 8
}

/// Allocates without zeroing.
fn uninit<T: DeviceRepr>(gpu: &Gpu, n: usize) -> Result<CudaSlice<T>, GpuError> {
    if n == 0 {
        return empty(gpu);
    }
    // SAFETY: every caller writes all `n` elements with a kernel before they are read (each call
    // site says which).
    unsafe { gpu.alloc_uninit::<T>(n) }
}

/// A copy of a device buffer (out-of-memory reported with sizes). Does not synchronise.
pub(crate) fn dup<T: DeviceRepr>(gpu: &Gpu, x: &CudaSlice<T>) -> Result<CudaSlice<T>, GpuError> {
    // every element is written by the copy below
    let mut out = uninit::<T>(gpu, x.len())?;
    if !x.is_empty() {
        gpu.stream()
            .memcpy_dtod(x, &mut out)
            .map_err(GpuError::launch)?;
    }
    Ok(out)
}

/// A zero-length buffer (no zero-byte allocation request).
pub(crate) fn empty<T>(gpu: &Gpu) -> Result<CudaSlice<T>, GpuError> {
    gpu.stream().null::<T>().map_err(GpuError::from)
}

/// `(sum, ...)` of `input`, one host read of the result (synchronises).
pub(crate) fn sum<T: Summable>(gpu: &Gpu, input: &CudaSlice<T>) -> Result<T::Sum, GpuError> {
    let n = input.len() as u64;
    if n == 0 {
        return Ok(T::Sum::default());
    }
    let cfg = gpu.grid_stride(n, BLOCK);
    let blocks = cfg.grid_dim.0 as u64;
    let mut partials = gpu.alloc_zeros::<T::Sum>(blocks as usize)?;
    let mut out = gpu.alloc_zeros::<T::Sum>(1)?;
    let f1 = gpu.function(&PRIMITIVES, T::SUM_KERNEL)?;
    let f2 = gpu.function(&PRIMITIVES, T::SUM_FINAL_KERNEL)?;
    // SAFETY: stage 1 (in, n, partials) reads in[0..n) and writes partials[0..grid); stage 2
    // (partials, m, out) reads partials[0..m) and writes out[0]; the accumulator layout (u64 or
    // f64) matches T::Sum by construction of the kernel names.
    unsafe {
        gpu.stream()
            .launch_builder(&f1)
            .arg(input)
            .arg(&n)
            .arg(&mut partials)
            .launch(cfg)
            .map_err(GpuError::launch)?;
        gpu.stream()
            .launch_builder(&f2)
            .arg(&partials)
            .arg(&blocks)
            .arg(&mut out)
            .launch(block_config(1))
            .map_err(GpuError::launch)?;
    }
    Ok(gpu.download(&out)?[0])
}

/// `(min, max)` in the total order; `None` when empty. Synchronises.
pub(crate) fn min_max<K: SortKey>(
    gpu: &Gpu,
    input: &CudaSlice<K>,
) -> Result<Option<(K, K)>, GpuError> {
    let n = input.len() as u64;
    if n == 0 {
        return Ok(None);
    }
    let cfg = gpu.grid_stride(n, BLOCK);
    let blocks = cfg.grid_dim.0 as u64;
    let mut parts = gpu.alloc_zeros::<K::Bits>(2 * blocks as usize)?;
    let mut out = gpu.alloc_zeros::<K::Bits>(2)?;
    let (k1, k2) = if wide::<K>() {
        (
            "primitives_reduce_minmax_w64",
            "primitives_reduce_minmax_final_w64",
        )
    } else {
        (
            "primitives_reduce_minmax_w32",
            "primitives_reduce_minmax_final_w32",
        )
    };
    let f1 = gpu.function(&PRIMITIVES, k1)?;
    let f2 = gpu.function(&PRIMITIVES, k2)?;
    let kind = K::KIND;
    // SAFETY: stage 1 reads in[0..n) (n >= 1) and writes parts[0..2*grid); stage 2 reads
    // parts[0..2*m) and writes out[0..2]; widths match K::Bits.
    unsafe {
        gpu.stream()
            .launch_builder(&f1)
            .arg(input)
            .arg(&n)
            .arg(&kind)
            .arg(&mut parts)
            .launch(cfg)
            .map_err(GpuError::launch)?;
        gpu.stream()
            .launch_builder(&f2)
            .arg(&parts)
            .arg(&blocks)
            .arg(&mut out)
            .launch(block_config(1))
            .map_err(GpuError::launch)?;
    }
    let v = gpu.download(&out)?;
    Ok(Some((K::from_ordered(v[0]), K::from_ordered(v[1]))))
}

/// Decoupled look-back scan of `input` (element type `I`) into a new buffer of `A`.
/// Does not synchronise.
fn scan_raw<I: DeviceRepr, A: DeviceRepr + gpu_runtime::cudarc::driver::ValidAsZeroBits>(
    gpu: &Gpu,
    kernel: &str,
    input: &CudaSlice<I>,
    inclusive: bool,
) -> Result<CudaSlice<A>, GpuError> {
    let n = input.len() as u64;
    let tiles = n.div_ceil(SCAN_TILE);
    let cfg = tiles_config(tiles)?;
    let t = tiles.max(1) as usize;
    gpu.ensure_fits(n * size_of::<A>() as u64 + t as u64 * (4 + 2 * size_of::<A>() as u64) + 8)?;
    // The scan writes out[0..n) (every tile writes its valid range).
    let mut out = uninit::<A>(gpu, n as usize)?;
    if n == 0 {
        return Ok(out);
    }
    let mut flags = gpu.alloc_zeros::<u32>(t)?;
    let mut agg = gpu.alloc_zeros::<A>(t)?;
    let mut incl = gpu.alloc_zeros::<A>(t)?;
    let mut counter = gpu.alloc_zeros::<u64>(1)?;
    let f = gpu.function(&PRIMITIVES, kernel)?;
    let inc = inclusive as u32;
    // SAFETY: scan_*(in, out, n, inclusive, flags, agg, incl, counter): exactly `tiles` blocks,
    // each takes one tile index from the zeroed counter, reads in[tile range], writes
    // out[tile range] and flags/agg/incl[tile]; the status arrays hold `tiles` entries and are
    // zeroed ("not published").
    unsafe {
        gpu.stream()
            .launch_builder(&f)
            .arg(input)
            .arg(&mut out)
            .arg(&n)
            .arg(&inc)
            .arg(&mut flags)
            .arg(&mut agg)
            .arg(&mut incl)
            .arg(&mut counter)
            .launch(cfg)
            .map_err(GpuError::launch)?;
    }
    Ok(out)
}

/// Inclusive or exclusive prefix sums. Does not synchronise.
pub(crate) fn scan<T: Summable>(
    gpu: &Gpu,
    input: &CudaSlice<T>,
    inclusive: bool,
) -> Result<CudaSlice<T::Sum>, GpuError> {
    scan_raw::<T, T::Sum>(gpu, T::SCAN_KERNEL, input, inclusive)
}

/// Exclusive scan of byte flags (non-zero = 1) into u64 positions. Does not synchronise.
fn scan_flags(gpu: &Gpu, flags: &CudaSlice<bool>) -> Result<CudaSlice<u64>, GpuError> {
    scan_raw::<bool, u64>(gpu, "primitives_scan_flags_u8", flags, false)
}

/// Keeps `values[i]` where `flags[i]`; returns the output buffer (capacity n) and the count.
/// Synchronises once to read the count.
pub(crate) fn select<T: Element>(
    gpu: &Gpu,
    values: &CudaSlice<T>,
    flags: &CudaSlice<bool>,
) -> Result<(CudaSlice<T>, usize), GpuError> {
    let n = values.len() as u64;
    if n == 0 {
        return Ok((gpu.alloc_zeros::<T>(1)?, 0));
    }
    let pos = scan_flags(gpu, flags)?;
    let mut out = gpu.alloc_zeros::<T>(n as usize)?;
    let mut count = gpu.alloc_zeros::<u64>(1)?;
    let f = gpu.function(
        &PRIMITIVES,
        if wide::<T>() {
            "primitives_select_w64"
        } else {
            "primitives_select_w32"
        },
    )?;
    // SAFETY: select_*(in, flags, pos, n, out, count): reads in/flags/pos[0..n) (n >= 1),
    // writes out[pos[i]] < n and count[0].
    unsafe {
        gpu.stream()
            .launch_builder(&f)
            .arg(values)
            .arg(flags)
            .arg(&pos)
            .arg(&n)
            .arg(&mut out)
            .arg(&mut count)
            .launch(gpu.grid_stride(n, BLOCK))
            .map_err(GpuError::launch)?;
    }
    let m = gpu.download(&count)?[0] as usize;
    Ok((out, m))
}

/// Stable split by flags (false first); returns the output and the boundary. Synchronises once
/// to read the boundary.
pub(crate) fn split<T: Element>(
    gpu: &Gpu,
    values: &CudaSlice<T>,
    flags: &CudaSlice<bool>,
) -> Result<(CudaSlice<T>, usize), GpuError> {
    let n = values.len() as u64;
    if n == 0 {
        return Ok((gpu.alloc_zeros::<T>(1)?, 0));
    }
    let pos = scan_flags(gpu, flags)?;
    // every slot of out is written: the split is a permutation of [0, n)
    let mut out = uninit::<T>(gpu, n as usize)?;
    let mut boundary = gpu.alloc_zeros::<u64>(1)?;
    let f = gpu.function(
        &PRIMITIVES,
        if wide::<T>() {
            "primitives_split_w64"
        } else {
            "primitives_split_w32"
        },
    )?;
    // SAFETY: split_*(in, flags, pos, n, out, boundary): reads [0..n) (n >= 1); destinations
    // form a permutation of [0, n); writes boundary[0].
    unsafe {
        gpu.stream()
            .launch_builder(&f)
            .arg(values)
            .arg(flags)
            .arg(&pos)
            .arg(&n)
            .arg(&mut out)
            .arg(&mut boundary)
            .launch(gpu.grid_stride(n, BLOCK))
            .map_err(GpuError::launch)?;
    }
    let b = gpu.download(&boundary)?[0] as usize;
    Ok((out, b))
}

/// Flags from bit `bit` of each key's raw bits. Does not synchronise.
pub(crate) fn flags_from_bit<T: Element>(
    gpu: &Gpu,
    keys: &CudaSlice<T>,
    bit: u32,
) -> Result<CudaSlice<bool>, GpuError> {
    let n = keys.len() as u64;
    let mut flags = gpu.alloc_zeros::<bool>(n.max(1) as usize)?;
    if n == 0 {
        return Ok(flags);
    }
    let f = gpu.function(
        &PRIMITIVES,
        if wide::<T>() {
            "primitives_flags_from_bit_w64"
        } else {
            "primitives_flags_from_bit_w32"
        },
    )?;
    // SAFETY: reads keys[0..n), writes flags[0..n) (0 or 1, valid bools).
    unsafe {
        gpu.stream()
            .launch_builder(&f)
            .arg(keys)
            .arg(&n)
            .arg(&bit)
            .arg(&mut flags)
            .launch(gpu.grid_stride(n, BLOCK))
            .map_err(GpuError::launch)?;
    }
    Ok(flags)
}

/// Histogram of keys into `bins` bins; `Err(index)` of the first key >= bins. Synchronises.
pub(crate) fn histogram(
    gpu: &Gpu,
    keys: &CudaSlice<u32>,
    bins: u32,
) -> Result<Result<Vec<u64>, u64>, GpuError> {
    let n = keys.len() as u64;
    if bins == 0 {
        return Ok(if n == 0 { Ok(Vec::new()) } else { Err(0) });
    }
    let mut counts = gpu.alloc_zeros::<u64>(bins as usize)?;
    if n == 0 {
        return Ok(Ok(gpu.download(&counts)?));
    }
    let mut bad = gpu.upload(&[u64::MAX])?;
    let f = gpu.function(&PRIMITIVES, "primitives_histogram_u32")?;
    // SAFETY: reads keys[0..n); increments counts[k] only for k < bins; atomicMin on bad[0].
    unsafe {
        gpu.stream()
            .launch_builder(&f)
            .arg(keys)
            .arg(&n)
            .arg(&mut counts)
            .arg(&bins)
            .arg(&mut bad)
            .launch(gpu.grid_stride(n, BLOCK))
            .map_err(GpuError::launch)?;
    }
    let b = gpu.download(&bad)?[0];
    if b != u64::MAX {
        return Ok(Err(b));
    }
    Ok(Ok(gpu.download(&counts)?))
}

fn key_transform<K: SortKey>(
    gpu: &Gpu,
    keys: &mut CudaSlice<K>,
    desc: bool,
    inverse: bool,
) -> Result<(), GpuError> {
    let n = keys.len() as u64;
    if n == 0 || (K::KIND == 0 && !desc) {
        return Ok(());
    }
    let f = gpu.function(
        &PRIMITIVES,
        if wide::<K>() {
            "primitives_key_transform_w64"
        } else {
            "primitives_key_transform_w32"
        },
    )?;
    let (kind, d, inv) = (K::KIND, desc as u32, inverse as u32);
    // SAFETY: rewrites keys[0..n) in place with a bijection of the same width.
    unsafe {
        gpu.stream()
            .launch_builder(&f)
            .arg(keys)
            .arg(&n)
            .arg(&kind)
            .arg(&d)
            .arg(&inv)
            .launch(gpu.grid_stride(n, BLOCK))
            .map_err(GpuError::launch)?;
    }
    Ok(())
}

/// Float keys replaced in place by their numeric class (`-0.0` by `+0.0`, every NaN by one
/// NaN), so that a stable sort keeps numerically equal keys in index order; a no-op for
/// integers. Does not synchronise.
pub(crate) fn float_classes<K: SortKey>(
    gpu: &Gpu,
    keys: &mut CudaSlice<K>,
) -> Result<(), GpuError> {
    let n = keys.len() as u64;
    if n == 0 || K::KIND != 2 {
        return Ok(());
    }
    let f = gpu.function(
        &PRIMITIVES,
        if wide::<K>() {
            "primitives_float_classes_w64"
        } else {
            "primitives_float_classes_w32"
        },
    )?;
    // SAFETY: rewrites keys[0..n) in place (a copy the caller owns).
    unsafe {
        gpu.stream()
            .launch_builder(&f)
            .arg(keys)
            .arg(&n)
            .launch(gpu.grid_stride(n, BLOCK))
            .map_err(GpuError::launch)?;
    }
    Ok(())
}

/// `0, 1, ..., n-1` as u32 (n <= u32::MAX + 1 checked by callers). Does not synchronise.
pub(crate) fn iota(gpu: &Gpu, n: usize) -> Result<CudaSlice<u32>, GpuError> {
    // every element written by the kernel
    let mut out = uninit::<u32>(gpu, n)?;
    if n == 0 {
        return Ok(out);
    }
    let f = gpu.function(&PRIMITIVES, "primitives_iota_u32")?;
    let n64 = n as u64;
    // SAFETY: writes out[0..n).
    unsafe {
        gpu.stream()
            .launch_builder(&f)
            .arg(&mut out)
            .arg(&n64)
            .launch(gpu.grid_stride(n64, BLOCK))
            .map_err(GpuError::launch)?;
    }
    Ok(out)
}

/// Bytes of device memory a sort of `n` keys of `kb` bytes with `vb`-byte values needs on top
/// of its input.
pub(crate) fn sort_temp_bytes(n: u64, kb: u64, vb: u64) -> u64 {
    let tile = if kb == 4 && vb <= 4 {
        SORT_TILE_NARROW
    } else {
        SORT_TILE_WIDE
    };
    n * (kb + vb) + n.div_ceil(tile) * 256 * 8 + 8 * 256 * 8 + 64
}

/// Onesweep LSD radix sort in place (the returned buffers replace the inputs), stable,
/// ascending or descending in the total order of `K`. `V` values (4 or 8 bytes) move along.
/// Does not synchronise.
pub(crate) fn sort<K: SortKey, V: Element>(
    gpu: &Gpu,
    keys: CudaSlice<K>,
    vals: Option<CudaSlice<V>>,
    desc: bool,
) -> Result<(CudaSlice<K>, Option<CudaSlice<V>>), GpuError> {
    let mut keys = keys;
    let n = keys.len() as u64;
    if let Some(v) = &vals
        && v.len() as u64 != n
    {
        return Err(GpuError::TooLarge(format!(
            "values have {} elements, keys {n}",
            v.len()
        )));
    }
    if n <= 1 {
        return Ok((keys, vals));
    }
    let kb = size_of::<K>() as u64;
    let vb = if vals.is_some() {
        size_of::<V>() as u64
    } else {
        0
    };
    gpu.ensure_fits(sort_temp_bytes(n, kb, vb))?;
    let passes = <K::Bits as RadixBits>::DIGITS as u32;
    let narrow = kb == 4 && vb <= 4;
    let tile = if narrow {
        SORT_TILE_NARROW
    } else {
        SORT_TILE_WIDE
    };
    let tiles = n.div_ceil(tile);
    let cfg = tiles_config(tiles)?;
    if n >= 1 << 58 {
        return Err(GpuError::TooLarge(format!(
            "{n} keys exceed the 58-bit look-back counters"
        )));
    }

    key_transform(gpu, &mut keys, desc, false)?;

    let mut hist = gpu.alloc_zeros::<u64>(passes as usize * 256)?;
    let mut trivial = gpu.alloc_zeros::<u32>(passes as usize)?;
    let fh = gpu.function(
        &PRIMITIVES,
        if wide::<K>() {
            "primitives_radix_histogram_w64"
        } else {
            "primitives_radix_histogram_w32"
        },
    )?;
    let fp = gpu.function(&PRIMITIVES, "primitives_radix_prepare")?;
    // SAFETY: the histogram kernel reads keys[0..n) and adds into hist[0..passes*256);
    // primitives_radix_prepare runs `passes` blocks of 256, block p rewriting hist[p*256..) and trivial[p].
    unsafe {
        gpu.stream()
            .launch_builder(&fh)
            .arg(&keys)
            .arg(&n)
            .arg(&passes)
            .arg(&mut hist)
            .launch(gpu.grid_stride(n, BLOCK))
            .map_err(GpuError::launch)?;
        gpu.stream()
            .launch_builder(&fp)
            .arg(&mut hist)
            .arg(&n)
            .arg(&mut trivial)
            .launch(block_config(passes))
            .map_err(GpuError::launch)?;
    }

    let kernel = match (wide::<K>(), vals.is_some(), wide::<V>()) {
        (false, false, _) => "primitives_onesweep_keys_w32",
        (false, true, false) => "primitives_onesweep_pairs32_w32",
        (false, true, true) => "primitives_onesweep_pairs64_w32",
        (true, false, _) => "primitives_onesweep_keys_w64",
        (true, true, false) => "primitives_onesweep_pairs32_w64",
        (true, true, true) => "primitives_onesweep_pairs64_w64",
    };
    let fo = gpu.function(&PRIMITIVES, kernel)?;
    let mut status = gpu.alloc_zeros::<u64>((tiles * 256) as usize)?;
    let mut counters = gpu.alloc_zeros::<u64>(passes as usize)?;
    // Each pass writes every slot of its destination (scatter is a permutation, or a copy).
    let mut alt_keys = uninit::<K>(gpu, n as usize)?;
    let mut vals = vals;
    let mut alt_vals = match &vals {
        Some(_) => Some(uninit::<V>(gpu, n as usize)?),
        None => None,
    };
    for pass in 0..passes {
        // SAFETY: onesweep_*(keys_in, keys_out, vals_in, vals_out, n, pass, digit_start, trivial,
        // status, counters) with exactly `tiles` blocks: reads keys_in/vals_in[0..n), writes a
        // permutation of [0, n) into keys_out/vals_out (all n elements), uses
        // status[0..tiles*256) (zeroed once; epochs separate passes) and counters[pass]. Value
        // pointers are null (0) only for the keys-only kernels, which never touch them.
        unsafe {
            let stream = gpu.stream();
            let mut b = stream.launch_builder(&fo);
            b.arg(&keys).arg(&mut alt_keys);
            match (&vals, &mut alt_vals) {
                (Some(v), Some(av)) => {
                    b.arg(v).arg(av);
                }
                _ => {
                    b.arg(&NULL).arg(&NULL);
                }
            }
            b.arg(&n)
                .arg(&pass)
                .arg(&hist)
                .arg(&trivial)
                .arg(&mut status)
                .arg(&mut counters)
                .launch(cfg)
                .map_err(GpuError::launch)?;
        }
        std::mem::swap(&mut keys, &mut alt_keys);
        if let (Some(v), Some(av)) = (&mut vals, &mut alt_vals) {
            std::mem::swap(v, av);
        }
    }
    key_transform(gpu, &mut keys, desc, true)?;
    Ok((keys, vals))
}

/// Distinct values of sorted keys (ordered in the total order; groups of keys equal under
/// `equality`, each represented by its first key), with counts and, when `inverse_perm` is
/// given (the argsort that sorted them, or identity when `Some(None)`), the group of every
/// original position. Returns (values, len, counts, inverse). Synchronises to read the number
/// of groups and the "unsorted" flag.
#[allow(clippy::type_complexity)]
pub(crate) fn distinct_sorted<K: SortKey>(
    gpu: &Gpu,
    sorted: &CudaSlice<K>,
    equality: Equality,
    want_counts: bool,
    inverse_perm: Option<Option<&CudaSlice<u32>>>,
) -> Result<
    Option<(
        CudaSlice<K>,
        usize,
        Option<CudaSlice<u64>>,
        Option<CudaSlice<u32>>,
    )>,
    GpuError,
> {
    let n = sorted.len() as u64;
    if n == 0 {
        return Ok(Some((gpu.alloc_zeros::<K>(1)?, 0, None, None)));
    }
    // The kernels compare ordered bits: transform a copy when K is not unsigned.
    let owned;
    let keys: &CudaSlice<K> = if K::KIND == 0 {
        sorted
    } else {
        let mut c = dup(gpu, sorted)?;
        key_transform(gpu, &mut c, false, false)?;
        owned = c;
        &owned
    };
    let mut heads = gpu.alloc_zeros::<bool>(n as usize)?;
    let mut unsorted = gpu.alloc_zeros::<u32>(1)?;
    let fm = gpu.function(
        &PRIMITIVES,
        if wide::<K>() {
            "primitives_mark_heads_w64"
        } else {
            "primitives_mark_heads_w32"
        },
    )?;
    // Floats under numeric equality: -0.0 joins +0.0 and every NaN one group.
    let numeric_float = u32::from(K::KIND == 2 && equality == Equality::Numeric);
    // SAFETY: reads keys[0..n), writes heads[0..n) (0/1) and possibly unsorted[0].
    unsafe {
        gpu.stream()
            .launch_builder(&fm)
            .arg(keys)
            .arg(&n)
            .arg(&numeric_float)
            .arg(&mut heads)
            .arg(&mut unsorted)
            .launch(gpu.grid_stride(n, BLOCK))
            .map_err(GpuError::launch)?;
    }
    let pos = scan_flags(gpu, &heads)?;
    let mut values = gpu.alloc_zeros::<K>(n as usize)?;
    let mut starts = gpu.alloc_zeros::<u64>(n as usize)?;
    let mut counts = gpu.alloc_zeros::<u64>(n as usize)?;
    let mut m = gpu.alloc_zeros::<u64>(1)?;
    let fs = gpu.function(
        &PRIMITIVES,
        if wide::<K>() {
            "primitives_distinct_scatter_w64"
        } else {
            "primitives_distinct_scatter_w32"
        },
    )?;
    // SAFETY: reads keys/heads/pos[0..n); writes values/starts/counts[g] for groups g < n and
    // m[0].
    unsafe {
        gpu.stream()
            .launch_builder(&fs)
            .arg(keys)
            .arg(&heads)
            .arg(&pos)
            .arg(&n)
            .arg(&mut values)
            .arg(&mut starts)
            .arg(&mut counts)
            .arg(&mut m)
            .launch(gpu.grid_stride(n, BLOCK))
            .map_err(GpuError::launch)?;
    }
    if want_counts {
        let fc = gpu.function(&PRIMITIVES, "primitives_distinct_counts")?;
        // SAFETY: for g < m <= n: counts[g] -= starts[g].
        unsafe {
            gpu.stream()
                .launch_builder(&fc)
                .arg(&starts)
                .arg(&mut counts)
                .arg(&m)
                .arg(&n)
                .launch(gpu.grid_stride(n, BLOCK))
                .map_err(GpuError::launch)?;
        }
    }
    let inverse = match inverse_perm {
        None => None,
        Some(perm) => {
            let mut inv = gpu.alloc_zeros::<u32>(n as usize)?;
            let fi = gpu.function(&PRIMITIVES, "primitives_distinct_inverse")?;
            // SAFETY: reads heads/pos[0..n) and perm[0..n) (a permutation of [0, n)) when not
            // null; writes inv[perm[i]] (or inv[i]), all < n.
            unsafe {
                let stream = gpu.stream();
                let mut b = stream.launch_builder(&fi);
                b.arg(&heads).arg(&pos);
                match perm {
                    Some(p) => {
                        b.arg(p);
                    }
                    None => {
                        b.arg(&NULL);
                    }
                }
                b.arg(&n)
                    .arg(&mut inv)
                    .launch(gpu.grid_stride(n, BLOCK))
                    .map_err(GpuError::launch)?;
            }
            Some(inv)
        }
    };
    if K::KIND != 0 {
        key_transform(gpu, &mut values, false, true)?;
    }
    let flags = gpu.download(&unsorted)?;
    if flags[0] != 0 {
        return Ok(None);
    }
    let groups = gpu.download(&m)?[0] as usize;
    Ok(Some((
        values,
        groups,
        if want_counts { Some(counts) } else { None },
        inverse,
    )))
}
