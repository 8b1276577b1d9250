// k-means (Lloyd) kernels for crates/clustering.
//
// A label is defined once, on every backend (crates/clustering/src/assign.rs and lloyd.rs): the
// centre with the smallest dist2_f64(x, c) -- the point widened to double, one subtraction and
// one multiplication per coordinate, the squares added into eight partial sums (coordinate t
// into sum t % 8, in order) combined as ((a0+a4)+(a2+a6))+((a1+a5)+(a3+a7)), no fused
// multiply-add -- ties to the lower centre index. Every path here returns exactly that label:
// the distances it compares are computed with __dadd_rn / __dmul_rn (which nvcc never fuses)
// in that order, so they are the CPU's bits.
//
// Statistics layout (doubles), shared by every path: sums[k*d] (row-major, per cluster),
// counts[k] (weight per cluster), inertia, changed (points whose label changed); the product
// path appends q[k] (per cluster, the weighted |x|^2, for the host's formula inertia).
//
// Paths:
// - direct (small k*d): clustering_kmeans_step_small_* does assignment AND accumulation in one
//   kernel: centroids (double) in shared memory, one thread per point computing the
//   reference's distance to every centroid (exact by construction, as the CPU's direct path);
//   each block accumulates into a shared copy of the statistics, then writes its own row of
//   `partials`; clustering_kmeans_reduce_partials adds the rows in block order.
// - product (the shapes embeddings come in), per chunk of points:
//   1. clustering_kmeans_top_{simt,mma}_*: a tile of points against tiles of centres in
//      shared memory, e_j = |c_j|^2 - 2 x.c_j in the element type -- a register-blocked FMA
//      product (simt) or tensor cores (mma: FP64 DMMA m8n8k4 for double, 3xTF32 m16n8k8 for
//      float) -- keeping the 4 smallest values and their centres per point (the CPU's TOP); or
//      the host multiplies with cuBLAS and clustering_kmeans_top_rows_* reads the product
//      matrix for the same lists.
//   2. clustering_kmeans_settle_*: the CPU's settle rule (assign.rs `finish`): with the error
//      bound err(x) = (3 (d+8) u + 4 (d+4) eps64) (|x| + cmax)^2 (u: the product's unit
//      roundoff, chosen by the host per path), a single candidate within 2 err of the best is
//      the label; otherwise the candidates within 2 err are compared by exact distances. A
//      point whose 4th candidate is within the band too goes to a list, and
//      clustering_kmeans_settle_all_* compares it with every centre, a block per point.
//   3. after the last chunk, the statistics in a fixed order: the points sorted by label,
//      clustering_kmeans_starts, clustering_kmeans_accumulate_* per tile of the sorted order,
//      clustering_kmeans_gather (see there).
// - clustering_kmeans_exact_inertia_*: per block, the weighted exact distances of the points
//   to their labelled centroids (a fit's final inertia after product steps).
// Labels stay on the device; labels[i] = 0xffffffff means "not assigned yet". The product
// path's sums, counts and q are added in a fixed order (the same bits from run to run); only the
// changed-label count is an atomic (an integer count, exact in a double).
#include "common.cuh"
#include "block/fill.cuh"
#include "block/reduce.cuh"
#define KM_BLOCK 256
// Dynamic shared memory the small path may use (the default limit, no opt-in).
#define KM_SMALL_SHARED_LIMIT (48 * 1024)
// Candidates kept per point by the product kernels (assign.rs TOP).
#define KM_TOP 4
// Points per block of the product kernels.
#define SIMT_M 64
// Points per block of the tensor-core kernels: 8 warps of 8 (double) or 16 (float) points.
#define MMA_M_F64 64
#define MMA_M_F32 128
// Points settled per warp (groups of 8 lanes, one point each).
#define SETTLE_PER_WARP 4
WARPATH_SHARE_WITH_HOST(KM_BLOCK, KM_SMALL_SHARED_LIMIT, KM_TOP, SIMT_M, MMA_M_F64, MMA_M_F32, SETTLE_PER_WARP)

#define FULL_MASK 0xffffffffu
#define NO_CENTRE 0xffffffffu

template <typename T>
__device__ __forceinline__ T infinity();
template <>
__device__ __forceinline__ float infinity<float>() {
    return __int_as_float(0x7f800000);
}
template <>
__device__ __forceinline__ double infinity<double>() {
    return __longlong_as_double(0x7ff0000000000000LL);
}

// ---------------------------------------------------------------------------------------------
// The reference distance (lloyd.rs dist2_f64), bit for bit.

__device__ __forceinline__ double combine8(const double a[8]) {
    return __dadd_rn(__dadd_rn(__dadd_rn(a[0], a[4]), __dadd_rn(a[2], a[6])),
                     __dadd_rn(__dadd_rn(a[1], a[5]), __dadd_rn(a[3], a[7])));
}

// dist2_f64(x, c) by one thread.
template <typename T>
__device__ __forceinline__ double dist2_ref(const T* __restrict__ x, const double* __restrict__ c, u32 d) {
    double acc[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) acc[u] = 0.0;
    u32 t = 0;
    for (; t + 8 <= d; t += 8) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            const double v = (double)x[t + u] - c[t + u];
            acc[u] = __dadd_rn(acc[u], __dmul_rn(v, v));
        }
    }
