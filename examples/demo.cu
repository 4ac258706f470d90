// The CUDA build of the demo (fp8q_demo_cuda): the same program compiled by nvcc, so that
// fp8q/device.hpp queries the CUDA runtime for every visible device, plus one GPU step: the
// activations and expert weights quantized on the GPU, timed, and compared byte for byte with
// the host reference.
#include <cuda_runtime.h>

#include "demo.cpp"

namespace demo {

int print_gpu_step() {
  int count = 0;
  if (fp8q::device_count(&count) != fp8q::status::success || count == 0) {
    std::printf("GPU step: skipped, no GPU visible\n");
    return 0;
  }
  std::string why;
  const format f = choose_e4m3(why);
  if (f != format::e4m3fn) {
    std::printf("GPU step: skipped, device 0's native format is %s (this demo's GPU step is "
                "instantiated for e4m3fn)\n", fp8q::to_string(f));
    return 0;
  }
  constexpr format F = format::e4m3fn;
  constexpr fp8q::spec rowwise{.out = F, .granularity = fp8q::granularity::row};
  constexpr fp8q::spec colwise{.out = F, .granularity = fp8q::granularity::col};
  const std::int64_t tokens = 16384, hidden = 5120, experts = 8, K = 2048, N = 1024;
  std::mt19937 rng(7);
  const auto act = random_bf16<fp8q::bf16>(static_cast<std::size_t>(tokens * hidden), rng, 1.0f);
  const auto w = random_bf16<fp8q::bf16>(static_cast<std::size_t>(experts * K * N), rng, 0.02f);

  fp8q::bf16 *act_d = nullptr, *w_d = nullptr;
  fp8q::fp8<F> *act_qd = nullptr, *w_qd = nullptr;
  float *act_sd = nullptr, *w_sd = nullptr;
  void* ws = nullptr;
  cudaStream_t stream = nullptr;
  bool ok = cudaStreamCreate(&stream) == cudaSuccess;
  ok = ok && cudaMalloc(&act_d, act.size() * 2) == cudaSuccess && cudaMalloc(&w_d, w.size() * 2) == cudaSuccess &&
       cudaMalloc(&act_qd, act.size()) == cudaSuccess && cudaMalloc(&w_qd, w.size()) == cudaSuccess &&
       cudaMalloc(&act_sd, tokens * 4) == cudaSuccess && cudaMalloc(&w_sd, experts * N * 4) == cudaSuccess;
  const auto act_v = fp8q::row_major<const fp8q::bf16>(act_d, tokens, hidden);
  const auto w_v = fp8q::batched(fp8q::row_major<const fp8q::bf16>(w_d, K, N), experts);
  ok = ok && cudaMemcpy(act_d, act.data(), act.size() * 2, cudaMemcpyHostToDevice) == cudaSuccess &&
       cudaMemcpy(w_d, w.data(), w.size() * 2, cudaMemcpyHostToDevice) == cudaSuccess;
  if (!ok) {
    std::printf("GPU step: allocation or copy failed\n");
    return 1;
  }
  const fp8q::quantized<rowwise> act_out{.data = fp8q::row_major(act_qd, tokens, hidden),
                                         .inverse = fp8q::row_major(act_sd, tokens, 1)};
  const fp8q::quantized<colwise> w_out{.data = fp8q::batched(fp8q::row_major(w_qd, K, N), experts),
                                       .inverse = fp8q::batched(fp8q::row_major(w_sd, 1, N), experts)};
  // rowwise on row-major views needs no workspace; the colwise relay keeps its column amax there
  const std::size_t ws_bytes = fp8q::workspace_size<colwise>(w_v, w_out);
  ok = ok && fp8q::workspace_size<rowwise>(act_v, act_out) == 0 && cudaMalloc(&ws, ws_bytes) == cudaSuccess;
  cudaEvent_t e0, e1, e2;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventCreate(&e2);
  for (int warm = 0; warm < 2; ++warm) {  // the second pass is the timed one
    cudaEventRecord(e0, stream);
    ok = fp8q::quantize<rowwise>(act_v, act_out, {.stream = stream}) == fp8q::status::success;
    cudaEventRecord(e1, stream);
    ok = ok && fp8q::quantize<colwise>(w_v, w_out, {.stream = stream, .workspace = ws, .workspace_bytes = ws_bytes}) ==
                   fp8q::status::success;
    cudaEventRecord(e2, stream);
  }
  ok = ok && cudaStreamSynchronize(stream) == cudaSuccess;
  float ms_act = 0, ms_w = 0;
  cudaEventElapsedTime(&ms_act, e0, e1);
  cudaEventElapsedTime(&ms_w, e1, e2);

  // the host reference for the same inputs
  std::vector<fp8q::fp8<F>> act_q(act.size()), w_q(w.size()), got_a(act.size()), got_w(w.size());
  std::vector<float> act_s(tokens), w_s(experts * N), got_as(tokens), got_ws(experts * N);
  const fp8q::quantized<rowwise> act_ref{.data = fp8q::row_major(act_q.data(), tokens, hidden),
                                         .inverse = fp8q::row_major(act_s.data(), tokens, 1)};
  const fp8q::quantized<colwise> w_ref{.data = fp8q::batched(fp8q::row_major(w_q.data(), K, N), experts),
                                       .inverse = fp8q::batched(fp8q::row_major(w_s.data(), 1, N), experts)};
  ok = ok && fp8q::host::quantize<rowwise>(fp8q::row_major<const fp8q::bf16>(act.data(), tokens, hidden), act_ref) ==
                 fp8q::status::success;
  ok = ok && fp8q::host::quantize<colwise>(fp8q::batched(fp8q::row_major<const fp8q::bf16>(w.data(), K, N), experts),
                                           w_ref) == fp8q::status::success;
  cudaMemcpy(got_a.data(), act_qd, got_a.size(), cudaMemcpyDeviceToHost);
  cudaMemcpy(got_w.data(), w_qd, got_w.size(), cudaMemcpyDeviceToHost);
  cudaMemcpy(got_as.data(), act_sd, got_as.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(got_ws.data(), w_sd, got_ws.size() * 4, cudaMemcpyDeviceToHost);
  std::size_t diff = 0;
  for (std::size_t i = 0; i < act_q.size(); ++i) diff += act_q[i].bits != got_a[i].bits;
  for (std::size_t i = 0; i < w_q.size(); ++i) diff += w_q[i].bits != got_w[i].bits;
  for (std::size_t i = 0; i < act_s.size(); ++i) diff += std::memcmp(&act_s[i], &got_as[i], 4) != 0;
  for (std::size_t i = 0; i < w_s.size(); ++i) diff += std::memcmp(&w_s[i], &got_ws[i], 4) != 0;
  std::printf("GPU step on device 0 (%s)\n", fp8q::to_string(F));
  std::printf("  activations rowwise  [16384, 5120] bf16  %8.1f us\n", ms_act * 1000.0);
  std::printf("  expert weights colwise [8, 2048, 1024] bf16  %8.1f us\n", ms_w * 1000.0);
  std::printf("  bytes and scales different from the host reference: %zu%s\n", diff,
              ok ? "" : " (a call failed)");
  cudaFree(act_d); cudaFree(w_d); cudaFree(act_qd); cudaFree(w_qd); cudaFree(act_sd); cudaFree(w_sd);
  cudaFree(ws);
  cudaStreamDestroy(stream);
  return ok && diff == 0 ? 0 : 1;
}

}  // namespace demo
