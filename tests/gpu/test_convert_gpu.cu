// Device conversion test: fp8q::encode on the GPU is byte-identical to fp8q::encode on the host
// for every f32 input, every format and both overflow policies; stochastic rounding likewise on a
// 2^28-input subset. Also prints each visible device's native FP8 formats, and a report (not a
// check) of how NVIDIA's hardware conversion compares with fp8q's software encode.
//
//   test_convert_gpu [--device N]     (N: device to run the conversions on, default 0)
//
// Exit: 0 all equal, 1 any mismatch or CUDA error, 77 no GPU. 12 s on an H200 with a 16-core
// host (measured 2026-11-29; 2m41s of host CPU time): the host reference (4.3e10 encodes) is the
// bulk of it and runs on every core while the device works on the next chunk.
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "fp8q/convert.hpp"
#include "fp8q/device.hpp"
#include "gpu_check.hpp"

namespace {

using fp8q::format;
using fp8q::overflow;
using gpu_check::cuda_ok;
using gpu_check::launch_ok;

__host__ __device__ inline float f32_of(std::uint32_t u) { return __builtin_bit_cast(float, u); }

// The stochastic subset: input i is the f32 pattern i * 0x9E3779B1 mod 2^32. The multiplier is
// odd, so the inputs are distinct, and they cover every sign and exponent.
__host__ __device__ constexpr std::uint32_t subset_input(std::uint64_t i) {
  return static_cast<std::uint32_t>(i * 0x9E3779B1u);
}
constexpr std::uint64_t sr_seed = 0x5EEDF8ull;
constexpr std::uint64_t sr_count = std::uint64_t{1} << 28;

constexpr std::uint64_t all_inputs = std::uint64_t{1} << 32;
constexpr std::uint64_t chunk = std::uint64_t{1} << 30;  // bytes per device/host buffer

template <class Fn>
void for_each_format(Fn&& fn) {
  fn(std::integral_constant<format, format::e4m3fn>{});
  fn(std::integral_constant<format, format::e4m3fnuz>{});
  fn(std::integral_constant<format, format::e5m2>{});
  fn(std::integral_constant<format, format::e5m2fnuz>{});
  fn(std::integral_constant<format, format::e8m0fnu>{});
}
constexpr overflow policies[] = {overflow::saturate, overflow::propagate};

// out: [n] bytes; out[i] = encode(f32 pattern base + i).
template <format F>
__global__ void encode_range(std::uint64_t base, std::uint64_t n, overflow ov, std::uint8_t* out) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = fp8q::encode<F>(f32_of(static_cast<std::uint32_t>(base + i)), ov).bits;
  }
}

// out: [n] bytes; out[i] = stochastic encode of subset input i with the bits of (sr_seed, i).
template <format F>
__global__ void encode_subset_stochastic(std::uint64_t n, overflow ov, std::uint8_t* out) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = fp8q::encode_stochastic<F>(f32_of(subset_input(i)), fp8q::stochastic_bits(sr_seed, i),
                                        ov)
                 .bits;
  }
}

// Counts the indices where a and b differ; *first = the lowest one. counters: [count, first].
__global__ void diff_bytes(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t n,
                           unsigned long long* counters) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  unsigned long long count = 0;
  unsigned long long lowest = ~0ull;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (a[i] != b[i]) {
      if (count++ == 0) lowest = i;
    }
  }
  if (count != 0) {
    atomicAdd(&counters[0], count);
    atomicMin(&counters[1], lowest);
  }
}

// ---- device launch helpers -----------------------------------------------------------------

struct gpu {
  int blocks = 0;  // grid for the grid-stride kernels: enough to fill every SM
  cudaStream_t stream = nullptr;
};

// Runs `launch(out)` twice, into buffers poisoned with 0x5A and 0xA5, then counts the bytes where
// the two runs differ (an unwritten byte keeps its poison, and the poisons differ) into
// counters[0..1]. The result stays in a.
template <class Launch>
void run_twice(const gpu& g, std::uint8_t* a, std::uint8_t* b, std::uint64_t n,
               unsigned long long* counters, Launch&& launch) {
  gpu_check::poison(a, n, gpu_check::poison_a, g.stream);
  launch(a);
  launch_ok();
  gpu_check::poison(b, n, gpu_check::poison_b, g.stream);
  launch(b);
  launch_ok();
  diff_bytes<<<g.blocks, 256, 0, g.stream>>>(a, b, n, counters);
  launch_ok();
}

