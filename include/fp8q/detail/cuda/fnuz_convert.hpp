// fp8q — the fnuz formats through NVIDIA's OCP converters (cvt.rn.satfinite), for
// overflow::saturate. Byte-equal to fp8q::encode (with encode_scaled's NaN rule) on all 2^32 f32
// inputs for both fnuz formats (tests/gpu/test_fast_encode_gpu, H200, 2026-12-01: 0 mismatches),
// but slower than the software encoder there (docs/encoder.md), so only convert_path::hardware
// takes it.
//
// Why it can be exact: an fnuz code read with the OCP format's bias (one lower) is worth twice
// its fnuz value, subnormals included (the fnuz grid is the OCP grid halved, step for step). So
// for |v| < 2^127, where 2v is exact, the OCP nearest-even code of 2v is the fnuz nearest-even
// code of v wherever the OCP format can hold it. Where it cannot, by inspection of both code
// tables:
//   - NaN: the converter writes a NaN code; fnuz's NaN is 0x80 (any input sign).
//   - zero: the OCP result 0x80 is -0; fnuz has no negative zero: 0x00.
//   - e4m3fnuz 0x7F (240, the top code): e4m3fn's 0x7F is NaN, so satfinite stops at 0x7E
//     (448 = 2 * 224). |v| > 232 (the 224/240 midpoint; 232 itself ties to 0x7E) is exactly the
//     set whose fnuz code is 0x7F under saturation (Inf and 2v = Inf included), where the
//     converter returns sign | 0x7E: OR in 1.
//   - e5m2fnuz's top binade (0x7C..0x7F, 32768..57344): e5m2 spends it on Inf/NaN, so the
//     converter saturates 2v at 0x7B. There the OCP code of v itself plus 4 is right: in e5m2's
//     normal range both formats have the same step at the same magnitude, and the fnuz exponent
//     field is one higher; e5m2 satfinite stops at 0x7B (57344), which plus 4 is fnuz's max.
//     |v| >= 30720 (the 28672/32768 midpoint, which ties to 0x7C) selects it.
#pragma once

#include <cuda_fp8.h>

#include <cstdint>

#include "fp8q/format.hpp"

namespace fp8q::detail::nv {

template <format F>
inline constexpr bool has_fnuz_via_ocp = F == format::e4m3fnuz || F == format::e5m2fnuz;

// Two OCP codes (low byte: lo) of one converter call.
template <format Ocp>
__device__ inline std::uint32_t ocp_pair(float lo, float hi) {
  const __nv_fp8_interpretation_t kind = Ocp == format::e4m3fn ? __NV_E4M3 : __NV_E5M2;
  return __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, kind);
}

// Four OCP codes (byte j: v[j]) of two converter calls. The halves are joined in PTX: the
// intrinsic's 16-bit result costs a zero-extension per pair before any packing.
template <format Ocp>
__device__ inline std::uint32_t ocp_word(float v0, float v1, float v2, float v3) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  std::uint32_t w = 0;
  // cvt.*x2.f32 d, a, b puts a's code in the upper byte of d
  if constexpr (Ocp == format::e4m3fn) {
    asm("{\n .reg .b16 lo, hi;\n cvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n"
        " cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n mov.b32 %0, {lo, hi};\n}"
        : "=r"(w) : "f"(v0), "f"(v1), "f"(v2), "f"(v3));
  } else {
    asm("{\n .reg .b16 lo, hi;\n cvt.rn.satfinite.e5m2x2.f32 lo, %2, %1;\n"
        " cvt.rn.satfinite.e5m2x2.f32 hi, %4, %3;\n mov.b32 %0, {lo, hi};\n}"
        : "=r"(w) : "f"(v0), "f"(v1), "f"(v2), "f"(v3));
  }
  return w;
#else
  return ocp_pair<Ocp>(v0, v1) | (ocp_pair<Ocp>(v2, v3) << 16);  // the intrinsic's emulation
#endif
}

/// Four values to one word of fnuz codes (saturate; NaN -> 0x80), through the OCP converter.
template <format F>
__device__ inline std::uint32_t fnuz_word_via_ocp(const float (&v)[4]) {
  static_assert(has_fnuz_via_ocp<F>, "fp8q: e4m3fnuz or e5m2fnuz");
  constexpr bool e4m3 = F == format::e4m3fnuz;
  constexpr format ocp = e4m3 ? format::e4m3fn : format::e5m2;
  const std::uint32_t doubled = ocp_pair<ocp>(2.0f * v[0], 2.0f * v[1]) |
                                (ocp_pair<ocp>(2.0f * v[2], 2.0f * v[3]) << 16);
  std::uint32_t direct = 0;
  if constexpr (!e4m3) direct = ocp_pair<ocp>(v[0], v[1]) | (ocp_pair<ocp>(v[2], v[3]) << 16);
  std::uint32_t w = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const std::uint32_t h = (doubled >> (8 * j)) & 0xffu;
    const float a = __builtin_fabsf(v[j]);
    std::uint32_t q = (h & 0x7fu) == 0 ? 0u : h;  // no negative zero
    if constexpr (e4m3) {
      q = a > 232.0f ? (h | 1u) : q;
    } else {
      const std::uint32_t g = (direct >> (8 * j)) & 0xffu;
      q = a >= 30720.0f ? g + 4u : q;
    }
    q = a != a ? 0x80u : q;
    w |= q << (8 * j);
  }
  return w;
}

}  // namespace fp8q::detail::nv
