// fp8q — the CUDA adapter: the only file that names the CUDA runtime, CUB or libcu++.
// Everything above it (dispatch, tile skeleton, kernels) is toolchain-neutral.
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cooperative_groups.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <type_traits>
#include <cub/block/block_reduce.cuh>
#include <cuda/atomic>
#include <cuda/functional>

#include "fp8q/arch.hpp"
#include "fp8q/detail/cuda/fnuz_convert.hpp"
#include "fp8q/detail/device_cache.hpp"
#include "fp8q/format.hpp"
#include "fp8q/status.hpp"
#include "fp8q/tuning.hpp"

namespace fp8q {

/// The stream type of this toolchain (cudaStream_t).
using gpu_stream = cudaStream_t;

namespace backend {

inline constexpr const char* name = "cuda";

/// Wave size seen from host code: every NVIDIA architecture runs 32-thread warps.
inline constexpr int host_wave_size = 32;

inline status to_status(cudaError_t e) {
  return e == cudaSuccess ? status::success : status::device_error;
}

/// Status of the last launch on this thread (launch-configuration errors surface here).
inline status last_launch_status() { return to_status(cudaGetLastError()); }

inline status memset_async(void* p, int value, std::size_t bytes, gpu_stream stream) {
  return to_status(cudaMemsetAsync(p, value, bytes, stream));
}

/// Whether Kernel's device code on device `dev` was compiled for sm_90 or newer, i.e. its
/// wait_prior_grid() is real. The answer (cudaFuncGetAttributes' ptxVersion) is kept per device
/// after the first query, so a launch costs no driver query.
template <auto Kernel>
status waits_for_prior_grid(int dev, bool* yes) {
  static std::atomic<int> known[32];  // per device: ptxVersion + 1, or 0 before the first query
  int v = dev >= 0 && dev < 32 ? known[dev].load(std::memory_order_relaxed) : 0;
  if (v == 0) {
    cudaFuncAttributes fa{};
    if (cudaFuncGetAttributes(&fa, Kernel) != cudaSuccess) return status::device_error;
    v = fa.ptxVersion + 1;
    if (dev >= 0 && dev < 32) known[dev].store(v, std::memory_order_relaxed);
  }
  *yes = v - 1 >= 90;
  return status::success;
}

/// What dispatch reads about a device on every call, queried once per device and kept: a call
/// then costs one cudaGetDevice and no attribute query (issue 13: 6.2 us of host time per
/// rowwise call with the queries in every call).
struct device_facts {
  int device = 0;
  int multiprocessors = 0;
  int wave_size = 32;
  int major = 0;         ///< compute capability major
  int shared_optin = 0;  ///< opt-in shared memory per block, bytes
  int cooperative = 0;   ///< cooperative launches supported
  arch_traits traits() const { return {wave_size, 48 * 1024}; }
};

/// The facts of the current device (*facts stays valid for the process's lifetime).
inline status current_device(const device_facts** facts) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return status::no_device;
  return detail::device_cache<device_facts>::get(dev, facts, [](int d, device_facts& f) {
    f.device = d;
    if (cudaDeviceGetAttribute(&f.multiprocessors, cudaDevAttrMultiProcessorCount, d) != cudaSuccess ||
        cudaDeviceGetAttribute(&f.major, cudaDevAttrComputeCapabilityMajor, d) != cudaSuccess ||
        cudaDeviceGetAttribute(&f.shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, d) != cudaSuccess ||
        cudaDeviceGetAttribute(&f.cooperative, cudaDevAttrCooperativeLaunch, d) != cudaSuccess)
      return status::device_error;
    return status::success;
  });
}

/// Launch Kernel on `stream` (every fp8q launch but the cooperative and cluster ones goes
/// through here). dependent: as a programmatic dependent of the kernel just before it in
/// `stream`, where the device and Kernel's device code are sm_90 or newer: its blocks may start
/// while that kernel drains, so Kernel must call wait_prior_grid() before it touches any memory.
/// Otherwise, and elsewhere, an ordinary launch (1.4-1.8 us less per tensorwise call, H200;
/// docs/design.md, "The cast launch of every two-launch path starts while its amax launch drains").
template <auto Kernel, class... A>
status launch(const device_facts& dev, bool dependent, dim3 grid, int threads, gpu_stream stream,
              const A&... args) {
  bool waits = false;
  if (dependent && dev.major >= 9) {
    const status st = waits_for_prior_grid<Kernel>(dev.device, &waits);
    if (st != status::success) return st;
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = waits ? 1 : 0;  // code for an older architecture has no wait: launch it plainly
  return to_status(cudaLaunchKernelEx(&cfg, Kernel, args...));
}

/// Dynamic shared memory a block may take on `dev` (the opt-in maximum).
inline int max_dynamic_shared(const device_facts& dev) { return dev.shared_optin; }

/// Launch Kernel on `stream` with `smem` bytes of dynamic shared memory (an ordinary launch).
/// Above the 48 KiB default the kernel's limit is raised once per device and kept, so a call
/// costs no attribute query after the first.
template <auto Kernel, class... A>
status launch_shared(const device_facts& dev, dim3 grid, int threads, int smem, gpu_stream stream,
                     const A&... args) {
  static std::atomic<int> raised[32];  // per device: the limit set so far, 0 before the first
  const bool keep = dev.device >= 0 && dev.device < 32;
  if (smem > 48 * 1024 && (!keep || raised[dev.device].load(std::memory_order_relaxed) < smem)) {
    if (cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
      return status::device_error;
    if (keep) raised[dev.device].store(smem, std::memory_order_relaxed);
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
  cfg.stream = stream;
  return to_status(cudaLaunchKernelEx(&cfg, Kernel, args...));
}

/// Wait until the kernels this one was launched after (launch, dependent) have finished and
/// their writes are visible; returns at once for an ordinary launch and before sm_90.
__device__ inline void wait_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

template <memory_order O>
__device__ constexpr cuda::std::memory_order to_cuda_order() {
  return O == memory_order::relaxed   ? cuda::std::memory_order_relaxed
         : O == memory_order::acq_rel ? cuda::std::memory_order_acq_rel
                                      : cuda::std::memory_order_seq_cst;
}

/// Relaxed device-scope OR into a flag word (the grouped families' offsets error word).
__device__ inline void atomic_or(unsigned* p, unsigned bits) { (void)atomicOr(p, bits); }

/// atomic max on f32 bit patterns of non-negative values (NaN sorts above Inf), with the
/// memory order and scope the tuning asks for.
template <memory_order O, memory_scope S>
__device__ inline void atomic_max_bits(unsigned* p, unsigned v) {
  if constexpr (S == memory_scope::system) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_system> ref(*p);
    ref.fetch_max(v, to_cuda_order<O>());
  } else {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> ref(*p);
    ref.fetch_max(v, to_cuda_order<O>());
  }
}

/// The next ticket of a device-wide counter (relaxed: only the tickets' order matters).
__device__ inline unsigned take_ticket(unsigned* counter) { return atomicAdd(counter, 1u); }

/// Count one finished piece of work, with release at device scope: the calling block's writes
/// before its last block_sync() are visible to whoever acquires a count that includes this one.
__device__ inline void count_release(unsigned* counter) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> ref(*counter);
  ref.fetch_add(1u, cuda::std::memory_order_release);
}

/// Read a counter with acquire at device scope (pairs with count_release).
__device__ inline unsigned count_acquire(unsigned* counter) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> ref(*counter);
  return ref.load(cuda::std::memory_order_acquire);
}

/// Count one arrival with acq_rel at device scope and return the count before it: the caller
/// that gets n - 1 of n sees every write the other n - 1 made before their arrival.
__device__ inline unsigned count_acq_rel(unsigned* counter) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> ref(*counter);
  return ref.fetch_add(1u, cuda::std::memory_order_acq_rel);
}