struct buffers {
  gpu_check::device_buffer<std::uint8_t> a{chunk}, b{chunk};
  gpu_check::pinned_buffer<std::uint8_t> host[2] = {gpu_check::pinned_buffer<std::uint8_t>(chunk),
                                                    gpu_check::pinned_buffer<std::uint8_t>(chunk)};
  gpu_check::device_buffer<unsigned long long> counters{64};  // [chunk][count, first]
  gpu_check::pinned_buffer<unsigned long long> host_counters{64};
  cudaEvent_t ready[2] = {};
  buffers() {
    for (cudaEvent_t& e : ready) cuda_ok(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~buffers() {
    for (cudaEvent_t e : ready) cudaEventDestroy(e);
  }
};

void reset_counters(const gpu& g, buffers& buf) {
  // count 0, first ~0: memset 0 then set every odd word to all ones.
  std::vector<unsigned long long> init(64);
  for (std::size_t i = 0; i < init.size(); ++i) init[i] = i % 2 ? ~0ull : 0ull;
  cuda_ok(cudaMemcpyAsync(buf.counters.get(), init.data(), init.size() * sizeof(init[0]),
                          cudaMemcpyHostToDevice, g.stream));
  cuda_ok(cudaStreamSynchronize(g.stream));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Reports the poison comparison of every chunk; true when every byte was written.
bool report_poison(const char* what, buffers& buf, int chunks, std::uint64_t chunk_size) {
  unsigned long long differ = 0;
  unsigned long long first = ~0ull;
  for (int c = 0; c < chunks; ++c) {
    differ += buf.host_counters[2 * c];
    if (buf.host_counters[2 * c] != 0) {
      first = std::min(first, buf.host_counters[2 * c + 1] + c * chunk_size);
    }
  }
  if (differ != 0) {
    std::printf("%s: runs over 0x%02x and 0x%02x poison differ at %llu bytes (first index %llu)\n",
                what, gpu_check::poison_a, gpu_check::poison_b, differ, first);
  }
  return differ == 0;
}

// ---- (b) all 2^32 inputs, round to nearest even --------------------------------------------

template <format F>
bool check_all_inputs(const gpu& g, buffers& buf, overflow ov) {
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int chunks = static_cast<int>(all_inputs / chunk);
  reset_counters(g, buf);
  // Device work for chunk c, then its copy into host[c % 2]; the host compares chunk c while the
  // device works on chunk c + 1.
  auto enqueue = [&](int c) {
    const std::uint64_t base = static_cast<std::uint64_t>(c) * chunk;
    run_twice(g, buf.a.get(), buf.b.get(), chunk, buf.counters.get() + 2 * c, [&](std::uint8_t* out) {
      encode_range<F><<<g.blocks, 256, 0, g.stream>>>(base, chunk, ov, out);
    });
    cuda_ok(cudaMemcpyAsync(buf.host[c % 2].get(), buf.a.get(), chunk, cudaMemcpyDeviceToHost,
                            g.stream));
    cuda_ok(cudaEventRecord(buf.ready[c % 2], g.stream));
  };
  gpu_check::mismatch total;
  enqueue(0);
  for (int c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) enqueue(c + 1);
    cuda_ok(cudaEventSynchronize(buf.ready[c % 2]));
    const std::uint64_t base = static_cast<std::uint64_t>(c) * chunk;
    gpu_check::mismatch m = gpu_check::compare_bytes(buf.host[c % 2].get(), chunk, [&](std::uint64_t i) {
      return fp8q::encode<F>(f32_of(static_cast<std::uint32_t>(base + i)), ov).bits;
    });
    m.first += base;
    total.merge(m);
  }
  cuda_ok(cudaMemcpyAsync(buf.host_counters.get(), buf.counters.get(), 64 * sizeof(unsigned long long),
                          cudaMemcpyDeviceToHost, g.stream));
  cuda_ok(cudaStreamSynchronize(g.stream));
  const std::string what =
      std::string("device encode ") + fp8q::to_string(F) + ' ' + fp8q::to_string(ov);
  bool ok = gpu_check::report(what.c_str(), all_inputs, total);
  if (total.count != 0) std::printf("  (index = f32 bit pattern of the input)\n");
  ok = report_poison(what.c_str(), buf, chunks, chunk) && ok;
  std::printf("  %.1f s\n", seconds_since(t0));
  return ok;
}

// ---- (c) stochastic rounding on a subset --------------------------------------------------

template <format F>
bool check_stochastic_subset(const gpu& g, buffers& buf, overflow ov) {
  reset_counters(g, buf);
  run_twice(g, buf.a.get(), buf.b.get(), sr_count, buf.counters.get(), [&](std::uint8_t* out) {
    encode_subset_stochastic<F><<<g.blocks, 256, 0, g.stream>>>(sr_count, ov, out);
  });
  cuda_ok(cudaMemcpyAsync(buf.host[0].get(), buf.a.get(), sr_count, cudaMemcpyDeviceToHost,
                          g.stream));
  cuda_ok(cudaMemcpyAsync(buf.host_counters.get(), buf.counters.get(), 2 * sizeof(unsigned long long),
                          cudaMemcpyDeviceToHost, g.stream));
  cuda_ok(cudaStreamSynchronize(g.stream));
  const gpu_check::mismatch m = gpu_check::compare_bytes(buf.host[0].get(), sr_count, [&](std::uint64_t i) {
    return fp8q::encode_stochastic<F>(f32_of(subset_input(i)), fp8q::stochastic_bits(sr_seed, i), ov)
        .bits;
  });
  const std::string what =
      std::string("device encode_stochastic ") + fp8q::to_string(F) + ' ' + fp8q::to_string(ov);
  bool ok = gpu_check::report(what.c_str(), sr_count, m);
  return report_poison(what.c_str(), buf, 1, sr_count) && ok;
}

// ---- (d) report: hardware cvt.rn.satfinite vs fp8q saturate ---------------------------------

// Mismatch counts by input class (0: not NaN, 1: NaN) and the lowest mismatching input of each.
struct hw_counts {
  unsigned long long count[2];
  unsigned long long first[2];
};

template <bool E5M2>
__device__ std::uint16_t hw_pair(float x0, float x1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  // Low byte converts .x, high byte .y.
  return __nv_cvt_float2_to_fp8x2(make_float2(x0, x1), __NV_SATFINITE, E5M2 ? __NV_E5M2 : __NV_E4M3);
#else
  (void)x0;
  (void)x1;
  return 0;
#endif
}

template <bool E5M2>
__global__ void hw_vs_software(hw_counts* r) {
  constexpr format F = E5M2 ? format::e5m2 : format::e4m3fn;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  unsigned long long count[2] = {0, 0};
  unsigned long long lowest[2] = {~0ull, ~0ull};
  for (std::uint64_t p = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; p < all_inputs / 2;
       p += stride) {
    const auto u0 = static_cast<std::uint32_t>(2 * p);
    const std::uint16_t hw = hw_pair<E5M2>(f32_of(u0), f32_of(u0 + 1));
    for (std::uint32_t k = 0; k < 2; ++k) {
      const std::uint32_t u = u0 + k;
      const auto h = static_cast<std::uint8_t>(hw >> (8 * k));
      const std::uint8_t s = fp8q::encode<F>(f32_of(u), overflow::saturate).bits;
      if (h != s) {
        const int cls = (u & 0x7FFFFFFFu) > 0x7F800000u ? 1 : 0;
        if (count[cls]++ == 0) lowest[cls] = u;
      }
    }
  }
  for (int cls = 0; cls < 2; ++cls) {
    if (count[cls] != 0) {
      atomicAdd(&r->count[cls], count[cls]);
      atomicMin(&r->first[cls], lowest[cls]);
    }
  }
}

// out: [n] hardware bytes for the inputs base .. base + n - 1 (base and n even).
template <bool E5M2>
__global__ void hw_range(std::uint32_t base, std::uint32_t n, std::uint8_t* out) {
  for (std::uint32_t p = blockIdx.x * blockDim.x + threadIdx.x; 2 * p < n; p += gridDim.x * blockDim.x) {
    const std::uint32_t u0 = base + 2 * p;
    const std::uint16_t hw = hw_pair<E5M2>(f32_of(u0), f32_of(u0 + 1));
    out[2 * p] = static_cast<std::uint8_t>(hw & 0xFF);
    out[2 * p + 1] = static_cast<std::uint8_t>(hw >> 8);
  }
}

template <bool E5M2>
void report_hardware(const gpu& g, buffers& buf) {
  constexpr format F = E5M2 ? format::e5m2 : format::e4m3fn;
  const auto t0 = std::chrono::steady_clock::now();
  gpu_check::device_buffer<hw_counts> d(1);
  const hw_counts init{{0, 0}, {~0ull, ~0ull}};
  cuda_ok(cudaMemcpyAsync(d.get(), &init, sizeof(init), cudaMemcpyHostToDevice, g.stream));
  hw_vs_software<E5M2><<<g.blocks, 256, 0, g.stream>>>(d.get());
  launch_ok();
  hw_counts r{};
  cuda_ok(cudaMemcpyAsync(&r, d.get(), sizeof(r), cudaMemcpyDeviceToHost, g.stream));
  cuda_ok(cudaStreamSynchronize(g.stream));
  std::printf("hardware cvt.rn.satfinite.%sx2.f32 vs fp8q %s saturate: %llu inputs, %llu mismatches"
              " (%llu on NaN inputs, %llu on other inputs)\n",
              E5M2 ? "e5m2" : "e4m3", fp8q::to_string(F), static_cast<unsigned long long>(all_inputs),
              r.count[0] + r.count[1], r.count[1], r.count[0]);
  // The first few mismatches of each class, in input order: hardware bytes for a window from the
  // class's first mismatch, fp8q's on the host.
  for (int cls = 0; cls < 2; ++cls) {
    if (r.count[cls] == 0) continue;
    constexpr std::uint32_t window = 1u << 20;
    const auto base = static_cast<std::uint32_t>(std::min<unsigned long long>(
        r.first[cls] & ~1ull, all_inputs - window));
    hw_range<E5M2><<<g.blocks, 256, 0, g.stream>>>(base, window, buf.a.get());
    launch_ok();
    cuda_ok(cudaMemcpyAsync(buf.host[0].get(), buf.a.get(), window, cudaMemcpyDeviceToHost, g.stream));
    cuda_ok(cudaStreamSynchronize(g.stream));
    int shown = 0;
    for (std::uint32_t i = 0; i < window && shown < 6; ++i) {
      const std::uint32_t u = base + i;
      const int c = (u & 0x7FFFFFFFu) > 0x7F800000u ? 1 : 0;
      const std::uint8_t s = fp8q::encode<F>(f32_of(u), overflow::saturate).bits;
      if (c == cls && buf.host[0][i] != s) {
        std::printf("  %s input 0x%08x (%g): hardware 0x%02x, fp8q 0x%02x\n", cls ? "NaN" : "   ",
                    u, static_cast<double>(f32_of(u)), buf.host[0][i], s);
        ++shown;
      }
    }
  }
  std::printf("  %.1f s\n", seconds_since(t0));
}

int parse_device(int argc, char** argv, int count) {
  int dev = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0) dev = std::atoi(argv[i + 1]);
  }
  if (dev < 0 || dev >= count) {
    std::printf("--device %d: only %d devices visible\n", dev, count);
    std::exit(1);
  }
  return dev;
}

}  // namespace

