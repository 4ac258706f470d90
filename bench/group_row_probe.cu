// fp8q_group_row_probe: per-group rowwise (granularity::group_row) at the issue's shape, 8192 x
// 16640 bf16 -> e4m3fn, under offset patterns the benchmark does not vary (group 1 empty or not,
// boundaries on or off the 8-column unit grid, G = 1 and 256, padded outputs, the software
// encoder, e4m3fnuz, scales not powers of 2), beside plain rowwise and a 1 GiB device copy in the
// same process; CUDA-event median of 25 calls. Each line ends with a hash of the whole output
// (data, scales, inverse scales, padded ends), so two builds of the kernel can be compared byte
// for byte on these shapes (the bytes themselves are checked against the host by
// tests/gpu/test_grouped_gpu). EXP_ONLY=<text> runs the cases whose label holds it, EXP_ITERS=n
// times n calls (for a profiler). docs/design.md, "Per-group rowwise in one read".
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <random>
#include <source_location>
#include <string>
#include <vector>
#include "fp8q/gpu/quantize.hpp"
#include "probe_util.hpp"

namespace fq = fp8q;
using namespace probe;

constexpr fq::spec grp{.out = fq::format::e4m3fn, .granularity = fq::granularity::group_row, .power_of_2 = true};
constexpr fq::spec grp_np2{.out = fq::format::e4m3fn, .granularity = fq::granularity::group_row};
constexpr fq::spec grp_fnuz{.out = fq::format::e4m3fnuz, .granularity = fq::granularity::group_row, .power_of_2 = true};
constexpr fq::spec row{.out = fq::format::e4m3fn, .granularity = fq::granularity::row, .power_of_2 = true};
constexpr fq::tuning t_sw{.convert = fq::convert_path::software};

std::vector<std::int32_t> aligned_ends(i64 extent, i64 groups) {
  std::vector<std::int32_t> ends(groups);
  for (i64 g = 0; g < groups; ++g) ends[g] = static_cast<std::int32_t>(g + 1 == groups ? extent : extent * (g + 1) / groups / 8 * 8);
  return ends;
}

struct tn_dflt { static constexpr fq::tuning value{}; };
struct tn_512 { static constexpr fq::tuning value{.threads = 512}; };
struct tn_sw { static constexpr fq::tuning value = t_sw; };
struct sp_grp { static constexpr fq::spec value = grp; };
struct sp_np2 { static constexpr fq::spec value = grp_np2; };
struct sp_fnuz { static constexpr fq::spec value = grp_fnuz; };

