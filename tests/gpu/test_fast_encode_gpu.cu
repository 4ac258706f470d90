// The branch-free encoder (fp8q/detail/fast_encode.hpp) and the fnuz-through-OCP-converter
// candidate (fp8q/detail/cuda/fnuz_convert.hpp) on the device, against the device's own
// fp8q::encode (the definition; tests/gpu/test_convert_gpu.cu shows it equal to the host's):
//   (1) every f32 pattern x {e4m3fn, e4m3fnuz, e5m2, e5m2fnuz} x {saturate, propagate}:
//       fast::encode_bits (encode's NaN rule) and fast::encode_word (encode_scaled's rule:
//       canonical NaN first), each against its reference, and fast::encode_word_in_range (the
//       rowwise kernel's form for rows whose amax bounds every product) on every group of four
//       whose magnitudes are below the first overflowing one;
//   (2) stochastic rounding on 2^28 inputs per format and policy, both NaN rules;
//   (3) fnuz_word_via_ocp for e4m3fnuz and e5m2fnuz (saturate) on every f32 pattern (sm_89+);
//       and the kernels' hardware word path for e4m3fn and e5m2 (gpu::encode_words and
//       gpu::encode_words_in_range under convert_path::hardware, over backend::hw_encode_word_sat,
//       and over the two pairs joined by a permute, hw_join::permute)
//       on every f32 pattern;
//   (4) a report, not a check: a one-warp-per-row bf16 -> fp8 kernel (16384 x 5120, 4 rotating
//       inputs so L2 holds none, CUDA-event median of 20 runs) with the fast encoder, the
//       hardware conversion, today's encode and the fnuz candidate, as GB/s and as a fraction of
//       a copy kernel of the same traffic measured in the same run.
// Every comparison runs on the device; mismatches are counted with the lowest input and up to 8
// examples kept.
//
//   test_fast_encode_gpu [--device N] [--no-bench]
//
// Exit: 0 all equal, 1 any mismatch or CUDA error, 77 no GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "fp8q/convert.hpp"
#include "fp8q/detail/cuda/fnuz_convert.hpp"
#include "fp8q/detail/fast_encode.hpp"
#include "fp8q/device.hpp"
#include "fp8q/scale.hpp"
#include "gpu_check.hpp"

#include "fp8q/detail/gpu/tile.hpp"  // after device.hpp, which declares its backend

namespace {

using fp8q::format;
using fp8q::overflow;
using gpu_check::cuda_ok;
using gpu_check::launch_ok;
namespace fast = fp8q::detail::fast;

__host__ __device__ inline float f32_of(std::uint32_t u) { return __builtin_bit_cast(float, u); }

constexpr std::uint64_t all_groups = std::uint64_t{1} << 30;  // groups of 4 consecutive patterns
constexpr std::uint64_t sr_count = std::uint64_t{1} << 28;
constexpr std::uint64_t sr_seed = 0x5EEDF8ull;

// Mismatch bookkeeping on the device, per kind of check.
constexpr int max_kinds = 4;
constexpr int max_examples = 8;
struct example {
  std::uint32_t input, want, got, kind;
};
struct tally {
  unsigned long long count[max_kinds];
  unsigned long long lowest[max_kinds];
  unsigned int examples;
  example ex[max_examples];
};

__device__ void record(tally* t, int kind, std::uint32_t u, std::uint32_t want, std::uint32_t got) {
  atomicAdd(&t->count[kind], 1ull);
  atomicMin(&t->lowest[kind], static_cast<unsigned long long>(u));
  const unsigned slot = atomicAdd(&t->examples, 1u);
  if (slot < max_examples) t->ex[slot] = example{u, want, got, static_cast<std::uint32_t>(kind)};
}

// The four consecutive f32 patterns of group g (u: bits, v: values), and whether all four
// magnitudes lie below F's first overflowing one (where the in-range encoders apply).
template <format F>
__device__ bool group_inputs(std::uint64_t g, std::uint32_t (&u)[4], float (&v)[4]) {
  bool in_range = true;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    u[j] = static_cast<std::uint32_t>(4 * g + j);
    v[j] = f32_of(u[j]);
    in_range = in_range && fast::in_range_magnitude<F>(u[j] & 0x7fffffffu);
  }
  return in_range;
}

