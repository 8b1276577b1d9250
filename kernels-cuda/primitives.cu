// gpu-primitives: reduce, decoupled look-back scan, select/split, Onesweep radix sort, distinct,
// histogram. Host side: crates/gpu-primitives/src/cuda.rs (launch parameters must match the
// constants below).
//
// Conventions
// - Element counts and offsets are 64-bit (u64) everywhere; no `int` index ever holds a global
//   position.
// - Kernels never synchronise with the host. Single-pass kernels (scan, onesweep) communicate
//   between blocks only through the look-back status words described below.
// - Keys are sorted as "ordered bits": an unsigned integer of the same width whose unsigned order
//   is the total order of the key type (see `ord32`/`ord64`). Descending order complements them.
//
// Memory-ordering reasoning for the look-back (read this before changing the scan or the sort)
// - A block acquires its tile index from a global atomic counter (`atomicAdd`), not from
//   blockIdx. Tile indices are therefore handed out in the order blocks start running, so every
//   predecessor tile belongs to a block that is already resident or finished. A block publishes
//   its own aggregate before it waits on anyone, so the waiting chain always ends: no deadlock,
//   whatever order the hardware schedules blocks in.
// - Scan: the status of a tile is three words: flags[t] (0 = nothing, 1 = AGGREGATE available,
//   2 = INCLUSIVE PREFIX available), agg[t] and incl[t] (64-bit values). The writer stores the
//   value with a volatile store, executes __threadfence() and only then stores the flag (volatile).
//   The reader loads the flag with a volatile load (re-read from memory on every spin iteration),
//   executes __threadfence(), and only then loads the value (volatile). In the PTX memory model
//   the two fences (fence.sc / fence.acq_rel at gpu scope) order the morally-strong accesses:
//   a reader that observes the flag is guaranteed to observe the value written before it. A
//   value is written once per flag state and never changed afterwards, so the reader may pick the
//   array (agg or incl) from the flag it read.
// - Onesweep: the per-(tile, digit) status is ONE 64-bit word holding epoch, flag and count,
//   written with one aligned 64-bit store and read with one volatile 64-bit load. A 64-bit aligned
//   access is single-copy atomic, so flag and count can never be torn apart and no fence is needed
//   between them. The epoch (pass number + 1) lets the same zero-initialised status array serve
//   every pass without re-clearing it: a word from an earlier pass reads as "not ready".
//   Keys/values written by a pass are read only by the next kernel launch on the same stream,
//   which the launch order makes visible.
#include "common.cuh"
#include "block/fill.cuh"
#include "block/reduce.cuh"
#include "block/scan.cuh"

#define PRIM_BLOCK 256
#define RADIX_BITS 8
#define RADIX 256

// --- key transforms ------------------------------------------------------------------------
// kind: 0 = unsigned, 1 = signed two's complement, 2 = IEEE float.
// Floats: negatives have all bits flipped, non-negatives get the sign bit set; that orders
// -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN(by payload) and puts negative NaNs (which would land
// below -inf) last by rotating the whole range down by the size of the negative-NaN block. The
// map is a bijection, so payloads and signs of NaNs survive a sort.
#define F32_NEG_NAN_BLOCK 0x007FFFFFu
#define F64_NEG_NAN_BLOCK 0x000FFFFFFFFFFFFFull

