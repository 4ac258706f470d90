// fp8q — encode (f32/bf16/f16 -> FP8) and decode (FP8 -> f32), constexpr, host and device.
//
// This software path is the definition of every output byte. Hardware conversions are used by
// the GPU kernels only where a test proved them identical to it on every input.
// Rules (docs/semantics.md, "Conversion"):
//   nearest-even rounding on the exact input value (bf16 and f16 widen to f32 exactly first);
//   overflow::saturate  — finite overflow and ±Inf become ±max; NaN stays NaN;
//   overflow::propagate — overflow becomes Inf where the format has one, else NaN
//                         (what ml_dtypes and torch's .to(float8_*) write);
//   NaN input — the format's canonical NaN, with the input's sign where the format has signed
//               NaNs (e4m3fn 0x7F/0xFF, e5m2 0x7E/0xFE, fnuz 0x80, e8m0fnu 0xFF);
//   zero in fnuz formats — always 0x00 (no negative zero).
#pragma once

#include <cstdint>

#include "fp8q/config.hpp"
#include "fp8q/format.hpp"

namespace fp8q {

/// What happens to values beyond the largest finite value of the format.
enum class overflow : std::uint8_t {
  saturate,   ///< clamp to ±max (±Inf too); NaN stays NaN
  propagate,  ///< Inf where the format has one, otherwise NaN
};

/// How a value between two neighbours is rounded.
enum class rounding : std::uint8_t {
  nearest_even,  ///< IEEE round-to-nearest, ties to even
  stochastic,    ///< up with probability (x - lo) / (hi - lo), from stochastic_bits(seed, index)
};

constexpr const char* to_string(overflow o) {
  return o == overflow::saturate ? "saturate" : "propagate";
}
constexpr const char* to_string(rounding r) {
  return r == rounding::nearest_even ? "nearest_even" : "stochastic";
}

/// 32 random bits for stochastic rounding, a pure function of (seed, element index): results do
/// not depend on launch shape, thread count or call order. (SplitMix64 finalizer over a Weyl
/// sequence keyed by the seed.)
FP8Q_HD constexpr std::uint32_t stochastic_bits(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0xd1342543de82ef95ull + (index + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<std::uint32_t>(z >> 32);
}

namespace detail {

// Round `mant >> shift` to an integer. Nearest-even, or stochastic: up when the 32 random bits
// fall below the discarded fraction scaled to 2^32 (exact for shift <= 32; beyond that the
// fraction is below 2^-32 of the step and is floored to that resolution).
FP8Q_HD constexpr std::uint32_t round_shift(std::uint64_t mant, int shift, bool stochastic,
                                            std::uint32_t random) {
  if (shift <= 0) return static_cast<std::uint32_t>(mant << -shift);
  if (shift > 56) shift = 56;  // mant < 2^24: everything is discarded either way
  const std::uint64_t q = mant >> shift;
  const std::uint64_t rem = mant & ((std::uint64_t{1} << shift) - 1);
  bool up = false;
  if (stochastic) {
    const std::uint64_t threshold = shift <= 32 ? rem << (32 - shift) : rem >> (shift - 32);
    up = random < threshold;
  } else {
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    up = rem > half || (rem == half && (q & 1u));
  }
  return static_cast<std::uint32_t>(q + (up ? 1u : 0u));
}

template <format F>
FP8Q_HD constexpr std::uint8_t encode_signed(std::uint32_t u, overflow ov, bool stochastic,
                                             std::uint32_t random) {
  constexpr format_traits t = traits(F);
  constexpr int m = t.mantissa_bits;
  constexpr bool fnuz = t.specials == special_codes::fnuz;
  const std::uint8_t sign = static_cast<std::uint8_t>((u >> 24) & 0x80u);
  const std::uint32_t a = u & 0x7fffffffu;
  const std::uint8_t overflowed =
      ov == overflow::saturate ? static_cast<std::uint8_t>(sign | t.max_bits)
      : t.has_inf              ? static_cast<std::uint8_t>(sign | t.inf_bits)
      : fnuz                   ? t.nan_bits
                               : static_cast<std::uint8_t>(sign | t.nan_bits);
  if (a > 0x7f800000u) return fnuz ? t.nan_bits : static_cast<std::uint8_t>(sign | t.nan_bits);
  if (a == 0x7f800000u) return overflowed;
  if (!stochastic) {
    // Nearest-even in 32-bit integer steps (the common path; same results as the general one
    // below, which tests/slow checks over all 2^32 inputs).
    constexpr std::uint32_t min_normal = static_cast<std::uint32_t>(128 - t.bias) << 23;
    std::uint32_t code = 0;
    if (a >= min_normal) {
      // add half an FP8 ulp minus one, plus the kept LSB (ties to even); carries roll into the
      // exponent, then the exponent is re-biased
      const std::uint32_t r = a + ((1u << (22 - m)) - 1u) + ((a >> (23 - m)) & 1u);
      code = (r >> (23 - m)) - (static_cast<std::uint32_t>(127 - t.bias) << m);
    } else {
      // below the smallest normal: one f32 addition of a constant whose ulp is the FP8
      // subnormal step rounds |x| to that step (nearest even, like every f32 addition)
      constexpr float magic = exp2i(1 - t.bias - m + 23);
      code = bits_from_f32(f32_from_bits(a) + magic) - bits_from_f32(magic);
    }
    if (code > t.max_bits) return overflowed;
    if (code == 0) return fnuz ? std::uint8_t{0} : sign;
    return static_cast<std::uint8_t>(sign | code);
  }
  const int f32_exp = static_cast<int>(a >> 23);
  // value = mant * 2^(e - 23) with e the unbiased exponent of the leading bit position
  const std::uint64_t mant = (a & 0x7fffffu) | (f32_exp ? 0x800000u : 0u);
  const int e = (f32_exp ? f32_exp : 1) - 127;
  const int biased = e + t.bias;  // target exponent field if the value were normal there
  std::uint32_t code = 0;
  if (biased >= 1) {
    // The implicit bit kept in `mant` adds one to the exponent field: base holds field - 1, and a
    // rounding carry out of the mantissa moves to the next binade for free.
    code = (static_cast<std::uint32_t>(biased - 1) << m) +
           round_shift(mant, 23 - m, stochastic, random);
  } else {
    code = round_shift(mant, 23 - m + (1 - biased), stochastic, random);
  }
  if (code > t.max_bits) return overflowed;
  if (code == 0) return fnuz ? std::uint8_t{0} : sign;
  return static_cast<std::uint8_t>(sign | code);
}

// e8m0fnu: unsigned powers of two 2^-127 .. 2^127, 0xFF NaN, no zero. Nearest in value; a tie
// (x = 1.5 * 2^k) goes up, because the kept significand is the implicit 1, which is odd (the
// rule ml_dtypes and torch apply). Below 2^-127 everything rounds to 2^-127 (0x00).
FP8Q_HD constexpr std::uint8_t encode_e8m0(std::uint32_t u, overflow ov, bool stochastic,
                                           std::uint32_t random) {
  const bool sat = ov == overflow::saturate;
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0xff;
  if (a == 0 || (u >> 31)) return sat ? 0x00 : 0xff;  // zero and negatives are not representable
  if (a == 0x7f800000u) return sat ? 0xfe : 0xff;
  const std::uint32_t f32_exp = a >> 23;
  const std::uint32_t frac = a & 0x7fffffu;
  std::uint32_t code = 0;
  if (f32_exp != 0) {
    // x = (1 + frac/2^23) * 2^(E-127) lies between codes E and E + 1.
    const bool up = stochastic ? random < (frac << 9) : frac >= 0x400000u;
    code = f32_exp + (up ? 1u : 0u);
  } else {
    // f32 subnormal x = frac * 2^-149: between 2^-127 (frac 2^22) and 2^-126 (frac 2^23).
    const bool above = frac > 0x400000u;
    const bool up = !above ? false
                    : stochastic ? random < ((frac - 0x400000u) << 10)
                                 : frac >= 0x600000u;
    code = up ? 1u : 0u;
  }
  if (code > 0xfe) return sat ? 0xfe : 0xff;
  return static_cast<std::uint8_t>(code);
}

template <format F>
FP8Q_HD constexpr std::uint8_t encode_bits(float x, overflow ov, bool stochastic,
                                           std::uint32_t random) {
  const std::uint32_t u = bits_from_f32(x);
  if constexpr (F == format::e8m0fnu) {
    return encode_e8m0(u, ov, stochastic, random);
  } else {
    return encode_signed<F>(u, ov, stochastic, random);
  }
}

}  // namespace detail

/// Encode with round-to-nearest-even. Input f32, bf16 or f16 (the last two widen exactly).
template <format F, class In>
FP8Q_HD constexpr fp8<F> encode(In x, overflow ov) {
  return fp8<F>{detail::encode_bits<F>(to_float(x), ov, false, 0u)};
}

/// Encode with stochastic rounding driven by 32 random bits (use stochastic_bits(seed, index)).
/// The result is always one of the two neighbours of x.
template <format F, class In>
FP8Q_HD constexpr fp8<F> encode_stochastic(In x, std::uint32_t random_bits, overflow ov) {
  return fp8<F>{detail::encode_bits<F>(to_float(x), ov, true, random_bits)};
}

/// Encode with a rounding mode chosen at run time (random_bits ignored for nearest_even).
template <format F, class In>
FP8Q_HD constexpr fp8<F> encode(In x, rounding r, std::uint32_t random_bits, overflow ov) {
  return fp8<F>{
      detail::encode_bits<F>(to_float(x), ov, r == rounding::stochastic, random_bits)};
}

/// Decode to f32 (exact: every FP8 value is an f32 value). NaN codes give a quiet f32 NaN with the
/// code's sign (positive for the unsigned-NaN formats).
template <format F>
FP8Q_HD constexpr float decode(fp8<F> v) {
  constexpr format_traits t = traits(F);
  constexpr int m = t.mantissa_bits;
  const std::uint32_t b = v.bits;
  if constexpr (t.specials == special_codes::fnu) {
    if (b == t.nan_bits) return detail::f32_from_bits(0x7fc00000u);
    return detail::exp2i(static_cast<int>(b) - t.bias);
  } else {
    const std::uint32_t sign = (b & 0x80u) << 24;
    const std::uint32_t mag = b & 0x7fu;
    const int field = static_cast<int>(mag >> m);
    const std::uint32_t frac = mag & ((1u << m) - 1u);
    if constexpr (t.specials == special_codes::fnuz) {
      if (b == 0x80u) return detail::f32_from_bits(0x7fc00000u);
    } else if constexpr (t.specials == special_codes::fn) {
      if (mag == t.nan_bits) return detail::f32_from_bits(sign | 0x7fc00000u);
    } else {
      if (field == (1 << t.exponent_bits) - 1) {
        return detail::f32_from_bits(sign | (frac ? 0x7fc00000u : 0x7f800000u));
      }
    }
    const float magnitude =
        field == 0 ? static_cast<float>(frac) * detail::exp2i(1 - t.bias - m)
                   : static_cast<float>(frac | (1u << m)) * detail::exp2i(field - t.bias - m);
    return sign ? -magnitude : magnitude;
  }
}

/// Decode a raw byte of a format known only at run time.
FP8Q_HD constexpr float decode(format f, std::uint8_t bits) {
  switch (f) {
    case format::e4m3fn: return decode(fp8<format::e4m3fn>{bits});
    case format::e4m3fnuz: return decode(fp8<format::e4m3fnuz>{bits});
    case format::e5m2: return decode(fp8<format::e5m2>{bits});
    case format::e5m2fnuz: return decode(fp8<format::e5m2fnuz>{bits});
    case format::e8m0fnu: return decode(fp8<format::e8m0fnu>{bits});
  }
  return 0.0f;
}

/// True when the byte is a NaN code of format F.
template <format F>
FP8Q_HD constexpr bool is_nan(fp8<F> v) {
  const float f = decode(v);
  return f != f;
}

/// The smallest magnitude (low 7 bits) of a NaN code of format F; 0x80 when no code with the
/// sign bit clear is NaN (the fnuz formats, whose one NaN is 0x80).
template <format F>
FP8Q_HD constexpr std::uint32_t first_nan_code() {
  for (std::uint32_t c = 0; c < 0x80; ++c) {
    if (is_nan(fp8<F>{static_cast<std::uint8_t>(c)})) return c;
  }
  return 0x80;
}

/// True when every magnitude from first_nan_code<F>() up to 0x7F is a NaN code in both signs
/// (e4m3fn: 0x7F; e5m2: 0x7D-0x7F): the precondition of nan_byte_mask.
template <format F>
FP8Q_HD constexpr bool nans_on_top() {
  const std::uint32_t first = first_nan_code<F>();
  bool all = first < 0x80;
  for (std::uint32_t c = first; c < 0x80; ++c) {
    all = all && is_nan(fp8<F>{static_cast<std::uint8_t>(c)}) && is_nan(fp8<F>{static_cast<std::uint8_t>(c | 0x80)});
  }
  return all;
}

/// 0xFF in every byte of `word` (four codes of F) that is a NaN code, 0x00 in the others: one
/// add and one mask for four bytes, no carry leaving a byte. For formats whose NaNs are the top
/// magnitudes (nans_on_top<F>()); the GPU kernels use it to give a saturating hardware
/// converter's NaN outputs the canonical NaN byte.
template <format F>
FP8Q_HD constexpr std::uint32_t nan_byte_mask(std::uint32_t word) {
  static_assert(nans_on_top<F>(), "fp8q: nan_byte_mask needs NaN codes above every number");
  constexpr std::uint32_t ones = 0x01010101u;
  const std::uint32_t top = ((word & 0x7f7f7f7fu) + (0x80u - first_nan_code<F>()) * ones) & 0x80808080u;
  return (top >> 7) * 0xffu;
}

}  // namespace fp8q