/// Device-scope stores, relaxed and release (a release store publishes the caller's earlier
/// writes to whoever acquires the value).
__device__ inline void store_relaxed(unsigned* p, unsigned v) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> ref(*p);
  ref.store(v, cuda::std::memory_order_relaxed);
}
__device__ inline void store_release(unsigned* p, unsigned v) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> ref(*p);
  ref.store(v, cuda::std::memory_order_release);
}

/// Relaxed device-scope load: never served from a stale L1 line.
__device__ inline unsigned load_relaxed(unsigned* p) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> ref(*p);
  return ref.load(cuda::std::memory_order_relaxed);
}

/// Back off between polls of a counter.
__device__ inline void spin_pause() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  __nanosleep(64);
#endif
}

/// Bytes of (y:x) picked by the four selector nibbles of s (byte i of the result is byte
/// s >> 4 i & 7 of the 8-byte value y:x).
__device__ inline unsigned byte_perm(unsigned x, unsigned y, unsigned s) { return __byte_perm(x, y, s); }

/// Block-wide max of unsigned values (f32 bit patterns); valid in thread 0.
template <int Threads>
struct block_max {
  using reduce = cub::BlockReduce<unsigned, Threads>;
  using storage = typename reduce::TempStorage;
  __device__ static unsigned run(unsigned v, storage& s) {
    return reduce(s).Reduce(v, cuda::maximum<unsigned>{});
  }
};