__device__ __forceinline__ u32 ord32(u32 b, u32 kind) {
    if (kind == 1) return b ^ 0x80000000u;
    if (kind == 2) {
        u32 t = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
        return t - F32_NEG_NAN_BLOCK;
    }
    return b;
}
__device__ __forceinline__ u32 unord32(u32 t, u32 kind) {
    if (kind == 1) return t ^ 0x80000000u;
    if (kind == 2) {
        t += F32_NEG_NAN_BLOCK;
        return (t & 0x80000000u) ? (t & 0x7FFFFFFFu) : ~t;
    }
    return t;
}
__device__ __forceinline__ u64 ord64(u64 b, u32 kind) {
    if (kind == 1) return b ^ 0x8000000000000000ull;
    if (kind == 2) {
        u64 t = (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
        return t - F64_NEG_NAN_BLOCK;
    }
    return b;
}
__device__ __forceinline__ u64 unord64(u64 t, u32 kind) {
    if (kind == 1) return t ^ 0x8000000000000000ull;
    if (kind == 2) {
        t += F64_NEG_NAN_BLOCK;
        return (t & 0x8000000000000000ull) ? (t & 0x7FFFFFFFFFFFFFFFull) : ~t;
    }
    return t;
}

// In place: keys -> ordered bits (complemented when desc), or back when inverse.
extern "C" __global__ void primitives_key_transform_w32(u32* keys, u64 n, u32 kind, u32 desc, u32 inverse) {
    WARPATH_GRID_STRIDE(i, n) {
        u32 k = keys[i];
        if (inverse) {
            keys[i] = unord32(desc ? ~k : k, kind);
        } else {
            u32 t = ord32(k, kind);
            keys[i] = desc ? ~t : t;
        }
    }
}
extern "C" __global__ void primitives_key_transform_w64(u64* keys, u64 n, u32 kind, u32 desc, u32 inverse) {
    WARPATH_GRID_STRIDE(i, n) {
        u64 k = keys[i];
        if (inverse) {
            keys[i] = unord64(desc ? ~k : k, kind);
        } else {
            u64 t = ord64(k, kind);
            keys[i] = desc ? ~t : t;
        }
    }
}

// Float keys' numeric classes, in place on the raw bits of a copy: -0.0 becomes +0.0 and every
// NaN the default quiet NaN, so that a stable sort keeps keys that compare equal as numbers in
// index order (numpy's argsort(kind="stable"); SortKey::numeric_class on the host).
extern "C" __global__ void primitives_float_classes_w32(u32* keys, u64 n) {
    WARPATH_GRID_STRIDE(i, n) {
        const u32 b = keys[i];
        if (b == 0x80000000u) keys[i] = 0u;
        else if ((b & 0x7FFFFFFFu) > 0x7F800000u) keys[i] = 0x7FC00000u;
    }
}
extern "C" __global__ void primitives_float_classes_w64(u64* keys, u64 n) {
    WARPATH_GRID_STRIDE(i, n) {
        const u64 b = keys[i];
        if (b == 0x8000000000000000ull) keys[i] = 0ull;
        else if ((b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) keys[i] = 0x7FF8000000000000ull;
    }
}


// --- reduce ----------------------------------------------------------------------------------
// Two stages: stage 1 writes one partial per block (grid-stride), stage 2 (one block) reduces the
// partials. Sums accumulate in 64 bits (u64 wraps, which is also i64 two's-complement wrapping;
// f32 sums accumulate in f64). Min/max compare ordered bits, i.e. the crate's total order.

template <typename I, typename A>
__device__ void reduce_sum_stage1(const I* in, u64 n, A* partials) {
    __shared__ A sh[PRIM_BLOCK / 32];
    A acc = (A)0;
    WARPATH_GRID_STRIDE(i, n) { acc += (A)in[i]; }
    A r = warpath::block_reduce<PRIM_BLOCK>(acc, sh, warpath::Sum());
    if (threadIdx.x == 0) partials[blockIdx.x] = r;
}
// Signed sums are wrapping sums: they add as u64 (two's complement), stored as i64.
extern "C" __global__ void primitives_reduce_sum_u32(const u32* in, u64 n, u64* p) { reduce_sum_stage1<u32, u64>(in, n, p); }
extern "C" __global__ void primitives_reduce_sum_i32(const int* in, u64 n, i64* p) {
    // sign-extend, then add as u64: two's-complement wrapping sum equals the i64 wrapping sum
    __shared__ u64 sh[PRIM_BLOCK / 32];
    u64 acc = 0;
    WARPATH_GRID_STRIDE(i, n) { acc += (u64)(i64)in[i]; }
    u64 r = warpath::block_reduce<PRIM_BLOCK>(acc, sh, warpath::Sum());
    if (threadIdx.x == 0) ((u64*)p)[blockIdx.x] = r;
}
extern "C" __global__ void primitives_reduce_sum_u64(const u64* in, u64 n, u64* p) { reduce_sum_stage1<u64, u64>(in, n, p); }
extern "C" __global__ void primitives_reduce_sum_i64(const i64* in, u64 n, i64* p) {
    reduce_sum_stage1<u64, u64>((const u64*)in, n, (u64*)p);
}
extern "C" __global__ void primitives_reduce_sum_f32(const float* in, u64 n, double* p) { reduce_sum_stage1<float, double>(in, n, p); }
extern "C" __global__ void primitives_reduce_sum_f64(const double* in, u64 n, double* p) { reduce_sum_stage1<double, double>(in, n, p); }
// Stage 2: one block sums `m` partials in a fixed order (deterministic on a given device).
template <typename A>
__device__ void reduce_sum_final(const A* partials, u64 m, A* out) {
    __shared__ A sh[PRIM_BLOCK / 32];
    A acc = 0;
    for (u64 i = threadIdx.x; i < m; i += blockDim.x) acc += partials[i];
    A r = warpath::block_reduce<PRIM_BLOCK>(acc, sh, warpath::Sum());
    if (threadIdx.x == 0) *out = r;
}
extern "C" __global__ void primitives_reduce_sum_final_u64(const u64* partials, u64 m, u64* out) {
    reduce_sum_final<u64>(partials, m, out);
}
extern "C" __global__ void primitives_reduce_sum_final_i64(const i64* partials, u64 m, i64* out) {
    reduce_sum_final<u64>((const u64*)partials, m, (u64*)out);
}
extern "C" __global__ void primitives_reduce_sum_final_f64(const double* partials, u64 m, double* out) {
    reduce_sum_final<double>(partials, m, out);
}

// Min and max of ordered bits; out[2*block] = min, out[2*block+1] = max. n >= 1.
template <typename B>
struct MinMax {
    B lo, hi;
};
struct MinMaxOp {
    template <typename B>
    __device__ __forceinline__ MinMax<B> operator()(MinMax<B> a, MinMax<B> b) const {
        return {b.lo < a.lo ? b.lo : a.lo, b.hi > a.hi ? b.hi : a.hi};
    }
};
template <typename B>
__device__ __forceinline__ void block_minmax(B lo, B hi, MinMax<B>* sh, B* out) {
    const MinMax<B> r = warpath::block_reduce<PRIM_BLOCK>(MinMax<B>{lo, hi}, sh, MinMaxOp());
    if (threadIdx.x == 0) {
        out[0] = r.lo;
        out[1] = r.hi;
    }
}
extern "C" __global__ void primitives_reduce_minmax_w32(const u32* in, u64 n, u32 kind, u32* out) {
    __shared__ MinMax<u32> sh[PRIM_BLOCK / 32];
    u32 lo = 0xFFFFFFFFu, hi = 0;
    WARPATH_GRID_STRIDE(i, n) {
        u32 t = ord32(in[i], kind);
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    block_minmax<u32>(lo, hi, sh, out + 2 * (u64)blockIdx.x);
}
extern "C" __global__ void primitives_reduce_minmax_w64(const u64* in, u64 n, u32 kind, u64* out) {
    __shared__ MinMax<u64> sh[PRIM_BLOCK / 32];
    u64 lo = 0xFFFFFFFFFFFFFFFFull, hi = 0;
    WARPATH_GRID_STRIDE(i, n) {
        u64 t = ord64(in[i], kind);
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    block_minmax<u64>(lo, hi, sh, out + 2 * (u64)blockIdx.x);
}
// Stage 2 over `m` (min, max) pairs of ordered bits (kind 0: already ordered).
extern "C" __global__ void primitives_reduce_minmax_final_w32(const u32* parts, u64 m, u32* out) {
    __shared__ MinMax<u32> sh[PRIM_BLOCK / 32];
    u32 lo = 0xFFFFFFFFu, hi = 0;
    for (u64 i = threadIdx.x; i < m; i += blockDim.x) {
        lo = parts[2 * i] < lo ? parts[2 * i] : lo;
        hi = parts[2 * i + 1] > hi ? parts[2 * i + 1] : hi;
    }
    block_minmax<u32>(lo, hi, sh, out);
}
extern "C" __global__ void primitives_reduce_minmax_final_w64(const u64* parts, u64 m, u64* out) {
    __shared__ MinMax<u64> sh[PRIM_BLOCK / 32];
    u64 lo = 0xFFFFFFFFFFFFFFFFull, hi = 0;
    for (u64 i = threadIdx.x; i < m; i += blockDim.x) {
        lo = parts[2 * i] < lo ? parts[2 * i] : lo;
        hi = parts[2 * i + 1] > hi ? parts[2 * i + 1] : hi;
    }
    block_minmax<u64>(lo, hi, sh, out);
}

// --- decoupled look-back scan (Merrill & Garland 2016) ---------------------------------------
// One pass: every element is read once and written once (~2n data movement). Tile = 256 threads
// x 8 items. Temporary storage (host allocates, zeroed): flags[tiles] u32, agg[tiles], incl[tiles]
// of the accumulator type, and one u64 tile counter. Launch exactly `tiles` blocks of 256.
#define SCAN_ITEMS 8
#define SCAN_TILE (PRIM_BLOCK * SCAN_ITEMS)
#define FLAG_AGG 1u
#define FLAG_PREFIX 2u

template <typename A>
__device__ __forceinline__ void st_volatile(A* p, A v) { *(volatile A*)p = v; }
template <typename A>
__device__ __forceinline__ A ld_volatile(const A* p) { return *(const volatile A*)p; }

template <typename I, typename A>
__device__ __forceinline__ A load_widen(const I* in, u64 i) { return (A)in[i]; }
template <>
__device__ __forceinline__ u64 load_widen<int, u64>(const int* in, u64 i) { return (u64)(i64)in[i]; }
template <>
__device__ __forceinline__ u64 load_widen<unsigned char, u64>(const unsigned char* in, u64 i) {
    return in[i] ? 1ull : 0ull;  // bool flags: any non-zero byte counts as 1
}

template <typename I, typename A>
__device__ void scan_lookback(const I* in, A* out, u64 n, u32 inclusive, u32* flags, A* agg, A* incl,
                              u64* tile_counter) {
    __shared__ A s_data[SCAN_TILE];
    __shared__ A s_warp[PRIM_BLOCK / 32];
    __shared__ u64 s_tile;
    __shared__ A s_exclusive;
    if (threadIdx.x == 0) s_tile = atomicAdd((unsigned long long*)tile_counter, 1ull);
    __syncthreads();
    const u64 tile = s_tile;
    const u64 base = tile * SCAN_TILE;
    const u64 valid = (n - base) < SCAN_TILE ? (n - base) : SCAN_TILE;

    // striped, coalesced load into shared memory (identity 0 past the end)
#pragma unroll
    for (int r = 0; r < SCAN_ITEMS; ++r) {
        u32 j = r * PRIM_BLOCK + threadIdx.x;
        s_data[j] = (j < valid) ? load_widen<I, A>(in, base + j) : (A)0;
    }
    __syncthreads();
    // blocked: thread t owns items [t*ITEMS, (t+1)*ITEMS)
    A items[SCAN_ITEMS];
#pragma unroll
    for (int r = 0; r < SCAN_ITEMS; ++r) items[r] = s_data[threadIdx.x * SCAN_ITEMS + r];
    A tile_total;
    const A thread_prefix = warpath::block_exclusive_scan<PRIM_BLOCK>(
        warpath::thread_reduce(items, (A)0, warpath::Sum()), (A)0, s_warp, &tile_total, warpath::Sum());

    // look-back by warp 0
    if (threadIdx.x < 32) {
        const u32 lane = threadIdx.x;
        A exclusive = 0;
        if (tile == 0) {
            if (lane == 0) {
                st_volatile(&incl[0], tile_total);
                __threadfence();  // value before flag
                st_volatile(&flags[0], FLAG_PREFIX);
            }
        } else {
            if (lane == 0) {
                st_volatile(&agg[tile], tile_total);
                __threadfence();  // value before flag
                st_volatile(&flags[tile], FLAG_AGG);
            }
            i64 top = (i64)tile - 1;  // window: tiles top, top-1, ..., top-31 (lane 0 nearest)
            while (true) {
                const i64 p = top - (i64)lane;
                u32 f = (p >= 0) ? ld_volatile(&flags[p]) : FLAG_PREFIX;  // p < 0 never reached
                if (__any_sync(0xffffffffu, f == 0u)) continue;            // someone not ready: spin
                __threadfence();  // flag before value (pairs with the writer's fence)
                A v = 0;
                if (p >= 0) v = (f == FLAG_PREFIX) ? ld_volatile(&incl[p]) : ld_volatile(&agg[p]);
                const u32 prefix_mask = __ballot_sync(0xffffffffu, f == FLAG_PREFIX);
                // lanes up to and including the nearest PREFIX contribute
                const u32 stop = prefix_mask ? (u32)(__ffs(prefix_mask) - 1) : 31u;
                exclusive += warpath::warp_allreduce((lane <= stop) ? v : (A)0, warpath::Sum());
                if (prefix_mask) break;
                top -= 32;
            }
            if (lane == 0) {
                st_volatile(&incl[tile], exclusive + tile_total);
                __threadfence();  // value before flag
                st_volatile(&flags[tile], FLAG_PREFIX);
            }
        }
        if (lane == 0) s_exclusive = exclusive;
    }
    __syncthreads();
    warpath::thread_scan(items, s_exclusive + thread_prefix, inclusive != 0, warpath::Sum(),
                         &s_data[threadIdx.x * SCAN_ITEMS]);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < SCAN_ITEMS; ++r) {
        u32 j = r * PRIM_BLOCK + threadIdx.x;
        if (j < valid) out[base + j] = s_data[j];
    }
}

// S is the sum type the host sees, A the one the scan adds in (signed sums wrap as u64).
#define SCAN_ENTRY(NAME, I, S, A)                                                                      \
    extern "C" __global__ void NAME(const I* in, S* out, u64 n, u32 inclusive, u32* flags, S* agg, \
                                    S* incl, u64* counter) {                                        \
        scan_lookback<I, A>(in, (A*)out, n, inclusive, flags, (A*)agg, (A*)incl, counter);          \
    }
SCAN_ENTRY(primitives_scan_u32, u32, u64, u64)
SCAN_ENTRY(primitives_scan_i32, int, i64, u64)
SCAN_ENTRY(primitives_scan_u64, u64, u64, u64)
SCAN_ENTRY(primitives_scan_i64, i64, i64, u64)
SCAN_ENTRY(primitives_scan_f32, float, double, double)
SCAN_ENTRY(primitives_scan_f64, double, double, double)
SCAN_ENTRY(primitives_scan_flags_u8, unsigned char, u64, u64)

// --- select (compact by flags) and split (stable partition) ---------------------------------
// pos = exclusive scan of the flags (number of kept elements before i). The number kept is
// pos[n-1] + flag[n-1], read from device memory by every thread (no host round trip). n >= 1.
template <typename T>
__device__ void select_scatter(const T* in, const unsigned char* flags, const u64* pos, u64 n, T* out,
                               u64* count) {
    WARPATH_GRID_STRIDE(i, n) {
        if (flags[i]) out[pos[i]] = in[i];
        if (i == n - 1) *count = pos[i] + (flags[i] ? 1ull : 0ull);
    }
}
extern "C" __global__ void primitives_select_w32(const u32* in, const unsigned char* f, const u64* pos, u64 n, u32* out,
                                      u64* count) {
    select_scatter<u32>(in, f, pos, n, out, count);
}
extern "C" __global__ void primitives_select_w64(const u64* in, const unsigned char* f, const u64* pos, u64 n, u64* out,
                                      u64* count) {
    select_scatter<u64>(in, f, pos, n, out, count);
}

// Split: elements whose flag is 0 first, then those whose flag is 1, each group in input order.
// *boundary = number of 0-flag elements.
template <typename T>
__device__ void split_scatter(const T* in, const unsigned char* flags, const u64* pos, u64 n, T* out,
                              u64* boundary) {
    const u64 ones = pos[n - 1] + (flags[n - 1] ? 1ull : 0ull);
    const u64 zeros = n - ones;
    WARPATH_GRID_STRIDE(i, n) {
        u64 dst = flags[i] ? zeros + pos[i] : i - pos[i];
        out[dst] = in[i];
        if (i == 0) *boundary = zeros;
    }
}
extern "C" __global__ void primitives_split_w32(const u32* in, const unsigned char* f, const u64* pos, u64 n, u32* out,
                                     u64* boundary) {
    split_scatter<u32>(in, f, pos, n, out, boundary);
}
extern "C" __global__ void primitives_split_w64(const u64* in, const unsigned char* f, const u64* pos, u64 n, u64* out,
                                     u64* boundary) {
    split_scatter<u64>(in, f, pos, n, out, boundary);
}
// flags[i] = bit `bit` of the key's raw bits.
extern "C" __global__ void primitives_flags_from_bit_w32(const u32* keys, u64 n, u32 bit, unsigned char* flags) {
    WARPATH_GRID_STRIDE(i, n) { flags[i] = (unsigned char)((keys[i] >> bit) & 1u); }
}
extern "C" __global__ void primitives_flags_from_bit_w64(const u64* keys, u64 n, u32 bit, unsigned char* flags) {
    WARPATH_GRID_STRIDE(i, n) { flags[i] = (unsigned char)((keys[i] >> bit) & 1ull); }
}

// --- histogram of u32 keys -----------------------------------------------------------------
// bins[k] += 1 for each key k < nbins; *first_bad = smallest index of a key >= nbins
// (host initialises it to u64::MAX). Shared-memory counters when nbins <= HIST_SHARED_BINS.
#define HIST_SHARED_BINS 8192
extern "C" __global__ void primitives_histogram_u32(const u32* keys, u64 n, u64* bins, u32 nbins, u64* first_bad) {
    __shared__ u32 s[HIST_SHARED_BINS];
    const bool use_shared = nbins <= HIST_SHARED_BINS;
    if (use_shared) {
        warpath::block_fill(s, nbins, 0u);
        __syncthreads();
    }
    WARPATH_GRID_STRIDE(i, n) {
        u32 k = keys[i];
        if (k >= nbins) {
            atomicMin((unsigned long long*)first_bad, (unsigned long long)i);
        } else if (use_shared) {
            atomicAdd(&s[k], 1u);
        } else {
            atomicAdd((unsigned long long*)&bins[k], 1ull);
        }
    }
    // Per-block shared counters cannot overflow: a block sees at most ceil(n / (grid*256))*256
    // keys, below 2^32 for any n that fits in device memory with the capped grid.
    if (use_shared) {
        __syncthreads();
        for (u32 b = threadIdx.x; b < nbins; b += blockDim.x)
            if (s[b]) atomicAdd((unsigned long long*)&bins[b], (unsigned long long)s[b]);
    }
}

// --- Onesweep LSD radix sort (Adinets & Merrill 2022) ---------------------------------------
// 1. primitives_radix_histogram_*: one read of all keys builds the global histogram of every digit
//    (hist[pass][256], u64).
// 2. primitives_radix_prepare: per pass, exclusive scan of the 256 counts into digit start offsets, and
//    trivial[pass] = 1 when one digit holds all n keys (the pass would be the identity).
// 3. primitives_onesweep_*: one launch per pass. A block ranks its tile's keys by digit (warp-level
//    match_any, stable), publishes per-digit counts with a per-digit decoupled look-back, then
//    scatters the keys (and values) through shared memory so that writes of one digit are
//    contiguous. A trivial pass copies its tile instead (keeps the ping-pong buffers consistent
//    without a host round trip).
extern "C" __global__ void primitives_radix_histogram_w32(const u32* keys, u64 n, u32 passes, u64* hist) {
    __shared__ u32 s[4][RADIX];
    warpath::block_fill(&s[0][0], 4u * RADIX, 0u);
    __syncthreads();
    WARPATH_GRID_STRIDE(i, n) {
        u32 k = keys[i];
        for (u32 p = 0; p < passes; ++p) atomicAdd(&s[p][(k >> (p * RADIX_BITS)) & 0xFFu], 1u);
    }
    __syncthreads();
    for (u32 j = threadIdx.x; j < passes * RADIX; j += blockDim.x) {
        u32 c = (&s[0][0])[j];
        if (c) atomicAdd((unsigned long long*)&hist[j], (unsigned long long)c);
    }
}
extern "C" __global__ void primitives_radix_histogram_w64(const u64* keys, u64 n, u32 passes, u64* hist) {
    __shared__ u32 s[8][RADIX];
    warpath::block_fill(&s[0][0], 8u * RADIX, 0u);
    __syncthreads();
    WARPATH_GRID_STRIDE(i, n) {
        u64 k = keys[i];
        for (u32 p = 0; p < passes; ++p) atomicAdd(&s[p][(u32)(k >> (p * RADIX_BITS)) & 0xFFu], 1u);
    }
    __syncthreads();
    for (u32 j = threadIdx.x; j < passes * RADIX; j += blockDim.x) {
        u32 c = (&s[0][0])[j];
        if (c) atomicAdd((unsigned long long*)&hist[j], (unsigned long long)c);
    }
}
// grid = passes blocks of 256 threads. hist[pass][d] becomes the exclusive prefix (digit start).
extern "C" __global__ void primitives_radix_prepare(u64* hist, u64 n, u32* trivial) {
    __shared__ u64 s_warp[PRIM_BLOCK / 32];
    __shared__ u32 s_trivial;
    if (threadIdx.x == 0) s_trivial = 0;
    __syncthreads();
    u64* h = hist + (u64)blockIdx.x * RADIX;
    u64 c = h[threadIdx.x];
    if (c == n) s_trivial = 1;  // benign race: every writer stores 1
    u64 total;
    u64 start = warpath::block_exclusive_scan<PRIM_BLOCK>(c, (u64)0, s_warp, &total, warpath::Sum());
    h[threadIdx.x] = start;
    __syncthreads();
    if (threadIdx.x == 0) trivial[blockIdx.x] = s_trivial;
}

#define OS_FLAG_AGG 1ull
#define OS_FLAG_PREFIX 2ull
#define OS_VALUE_MASK ((1ull << 58) - 1)
__device__ __forceinline__ u64 os_word(u64 epoch, u64 flag, u64 value) {
    return (epoch << 60) | (flag << 58) | value;
}

template <typename K>
__device__ __forceinline__ u32 digit_of(K k, u32 shift) {
    return (u32)(k >> shift) & 0xFFu;
}

// K: u32 or u64 ordered bits. V: u32 or u64 payload (ignored when !HAS_V).
// ITEMS per thread; TILE = 256 * ITEMS keys. Shared memory (u64 keys or values, ITEMS 12):
// 24 KiB exchange + 3 KiB digits + 8 KiB warp counters + 3 KiB = 38 KiB < 48 KiB static limit.
template <typename K, typename V, bool HAS_V, int ITEMS>
__device__ void onesweep(const K* keys_in, K* keys_out, const V* vals_in, V* vals_out, u64 n, u32 pass,
                         const u64* digit_start_all, const u32* trivial, u64* status, u64* tile_counters) {
    constexpr int WARPS = PRIM_BLOCK / 32;
    constexpr int TILE = PRIM_BLOCK * ITEMS;
    constexpr int WARP_ITEMS = 32 * ITEMS;
    constexpr int XSZ = sizeof(K) > sizeof(V) ? sizeof(K) : sizeof(V);
    __shared__ __align__(16) unsigned char s_exchange[TILE * XSZ];
    __shared__ unsigned char s_digit[TILE];
    __shared__ u32 s_warp_hist[WARPS][RADIX];
    __shared__ u32 s_tile_start[RADIX];
    __shared__ u64 s_global_base[RADIX];
    __shared__ u32 s_scan[PRIM_BLOCK / 32];
    __shared__ u64 s_tile;
    K* s_keys = (K*)s_exchange;
    V* s_vals = (V*)s_exchange;

    const u32 tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const u32 shift = pass * RADIX_BITS;

    if (trivial[pass]) {
        // Every key has the same digit: the stable scatter is the identity. Copy the tile.
        const u64 base = (u64)blockIdx.x * TILE;
        for (u32 j = tid; j < TILE; j += PRIM_BLOCK) {
            u64 i = base + j;
            if (i < n) {
                keys_out[i] = keys_in[i];
                if (HAS_V) vals_out[i] = vals_in[i];
            }
        }
        return;
    }

    if (tid == 0) s_tile = atomicAdd((unsigned long long*)&tile_counters[pass], 1ull);
    for (u32 j = tid; j < WARPS * RADIX; j += PRIM_BLOCK) (&s_warp_hist[0][0])[j] = 0;
    __syncthreads();
    const u64 tile = s_tile;
    const u64 base = tile * TILE;
    const u64 remaining = n - base;
    const u32 valid = remaining < (u64)TILE ? (u32)remaining : (u32)TILE;

    // 1. warp-local stable ranks. Warp w owns tile items [w*WARP_ITEMS, (w+1)*WARP_ITEMS) and
    //    walks them in rounds of 32 consecutive items, so (round, lane) order is input order.
    K keys[ITEMS];
    u32 digits[ITEMS];
    u32 ranks[ITEMS];
    const u32 lt = warpath_lanemask_lt();  // common.cuh (also under the CPU simulator)
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const u32 j = warp * WARP_ITEMS + r * 32 + lane;
        const bool ok = j < valid;
        keys[r] = ok ? keys_in[base + j] : (K)0;
        const u32 d = ok ? digit_of<K>(keys[r], shift) : RADIX;  // RADIX = "no item"
        digits[r] = d;
        const u32 peers = __match_any_sync(0xffffffffu, d);
        u32 count_before = 0;
        if (d < RADIX) count_before = s_warp_hist[warp][d];
        __syncwarp();  // every peer has read the counter before the leader bumps it
        const u32 leader = 31 - __clz(peers);
        if (d < RADIX && lane == leader) s_warp_hist[warp][d] = count_before + __popc(peers);
        __syncwarp();  // bump visible to the next round
        ranks[r] = count_before + __popc(peers & lt);
    }
    __syncthreads();

    // 2. per digit (thread d): exclusive scan over warps in place, tile count of digit d.
    const u32 d = tid;  // PRIM_BLOCK == RADIX
    u32 tile_count = 0;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        u32 c = s_warp_hist[w][d];
        s_warp_hist[w][d] = tile_count;
        tile_count += c;
    }

    // 3. publish this tile's count of digit d, then look back for the counts of earlier tiles.
    const u64 epoch = (u64)pass + 1;
    u64* my = &status[tile * RADIX + d];
    if (tile == 0) {
        st_volatile<u64>(my, os_word(epoch, OS_FLAG_PREFIX, tile_count));
    } else {
        st_volatile<u64>(my, os_word(epoch, OS_FLAG_AGG, tile_count));
    }
    u32 total_unused;
    const u32 tile_start =
        warpath::block_exclusive_scan<PRIM_BLOCK>(tile_count, 0u, s_scan, &total_unused, warpath::Sum());
    s_tile_start[d] = tile_start;
    u64 exclusive = 0;
    if (tile > 0) {
        i64 p = (i64)tile - 1;
        while (true) {
            const u64 w = ld_volatile<u64>(&status[(u64)p * RADIX + d]);
            const u64 flag = (w >> 58) & 3ull;
            if ((w >> 60) != epoch || flag == 0) continue;  // not published yet in this pass
            exclusive += w & OS_VALUE_MASK;
            if (flag == OS_FLAG_PREFIX) break;
            --p;  // p >= 0 here: tile 0 always publishes a PREFIX, so the walk stops there
        }
        st_volatile<u64>(my, os_word(epoch, OS_FLAG_PREFIX, exclusive + tile_count));
    }
    // global slot of the item at local sorted position i with digit d:
    //   digit_start[d] + exclusive[d] + (i - tile_start[d])   (u64 arithmetic wraps back)
    s_global_base[d] = digit_start_all[(u64)pass * RADIX + d] + exclusive - (u64)tile_start;
    __syncthreads();

    // 4. local sort through shared memory.
    u32 local[ITEMS];
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const u32 dd = digits[r];
        if (dd < RADIX) {
            const u32 l = s_tile_start[dd] + s_warp_hist[warp][dd] + ranks[r];
            local[r] = l;
            s_keys[l] = keys[r];
            s_digit[l] = (unsigned char)dd;
        }
    }
    __syncthreads();
    for (u32 i = tid; i < valid; i += PRIM_BLOCK) {
        keys_out[s_global_base[s_digit[i]] + i] = s_keys[i];
    }
    if (HAS_V) {
        __syncthreads();  // the exchange buffer is reused for values
#pragma unroll
        for (int r = 0; r < ITEMS; ++r) {
            const u32 j = warp * WARP_ITEMS + r * 32 + lane;
            if (digits[r] < RADIX) s_vals[local[r]] = vals_in[base + j];
        }
        __syncthreads();
        for (u32 i = tid; i < valid; i += PRIM_BLOCK) {
            vals_out[s_global_base[s_digit[i]] + i] = s_vals[i];
        }
    }
}

