// fp8q_col_probe: colwise and tensorwise, hardware converter against the software encoder (`/sw`),
// 16384x5120 bf16 -> e4m3fn (colwise into column- and row-major outputs): CUDA-event median of 41
// calls after 3 warm-ups, fraction of a 1 GiB copy timed in the same process, and a hash of the
// output bytes and scales (equal hashes: equal bytes). An optional argument keeps the cases whose
// label contains it. CUDA only; docs/design.md ("Colwise /sw") has its results. Labels name the
// tuning: threads and tile, or the path by name ("hold", "relay").
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include "fp8q/gpu/quantize.hpp"
#include "probe_util.hpp"

namespace fq = fp8q;
using namespace probe;
constexpr fq::spec col{.out = fq::format::e4m3fn, .granularity = fq::granularity::col};
constexpr fq::spec col_fnuz{.out = fq::format::e4m3fnuz, .granularity = fq::granularity::col};
constexpr fq::spec ten{.out = fq::format::e4m3fn, .granularity = fq::granularity::tensor};
template <fq::tuning T> struct tn { static constexpr fq::tuning value = T; };
template <fq::spec S> struct sp { static constexpr fq::spec value = S; };
constexpr fq::tuning t_sw{.convert = fq::convert_path::software};
constexpr fq::tuning t_hw{.convert = fq::convert_path::hardware};
constexpr fq::tuning with_convert(fq::tuning t, fq::convert_path c) {
  t.convert = c;
  return t;
}

