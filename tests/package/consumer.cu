// A downstream CUDA source linked to fp8q::cuda: constexpr encode in a kernel needs the
// --expt-relaxed-constexpr and C++20 flags the target carries. Built, not run.
#include <fp8q/convert.hpp>
#include <fp8q/device.hpp>

#include <cstdint>
#include <cstdio>

// in: [n] f32; out: [n] e4m3fn
__global__ void to_e4m3fn(const float* in, fp8q::e4m3fn* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = fp8q::encode<fp8q::format::e4m3fn>(in[i], fp8q::overflow::saturate);
}

int main() {
  int devices = 0;
  const fp8q::status st = fp8q::device_count(&devices);
  std::printf("consumer_cuda: %d device(s) (%s)\n", devices, fp8q::to_string(st));
  return 0;
}
