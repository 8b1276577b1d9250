//! The parallel Euler circuit algorithm on the GPU: every stage of `parallel.rs` as kernels
//! of `kernels-cuda/graph.cu`. The pipeline reads back a handful of scalars (the splitter count,
//! the "unsettled" flag of each residual pointer-jumping round, the cycle and link counts) to
//! size buffers and stop early; all per-edge work stays on the device.
//!
//! A GPU leaf: it imports only the generated launchers and the error type, and takes the graph
//! as plain CSR slices (`mod.rs` builds the error for an unbalanced vertex).

use gpu_runtime::{DeviceBuffer, DeviceScalar, Gpu, GpuError, LaunchConfig};

use crate::EulerError;
use crate::kernels::{self, NONE, SCAN_THREADS, SCAN_TILE};

/// Splitter spacing on the GPU is 32 (mask 31): walks of ~32 steps per thread.
const GPU_SPLITTER_MASK: u32 = 31;

/// The launch shape of the element-wise kernels: a grid-stride loop over `n` elements.
pub(crate) fn grid(gpu: &Gpu, n: usize) -> LaunchConfig {
    gpu.grid_stride(n as u64, 256)
}

fn scalar<T: DeviceScalar + Default>(gpu: &Gpu, s: &DeviceBuffer<T>) -> Result<T, GpuError> {
    Ok(gpu.download(s)?.first().copied().unwrap_or_default())
}

/// Enough pointer-jumping rounds for lists of up to `k` elements: `2^rounds >= k`.
fn rounds_for(k: usize) -> u32 {
    usize::BITS - k.leading_zeros() + 1
}

pub(crate) fn alloc_u32(gpu: &Gpu, n: usize) -> Result<DeviceBuffer<u32>, GpuError> {
    // SAFETY: every caller writes all elements with a kernel (or a fill) before reading them.
    unsafe { gpu.alloc_uninit::<u32>(n.max(1)) }
}

/// Two new buffers of `n` entries, written by `write` (one kernel that writes every entry of
/// both).
pub(crate) fn written_pair(
    gpu: &Gpu,
    n: usize,
    write: impl FnOnce(&mut DeviceBuffer<u32>, &mut DeviceBuffer<u32>) -> Result<(), GpuError>,
) -> Result<(DeviceBuffer<u32>, DeviceBuffer<u32>), GpuError> {
    let mut a = alloc_u32(gpu, n)?;
    let mut b = alloc_u32(gpu, n)?;
    write(&mut a, &mut b)?;
    Ok((a, b))
}

/// Pointer jumping over a pair of `n`-entry buffers: `init` writes the first pair, then each
/// of at most `rounds` rounds reads the pair and writes the other one (ping-pong), until
/// `round` returns false (the pair it wrote is settled); returns the last pair written.
fn jump_rounds(
    gpu: &Gpu,
    n: usize,
    rounds: u32,
    init: impl FnOnce(&mut DeviceBuffer<u32>, &mut DeviceBuffer<u32>) -> Result<(), GpuError>,
    mut round: impl FnMut(
        [&DeviceBuffer<u32>; 2],
        [&mut DeviceBuffer<u32>; 2],
    ) -> Result<bool, GpuError>,
) -> Result<(DeviceBuffer<u32>, DeviceBuffer<u32>), GpuError> {
    let (mut x_a, mut y_a) = written_pair(gpu, n, init)?;
    let mut x_b = alloc_u32(gpu, n)?;
    let mut y_b = alloc_u32(gpu, n)?;
    for _ in 0..rounds {
        let unsettled = round([&x_a, &y_a], [&mut x_b, &mut y_b])?;
        std::mem::swap(&mut x_a, &mut x_b);
        std::mem::swap(&mut y_a, &mut y_b);
        if !unsettled {
            break;
        }
    }
    Ok((x_a, y_a))
}

