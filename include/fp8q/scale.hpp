// fp8q — from amax to scale: the f32 rule (max / max(amax, eps), optional power of two) and the
// MX e8m0 rules (FLOOR, RCEIL). Host and device evaluate exactly these functions.
#pragma once

#include <cstdint>

#include "fp8q/config.hpp"
#include "fp8q/convert.hpp"
#include "fp8q/format.hpp"
#include "fp8q/spec.hpp"

namespace fp8q {

/// |x| as the amax reduction sees it: NaN stays NaN (with the sign cleared).
FP8Q_HD constexpr float abs_value(float x) {
  return detail::f32_from_bits(detail::bits_from_f32(x) & 0x7fffffffu);
}

/// max for the amax reduction: NaN wins over everything, so one NaN makes the group's amax NaN.
/// Works on the bit patterns of non-negative floats, where integer order equals value order and
/// every NaN (0x7f800001..) sorts above +Inf: the same max an unsigned atomicMax computes.
FP8Q_HD constexpr float amax_combine(float a, float b) {
  const std::uint32_t ua = detail::bits_from_f32(a);
  const std::uint32_t ub = detail::bits_from_f32(b);
  return detail::f32_from_bits(ua > ub ? ua : ub);
}

/// Canonical form of an amax (any NaN becomes 0x7fc00000) so every backend reports the same bits.
FP8Q_HD constexpr float canonical_amax(float a) {
  return a != a ? detail::f32_from_bits(0x7fc00000u) : a;
}

/// s = fmt_max / max(amax, eps), one correctly rounded f32 division (equal to computing it in
/// f64 and rounding once to f32). NaN amax gives NaN; Inf amax gives 0. With power_of_2, s is
/// rounded down to a power of two by clearing its mantissa bits.
FP8Q_HD constexpr float scale_from_amax(float amax, float fmt_max, float eps, bool power_of_2) {
  if (amax != amax) return amax;
  const float denom = amax > eps ? amax : eps;
  float s = fmt_max / denom;
  if (power_of_2 && s == s) s = detail::f32_from_bits(detail::bits_from_f32(s) & 0xff800000u);
  return s;
}

/// A NaN produced by arithmetic has no portable sign or payload (x86 makes Inf * 0 a negative
/// NaN, NVIDIA GPUs return 0x7fffffff for every NaN result), so every NaN that fp8q computes is
/// replaced by the positive quiet NaN 0x7fc00000 before it is encoded or stored.
FP8Q_HD constexpr float canonical_nan(float v) {
  return v != v ? detail::f32_from_bits(0x7fc00000u) : v;
}

/// The inverse that dequantization multiplies by: 1/s, correctly rounded (exact for powers of 2);
/// a NaN scale gives the canonical NaN.
FP8Q_HD constexpr float inverse_scale(float s) { return canonical_nan(1.0f / s); }

/// q = encode(clamp(x * s)) for f32 scales. The multiply is one correctly rounded f32 multiply;
/// saturation clamps (keeping NaN), propagation lets encode's overflow rule act. A NaN product
/// (NaN input, NaN scale, or Inf * 0) encodes as the format's positive canonical NaN.
template <format F>
FP8Q_HD constexpr fp8<F> quantize_value(float x, float s, overflow ov, rounding r,
                                        std::uint32_t random_bits) {
  return encode<F>(canonical_nan(x * s), r, random_bits, ov);
}

/// Unbiased exponent (floor(log2 v)) of a positive finite f32, subnormals included.
FP8Q_HD constexpr int floor_log2(float v) {
  const std::uint32_t u = detail::bits_from_f32(v) & 0x7fffffffu;
  const int e = static_cast<int>(u >> 23);
  if (e != 0) return e - 127;
  if (u == 0) return -150;  // log2(0) = -inf: below every exponent the callers clamp to
  int lz = 0;  // subnormal: position of the leading one in the 23-bit fraction
  for (std::uint32_t m = u; (m & 0x400000u) == 0; m <<= 1) ++lz;
  return -127 - lz;
}

/// MX: the e8m0 scale exponent (biased code 0..254, or 0xFF for a NaN amax) of a block.
///  floor: code = clamp(floor(log2 amax) - emax(F), -127, 127) + 127; amax 0 gives code 0.
///  rceil: code = clamp(ceil(log2(amax / max(F))), -127, 127) + 127, the division correctly
///         rounded in f32; amax 0 gives code 0.
/// An Inf amax counts as 2^128: rceil clamps to code 254, floor gives 128 - emax(F) + 127
/// (247 for e4m3fn, 240 for e5m2).
template <format F>
FP8Q_HD constexpr std::uint8_t mx_scale_code(float amax, e8m0_rounding r) {
  constexpr format_traits t = traits(F);
  if (amax != amax) return 0xff;
  if (amax == 0.0f) return 0;
  int e = 0;
  if (r == e8m0_rounding::floor) {
    e = (amax > 3.4028235e38f ? 128 : floor_log2(amax)) - t.max_exponent;
  } else {
    const float q = amax / t.max;  // may be Inf for Inf amax
    if (q > 3.4028235e38f) {
      e = 128;
    } else if (q == 0.0f) {
      e = -127;  // amax / max underflowed: ceil(log2(q)) is below the clamp
    } else {
      const int fl = floor_log2(q);
      const bool exact = (detail::bits_from_f32(q) & 0x7fffffu) == 0 && q >= 1.17549435e-38f;
      // a subnormal q is a power of two only when a single fraction bit is set
      const std::uint32_t frac = detail::bits_from_f32(q) & 0x7fffffu;
      const bool sub_pow2 = q < 1.17549435e-38f && (frac & (frac - 1)) == 0;
      e = (exact || sub_pow2) ? fl : fl + 1;
    }
  }
  if (e < -127) e = -127;
  if (e > 127) e = 127;
  return static_cast<std::uint8_t>(e + 127);
}

/// 2^-(code - 127) as the f32 multiplier applied before encoding (exact; 0xFF gives NaN).
FP8Q_HD constexpr float mx_multiplier(std::uint8_t code) {
  if (code == 0xff) return detail::f32_from_bits(0x7fc00000u);
  return detail::exp2i(127 - static_cast<int>(code));
}

}  // namespace fp8q
