// The pde crate's kernels: the explicit FitzHugh-Nagumo step (grid-stride, and fused in
// shared memory for many steps per launch), the device-resident Crank-Nicolson / Newton step
// (explicit half, Jacobian assembly, update with a max-norm reduction) and tridiagonal
// solvers (PCR levels in global memory, strided Thomas, shared-memory PCR for strided
// batches). f32 and f64 where it applies.
#include "common.cuh"
#include "block/reduce.cuh"

// ---------------------------------------------------------------------------------------
// FitzHugh-Nagumo, forward Euler. Boundary kinds: 0 = no flux (mirrored ghost), 1 = Dirichlet.

__device__ __forceinline__ double fhn_flush(double x) { return fabs(x) < 1e-30 ? 0.0 : x; }

// The coefficient set of the explicit kernels, one argument (mirrored by `FhnCoeffs` in
// crates/pde/src/kernel_types.rs: same fields, same order, 64 bytes, no padding).
struct FhnCoeffs {
    double r, dt, a, dte, gamma;
    u32 lkind, rkind;
    double lval, rval;
};

// Largest grid the fused shared-memory kernel holds (3 arrays of n doubles in 48 KiB), and the
// largest system the shared-memory batch kernels solve (one thread per row).
#define PDE_FUSED_MAX_N 2048
#define PDE_BATCH_PCR_MAX_M 1024
WARPATH_SHARE_WITH_HOST(PDE_FUSED_MAX_N, PDE_BATCH_PCR_MAX_M)

// New (v, w) of node i of an axon of n nodes whose v lies at `v` (any memory space).
__device__ __forceinline__ void fhn_node(const double* v, double wc, u64 i, u64 n, const FhnCoeffs& k,
                                         u32 lkind, double lval, u32 rkind, double rval,
                                         double* vn_out, double* wn_out) {
    double vc = v[i];
    if ((i == 0 && lkind == 1) || (i == n - 1 && rkind == 1)) {
        double val = (i == 0) ? lval : rval;
        *vn_out = val;
        *wn_out = fhn_flush(wc + k.dte * (val - k.gamma * wc));
        return;
    }
    double vl = (i == 0) ? v[1] : v[i - 1];
    double vr = (i == n - 1) ? v[n - 2] : v[i + 1];
    double lap = (vl + vr) - 2.0 * vc;
    double react = vc * (1.0 - vc) * (vc - k.a) - wc;
    *vn_out = fhn_flush(vc + k.r * lap + k.dt * react);
    *wn_out = fhn_flush(wc + k.dte * (vc - k.gamma * wc));
}

// One step of `total / n` axons of n nodes each (total = batch * n), one thread per node.
extern "C" __global__ void pde_fhn_step_f64(const double* __restrict__ v, const double* __restrict__ w,
                                        double* __restrict__ vn, double* __restrict__ wn, u64 n,
                                        u64 total, FhnCoeffs k) {
    WARPATH_GRID_STRIDE(g, total) {
        u64 axon = g / n;
        u64 i = g - axon * n;
        const double* va = v + axon * n;
        fhn_node(va, w[g], i, n, k, k.lkind, k.lval, k.rkind, k.rval, &vn[g], &wn[g]);
    }
}

