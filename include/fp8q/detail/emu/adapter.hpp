// fp8q — the emulator adapter: a test-only toolchain that compiles the GPU code as host C++ and
// runs each launch on the CPU, so the kernels' logic (index maps, group offsets, padding, the
// held-tile pipeline, wave reductions at 32 or 64 lanes) is checked byte for byte where no GPU
// exists. Selected by defining FP8Q_EMULATED_GPU to the wave size (32 or 64) before any fp8q
// header; never part of a CUDA or HIP build. It proves logic, not the device: timing, memory
// ordering of real hardware, the converters and the compilers' device code are not emulated
// (docs/design.md, "The emulator").
//
// Model: a block's threads are fibers on one OS thread, switched only where a thread waits (a
// block barrier, a wave operation, a spin on device memory), so a block runs deterministically
// and code that relies on lock-step execution without a barrier shows up as a wrong byte. The
// blocks a device holds at once run on their own OS threads (a persistent grid's blocks wait on
// each other); `__shared__` is thread_local, one copy per block. Device memory is host memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "fp8q/arch.hpp"
#include "fp8q/detail/emu/runtime.hpp"
#include "fp8q/detail/gpu/u32x4.hpp"
#include "fp8q/format.hpp"
#include "fp8q/status.hpp"
#include "fp8q/tuning.hpp"

