// Assertions for the CPU-simulation harnesses in kernels-cuda/sim/.
#pragma once
#include <cstdio>
#include <cstdlib>

#define SIM_CHECK(cond, ...)                                                          \
    do {                                                                              \
        if (!(cond)) {                                                                \
            std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                                         \
            std::fprintf(stderr, "\n");                                                \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)
