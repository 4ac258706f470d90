// fp8q_group_row_exp: an experiment on group_row_fused's per-row pipeline (not part of fp8q).
// A copy of the kernel restricted to the lean path (bf16 -> e4m3fn, power-of-2 scales,
// unpadded, N % 8 == 0, the row in registers), with three switches:
//   Depth  0: registers refilled from device memory as units are cast (the unstaged kernel);
//          1: the next row staged in shared memory (the library's staged kernel); 2: two rows.
//   Early  the staged copy of row k + Depth is issued as soon as row k leaves its slot, not
//          after row k's fold (the library issues it after the fold).
//   OneBar one barrier per row: the maxima go to one of three buffers by row and every thread
//          computes the scales its units need, instead of a barrier, G threads computing the
//          scales, and a second barrier.
// Each line prints the output hash next to the library's, 8192 x 16640, the benchmark's offsets.
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "fp8q/gpu/quantize.hpp"
#include "probe_util.hpp"

namespace fq = fp8q;
using namespace probe;
using namespace fp8q::detail::gpu;
namespace backend = fp8q::backend;
using fp8q::matrix_view;

constexpr fq::spec grp{.out = fq::format::e4m3fn, .granularity = fq::granularity::group_row, .power_of_2 = true};
using In = fq::bf16;
constexpr int U = unit_elems<In>;
constexpr fq::tuning TR = group_row_fused<grp, fq::tuning{}, In>::R;

struct exp_shared {
  group_row_shared base;
  std::uint32_t amax3[3][group_row_fused_max_groups];
};

// The lanes of a wave that hold units of one group, maxed: a wave-wide max where the wave holds
// one group; else the library's match + reduction, or (Scan) a segmented scan over shuffles.
template <bool Scan>
__device__ inline std::uint32_t wgm(std::uint32_t v, std::uint32_t place, int wave) {
  if (place & unit_place::uniform) return backend::wave_max(v);
  if constexpr (Scan) {
#pragma unroll
    for (int k = 0; k < 5; ++k) {
      const std::uint32_t w = __shfl_up_sync(0xffffffffu, v, 1 << k);
      if ((place >> (unit_place::steps_shift + k)) & 1u) v = v > w ? v : w;
    }
    return v;
  } else {
    return wave_group_max(v, place, wave);
  }
}

template <bool Scan>
__device__ inline void fold_b(std::uint32_t* amax, int G, const u32x4& raw, std::uint32_t place, int wave) {
  const int g = unit_place::group(place);
  const int split = unit_place::split(place);
  u32x4 r = raw;
  if (split != 0) {
    const u32x4 m = below_mask16(split);
    const std::uint32_t v2 = amax16_bits<In>(unit_amax16(u32x4{raw.x & ~m.x, raw.y & ~m.y, raw.z & ~m.z, raw.w & ~m.w}, 0));
    const int h = unit_place::next(place);
    if (h < G) backend::shared_max(&amax[h], v2);
    r = u32x4{raw.x & m.x, raw.y & m.y, raw.z & m.z, raw.w & m.w};
  }
  std::uint32_t v = amax16_bits<In>(unit_amax16(r, 0));
  v = wgm<Scan>(v, place, wave);
  if (place & unit_place::run_end) backend::shared_max(&amax[g], v);
}

__device__ inline void cast_b(const std::uint32_t* amax, int G, const u32x4& raw, std::uint32_t place, int c0,
                              std::uint8_t* dst) {
  constexpr fq::spec S = grp;
  const int g = unit_place::group(place);
  const int split = unit_place::split(place);
  const std::uint32_t a = amax[g];
  const float sc = group_scale<S>(a);
  bool in_range = in_range_group<S>(a, sc);
  float y[U];
  widen_unit<In, U>(raw, y);
#pragma unroll
  for (int k = 0; k < U; ++k) y[k] *= sc;
  const int h = unit_place::next(place);
  if (split != 0) {
    const std::uint32_t a2 = h < G ? amax[h] : 0u;
    const float sc2 = h < G ? group_scale<S>(a2) : 0.0f;
    in_range = in_range && (h >= G || in_range_group<S>(a2, sc2));
    float x[U];
    widen_unit<In, U>(raw, x);
#pragma unroll
    for (int k = 0; k < U; ++k) y[k] = k < split ? y[k] : x[k] * sc2;
  }
  std::uint32_t w[U / 4];
  encode_scaled_unit<S, TR, In, U>(raw, y, in_range, w, 0, 0);
  store_words<U / 4>(dst + c0, w);
}