// __launch_bounds__(PRIM_BLOCK, 4): four resident blocks per SM (64 registers, and 4 x 38 KiB of
// shared memory fits an A100's or H100's SM). Without the minimum, ptxas picks between 64 and
// 111 registers and sometimes spills, depending on incidental changes to the code.
#define OS_ITEMS_NARROW 16
#define OS_ITEMS_WIDE 12
WARPATH_SHARE_WITH_HOST(PRIM_BLOCK, RADIX, SCAN_TILE, OS_ITEMS_NARROW, OS_ITEMS_WIDE)
#define ONESWEEP_ENTRY(NAME, K, V, HAS_V, ITEMS)                                                         \
    extern "C" __global__ void __launch_bounds__(PRIM_BLOCK, 4)                                          \
        NAME(const K* keys_in, K* keys_out, const V* vals_in, V* vals_out, u64 n, u32 pass,                \
             const u64* digit_start, const u32* trivial, u64* status, u64* tile_counters) {              \
        onesweep<K, V, HAS_V, ITEMS>(keys_in, keys_out, vals_in, vals_out, n, pass, digit_start, trivial, \
                                     status, tile_counters);                                             \
    }
ONESWEEP_ENTRY(primitives_onesweep_keys_w32, u32, u32, false, OS_ITEMS_NARROW)
ONESWEEP_ENTRY(primitives_onesweep_pairs_w32_w32, u32, u32, true, OS_ITEMS_NARROW)
ONESWEEP_ENTRY(primitives_onesweep_pairs_w32_w64, u32, u64, true, OS_ITEMS_WIDE)
ONESWEEP_ENTRY(primitives_onesweep_keys_w64, u64, u32, false, OS_ITEMS_WIDE)
ONESWEEP_ENTRY(primitives_onesweep_pairs_w64_w32, u64, u32, true, OS_ITEMS_WIDE)
ONESWEEP_ENTRY(primitives_onesweep_pairs_w64_w64, u64, u64, true, OS_ITEMS_WIDE)

