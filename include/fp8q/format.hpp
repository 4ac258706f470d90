// fp8q — FP8 formats: traits derived from the bit layout, and one storage type per format.
//
// Every trait below is computed from four facts per format (exponent bits, mantissa bits, sign
// bit present, and how the format spends its special codes); nothing is a hand-typed constant
// except those facts. tests/host/test_formats.cpp checks them against the OCP and MLIR tables.
#pragma once

#include <cstdint>

#include "fp8q/config.hpp"

namespace fp8q {

/// The FP8 formats fp8q reads and writes. e8m0fnu is a scale format only (MX block scales).
enum class format : std::uint8_t { e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0fnu };

/// Every format, in declaration order (handy for tests and tables).
inline constexpr format all_formats[] = {format::e4m3fn, format::e4m3fnuz, format::e5m2,
                                         format::e5m2fnuz, format::e8m0fnu};

/// How a format spends the codes that are not ordinary finite numbers.
enum class special_codes : std::uint8_t {
  ieee,  ///< all-ones exponent: Inf (mantissa 0) or NaN; signed zero        (e5m2)
  fn,    ///< finite, only S.1111.111 is NaN; signed zero                   (e4m3fn)
  fnuz,  ///< finite, 0x80 is the only NaN, unsigned zero, bias one higher  (e4m3fnuz, e5m2fnuz)
  fnu,   ///< unsigned, no zero, all-ones is NaN, no subnormals             (e8m0fnu)
};

namespace detail {

FP8Q_HD constexpr float f32_from_bits(std::uint32_t u) { return __builtin_bit_cast(float, u); }
FP8Q_HD constexpr std::uint32_t bits_from_f32(float f) {
  return __builtin_bit_cast(std::uint32_t, f);
}

// 2^k as an f32, exact for k in [-149, 127] (subnormals included).
FP8Q_HD constexpr float exp2i(int k) {
  return k >= -126 ? f32_from_bits(static_cast<std::uint32_t>(k + 127) << 23)
                   : f32_from_bits(std::uint32_t{1} << (k + 149));
}

}  // namespace detail

/// Traits of one format, all derived from its layout (see make_traits).
struct format_traits {
  const char* name;
  int exponent_bits;
  int mantissa_bits;
  bool has_sign;
  special_codes specials;
  int bias;
  bool has_inf;
  bool has_negative_zero;
  bool has_zero;
  bool has_subnormals;
  int nan_count;               ///< how many of the 256 codes are NaN
  std::uint8_t nan_bits;       ///< canonical (positive) NaN written by encode
  std::uint8_t inf_bits;       ///< +Inf code, or 0 when has_inf is false
  std::uint8_t max_bits;       ///< largest finite positive code
  std::uint8_t min_normal_bits;
  int max_exponent;            ///< unbiased exponent of max
  int min_normal_exponent;     ///< unbiased exponent of the smallest normal
  float max;                   ///< largest finite value
  float min_normal;            ///< smallest positive normal value
  float min_subnormal;         ///< smallest positive value (== min_normal without subnormals)
};

namespace detail {

FP8Q_HD constexpr format_traits make_traits(const char* name, int e, int m, special_codes sp) {
  format_traits t{};
  t.name = name;
  t.exponent_bits = e;
  t.mantissa_bits = m;
  t.has_sign = sp != special_codes::fnu;
  t.specials = sp;
  const int ieee_bias = (1 << (e - 1)) - 1;
  t.bias = sp == special_codes::fnuz ? ieee_bias + 1 : ieee_bias;
  t.has_inf = sp == special_codes::ieee;
  t.has_negative_zero = sp == special_codes::ieee || sp == special_codes::fn;
  t.has_zero = sp != special_codes::fnu;
  t.has_subnormals = sp != special_codes::fnu;
  const int exp_all_ones = (1 << e) - 1;
  const int mant_all_ones = (1 << m) - 1;
  int max_field = 0;
  int max_mant = 0;
  switch (sp) {
    case special_codes::ieee:  // top exponent reserved for Inf/NaN
      max_field = exp_all_ones - 1;
      max_mant = mant_all_ones;
      t.nan_count = 2 * mant_all_ones;
      t.inf_bits = static_cast<std::uint8_t>(exp_all_ones << m);
      t.nan_bits = static_cast<std::uint8_t>((exp_all_ones << m) | (1 << (m - 1)));  // quiet
      break;
    case special_codes::fn:  // only the all-ones magnitude is NaN
      max_field = exp_all_ones;
      max_mant = mant_all_ones - 1;
      t.nan_count = 2;
      t.nan_bits = static_cast<std::uint8_t>((exp_all_ones << m) | mant_all_ones);
      break;
    case special_codes::fnuz:  // negative zero's code is the NaN
      max_field = exp_all_ones;
      max_mant = mant_all_ones;
      t.nan_count = 1;
      t.nan_bits = 0x80;
      break;
    case special_codes::fnu:  // all-ones is NaN, every other code is a power of two
      max_field = exp_all_ones - 1;
      max_mant = 0;
      t.nan_count = 1;
      t.nan_bits = static_cast<std::uint8_t>(exp_all_ones);
      break;
  }
  t.max_bits = static_cast<std::uint8_t>((max_field << m) | max_mant);
  t.max_exponent = max_field - t.bias;
  t.min_normal_exponent = (t.has_subnormals ? 1 : 0) - t.bias;
  t.min_normal_bits = static_cast<std::uint8_t>(t.has_subnormals ? (1 << m) : 0);
  t.max = static_cast<float>((1 << m) | max_mant) * exp2i(t.max_exponent - m);
  t.min_normal = exp2i(t.min_normal_exponent);
  t.min_subnormal = t.has_subnormals ? exp2i(t.min_normal_exponent - m) : t.min_normal;
  return t;
}

}  // namespace detail

/// Traits of a format, usable in constant expressions on host and device.
FP8Q_HD constexpr format_traits traits(format f) {
  switch (f) {
    case format::e4m3fn: return detail::make_traits("e4m3fn", 4, 3, special_codes::fn);
    case format::e4m3fnuz: return detail::make_traits("e4m3fnuz", 4, 3, special_codes::fnuz);
    case format::e5m2: return detail::make_traits("e5m2", 5, 2, special_codes::ieee);
    case format::e5m2fnuz: return detail::make_traits("e5m2fnuz", 5, 2, special_codes::fnuz);
    case format::e8m0fnu: return detail::make_traits("e8m0fnu", 8, 0, special_codes::fnu);
  }
  return detail::make_traits("e4m3fn", 4, 3, special_codes::fn);
}

template <format F>
inline constexpr format_traits traits_v = traits(F);

/// Name of a format ("e4m3fn", ...).
constexpr const char* to_string(format f) { return traits(f).name; }

/// One FP8 value in format F: a byte that only converts to another format explicitly.
template <format F>
struct fp8 {
  static constexpr format fmt = F;
  std::uint8_t bits;
  friend constexpr bool operator==(fp8, fp8) = default;
};
static_assert(sizeof(fp8<format::e4m3fn>) == 1 && alignof(fp8<format::e4m3fn>) == 1);

using e4m3fn = fp8<format::e4m3fn>;
using e4m3fnuz = fp8<format::e4m3fnuz>;
using e5m2 = fp8<format::e5m2>;
using e5m2fnuz = fp8<format::e5m2fnuz>;
using e8m0fnu = fp8<format::e8m0fnu>;

/// bfloat16 storage (the upper half of an IEEE binary32).
struct bf16 {
  std::uint16_t bits;
  friend constexpr bool operator==(bf16, bf16) = default;
};
/// IEEE binary16 storage.
struct f16 {
  std::uint16_t bits;
  friend constexpr bool operator==(f16, f16) = default;
};

/// Exact widening conversions (every bf16 and f16 value is an f32 value).
FP8Q_HD constexpr float to_float(bf16 x) {
  return detail::f32_from_bits(static_cast<std::uint32_t>(x.bits) << 16);
}
FP8Q_HD constexpr float to_float(f16 x) {
  const std::uint32_t sign = static_cast<std::uint32_t>(x.bits & 0x8000u) << 16;
  const std::uint32_t e = (x.bits >> 10) & 0x1fu;
  const std::uint32_t m = x.bits & 0x3ffu;
  if (e == 0x1f) return detail::f32_from_bits(sign | 0x7f800000u | (m << 13));
  if (e != 0) return detail::f32_from_bits(sign | ((e + 112) << 23) | (m << 13));
  // zero or subnormal: m * 2^-24, exact in f32
  const float mag = static_cast<float>(m) * detail::exp2i(-24);
  return sign ? -mag : mag;
}
FP8Q_HD constexpr float to_float(float x) { return x; }

/// Round-to-nearest-even narrowing, for building inputs (not used by quantization itself).
FP8Q_HD constexpr bf16 to_bf16(float x) {
  std::uint32_t u = detail::bits_from_f32(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{static_cast<std::uint16_t>((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return bf16{static_cast<std::uint16_t>(u >> 16)};
}
FP8Q_HD constexpr f16 to_f16(float x) {
  const std::uint32_t u = detail::bits_from_f32(x);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return f16{static_cast<std::uint16_t>(sign | 0x7e00u)};
  if (a >= 0x477ff000u) return f16{static_cast<std::uint16_t>(sign | 0x7c00u)};  // >= 65520
  const int e = static_cast<int>(a >> 23) - 127;
  std::uint64_t mant = (a & 0x7fffffu) | (a >> 23 ? 0x800000u : 0u);
  int shift = e >= -14 ? 13 : 13 + (-14 - e);
  if (shift > 40) shift = 40;  // far below f16's smallest subnormal: rounds to zero
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  std::uint64_t q = mant >> shift;
  const std::uint64_t rem = mant & ((std::uint64_t{1} << shift) - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  const std::uint32_t base = e >= -14 ? static_cast<std::uint32_t>(e + 14) << 10 : 0u;
  return f16{static_cast<std::uint16_t>(sign | (base + q))};
}

}  // namespace fp8q
