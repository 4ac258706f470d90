// fp8q + NCCL: an FSDP-style FP8 weight all-gather. One process drives every visible GPU
// (ncclCommInitAll); a bf16 weight [M, N] is sharded by rows. Each rank quantizes its shard in
// its own device's native FP8 format, tensorwise, with one scale for the whole weight:
//   fp8q::tensor_amax        the shard's amax, as f32 bits on the device
//   ncclAllReduce (max)      on those words (ncclUint32): the whole weight's amax, exactly
//   fp8q::quantize_with_amax every shard scales by it
//   ncclAllGather            of the FP8 bytes: every rank holds the weight as one GPU would
//                            have quantized it (tests/gpu/test_allgather_nccl.cu checks that)
// then prints the all-gather's time against a bf16 all-gather of the same weight. No host
// synchronization between the steps: everything is enqueued on each rank's stream.
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fp8q/gpu/quantize.hpp"

namespace {

void cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}
void nccl_ok(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, ncclGetErrorString(r));
  std::exit(1);
}
void fp8q_ok(fp8q::status s, const char* what) {
  if (s == fp8q::status::success) return;
  std::fprintf(stderr, "%s: %s\n", what, fp8q::to_string(s));
  std::exit(1);
}

struct rank {
  cudaStream_t stream = nullptr;
  ncclComm_t comm = nullptr;
  fp8q::bf16* shard = nullptr;        // [M / n, N] bf16, row-major
  fp8q::bf16* gathered_bf16 = nullptr;  // [M, N] bf16: the all-gather fp8q replaces
  std::uint8_t* q = nullptr;          // [M / n, N] FP8
  std::uint8_t* gathered = nullptr;   // [M, N] FP8
  float* inverse = nullptr;           // [1] f32: 1/s, the same on every rank
  std::uint32_t* amax = nullptr;      // [1] f32 bits
};

template <fp8q::format F>
void step(std::vector<rank>& ranks, std::int64_t rows, std::int64_t N) {
  constexpr fp8q::spec S{.out = F, .granularity = fp8q::granularity::tensor};
  using q_t = typename fp8q::quantized<S>::data_t;
  const int n = static_cast<int>(ranks.size());
  for (int r = 0; r < n; ++r) {
    cuda_ok(cudaSetDevice(r), "cudaSetDevice");
    const auto in = fp8q::row_major<const fp8q::bf16>(ranks[r].shard, rows, N);
    fp8q_ok(fp8q::tensor_amax<S>(in, ranks[r].amax, {.stream = ranks[r].stream}), "tensor_amax");
  }
  nccl_ok(ncclGroupStart(), "ncclGroupStart");
  for (rank& k : ranks) nccl_ok(ncclAllReduce(k.amax, k.amax, 1, ncclUint32, ncclMax, k.comm, k.stream), "ncclAllReduce");
  nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
  for (int r = 0; r < n; ++r) {
    cuda_ok(cudaSetDevice(r), "cudaSetDevice");
    const auto in = fp8q::row_major<const fp8q::bf16>(ranks[r].shard, rows, N);
    const fp8q::quantized<S> out{.data = fp8q::row_major(reinterpret_cast<q_t*>(ranks[r].q), rows, N),
                                 .inverse = fp8q::row_major(ranks[r].inverse, 1, 1)};
    fp8q_ok(fp8q::quantize_with_amax<S>(in, out, ranks[r].amax, {.stream = ranks[r].stream}), "quantize_with_amax");
  }
  nccl_ok(ncclGroupStart(), "ncclGroupStart");
  for (rank& k : ranks)
    nccl_ok(ncclAllGather(k.q, k.gathered, static_cast<std::size_t>(rows * N), ncclUint8, k.comm, k.stream), "ncclAllGather");
  nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
}

}  // namespace