#pragma unroll
    for (int u = 0; u < 7; ++u) {
        if (t + u < d) {
            const double v = (double)x[t + u] - c[t + u];
            acc[u] = __dadd_rn(acc[u], __dmul_rn(v, v));
        }
    }
    return combine8(acc);
}

// Lane l of a group of 8 lanes holds partial sum l of a dist2_f64-ordered sum: every lane of
// the group gets combine8 of the group's partials (xor 4, 2, 1 pairs them in combine8's order;
// IEEE addition is commutative, so both lanes of a pair get the same bits). All 32 lanes call.
__device__ __forceinline__ double group_combine8(double s) {
    s = __dadd_rn(s, __shfl_xor_sync(FULL_MASK, s, 4));
    s = __dadd_rn(s, __shfl_xor_sync(FULL_MASK, s, 2));
    s = __dadd_rn(s, __shfl_xor_sync(FULL_MASK, s, 1));
    return s;
}

// dist2_f64(x, c) by a group of 8 lanes (lane l = its index in the group); 0 where !active.
template <typename T>
__device__ __forceinline__ double group_dist2(const T* __restrict__ x, const double* __restrict__ c, u32 d,
                                              u32 l, bool active) {
    double s = 0.0;
    if (active) {
        for (u32 t = l; t < d; t += 8) {
            const double v = (double)x[t] - c[t];
            s = __dadd_rn(s, __dmul_rn(v, v));
        }
    }
    return group_combine8(s);
}

// |x|^2 in assign.rs norm2's order, by a group of 8 lanes.
template <typename T>
__device__ __forceinline__ double group_norm2(const T* __restrict__ x, u32 d, u32 l, bool active) {
    double s = 0.0;
    if (active) {
        for (u32 t = l; t < d; t += 8) {
            const double v = (double)x[t];
            s = __dadd_rn(s, __dmul_rn(v, v));
        }
    }
    return group_combine8(s);
}

// ---------------------------------------------------------------------------------------------
// Direct path: one kernel per iteration. Dynamic shared memory: stats (kd + k + 2 doubles),
// then the centroids (kd doubles). The host checks that this fits in 48 KiB.
template <typename T>
__device__ void step_small(const T* __restrict__ x, const T* __restrict__ w, u32 has_w,
                           const double* __restrict__ c, u64 n, u32 d, u32 k,
                           u32* __restrict__ labels, double* __restrict__ partials) {
    WARPATH_DYNAMIC_SHARED(double, smem);
    const u64 kd = (u64)k * d;
    const u64 stats = kd + k + 2;
    double* s_stats = smem;
    double* s_c = smem + stats;
    warpath::block_fill(s_stats, stats, 0.0);
    for (u64 i = threadIdx.x; i < kd; i += blockDim.x) s_c[i] = c[i];
    __syncthreads();

    double inertia = 0.0;
    double changed = 0.0;
    WARPATH_GRID_STRIDE(p, n) {
        const T* xp = x + p * d;
        double best = 0.0;
        u32 bl = 0;
        for (u32 j = 0; j < k; ++j) {
            const double dist = dist2_ref(xp, s_c + (u64)j * d, d);
            if (j == 0 || dist < best) {  // ties go to the lower index
                best = dist;
                bl = j;
            }
        }
        const double wp = has_w ? (double)w[p] : 1.0;
        if (labels[p] != bl) changed += 1.0;
        labels[p] = bl;
        for (u32 t = 0; t < d; ++t) atomicAdd(&s_stats[(u64)bl * d + t], wp * (double)xp[t]);
        atomicAdd(&s_stats[kd + bl], wp);
        inertia += wp * best;
    }
    inertia = warpath::warp_allreduce(inertia, warpath::Sum());
    changed = warpath::warp_allreduce(changed, warpath::Sum());
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&s_stats[kd + k], inertia);
        atomicAdd(&s_stats[kd + k + 1], changed);
    }
    __syncthreads();
    double* out = partials + (u64)blockIdx.x * stats;
    for (u64 i = threadIdx.x; i < stats; i += blockDim.x) out[i] = s_stats[i];
}

extern "C" __global__ void clustering_kmeans_step_small_f32(const float* x, const float* w, u32 has_w,
                                                            const double* c, u64 n, u32 d, u32 k,
                                                            u32* labels, double* partials) {
    step_small<float>(x, w, has_w, c, n, d, k, labels, partials);
}

extern "C" __global__ void clustering_kmeans_step_small_f64(const double* x, const double* w, u32 has_w,
                                                            const double* c, u64 n, u32 d, u32 k,
                                                            u32* labels, double* partials) {
    step_small<double>(x, w, has_w, c, n, d, k, labels, partials);
}

// out[i] = sum over blocks b (in order) of partials[b * stats + i].
extern "C" __global__ void clustering_kmeans_reduce_partials(const double* __restrict__ partials, u64 blocks,
                                                             u64 stats, double* __restrict__ out) {
    WARPATH_GRID_STRIDE(i, stats) {
        double s = 0.0;
        for (u64 b = 0; b < blocks; ++b) s += partials[b * stats + i];
        out[i] = s;
    }
}

// ---------------------------------------------------------------------------------------------
// The 4 smallest product values of a point and their centres, smallest first; ties in value
// to the lower centre. Empty entries are (+inf, NO_CENTRE). Every centre that was scanned and is
// not in the list has a value of at least v[3] (the CPU's floor).
template <typename T>
struct Top4 {
    T v[KM_TOP];
    u32 j[KM_TOP];
};