/// Inclusive max-scan of `input[0..n)` into `out` (a private, simple reduce-then-scan; see
/// graph.cu).
fn scan_max(
    gpu: &Gpu,
    input: &DeviceBuffer<u32>,
    out: &mut DeviceBuffer<u32>,
    n: usize,
) -> Result<(), GpuError> {
    let tiles = n.div_ceil(SCAN_TILE as usize).max(1);
    let mut tile_max = alloc_u32(gpu, tiles)?;
    let n64 = n as u64;
    let cfg = LaunchConfig::blocks(tiles as u32, SCAN_THREADS);
    // SAFETY: one block per tile of SCAN_TILE elements reads input[0..n), writes out[0..n) and
    // tile_max[0..tiles); all buffers are that large.
    unsafe { kernels::graph_scan_max_tiles(gpu, cfg, input, &mut *out, n64, &mut tile_max)? };
    if tiles > 1 {
        let mut scanned = alloc_u32(gpu, tiles)?;
        scan_max(gpu, &tile_max, &mut scanned, tiles)?;
        // SAFETY: reads scanned[0..tiles) and updates out[0..n).
        unsafe { kernels::graph_scan_max_carry(gpu, grid(gpu, n), &mut *out, n64, &scanned)? };
    }
    Ok(())
}

/// Device times of one GPU Euler circuit, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GpuEulerTimes {
    /// Host-to-device copy of the CSR arrays.
    pub upload: f64,
    /// The algorithm itself, from the uploaded CSR to the edge order on the device.
    pub compute: f64,
    /// Device-to-host copy of the edge order.
    pub download: f64,
}

/// Runs the GPU pipeline and returns the edge order (starting with edge 0) and the times.
pub(crate) fn circuit_order_timed(
    gpu: &Gpu,
    (offsets, targets): (&[u64], &[u32]),
    unbalanced: &dyn Fn(u32) -> EulerError,
) -> Result<(Vec<u32>, GpuEulerTimes), EulerError> {
    let m = targets.len();
    let n = offsets.len() - 1;
    // The largest simultaneous footprint is about 12 u32 arrays and 2 byte arrays per edge.
    gpu.ensure_fits(50 * m as u64 + 16 * n as u64 + (1 << 20))?;
    let t = gpu.timer()?;
    let d_off = gpu.upload(offsets)?;
    let d_tgt = gpu.upload(targets)?;
    let upload = t.stop()?;
    let t = gpu.timer()?;
    let d_order = device_circuit(gpu, (m, n), &d_off, &d_tgt, unbalanced)?;
    let compute = t.stop()?;
    let t = gpu.timer()?;
    let order = gpu.download(&d_order)?;
    let download = t.stop()?;
    Ok((
        order[..m].to_vec(),
        GpuEulerTimes {
            upload,
            compute,
            download,
        },
    ))
}

/// Runs the GPU pipeline and returns the edge order (starting with edge 0).
pub(crate) fn circuit_order(
    gpu: &Gpu,
    csr: (&[u64], &[u32]),
    unbalanced: &dyn Fn(u32) -> EulerError,
) -> Result<Vec<u32>, EulerError> {
    circuit_order_timed(gpu, csr, unbalanced).map(|(o, _)| o)
}

/// The sampled splitters of a permutation `succ` of `0..m` (edge `e` is one when
/// `is_splitter(e, GPU_SPLITTER_MASK)`), and what the walks from them find: each element's
/// sublist `seg` (NONE on splitter-free cycles) and offset in it, each sublist's next splitter
/// and length.
pub(crate) struct Sublists {
    k: usize,
    split_of: DeviceBuffer<u32>,
    split_edge: DeviceBuffer<u32>,
    seg: DeviceBuffer<u32>,
    offs: DeviceBuffer<u32>,
    next: DeviceBuffer<u32>,
    len: DeviceBuffer<u32>,
}

