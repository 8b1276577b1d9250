// CPU simulation of kernels-cuda/clustering.cu, launched as crates/clustering/src/cuda.rs does:
// one k-means step through the direct path (kmeans_step_small + kmeans_reduce_partials) and
// through the product path (kmeans_top_simt or kmeans_top_mma, then kmeans_settle, over chunks
// of points), and the exact inertia, against a sequential reference that defines a label as the
// CPU does (lloyd.rs dist2_f64: eight interleaved partial sums in double, ties to the lower
// index). Labels must be equal exactly; statistics to 1e-12 relative (atomics add in any order).
// The data have near-ties everywhere (points on bisectors of centres far from the origin),
// exact duplicates of centres, and runs of equal centres (more near-ties than the 4 candidates:
// the settle step's every-centre fallback).
#include "sim/cuda_sim.hpp"
#include "sim/check.hpp"
#include "clustering.cu"

#include <random>

static const unsigned BLOCK = KM_BLOCK;

static double ref_dist2(const double* x, const double* c, u32 d) {
    double a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (u32 t = 0; t < d; ++t) {
        const double v = x[t] - c[t];
        a[t % 8] += v * v;
    }
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

template <class T>
struct Case {
    u64 n;
    u32 d, k;
    std::vector<T> x;
    std::vector<double> c;  // the centroids, double (the host's)
    std::vector<T> w;       // empty: unweighted
    const char* name;
};

// Centres around an offset far from the origin; points on bisectors of pairs of centres (and
// a few at random), exact copies of some centres, and the last `dups` centres at or within 1e-6
// of centre 0 (with points among them).
template <class T>
static Case<T> make_case(u64 n, u32 d, u32 k, double offset, u32 dups, bool weighted, std::mt19937_64& rng,
                         const char* name) {
    Case<T> cs{n, d, k, std::vector<T>(n * d), std::vector<double>((u64)k * d), {}, name};
    std::uniform_real_distribution<double> unit(-1.0, 1.0), near(0.49, 0.51);
    std::vector<double> off(d);
    for (u32 t = 0; t < d; ++t) off[t] = offset * (1.0 + 0.5 * unit(rng));
    for (u32 j = 0; j < k; ++j)
        for (u32 t = 0; t < d; ++t) cs.c[(u64)j * d + t] = off[t] + unit(rng);
    // A run of centres at (or within 1e-6 of) centre 0: more near-ties than the 4 candidates.
    for (u32 j = k - std::min(dups, k - 1); j < k && k > 1; ++j)
        for (u32 t = 0; t < d; ++t) cs.c[(u64)j * d + t] = cs.c[t] + (j % 2 ? 1e-6 * unit(rng) : 0.0);
    for (u64 p = 0; p < n; ++p) {
        const u32 a = (u32)(p % k), b = (u32)((p * 7 + 1) % k);
        const double s = p % 3 == 0 ? 0.5 : near(rng);
        for (u32 t = 0; t < d; ++t) {
            double v = cs.c[(u64)a * d + t] * s + cs.c[(u64)b * d + t] * (1.0 - s);
            if (p % 11 == 5) v = off[t] + 2.0 * unit(rng);
            if (p % 13 == 7) v = cs.c[(u64)a * d + t];  // exactly a centre
            if (p % 17 == 3) v = cs.c[t] + 1e-6 * unit(rng);  // in the run of centres at centre 0
            cs.x[p * d + t] = (T)v;
        }
    }
    if (weighted) {
        cs.w.resize(n);
        for (u64 p = 0; p < n; ++p) cs.w[p] = (T)(0.25 + (double)(p % 5));
    }
    return cs;
}

template <class T>
static std::vector<u32> ref_labels(const Case<T>& cs) {
    std::vector<u32> l(cs.n);
    std::vector<double> xr(cs.d);
    for (u64 p = 0; p < cs.n; ++p) {
        for (u32 t = 0; t < cs.d; ++t) xr[t] = (double)cs.x[p * cs.d + t];
        double best = 0;
        u32 bl = 0;
        for (u32 j = 0; j < cs.k; ++j) {
            const double v = ref_dist2(xr.data(), &cs.c[(u64)j * cs.d], cs.d);
            if (j == 0 || v < best) {
                best = v;
                bl = j;
            }
        }
        l[p] = bl;
    }
    return l;
}

static bool close(double a, double b, double tol) { return std::abs(a - b) <= tol * std::max(1.0, std::abs(b)); }

// Sums, counts, inertia (exact distances) and q (weighted |x|^2) of the labels.
template <class T>
static void check_stats(const Case<T>& cs, const std::vector<u32>& labels, const double* st, double changed,
                        bool has_q, const char* path) {
    const u64 kd = (u64)cs.k * cs.d;
    std::vector<double> sums(kd, 0), counts(cs.k, 0), q(cs.k, 0);
    std::vector<double> xr(cs.d);
    double inertia = 0;
    for (u64 p = 0; p < cs.n; ++p) {
        const u32 l = labels[p];
        const double w = cs.w.empty() ? 1.0 : (double)cs.w[p];
        counts[l] += w;
        double n2 = 0;
        for (u32 t = 0; t < cs.d; ++t) {
            xr[t] = (double)cs.x[p * cs.d + t];
            sums[(u64)l * cs.d + t] += w * xr[t];
            n2 += xr[t] * xr[t];
        }
        q[l] += w * n2;
        inertia += w * ref_dist2(xr.data(), &cs.c[(u64)l * cs.d], cs.d);
    }
    for (u64 i = 0; i < kd; ++i)
        SIM_CHECK(close(st[i], sums[i], 1e-12), "%s %s sums n=%llu d=%u k=%u i=%llu", path, cs.name, cs.n, cs.d, cs.k, i);
    for (u32 j = 0; j < cs.k; ++j)
        SIM_CHECK(close(st[kd + j], counts[j], 1e-12), "%s %s counts j=%u: %g vs %g", path, cs.name, j, st[kd + j], counts[j]);
    if (!has_q)
        SIM_CHECK(close(st[kd + cs.k], inertia, 1e-12), "%s %s inertia: %.17g vs %.17g", path, cs.name, st[kd + cs.k], inertia);
    SIM_CHECK(st[kd + cs.k + 1] == changed, "%s %s changed: %g vs %g", path, cs.name, st[kd + cs.k + 1], changed);
    if (has_q)
        for (u32 j = 0; j < cs.k; ++j)
            SIM_CHECK(close(st[kd + cs.k + 2 + j], q[j], 1e-12), "%s %s q j=%u", path, cs.name, j);
}

template <class T>
static void check_labels(const Case<T>& cs, const std::vector<u32>& got, const char* path) {
    const auto want = ref_labels(cs);
    for (u64 p = 0; p < cs.n; ++p)
        SIM_CHECK(got[p] == want[p], "%s %s labels n=%llu d=%u k=%u p=%llu: %u vs %u", path, cs.name, cs.n, cs.d, cs.k, p,
                  got[p], want[p]);
}

template <class T>
static void run_small(const Case<T>& cs, unsigned blocks) {
    const u64 kd = (u64)cs.k * cs.d, stats = kd + cs.k + 2;
    std::vector<u32> labels(cs.n, 0xffffffffu);
    std::vector<double> partials(blocks * stats, -1.0), st(stats, -1.0);
    const size_t smem = stats * 8 + kd * 8;
    const u32 has_w = cs.w.empty() ? 0 : 1;
    const T* w = has_w ? cs.w.data() : nullptr;
    for (int round = 0; round < 2; ++round) {
        warpath_sim::launch(blocks, BLOCK, smem, [&] {
            if constexpr (sizeof(T) == 4) clustering_kmeans_step_small_f32(cs.x.data(), w, has_w, cs.c.data(), cs.n, cs.d, cs.k, labels.data(), partials.data());
            else clustering_kmeans_step_small_f64(cs.x.data(), w, has_w, cs.c.data(), cs.n, cs.d, cs.k, labels.data(), partials.data());
        });
        warpath_sim::launch(2, BLOCK, 0, [&] { clustering_kmeans_reduce_partials(partials.data(), blocks, stats, st.data()); });
        check_labels(cs, labels, "small");
        // The second round starts from the first round's labels: nothing changes.
        check_stats(cs, labels, st.data(), round == 0 ? (double)cs.n : 0.0, false, "small");
        if (cs.n == 1 && cs.w.empty()) {
            // One point: the inertia is its distance, which must be the reference's bits.
            std::vector<double> xr(cs.d);
            for (u32 t = 0; t < cs.d; ++t) xr[t] = (double)cs.x[t];
            const double d2 = ref_dist2(xr.data(), &cs.c[(u64)labels[0] * cs.d], cs.d);
            SIM_CHECK(st[kd + cs.k] == d2, "small %s distance d=%u: %.17g vs %.17g", cs.name, cs.d, st[kd + cs.k], d2);
        }
    }
}

// The product path's statistics in a fixed order, as the host runs it (cuda/mod.rs accumulate):
// the points sorted stably by label, each cluster's starts (clustering_kmeans_starts), the
// sorted order in tiles of `rows`, each cluster's segments added (clustering_kmeans_accumulate_T)
// and gathered.
template <class T>
static void accumulate_stats(const Case<T>& cs, const std::vector<u32>& labels, std::vector<double>& st, u32 rows) {
    std::vector<u32> perm(cs.n);
    for (u64 p = 0; p < cs.n; ++p) perm[p] = (u32)p;
    std::stable_sort(perm.begin(), perm.end(), [&](u32 a, u32 b) { return labels[a] < labels[b]; });
    std::vector<u32> sorted(cs.n), starts(cs.k + 1, 0xdeadbeefu);
    for (u64 i = 0; i < cs.n; ++i) sorted[i] = labels[perm[i]];
    warpath_sim::launch(2, BLOCK, 0, [&] { clustering_kmeans_starts(sorted.data(), cs.n, cs.k, starts.data()); });
    for (u32 j = 0; j <= cs.k; ++j) {
        const u64 want = std::lower_bound(sorted.begin(), sorted.end(), j) - sorted.begin();
        SIM_CHECK(starts[j] == want, "%s starts j=%u: %u vs %llu", cs.name, j, starts[j], want);
    }
    const u64 tiles = (cs.n + rows - 1) / rows, stride = cs.d + 2;
    std::vector<double> acc((tiles + cs.k) * stride, -1.0);
    const u32 has_w = cs.w.empty() ? 0 : 1;
    const T* w = has_w ? cs.w.data() : nullptr;
    warpath_sim::launch(3, BLOCK, 0, [&] {
        if constexpr (sizeof(T) == 4) clustering_kmeans_accumulate_f32(cs.x.data(), w, has_w, perm.data(), sorted.data(), starts.data(), cs.n, rows, cs.d, acc.data());
        else clustering_kmeans_accumulate_f64(cs.x.data(), w, has_w, perm.data(), sorted.data(), starts.data(), cs.n, rows, cs.d, acc.data());
    });
    warpath_sim::launch(2, BLOCK, 0, [&] { clustering_kmeans_gather(acc.data(), starts.data(), rows, cs.k, cs.d, st.data()); });
}

// How the product values are made: the CUDA-core kernel, the tensor-core kernel, or a product
// matrix (as cuBLAS makes it on the host's side) read by clustering_kmeans_top_rows_*.
enum class Product { Simt, Mma, Rows };

// x_i . c_j for `rows` points from p0 against every centre, row-major, as the simulated cuBLAS
// computes it: fused multiply-adds in T, the two halves of the sum added last.
template <class T>
static std::vector<T> product_rows(const Case<T>& cs, const std::vector<T>& ct, u64 p0, u64 rows) {
    std::vector<T> g(rows * cs.k);
    const u32 half = cs.d / 2;
    for (u64 i = 0; i < rows; ++i) {
        const T* x = &cs.x[(p0 + i) * cs.d];
        for (u32 j = 0; j < cs.k; ++j) {
            const T* c = &ct[(u64)j * cs.d];
            T lo = 0, hi = 0;
            for (u32 t = 0; t < half; ++t) lo = std::fma(x[t], c[t], lo);
            for (u32 t = half; t < cs.d; ++t) hi = std::fma(x[t], c[t], hi);
            g[i * cs.k + j] = lo + hi;
        }
    }
    return g;
}

// The product path with `chunk` points per top + settle pair, as the host runs it (the product
// matrix in pieces of at most 50 rows, as the host cuts it to bound its memory).
template <class T>
static u64 run_product(const Case<T>& cs, Product product, u64 chunk, unsigned settle_blocks) {
    const bool mma = product == Product::Mma;
    const char* path = mma ? "mma" : product == Product::Rows ? "rows" : "simt";
    const u64 kd = (u64)cs.k * cs.d, stats = kd + 2 * (u64)cs.k + 2;
    std::vector<T> ct(kd), norms(cs.k);
    double cmax2 = 0;
    for (u32 j = 0; j < cs.k; ++j) {
        double s = 0;
        for (u32 t = 0; t < cs.d; ++t) {
            const double v = cs.c[(u64)j * cs.d + t];
            ct[(u64)j * cs.d + t] = (T)v;
            s += v * v;
        }
        norms[j] = (T)s;
        cmax2 = std::max(cmax2, s);
    }
    const double cmax = std::sqrt(cmax2) * (1.0 + 1e-12);
    const double unit = sizeof(T) == 8 ? (mma ? std::ldexp(1.0, -52) : std::ldexp(1.0, -53))
                                       : (mma ? std::ldexp(1.0, -21) : std::ldexp(1.0, -24));
    const u32 has_w = cs.w.empty() ? 0 : 1;
    const T* w = has_w ? cs.w.data() : nullptr;
    std::vector<u32> labels(cs.n, 0xffffffffu);
    std::vector<T> top_val(chunk * KM_TOP);
    std::vector<u32> top_idx(chunk * KM_TOP);
    u64 fallbacks = 0;
    for (int round = 0; round < 2; ++round) {
        std::vector<double> st(stats, 0.0);
        for (u64 p0 = 0; p0 < cs.n; p0 += chunk) {
            const u64 m = std::min(chunk, cs.n - p0);
            std::fill(top_val.begin(), top_val.end(), (T)-7);  // stale values must not survive
            std::fill(top_idx.begin(), top_idx.end(), 0xdeadbeefu);
            const u64 rows = mma ? (sizeof(T) == 8 ? MMA_M_F64 : MMA_M_F32) : SIMT_M;
            const unsigned tiles = (unsigned)((m + rows - 1) / rows);
            for (u64 r0 = 0; product == Product::Rows && r0 < m; r0 += 50) {
                const u64 piece = std::min<u64>(50, m - r0);
                const auto g = product_rows(cs, ct, p0 + r0, piece);
                warpath_sim::launch(2, BLOCK, 0, [&] {
                    if constexpr (sizeof(T) == 4) clustering_kmeans_top_rows_f32(g.data(), norms.data(), piece, cs.k, r0, top_val.data(), top_idx.data());
                    else clustering_kmeans_top_rows_f64(g.data(), norms.data(), piece, cs.k, r0, top_val.data(), top_idx.data());
                });
            }
            if (product != Product::Rows) warpath_sim::launch(tiles, BLOCK, 0, [&] {
                if (mma) {
                    if constexpr (sizeof(T) == 4) clustering_kmeans_top_mma_f32(cs.x.data(), ct.data(), norms.data(), p0, m, cs.d, cs.k, top_val.data(), top_idx.data());
                    else clustering_kmeans_top_mma_f64(cs.x.data(), ct.data(), norms.data(), p0, m, cs.d, cs.k, top_val.data(), top_idx.data());
                } else {
                    if constexpr (sizeof(T) == 4) clustering_kmeans_top_simt_f32(cs.x.data(), ct.data(), norms.data(), p0, m, cs.d, cs.k, top_val.data(), top_idx.data());
                    else clustering_kmeans_top_simt_f64(cs.x.data(), ct.data(), norms.data(), p0, m, cs.d, cs.k, top_val.data(), top_idx.data());
                }
            });
            // The lists: sorted by (value, centre), distinct centres, empty entries only when
            // k < 4.
            for (u64 i = 0; i < m; ++i) {
                for (int r = 0; r < KM_TOP; ++r) {
                    const u32 j = top_idx[i * KM_TOP + r];
                    SIM_CHECK((r < (int)cs.k) == (j < cs.k), "%s %s top list p=%llu r=%d j=%u", path, cs.name, p0 + i, r, j);
                    if (r > 0 && j < cs.k) {
                        const T a = top_val[i * KM_TOP + r - 1], b = top_val[i * KM_TOP + r];
                        SIM_CHECK(a < b || (a == b && top_idx[i * KM_TOP + r - 1] < j), "%s %s top order p=%llu", path, cs.name, p0 + i);
                    }
                }
            }
            std::vector<u32> fallback(m, 0xdeadbeefu);
            u32 n_fallback = 0;
            warpath_sim::launch(settle_blocks, BLOCK, 0, [&] {
                if constexpr (sizeof(T) == 4) clustering_kmeans_settle_f32(cs.x.data(), w, has_w, cs.c.data(), top_val.data(), top_idx.data(), p0, m, cs.d, cs.k, cmax, unit, labels.data(), st.data(), fallback.data(), &n_fallback);
                else clustering_kmeans_settle_f64(cs.x.data(), w, has_w, cs.c.data(), top_val.data(), top_idx.data(), p0, m, cs.d, cs.k, cmax, unit, labels.data(), st.data(), fallback.data(), &n_fallback);
            });
            SIM_CHECK(n_fallback <= m, "%s %s fallback count %u > %llu", path, cs.name, n_fallback, m);
            fallbacks += n_fallback;
            warpath_sim::launch(settle_blocks, BLOCK, 0, [&] {
                if constexpr (sizeof(T) == 4) clustering_kmeans_settle_all_f32(cs.x.data(), cs.c.data(), fallback.data(), &n_fallback, p0, cs.d, cs.k, labels.data(), st.data());
                else clustering_kmeans_settle_all_f64(cs.x.data(), cs.c.data(), fallback.data(), &n_fallback, p0, cs.d, cs.k, labels.data(), st.data());
            });
        }
        accumulate_stats(cs, labels, st, round == 0 ? 7 : 256);
        check_labels(cs, labels, path);
        check_stats(cs, labels, st.data(), round == 0 ? (double)cs.n : 0.0, true, path);
    }
    // The exact inertia of the labels.
    const unsigned blocks = 3;
    std::vector<double> partials(blocks, -1.0);
    warpath_sim::launch(blocks, BLOCK, 0, [&] {
        if constexpr (sizeof(T) == 4) clustering_kmeans_exact_inertia_f32(cs.x.data(), w, has_w, cs.c.data(), labels.data(), cs.n, cs.d, partials.data());
        else clustering_kmeans_exact_inertia_f64(cs.x.data(), w, has_w, cs.c.data(), labels.data(), cs.n, cs.d, partials.data());
    });
    double got = 0, want = 0;
    for (double v : partials) got += v;
    std::vector<double> xr(cs.d);
    for (u64 p = 0; p < cs.n; ++p) {
        for (u32 t = 0; t < cs.d; ++t) xr[t] = (double)cs.x[p * cs.d + t];
        want += (cs.w.empty() ? 1.0 : (double)cs.w[p]) * ref_dist2(xr.data(), &cs.c[(u64)labels[p] * cs.d], cs.d);
    }
    SIM_CHECK(close(got, want, 1e-12), "%s %s exact inertia %.17g vs %.17g", path, cs.name, got, want);
    // One point at a time: the device's distance is the reference's, bit for bit.
    for (u64 p = 0; p < std::min<u64>(cs.n, 8); ++p) {
        warpath_sim::launch(1, BLOCK, 0, [&] {
            const u64 one = 1;
            if constexpr (sizeof(T) == 4) clustering_kmeans_exact_inertia_f32(cs.x.data() + p * cs.d, nullptr, 0, cs.c.data(), labels.data() + p, one, cs.d, partials.data());
            else clustering_kmeans_exact_inertia_f64(cs.x.data() + p * cs.d, nullptr, 0, cs.c.data(), labels.data() + p, one, cs.d, partials.data());
        });
        for (u32 t = 0; t < cs.d; ++t) xr[t] = (double)cs.x[p * cs.d + t];
        const double d2 = ref_dist2(xr.data(), &cs.c[(u64)labels[p] * cs.d], cs.d);
        SIM_CHECK(partials[0] == d2, "%s %s distance of point %llu: %.17g vs %.17g", path, cs.name, p, partials[0], d2);
    }
    return fallbacks;
}

template <class T>
static void product_cases(std::mt19937_64& rng) {
    // (n, d, k, offset, dups, weighted): d below, at and above the 16-dimension stage and the
    // 8-lane groups, k below 4, across centre tiles (64 / 128) and with runs of equal centres.
    struct Shape {
        u64 n;
        u32 d, k;
        double offset;
        u32 dups;
        bool weighted;
    };
    const Shape shapes[] = {
        {70, 3, 2, 0.0, 0, false},  {100, 5, 7, 30.0, 0, true}, {130, 20, 70, 60.0, 0, false},
        {65, 37, 9, 80.0, 5, true}, {80, 24, 12, 40.0, 9, false}, {90, 16, 130, 50.0, 0, false},
        {40, 300, 6, 70.0, 0, true},  // two column passes of the accumulation (256 + 44)
    };
    for (const Shape& s : shapes) {
        const auto cs = make_case<T>(s.n, s.d, s.k, s.offset, s.dups, s.weighted, rng, sizeof(T) == 4 ? "f32" : "f64");
        // Chunks of 64 points, or one large chunk and a single point (several tiles per chunk).
        const u64 chunk = s.n > 100 ? s.n - 1 : s.n > 64 ? 64 : s.n;
        for (Product product : {Product::Simt, Product::Mma, Product::Rows}) {
            const u64 fallbacks = run_product(cs, product, chunk, 2);
            // Runs of 4 or more near-equal centres send points to the every-centre fallback.
            SIM_CHECK(s.dups < 4 || fallbacks > 0, "%s d=%u k=%u: no point took the fallback", cs.name, s.d, s.k);
        }
    }
}

int main() {
    std::mt19937_64 rng(3);
    for (u64 n : {1ull, 31ull, 129ull}) {
        for (u32 d : {1u, 3u, 9u, 17u}) {
            for (u32 k : {1u, 2u, 5u}) {
                for (u32 dups : {0u, 1u}) {
                    run_small(make_case<float>(n, d, k, 20.0, dups, n == 31, rng, "f32"), 3);
                    run_small(make_case<double>(n, d, k, 20.0, dups, n == 31, rng, "f64"), 2);
                }
            }
        }
    }
    product_cases<float>(rng);
    product_cases<double>(rng);
    std::printf("clustering kernels: ok\n");
    return 0;
}