int main() {
  const i64 M = 8192, N = 16640;
  const std::size_t n = static_cast<std::size_t>(M * N);
  const auto h = normal_bf16(n, [&](std::size_t i, std::mt19937&) { return std::exp2(static_cast<float>((static_cast<i64>(i) / N) % 13) - 6.0f); });
  fq::bf16* in = nullptr; std::uint8_t* out = nullptr; float* sc = nullptr; float* inv = nullptr; std::int32_t* d_ends = nullptr;
  cuda_ok(cudaMalloc(&in, n * 2)); cuda_ok(cudaMalloc(&out, n)); cuda_ok(cudaMalloc(&sc, 1024 * M * 4)); cuda_ok(cudaMalloc(&inv, 1024 * M * 4));
  cuda_ok(cudaMalloc(&d_ends, 4096));
  cuda_ok(cudaMemcpy(in, h.data(), n * 2, cudaMemcpyHostToDevice));
  cudaStream_t st; cuda_ok(cudaStreamCreate(&st));
  const int iters = std::getenv("EXP_ITERS") ? std::atoi(std::getenv("EXP_ITERS")) : 25;
  timer tm(st, iters, iters < 25 ? 0 : 3);
  auto timeit = [&](auto&& fn) { return tm.median_us(fn); };
  const double copy_bw = copy_bandwidth(tm);
  const double bytes = 3.0 * M * N;
  auto hash_out = [&](i64 G) {
    return hash_device({{out, n}, {sc, static_cast<std::size_t>(G * M * 4)}, {inv, static_cast<std::size_t>(G * M * 4)}});
  };
  const char* only = std::getenv("EXP_ONLY");
  auto run_group = [&](const char* label, auto spec_tag, auto tuning_tag, const std::vector<std::int32_t>& ends) {
    if (only != nullptr && std::string(label).find(only) == std::string::npos) return;
    constexpr fq::spec S = decltype(spec_tag)::value;
    constexpr fq::tuning T = decltype(tuning_tag)::value;
    const i64 G = static_cast<i64>(ends.size());
    cuda_ok(cudaMemcpy(d_ends, ends.data(), G * 4, cudaMemcpyHostToDevice));
    const auto iv = fq::row_major<const fq::bf16>(in, M, N);
    fq::quantized<S> q{};
    q.data = fq::row_major(reinterpret_cast<typename fq::quantized<S>::data_t*>(out), M, N);
    q.scale = fq::row_major(sc, G, M);
    q.inverse = fq::row_major(inv, G, M);
    auto call = [&] { auto s = fq::quantize<S, T>(iv, q, {.stream = st, .groups = {d_ends, G}}); if (s != fq::status::success) { std::printf("status %d\n", (int)s); std::exit(1); } };
    cuda_ok(cudaMemset(out, 0xa5, n)); cuda_ok(cudaMemset(sc, 0xa5, G * M * 4)); cuda_ok(cudaMemset(inv, 0xa5, G * M * 4));
    call(); cuda_ok(cudaStreamSynchronize(st));
    const std::uint64_t hh = hash_out(G);
    const float t = timeit(call);
    std::printf("%-34s G=%-4lld %8.1f us  frac_copy %.3f  hash %016llx\n", label, (long long)G, t, bytes / (t * 1e-6) / copy_bw, (unsigned long long)hh);
  };
  for (i64 G : {16, 64}) {
    run_group("bench offsets (group 1 empty)", sp_grp{}, tn_dflt{}, bench_ends(N, G, true));
    run_group("random, no empty group", sp_grp{}, tn_dflt{}, bench_ends(N, G, false));
    run_group("equal, multiples of 8", sp_grp{}, tn_dflt{}, aligned_ends(N, G));
  }
  {
    // padded outputs (align 16 and 128), G = 64 bench offsets: the output buffer is big enough
    for (i64 align : {16, 128}) {
      if (only != nullptr && std::string("padded").find(only) == std::string::npos) break;
      const auto ends = bench_ends(N, 64, true);
      const i64 G = 64, NP = N + G * (align - 1);
      std::uint8_t* pout = nullptr; std::int32_t* pends = nullptr;
      cuda_ok(cudaMalloc(&pout, static_cast<std::size_t>(M * NP))); cuda_ok(cudaMalloc(&pends, G * 4));
      cuda_ok(cudaMemcpy(d_ends, ends.data(), G * 4, cudaMemcpyHostToDevice));
      const auto iv = fq::row_major<const fq::bf16>(in, M, N);
      fq::quantized<grp> q{};
      q.data = fq::row_major(reinterpret_cast<typename fq::quantized<grp>::data_t*>(pout), M, NP);
      q.scale = fq::row_major(sc, G, M); q.inverse = fq::row_major(inv, G, M);
      auto call = [&] { if (fq::quantize<grp>(iv, q, {.stream = st, .groups = {d_ends, G, align, pends}}) != fq::status::success) std::exit(2); };
      cuda_ok(cudaMemset(pout, 0xa5, M * NP)); cuda_ok(cudaMemset(sc, 0xa5, G * M * 4)); cuda_ok(cudaMemset(inv, 0xa5, G * M * 4)); cuda_ok(cudaMemset(pends, 0xa5, G * 4));
      call(); cuda_ok(cudaStreamSynchronize(st));
      const std::uint64_t hh = hash_device({{pout, static_cast<std::size_t>(M * NP)},
                                            {sc, static_cast<std::size_t>(G * M * 4)},
                                            {pends, static_cast<std::size_t>(G * 4)}});
      const float t = timeit(call);
      std::printf("%-34s G=%-4lld %8.1f us  frac_copy %.3f  hash %016llx\n", align == 16 ? "padded align 16" : "padded align 128", (long long)G, t, bytes / (t * 1e-6) / copy_bw, (unsigned long long)hh);
      cuda_ok(cudaFree(pout)); cuda_ok(cudaFree(pends));
    }
  }
  run_group("512 threads: bench offsets", sp_grp{}, tn_512{}, bench_ends(N, 16, true));
  run_group("512 threads: bench offsets", sp_grp{}, tn_512{}, bench_ends(N, 64, true));
  run_group("512 threads: one group", sp_grp{}, tn_512{}, std::vector<std::int32_t>{static_cast<std::int32_t>(N)});
  run_group("one group", sp_grp{}, tn_dflt{}, std::vector<std::int32_t>{static_cast<std::int32_t>(N)});
  run_group("G=256 bench offsets", sp_grp{}, tn_dflt{}, bench_ends(N, 256, true));
  run_group("bench offsets, sw", sp_grp{}, tn_sw{}, bench_ends(N, 16, true));
  run_group("bench offsets, not pow2", sp_np2{}, tn_dflt{}, bench_ends(N, 16, true));
  run_group("bench offsets, e4m3fnuz", sp_fnuz{}, tn_dflt{}, bench_ends(N, 64, true));
  if (only == nullptr || std::string("plain rowwise").find(only) != std::string::npos) {
    const auto iv = fq::row_major<const fq::bf16>(in, M, N);
    fq::quantized<row> q{};
    q.data = fq::row_major(reinterpret_cast<typename fq::quantized<row>::data_t*>(out), M, N);
    q.scale = fq::row_major(sc, M, 1); q.inverse = fq::row_major(inv, M, 1);
    const float t = timeit([&] { (void)fq::quantize<row>(iv, q, {.stream = st}); });
    std::printf("%-34s        %8.1f us  frac_copy %.3f\n", "plain rowwise", t, bytes / (t * 1e-6) / copy_bw);
  }
  return 0;
}