impl Sublists {
    /// Numbers the splitters of `0..m` (in any order) and allocates the walks' outputs.
    pub(crate) fn new(gpu: &Gpu, m: usize) -> Result<Self, GpuError> {
        let m64 = m as u64;
        let mask = GPU_SPLITTER_MASK;
        let mut count = gpu.alloc_zeros::<u32>(1)?;
        // SAFETY: only increments the single counter.
        unsafe { kernels::graph_euler_count_splitters(gpu, grid(gpu, m), m64, mask, &mut count)? };
        let k = scalar(gpu, &count)? as usize;
        let mut split_of = alloc_u32(gpu, m)?;
        gpu_runtime::fill(gpu, &mut split_of.slice_mut(..m), NONE)?;
        let mut split_edge = alloc_u32(gpu, k)?;
        gpu.zero(&mut count)?;
        let cap = k as u32;
        // SAFETY: writes split_of[e] for e < m and split_edge[j] for j < cap = k.
        unsafe {
            kernels::graph_euler_number_splitters(
                gpu,
                grid(gpu, m),
                m64,
                mask,
                &mut split_of,
                &mut split_edge,
                &mut count,
                cap,
            )?
        };
        let mut seg = alloc_u32(gpu, m)?;
        gpu_runtime::fill(gpu, &mut seg.slice_mut(..m), NONE)?;
        Ok(Sublists {
            k,
            split_of,
            split_edge,
            seg,
            offs: alloc_u32(gpu, m)?,
            next: alloc_u32(gpu, k)?,
            len: alloc_u32(gpu, k)?,
        })
    }

    /// Walks every sublist of `succ` from its splitter to the next one.
    fn walk(&mut self, gpu: &Gpu, succ: &DeviceBuffer<u32>) -> Result<(), GpuError> {
        let k64 = self.k as u64;
        let mask = GPU_SPLITTER_MASK;
        // SAFETY: each element lies on at most one sublist, so seg/offs writes are disjoint;
        // next/len have k entries, one per thread index j < k; `mask` is the one the
        // splitters were numbered with, so every walk stops at a numbered splitter.
        unsafe {
            kernels::graph_euler_walk_sublists(
                gpu,
                gpu.grid_stride(k64, 128),
                succ,
                &self.split_of,
                &self.split_edge,
                k64,
                mask,
                &mut self.seg,
                &mut self.offs,
                &mut self.next,
                &mut self.len,
            )?
        };
        Ok(())
    }
}

/// Stage 2 on a permutation `succ` of `0..m`: walks the sublists of `subs` (fresh from
/// [`Sublists::new`]) and returns each element's label, the smallest element of its cycle
/// (splitter-level pointer jumping for fixed rounds, then pointer jumping on the residual
/// splitter-free cycles until settled).
pub(crate) fn cycle_labels(
    gpu: &Gpu,
    succ: &DeviceBuffer<u32>,
    m: usize,
    subs: &mut Sublists,
) -> Result<DeviceBuffer<u32>, GpuError> {
    let (m64, k) = (m as u64, subs.k);
    let k64 = k as u64;
    subs.walk(gpu, succ)?;
    let copies = |sl: &mut DeviceBuffer<u32>, sj: &mut DeviceBuffer<u32>| {
        gpu.copy(&subs.split_edge, sl)?;
        gpu.copy(&subs.next, sj)
    };
    let (sl, sj) = jump_rounds(gpu, k, rounds_for(k), copies, |[sl, sj], [sl_b, sj_b]| {
        // SAFETY: reads sl/sj, writes sl_b/sj_b, all of k entries; jmp values are splitter
        // indices < k.
        unsafe { kernels::graph_euler_jump_min(gpu, grid(gpu, k), sl, sj, sl_b, sj_b, k64)? };
        Ok(true)
    })?;
    drop(sj);
    let init = |lab: &mut DeviceBuffer<u32>, jmp: &mut DeviceBuffer<u32>| {
        // SAFETY: reads seg/succ (m entries) and sl[seg[e]] (seg < k); writes lab/jmp[e].
        unsafe {
            kernels::graph_euler_label_init(gpu, grid(gpu, m), &subs.seg, succ, &sl, m64, lab, jmp)
        }
    };
    let mut flag = gpu.alloc_zeros::<u32>(1)?;
    let (lab, _) = jump_rounds(gpu, m, 40, init, |[lab, jmp], [lab_b, jmp_b]| {
        gpu.zero(&mut flag)?;
        // SAFETY: reads lab/jmp at e and at jmp/succ targets (elements < m), writes
        // lab_b/jmp_b at e, sets the flag.
        unsafe {
            kernels::graph_euler_jump_residual(
                gpu,
                grid(gpu, m),
                &subs.seg,
                succ,
                lab,
                jmp,
                lab_b,
                jmp_b,
                m64,
                &mut flag,
            )?
        };
        Ok(scalar(gpu, &flag)? != 0)
    })?;
    Ok(lab)
}