// `steps` steps of `batch` axons of n <= PDE_FUSED_MAX_N nodes, one block per axon (grid-stride over
// axons). Dynamic shared memory: 3 * n doubles (v double-buffered, w). One barrier per step:
// step s reads buffer s&1 and writes the other; the barrier orders all reads of a buffer
// before it is overwritten two steps later. Each node's w is touched by one thread only.
extern "C" __global__ void pde_fhn_fused_f64(double* __restrict__ v, double* __restrict__ w, u64 n,
                                         u64 batch, u32 steps, FhnCoeffs k) {
    WARPATH_DYNAMIC_SHARED(double, fhn_smem);
    double* buf0 = fhn_smem;
    double* buf1 = fhn_smem + n;
    double* ws = fhn_smem + 2 * n;
    for (u64 axon = blockIdx.x; axon < batch; axon += gridDim.x) {
        double* vg = v + axon * n;
        double* wg = w + axon * n;
        for (u64 i = threadIdx.x; i < n; i += blockDim.x) {
            buf0[i] = vg[i];
            ws[i] = wg[i];
        }
        __syncthreads();
        for (u32 s = 0; s < steps; ++s) {
            const double* cur = (s & 1) ? buf1 : buf0;
            double* nxt = (s & 1) ? buf0 : buf1;
            for (u64 i = threadIdx.x; i < n; i += blockDim.x) {
                double vn, wn;
                fhn_node(cur, ws[i], i, n, k, k.lkind, k.lval, k.rkind, k.rval, &vn, &wn);
                nxt[i] = vn;
                ws[i] = wn;
            }
            __syncthreads();
        }
        const double* fin = (steps & 1) ? buf1 : buf0;
        for (u64 i = threadIdx.x; i < n; i += blockDim.x) {
            vg[i] = fin[i];
            wg[i] = ws[i];
        }
        __syncthreads();  // shared memory is reused by the next axon
    }
}

// ---------------------------------------------------------------------------------------
// Crank-Nicolson / Newton, device-resident (crates/pde/src/implicit.rs, `cn_step`; the host
// loop is crates/pde/src/cuda.rs, `CnDevice`). One thread per node, grid-stride. The formulas
// and the order of operations are those of `cn_step`, so the results agree to round-off.
// Boundary kinds as above (0 = no flux with a mirrored ghost node, 1 = Dirichlet).

// The coefficient set of the Crank-Nicolson kernels, one argument (mirrored by `CnCoeffs` in
// crates/pde/src/kernel_types.rs: same fields, same order, 64 bytes, no padding).
struct CnCoeffs {
    double h, inv_dx2, a, alpha, beta;
    u32 lkind, rkind;
    double lval, rval;
};

__device__ __forceinline__ double fhn_reaction(double v, double a) { return v * (1.0 - v) * (v - a); }

__device__ __forceinline__ double fhn_reaction_derivative(double v, double a) {
    return -3.0 * v * v + 2.0 * (1.0 + a) * v - a;
}

// (L v)_i with mirrored ghost nodes (n >= 2).
__device__ __forceinline__ double cn_lap(const double* v, u64 i, u64 n, double inv_dx2) {
    double l = (i == 0) ? v[1] : v[i - 1];
    double r = (i == n - 1) ? v[n - 2] : v[i + 1];
    return (l + r - 2.0 * v[i]) * inv_dx2;
}

// Whether node i has a Dirichlet value, and which (`is_fixed` on the host).
__device__ __forceinline__ bool cn_fixed(u64 i, u64 n, const CnCoeffs& k, double* val) {
    if (i == 0 && k.lkind == 1) {
        *val = k.lval;
        return true;
    }
    if (i == n - 1 && k.rkind == 1) {
        *val = k.rval;
        return true;
    }
    return false;
}

// The explicit half of a step from (v, w): sw = alpha w + beta v + s_w (the constant part of
// W), rhs = v + h (L v + f(v)) - h (w + sw) + s_v, and the Newton start V = v with Dirichlet
// nodes set. `src` is null, or holds the source parts s_v in [0, n) and s_w in [n, 2n).
extern "C" __global__ void pde_fhn_cn_explicit_f64(const double* __restrict__ v, const double* __restrict__ w,
                                               const double* __restrict__ src, double* __restrict__ sw,
                                               double* __restrict__ rhs, double* __restrict__ big_v, u64 n, CnCoeffs k) {
    WARPATH_GRID_STRIDE(i, n) {
        double sv = 0.0, swsrc = 0.0;
        if (src != nullptr) {
            sv = src[i];
            swsrc = src[n + i];
        }
        double vi = v[i], wi = w[i];
        double swi = k.alpha * wi + k.beta * vi + swsrc;
        sw[i] = swi;
        rhs[i] = vi + k.h * (cn_lap(v, i, n, k.inv_dx2) + fhn_reaction(vi, k.a)) - k.h * (wi + swi) + sv;
        double val;
        big_v[i] = cn_fixed(i, n, k, &val) ? val : vi;
    }
}

