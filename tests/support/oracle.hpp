// tests/support/oracle.hpp — reference implementations that fp8q's conversions are tested against.
//
// Nothing here calls fp8q's traits, encode or decode. Every value comes from the literal format
// facts in facts_of() (OCP 8-bit floating point spec for e4m3fn/e5m2/e8m0fnu, the MLIR/LLVM
// definition for the fnuz formats), evaluated with std::ldexp in double. fp8q::format and
// fp8q::overflow are borrowed as names only. Two encoders live here:
//   encode_rne     — brute force: scans every finite value of the format for the nearest one.
//                    Slow and obviously right; used on up to a few million inputs.
//   segment_table  — a step function over f32 bit patterns, built from the midpoints between
//                    neighbouring values. Fast enough for all 2^32 inputs; cross-checked against
//                    encode_rne in tests/host/test_encode.cpp.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "fp8q/convert.hpp"  // for the names fp8q::format and fp8q::overflow only
#include "fp8q/format.hpp"

namespace oracle {

using fp8q::format;
using fp8q::overflow;

/// The definition of one format, typed in from the specs (not derived from fp8q).
struct facts {
  const char* name;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool is_signed;           // bit 7 is a sign bit (all but e8m0fnu)
  bool has_inf;             // S.11111.00 is ±Inf (e5m2 only)
  bool signed_nan;          // NaN codes exist in both signs, so encode keeps the input's sign
  bool has_negative_zero;   // 0x80 is -0 (OCP formats); in fnuz it is the NaN
  std::uint8_t nan_code;    // the NaN encode writes for a positive NaN
  std::uint8_t inf_code;    // +Inf code, 0 when there is none
};

inline facts facts_of(format f) {
  switch (f) {
    case format::e4m3fn: return {"e4m3fn", 4, 3, 7, true, false, true, true, 0x7F, 0};
    case format::e4m3fnuz: return {"e4m3fnuz", 4, 3, 8, true, false, false, false, 0x80, 0};
    case format::e5m2: return {"e5m2", 5, 2, 15, true, true, true, true, 0x7E, 0x7C};
    case format::e5m2fnuz: return {"e5m2fnuz", 5, 2, 16, true, false, false, false, 0x80, 0};
    case format::e8m0fnu: return {"e8m0fnu", 8, 0, 127, false, false, false, false, 0xFF, 0};
  }
  throw std::logic_error("unknown format");
}

inline constexpr format formats[] = {format::e4m3fn, format::e4m3fnuz, format::e5m2,
                                     format::e5m2fnuz, format::e8m0fnu};
inline constexpr overflow policies[] = {overflow::saturate, overflow::propagate};

/// Calls fn(std::integral_constant<format, F>{}) for every format, so a test body can use F as a
/// template argument of fp8q's encode/decode.
template <class Fn>
void for_each_format(Fn&& fn) {
  fn(std::integral_constant<format, format::e4m3fn>{});
  fn(std::integral_constant<format, format::e4m3fnuz>{});
  fn(std::integral_constant<format, format::e5m2>{});
  fn(std::integral_constant<format, format::e5m2fnuz>{});
  fn(std::integral_constant<format, format::e8m0fnu>{});
}

/// Which codes are NaN, written from the format definitions.
inline bool is_nan_code(format f, std::uint8_t c) {
  switch (f) {
    case format::e4m3fn: return (c & 0x7F) == 0x7F;  // S.1111.111
    case format::e5m2: return (c & 0x7F) > 0x7C;     // S.11111.{01,10,11}
    case format::e4m3fnuz:
    case format::e5m2fnuz: return c == 0x80;         // the would-be -0
    case format::e8m0fnu: return c == 0xFF;
  }
  return false;
}
inline bool is_inf_code(format f, std::uint8_t c) {
  return f == format::e5m2 && (c & 0x7F) == 0x7C;
}

/// Value of a code per the format definition: NaN (signed where the format's NaNs are), ±Inf,
/// or (-1)^s · 2^(E - bias) · 1.M, with E = 0 meaning 2^(1 - bias) · 0.M.
inline double value_of(format f, std::uint8_t c) {
  const facts d = facts_of(f);
  const double sign = d.is_signed && (c & 0x80) ? -1.0 : 1.0;
  if (is_nan_code(f, c)) {
    return std::copysign(std::numeric_limits<double>::quiet_NaN(), d.signed_nan ? sign : 1.0);
  }
  if (is_inf_code(f, c)) return sign * std::numeric_limits<double>::infinity();
  if (!d.is_signed) return std::ldexp(1.0, static_cast<int>(c) - d.bias);  // e8m0fnu: 2^(c-127)
  const int e_field = (c & 0x7F) >> d.mantissa_bits;
  const int m_field = c & ((1 << d.mantissa_bits) - 1);
  const double magnitude =
      e_field == 0 ? std::ldexp(m_field, 1 - d.bias - d.mantissa_bits)
                   : std::ldexp(m_field + (1 << d.mantissa_bits), e_field - d.bias - d.mantissa_bits);
  return sign * magnitude;  // 0x80 gives -0.0 where it is not NaN
}

/// Value of a bf16 pattern, from its fields (1 sign, 8 exponent, 7 mantissa bits, bias 127).
inline double bf16_value(std::uint16_t b) {
  const double sign = (b & 0x8000) ? -1.0 : 1.0;
  const int e = (b >> 7) & 0xFF;
  const int m = b & 0x7F;
  if (e == 0xFF) {
    return m ? std::copysign(std::numeric_limits<double>::quiet_NaN(), sign)
             : sign * std::numeric_limits<double>::infinity();
  }
  return sign * (e == 0 ? std::ldexp(m, -126 - 7) : std::ldexp(m + 128, e - 127 - 7));
}

/// Value of an IEEE binary16 pattern, from its fields (1 sign, 5 exponent, 10 mantissa, bias 15).
inline double f16_value(std::uint16_t b) {
  const double sign = (b & 0x8000) ? -1.0 : 1.0;
  const int e = (b >> 10) & 0x1F;
  const int m = b & 0x3FF;
  if (e == 0x1F) {
    return m ? std::copysign(std::numeric_limits<double>::quiet_NaN(), sign)
             : sign * std::numeric_limits<double>::infinity();
  }
  return sign * (e == 0 ? std::ldexp(m, -14 - 10) : std::ldexp(m + 1024, e - 15 - 10));
}

/// One rung of a format's ladder of non-negative values.
struct rung {
  double value;
  int code;  // positive code; the last rung is virtual (code max_code + 1) and means overflow
};

/// Non-negative finite values of a format in increasing order, then one virtual rung above max:
/// max + one ulp of max's binade, carrying the code max_code + 1. Rounding to the virtual rung is
/// what overflow means (so 464 ties to 448 in e4m3fn, 0x7E even, while 248 ties to the virtual
/// 256 in e4m3fnuz, 0x80 even, and overflows).
inline std::vector<rung> make_ladder(format f) {
  const facts d = facts_of(f);
  std::vector<rung> r;
  const int last = d.is_signed ? 0x7F : 0xFF;
  for (int c = 0; c <= last; ++c) {
    const auto b = static_cast<std::uint8_t>(c);
    if (is_nan_code(f, b) || is_inf_code(f, b)) continue;
    r.push_back({value_of(f, b), c});
  }
  std::sort(r.begin(), r.end(), [](const rung& a, const rung& b) { return a.value < b.value; });
  const rung top = r.back();
  int binade = 0;
  std::frexp(top.value, &binade);  // top.value = f * 2^binade, f in [0.5, 1)
  r.push_back({top.value + std::ldexp(1.0, binade - 1 - d.mantissa_bits), top.code + 1});
  return r;
}

/// make_ladder, computed once per format (the brute-force encoder reads it on every call).
inline const std::vector<rung>& ladder(format f) {
  static const std::vector<rung> all[] = {make_ladder(format::e4m3fn), make_ladder(format::e4m3fnuz),
                                          make_ladder(format::e5m2), make_ladder(format::e5m2fnuz),
                                          make_ladder(format::e8m0fnu)};
  return all[static_cast<int>(f)];
}

inline int max_code(format f) {
  const auto& r = ladder(f);
  return r[r.size() - 2].code;
}

/// Byte for an overflowed value of the given sign under a policy.
inline std::uint8_t overflow_byte(format f, bool negative, overflow ov) {
  const facts d = facts_of(f);
  const std::uint8_t s = negative && d.is_signed ? 0x80 : 0x00;
  if (ov == overflow::saturate) return static_cast<std::uint8_t>(s | max_code(f));
  if (d.has_inf) return static_cast<std::uint8_t>(s | d.inf_code);
  return d.signed_nan ? static_cast<std::uint8_t>(s | d.nan_code) : d.nan_code;
}

inline std::uint8_t nan_byte(format f, bool negative) {
  const facts d = facts_of(f);
  return d.signed_nan && negative ? static_cast<std::uint8_t>(0x80 | d.nan_code) : d.nan_code;
}

/// Final byte for a magnitude that rounded to ladder code `code` (possibly the overflow rung).
/// Zero keeps its sign only where the format has -0.
inline std::uint8_t finish(format f, int code, bool negative, overflow ov) {
  const facts d = facts_of(f);
  if (code > max_code(f)) return overflow_byte(f, negative, ov);
  if (code == 0 && !d.has_negative_zero) return 0x00;
  return static_cast<std::uint8_t>((negative && d.is_signed ? 0x80 : 0x00) | code);
}

/// Byte for inputs that never round: NaN, ±Inf, and (e8m0fnu) zero and negatives. Returns -1 for
/// an ordinary input.
inline int special_byte(format f, double x, overflow ov) {
  const bool negative = std::signbit(x);
  if (std::isnan(x)) return nan_byte(f, negative);
  if (f == format::e8m0fnu) {
    // No zero, no sign: x <= 0 is unrepresentable (0x00 = 2^-127 when saturating, else NaN).
    if (negative || x == 0.0) return ov == overflow::saturate ? 0x00 : 0xFF;
    if (std::isinf(x)) return ov == overflow::saturate ? 0xFE : 0xFF;
    return -1;
  }
  if (std::isinf(x)) return overflow_byte(f, negative, ov);
  return -1;
}

/// Compares |a - v| with |a - w| exactly: negative when v is nearer, 0 on a tie. Subtracting in
/// double could round two far-apart distances to the same number (a = 2^59 is no nearer to 448
/// than to 480 after rounding), so the comparison goes through the midpoint. The midpoint is exact
/// (fp8 values have at most 4 significant bits) except for e8m0fnu powers of two more than 2^53
/// apart, and an input within rounding distance of such a midpoint is itself a power of two: a
/// rung at distance 0, which wins every comparison that involves it.
inline int nearer(double a, double v, double w) {
  if (v == w) return 0;
  const double lo = std::min(v, w), hi = std::max(v, w);
  const double mid = (lo + hi) / 2;
  const int lo_nearer = a < mid ? -1 : a > mid ? 1 : 0;
  return v == lo ? lo_nearer : -lo_nearer;
}

/// Round-to-nearest encode by brute force: the rung nearest to |x| among all of them; on a tie
/// the rung whose code is even, except in e8m0fnu, whose ties go to the larger value.
inline std::uint8_t encode_rne(format f, double x, overflow ov) {
  if (const int s = special_byte(f, x, ov); s >= 0) return static_cast<std::uint8_t>(s);
  const double a = std::fabs(x);
  const auto& r = ladder(f);
  std::size_t best = 0;
  for (std::size_t i = 1; i < r.size(); ++i) {
    const int c = nearer(a, r[i].value, r[best].value);
    const bool tie_wins = f == format::e8m0fnu ? r[i].value > r[best].value
                                                : (r[i].code & 1) == 0;
    if (c < 0 || (c == 0 && tie_wins)) best = i;
  }
  return finish(f, r[best].code, std::signbit(x), ov);
}

/// The two rungs around |x| (lo <= |x| <= hi, equal when |x| is a value of the format or lies
/// beyond the overflow rung or, in e8m0fnu, below 2^-127) with the byte each one encodes to.
struct bracket {
  double lo, hi;
  std::uint8_t lo_byte, hi_byte;
};

inline bracket bracket_of(format f, double x, overflow ov) {
  const double a = std::fabs(x);
  const bool negative = std::signbit(x);
  const auto& r = ladder(f);
  std::size_t i = 0;
  while (i + 1 < r.size() && r[i + 1].value <= a) ++i;
  std::size_t j = r[i].value == a || i + 1 == r.size() || a < r[0].value ? i : i + 1;
  const std::uint8_t lo_byte = finish(f, r[i].code, negative, ov);
  const std::uint8_t hi_byte = finish(f, r[j].code, negative, ov);
  return {r[i].value, r[j].value, lo_byte, hi_byte};
}

/// Stochastic rounding as fp8q documents it: with p = (|x| - lo) / (hi - lo), round away from lo
/// exactly when random < floor(p * 2^32). The arithmetic is exact: |x| - lo by Sterbenz (or lo = 0),
/// hi - lo is a power of two, and p has at most 24 significant bits.
inline std::uint8_t encode_sr(format f, double x, std::uint32_t random, overflow ov) {
  if (const int s = special_byte(f, x, ov); s >= 0) return static_cast<std::uint8_t>(s);
  const bracket b = bracket_of(f, x, ov);
  if (b.lo == b.hi) return b.lo_byte;
  const double p = (std::fabs(x) - b.lo) / (b.hi - b.lo);
  const double threshold = std::floor(std::ldexp(p, 32));
  return static_cast<double>(random) < threshold ? b.hi_byte : b.lo_byte;
}

/// Round-to-nearest encode as a step function of the f32 bit pattern. For a non-negative f32
/// magnitude pattern a (< 0x7F800000), the rung index is the number of entries of `first` that
/// are <= a, minus one: `first[k]` is the first pattern that rounds to rung k.
struct segment_table {
  format fmt;
  std::vector<std::uint32_t> first;
  std::vector<int> code;  // rung codes; a code above max_code means overflow
  int max_code;
};

inline segment_table make_segment_table(format f) {
  const auto& r = ladder(f);
  segment_table t{f, {0u}, {r[0].code}, max_code(f)};
  for (std::size_t i = 0; i + 1 < r.size(); ++i) {
    // Midpoints of fp8 neighbours have at most mantissa_bits + 2 significant bits and lie within
    // f32's range, so they are exact f32 values.
    const double mid = (r[i].value + r[i + 1].value) / 2;
    const float mid32 = static_cast<float>(mid);
    if (static_cast<double>(mid32) != mid) throw std::logic_error("midpoint not an f32");
    const bool tie_up = f == format::e8m0fnu || (r[i + 1].code & 1) == 0;
    t.first.push_back(std::bit_cast<std::uint32_t>(mid32) + (tie_up ? 0u : 1u));
    t.code.push_back(r[i + 1].code);
  }
  return t;
}

/// Segment index of a non-negative finite magnitude pattern.
inline std::size_t segment_of(const segment_table& t, std::uint32_t a) {
  return static_cast<std::size_t>(std::upper_bound(t.first.begin(), t.first.end(), a) -
                                  t.first.begin()) -
         1;
}

/// Expected byte for any f32 pattern u, from the segment table.
inline std::uint8_t encode_table(const segment_table& t, std::uint32_t u, overflow ov) {
  const std::uint32_t a = u & 0x7FFFFFFFu;
  const bool negative = (u >> 31) != 0;
  if (a >= 0x7F800000u || (t.fmt == format::e8m0fnu && (negative || a == 0))) {
    return static_cast<std::uint8_t>(special_byte(t.fmt, std::bit_cast<float>(u), ov));
  }
  return finish(t.fmt, t.code[segment_of(t, a)], negative, ov);
}

/// f32 value `steps` nextafter steps from x (towards +Inf when positive).
inline float f32_step(float x, int steps) {
  for (; steps > 0; --steps) x = std::nextafter(x, std::numeric_limits<float>::infinity());
  for (; steps < 0; ++steps) x = std::nextafter(x, -std::numeric_limits<float>::infinity());
  return x;
}

}  // namespace oracle
