// Linear assignment: the bidding and resolution phases of Bertsekas' auction (Jacobi form).
//
// One round: every free person (bidder) finds its best and second best object under the
// current prices (one warp per bidder), bids price + margin + eps and raises the object's
// high-water mark with an atomic max on an order-preserving 64-bit key; then each bidder whose
// bid equals its object's mark claims it with an atomic min on its id (the smallest id wins
// ties); then each object with a winner is reassigned and repriced; then the free persons are
// collected for the next round. Indices are 32-bit (n < 2^32), offsets into the n x n benefit
// matrix 64-bit.
//
// The round kernels take the number of bidders from device memory (`count`, written by
// assignment_auction_reset or by the previous round's assignment_auction_collect), so the host can queue many rounds
// without reading it back. The counter is double-buffered: round r reads `count` and collects
// into `next_count` (zeroed by assignment_auction_assign before assignment_auction_collect runs); the host swaps the
// two, with the two bidder lists, between rounds. A round whose `*count` is 0 changes nothing.
#include "common.cuh"
#include "block/fill.cuh"
#include "block/reduce.cuh"

#define AUCTION_NONE 0xffffffffu
WARPATH_SHARE_WITH_HOST(AUCTION_NONE)

// Order-preserving map from a double to an unsigned 64-bit key (larger double, larger key).
// Key 0 is below every real number's key and marks "no bid".
__device__ __forceinline__ u64 auction_key(double x) {
    u64 b = (u64)__double_as_longlong(x);
    return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}

__device__ __forceinline__ double auction_unkey(u64 k) {
    u64 b = (k & 0x8000000000000000ull) ? (k & 0x7fffffffffffffffull) : ~k;
    return __longlong_as_double((long long)b);
}

// The next double above a finite x (what a bid adds at least, so a price always rises).
__device__ __forceinline__ double auction_next_up(double x) {
    if (x == 0.0) return __longlong_as_double(1ll);
    long long b = __double_as_longlong(x);
    return __longlong_as_double(x > 0.0 ? b + 1 : b - 1);
}

// A bidder's best and second best value a[i][j] - price[j] over its row, and the best column
// (AUCTION_NONE when the row is empty). Merging two keeps the larger best (equal bests: the
// smaller column) and the larger of the other three values as the second.
struct Top2 {
    double best, second;
    u32 col;
};
struct Top2Op {
    __device__ __forceinline__ Top2 operator()(Top2 a, Top2 b) const {
        if (b.best > a.best || (b.best == a.best && b.col < a.col)) return {b.best, fmax(a.best, b.second), b.col};
        return {a.best, fmax(a.second, b.best), a.col};
    }
};

// One warp scans `row` (lane j takes columns j, j + 32, ...); the result is valid in lane 0.
__device__ __forceinline__ Top2 auction_best_two(const double* row, const double* price, u64 n, u32 lane) {
    Top2 t = {-INFINITY, -INFINITY, AUCTION_NONE};
    for (u64 j = lane; j < n; j += 32) {
        double v = row[j] - price[j];
        if (v > t.best) {
            t.second = t.best;
            t.best = v;
            t.col = (u32)j;
        } else if (v > t.second) {
            t.second = v;
        }
    }
    return warpath::warp_reduce(t, Top2Op());
}

// One warp scans the entries of CSR row `row` (lane k takes entries start + k, start + k + 32,
// ...): best and second best value benefit[e] - price[indices[e]]; on equal best values the
// smaller column wins, as in the dense scan, so both give the same bids on the same matrix
// (the dense one with -inf for the missing entries). The result is valid in lane 0.
__device__ __forceinline__ Top2 auction_best_two_csr(const u64* indptr, const u32* indices, const double* benefit,
                                                     const double* price, u64 row, u32 lane) {
    Top2 t = {-INFINITY, -INFINITY, AUCTION_NONE};
    const u64 end = indptr[row + 1];
    for (u64 e = indptr[row] + lane; e < end; e += 32) {
        const u32 j = indices[e];
        const double v = benefit[e] - price[j];
        if (v > t.best || (v == t.best && j < t.col)) {
            t.second = t.best;
            t.best = v;
            t.col = j;
        } else if (v > t.second) {
            t.second = v;
        }
    }
    return warpath::warp_reduce(t, Top2Op());
}

// Lane 0's bid for its best column: price + (best - second) + eps, at least the next double
// above the price (so a price always rises); raises the column's high-water mark.
__device__ __forceinline__ void auction_place_bid(const Top2& t, const double* price, double eps, u32* bid_obj,
                                                  double* bid_val, u64* high) {
    const u32 bj = t.col;
    double inc = (t.second == -INFINITY) ? eps : (t.best - t.second + eps);
    double bid = fmax(price[bj] + inc, auction_next_up(price[bj]));  // always progress
    *bid_obj = bj;
    *bid_val = bid;
    atomicMax((unsigned long long*)&high[bj], (unsigned long long)auction_key(bid));
}

