// What the probes share (fp8q_group_row_probe, fp8q_group_col_probe, fp8q_col_probe,
// fp8q_hold_probe, fp8q_group_row_exp, fp8q_ring_probe): exit on a CUDA error, hashes of output
// bytes, CUDA-event medians, the copy reference, the expert-weight buffers, the benchmark's group
// offsets and a stream on fewer multiprocessors. Not part of fp8q.
#pragma once

#include <cuda.h>
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

/// One device buffer of n bytes, for fetched_fnv and device_hash.
struct device_bytes {
  const void* p;
  std::size_t n;
};

/// fnv over the device buffers, copied to the host, in order, each continuing from the one before
/// (the same value as fnv(fetch(c), fnv(fetch(b), fnv(fetch(a)))) for {a, b, c}). Not the same
/// value as device_hash over the same buffers: each probe records the one it prints.
inline std::uint64_t fetched_fnv(std::initializer_list<device_bytes> buffers) {
  std::uint64_t h = 1469598103934665603ull;
  for (const device_bytes& b : buffers) h = fnv(fetch(b.p, b.n), h);
  return h;
}

/// Sum over the buffer's 8-byte words of a mix of (word, position): a hash of every byte that the
/// order of the additions cannot change. n: 8-byte words. A template so that only the probes
/// that call device_hash compile it.
template <int = 0>
__global__ void hash_words(const unsigned long long* w, std::size_t n, unsigned long long salt, unsigned long long* h) {
  unsigned long long acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned long long z = w[i] ^ (i * 0x9e3779b97f4a7c15ull) ^ salt;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    acc += z ^ (z >> 31);
  }
  atomicAdd(h, acc);
}

/// hash_words over the buffers (each a multiple of 8 bytes), computed on the device: equal
/// hashes, equal bytes, with overwhelming odds, without copying large outputs to the host.
inline std::uint64_t device_hash(std::initializer_list<device_bytes> buffers) {
  static unsigned long long* h = nullptr;
  if (h == nullptr) cuda_ok(cudaMalloc(&h, 8));
  cuda_ok(cudaMemset(h, 0, 8));
  unsigned long long salt = 1;
  for (const device_bytes& b : buffers) {
    hash_words<0><<<1024, 256>>>(static_cast<const unsigned long long*>(b.p), b.n / 8, salt++ * 0x632be59bd9b4e019ull, h);
    cuda_ok(cudaGetLastError());
  }
  unsigned long long r = 0;
  cuda_ok(cudaMemcpy(&r, h, 8, cudaMemcpyDeviceToHost));
  return r;
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

/// cudaMemset, then a wait for the whole device: a green context's stream (probe_stream) does not
/// wait for work on the legacy default stream, so an output poisoned there could race the call
/// that writes it.
inline cudaError_t poison_memset(void* p, int value, std::size_t n) {
  const cudaError_t e = cudaMemset(p, value, n);
  return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

/// With FP8Q_PROBE_SMS=n set: a stream of a green context of n multiprocessors of device 0 (its
/// count rounded as the driver requires, printed), else `fallback`. Timed on it, a kernel must
/// carry the device's bandwidth with fewer multiprocessors: on an H100, 88 of 132 give each about
/// what an H200's 132 carry at the same fraction of copy (docs/design.md, "An H200's load on an
/// H100").
inline cudaStream_t probe_stream(cudaStream_t fallback) {
  const char* e = std::getenv("FP8Q_PROBE_SMS");
  if (e == nullptr) return fallback;
  auto cu_ok = [](CUresult r, const char* what) {
    if (r == CUDA_SUCCESS) return;
    std::printf("%s failed: %d\n", what, static_cast<int>(r));
    std::exit(1);
  };
  cuda_ok(cudaFree(nullptr));  // the primary context first: the green context shares its memory
  CUdevice dev{};
  cu_ok(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUdevResource all{}, part{}, rest{};
  cu_ok(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  unsigned groups = 1;
  cu_ok(cuDevSmResourceSplitByCount(&part, &groups, &all, &rest, 0, static_cast<unsigned>(std::atoi(e))),
        "cuDevSmResourceSplitByCount");
  CUdevResourceDesc desc{};
  cu_ok(cuDevResourceGenerateDesc(&desc, &part, 1), "cuDevResourceGenerateDesc");
  CUgreenCtx green{};
  cu_ok(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
  CUstream s{};
  cu_ok(cuGreenCtxStreamCreate(&s, green, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
  std::printf("green context: %u of %u multiprocessors\n", part.sm.smCount, all.sm.smCount);
  return reinterpret_cast<cudaStream_t>(s);
}

/// After the whole device's copy is timed: where FP8Q_PROBE_SMS is set, st and t time on the
/// green context's stream from here on (the probe's fractions stay of the whole device's copy),
/// and the copy on its multiprocessors is printed too.
inline void use_probe_stream(cudaStream_t& st, timer& t) {
  const cudaStream_t g = probe_stream(st);
  if (g == st) return;
  st = g;
  t.stream = g;
  copy_bandwidth(t);
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

/// The expert-weight probes' device buffers (fp8q_hold_probe, fp8q_ring_probe): `in` holds
/// [128, 5120, 8192] bf16 bits, 64 Mi normal values (one in 16,384 times 64) repeated over it
/// at an odd offset per copy, so that no two rows of 5120 or 8192 columns repeat each other
/// exactly; `out` as many bytes; `sc` and `inv` 128 * 8192 f32; `ws` a workspace of ws_bytes.
struct expert_buffers {
  static constexpr std::size_t n = std::size_t{128} * 5120 * 8192;
  static constexpr std::size_t ws_bytes = std::size_t{64} << 20;
  std::uint16_t* in = nullptr;
  std::uint8_t* out = nullptr;
  float* sc = nullptr;
  float* inv = nullptr;
  void* ws = nullptr;
  expert_buffers() {
    const std::size_t n_gen = std::size_t{1} << 26;
    const auto h = normal_bf16(n_gen + 4096, [](std::size_t, std::mt19937& r) { return (r() & 0x3fff) == 0 ? 64.f : 1.f; });
    cuda_ok(cudaMalloc(&in, n * 2));
    cuda_ok(cudaMalloc(&out, n));
    cuda_ok(cudaMalloc(&sc, 128 * 8192 * 4));
    cuda_ok(cudaMalloc(&inv, 128 * 8192 * 4));
    cuda_ok(cudaMalloc(&ws, ws_bytes));
    for (std::size_t at = 0, k = 0; at < n; at += n_gen, ++k) {
      const std::size_t len = n - at < n_gen ? n - at : n_gen;
      cuda_ok(cudaMemcpy(in + at, h.data() + (k * 37) % 4096, len * 2, cudaMemcpyHostToDevice));
    }
  }
};

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
