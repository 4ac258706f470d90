// fp8q — the host backend's thread pool of one call: work items are handed out dynamically, and
// every item writes disjoint outputs, so results never depend on the thread count or the order.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace fp8q::host::detail {

// Elements per thread below which another thread costs more than it saves.
inline constexpr std::int64_t min_elements_per_thread = std::int64_t{1} << 16;

// Threads for a call: the request (0: hardware concurrency), capped by the work so that small
// problems stay on the calling thread.
inline unsigned resolve_threads(unsigned requested, std::int64_t elements, std::int64_t items) {
  std::int64_t t = requested != 0 ? requested : std::thread::hardware_concurrency();
  const std::int64_t by_elements = elements / min_elements_per_thread;
  if (t > by_elements) t = by_elements;
  if (t > items) t = items;
  return t < 1 ? 1u : static_cast<unsigned>(t);
}

// Calls fn(k) once for every k in [0, count) on up to `threads` threads (the caller is one).
// A thread that cannot be started (std::system_error, bad_alloc) just leaves its share to the
// others, so this never throws and always finishes the work.
template <class Fn>
void parallel_for(std::int64_t count, unsigned threads, const Fn& fn) {
  if (count <= 0) return;
  if (threads <= 1 || count == 1) {
    for (std::int64_t k = 0; k < count; ++k) fn(k);
    return;
  }
  std::atomic<std::int64_t> next{0};
  // relaxed: the counter only hands out indices; join() orders every write before the return
  const auto worker = [&] {
    for (std::int64_t k = next.fetch_add(1, std::memory_order_relaxed); k < count;
         k = next.fetch_add(1, std::memory_order_relaxed))
      fn(k);
  };
  std::vector<std::thread> pool;
  try {
    pool.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  } catch (...) {
    // fewer helpers; the caller's loop below still covers every index
  }
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace fp8q::host::detail
