// CPU simulation of kernels-cuda/clustering.cu: one k-means step through the small fused path
// (kmeans_step_small + clustering_kmeans_reduce_partials) and through the tiled path (kmeans_norms +
// kmeans_assign_tiled + kmeans_accumulate), launched as crates/clustering/src/cuda.rs does,
// against a sequential reference: labels exactly (lowest index on ties), statistics to 1e-9.
#include "sim/cuda_sim.hpp"
#include "sim/check.hpp"
#include "clustering.cu"

#include <random>

static const unsigned BLOCK = 256;

template <class T>
struct Case {
    u64 n;
    u32 d, k;
    std::vector<T> x, c;
};

template <class T>
static Case<T> make_case(u64 n, u32 d, u32 k, bool duplicate_centroids, std::mt19937_64& rng) {
    Case<T> cs{n, d, k, std::vector<T>(n * d), std::vector<T>((u64)k * d)};
    std::normal_distribution<double> noise(0.0, 0.05);
    for (u32 j = 0; j < k; ++j)
        for (u32 t = 0; t < d; ++t) cs.c[(u64)j * d + t] = (T)((double)((j * 7 + t * 3) % 11) - 5.0);
    if (duplicate_centroids && k >= 2)
        for (u32 t = 0; t < d; ++t) cs.c[(u64)(k - 1) * d + t] = cs.c[t];  // same as centroid 0
    for (u64 p = 0; p < n; ++p) {
        const u32 j = (u32)(rng() % k);
        for (u32 t = 0; t < d; ++t) cs.x[p * d + t] = (T)((double)cs.c[(u64)j * d + t] + noise(rng));
    }
    return cs;
}

// Reference: labels by direct squared distance in T (the small path's arithmetic), lowest index
// on ties; statistics in double.
template <class T>
static std::vector<u32> ref_labels_direct(const Case<T>& cs) {
    std::vector<u32> l(cs.n);
    for (u64 p = 0; p < cs.n; ++p) {
        T best = 0;
        u32 bl = 0;
        for (u32 j = 0; j < cs.k; ++j) {
            T dist = 0;
            for (u32 t = 0; t < cs.d; ++t) {
                T diff = cs.x[p * cs.d + t] - cs.c[(u64)j * cs.d + t];
                dist += diff * diff;
            }
            if (j == 0 || dist < best) { best = dist; bl = j; }
        }
        l[p] = bl;
    }
    return l;
}

// Reference for the tiled path: argmin of |c|^2 - 2 x.c in double (well-separated clusters, so
// the float rounding of the tiled products cannot change the winner except on exact ties).
template <class T>
static std::vector<u32> ref_labels_gemm(const Case<T>& cs) {
    std::vector<u32> l(cs.n);
    for (u64 p = 0; p < cs.n; ++p) {
        double best = 0;
        u32 bl = 0;
        for (u32 j = 0; j < cs.k; ++j) {
            double nrm = 0, dot = 0;
            for (u32 t = 0; t < cs.d; ++t) {
                nrm += (double)cs.c[(u64)j * cs.d + t] * cs.c[(u64)j * cs.d + t];
                dot += (double)cs.x[p * cs.d + t] * cs.c[(u64)j * cs.d + t];
            }
            const double dist = nrm - 2 * dot;
            if (j == 0 || dist < best - 1e-6 * std::abs(best)) { best = dist; bl = j; }
        }
        l[p] = bl;
    }
    return l;
}

template <class T>
static void check_stats(const Case<T>& cs, const std::vector<u32>& labels, const std::vector<double>& st,
                        double changed, const char* path) {
    const u64 kd = (u64)cs.k * cs.d;
    std::vector<double> sums(kd, 0), counts(cs.k, 0);
    double inertia = 0;
    for (u64 p = 0; p < cs.n; ++p) {
        const u32 l = labels[p];
        counts[l] += 1;
        for (u32 t = 0; t < cs.d; ++t) {
            const double v = cs.x[p * cs.d + t];
            sums[(u64)l * cs.d + t] += v;
            const double diff = v - (double)cs.c[(u64)l * cs.d + t];
            inertia += diff * diff;
        }
    }
    auto close = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); };
    for (u64 i = 0; i < kd; ++i) SIM_CHECK(close(st[i], sums[i]), "%s sums n=%llu d=%u k=%u i=%llu", path, cs.n, cs.d, cs.k, i);
    for (u32 j = 0; j < cs.k; ++j) SIM_CHECK(st[kd + j] == counts[j], "%s counts n=%llu j=%u", path, cs.n, j);
    SIM_CHECK(close(st[kd + cs.k], inertia), "%s inertia n=%llu d=%u k=%u: %g vs %g", path, cs.n, cs.d, cs.k, st[kd + cs.k], inertia);
    SIM_CHECK(st[kd + cs.k + 1] == changed, "%s changed n=%llu: %g vs %g", path, cs.n, st[kd + cs.k + 1], changed);
}

