// CPU simulation of kernels-cuda/pde.cu, launched as crates/pde/src/cuda.rs does: the explicit
// FitzHugh-Nagumo step (grid-stride and fused multi-step in shared memory) against a sequential
// reference with the same arithmetic (bit-exact), and the tridiagonal solvers (PCR levels +
// strided Thomas for one system; shared-memory PCR, CR-PCR and per-thread Thomas for strided
// batches) against Thomas in double.
#include "sim/cuda_sim.hpp"
#include "sim/check.hpp"
#include "pde.cu"

#include <random>

// ---- FitzHugh-Nagumo --------------------------------------------------------------------
struct Fhn {
    double r = 0.2, dt = 0.05, a = 0.1, dte = 0.05 * 0.01, gamma = 0.5;
    u32 lk = 0, rk = 0;
    double lv = 0, rv = 0;
};

static double flush(double x) { return std::fabs(x) < 1e-30 ? 0.0 : x; }

static void ref_step(const Fhn& p, std::vector<double>& v, std::vector<double>& w, u64 n, u64 batch) {
    std::vector<double> vn(v.size()), wn(w.size());
    for (u64 ax = 0; ax < batch; ++ax) {
        const double* va = &v[ax * n];
        for (u64 i = 0; i < n; ++i) {
            const u64 g = ax * n + i;
            const double vc = va[i], wc = w[g];
            if ((i == 0 && p.lk == 1) || (i == n - 1 && p.rk == 1)) {
                const double val = i == 0 ? p.lv : p.rv;
                vn[g] = val;
                wn[g] = flush(wc + p.dte * (val - p.gamma * wc));
                continue;
            }
            const double vl = i == 0 ? va[1] : va[i - 1];
            const double vr = i == n - 1 ? va[n - 2] : va[i + 1];
            const double lap = (vl + vr) - 2.0 * vc;
            const double react = vc * (1.0 - vc) * (vc - p.a) - wc;
            vn[g] = flush(vc + p.r * lap + p.dt * react);
            wn[g] = flush(wc + p.dte * (vc - p.gamma * wc));
        }
    }
    v.swap(vn);
    w.swap(wn);
}

static void check_fhn(u64 n, u64 batch, u32 steps, const Fhn& p) {
    std::vector<double> v(n * batch), w(n * batch);
    for (u64 g = 0; g < n * batch; ++g) {
        v[g] = std::exp(-std::pow((double)(g % n) - (double)n / 2, 2) / 10.0) + 0.01 * (double)(g / n);
        w[g] = 0.001 * (double)(g % 7);
    }
    std::vector<double> rv = v, rw = w;
    for (u32 s = 0; s < steps; ++s) ref_step(p, rv, rw, n, batch);

    // Fused: one block per axon, threads = n rounded up to a warp (max 1024), 3n doubles shared.
    std::vector<double> fv = v, fw = w;
    const unsigned threads = (unsigned)std::min<u64>(1024, std::max<u64>(32, (n + 31) / 32 * 32));
    warpath_sim::launch((unsigned)std::min<u64>(batch, 2), threads, 3 * n * 8, [&] {
        fhn_fused_f64(fv.data(), fw.data(), n, batch, steps, p.r, p.dt, p.a, p.dte, p.gamma, p.lk, p.lv, p.rk, p.rv);
    });
    // Grid-stride step kernel, ping-ponging buffers.
    std::vector<double> sv = v, sw = w, tv(v.size()), tw(w.size());
    const u64 total = n * batch;
    for (u32 s = 0; s < steps; ++s) {
        warpath_sim::launch((unsigned)std::min<u64>(3, (total + 255) / 256), 256, 0, [&] {
            fhn_step_f64(sv.data(), sw.data(), tv.data(), tw.data(), n, total, p.r, p.dt, p.a, p.dte, p.gamma, p.lk, p.lv, p.rk, p.rv);
        });
        sv.swap(tv);
        sw.swap(tw);
    }
    for (u64 g = 0; g < total; ++g) {
        SIM_CHECK(fv[g] == rv[g] && fw[g] == rw[g], "fused n=%llu batch=%llu steps=%u g=%llu: %.17g vs %.17g", n, batch, steps, g, fv[g], rv[g]);
        SIM_CHECK(sv[g] == rv[g] && sw[g] == rw[g], "step n=%llu steps=%u g=%llu", n, steps, g);
    }
}

