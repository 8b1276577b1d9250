// CPU simulation of kernels-cuda/assembly.cu: the GPU compaction pipeline, launched as
// crates/assembly/src/cuda.rs (place_kmers, rank_chains) does: same kernels, order, grid and
// block shapes, pointer-jumping round counts, and the host decision on the read-back count of
// k-mers on cycles (the cycle stage runs only when it is not zero).
// Checked, against a sequential reference written from the definition (unitigs.rs `compact`,
// step by step: each oriented k-mer's only successor, links that go both ways between two
// k-mers, chains walked from their starts and kept from the smaller of their two starts,
// cycles walked forward from their smallest k-mer):
// - the placement, entry for entry: each k-mer's oriented reading, its unitig's key (the
//   chain's start, or 2^32 + the cycle's smallest k-mer) and its rank;
// - the read-back count: exactly the oriented k-mers on cycles;
// - assembly_successors alone against the reference's successors (every entry).
// Inputs: the k-mers of random genomes (with substitutions: branches), circular genomes
// (cycles, several at once), reads around reverse-complement palindromes and hairpins, every
// canonical k-mer of small k (dense) and a third of them (sparse), a single k-mer; k from 3
// to 31; with a grid cap of 132 SMs (one grid-stride pass) and 1 SM (loops that iterate).
// Not checked: timing, memory limits (the Rust tests reach the out-of-memory error through
// the simulated driver), more than 2^31 k-mers.
#include "sim/cuda_sim.hpp"
#include "sim/check.hpp"
#include "assembly.cu"
#include "sim/host_grid.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <random>
#include <string>
#include <vector>

typedef unsigned char u8;

// ---- the reference: unitigs.rs `compact`, sequentially ---------------------------------------

static u64 rc_ref(u64 x, unsigned k) {
    u64 r = 0;
    for (unsigned i = 0; i < k; ++i) {
        r = (r << 2) | (3 - (x & 3));
        x >>= 2;
    }
    return r;
}
static u64 canon_ref(u64 x, unsigned k) { return std::min(x, rc_ref(x, k)); }

struct Placement {
    std::vector<u32> node, pos;
    std::vector<u64> key;
};

struct Reference {
    std::vector<u32> out;  // only successor of each oriented k-mer, or NONE
    Placement place;
    u64 on_cycles = 0;
};

static Reference reference(const std::vector<u64>& kmers, unsigned k) {
    const u64 n = kmers.size(), n2 = 2 * n;
    const u64 mask = (1ull << (2 * k)) - 1;
    Reference r;
    r.out.assign(n2, NONE);
    auto find = [&](u64 x) -> u32 {
        auto it = std::lower_bound(kmers.begin(), kmers.end(), x);
        return (it != kmers.end() && *it == x) ? (u32)(it - kmers.begin()) : NONE;
    };
    for (u64 o = 0; o < n2; ++o) {
        const u64 s = (o & 1) ? rc_ref(kmers[o / 2], k) : kmers[o / 2];
        u32 count = 0, only = NONE;
        for (u64 b = 0; b < 4; ++b) {
            const u64 t = ((s << 2) | b) & mask, c = canon_ref(t, k);
            const u32 j = find(c);
            if (j != NONE) {
                ++count;
                only = 2 * j + (c != t);
            }
        }
        if (count == 1) r.out[o] = only;
    }
    std::vector<u32> link(n2, NONE);
    for (u64 o = 0; o < n2; ++o) {
        const u32 t = r.out[o];
        if (t != NONE && t / 2 != o / 2 && r.out[t ^ 1] == (u32)(o ^ 1)) link[o] = t;
    }
    r.place.node.assign(n, NONE);
    r.place.pos.assign(n, NONE);
    r.place.key.assign(n, ~0ull);
    std::vector<bool> done(n, false);
    // chains from their starts (no link into them), kept from the smaller of their two starts
    for (u64 start = 0; start < n2; ++start) {
        if (link[start ^ 1] != NONE) continue;
        std::vector<u32> path{(u32)start};
        u32 cur = (u32)start;
        while (link[cur] != NONE) {
            cur = link[cur];
            path.push_back(cur);
        }
        if (start > (cur ^ 1)) continue;
        for (size_t j = 0; j < path.size(); ++j) {
            const u32 i = path[j] / 2;
            SIM_CHECK(!done[i], "reference: k-mer %u on two chains", i);
            done[i] = true;
            r.place.node[i] = path[j];
            r.place.pos[i] = (u32)j;
            r.place.key[i] = start;
        }
    }
    // cycles, forward from their smallest k-mer
    for (u64 i = 0; i < n; ++i) {
        if (done[i]) continue;
        u32 cur = (u32)(2 * i);
        u32 j = 0;
        do {
            SIM_CHECK(cur != NONE && !done[cur / 2], "reference: a k-mer without an end off a cycle");
            done[cur / 2] = true;
            r.place.node[cur / 2] = cur;
            r.place.pos[cur / 2] = j++;
            r.place.key[cur / 2] = (1ull << 32) | i;
            cur = link[cur];
        } while (cur != (u32)(2 * i));
        r.on_cycles += 2 * (u64)j;
    }
    return r;
}

