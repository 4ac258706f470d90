// fp8q_hold_probe: the held-tile families, which read the input once, against the ones that
// read it twice: rowwise into a column-major output (transpose-rhs, W^T) by row_band (one
// launch) and row_transpose (two); colwise (3D expert weights and 2D) by col_hold and col_relay
// (whose second read mostly hits L2). bf16 -> e4m3fn unless named: CUDA-event median of 41
// calls after 3 warm-ups, fraction of a 1 GiB copy timed in the same process, and a hash of the
// output bytes and scales computed on the device (equal hashes: equal bytes, with overwhelming
// odds). An optional argument keeps the cases whose label contains one of its comma-separated
// parts. FP8Q_PROBE_SMS=n runs it on n multiprocessors (probe_util.hpp). CUDA only;
// docs/design.md ("Holding tiles on chip") has its results.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>
#include "fp8q/gpu/quantize.hpp"
#include "probe_util.hpp"

namespace fq = fp8q;
using namespace probe;

// No-math held-tile kernels: the same pipeline (hold_and_cast), the same copies, tickets, counters
// and waits (nothing of a strip is written before every tile of it was read), with no amax and
// the encode replaced by each bf16's high byte: what the pipeline's structure allows, in the
// same process as the library. Full tiles only (the shapes below divide).
namespace gd = fp8q::detail::gpu;
__device__ inline void high_bytes(const gd::u32x4& v, std::uint32_t (&w)[2]) {
  w[0] = __byte_perm(v.x, v.y, 0x7531);
  w[1] = __byte_perm(v.z, v.w, 0x7531);
}

// Output bytes of a no-math kernel that are not their input's high byte, counted into *bad.
// in: [E, K, N] bf16 bits; out: [E, N, K] (transposed) or [E, K, N] bytes
__global__ void count_not_high(const std::uint16_t* in, const std::uint8_t* out, i64 E, i64 K, i64 N, bool transposed,
                               unsigned long long* bad) {
  unsigned long long n_bad = 0;
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < E * K * N;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 b = i / (K * N), r = (i / N) % K, c = i % N;
    const std::uint8_t got = transposed ? out[b * N * K + c * K + r] : out[i];
    n_bad += got != static_cast<std::uint8_t>(in[i] >> 8);
  }
  if (n_bad != 0) atomicAdd(bad, n_bad);
}

// Threads of the no-math kernels' blocks, as the families' default.
constexpr int bound_threads = 128;

// Band: transpose-rhs, in [E, K, N] bf16 row-major, out [E, N, K] bytes (tiles counted per band
// of rows). Otherwise 3D colwise, out [E, K, N] bytes row-major (tiles counted per column strip).
template <bool Band>
using bound_plan = std::conditional_t<Band, gd::band_plan, gd::strip_plan>;

template <bool Band>
__global__ void __launch_bounds__(bound_threads) bound_held_kernel(fq::matrix_view<const fq::bf16> in, std::uint8_t* out,
                                                         std::uint32_t* done, std::uint32_t* tickets,
                                                         bound_plan<Band> plan) {
  __shared__ gd::rt_shared sh[2];
  __shared__ gd::held_words words;
  const int tid = static_cast<int>(threadIdx.x);
  const i64 K = in.rows, N = in.cols;
  auto at = [&](i64 k) {
    if constexpr (Band) return gd::band_tile_at<8>(plan, k, K, N);
    else return gd::strip_tile_at<8, gd::rt_rows>(plan, k, K, N);
  };
  using tile_t = decltype(at(0));
  // the tile's counter, and the count that completes it
  auto counter = [&](const tile_t& t) {
    if constexpr (Band) return done + t.band;
    else return done + t.strip;
  };
  i64 needed = 0;
  if constexpr (Band) needed = plan.strips;
  else needed = plan.chunks;
  auto copy = [&](int slot, const tile_t& t) {
    gd::copy_transpose_tile<fq::bf16>(in, sh[slot], t.b, t.r0, t.c0, t.rows_here, t.cols_here, tid, bound_threads);
  };
  auto count = [&](int, const tile_t&) {};  // no amax: the pipeline's barrier and release only
  auto cast = [&](int slot, const tile_t& t) {
    if constexpr (Band) {
      std::uint8_t* base = out + t.b * N * K + t.c0 * K + t.r0;  // [cols][K] bytes: column c0, row r0
      constexpr int quads = gd::rt_rows / 4;
      for (int it = tid; it < quads * 8; it += bound_threads) {
        const int uc = it / quads, q = it % quads;
        std::uint32_t qw[4][2];
#pragma unroll
        for (int j = 0; j < 4; ++j) high_bytes(sh[slot].tile[4 * q + j][uc ^ (q & 7)], qw[j]);
        gd::store_quad_columns<8>(qw, base + (uc * 8) * K + 4 * q, K, 8);
      }
    } else {
      for (int it = tid; it < gd::rt_rows * 8; it += bound_threads) {
        const int r = it / 8, u = it % 8;
        std::uint32_t w[2];
        high_bytes(sh[slot].tile[r][gd::quad_tile_slot(r, u)], w);
        *reinterpret_cast<uint2*>(out + (t.b * K + t.r0 + r) * N + t.c0 + u * 8) = make_uint2(w[0], w[1]);
      }
    }
  };
  gd::hold_and_cast<false>(tickets, plan.items, words, at, copy, count, counter, needed, cast);
}

