// fp8q — the HIP adapter: the only file that names the HIP runtime or rocPRIM.
// Everything above it (dispatch, tile skeleton, kernels) is toolchain-neutral.
#pragma once

#include <hip/hip_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <type_traits>
#include <rocprim/block/block_reduce.hpp>
#include <rocprim/functional.hpp>

#include "fp8q/arch.hpp"
#include "fp8q/detail/device_cache.hpp"
#include "fp8q/format.hpp"
#include "fp8q/status.hpp"
#include "fp8q/tuning.hpp"

namespace fp8q {

/// The stream type of this toolchain (hipStream_t).
using gpu_stream = hipStream_t;

namespace backend {

inline constexpr const char* name = "hip";

/// Host code cannot know the wave size at compile time (one binary, gfx9 wave64 and gfx1x
/// wave32): dispatch reads it per device and picks the matching instantiation.
inline constexpr int host_wave_size = 0;

inline status to_status(hipError_t e) {
  return e == hipSuccess ? status::success : status::device_error;
}

inline status last_launch_status() { return to_status(hipGetLastError()); }

inline status memset_async(void* p, int value, std::size_t bytes, gpu_stream stream) {
  return to_status(hipMemsetAsync(p, value, bytes, stream));
}

/// What dispatch reads about a device on every call, queried once per device and kept: a call
/// then costs one hipGetDevice and no attribute query.
struct device_facts {
  int device = 0;
  int multiprocessors = 0;
  int wave_size = 64;
  int shared_bytes = 0;  ///< LDS per workgroup, bytes
  int cooperative = 0;   ///< cooperative launches supported
  arch_traits traits() const { return {wave_size, 64 * 1024}; }  // LDS per workgroup on CDNA and RDNA
};

/// The facts of the current device (*facts stays valid for the process's lifetime).
inline status current_device(const device_facts** facts) {
  int dev = 0;
  if (hipGetDevice(&dev) != hipSuccess) return status::no_device;
  return detail::device_cache<device_facts>::get(dev, facts, [](int d, device_facts& f) {
    f.device = d;
    if (hipDeviceGetAttribute(&f.multiprocessors, hipDeviceAttributeMultiprocessorCount, d) != hipSuccess ||
        hipDeviceGetAttribute(&f.wave_size, hipDeviceAttributeWarpSize, d) != hipSuccess ||
        hipDeviceGetAttribute(&f.shared_bytes, hipDeviceAttributeMaxSharedMemoryPerBlock, d) != hipSuccess ||
        hipDeviceGetAttribute(&f.cooperative, hipDeviceAttributeCooperativeLaunch, d) != hipSuccess)
      return status::device_error;
    return status::success;
  });
}

/// Launch Kernel on `stream`: an ordinary launch, dependent or not. HIP has no programmatic
/// dependent launch (the CUDA adapter's launch lets a dependent kernel start while the previous
/// one drains).
template <auto Kernel, class... A>
status launch(const device_facts& /*dev*/, bool /*dependent*/, dim3 grid, int threads,
              gpu_stream stream, const A&... args) {
  Kernel<<<grid, threads, 0, stream>>>(args...);
  return last_launch_status();
}

/// Dynamic LDS a workgroup may take on `dev`.
inline int max_dynamic_shared(const device_facts& dev) { return dev.shared_bytes; }

/// Launch Kernel on `stream` with `smem` bytes of dynamic LDS (an ordinary launch; HIP needs no
/// attribute for any LDS size the device has).
template <auto Kernel, class... A>
status launch_shared(const device_facts& /*dev*/, dim3 grid, int threads, int smem, gpu_stream stream,
                     const A&... args) {
  Kernel<<<grid, threads, static_cast<std::size_t>(smem), stream>>>(args...);
  return last_launch_status();
}

/// Nothing to wait for: every launch on HIP is ordinary (see launch).
__device__ inline void wait_prior_grid() {}

template <memory_order O>
__device__ constexpr int to_hip_order() {
  return O == memory_order::relaxed   ? __ATOMIC_RELAXED
         : O == memory_order::acq_rel ? __ATOMIC_ACQ_REL
                                      : __ATOMIC_SEQ_CST;
}

/// Relaxed agent-scope OR into a flag word (the grouped families' offsets error word).
__device__ inline void atomic_or(unsigned* p, unsigned bits) {
  (void)__hip_atomic_fetch_or(p, bits, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

/// atomic max on f32 bit patterns of non-negative values, with explicit order and scope
/// (agent = the whole GPU). Relaxed needs no cache write-back/invalidate around it.
template <memory_order O, memory_scope S>
__device__ inline void atomic_max_bits(unsigned* p, unsigned v) {
  constexpr int scope = S == memory_scope::system ? __HIP_MEMORY_SCOPE_SYSTEM : __HIP_MEMORY_SCOPE_AGENT;
  (void)__hip_atomic_fetch_max(p, v, to_hip_order<O>(), scope);
}

/// The next ticket of a device-wide counter (relaxed: only the tickets' order matters).
__device__ inline unsigned take_ticket(unsigned* counter) {
  return __hip_atomic_fetch_add(counter, 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

/// Count one finished piece of work, with release at agent scope: the calling block's writes
/// before its last block_sync() are visible to whoever acquires a count that includes this one.
__device__ inline void count_release(unsigned* counter) {
  (void)__hip_atomic_fetch_add(counter, 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
}

/// Read a counter with acquire at agent scope (pairs with count_release).
__device__ inline unsigned count_acquire(unsigned* counter) {
  return __hip_atomic_load(counter, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
}

/// Count one arrival with acq_rel at agent scope and return the count before it: the caller
/// that gets n - 1 of n sees every write the other n - 1 made before their arrival.
__device__ inline unsigned count_acq_rel(unsigned* counter) {
  return __hip_atomic_fetch_add(counter, 1u, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_AGENT);
}

/// Agent-scope stores, relaxed and release (a release store publishes the caller's earlier
/// writes to whoever acquires the value).
__device__ inline void store_relaxed(unsigned* p, unsigned v) {
  __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
__device__ inline void store_release(unsigned* p, unsigned v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
}

/// Relaxed agent-scope load: never served from a stale per-CU cache line.
__device__ inline unsigned load_relaxed(unsigned* p) {
  return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

/// Back off between polls of a counter.
__device__ inline void spin_pause() { __builtin_amdgcn_s_sleep(1); }

/// Bytes of (y:x) picked by the four selector nibbles of s (byte i of the result is byte
/// s >> 4 i & 7 of the 8-byte value y:x).
__device__ inline unsigned byte_perm(unsigned x, unsigned y, unsigned s) { return __byte_perm(x, y, s); }

/// Block-wide max of unsigned values (f32 bit patterns); valid in thread 0.
template <int Threads>
struct block_max {
  using reduce = rocprim::block_reduce<unsigned, Threads>;
  using storage = typename reduce::storage_type;
  __device__ static unsigned run(unsigned v, storage& s) {
    unsigned out = 0;
    reduce().reduce(v, out, s, rocprim::maximum<unsigned>());
    return out;
  }
};

__device__ inline void block_sync() { __syncthreads(); }
/// A block barrier that also returns whether p holds in every thread of the block.
__device__ inline bool block_all(bool p) { return __syncthreads_and(p ? 1 : 0) != 0; }

/// Threads per wave, in device code (64 on CDNA, 32 on RDNA; a constant of each target).
__device__ inline int wave_size() { return warpSize; }

/// Max of v over the lanes of a wave that agree on lane % Stride (a butterfly over the higher
/// lane bits, up to the wave size: 64 on CDNA, 32 on RDNA).
template <int Stride>
__device__ inline unsigned lanes_max(unsigned v) {
  for (int o = Stride; o < warpSize; o <<= 1) {
    const unsigned w = __shfl_xor(v, o);
    v = v > w ? v : w;
  }
  return v;
}

/// Max of v over the whole wave, every lane gets it (a butterfly: no wave reduction
/// instruction on CDNA).
__device__ inline unsigned wave_max(unsigned v) { return lanes_max<1>(v); }

/// Lane shuffles of 64-bit values over a whole wave (every lane calls them): from lane - delta
/// (a lane below delta keeps its own), from lane ^ mask, from lane src.
__device__ inline long long wave_shfl_up(long long v, int delta) { return __shfl_up(v, static_cast<unsigned>(delta)); }
__device__ inline long long wave_shfl_xor(long long v, int mask) { return __shfl_xor(v, mask); }
__device__ inline long long wave_shfl(long long v, int src) { return __shfl(v, src); }

/// v of the lane `delta` below this one in the wave (this lane's own v where there is none):
/// the step of a segmented scan across lanes (the per-group rowwise family).
__device__ inline unsigned lanes_up(unsigned v, int delta) { return __shfl_up(v, static_cast<unsigned>(delta)); }

/// Copy 16 bytes from device memory into LDS: the first src_bytes (0 .. 16) are read, the rest
/// of dst is zeroed. A plain load and store here (the same contract as CUDA's asynchronous
/// copy, so async_commit and async_wait have nothing to do); visible to the workgroup after a
/// block_sync. Both addresses 16-byte aligned.
__device__ inline void async_copy16(void* dst, const void* src, int src_bytes) {
  struct alignas(16) w16 {
    unsigned w[4];
  };
  if (src_bytes >= 16) {
    *static_cast<w16*>(dst) = *static_cast<const w16*>(src);
    return;
  }
  struct alignas(16) b16 {
    unsigned char b[16];
  } t{};
#pragma unroll
  for (int k = 0; k < 16; ++k) {  // unrolled: constant indices keep t in registers, not scratch
    if (k < src_bytes) t.b[k] = static_cast<const unsigned char*>(src)[k];
  }
  *static_cast<b16*>(dst) = t;
}
/// Whether __launch_bounds__'s second argument counts resident blocks per multiprocessor: not on
/// HIP-Clang, which reads it as the fewest waves per execution unit (SIMD).
inline constexpr bool launch_bounds_counts_blocks = false;

/// async_copy16 is a load and a store here: nothing runs while it does.
inline constexpr bool async_copy_overlaps = false;
__device__ inline void async_commit() {}
template <int Pending>
__device__ inline void async_wait() {}

/// Relaxed atomic max on a word of the workgroup's LDS.
__device__ inline void shared_max(unsigned* p, unsigned v) {
  (void)__hip_atomic_fetch_max(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
}

/// Relaxed atomic OR into a word of the workgroup's LDS.
__device__ inline void shared_or(unsigned* p, unsigned v) {
  (void)__hip_atomic_fetch_or(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
}

/// Blocks of Kernel with `threads` threads that one compute unit holds at once (a persistent
/// grid's size), asked once per device and thread count and kept.
template <auto Kernel>
status resident_blocks(const device_facts& dev, int threads, int* blocks) {
  return detail::device_memo<Kernel>::get(dev.device, threads, blocks, [&](int* n) {
    return hipOccupancyMaxActiveBlocksPerMultiprocessor(n, Kernel, threads, 0) == hipSuccess ? status::success : status::device_error;
  });
}

/// Cooperative launches: every block of the grid resident at once, or no launch.
struct cooperative_api {
  /// Dynamic LDS one block of `kernel` may take beside its static LDS on `dev`; *bytes is 0
  /// when the device has no cooperative launches.
  template <class... P>
  static status shared_bytes(const device_facts& dev, void (*kernel)(P...), int* bytes) {
    *bytes = 0;
    hipFuncAttributes fa{};
    if (hipFuncGetAttributes(&fa, reinterpret_cast<const void*>(kernel)) != hipSuccess)
      return status::device_error;
    if (dev.cooperative != 0 && dev.shared_bytes > static_cast<int>(fa.sharedSizeBytes))
      *bytes = dev.shared_bytes - static_cast<int>(fa.sharedSizeBytes);
    return status::success;
  }

  /// Blocks of `kernel` (threads each, `smem` dynamic LDS bytes) resident at once on `dev`.
  template <class... P>
  static status resident_blocks(const device_facts& dev, void (*kernel)(P...), int threads, int smem,
                                int* blocks) {
    *blocks = 0;
    int per_cu = 0;
    if (hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, kernel, threads, static_cast<std::size_t>(smem)) != hipSuccess)
      return status::device_error;
    *blocks = per_cu * dev.multiprocessors;
    return status::success;
  }

  /// Enqueue a cooperative launch (fails rather than run with part of the grid resident).
  template <class... P>
  static status launch(void (*kernel)(P...), dim3 grid, int threads, int smem, gpu_stream stream,
                       std::type_identity_t<P>... args) {
    void* argv[] = {static_cast<void*>(&args)...};
    return to_status(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid,
                                                dim3(static_cast<unsigned>(threads)), argv,
                                                static_cast<unsigned>(smem), stream));
  }
};

/// CDNA has no thread-block clusters: the one-pass colwise family never accepts a problem here
/// and its kernel is never instantiated (it tests has_clusters).
struct cluster_api {
  static constexpr int max_size = 1;
  static int shared_bytes(const device_facts&) { return 0; }
};
inline constexpr bool has_clusters = false;

/// Hardware f32x2 -> FP8x2 (v_cvt_pk_fp8_f32 / v_cvt_pk_bf8_f32, gfx940+). It rounds to nearest
/// even but does NOT saturate: callers clamp first with a comparison that keeps NaN.
/// gfx940/941/942 produce the fnuz formats, gfx950 the OCP ones.
template <format F>
inline constexpr bool has_hw_convert =
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
    F == format::e4m3fnuz || F == format::e5m2fnuz;
#elif defined(__gfx950__)
    F == format::e4m3fn || F == format::e5m2;
#else
    false;
#endif

/// No fnuz-through-OCP word path on AMD: gfx942 converts to fnuz natively (has_hw_convert).
template <format F>
inline constexpr bool has_hw_fnuz_word = false;

template <format F>
__device__ inline std::uint32_t hw_fnuz_word_sat(const float (&)[4]) {
  return 0;  // never called: has_hw_fnuz_word is false
}

/// convert_path::automatic stays in software on AMD: the hardware path is compiled and
/// ISA-checked (v_cvt_pk_fp8_f32 after the clamp) but no AMD GPU was available to prove it
/// identical to the software encode.
inline constexpr bool hw_convert_by_default = false;

#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__)
// The converter rounds but does not saturate: clamp first. NaN fails both comparisons and passes
// through unclamped, so the hardware writes its NaN.
template <format F>
__device__ inline float hw_clamp(float v) {
  constexpr float max = traits(F).max;
  return v > max ? max : (v < -max ? -max : v);
}

// v_cvt_pk_{fp8,bf8}_f32: two codes into the low (High false) or the high half of old.
template <format F, bool High>
__device__ inline int hw_convert_half(float lo, float hi, int old) {
  if constexpr (F == format::e4m3fnuz || F == format::e4m3fn) {
    return __builtin_amdgcn_cvt_pk_fp8_f32(hw_clamp<F>(lo), hw_clamp<F>(hi), old, High);
  } else {
    return __builtin_amdgcn_cvt_pk_bf8_f32(hw_clamp<F>(lo), hw_clamp<F>(hi), old, High);
  }
}
#endif

template <format F>
__device__ inline unsigned short hw_encode_pair_sat(float lo, float hi) {
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__)
  return static_cast<unsigned short>(hw_convert_half<F, false>(lo, hi, 0) & 0xffff);
#else
  (void)lo;
  (void)hi;
  return 0;  // never called: dispatch only selects the hardware path where has_hw_convert holds
#endif
}

/// Four values to a word of codes (byte j: v[j]), saturating: the second conversion writes the
/// high half of the first's result, so no packing follows.
template <format F>
__device__ inline std::uint32_t hw_encode_word_sat(float v0, float v1, float v2, float v3) {
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__)
  const int lo = hw_convert_half<F, false>(v0, v1, 0);
  return static_cast<std::uint32_t>(hw_convert_half<F, true>(v2, v3, lo));
#else
  (void)v0;
  (void)v1;
  (void)v2;
  (void)v3;
  return 0;  // never called, as hw_encode_pair_sat
#endif
}

}  // namespace backend

inline status device_count(int* count) {
  if (count == nullptr) return status::null_pointer;
  *count = 0;
  int n = 0;
  if (hipGetDeviceCount(&n) != hipSuccess) {
    (void)hipGetLastError();
    return status::no_device;
  }
  *count = n;
  return n > 0 ? status::success : status::no_device;
}

inline status query_device(int device, device_info* info) {
  if (info == nullptr) return status::null_pointer;
  int n = 0;
  if (device_count(&n) != status::success || device < 0 || device >= n) return status::no_device;
  hipDeviceProp_t p{};
  if (hipGetDeviceProperties(&p, device) != hipSuccess) return status::device_error;
  *info = device_info{};
  info->index = device;
  std::snprintf(info->name, sizeof(info->name), "%s", p.name);
  std::snprintf(info->arch_name, sizeof(info->arch_name), "%s", p.gcnArchName);
  info->arch = parse_arch(info->arch_name);  // gcnArchName, never the device-0 default
  info->multiprocessors = p.multiProcessorCount;
  info->l2_bytes = p.l2CacheSize;
  info->shared_bytes_per_block = static_cast<long long>(p.sharedMemPerBlock);
  info->global_bytes = static_cast<long long>(p.totalGlobalMem);
  return status::success;
}

}  // namespace fp8q