template <class T>
static void run_small(const Case<T>& cs, unsigned blocks) {
    const u64 kd = (u64)cs.k * cs.d, stats = kd + cs.k + 2;
    std::vector<u32> labels(cs.n, 0xffffffffu);
    std::vector<double> partials(blocks * stats, -1.0), st(stats, -1.0);
    const size_t smem = stats * 8 + kd * sizeof(T);
    const u32 has_w = 0;
    warpath_sim::launch(blocks, BLOCK, smem, [&] {
        if constexpr (sizeof(T) == 4) clustering_kmeans_step_small_f32(cs.x.data(), nullptr, has_w, cs.c.data(), cs.n, cs.d, cs.k, labels.data(), partials.data());
        else clustering_kmeans_step_small_f64(cs.x.data(), nullptr, has_w, cs.c.data(), cs.n, cs.d, cs.k, labels.data(), partials.data());
    });
    warpath_sim::launch(2, BLOCK, 0, [&] { clustering_kmeans_reduce_partials(partials.data(), blocks, stats, st.data()); });
    const auto ref = ref_labels_direct(cs);
    for (u64 p = 0; p < cs.n; ++p) SIM_CHECK(labels[p] == ref[p], "small labels n=%llu d=%u k=%u p=%llu: %u vs %u", cs.n, cs.d, cs.k, p, labels[p], ref[p]);
    check_stats(cs, labels, st, (double)cs.n, "small");
}

template <class T>
static void run_tiled(const Case<T>& cs, unsigned acc_blocks) {
    const u64 kd = (u64)cs.k * cs.d, stats = kd + cs.k + 2;
    std::vector<u32> labels(cs.n, 0xffffffffu);
    std::vector<double> st(stats, 0.0);
    std::vector<T> norms(cs.k, (T)-1);
    const u64 k64 = cs.k;
    const unsigned tiles = (unsigned)((cs.n + 127) / 128);
    const u32 has_w = 0;
    warpath_sim::launch(1, BLOCK, 0, [&] {
        if constexpr (sizeof(T) == 4) clustering_kmeans_norms_f32(cs.c.data(), k64, cs.d, norms.data());
        else clustering_kmeans_norms_f64(cs.c.data(), k64, cs.d, norms.data());
    });
    warpath_sim::launch(tiles, BLOCK, 0, [&] {
        if constexpr (sizeof(T) == 4) clustering_kmeans_assign_tiled_f32(cs.x.data(), cs.c.data(), norms.data(), cs.n, cs.d, cs.k, labels.data(), st.data());
        else clustering_kmeans_assign_tiled_f64(cs.x.data(), cs.c.data(), norms.data(), cs.n, cs.d, cs.k, labels.data(), st.data());
    });
    warpath_sim::launch(acc_blocks, BLOCK, 0, [&] {
        if constexpr (sizeof(T) == 4) clustering_kmeans_accumulate_f32(cs.x.data(), nullptr, has_w, cs.c.data(), labels.data(), cs.n, cs.d, cs.k, st.data());
        else clustering_kmeans_accumulate_f64(cs.x.data(), nullptr, has_w, cs.c.data(), labels.data(), cs.n, cs.d, cs.k, st.data());
    });
    const auto ref = ref_labels_gemm(cs);
    for (u64 p = 0; p < cs.n; ++p) SIM_CHECK(labels[p] == ref[p], "tiled labels n=%llu d=%u k=%u p=%llu: %u vs %u", cs.n, cs.d, cs.k, p, labels[p], ref[p]);
    check_stats(cs, labels, st, (double)cs.n, "tiled");
}

int main() {
    std::mt19937_64 rng(3);
    for (u64 n : {1ull, 31ull, 128ull, 129ull, 700ull}) {
        for (u32 d : {1u, 3u, 9u}) {
            for (u32 k : {1u, 2u, 5u}) {
                for (bool dup : {false, true}) {
                    run_small(make_case<float>(n, d, k, dup, rng), 3);
                    run_small(make_case<double>(n, d, k, dup, rng), 2);
                    run_tiled(make_case<float>(n, d, k, dup, rng), 3);
                    run_tiled(make_case<double>(n, d, k, dup, rng), 1);
                }
            }
        }
    }
    // More than one centroid tile (k > 128) and dimension steps (d > 8).
    run_tiled(make_case<float>(300, 17, 130, true, rng), 4);
    run_tiled(make_case<double>(129, 20, 257, false, rng), 2);
    std::printf("clustering kernels: ok\n");
    return 0;
}