// (1) kinds: 0 elements vs encode, 1 words vs encode(canonical_nan(x)), 2 the in-range word
// (encode_word_in_range, signs from the inputs) where all four magnitudes are below the first
// overflowing one, vs the same.
template <format F, overflow Ov>
__global__ void fast_all_inputs(tally* t) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t g = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; g < all_groups; g += stride) {
    float v[4];
    std::uint32_t u[4];
    const bool in_range = group_inputs<F>(g, u, v);
    const std::uint32_t w = fast::encode_word<F, Ov, fast::nan_rule::canonical>(v);
    const std::uint32_t wr = in_range ? fast::encode_word_in_range<F>(v, fast::gather_byte<3>(u[0], u[1], u[2], u[3])) : 0u;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::uint32_t want = fp8q::encode<F>(v[j], Ov).bits;
      const std::uint32_t got = fast::encode_bits<F, Ov>(u[j]);
      if (got != want) record(t, 0, u[j], want, got);
      const std::uint32_t want_c = fp8q::encode<F>(fp8q::canonical_nan(v[j]), Ov).bits;
      const std::uint32_t got_c = (w >> (8 * j)) & 0xffu;
      if (got_c != want_c) record(t, 1, u[j], want_c, got_c);
      const std::uint32_t got_r = (wr >> (8 * j)) & 0xffu;
      if (in_range && got_r != want_c) record(t, 2, u[j], want_c, got_r);
    }
  }
}

// (2) kinds: 0 encode's NaN rule, 1 canonical NaN. Input i is the pattern i * 0x9E3779B1.
template <format F>
__global__ void fast_stochastic(overflow ov, tally* t) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < sr_count; i += stride) {
    const auto u = static_cast<std::uint32_t>(i * 0x9E3779B1u);
    const float x = f32_of(u);
    const std::uint32_t r = fp8q::stochastic_bits(sr_seed, i);
    const std::uint32_t want = fp8q::encode_stochastic<F>(x, r, ov).bits;
    const std::uint32_t got = fast::encode_stochastic<F>(x, r, ov);
    if (got != want) record(t, 0, u, want, got);
    const std::uint32_t want_c = fp8q::encode_stochastic<F>(fp8q::canonical_nan(x), r, ov).bits;
    const std::uint32_t got_c = fast::encode_stochastic<F, fast::nan_rule::canonical>(x, r, ov);
    if (got_c != want_c) record(t, 1, u, want_c, got_c);
  }
}

// (3) kind 0: the candidate against encode(canonical_nan(x), saturate).
template <format F>
__global__ void fnuz_ocp_all_inputs(tally* t) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t g = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; g < all_groups; g += stride) {
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = f32_of(static_cast<std::uint32_t>(4 * g + j));
    const std::uint32_t w = fp8q::detail::nv::fnuz_word_via_ocp<F>(v);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::uint32_t want = fp8q::encode<F>(fp8q::canonical_nan(v[j]), overflow::saturate).bits;
      const std::uint32_t got = (w >> (8 * j)) & 0xffu;
      if (got != want) record(t, 0, static_cast<std::uint32_t>(4 * g + j), want, got);
    }
  }
}

// (3) kinds: 0 encode_words, 1 encode_words_in_range where all four magnitudes are below the
// first overflowing one; both against encode(canonical_nan(x), saturate). J: how a word's two
// conversions are joined (the converter's own word, or two pairs and a byte permute, which
// group_row_spans' unpadded kernel takes).
template <format F, fp8q::detail::gpu::hw_join J>
__global__ void hw_words_all_inputs(tally* t) {
  namespace dg = fp8q::detail::gpu;
  constexpr fp8q::spec S{.out = F};
  constexpr fp8q::tuning T{.convert = fp8q::convert_path::hardware};
  static_assert(dg::use_hw_convert<S, T>(), "the hardware word path");
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t g = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; g < all_groups; g += stride) {
    float v[4];
    std::uint32_t u[4];
    const bool in_range = group_inputs<F>(g, u, v);
    std::uint32_t w[1] = {};
    dg::encode_words<S, T, J>(v, w, 0, [](int) { return std::uint64_t{0}; });
    std::uint32_t wr[1] = {};
    if (in_range) {
      const std::uint32_t signs[1] = {fast::gather_byte<3>(u[0], u[1], u[2], u[3])};
      dg::encode_words_in_range<S, T, J>(v, signs, wr);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::uint32_t want = fp8q::encode<F>(fp8q::canonical_nan(v[j]), overflow::saturate).bits;
      const std::uint32_t got = (w[0] >> (8 * j)) & 0xffu;
      if (got != want) record(t, 0, u[j], want, got);
      const std::uint32_t got_r = (wr[0] >> (8 * j)) & 0xffu;
      if (in_range && got_r != want) record(t, 1, u[j], want, got_r);
    }
  }
}