int main(int argc, char** argv) {
  const i64 M = 16384, N = 5120;
  const std::size_t n = static_cast<std::size_t>(M * N);
  const auto h = normal_bf16(n, [](std::size_t, std::mt19937& r) { return (r() & 0x3fff) == 0 ? 64.f : 1.f; });
  fq::bf16* in = nullptr; std::uint8_t* out = nullptr; float* sc = nullptr; float* inv = nullptr; void* ws = nullptr;
  cuda_ok(cudaMalloc(&in, n * 2)); cuda_ok(cudaMalloc(&out, n)); cuda_ok(cudaMalloc(&sc, N * 4)); cuda_ok(cudaMalloc(&inv, N * 4));
  const std::size_t wsb = 64 << 20; cuda_ok(cudaMalloc(&ws, wsb));
  cuda_ok(cudaMemcpy(in, h.data(), n * 2, cudaMemcpyHostToDevice));
  cudaStream_t st; cuda_ok(cudaStreamCreate(&st));
  const int iters = std::getenv("EXP_ITERS") ? std::atoi(std::getenv("EXP_ITERS")) : 41;
  timer tm(st, iters, 3);
  auto timeit = [&](auto&& fn) { return tm.median_us(fn); };
  const double copy_bw = copy_bandwidth(tm);
  use_probe_stream(st, tm);
  const double bytes = 3.0 * M * N;
  const char* only = argc > 1 ? argv[1] : nullptr;
  auto run = [&](const char* label, auto spec_tag, auto tuning_tag, fq::layout order) {
    if (only != nullptr && std::string(label).find(only) == std::string::npos) return;
    constexpr fq::spec S = decltype(spec_tag)::value;
    constexpr fq::tuning T = decltype(tuning_tag)::value;
    const auto iv = fq::row_major<const fq::bf16>(in, M, N);
    const i64 sn = S.granularity == fq::granularity::col ? N : 1;
    fq::quantized<S> q{};
    auto* d = reinterpret_cast<typename fq::quantized<S>::data_t*>(out);
    q.data = order == fq::layout::row_major ? fq::row_major(d, M, N) : fq::col_major(d, M, N);
    q.scale = fq::row_major(sc, 1, sn);
    q.inverse = fq::row_major(inv, 1, sn);
    auto call = [&] { auto s = fq::quantize<S, T>(iv, q, {.stream = st, .workspace = ws, .workspace_bytes = wsb}); if (s != fq::status::success) { std::printf("status %d\n", (int)s); std::exit(1); } };
    cuda_ok(poison_memset(out, 0xa5, n)); cuda_ok(poison_memset(sc, 0xa5, sn * 4)); cuda_ok(poison_memset(inv, 0xa5, sn * 4));
    call(); cuda_ok(cudaStreamSynchronize(st));
    const std::uint64_t hh = fetched_fnv({{out, n}, {sc, static_cast<std::size_t>(sn * 4)}});
    const float t = timeit(call);
    std::printf("%-28s %8.1f us  frac_copy %.3f  hash %016llx\n", label, t, bytes / (t * 1e-6) / copy_bw, (unsigned long long)hh);
  };
  // a colwise tuning with either encoder (the tile and block shapes of docs/design.md's table)
  auto shape = [&](const char* label, auto tuning_tag) {
    constexpr fq::tuning T = decltype(tuning_tag)::value;
    constexpr fq::tuning hw = with_convert(T, fq::convert_path::hardware);
    constexpr fq::tuning sw = with_convert(T, fq::convert_path::software);
    run((std::string("colwise hw ") + label).c_str(), sp<col>{}, tn<hw>{}, fq::layout::col_major);
    run((std::string("colwise sw ") + label).c_str(), sp<col>{}, tn<sw>{}, fq::layout::col_major);
  };
  for (int rep = 0; rep < 2; ++rep) {
    run("colwise hw", sp<col>{}, tn<t_hw>{}, fq::layout::col_major);
    run("colwise sw", sp<col>{}, tn<t_sw>{}, fq::layout::col_major);
    run("colwise fnuz", sp<col_fnuz>{}, tn<fq::tuning{}>{}, fq::layout::col_major);
    run("colwise_row hw", sp<col>{}, tn<t_hw>{}, fq::layout::row_major);
    run("colwise_row sw", sp<col>{}, tn<t_sw>{}, fq::layout::row_major);
    run("tensor hw", sp<ten>{}, tn<t_hw>{}, fq::layout::row_major);
    run("tensor sw", sp<ten>{}, tn<t_sw>{}, fq::layout::row_major);
    shape("t128 256x64", tn<fq::tuning{.threads = 128}>{});
    shape("t512 256x64", tn<fq::tuning{.threads = 512}>{});
    shape("t256 128x64", tn<fq::tuning{.tile_rows = 128, .tile_cols = 64}>{});
    shape("t256 128x128", tn<fq::tuning{.tile_rows = 128, .tile_cols = 128}>{});
    shape("t256 64x128", tn<fq::tuning{.tile_rows = 64, .tile_cols = 128}>{});
    shape("t256 512x64", tn<fq::tuning{.tile_rows = 512, .tile_cols = 64}>{});
    shape("t128 128x64", tn<fq::tuning{.threads = 128, .tile_rows = 128, .tile_cols = 64}>{});
    shape("t512 256x128", tn<fq::tuning{.threads = 512, .tile_rows = 256, .tile_cols = 128}>{});
    shape("t256 256x32", tn<fq::tuning{.tile_rows = 256, .tile_cols = 32}>{});
    shape("t128 256x32", tn<fq::tuning{.threads = 128, .tile_rows = 256, .tile_cols = 32}>{});
    // the held tiles by name (the walk's colwise on the H200 since 2026-12-03), by block size,
    // and the relay beside them: where the software encoder's cost sits in the one-read kernel
    shape("hold t64", tn<fq::tuning{.threads = 64, .path = fq::gpu_path::col_hold}>{});
    shape("hold t128", tn<fq::tuning{.threads = 128, .path = fq::gpu_path::col_hold}>{});
    shape("hold t256", tn<fq::tuning{.threads = 256, .path = fq::gpu_path::col_hold}>{});
    shape("hold t128 direct", tn<fq::tuning{.threads = 128, .store = fq::store_path::direct,
                                            .path = fq::gpu_path::col_hold}>{});
    shape("relay t256", tn<fq::tuning{.path = fq::gpu_path::col_relay}>{});
  }
  return 0;
}
