// driver.cpp: a simulated CUDA driver (libcuda.so) that runs warpath's real kernels on the CPU.
//
// `cargo xtask sim` builds this file, one generated unit per kernels-cuda/<module>.cu (see
// sim/driver_registry.hpp) and sim/driver_selftest.cpp into target/cuda-sim/libcuda.so. With
// `LD_LIBRARY_PATH=target/cuda-sim WARPATH_SIM=1`, cudarc loads it instead of NVIDIA's driver,
// so warpath's unchanged host code allocates, copies, launches and times through it.
//
// What it is for: executing every GPU code path of warpath in CI, where there is no GPU, and
// reporting what a real driver would reject, with the error codes the driver documents:
// - calls before cuInit, bad device ordinals, calls without a current context;
// - zero-byte allocations, frees of pointers that are not the start of a live allocation
//   (double frees), copies and memsets that leave a live allocation, misaligned memsets;
// - PTX that is not PTX, a PTX ISA or target newer than the simulated driver and device, entry
//   names the module lacks;
// - launches with block sizes above 1024 or the kernel's .maxntid, more registers than a block
//   may use (from ptxas, see RESOURCES.md), shared memory above the limit (48 KiB unless the
//   kernel opted in with cuFuncSetAttribute);
// - timing between events created with CU_EVENT_DISABLE_TIMING or never recorded;
// - kernel faults: a read or write beyond the end of an allocation (each allocation ends at an
//   inaccessible guard page; bytes between the allocation's end and its 256-byte-aligned size are
//   checked for writes after every launch), use of freed device memory, kernel arguments that
//   point outside device memory, integer division by zero, deadlocks at barriers, and launches
//   that run longer than WARPATH_SIM_TIMEOUT seconds. A fault makes the context's error sticky,
//   as on hardware: the launch returns CUDA_SUCCESS and every later call in the context returns
//   the error (CUDA_ERROR_ILLEGAL_ADDRESS, _LAUNCH_FAILED or _LAUNCH_TIMEOUT) until the primary
//   context is reset. It never exits the process.
// Fresh allocations are filled with a poison byte (0xCD, or WARPATH_SIM_POISON) so that reads
// of memory no one wrote show up as wrong results, and WARPATH_SIM_MEM (bytes, with an optional
// K/M/G suffix; default 4G) is the device's memory, so out-of-memory paths can be tested; a
// thread can also limit its own share (warpath_sim_set_thread_memory_limit), which tests use to
// reach out-of-memory paths without disturbing tests on other threads.
//
// What it cannot tell: speed, the GPU memory model (blocks run one after another, threads of a
// block take turns between barriers, see cuda_sim.hpp), concurrency between blocks or streams
// (every call completes before it returns), FMA contraction and other code generation, and
// out-of-bounds accesses that stay inside another live allocation.
//
// Threads: one global lock serialises every call. Diagnostics go to standard error, prefixed
// `cuda-sim:`, and warpath_sim_take_error() returns (and clears) the last one.

// siglongjmp leaves a fiber's stack for the thread's own: glibc's fortified longjmp would see
// that as jumping into a dead frame.
#ifdef _FORTIFY_SOURCE
#undef _FORTIFY_SOURCE
#endif

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <pthread.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "sim/cuda_sim.hpp"
#include "sim/driver_registry.hpp"

#define SIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// ---------------------------------------------------------------------------------------------
// Configuration and the simulated device.

constexpr int DRIVER_VERSION = 13000;       // CUDA 13.0
constexpr int PTX_ISA_MAX = 90;             // PTX ISA 9.0, what a CUDA 13.0 driver accepts
constexpr int DEVICE_SM = 90;               // sm_90, Hopper-like
constexpr size_t ALLOC_ALIGN = 256;         // cuMemAlloc's documented alignment
constexpr size_t SMEM_DEFAULT = 48 * 1024;  // per block without the opt-in attribute
constexpr size_t SMEM_OPTIN = 227 * 1024;   // per block with it (sm_90)
constexpr int REGS_PER_BLOCK = 65536;
constexpr unsigned char CANARY = 0xFD;
const char* const DEVICE_NAME = "warpath simulated CUDA device (CPU simulation, not a GPU)";

size_t parse_bytes(const char* s, size_t fallback) {
    if (!s || !*s) return fallback;
    char* end = nullptr;
    double v = std::strtod(s, &end);
    if (end == s || v <= 0) return fallback;
    switch (*end) {
        case 'k': case 'K': v *= 1024.0; break;
        case 'm': case 'M': v *= 1024.0 * 1024.0; break;
        case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
        case 't': case 'T': v *= 1024.0 * 1024.0 * 1024.0 * 1024.0; break;
        default: break;
    }
    return static_cast<size_t>(v);
}

// The environment variable `name` as a `T` (std::atoi or std::atof), or `fallback` when it is
// unset or the value is not positive.
template <class T>
T env_positive(const char* name, T fallback) {
    const char* s = std::getenv(name);
    T v = 0;
    if (s) v = std::is_integral_v<T> ? static_cast<T>(std::atoi(s)) : static_cast<T>(std::atof(s));
    return v > 0 ? v : fallback;
}

struct Config {
    size_t memory = parse_bytes(std::getenv("WARPATH_SIM_MEM"), size_t(4) << 30);
    int multiprocessors = env_positive<int>("WARPATH_SIM_SMS", 8);
    int driver_version = env_positive<int>("WARPATH_SIM_DRIVER_VERSION", DRIVER_VERSION);
    unsigned char poison = [] {
        const char* s = std::getenv("WARPATH_SIM_POISON");
        return static_cast<unsigned char>(s ? std::strtoul(s, nullptr, 0) : 0xCD);
    }();
    double timeout_s = env_positive<double>("WARPATH_SIM_TIMEOUT", 120.0);
    bool enabled = [] {
        const char* s = std::getenv("WARPATH_SIM");
        return s && (std::strcmp(s, "1") == 0 || std::strcmp(s, "true") == 0 || std::strcmp(s, "yes") == 0);
    }();
};

const Config& config() {
    static const Config c;
    return c;
}

size_t page_size() {
    static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return p;
}

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

std::string hex(uintptr_t a) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(a));
    return b;
}

// ---------------------------------------------------------------------------------------------
// Diagnostics.

std::mutex g_message_lock;
std::string g_last_message;

void report(const char* fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "cuda-sim: %s\n", buf);
    std::lock_guard<std::mutex> g(g_message_lock);
    g_last_message = buf;
}

// ---------------------------------------------------------------------------------------------
// The kernel registry, filled by the static initialisers of the generated units.

struct Resources {
    int registers = -1;  // per thread, from ptxas for sm_90; -1 when unknown
    int static_smem = -1;
};

struct Registry {
    std::unordered_map<std::string, const warpath_simdrv::KernelEntry*> kernels;  // by entry name
    std::unordered_map<std::string, std::string> modules;                         // name -> PTX header
    std::unordered_map<std::string, Resources> resources;                         // by entry name
};

Registry& registry() {
    static Registry* r = new Registry;  // never destroyed: see Watchdog
    return *r;
}

// ---------------------------------------------------------------------------------------------
// State. One device, its primary context; everything under g_lock.

std::mutex g_lock;
bool g_initialized = false;

struct Allocation {
    uintptr_t map_base = 0;  // mapping: [front guard page][canary .. data .. canary][back guard]
    size_t map_len = 0;
    uintptr_t start = 0;     // what the caller got
    size_t size = 0;         // bytes asked for
    size_t padded = 0;       // size rounded up to ALLOC_ALIGN
    uint64_t serial = 0;
    uint64_t owner = 0;      // the allocating thread (see thread memory limits)
};

// Per-thread memory limits (warpath_sim_set_thread_memory_limit): an allocation by a thread with
// a limit fails with CUDA_ERROR_OUT_OF_MEMORY when the thread's live allocations would exceed
// it, and cuMemGetInfo reports the thread's remaining room. Tests use it to reach out-of-memory
// paths with small inputs, without disturbing tests running on other threads.
uint64_t thread_key() {
    static std::atomic<uint64_t> next{1};
    thread_local uint64_t key = next++;
    return key;
}
thread_local size_t t_memory_limit = SIZE_MAX;
std::map<uint64_t, size_t>& live_by_thread() {
    static auto* m = new std::map<uint64_t, size_t>;  // never destroyed: see Watchdog
    return *m;
}
size_t thread_room() {
    if (t_memory_limit == SIZE_MAX) return SIZE_MAX;
    const size_t live = live_by_thread()[thread_key()];
    return live >= t_memory_limit ? 0 : t_memory_limit - live;
}

struct Event {
    unsigned flags = 0;
    bool recorded = false;
    double time_ms = 0;
};