// --- distinct on sorted ordered bits -------------------------------------------------------
// Numeric equality of floats (numpy's unique, equal_nan=True) on ordered bits: -0.0 and +0.0 are
// adjacent (NEG_ZERO, NEG_ZERO + 1) and every NaN orders above +inf, so mapping -0.0 to +0.0 and
// every NaN to INF + 1 gives one class per value, non-decreasing along sorted keys
// (SortKey::numeric_class on the host).
#define F32_ORD_NEG_ZERO 0x7F800000u
#define F32_ORD_INF 0xFF000001u
#define F64_ORD_NEG_ZERO 0x7FF0000000000000ull
#define F64_ORD_INF 0xFFE0000000000001ull
__device__ __forceinline__ u32 numeric_class(u32 t) {
    return t == F32_ORD_NEG_ZERO ? t + 1 : (t > F32_ORD_INF ? F32_ORD_INF + 1 : t);
}
__device__ __forceinline__ u64 numeric_class(u64 t) {
    return t == F64_ORD_NEG_ZERO ? t + 1 : (t > F64_ORD_INF ? F64_ORD_INF + 1 : t);
}

// heads[i] = 1 when i starts a run of equal keys (equal classes when numeric_float != 0: float
// keys under numeric equality). Also sets *unsorted = 1 when keys[i-1] > keys[i] (used by
// distinct_sorted to reject unsorted input; host zeroes it).
template <typename K>
__device__ void mark_heads(const K* keys, u64 n, u32 numeric_float, unsigned char* heads, u32* unsorted) {
    WARPATH_GRID_STRIDE(i, n) {
        if (i == 0) {
            heads[0] = 1;
        } else {
            K a = keys[i - 1], b = keys[i];
            const bool differ = numeric_float ? numeric_class(a) != numeric_class(b) : a != b;
            heads[i] = differ ? 1 : 0;
            if (a > b) *unsorted = 1;
        }
    }
}
extern "C" __global__ void primitives_mark_heads_w32(const u32* k, u64 n, u32 nf, unsigned char* h, u32* u) {
    mark_heads<u32>(k, n, nf, h, u);
}
extern "C" __global__ void primitives_mark_heads_w64(const u64* k, u64 n, u32 nf, unsigned char* h, u32* u) {
    mark_heads<u64>(k, n, nf, h, u);
}