/// The directed pipeline on a device CSR of `(m, n)` edges and vertices (`0 < m`): the edge
/// order of an Euler circuit starting with edge 0. `unbalanced(v)` makes the error for the
/// first vertex whose in-degree differs from its out-degree.
pub(crate) fn device_circuit(
    gpu: &Gpu,
    (m, n): (usize, usize),
    d_off: &DeviceBuffer<u64>,
    d_tgt: &DeviceBuffer<u32>,
    unbalanced: &dyn Fn(u32) -> EulerError,
) -> Result<DeviceBuffer<u32>, EulerError> {
    // Degrees, and 1. Pairing.
    let (mut succ, pred) = device_pairing(gpu, (m, n), d_off, d_tgt, unbalanced)?;

    // 2. Splitters and cycle labels.
    let mut subs = Sublists::new(gpu, m)?;
    let lab = cycle_labels(gpu, &succ, m, &mut subs)?;

    // 3. Spanning forest of the cycle graph.
    let (cycles, tree, links_n) = spanning_forest(gpu, (m, n), d_off, &lab)?;
    drop(lab);
    let components = cycles.saturating_sub(links_n);
    if components > 1 {
        return Err(EulerError::Disconnected {
            kind: "circuit",
            components,
        });
    }

    // 4. Splice.
    if links_n > 0 {
        splice_forest(gpu, m, &pred, &tree, &mut succ)?;
    }
    drop((pred, tree));

    // 5. Ranking.
    Ok(rank_circuit(gpu, m, &succ, subs)?)
}

/// The degree check and stage 1 of [`device_circuit`]: fails with `unbalanced(v)` for the
/// first vertex whose in-degree differs from its out-degree; else pairs each vertex's in-edges
/// with its out-edges and returns the successor and predecessor permutations of the edges.
fn device_pairing(
    gpu: &Gpu,
    (m, n): (usize, usize),
    d_off: &DeviceBuffer<u64>,
    d_tgt: &DeviceBuffer<u32>,
    unbalanced: &dyn Fn(u32) -> EulerError,
) -> Result<(DeviceBuffer<u32>, DeviceBuffer<u32>), EulerError> {
    let (m64, n64) = (m as u64, n as u64);
    let mut cnt = gpu.alloc_zeros::<u32>(n.max(1))?;
    // SAFETY: reads targets[0..m) (< n) and increments cnt[0..n).
    unsafe { kernels::graph_euler_in_degree(gpu, grid(gpu, m), d_tgt, m64, &mut cnt)? };
    let mut bad = gpu.upload(&[NONE])?;
    // SAFETY: reads offsets[0..=n) and cnt[0..n); writes the single element of `bad`.
    unsafe { kernels::graph_euler_check_balanced(gpu, grid(gpu, n), d_off, &cnt, n64, &mut bad)? };
    let bad = scalar(gpu, &bad)?;
    if bad != NONE {
        return Err(unbalanced(bad));
    }

    gpu.zero(&mut cnt)?;
    let (succ, pred) = written_pair(gpu, m, |succ, pred| {
        // SAFETY: in-degrees equal out-degrees, so offsets[t] + cursor[t] stays inside t's
        // slots: every pos in 0..m is written once to pred, every e in 0..m once to succ.
        unsafe {
            kernels::graph_euler_pair(gpu, grid(gpu, m), d_off, d_tgt, m64, &mut cnt, succ, pred)
        }
    })?;
    drop(cnt);
    Ok((succ, pred))
}