// ---- Tridiagonal ------------------------------------------------------------------------
template <class T>
struct Systems {
    u64 m, stride, batch;
    std::vector<T> a, b, c, d;
};

template <class T>
static Systems<T> make_systems(u64 m, u64 stride, u64 batch, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const u64 len = stride * (batch - 1) + m;
    Systems<T> s{m, stride, batch, std::vector<T>(len, (T)7), std::vector<T>(len, (T)7), std::vector<T>(len, (T)7), std::vector<T>(len, (T)7)};
    for (u64 k = 0; k < batch; ++k)
        for (u64 i = 0; i < m; ++i) {
            const u64 g = k * stride + i;
            s.a[g] = (T)u(rng);
            s.c[g] = (T)u(rng);
            s.b[g] = (T)(3.0 + u(rng));  // diagonally dominant
            s.d[g] = (T)(10.0 * u(rng));
        }
    return s;
}

template <class T>
static std::vector<double> thomas_ref(const Systems<T>& s, u64 k) {
    const u64 m = s.m, o = k * s.stride;
    std::vector<double> cp(m), dp(m), x(m);
    for (u64 i = 0; i < m; ++i) {
        const double ai = i == 0 ? 0.0 : (double)s.a[o + i];
        const double ci = i == m - 1 ? 0.0 : (double)s.c[o + i];
        const double den = (double)s.b[o + i] - (i ? ai * cp[i - 1] : 0.0);
        cp[i] = ci / den;
        dp[i] = ((double)s.d[o + i] - (i ? ai * dp[i - 1] : 0.0)) / den;
    }
    for (u64 i = m; i-- > 0;) x[i] = dp[i] - (i + 1 < m ? cp[i] * x[i + 1] : 0.0);
    return x;
}

template <class T>
static void check_solution(const Systems<T>& s, const std::vector<T>& x, const char* what) {
    const double tol = sizeof(T) == 4 ? 2e-4 : 1e-10;
    for (u64 k = 0; k < s.batch; ++k) {
        const auto ref = thomas_ref(s, k);
        for (u64 i = 0; i < s.m; ++i) {
            const double got = (double)x[k * s.stride + i];
            SIM_CHECK(std::fabs(got - ref[i]) <= tol * std::max(1.0, std::fabs(ref[i])), "%s (%zu B) m=%llu stride=%llu system %llu row %llu: %.9g vs %.9g",
                      what, sizeof(T), s.m, s.stride, k, i, got, ref[i]);
        }
        // Gaps between systems are left alone.
        for (u64 i = s.m; k + 1 < s.batch && i < s.stride; ++i)
            SIM_CHECK(x[k * s.stride + i] == (T)-1, "%s wrote into the gap after system %llu", what, k);
    }
}

template <class T>
static void check_batches(u64 m, u64 stride, u64 batch, std::mt19937_64& rng) {
    const auto s = make_systems<T>(m, stride, batch, rng);
    const unsigned grid = (unsigned)std::min<u64>(batch, 2);
    if (m <= 1024) {
        {   // CR-PCR: threads = next_pow2(m)/2 in [32, 512], pcr_rows = min(threads, 64), 5m shared
            std::vector<T> x(s.b.size(), (T)-1);
            u64 p2 = 1;
            while (p2 < m) p2 <<= 1;
            const unsigned threads = (unsigned)std::clamp<u64>(p2 / 2, 32, 512);
            const u64 pcr_rows = std::min<u64>(threads, 64);
            warpath_sim::launch(grid, threads, 5 * m * sizeof(T), [&] {
                if constexpr (sizeof(T) == 4) tridiag_batch_cr_pcr_f32(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), m, stride, batch, pcr_rows);
                else tridiag_batch_cr_pcr_f64(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), m, stride, batch, pcr_rows);
            });
            check_solution(s, x, "batch CR-PCR");
        }
        {   // PCR: threads = next_pow2(m) in [32, 1024], 4m shared
            std::vector<T> x(s.b.size(), (T)-1);
            u64 p2 = 1;
            while (p2 < m) p2 <<= 1;
            const unsigned threads = (unsigned)std::clamp<u64>(p2, 32, 1024);
            warpath_sim::launch(grid, threads, 4 * m * sizeof(T), [&] {
                if constexpr (sizeof(T) == 4) tridiag_batch_pcr_f32(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), m, stride, batch);
                else tridiag_batch_pcr_f64(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), m, stride, batch);
            });
            check_solution(s, x, "batch PCR");
        }
    }
    {   // one thread per system
        std::vector<T> x(s.b.size(), (T)-1), cp(s.b.size());
        warpath_sim::launch(1, 128, 0, [&] {
            if constexpr (sizeof(T) == 4) tridiag_batch_thomas_f32(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), cp.data(), m, stride, batch);
            else tridiag_batch_thomas_f64(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), cp.data(), m, stride, batch);
        });
        check_solution(s, x, "batch Thomas");
    }
}

