// combinatorics: batch generation of permutations and permutation search.
//
// Permutations of 0..n (n <= 20) are held per thread as bytes in a local array. Ranks are
// lexicographic, u64 (20! < 2^64). Both kernels unrank the first rank of a thread's run of
// consecutive ranks, then step next_permutation.
#include "common.cuh"
#include "block/reduce.cuh"

#define COMB_MAX_N 20
#define SEARCH_MAX_BLOCK 256
WARPATH_SHARE_WITH_HOST(COMB_MAX_N, SEARCH_MAX_BLOCK)

// Factorial-base digits of `rank`, then select the digit-th unused element (bit mask).
__device__ __forceinline__ void unrank_u64(u32 n, u64 rank, unsigned char* p) {
    unsigned char digits[COMB_MAX_N];
    for (int i = (int)n - 1; i >= 0; --i) {
        const u32 base = n - (u32)i;
        if (rank <= 0xffffffffull) {  // 32-bit division is several times cheaper (12! < 2^32)
            const u32 r = (u32)rank;
            digits[i] = (unsigned char)(r % base);
            rank = r / base;
        } else {
            digits[i] = (unsigned char)(rank % base);
            rank /= base;
        }
    }
    u32 unused = (n >= 32) ? 0xffffffffu : ((1u << n) - 1u);
    for (u32 i = 0; i < n; ++i) {
        u32 m = unused;
        for (u32 d = digits[i]; d > 0; --d) m &= m - 1u;  // drop the lowest set bits
        u32 e = (u32)(__ffs(m) - 1);
        unused &= ~(1u << e);
        p[i] = (unsigned char)e;
    }
}

// C++ std::next_permutation on v[0..n); returns the first changed position, or -1 after
// wrapping to the first permutation.
__device__ __forceinline__ int next_perm_pivot(u32 n, unsigned char* v) {
    if (n < 2) return -1;
    int i = (int)n - 1;
    while (i > 0 && v[i - 1] >= v[i]) --i;
    int lo, hi;
    int pivot = -1;
    if (i > 0) {
        pivot = i - 1;
        int j = (int)n - 1;
        while (v[j] <= v[pivot]) --j;
        unsigned char t = v[pivot];
        v[pivot] = v[j];
        v[j] = t;
    }
    lo = i;
    hi = (int)n - 1;
    while (lo < hi) {
        unsigned char t = v[lo];
        v[lo] = v[hi];
        v[hi] = t;
        ++lo;
        --hi;
    }
    return pivot;
}

// out[(r - start) * n + i] = element i of the permutation of rank r, for r in [start, start+count).
// A block produces tiles of blockDim.x * steps consecutive permutations: thread t unranks
// tile_first + t * steps and steps next_permutation; the tile is staged in dynamic shared
// memory (blockDim.x * steps * n bytes) and written out with coalesced 4-byte stores.
// Requires: 1 <= n <= 20, start + count <= n!, blockDim.x a multiple of 4 (so every tile
// starts 4-byte aligned in `out`, which is cudaMalloc-aligned), 1 <= steps.
extern "C" __global__ void combinatorics_permutations_u8(unsigned char* __restrict__ out, u32 n, u64 start,
                                           u64 count, u32 steps) {
    WARPATH_DYNAMIC_SHARED(unsigned char, tile);
    const u64 per_tile = (u64)blockDim.x * steps;
    const u64 tiles = (count + per_tile - 1) / per_tile;
    for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {  // uniform across the block
        const u64 tile_first = t * per_tile;
        const u64 left = count - tile_first;
        const u64 in_tile = left < per_tile ? left : per_tile;
        const u64 my_first = (u64)threadIdx.x * steps;
        if (my_first < in_tile) {
            const u64 rest = in_tile - my_first;
            const u32 mine = rest < (u64)steps ? (u32)rest : steps;
            unsigned char p[COMB_MAX_N];
            unrank_u64(n, start + tile_first + my_first, p);
            unsigned char* dst = tile + my_first * n;
            for (u32 s = 0; s < mine; ++s) {
                for (u32 i = 0; i < n; ++i) dst[(u64)s * n + i] = p[i];
                if (s + 1 < mine) next_perm_pivot(n, p);
            }
        }
        __syncthreads();
        const u64 bytes = in_tile * n;
        unsigned char* g = out + tile_first * n;
        const u64 words = bytes >> 2;
        u32* g4 = reinterpret_cast<u32*>(g);
        const u32* s4 = reinterpret_cast<const u32*>(tile);
        for (u64 w = threadIdx.x; w < words; w += blockDim.x) g4[w] = s4[w];
        for (u64 b = (words << 2) + threadIdx.x; b < bytes; b += blockDim.x) g[b] = tile[b];
        __syncthreads();  // the next tile overwrites shared memory
    }
}

