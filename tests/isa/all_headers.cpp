// tests/isa/all_headers.cpp — every public fp8q header in one translation unit, compiled by
// every toolchain fp8q supports: g++ (host), nvcc -x cu (sm_90), hipcc -x hip (gfx90a, gfx940)
// and clang-19 -x hip --cuda-device-only (gfx942). It proves that
//   * the headers compose and compile under each toolchain, host and device passes alike;
//   * encode / encode_stochastic / decode instantiate for every format in a kernel and on the host;
//   * the compile-time arch query (compiled_fp8_family, compiled_wave_size) names the right
//     FP8 family and wave size in each device pass — the only place that query is tested.
// The include list is generated at configure time (tests/isa/CMakeLists.txt), so a new header
// is picked up without editing this file.
#include "fp8q_public_headers.hpp"

#include <cstdint>
#include <iterator>

namespace {

using fp8q::format;
using fp8q::overflow;

template <format F>
FP8Q_HD float exercise(float x, std::uint64_t index) {
  const std::uint32_t random = fp8q::stochastic_bits(0x5eedu, index);
  const auto a = fp8q::encode<F>(x, overflow::saturate);
  const auto b = fp8q::encode<F>(fp8q::to_bf16(x), overflow::propagate);
  const auto c = fp8q::encode_stochastic<F>(fp8q::to_f16(x), random, overflow::saturate);
  const auto d = fp8q::encode<F>(x, fp8q::rounding::stochastic, random, overflow::propagate);
  return fp8q::decode(a) + fp8q::decode(b) + fp8q::decode(c) + fp8q::decode(F, d.bits) +
         (fp8q::is_nan(a) ? 1.0f : 0.0f);
}

template <format... Fs>
FP8Q_HD float exercise_formats(float x, std::uint64_t index) {
  return (exercise<Fs>(x, index) + ...);
}

static_assert(std::size(fp8q::all_formats) == 5,
              "a format was added: list it in exercise_every_format below");

FP8Q_HD float exercise_every_format(float x, std::uint64_t index) {
  return exercise_formats<format::e4m3fn, format::e4m3fnuz, format::e5m2, format::e5m2fnuz,
                          format::e8m0fnu>(x, index);
}

// Constant evaluation in every pass (nvcc and hipcc device passes included).
static_assert(fp8q::encode<format::e4m3fn>(464.0f, overflow::propagate).bits == 0x7E);
static_assert(fp8q::encode<format::e4m3fnuz>(248.0f, overflow::saturate).bits == 0x7F);
static_assert(fp8q::traits(format::e4m3fnuz).max == 240.0f);
static_assert(fp8q::decode(fp8q::e5m2{0x7B}) == 57344.0f);
static_assert(fp8q::parse_arch("gfx942:sramecc+:xnack-").family == fp8q::fp8_family::fnuz);

}  // namespace

// ---- compile-time arch query, per pass ----------------------------------------------------
#if FP8Q_DEVICE_PASS
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
static_assert(fp8q::compiled_fp8_family() == fp8q::fp8_family::fnuz, "MI300 computes in fnuz");
#elif defined(__gfx90a__)
static_assert(fp8q::compiled_fp8_family() == fp8q::fp8_family::none, "MI200 has no FP8");
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
static_assert(fp8q::compiled_fp8_family() == fp8q::fp8_family::ocp, "sm_90 computes in OCP");
#endif
#if defined(__GFX9__) || defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx942__)
static_assert(fp8q::compiled_wave_size() == 64, "gfx9 (GCN/CDNA) waves are 64 wide");
#elif defined(__CUDA_ARCH__)
static_assert(fp8q::compiled_wave_size() == 32);
#endif
#else
// One host binary serves every device, so the host pass must not claim a family.
static_assert(fp8q::compiled_fp8_family() == fp8q::fp8_family::none);
static_assert(fp8q::compiled_wave_size() == 0);
#endif

// ---- instantiations ----------------------------------------------------------------------
#if FP8Q_TOOLCHAIN_CUDA || FP8Q_TOOLCHAIN_HIP
// in, out: [n] f32. External linkage so the device pass keeps it (asm checks look for it).
__global__ void fp8q_isa_all_formats(const float* in, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = exercise_every_format(in[i], static_cast<std::uint64_t>(i));
}
#endif

#if !FP8Q_DEVICE_PASS
float fp8q_isa_host(float x, std::uint64_t index) { return exercise_every_format(x, index); }

int fp8q_isa_devices() {
  int count = 0;
  if (fp8q::device_count(&count) != fp8q::status::success) return 0;
  fp8q::device_info info;
  if (fp8q::query_device(0, &info) != fp8q::status::success) return -1;
  return count;
}
#endif