template <typename T>
__device__ __forceinline__ void top_init(Top4<T>& t) {
#pragma unroll
    for (int r = 0; r < KM_TOP; ++r) {
        t.v[r] = infinity<T>();
        t.j[r] = NO_CENTRE;
    }
}

template <typename T>
__device__ __forceinline__ bool before(T a, u32 ia, T b, u32 ib) {
    return a < b || (a == b && ia < ib);
}

template <typename T>
__device__ __forceinline__ void order_pair(Top4<T>& t, int a, int b) {
    if (before(t.v[b], t.j[b], t.v[a], t.j[a])) {
        const T v = t.v[a];
        const u32 j = t.j[a];
        t.v[a] = t.v[b];
        t.j[a] = t.j[b];
        t.v[b] = v;
        t.j[b] = j;
    }
}

// Adds centre j with value v; a thread offers its centres in increasing j, so a strict < keeps
// the lower centre ahead on equal values.
template <typename T>
__device__ __forceinline__ void top_insert(Top4<T>& t, T v, u32 j) {
    if (v < t.v[KM_TOP - 1]) {
        t.v[KM_TOP - 1] = v;
        t.j[KM_TOP - 1] = j;
        order_pair(t, 2, 3);
        order_pair(t, 1, 2);
        order_pair(t, 0, 1);
    }
}

// The 4 smallest of the union of t (this lane's) and the list of lane (lane ^ mask), in the
// total order (value, centre): both lanes get the same list. All 32 lanes call.
template <typename T>
__device__ __forceinline__ void top_merge_xor(Top4<T>& t, int mask) {
    Top4<T> o;
#pragma unroll
    for (int r = 0; r < KM_TOP; ++r) {
        o.v[r] = warpath::shfl<warpath::Shfl::Xor>(t.v[r], (unsigned)mask);
        o.j[r] = warpath::shfl<warpath::Shfl::Xor>(t.j[r], (unsigned)mask);
    }
    // The element-wise smaller of an ascending and a descending list: the 4 smallest, as a
    // bitonic sequence; two compare-exchange rounds sort it.
#pragma unroll
    for (int r = 0; r < KM_TOP; ++r) {
        if (before(o.v[KM_TOP - 1 - r], o.j[KM_TOP - 1 - r], t.v[r], t.j[r])) {
            t.v[r] = o.v[KM_TOP - 1 - r];
            t.j[r] = o.j[KM_TOP - 1 - r];
        }
    }
    order_pair(t, 0, 2);
    order_pair(t, 1, 3);
    order_pair(t, 0, 1);
    order_pair(t, 2, 3);
}

template <typename T>
__device__ __forceinline__ void top_store(const Top4<T>& t, u64 i, T* __restrict__ top_val, u32* __restrict__ top_idx) {
#pragma unroll
    for (int r = 0; r < KM_TOP; ++r) {
        top_val[i * KM_TOP + r] = t.v[r];
        top_idx[i * KM_TOP + r] = t.j[r];
    }
}

// ---------------------------------------------------------------------------------------------
// Product path, CUDA cores: SIMT_M points x SIMT_N centres per step, register-blocked 4 x 8 per
// thread (thread (tx, ty) of 16 x 16 owns points ty + 16 i, i < 4, and centres tx + 16 j, j < 8),
// fused multiply-adds in T. Each thread keeps the 4 smallest values of each of its points over
// its centres; the 16 lanes that share a point merge their lists at the end.
#define SIMT_N 128
#define SIMT_K 8

