// CPU simulation of kernels-cuda/assignment.cu: Bertsekas' auction, both the multi-kernel round
// loop (assignment_auction_reset/bid/claim/assign/collect, driven as crates/assignment/src/auction.rs
// drives them: bidder count in device memory, double-buffered, read back once per batch of
// rounds) and the one-launch batch kernel (assignment_auction_batch). The round loop is checked against a
// plain sequential Jacobi auction (same rounds, same prices bit for bit, same assignment) under
// several batch schedules, and, on integer benefits with eps_final < 1/n, against the optimum of
// an exact O(n^3) Hungarian (shortest augmenting path with potentials), including matrices with
// many ties.
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

// The Jacobi auction as a plain sequential loop (the CPU solver's jacobi_phase in
// crates/assignment/src/auction.rs): the oracle for the round kernels' bids, prices and rounds.
struct AuctionRun {
    std::vector<u32> assigned;
    std::vector<double> price;
    std::vector<u32> round_bidders;  // bidders of every round that had any, in order
    int host_reads = 0;              // counter read-backs (device loop only)
};

static double next_up(double x) { return std::nextafter(x, INFINITY); }

static AuctionRun reference_rounds(const std::vector<double>& b, u32 n, double eps_start, double eps_final) {
    const u32 NONE = AUCTION_NONE;
    AuctionRun r;
    r.price.assign(n, 0.0);
    std::vector<u32> owner(n), winner(n, NONE), bidders, next, bid_obj;
    std::vector<double> high(n, -INFINITY), bid_val;
    r.assigned.assign(n, NONE);
    double eps = eps_start;
    for (bool last = false; !last; eps /= 6.0) {
        if (eps <= eps_final * 6.0) { eps = eps_final; last = true; }
        std::fill(owner.begin(), owner.end(), NONE);
        std::fill(r.assigned.begin(), r.assigned.end(), NONE);
        bidders.clear();
        for (u32 i = 0; i < n; ++i) bidders.push_back(i);
        while (!bidders.empty()) {
            r.round_bidders.push_back((u32)bidders.size());
            bid_obj.clear();
            bid_val.clear();
            for (u32 i : bidders) {
                u32 bj = 0;
                double best = -INFINITY, second = -INFINITY;
                for (u32 j = 0; j < n; ++j) {
                    const double v = b[(u64)i * n + j] - r.price[j];
                    if (v > best) { second = best; best = v; bj = j; } else if (v > second) second = v;
                }
                const double inc = second == -INFINITY ? eps : best - second + eps;
                bid_obj.push_back(bj);
                bid_val.push_back(std::max(r.price[bj] + inc, next_up(r.price[bj])));
            }
            for (size_t k = 0; k < bidders.size(); ++k) {
                const u32 j = bid_obj[k], i = bidders[k];
                if (winner[j] == NONE || bid_val[k] > high[j] || (bid_val[k] == high[j] && i < winner[j])) {
                    high[j] = bid_val[k];
                    winner[j] = i;
                }
            }
            next.clear();
            for (size_t k = 0; k < bidders.size(); ++k)
                if (winner[bid_obj[k]] != bidders[k]) next.push_back(bidders[k]);
            for (u32 j = 0; j < n; ++j) {
                if (winner[j] == NONE) continue;
                if (owner[j] != NONE) { r.assigned[owner[j]] = NONE; next.push_back(owner[j]); }
                owner[j] = winner[j];
                r.assigned[winner[j]] = j;
                r.price[j] = high[j];
                winner[j] = NONE;
                high[j] = -INFINITY;
            }
            bidders.swap(next);
        }
    }
    return r;
}

// A sparse benefit matrix in CSR form (columns sorted within a row), as the host uploads it.
struct Csr {
    std::vector<u64> indptr;
    std::vector<u32> indices;
    std::vector<double> benefit;
};

// The CSR of the finite entries of a dense matrix (-inf: no entry).
static Csr csr_of(const std::vector<double>& b, u32 n) {
    Csr c;
    c.indptr.push_back(0);
    for (u32 i = 0; i < n; ++i) {
        for (u32 j = 0; j < n; ++j) {
            const double v = b[(u64)i * n + j];
            if (v != -INFINITY) {
                c.indices.push_back(j);
                c.benefit.push_back(v);
            }
        }
        c.indptr.push_back(c.indices.size());
    }
    return c;
}

