// FP8 all-gather of a sharded weight through NCCL (FSDP-style float8 weights), against one GPU.
// One process drives the first n visible GPUs (ncclCommInitAll) for n in {1, 2, 4, 8} up to the
// device count. A bf16 weight [M, N] (random, with ±max-scale outliers, ties, subnormals and
// zeros) is split by rows; each rank quantizes its shard in its own device's native FP8 format
// (fp8q::query_device, never device 0's), then:
//   - rowwise: all-gather of the FP8 rows and their scales;
//   - tensorwise: tensor_amax of the shard, an all-reduce with max on the amax words
//     (ncclUint32), quantize_with_amax, all-gather of the FP8 bytes; every rank's scale;
// and every rank's gathered bytes and scales must equal, byte for byte, quantize<S> of the whole
// weight on device 0 and fp8q::host::quantize; the gathered tensor is dequantized on the host as
// a GEMM would read it and compared with the dequantized reference. The 1-rank run is a
// self-check of the harness and of the split tensorwise calls; with one visible GPU the program
// then reports the multi-GPU part skipped (exit 77). NVLink multicast stays off
// (NCCL_NVLS_ENABLE=0, set here before NCCL starts).
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fp8q/gpu/quantize.hpp"
#include "fp8q/host/quantize.hpp"
#include "gpu_test.hpp"

using namespace fp8q;