// ---- the host side, as cuda.rs ----------------------------------------------------------------

// The pointer-jumping rounds of cuda.rs: rounds_for(n2) launches of `round(a, b, a_next, b_next)`
// over n2 entries, each into fresh buffers that then take the place of `a` and `b`.
template <class R>
static void jump_rounds(u64 n2, std::vector<u32>& a, std::vector<u32>& b, R round) {
    std::vector<u32> a_next = alloc_u32(n2), b_next = alloc_u32(n2);
    for (unsigned r = 0; r < rounds_for(n2); ++r) {
        launch_grid(n2, [&] { round(a.data(), b.data(), a_next.data(), b_next.data()); });
        std::swap(a, a_next);
        std::swap(b, b_next);
    }
}

static void rank_chains(const std::vector<u32>& pred, u64 n2, std::vector<u32>& anc, std::vector<u32>& rank) {
    anc = alloc_u32(n2);
    rank = alloc_u32(n2);
    launch_grid(n2, [&] { assembly_rank_init(pred.data(), n2, anc.data(), rank.data()); });
    jump_rounds(n2, anc, rank, [&](u32* a, u32* r, u32* a2, u32* r2) { assembly_rank_round(a, r, n2, a2, r2); });
}

struct Gpu {
    std::vector<u32> out;
    Placement place;
    u64 on_cycles = 0;
};

static Gpu place_kmers(const std::vector<u64>& kmers, unsigned k) {
    const u64 n = kmers.size(), n2 = 2 * n;
    Gpu g;
    std::vector<u32> out = alloc_u32(n2);
    launch_grid(n, [&] { assembly_successors(kmers.data(), n, k, out.data()); });
    g.out = out;
    std::vector<u32> pred = alloc_u32(n2);
    launch_grid(n2, [&] { assembly_predecessors(out.data(), n2, pred.data()); });
    std::vector<u32> anc, rank;
    rank_chains(pred, n2, anc, rank);
    u32 count = 0;
    launch_grid(n2, [&] { assembly_count_unsettled(pred.data(), anc.data(), n2, &count); });
    g.on_cycles = count;
    std::vector<u32> lab = alloc_u32(n2);
    if (count == 0) {
        std::fill(lab.begin(), lab.end(), NONE);  // gpu_runtime::fill
    } else {
        std::vector<u32> jmp = alloc_u32(n2);
        launch_grid(n2, [&] { assembly_min_init(pred.data(), n2, lab.data(), jmp.data()); });
        jump_rounds(n2, lab, jmp, [&](u32* l, u32* j, u32* l2, u32* j2) { assembly_min_round(l, j, n2, l2, j2); });
        std::vector<u32>& cut = out;  // cuda.rs reuses the successor buffer
        launch_grid(n2, [&] { assembly_cut_cycles(pred.data(), anc.data(), n2, lab.data(), cut.data()); });
        rank_chains(cut, n2, anc, rank);
    }
    g.place.node = alloc_u32(n);
    g.place.pos = alloc_u32(n);
    g.place.key.assign(std::max<u64>(n, 1), 0xCDCDCDCDCDCDCDCDull);
    launch_grid(n, [&] {
        assembly_place(anc.data(), rank.data(), lab.data(), n, g.place.node.data(), g.place.key.data(),
                       g.place.pos.data());
    });
    g.place.node.resize(n);
    g.place.pos.resize(n);
    g.place.key.resize(n);
    return g;
}

// ---- inputs -----------------------------------------------------------------------------------

static std::vector<u8> random_dna(size_t len, std::mt19937_64& rng) {
    std::vector<u8> s(len);
    for (auto& c : s) c = (u8)(rng() & 3);
    return s;
}
static std::vector<u8> rc_codes(const std::vector<u8>& s) {
    std::vector<u8> r(s.rbegin(), s.rend());
    for (auto& c : r) c = 3 - c;
    return r;
}