struct Stream {
    unsigned flags = 0;
    int priority = 0;
};

struct PtxFunction {
    std::string name;
    std::vector<size_t> param_sizes;
    unsigned maxntid = 0;  // product of .maxntid, 0 when absent
    unsigned reqntid = 0;  // product of .reqntid, 0 when absent
    size_t static_smem = 0;
    bool dynamic_smem = false;
    std::vector<std::string> shared_refs;  // module-scope .shared variables it names
    std::vector<std::string> calls;        // .func it calls
};

struct Module;

struct Function {
    Module* module = nullptr;
    PtxFunction ptx;
    const warpath_simdrv::KernelEntry* entry = nullptr;
    Resources resources;
    size_t max_dynamic_smem = 0;  // set by CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
};

struct Module {
    std::string name;  // the .cu stem from the PTX header, or "" for foreign PTX
    std::map<std::string, std::unique_ptr<Function>> functions;
};

struct Context {
    int retains = 0;
    unsigned flags = 0;
    CUresult sticky = CUDA_SUCCESS;
    std::map<uintptr_t, Allocation> allocations;  // by start
    std::deque<Allocation> quarantine;            // freed, kept inaccessible to catch late use
    size_t quarantined_bytes = 0;
    size_t used = 0;
    uint64_t serial = 0;
    std::set<Event*> events;
    std::set<Stream*> streams;
    std::set<Module*> modules;
    std::set<Function*> functions;
    std::map<void*, size_t> host_allocations;  // cuMemAllocHost / cuMemHostAlloc
    std::map<void*, size_t> host_registered;   // cuMemHostRegister
};

// Device 0's primary context; its address is the CUcontext handle. Never destroyed: threads may
// still call in (a buffer dropped late) while the process exits.
Context& g_primary = *new Context;
thread_local std::vector<CUcontext> t_stack;  // the thread's context stack; back() is current

CUcontext as_handle(Context* c) { return reinterpret_cast<CUcontext>(c); }

double now_ms() {
    using namespace std::chrono;
    static const auto t0 = steady_clock::now();
    return duration<double, std::milli>(steady_clock::now() - t0).count();
}

// The calling thread's current context, or nullptr.
Context* current() {
    if (t_stack.empty() || t_stack.back() == nullptr) return nullptr;
    return reinterpret_cast<Context*>(t_stack.back());
}

// Common entry checks: initialised, a current context, no sticky error.
#define SIM_REQUIRE_INIT()                                                                         \
    if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED

#define SIM_REQUIRE_CONTEXT(ctx)                                                                   \
    SIM_REQUIRE_INIT();                                                                            \
    Context* ctx = current();                                                                      \
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;                                                   \
    if (ctx->retains <= 0) return CUDA_ERROR_CONTEXT_IS_DESTROYED;                                 \
    if (ctx->sticky != CUDA_SUCCESS) return ctx->sticky

