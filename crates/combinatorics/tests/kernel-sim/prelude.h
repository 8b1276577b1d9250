// CPU emulation of kernels-cuda/combinatorics.cu; see run.sh.
#include <barrier>
#include <thread>
#include <vector>
#include <cstring>
#include <cstdint>
#include <bit>
#include <algorithm>
struct dim3 { unsigned x = 1, y = 1, z = 1; };
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
std::barrier<>* g_bar;
alignas(16) unsigned char g_dyn_smem[1 << 16];
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __syncthreads() g_bar->arrive_and_wait()
static inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __longlong_as_double(long long x) { return std::bit_cast<double>(x); }
