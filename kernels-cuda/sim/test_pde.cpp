// CPU simulation of kernels-cuda/pde.cu, launched as crates/pde/src/cuda.rs does: the explicit
// FitzHugh-Nagumo step (grid-stride and fused multi-step in shared memory) against a sequential
// reference with the same arithmetic (bit-exact), and the tridiagonal solvers (PCR levels +
// strided Thomas for one system; shared-memory PCR, CR-PCR and per-thread Thomas for strided
// batches) against Thomas in double, and the device-resident Crank-Nicolson kernels against a
// sequential cn_step.
#include "sim/cuda_sim.hpp"
#include "sim/check.hpp"
#include "pde.cu"

#include <cstring>
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
        pde_fhn_fused_f64(fv.data(), fw.data(), n, batch, steps, FhnCoeffs{p.r, p.dt, p.a, p.dte, p.gamma, p.lk, p.rk, p.lv, p.rv});
    });
    // Grid-stride step kernel, ping-ponging buffers.
    std::vector<double> sv = v, sw = w, tv(v.size()), tw(w.size());
    const u64 total = n * batch;
    for (u32 s = 0; s < steps; ++s) {
        warpath_sim::launch((unsigned)std::min<u64>(3, (total + 255) / 256), 256, 0, [&] {
            pde_fhn_step_f64(sv.data(), sw.data(), tv.data(), tw.data(), n, total, FhnCoeffs{p.r, p.dt, p.a, p.dte, p.gamma, p.lk, p.rk, p.lv, p.rv});
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
                if constexpr (sizeof(T) == 4) pde_tridiag_batch_cr_pcr_f32(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), m, stride, batch, pcr_rows);
                else pde_tridiag_batch_cr_pcr_f64(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), m, stride, batch, pcr_rows);
            });
            check_solution(s, x, "batch CR-PCR");
        }
        {   // PCR: threads = next_pow2(m) in [32, 1024], 4m shared
            std::vector<T> x(s.b.size(), (T)-1);
            u64 p2 = 1;
            while (p2 < m) p2 <<= 1;
            const unsigned threads = (unsigned)std::clamp<u64>(p2, 32, 1024);
            warpath_sim::launch(grid, threads, 4 * m * sizeof(T), [&] {
                if constexpr (sizeof(T) == 4) pde_tridiag_batch_pcr_f32(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), m, stride, batch);
                else pde_tridiag_batch_pcr_f64(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), m, stride, batch);
            });
            check_solution(s, x, "batch PCR");
        }
    }
    {   // one thread per system
        std::vector<T> x(s.b.size(), (T)-1), cp(s.b.size());
        warpath_sim::launch(1, 128, 0, [&] {
            if constexpr (sizeof(T) == 4) pde_tridiag_batch_thomas_f32(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), cp.data(), m, stride, batch);
            else pde_tridiag_batch_thomas_f64(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), cp.data(), m, stride, batch);
        });
        check_solution(s, x, "batch Thomas");
    }
}

// The PCR-Thomas hybrid on one system of n rows as DeviceTridiag::solve in
// crates/pde/src/cuda.rs launches it: PCR levels (ping-pong between `cur` and `nxt`) until
// `subsystems` interleaved systems remain, then one thread per system runs Thomas into x
// (nxt[0] is its scratch). `cur` is overwritten.
template <class T>
static void sim_pcr_thomas(std::vector<T> (&cur)[4], std::vector<T> (&nxt)[4], std::vector<T>& x, u64 n) {
    const u64 target = std::clamp<u64>(n / 32, 1, 1 << 16);
    u64 subsystems = 1;
    while (subsystems * 2 <= target) subsystems *= 2;
    const unsigned grid = (unsigned)std::min<u64>(4, (n + 255) / 256);
    for (u64 st = 1; st < subsystems; st *= 2) {
        warpath_sim::launch(grid, 256, 0, [&] {
            if constexpr (sizeof(T) == 4) pde_tridiag_pcr_level_f32(cur[0].data(), cur[1].data(), cur[2].data(), cur[3].data(), nxt[0].data(), nxt[1].data(), nxt[2].data(), nxt[3].data(), n, st);
            else pde_tridiag_pcr_level_f64(cur[0].data(), cur[1].data(), cur[2].data(), cur[3].data(), nxt[0].data(), nxt[1].data(), nxt[2].data(), nxt[3].data(), n, st);
        });
        for (int q = 0; q < 4; ++q) cur[q].swap(nxt[q]);
    }
    std::vector<T>& cp = nxt[0];
    warpath_sim::launch((unsigned)std::min<u64>(2, (subsystems + 127) / 128), 128, 0, [&] {
        if constexpr (sizeof(T) == 4) pde_tridiag_thomas_strided_f32(cur[0].data(), cur[1].data(), cur[2].data(), cur[3].data(), x.data(), cp.data(), n, subsystems);
        else pde_tridiag_thomas_strided_f64(cur[0].data(), cur[1].data(), cur[2].data(), cur[3].data(), x.data(), cp.data(), n, subsystems);
    });
}

