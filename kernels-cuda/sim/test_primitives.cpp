// CPU simulation of kernels-cuda/primitives.cu: the two-stage reductions (sum, min/max), the
// decoupled look-back scan (u32 and f64), the Onesweep
// radix sort (keys only and key-value pairs, 32- and 64-bit keys), distinct of float keys
// (key transforms, sort with indices, heads under numeric or bitwise equality, scan, scatter,
// counts, inverse) and argsort of float keys (numeric classes, then the pair sort), launched in the same sequence as crates/gpu-primitives/src/cuda.rs, over
// sizes around tile boundaries, against std references. Logic only: blocks run one at a time
// here.
#include "sim/cuda_sim.hpp"
#include "sim/check.hpp"
#include "primitives.cu"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
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
        primitives_scan_u32(in.data(), out.data(), n, inclusive, flags.data(), agg.data(), incl.data(), counter.data());
    });
    u64 acc = 0;
    for (u64 i = 0; i < n; ++i) {
        if (!inclusive) SIM_CHECK(out[i] == acc, "exclusive scan n=%llu i=%llu", n, i);
        acc += in[i];
        if (inclusive) SIM_CHECK(out[i] == acc, "inclusive scan n=%llu i=%llu", n, i);
    }
}

// f64 scan of small integers: every partial sum is exact, so the order of the additions cannot
// change the result.
static void check_scan_f64(u64 n, std::mt19937_64& rng) {
    std::vector<double> in(n);
    for (auto& x : in) x = (double)(rng() % 1000) - 500.0;
    const u64 tiles = (n + SCAN_TILE_N - 1) / SCAN_TILE_N;
    std::vector<double> out(n, -1.0), agg(tiles, 0), incl(tiles, 0);
    std::vector<u64> counter(1, 0);
    std::vector<u32> flags(tiles, 0);
    warpath_sim::launch((unsigned)tiles, BLOCK, 0, [&] {
        primitives_scan_f64(in.data(), out.data(), n, 1, flags.data(), agg.data(), incl.data(), counter.data());
    });
    double acc = 0;
    for (u64 i = 0; i < n; ++i) {
        acc += in[i];
        SIM_CHECK(out[i] == acc, "f64 inclusive scan n=%llu i=%llu", n, i);
    }
}

