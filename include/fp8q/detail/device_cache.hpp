// fp8q — facts of each device, queried once per device and kept for the process's lifetime, so
// a GPU call costs one "which device is current" question and no attribute query. The adapters
// say which facts and how to query them; this file only keeps them.
#pragma once

#include <atomic>
#include <cstdint>
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

/// An int that a device and a small key determine (a kernel's resident blocks for a block size),
/// queried on the first call for that pair and kept; one memo per Tag (e.g. per kernel). The last
/// pair asked is kept per device, key and value in one word, so a thread never reads one call's
/// key with another's value.
template <auto Tag>
struct device_memo {
  /// *value for (dev, key), from query(int*) unless kept.
  template <class Query>
  static status get(int dev, int key, int* value, Query query) {
    static std::atomic<std::uint64_t> known[64];  // (key + 1) << 32 | value; 0 before the first query
    const bool keep = dev >= 0 && dev < 64;
    const std::uint64_t tag = static_cast<std::uint64_t>(static_cast<std::uint32_t>(key) + 1u) << 32;
    if (keep) {
      const std::uint64_t k = known[dev].load(std::memory_order_relaxed);
      if ((k & ~std::uint64_t{0xffffffffu}) == tag) {
        *value = static_cast<int>(static_cast<std::uint32_t>(k));
        return status::success;
      }
    }
    int v = 0;
    if (const status st = query(&v); st != status::success) return st;
    if (keep) known[dev].store(tag | static_cast<std::uint32_t>(v), std::memory_order_relaxed);
    *value = v;
    return status::success;
  }
};

}  // namespace fp8q::detail