__device__ inline void block_sync() { __syncthreads(); }
/// A block barrier that also returns whether p holds in every thread of the block.
__device__ inline bool block_all(bool p) { return __syncthreads_and(p ? 1 : 0) != 0; }

/// Threads per warp, in device code.
__device__ constexpr int wave_size() { return 32; }

/// Max of v over the lanes of a warp that agree on lane % Stride (a butterfly over the higher
/// lane bits); every such lane gets the result.
template <int Stride>
__device__ inline unsigned lanes_max(unsigned v) {
#pragma unroll
  for (int o = Stride; o < 32; o <<= 1) {
    const unsigned w = __shfl_xor_sync(0xffffffffu, v, o);
    v = v > w ? v : w;
  }
  return v;
}

/// Max of v over the whole warp, every lane gets it: one redux.sync on sm_80+.
__device__ inline unsigned wave_max(unsigned v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_max_sync(0xffffffffu, v);
#else
  return lanes_max<1>(v);
#endif
}

/// Lane shuffles of 64-bit values over a whole warp (every lane calls them): from lane - delta
/// (a lane below delta keeps its own), from lane ^ mask, from lane src.
__device__ inline long long wave_shfl_up(long long v, int delta) { return __shfl_up_sync(0xffffffffu, v, delta); }
__device__ inline long long wave_shfl_xor(long long v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
__device__ inline long long wave_shfl(long long v, int src) { return __shfl_sync(0xffffffffu, v, src); }

/// v of the lane `delta` below this one in the warp (this lane's own v where there is none):
/// the step of a segmented scan across lanes (the per-group rowwise family).
__device__ inline unsigned lanes_up(unsigned v, int delta) { return __shfl_up_sync(0xffffffffu, v, delta); }

/// Copy 16 bytes from device memory into shared memory without holding them in registers:
/// the first src_bytes (0 .. 16) are read, the rest of dst is zeroed. Complete (and visible to
/// the calling thread) after async_wait; to the block after a block_sync that follows it.
/// Both addresses 16-byte aligned.
__device__ inline void async_copy16(void* dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
#else
  struct alignas(16) w16 {
    unsigned char b[16];
  } t{};
  for (int k = 0; k < src_bytes; ++k) t.b[k] = static_cast<const unsigned char*>(src)[k];
  *static_cast<w16*>(dst) = t;
#endif
}

/// Whether __launch_bounds__'s second argument counts resident blocks per multiprocessor (CUDA)
/// rather than waves per execution unit (HIP-Clang).
inline constexpr bool launch_bounds_counts_blocks = true;

/// Whether async_copy16 runs while the thread goes on (cp.async, sm_80+; a load and a store on
/// older devices, still correct): the same value in the host and the device passes, so that a
/// family's host side sizes the shared memory its kernel lays out.
inline constexpr bool async_copy_overlaps = true;

/// Close the calling thread's group of async_copy16 calls issued since the last commit.
__device__ inline void async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

/// Wait until at most Pending of the calling thread's committed groups are still in flight.
template <int Pending>
__device__ inline void async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
#endif
}

/// Relaxed atomic max on a word of the block's shared memory (one ATOMS where the address is
/// known to be shared).
__device__ inline void shared_max(unsigned* p, unsigned v) { (void)atomicMax(p, v); }

/// Relaxed atomic OR into a word of the block's shared memory.
__device__ inline void shared_or(unsigned* p, unsigned v) { (void)atomicOr(p, v); }

/// Blocks of Kernel with `threads` threads that one multiprocessor holds at once (a persistent
/// grid's size), asked once per device and thread count and kept.
template <auto Kernel>
status resident_blocks(const device_facts& dev, int threads, int* blocks) {
  return detail::device_memo<Kernel>::get(dev.device, threads, blocks, [&](int* n) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, Kernel, threads, 0) == cudaSuccess ? status::success : status::device_error;
  });
}

