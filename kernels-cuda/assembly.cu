// assembly's kernels: compaction of the solid canonical k-mers into maximal unitigs
// (crates/assembly/src/cuda.rs drives them; unitigs.rs `compact` is the CPU version and
// documents the links).
//
// K-mers are u64 words, 2-bit packed (A=0 C=1 G=2 T=3, first base in the high bits), k odd and
// at most 31, sorted and distinct. An oriented k-mer is 2 i + o: k-mer i read forward (o = 0) or
// as its reverse complement (o = 1); the host keeps 2 n below 2^32 - 1 (NONE).
//
// Stages: successors (the only successor of each oriented k-mer, by binary search of the four
// candidates), predecessors (a link goes both ways: pred[o] = flip(link[flip(o)])), list
// ranking by pointer jumping over pred (Wyllie: every oriented k-mer learns the start of its
// chain and its distance from it), cycles found where the jumps never reach a start; a cycle
// is cut before its smallest k-mer (a minimum found by pointer jumping) and ranked again; then
// each k-mer picks the orientation the CPU walks it in (placement). No kernel synchronises
// with the host.
#include "common.cuh"
#include "block/reduce.cuh"

#define NONE 0xFFFFFFFFu
WARPATH_SHARE_WITH_HOST(NONE)

// The reverse complement of a k-mer (unitigs.rs / kmer.rs `reverse_complement`, u64 words).
__device__ __forceinline__ u64 assembly_rc(u64 x, u32 k) {
    x = ~x;
    x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((x & 0x0F0F0F0F0F0F0F0Full) << 4);
    // byte swap
    x = ((x >> 8) & 0x00FF00FF00FF00FFull) | ((x & 0x00FF00FF00FF00FFull) << 8);
    x = ((x >> 16) & 0x0000FFFF0000FFFFull) | ((x & 0x0000FFFF0000FFFFull) << 16);
    x = (x >> 32) | (x << 32);
    return x >> (64 - 2 * k);
}