// The round kernels driven as solve_cuda drives them: the bidder count lives in device memory
// (two counters, swapped with the two bidder lists every round), `batch(previous)` rounds are
// queued between two reads of the counter, and the rounds queued after it reaches 0 are no-ops.
// `round_bidders` peeks at the counter before each round: instrumentation for the comparison
// with the reference, not something the host loop does. With `csr`, the bids come from
// assignment_auction_bid_csr on it instead of assignment_auction_bid on `b`.
template <class NextBatch>
static AuctionRun device_rounds(const std::vector<double>& b, u32 n, double eps_start, double eps_final,
                                u32 first_batch, NextBatch batch, const Csr* csr = nullptr) {
    AuctionRun r;
    r.price.assign(n, 0.0);
    std::vector<double> bid_val(n);
    std::vector<u32> owner(n), bidders(n), next(n), bid_obj(n), winner(n), count(1, 0xAAAAAAAAu),
        next_count(1, 0xAAAAAAAAu);
    std::vector<u64> high(n);
    r.assigned.assign(n, 0);
    // Small blocks and capped grids (as on the device, a few blocks per SM): the 4 bid warps
    // stride over the bidders, the per-column threads over the columns when n > 64, and
    // several blocks share the work when n > 32.
    const unsigned per_elem = (unsigned)std::min<u64>(2, (n + 31) / 32);
    const unsigned bid_blocks = (unsigned)std::min<u64>(2, (n + 1) / 2);  // 2 warps per block
    double eps = eps_start;
    int rounds = 0;
    for (bool last = false; !last; eps /= 6.0) {
        if (eps <= eps_final * 6.0) { eps = eps_final; last = true; }
        warpath_sim::launch(per_elem, 32, 0, [&] { assignment_auction_reset(owner.data(), r.assigned.data(), bidders.data(), high.data(), winner.data(), count.data(), n); });
        for (u32 queued = first_batch;; queued = batch(queued)) {
            for (u32 q = 0; q < queued; ++q) {
                SIM_CHECK(++rounds < 100000, "auction does not terminate (n=%u)", n);
                SIM_CHECK(count[0] <= n, "bidder count %u > n=%u (counter not reset or not zeroed)", count[0], n);
                if (count[0] != 0) r.round_bidders.push_back(count[0]);
                const std::vector<double> price_before = r.price;
                const std::vector<u32> assigned_before = r.assigned, owner_before = owner;
                const bool idle = count[0] == 0;
                if (csr) {
                    warpath_sim::launch(bid_blocks, 64, 0, [&] { assignment_auction_bid_csr(csr->indptr.data(), csr->indices.data(), csr->benefit.data(), r.price.data(), bidders.data(), count.data(), eps, bid_obj.data(), bid_val.data(), high.data()); });
                } else {
                    warpath_sim::launch(bid_blocks, 64, 0, [&] { assignment_auction_bid(b.data(), r.price.data(), bidders.data(), count.data(), n, eps, bid_obj.data(), bid_val.data(), high.data()); });
                }
                warpath_sim::launch(per_elem, 32, 0, [&] { assignment_auction_claim(bidders.data(), bid_obj.data(), bid_val.data(), high.data(), winner.data(), count.data()); });
                warpath_sim::launch(per_elem, 32, 0, [&] { assignment_auction_assign(high.data(), winner.data(), owner.data(), r.assigned.data(), r.price.data(), count.data(), next_count.data(), n); });
                warpath_sim::launch(per_elem, 32, 0, [&] { assignment_auction_collect(r.assigned.data(), count.data(), next.data(), next_count.data(), n); });
                if (idle) {
                    SIM_CHECK(next_count[0] == 0 && r.price == price_before && r.assigned == assigned_before && owner == owner_before,
                              "a round without bidders changed the state (n=%u)", n);
                }
                bidders.swap(next);
                count.swap(next_count);
            }
            ++r.host_reads;
            if (count[0] == 0) break;
        }
        for (u32 j = 0; j < n; ++j)
            SIM_CHECK(high[j] == 0 && winner[j] == AUCTION_NONE, "bid state left at column %u (n=%u)", j, n);
    }
    return r;
}