int main(int argc, char** argv) {
  const int count = gpu_check::devices_or_skip();
  if (count == 0) return gpu_check::skip_exit_code;
  const auto t0 = std::chrono::steady_clock::now();

  // (a) Every visible device is asked on its own: mixed machines exist, and scales computed for
  // the wrong family clip silently.
  fp8q::device_info chosen{};
  const int dev = parse_device(argc, argv, count);
  for (int d = 0; d < count; ++d) {
    fp8q::device_info info{};
    const fp8q::status st = fp8q::query_device(d, &info);
    if (st != fp8q::status::success) {
      std::printf("device %d: query failed: %s\n", d, fp8q::to_string(st));
      return 1;
    }
    std::printf("device %d: %s, arch %s (%s), fp8 family %s: e4m3 -> %s, e5m2 -> %s, %d SMs\n",
                info.index, info.name, info.arch_name, info.arch.valid ? "parsed" : "unknown",
                fp8q::to_string(info.arch.family), fp8q::to_string(fp8q::e4m3_of(info.arch.family)),
                fp8q::to_string(fp8q::e5m2_of(info.arch.family)), info.multiprocessors);
    if (d == dev) chosen = info;
  }
  std::printf("conversions run on device %d, host reference on %u threads\n", dev,
              gpu_check::host_threads());
  cuda_ok(cudaSetDevice(dev));

  gpu g;
  g.blocks = std::max(1, chosen.multiprocessors) * 8;
  cuda_ok(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  bool ok = true;
  {
    buffers buf;
    // (b)
    for_each_format([&](auto tag) {
      for (overflow ov : policies) ok = check_all_inputs<decltype(tag)::value>(g, buf, ov) && ok;
    });
    // (c)
    const auto t1 = std::chrono::steady_clock::now();
    for_each_format([&](auto tag) {
      for (overflow ov : policies) ok = check_stochastic_subset<decltype(tag)::value>(g, buf, ov) && ok;
    });
    std::printf("  stochastic: %.1f s\n", seconds_since(t1));
    // (d) A report for the decision whether the hardware path may replace the software one; it
    // does not affect the exit status.
    if (chosen.arch.vendor == fp8q::gpu_vendor::nvidia && chosen.arch.version >= 89) {
      report_hardware<false>(g, buf);
      report_hardware<true>(g, buf);
    } else {
      std::printf("hardware conversion report skipped: device has no FP8 conversion instructions\n");
    }
  }
  cuda_ok(cudaStreamDestroy(g.stream));
  std::printf("%s in %.1f s\n", ok ? "PASS" : "FAIL", seconds_since(t0));
  return ok ? 0 : 1;
}