// pos = exclusive scan of heads. Group of sorted position i: g = pos[i] + heads[i] - 1.
// Writes values[g] at heads, starts[g] = i at heads, ends[g] = i + 1 at tails (into `counts`),
// and *m = number of groups.
template <typename K>
__device__ void distinct_scatter(const K* keys, const unsigned char* heads, const u64* pos, u64 n, K* values,
                                 u64* starts, u64* counts, u64* m) {
    WARPATH_GRID_STRIDE(i, n) {
        const u64 g = pos[i] + (u64)heads[i] - 1;
        if (heads[i]) {
            values[g] = keys[i];
            starts[g] = i;
        }
        if (i == n - 1 || heads[i + 1]) counts[g] = i + 1;
        if (i == n - 1) *m = g + 1;
    }
}
extern "C" __global__ void primitives_distinct_scatter_w32(const u32* k, const unsigned char* h, const u64* pos, u64 n,
                                                u32* v, u64* s, u64* c, u64* m) {
    distinct_scatter<u32>(k, h, pos, n, v, s, c, m);
}
extern "C" __global__ void primitives_distinct_scatter_w64(const u64* k, const unsigned char* h, const u64* pos, u64 n,
                                                u64* v, u64* s, u64* c, u64* m) {
    distinct_scatter<u64>(k, h, pos, n, v, s, c, m);
}
// counts[g] = ends[g] - starts[g] for g < *m (grid over n >= *m).
extern "C" __global__ void primitives_distinct_counts(const u64* starts, u64* counts, const u64* m, u64 n) {
    const u64 groups = *m;
    WARPATH_GRID_STRIDE(g, n) {
        if (g < groups) counts[g] -= starts[g];
    }
}
// inverse[perm[i]] = group of sorted position i (perm = argsort; identity when perm == null).
extern "C" __global__ void primitives_distinct_inverse(const unsigned char* heads, const u64* pos, const u32* perm, u64 n,
                                            u32* inverse) {
    WARPATH_GRID_STRIDE(i, n) {
        const u32 g = (u32)(pos[i] + (u64)heads[i] - 1);
        const u64 dst = perm ? (u64)perm[i] : i;
        inverse[dst] = g;
    }
}