// The sorted, distinct canonical k-mers of code sequences.
static std::vector<u64> kmers_of(const std::vector<std::vector<u8>>& seqs, unsigned k) {
    const u64 mask = (1ull << (2 * k)) - 1;
    std::vector<u64> v;
    for (const auto& s : seqs) {
        u64 x = 0;
        for (size_t i = 0; i < s.size(); ++i) {
            x = ((x << 2) | s[i]) & mask;
            if (i + 1 >= k) v.push_back(canon_ref(x, k));
        }
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

static u64 g_cases = 0, g_cycles = 0;

static void check(const std::vector<u64>& kmers, unsigned k, const std::string& what) {
    if (kmers.empty()) return;  // cuda.rs returns before any launch
    const Reference want = reference(kmers, k);
    const Gpu got = place_kmers(kmers, k);
    const u64 n = kmers.size();
    for (u64 o = 0; o < 2 * n; ++o)
        SIM_CHECK(got.out[o] == want.out[o], "%s (k=%u): successor of %llu is %u, not %u", what.c_str(), k,
                  (unsigned long long)o, got.out[o], want.out[o]);
    SIM_CHECK(got.on_cycles == want.on_cycles, "%s (k=%u): %llu on cycles read back, not %llu", what.c_str(), k,
              (unsigned long long)got.on_cycles, (unsigned long long)want.on_cycles);
    for (u64 i = 0; i < n; ++i) {
        SIM_CHECK(got.place.node[i] == want.place.node[i] && got.place.key[i] == want.place.key[i] &&
                      got.place.pos[i] == want.place.pos[i],
                  "%s (k=%u, %llu k-mers): k-mer %llu placed (node %u, key %llx, rank %u), not (%u, %llx, %u)",
                  what.c_str(), k, (unsigned long long)n, (unsigned long long)i, got.place.node[i],
                  (unsigned long long)got.place.key[i], got.place.pos[i], want.place.node[i],
                  (unsigned long long)want.place.key[i], want.place.pos[i]);
    }
    ++g_cases;
    if (want.on_cycles) ++g_cycles;
}

// Reads of a genome with substitutions (both strands): a graph with branches and tips.
static void noisy(unsigned k, size_t len, std::mt19937_64& rng) {
    const std::vector<u8> genome = random_dna(len, rng);
    std::vector<std::vector<u8>> reads;
    for (size_t at = 0; at + 60 <= len; at += 7) {
        std::vector<u8> r(genome.begin() + at, genome.begin() + at + 60);
        if (rng() % 5 == 0) r[rng() % r.size()] = (u8)(rng() & 3);
        reads.push_back(rng() & 1 ? rc_codes(r) : r);
    }
    check(kmers_of(reads, k), k, "noisy reads of length " + std::to_string(len));
}

static void circular(unsigned k, size_t len, int copies, std::mt19937_64& rng) {
    std::vector<std::vector<u8>> seqs;
    for (int j = 0; j < copies; ++j) {
        std::vector<u8> g = random_dna(len + 13 * j, rng);
        g.insert(g.end(), g.begin(), g.begin() + (k - 1));
        seqs.push_back(rng() & 1 ? rc_codes(g) : g);
    }
    seqs.push_back(random_dna(3 * k, rng));  // a linear piece beside them
    check(kmers_of(seqs, k), k, "circular genomes");
}

static void palindromes(unsigned k, std::mt19937_64& rng) {
    std::vector<std::vector<u8>> seqs;
    for (unsigned j = 0; j < 6; ++j) {
        const std::vector<u8> x = random_dna(k + j, rng);
        const std::vector<u8> xr = rc_codes(x);
        std::vector<u8> r = random_dna(2 * k, rng);
        r.insert(r.end(), x.begin(), x.end());
        r.insert(r.end(), xr.begin(), xr.end());
        const std::vector<u8> tail = random_dna(2 * k, rng);
        r.insert(r.end(), tail.begin(), tail.end());
        seqs.push_back(r);
        std::vector<u8> h = x;  // a hairpin: x, a loop of 3, rc(x)
        const std::vector<u8> loop = random_dna(3, rng);
        h.insert(h.end(), loop.begin(), loop.end());
        h.insert(h.end(), xr.begin(), xr.end());
        seqs.push_back(h);
    }
    check(kmers_of(seqs, k), k, "palindromes and hairpins");
}

static void every_kmer(unsigned k) {
    std::vector<u64> all;
    for (u64 x = 0; x < (1ull << (2 * k)); ++x) all.push_back(canon_ref(x, k));
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    check(all, k, "every k-mer");
    std::vector<u64> third;
    for (size_t i = 0; i < all.size(); i += 3) third.push_back(all[i]);
    check(third, k, "a third of the k-mers");
    check({all[all.size() / 2]}, k, "one k-mer");
}

int main() {
    const auto t0 = std::chrono::steady_clock::now();
    std::mt19937_64 rng(20261125);
    for (unsigned sms : {132u, 1u}) {
        g_sms = sms;
        for (unsigned k : {3u, 5u, 7u}) every_kmer(k);
        for (unsigned k : {3u, 5u, 9u, 15u, 21u, 31u}) {
            noisy(k, 300, rng);
            noisy(k, 1500, rng);
            palindromes(k, rng);
        }
        for (unsigned k : {5u, 11u, 21u, 31u}) {
            circular(k, 40, 1, rng);
            circular(k, 400, 3, rng);
        }
    }
    SIM_CHECK(g_cycles >= 8, "only %llu cases had cycles", (unsigned long long)g_cycles);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("assembly: %llu compactions checked (%llu with cycles) in %.1f s\n", (unsigned long long)g_cases,
                (unsigned long long)g_cycles, s);
    return 0;
}