// One large system through the hybrid.
template <class T>
static void check_single(u64 n, std::mt19937_64& rng) {
    auto s = make_systems<T>(n, n, 1, rng);
    std::vector<T> cur[4] = {s.a, s.b, s.c, s.d}, nxt[4];
    for (auto& v : nxt) v.assign(n, (T)0);
    std::vector<T> x(n, (T)-1);
    sim_pcr_thomas(cur, nxt, x, n);
    check_solution(s, x, "single PCR+Thomas");
}

// ---- Crank-Nicolson / Newton, device-resident ---------------------------------------------
// The kernels fhn_cn_* against a plain sequential cn_step (crates/pde/src/implicit.rs):
// each kernel bit for bit on one step (same formulas, no contraction), and whole runs to
// round-off (the reference solves the Newton systems with Thomas, the kernels with PCR,
// CR-PCR or the PCR-Thomas hybrid, launched as DeviceTridiag::solve does).
struct CnCase {
    u64 n;
    double dt, dx, a = 0.1, eps = 0.01, gamma = 0.5;
    u32 lk = 0, rk = 0;
    double lv = 0, rv = 0;
    // CnCoeffs::new
    double h() const { return 0.5 * dt; }
    double inv_dx2() const { return 1.0 / (dx * dx); }
    double denom() const { return 1.0 + h() * eps * gamma; }
    double alpha() const { return (1.0 - h() * eps * gamma) / denom(); }
    double beta() const { return h() * eps / denom(); }
    bool fixed(u64 i, double* val) const {
        if (i == 0 && lk == 1) return *val = lv, true;
        if (i == n - 1 && rk == 1) return *val = rv, true;
        return false;
    }
};

static double ref_reaction(double v, double a) { return v * (1.0 - v) * (v - a); }
static double ref_reaction_derivative(double v, double a) { return -3.0 * v * v + 2.0 * (1.0 + a) * v - a; }
static double ref_lap(const std::vector<double>& v, u64 i, double inv_dx2) {
    const u64 n = v.size();
    const double l = i == 0 ? v[1] : v[i - 1];
    const double r = i == n - 1 ? v[n - 2] : v[i + 1];
    return (l + r - 2.0 * v[i]) * inv_dx2;
}

struct CnRef {
    std::vector<double> sw, rhs, big_v, a, b, c, g;
};

// The explicit half (src: s_v in [0, n), s_w in [n, 2n), or empty).
static void ref_cn_explicit(const CnCase& p, const std::vector<double>& v, const std::vector<double>& w, const std::vector<double>& src, CnRef& r) {
    const u64 n = p.n;
    r.sw.resize(n), r.rhs.resize(n), r.big_v.resize(n);
    for (u64 i = 0; i < n; ++i) {
        const double sv = src.empty() ? 0.0 : src[i], sws = src.empty() ? 0.0 : src[n + i];
        r.sw[i] = p.alpha() * w[i] + p.beta() * v[i] + sws;
        r.rhs[i] = v[i] + p.h() * (ref_lap(v, i, p.inv_dx2()) + ref_reaction(v[i], p.a)) - p.h() * (w[i] + r.sw[i]) + sv;
        double val;
        r.big_v[i] = p.fixed(i, &val) ? val : v[i];
    }
}

static void ref_cn_assemble(const CnCase& p, CnRef& r) {
    const u64 n = p.n;
    const double h = p.h(), inv = p.inv_dx2();
    r.a.resize(n), r.b.resize(n), r.c.resize(n), r.g.resize(n);
    for (u64 i = 0; i < n; ++i) {
        const double bv = r.big_v[i];
        double val;
        if (p.fixed(i, &val)) {
            r.g[i] = -(bv - val), r.a[i] = 0.0, r.b[i] = 1.0, r.c[i] = 0.0;
            continue;
        }
        const double gi = bv - h * (ref_lap(r.big_v, i, inv) + ref_reaction(bv, p.a)) + h * p.beta() * bv - r.rhs[i];
        r.g[i] = -gi;
        const double off = -h * inv;
        r.a[i] = i == 0 ? 0.0 : i == n - 1 ? 2.0 * off : off;
        r.c[i] = i == n - 1 ? 0.0 : i == 0 ? 2.0 * off : off;
        r.b[i] = 1.0 + 2.0 * h * inv - h * ref_reaction_derivative(bv, p.a) + h * p.beta();
    }
}

