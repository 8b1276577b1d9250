// driver_registry.hpp: how the simulated CUDA driver (sim/driver.cpp) learns the kernels it can
// run. `cargo xtask sim` generates one translation unit per kernels-cuda/<module>.cu:
//
//     #include "sim/cuda_sim.hpp"
//     #include "sim/driver_registry.hpp"
//     #include "<module>.cu"
//     WARPATH_SIM_MODULE("<module>", "<first line of ptx/<module>.ptx>");
//     WARPATH_SIM_KERNEL("<module>", <entry>);   // one line per .entry of the committed PTX
//     WARPATH_SIM_RESOURCES(<entry>, <registers>, <static shared bytes>);  // from ptxas, sm_90
//
// The entry names come from the PTX the driver is later asked to load; the parameter types come
// from the C++ compiler, which deduces them from the kernel's own signature (no hand-kept
// table). cuLaunchKernel copies each `kernelParams[i]` into a buffer of the deduced size and
// calls the kernel with the values, once per simulated thread.
#pragma once

#include <cstddef>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

namespace warpath_simdrv {

// One kernel parameter as the C++ signature declares it.
struct KernelParam {
    size_t size;
    size_t align;
    bool is_pointer;
};

// A kernel the simulator can run.
struct KernelEntry {
    const char* module;
    const char* name;
    const KernelParam* params;
    size_t nparams;
    // Calls the kernel for the current simulated thread; args[i] points at a copy of parameter i.
    void (*invoke)(const unsigned char* const* args);
};

// Defined in driver.cpp; called from static initialisers of the generated units.
void register_kernel(const KernelEntry* entry);
void register_module(const char* module, const char* ptx_header);
// What ptxas reports for the kernel on sm_90 (registers per thread, static shared bytes).
void register_resources(const char* name, int registers, int static_smem);

template <class T>
inline T load_param(const unsigned char* p) {
    T v;
    std::memcpy(static_cast<void*>(&v), p, sizeof(T));
    return v;
}

template <auto F>
struct Kernel;

template <class... A, void (*F)(A...)>
struct Kernel<F> {
    static constexpr size_t count = sizeof...(A);
    // One extra element so that a kernel without parameters still has an array.
    static constexpr KernelParam params[count + 1] = {
        KernelParam{sizeof(std::decay_t<A>), alignof(std::decay_t<A>), std::is_pointer_v<std::decay_t<A>>}...,
        KernelParam{0, 0, false}};

    template <size_t... I>
    static void call(const unsigned char* const* args, std::index_sequence<I...>) {
        F(load_param<std::decay_t<std::tuple_element_t<I, std::tuple<A...>>>>(args[I])...);
    }
    static void invoke(const unsigned char* const* args) { call(args, std::index_sequence_for<A...>{}); }
};

struct Registrar {
    Registrar(const KernelEntry* e) { register_kernel(e); }
    Registrar(const char* module, const char* header) { register_module(module, header); }
    Registrar(const char* name, int registers, int static_smem) { register_resources(name, registers, static_smem); }
};

}  // namespace warpath_simdrv

#define WARPATH_SIM_CONCAT2(a, b) a##b
#define WARPATH_SIM_CONCAT(a, b) WARPATH_SIM_CONCAT2(a, b)

#define WARPATH_SIM_MODULE(module, header)                                                        \
    static const warpath_simdrv::Registrar WARPATH_SIM_CONCAT(warpath_sim_module_, __LINE__)(module, header)

#define WARPATH_SIM_KERNEL(module, fn)                                                            \
    static const warpath_simdrv::KernelEntry warpath_sim_entry_##fn = {                           \
        module, #fn, warpath_simdrv::Kernel<&fn>::params, warpath_simdrv::Kernel<&fn>::count,       \
        &warpath_simdrv::Kernel<&fn>::invoke};                                                    \
    static const warpath_simdrv::Registrar warpath_sim_registrar_##fn(&warpath_sim_entry_##fn)

#define WARPATH_SIM_RESOURCES(fn, registers, smem)                                                \
    static const warpath_simdrv::Registrar warpath_sim_resources_##fn(#fn, registers, smem)