// Prefix sums of the objective from position `from`; returns the score. Summation order is
// exactly the CPU's (left to right, IEEE adds), so scores agree to the bit.
//   objective 0 (assignment): t[j+1] = t[j] + m[j*n + p[j]], score = t[n]
//   objective 1 (tour):       t[j] = t[j-1] + m[p[j-1]*n + p[j]] (j >= 1), t[0] = 0,
//                             score = t[n-1] + m[p[n-1]*n + p[0]]
__device__ __forceinline__ double rescore(u32 objective, u32 n, const double* m,
                                          const unsigned char* p, double* t, int from) {
    if (objective == 1) {
        for (u32 j = from < 1 ? 1u : (u32)from; j < n; ++j)
            t[j] = __dadd_rn(t[j - 1], m[p[j - 1] * n + p[j]]);
        return __dadd_rn(t[n - 1], m[p[n - 1] * n + p[0]]);
    }
    for (u32 j = (u32)from; j < n; ++j) t[j + 1] = __dadd_rn(t[j], m[j * n + p[j]]);
    return t[n];
}

__device__ __forceinline__ bool better(double s, u64 r, double bs, u64 br) {
    return s < bs || (s == bs && r < br);
}

// A candidate of the search, and the reduction to the better of two.
struct Scored {
    double score;
    u64 rank;
};
struct BetterOp {
    __device__ __forceinline__ Scored operator()(Scored a, Scored b) const {
        return better(b.score, b.rank, a.score, a.rank) ? b : a;
    }
};

// The best (smallest score, then smallest rank) permutation among ranks [start, start+count)
// per block: block_score[blockIdx.x], block_rank[blockIdx.x] (rank ~0 when the block had no
// work). The n x n matrix is copied to dynamic shared memory (n*n doubles).
// Requires: 1 <= n <= 20, start + count <= n!, blockDim.x a multiple of 32 <= 1024, no NaN.
extern "C" __global__ void combinatorics_search_permutations_f64(const double* __restrict__ matrix, u32 n,
                                                   u32 objective, u64 start, u64 count,
                                                   u32 steps, double* __restrict__ block_score,
                                                   u64* __restrict__ block_rank) {
    WARPATH_DYNAMIC_SHARED(double, m);
    __shared__ Scored s_warp[32];
    for (u32 i = threadIdx.x; i < n * n; i += blockDim.x) m[i] = matrix[i];
    __syncthreads();

    double best = __longlong_as_double(0x7ff0000000000000LL);  // +inf
    u64 best_rank = ~0ull;
    const u64 per_tile = (u64)blockDim.x * steps;
    const u64 stride = (u64)gridDim.x * per_tile;
    // A thread's ranks increase along this loop, so ties keep the earlier (smaller) rank.
    for (u64 base = (u64)blockIdx.x * per_tile + (u64)threadIdx.x * steps; base < count;
         base += stride) {
        const u64 rest = count - base;
        const u32 mine = rest < (u64)steps ? (u32)rest : steps;
        unsigned char p[COMB_MAX_N];
        double t[COMB_MAX_N + 1];
        u64 rank = start + base;
        unrank_u64(n, rank, p);
        t[0] = 0.0;
        double score = rescore(objective, n, m, p, t, 0);
        if (better(score, rank, best, best_rank)) {
            best = score;
            best_rank = rank;
        }
        for (u32 s = 1; s < mine; ++s) {
            int pivot = next_perm_pivot(n, p);  // never wraps inside the range
            ++rank;
            score = rescore(objective, n, m, p, t, pivot < 0 ? 0 : pivot);
            if (score < best) {
                best = score;
                best_rank = rank;
            }
        }
    }

    const Scored r = warpath::block_reduce(Scored{best, best_rank}, s_warp, BetterOp());
    if (threadIdx.x == 0) {
        block_score[blockIdx.x] = r.score;
        block_rank[blockIdx.x] = r.rank;
    }
}