struct gpu {
  int blocks = 0;
  cudaStream_t stream = nullptr;
};

// Runs `launch(tally*)`, prints one line per kind, returns true when nothing differed.
template <class Launch>
bool run_check(const gpu& g, const char* what, const char* const* kinds, int n_kinds,
               unsigned long long inputs, Launch&& launch) {
  const auto t0 = std::chrono::steady_clock::now();
  gpu_check::device_buffer<tally> d(1);
  tally init{};
  for (int k = 0; k < max_kinds; ++k) init.lowest[k] = ~0ull;
  cuda_ok(cudaMemcpyAsync(d.get(), &init, sizeof(init), cudaMemcpyHostToDevice, g.stream));
  launch(d.get());
  launch_ok();
  tally r{};
  cuda_ok(cudaMemcpyAsync(&r, d.get(), sizeof(r), cudaMemcpyDeviceToHost, g.stream));
  cuda_ok(cudaStreamSynchronize(g.stream));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool ok = true;
  for (int k = 0; k < n_kinds; ++k) {
    std::printf("%s, %s: %llu inputs, %llu mismatches", what, kinds[k], inputs, r.count[k]);
    if (r.count[k] != 0) std::printf(" (lowest input 0x%08llx)", r.lowest[k]);
    std::printf("\n");
    ok = ok && r.count[k] == 0;
  }
  for (unsigned e = 0; e < std::min<unsigned>(r.examples, max_examples); ++e) {
    std::printf("  %s input 0x%08x (%g): want 0x%02x got 0x%02x\n", kinds[r.ex[e].kind],
                r.ex[e].input, static_cast<double>(f32_of(r.ex[e].input)), r.ex[e].want, r.ex[e].got);
  }
  std::printf("  %.2f s\n", s);
  std::fflush(stdout);
  return ok;
}

template <class Fn>
void for_each_fast_format(Fn&& fn) {
  fn(std::integral_constant<format, format::e4m3fn>{});
  fn(std::integral_constant<format, format::e4m3fnuz>{});
  fn(std::integral_constant<format, format::e5m2>{});
  fn(std::integral_constant<format, format::e5m2fnuz>{});
}

// ---- (4) throughput probe ---------------------------------------------------------------------

constexpr int bench_rows = 16384;
constexpr int bench_cols = 5120;
constexpr int vecs_per_lane = bench_cols / 8 / 32;  // 16-byte vectors of 8 bf16 per lane: 20

struct alignas(16) u32x4 {
  std::uint32_t x, y, z, w;
};

enum class variant { copy, fast_e4m3fn, fast_e4m3fnuz, hw_e4m3fn, today_e4m3fn, ocp_e4m3fnuz };

__device__ inline void widen8(const u32x4& r, float (&v)[8]) {
  const std::uint32_t w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    v[2 * k] = f32_of(w[k] << 16);
    v[2 * k + 1] = f32_of(w[k] & 0xffff0000u);
  }
}