// One large system: PCR levels until there are `subsystems` interleaved systems, then Thomas on
// each (as tridiag_single in crates/pde/src/cuda.rs).
template <class T>
static void check_single(u64 n, std::mt19937_64& rng) {
    auto s = make_systems<T>(n, n, 1, rng);
    std::vector<T> cur[4] = {s.a, s.b, s.c, s.d}, nxt[4];
    for (auto& v : nxt) v.assign(n, (T)0);
    const u64 target = std::clamp<u64>(n / 32, 1, 1 << 16);
    u64 subsystems = 1;
    while (subsystems * 2 <= target) subsystems *= 2;
    const unsigned grid = (unsigned)std::min<u64>(4, (n + 255) / 256);
    for (u64 st = 1; st < subsystems; st *= 2) {
        warpath_sim::launch(grid, 256, 0, [&] {
            if constexpr (sizeof(T) == 4) tridiag_pcr_level_f32(cur[0].data(), cur[1].data(), cur[2].data(), cur[3].data(), nxt[0].data(), nxt[1].data(), nxt[2].data(), nxt[3].data(), n, st);
            else tridiag_pcr_level_f64(cur[0].data(), cur[1].data(), cur[2].data(), cur[3].data(), nxt[0].data(), nxt[1].data(), nxt[2].data(), nxt[3].data(), n, st);
        });
        for (int q = 0; q < 4; ++q) cur[q].swap(nxt[q]);
    }
    std::vector<T> x(n, (T)-1), cp(n);
    warpath_sim::launch((unsigned)std::min<u64>(2, (subsystems + 127) / 128), 128, 0, [&] {
        if constexpr (sizeof(T) == 4) tridiag_thomas_strided_f32(cur[0].data(), cur[1].data(), cur[2].data(), cur[3].data(), x.data(), cp.data(), n, subsystems);
        else tridiag_thomas_strided_f64(cur[0].data(), cur[1].data(), cur[2].data(), cur[3].data(), x.data(), cp.data(), n, subsystems);
    });
    check_solution(s, x, "single PCR+Thomas");
}

int main() {
    Fhn noflux;
    Fhn dirichlet;
    dirichlet.rk = 1;
    dirichlet.rv = 1.0;
    for (u64 n : {3ull, 31ull, 33ull, 401ull, 1025ull, 2048ull})
        for (u32 steps : {1u, 7u, 8u}) {
            check_fhn(n, 3, steps, noflux);
            check_fhn(n, 2, steps, dirichlet);
        }
    std::printf("fhn step and fused kernels: ok\n");
    std::mt19937_64 rng(11);
    for (u64 m : {1ull, 2ull, 3ull, 31ull, 32ull, 33ull, 100ull, 255ull, 256ull, 257ull, 1000ull, 1024ull}) {
        check_batches<float>(m, m, 3, rng);
        check_batches<double>(m, m + 5, 3, rng);  // gaps between systems
    }
    check_batches<double>(3000, 3000, 2, rng);  // Thomas only (above the shared-memory limit)
    std::printf("tridiagonal batch kernels: ok\n");
    for (u64 n : {64ull, 100ull, 1000ull, 4097ull, 20000ull}) {
        check_single<float>(n, rng);
        check_single<double>(n, rng);
    }
    std::printf("tridiagonal single-system kernels: ok\n");
    return 0;
}
