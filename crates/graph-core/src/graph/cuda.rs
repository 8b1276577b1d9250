//! The edge list of a CSR graph on the GPU (`graph_edge_sources` in `kernels-cuda/graph.cu`).
//!
//! A GPU leaf: it imports only the generated launchers, and takes the graph as plain CSR
//! offsets.

use gpu_runtime::{Gpu, GpuError};

use crate::kernels;

/// Device times of one GPU edge-list extraction, in seconds (CUDA events).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GpuEdgeListTimes {
    /// Host-to-device copy of the CSR offsets.
    pub upload: f64,
    /// The kernel: the start vertex of every edge.
    pub compute: f64,
    /// Device-to-host copy of the start vertices.
    pub download: f64,
}

/// The start vertex of each of the `m` edges of the CSR `offsets` (`offsets[0] = 0`,
/// `offsets[n] = m`, non-decreasing; `m < 2^32`, checked by the caller), computed on the
/// device, with the device times of its parts.
pub(crate) fn edge_sources(
    gpu: &Gpu,
    offsets: &[u64],
    m: usize,
) -> Result<(Vec<u32>, GpuEdgeListTimes), GpuError> {
    let n = offsets.len() - 1;
    if m == 0 {
        return Ok((Vec::new(), GpuEdgeListTimes::default()));
    }
    gpu.ensure_fits(8 * offsets.len() as u64 + 4 * m as u64)?;
    let t = gpu.timer()?;
    let d_off = gpu.upload(offsets)?;
    let upload = t.stop()?;
    // SAFETY: the kernel writes every element of sources[0..m) before it is read back.
    let mut d_src = unsafe { gpu.alloc_uninit::<u32>(m)? };
    let t = gpu.timer()?;
    // SAFETY: one thread per edge e < m reads offsets[0..=n) (n + 1 entries uploaded; the
    // binary search stays in [0, n] because offsets[0] = 0 <= e < m = offsets[n]) and writes
    // sources[e], e < m = the buffer's length.
    unsafe {
        kernels::graph_edge_sources(
            gpu,
            gpu.grid_stride(m as u64, 256),
            &d_off,
            n as u64,
            m as u64,
            &mut d_src,
        )?
    };
    let compute = t.stop()?;
    let t = gpu.timer()?;
    let sources = gpu.download(&d_src)?;
    let download = t.stop()?;
    Ok((
        sources,
        GpuEdgeListTimes {
            upload,
            compute,
            download,
        },
    ))
}
