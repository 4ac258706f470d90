// What the probes share (fp8q_group_row_probe, fp8q_group_col_probe, fp8q_col_probe): exit on a
// CUDA error, a hash of output bytes, CUDA-event medians, the copy reference and the benchmark's
// group offsets. Not part of fp8q.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <random>
#include <source_location>
#include <vector>

namespace probe {

using i64 = std::int64_t;

inline void cuda_ok(cudaError_t e, std::source_location at = std::source_location::current()) {
  if (e == cudaSuccess) return;
  std::printf("CUDA %s at line %u\n", cudaGetErrorString(e), static_cast<unsigned>(at.line()));
  std::exit(1);
}

/// FNV-1a over v, continuing from h (hashes of several buffers chain).
inline std::uint64_t fnv(const std::vector<std::uint8_t>& v, std::uint64_t h = 1469598103934665603ull) {
  for (auto b : v) {
    h ^= b;
    h *= 1099511628211ull;
  }
  return h;
}

/// The n bytes of a device buffer.
inline std::vector<std::uint8_t> fetch(const void* device, std::size_t n) {
  std::vector<std::uint8_t> h(n);
  cuda_ok(cudaMemcpy(h.data(), device, n, cudaMemcpyDeviceToHost));
  return h;
}

/// One device buffer of n bytes, for hash_device.
struct device_bytes {
  const void* p;
  std::size_t n;
};

/// fnv over the device buffers in order, each continuing from the one before (the same value as
/// fnv(fetch(c), fnv(fetch(b), fnv(fetch(a)))) for {a, b, c}).
inline std::uint64_t hash_device(std::initializer_list<device_bytes> buffers) {
  std::uint64_t h = 1469598103934665603ull;
  for (const device_bytes& b : buffers) h = fnv(fetch(b.p, b.n), h);
  return h;
}

/// CUDA-event median (µs) of `iters` calls on one stream, after `warm` untimed calls.
struct timer {
  cudaStream_t stream;
  int iters;
  int warm;
  cudaEvent_t e0{}, e1{};
  timer(cudaStream_t s, int iters_, int warm_) : stream(s), iters(iters_), warm(warm_) {
    cuda_ok(cudaEventCreate(&e0));
    cuda_ok(cudaEventCreate(&e1));
  }
  template <class F>
  float median_us(F&& fn) {
    for (int i = 0; i < warm; ++i) fn();
    std::vector<float> ts;
    for (int i = 0; i < iters; ++i) {
      cuda_ok(cudaEventRecord(e0, stream));
      fn();
      cuda_ok(cudaEventRecord(e1, stream));
      cuda_ok(cudaEventSynchronize(e1));
      float ms = 0.0f;
      cuda_ok(cudaEventElapsedTime(&ms, e0, e1));
      ts.push_back(ms * 1000.f);
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
  }
};

/// Bytes moved per second (read + written) by a 1 GiB device-to-device copy, printed as the
/// reference frac_copy divides by.
inline double copy_bandwidth(timer& t) {
  void* src = nullptr;
  void* dst = nullptr;
  const std::size_t bytes = std::size_t{1} << 30;
  cuda_ok(cudaMalloc(&src, bytes));
  cuda_ok(cudaMalloc(&dst, bytes));
  cuda_ok(cudaMemset(src, 1, bytes));
  const float us = t.median_us([&] { cuda_ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, t.stream)); });
  const double bw = 2.0 * static_cast<double>(bytes) / (us * 1e-6);
  std::printf("copy %.1f us  %.0f GB/s\n", us, bw / 1e9);
  cuda_ok(cudaFree(src));
  cuda_ok(cudaFree(dst));
  return bw;
}

/// n bf16 inputs (as bits): standard normal values from a fixed seed, each multiplied by
/// factor(i, rng) (drawn after the value, so a factor may use the generator too).
template <class F>
std::vector<std::uint16_t> normal_bf16(std::size_t n, F factor) {
  std::vector<std::uint16_t> h(n);
  std::mt19937 rng(1234);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (std::size_t i = 0; i < n; ++i) {
    float f = nd(rng);
    f *= factor(i, rng);
    std::uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    h[i] = static_cast<std::uint16_t>(u >> 16);
  }
  return h;
}

/// Padded end offsets of `ends` at `align` (docs/semantics.md, "Padded groups"): each group's
/// lines rounded up to a multiple of align, in order (an empty group takes none).
inline std::vector<i64> padded_ends(const std::vector<std::int32_t>& ends, i64 align) {
  std::vector<i64> pend;
  i64 start = 0, at = 0;
  for (const std::int32_t e : ends) {
    at += (e - start + align - 1) / align * align;
    pend.push_back(at);
    start = e;
  }
  return pend;
}

/// The benchmark's offsets (bench_quantize.cu, grouped_case): ends of G groups along `extent`,
/// sizes uniform in 0.25 .. 1.75 of the mean, group 1 empty where empty1.
inline std::vector<std::int32_t> bench_ends(i64 extent, i64 groups, bool empty1 = true) {
  std::vector<std::int32_t> ends(static_cast<std::size_t>(groups));
  std::uint64_t x = 0x9e3779b97f4a7c15ull ^ static_cast<std::uint64_t>(groups);
  std::vector<double> w(static_cast<std::size_t>(groups));
  double total = 0.0;
  for (auto& v : w) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v = 0.25 + 1.5 * static_cast<double>(x >> 11) / 9007199254740992.0;
  }
  if (groups > 1 && empty1) w[1] = 0.0;
  for (double v : w) total += v;
  double acc = 0.0;
  for (i64 g = 0; g < groups; ++g) {
    acc += w[static_cast<std::size_t>(g)];
    ends[static_cast<std::size_t>(g)] =
        static_cast<std::int32_t>(g + 1 == groups ? extent : static_cast<i64>(static_cast<double>(extent) * acc / total));
  }
  return ends;
}

}  // namespace probe