// Stage 1 over a capped grid, then stage 2 in one block: wrapping u64 sum, min/max of signed keys.
static void check_reduce(u64 n, std::mt19937_64& rng) {
    std::vector<u64> in(n);
    for (auto& x : in) x = rng();
    const unsigned g = grid_stride_blocks(n);
    std::vector<u64> parts(g), sum(1);
    warpath_sim::launch(g, BLOCK, 0, [&] { primitives_reduce_sum_u64(in.data(), n, parts.data()); });
    warpath_sim::launch(1, BLOCK, 0, [&] { primitives_reduce_sum_final_u64(parts.data(), g, sum.data()); });
    u64 expect = 0;
    for (u64 x : in) expect += x;
    SIM_CHECK(sum[0] == expect, "primitives_reduce_sum_u64 n=%llu", n);

    std::vector<u32> keys(n);
    for (auto& x : keys) x = (u32)rng();
    std::vector<u32> mm(2 * g), out(2);
    warpath_sim::launch(g, BLOCK, 0, [&] { primitives_reduce_minmax_w32(keys.data(), n, 1, mm.data()); });
    warpath_sim::launch(1, BLOCK, 0, [&] { primitives_reduce_minmax_final_w32(mm.data(), g, out.data()); });
    int lo = (int)keys[0], hi = (int)keys[0];
    for (u32 k : keys) {
        lo = std::min(lo, (int)k);
        hi = std::max(hi, (int)k);
    }
    SIM_CHECK(out[0] == ((u32)lo ^ 0x80000000u) && out[1] == ((u32)hi ^ 0x80000000u), "primitives_reduce_minmax_w32 n=%llu", n);
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
        warpath_sim::launch(grid_stride_blocks(n), BLOCK, 0, [&] { primitives_radix_histogram_w32(keys.data(), n, passes, hist.data()); });
    } else {
        warpath_sim::launch(grid_stride_blocks(n), BLOCK, 0, [&] { primitives_radix_histogram_w64(keys.data(), n, passes, hist.data()); });
    }
    warpath_sim::launch(passes, BLOCK, 0, [&] { primitives_radix_prepare(hist.data(), n, trivial.data()); });
    std::vector<K> alt_k(n);
    std::vector<V> alt_v(vals ? n : 0);
    for (u32 pass = 0; pass < passes; ++pass) {
        const V* vin = vals ? vals->data() : nullptr;
        V* vout = vals ? alt_v.data() : nullptr;
        warpath_sim::launch(tiles, BLOCK, 0, [&] {
            if constexpr (sizeof(K) == 4 && sizeof(V) == 4) {
                if (vals) primitives_onesweep_pairs_w32_w32(keys.data(), alt_k.data(), vin, vout, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
                else primitives_onesweep_keys_w32(keys.data(), alt_k.data(), (const u32*)nullptr, (u32*)nullptr, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
            } else if constexpr (sizeof(K) == 4 && sizeof(V) == 8) {
                primitives_onesweep_pairs_w32_w64(keys.data(), alt_k.data(), vin, vout, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
            } else if constexpr (sizeof(K) == 8 && sizeof(V) == 4) {
                if (vals) primitives_onesweep_pairs_w64_w32(keys.data(), alt_k.data(), vin, vout, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
                else primitives_onesweep_keys_w64(keys.data(), alt_k.data(), (const u32*)nullptr, (u32*)nullptr, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
            } else {
                primitives_onesweep_pairs_w64_w64(keys.data(), alt_k.data(), vin, vout, n, pass, hist.data(), trivial.data(), status.data(), counters.data());
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

// Float keys as their bits: F is float or double, K the same-width unsigned integer.
template <class F, class K>
static F as_float(K bits) {
    F f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// Keys of both zero signs, NaNs of both signs and several payloads, infinities and numbers.
template <class F, class K>
static std::vector<K> signed_float_keys(u64 n, std::mt19937_64& rng) {
    const int sh = sizeof(K) * 8 - 32;  // the f32 patterns, widened into the top bits
    const u32 pat[] = {0x00000000u, 0x80000000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x7FFFFFFFu,
                       0xFF800001u, 0xFFFFFFFFu, 0x7F800000u, 0xFF800000u, 0x3F800000u, 0xBF800000u};
    std::vector<K> keys(n);
    for (auto& k : keys) {
        const u64 r = rng();
        if (r % 4 == 0) {
            // a number from a small set, so that values repeat
            F f = (F)((int)(r >> 8) % 7 - 3) * (F)0.5;
            std::memcpy(&k, &f, sizeof k);
        } else {
            k = (K)((K)pat[(r >> 8) % 12] << sh);
            // f64-only payload bits (on a zero or an infinity: a subnormal or a NaN, more keys)
            if (sizeof(K) == 8 && (r >> 20) % 2) k |= 1;
        }
    }
    return keys;
}

// distinct of float keys, the kernel sequence of cuda.rs (distinct_gpu: sort with indices,
// then distinct_sorted), against a reference written with float comparisons: numeric equality
// is a == b || both NaN; bitwise is equal bits; the representative of a group is its first key
// in the sorted (total) order.
template <class F, class K>
static void check_distinct_float(u64 n, bool numeric, std::mt19937_64& rng) {
    std::vector<K> keys = signed_float_keys<F, K>(n, rng);
    const std::vector<K> input = keys;
    const unsigned g = grid_stride_blocks(n);
    const u32 kind = 2;
    auto transform = [&](std::vector<K>& v, u64 m, u32 inverse) {
        warpath_sim::launch(grid_stride_blocks(m), BLOCK, 0, [&] {
            if constexpr (sizeof(K) == 4) primitives_key_transform_w32(v.data(), m, kind, 0, inverse);
            else primitives_key_transform_w64(v.data(), m, kind, 0, inverse);
        });
    };
    // sort: transform, Onesweep with indices, transform back (cuda::sort)
    std::vector<u32> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);  // the host side uses runtime_iota_u32
    transform(keys, n, 0);
    gpu_sort<K, u32>(keys, &perm);
    transform(keys, n, 1);
    // distinct_sorted: ordered copy, heads, exclusive scan, scatter, counts, inverse
    std::vector<K> ord = keys;
    transform(ord, n, 0);
    std::vector<unsigned char> heads(n, 0xAA);
    std::vector<u32> unsorted(1, 0);
    const u32 nf = numeric ? 1 : 0;
    warpath_sim::launch(g, BLOCK, 0, [&] {
        if constexpr (sizeof(K) == 4) primitives_mark_heads_w32(ord.data(), n, nf, heads.data(), unsorted.data());
        else primitives_mark_heads_w64(ord.data(), n, nf, heads.data(), unsorted.data());
    });
    SIM_CHECK(unsorted[0] == 0, "distinct: sorted keys flagged unsorted n=%llu", n);
    const u64 tiles = (n + SCAN_TILE_N - 1) / SCAN_TILE_N;
    std::vector<u64> pos(n), agg(tiles, 0), incl(tiles, 0), counter(1, 0);
    std::vector<u32> flags(tiles, 0);
    warpath_sim::launch((unsigned)tiles, BLOCK, 0, [&] {
        primitives_scan_flags_u8(heads.data(), pos.data(), n, 0, flags.data(), agg.data(), incl.data(), counter.data());
    });
    std::vector<K> values(n, 0);
    std::vector<u64> starts(n, 0), counts(n, 0), m(1, 0);
    warpath_sim::launch(g, BLOCK, 0, [&] {
        if constexpr (sizeof(K) == 4)
            primitives_distinct_scatter_w32(ord.data(), heads.data(), pos.data(), n, values.data(), starts.data(), counts.data(), m.data());
        else
            primitives_distinct_scatter_w64(ord.data(), heads.data(), pos.data(), n, values.data(), starts.data(), counts.data(), m.data());
    });
    warpath_sim::launch(g, BLOCK, 0, [&] { primitives_distinct_counts(starts.data(), counts.data(), m.data(), n); });
    std::vector<u32> inverse(n, 0xFFFFFFFFu);
    warpath_sim::launch(g, BLOCK, 0, [&] { primitives_distinct_inverse(heads.data(), pos.data(), perm.data(), n, inverse.data()); });
    transform(values, m[0], 1);

    // the reference
    auto less = [](K a, K b) {  // the total order: numbers, then +NaN by payload, then -NaN
        const F x = as_float<F>(a), y = as_float<F>(b);
        const bool nx = std::isnan(x), ny = std::isnan(y);
        if (nx != ny) return ny;
        if (!nx) {
            if (x != y) return x < y;
            return std::signbit(x) && !std::signbit(y);
        }
        const bool sx = std::signbit(x), sy = std::signbit(y);
        if (sx != sy) return sy;
        return sx ? a > b : a < b;
    };
    auto same = [&](K a, K b) {
        if (!numeric) return a == b;
        const F x = as_float<F>(a), y = as_float<F>(b);
        return x == y || (std::isnan(x) && std::isnan(y));
    };
    std::vector<K> sorted = input;
    std::stable_sort(sorted.begin(), sorted.end(), less);
    for (u64 i = 0; i < n; ++i) SIM_CHECK(keys[i] == sorted[i], "float sort n=%llu i=%llu", n, i);
    std::vector<K> ref_values;
    std::vector<u64> ref_counts;
    for (K k : sorted) {
        if (!ref_values.empty() && same(ref_values.back(), k)) {
            ref_counts.back()++;
        } else {
            ref_values.push_back(k);
            ref_counts.push_back(1);
        }
    }
    SIM_CHECK(m[0] == ref_values.size(), "distinct n=%llu numeric=%d: %llu groups, expected %zu", n, (int)numeric,
              m[0], ref_values.size());
    for (u64 j = 0; j < m[0]; ++j) {
        SIM_CHECK(values[j] == ref_values[j], "distinct value n=%llu j=%llu", n, j);
        SIM_CHECK(counts[j] == ref_counts[j], "distinct count n=%llu j=%llu", n, j);
    }
    for (u64 i = 0; i < n; ++i) {
        SIM_CHECK(inverse[i] < m[0] && same(values[inverse[i]], input[i]), "distinct inverse n=%llu i=%llu", n, i);
    }
}

// argsort of float keys as numpy's argsort(kind="stable") (cuda.rs: float_classes on a copy,
// then the Onesweep pair sort with indices): keys equal as numbers keep their index order.
template <class F, class K>
static void check_argsort_float(u64 n, std::mt19937_64& rng) {
    const std::vector<K> input = signed_float_keys<F, K>(n, rng);
    std::vector<K> keys = input;
    const unsigned g = grid_stride_blocks(n);
    std::vector<u32> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);  // the host side uses runtime_iota_u32
    warpath_sim::launch(g, BLOCK, 0, [&] {
        if constexpr (sizeof(K) == 4) primitives_float_classes_w32(keys.data(), n);
        else primitives_float_classes_w64(keys.data(), n);
    });
    warpath_sim::launch(g, BLOCK, 0, [&] {
        if constexpr (sizeof(K) == 4) primitives_key_transform_w32(keys.data(), n, 2, 0, 0);
        else primitives_key_transform_w64(keys.data(), n, 2, 0, 0);
    });
    gpu_sort<K, u32>(keys, &perm);
    std::vector<u32> expect(n);
    for (u64 i = 0; i < n; ++i) expect[i] = (u32)i;
    std::stable_sort(expect.begin(), expect.end(), [&](u32 i, u32 j) {
        const F x = as_float<F>(input[i]), y = as_float<F>(input[j]);
        if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
        return x < y;
    });
    for (u64 i = 0; i < n; ++i) SIM_CHECK(perm[i] == expect[i], "float argsort n=%llu i=%llu", n, i);
}

int main() {
    std::mt19937_64 rng(42);
    for (u64 n : {1ull, 31ull, 256ull, 2047ull, 2048ull, 2049ull, 3 * 2048ull + 17, 10007ull}) {
        check_scan(n, true, rng);
        check_scan(n, false, rng);
    }
    for (u64 n : {1ull, 2048ull, 2049ull, 3 * 2048ull + 17}) check_scan_f64(n, rng);
    std::printf("scan: ok\n");
    for (u64 n : {1ull, 31ull, 256ull, 257ull, 5000ull}) check_reduce(n, rng);
    std::printf("reduce: ok\n");
    for (u64 n : {2ull, 33ull, 1000ull, 3071ull, 3072ull, 3073ull, 4095ull, 4096ull, 4097ull, 3 * 4096ull + 5}) {
        check_sort<u32, u32>(n, 0xFFFFFFFFu, false, rng);
        check_sort<u32, u32>(n, 0x0000F00Fu, true, rng);  // many ties: stability, constant digits
        check_sort<u32, u64>(n, 0x00FF00FFu, true, rng);
        check_sort<u64, u32>(n, ~0ull, false, rng);
        check_sort<u64, u64>(n, 0xFF000000000000FFull, true, rng);
    }
    std::printf("radix sort: ok\n");
    for (u64 n : {1ull, 2ull, 255ull, 256ull, 257ull, 2049ull, 4097ull}) {
        for (bool numeric : {true, false}) {
            check_distinct_float<float, u32>(n, numeric, rng);
            check_distinct_float<double, u64>(n, numeric, rng);
        }
    }
    std::printf("float distinct (numeric and bitwise equality): ok\n");
    for (u64 n : {1ull, 2ull, 257ull, 3073ull, 4097ull}) {
        check_argsort_float<float, u32>(n, rng);
        check_argsort_float<double, u64>(n, rng);
    }
    std::printf("float argsort (numpy's stable order): ok\n");
    return 0;
}
