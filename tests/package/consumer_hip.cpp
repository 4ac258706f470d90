// A downstream HIP source (compiled as HIP through hip::device) linked to fp8q::hip.
// Built, not run: the CI machine has no AMD GPU.
#include <fp8q/convert.hpp>
#include <fp8q/device.hpp>

#include <cstdio>

// in: [n] f32; out: [n] e4m3fnuz
__global__ void to_e4m3fnuz(const float* in, fp8q::e4m3fnuz* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = fp8q::encode<fp8q::format::e4m3fnuz>(in[i], fp8q::overflow::saturate);
}

int main() {
  int devices = 0;
  const fp8q::status st = fp8q::device_count(&devices);
  std::printf("consumer_hip: %d device(s) (%s)\n", devices, fp8q::to_string(st));
  return 0;
}