static std::vector<double> ref_thomas(const CnRef& r) {
    Systems<double> s{r.b.size(), r.b.size(), 1, r.a, r.b, r.c, r.g};
    return thomas_ref(s, 0);
}

// max |d|, NaN when any is NaN (update_norm in implicit.rs).
static double ref_update_norm(const std::vector<double>& d) {
    double m = 0.0;
    for (double x : d) {
        if (std::isnan(x)) return std::fabs(x);
        m = std::max(m, std::fabs(x));
    }
    return m;
}

static double ref_flush(double x) { return std::fabs(x) < 1e-30 ? 0.0 : x; }

// One reference step; returns the Newton iterations, or -1 when it did not converge.
static int ref_cn_step(const CnCase& p, std::vector<double>& v, std::vector<double>& w, const std::vector<double>& src, double tol, u32 max_iter) {
    CnRef r;
    ref_cn_explicit(p, v, w, src, r);
    for (u32 it = 1; it <= max_iter; ++it) {
        ref_cn_assemble(p, r);
        const auto delta = ref_thomas(r);
        for (u64 i = 0; i < p.n; ++i) r.big_v[i] += delta[i];
        const double update = ref_update_norm(delta);
        if (!std::isfinite(update)) return -1;
        if (update <= tol) {
            for (u64 i = 0; i < p.n; ++i) {
                w[i] = ref_flush(r.sw[i] + p.beta() * r.big_v[i]);
                v[i] = ref_flush(r.big_v[i]);
            }
            return (int)it;
        }
    }
    return -1;
}

// Launches as CnDevice in crates/pde/src/cuda.rs: grid-stride, 256 threads (a few blocks here).
static unsigned cn_grid(u64 n) { return (unsigned)std::min<u64>(3, (n + 255) / 256); }

static void sim_cn_explicit(const CnCase& p, std::vector<double>& v, std::vector<double>& w, std::vector<double>& src, CnRef& d) {
    d.sw.assign(p.n, -7.0), d.rhs.assign(p.n, -7.0), d.big_v.assign(p.n, -7.0);
    warpath_sim::launch(cn_grid(p.n), 256, 0, [&] {
        pde_fhn_cn_explicit_f64(v.data(), w.data(), src.empty() ? nullptr : src.data(), d.sw.data(), d.rhs.data(), d.big_v.data(), p.n, CnCoeffs{p.h(), p.inv_dx2(), p.a, p.alpha(), p.beta(), p.lk, p.rk, p.lv, p.rv});
    });
}

static void sim_cn_assemble(const CnCase& p, CnRef& d) {
    d.a.assign(p.n, -7.0), d.b.assign(p.n, -7.0), d.c.assign(p.n, -7.0), d.g.assign(p.n, -7.0);
    warpath_sim::launch(cn_grid(p.n), 256, 0, [&] {
        pde_fhn_cn_assemble_f64(d.big_v.data(), d.rhs.data(), d.a.data(), d.b.data(), d.c.data(), d.g.data(), p.n, CnCoeffs{p.h(), p.inv_dx2(), p.a, p.alpha(), p.beta(), p.lk, p.rk, p.lv, p.rv});
    });
}

// V += delta on the simulated device; returns the reduced max-norm.
static double sim_cn_update(std::vector<double>& big_v, std::vector<double>& delta, unsigned grid) {
    u64 max_bits = 0;
    warpath_sim::launch(grid, 256, 0, [&] { pde_fhn_cn_update_f64(big_v.data(), delta.data(), big_v.size(), &max_bits); });
    double m;
    std::memcpy(&m, &max_bits, 8);
    return m;
}

enum class CnSolver { Pcr, CrPcr };

