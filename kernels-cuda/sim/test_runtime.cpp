// CPU simulation of kernels-cuda/runtime.cu: iota, fill and axpy over grid-stride loops whose grid is
// smaller than the data, with sizes around block boundaries.
#include "sim/cuda_sim.hpp"
#include "sim/check.hpp"
#include "runtime.cu"

int main() {
    for (u64 n : {1ull, 31ull, 32ull, 33ull, 255ull, 256ull, 257ull, 1000ull, 4099ull}) {
        std::vector<u32> out(n, 0xDEADBEEFu);
        warpath_sim::launch(3, 64, 0, [&] { runtime_iota_u32(out.data(), n); });
        for (u64 i = 0; i < n; ++i) SIM_CHECK(out[i] == i, "iota n=%llu i=%llu got %u", n, i, out[i]);
        warpath_sim::launch(3, 64, 0, [&] { runtime_fill_u32(out.data(), 0xFFFFFFFFu, n - 1); });
        for (u64 i = 0; i + 1 < n; ++i) SIM_CHECK(out[i] == 0xFFFFFFFFu, "fill n=%llu i=%llu", n, i);
        SIM_CHECK(out[n - 1] == n - 1, "fill n=%llu wrote past its end", n);

        std::vector<float> x(n), y(n), expect(n);
        for (u64 i = 0; i < n; ++i) {
            x[i] = 0.5f * (float)(i % 97) - 7.0f;
            y[i] = (float)(i % 13);
            expect[i] = y[i] + 1.5f * x[i];
        }
        warpath_sim::launch(2, 96, 0, [&] { runtime_axpy_f32(1.5f, x.data(), y.data(), n); });
        for (u64 i = 0; i < n; ++i) SIM_CHECK(y[i] == expect[i], "axpy n=%llu i=%llu", n, i);
    }
    std::printf("runtime kernels: ok\n");
    return 0;
}
