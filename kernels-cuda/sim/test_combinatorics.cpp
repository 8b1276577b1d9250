// CPU simulation of kernels-cuda/combinatorics.cu (see sim/cuda_sim.hpp): batch generation
// against std::next_permutation, and the permutation search against a brute-force reference,
// including ties (smallest rank wins), forbidden (+inf) entries, and partial ranges.
#include "sim/cuda_sim.hpp"
#include "combinatorics.cu"

#include <bit>
#include <cmath>
#include <cstdio>
#include <random>

// Dynamic shared memory for every launch: the tile of permutations or the n x n matrix.
static const size_t SMEM = 1 << 16;

template <class F>
void launch(unsigned grid, unsigned block, F body) {
    warpath_sim::launch(grid, block, SMEM, body);
}

static u64 fact(int n) { u64 f = 1; for (int i = 2; i <= n; ++i) f *= i; return f; }

static void ref_unrank(int n, u64 r, unsigned char* p) {
    std::vector<int> un; for (int i = 0; i < n; ++i) un.push_back(i);
    for (int i = 0; i < n; ++i) { u64 f = fact(n - 1 - i); int d = r / f; r %= f; p[i] = un[d]; un.erase(un.begin() + d); }
}

int failures = 0;

void check_batch(u32 n, u64 start, u64 count, u32 steps, unsigned grid) {
    std::vector<unsigned char> out(count * n + 8, 0xAB);
    launch(grid, 128, [&] { combinatorics_permutations_u8(out.data(), n, start, count, steps); });
    std::vector<unsigned char> p(n);
    ref_unrank(n, start, p.data());
    for (u64 i = 0; i < count; ++i) {
        if (memcmp(out.data() + i * n, p.data(), n) != 0) { printf("batch FAIL n=%u start=%llu count=%llu steps=%u at %llu\n", n, start, count, steps, i); failures++; return; }
        std::next_permutation(p.begin(), p.end());
    }
    for (int i = 0; i < 8; ++i) if (out[count * n + i] != 0xAB) { printf("batch OVERRUN n=%u\n", n); failures++; return; }
}

void check_search(u32 n, u32 obj, u64 start, u64 count, unsigned grid, std::mt19937_64& rng, int levels) {
    std::vector<double> m(n * n);
    for (auto& x : m) x = (double)(rng() % levels) * 0.37;
    if (levels == 7) m[0] = INFINITY;
    std::vector<double> bs(grid); std::vector<u64> br(grid);
    launch(grid, 256, [&] { combinatorics_search_permutations_f64(m.data(), n, obj, start, count, 64, bs.data(), br.data()); });
    double best = INFINITY; u64 brank = ~0ull;
    for (unsigned b = 0; b < grid; ++b) if (br[b] != ~0ull && (bs[b] < best || (bs[b] == best && br[b] < brank))) { best = bs[b]; brank = br[b]; }
    // reference
    std::vector<unsigned char> p(n); ref_unrank(n, start, p.data());
    double rb = INFINITY; u64 rr = ~0ull;
    for (u64 i = 0; i < count; ++i) {
        double s = 0.0;
        if (obj == 1) { for (u32 j = 0; j + 1 < n; ++j) s += m[p[j] * n + p[j + 1]]; s += m[p[n - 1] * n + p[0]]; }
        else { for (u32 j = 0; j < n; ++j) s += m[j * n + p[j]]; }
        if (s < rb || (s == rb && start + i < rr)) { rb = s; rr = start + i; }
        std::next_permutation(p.begin(), p.end());
    }
    if (rr != brank || std::bit_cast<u64>(rb) != std::bit_cast<u64>(best)) {
        printf("search FAIL n=%u obj=%u start=%llu count=%llu: got %llu %g want %llu %g\n", n, obj, start, count, brank, best, rr, rb); failures++;
    }
}

int main() {
    for (u32 n : {1u, 2u, 3u, 5u, 7u, 9u, 12u, 20u}) {
        u64 total = n <= 20 ? fact(n) : 0;
        for (u32 steps : {1u, 3u, 4u, 16u}) {
            for (auto [start, count] : std::vector<std::pair<u64, u64>>{{0, std::min<u64>(total, 5000)}, {total - std::min<u64>(total, 1025), std::min<u64>(total, 1025)}, {total / 3, std::min<u64>(total - total / 3, 777)}}) {
                check_batch(n, start, count, steps, 3);
            }
        }
    }
    check_batch(8, 0, 40320, 4, 5);  // all of 8!, many tiles per block
    std::mt19937_64 rng(1);
    for (u32 n : {1u, 2u, 3u, 4u, 6u, 8u}) {
        for (u32 obj : {0u, 1u}) {
            for (int levels : {3, 1000, 7}) {
                u64 total = fact(n);
                check_search(n, obj, 0, total, 3, rng, levels);
                if (total > 10) check_search(n, obj, total / 3, total / 2, 2, rng, levels);
            }
        }
    }
    check_search(12, 0, 400000000ull, 100000, 4, rng, 1000);
    check_search(20, 1, 2432902008176640000ull - 70000, 70000, 3, rng, 50);
    printf("failures: %d\n", failures);
    return failures != 0;
}
