// CPU simulation of kernels-cuda/assignment.cu: Bertsekas' auction, both the multi-kernel round
// loop (auction_reset/bid/claim/assign/collect, as crates/assignment/src/auction.rs launches it)
// and the one-launch batch kernel (auction_batch), on integer benefits with eps_final < 1/n, where
// the auction must return an optimal assignment. Checked against an exact O(n^3) Hungarian
// (shortest augmenting path with potentials), including matrices with many ties.
#include "sim/cuda_sim.hpp"
#include "sim/check.hpp"
#include "assignment.cu"

#include <limits>
#include <random>

// Maximum-benefit assignment value (exact, integer benefits as doubles).
static double optimum(const std::vector<double>& b, u32 n) {
    const double INF = std::numeric_limits<double>::infinity();
    std::vector<double> u(n + 1), v(n + 1);
    std::vector<int> p(n + 1), way(n + 1);
    for (u32 i = 1; i <= n; ++i) {
        p[0] = (int)i;
        int j0 = 0;
        std::vector<double> minv(n + 1, INF);
        std::vector<char> used(n + 1, 0);
        do {
            used[j0] = 1;
            int i0 = p[j0], j1 = 0;
            double delta = INF;
            for (u32 j = 1; j <= n; ++j)
                if (!used[j]) {
                    const double cur = -b[(u64)(i0 - 1) * n + (j - 1)] - u[i0] - v[j];
                    if (cur < minv[j]) { minv[j] = cur; way[j] = j0; }
                    if (minv[j] < delta) { delta = minv[j]; j1 = (int)j; }
                }
            for (u32 j = 0; j <= n; ++j)
                if (used[j]) { u[p[j]] += delta; v[j] -= delta; } else minv[j] -= delta;
            j0 = j1;
        } while (p[j0] != 0);
        do { const int j1 = way[j0]; p[j0] = p[j1]; j0 = j1; } while (j0);
    }
    double total = 0;
    for (u32 j = 1; j <= n; ++j) total += b[(u64)(p[j] - 1) * n + (j - 1)];
    return total;
}

static double value_of(const std::vector<double>& b, u32 n, const u32* assigned) {
    std::vector<char> seen(n, 0);
    double total = 0;
    for (u32 i = 0; i < n; ++i) {
        SIM_CHECK(assigned[i] < n, "person %u unassigned (%u)", i, assigned[i]);
        SIM_CHECK(!seen[assigned[i]], "column %u assigned twice", assigned[i]);
        seen[assigned[i]] = 1;
        total += b[(u64)i * n + assigned[i]];
    }
    return total;
}

static std::vector<double> make_benefit(u32 n, int levels, std::mt19937_64& rng) {
    std::vector<double> b((u64)n * n);
    for (auto& x : b) x = (double)(rng() % levels);
    return b;
}

static std::vector<u32> run_rounds(const std::vector<double>& b, u32 n, double eps_start, double eps_final) {
    std::vector<double> price(n, 0.0), bid_val(n);
    std::vector<u32> owner(n), assigned(n), bidders(n), next(n), bid_obj(n), winner(n), count(1);
    std::vector<u64> high(n);
    const unsigned per_elem = (unsigned)std::min<u64>(3, (n + 255) / 256);
    double eps = eps_start;
    for (bool last = false; !last; eps /= 6.0) {
        if (eps <= eps_final * 6.0) { eps = eps_final; last = true; }
        warpath_sim::launch(per_elem, 256, 0, [&] { auction_reset(owner.data(), assigned.data(), bidders.data(), high.data(), winner.data(), n); });
        u64 c = n;
        for (int rounds = 0; c > 0; ++rounds) {
            SIM_CHECK(rounds < 100000, "auction does not terminate (n=%u)", n);
            const unsigned blocks = (unsigned)((c + 7) / 8);
            warpath_sim::launch(blocks, 256, 0, [&] { auction_bid(b.data(), price.data(), bidders.data(), c, n, eps, bid_obj.data(), bid_val.data(), high.data()); });
            warpath_sim::launch((unsigned)std::min<u64>(2, (c + 255) / 256), 256, 0, [&] { auction_claim(bidders.data(), bid_obj.data(), bid_val.data(), high.data(), winner.data(), c); });
            warpath_sim::launch(per_elem, 256, 0, [&] { auction_assign(high.data(), winner.data(), owner.data(), assigned.data(), price.data(), n); });
            count[0] = 0;
            warpath_sim::launch(per_elem, 256, 0, [&] { auction_collect(assigned.data(), next.data(), count.data(), n); });
            bidders.swap(next);
            c = count[0];
        }
    }
    return assigned;
}

int main() {
    std::mt19937_64 rng(5);
    // Multi-kernel rounds.
    for (u32 n : {1u, 2u, 3u, 7u, 33u, 64u}) {
        for (int levels : {3, 100}) {
            const auto b = make_benefit(n, levels, rng);
            const double eps_final = 1.0 / (n + 1);
            const auto a = run_rounds(b, n, levels / 2.0, eps_final);
            const double got = value_of(b, n, a.data()), best = optimum(b, n);
            SIM_CHECK(got == best, "rounds n=%u levels=%d: %g vs optimum %g", n, levels, got, best);
        }
    }
    std::printf("auction rounds: ok\n");
    // Batch: problems of different sizes in one launch, fewer blocks than problems.
    const std::vector<u32> sizes = {1, 5, 2, 40, 9, 64, 3, 33};
    const u64 problems = sizes.size();
    std::vector<u64> boff(problems), soff(problems);
    std::vector<double> eps_start(problems), eps_final(problems), benefit;
    std::vector<std::vector<double>> mats;
    u64 btotal = 0, stotal = 0;
    for (u64 p = 0; p < problems; ++p) {
        const u32 n = sizes[p];
        mats.push_back(make_benefit(n, p % 2 ? 4 : 1000, rng));
        boff[p] = btotal;
        soff[p] = stotal;
        btotal += (u64)n * n;
        stotal += n;
        benefit.insert(benefit.end(), mats.back().begin(), mats.back().end());
        eps_start[p] = (p % 2 ? 4 : 1000) / 2.0;
        eps_final[p] = 1.0 / (n + 1);
    }
    std::vector<double> price(stotal), bid_val(stotal);
    std::vector<u32> owner(stotal), assigned(stotal, 0xAAAAAAAAu), winner(stotal), bidders(stotal), bid_obj(stotal);
    std::vector<u64> high(stotal);
    warpath_sim::launch(3, 256, 0, [&] {
        auction_batch(benefit.data(), boff.data(), sizes.data(), soff.data(), eps_start.data(), eps_final.data(), problems,
                      price.data(), owner.data(), assigned.data(), high.data(), winner.data(), bidders.data(), bid_obj.data(), bid_val.data());
    });
    for (u64 p = 0; p < problems; ++p) {
        const double got = value_of(mats[p], sizes[p], assigned.data() + soff[p]), best = optimum(mats[p], sizes[p]);
        SIM_CHECK(got == best, "batch problem %llu (n=%u): %g vs optimum %g", p, sizes[p], got, best);
    }
    std::printf("auction batch: ok\n");
    return 0;
}