namespace {

constexpr std::int64_t M = 4096;  // rows: a multiple of 8 ranks
constexpr std::int64_t N = 2048;

bool nccl_ok(fp8q_test::checker& check, ncclResult_t r, const char* what) {
  if (r != ncclSuccess) std::printf("%s: %s\n", what, ncclGetErrorString(r));
  return check.check(r == ncclSuccess, what, __FILE__, __LINE__);
}

// The weight: normal-ish values from a counter hash, with every 4099th element an outlier of
// ±30000, every 8191th a bf16 subnormal, every 5003rd a zero.
std::vector<bf16> make_weight() {
  std::vector<bf16> w(static_cast<std::size_t>(M * N));
  std::uint64_t x = 0x243f6a8885a308d3ull;
  for (std::size_t i = 0; i < w.size(); ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    float v = (static_cast<float>(x >> 40) / 16777216.0f - 0.5f) * 6.0f;
    if (i % 4099 == 0) v = (i & 1) ? 30000.0f : -30000.0f;
    if (i % 8191 == 0) v = 1.0e-39f;
    if (i % 5003 == 0) v = 0.0f;
    w[i] = to_bf16(v);
  }
  return w;
}

struct rank_state {
  int device = 0;
  cudaStream_t stream = nullptr;
  ncclComm_t comm = nullptr;
  bf16* shard = nullptr;            // [M / n, N] bf16, row-major, device
  std::uint8_t* out = nullptr;      // [M / n, N] FP8, row-major, device
  float* scales = nullptr;          // [M / n] f32 (rowwise), [1] (tensorwise), device
  std::uint8_t* gathered = nullptr;  // [M, N] FP8, row-major, device
  float* gathered_scales = nullptr;  // [M] f32, device
  std::uint32_t* amax = nullptr;     // [1] f32 bits, device
};

template <format F>
int run_ranks(int n, const std::vector<bf16>& w, bool timed) {
  constexpr spec R{.out = F, .granularity = granularity::row};
  constexpr spec T{.out = F, .granularity = granularity::tensor};
  fp8q_test::checker check("test_allgather_nccl");
  const std::int64_t rows = M / n;
  const std::size_t shard_elems = static_cast<std::size_t>(rows * N);
  std::vector<rank_state> ranks(static_cast<std::size_t>(n));
  std::vector<int> devs(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) devs[static_cast<std::size_t>(r)] = r;
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
  if (!nccl_ok(check, ncclCommInitAll(comms.data(), n, devs.data()), "ncclCommInitAll")) return check.finish();

  // The single-GPU reference on device 0, and the host's.
  std::vector<std::uint8_t> row_ref(static_cast<std::size_t>(M * N)), ten_ref(static_cast<std::size_t>(M * N));
  std::vector<float> row_sc_ref(static_cast<std::size_t>(M));
  float ten_sc_ref = 0.0f;
  {
    FP8Q_TEST_CUDA(check, cudaSetDevice(0));
    bf16* d_w = nullptr;
    std::uint8_t* d_q = nullptr;
    float* d_s = nullptr;
    void* ws = nullptr;
    const auto in = row_major<const bf16>(nullptr, M, N);
    const std::size_t ws_bytes = workspace_size<T>(in) + 256;
    FP8Q_TEST_CUDA(check, cudaMalloc(&d_w, w.size() * sizeof(bf16)));
    FP8Q_TEST_CUDA(check, cudaMalloc(&d_q, w.size()));
    FP8Q_TEST_CUDA(check, cudaMalloc(&d_s, M * sizeof(float)));
    FP8Q_TEST_CUDA(check, cudaMalloc(&ws, ws_bytes));
    FP8Q_TEST_CUDA(check, cudaMemcpy(d_w, w.data(), w.size() * sizeof(bf16), cudaMemcpyHostToDevice));
    using q_t = typename quantized<R>::data_t;
    const auto d_in = row_major<const bf16>(d_w, M, N);
    const quantized<R> qr{.data = row_major(reinterpret_cast<q_t*>(d_q), M, N), .inverse = row_major(d_s, M, 1)};
    FP8Q_TEST_CHECK(check, quantize<R>(d_in, qr) == status::success);
    FP8Q_TEST_CUDA(check, cudaMemcpy(row_ref.data(), d_q, w.size(), cudaMemcpyDeviceToHost));
    FP8Q_TEST_CUDA(check, cudaMemcpy(row_sc_ref.data(), d_s, M * sizeof(float), cudaMemcpyDeviceToHost));
    const quantized<T> qt{.data = row_major(reinterpret_cast<q_t*>(d_q), M, N), .inverse = row_major(d_s, 1, 1)};
    FP8Q_TEST_CHECK(check, quantize<T>(d_in, qt, {.workspace = ws, .workspace_bytes = ws_bytes}) == status::success);
    FP8Q_TEST_CUDA(check, cudaMemcpy(ten_ref.data(), d_q, w.size(), cudaMemcpyDeviceToHost));
    FP8Q_TEST_CUDA(check, cudaMemcpy(&ten_sc_ref, d_s, sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_w);
    cudaFree(d_q);
    cudaFree(d_s);
    cudaFree(ws);

    // The host oracle agrees with device 0 (what the GPU suites prove in general).
    std::vector<std::uint8_t> h_q(w.size());
    std::vector<float> h_s(static_cast<std::size_t>(M));
    const auto h_in = row_major<const bf16>(w.data(), M, N);
    const quantized<R> hr{.data = row_major(reinterpret_cast<q_t*>(h_q.data()), M, N), .inverse = row_major(h_s.data(), M, 1)};
    FP8Q_TEST_CHECK(check, host::quantize<R>(h_in, hr) == status::success);
    FP8Q_TEST_CHECK(check, h_q == row_ref && std::memcmp(h_s.data(), row_sc_ref.data(), M * sizeof(float)) == 0);
  }

  for (int r = 0; r < n; ++r) {
    rank_state& k = ranks[static_cast<std::size_t>(r)];
    k.device = r;
    k.comm = comms[static_cast<std::size_t>(r)];
    FP8Q_TEST_CUDA(check, cudaSetDevice(r));
    // blocking: the test's cudaMemcpy and cudaMemset (legacy default stream) stay ordered with it
    FP8Q_TEST_CUDA(check, cudaStreamCreate(&k.stream));
    FP8Q_TEST_CUDA(check, cudaMalloc(&k.shard, shard_elems * sizeof(bf16)));
    FP8Q_TEST_CUDA(check, cudaMalloc(&k.out, shard_elems));
    FP8Q_TEST_CUDA(check, cudaMalloc(&k.scales, static_cast<std::size_t>(rows) * sizeof(float)));
    FP8Q_TEST_CUDA(check, cudaMalloc(&k.gathered, w.size()));
    FP8Q_TEST_CUDA(check, cudaMalloc(&k.gathered_scales, M * sizeof(float)));
    FP8Q_TEST_CUDA(check, cudaMalloc(&k.amax, sizeof(std::uint32_t)));
    FP8Q_TEST_CUDA(check, cudaMemcpy(k.shard, w.data() + static_cast<std::size_t>(r) * shard_elems,
                                     shard_elems * sizeof(bf16), cudaMemcpyHostToDevice));
    FP8Q_TEST_CUDA(check, cudaMemset(k.gathered, 0xA5, w.size()));  // poison
    FP8Q_TEST_CUDA(check, cudaMemset(k.gathered_scales, 0xA5, M * sizeof(float)));
  }
  using q_t = typename quantized<R>::data_t;
  auto sync_all = [&] {
    for (rank_state& k : ranks) {
      FP8Q_TEST_CUDA(check, cudaSetDevice(k.device));
      FP8Q_TEST_CUDA(check, cudaStreamSynchronize(k.stream));
    }
  };
  auto compare = [&](const std::vector<std::uint8_t>& ref, const float* ref_scales, std::int64_t scale_count,
                     const char* what) {
    std::vector<std::uint8_t> got(w.size());
    std::vector<float> got_s(static_cast<std::size_t>(scale_count));
    for (rank_state& k : ranks) {
      FP8Q_TEST_CUDA(check, cudaSetDevice(k.device));
      FP8Q_TEST_CUDA(check, cudaMemcpy(got.data(), k.gathered, w.size(), cudaMemcpyDeviceToHost));
      const float* src = scale_count == M ? k.gathered_scales : k.scales;
      FP8Q_TEST_CUDA(check, cudaMemcpy(got_s.data(), src, static_cast<std::size_t>(scale_count) * sizeof(float),
                                       cudaMemcpyDeviceToHost));
      std::size_t differ = 0;
      for (std::size_t i = 0; i < got.size(); ++i) differ += got[i] != ref[i];
      const bool scales_equal = std::memcmp(got_s.data(), ref_scales, static_cast<std::size_t>(scale_count) * sizeof(float)) == 0;
      std::printf("%s %s, %d ranks, rank %d: %zu of %zu bytes differ, scales %s\n", to_string(F), what, n, k.device,
                  differ, got.size(), scales_equal ? "equal" : "DIFFER");
      FP8Q_TEST_CHECK(check, differ == 0 && scales_equal);
    }
    // What a GEMM reads of the last rank's gather: decode(q) * 1/s per row (rowwise) or for the
    // tensor, against the same of the reference, and within FP8's step of the weight.
    std::size_t unequal = 0, far = 0;
    for (std::int64_t i = 0; i < M; ++i) {
      const float inv = ref_scales[scale_count == M ? i : 0];
      const float got_inv = got_s[static_cast<std::size_t>(scale_count == M ? i : 0)];
      for (std::int64_t j = 0; j < N; ++j) {
        const std::size_t e = static_cast<std::size_t>(i * N + j);
        const float a = decode(F, got[e]) * got_inv, b = decode(F, ref[e]) * inv;
        unequal += std::memcmp(&a, &b, sizeof a) != 0;
        const float x = to_float(w[e]);
        far += !(std::fabs(a - x) <= std::fabs(x) * 0x1p-3f + inv * 0x1p-9f);  // half an e4m3 step, or a subnormal's
      }
    }
    std::printf("%s %s, %d ranks: dequantized for a GEMM: %zu values unequal to the reference's, %zu off the weight\n",
                to_string(F), what, n, unequal, far);
    FP8Q_TEST_CHECK(check, unequal == 0 && far == 0);
  };

  // Rowwise: quantize each shard, all-gather bytes and scales.
  for (rank_state& k : ranks) {
    FP8Q_TEST_CUDA(check, cudaSetDevice(k.device));
    const quantized<R> q{.data = row_major(reinterpret_cast<q_t*>(k.out), rows, N), .inverse = row_major(k.scales, rows, 1)};
    FP8Q_TEST_CHECK(check, quantize<R>(row_major<const bf16>(k.shard, rows, N), q, {.stream = k.stream}) == status::success);
  }
  auto gather_rows = [&] {
    nccl_ok(check, ncclGroupStart(), "ncclGroupStart");
    for (rank_state& k : ranks) {
      nccl_ok(check, ncclAllGather(k.out, k.gathered, shard_elems, ncclUint8, k.comm, k.stream), "ncclAllGather bytes");
      nccl_ok(check, ncclAllGather(k.scales, k.gathered_scales, static_cast<std::size_t>(rows), ncclFloat32, k.comm, k.stream),
              "ncclAllGather scales");
    }
    nccl_ok(check, ncclGroupEnd(), "ncclGroupEnd");
  };
  gather_rows();
  sync_all();
  compare(row_ref, row_sc_ref.data(), M, "rowwise");

  // Tensorwise: local amax, all-reduce max on the words, cast with the combined amax, gather.
  for (rank_state& k : ranks) {  // poison again
    FP8Q_TEST_CUDA(check, cudaSetDevice(k.device));
    FP8Q_TEST_CUDA(check, cudaMemset(k.gathered, 0xA5, w.size()));
  }
  for (rank_state& k : ranks) {
    FP8Q_TEST_CUDA(check, cudaSetDevice(k.device));
    FP8Q_TEST_CHECK(check, tensor_amax<T>(row_major<const bf16>(k.shard, rows, N), k.amax, {.stream = k.stream}) == status::success);
  }
  nccl_ok(check, ncclGroupStart(), "ncclGroupStart");
  for (rank_state& k : ranks)
    nccl_ok(check, ncclAllReduce(k.amax, k.amax, 1, ncclUint32, ncclMax, k.comm, k.stream), "ncclAllReduce amax");
  nccl_ok(check, ncclGroupEnd(), "ncclGroupEnd");
  for (rank_state& k : ranks) {
    FP8Q_TEST_CUDA(check, cudaSetDevice(k.device));
    const quantized<T> q{.data = row_major(reinterpret_cast<q_t*>(k.out), rows, N), .inverse = row_major(k.scales, 1, 1)};
    FP8Q_TEST_CHECK(check, quantize_with_amax<T>(row_major<const bf16>(k.shard, rows, N), q, k.amax, {.stream = k.stream}) ==
                               status::success);
  }
  nccl_ok(check, ncclGroupStart(), "ncclGroupStart");
  for (rank_state& k : ranks)
    nccl_ok(check, ncclAllGather(k.out, k.gathered, shard_elems, ncclUint8, k.comm, k.stream), "ncclAllGather bytes");
  nccl_ok(check, ncclGroupEnd(), "ncclGroupEnd");
  sync_all();
  compare(ten_ref, &ten_sc_ref, 1, "tensorwise");

  // The all-gather's time, FP8 (bytes + rowwise scales) against bf16 of the same weight.
  if (timed) {
    bf16* bf_dst = nullptr;
    std::vector<bf16*> bf_all(static_cast<std::size_t>(n));
    for (rank_state& k : ranks) {
      FP8Q_TEST_CUDA(check, cudaSetDevice(k.device));
      FP8Q_TEST_CUDA(check, cudaMalloc(&bf_dst, w.size() * sizeof(bf16)));
      bf_all[static_cast<std::size_t>(k.device)] = bf_dst;
    }
    auto time_of = [&](auto&& enqueue) {
      std::vector<float> ms;
      cudaEvent_t a = nullptr, b = nullptr;
      FP8Q_TEST_CUDA(check, cudaSetDevice(0));
      FP8Q_TEST_CUDA(check, cudaEventCreate(&a));
      FP8Q_TEST_CUDA(check, cudaEventCreate(&b));
      for (int it = 0; it < 23; ++it) {
        sync_all();
        FP8Q_TEST_CUDA(check, cudaSetDevice(0));
        FP8Q_TEST_CUDA(check, cudaEventRecord(a, ranks[0].stream));
        enqueue();
        FP8Q_TEST_CUDA(check, cudaSetDevice(0));
        FP8Q_TEST_CUDA(check, cudaEventRecord(b, ranks[0].stream));
        sync_all();
        float t = 0.0f;
        FP8Q_TEST_CUDA(check, cudaEventElapsedTime(&t, a, b));
        if (it >= 3) ms.push_back(t);  // three warm-ups
      }
      cudaEventDestroy(a);
      cudaEventDestroy(b);
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    const float fp8_ms = time_of(gather_rows);
    const float bf16_ms = time_of([&] {
      nccl_ok(check, ncclGroupStart(), "ncclGroupStart");
      for (rank_state& k : ranks)
        nccl_ok(check, ncclAllGather(k.shard, bf_all[static_cast<std::size_t>(k.device)], shard_elems * 2, ncclUint8,
                                     k.comm, k.stream), "ncclAllGather bf16");
      nccl_ok(check, ncclGroupEnd(), "ncclGroupEnd");
    });
    const double fp8_bytes = static_cast<double>(w.size()) + M * 4.0, bf16_bytes = static_cast<double>(w.size()) * 2.0;
    std::printf("all-gather of a %lld x %lld weight over %d GPUs (median of 20, rank 0's stream): FP8 + scales "
                "%.0f bytes %.1f us, bf16 %.0f bytes %.1f us, time ratio FP8/bf16 %.3f\n",
                static_cast<long long>(M), static_cast<long long>(N), n, fp8_bytes, fp8_ms * 1e3, bf16_bytes,
                bf16_ms * 1e3, fp8_ms / bf16_ms);
    for (bf16* p : bf_all) cudaFree(p);
  }

  for (rank_state& k : ranks) {
    cudaSetDevice(k.device);
    cudaFree(k.shard);
    cudaFree(k.out);
    cudaFree(k.scales);
    cudaFree(k.gathered);
    cudaFree(k.gathered_scales);
    cudaFree(k.amax);
    cudaStreamDestroy(k.stream);
    ncclCommDestroy(k.comm);
  }
  return check.finish();
}

// Every rank's native family must agree for one all-gathered tensor: the family of rank r's
// own device, never device 0's.
int run(int n, const std::vector<bf16>& w) {
  fp8_family family = fp8_family::none;
  for (int r = 0; r < n; ++r) {
    device_info info;
    if (query_device(r, &info) != status::success) {
      std::printf("query_device(%d) failed\n", r);
      return 1;
    }
    const fp8_family f = info.arch.family == fp8_family::none ? fp8_family::ocp : info.arch.family;
    if (r == 0) family = f;
    std::printf("rank %d: %s (%s), native %s\n", r, info.name, info.arch_name, to_string(f));
    if (f != family) {
      std::printf("ranks disagree on the FP8 family (%s against %s): one all-gathered tensor needs one format\n",
                  to_string(f), to_string(family));
      return 1;
    }
  }
  return family == fp8_family::fnuz ? run_ranks<format::e4m3fnuz>(n, w, n > 1) : run_ranks<format::e4m3fn>(n, w, n > 1);
}

}  // namespace

int main() {
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);  // NVLink multicast off (the device tool's rule)
  if (!fp8q_test::gpu_visible()) return fp8q_test::skip_exit_code;
  int count = 0;
  if (device_count(&count) != status::success) return 1;
  const std::vector<bf16> w = make_weight();
  int rc = run(1, w);  // the self-check
  for (int n : {2, 4, 8})
    if (n <= count && rc == 0) rc = run(n, w);
  if (rc == 0 && count < 2) {
    std::printf("skipped: the multi-GPU all-gather needs 2 or more GPUs (%d visible); the 1-rank run passed\n", count);
    return fp8q_test::skip_exit_code;
  }
  return rc;
}