bool valid_stream(Context* ctx, CUstream s) {
    if (s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return true;
    return ctx->streams.count(reinterpret_cast<Stream*>(s)) != 0;
}

// ---------------------------------------------------------------------------------------------
// Device memory.

// The live allocation that holds [p, p + n), n >= 1; nullptr if none.
Allocation* find_range(Context* ctx, uintptr_t p, size_t n) {
    auto it = ctx->allocations.upper_bound(p);
    if (it == ctx->allocations.begin()) return nullptr;
    --it;
    Allocation& a = it->second;
    if (p >= a.start && n <= a.size && p - a.start <= a.size - n) return &a;
    return nullptr;
}

// The live allocation whose mapping (guards and padding included) holds `p`.
const Allocation* find_mapping(const Context* ctx, uintptr_t p) {
    for (const auto& [start, a] : ctx->allocations)
        if (p >= a.map_base && p < a.map_base + a.map_len) return &a;
    return nullptr;
}

const Allocation* find_freed(const Context* ctx, uintptr_t p) {
    for (auto it = ctx->quarantine.rbegin(); it != ctx->quarantine.rend(); ++it)
        if (p >= it->map_base && p < it->map_base + it->map_len) return &*it;
    return nullptr;
}

std::string describe_address(const Context* ctx, uintptr_t p) {
    if (const Allocation* a = find_mapping(ctx, p)) {
        if (p >= a->start + a->size)
            return std::to_string(p - (a->start + a->size)) + " bytes past the end of the " +
                   std::to_string(a->size) + "-byte allocation at " + hex(a->start);
        if (p < a->start)
            return std::to_string(a->start - p) + " bytes before the " + std::to_string(a->size) +
                   "-byte allocation at " + hex(a->start);
        return "inside the " + std::to_string(a->size) + "-byte allocation at " + hex(a->start);
    }
    if (const Allocation* a = find_freed(ctx, p))
        return "inside the freed " + std::to_string(a->size) + "-byte allocation at " + hex(a->start) +
               " (use after free)";
    return "not device memory";
}

CUresult allocate(Context* ctx, CUdeviceptr* dptr, size_t bytes) {
    if (!dptr) return CUDA_ERROR_INVALID_VALUE;
    if (bytes == 0) {
        report("cuMemAlloc of 0 bytes: the driver returns CUDA_ERROR_INVALID_VALUE");
        return CUDA_ERROR_INVALID_VALUE;
    }
    const Config& cfg = config();
    if (bytes > cfg.memory || ctx->used > cfg.memory - bytes || bytes > thread_room()) return CUDA_ERROR_OUT_OF_MEMORY;
    const size_t page = page_size();
    const size_t padded = round_up(bytes, ALLOC_ALIGN);
    const size_t body = round_up(padded, page);
    const size_t len = page + body + page;
    void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    Allocation a;
    a.map_base = reinterpret_cast<uintptr_t>(m);
    a.map_len = len;
    a.start = a.map_base + page + body - padded;  // the padded end touches the back guard
    a.size = bytes;
    a.padded = padded;
    a.serial = ++ctx->serial;
    a.owner = thread_key();
    live_by_thread()[a.owner] += bytes;
    mprotect(m, page, PROT_NONE);
    mprotect(reinterpret_cast<void*>(a.map_base + page + body), page, PROT_NONE);
    // Canaries around the data, poison in it.
    std::memset(reinterpret_cast<void*>(a.map_base + page), CANARY, a.start - (a.map_base + page));
    std::memset(reinterpret_cast<void*>(a.start), cfg.poison, bytes);
    std::memset(reinterpret_cast<void*>(a.start + bytes), CANARY, padded - bytes);
    ctx->allocations.emplace(a.start, a);
    ctx->used += bytes;
    *dptr = static_cast<CUdeviceptr>(a.start);
    return CUDA_SUCCESS;
}

// Describes the first damaged canary byte of `a`, or "" when both canaries are intact.
std::string check_canaries(const Allocation& a) {
    const size_t page = page_size();
    const auto* front = reinterpret_cast<const unsigned char*>(a.map_base + page);
    const size_t front_len = a.start - (a.map_base + page);
    for (size_t i = front_len; i-- > 0;)
        if (front[i] != CANARY)
            return "a write " + std::to_string(front_len - i) + " bytes before the " + std::to_string(a.size) +
                   "-byte allocation at " + hex(a.start);
    const auto* back = reinterpret_cast<const unsigned char*>(a.start + a.size);
    for (size_t i = 0; i < a.padded - a.size; ++i)
        if (back[i] != CANARY)
            return "a write " + std::to_string(i) + " bytes past the end of the " + std::to_string(a.size) +
                   "-byte allocation at " + hex(a.start);
    return "";
}

void release_mapping(Context* ctx, Allocation a) {
    // Keep the addresses reserved and inaccessible for a while so a late use faults.
    mmap(reinterpret_cast<void*>(a.map_base), a.map_len, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    ctx->quarantine.push_back(a);
    ctx->quarantined_bytes += a.map_len;
    while (ctx->quarantined_bytes > (size_t(64) << 30) || ctx->quarantine.size() > 200000) {
        const Allocation& old = ctx->quarantine.front();
        munmap(reinterpret_cast<void*>(old.map_base), old.map_len);
        ctx->quarantined_bytes -= old.map_len;
        ctx->quarantine.pop_front();
    }
}

CUresult free_allocation(Context* ctx, CUdeviceptr p) {
    auto it = ctx->allocations.find(static_cast<uintptr_t>(p));
    if (it == ctx->allocations.end()) {
        if (p == 0) return CUDA_SUCCESS;  // freeing null is a no-op
        report("cuMemFree(%s): %s", hex(p).c_str(),
               find_freed(ctx, p) ? "already freed (double free)" : "not the start of a live allocation");
        return CUDA_ERROR_INVALID_VALUE;
    }
    Allocation a = it->second;
    ctx->allocations.erase(it);
    ctx->used -= a.size;
    live_by_thread()[a.owner] -= a.size;
    release_mapping(ctx, a);
    return CUDA_SUCCESS;
}

void reset_context(Context* ctx) {
    for (auto& [start, a] : ctx->allocations) munmap(reinterpret_cast<void*>(a.map_base), a.map_len);
    for (auto& a : ctx->quarantine) munmap(reinterpret_cast<void*>(a.map_base), a.map_len);
    for (auto* e : ctx->events) delete e;
    for (auto* s : ctx->streams) delete s;
    for (auto* m : ctx->modules) delete m;
    for (auto& [p, n] : ctx->host_allocations) std::free(p);
    ctx->allocations.clear();
    live_by_thread().clear();
    ctx->quarantine.clear();
    ctx->quarantined_bytes = 0;
    ctx->used = 0;
    ctx->events.clear();
    ctx->streams.clear();
    ctx->modules.clear();
    ctx->functions.clear();
    ctx->host_allocations.clear();
    ctx->host_registered.clear();
    ctx->sticky = CUDA_SUCCESS;
}

// A device range for a copy or memset: inside one live allocation, or pinned host memory.
CUresult check_device_range(Context* ctx, CUdeviceptr p, size_t n, const char* what) {
    if (n == 0) return CUDA_SUCCESS;
    if (find_range(ctx, static_cast<uintptr_t>(p), n)) return CUDA_SUCCESS;
    for (const auto* m : {&ctx->host_allocations, &ctx->host_registered}) {
        auto it = m->upper_bound(reinterpret_cast<void*>(p));
        if (it != m->begin()) {
            --it;
            const auto base = reinterpret_cast<uintptr_t>(it->first);
            if (p >= base && n <= it->second && p - base <= it->second - n) return CUDA_SUCCESS;
        }
    }
    report("%s: %zu bytes at %s are not inside one live allocation (%s)", what, n, hex(p).c_str(),
           describe_address(ctx, static_cast<uintptr_t>(p)).c_str());
    return CUDA_ERROR_INVALID_VALUE;
}

// ---------------------------------------------------------------------------------------------
// PTX parsing: entries, parameter sizes, launch bounds, shared memory.

struct PtxModuleInfo {
    std::string header;  // first line
    std::string module;  // from the warpath header, or ""
    int isa = 0;         // e.g. 90 for 9.0
    int target = 0;      // e.g. 80 for sm_80
    std::vector<PtxFunction> entries;
    std::map<std::string, PtxFunction> funcs;        // .func definitions
    std::map<std::string, size_t> module_shared;     // module-scope .shared variables
    std::set<std::string> module_extern_shared;      // .extern .shared (dynamic)
    std::string error;                               // why it is not valid PTX
};

size_t type_size(const std::string& t) {
    if (t == ".b8" || t == ".u8" || t == ".s8" || t == ".pred") return 1;
    if (t == ".b16" || t == ".u16" || t == ".s16" || t == ".f16" || t == ".bf16") return 2;
    if (t == ".b32" || t == ".u32" || t == ".s32" || t == ".f32" || t == ".f16x2" || t == ".bf16x2") return 4;
    if (t == ".b64" || t == ".u64" || t == ".s64" || t == ".f64") return 8;
    if (t == ".b128") return 16;
    return 0;
}

std::vector<std::string> tokens(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == ';') {
            if (!cur.empty()) out.push_back(cur), cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

// Parses a declaration like `.shared .align 8 .b8 name[16384]` (or a .param); returns the size
// and sets `name` and `align`.
size_t declaration_size(const std::vector<std::string>& t, size_t first, std::string& name, size_t& align) {
    size_t elem = 0;
    align = 1;
    for (size_t i = first; i < t.size(); ++i) {
        if (t[i] == ".align" && i + 1 < t.size()) {
            align = std::strtoull(t[i + 1].c_str(), nullptr, 10);
            ++i;
        } else if (size_t s = type_size(t[i])) {
            elem = s;
        } else if (t[i][0] != '.') {
            std::string n = t[i];
            size_t count = 1;
            const size_t br = n.find('[');
            if (br != std::string::npos) {
                count = n.size() > br + 2 ? std::strtoull(n.c_str() + br + 1, nullptr, 10) : 0;  // [] -> 0
                n = n.substr(0, br);
            }
            name = n;
            return elem * count;
        }
    }
    return 0;
}

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

// Names of `candidates` that appear as whole identifiers in `body`.
std::vector<std::string> referenced(const std::string& body, const std::map<std::string, size_t>& candidates,
                                    const std::set<std::string>& more) {
    std::vector<std::string> out;
    auto scan = [&](const std::string& name) {
        size_t pos = 0;
        while ((pos = body.find(name, pos)) != std::string::npos) {
            const bool left = pos == 0 || !is_ident_char(body[pos - 1]);
            const bool right = pos + name.size() >= body.size() || !is_ident_char(body[pos + name.size()]);
            if (left && right) {
                out.push_back(name);
                return;
            }
            pos += name.size();
        }
    };
    for (const auto& [n, s] : candidates) scan(n);
    for (const auto& n : more) scan(n);
    return out;
}

PtxModuleInfo parse_ptx(const char* text) {
    PtxModuleInfo info;
    const std::string src(text);
    const size_t nl = src.find('\n');
    info.header = src.substr(0, nl);
    const std::string marker = "generated by `cargo xtask kernels` from ";
    const size_t m = info.header.find(marker);
    if (m != std::string::npos) {
        const size_t b = m + marker.size();
        const size_t e = info.header.find(".cu", b);
        if (e != std::string::npos) info.module = info.header.substr(b, e - b);
    }
    // Directives at the top: .version, .target, .address_size.
    const size_t v = src.find(".version");
    const size_t t = src.find(".target");
    if (v == std::string::npos || t == std::string::npos) {
        info.error = "no .version/.target directive: not PTX";
        return info;
    }
    {
        int major = 0, minor = 0;
        if (std::sscanf(src.c_str() + v, ".version %d.%d", &major, &minor) != 2) {
            info.error = "malformed .version directive";
            return info;
        }
        info.isa = major * 10 + minor;
        int sm = 0;
        if (std::sscanf(src.c_str() + t, ".target sm_%d", &sm) != 1) {
            info.error = "malformed .target directive";
            return info;
        }
        info.target = sm;
    }
    // Walk top-level statements; a function's body is the text between its braces.
    size_t pos = 0;
    auto skip_comment_lines = [&](size_t p) { return p; };
    (void)skip_comment_lines;
    while (pos < src.size()) {
        // Skip comments.
        if (src.compare(pos, 2, "//") == 0) {
            pos = src.find('\n', pos);
            if (pos == std::string::npos) break;
            continue;
        }
        if (src.compare(pos, 2, "/*") == 0) {
            pos = src.find("*/", pos);
            if (pos == std::string::npos) break;
            pos += 2;
            continue;
        }
        const size_t entry = src.compare(pos, 6, ".entry") == 0 ? pos : std::string::npos;
        const size_t func = src.compare(pos, 5, ".func") == 0 ? pos : std::string::npos;
        if (entry != std::string::npos || func != std::string::npos) {
            const bool is_entry = entry != std::string::npos;
            size_t p = pos + (is_entry ? 6 : 5);
            const size_t open_paren = src.find('(', p);
            const size_t brace = src.find('{', p);
            const size_t semi = src.find(';', p);
            if (brace == std::string::npos) {
                info.error = "function without a body";
                return info;
            }
            if (semi != std::string::npos && semi < brace) {  // a prototype (.func declaration)
                pos = semi + 1;
                continue;
            }
            PtxFunction f;
            // .func may start with a return-value list: `.func (.param .b32 r) name(`.
            std::string head = src.substr(p, brace - p);
            size_t name_start = 0;
            if (!is_entry) {
                size_t q = 0;
                while (q < head.size() && std::isspace(static_cast<unsigned char>(head[q]))) ++q;
                if (q < head.size() && head[q] == '(') {
                    const size_t close = head.find(')', q);
                    name_start = close == std::string::npos ? q : close + 1;
                } else {
                    name_start = q;
                }
            }
            size_t ns = name_start;
            while (ns < head.size() && std::isspace(static_cast<unsigned char>(head[ns]))) ++ns;
            size_t ne = ns;
            while (ne < head.size() && is_ident_char(head[ne])) ++ne;
            f.name = head.substr(ns, ne - ns);
            const size_t lp = head.find('(', ne);
            const size_t rp = lp == std::string::npos ? std::string::npos : head.find(')', lp);
            if (lp != std::string::npos && rp != std::string::npos) {
                const std::string params = head.substr(lp + 1, rp - lp - 1);
                size_t s = 0;
                while (s < params.size()) {
                    size_t e = params.find(',', s);
                    if (e == std::string::npos) e = params.size();
                    const auto tk = tokens(params.substr(s, e - s));
                    if (!tk.empty() && tk[0] == ".param") {
                        std::string n;
                        size_t al = 1;
                        f.param_sizes.push_back(declaration_size(tk, 1, n, al));
                    }
                    s = e + 1;
                }
                const std::string after = rp + 1 < head.size() ? head.substr(rp + 1) : "";
                const auto tk = tokens(after);
                for (size_t i = 0; i < tk.size(); ++i) {
                    if ((tk[i] == ".maxntid" || tk[i] == ".reqntid") && i + 1 < tk.size()) {
                        unsigned prod = 1;
                        size_t j = i + 1;
                        for (; j < tk.size() && tk[j][0] != '.'; ++j) prod *= std::strtoul(tk[j].c_str(), nullptr, 10);
                        (tk[i] == ".maxntid" ? f.maxntid : f.reqntid) = prod;
                        i = j - 1;
                    }
                }
            }
            (void)open_paren;
            // The body: match braces.
            size_t depth = 0, q = brace;
            for (; q < src.size(); ++q) {
                if (src[q] == '{') ++depth;
                if (src[q] == '}' && --depth == 0) break;
            }
            const std::string body = src.substr(brace, q - brace + 1);
            // Shared variables declared in the body (demoted kernel-local __shared__).
            size_t offset = 0;
            size_t d = 0;
            while ((d = body.find(".shared", d)) != std::string::npos) {
                const size_t line_start = body.rfind('\n', d);
                const size_t ls = line_start == std::string::npos ? 0 : line_start + 1;
                std::string prefix = body.substr(ls, d - ls);
                const bool declaration = prefix.find_first_not_of(" \t") == std::string::npos;
                const size_t le = body.find(';', d);
                if (declaration && le != std::string::npos) {
                    const auto tk = tokens(body.substr(d, le - d));
                    std::string n;
                    size_t al = 1;
                    const size_t sz = declaration_size(tk, 1, n, al);
                    offset = round_up(offset, std::max<size_t>(al, 1)) + sz;
                }
                d += 7;
            }
            f.static_smem = offset;
            f.shared_refs = referenced(body, info.module_shared, info.module_extern_shared);
            for (const auto& [fname, fn] : info.funcs)
                if (body.find(fname) != std::string::npos) f.calls.push_back(fname);
            if (is_entry) info.entries.push_back(f);
            else info.funcs[f.name] = f;
            pos = q + 1;
            continue;
        }
        // Module-scope shared variables.
        if (src.compare(pos, 7, ".shared") == 0 || src.compare(pos, 14, ".extern .shared") == 0 ||
            src.compare(pos, 15, ".visible .shared") == 0) {
            const size_t le = src.find(';', pos);
            if (le == std::string::npos) break;
            const auto tk = tokens(src.substr(pos, le - pos));
            std::string n;
            size_t al = 1;
            size_t first = 0;
            while (first < tk.size() && tk[first] != ".shared") ++first;
            const size_t sz = declaration_size(tk, first + 1, n, al);
            if (tk[0] == ".extern") info.module_extern_shared.insert(n);
            else info.module_shared[n] = sz;
            pos = le + 1;
            continue;
        }
        // .visible .entry: skip the .visible keyword.
        if (src.compare(pos, 8, ".visible") == 0 || src.compare(pos, 5, ".weak") == 0) {
            pos += src.compare(pos, 8, ".visible") == 0 ? 8 : 5;
            continue;
        }
        ++pos;
    }
    // Resolve shared memory through module-scope variables and calls.
    for (auto& e : info.entries) {
        std::set<std::string> seen_funcs, seen_vars;
        std::vector<const PtxFunction*> todo{&e};
        size_t extra = 0;
        while (!todo.empty()) {
            const PtxFunction* f = todo.back();
            todo.pop_back();
            if (f != &e) extra += f->static_smem;
            for (const auto& r : f->shared_refs) {
                if (info.module_extern_shared.count(r)) e.dynamic_smem = true;
                else if (seen_vars.insert(r).second) extra += info.module_shared[r];
            }
            for (const auto& c : f->calls)
                if (seen_funcs.insert(c).second && info.funcs.count(c)) todo.push_back(&info.funcs[c]);
        }
        e.static_smem += extra;
    }
    if (info.entries.empty() && info.funcs.empty()) info.error = "no .entry in the module";
    return info;
}

// ---------------------------------------------------------------------------------------------
// Kernel execution with fault capture.

struct FaultInfo {
    int signal = 0;            // SIGSEGV, SIGBUS, SIGFPE, SIGILL or the watchdog's
    uintptr_t address = 0;     // si_addr
    bool write = false;
    unsigned block = 0, thread = 0;
};

volatile sig_atomic_t g_in_launch = 0;
sigjmp_buf g_escape;  // where a signal handler leaves a faulting or timed-out kernel
pthread_t g_launch_thread;
FaultInfo g_fault;
int g_watchdog_signal = 0;
struct sigaction g_previous[65];

// The watchdog: signals the launching thread when a launch runs past its deadline. Its state
// lives on the heap and is never destroyed: the detached thread waits on it until the process
// ends, and destroying a condition variable someone waits on blocks exit.
struct Watchdog {
    std::mutex lock;
    std::condition_variable cv;
    bool armed = false;
    bool fired = false;
    std::chrono::steady_clock::time_point deadline;
};

Watchdog& watchdog() {
    static Watchdog* w = new Watchdog;
    return *w;
}

void watchdog_main() {
    Watchdog& w = watchdog();
    std::unique_lock<std::mutex> lk(w.lock);
    for (;;) {
        if (!w.armed) {
            w.cv.wait(lk);
            continue;
        }
        if (w.cv.wait_until(lk, w.deadline) == std::cv_status::timeout && w.armed &&
            std::chrono::steady_clock::now() >= w.deadline) {
            w.fired = true;
            pthread_kill(g_launch_thread, g_watchdog_signal);
            w.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        }
    }
}

void arm_watchdog(double seconds) {
    static std::once_flag once;
    std::call_once(once, [] { std::thread(watchdog_main).detach(); });
    Watchdog& w = watchdog();
    std::lock_guard<std::mutex> g(w.lock);
    w.armed = true;
    w.fired = false;
    w.deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<long long>(seconds * 1e6));
    w.cv.notify_all();
}

bool disarm_watchdog() {
    Watchdog& w = watchdog();
    std::lock_guard<std::mutex> g(w.lock);
    w.armed = false;
    w.cv.notify_all();
    return w.fired;
}

void chain(int sig, siginfo_t* info, void* uctx) {
    const struct sigaction& old = g_previous[sig];
    if (old.sa_flags & SA_SIGINFO) {
        if (old.sa_sigaction) old.sa_sigaction(sig, info, uctx);
        return;
    }
    if (old.sa_handler == SIG_IGN) return;
    if (old.sa_handler == SIG_DFL) {
        // Re-raise with the default action: returning re-executes the faulting instruction.
        signal(sig, SIG_DFL);
        if (sig == g_watchdog_signal) raise(sig);
        return;
    }
    old.sa_handler(sig);
}

void on_signal(int sig, siginfo_t* info, void* uctx) {
    const auto* uc = static_cast<const ucontext_t*>(uctx);
#if defined(__x86_64__)
    const uintptr_t sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
    const uintptr_t sp = static_cast<uintptr_t>(uc->uc_mcontext.sp);
#else
    const uintptr_t sp = 0;
#endif
    const bool ours = g_in_launch && pthread_equal(pthread_self(), g_launch_thread);
    const bool in_fiber = ours && warpath_sim::on_fiber_stack(sp);
    if (sig == g_watchdog_signal) {
        if (!ours) return;
        if (!warpath_sim::g_abort) {
            g_fault.signal = sig;
            warpath_sim::g_abort = 1;
        }
        if (in_fiber) siglongjmp(g_escape, 1);
        return;  // the scheduler checks g_abort between turns
    }
    if (!in_fiber) {
        chain(sig, info, uctx);
        return;
    }
    g_fault.signal = sig;
    g_fault.address = reinterpret_cast<uintptr_t>(info->si_addr);
#if defined(__x86_64__)
    g_fault.write = sig == SIGSEGV && (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#endif
    g_fault.block = blockIdx.x;
    g_fault.thread = threadIdx.x;
    warpath_sim::g_abort = 1;
    siglongjmp(g_escape, 1);
}

void install_signal_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        g_watchdog_signal = SIGRTMIN + 3;
        for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, g_watchdog_signal}) {
            struct sigaction sa;
            std::memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = on_signal;
            sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
            sigemptyset(&sa.sa_mask);
            sigaction(sig, &sa, &g_previous[sig]);
        }
    });
}