constexpr fq::spec row{.out = fq::format::e4m3fn, .granularity = fq::granularity::row};
constexpr fq::spec row_fnuz{.out = fq::format::e4m3fnuz, .granularity = fq::granularity::row};
constexpr fq::spec col{.out = fq::format::e4m3fn, .granularity = fq::granularity::col};
constexpr fq::spec row_pow2{.out = fq::format::e4m3fn, .granularity = fq::granularity::row, .power_of_2 = true};
template <fq::tuning T> struct tn { static constexpr fq::tuning value = T; };
template <fq::spec S> struct sp { static constexpr fq::spec value = S; };
constexpr fq::tuning with_threads(fq::tuning t, int threads) {
  t.threads = static_cast<std::int16_t>(threads);
  return t;
}
constexpr fq::tuning with_store(fq::tuning t, fq::store_path s) {
  t.store = s;
  return t;
}
constexpr fq::tuning by(fq::gpu_path p, fq::convert_path c = fq::convert_path::automatic) {
  fq::tuning t{};
  t.path = p;
  t.convert = c;
  return t;
}

int main(int argc, char** argv) {
  const expert_buffers buf;
  auto* in = reinterpret_cast<fq::bf16*>(buf.in);  // [128, 5120, 8192] bf16
  std::uint8_t* out = buf.out;
  float* sc = buf.sc;
  float* inv = buf.inv;
  void* ws = buf.ws;
  const std::size_t wsb = expert_buffers::ws_bytes;
  cudaStream_t st; cuda_ok(cudaStreamCreate(&st));
  const int iters = std::getenv("EXP_ITERS") ? std::atoi(std::getenv("EXP_ITERS")) : 41;
  timer tm(st, iters, 3);
  const double copy_bw = copy_bandwidth(tm);
  use_probe_stream(st, tm);
  // an optional argument: comma-separated parts of the labels to run
  const std::string only = argc > 1 ? argv[1] : "";
  auto skip = [&](const char* label) {
    if (only.empty()) return false;
    for (std::size_t at = 0; at <= only.size();) {
      const std::size_t end = std::min(only.find(',', at), only.size());
      if (end > at && std::string(label).find(only.substr(at, end - at)) != std::string::npos) return false;
      at = end + 1;
    }
    return true;
  };
  // E batch items of K x N (row-major) into (E, N, K): scales (E, K)
  auto run = [&](const char* label, auto spec_tag, auto tuning_tag, i64 E, i64 K, i64 N) {
    if (skip(label)) return;
    constexpr fq::spec S = decltype(spec_tag)::value;
    constexpr fq::tuning T = decltype(tuning_tag)::value;
    const std::size_t n = static_cast<std::size_t>(E * K * N);
    const auto iv = fq::batched(fq::row_major<const fq::bf16>(in, K, N), E);  // [E, K, N] bf16
    fq::quantized<S> q{};
    auto* d = reinterpret_cast<typename fq::quantized<S>::data_t*>(out);
    q.data = fq::batched(fq::col_major(d, K, N), E);            // [E, N, K] FP8
    q.scale = fq::batched(fq::row_major(sc, K, 1), E);          // [E, K] f32
    q.inverse = fq::batched(fq::row_major(inv, K, 1), E);       // [E, K] f32
    auto call = [&] {
      auto s = fq::quantize<S, T>(iv, q, {.stream = st, .workspace = ws, .workspace_bytes = wsb});
      if (s != fq::status::success) { std::printf("%s: status %d\n", label, (int)s); return false; }
      return true;
    };
    cuda_ok(poison_memset(out, 0xa5, n)); cuda_ok(poison_memset(sc, 0xa5, E * K * 4)); cuda_ok(poison_memset(inv, 0xa5, E * K * 4));
    if (!call()) return;
    cuda_ok(cudaStreamSynchronize(st));
    const std::uint64_t hh = device_hash({{out, n}, {sc, static_cast<std::size_t>(E * K * 4)}, {inv, static_cast<std::size_t>(E * K * 4)}});
    const float t = tm.median_us(call);
    const double bytes = 3.0 * static_cast<double>(n) + 8.0 * static_cast<double>(E * K);
    std::printf("%-34s %8.1f us  frac_copy %.3f  hash %016llx\n", label, t, bytes / (t * 1e-6) / copy_bw, (unsigned long long)hh);
  };
  // E batch items of K x N (row-major) colwise: scales (E, 1, N); the output in `order`
  auto run_col = [&](const char* label, auto tuning_tag, i64 E, i64 K, i64 N, fq::layout order) {
    if (skip(label)) return;
    constexpr fq::spec S = col;
    constexpr fq::tuning T = decltype(tuning_tag)::value;
    const std::size_t n = static_cast<std::size_t>(E * K * N);
    const auto iv = fq::batched(fq::row_major<const fq::bf16>(in, K, N), E);  // [E, K, N] bf16
    fq::quantized<S> q{};
    auto* d = reinterpret_cast<typename fq::quantized<S>::data_t*>(out);
    q.data = fq::batched(order == fq::layout::row_major ? fq::row_major(d, K, N) : fq::col_major(d, K, N), E);
    q.scale = fq::batched(fq::row_major(sc, 1, N), E);     // [E, 1, N] f32
    q.inverse = fq::batched(fq::row_major(inv, 1, N), E);  // [E, 1, N] f32
    auto call = [&] {
      auto s = fq::quantize<S, T>(iv, q, {.stream = st, .workspace = ws, .workspace_bytes = wsb});
      if (s != fq::status::success) { std::printf("%s: status %d\n", label, (int)s); return false; }
      return true;
    };
    cuda_ok(poison_memset(out, 0xa5, n)); cuda_ok(poison_memset(sc, 0xa5, E * N * 4)); cuda_ok(poison_memset(inv, 0xa5, E * N * 4));
    if (!call()) return;
    cuda_ok(cudaStreamSynchronize(st));
    const std::uint64_t hh = device_hash({{out, n}, {sc, static_cast<std::size_t>(E * N * 4)}, {inv, static_cast<std::size_t>(E * N * 4)}});
    const float t = tm.median_us(call);
    const double bytes = 3.0 * static_cast<double>(n) + 8.0 * static_cast<double>(E * N);
    std::printf("%-34s %8.1f us  frac_copy %.3f  hash %016llx\n", label, t, bytes / (t * 1e-6) / copy_bw, (unsigned long long)hh);
  };
  constexpr fq::tuning relay = by(fq::gpu_path::col_relay);
  constexpr fq::tuning hold = by(fq::gpu_path::col_hold);
  constexpr fq::tuning hold256 = with_threads(hold, 256);
  constexpr fq::tuning relay_sw = by(fq::gpu_path::col_relay, fq::convert_path::software);
  constexpr fq::tuning hold_sw = by(fq::gpu_path::col_hold, fq::convert_path::software);
  constexpr fq::tuning band = by(fq::gpu_path::row_band);
  constexpr fq::tuning band256 = with_threads(band, 256);
  constexpr fq::tuning two = by(fq::gpu_path::row_transpose);
  constexpr fq::tuning band_sw = by(fq::gpu_path::row_band, fq::convert_path::software);
  constexpr fq::tuning two_sw = by(fq::gpu_path::row_transpose, fq::convert_path::software);
  constexpr fq::tuning hold_direct = with_store(hold, fq::store_path::direct);
  constexpr fq::tuning hold_direct_sw = with_store(hold_sw, fq::store_path::direct);
  constexpr fq::tuning hold256_sw = with_threads(hold_sw, 256);
  constexpr fq::tuning hold_staged = with_store(hold, fq::store_path::staged);
  // the no-math held-tile kernels on E x K x N (full tiles), persistent grids as the families'
  auto run_bound = [&](const char* label, bool band, i64 E, i64 K, i64 N) {
    if (skip(label)) return;
    const auto iv = fq::batched(fq::row_major<const fq::bf16>(in, K, N), E);  // [E, K, N] bf16
    auto* counters = static_cast<std::uint32_t*>(ws);
    i64 items = 0, ncount = 0;
    const i64 chunks = K / gd::rt_rows;
    gd::band_plan bp{N / 64, chunks, E * chunks * (N / 64)};
    gd::strip_plan sp{chunks, N / 64, E * (N / 64) * chunks};
    items = band ? bp.items : sp.items;
    ncount = band ? E * bp.bands : E * sp.strips;
    int per_mp = 0, sms = 0;
    if (band) cuda_ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_mp, bound_held_kernel<true>, bound_threads, 0));
    else cuda_ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_mp, bound_held_kernel<false>, bound_threads, 0));
    cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const i64 grid = std::min<i64>(items, static_cast<i64>(per_mp) * sms);
    auto call = [&] {
      cuda_ok(cudaMemsetAsync(counters, 0, (ncount + 1) * 4, st));
      if (band) bound_held_kernel<true><<<static_cast<unsigned>(grid), bound_threads, 0, st>>>(iv, out, counters, counters + ncount, bp);
      else bound_held_kernel<false><<<static_cast<unsigned>(grid), bound_threads, 0, st>>>(iv, out, counters, counters + ncount, sp);
      return true;
    };
    const std::size_t n = static_cast<std::size_t>(E * K * N);
    cuda_ok(poison_memset(out, 0xa5, n));
    call();
    cuda_ok(cudaStreamSynchronize(st));
    cuda_ok(cudaGetLastError());
    // the bytes: every output byte is its input's high byte
    static unsigned long long* bad = nullptr;
    if (bad == nullptr) cuda_ok(cudaMalloc(&bad, 8));
    cuda_ok(cudaMemset(bad, 0, 8));
    count_not_high<<<2048, 256>>>(reinterpret_cast<const std::uint16_t*>(in), out, E, K, N, band, bad);
    unsigned long long n_bad = 0;
    cuda_ok(cudaMemcpy(&n_bad, bad, 8, cudaMemcpyDeviceToHost));
    const float t = tm.median_us(call);
    std::printf("%-34s %8.1f us  frac_copy %.3f  bytes wrong %llu  (%d blocks/SM)\n", label, t,
                3.0 * static_cast<double>(n) / (t * 1e-6) / copy_bw, n_bad, per_mp);
  };
  for (int rep = 0; rep < 2; ++rep) {
    run_bound("bound_held rhs 128x5120x8192", true, 128, 5120, 8192);
    run_bound("bound_held col3d 128x5120x8192", false, 128, 5120, 8192);
    run("rhs 128x5120x8192 auto", sp<row>{}, tn<fq::tuning{}>{}, 128, 5120, 8192);
    run("rhs 128x5120x8192 row_band", sp<row>{}, tn<band>{}, 128, 5120, 8192);
    run("rhs 128x5120x8192 pow2 row_band", sp<row_pow2>{}, tn<band>{}, 128, 5120, 8192);
    run("rhs 128x5120x8192 row_band t256", sp<row>{}, tn<band256>{}, 128, 5120, 8192);
    run("rhs 128x5120x8192 row_transpose", sp<row>{}, tn<two>{}, 128, 5120, 8192);
    run("rhs 128x5120x8192 row_band sw", sp<row>{}, tn<band_sw>{}, 128, 5120, 8192);
    run("rhs 128x5120x8192 row_transpose sw", sp<row>{}, tn<two_sw>{}, 128, 5120, 8192);
    run("rhs 128x5120x8192 fnuz row_band", sp<row_fnuz>{}, tn<band>{}, 128, 5120, 8192);
    run("rhs 128x5120x8192 fnuz row_transpose", sp<row_fnuz>{}, tn<two>{}, 128, 5120, 8192);
    run("2d 16384x5120 row_band", sp<row>{}, tn<band>{}, 1, 16384, 5120);
    run("2d 16384x5120 row_transpose", sp<row>{}, tn<two>{}, 1, 16384, 5120);
    run("rhs 8x5120x1024 row_band", sp<row>{}, tn<band>{}, 8, 5120, 1024);
    run("rhs 8x5120x1024 row_transpose", sp<row>{}, tn<two>{}, 8, 5120, 1024);
    run("rhs 8x1024x5120 row_band", sp<row>{}, tn<band>{}, 8, 1024, 5120);
    run("rhs 8x1024x5120 row_transpose", sp<row>{}, tn<two>{}, 8, 1024, 5120);
    run("2d 4096x65536 auto", sp<row>{}, tn<fq::tuning{}>{}, 1, 4096, 65536);
    run("2d 4096x65536 row_transpose", sp<row>{}, tn<two>{}, 1, 4096, 65536);
    run_col("col3d 128x5120x8192 col_relay", tn<relay>{}, 128, 5120, 8192, fq::layout::row_major);
    run_col("col3d 128x5120x8192 col_hold", tn<hold>{}, 128, 5120, 8192, fq::layout::row_major);
    run_col("col3d 128x5120x8192 col_hold t256", tn<hold256>{}, 128, 5120, 8192, fq::layout::row_major);
    run_col("col3d 128x5120x8192 col_hold staged", tn<hold_staged>{}, 128, 5120, 8192, fq::layout::row_major);
    run_col("col3d 128x5120x8192 auto", tn<fq::tuning{}>{}, 128, 5120, 8192, fq::layout::row_major);
    run_col("col2d 16384x5120 cm col_relay", tn<relay>{}, 1, 16384, 5120, fq::layout::col_major);
    run_col("col2d 16384x5120 cm col_hold", tn<hold>{}, 1, 16384, 5120, fq::layout::col_major);
    run_col("col2d 16384x5120 cm col_relay sw", tn<relay_sw>{}, 1, 16384, 5120, fq::layout::col_major);
    run_col("col2d 16384x5120 cm col_hold sw", tn<hold_sw>{}, 1, 16384, 5120, fq::layout::col_major);
    run_col("col2d 16384x5120 cm col_hold direct", tn<hold_direct>{}, 1, 16384, 5120, fq::layout::col_major);
    run_col("col2d 16384x5120 cm col_hold direct sw", tn<hold_direct_sw>{}, 1, 16384, 5120, fq::layout::col_major);
    run_col("col2d 16384x5120 cm col_hold t256", tn<hold256>{}, 1, 16384, 5120, fq::layout::col_major);
    run_col("col2d 16384x5120 cm col_hold t256 sw", tn<hold256_sw>{}, 1, 16384, 5120, fq::layout::col_major);
    run_col("col2d 16384x5120 rm col_relay", tn<relay>{}, 1, 16384, 5120, fq::layout::row_major);
    run_col("col2d 16384x5120 rm col_hold", tn<hold>{}, 1, 16384, 5120, fq::layout::row_major);
    run_col("col2d 16640x5120 cm col_hold", tn<hold>{}, 1, 16640, 5120, fq::layout::col_major);
    run_col("col2d 16640x5120 cm col_relay", tn<relay>{}, 1, 16640, 5120, fq::layout::col_major);
  }
  return 0;
}