// The Newton system at the iterate V: tridiagonal Jacobian (a, b, c) and right-hand side
// d = -G(V), G(V) = V - h (L V + f(V)) + h beta V - rhs; identity rows at Dirichlet nodes.
extern "C" __global__ void pde_fhn_cn_assemble_f64(const double* __restrict__ big_v, const double* __restrict__ rhs,
                                               double* __restrict__ ja, double* __restrict__ jb,
                                               double* __restrict__ jc, double* __restrict__ g, u64 n, CnCoeffs k) {
    WARPATH_GRID_STRIDE(i, n) {
        double bv = big_v[i];
        double val;
        if (cn_fixed(i, n, k, &val)) {
            g[i] = -(bv - val);
            ja[i] = 0.0;
            jb[i] = 1.0;
            jc[i] = 0.0;
            continue;
        }
        double gi = bv - k.h * (cn_lap(big_v, i, n, k.inv_dx2) + fhn_reaction(bv, k.a)) + k.h * k.beta * bv - rhs[i];
        g[i] = -gi;
        double off = -k.h * k.inv_dx2;
        ja[i] = (i == 0) ? 0.0 : (i == n - 1) ? 2.0 * off : off;
        jc[i] = (i == n - 1) ? 0.0 : (i == 0) ? 2.0 * off : off;
        jb[i] = 1.0 + 2.0 * k.h * k.inv_dx2 - k.h * fhn_reaction_derivative(bv, k.a) + k.h * k.beta;
    }
}

// V += delta, and *max_bits = max(*max_bits, bits of max_i |delta_i|). |delta| is non-negative,
// so its IEEE bits order like the values, with +inf above every finite value and NaN above +inf:
// a non-finite update always wins the max. The caller zeroes *max_bits first. Block reduction
// over warps (blockDim a multiple of 32, at most 1024), one atomicMax per block.
extern "C" __global__ void pde_fhn_cn_update_f64(double* __restrict__ big_v, const double* __restrict__ delta,
                                             u64 n, u64* __restrict__ max_bits) {
    __shared__ u64 cn_warp_max[32];
    u64 m = 0;
    WARPATH_GRID_STRIDE(i, n) {
        double d = delta[i];
        big_v[i] += d;
        u64 bits = (u64)__double_as_longlong(fabs(d));
        m = bits > m ? bits : m;
    }
    m = warpath::block_reduce(m, cn_warp_max, warpath::Max());
    if (threadIdx.x == 0) atomicMax(max_bits, m);
}

// The end of a converged step: v = V, w = sw + beta V (W = alpha w + beta (v + V) + source
// part), both with tiny values flushed to zero.
extern "C" __global__ void pde_fhn_cn_finish_f64(const double* __restrict__ big_v, const double* __restrict__ sw,
                                             double* __restrict__ v, double* __restrict__ w, u64 n,
                                             double beta) {
    WARPATH_GRID_STRIDE(i, n) {
        double bv = big_v[i];
        w[i] = fhn_flush(sw[i] + beta * bv);
        v[i] = fhn_flush(bv);
    }
}

// ---------------------------------------------------------------------------------------
// Tridiagonal systems: row i is a[i] x[i-1] + b[i] x[i] + c[i] x[i+1] = d[i]; a[0] and
// c[n-1] are ignored (treated as zero).

