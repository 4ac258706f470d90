// fp8q — run-time device queries: how many GPUs, and what each one is (FP8 family, wave size,
// multiprocessors, cache and shared-memory sizes). Asked per device index, never cached.
#pragma once

#include "fp8q/arch.hpp"
#include "fp8q/status.hpp"

namespace fp8q {

/// What fp8q reads off one device at run time.
struct device_info {
  int index = -1;
  char name[256] = {};          ///< marketing name ("NVIDIA H200")
  char arch_name[64] = {};      ///< "sm_90" or gcnArchName ("gfx942:sramecc+:xnack-")
  arch_info arch{};             ///< parsed from arch_name
  int multiprocessors = 0;      ///< SMs (NVIDIA) or CUs (AMD)
  long long l2_bytes = 0;
  long long shared_bytes_per_block = 0;  ///< opt-in maximum for one block
  long long global_bytes = 0;
};

/// Number of visible GPUs. Returns no_device (count 0) when none is visible or fp8q was built
/// without a GPU toolchain.
[[nodiscard]] status device_count(int* count);

/// Properties of device `device` (any index, not only the current one).
[[nodiscard]] status query_device(int device, device_info* info);

}  // namespace fp8q

#if FP8Q_TOOLCHAIN_CUDA
#include "fp8q/detail/cuda/adapter.hpp"
#elif FP8Q_TOOLCHAIN_HIP
#include "fp8q/detail/hip/adapter.hpp"
#elif FP8Q_TOOLCHAIN_EMU
#include "fp8q/detail/emu/adapter.hpp"
#else
namespace fp8q {
inline status device_count(int* count) {
  if (count == nullptr) return status::null_pointer;
  *count = 0;
  return status::no_device;
}
inline status query_device(int, device_info* info) {
  return info == nullptr ? status::null_pointer : status::no_device;
}
}  // namespace fp8q
#endif