template <typename T>
__device__ void top_simt(const T* __restrict__ x, const T* __restrict__ ct, const T* __restrict__ norms,
                         u64 p0, u64 m, u32 d, u32 k, T* __restrict__ top_val, u32* __restrict__ top_idx) {
    __shared__ T As[SIMT_K][SIMT_M + 4];
    __shared__ T Bs[SIMT_K][SIMT_N + 4];
    const u32 tid = threadIdx.x;
    const u32 tx = tid % 16, ty = tid / 16;
    const u64 i0 = (u64)blockIdx.x * SIMT_M;  // first point of the tile, in the chunk
    Top4<T> top[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) top_init(top[i]);

    for (u32 c0 = 0; c0 < k; c0 += SIMT_N) {
        T acc[4][8];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = 0;
        for (u32 k0 = 0; k0 < d; k0 += SIMT_K) {
#pragma unroll
            for (int q = 0; q < (SIMT_M * SIMT_K) / KM_BLOCK; ++q) {
                const u32 e = tid + KM_BLOCK * q;
                const u32 r = e / SIMT_K, kk = e % SIMT_K;
                const u64 i = i0 + r;
                const u32 col = k0 + kk;
                As[kk][r] = (i < m && col < d) ? x[(p0 + i) * d + col] : (T)0;
            }
#pragma unroll
            for (int q = 0; q < (SIMT_N * SIMT_K) / KM_BLOCK; ++q) {
                const u32 e = tid + KM_BLOCK * q;
                const u32 r = e / SIMT_K, kk = e % SIMT_K;
                const u64 cj = (u64)c0 + r;
                const u32 col = k0 + kk;
                Bs[kk][r] = (cj < k && col < d) ? ct[cj * d + col] : (T)0;
            }
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < SIMT_K; ++kk) {
                T a[4], b[8];
#pragma unroll
                for (int i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
                for (int j = 0; j < 8; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
            }
            __syncthreads();
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const u32 cj = c0 + tx + 16 * j;
            if (cj < k) {
                const T nrm = norms[cj];
#pragma unroll
                for (int i = 0; i < 4; ++i) top_insert(top[i], nrm - (T)2 * acc[i][j], cj);
            }
        }
    }
    // The 16 threads with the same ty are 16 consecutive lanes (tx = lane % 16).
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int o = 1; o < 16; o <<= 1) top_merge_xor(top[i], o);
    if (tx == 0) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const u64 ii = i0 + ty + 16 * i;
            if (ii < m) top_store(top[i], ii, top_val, top_idx);
        }
    }
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_top_simt_f32(const float* x, const float* ct, const float* norms, u64 p0, u64 m, u32 d,
                                   u32 k, float* top_val, u32* top_idx) {
    top_simt<float>(x, ct, norms, p0, m, d, k, top_val, top_idx);
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_top_simt_f64(const double* x, const double* ct, const double* norms, u64 p0, u64 m,
                                   u32 d, u32 k, double* top_val, u32* top_idx) {
    top_simt<double>(x, ct, norms, p0, m, d, k, top_val, top_idx);
}

// ---------------------------------------------------------------------------------------------
// Product path, tensor cores (sm_80+), through the PTX mma.sync instructions (their fragment
// layouts are specified by the PTX ISA; sim/cuda_sim.hpp models them). double: FP64 DMMA
// m8n8k4 (correctly rounded fused multiply-adds). float: 3xTF32 m16n8k8: each operand is split
// into a TF32 high part and a TF32 low part (the rounding residual, exact in float, rounded to
// TF32), and x.c = xl.ch + xh.cl + xh.ch accumulated in float -- the dropped xl.cl and the two
// splitting residuals stay below 3 * 2^-22 |x_t c_t| per term, so the product is within a small
// multiple of float's own rounding, which the host's unit for this path covers (cuda.rs).
// Plain TF32 (2^-11) would not.
//
// Block: MMA_M_F64 / MMA_M_F32 points (8 warps x one row of atoms: 8 points of DMMA, 16 of TF32) against MMA_N
// centres per step; each warp computes all MMA_N centres of its points, 8 atoms wide, so a
// thread holds, per point it owns, 2 adjacent centres of each atom: it offers them to its own
// list, and the 4 lanes of a point (lane % 4) merge their lists at the end.
#define MMA_N 64
#define MMA_K 16
#define MMA_PAD 4

#ifndef WARPATH_CUDA_SIM
// d = a b + c on an m8n8k4 FP64 tile (lane l: A(l/4, l%4), B(l%4, l/4), C/D(l/4, 2(l%4) + v)).
__device__ __forceinline__ void warpath_mma_m8n8k4_f64(double (&d)[2], double a, double b, const double (&c)[2]) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};\n"
                 : "=d"(d[0]), "=d"(d[1])
                 : "d"(a), "d"(b), "d"(c[0]), "d"(c[1]));
}
// d = a b + c on an m16n8k8 TF32 tile with float accumulators (layouts: sim/cuda_sim.hpp).
__device__ __forceinline__ void warpath_mma_m16n8k8_tf32(float (&d)[4], const unsigned (&a)[4],
                                                         const unsigned (&b)[2], const float (&c)[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
          "f"(c[3]));
}
// The nearest TF32 value, ties away from zero, as a bit pattern.
__device__ __forceinline__ unsigned warpath_cvt_rna_tf32(float v) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
    return r;
}
#endif

// The high and low TF32 parts of v.
__device__ __forceinline__ void split_tf32(float v, unsigned& hi, unsigned& lo) {
    hi = warpath_cvt_rna_tf32(v);
    lo = warpath_cvt_rna_tf32(v - __uint_as_float(hi));
}

template <typename T>
struct MmaShape;
template <>
struct MmaShape<double> {
    static constexpr int FM = 8;    // points per atom (and per warp)
    static constexpr int FK = 4;    // dimensions per atom
    static constexpr int ROWS = 1;  // points per thread
};
template <>
struct MmaShape<float> {
    static constexpr int FM = 16;
    static constexpr int FK = 8;
    static constexpr int ROWS = 2;
};
#define MMA_ATOMS_N (MMA_N / 8)