template <variant V>
__device__ inline uint2 encode8(const float (&x)[8], float s) {
  float v[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) v[k] = x[k] * s;
  std::uint32_t w[2] = {};
  if constexpr (V == variant::fast_e4m3fn) {
    fast::encode_words<format::e4m3fn, overflow::saturate>(v, w);
  } else if constexpr (V == variant::fast_e4m3fnuz) {
    fast::encode_words<format::e4m3fnuz, overflow::saturate>(v, w);
  } else if constexpr (V == variant::hw_e4m3fn) {
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const std::uint32_t x4 = fp8q::detail::nv::ocp_word<format::e4m3fn>(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
      const std::uint32_t mask = fp8q::nan_byte_mask<format::e4m3fn>(x4);
      w[k] = (x4 & ~mask) | (0x7f7f7f7fu & mask);
    }
  } else if constexpr (V == variant::today_e4m3fn) {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      w[k / 4] |= std::uint32_t{fp8q::encode<format::e4m3fn>(fp8q::canonical_nan(v[k]), overflow::saturate).bits}
                  << (8 * (k % 4));
    }
  } else if constexpr (V == variant::ocp_e4m3fnuz) {
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const float four[4] = {v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]};
      w[k] = fp8q::detail::nv::fnuz_word_via_ocp<format::e4m3fnuz>(four);
    }
  }
  return make_uint2(w[0], w[1]);
}

// One warp per row, the row in registers: amax, scale = max / amax, encode, store. `copy` stores
// the high byte of every bf16 instead (same loads and stores, no arithmetic).
template <variant V>
__global__ void __launch_bounds__(256) row_kernel(const u32x4* in, uint2* out) {
  const int row = blockIdx.x * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= bench_rows) return;
  const u32x4* src = in + static_cast<std::size_t>(row) * (bench_cols / 8);
  uint2* dst = out + static_cast<std::size_t>(row) * (bench_cols / 8);
  u32x4 r[vecs_per_lane];
#pragma unroll
  for (int k = 0; k < vecs_per_lane; ++k) r[k] = src[k * 32 + lane];
  if constexpr (V == variant::copy) {
#pragma unroll
    for (int k = 0; k < vecs_per_lane; ++k) {
      dst[k * 32 + lane] = make_uint2(__byte_perm(r[k].x, r[k].y, 0x7531), __byte_perm(r[k].z, r[k].w, 0x7531));
    }
  } else {
    std::uint32_t amax = 0;
#pragma unroll
    for (int k = 0; k < vecs_per_lane; ++k) {
      const std::uint32_t w[4] = {r[k].x, r[k].y, r[k].z, r[k].w};
#pragma unroll
      for (int j = 0; j < 4; ++j) amax = max(amax, max((w[j] << 1) >> 17, (w[j] >> 16) & 0x7fffu));
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) amax = max(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    constexpr float fmax = V == variant::fast_e4m3fnuz || V == variant::ocp_e4m3fnuz ? 240.0f : 448.0f;
    const float a = f32_of(amax << 16);
    const float s = a > 0.0f ? fmax / a : 1.0f;
#pragma unroll
    for (int k = 0; k < vecs_per_lane; ++k) {
      float x[8];
      widen8(r[k], x);
      dst[k * 32 + lane] = encode8<V>(x, s);
    }
  }
}