const char* signal_name(int sig) {
    if (sig == SIGSEGV) return "SIGSEGV";
    if (sig == SIGBUS) return "SIGBUS";
    if (sig == SIGFPE) return "SIGFPE";
    if (sig == SIGILL) return "SIGILL";
    return "signal";
}

std::string launch_label(const Function& f, unsigned grid, unsigned block, size_t smem) {
    return "kernel `" + f.ptx.name + "` (module `" + f.module->name + "`) <<<" + std::to_string(grid) + ", " +
           std::to_string(block) + ", " + std::to_string(smem) + ">>>";
}

void make_sticky(Context* ctx, CUresult code, const std::string& why) {
    const char* name = nullptr;
    cuGetErrorName(code, &name);
    report("%s; the context's error is now sticky: %s", why.c_str(), name ? name : "?");
    ctx->sticky = code;
}

CUresult run_kernel(Context* ctx, Function& f, unsigned grid, unsigned block, size_t smem, void** params) {
    const auto& entry = *f.entry;
    // Copy the arguments by their C++ sizes and check the pointers.
    std::vector<std::vector<unsigned char>> storage(entry.nparams);
    std::vector<const unsigned char*> args(entry.nparams);
    for (size_t i = 0; i < entry.nparams; ++i) {
        const auto& p = entry.params[i];
        storage[i].resize(std::max<size_t>(p.size, 1));
        std::memcpy(storage[i].data(), params[i], p.size);
        args[i] = storage[i].data();
        if (p.is_pointer) {
            uintptr_t v = 0;
            std::memcpy(&v, params[i], sizeof v);
            if (v == 0) continue;
            bool ok = false;
            auto it = ctx->allocations.upper_bound(v);
            if (it != ctx->allocations.begin()) {
                --it;
                ok = v >= it->second.start && v <= it->second.start + it->second.size;  // one past the end is fine
            }
            for (const auto* m : {&ctx->host_allocations, &ctx->host_registered}) {
                auto h = m->upper_bound(reinterpret_cast<void*>(v));
                if (!ok && h != m->begin()) {
                    --h;
                    const auto base = reinterpret_cast<uintptr_t>(h->first);
                    ok = v >= base && v <= base + h->second;
                }
            }
            if (!ok) {
                make_sticky(ctx, CUDA_ERROR_ILLEGAL_ADDRESS,
                            launch_label(f, grid, block, smem) + ": argument " + std::to_string(i) + " (" +
                                hex(v) + ") is " + describe_address(ctx, v));
                return CUDA_SUCCESS;  // the fault shows at the next call, as on hardware
            }
        }
    }
    const std::function<void()> body = [&] { entry.invoke(args.data()); };
    warpath_sim::ensure_fibers(block);
    g_fault = FaultInfo{};
    warpath_sim::g_abort = 0;
    g_launch_thread = pthread_self();
    g_in_launch = 1;
    arm_watchdog(config().timeout_s);
    std::string why;
    if (sigsetjmp(g_escape, 1) == 0) {
        why = warpath_sim::try_launch(grid, block, smem, body);
    } else {
        warpath_sim::abandon_launch();
        why = "aborted";
    }
    const bool timed_out = disarm_watchdog() && g_fault.signal == g_watchdog_signal;
    g_in_launch = 0;
    warpath_sim::g_abort = 0;
    const std::string label = launch_label(f, grid, block, smem);
    if (timed_out || g_fault.signal == g_watchdog_signal) {
        make_sticky(ctx, CUDA_ERROR_LAUNCH_TIMEOUT,
                    label + ": still running after " + std::to_string(config().timeout_s) +
                        " s (WARPATH_SIM_TIMEOUT); a spin that never ends or an input too large for the simulator");
        return CUDA_SUCCESS;
    }
    if (g_fault.signal) {
        const std::string where = " in block " + std::to_string(g_fault.block) + ", thread " + std::to_string(g_fault.thread);
        if (g_fault.signal == SIGFPE) {
            make_sticky(ctx, CUDA_ERROR_LAUNCH_FAILED,
                        label + where + ": arithmetic fault (integer division by zero?), undefined on a GPU");
        } else if (g_fault.signal == SIGILL) {
            make_sticky(ctx, CUDA_ERROR_ILLEGAL_INSTRUCTION, label + where + ": illegal instruction");
        } else if (warpath_sim::on_fiber_stack(g_fault.address)) {
            make_sticky(ctx, CUDA_ERROR_LAUNCH_FAILED,
                        label + where + ": the simulated thread overflowed its stack (deep recursion?)");
        } else {
            const auto smem_end = reinterpret_cast<uintptr_t>(warpath_sim::g_dyn_smem.base) + warpath_sim::g_dyn_smem.capacity;
            const std::string what =
                g_fault.address >= smem_end && g_fault.address < smem_end + 64 * 1024
                    ? std::to_string(g_fault.address - smem_end) + " bytes past the end of the launch's " +
                          std::to_string(smem) + " bytes of dynamic shared memory"
                    : describe_address(ctx, g_fault.address);
            make_sticky(ctx, CUDA_ERROR_ILLEGAL_ADDRESS,
                        label + where + ": " + (g_fault.write ? "write" : "access") + " at " + hex(g_fault.address) +
                            ", " + what + " (" + signal_name(g_fault.signal) + ")");
        }
        return CUDA_SUCCESS;
    }
    if (!why.empty()) {
        make_sticky(ctx, CUDA_ERROR_LAUNCH_FAILED, label + ": " + why);
        return CUDA_SUCCESS;
    }
    for (const auto& [start, a] : ctx->allocations) {
        const std::string bad = check_canaries(a);
        if (!bad.empty()) {
            make_sticky(ctx, CUDA_ERROR_ILLEGAL_ADDRESS, label + ": " + bad);
            return CUDA_SUCCESS;
        }
    }
    return CUDA_SUCCESS;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Registration (called by the generated units' static initialisers).

namespace warpath_simdrv {
void register_kernel(const KernelEntry* e) { registry().kernels[e->name] = e; }
void register_module(const char* module, const char* ptx_header) { registry().modules[module] = ptx_header; }
void register_resources(const char* name, int registers, int static_smem) {
    registry().resources[name] = Resources{registers, static_smem};
}
}  // namespace warpath_simdrv

// ---------------------------------------------------------------------------------------------
// warpath's own entry points: how gpu-runtime tells the simulator from a real driver.

SIM_EXPORT const char* warpath_sim_version() { return "warpath cuda-sim 1"; }

// The last diagnostic (why a call failed or a fault became sticky), "" when none, and forgets
// it, so that a later error is not explained by an old message. The pointer stays valid until
// the calling thread's next call.
SIM_EXPORT const char* warpath_sim_take_error() {
    static thread_local std::string copy;
    std::lock_guard<std::mutex> g(g_message_lock);
    copy.swap(g_last_message);
    g_last_message.clear();
    return copy.c_str();
}

// Limits the device memory the calling thread may hold to `bytes` (SIZE_MAX: no limit); see
// thread_room().
SIM_EXPORT void warpath_sim_set_thread_memory_limit(size_t bytes) {
    std::lock_guard<std::mutex> g(g_lock);
    t_memory_limit = bytes;
}

// ---------------------------------------------------------------------------------------------
// The driver API.

#define LOCK std::lock_guard<std::mutex> sim_guard(g_lock)

// The start of a query of the driver: the lock, an initialized driver, and `ok` (the caller's
// out-pointers are usable) or CUDA_ERROR_INVALID_VALUE.
#define SIM_QUERY(ok)                                                                              \
    LOCK;                                                                                          \
    SIM_REQUIRE_INIT();                                                                            \
    if (!(ok)) return CUDA_ERROR_INVALID_VALUE

// SIM_QUERY(ok) in the current context, `ctx` (see SIM_REQUIRE_CONTEXT).
#define SIM_CONTEXT_QUERY(ok)                                                                      \
    LOCK;                                                                                          \
    SIM_REQUIRE_CONTEXT(ctx);                                                                      \
    if (!(ok)) return CUDA_ERROR_INVALID_VALUE

// SIM_QUERY(ok) of device `dev`: the one device is 0, any other is CUDA_ERROR_INVALID_DEVICE.
#define SIM_DEVICE_QUERY(ok, dev)                                                                  \
    SIM_QUERY(ok);                                                                                 \
    if ((dev) != 0) return CUDA_ERROR_INVALID_DEVICE

namespace {
// `handle` as one of the current context's `T`s (`set`), or nullptr when it is not one.
template <class T, class H>
T* find_handle(const std::set<T*>& set, H handle) {
    auto* x = reinterpret_cast<T*>(handle);
    return set.count(x) ? x : nullptr;
}

// Deletes `handle`, one of the current context's streams or events (`set`), or returns
// CUDA_ERROR_INVALID_HANDLE when it is not one.
template <class T, class H>
CUresult destroy_handle(std::set<T*>& set, H handle) {
    auto* x = reinterpret_cast<T*>(handle);
    if (!set.erase(x)) return CUDA_ERROR_INVALID_HANDLE;
    delete x;
    return CUDA_SUCCESS;
}

CUresult copy_htod(Context* ctx, CUdeviceptr dst, const void* src, size_t n) {
    if (n && !src) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_device_range(ctx, dst, n, "cuMemcpyHtoD (destination)")) return r;
    if (n) std::memcpy(reinterpret_cast<void*>(dst), src, n);
    return CUDA_SUCCESS;
}
CUresult copy_dtoh(Context* ctx, void* dst, CUdeviceptr src, size_t n) {
    if (n && !dst) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_device_range(ctx, src, n, "cuMemcpyDtoH (source)")) return r;
    if (n) std::memcpy(dst, reinterpret_cast<const void*>(src), n);
    return CUDA_SUCCESS;
}
CUresult copy_dtod(Context* ctx, CUdeviceptr dst, CUdeviceptr src, size_t n) {
    if (CUresult r = check_device_range(ctx, dst, n, "cuMemcpyDtoD (destination)")) return r;
    if (CUresult r = check_device_range(ctx, src, n, "cuMemcpyDtoD (source)")) return r;
    if (n) std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
    return CUDA_SUCCESS;
}
template <class T>
CUresult fill(Context* ctx, CUdeviceptr dst, T value, size_t count, const char* what) {
    if (dst % sizeof(T) != 0) {
        report("%s: destination %s is not aligned to %zu bytes", what, hex(dst).c_str(), sizeof(T));
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (count > SIZE_MAX / sizeof(T)) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_device_range(ctx, dst, count * sizeof(T), what)) return r;
    T* p = reinterpret_cast<T*>(dst);
    std::fill(p, p + count, value);
    return CUDA_SUCCESS;
}
}  // namespace