int main() {
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);  // NVLink multicast off
  int n = 0;
  if (fp8q::device_count(&n) != fp8q::status::success || n < 2) {
    std::printf("skipped: this example needs 2 or more GPUs (%d visible)\n", n);
    return 0;
  }
  constexpr std::int64_t M = 8192, N = 8192;  // a 128 MiB bf16 weight
  const std::int64_t rows = M / n;
  // Each rank's own device decides its format; one gathered tensor needs them to agree.
  bool fnuz = false;
  for (int r = 0; r < n; ++r) {
    fp8q::device_info info;
    fp8q_ok(fp8q::query_device(r, &info), "query_device");
    const bool f = info.arch.family == fp8q::fp8_family::fnuz;
    if (r > 0 && f != fnuz) {
      std::fprintf(stderr, "GPU %d computes in another FP8 family than GPU 0\n", r);
      return 1;
    }
    fnuz = f;
  }

  std::vector<rank> ranks(static_cast<std::size_t>(n));
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
  nccl_ok(ncclCommInitAll(comms.data(), n, nullptr), "ncclCommInitAll");
  for (int r = 0; r < n; ++r) {
    rank& k = ranks[static_cast<std::size_t>(r)];
    k.comm = comms[static_cast<std::size_t>(r)];
    cuda_ok(cudaSetDevice(r), "cudaSetDevice");
    cuda_ok(cudaStreamCreate(&k.stream), "cudaStreamCreate");  // blocking: ordered after the cudaMemset below
    cuda_ok(cudaMalloc(&k.shard, static_cast<std::size_t>(rows * N) * sizeof(fp8q::bf16)), "cudaMalloc");
    cuda_ok(cudaMemset(k.shard, 0x3c, static_cast<std::size_t>(rows * N) * sizeof(fp8q::bf16)), "cudaMemset");
    cuda_ok(cudaMalloc(&k.gathered_bf16, static_cast<std::size_t>(M * N) * sizeof(fp8q::bf16)), "cudaMalloc");
    cuda_ok(cudaMalloc(&k.q, static_cast<std::size_t>(rows * N)), "cudaMalloc");
    cuda_ok(cudaMalloc(&k.gathered, static_cast<std::size_t>(M * N)), "cudaMalloc");
    cuda_ok(cudaMalloc(&k.inverse, sizeof(float)), "cudaMalloc");
    cuda_ok(cudaMalloc(&k.amax, sizeof(std::uint32_t)), "cudaMalloc");
  }
  auto sync_all = [&] {
    for (int r = 0; r < n; ++r) {
      cuda_ok(cudaSetDevice(r), "cudaSetDevice");
      cuda_ok(cudaStreamSynchronize(ranks[static_cast<std::size_t>(r)].stream), "cudaStreamSynchronize");
    }
  };
  auto median_ms = [&](auto&& enqueue) {
    cudaEvent_t a = nullptr, b = nullptr;
    cuda_ok(cudaSetDevice(0), "cudaSetDevice");
    cuda_ok(cudaEventCreate(&a), "cudaEventCreate");
    cuda_ok(cudaEventCreate(&b), "cudaEventCreate");
    std::vector<float> ms;
    for (int it = 0; it < 13; ++it) {
      sync_all();
      cuda_ok(cudaSetDevice(0), "cudaSetDevice");
      cuda_ok(cudaEventRecord(a, ranks[0].stream), "cudaEventRecord");
      enqueue();
      cuda_ok(cudaSetDevice(0), "cudaSetDevice");
      cuda_ok(cudaEventRecord(b, ranks[0].stream), "cudaEventRecord");
      sync_all();
      float t = 0.0f;
      cuda_ok(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
      if (it >= 3) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  const float fp8 = median_ms([&] {
    if (fnuz) step<fp8q::format::e4m3fnuz>(ranks, rows, N);
    else step<fp8q::format::e4m3fn>(ranks, rows, N);
  });
  const float bf16 = median_ms([&] {
    nccl_ok(ncclGroupStart(), "ncclGroupStart");
    for (rank& k : ranks)
      nccl_ok(ncclAllGather(k.shard, k.gathered_bf16, static_cast<std::size_t>(rows * N) * 2, ncclUint8, k.comm, k.stream),
           "ncclAllGather");
    nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
  });
  std::printf("%d GPUs, %lld x %lld weight: amax + all-reduce + quantize + FP8 all-gather %.1f us, "
              "bf16 all-gather %.1f us (ratio %.3f)\n",
              n, static_cast<long long>(M), static_cast<long long>(N), fp8 * 1e3, bf16 * 1e3, fp8 / bf16);
  for (int r = 0; r < n; ++r) {
    rank& k = ranks[static_cast<std::size_t>(r)];
    cudaSetDevice(r);
    cudaFree(k.shard);
    cudaFree(k.gathered_bf16);
    cudaFree(k.q);
    cudaFree(k.gathered);
    cudaFree(k.inverse);
    cudaFree(k.amax);
    cudaStreamDestroy(k.stream);
    ncclCommDestroy(k.comm);
  }
  return 0;
}
