// fp8q — the CUDA adapter: the only file that names the CUDA runtime, CUB or libcu++.
// Everything above it (dispatch, tile skeleton, kernels) is toolchain-neutral.
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cub/block/block_reduce.cuh>
#include <cuda/atomic>
#include <cuda/functional>

#include "fp8q/arch.hpp"
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

/// Arch traits of the device that owns `stream`'s current device, read with cheap attribute
/// queries (cudaDeviceGetAttribute is a table lookup, unlike cudaGetDeviceProperties).
inline status current_device_traits(arch_traits* t, int* multiprocessors) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return status::no_device;
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return status::device_error;
  t->wave_size = 32;
  t->shared_bytes = 48 * 1024;
  *multiprocessors = sms;
  return status::success;
}

template <memory_order O>
__device__ constexpr cuda::std::memory_order to_cuda_order() {
  return O == memory_order::relaxed   ? cuda::std::memory_order_relaxed
         : O == memory_order::acq_rel ? cuda::std::memory_order_acq_rel
                                      : cuda::std::memory_order_seq_cst;
}

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

/// Arrival counter for "last block publishes": acq_rel, so the last block sees every other
/// block's amax atomics.
__device__ inline unsigned arrive_acq_rel(unsigned* counter) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> ref(*counter);
  return ref.fetch_add(1u, cuda::std::memory_order_acq_rel);
}

__device__ inline unsigned load_acquire(unsigned* p) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> ref(*p);
  return ref.load(cuda::std::memory_order_acquire);
}

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