/// Thread-block clusters (sm_90+), for the one-pass colwise kernel. Device functions trap on an
/// older architecture; launch() never starts a kernel whose binary is older than sm_90.
struct cluster_api {
  /// Largest cluster launch() is asked for (16: beyond the portable 8, checked per launch).
  static constexpr int max_size = 16;
  __device__ static int rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return static_cast<int>(cooperative_groups::this_cluster().block_rank());
#else
    __trap();
    return 0;
#endif
  }
  /// barrier.cluster.arrive.release: this thread's shared-memory writes become visible to the
  /// cluster's threads that pass the matching wait().
  __device__ static void arrive() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cooperative_groups::this_cluster().barrier_arrive();
#else
    __trap();
#endif
  }
  /// barrier.cluster.wait.acquire
  __device__ static void wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cooperative_groups::this_cluster().barrier_wait();
#else
    __trap();
#endif
  }
  /// The same shared-memory object in CTA `rank` of this cluster.
  template <class T>
  __device__ static T* peer(T* p, int rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().map_shared_rank(p, static_cast<unsigned>(rank));
#else
    (void)rank;
    __trap();
    return p;
#endif
  }

  /// Shared memory one CTA of a cluster kernel may take on `dev` (opt-in maximum), 0 when the
  /// device has no clusters (before sm_90).
  static int shared_bytes(const device_facts& dev) { return dev.major >= 9 ? dev.shared_optin : 0; }

  /// Clusters of (1, cluster_y, 1) CTAs of `kernel` (threads each, `smem` dynamic shared bytes)
  /// resident at once on the current device (cudaOccupancyMaxActiveClusters); 0 when this binary
  /// or device cannot run it: kernel compiled for an architecture before sm_90, too much shared
  /// memory, or no cluster of that size fits. Sets the kernel's shared-memory attributes.
  template <class... P>
  static status fit(void (*kernel)(P...), int cluster_y, int threads, std::size_t smem, int* clusters) {
    *clusters = 0;
    cudaFuncAttributes fa{};
    if (cudaFuncGetAttributes(&fa, kernel) != cudaSuccess) return status::device_error;
    if (fa.binaryVersion < 90) return status::success;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem)) != cudaSuccess ||
        (cluster_y > 8 &&
         cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)) {
      (void)cudaGetLastError();
      return status::success;
    }
    cudaLaunchConfig_t cfg = config(1, cluster_y, threads, smem, nullptr);
    cudaLaunchAttribute attr[1];
    cluster_attr(attr, cluster_y);
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (cudaOccupancyMaxActiveClusters(clusters, kernel, &cfg) != cudaSuccess || *clusters < 1) {
      (void)cudaGetLastError();
      *clusters = 0;
    }
    return status::success;
  }

  /// Launch grid_x persistent clusters of (1, cluster_y, 1) CTAs with `smem` dynamic shared
  /// bytes each (grid (grid_x, cluster_y)), after fit() found them resident.
  template <class... P, class... A>
  static status launch(void (*kernel)(P...), unsigned grid_x, int cluster_y, int threads,
                       std::size_t smem, gpu_stream stream, A... args) {
    cudaLaunchConfig_t cfg = config(grid_x, cluster_y, threads, smem, stream);
    cudaLaunchAttribute attr[1];
    cluster_attr(attr, cluster_y);
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return to_status(cudaLaunchKernelEx(&cfg, kernel, args...));
  }

 private:
  static cudaLaunchConfig_t config(unsigned grid_x, int cluster_y, int threads, std::size_t smem,
                                   gpu_stream stream) {
    cudaLaunchConfig_t cfg{};
    cfg.blockDim = dim3(static_cast<unsigned>(threads));
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.gridDim = dim3(grid_x, static_cast<unsigned>(cluster_y), 1);
    return cfg;
  }
  static void cluster_attr(cudaLaunchAttribute (&attr)[1], int cluster_y) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1;
    attr[0].val.clusterDim.y = static_cast<unsigned>(cluster_y);
    attr[0].val.clusterDim.z = 1;
  }
};

/// Cooperative launches: every block of the grid resident at once, or no launch.
struct cooperative_api {
  /// Dynamic shared memory one block of `kernel` may take beside its static shared memory on
  /// `dev`; *bytes is 0 when the device has no cooperative launches.
  template <class... P>
  static status shared_bytes(const device_facts& dev, void (*kernel)(P...), int* bytes) {
    *bytes = 0;
    cudaFuncAttributes fa{};
    if (cudaFuncGetAttributes(&fa, kernel) != cudaSuccess) return status::device_error;
    if (dev.cooperative != 0 && dev.shared_optin > static_cast<int>(fa.sharedSizeBytes))
      *bytes = dev.shared_optin - static_cast<int>(fa.sharedSizeBytes);
    return status::success;
  }