// Calls: waves off the lean path go to the library's out-of-line fold and cast from the unrolled
// loop (as the library kernel did before cb2de3c); RT: the block size read at run time
// (blockDim.x); Pad: cast_fast told at run time whether the output is padded.
template <int Items, int MaxThreads, int MinBlocks, int Depth, bool Early, bool OneBar, bool Scan = false,
          bool Calls = false, bool RT = false, bool Pad = false>
__global__ void __launch_bounds__(MaxThreads, MinBlocks)
    exp_kernel(matrix_view<const In> in, fq::quantized<grp> out, fq::group_offsets gs, unsigned* bad) {
  constexpr fq::spec S = grp;
  const int Threads = RT ? static_cast<int>(blockDim.x) : MaxThreads;
  const bool padded = Pad ? gs.align > 1 : false;
  extern __shared__ u32x4 dyn[];
  exp_shared& X = *reinterpret_cast<exp_shared*>(dyn);
  group_row_shared& s = X.base;
  u32x4* slots = dyn + sizeof(exp_shared) / sizeof(u32x4);  // [Depth][units]
  const int tid = static_cast<int>(threadIdx.x);
  const int wave = 32;
  const int lane = tid % wave;
  const std::int64_t M = in.rows;
  const int N = static_cast<int>(in.cols);
  const int G = static_cast<int>(gs.count);
  const int units = N / U;
  const std::int64_t stride = gridDim.x;
  std::int64_t row = blockIdx.x;
  auto src_of = [&](std::int64_t r) { return in.data + in.offset(0, r, 0); };
  auto stage = [&](std::int64_t r, int slot) {
    if (r < M) {
      const In* p = src_of(r);
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        const int u = tid + i * Threads;
        if (u < units) backend::async_copy16(&slots[slot * units + u], p + u * U, 16);
      }
    }
    backend::async_commit();
  };
  auto take = [&](int slot, unit_raw<In, U> (&keep)[Items]) {
#pragma unroll
    for (int i = 0; i < Items; ++i)
      if (tid + i * Threads < units) keep[i] = slots[slot * units + tid + i * Threads];
  };

  unit_raw<In, U> keep[Items];
  if constexpr (Depth == 0) {
    if (row < M) load_units<In, U, Items>(src_of(row), tid, Threads, units, keep);
  } else {
#pragma unroll
    for (int d = 0; d < Depth; ++d) stage(row + d * stride, d);
  }
  {
    auto* scratch_a = reinterpret_cast<std::int32_t*>(s.amax);
    for (int g = tid; g < G; g += Threads) s.end[g] = gs.ends[g] > 0 ? gs.ends[g] : 0;
    backend::block_sync();
    const std::int32_t* c = block_scan(s.end, scratch_a, G, Threads, [](std::int32_t x, std::int32_t y) { return x > y ? x : y; });
    for (int g = tid; g < G; g += Threads) s.end[g] = c[g] < N ? c[g] : N;
    backend::block_sync();
    for (int g = tid; g < G; g += Threads) {
      s.amax[g] = 0;
      s.cast[g] = group_cast{0.0f, 0u, 0, 0};
      X.amax3[0][g] = X.amax3[1][g] = X.amax3[2][g] = 0;
    }
    backend::block_sync();
  }
  std::uint32_t place[Items];
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    place[i] = unit_place::of<U>(s, G, tid + i * Threads, units, lane, wave);
    if (tid + i * Threads < units && !(place[i] & unit_place::fast)) atomicOr(bad, 1u);
  }
  if constexpr (Depth > 0) {
    backend::async_wait<Depth - 1>();
    take(0, keep);
    if constexpr (Early) stage(row + Depth * stride, 0);
  }
  int k = 0;
  while (row < M) {
    const std::int64_t next = row + stride;
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data + out.data.offset(0, row, 0));  // [cols] FP8
    const int buf = k % 3;