template <typename T>
__device__ void top_mma(const T* __restrict__ x, const T* __restrict__ ct, const T* __restrict__ norms,
                        u64 p0, u64 m, u32 d, u32 k, T* __restrict__ top_val, u32* __restrict__ top_idx) {
    using S = MmaShape<T>;
    constexpr int BM = sizeof(T) == 8 ? MMA_M_F64 : MMA_M_F32;  // points per block
    static_assert(BM == S::FM * (KM_BLOCK / 32), "one row of atoms per warp");
    constexpr int LDA = MMA_K + MMA_PAD;
    __shared__ T As[BM * LDA];
    __shared__ T Bs[MMA_N * LDA];
    const u32 tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, i4 = lane % 4;
    const u64 i0 = (u64)blockIdx.x * BM;
    const u32 r0 = warp * S::FM + g;  // the thread's first point in the tile (second: r0 + 8)
    Top4<T> top[S::ROWS];
#pragma unroll
    for (int r = 0; r < S::ROWS; ++r) top_init(top[r]);

    for (u32 c0 = 0; c0 < k; c0 += MMA_N) {
        T acc[MMA_ATOMS_N][2 * S::ROWS];
#pragma unroll
        for (int a = 0; a < MMA_ATOMS_N; ++a)
#pragma unroll
            for (int v = 0; v < 2 * S::ROWS; ++v) acc[a][v] = 0;
        for (u32 k0 = 0; k0 < d; k0 += MMA_K) {
            for (u32 e = tid; e < BM * MMA_K; e += KM_BLOCK) {
                const u32 r = e / MMA_K, kk = e % MMA_K, col = k0 + kk;
                const u64 i = i0 + r;
                As[r * LDA + kk] = (i < m && col < d) ? x[(p0 + i) * d + col] : (T)0;
            }
            for (u32 e = tid; e < MMA_N * MMA_K; e += KM_BLOCK) {
                const u32 r = e / MMA_K, kk = e % MMA_K, col = k0 + kk;
                const u64 cj = (u64)c0 + r;
                Bs[r * LDA + kk] = (cj < k && col < d) ? ct[cj * d + col] : (T)0;
            }
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < MMA_K; kk += S::FK) {
                if constexpr (sizeof(T) == 8) {
                    const double a = As[r0 * LDA + kk + i4];
#pragma unroll
                    for (int at = 0; at < MMA_ATOMS_N; ++at) {
                        const double b = Bs[(at * 8 + g) * LDA + kk + i4];
                        warpath_mma_m8n8k4_f64(acc[at], a, b, acc[at]);
                    }
                } else {
                    unsigned ah[4], al[4];
                    split_tf32(As[r0 * LDA + kk + i4], ah[0], al[0]);
                    split_tf32(As[(r0 + 8) * LDA + kk + i4], ah[1], al[1]);
                    split_tf32(As[r0 * LDA + kk + i4 + 4], ah[2], al[2]);
                    split_tf32(As[(r0 + 8) * LDA + kk + i4 + 4], ah[3], al[3]);
#pragma unroll
                    for (int at = 0; at < MMA_ATOMS_N; ++at) {
                        unsigned bh[2], bl[2];
                        split_tf32(Bs[(at * 8 + g) * LDA + kk + i4], bh[0], bl[0]);
                        split_tf32(Bs[(at * 8 + g) * LDA + kk + i4 + 4], bh[1], bl[1]);
                        // Small terms first.
                        warpath_mma_m16n8k8_tf32(acc[at], al, bh, acc[at]);
                        warpath_mma_m16n8k8_tf32(acc[at], ah, bl, acc[at]);
                        warpath_mma_m16n8k8_tf32(acc[at], ah, bh, acc[at]);
                    }
                }
            }
            __syncthreads();
        }
        // Accumulator v of atom at: point r0 + 8 (v / 2), centre c0 + 8 at + 2 (lane % 4) + v % 2
        // (increasing centres per point, as top_insert wants).
#pragma unroll
        for (int at = 0; at < MMA_ATOMS_N; ++at) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const u32 cj = c0 + at * 8 + 2 * i4 + h;
                if (cj < k) {
                    const T nrm = norms[cj];
#pragma unroll
                    for (int r = 0; r < S::ROWS; ++r) top_insert(top[r], nrm - (T)2 * acc[at][2 * r + h], cj);
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < S::ROWS; ++r) {
        top_merge_xor(top[r], 1);
        top_merge_xor(top[r], 2);
    }
    if (i4 == 0) {
#pragma unroll
        for (int r = 0; r < S::ROWS; ++r) {
            const u64 ii = i0 + r0 + 8 * r;
            if (ii < m) top_store(top[r], ii, top_val, top_idx);
        }
    }
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_top_mma_f32(const float* x, const float* ct, const float* norms, u64 p0, u64 m, u32 d,
                                  u32 k, float* top_val, u32* top_idx) {
    top_mma<float>(x, ct, norms, p0, m, d, k, top_val, top_idx);
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_top_mma_f64(const double* x, const double* ct, const double* norms, u64 p0, u64 m,
                                  u32 d, u32 k, double* top_val, u32* top_idx) {
    top_mma<double>(x, ct, norms, p0, m, d, k, top_val, top_idx);
}

// ---------------------------------------------------------------------------------------------
// Product path, from a product matrix (cuBLAS, gpu-runtime's blas.rs): g holds rows x k values
// x_i . c_j (row-major, a row per point), made by the host for `rows` consecutive points of the
// chunk starting at chunk point `first`. One warp per point: lane l offers centres l, l + 32,
// ... (increasing, so ties keep the lower centre), e_j = |c_j|^2 - 2 g_ij in T as the other
// product kernels compute it, then the lanes merge their lists.
template <typename T>
__device__ void top_rows(const T* __restrict__ g, const T* __restrict__ norms, u64 rows, u32 k, u64 first,
                         T* __restrict__ top_val, u32* __restrict__ top_idx) {
    const u32 lane = threadIdx.x % 32;
    const u64 warps = (u64)gridDim.x * (KM_BLOCK / 32);
    for (u64 r = (u64)blockIdx.x * (KM_BLOCK / 32) + threadIdx.x / 32; r < rows; r += warps) {
        const T* row = g + r * k;
        Top4<T> top;
        top_init(top);
        for (u32 j = lane; j < k; j += 32) top_insert(top, norms[j] - (T)2 * row[j], j);
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) top_merge_xor(top, o);
        if (lane == 0) top_store(top, first + r, top_val, top_idx);
    }
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_top_rows_f32(const float* g, const float* norms, u64 rows, u32 k, u64 first,
                                   float* top_val, u32* top_idx) {
    top_rows<float>(g, norms, rows, k, first, top_val, top_idx);
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_top_rows_f64(const double* g, const double* norms, u64 rows, u32 k, u64 first,
                                   double* top_val, u32* top_idx) {
    top_rows<double>(g, norms, rows, k, first, top_val, top_idx);
}

// ---------------------------------------------------------------------------------------------
// Settle (assign.rs `finish` without an incumbent) for the points p0 .. p0 + m: the labels and
// the count of changed ones (stats[k*d + k + 1]); the sums are added afterwards, in a fixed
// order (clustering_kmeans_accumulate). Groups of 8 lanes, one point each (SETTLE_PER_WARP per
// warp). Loops are warp-uniform (every
// lane runs the same shuffles): a warp runs as many exact distances as its neediest point.
template <typename T>
__device__ void settle(const T* __restrict__ x, const T* __restrict__ w, u32 has_w, const double* __restrict__ c,
                       const T* __restrict__ top_val, const u32* __restrict__ top_idx, u64 p0, u64 m, u32 d, u32 k,
                       double cmax, double unit, u32* __restrict__ labels, double* __restrict__ stats,
                       u32* __restrict__ fallback, u32* __restrict__ n_fallback) {
    const u32 lane = threadIdx.x & 31, g = lane >> 3, l = lane & 7;
    const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    const double eps64 = 2.220446049250313e-16;
    const double scale = 3.0 * ((double)d + 8.0) * unit + 4.0 * ((double)d + 4.0) * eps64;
    u32 changed = 0;
    for (u64 base = (((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) * SETTLE_PER_WARP; base < m;
         base += warps * SETTLE_PER_WARP) {
        const u64 i = base + g;
        const bool active = i < m;
        const u64 p = p0 + (active ? i : 0);
        const T* xp = x + p * d;
        const double xn2 = group_norm2(xp, d, l, active);
        T v[KM_TOP];
        u32 j[KM_TOP];
#pragma unroll
        for (int r = 0; r < KM_TOP; ++r) {
            v[r] = active ? top_val[i * KM_TOP + r] : infinity<T>();
            j[r] = active ? top_idx[i * KM_TOP + r] : NO_CENTRE;
        }
        const double rad = sqrt(xn2) + cmax;
        const double err = scale * rad * rad;
        const double limit = (double)v[0] + 2.0 * err;
        // Every centre outside the list is at least v[3] (the floor): if that is within the
        // band too, every centre is compared exactly.
        const bool every = (double)v[KM_TOP - 1] <= limit;
        u32 near = 0;
#pragma unroll
        for (int r = 0; r < KM_TOP; ++r) near += (double)v[r] <= limit ? 1u : 0u;
        // A point that must be compared with every centre goes to the fallback list
        // (clustering_kmeans_settle_all: a block per point); here only its neighbours wait.
        const u32 count = !active || every ? 0u : (near == 1 ? 0u : near);
        u32 most = count;
        most = max(most, __shfl_xor_sync(FULL_MASK, most, 8));
        most = max(most, __shfl_xor_sync(FULL_MASK, most, 16));
        u32 best = j[0];
        double best_d2 = 0.0;
        for (u32 e = 0; e < most; ++e) {
            const bool mine = e < count;
            const u32 cand = e == 0 ? j[0] : e == 1 ? j[1] : e == 2 ? j[2] : j[3];
            const double d2 = group_dist2(xp, c + (u64)(mine ? cand : 0) * d, d, l, mine);
            if (mine && (e == 0 || d2 < best_d2 || (d2 == best_d2 && cand < best))) {
                best = cand;
                best_d2 = d2;
            }
        }
        if (active && l == 0) {
            if (every) {
                fallback[atomicAdd(n_fallback, 1u)] = (u32)i;
            } else {
                if (labels[p] != best) ++changed;
                labels[p] = best;
            }
        }
    }
    changed = warpath::warp_allreduce(changed, warpath::Sum());
    if (lane == 0 && changed) atomicAdd(&stats[(u64)k * d + k + 1], (double)changed);
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_settle_f32(const float* x, const float* w, u32 has_w, const double* c, const float* top_val,
                                 const u32* top_idx, u64 p0, u64 m, u32 d, u32 k, double cmax, double unit,
                                 u32* labels, double* stats, u32* fallback, u32* n_fallback) {
    settle<float>(x, w, has_w, c, top_val, top_idx, p0, m, d, k, cmax, unit, labels, stats, fallback, n_fallback);
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_settle_f64(const double* x, const double* w, u32 has_w, const double* c,
                                 const double* top_val, const u32* top_idx, u64 p0, u64 m, u32 d, u32 k,
                                 double cmax, double unit, u32* labels, double* stats, u32* fallback,
                                 u32* n_fallback) {
    settle<double>(x, w, has_w, c, top_val, top_idx, p0, m, d, k, cmax, unit, labels, stats, fallback, n_fallback);
}

// The settle's fallback: the points of the chunk listed in fallback[0 .. *n_fallback] (chunk
// indices), each compared with every centre by the exact distance, a block per point: group g
// of 8 lanes (32 groups per block) takes centres g, g + 32, ..., the smallest (distance, centre)
// wins (ties to the lower centre, as the reference). Writes the label and counts a change.
template <typename T>
__device__ void settle_all(const T* __restrict__ x, const double* __restrict__ c, const u32* __restrict__ fallback,
                           const u32* __restrict__ n_fallback, u64 p0, u32 d, u32 k, u32* __restrict__ labels,
                           double* __restrict__ stats) {
    __shared__ double s_d2[KM_BLOCK / 32];
    __shared__ u32 s_j[KM_BLOCK / 32];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, l = lane & 7;
    const u32 groups = blockDim.x >> 3, group = threadIdx.x >> 3;
    const u32 count = *n_fallback;
    for (u32 e = blockIdx.x; e < count; e += gridDim.x) {
        const u64 p = p0 + fallback[e];
        const T* xp = x + p * d;
        double best = infinity<double>();
        u32 bj = NO_CENTRE;
        for (u32 base = 0; base < k; base += groups) {
            const u32 j = base + group;
            const bool act = j < k;
            const double d2 = group_dist2(xp, c + (u64)(act ? j : 0) * d, d, l, act);
            if (act && (d2 < best || (d2 == best && j < bj))) {
                best = d2;
                bj = j;
            }
        }
#pragma unroll
        for (u32 off = 8; off < 32; off <<= 1) {
            const double ob = __shfl_xor_sync(FULL_MASK, best, off);
            const u32 oj = __shfl_xor_sync(FULL_MASK, bj, off);
            if (ob < best || (ob == best && oj < bj)) {
                best = ob;
                bj = oj;
            }
        }
        if (lane == 0) {
            s_d2[warp] = best;
            s_j[warp] = bj;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (u32 v = 1; v < (blockDim.x >> 5); ++v) {
                if (s_d2[v] < best || (s_d2[v] == best && s_j[v] < bj)) {
                    best = s_d2[v];
                    bj = s_j[v];
                }
            }
            if (labels[p] != bj) atomicAdd(&stats[(u64)k * d + k + 1], 1.0);
            labels[p] = bj;
        }
        __syncthreads();
    }
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_settle_all_f32(const float* x, const double* c, const u32* fallback, const u32* n_fallback,
                                     u64 p0, u32 d, u32 k, u32* labels, double* stats) {
    settle_all<float>(x, c, fallback, n_fallback, p0, d, k, labels, stats);
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_settle_all_f64(const double* x, const double* c, const u32* fallback, const u32* n_fallback,
                                     u64 p0, u32 d, u32 k, u32* labels, double* stats) {
    settle_all<double>(x, c, fallback, n_fallback, p0, d, k, labels, stats);
}

// ---------------------------------------------------------------------------------------------
// The statistics of a product step, in a fixed order (no atomics on the sums: f64 atomics on the
// few addresses of one cluster serialise when neighbouring points share a label, as in data
// sorted by class, and their order changes the last bits from run to run). The host sorts the
// labels stably (gpu-primitives' radix sort: index order inside a cluster), then, with no
// round trip through the host:
//   1. clustering_kmeans_starts: where each cluster's run of the sorted order starts;
//   2. clustering_kmeans_accumulate_T: the sorted order in tiles of `rows` positions, a block
//      per tile (grid-stride), each cluster's segment of the tile in turn: warp v adds the rows
//      v, v + ACC_WARPS, ... of the segment, lane l the columns l + 32 i (ACC_COLS of them per
//      pass over the columns), the warps' sums added in warp order. The segment of cluster j in
//      tile t goes to partials[(t + j) * (d + 2)] (its weighted sums, its weight, its weighted
//      sum of squares q): t + j is unique, since a later cluster starts in the same or a later
//      tile, so there are at most tiles + k slots;
//   3. clustering_kmeans_gather: sums[k*d], counts[k] and q[k] of stats, each cluster's slots
//      t + j for the tiles t it spans, in order (an empty cluster gets zeros).
// The same bits from run to run for given labels, whatever the chunks of the product path.
#define ACC_WARPS (KM_BLOCK / 32)
#define ACC_COLS (KM_BLOCK / 32)

// starts[j] = the first sorted position whose label is >= j, for j = 0 ..= k.
extern "C" __global__ void clustering_kmeans_starts(const u32* __restrict__ sorted, u64 n, u32 k,
                                                    u32* __restrict__ starts) {
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j <= k; j += (u64)gridDim.x * blockDim.x) {
        u64 lo = 0, hi = n;
        while (lo < hi) {
            const u64 mid = (lo + hi) >> 1;
            if (sorted[mid] < j) lo = mid + 1;
            else hi = mid;
        }
        starts[j] = (u32)lo;
    }
}

template <typename T>
__device__ void accumulate(const T* __restrict__ x, const T* __restrict__ w, u32 has_w,
                           const u32* __restrict__ perm, const u32* __restrict__ sorted,
                           const u32* __restrict__ starts, u64 n, u32 rows, u32 d, double* __restrict__ partials) {
    __shared__ double s_sum[ACC_WARPS][32 * ACC_COLS];
    __shared__ double s_wq[ACC_WARPS][2];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 stride = (u64)d + 2;
    const u64 tiles = (n + rows - 1) / rows;
    for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        const u64 tile_end = min(n, (t + 1) * rows);
        for (u64 begin = t * rows; begin < tile_end;) {
            const u32 j = sorted[begin];
            const u64 end = min(tile_end, (u64)starts[j + 1]);
            double* out = partials + (t + j) * stride;
            double q = 0.0, wsum = 0.0;
            for (u32 c0 = 0; c0 < d; c0 += 32 * ACC_COLS) {
                double acc[ACC_COLS];
#pragma unroll
                for (int i = 0; i < ACC_COLS; ++i) acc[i] = 0.0;
                for (u64 r = begin + warp; r < end; r += ACC_WARPS) {
                    const u64 p = perm[r];
                    const double wp = has_w ? (double)w[p] : 1.0;
                    const T* xp = x + p * d;
#pragma unroll
                    for (int i = 0; i < ACC_COLS; ++i) {
                        const u32 c = c0 + lane + 32 * i;
                        if (c < d) {
                            const double v = (double)xp[c];
                            acc[i] += wp * v;
                            q += wp * v * v;
                        }
                    }
                    if (c0 == 0) wsum += wp;
                }
#pragma unroll
                for (int i = 0; i < ACC_COLS; ++i) s_sum[warp][lane + 32 * i] = acc[i];
                __syncthreads();
                for (u32 c = threadIdx.x; c < 32 * ACC_COLS; c += blockDim.x) {
                    if (c0 + c < d) {
                        double s = 0.0;
                        for (int v = 0; v < ACC_WARPS; ++v) s += s_sum[v][c];
                        out[c0 + c] = s;
                    }
                }
                __syncthreads();
            }
            q = warpath::warp_allreduce(q, warpath::Sum());
            if (lane == 0) {
                s_wq[warp][0] = wsum;
                s_wq[warp][1] = q;
            }
            __syncthreads();
            if (threadIdx.x < 2) {
                double s = 0.0;
                for (int v = 0; v < ACC_WARPS; ++v) s += s_wq[v][threadIdx.x];
                out[d + threadIdx.x] = s;
            }
            __syncthreads();
            begin = end;
        }
    }
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_accumulate_f32(const float* x, const float* w, u32 has_w, const u32* perm, const u32* sorted,
                                     const u32* starts, u64 n, u32 rows, u32 d, double* partials) {
    accumulate<float>(x, w, has_w, perm, sorted, starts, n, rows, d, partials);
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_accumulate_f64(const double* x, const double* w, u32 has_w, const u32* perm,
                                     const u32* sorted, const u32* starts, u64 n, u32 rows, u32 d,
                                     double* partials) {
    accumulate<double>(x, w, has_w, perm, sorted, starts, n, rows, d, partials);
}

// stats (the product path's layout) from the tiles' partials: one thread per (cluster, column).
extern "C" __global__ void clustering_kmeans_gather(const double* __restrict__ partials, const u32* __restrict__ starts,
                                                    u32 rows, u32 k, u32 d, double* __restrict__ stats) {
    const u64 stride = (u64)d + 2, kd = (u64)k * d;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < (u64)k * stride; e += (u64)gridDim.x * blockDim.x) {
        const u64 j = e / stride, c = e % stride;
        const u64 a = starts[j], b = starts[j + 1];
        double s = 0.0;
        if (a < b)
            for (u64 t = a / rows; t <= (b - 1) / rows; ++t) s += partials[(t + j) * stride + c];
        if (c < d) stats[j * d + c] = s;
        else if (c == d) stats[kd + j] = s;
        else stats[kd + k + 2 + j] = s;
    }
}

// ---------------------------------------------------------------------------------------------
// partials[block] = the block's sum of w dist2_f64(x_p, c_label(p)) (groups of 8 lanes per
// point; each lane's share in point order, then the block's fixed reduction tree: the same
// bits from run to run for a given grid).
template <typename T>
__device__ void exact_inertia(const T* __restrict__ x, const T* __restrict__ w, u32 has_w,
                              const double* __restrict__ c, const u32* __restrict__ labels, u64 n, u32 d,
                              double* __restrict__ partials) {
    __shared__ double s_warps[KM_BLOCK / 32];
    const u32 lane = threadIdx.x & 31, g = lane >> 3, l = lane & 7;
    const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    double sum = 0.0;
    for (u64 base = (((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) * SETTLE_PER_WARP; base < n;
         base += warps * SETTLE_PER_WARP) {
        const u64 p = base + g;
        const bool active = p < n;
        const u64 pp = active ? p : 0;
        const double d2 = group_dist2(x + pp * d, c + (u64)(active ? labels[pp] : 0) * d, d, l, active);
        if (active && l == 0) sum += (has_w ? (double)w[pp] : 1.0) * d2;
    }
    sum = warpath::block_reduce<KM_BLOCK>(sum, s_warps, warpath::Sum());
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_exact_inertia_f32(const float* x, const float* w, u32 has_w, const double* c,
                                        const u32* labels, u64 n, u32 d, double* partials) {
    exact_inertia<float>(x, w, has_w, c, labels, n, d, partials);
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_exact_inertia_f64(const double* x, const double* w, u32 has_w, const double* c,
                                        const u32* labels, u64 n, u32 d, double* partials) {
    exact_inertia<double>(x, w, has_w, c, labels, n, d, partials);
}
