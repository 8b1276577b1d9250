//! Error types of graph-core.

use gpu_primitives::PrimitiveError;
use gpu_runtime::GpuError;

/// Why a graph could not be built, read, written or rendered.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// A line of an input file is malformed.
    #[error("line {line}: expected {expected}, found `{found}`")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// What the reader expected there.
        expected: String,
        /// What it found (possibly shortened).
        found: String,
    },
    /// An edge names a vertex outside `0..vertices`.
    #[error("edge {edge} uses vertex {vertex}, but the graph has only {vertices} vertices")]
    VertexOutOfRange {
        /// Index of the offending edge in the input.
        edge: u64,
        /// The vertex id.
        vertex: u64,
        /// Number of vertices.
        vertices: u64,
    },
    /// The vertex-indexed arrays of the graph would not fit in the memory available now (a
    /// file that declares far more vertices than this machine can hold).
    #[error(
        "{vertices} vertices need about {needed} bytes to build, but only {available} bytes of memory are available"
    )]
    OutOfMemory {
        /// Vertices asked for.
        vertices: u64,
        /// Bytes the construction needs.
        needed: u64,
        /// Bytes available (`MemAvailable`).
        available: u64,
    },
    /// More vertices than `u32` ids can name.
    #[error("{what}: {count} is more than the {max} that graph-core supports")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// The count asked for.
        count: u128,
        /// The limit.
        max: u128,
    },
    /// A parameter is out of its valid range.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// Reading or writing a file failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The FASTA/FASTQ parser rejected the reads.
    #[error("could not read sequences: {0}")]
    Reads(String),
    /// The GraphViz `dot` program is not installed.
    #[error(
        "the GraphViz `dot` program was not found on PATH; install GraphViz (Debian/Ubuntu: `sudo apt-get install graphviz`, Fedora: `sudo dnf install graphviz`, macOS: `brew install graphviz`, conda: `conda install -c conda-forge graphviz`) or render the .dot file elsewhere"
    )]
    DotNotInstalled,
    /// `dot` ran but failed.
    #[error("`dot` failed ({status}): {stderr}")]
    DotFailed {
        /// Exit status.
        status: String,
        /// What `dot` printed on stderr.
        stderr: String,
    },
    /// A GPU operation failed (no device, out of memory with the sizes, launch failure, ...).
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// A gpu-primitives operation rejected its input. graph-core checks its inputs before it
    /// calls them, so this is an internal error, not bad user data.
    #[error("internal error in a GPU primitive: {0}")]
    Primitive(PrimitiveError),
}

impl From<PrimitiveError> for GraphError {
    /// GPU failures become [`GraphError::Gpu`]; anything else [`GraphError::Primitive`].
    fn from(e: PrimitiveError) -> Self {
        match e {
            PrimitiveError::Gpu(g) => GraphError::Gpu(g),
            other => GraphError::Primitive(other),
        }
    }
}

/// Why a graph has no Euler circuit or path, or why computing one failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EulerError {
    /// A vertex has in-degree != out-degree (circuits need equality everywhere).
    #[error(
        "no Euler circuit: vertex {vertex} has in-degree {in_degree} but out-degree {out_degree}"
    )]
    Unbalanced {
        /// The first such vertex (smallest id).
        vertex: u32,
        /// Its in-degree.
        in_degree: u64,
        /// Its out-degree.
        out_degree: u64,
    },
    /// The degrees break the path rule (at most one vertex with out = in + 1 and at most one
    /// with in = out + 1, all others balanced).
    #[error(
        "no Euler path: vertex {vertex} has in-degree {in_degree} and out-degree {out_degree} ({reason})"
    )]
    PathDegrees {
        /// The offending vertex.
        vertex: u32,
        /// Its in-degree.
        in_degree: u64,
        /// Its out-degree.
        out_degree: u64,
        /// Which part of the rule fails.
        reason: &'static str,
    },
    /// The edges do not form one weakly connected component (for an undirected graph: one
    /// connected component; vertices without edges are not counted).
    #[error("no Euler {kind}: the edges form {components} weakly connected components, not 1")]
    Disconnected {
        /// `"circuit"` or `"path"`.
        kind: &'static str,
        /// Number of weakly connected components among non-isolated vertices.
        components: u64,
    },
    /// A vertex of an undirected graph has odd degree (an Euler circuit needs every degree
    /// even).
    #[error("no Euler circuit: vertex {vertex} has odd degree {degree}")]
    OddDegree {
        /// The first such vertex (smallest id).
        vertex: u32,
        /// Its degree (a self-loop counts twice).
        degree: u64,
    },
    /// More than two vertices of an undirected graph have odd degree (an Euler path has at
    /// most two).
    #[error(
        "no Euler path: {count} vertices have odd degree, at most 2 may; the third, vertex {vertex}, has degree {degree}"
    )]
    TooManyOddVertices {
        /// How many vertices have odd degree.
        count: u64,
        /// The third vertex of odd degree (in id order).
        vertex: u32,
        /// Its degree.
        degree: u64,
    },
    /// The start vertex asked for of an undirected Euler path has even degree while two
    /// vertices have odd degree: the path must start at one of them.
    #[error(
        "no Euler path from vertex {vertex}: its degree {degree} is even, and a path must start at one of the two odd-degree vertices {} and {}", odd[0], odd[1]
    )]
    SourceNotOdd {
        /// The start vertex asked for.
        vertex: u32,
        /// Its degree.
        degree: u64,
        /// The two vertices of odd degree.
        odd: [u32; 2],
    },
    /// The start vertex asked for has no edges, but the graph has some.
    #[error("no Euler {kind} from vertex {vertex}: it has no edges")]
    SourceWithoutEdges {
        /// `"circuit"` or `"path"`.
        kind: &'static str,
        /// The start vertex asked for.
        vertex: u32,
    },
    /// The start vertex asked for is not a vertex of the graph.
    #[error("start vertex {vertex} is not a vertex: the graph has {vertices} vertices")]
    SourceOutOfRange {
        /// The start vertex asked for.
        vertex: u32,
        /// Number of vertices.
        vertices: u64,
    },
    /// The graph has more edges than the Euler code's 32-bit edge ids can number.
    #[error("{edges} edges: Euler circuits support at most {max} edges")]
    TooManyEdges {
        /// Number of edges.
        edges: u64,
        /// The limit.
        max: u64,
    },
    /// The GPU path failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}