// One PCR level at stride s over a single system of n rows: out row i eliminates rows i-s
// and i+s from row i. Rows with no neighbour on one side skip that side.
template <typename T>
__device__ void pcr_level(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                          const T* __restrict__ d, T* __restrict__ ao, T* __restrict__ bo,
                          T* __restrict__ co, T* __restrict__ dout, u64 n, u64 s) {
    WARPATH_GRID_STRIDE(i, n) {
        T ai = (i == 0) ? T(0) : a[i];
        T ci = (i == n - 1) ? T(0) : c[i];
        T na = T(0), nb = b[i], nc = T(0), nd = d[i];
        if (i >= s) {
            u64 l = i - s;
            T al = (l == 0) ? T(0) : a[l];
            T k1 = ai / b[l];
            na = -al * k1;
            nb -= c[l] * k1;
            nd -= d[l] * k1;
        }
        if (i + s < n) {
            u64 h = i + s;
            T ch = (h == n - 1) ? T(0) : c[h];
            T k2 = ci / b[h];
            nc = -ch * k2;
            nb -= a[h] * k2;
            nd -= d[h] * k2;
        }
        ao[i] = na;
        bo[i] = nb;
        co[i] = nc;
        dout[i] = nd;
    }
}

// After PCR levels up to stride S, rows j, j+S, j+2S, ... form an independent system for each
// j < S; thread j solves it with Thomas. Consecutive threads touch consecutive addresses.
// cp is scratch of n elements.
template <typename T>
__device__ void thomas_strided(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                               const T* __restrict__ d, T* __restrict__ x, T* __restrict__ cp, u64 n,
                               u64 S) {
    WARPATH_GRID_STRIDE(j, S) {
        if (j >= n) continue;
        T den = b[j];
        T cprev = c[j] / den;
        T xprev = d[j] / den;
        cp[j] = cprev;
        x[j] = xprev;
        u64 last = j;
        for (u64 i = j + S; i < n; i += S) {
            den = b[i] - a[i] * cprev;
            cprev = c[i] / den;
            xprev = (d[i] - a[i] * xprev) / den;
            cp[i] = cprev;
            x[i] = xprev;
            last = i;
        }
        // back substitution
        T xn = x[last];
        for (u64 i = last; i >= j + S; i -= S) {
            u64 p = i - S;
            xn = x[p] - cp[p] * xn;
            x[p] = xn;
        }
    }
}

// Strided batch, m <= 1024: one block per system (grid-stride over systems), blockDim >= m,
// thread i owns row i. Dynamic shared memory: 4 * m elements of T.
template <typename T>
__device__ void batch_pcr(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                          const T* __restrict__ d, T* __restrict__ x, u64 m, u64 stride, u64 batch,
                          T* sm) {
    T* sa = sm;
    T* sb = sm + m;
    T* sc = sm + 2 * m;
    T* sd = sm + 3 * m;
    u64 i = threadIdx.x;
    for (u64 sys = blockIdx.x; sys < batch; sys += gridDim.x) {
        u64 base = sys * stride;
        if (i < m) {
            sa[i] = (i == 0) ? T(0) : a[base + i];
            sb[i] = b[base + i];
            sc[i] = (i == m - 1) ? T(0) : c[base + i];
            sd[i] = d[base + i];
        }
        __syncthreads();
        for (u64 s = 1; s < m; s *= 2) {
            T na = T(0), nb = T(0), nc = T(0), nd = T(0);
            if (i < m) {
                nb = sb[i];
                nd = sd[i];
                if (i >= s) {
                    T k1 = sa[i] / sb[i - s];
                    na = -sa[i - s] * k1;
                    nb -= sc[i - s] * k1;
                    nd -= sd[i - s] * k1;
                }
                if (i + s < m) {
                    T k2 = sc[i] / sb[i + s];
                    nc = -sc[i + s] * k2;
                    nb -= sa[i + s] * k2;
                    nd -= sd[i + s] * k2;
                }
            }
            __syncthreads();
            if (i < m) {
                sa[i] = na;
                sb[i] = nb;
                sc[i] = nc;
                sd[i] = nd;
            }
            __syncthreads();
        }
        if (i < m) x[base + i] = sd[i] / sb[i];
        __syncthreads();  // shared memory is reused by the next system
    }
}