namespace fp8q {

/// The stream type of this toolchain (the emulator's; tests/emu's cuda_runtime.h names it
/// cudaStream_t).
using gpu_stream = emu::stream*;

namespace backend {

inline constexpr const char* name = "emulator";
inline constexpr int host_wave_size = emu::wave;

inline status last_launch_status() { return status::success; }

inline status memset_async(void* p, int value, std::size_t bytes, gpu_stream stream) {
  emu::enqueue(stream, [=] { std::memset(p, value, bytes); });
  return status::success;
}

struct device_facts {
  int device = 0;
  int multiprocessors = emu::multiprocessors;
  int wave_size = emu::wave;
  int major = 0;  // no NVIDIA architecture (what sm_90 alone offers is not emulated)
  int shared_optin = emu::shared_optin;
  int cooperative = 1;
  arch_traits traits() const { return {wave_size, 48 * 1024}; }
};

inline status current_device(const device_facts** facts) {
  static const device_facts one{};
  *facts = &one;
  return status::success;
}

namespace emu_detail {
template <auto Kernel, class... A>
void run(dim3 grid, int threads, int resident, gpu_stream stream, const A&... args) {
  emu::enqueue(stream, [=] {
    emu::run_grid(grid, threads, resident, [&] { Kernel(args...); });
  });
}
}  // namespace emu_detail

template <auto Kernel, class... A>
status launch(const device_facts& dev, bool /*dependent*/, dim3 grid, int threads, gpu_stream stream,
              const A&... args) {
  emu_detail::run<Kernel>(grid, threads, emu::blocks_per_mp(threads, 0) * dev.multiprocessors, stream, args...);
  return status::success;
}

inline int max_dynamic_shared(const device_facts& dev) { return dev.shared_optin; }

/// Room for the largest dynamic shared memory a block may take (one copy per OS thread).
inline constexpr std::size_t dynamic_shared_capacity = 232448;

template <auto Kernel, class... A>
status launch_shared(const device_facts& dev, dim3 grid, int threads, int smem, gpu_stream stream,
                     const A&... args) {
  if (smem < 0 || smem > dev.shared_optin || static_cast<std::size_t>(smem) > dynamic_shared_capacity)
    return status::device_error;
  emu_detail::run<Kernel>(grid, threads, emu::blocks_per_mp(threads, static_cast<std::size_t>(smem)) * dev.multiprocessors,
                          stream, args...);
  return status::success;
}

inline void wait_prior_grid() {}

template <memory_order O>
constexpr std::memory_order to_std_order() {
  return O == memory_order::relaxed ? std::memory_order_relaxed
         : O == memory_order::acq_rel ? std::memory_order_acq_rel
                                      : std::memory_order_seq_cst;
}

inline void atomic_or(unsigned* p, unsigned bits) { std::atomic_ref<unsigned>(*p).fetch_or(bits, std::memory_order_relaxed); }

template <memory_order O, memory_scope S>
inline void atomic_max_bits(unsigned* p, unsigned v) {
  std::atomic_ref<unsigned> ref(*p);
  unsigned cur = ref.load(std::memory_order_relaxed);
  while (cur < v && !ref.compare_exchange_weak(cur, v, to_std_order<O>(), std::memory_order_relaxed)) {
  }
}

inline unsigned take_ticket(unsigned* counter) {
  return std::atomic_ref<unsigned>(*counter).fetch_add(1u, std::memory_order_relaxed);
}
inline void count_release(unsigned* counter) {
  std::atomic_ref<unsigned>(*counter).fetch_add(1u, std::memory_order_release);
}
inline unsigned count_acquire(unsigned* counter) {
  return std::atomic_ref<unsigned>(*counter).load(std::memory_order_acquire);
}
inline unsigned count_acq_rel(unsigned* counter) {
  return std::atomic_ref<unsigned>(*counter).fetch_add(1u, std::memory_order_acq_rel);
}
inline void store_relaxed(unsigned* p, unsigned v) { std::atomic_ref<unsigned>(*p).store(v, std::memory_order_relaxed); }
inline void store_release(unsigned* p, unsigned v) { std::atomic_ref<unsigned>(*p).store(v, std::memory_order_release); }
inline unsigned load_relaxed(unsigned* p) { return std::atomic_ref<unsigned>(*p).load(std::memory_order_relaxed); }

/// A thread polling device memory lets the block's other threads, and then other blocks, run.
inline void spin_pause() {
  emu::tl_fiber->spinning = true;
  emu::yield();
}

inline unsigned byte_perm(unsigned x, unsigned y, unsigned s) {
  const std::uint64_t v = (std::uint64_t{y} << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return r;
}

inline void block_sync() { emu::block_barrier(); }
inline bool block_all(bool p) {
  emu::block_state& b = *emu::tl_block;
  const unsigned g = b.gen;
  b.all &= p ? 1 : 0;
  emu::block_barrier();
  return b.all_result[g & 1u] != 0;
}

/// Block-wide max (valid in thread 0), as CUB's BlockReduce: the storage may be reused after a
/// block_sync.
template <int Threads>
struct block_max {
  struct storage {
    unsigned v[Threads];
  };
  static unsigned run(unsigned v, storage& s) {
    const int t = emu::thread_rank();
    s.v[t] = v;
    block_sync();
    unsigned m = 0;
    if (t == 0)
      for (int i = 0; i < Threads; ++i) m = s.v[i] > m ? s.v[i] : m;
    return m;
  }
};

constexpr int wave_size() { return emu::wave; }

template <int Stride>
inline unsigned lanes_max(unsigned v) {
  return static_cast<unsigned>(emu::wave_exchange(v, [](const long long* s, int lane) {
    unsigned m = 0;
    for (int l = lane % Stride; l < emu::wave; l += Stride) m = static_cast<unsigned>(s[l]) > m ? static_cast<unsigned>(s[l]) : m;
    return static_cast<long long>(m);
  }));
}
inline unsigned wave_max(unsigned v) { return lanes_max<1>(v); }

inline long long wave_shfl_up(long long v, int delta) {
  return emu::wave_exchange(v, [delta](const long long* s, int lane) { return lane >= delta ? s[lane - delta] : s[lane]; });
}
inline long long wave_shfl_xor(long long v, int mask) {
  return emu::wave_exchange(v, [mask](const long long* s, int lane) { return s[(lane ^ mask) % emu::wave]; });
}
inline long long wave_shfl(long long v, int src) {
  return emu::wave_exchange(v, [src](const long long* s, int) { return s[((src % emu::wave) + emu::wave) % emu::wave]; });
}
inline unsigned lanes_up(unsigned v, int delta) {
  return static_cast<unsigned>(wave_shfl_up(static_cast<long long>(v), delta));
}

/// The copy lands at once (so a thread that reads it before its wait still gets it: the
/// emulator cannot see a missing wait).
inline void async_copy16(void* dst, const void* src, int src_bytes) {
  unsigned char t[16] = {};
  std::memcpy(t, src, static_cast<std::size_t>(src_bytes));
  std::memcpy(dst, t, 16);
}
inline constexpr bool launch_bounds_counts_blocks = true;
inline constexpr bool async_copy_overlaps = true;
inline void async_commit() {}
template <int Pending>
inline void async_wait() {}

inline void shared_max(unsigned* p, unsigned v) { *p = *p > v ? *p : v; }
inline void shared_or(unsigned* p, unsigned v) { *p |= v; }

template <auto Kernel>
status resident_blocks(const device_facts&, int threads, int* blocks) {
  *blocks = emu::blocks_per_mp(threads, 0);
  return status::success;
}

/// No clusters: the cluster family never accepts a call.
struct cluster_api {
  static constexpr int max_size = 16;
  static int rank() { return 0; }
  static void arrive() { emu::fail("cluster_api::arrive"); }
  static void wait() { emu::fail("cluster_api::wait"); }
  template <class T>
  static T* peer(T* p, int) {
    emu::fail("cluster_api::peer");
    return p;
  }
  static int shared_bytes(const device_facts&) { return 0; }
  template <class... P>
  static status fit(void (*)(P...), int, int, std::size_t, int* clusters) {
    *clusters = 0;
    return status::success;
  }
  template <class... P, class... A>
  static status launch(void (*)(P...), unsigned, int, int, std::size_t, gpu_stream, A...) {
    return status::device_error;
  }
};

/// Cooperative launches: every block resident at once (the grid runs on as many OS threads).
struct cooperative_api {
  template <class... P>
  static status shared_bytes(const device_facts& dev, void (*)(P...), int* bytes) {
    *bytes = dev.shared_optin - 48 * 1024;
    return status::success;
  }
  template <class... P>
  static status resident_blocks(const device_facts& dev, void (*)(P...), int threads, int smem, int* blocks) {
    *blocks = emu::blocks_per_mp(threads, static_cast<std::size_t>(smem)) * dev.multiprocessors;
    return status::success;
  }
  template <class... P>
  static status launch(void (*kernel)(P...), dim3 grid, int threads, int, gpu_stream stream,
                       std::type_identity_t<P>... args) {
    const int all = static_cast<int>(grid.x * grid.y * grid.z);
    emu::enqueue(stream, [=] { emu::run_grid(grid, threads, all, [&] { kernel(args...); }); });
    return status::success;
  }
};

inline constexpr bool has_clusters = false;

/// No hardware converters: every path encodes in software, the definition of every byte.
template <format F>
inline constexpr bool has_hw_convert = false;
inline constexpr bool hw_convert_by_default = false;
template <format F>
inline unsigned short hw_encode_pair_sat(float, float) {
  emu::fail("hw_encode_pair_sat");
  return 0;
}
template <format F>
inline std::uint32_t hw_encode_word_sat(float, float, float, float) {
  emu::fail("hw_encode_word_sat");
  return 0;
}
template <format F>
inline constexpr bool has_hw_fnuz_word = false;
template <format F>
inline std::uint32_t hw_fnuz_word_sat(const float (&)[4]) {
  emu::fail("hw_fnuz_word_sat");
  return 0;
}

}  // namespace backend

inline status device_count(int* count) {
  if (count == nullptr) return status::null_pointer;
  *count = 1;
  return status::success;
}

inline status query_device(int device, device_info* info) {
  if (info == nullptr) return status::null_pointer;
  if (device != 0) return status::no_device;
  *info = device_info{};
  info->index = 0;
  std::snprintf(info->name, sizeof(info->name), "fp8q emulator (%d-lane waves)", emu::wave);
  std::snprintf(info->arch_name, sizeof(info->arch_name), "emulated");
  info->multiprocessors = emu::multiprocessors;
  info->l2_bytes = 0;
  info->shared_bytes_per_block = emu::shared_optin;
  info->global_bytes = 0;
  return status::success;
}

}  // namespace fp8q

namespace fp8q::detail::gpu {

// Dynamic shared memory, what the kernels' block-scope `extern __shared__ u32x4 dyn[]` names
// (thread_local here, as every `__shared__`): one copy per OS thread, which runs one block at a
// time.
inline thread_local u32x4 dyn[backend::dynamic_shared_capacity / sizeof(u32x4)];

}  // namespace fp8q::detail::gpu
