// warpath's simulated cuBLAS: the few entry points gpu-runtime's blas.rs calls, computed on the
// CPU over the simulated driver's memory (device addresses there are host addresses). Built by
// `cargo xtask sim` into target/cuda-sim/libcublas.so.13 beside the simulated libcuda.so, so
// the host code of every cuBLAS path runs in the tests without a GPU. gpu-runtime uses it only
// under the simulated driver (the `warpath_sim_cublas` symbol tells them apart).
//
// The products are computed as a real cuBLAS may: fused multiply-adds in the element type, the
// sum over k split in two halves added at the end (a split-K order), so callers that bound the
// rounding of "any summation order" are tested against an order other than the sequential one.
#include <cmath>
#include <cstdint>
#include <new>

namespace {

enum Status : int {
    SUCCESS = 0,
    NOT_INITIALIZED = 1,
    INVALID_VALUE = 7,
};

enum Op : int { OP_N = 0, OP_T = 1, OP_C = 2 };

struct Handle {
    void* stream = nullptr;
    int math_mode = 0;
};

// Element (r, c) of op(X) for a column-major X with leading dimension ld.
template <typename T>
inline T at(const T* x, int op, long ld, long r, long c) {
    return op == OP_N ? x[r + c * ld] : x[c + r * ld];
}

template <typename T>
int gemm(Handle* h, int transa, int transb, int m, int n, int k, const T* alpha, const T* a, int lda, const T* b,
         int ldb, const T* beta, T* c, int ldc) {
    if (!h) return NOT_INITIALIZED;
    const bool ops_ok = (transa == OP_N || transa == OP_T || transa == OP_C) &&
                        (transb == OP_N || transb == OP_T || transb == OP_C);
    if (!ops_ok || m < 0 || n < 0 || k < 0 || !alpha || !beta) return INVALID_VALUE;
    if (lda < ((transa == OP_N) ? (m > 1 ? m : 1) : (k > 1 ? k : 1))) return INVALID_VALUE;
    if (ldb < ((transb == OP_N) ? (k > 1 ? k : 1) : (n > 1 ? n : 1))) return INVALID_VALUE;
    if (ldc < (m > 1 ? m : 1)) return INVALID_VALUE;
    const long half = k / 2;
    for (long j = 0; j < n; ++j) {
        for (long i = 0; i < m; ++i) {
            T lo = 0, hi = 0;
            for (long l = 0; l < half; ++l) lo = std::fma(at(a, transa, lda, i, l), at(b, transb, ldb, l, j), lo);
            for (long l = half; l < k; ++l) hi = std::fma(at(a, transa, lda, i, l), at(b, transb, ldb, l, j), hi);
            const T sum = lo + hi;
            T& out = c[i + j * (long)ldc];
            // BLAS: with beta = 0, C is not read (it may hold anything, NaN included).
            out = *beta == T(0) ? *alpha * sum : *alpha * sum + *beta * out;
        }
    }
    return SUCCESS;
}

}  // namespace

extern "C" {

int warpath_sim_cublas(void) { return 1; }

int cublasCreate_v2(Handle** handle) {
    if (!handle) return INVALID_VALUE;
    *handle = new (std::nothrow) Handle();
    return *handle ? SUCCESS : NOT_INITIALIZED;
}

int cublasDestroy_v2(Handle* handle) {
    if (!handle) return NOT_INITIALIZED;
    delete handle;
    return SUCCESS;
}

int cublasSetStream_v2(Handle* handle, void* stream) {
    if (!handle) return NOT_INITIALIZED;
    handle->stream = stream;  // the simulated driver runs every stream in order
    return SUCCESS;
}

int cublasSetMathMode(Handle* handle, int mode) {
    if (!handle) return NOT_INITIALIZED;
    handle->math_mode = mode;
    return SUCCESS;
}

int cublasGetVersion_v2(Handle* handle, int* version) {
    if (!handle) return NOT_INITIALIZED;
    if (!version) return INVALID_VALUE;
    *version = 0;
    return SUCCESS;
}

int cublasSgemm_v2(Handle* h, int transa, int transb, int m, int n, int k, const float* alpha, const float* a,
                   int lda, const float* b, int ldb, const float* beta, float* c, int ldc) {
    return gemm<float>(h, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

int cublasDgemm_v2(Handle* h, int transa, int transb, int m, int n, int k, const double* alpha, const double* a,
                   int lda, const double* b, int ldb, const double* beta, double* c, int ldc) {
    return gemm<double>(h, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // extern "C"
