// CPU simulation of kernels-cuda/primitives.cu: the decoupled look-back scan and the Onesweep
// radix sort (keys only and key-value pairs, 32- and 64-bit keys), launched in the same sequence
// as crates/gpu-primitives/src/cuda.rs, over sizes around tile boundaries, against std
// references. Logic only: blocks run one at a time here.
#include "sim/cuda_sim.hpp"
#include "sim/check.hpp"
#include "primitives.cu"

#include <random>

static const unsigned BLOCK = 256;
static const u64 SCAN_TILE_N = 2048;
static const u64 SORT_TILE_NARROW = 256 * 16;
static const u64 SORT_TILE_WIDE = 256 * 12;

static unsigned grid_stride_blocks(u64 n) { return (unsigned)std::max<u64>(1, std::min<u64>((n + BLOCK - 1) / BLOCK, 8)); }

static void check_scan(u64 n, bool inclusive, std::mt19937_64& rng) {
    std::vector<u32> in(n);
    for (auto& x : in) x = (u32)(rng() >> 40);  // large values: sums overflow u32, not u64
    const u64 tiles = (n + SCAN_TILE_N - 1) / SCAN_TILE_N;
    std::vector<u64> out(n, 0xAAAAAAAAAAAAAAAAull), agg(tiles, 0), incl(tiles, 0), counter(1, 0);
    std::vector<u32> flags(tiles, 0);
    warpath_sim::launch((unsigned)tiles, BLOCK, 0, [&] {
        scan_u32_u64(in.data(), out.data(), n, inclusive, flags.data(), agg.data(), incl.data(), counter.data());
    });
    u64 acc = 0;
    for (u64 i = 0; i < n; ++i) {
        if (!inclusive) SIM_CHECK(out[i] == acc, "exclusive scan n=%llu i=%llu", n, i);
        acc += in[i];
        if (inclusive) SIM_CHECK(out[i] == acc, "inclusive scan n=%llu i=%llu", n, i);
    }
}

template <class K, class V, bool HAS_V>
static void onesweep_launch(const K* kin, K* kout, const V* vin, V* vout, u64 n, u32 pass, const u64* hist,
                            const u32* trivial, u64* status, u64* counters, unsigned tiles);

#define LAUNCH_OS(NAME, K, V)                                                                        \
    [&](const K* kin, K* kout, const V* vin, V* vout, u32 pass) {                                    \
        warpath_sim::launch(tiles, BLOCK, 0, [&] {                                                   \
            NAME(kin, kout, vin, vout, n, pass, hist.data(), trivial.data(), status.data(), counters.data()); \
        });                                                                                           \
    }

// Sorts `keys` (and `vals`) ascending with the kernels; K is u32 or u64 (kind 0: no transform).
template <class K, class V>
static void gpu_sort(std::vector<K>& keys, std::vector<V>* vals) {
    const u64 n = keys.size();
    const bool narrow = sizeof(K) == 4 && (!vals || sizeof(V) <= 4);
    const u64 tile = narrow ? SORT_TILE_NARROW : SORT_TILE_WIDE;
    const unsigned tiles = (unsigned)((n + tile - 1) / tile);
    const u32 passes = sizeof(K);
    std::vector<u64> hist(passes * 256, 0), status((u64)tiles * 256, 0), counters(passes, 0);
    std::vector<u32> trivial(passes, 0);
    if constexpr (sizeof(K) == 4) {
        warpath_sim::launch(grid_stride_blocks(n), BLOCK, 0, [&] { radix_histogram_w32(keys.data(), n, passes, hist.data()); });
    } else {
        warpath_sim::launch(grid_stride_blocks(n), BLOCK, 0, [&] { radix_histogram_w64(keys.data(), n, passes, hist.data()); });
    }
    warpath_sim::launch(passes, BLOCK, 0, [&] { radix_prepare(hist.data(), n, trivial.data()); });
    std::vector<K> alt_k(n);
    std::vector<V> alt_v(vals ? n : 0);
    for (u32 pass = 0; pass < passes; ++pass) {
        const V* vin = vals ? vals->data() : nullptr;
        V* vout = vals ? alt_v.data() : nullptr;
        warpath_sim::launch(tiles, BLOCK, 0, [&] {
            if constexpr (sizeof(K) == 4 && sizeof(V) == 4) {
                if (vals) onesweep_k32_v32(keys.data(), alt_k.data(), vin, vout, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
                else onesweep_k32(keys.data(), alt_k.data(), (const u32*)nullptr, (u32*)nullptr, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
            } else if constexpr (sizeof(K) == 4 && sizeof(V) == 8) {
                onesweep_k32_v64(keys.data(), alt_k.data(), vin, vout, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
            } else if constexpr (sizeof(K) == 8 && sizeof(V) == 4) {
                if (vals) onesweep_k64_v32(keys.data(), alt_k.data(), vin, vout, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
                else onesweep_k64(keys.data(), alt_k.data(), (const u32*)nullptr, (u32*)nullptr, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
            } else {
                onesweep_k64_v64(keys.data(), alt_k.data(), vin, vout, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
            }
        });
        keys.swap(alt_k);
        if (vals) vals->swap(alt_v);
    }
}

template <class K, class V>
static void check_sort(u64 n, K key_mask, bool with_vals, std::mt19937_64& rng) {
    std::vector<K> keys(n);
    for (auto& k : keys) k = (K)rng() & key_mask;
    std::vector<V> vals(n);
    for (u64 i = 0; i < n; ++i) vals[i] = (V)i;
    std::vector<std::pair<K, V>> expect(n);
    for (u64 i = 0; i < n; ++i) expect[i] = {keys[i], vals[i]};
    std::stable_sort(expect.begin(), expect.end(), [](auto& a, auto& b) { return a.first < b.first; });
    gpu_sort<K, V>(keys, with_vals ? &vals : nullptr);
    for (u64 i = 0; i < n; ++i) {
        SIM_CHECK(keys[i] == expect[i].first, "sort (key %zu B, vals %d) n=%llu i=%llu", sizeof(K), (int)with_vals, n, i);
        if (with_vals) SIM_CHECK(vals[i] == expect[i].second, "pairs not stable: n=%llu i=%llu", n, i);
    }
}

int main() {
    std::mt19937_64 rng(42);
    for (u64 n : {1ull, 31ull, 256ull, 2047ull, 2048ull, 2049ull, 3 * 2048ull + 17, 10007ull}) {
        check_scan(n, true, rng);
        check_scan(n, false, rng);
    }
    std::printf("scan: ok\n");
    for (u64 n : {2ull, 33ull, 1000ull, 3071ull, 3072ull, 3073ull, 4095ull, 4096ull, 4097ull, 3 * 4096ull + 5}) {
        check_sort<u32, u32>(n, 0xFFFFFFFFu, false, rng);
        check_sort<u32, u32>(n, 0x0000F00Fu, true, rng);  // many ties: stability, constant digits
        check_sort<u32, u64>(n, 0x00FF00FFu, true, rng);
        check_sort<u64, u32>(n, ~0ull, false, rng);
        check_sort<u64, u64>(n, 0xFF000000000000FFull, true, rng);
    }
    std::printf("radix sort: ok\n");
    return 0;
}
