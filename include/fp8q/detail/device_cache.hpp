// fp8q — facts of each device, queried once per device and kept for the process's lifetime, so
// a GPU call costs one "which device is current" question and no attribute query. The adapters
// say which facts and how to query them; this file only keeps them.
#pragma once

#include <atomic>
#include <mutex>

#include "fp8q/status.hpp"

namespace fp8q::detail {

template <class Facts>
struct device_cache {
  static constexpr int cached = 64;  // devices 0 .. 63 are kept; others are queried every call

  /// *facts = the facts of device `dev`, from query(dev, Facts&) on the first call for it.
  template <class Query>
  static status get(int dev, const Facts** facts, Query query) {
    static Facts known[cached];
    static std::atomic<int> ready[cached];
    static std::mutex filling;
    thread_local Facts beyond;
    const bool keep = dev >= 0 && dev < cached;
    if (keep && ready[dev].load(std::memory_order_acquire) != 0) {
      *facts = &known[dev];
      return status::success;
    }
    std::unique_lock<std::mutex> lock(filling, std::defer_lock);
    if (keep) lock.lock();
    Facts f{};
    if (const status st = query(dev, f); st != status::success) return st;
    Facts& slot = keep ? known[dev] : beyond;
    slot = f;
    if (keep) ready[dev].store(1, std::memory_order_release);
    *facts = &slot;
    return status::success;
  }
};

}  // namespace fp8q::detail
