// k-means (Lloyd) kernels for crates/clustering.
//
// Statistics layout (doubles), shared by every path: sums[k*d] (row-major, per cluster),
// counts[k] (weight per cluster), inertia, changed (points whose label changed).
//
// Two paths:
// - small k*d: clustering_kmeans_step_small_* does assignment AND accumulation in one kernel per
//   iteration: centroids in shared memory, each block accumulates its points into a shared
//   copy of the statistics (shared-memory atomics), then writes them to its own row of
//   `partials`; clustering_kmeans_reduce_partials adds the rows in block order.
// - large k*d: clustering_kmeans_assign_tiled_* computes |c|^2 - 2 x.c for 128 points x 128 centroids
//   per tile (register-blocked 8x8 per thread, like an SGEMM) keeping the running argmin in
//   registers, then clustering_kmeans_accumulate_* adds every point into global statistics (one warp per
//   point, coalesced atomics).
// Labels stay on the device; labels[i] = 0xffffffff means "not assigned yet".
#include "common.cuh"
#include "block/fill.cuh"
#include "block/reduce.cuh"

#define KM_BLOCK 256

// ---------------------------------------------------------------------------------------------
// Small path: one kernel per iteration. Dynamic shared memory: stats (kd + k + 2 doubles), then
// the centroids (kd elements of T). The host checks that this fits in 48 KiB.
template <typename T>
__device__ void step_small(const T* __restrict__ x, const T* __restrict__ w, u32 has_w,
                           const T* __restrict__ c, u64 n, u32 d, u32 k,
                           u32* __restrict__ labels, double* __restrict__ partials) {
    WARPATH_DYNAMIC_SHARED(double, smem);
    const u64 kd = (u64)k * d;
    const u64 stats = kd + k + 2;
    double* s_stats = smem;
    T* s_c = (T*)(smem + stats);
    warpath::block_fill(s_stats, stats, 0.0);
    for (u64 i = threadIdx.x; i < kd; i += blockDim.x) s_c[i] = c[i];
    __syncthreads();

    double inertia = 0.0;
    double changed = 0.0;
    WARPATH_GRID_STRIDE(p, n) {
        const T* xp = x + p * d;
        T best = 0;
        u32 bl = 0;
        for (u32 j = 0; j < k; ++j) {
            const T* cj = s_c + (u64)j * d;
            T dist = 0;
            for (u32 t = 0; t < d; ++t) {
                T diff = xp[t] - cj[t];
                dist += diff * diff;
            }
            if (j == 0 || dist < best) {  // ties go to the lower index
                best = dist;
                bl = j;
            }
        }
        const double wp = has_w ? (double)w[p] : 1.0;
        if (labels[p] != bl) changed += 1.0;
        labels[p] = bl;
        const T* cb = s_c + (u64)bl * d;
        double dist = 0.0;
        for (u32 t = 0; t < d; ++t) {
            const double v = (double)xp[t];
            atomicAdd(&s_stats[(u64)bl * d + t], wp * v);
            const double diff = v - (double)cb[t];
            dist += diff * diff;
        }
        atomicAdd(&s_stats[kd + bl], wp);
        inertia += wp * dist;
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
                                                 const float* c, u64 n, u32 d, u32 k,
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
// Large path.

// norms[j] = |c_j|^2 in T.
template <typename T>
__device__ void norms(const T* __restrict__ c, u64 k, u32 d, T* __restrict__ out) {
    WARPATH_GRID_STRIDE(j, k) {
        T s = 0;
        for (u32 t = 0; t < d; ++t) s += c[j * d + t] * c[j * d + t];
        out[j] = s;
    }
}

extern "C" __global__ void clustering_kmeans_norms_f32(const float* c, u64 k, u32 d, float* out) {
    norms<float>(c, k, d, out);
}
extern "C" __global__ void clustering_kmeans_norms_f64(const double* c, u64 k, u32 d, double* out) {
    norms<double>(c, k, d, out);
}

#define TBM 128  // points per block tile
#define TBN 128  // centroids per block tile
#define TBK 8    // dimensions per step
#define TPAD 4   // shared-memory padding against bank conflicts on the transposed stores
// Dynamic shared memory the small path may use (the default limit, no opt-in).
#define KM_SMALL_SHARED_LIMIT (48 * 1024)
WARPATH_SHARE_WITH_HOST(KM_BLOCK, TBM, KM_SMALL_SHARED_LIMIT)

// A point's best centroid so far: the smallest distance, ties to the lower index; idx
// 0xffffffff is "none yet" and loses to every candidate.
template <typename T>
struct Nearest {
    T dist;
    u32 idx;
};
struct NearestOp {
    template <typename T>
    __device__ __forceinline__ Nearest<T> operator()(Nearest<T> a, Nearest<T> b) const {
        const bool better = b.idx != 0xffffffffu &&
                            (a.idx == 0xffffffffu || b.dist < a.dist || (b.dist == a.dist && b.idx < a.idx));
        return better ? b : a;
    }
};

// Block of 256 threads (16 x 16); thread (tx, ty) owns points ty + 16 i and centroids
// tx + 16 j (i, j < 8) of the tile. One block per 128 points; it sweeps all centroids.
template <typename T>
__device__ void assign_tiled(const T* __restrict__ x, const T* __restrict__ c,
                             const T* __restrict__ cnorm, u64 n, u32 d, u32 k,
                             u32* __restrict__ labels, double* __restrict__ stats) {
    __shared__ T As[TBK][TBM + TPAD];
    __shared__ T Bs[TBK][TBN + TPAD];
    __shared__ u32 s_changed;
    const u32 tid = threadIdx.x;
    const u32 tx = tid % 16, ty = tid / 16;
    const u64 p0 = (u64)blockIdx.x * TBM;
    if (tid == 0) s_changed = 0;

    T best[8];
    u32 bidx[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        best[i] = 0;
        bidx[i] = 0xffffffffu;
    }

    for (u32 c0 = 0; c0 < k; c0 += TBN) {
        T acc[8][8];
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = 0;

        for (u32 k0 = 0; k0 < d; k0 += TBK) {
#pragma unroll
            for (int q = 0; q < (TBM * TBK) / KM_BLOCK; ++q) {
                const u32 e = tid + KM_BLOCK * q;
                const u32 r = e / TBK, kk = e % TBK;
                const u64 p = p0 + r;
                const u32 col = k0 + kk;
                As[kk][r] = (p < n && col < d) ? x[p * d + col] : (T)0;
                const u64 cj = (u64)c0 + r;
                Bs[kk][r] = (cj < k && col < d) ? c[cj * d + col] : (T)0;
            }
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < TBK; ++kk) {
                T a[8], b[8];
#pragma unroll
                for (int i = 0; i < 8; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
                for (int j = 0; j < 8; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
                for (int i = 0; i < 8; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
            }
            __syncthreads();
        }
        // Columns grow with j and with c0, so a strict < keeps the lowest index on ties.
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const u32 cj = c0 + tx + 16 * j;
            if (cj < k) {
                const T nrm = cnorm[cj];
#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    const T dist = nrm - (T)2 * acc[i][j];
                    if (bidx[i] == 0xffffffffu || dist < best[i]) {
                        best[i] = dist;
                        bidx[i] = cj;
                    }
                }
            }
        }
    }

    // The 16 threads with the same ty are 16 consecutive lanes of one warp: reduce over them.
    u32 my_changed = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const u32 bi = warpath::warp_allreduce(Nearest<T>{best[i], bidx[i]}, NearestOp(), 16).idx;
        const u64 p = p0 + ty + 16 * i;
        if (tx == 0 && p < n) {
            if (labels[p] != bi) ++my_changed;
            labels[p] = bi;
        }
    }
    __syncthreads();  // s_changed initialised
    if (my_changed) atomicAdd(&s_changed, my_changed);
    __syncthreads();
    if (tid == 0 && s_changed) atomicAdd(&stats[(u64)k * d + k + 1], (double)s_changed);
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_assign_tiled_f32(const float* x, const float* c, const float* cnorm, u64 n, u32 d,
                            u32 k, u32* labels, double* stats) {
    assign_tiled<float>(x, c, cnorm, n, d, k, labels, stats);
}

extern "C" __global__ void __launch_bounds__(KM_BLOCK)
    clustering_kmeans_assign_tiled_f64(const double* x, const double* c, const double* cnorm, u64 n, u32 d,
                            u32 k, u32* labels, double* stats) {
    assign_tiled<double>(x, c, cnorm, n, d, k, labels, stats);
}

// One warp per point (grid-stride over points): adds w * x into its cluster's sums (lanes over
// the dimensions: coalesced atomics), its weight into the count, and w |x - c|^2 (in double)
// into the inertia (one atomic per block).
template <typename T>
__device__ void accumulate(const T* __restrict__ x, const T* __restrict__ w, u32 has_w,
                           const T* __restrict__ c, const u32* __restrict__ labels, u64 n, u32 d,
                           u32 k, double* __restrict__ stats) {
    __shared__ double s_inertia;
    if (threadIdx.x == 0) s_inertia = 0.0;
    __syncthreads();
    const u32 lane = threadIdx.x & 31;
    const u64 warps = ((u64)gridDim.x * blockDim.x) / 32;
    const u64 kd = (u64)k * d;
    double inertia = 0.0;
    for (u64 p = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32; p < n; p += warps) {
        const u32 l = labels[p];
        const double wp = has_w ? (double)w[p] : 1.0;
        const T* xp = x + p * d;
        const T* cl = c + (u64)l * d;
        double part = 0.0;
        for (u32 t = lane; t < d; t += 32) {
            const double v = (double)xp[t];
            atomicAdd(&stats[(u64)l * d + t], wp * v);
            const double diff = v - (double)cl[t];
            part += diff * diff;
        }
        inertia += wp * part;
        if (lane == 0) atomicAdd(&stats[kd + l], wp);
    }
    inertia = warpath::warp_allreduce(inertia, warpath::Sum());
    if (lane == 0) atomicAdd(&s_inertia, inertia);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(&stats[kd + k], s_inertia);
}

extern "C" __global__ void clustering_kmeans_accumulate_f32(const float* x, const float* w, u32 has_w,
                                                 const float* c, const u32* labels, u64 n, u32 d,
                                                 u32 k, double* stats) {
    accumulate<float>(x, w, has_w, c, labels, n, d, k, stats);
}

extern "C" __global__ void clustering_kmeans_accumulate_f64(const double* x, const double* w, u32 has_w,
                                                 const double* c, const u32* labels, u64 n,
                                                 u32 d, u32 k, double* stats) {
    accumulate<double>(x, w, has_w, c, labels, n, d, k, stats);
}