  /// Blocks of `kernel` (threads each, `smem` dynamic shared bytes) resident at once on the
  /// current device.
  template <class... P>
  static status resident_blocks(const device_facts& dev, void (*kernel)(P...), int threads, int smem,
                                int* blocks) {
    *blocks = 0;
    int per_sm = 0;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, static_cast<std::size_t>(smem)) != cudaSuccess)
      return status::device_error;
    *blocks = per_sm * dev.multiprocessors;
    return status::success;
  }

  /// Enqueue a cooperative launch (fails rather than run with part of the grid resident).
  template <class... P>
  static status launch(void (*kernel)(P...), dim3 grid, int threads, int smem, gpu_stream stream,
                       std::type_identity_t<P>... args) {
    void* argv[] = {static_cast<void*>(&args)...};
    return to_status(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid,
                                                 dim3(static_cast<unsigned>(threads)), argv,
                                                 static_cast<std::size_t>(smem), stream));
  }
};

/// This toolchain has thread-block clusters (used where the device has them: sm_90+).
inline constexpr bool has_clusters = true;

/// Hardware f32x2 -> FP8x2 with saturation where the chip has it. Only e4m3fn and e5m2 exist on
/// NVIDIA; NaN inputs are mapped back to fp8q's canonical NaN by the caller.
template <format F>
inline constexpr bool has_hw_convert = F == format::e4m3fn || F == format::e5m2;

/// convert_path::automatic picks the hardware path on NVIDIA: tests/gpu/test_convert_gpu showed
/// cvt.rn.satfinite equal to fp8q's encode on every non-NaN f32 input (H200, 2026-11-29), and
/// NaN products are re-encoded in software by the caller.
inline constexpr bool hw_convert_by_default = true;

template <format F>
__device__ inline unsigned short hw_encode_pair_sat(float lo, float hi) {
  static_assert(has_hw_convert<F>, "fp8q: no NVIDIA hardware conversion for this format");
  const __nv_fp8_interpretation_t kind = F == format::e4m3fn ? __NV_E4M3 : __NV_E5M2;
  return __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, kind);
}

/// Four values to a word of codes (byte j: v[j]), saturating; NaN inputs as for
/// hw_encode_pair_sat.
template <format F>
__device__ inline std::uint32_t hw_encode_word_sat(float v0, float v1, float v2, float v3) {
  static_assert(has_hw_convert<F>, "fp8q: no NVIDIA hardware conversion for this format");
  return detail::nv::ocp_word<F>(v0, v1, v2, v3);
}

/// The fnuz formats through the OCP converters (detail/cuda/fnuz_convert.hpp): four values to a
/// word of fnuz codes, saturating. Taken only when a tuning asks for convert_path::hardware, the
/// automatic path staying in software until tests/gpu/test_fast_encode_gpu has shown it equal
/// to the definition on every f32 input (docs/encoder.md).
template <format F>
inline constexpr bool has_hw_fnuz_word = detail::nv::has_fnuz_via_ocp<F>;

template <format F>
__device__ inline std::uint32_t hw_fnuz_word_sat(const float (&v)[4]) {
  return detail::nv::fnuz_word_via_ocp<F>(v);
}

}  // namespace backend

inline status device_count(int* count) {
  if (count == nullptr) return status::null_pointer;
  *count = 0;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // a machine without a driver: clear the sticky error
    return status::no_device;
  }
  *count = n;
  return n > 0 ? status::success : status::no_device;
}

inline status query_device(int device, device_info* info) {
  if (info == nullptr) return status::null_pointer;
  int n = 0;
  if (device_count(&n) != status::success || device < 0 || device >= n) return status::no_device;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) return status::device_error;
  *info = device_info{};
  info->index = device;
  std::snprintf(info->name, sizeof(info->name), "%s", p.name);
  std::snprintf(info->arch_name, sizeof(info->arch_name), "sm_%d%d", p.major, p.minor);
  info->arch = nvidia_arch(p.major, p.minor);
  info->multiprocessors = p.multiProcessorCount;
  info->l2_bytes = p.l2CacheSize;
  info->shared_bytes_per_block = static_cast<long long>(p.sharedMemPerBlockOptin);
  info->global_bytes = static_cast<long long>(p.totalGlobalMem);
  return status::success;
}

}  // namespace fp8q