// Strided batch, CR-PCR hybrid (Zhang, Cohen & Owens 2010), index for index the CPU
// `cr_pcr_hybrid`: cyclic reduction in shared memory until at most `pcr_rows` (<= blockDim)
// rows remain, PCR on those (one thread per row, registers between barriers), then CR back
// substitution. One block per system; dynamic shared memory: 5 * m elements (a, b, c, d, x).
template <typename T>
__device__ void batch_cr_pcr(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                             const T* __restrict__ d, T* __restrict__ x, u64 m, u64 stride, u64 batch,
                             u64 pcr_rows, T* sm) {
    T* sa = sm;
    T* sb = sm + m;
    T* sc = sm + 2 * m;
    T* sd = sm + 3 * m;
    T* sx = sm + 4 * m;
    for (u64 sys = blockIdx.x; sys < batch; sys += gridDim.x) {
        u64 base = sys * stride;
        for (u64 i = threadIdx.x; i < m; i += blockDim.x) {
            sa[i] = (i == 0) ? T(0) : a[base + i];
            sb[i] = b[base + i];
            sc[i] = (i == m - 1) ? T(0) : c[base + i];
            sd[i] = d[base + i];
        }
        __syncthreads();
        // Forward reduction: at level s rows 2s-1 + k 2s read rows i +- s (not written at this
        // level), so one barrier per level suffices.
        u64 s = 1;
        while (2 * s <= m && m / s > pcr_rows) {
            u64 count = (m - (2 * s - 1) + 2 * s - 1) / (2 * s);  // rows 2s-1, 4s-1, ... < m
            for (u64 k = threadIdx.x; k < count; k += blockDim.x) {
                u64 i = 2 * s - 1 + k * 2 * s;
                u64 lo = i - s;
                T k1 = sa[i] / sb[lo];
                T na = -sa[lo] * k1;
                T nb = sb[i] - sc[lo] * k1;
                T nc = T(0);
                T nd = sd[i] - sd[lo] * k1;
                if (i + s < m) {
                    u64 hi = i + s;
                    T k2 = sc[i] / sb[hi];
                    nb -= sa[hi] * k2;
                    nc = -sc[hi] * k2;
                    nd -= sd[hi] * k2;
                }
                sa[i] = na;
                sb[i] = nb;
                sc[i] = nc;
                sd[i] = nd;
            }
            __syncthreads();
            s *= 2;
        }
        // PCR on rows s-1 + j s, j < r (r <= pcr_rows <= blockDim: one row per thread).
        u64 r = m / s;
        u64 j = threadIdx.x;
        u64 i = s - 1 + j * s;
        for (u64 q = 1; q < r; q *= 2) {
            T na = T(0), nb = T(0), nc = T(0), nd = T(0);
            if (j < r) {
                nb = sb[i];
                nd = sd[i];
                if (j >= q) {
                    u64 l = i - q * s;
                    T k1 = sa[i] / sb[l];
                    na = -sa[l] * k1;
                    nb -= sc[l] * k1;
                    nd -= sd[l] * k1;
                }
                if (j + q < r) {
                    u64 h = i + q * s;
                    T k2 = sc[i] / sb[h];
                    nc = -sc[h] * k2;
                    nb -= sa[h] * k2;
                    nd -= sd[h] * k2;
                }
            }
            __syncthreads();
            if (j < r) {
                sa[i] = na;
                sb[i] = nb;
                sc[i] = nc;
                sd[i] = nd;
            }
            __syncthreads();
        }
        if (j < r) sx[i] = sd[i] / sb[i];
        __syncthreads();
        // Back substitution: level t solves rows t-1 + k 2t from rows at distance t.
        for (u64 t = s / 2; t >= 1; t /= 2) {
            u64 count = (m - (t - 1) + 2 * t - 1) / (2 * t);  // rows t-1, 3t-1, ... < m
            for (u64 k = threadIdx.x; k < count; k += blockDim.x) {
                u64 row = t - 1 + k * 2 * t;
                T rhs = sd[row];
                if (row >= t) rhs -= sa[row] * sx[row - t];
                if (row + t < m) rhs -= sc[row] * sx[row + t];
                sx[row] = rhs / sb[row];
            }
            __syncthreads();
        }
        for (u64 i2 = threadIdx.x; i2 < m; i2 += blockDim.x) x[base + i2] = sx[i2];
        __syncthreads();  // shared memory is reused by the next system
    }
}