#pragma unroll
    for (int i = 0; i < Items; ++i)
      if (tid + i * Threads < units) {
        if (Calls && !(place[i] & unit_place::fast)) fold_unit<In, U>(s, G, keep[i], place[i], (tid + i * Threads) * U, wave);
        else if constexpr (OneBar) fold_b<Scan>(X.amax3[buf], G, keep[i], place[i], wave);
        else if constexpr (Scan) fold_b<Scan>(s.amax, G, keep[i], place[i], wave);
        else fold_fast<In, U>(s, G, keep[i], place[i], wave);
      }
    if constexpr (Depth > 0 && !Early) stage(row + Depth * stride, (k + Depth) % Depth);
    backend::block_sync();
    if constexpr (OneBar) {
      for (int g = tid; g < G; g += Threads) {
        const std::uint32_t a = X.amax3[buf][g];
        X.amax3[(k + 2) % 3][g] = 0;  // last read by row k - 1's cast, before this row's barrier
        if (s.end[g] > group_begin(s, g)) write_scales<S>(out, 0, g, row, group_scale<S>(a));
      }
    } else {
      for (int g = tid; g < G; g += Threads) {
        const std::uint32_t a = s.amax[g];
        s.amax[g] = 0;
        const float sc = group_scale<S>(a);
        s.cast[g].scale = sc;
        s.cast[g].in_range = in_range_group<S>(a, sc) ? 1u : 0u;
        if (s.end[g] > group_begin(s, g)) write_scales<S>(out, 0, g, row, sc);
      }
      backend::block_sync();
    }
    const In* next_src = next < M ? src_of(next) : nullptr;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int u = tid + i * Threads;
      if (u < units) {
        if (Calls && !(place[i] & unit_place::fast)) cast_grouped_unit<S, TR, In, U>(s, G, padded, keep[i], place[i], u * U, dst, 0, 0);
        else if constexpr (OneBar) cast_b(X.amax3[buf], G, keep[i], place[i], u * U, dst);
        else cast_fast<S, TR, In, U>(s, G, padded, keep[i], place[i], u * U, dst, 0, 0);
        if constexpr (Depth == 0)
          if (next_src != nullptr) keep[i] = load_unit<In, U>(next_src + u * U);
      }
    }
    if constexpr (Depth > 0) {
      backend::async_wait<Depth - 1>();
      take((k + 1) % Depth, keep);
      if constexpr (Early) stage(row + (Depth + 1) * stride, (k + 1) % Depth);
    }
    row = next;
    ++k;
  }
  if constexpr (Depth > 0) backend::async_wait<0>();
}