// Runs the device loop under several batch schedules and checks each against the reference:
// the same rounds (bidder counts), the same prices (bit for bit) and the same assignment.
static AuctionRun check_device_rounds(const std::vector<double>& b, u32 n, double eps_start, double eps_final,
                                      const Csr* csr = nullptr) {
    const AuctionRun ref = reference_rounds(b, n, eps_start, eps_final);
    const auto fixed = [](u32 q) { return q; };
    const auto doubling = [](u32 q) { return std::min<u32>(2 * q, 64); };  // solve_cuda's
    AuctionRun out;
    // An odd batch makes phases start on either counter of the pair (run on the smaller
    // problems only, to keep the test short); the doubling one is the host's and queues no-op
    // rounds after each phase's last.
    const struct { const char* name; u32 first; bool adaptive; } schedules[] = {
        {"4 doubling to 64", 4, true}, {"3 per read", 3, false}};
    for (const auto& s : schedules) {
        if (!s.adaptive && n > 40) continue;
        AuctionRun got = s.adaptive ? device_rounds(b, n, eps_start, eps_final, s.first, doubling, csr)
                                    : device_rounds(b, n, eps_start, eps_final, s.first, fixed, csr);
        SIM_CHECK(got.round_bidders == ref.round_bidders, "n=%u, %s: %zu rounds vs the reference's %zu (or other bidder counts)",
                  n, s.name, got.round_bidders.size(), ref.round_bidders.size());
        SIM_CHECK(got.price == ref.price, "n=%u, %s: prices differ from the reference", n, s.name);
        SIM_CHECK(got.assigned == ref.assigned, "n=%u, %s: assignment differs from the reference", n, s.name);
        SIM_CHECK(got.host_reads <= (int)ref.round_bidders.size(), "n=%u, %s: more reads than rounds", n, s.name);
        if (s.adaptive) out = got;
    }
    return out;
}

int main() {
    std::mt19937_64 rng(5);
    // Round kernels with the device-side bidder count: integer benefits (exact optimum).
    int rounds = 0, reads = 0;
    for (u32 n : {1u, 2u, 3u, 7u, 33u, 70u}) {
        for (int levels : {3, 100}) {
            const auto b = make_benefit(n, levels, rng);
            const double eps_final = 1.0 / (n + 1);
            const auto a = check_device_rounds(b, n, levels / 2.0, eps_final);
            const double got = value_of(b, n, a.assigned.data()), best = optimum(b, n);
            SIM_CHECK(got == best, "rounds n=%u levels=%d: %g vs optimum %g", n, levels, got, best);
            rounds += (int)a.round_bidders.size();
            reads += a.host_reads;
        }
    }
    // Float benefits: the same bids as the reference, bit for bit.
    for (u32 n : {5u, 40u}) {
        std::vector<double> b((u64)n * n);
        std::uniform_real_distribution<double> u(0.0, 1.0);
        for (auto& x : b) x = u(rng);
        const auto a = check_device_rounds(b, n, 0.5, 1e-9 / n);
        value_of(b, n, a.assigned.data());
    }
    std::printf("auction rounds: ok (%d rounds, %d counter reads with batches doubling to 64)\n", rounds, reads);
    // CSR bids: sparse benefit matrices with a perfect matching (the diagonal kept), rows of
    // zero to over 64 entries besides it; the same rounds, prices and assignment as the
    // sequential reference on the dense matrix with -inf for the missing entries, and the
    // optimum on integer benefits.
    int csr_rounds = 0;
    for (u32 n : {1u, 2u, 5u, 33u, 70u, 130u}) {
        for (int levels : {3, 1000}) {
            for (int keep : {10, 60}) {
                auto b = make_benefit(n, levels, rng);
                for (u32 i = 0; i < n; ++i)
                    for (u32 j = 0; j < n; ++j)
                        if (i != j && (int)(rng() % 100) >= keep) b[(u64)i * n + j] = -INFINITY;
                const Csr c = csr_of(b, n);
                const auto a = check_device_rounds(b, n, levels / 2.0, 1.0 / (n + 1), &c);
                const double got = value_of(b, n, a.assigned.data()), best = optimum(b, n);
                SIM_CHECK(got == best, "csr n=%u levels=%d keep=%d: %g vs optimum %g", n, levels, keep, got, best);
                csr_rounds += (int)a.round_bidders.size();
            }
        }
    }
    std::printf("auction csr bids: ok (%d rounds)\n", csr_rounds);
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
        assignment_auction_batch(benefit.data(), boff.data(), sizes.data(), soff.data(), eps_start.data(), eps_final.data(), problems,
                      price.data(), owner.data(), assigned.data(), high.data(), winner.data(), bidders.data(), bid_obj.data(), bid_val.data());
    });
    for (u64 p = 0; p < problems; ++p) {
        const double got = value_of(mats[p], sizes[p], assigned.data() + soff[p]), best = optimum(mats[p], sizes[p]);
        SIM_CHECK(got == best, "batch problem %llu (n=%u): %g vs optimum %g", p, sizes[p], got, best);
    }
    std::printf("auction batch: ok\n");
    return 0;
}
