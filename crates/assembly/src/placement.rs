//! What the GPU compaction (`cuda.rs`) returns and `unitigs.rs` turns into a [`crate::Compacted`]:
//! the small type both sides share.

/// Where each k-mer sits in the unitigs, as the CPU walk would put it (for k-mer `i`, index
/// into the sorted k-mer array):
///
/// - `node[i]`: the oriented k-mer (`2 i + reversed`) as the unitig reads it;
/// - `key[i]`: the unitig's sort key: for a chain read from an end, its first oriented k-mer
///   (below 2^32); for a cycle, `2^32 + m` where `m` is its smallest k-mer (the cycle is read
///   forward from `2 m`). Unitigs are numbered in order of their keys: chains by start, then
///   cycles by smallest k-mer, as [`crate::compact`] numbers them;
/// - `rank[i]`: the k-mer's position in its unitig (0 at the first k-mer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Placement {
    pub(crate) node: Vec<u32>,
    pub(crate) key: Vec<u64>,
    pub(crate) rank: Vec<u32>,
}

/// The bit of [`Placement::key`] that marks a cycle.
pub(crate) const CYCLE_KEY: u64 = 1 << 32;