namespace {
// Threads per block the kernel can be launched with: .maxntid and the register file.
int max_threads(const Function& f) {
    int m = 1024;
    if (f.ptx.maxntid) m = std::min<int>(m, static_cast<int>(f.ptx.maxntid));
    if (f.ptx.reqntid) m = std::min<int>(m, static_cast<int>(f.ptx.reqntid));
    if (f.resources.registers > 0) {
        const int per_warp = static_cast<int>(round_up(static_cast<size_t>(f.resources.registers) * 32, 256));
        m = std::min(m, REGS_PER_BLOCK / per_warp * 32);
    }
    return m;
}
}  // namespace

extern "C" {

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define NAME(e) case e: *pStr = #e; return CUDA_SUCCESS;
        NAME(CUDA_SUCCESS) NAME(CUDA_ERROR_INVALID_VALUE) NAME(CUDA_ERROR_OUT_OF_MEMORY)
        NAME(CUDA_ERROR_NOT_INITIALIZED) NAME(CUDA_ERROR_DEINITIALIZED) NAME(CUDA_ERROR_NO_DEVICE)
        NAME(CUDA_ERROR_INVALID_DEVICE) NAME(CUDA_ERROR_INVALID_IMAGE) NAME(CUDA_ERROR_INVALID_CONTEXT)
        NAME(CUDA_ERROR_NO_BINARY_FOR_GPU) NAME(CUDA_ERROR_INVALID_PTX) NAME(CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
        NAME(CUDA_ERROR_INVALID_HANDLE) NAME(CUDA_ERROR_NOT_FOUND) NAME(CUDA_ERROR_NOT_READY)
        NAME(CUDA_ERROR_ILLEGAL_ADDRESS) NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) NAME(CUDA_ERROR_LAUNCH_TIMEOUT)
        NAME(CUDA_ERROR_LAUNCH_FAILED) NAME(CUDA_ERROR_NOT_SUPPORTED) NAME(CUDA_ERROR_ILLEGAL_INSTRUCTION)
        NAME(CUDA_ERROR_CONTEXT_IS_DESTROYED) NAME(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
        NAME(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) NAME(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE)
        NAME(CUDA_ERROR_CONTEXT_ALREADY_IN_USE) NAME(CUDA_ERROR_UNKNOWN)
#undef NAME
        default:
            *pStr = nullptr;
            return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const char* name = nullptr;
    if (cuGetErrorName(error, &name) != CUDA_SUCCESS) {
        *pStr = nullptr;
        return CUDA_ERROR_INVALID_VALUE;
    }
    // The runtime's descriptions of the errors the simulator returns; the others get their name.
    static const std::pair<CUresult, const char*> descriptions[] = {
        {CUDA_SUCCESS, "no error"}, {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
        {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"}, {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
        {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
        {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"}, {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
        {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"}, {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
        {CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"},
        {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"},
        {CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"},
        {CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"},
    };
    *pStr = name;
    for (const auto& [code, text] : descriptions) {
        if (code == error) *pStr = text;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int* driverVersion) {
    if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = config().driver_version;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int Flags) {
    LOCK;
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (!config().enabled) {
        report("this is warpath's simulated CUDA driver (%s); set WARPATH_SIM=1 to use it", DEVICE_NAME);
        return CUDA_ERROR_NO_DEVICE;
    }
    install_signal_handlers();
    g_initialized = true;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
    SIM_QUERY(count);
    *count = 1;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
    SIM_DEVICE_QUERY(device, ordinal);
    *device = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
    SIM_DEVICE_QUERY(name && len > 0, dev);
    std::snprintf(name, static_cast<size_t>(len), "%s", DEVICE_NAME);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
    SIM_DEVICE_QUERY(uuid, dev);
    std::memcpy(uuid->bytes, "warpath-cudasim!", 16);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
    SIM_DEVICE_QUERY(bytes, dev);
    *bytes = config().memory;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
    SIM_DEVICE_QUERY(pi, dev);
    const Config& c = config();
    int v;
    switch (attrib) {
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 2147483647; break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: v = 65535; break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = static_cast<int>(SMEM_DEFAULT); break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = static_cast<int>(SMEM_OPTIN); break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: v = 228 * 1024; break;
        case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: v = 65536; break;
        case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
        case CU_DEVICE_ATTRIBUTE_MAX_PITCH: v = 2147483647; break;
        case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: v = REGS_PER_BLOCK; break;
        case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: v = REGS_PER_BLOCK; break;
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = 1755000; break;
        case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: v = 2619000; break;
        case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: v = 5120; break;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: v = 50 * 1024 * 1024; break;
        case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: v = 512; break;
        case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = c.multiprocessors; break;
        case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_INTEGRATED: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: v = CU_COMPUTEMODE_DEFAULT; break;
        case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: v = 2; break;
        case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = 2048; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = DEVICE_SM / 10; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = DEVICE_SM % 10; break;
        case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: v = 2; break;
        case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: v = 32; break;
        case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: v = 1; break;
        case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: v = 0; break;
        case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: v = 0; break;
        default:
            report("cuDeviceGetAttribute: attribute %d is not simulated", static_cast<int>(attrib));
            return CUDA_ERROR_INVALID_VALUE;
    }
    *pi = v;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    SIM_DEVICE_QUERY(pctx, dev);
    ++g_primary.retains;
    *pctx = as_handle(&g_primary);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
    LOCK;
    SIM_REQUIRE_INIT();
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    if (g_primary.retains <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (--g_primary.retains == 0) reset_context(&g_primary);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) {
    LOCK;
    SIM_REQUIRE_INIT();
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    reset_context(&g_primary);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
    SIM_DEVICE_QUERY(flags && active, dev);
    *flags = g_primary.flags;
    *active = g_primary.retains > 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
    LOCK;
    SIM_REQUIRE_INIT();
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    g_primary.flags = flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
    LOCK;
    SIM_REQUIRE_INIT();
    if (ctx != nullptr && ctx != as_handle(&g_primary)) return CUDA_ERROR_INVALID_CONTEXT;
    if (t_stack.empty()) t_stack.push_back(ctx);
    else t_stack.back() = ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) {
    SIM_QUERY(pctx);
    *pctx = t_stack.empty() ? nullptr : t_stack.back();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
    LOCK;
    SIM_REQUIRE_INIT();
    if (ctx != as_handle(&g_primary)) return CUDA_ERROR_INVALID_CONTEXT;
    t_stack.push_back(ctx);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext* pctx) {
    LOCK;
    SIM_REQUIRE_INIT();
    if (t_stack.empty() || t_stack.back() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx) *pctx = t_stack.back();
    t_stack.pop_back();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
    SIM_CONTEXT_QUERY(device);
    *device = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int* flags) {
    SIM_CONTEXT_QUERY(flags);
    *flags = ctx->flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext c, unsigned int* version) {
    LOCK;
    SIM_REQUIRE_INIT();
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    if (c != nullptr && c != as_handle(&g_primary)) return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    (void)value;
    if (static_cast<int>(limit) < 0 || limit >= CU_LIMIT_MAX) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetLimit(size_t* pvalue, CUlimit limit) {
    SIM_CONTEXT_QUERY(pvalue);
    switch (limit) {
        case CU_LIMIT_STACK_SIZE: *pvalue = 1024; break;
        case CU_LIMIT_PRINTF_FIFO_SIZE: *pvalue = 1 << 20; break;
        case CU_LIMIT_MALLOC_HEAP_SIZE: *pvalue = 8 << 20; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxResetPersistingL2Cache(void) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetInfo(size_t* free, size_t* total) {
    SIM_CONTEXT_QUERY(free && total);
    *total = config().memory;
    *free = std::min(config().memory - ctx->used, thread_room());
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* dptr, size_t bytesize) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    return allocate(ctx, dptr, bytesize);
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    if (!valid_stream(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    return allocate(ctx, dptr, bytesize);
}

CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    return free_allocation(ctx, dptr);
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    if (!valid_stream(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    return free_allocation(ctx, dptr);
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    auto it = ctx->allocations.upper_bound(static_cast<uintptr_t>(dptr));
    if (it == ctx->allocations.begin()) return CUDA_ERROR_NOT_FOUND;
    --it;
    const Allocation& a = it->second;
    if (dptr < a.start || dptr >= a.start + a.size) return CUDA_ERROR_NOT_FOUND;
    if (pbase) *pbase = a.start;
    if (psize) *psize = a.size;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    SIM_CONTEXT_QUERY(data);
    if (!find_range(ctx, static_cast<uintptr_t>(ptr), 1)) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
        case CU_POINTER_ATTRIBUTE_CONTEXT: *static_cast<CUcontext*>(data) = as_handle(ctx); break;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *static_cast<unsigned*>(data) = CU_MEMORYTYPE_DEVICE; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *static_cast<CUdeviceptr*>(data) = ptr; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *static_cast<int*>(data) = 0; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost(void** pp, size_t bytesize) {
    SIM_CONTEXT_QUERY(pp && bytesize != 0);
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytesize) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    ctx->host_allocations[p] = bytesize;
    *pp = p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
    (void)Flags;
    return cuMemAllocHost(pp, bytesize);
}

CUresult CUDAAPI cuMemFreeHost(void* p) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    auto it = ctx->host_allocations.find(p);
    if (it == ctx->host_allocations.end()) {
        report("cuMemFreeHost(%p): not a pinned host allocation", p);
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::free(p);
    ctx->host_allocations.erase(it);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    (void)Flags;
    if (!p || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    if (ctx->host_registered.count(p)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    ctx->host_registered[p] = bytesize;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostUnregister(void* p) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    if (!ctx->host_registered.erase(p)) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    return CUDA_SUCCESS;
}


// A copy or fill and its stream-ordered twin `name##Async` (which checks the stream first): both
// do it at once and return `result`, computed with `ctx` the current context and `what` the
// call's name; the parameters follow, the twin's then end with the stream.
#define SIM_SYNC_AND_ASYNC(name, result, ...)                                                      \
    CUresult CUDAAPI name(__VA_ARGS__) {                                                           \
        LOCK;                                                                                      \
        SIM_REQUIRE_CONTEXT(ctx);                                                                  \
        [[maybe_unused]] const char* what = #name;                                                 \
        return result;                                                                             \
    }                                                                                              \
    CUresult CUDAAPI name##Async(__VA_ARGS__, CUstream hStream) {                                  \
        LOCK;                                                                                      \
        SIM_REQUIRE_CONTEXT(ctx);                                                                  \
        if (!valid_stream(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;                         \
        [[maybe_unused]] const char* what = #name "Async";                                         \
        return result;                                                                             \
    }

SIM_SYNC_AND_ASYNC(cuMemcpyHtoD, copy_htod(ctx, dst, src, bytes), CUdeviceptr dst, const void* src, size_t bytes)
SIM_SYNC_AND_ASYNC(cuMemcpyDtoH, copy_dtoh(ctx, dst, src, bytes), void* dst, CUdeviceptr src, size_t bytes)
SIM_SYNC_AND_ASYNC(cuMemcpyDtoD, copy_dtod(ctx, dst, src, bytes), CUdeviceptr dst, CUdeviceptr src, size_t bytes)
SIM_SYNC_AND_ASYNC(cuMemcpy, copy_dtod(ctx, dst, src, bytes), CUdeviceptr dst, CUdeviceptr src, size_t bytes)
SIM_SYNC_AND_ASYNC(cuMemsetD8, fill<unsigned char>(ctx, dst, v, n, what), CUdeviceptr dst, unsigned char v, size_t n)
SIM_SYNC_AND_ASYNC(cuMemsetD16, fill<unsigned short>(ctx, dst, v, n, what), CUdeviceptr dst, unsigned short v, size_t n)
SIM_SYNC_AND_ASYNC(cuMemsetD32, fill<unsigned int>(ctx, dst, v, n, what), CUdeviceptr dst, unsigned int v, size_t n)
#undef SIM_SYNC_AND_ASYNC

CUresult CUDAAPI cuStreamCreate(CUstream* phStream, unsigned int Flags) {
    SIM_CONTEXT_QUERY(phStream);
    if (Flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
    auto* s = new Stream{Flags, 0};
    ctx->streams.insert(s);
    *phStream = reinterpret_cast<CUstream>(s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
    CUresult r = cuStreamCreate(phStream, flags);
    if (r == CUDA_SUCCESS) reinterpret_cast<Stream*>(*phStream)->priority = priority;
    return r;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    return destroy_handle(ctx->streams, hStream);
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    if (!valid_stream(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    if (!valid_stream(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext* pctx) {
    SIM_CONTEXT_QUERY(pctx);
    if (!valid_stream(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    *pctx = as_handle(ctx);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent* phEvent, unsigned int Flags) {
    SIM_CONTEXT_QUERY(phEvent);
    const unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (Flags & ~known) return CUDA_ERROR_INVALID_VALUE;
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
    auto* e = new Event{Flags, false, 0};
    ctx->events.insert(e);
    *phEvent = reinterpret_cast<CUevent>(e);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    return destroy_handle(ctx->events, hEvent);
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    auto* e = reinterpret_cast<Event*>(hEvent);
    if (!ctx->events.count(e) || !valid_stream(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    e->recorded = true;
    e->time_ms = now_ms();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
    (void)flags;
    return cuEventRecord(hEvent, hStream);
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    if (!ctx->events.count(reinterpret_cast<Event*>(hEvent))) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    if (!ctx->events.count(reinterpret_cast<Event*>(hEvent))) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
    SIM_CONTEXT_QUERY(pMilliseconds);
    Event* a = find_handle(ctx->events, hStart);
    Event* b = find_handle(ctx->events, hEnd);
    if (!a || !b) return CUDA_ERROR_INVALID_HANDLE;
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) {
        report("cuEventElapsedTime: an event was created with CU_EVENT_DISABLE_TIMING; the driver returns "
               "CUDA_ERROR_INVALID_HANDLE");
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!a->recorded || !b->recorded) {
        report("cuEventElapsedTime: an event was never recorded; the driver returns CUDA_ERROR_INVALID_HANDLE");
        return CUDA_ERROR_INVALID_HANDLE;
    }
    *pMilliseconds = static_cast<float>(b->time_ms - a->time_ms);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
    SIM_CONTEXT_QUERY(module && image);
    const auto* bytes = static_cast<const unsigned char*>(image);
    if (std::memcmp(bytes, "\x7f" "ELF", 4) == 0 || (bytes[0] == 0x50 && bytes[1] == 0xED && bytes[2] == 0x55 && bytes[3] == 0xBA)) {
        report("cuModuleLoadData: a cubin/fatbin image; the simulator loads PTX only");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    const PtxModuleInfo info = parse_ptx(static_cast<const char*>(image));
    if (!info.error.empty()) {
        report("cuModuleLoadData: %s", info.error.c_str());
        return CUDA_ERROR_INVALID_IMAGE;
    }
    if (info.isa > PTX_ISA_MAX) {
        report("cuModuleLoadData: PTX ISA %d.%d is newer than this driver's %d.%d", info.isa / 10, info.isa % 10,
               PTX_ISA_MAX / 10, PTX_ISA_MAX % 10);
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    }
    if (info.target > DEVICE_SM) {
        report("cuModuleLoadData: PTX for sm_%d cannot run on this sm_%d device", info.target, DEVICE_SM);
        return CUDA_ERROR_INVALID_PTX;
    }
    const Registry& reg = registry();
    if (!info.module.empty()) {
        auto it = reg.modules.find(info.module);
        if (it == reg.modules.end()) {
            report("cuModuleLoadData: module `%s` was not compiled into the simulator; run `cargo xtask sim`",
                   info.module.c_str());
            return CUDA_ERROR_INVALID_IMAGE;
        }
        if (it->second != info.header) {
            report("cuModuleLoadData: the PTX of module `%s` is not the one the simulator was built from "
                   "(stale simulator or PTX); run `cargo xtask kernels` and `cargo xtask sim`",
                   info.module.c_str());
            return CUDA_ERROR_INVALID_IMAGE;
        }
    }
    auto m = std::make_unique<Module>();
    m->name = info.module.empty() ? "(foreign PTX)" : info.module;
    for (const auto& e : info.entries) {
        auto f = std::make_unique<Function>();
        f->module = m.get();
        f->ptx = e;
        auto k = reg.kernels.find(e.name);
        if (k != reg.kernels.end()) {
            f->entry = k->second;
            bool same = k->second->nparams == e.param_sizes.size();
            for (size_t i = 0; same && i < e.param_sizes.size(); ++i)
                same = k->second->params[i].size == e.param_sizes[i];
            if (!same) {
                report("cuModuleLoadData: the C++ signature of `%s` does not match its PTX parameters; "
                       "run `cargo xtask kernels` and `cargo xtask sim`",
                       e.name.c_str());
                return CUDA_ERROR_INVALID_PTX;
            }
        }
        auto r = reg.resources.find(e.name);
        if (r != reg.resources.end()) {
            f->resources = r->second;
            // ptxas knows better: it may reserve shared memory the PTX does not declare (e.g.
            // for emulated 64-bit shared atomics).
            if (r->second.static_smem >= 0)
                f->ptx.static_smem = std::max(f->ptx.static_smem, static_cast<size_t>(r->second.static_smem));
        }
        ctx->functions.insert(f.get());
        m->functions.emplace(e.name, std::move(f));
    }
    Module* raw = m.release();
    ctx->modules.insert(raw);
    *module = reinterpret_cast<CUmodule>(raw);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                                    CUjit_option* options, void** optionValues) {
    (void)numOptions;
    (void)options;
    (void)optionValues;
    return cuModuleLoadData(module, image);
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    auto* m = reinterpret_cast<Module*>(hmod);
    if (!ctx->modules.erase(m)) return CUDA_ERROR_INVALID_HANDLE;
    for (auto& [n, f] : m->functions) ctx->functions.erase(f.get());
    delete m;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
    SIM_CONTEXT_QUERY(hfunc && name);
    auto* m = reinterpret_cast<Module*>(hmod);
    if (!ctx->modules.count(m)) return CUDA_ERROR_INVALID_HANDLE;
    auto it = m->functions.find(name);
    if (it == m->functions.end()) return CUDA_ERROR_NOT_FOUND;
    *hfunc = reinterpret_cast<CUfunction>(it->second.get());
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetName(const char** name, CUfunction hfunc) {
    SIM_CONTEXT_QUERY(name);
    Function* f = find_handle(ctx->functions, hfunc);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    *name = f->ptx.name.c_str();
    return CUDA_SUCCESS;
}


CUresult CUDAAPI cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
    SIM_CONTEXT_QUERY(pi);
    Function* f = find_handle(ctx->functions, hfunc);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
        case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = max_threads(*f); break;
        case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = static_cast<int>(f->ptx.static_smem); break;
        case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; break;
        case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = 0; break;
        case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = std::max(f->resources.registers, 0); break;
        case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = PTX_ISA_MAX; break;
        case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = DEVICE_SM; break;
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
            *pi = static_cast<int>(f->max_dynamic_smem ? f->max_dynamic_smem : SMEM_DEFAULT - f->ptx.static_smem);
            break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    Function* f = find_handle(ctx->functions, hfunc);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
            if (value < 0 || static_cast<size_t>(value) + f->ptx.static_smem > SMEM_OPTIN) {
                report("cuFuncSetAttribute: %d bytes of dynamic shared memory plus %zu static exceed the %zu-byte limit",
                       value, f->ptx.static_smem, SMEM_OPTIN);
                return CUDA_ERROR_INVALID_VALUE;
            }
            f->max_dynamic_smem = static_cast<size_t>(value);
            return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
            return value >= -1 && value <= 100 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    (void)config;
    if (!ctx->functions.count(reinterpret_cast<Function*>(hfunc))) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                             size_t dynamicSMemSize) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    auto* f = reinterpret_cast<Function*>(func);
    if (!numBlocks || blockSize <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!ctx->functions.count(f)) return CUDA_ERROR_INVALID_HANDLE;
    if (blockSize > max_threads(*f)) {
        *numBlocks = 0;
        return CUDA_SUCCESS;
    }
    int blocks = std::min(32, 2048 / blockSize);
    const size_t smem = f->ptx.static_smem + dynamicSMemSize;
    if (smem) blocks = std::min<int>(blocks, static_cast<int>((228 * 1024) / (smem + 1024)));
    if (f->resources.registers > 0) {
        const int per_block = static_cast<int>(round_up(static_cast<size_t>(f->resources.registers) * 32, 256)) *
                              ((blockSize + 31) / 32);
        blocks = std::min(blocks, REGS_PER_BLOCK / per_block);
    }
    *numBlocks = std::max(blocks, 0);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
    LOCK;
    SIM_REQUIRE_CONTEXT(ctx);
    auto* fn = reinterpret_cast<Function*>(f);
    if (!ctx->functions.count(fn)) return CUDA_ERROR_INVALID_HANDLE;
    if (!valid_stream(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const std::string label = launch_label(*fn, gridDimX, blockDimX, sharedMemBytes);
    if (gridDimX == 0 || gridDimY == 0 || gridDimZ == 0 || gridDimY > 65535 || gridDimZ > 65535 ||
        gridDimX > 2147483647u) {
        report("%s: grid (%u, %u, %u) is outside the device's limits", label.c_str(), gridDimX, gridDimY, gridDimZ);
        return CUDA_ERROR_INVALID_VALUE;
    }
    const unsigned long long threads =
        static_cast<unsigned long long>(blockDimX) * blockDimY * blockDimZ;
    if (blockDimX == 0 || blockDimY == 0 || blockDimZ == 0 || blockDimX > 1024 || blockDimY > 1024 ||
        blockDimZ > 64 || threads > 1024) {
        report("%s: block (%u, %u, %u) is outside the device's limits (1024 threads)", label.c_str(), blockDimX,
               blockDimY, blockDimZ);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (fn->ptx.maxntid && threads > fn->ptx.maxntid) {
        report("%s: %llu threads per block exceed the kernel's .maxntid %u (__launch_bounds__)", label.c_str(),
               threads, fn->ptx.maxntid);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (fn->ptx.reqntid && threads != fn->ptx.reqntid) {
        report("%s: the kernel requires exactly %u threads per block (.reqntid)", label.c_str(), fn->ptx.reqntid);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (fn->resources.registers > 0 && static_cast<int>(threads) > max_threads(*fn)) {
        report("%s: %llu threads x %d registers exceed the %d registers of a block", label.c_str(), threads,
               fn->resources.registers, REGS_PER_BLOCK);
        return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    }
    const size_t dyn_limit = fn->max_dynamic_smem ? fn->max_dynamic_smem
                                                  : (SMEM_DEFAULT > fn->ptx.static_smem ? SMEM_DEFAULT - fn->ptx.static_smem : 0);
    if (sharedMemBytes > dyn_limit) {
        report("%s: %u bytes of dynamic shared memory plus %zu static exceed the limit of %zu (raise it with "
               "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), up to %zu)",
               label.c_str(), sharedMemBytes, fn->ptx.static_smem, dyn_limit + fn->ptx.static_smem, SMEM_OPTIN);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (extra != nullptr) {
        report("%s: the `extra` parameter buffer is not simulated; pass kernelParams", label.c_str());
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (!fn->entry) {
        report("%s: no simulated kernel of that name (foreign PTX, or a stale simulator: run `cargo xtask sim`)",
               label.c_str());
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (gridDimY != 1 || gridDimZ != 1 || blockDimY != 1 || blockDimZ != 1) {
        report("%s: the simulator runs 1-D grids and blocks only", label.c_str());
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (fn->entry->nparams > 0 && kernelParams == nullptr) {
        report("%s: kernelParams is null but the kernel takes %zu parameters", label.c_str(), fn->entry->nparams);
        return CUDA_ERROR_INVALID_VALUE;
    }
    return run_kernel(ctx, *fn, gridDimX, blockDimX, sharedMemBytes, kernelParams);
}

}  // extern "C"
