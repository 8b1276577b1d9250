//! Error types of the crate.

use gpu_runtime::GpuError;

/// Why a permutation operation (rank, unrank, batch generation, search) could not run.
#[derive(Debug, thiserror::Error)]
pub enum PermError {
    /// `n` is above what the rank type can index (`n! ` must fit in it).
    #[error(
        "n = {n} is too large: ranks of permutations of at most {max} elements fit in {bits} bits"
    )]
    TooLarge {
        /// The number of elements asked for.
        n: usize,
        /// The largest `n` whose `n!` fits.
        max: usize,
        /// Width of the rank type (64 or 128).
        bits: u32,
    },
    /// The rank is not below `n!`.
    #[error("rank {rank} is out of range: there are only {n}! permutations of {n} elements")]
    RankOutOfRange {
        /// The rank asked for.
        rank: u128,
        /// The number of elements.
        n: usize,
    },
    /// The range `[start, start + count)` reaches past `n!`.
    #[error("{count} ranks from rank {start} reach past {n}! = {total}")]
    RangeOutOfBounds {
        /// First rank.
        start: u64,
        /// Number of ranks.
        count: u64,
        /// Number of elements.
        n: usize,
        /// `n!`.
        total: u64,
    },
    /// A search over an empty range of ranks has no best permutation.
    #[error("the range of ranks to search is empty")]
    EmptyRange,
    /// Two elements of the input compare equal, so it is not a permutation of distinct items.
    #[error("elements at positions {first} and {second} are equal; ranks need distinct elements")]
    DuplicateElement {
        /// Position of one of the equal elements.
        first: usize,
        /// Position of the other.
        second: usize,
    },
    /// The output buffer does not hold `count * n` bytes.
    #[error("the output buffer holds {len} bytes, but {count} permutations of {n} need {needed}")]
    BufferLength {
        /// Length of the buffer.
        len: usize,
        /// Number of permutations.
        count: u64,
        /// Elements per permutation.
        n: usize,
        /// Bytes needed.
        needed: u128,
    },
    /// A matrix is not `n x n`.
    #[error("the matrix has {len} entries, but an {n} x {n} matrix needs {}", (*n as u128) * (*n as u128))]
    MatrixShape {
        /// Number of entries given.
        len: usize,
        /// The side asked for.
        n: usize,
    },
    /// A matrix entry is NaN or negative infinity (positive infinity means "forbidden").
    #[error("matrix entry ({row}, {col}) is {value}; entries must be finite or +inf")]
    BadEntry {
        /// Row of the entry.
        row: usize,
        /// Column of the entry.
        col: usize,
        /// The value.
        value: f64,
    },
    /// A tuning option is outside its allowed range.
    #[error("{name} = {value} is outside the allowed range {min}..={max}")]
    BadOption {
        /// Option name.
        name: &'static str,
        /// Value given.
        value: u64,
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },
    /// The host buffer for the result could not be allocated.
    #[error("could not allocate {bytes} bytes of host memory for the permutations")]
    HostOutOfMemory {
        /// Bytes asked for.
        bytes: u128,
    },
    /// Writing to the output failed.
    #[error("writing permutations failed: {0}")]
    Io(#[from] std::io::Error),
    /// The GPU path failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// Why a De Bruijn sequence could not be built, checked or searched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeBruijnError {
    /// The alphabet is empty (`k = 0`).
    #[error("the alphabet is empty")]
    EmptyAlphabet,
    /// The alphabet has more than 256 symbols.
    #[error("the alphabet has {k} symbols; at most 256 are supported")]
    TooManySymbols {
        /// Alphabet size.
        k: usize,
    },
    /// The word length is 0.
    #[error("the word length n must be at least 1")]
    ZeroLength,
    /// `k^n` is too large to build.
    #[error("B({k}, {n}) has {k}^{n} symbols, more than this construction's limit of {limit}")]
    TooLong {
        /// Alphabet size.
        k: usize,
        /// Word length.
        n: usize,
        /// The largest supported `k^n` for this construction.
        limit: u64,
    },
    /// The memory for the sequence could not be reserved.
    #[error("could not allocate {bytes} bytes for the sequence")]
    OutOfMemory {
        /// Bytes asked for.
        bytes: u64,
    },
    /// The Euler construction's graph and circuit would not fit in the memory available now.
    #[error(
        "the Euler construction of B({k}, {n}) needs about {needed} bytes of memory, but only {available} bytes are available (the FKM construction needs only the {k}^{n} bytes of the sequence)"
    )]
    NotEnoughMemory {
        /// Alphabet size.
        k: usize,
        /// Word length.
        n: usize,
        /// Bytes the construction needs, about.
        needed: u64,
        /// Bytes available (`MemAvailable`).
        available: u64,
    },
    /// `graph-core` failed to build the De Bruijn graph or its Euler circuit for a reason other
    /// than size, memory or the GPU (not expected for a valid `k` and `n`).
    #[error("graph-core failed on the De Bruijn graph: {0}")]
    Graph(String),
    /// The GPU path of the Euler construction failed, or the GPU was asked for and is missing.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// A character occurs twice in the alphabet.
    #[error("the alphabet repeats the character {0:?}")]
    DuplicateSymbol(char),
    /// A character is not in the alphabet.
    #[error("the character {0:?} is not in the alphabet")]
    UnknownSymbol(char),
    /// A symbol index is not below `k`.
    #[error("symbol {symbol} at position {position} is not below k = {k}")]
    SymbolOutOfRange {
        /// The symbol.
        symbol: u8,
        /// Where it occurs.
        position: usize,
        /// Alphabet size.
        k: usize,
    },
    /// A word to find does not have length `n`.
    #[error("the word has length {len}, but the sequence is over words of length {n}")]
    WordLength {
        /// Length given.
        len: usize,
        /// Word length of the sequence.
        n: usize,
    },
}