// Starts a phase: nobody assigned, every person a bidder (*count = n), no bids.
extern "C" __global__ void assignment_auction_reset(u32* owner, u32* assigned, u32* bidders, u64* high,
                                         u32* winner, u32* count, u64 n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *count = (u32)n;
    WARPATH_GRID_STRIDE(i, n) {
        owner[i] = AUCTION_NONE;
        assigned[i] = AUCTION_NONE;
        bidders[i] = (u32)i;
        high[i] = 0ull;
        winner[i] = AUCTION_NONE;
    }
}

// One warp per bidder k < *count (grid-stride over warps, so any grid works): scan row
// bidders[k] of the benefit matrix for the best and second best value a[i][j] - price[j], write
// the bid, raise high[j].
extern "C" __global__ void assignment_auction_bid(const double* benefit, const double* price,
                                       const u32* bidders, const u32* count, u64 n, double eps,
                                       u32* bid_obj, double* bid_val, u64* high) {
    const u64 bidders_now = *count;
    const u32 lane = threadIdx.x & 31u;
    const u64 warps_per_block = blockDim.x >> 5;
    const u64 warp0 = (u64)blockIdx.x * warps_per_block + (threadIdx.x >> 5);
    const u64 warp_stride = (u64)gridDim.x * warps_per_block;
    for (u64 k = warp0; k < bidders_now; k += warp_stride) {
        const u64 person = bidders[k];
        const Top2 t = auction_best_two(benefit + person * n, price, n, lane);
        if (lane == 0 && t.col != AUCTION_NONE) auction_place_bid(t, price, eps, &bid_obj[k], &bid_val[k], high);
    }
}

// assignment_auction_bid for a sparse benefit matrix in CSR form (row i's entries
// indptr[i]..indptr[i + 1] of indices and benefit; a missing entry is no edge). A bidder
// without entries makes no bid (the host refuses problems without a perfect matching first).
extern "C" __global__ void assignment_auction_bid_csr(const u64* indptr, const u32* indices, const double* benefit,
                                           const double* price, const u32* bidders, const u32* count,
                                           double eps, u32* bid_obj, double* bid_val, u64* high) {
    const u64 bidders_now = *count;
    const u32 lane = threadIdx.x & 31u;
    const u64 warps_per_block = blockDim.x >> 5;
    const u64 warp0 = (u64)blockIdx.x * warps_per_block + (threadIdx.x >> 5);
    const u64 warp_stride = (u64)gridDim.x * warps_per_block;
    for (u64 k = warp0; k < bidders_now; k += warp_stride) {
        const Top2 t = auction_best_two_csr(indptr, indices, benefit, price, bidders[k], lane);
        if (lane == 0 && t.col != AUCTION_NONE) auction_place_bid(t, price, eps, &bid_obj[k], &bid_val[k], high);
    }
}

// Each bidder whose bid equals its object's high-water mark claims the object (smallest id).
extern "C" __global__ void assignment_auction_claim(const u32* bidders, const u32* bid_obj,
                                         const double* bid_val, const u64* high, u32* winner,
                                         const u32* count) {
    const u64 bidders_now = *count;
    WARPATH_GRID_STRIDE(k, bidders_now) {
        u32 j = bid_obj[k];
        if (auction_key(bid_val[k]) == high[j]) {
            atomicMin(&winner[j], bidders[k]);
        }
    }
}

// Each object with a winner: evict the previous owner, assign the winner, set the price.
// A winner bid for exactly one object and an evicted owner held exactly one, so the writes to
// `assigned` never collide. Also zeroes `next_count` for assignment_auction_collect. With no bidders
// (*count == 0) there are no bids (every winner is NONE, every high 0): nothing to do.
extern "C" __global__ void assignment_auction_assign(u64* high, u32* winner, u32* owner, u32* assigned,
                                          double* price, const u32* count, u32* next_count,
                                          u64 n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *next_count = 0u;
    if (*count == 0u) return;
    WARPATH_GRID_STRIDE(j, n) {
        u32 w = winner[j];
        if (w != AUCTION_NONE) {
            u32 prev = owner[j];
            if (prev != AUCTION_NONE) {
                assigned[prev] = AUCTION_NONE;
            }
            owner[j] = w;
            assigned[w] = (u32)j;
            price[j] = auction_unkey(high[j]);
            winner[j] = AUCTION_NONE;
            high[j] = 0ull;
        } else if (high[j] != 0ull) {
            high[j] = 0ull;
        }
    }
}