// The Newton system's solve as DeviceTridiag::solve (Thomas maps to PCR up to 1024 rows).
static std::vector<double> sim_cn_solve(const CnRef& d, CnSolver solver) {
    const u64 n = d.b.size();
    std::vector<double> x(n, -7.0);
    if (n > 1024) {
        std::vector<double> cur[4] = {d.a, d.b, d.c, d.g}, nxt[4];
        for (auto& v : nxt) v.assign(n, -7.0);
        sim_pcr_thomas(cur, nxt, x, n);
        return x;
    }
    u64 p2 = 1;
    while (p2 < n) p2 <<= 1;
    if (solver == CnSolver::CrPcr) {
        const unsigned threads = (unsigned)std::clamp<u64>(p2 / 2, 32, 512);
        warpath_sim::launch(1, threads, 5 * n * 8, [&] {
            pde_tridiag_batch_cr_pcr_f64(d.a.data(), d.b.data(), d.c.data(), d.g.data(), x.data(), n, n, 1, std::min<u64>(threads, 64));
        });
    } else {
        warpath_sim::launch(1, (unsigned)std::clamp<u64>(p2, 32, 1024), 4 * n * 8, [&] {
            pde_tridiag_batch_pcr_f64(d.a.data(), d.b.data(), d.c.data(), d.g.data(), x.data(), n, n, 1);
        });
    }
    return x;
}

static int sim_cn_step(const CnCase& p, std::vector<double>& v, std::vector<double>& w, std::vector<double>& src, double tol, u32 max_iter, CnSolver solver) {
    CnRef d;
    sim_cn_explicit(p, v, w, src, d);
    for (u32 it = 1; it <= max_iter; ++it) {
        sim_cn_assemble(p, d);
        auto delta = sim_cn_solve(d, solver);
        const double update = sim_cn_update(d.big_v, delta, cn_grid(p.n));
        if (!std::isfinite(update)) return -1;
        if (update <= tol) {
            warpath_sim::launch(cn_grid(p.n), 256, 0, [&] { pde_fhn_cn_finish_f64(d.big_v.data(), d.sw.data(), v.data(), w.data(), p.n, p.beta()); });
            return (int)it;
        }
    }
    return -1;
}

static bool same_bits(double x, double y) { return std::memcmp(&x, &y, 8) == 0; }

static void cn_start(const CnCase& p, std::vector<double>& v, std::vector<double>& w) {
    v.resize(p.n), w.resize(p.n);
    for (u64 i = 0; i < p.n; ++i) {
        const double x = (double)i - (double)p.n / 3.0;
        v[i] = std::exp(-x * x / 20.0) + 1e-31 * (double)(i % 3);  // some tiny values to flush
        w[i] = 0.02 * std::sin(0.1 * (double)i);
    }
    // Dirichlet nodes start off their values: the step must set them.
}

// Each kernel on one step, bit for bit.
static void check_cn_kernels(const CnCase& p, bool with_source) {
    std::vector<double> v, w, src;
    cn_start(p, v, w);
    if (with_source)
        for (u64 i = 0; i < 2 * p.n; ++i) src.push_back(1e-3 * std::cos((double)i));
    CnRef r, d;
    ref_cn_explicit(p, v, w, src, r);
    sim_cn_explicit(p, v, w, src, d);
    for (u64 i = 0; i < p.n; ++i)
        SIM_CHECK(same_bits(d.sw[i], r.sw[i]) && same_bits(d.rhs[i], r.rhs[i]) && same_bits(d.big_v[i], r.big_v[i]),
                  "cn explicit n=%llu i=%llu: sw %.17g/%.17g rhs %.17g/%.17g V %.17g/%.17g", p.n, i, d.sw[i], r.sw[i], d.rhs[i], r.rhs[i], d.big_v[i], r.big_v[i]);
    // Assemble at a perturbed iterate (so f'(V) and the residual are not trivial).
    for (u64 i = 0; i < p.n; ++i) r.big_v[i] = d.big_v[i] = r.big_v[i] + 0.01 * std::sin((double)i);
    ref_cn_assemble(p, r);
    sim_cn_assemble(p, d);
    for (u64 i = 0; i < p.n; ++i)
        SIM_CHECK(same_bits(d.a[i], r.a[i]) && same_bits(d.b[i], r.b[i]) && same_bits(d.c[i], r.c[i]) && same_bits(d.g[i], r.g[i]),
                  "cn assemble n=%llu i=%llu: a %.17g/%.17g b %.17g/%.17g c %.17g/%.17g g %.17g/%.17g", p.n, i, d.a[i], r.a[i], d.b[i], r.b[i], d.c[i], r.c[i], d.g[i], r.g[i]);
    // Finish, with tiny values to flush in V and in sw + beta V.
    for (u64 i = 0; i < p.n; i += 2) d.big_v[i] = 1e-31 * (double)(i % 5), d.sw[i] = -p.beta() * d.big_v[i] + 1e-32;
    std::vector<double> fv(p.n, -7.0), fw(p.n, -7.0);
    warpath_sim::launch(cn_grid(p.n), 256, 0, [&] { pde_fhn_cn_finish_f64(d.big_v.data(), d.sw.data(), fv.data(), fw.data(), p.n, p.beta()); });
    for (u64 i = 0; i < p.n; ++i)
        SIM_CHECK(same_bits(fv[i], ref_flush(d.big_v[i])) && same_bits(fw[i], ref_flush(d.sw[i] + p.beta() * d.big_v[i])), "cn finish n=%llu i=%llu", p.n, i);
}

