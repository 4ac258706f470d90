// fp8q_group_row_probe: per-group rowwise (granularity::group_row) at the issue's shape, 8192 x
// 16640 bf16 -> e4m3fn, under offset patterns the benchmark does not vary (group 1 empty or not,
// boundaries on or off the 8-column unit grid, G = 1 and 256, padded outputs, the software
// encoder, e4m3fnuz, scales not powers of 2), beside plain rowwise and a 1 GiB device copy in the
// same process; CUDA-event median of 25 calls. Each line ends with a hash of the whole output
// (data, scales, inverse scales, padded ends), so two builds of the kernel can be compared byte
// for byte on these shapes (the bytes themselves are checked against the host by
// tests/gpu/test_grouped_gpu). EXP_ONLY=<text> runs the cases whose label holds it, EXP_ITERS=n
// times n calls (for a profiler). docs/design.md, "Per-group rowwise in one read". With them, a
// no-math kernel that moves the padded call's bytes into their places (nomath_padded_rows), at
// alignment 1 and 128: what the alignment-128 target's "within 5%" costs without the math.
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


// The no-math bound of per-group rowwise into a padded output (docs/design.md, "Bounds"): the
// recipe's bytes and placement without its math. A block stages a row in shared memory (16-byte
// loads), then each thread writes 16-byte pieces of the padded row, each the high bytes of 16
// consecutive inputs of one group (4-byte shared reads, shifted by 16 bits where the group starts
// on an odd column; zeros past the group's size), and one f32 per group and row. align 1 is the
// same kernel without padding, where a piece is the high bytes of its own 16 input columns
// whichever groups they belong to. Rows: gridDim.x blocks, a row at a time.
constexpr int nm_threads = 512;
constexpr int nm_max_groups = 64;  // the wave scan holds two groups a lane
template <bool ParallelScan>
__global__ void __launch_bounds__(nm_threads) nomath_padded_rows(const std::uint16_t* in, std::uint8_t* out, float* scale,
                                                                 const std::int32_t* ends, int G, int align, i64 M,
                                                                 int N, i64 ldo) {
  extern __shared__ std::uint32_t row_words[];  // [N / 2 + 16] the row, bf16 pairs
  __shared__ int start[nm_max_groups], stop[nm_max_groups], pstart[nm_max_groups + 1];
  if constexpr (!ParallelScan) {
    // Thread 0 scans the offsets once per block, inside the timed launch: G dependent rounds.
    if (threadIdx.x == 0) {
      int prev = 0, p = 0;
      for (int g = 0; g < G; ++g) {
        const int e = static_cast<int>(fp8q::detail::gpu::clamp_end(ends[g], prev, N));  // the library's clamp
        start[g] = prev; stop[g] = e; pstart[g] = p;
        p += (e - prev + align - 1) / align * align; prev = e;
      }
      pstart[G] = p;
    }
  } else if (threadIdx.x < 32) {
    // The first wave scans them in one round of loads: lane l holds groups 2l and 2l + 1. The
    // library's sequential clamp, min(max(e_g, c_{g-1}), N) from c_{-1} = 0, is a running
    // maximum of max(e, 0) clamped to N; the padded starts are a running sum.
    const unsigned full = 0xffffffffu;
    const int l = static_cast<int>(threadIdx.x), g0 = 2 * l, g1 = 2 * l + 1;
    const int e0 = g0 < G ? max(ends[g0], 0) : 0, e1 = g1 < G ? max(ends[g1], 0) : 0;
    int run = max(e0, e1);
    for (int d = 1; d < 32; d *= 2) { const int o = __shfl_up_sync(full, run, d); if (l >= d) run = max(run, o); }
    int before = __shfl_up_sync(full, run, 1);
    if (l == 0) before = 0;
    const int s0 = min(before, N), c0 = min(max(before, e0), N), c1 = min(max(max(before, e0), e1), N);
    const int p0 = g0 < G ? (c0 - s0 + align - 1) / align * align : 0;
    const int p1 = g1 < G ? (c1 - c0 + align - 1) / align * align : 0;
    int sum = p0 + p1;
    for (int d = 1; d < 32; d *= 2) { const int o = __shfl_up_sync(full, sum, d); if (l >= d) sum += o; }
    const int pbefore = sum - p0 - p1;
    if (g0 < G) { start[g0] = s0; stop[g0] = c0; pstart[g0] = pbefore; }
    if (g1 < G) { start[g1] = c0; stop[g1] = c1; pstart[g1] = pbefore + p0; }
    if (l == 31) pstart[G] = sum;
  }
  for (int i = N / 2 + threadIdx.x; i < N / 2 + 16; i += nm_threads) row_words[i] = 0;
  __syncthreads();
  const int chunks = pstart[G] / 16;
  for (i64 r = blockIdx.x; r < M; r += gridDim.x) {
    const uint4* src = reinterpret_cast<const uint4*>(in + r * N);  // [N] bf16, row r
    for (int u = threadIdx.x; u < N / 8; u += nm_threads) reinterpret_cast<uint4*>(row_words)[u] = src[u];
    if (threadIdx.x < G) scale[threadIdx.x * M + r] = 1.0f;
    __syncthreads();
    for (int c = threadIdx.x; c < chunks; c += nm_threads) {
      const int o = c * 16;
      int lo = 0, hi = G - 1;  // the group whose padded span holds o
      while (lo < hi) { const int mid = (lo + hi + 1) / 2; if (pstart[mid] <= o) lo = mid; else hi = mid - 1; }
      const int g = lo;
      // align 1: the groups lie side by side as in the input, so a piece may span several
      // groups and is the input's high bytes at its own columns
      const int size = align == 1 ? N - o : stop[g] - start[g];
      const int off = align == 1 ? 0 : o - pstart[g];
      const int x = align == 1 ? o : start[g] + off;  // first input column
      std::uint32_t w[9];
#pragma unroll
      for (int k = 0; k < 9; ++k) w[k] = row_words[x / 2 + k];
      if (x & 1) {
#pragma unroll
        for (int k = 0; k < 8; ++k) w[k] = __funnelshift_r(w[k], w[k + 1], 16);
      }
      std::uint32_t b[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) b[k] = __byte_perm(w[2 * k], w[2 * k + 1], 0x7531);
      const int valid = size - off;
      if (valid < 16) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int v = valid - 4 * k;
          b[k] = v <= 0 ? 0u : v >= 4 ? b[k] : b[k] & ((1u << (8 * v)) - 1u);
        }
      }
      *reinterpret_cast<uint4*>(out + r * ldo + o) = make_uint4(b[0], b[1], b[2], b[3]);
    }
    __syncthreads();
  }
}

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
  use_probe_stream(st, tm);
  const double bytes = 3.0 * M * N;
  auto hash_out = [&](i64 G) {
    return fetched_fnv({{out, n}, {sc, static_cast<std::size_t>(G * M * 4)}, {inv, static_cast<std::size_t>(G * M * 4)}});
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
    cuda_ok(poison_memset(out, 0xa5, n)); cuda_ok(poison_memset(sc, 0xa5, G * M * 4)); cuda_ok(poison_memset(inv, 0xa5, G * M * 4));
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
      cuda_ok(poison_memset(pout, 0xa5, M * NP)); cuda_ok(poison_memset(sc, 0xa5, G * M * 4)); cuda_ok(poison_memset(inv, 0xa5, G * M * 4)); cuda_ok(poison_memset(pends, 0xa5, G * 4));
      call(); cuda_ok(cudaStreamSynchronize(st));
      const std::uint64_t hh = fetched_fnv({{pout, static_cast<std::size_t>(M * NP)},
                                            {sc, static_cast<std::size_t>(G * M * 4)},
                                            {pends, static_cast<std::size_t>(G * 4)}});
      const float t = timeit(call);
      std::printf("%-34s G=%-4lld %8.1f us  frac_copy %.3f  hash %016llx\n", align == 16 ? "padded align 16" : "padded align 128", (long long)G, t, bytes / (t * 1e-6) / copy_bw, (unsigned long long)hh);
      cuda_ok(cudaFree(pout)); cuda_ok(cudaFree(pends));
    }
  }
  if (only == nullptr || std::string("no-math padded").find(only) != std::string::npos) {
    // the no-math bound of the padded call, align 1 and 128, G = 64 bench offsets; its placement
    // is checked on the host (high bytes where the groups' columns go, zeros in their padding)
    constexpr i64 G = 64;
    static_assert(G <= nm_max_groups, "the no-math kernel keeps at most nm_max_groups groups");
    const auto ends = bench_ends(N, G, true);
    cuda_ok(cudaMemcpy(d_ends, ends.data(), G * 4, cudaMemcpyHostToDevice));
    const int smem = static_cast<int>((N / 2 + 16) * 4);
    int mps = 0, dev = 0;
    cuda_ok(cudaGetDevice(&dev));
    cuda_ok(cudaDeviceGetAttribute(&mps, cudaDevAttrMultiProcessorCount, dev));
    auto measure = [&](auto kernel, const char* scan) {
      int per_mp = 0;
      cuda_ok(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      cuda_ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_mp, kernel, nm_threads, smem));
      for (int align : {1, 128}) {
        const i64 NP = N + G * (align - 1);
        std::uint8_t* pout = nullptr;
        cuda_ok(cudaMalloc(&pout, static_cast<std::size_t>(M * NP)));
        cuda_ok(poison_memset(pout, 0xa5, M * NP));
        auto call = [&] {
          kernel<<<per_mp * mps, nm_threads, smem, st>>>(reinterpret_cast<const std::uint16_t*>(in), pout, sc, d_ends,
                                                         static_cast<int>(G), align, M, static_cast<int>(N), NP);
        };
        call(); cuda_ok(cudaStreamSynchronize(st)); cuda_ok(cudaGetLastError());
        // placement check
        const auto got = fetch(pout, static_cast<std::size_t>(M * NP));
        const std::vector<i64> pend = padded_ends(ends, align);
        i64 wrong = 0, prev = 0, p = 0;
        for (i64 g = 0; g < G; ++g) {
          const i64 e = ends[g], size = e - prev, padded = pend[g] - p;
          for (i64 r = 0; r < M; r += 97)
            for (i64 j = 0; j < padded; ++j) {
              const std::uint8_t want = j < size ? static_cast<std::uint8_t>(h[r * N + prev + j] >> 8) : 0;
              wrong += got[r * NP + p + j] != want;
            }
          prev = e; p += padded;
        }
        const float t = timeit(call);
        const std::string label = std::string(align == 1 ? "no-math, unpadded" : "no-math padded align 128") + ", " + scan;
        std::printf("%-34s G=%-4lld %8.1f us  frac_copy %.3f  placement wrong %lld (every 97th row)  (%d blocks/SM)\n",
                    label.c_str(), (long long)G, t, bytes / (t * 1e-6) / copy_bw, (long long)wrong, per_mp);
        cuda_ok(cudaFree(pout));
      }
    };
    measure(nomath_padded_rows<false>, "thread-0 scan");
    measure(nomath_padded_rows<true>, "wave scan");
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
