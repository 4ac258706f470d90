// tests/gpu/gpu_check.hpp — plumbing for the conversion GPU tests: CUDA error checks (functions,
// not macros: std::source_location names the call site), the no-GPU skip rule, owning buffers,
// poison, a parallel host loop and byte comparison with a first-mismatch report.
//
// GPU test programs are plain main()s (the GPU machine may lack Catch2). Exit codes: 0 pass,
// 1 fail, 77 skipped (registered as SKIP_RETURN_CODE, so "no GPU" is never a silent pass).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <source_location>
#include <thread>
#include <vector>

#include "fp8q/device.hpp"

namespace gpu_check {

inline constexpr int skip_exit_code = 77;

/// Stops the program (exit 1) when a CUDA call failed. Nothing after a failed launch or copy can
/// be trusted, and a sticky error would make every later check fail with a misleading message.
inline void cuda_ok(cudaError_t e, std::source_location where = std::source_location::current()) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s:%u: CUDA error %s: %s\n", where.file_name(),
               static_cast<unsigned>(where.line()), cudaGetErrorName(e), cudaGetErrorString(e));
  std::exit(1);
}

/// Checks a kernel launch (configuration errors surface through cudaGetLastError).
inline void launch_ok(std::source_location where = std::source_location::current()) {
  cuda_ok(cudaGetLastError(), where);
}

/// Number of visible GPUs; when there is none, prints "skipped: no GPU" and returns 0, and the
/// caller returns skip_exit_code.
inline int devices_or_skip() {
  int n = 0;
  const fp8q::status st = fp8q::device_count(&n);
  if (st != fp8q::status::success || n <= 0) {
    std::printf("skipped: no GPU (%s)\n", fp8q::to_string(st));
    return 0;
  }
  return n;
}

/// cudaMalloc'd array of n T, freed on scope exit.
template <class T>
class device_buffer {
 public:
  explicit device_buffer(std::size_t n) : n_(n) { cuda_ok(cudaMalloc(&p_, n * sizeof(T))); }
  ~device_buffer() { cudaFree(p_); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

/// Page-locked host array of n T (so device-to-host copies run asynchronously at full speed).
template <class T>
class pinned_buffer {
 public:
  explicit pinned_buffer(std::size_t n) : n_(n) {
    void* p = nullptr;
    cuda_ok(cudaMallocHost(&p, n * sizeof(T)));
    p_ = static_cast<T*>(p);
  }
  ~pinned_buffer() { cudaFreeHost(p_); }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  T* get() const { return p_; }
  T& operator[](std::size_t i) const { return p_[i]; }
  std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

/// Fills device bytes with a pattern. All 256 byte values are legal FP8 outputs, so a poison can
/// never be told from a result by value: run twice with different poisons (0x5A, 0xA5) and
/// require equal results instead; an unwritten byte then differs.
inline void poison(void* p, std::size_t bytes, std::uint8_t pattern, cudaStream_t stream) {
  cuda_ok(cudaMemsetAsync(p, pattern, bytes, stream));
}
inline constexpr std::uint8_t poison_a = 0x5A;
inline constexpr std::uint8_t poison_b = 0xA5;

inline unsigned host_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

/// Calls fn(begin, end) over [0, n) from every hardware thread, in blocks of `grain` handed out
/// dynamically (blocks cost different amounts: specials and subnormals take other paths).
template <class Fn>
void parallel_for(std::uint64_t n, Fn&& fn, std::uint64_t grain = std::uint64_t{1} << 20) {
  std::atomic<std::uint64_t> next{0};
  auto worker = [&] {
    for (std::uint64_t b; (b = next.fetch_add(grain, std::memory_order_relaxed)) < n;) {
      fn(b, std::min(b + grain, n));
    }
  };
  std::vector<std::thread> pool;
  const unsigned t = host_threads();
  for (unsigned i = 0; i + 1 < t; ++i) pool.emplace_back(worker);
  worker();
  for (std::thread& th : pool) th.join();
}

/// Result of a byte comparison: how many differ, and the first (lowest index) that does.
struct mismatch {
  std::uint64_t count = 0;
  std::uint64_t first = ~std::uint64_t{0};
  std::uint8_t want = 0;
  std::uint8_t got = 0;

  void merge(const mismatch& o) {
    count += o.count;
    if (o.first < first) {
      first = o.first;
      want = o.want;
      got = o.got;
    }
  }
};

/// Compares got[i] with want(i) for every i in [0, n), in parallel. want is the host reference.
template <class Want>
mismatch compare_bytes(const std::uint8_t* got, std::uint64_t n, Want&& want) {
  mismatch total;
  std::mutex m;
  parallel_for(n, [&](std::uint64_t b, std::uint64_t e) {
    mismatch mine;
    for (std::uint64_t i = b; i < e; ++i) {
      const std::uint8_t w = want(i);
      if (w != got[i]) {
        if (mine.count++ == 0) {
          mine.first = i;
          mine.want = w;
          mine.got = got[i];
        }
      }
    }
    if (mine.count != 0) {
      std::lock_guard<std::mutex> lock(m);
      total.merge(mine);
    }
  });
  return total;
}

/// Compares two byte arrays of equal length.
inline mismatch compare_bytes(const std::uint8_t* want, const std::uint8_t* got, std::uint64_t n) {
  return compare_bytes(got, n, [want](std::uint64_t i) { return want[i]; });
}

/// Prints "<what>: <n> inputs, <count> mismatches" and, if any, the first one. Returns true when
/// nothing differs.
inline bool report(const char* what, std::uint64_t n, const mismatch& m) {
  std::printf("%s: %llu inputs, %llu mismatches", what, static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(m.count));
  if (m.count != 0) {
    std::printf(" (first at index %llu: want 0x%02x got 0x%02x)",
                static_cast<unsigned long long>(m.first), m.want, m.got);
  }
  std::printf("\n");
  std::fflush(stdout);
  return m.count == 0;
}

}  // namespace gpu_check