// The update and its max-norm reduction: several blocks, grid-stride, sizes off the block size,
// the maximum in any position, negative values, infinities and NaN.
static void check_cn_update(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (u64 n : {1ull, 31ull, 257ull, 1000ull, 2049ull})
        for (unsigned grid : {1u, 3u})
            for (int special = 0; special < 4; ++special) {
                std::vector<double> v(n), delta(n);
                for (u64 i = 0; i < n; ++i) v[i] = u(rng), delta[i] = 1e-3 * u(rng);
                const u64 at = rng() % n;
                if (special == 1) delta[at] = -5.0;
                if (special == 2) delta[at] = -INFINITY;
                if (special == 3) delta[at] = NAN;
                std::vector<double> want = v;
                for (u64 i = 0; i < n; ++i) want[i] += delta[i];
                const double ref = ref_update_norm(delta);
                const double got = sim_cn_update(v, delta, grid);
                SIM_CHECK(same_bits(got, ref) || (std::isnan(got) && std::isnan(ref)), "cn update norm n=%llu grid=%u special=%d: %.17g vs %.17g", n, grid, special, got, ref);
                for (u64 i = 0; i < n; ++i)
                    SIM_CHECK(same_bits(v[i], want[i]) || (std::isnan(v[i]) && std::isnan(want[i])), "cn update n=%llu i=%llu", n, i);
            }
}

// Whole runs: steps of the simulated device path against the reference.
static void check_cn_run(const CnCase& p, u32 steps, bool with_source, CnSolver solver) {
    std::vector<double> rv, rw, sv, sw, src;
    cn_start(p, rv, rw);
    sv = rv, sw = rw;
    for (u32 s = 0; s < steps; ++s) {
        src.clear();
        if (with_source)
            for (u64 i = 0; i < 2 * p.n; ++i) src.push_back(1e-3 * std::cos((double)(i + s)));
        const int ri = ref_cn_step(p, rv, rw, src, 1e-10, 30);
        const int si = sim_cn_step(p, sv, sw, src, 1e-10, 30, solver);
        SIM_CHECK(ri > 0 && ri == si, "cn run n=%llu step %u: Newton iterations %d (reference) vs %d (kernels)", p.n, s, ri, si);
        for (u64 i = 0; i < p.n; ++i)
            SIM_CHECK(std::fabs(sv[i] - rv[i]) <= 1e-12 && std::fabs(sw[i] - rw[i]) <= 1e-12, "cn run n=%llu step %u i=%llu: v %.17g vs %.17g, w %.17g vs %.17g",
                      p.n, s, i, sv[i], rv[i], sw[i], rw[i]);
    }
    // Non-convergence: one iteration allowed is not enough for this step.
    std::vector<double> v1 = sv, w1 = sw;
    SIM_CHECK(ref_cn_step(p, v1, w1, src, 1e-10, 1) == -1 && sim_cn_step(p, sv, sw, src, 1e-10, 1, solver) == -1, "cn run n=%llu: one Newton iteration converged", p.n);
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
    for (u64 n : {3ull, 257ull, 2000ull}) {
        CnCase noflux{n, 0.5, 0.5};
        CnCase dirichlet{n, 0.5, 0.5};
        dirichlet.rk = 1, dirichlet.rv = 1.0;
        CnCase both{n, 0.3, 0.5};
        both.lk = 1, both.lv = 0.25, both.rk = 1, both.rv = 1.0;
        for (const CnCase* p : {&noflux, &dirichlet, &both}) {
            check_cn_kernels(*p, false);
            check_cn_kernels(*p, true);
        }
    }
    check_cn_update(rng);
    for (CnSolver solver : {CnSolver::Pcr, CnSolver::CrPcr}) {
        CnCase noflux{257, 0.5, 0.5};
        CnCase dirichlet{257, 0.5, 0.5};
        dirichlet.rk = 1, dirichlet.rv = 1.0;
        check_cn_run(noflux, 4, false, solver);
        check_cn_run(dirichlet, 4, true, solver);
    }
    CnCase big{2000, 0.5, 0.5};  // the PCR-Thomas hybrid
    big.rk = 1, big.rv = 1.0;
    check_cn_run(big, 2, false, CnSolver::Pcr);
    std::printf("crank-nicolson kernels: ok\n");
    return 0;
}
