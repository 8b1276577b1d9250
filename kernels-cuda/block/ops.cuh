// Binary operators for the block collectives (block/reduce.cuh, block/scan.cuh), and a warp
// shuffle that moves any trivially copyable type. Each operator is associative; the collectives
// call op(earlier, later), so a non-commutative operator sees its operands in index order.
#pragma once
#include "../common.cuh"

namespace warpath {

struct Sum {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct Min {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const { return b < a ? b : a; }
};
struct Max {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const { return b > a ? b : a; }
};

// __shfl_*_sync for any type: the native instruction for the scalar types it supports, one
// 32-bit shuffle per word of the object otherwise (a struct of partial results).
enum class Shfl { Up, Down, Xor };
template <Shfl K>
__device__ __forceinline__ u32 shfl_word(u32 w, unsigned delta, int width) {
    if (K == Shfl::Up) return __shfl_up_sync(0xffffffffu, w, delta, width);
    if (K == Shfl::Down) return __shfl_down_sync(0xffffffffu, w, delta, width);
    return __shfl_xor_sync(0xffffffffu, w, (int)delta, width);
}
template <Shfl K, typename T>
struct Shuffle {
    static __device__ __forceinline__ T run(T v, unsigned delta, int width) {
        constexpr int WORDS = (int)((sizeof(T) + 3) / 4);
        union {
            T value;
            u32 words[WORDS];
        } u;
        u.value = v;
#pragma unroll
        for (int i = 0; i < WORDS; ++i) u.words[i] = shfl_word<K>(u.words[i], delta, width);
        return u.value;
    }
};
#define WARPATH_NATIVE_SHUFFLE(T)                                                       \
    template <Shfl K>                                                                   \
    struct Shuffle<K, T> {                                                              \
        static __device__ __forceinline__ T run(T v, unsigned delta, int width) {       \
            if (K == Shfl::Up) return __shfl_up_sync(0xffffffffu, v, delta, width);     \
            if (K == Shfl::Down) return __shfl_down_sync(0xffffffffu, v, delta, width); \
            return __shfl_xor_sync(0xffffffffu, v, (int)delta, width);                  \
        }                                                                               \
    };
WARPATH_NATIVE_SHUFFLE(int)
WARPATH_NATIVE_SHUFFLE(u32)
WARPATH_NATIVE_SHUFFLE(i64)
WARPATH_NATIVE_SHUFFLE(u64)
WARPATH_NATIVE_SHUFFLE(float)
WARPATH_NATIVE_SHUFFLE(double)
#undef WARPATH_NATIVE_SHUFFLE

template <Shfl K, typename T>
__device__ __forceinline__ T shfl(T v, unsigned delta, int width = 32) {
    return Shuffle<K, T>::run(v, delta, width);
}

}  // namespace warpath
