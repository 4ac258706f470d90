// fp8q — the HIP adapter: the only file that names the HIP runtime or rocPRIM.
// Everything above it (dispatch, tile skeleton, kernels) is toolchain-neutral.
#pragma once

#include <hip/hip_runtime.h>

#include <cstring>

#include "fp8q/arch.hpp"
#include "fp8q/status.hpp"

namespace fp8q {

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
  std::strncpy(info->name, p.name, sizeof(info->name) - 1);
  std::strncpy(info->arch_name, p.gcnArchName, sizeof(info->arch_name) - 1);
  info->arch = parse_arch(info->arch_name);  // gcnArchName, never the device-0 default
  info->multiprocessors = p.multiProcessorCount;
  info->l2_bytes = p.l2CacheSize;
  info->shared_bytes_per_block = static_cast<long long>(p.sharedMemPerBlock);
  info->global_bytes = static_cast<long long>(p.totalGlobalMem);
  return status::success;
}

}  // namespace fp8q
