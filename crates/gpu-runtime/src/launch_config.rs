//! The shape of a kernel launch ([`LaunchConfig`]): plain numbers that the device handle
//! computes (`Gpu::grid_stride`) and the launcher passes to the driver, in a module of its own
//! so that neither depends on the other for it.

/// Grid and block shape of a launch, and the bytes of dynamic shared memory per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid, `(x, y, z)`.
    pub grid_dim: (u32, u32, u32),
    /// Threads per block, `(x, y, z)`.
    pub block_dim: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// `blocks` one-dimensional blocks of `threads` threads, no dynamic shared memory.
    pub fn blocks(blocks: u32, threads: u32) -> Self {
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// The same shape with `bytes` of dynamic shared memory per block.
    pub fn with_shared_bytes(self, bytes: u32) -> Self {
        LaunchConfig {
            shared_mem_bytes: bytes,
            ..self
        }
    }
}