// Appends every unassigned person to `next` (order unspecified) and counts them in
// `next_count` (zeroed by assignment_auction_assign). After a round without bidders (*count == 0) everyone
// is still assigned: `next_count` stays 0.
extern "C" __global__ void assignment_auction_collect(const u32* assigned, const u32* count, u32* next,
                                           u32* next_count, u64 n) {
    if (*count == 0u) return;
    WARPATH_GRID_STRIDE(i, n) {
        if (assigned[i] == AUCTION_NONE) {
            u32 at = atomicAdd(next_count, 1u);
            next[at] = (u32)i;
        }
    }
}

// A whole batch of auctions in one launch: one block per problem (grid-stride over problems),
// every epsilon phase and bidding round inside the kernel, separated by block barriers.
// Problem p is square of size sizes[p]; its benefit matrix starts at benefit + boff[p]; its
// per-line scratch (price, owner, assigned, high, winner, bidders, bid_obj, bid_val) starts at
// element soff[p] of each scratch array. The epsilon schedule is the host's: eps_start, divided
// by 6 per phase, and the last phase at exactly eps_final once eps <= 6 * eps_final.
// On return assigned[soff[p] + i] is the column of person i.
extern "C" __global__ void assignment_auction_batch(const double* benefit, const u64* boff, const u32* sizes,
                                         const u64* soff, const double* eps_start,
                                         const double* eps_final, u64 problems, double* price,
                                         u32* owner, u32* assigned, u64* high, u32* winner,
                                         u32* bidders, u32* bid_obj, double* bid_val) {
    __shared__ u32 s_count;
    const u32 tid = threadIdx.x;
    const u32 nthreads = blockDim.x;
    const u32 lane = tid & 31u;
    const u32 warp = tid >> 5;
    const u32 nwarps = nthreads >> 5;
    for (u64 p = blockIdx.x; p < problems; p += gridDim.x) {
        const u32 n = sizes[p];
        const double* B = benefit + boff[p];
        const u64 o = soff[p];
        double* pr = price + o;
        u32* ow = owner + o;
        u32* as = assigned + o;
        u64* hi = high + o;
        u32* wi = winner + o;
        u32* bl = bidders + o;
        u32* bo = bid_obj + o;
        double* bv = bid_val + o;
        warpath::block_fill(pr, n, 0.0);
        double eps = eps_start[p];
        const double ef = eps_final[p];
        bool last = false;
        while (true) {
            if (eps <= ef * 6.0) {
                eps = ef;
                last = true;
            }
            for (u32 j = tid; j < n; j += nthreads) {
                ow[j] = AUCTION_NONE;
                as[j] = AUCTION_NONE;
                hi[j] = 0ull;
                wi[j] = AUCTION_NONE;
            }
            __syncthreads();
            while (true) {
                if (tid == 0) s_count = 0;
                __syncthreads();
                for (u32 i = tid; i < n; i += nthreads) {
                    if (as[i] == AUCTION_NONE) {
                        u32 at = atomicAdd(&s_count, 1u);
                        bl[at] = i;
                    }
                }
                __syncthreads();
                const u32 count = s_count;
                if (count == 0) break;  // the same value in every thread: a uniform exit
                // Bidding: one warp per bidder.
                for (u32 k = warp; k < count; k += nwarps) {
                    const Top2 t = auction_best_two(B + (u64)bl[k] * n, pr, n, lane);
                    if (lane == 0) auction_place_bid(t, pr, eps, &bo[k], &bv[k], hi);
                }
                __syncthreads();
                // Claims: the smallest id among the highest bids.
                for (u32 k = tid; k < count; k += nthreads) {
                    u32 j = bo[k];
                    if (auction_key(bv[k]) == hi[j]) atomicMin(&wi[j], bl[k]);
                }
                __syncthreads();
                // Reassignment and repricing.
                for (u32 j = tid; j < n; j += nthreads) {
                    u32 w = wi[j];
                    if (w != AUCTION_NONE) {
                        u32 prev = ow[j];
                        if (prev != AUCTION_NONE) as[prev] = AUCTION_NONE;
                        ow[j] = w;
                        as[w] = j;
                        pr[j] = auction_unkey(hi[j]);
                        wi[j] = AUCTION_NONE;
                    }
                    hi[j] = 0ull;
                }
                __syncthreads();
            }
            if (last) break;
            eps /= 6.0;
        }
        __syncthreads();  // s_count and the scratch are reused by the next problem
    }
}