// Strided batch, any m: one thread per system runs Thomas; cp is scratch in the same layout.
template <typename T>
__device__ void batch_thomas(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                             const T* __restrict__ d, T* __restrict__ x, T* __restrict__ cp, u64 m,
                             u64 stride, u64 batch) {
    WARPATH_GRID_STRIDE(sys, batch) {
        u64 base = sys * stride;
        T den = b[base];
        T cprev = (m == 1) ? T(0) : c[base] / den;
        T xprev = d[base] / den;
        cp[base] = cprev;
        x[base] = xprev;
        for (u64 i = 1; i < m; ++i) {
            u64 g = base + i;
            T ci = (i == m - 1) ? T(0) : c[g];
            den = b[g] - a[g] * cprev;
            cprev = ci / den;
            xprev = (d[g] - a[g] * xprev) / den;
            cp[g] = cprev;
            x[g] = xprev;
        }
        for (u64 i = m - 1; i >= 1; --i) {
            u64 g = base + i - 1;
            xprev = x[g] - cp[g] * xprev;
            x[g] = xprev;
        }
    }
}

#define WARPATH_TRIDIAG_KERNELS(T, SUF)                                                                \
    extern "C" __global__ void pde_tridiag_pcr_level_##SUF(const T* a, const T* b, const T* c, const T* d, \
                                                       T* ao, T* bo, T* co, T* dout, u64 n, u64 s) {   \
        pcr_level<T>(a, b, c, d, ao, bo, co, dout, n, s);                                              \
    }                                                                                                  \
    extern "C" __global__ void pde_tridiag_thomas_strided_##SUF(const T* a, const T* b, const T* c,        \
                                                            const T* d, T* x, T* cp, u64 n, u64 S) {   \
        thomas_strided<T>(a, b, c, d, x, cp, n, S);                                                    \
    }                                                                                                  \
    extern "C" __global__ void pde_tridiag_batch_pcr_##SUF(const T* a, const T* b, const T* c, const T* d, \
                                                       T* x, u64 m, u64 stride, u64 batch) {           \
        WARPATH_DYNAMIC_SHARED(T, tridiag_smem_##SUF);                                                 \
        batch_pcr<T>(a, b, c, d, x, m, stride, batch, tridiag_smem_##SUF);                             \
    }                                                                                                  \
    extern "C" __global__ void pde_tridiag_batch_cr_pcr_##SUF(const T* a, const T* b, const T* c,          \
                                                          const T* d, T* x, u64 m, u64 stride,         \
                                                          u64 batch, u64 pcr_rows) {                   \
        WARPATH_DYNAMIC_SHARED(T, tridiag_smem2_##SUF);                                                \
        batch_cr_pcr<T>(a, b, c, d, x, m, stride, batch, pcr_rows, tridiag_smem2_##SUF);               \
    }                                                                                                  \
    extern "C" __global__ void pde_tridiag_batch_thomas_##SUF(const T* a, const T* b, const T* c,          \
                                                          const T* d, T* x, T* cp, u64 m, u64 stride,  \
                                                          u64 batch) {                                 \
        batch_thomas<T>(a, b, c, d, x, cp, m, stride, batch);                                          \
    }

WARPATH_TRIDIAG_KERNELS(float, f32)
WARPATH_TRIDIAG_KERNELS(double, f64)