double bench_variant(const gpu& g, variant which, const std::vector<u32x4*>& inputs, uint2* out) {
  auto launch = [&](const u32x4* in) {
    const dim3 grid(bench_rows / 8), block(256);
    switch (which) {
      case variant::copy: row_kernel<variant::copy><<<grid, block, 0, g.stream>>>(in, out); break;
      case variant::fast_e4m3fn: row_kernel<variant::fast_e4m3fn><<<grid, block, 0, g.stream>>>(in, out); break;
      case variant::fast_e4m3fnuz: row_kernel<variant::fast_e4m3fnuz><<<grid, block, 0, g.stream>>>(in, out); break;
      case variant::hw_e4m3fn: row_kernel<variant::hw_e4m3fn><<<grid, block, 0, g.stream>>>(in, out); break;
      case variant::today_e4m3fn: row_kernel<variant::today_e4m3fn><<<grid, block, 0, g.stream>>>(in, out); break;
      case variant::ocp_e4m3fnuz: row_kernel<variant::ocp_e4m3fnuz><<<grid, block, 0, g.stream>>>(in, out); break;
    }
    launch_ok();
  };
  for (int w = 0; w < 4; ++w) launch(inputs[w % inputs.size()]);
  cudaEvent_t e0, e1;
  cuda_ok(cudaEventCreate(&e0));
  cuda_ok(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int run = 0; run < 20; ++run) {
    cuda_ok(cudaEventRecord(e0, g.stream));
    launch(inputs[run % inputs.size()]);
    cuda_ok(cudaEventRecord(e1, g.stream));
    cuda_ok(cudaEventSynchronize(e1));
    float t = 0;
    cuda_ok(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  cuda_ok(cudaEventDestroy(e0));
  cuda_ok(cudaEventDestroy(e1));
  std::sort(ms.begin(), ms.end());
  return (ms[9] + ms[10]) / 2;
}

__global__ void fill_bf16(u32x4* p, std::uint64_t n, std::uint32_t salt) {
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += std::uint64_t{gridDim.x} * blockDim.x) {
    auto word = [&](std::uint64_t k) {
      // two bf16 of moderate magnitude and either sign from a hash (no NaN, no Inf)
      const std::uint32_t h = fp8q::stochastic_bits(salt, k);
      return (h & 0x80ff80ffu) | 0x3c003c00u;
    };
    p[i] = u32x4{word(4 * i), word(4 * i + 1), word(4 * i + 2), word(4 * i + 3)};
  }
}

void run_bench(const gpu& g) {
  const std::uint64_t vecs = std::uint64_t{bench_rows} * bench_cols / 8;
  std::vector<u32x4*> inputs(4);
  for (int k = 0; k < 4; ++k) {
    cuda_ok(cudaMalloc(&inputs[k], vecs * sizeof(u32x4)));
    fill_bf16<<<g.blocks, 256, 0, g.stream>>>(inputs[k], vecs, 17u + k);
    launch_ok();
  }
  uint2* out = nullptr;
  cuda_ok(cudaMalloc(&out, vecs * sizeof(uint2)));
  cuda_ok(cudaStreamSynchronize(g.stream));
  const double bytes = static_cast<double>(bench_rows) * bench_cols * 3.0;  // 2 read + 1 written
  struct item {
    variant v;
    const char* name;
  };
  const item items[] = {{variant::copy, "copy (same traffic)"},
                        {variant::fast_e4m3fn, "e4m3fn fast software encoder"},
                        {variant::hw_e4m3fn, "e4m3fn hardware cvt"},
                        {variant::today_e4m3fn, "e4m3fn today's encode"},
                        {variant::fast_e4m3fnuz, "e4m3fnuz fast software encoder"},
                        {variant::ocp_e4m3fnuz, "e4m3fnuz via OCP cvt (candidate)"}};
  std::printf("throughput probe: %d x %d bf16 -> fp8, one warp per row, 4 rotating inputs, median of 20\n",
              bench_rows, bench_cols);
  double copy_ms = 0;
  for (const item& it : items) {
    const double ms = bench_variant(g, it.v, inputs, out);
    if (it.v == variant::copy) copy_ms = ms;
    std::printf("  %-34s %8.1f us  %7.1f GB/s  %.3f of copy\n", it.name, ms * 1e3, bytes / (ms * 1e6),
                copy_ms / ms);
  }
  for (u32x4* p : inputs) cudaFree(p);
  cudaFree(out);
}

const char* const nearest_kinds[] = {"elements (encode's NaN rule)", "words (encode_scaled's NaN rule)",
                                     "in-range words (magnitudes below the first overflow)"};
const char* const sr_kinds[] = {"encode's NaN rule", "canonical NaN"};
const char* const ocp_kinds[] = {"vs encode(canonical_nan(x), saturate)"};
const char* const hw_word_kinds[] = {"encode_words vs encode(canonical_nan(x), saturate)",
                                     "encode_words_in_range, in-range words, vs the same"};

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
  bool bench = true;
  for (int i = 1; i < argc; ++i) bench = bench && std::strcmp(argv[i], "--no-bench") != 0;
  const auto t0 = std::chrono::steady_clock::now();
  const int dev = parse_device(argc, argv, count);
  fp8q::device_info info{};
  if (fp8q::query_device(dev, &info) != fp8q::status::success) {
    std::printf("device %d: query failed\n", dev);
    return 1;
  }
  std::printf("device %d: %s, arch %s, %d SMs\n", dev, info.name, info.arch_name, info.multiprocessors);
  cuda_ok(cudaSetDevice(dev));
  gpu g;
  g.blocks = std::max(1, info.multiprocessors) * 8;
  cuda_ok(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  bool ok = true;

  for_each_fast_format([&](auto tag) {
    constexpr format F = decltype(tag)::value;
    char what[96];
    std::snprintf(what, sizeof what, "fast %s saturate, all 2^32 inputs", fp8q::to_string(F));
    ok = run_check(g, what, nearest_kinds, 3, 1ull << 32, [&](tally* t) {
      fast_all_inputs<F, overflow::saturate><<<g.blocks, 256, 0, g.stream>>>(t);
    }) && ok;
    std::snprintf(what, sizeof what, "fast %s propagate, all 2^32 inputs", fp8q::to_string(F));
    ok = run_check(g, what, nearest_kinds, 3, 1ull << 32, [&](tally* t) {
      fast_all_inputs<F, overflow::propagate><<<g.blocks, 256, 0, g.stream>>>(t);
    }) && ok;
    for (overflow ov : {overflow::saturate, overflow::propagate}) {
      std::snprintf(what, sizeof what, "fast stochastic %s %s, 2^28 inputs", fp8q::to_string(F),
                    fp8q::to_string(ov));
      ok = run_check(g, what, sr_kinds, 2, sr_count, [&](tally* t) {
        fast_stochastic<F><<<g.blocks, 256, 0, g.stream>>>(ov, t);
      }) && ok;
    }
  });
  // (3) needs the FP8 conversion instructions (sm_89+); elsewhere cuda_fp8.h emulates them,
  // which says nothing about the hardware.
  if (info.arch.vendor == fp8q::gpu_vendor::nvidia && info.arch.version >= 89) {
    ok = run_check(g, "e4m3fnuz via OCP cvt, all 2^32 inputs", ocp_kinds, 1, 1ull << 32, [&](tally* t) {
      fnuz_ocp_all_inputs<format::e4m3fnuz><<<g.blocks, 256, 0, g.stream>>>(t);
    }) && ok;
    ok = run_check(g, "e5m2fnuz via OCP cvt, all 2^32 inputs", ocp_kinds, 1, 1ull << 32, [&](tally* t) {
      fnuz_ocp_all_inputs<format::e5m2fnuz><<<g.blocks, 256, 0, g.stream>>>(t);
    }) && ok;
    using fp8q::detail::gpu::hw_join;
    ok = run_check(g, "e4m3fn hardware words, all 2^32 inputs", hw_word_kinds, 2, 1ull << 32, [&](tally* t) {
      hw_words_all_inputs<format::e4m3fn, hw_join::converter><<<g.blocks, 256, 0, g.stream>>>(t);
    }) && ok;
    ok = run_check(g, "e5m2 hardware words, all 2^32 inputs", hw_word_kinds, 2, 1ull << 32, [&](tally* t) {
      hw_words_all_inputs<format::e5m2, hw_join::converter><<<g.blocks, 256, 0, g.stream>>>(t);
    }) && ok;
    ok = run_check(g, "e4m3fn hardware pairs joined by a permute, all 2^32 inputs", hw_word_kinds, 2, 1ull << 32,
                   [&](tally* t) {
                     hw_words_all_inputs<format::e4m3fn, hw_join::permute><<<g.blocks, 256, 0, g.stream>>>(t);
                   }) && ok;
    ok = run_check(g, "e5m2 hardware pairs joined by a permute, all 2^32 inputs", hw_word_kinds, 2, 1ull << 32,
                   [&](tally* t) {
                     hw_words_all_inputs<format::e5m2, hw_join::permute><<<g.blocks, 256, 0, g.stream>>>(t);
                   }) && ok;
    if (bench) run_bench(g);
  } else {
    std::printf("fnuz via OCP cvt and the throughput probe skipped: no FP8 conversion instructions\n");
  }
  cuda_ok(cudaStreamDestroy(g.stream));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s in %.1f s\n", ok ? "PASS" : "FAIL", s);
  return ok ? 0 : 1;
}