// The index of x in sorted kmers[0..n), or NONE.
__device__ __forceinline__ u32 assembly_find(const u64* __restrict__ kmers, u64 n, u64 x) {
    u64 lo = 0, hi = n;
    while (lo < hi) {
        const u64 mid = lo + (hi - lo) / 2;
        if (kmers[mid] < x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return (lo < n && kmers[lo] == x) ? (u32)lo : NONE;
}

// out[2 i + o] = the only successor of oriented k-mer (i, o), or NONE when it has none or
// several: the successors of a word s are the canonical forms of (s << 2 | b) & mask found in
// kmers, oriented 1 when the canonical form is the reverse complement (unitigs.rs `compact`,
// first pass, bit for bit).
extern "C" __global__ void assembly_successors(const u64* __restrict__ kmers, u64 n, u32 k,
                                               u32* out) {
    const u64 mask = (1ull << (2 * k)) - 1;  // k <= 31
    WARPATH_GRID_STRIDE(i, n) {
        const u64 x = kmers[i];
        for (u32 o = 0; o < 2; ++o) {
            const u64 s = o ? assembly_rc(x, k) : x;
            u32 count = 0, only = NONE;
            for (u32 b = 0; b < 4; ++b) {
                const u64 t = ((s << 2) | b) & mask;
                const u64 r = assembly_rc(t, k);
                const u64 c = r < t ? r : t;
                const u32 j = assembly_find(kmers, n, c);
                if (j != NONE) {
                    ++count;
                    only = (j << 1) | (c != t ? 1u : 0u);
                }
            }
            out[2 * i + o] = count == 1 ? only : NONE;
        }
    }
}

// pred[o] = the oriented k-mer linked to o, or NONE. f = flip(o) is linked to t = out[f] when
// t is its only successor, f is t's only predecessor (out[flip(t)] = flip(f)) and t is another
// k-mer; links come in pairs, so then flip(t) -> o and pred[o] = flip(t).
extern "C" __global__ void assembly_predecessors(const u32* __restrict__ out, u64 n2, u32* pred) {
    WARPATH_GRID_STRIDE(o, n2) {
        const u32 f = (u32)o ^ 1u;
        const u32 t = out[f];
        pred[o] = (t != NONE && (t >> 1) != (f >> 1) && out[t ^ 1u] == (u32)o) ? (t ^ 1u) : NONE;
    }
}

// Starts list ranking over pred: anc[o] = pred[o] (o itself at a chain's start), rank[o] = 1
// (0 at a start).
extern "C" __global__ void assembly_rank_init(const u32* __restrict__ pred, u64 n2, u32* anc,
                                              u32* rank) {
    WARPATH_GRID_STRIDE(o, n2) {
        const u32 p = pred[o];
        anc[o] = p == NONE ? (u32)o : p;
        rank[o] = p == NONE ? 0u : 1u;
    }
}

// One Wyllie round: anc_out[o] = anc_in[anc_in[o]], rank_out[o] = rank_in[o] + rank_in[anc_in[o]].
// A start is a fixed point (anc = itself, rank 0), so after r rounds every element within 2^r
// of its start holds that start and its distance from it. On a cycle the ranks wrap (unused).
extern "C" __global__ void assembly_rank_round(const u32* __restrict__ anc_in,
                                               const u32* __restrict__ rank_in, u64 n2,
                                               u32* anc_out, u32* rank_out) {
    WARPATH_GRID_STRIDE(o, n2) {
        const u32 a = anc_in[o];
        anc_out[o] = anc_in[a];
        rank_out[o] = rank_in[o] + rank_in[a];
    }
}

// *count += the oriented k-mers whose jumps did not reach a start (pred[anc[o]] != NONE): after
// enough rounds, exactly those on cycles.
extern "C" __global__ void assembly_count_unsettled(const u32* __restrict__ pred,
                                                    const u32* __restrict__ anc, u64 n2,
                                                    u32* count) {
    WARPATH_GRID_STRIDE(o, n2) { warpath::warp_count_add(pred[anc[o]] != NONE, count); }
}

// Starts the minimum over cycles: lab[o] = the k-mer index of o, jmp[o] = pred[o] (o itself
// at a chain's start: the labels of chains are not used).
extern "C" __global__ void assembly_min_init(const u32* __restrict__ pred, u64 n2, u32* lab,
                                             u32* jmp) {
    WARPATH_GRID_STRIDE(o, n2) {
        const u32 p = pred[o];
        lab[o] = (u32)o >> 1;
        jmp[o] = p == NONE ? (u32)o : p;
    }
}

// One pointer-jumping round of the minimum: lab_out[o] = min(lab_in[o], lab_in[jmp_in[o]]),
// jmp_out[o] = jmp_in[jmp_in[o]]. After r rounds lab[o] is the minimum over the 2^r elements
// before o: on a cycle of at most 2^r elements, the cycle's smallest k-mer index.
extern "C" __global__ void assembly_min_round(const u32* __restrict__ lab_in,
                                              const u32* __restrict__ jmp_in, u64 n2,
                                              u32* lab_out, u32* jmp_out) {
    WARPATH_GRID_STRIDE(o, n2) {
        const u32 t = jmp_in[o];
        const u32 a = lab_in[o], b = lab_in[t];
        lab_out[o] = b < a ? b : a;
        jmp_out[o] = jmp_in[t];
    }
}

// Cuts every cycle before its smallest k-mer m (both orientations: the cycle through 2 m and
// its reverse through 2 m + 1 are cut at their heads): cut[o] = NONE where o is on a cycle and
// is an orientation of m, pred[o] elsewhere. lab[o] becomes NONE off cycles (on a cycle it
// stays m). On-cycle is read from the first ranking (pred[anc[o]] != NONE).
extern "C" __global__ void assembly_cut_cycles(const u32* __restrict__ pred,
                                               const u32* __restrict__ anc, u64 n2, u32* lab,
                                               u32* cut) {
    WARPATH_GRID_STRIDE(o, n2) {
        const bool on_cycle = pred[anc[o]] != NONE;
        if (!on_cycle) {
            lab[o] = NONE;
            cut[o] = pred[o];
        } else {
            cut[o] = ((u32)o >> 1) == lab[o] ? NONE : pred[o];
        }
    }
}

// Where each k-mer goes, as the CPU walks it (unitigs.rs `compact`): on a chain read from an
// end, the orientation whose chain starts at the smaller oriented k-mer (starts s0 = anc[2i],
// s1 = anc[2i+1]: the two readings of one chain); on a cycle with smallest k-mer m = lab[2i]
// (NONE off cycles), the orientation whose cut chain starts at 2 m (the cycle read forward from
// m). node[i] = that oriented k-mer, pos[i] its rank, key[i] the unitig's sort key: the chain's
// start for chains, 2^32 + m for cycles (chains first, by start; then cycles, by m).
extern "C" __global__ void assembly_place(const u32* __restrict__ anc,
                                          const u32* __restrict__ rank,
                                          const u32* __restrict__ lab, u64 n, u32* node, u64* key,
                                          u32* pos) {
    WARPATH_GRID_STRIDE(i, n) {
        const u32 o0 = (u32)(2 * i), o1 = o0 + 1;
        const u32 m = lab[o0];
        u32 o;
        if (m != NONE) {
            o = anc[o0] == 2 * m ? o0 : o1;
            key[i] = (1ull << 32) | (u64)m;
        } else {
            o = anc[o0] <= anc[o1] ? o0 : o1;
            key[i] = (u64)anc[o];
        }
        node[i] = o;
        pos[i] = rank[o];
    }
}