/// Stage 3 of [`device_circuit`]: counts the cycles of the labels `lab` and, when there are
/// several, links them along consecutive out-edges of a vertex with a union-find: returns the
/// cycle count, the forest links (`tree[k] != 0` links out-edges `k` and `k + 1`) and their
/// count.
fn spanning_forest(
    gpu: &Gpu,
    (m, n): (usize, usize),
    d_off: &DeviceBuffer<u64>,
    lab: &DeviceBuffer<u32>,
) -> Result<(u64, DeviceBuffer<u8>, u64), GpuError> {
    let (m64, n64) = (m as u64, n as u64);
    let mut cycles = gpu.alloc_zeros::<u32>(1)?;
    // SAFETY: reads lab[0..m), increments one counter.
    unsafe { kernels::graph_euler_count_cycles(gpu, grid(gpu, m), lab, m64, &mut cycles)? };
    let cycles = scalar(gpu, &cycles)? as u64;
    let mut tree = gpu.alloc_zeros::<u8>(m)?;
    let mut links_n = 0u64;
    if cycles > 1 {
        let mut parent = alloc_u32(gpu, m)?;
        gpu_runtime::iota(gpu, &mut parent)?;
        let mut row_last = gpu.alloc_zeros::<u8>(m)?;
        // SAFETY: reads offsets[0..=n), writes row_last[offsets[v+1]-1] < m.
        unsafe {
            kernels::graph_euler_mark_row_ends(gpu, grid(gpu, n), d_off, n64, &mut row_last)?
        };
        let mut links = gpu.alloc_zeros::<u32>(1)?;
        // SAFETY: labels are edge ids < m, so union-find indices stay in parent[0..m); tree[k]
        // for k < m; one counter.
        unsafe {
            kernels::graph_euler_link_cycles(
                gpu,
                grid(gpu, m),
                lab,
                &row_last,
                m64,
                &mut parent,
                &mut tree,
                &mut links,
            )?
        };
        links_n = scalar(gpu, &links)? as u64;
    }
    Ok((cycles, tree, links_n))
}

/// Stage 4 of [`device_circuit`]: splices the cycles joined by the forest links of `tree`
/// into one, rewriting `succ` through `pred` along each run of links.
fn splice_forest(
    gpu: &Gpu,
    m: usize,
    pred: &DeviceBuffer<u32>,
    tree: &DeviceBuffer<u8>,
    succ: &mut DeviceBuffer<u32>,
) -> Result<(), GpuError> {
    let m64 = m as u64;
    let mut run_key = alloc_u32(gpu, m)?;
    let mut run_start = alloc_u32(gpu, m)?;
    // SAFETY: reads tree[0..m), writes run_key[0..m).
    unsafe { kernels::graph_euler_run_keys(gpu, grid(gpu, m), tree, m64, &mut run_key)? };
    scan_max(gpu, &run_key, &mut run_start, m)?;
    // SAFETY: pred is a permutation of 0..m, so every succ entry has at most one writer;
    // the values written are positions < m (a tree link k always has k + 1 in its row).
    unsafe { kernels::graph_euler_splice(gpu, grid(gpu, m), pred, tree, &run_start, m64, succ)? };
    Ok(())
}

/// Stage 5 of [`device_circuit`]: the walk again (now every edge is on the single cycle
/// `succ`, so all of seg/offs is rewritten), then Wyllie ranking of the splitter chain, then
/// each edge written at its position: the edge order from edge 0.
fn rank_circuit(
    gpu: &Gpu,
    m: usize,
    succ: &DeviceBuffer<u32>,
    mut subs: Sublists,
) -> Result<DeviceBuffer<u32>, GpuError> {
    let m64 = m as u64;
    let k = subs.k;
    let k64 = k as u64;
    subs.walk(gpu, succ)?;
    let Sublists {
        split_of,
        seg,
        offs,
        next,
        len,
        ..
    } = subs;
    let init = |val: &mut DeviceBuffer<u32>, nxt: &mut DeviceBuffer<u32>| {
        // SAFETY: reads next/len (k entries) and split_of[0]; writes val/nxt (k entries).
        unsafe {
            kernels::graph_euler_rank_init(gpu, grid(gpu, k), &next, &len, &split_of, k64, val, nxt)
        }
    };
    let (val, _) = jump_rounds(gpu, k, rounds_for(k), init, |[val, nxt], [val_b, nxt_b]| {
        // SAFETY: ping-pong buffers of k entries; nxt values are < k or NONE (checked).
        unsafe { kernels::graph_euler_rank_round(gpu, grid(gpu, k), val, nxt, val_b, nxt_b, k64)? };
        Ok(true)
    })?;
    let mut order = alloc_u32(gpu, m)?;
    // SAFETY: seg[e] < k, positions are checked against m in the kernel.
    unsafe {
        kernels::graph_euler_scatter_order(gpu, grid(gpu, m), &seg, &offs, &val, m64, &mut order)?
    };
    Ok(order)
}