int main() {
  const i64 M = 8192, N = 16640;
  const std::size_t n = static_cast<std::size_t>(M * N);
  const auto h = normal_bf16(n, [&](std::size_t i, std::mt19937&) { return std::exp2(static_cast<float>((static_cast<i64>(i) / N) % 13) - 6.0f); });
  fq::bf16* in = nullptr; std::uint8_t* out = nullptr; float* sc = nullptr; float* inv = nullptr; std::int32_t* d_ends = nullptr;
  unsigned* bad = nullptr;
  cuda_ok(cudaMalloc(&in, n * 2)); cuda_ok(cudaMalloc(&out, n)); cuda_ok(cudaMalloc(&sc, 1024 * M * 4)); cuda_ok(cudaMalloc(&inv, 1024 * M * 4));
  cuda_ok(cudaMalloc(&d_ends, 4096)); cuda_ok(cudaMalloc(&bad, 4));
  cuda_ok(cudaMemcpy(in, h.data(), n * 2, cudaMemcpyHostToDevice));
  cudaStream_t st; cuda_ok(cudaStreamCreate(&st));
  const int iters = std::getenv("EXP_ITERS") ? std::atoi(std::getenv("EXP_ITERS")) : 25;
  timer tm(st, iters, iters < 25 ? 0 : 3);
  const double copy_bw = copy_bandwidth(tm);
  use_probe_stream(st, tm);
  const double bytes = 3.0 * M * N;
  int sms = 0; cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const char* only = std::getenv("EXP_ONLY");

  auto make_q = [&](i64 G) {
    fq::quantized<grp> q{};
    q.data = fq::row_major(reinterpret_cast<typename fq::quantized<grp>::data_t*>(out), M, N);
    q.scale = fq::row_major(sc, G, M);
    q.inverse = fq::row_major(inv, G, M);
    return q;
  };
  auto poison = [&](i64 G) { cuda_ok(poison_memset(out, 0xa5, n)); cuda_ok(poison_memset(sc, 0xa5, G * M * 4)); cuda_ok(poison_memset(inv, 0xa5, G * M * 4)); };
  auto hash_out = [&](i64 G) { return fetched_fnv({{out, n}, {sc, static_cast<std::size_t>(G * M * 4)}, {inv, static_cast<std::size_t>(G * M * 4)}}); };

  auto run_lib = [&](const char* label, const std::vector<std::int32_t>& ends) {
    const i64 G = static_cast<i64>(ends.size());
    cuda_ok(cudaMemcpy(d_ends, ends.data(), G * 4, cudaMemcpyHostToDevice));
    const auto iv = fq::row_major<const fq::bf16>(in, M, N);
    auto q = make_q(G);
    auto call = [&] { if (fq::quantize<grp>(iv, q, {.stream = st, .groups = {d_ends, G}}) != fq::status::success) std::exit(1); };
    poison(G); call(); cuda_ok(cudaStreamSynchronize(st));
    const std::uint64_t hh = hash_out(G);
    const float t = tm.median_us(call);
    std::printf("%-24s %-26s G=%-4lld %8.1f us  frac_copy %.3f  hash %016llx\n", label, "library", (long long)G, t, bytes / (t * 1e-6) / copy_bw, (unsigned long long)hh);
  };
  auto run_exp = [&](const char* label, auto kernel, int threads, int depth, const char* name, const std::vector<std::int32_t>& ends) {
    if (only != nullptr && std::string(name).find(only) == std::string::npos) return;
    const i64 G = static_cast<i64>(ends.size());
    cuda_ok(cudaMemcpy(d_ends, ends.data(), G * 4, cudaMemcpyHostToDevice));
    const int units = static_cast<int>(N / U);
    const int smem = static_cast<int>(sizeof(exp_shared)) + depth * units * 16;
    cuda_ok(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per = 0; cuda_ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, threads, smem));
    const unsigned grid = static_cast<unsigned>(std::min<i64>(M, static_cast<i64>(per) * sms));
    const auto iv = fq::row_major<const fq::bf16>(in, M, N);
    auto q = make_q(G);
    const fq::group_offsets gs{d_ends, G};
    cuda_ok(cudaMemset(bad, 0, 4));
    auto call = [&] { kernel<<<grid, threads, smem, st>>>(iv, q, gs, bad); };
    poison(G); call(); cuda_ok(cudaStreamSynchronize(st)); cuda_ok(cudaGetLastError());
    const std::uint64_t hh = hash_out(G);
    unsigned b = 0; cuda_ok(cudaMemcpy(&b, bad, 4, cudaMemcpyDeviceToHost));
    const float t = tm.median_us(call);
    std::printf("%-24s %-26s G=%-4lld %8.1f us  frac_copy %.3f  hash %016llx  blocks/SM %d%s\n", label, name, (long long)G, t, bytes / (t * 1e-6) / copy_bw, (unsigned long long)hh, per, b ? "  NOT ALL FAST" : "");
  };
  // The library's kernel launched by hand at a given block size (the family's launch aside).
  using fam = group_row_fused<grp, fq::tuning{}, In>;
  std::printf("family: fit %d, block_threads %d, shared %d\n", fam::fit(N), fam::block_threads(N, fam::fit(N), 32),
              fam::shared_bytes(fam::fit(N), fam::block_threads(N, fam::fit(N), 32)));
  auto run_direct = [&](const char* label, int threads, const std::vector<std::int32_t>& ends) {
    const i64 G = static_cast<i64>(ends.size());
    cuda_ok(cudaMemcpy(d_ends, ends.data(), G * 4, cudaMemcpyHostToDevice));
    auto kernel = group_row_fused_kernel<spec_c<grp>, tuning_c<fam::R>, In, 5>;
    const int smem = fam::shared_bytes(5, threads);
    cuda_ok(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per = 0; cuda_ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, threads, smem));
    cudaFuncAttributes fa{}; cuda_ok(cudaFuncGetAttributes(&fa, kernel));
    const unsigned grid = static_cast<unsigned>(std::min<i64>(M, static_cast<i64>(per) * sms));
    const auto iv = fq::row_major<const fq::bf16>(in, M, N);
    auto q = make_q(G);
    const fq::group_offsets gs{d_ends, G};
    auto call = [&] { kernel<<<grid, threads, smem, st>>>(iv, q, gs, bad, 0); };
    poison(G); call(); cuda_ok(cudaStreamSynchronize(st)); cuda_ok(cudaGetLastError());
    const std::uint64_t hh = hash_out(G);
    const float t = tm.median_us(call);
    char name[64]; std::snprintf(name, sizeof name, "library kernel at %d", threads);
    std::printf("%-24s %-26s G=%-4lld %8.1f us  frac_copy %.3f  hash %016llx  blocks/SM %d regs %d\n", label, name, (long long)G, t,
                bytes / (t * 1e-6) / copy_bw, (unsigned long long)hh, per, fa.numRegs);
  };
  struct offs { const char* label; std::vector<std::int32_t> ends; };
  const std::vector<offs> cases = {{"one group", {static_cast<std::int32_t>(N)}},
                                   {"bench offsets", bench_ends(N, 16, true)},
                                   {"bench offsets", bench_ends(N, 64, true)},
                                   {"random, no empty group", bench_ends(N, 64, false)},
                                   {"bench offsets", bench_ends(N, 256, true)}};
  const int only_case = std::getenv("EXP_CASE") ? std::atoi(std::getenv("EXP_CASE")) : -1;
  for (int ci = 0; ci < static_cast<int>(cases.size()); ++ci) {
    if (only_case >= 0 && ci != only_case) continue;
    const auto& c = cases[static_cast<std::size_t>(ci)];
    run_lib(c.label, c.ends);
    run_direct(c.label, 416, c.ends);
    run_direct(c.label, 448, c.ends);
    run_exp(c.label, exp_kernel<5, 416, 2, 1, true, false>, 416, 1, "416 d1 early", c.ends);
    run_exp(c.label, exp_kernel<5, 416, 2, 1, true, false, true, true>, 416, 1, "416 d1 early scan +calls", c.ends);
    run_exp(c.label, exp_kernel<5, 448, 2, 1, true, false, true, false, true>, 416, 1, "416 d1 early scan +rt", c.ends);
    run_exp(c.label, exp_kernel<5, 416, 2, 1, true, false, true, false, false, true>, 416, 1, "416 d1 early scan +pad", c.ends);
    run_exp(c.label, exp_kernel<5, 448, 2, 1, true, false, true, true, true, true>, 416, 1, "416 d1 early scan +all", c.ends);
    run_exp(c.label, exp_kernel<5, 416, 2, 1, true, false, true>, 416, 1, "416 d1 early scan", c.ends);
    run_exp(c.label, exp_kernel<5, 416, 2, 1, false, true>, 416, 1, "416 d1 onebar", c.ends);
    run_exp(c.label, exp_kernel<5, 416, 2, 1, false, true, true>, 416, 1, "416 d1 onebar scan", c.ends);
    run_exp(c.label, exp_kernel<5, 416, 2, 1, true, true, true>, 416, 1, "416 d1 early onebar scan", c.ends);
    run_exp(c.label, exp_kernel<5, 512, 2, 1, true, false, true>, 512, 1, "512 d1 early scan", c.ends);
    run_exp(c.label, exp_kernel<5, 512, 2, 1, false, true, true>, 512, 1, "512 d1 onebar scan", c.ends);
  }
  return 0;
}
