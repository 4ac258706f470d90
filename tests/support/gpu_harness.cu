// Self-test of the GPU test plumbing (fp8q_add_gpu_test, gpu_test.hpp) and of the run-time
// device query: on every visible device, a kernel encodes a few values in every format and the
// bytes must equal the host's. Without a GPU it must report itself skipped (exit 77).
#include <cstdint>
#include <cstdio>

#include "fp8q/arch.hpp"
#include "fp8q/convert.hpp"
#include "fp8q/device.hpp"
#include "gpu_test.hpp"

namespace {

constexpr int n_values = 8;
constexpr float values[n_values] = {0.0f, -0.0f, 1.0f, -3.5f, 464.0f, 1e-3f, 6e4f, 1e30f};
constexpr int n_formats = static_cast<int>(sizeof(fp8q::all_formats) / sizeof(fp8q::format));

constexpr bool formats_are_their_indices() {
  for (int i = 0; i < n_formats; ++i) {
    if (static_cast<int>(fp8q::all_formats[i]) != i) return false;
  }
  return true;
}
static_assert(formats_are_their_indices(), "encode_kernel maps blockIdx.x to a format");

template <fp8q::format F>
__host__ __device__ std::uint8_t encode_one(float x) {
  return fp8q::encode<F>(x, fp8q::overflow::saturate).bits;
}

__host__ __device__ std::uint8_t encode_any(fp8q::format f, float x) {
  switch (f) {
    case fp8q::format::e4m3fn: return encode_one<fp8q::format::e4m3fn>(x);
    case fp8q::format::e4m3fnuz: return encode_one<fp8q::format::e4m3fnuz>(x);
    case fp8q::format::e5m2: return encode_one<fp8q::format::e5m2>(x);
    case fp8q::format::e5m2fnuz: return encode_one<fp8q::format::e5m2fnuz>(x);
    case fp8q::format::e8m0fnu: return encode_one<fp8q::format::e8m0fnu>(x);
  }
  return 0;
}

// in: [n_values] f32; out: [n_formats][n_values] bytes
__global__ void encode_kernel(const float* in, std::uint8_t* out) {
  const int v = static_cast<int>(threadIdx.x);
  const int f = static_cast<int>(blockIdx.x);
  // all_formats is a host array; the enum's values are its indices.
  if (v < n_values) out[f * n_values + v] = encode_any(static_cast<fp8q::format>(f), in[v]);
}

}  // namespace

int main() {
  if (!fp8q_test::gpu_visible()) return fp8q_test::skip_exit_code;
  fp8q_test::checker check("gpu_harness");

  int count = 0;
  FP8Q_TEST_CHECK(check, fp8q::device_count(&count) == fp8q::status::success && count > 0);
  for (int dev = 0; dev < count; ++dev) {
    fp8q::device_info info;
    FP8Q_TEST_CHECK(check, fp8q::query_device(dev, &info) == fp8q::status::success);
    FP8Q_TEST_CHECK(check, info.arch.valid && info.multiprocessors > 0);
    std::printf("device %d: %s (%s, fp8 %s, %d SMs)\n", dev, info.name, info.arch_name,
                fp8q::to_string(info.arch.family), info.multiprocessors);

    FP8Q_TEST_CUDA(check, cudaSetDevice(dev));
    float* d_in = nullptr;
    std::uint8_t* d_out = nullptr;
    FP8Q_TEST_CUDA(check, cudaMalloc(&d_in, sizeof(values)));
    FP8Q_TEST_CUDA(check, cudaMalloc(&d_out, n_formats * n_values));
    FP8Q_TEST_CUDA(check, cudaMemcpy(d_in, values, sizeof(values), cudaMemcpyHostToDevice));
    encode_kernel<<<n_formats, n_values>>>(d_in, d_out);
    FP8Q_TEST_CUDA(check, cudaGetLastError());
    std::uint8_t got[n_formats * n_values] = {};
    FP8Q_TEST_CUDA(check, cudaMemcpy(got, d_out, sizeof(got), cudaMemcpyDeviceToHost));
    FP8Q_TEST_CUDA(check, cudaFree(d_in));
    FP8Q_TEST_CUDA(check, cudaFree(d_out));

    for (int f = 0; f < n_formats; ++f) {
      for (int v = 0; v < n_values; ++v) {
        const std::uint8_t want = encode_any(fp8q::all_formats[f], values[v]);
        if (!FP8Q_TEST_CHECK(check, got[f * n_values + v] == want)) {
          std::printf("  device %d %s(%g): got 0x%02X, host 0x%02X\n", dev,
                      fp8q::to_string(fp8q::all_formats[f]), values[v], got[f * n_values + v],
                      want);
        }
      }
    }
  }
  return check.finish();
}
