// fp8q — the branch-free FP8 encoder: the same byte as fp8q::encode / encode_stochastic
// (convert.hpp, the definition) for every f32 input, in a handful of integer operations and one
// f32 addition per element, with no branch and no dependence on denormal handling.
//
// Nearest-even, for |x| clamped to t (the clamp is the saturation; see clamp_bits):
//   e' = max(exponent of t, exponent of the format's smallest normal)
//   B  = 2^(e' + 23 - m) + ((e' - e_min) << m) ulps       (built from bits: one multiply-add)
//   y  = B + t                                             (one f32 addition, nearest-even)
// B's ulp is the FP8 step at exponent e' (2^(e' - m); in the subnormal range the fixed step),
// and t < 2^(e' + 1) stays far below B, so the FPU rounds t to exactly that step and adds the
// count k = round(t / step) to B's significand; B's significand is even, so the tie goes to an
// even k, which is nearest-even of t. k counts the implicit bit (k in [2^m, 2^(m+1)] for
// normals, [0, 2^m] below), so ((e' - e_min) << m) + k is the FP8 code, a carry into the next
// binade included; B placed that sum in y's low byte. B is a normal f32 and so is y, and a
// subnormal t is below a quarter of the smallest FP8 step, so flushing it changes nothing.
// NaN is a select on the input bits; the sign is OR-ed in (fnuz: only onto nonzero codes).
//
// tests/slow/test_fast_encode_exhaustive.cpp checks every f32 pattern on the host and
// tests/gpu/test_fast_encode_gpu.cu on the device.
#pragma once

#include <cstdint>

#include "fp8q/config.hpp"
#include "fp8q/convert.hpp"
#include "fp8q/format.hpp"

namespace fp8q::detail::fast {

/// What a NaN input becomes: encode's rule (the format's NaN, with the input's sign where NaNs
/// are signed) or the GPU kernels' rule (encode_scaled: canonical_nan first, so always the
/// positive NaN code).
enum class nan_rule : std::uint8_t { keep_sign, canonical };

template <format F>
inline constexpr bool supported = F == format::e4m3fn || F == format::e4m3fnuz ||
                                  F == format::e5m2 || F == format::e5m2fnuz;

template <format F>
struct consts {
  static_assert(supported<F>, "fp8q: the fast encoder covers the four signed FP8 formats");
  static constexpr format_traits t = traits(F);
  static constexpr int m = t.mantissa_bits;
  static constexpr bool fnuz = t.specials == special_codes::fnuz;
  /// f32 biased exponent of the smallest normal FP8 value.
  static constexpr std::uint32_t e_min = static_cast<std::uint32_t>(128 - t.bias);
  /// B = e' * mul + add, e' the f32 biased exponent (see the file comment).
  static constexpr std::uint32_t mul = (1u << 23) + (1u << m);
  static constexpr std::uint32_t add = (static_cast<std::uint32_t>(23 - m) << 23) - (e_min << m);

  // The smallest f32 magnitude (bits) that encode rounds past max: found with the definition
  // itself, so the clamp below cannot disagree with it.
  static constexpr std::uint32_t first_overflow() {
    std::uint32_t lo = bits_from_f32(t.max), hi = 0x7f800000u;  // lo encodes as max, hi overflows
    while (hi - lo > 1) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      const std::uint8_t c = encode_signed<F>(mid, overflow::propagate, false, 0u);
      (c == t.max_bits ? lo : hi) = mid;
    }
    return hi;
  }
  static constexpr std::uint32_t overflow_bits = first_overflow();

  /// Magnitude bits |x| is clamped to: max itself when saturating (every larger input, Inf
  /// included, then encodes as max), the first overflowing value when propagating (every larger
  /// input then encodes as code max + 1, which is the overflow code of every format: e4m3fn's
  /// NaN 0x7F, e5m2's Inf 0x7C, fnuz's NaN 0x80).
  static constexpr std::uint32_t clamp_bits(overflow ov) {
    return ov == overflow::saturate ? bits_from_f32(t.max) : overflow_bits;
  }
};

// t = min(|x|, clamp) as bits: on the devices one min with |x| as a source modifier, the same
// as the integer clamp for every non-NaN input (a NaN's result does not matter, callers select
// NaN from the input).
template <format F, overflow Ov>
FP8Q_HD constexpr std::uint32_t clamped(float x) {
  constexpr std::uint32_t limit = consts<F>::clamp_bits(Ov);
#if FP8Q_DEVICE_PASS
  if (!__builtin_is_constant_evaluated()) {
    return bits_from_f32(__builtin_fminf(__builtin_fabsf(x), f32_from_bits(limit)));
  }
#endif
  const std::uint32_t a = bits_from_f32(x) & 0x7fffffffu;
  return a < limit ? a : limit;
}

// B of the file comment for a clamped magnitude t.
template <format F>
FP8Q_HD constexpr float addend(std::uint32_t t) {
  using c = consts<F>;
  const std::uint32_t e = t >> 23;
  return f32_from_bits((e > c::e_min ? e : c::e_min) * c::mul + c::add);
}

/// The f32 sum whose low byte is the code of |x| under policy Ov, before NaN and sign (at most
/// max + 1; the bits above are B's exponent and offset). Meaningless for NaN inputs.
template <format F, overflow Ov>
FP8Q_HD constexpr std::uint32_t code_sum(float x) {
  const std::uint32_t t = clamped<F, Ov>(x);
  return bits_from_f32(addend<F>(t) + f32_from_bits(t));
}

// code_sum of two values. On AMD the two additions are one v_pk_add_f32 (gfx90a and later add
// f32 pairs in one instruction; the compiler does not pair them by itself).
template <format F, overflow Ov>
FP8Q_HD constexpr void code_sum2(float x0, float x1, std::uint32_t& y0, std::uint32_t& y1) {
  const std::uint32_t t0 = clamped<F, Ov>(x0), t1 = clamped<F, Ov>(x1);
#if FP8Q_DEVICE_PASS && FP8Q_TOOLCHAIN_HIP
  if (!__builtin_is_constant_evaluated()) {
    using float2_v = float __attribute__((ext_vector_type(2)));
    const float2_v b = {addend<F>(t0), addend<F>(t1)};
    const float2_v t = {f32_from_bits(t0), f32_from_bits(t1)};
    const float2_v y = b + t;
    y0 = bits_from_f32(y.x);
    y1 = bits_from_f32(y.y);
    return;
  }
#endif
  y0 = bits_from_f32(addend<F>(t0) + f32_from_bits(t0));
  y1 = bits_from_f32(addend<F>(t1) + f32_from_bits(t1));
}

/// True for NaN, as a float comparison on the devices (no integer mask needed) and on the bits
/// elsewhere (constant evaluation).
FP8Q_HD constexpr bool is_nan_input(float x) {
#if FP8Q_DEVICE_PASS
  if (!__builtin_is_constant_evaluated()) return x != x;
#endif
  return (bits_from_f32(x) & 0x7fffffffu) > 0x7f800000u;
}

/// The encoded byte of f32 bits u (one element). Same value as encode<F>(x, Ov).bits
/// (nan_rule::keep_sign) or encode_scaled's byte (nan_rule::canonical).
template <format F, overflow Ov, nan_rule N = nan_rule::keep_sign>
FP8Q_HD constexpr std::uint8_t encode_bits(std::uint32_t u) {
  using c = consts<F>;
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  const std::uint32_t code = code_sum<F, Ov>(f32_from_bits(u)) & 0xffu;
  const std::uint32_t sign = (u >> 24) & 0x80u;
  std::uint32_t q = 0;
  if constexpr (c::fnuz) {
    // one NaN, 0x80 (so OR-ing a sign into it changes nothing); no negative zero
    q = nan ? 0x80u : code | (code != 0 ? sign : 0u);
  } else {
    const std::uint32_t nan_sign = N == nan_rule::keep_sign ? sign : 0u;
    q = nan ? (c::t.nan_bits | nan_sign) : (code | sign);
  }
  return static_cast<std::uint8_t>(q);
}

/// encode_bits for a float.
template <format F, overflow Ov, nan_rule N = nan_rule::keep_sign>
FP8Q_HD constexpr std::uint8_t encode(float x) {
  return encode_bits<F, Ov, N>(bits_from_f32(x));
}

/// The policy as a run-time argument (the kernels use the template form).
template <format F, nan_rule N = nan_rule::keep_sign>
FP8Q_HD constexpr std::uint8_t encode(float x, overflow ov) {
  return ov == overflow::saturate ? encode<F, overflow::saturate, N>(x)
                                  : encode<F, overflow::propagate, N>(x);
}

// Byte permute of the 8 bytes {hi, lo} (lo is bytes 0-3): result byte i = byte S_i. One
// v_perm_b32 / prmt on the devices; the compilers do not always find it in shifts and masks.
template <int S0, int S1, int S2, int S3>
FP8Q_HD constexpr std::uint32_t perm(std::uint32_t hi, std::uint32_t lo) {
  static_assert(S0 >= 0 && S0 < 8 && S1 >= 0 && S1 < 8 && S2 >= 0 && S2 < 8 && S3 >= 0 && S3 < 8);
#if FP8Q_DEVICE_PASS && FP8Q_TOOLCHAIN_HIP
  if (!__builtin_is_constant_evaluated()) {
    return __builtin_amdgcn_perm(hi, lo, S0 | (S1 << 8) | (S2 << 16) | (S3 << 24));
  }
#elif FP8Q_DEVICE_PASS && FP8Q_TOOLCHAIN_CUDA
  if (!__builtin_is_constant_evaluated()) {
    return __byte_perm(lo, hi, S0 | (S1 << 4) | (S2 << 8) | (S3 << 12));
  }
#endif
  const std::uint64_t all = (std::uint64_t{hi} << 32) | lo;
  auto byte = [&](int k) { return static_cast<std::uint32_t>((all >> (8 * k)) & 0xffu); };
  return byte(S0) | (byte(S1) << 8) | (byte(S2) << 16) | (byte(S3) << 24);
}

// The unsigned max of the 16-bit halves of a and b, half by half: one max.u16x2 (sm_90) or
// v_pk_max_u16, so a running maximum of 16-bit magnitudes takes two elements per instruction.
FP8Q_HD inline std::uint32_t max_u16x2(std::uint32_t a, std::uint32_t b) {
#if FP8Q_DEVICE_PASS && FP8Q_TOOLCHAIN_HIP
  using u16x2_v = unsigned short __attribute__((ext_vector_type(2)));
  return __builtin_bit_cast(std::uint32_t, __builtin_elementwise_max(__builtin_bit_cast(u16x2_v, a),
                                                                     __builtin_bit_cast(u16x2_v, b)));
#elif FP8Q_DEVICE_PASS && FP8Q_TOOLCHAIN_CUDA && __CUDA_ARCH__ >= 900
  std::uint32_t r;
  asm("max.u16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  const std::uint32_t lo = (a & 0xffffu) > (b & 0xffffu) ? a & 0xffffu : b & 0xffffu;
  const std::uint32_t hi = (a >> 16) > (b >> 16) ? a >> 16 : b >> 16;
  return lo | (hi << 16);
#endif
}

// Byte J of four words, packed: {w0.J, w1.J, w2.J, w3.J} in three permutes.
template <int J>
FP8Q_HD constexpr std::uint32_t gather_byte(std::uint32_t w0, std::uint32_t w1, std::uint32_t w2,
                                            std::uint32_t w3) {
#if !FP8Q_DEVICE_PASS
  // host: shifts and masks vectorize; the permute emulation does not
  auto b = [](std::uint32_t w) { return (w >> (8 * J)) & 0xffu; };
  return b(w0) | (b(w1) << 8) | (b(w2) << 16) | (b(w3) << 24);
#endif
  const std::uint32_t lo = perm<J, J + 4, J, J + 4>(w1, w0);
  const std::uint32_t hi = perm<J, J + 4, J, J + 4>(w3, w2);
  return perm<0, 1, 4, 5>(hi, lo);
}

/// Four values to one little-endian word of codes, byte-equal to encode_bits per element. The
/// codes (in the low byte of each addition's result) and the sign bytes are gathered four at a
/// time and merged with one or two word operations.
template <format F, overflow Ov, nan_rule R = nan_rule::canonical>
FP8Q_HD constexpr std::uint32_t encode_word(const float (&v)[4]) {
  using c = consts<F>;
  constexpr std::uint32_t ones = 0x01010101u;
  constexpr std::uint32_t nan_code = c::fnuz ? 0x80u : c::t.nan_bits;
  // Whether a NaN's code differs from every other code under Ov (then the NaN bytes of a word
  // can be found after packing): all but e4m3fn propagating, whose overflow code is its NaN.
  constexpr std::uint32_t top_code = Ov == overflow::saturate ? c::t.max_bits : c::t.max_bits + 1u;
  constexpr bool nan_distinct = nan_code > top_code;
  std::uint32_t y[4] = {};
  std::uint32_t u[4] = {};
  // computed before the NaN select: as a conditional operand it would become a branch
  code_sum2<F, Ov>(v[0], v[1], y[0], y[1]);
  code_sum2<F, Ov>(v[2], v[3], y[2], y[3]);
  for (int j = 0; j < 4; ++j) {
    u[j] = bits_from_f32(v[j]);
    const bool nan = is_nan_input(v[j]);
    y[j] = nan ? nan_code : y[j];
    if constexpr (!c::fnuz && R == nan_rule::canonical && !nan_distinct) u[j] = nan ? 0u : u[j];
  }
  const std::uint32_t codes = gather_byte<0>(y[0], y[1], y[2], y[3]);
  std::uint32_t signs = gather_byte<3>(u[0], u[1], u[2], u[3]);
  if constexpr (c::fnuz) {
    // a sign only on nonzero codes: byte + 0x7F sets the byte's top bit exactly when the byte
    // is nonzero (bytes are at most 0x80, so nothing carries into the next byte); the NaN code
    // 0x80 already has the sign bit, whatever the input's sign
    signs &= codes + 0x7fu * ones;
  } else if constexpr (R == nan_rule::canonical && nan_distinct) {
    // no sign on NaN codes: byte + (0x80 - nan_code) reaches 0x80 exactly for them
    signs &= ~(codes + (0x80u - nan_code) * ones);
  }
  return codes | (signs & 0x80u * ones);
}

/// N values (a multiple of 4) to N / 4 words of encode_word.
template <format F, overflow Ov, nan_rule R = nan_rule::canonical, int N>
FP8Q_HD constexpr void encode_words(const float (&v)[N], std::uint32_t (&w)[N / 4]) {
  static_assert(N % 4 == 0, "whole words");
  for (int k = 0; k < N / 4; ++k) {
    const float four[4] = {v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]};
    w[k] = encode_word<F, Ov, R>(four);
  }
}

// ---- numbers known to be in range ------------------------------------------------------------
//
// A kernel that knows a whole group's products x * s are numbers (no NaN, no Inf) of magnitude
// below consts<F>::overflow_bits (one test on the group's amax, in_range_magnitude) encodes them
// without the per-element NaN select and without the clamp: every such magnitude rounds to at
// most max under either policy, which is what the clamp would have made of it. The exponent's
// floor at the smallest normal becomes a float max on |x| (|x| a source modifier), and the signs
// come in as a word the caller builds from wherever they are cheapest (the input's own sign bits
// when s > 0: x * s has the sign of x).

/// Whether the magnitude bits a (of a number, or the product bound of a group) are below the
/// first magnitude that rounds past max: false for Inf and NaN bit patterns.
template <format F>
FP8Q_HD constexpr bool in_range_magnitude(std::uint32_t a) {
  return a < consts<F>::overflow_bits;
}

/// code_sum for a number x with |x| below overflow_bits (the result's low byte is the code of |x|
/// under either policy, at most max).
template <format F>
FP8Q_HD constexpr std::uint32_t code_sum_in_range(float x) {
#if FP8Q_DEVICE_PASS
  if (!__builtin_is_constant_evaluated()) {
    using c = consts<F>;
    // max(|x|, smallest normal) has exponent max(e, e_min); a flushed subnormal |x| gives the
    // same, and as an addend it is far below half the smallest FP8 step either way
    const float a = __builtin_fabsf(x);
    const std::uint32_t e = bits_from_f32(__builtin_fmaxf(a, f32_from_bits(c::e_min << 23))) >> 23;
    return bits_from_f32(f32_from_bits(e * c::mul + c::add) + a);
  }
#endif
  const std::uint32_t a = bits_from_f32(x) & 0x7fffffffu;
  return bits_from_f32(addend<F>(a) + f32_from_bits(a));
}

/// Four numbers with |v| below overflow_bits to one word of codes, byte-equal to encode_word (and
/// so to encode) under either policy. Byte j of `signs` has bit 7 set exactly when v[j] is
/// negative (its other bits are ignored).
template <format F>
FP8Q_HD constexpr std::uint32_t encode_word_in_range(const float (&v)[4], std::uint32_t signs) {
  using c = consts<F>;
  constexpr std::uint32_t ones = 0x01010101u;
  std::uint32_t y[4] = {};
#if FP8Q_DEVICE_PASS && FP8Q_TOOLCHAIN_HIP
  if (!__builtin_is_constant_evaluated()) {
    // one v_pk_add_f32 per pair, as in code_sum2
    using float2_v = float __attribute__((ext_vector_type(2)));
    for (int j = 0; j < 4; j += 2) {
      const float a0 = __builtin_fabsf(v[j]), a1 = __builtin_fabsf(v[j + 1]);
      const float sn = f32_from_bits(c::e_min << 23);
      const std::uint32_t e0 = bits_from_f32(__builtin_fmaxf(a0, sn)) >> 23;
      const std::uint32_t e1 = bits_from_f32(__builtin_fmaxf(a1, sn)) >> 23;
      const float2_v b = {f32_from_bits(e0 * c::mul + c::add), f32_from_bits(e1 * c::mul + c::add)};
      const float2_v t = {a0, a1};
      const float2_v s = b + t;
      y[j] = bits_from_f32(s.x);
      y[j + 1] = bits_from_f32(s.y);
    }
  } else
#endif
  {
    for (int j = 0; j < 4; ++j) y[j] = code_sum_in_range<F>(v[j]);
  }
  const std::uint32_t codes = gather_byte<0>(y[0], y[1], y[2], y[3]);
  if constexpr (c::fnuz) {
    // a sign only on nonzero codes (bytes are at most 0x7F here: byte + 0x7F sets bit 7 exactly
    // for nonzero ones, no carry)
    return codes | (signs & (codes + 0x7fu * ones) & 0x80u * ones);
  } else {
    return codes | (signs & 0x80u * ones);
  }
}

// ---- stochastic rounding ----------------------------------------------------------------------

/// encode_stochastic's byte without branches: the kept bits and the discarded fraction (scaled
/// to 2^32, floored below 2^-32 of a step like round_shift) come out of one 64-bit shift.
template <format F, nan_rule N = nan_rule::keep_sign>
FP8Q_HD constexpr std::uint8_t encode_stochastic_bits(std::uint32_t u, std::uint32_t random,
                                                      overflow ov) {
  using c = consts<F>;
  constexpr int m = c::m;
  const std::uint32_t a = u & 0x7fffffffu;
  const std::uint32_t sign = (u >> 24) & 0x80u;
  const bool nan = a > 0x7f800000u;
  const std::uint32_t f32_exp = a >> 23;
  const std::uint32_t e = f32_exp > 1u ? f32_exp : 1u;  // f32 subnormals sit in exponent 1
  const std::uint64_t mant = (a & 0x7fffffu) | (f32_exp != 0 ? 0x800000u : 0u);
  // below the smallest normal the step stays fixed: shift by the missing exponent too
  const std::uint32_t below = e < c::e_min ? c::e_min - e : 0u;
  const std::uint32_t shift_raw = static_cast<std::uint32_t>(23 - m) + below;
  const std::uint32_t shift = shift_raw < 63u ? shift_raw : 63u;  // mant < 2^24: all gone anyway
  const std::uint64_t v = (mant << 32) >> shift;  // kept bits above bit 32, fraction below
  const std::uint32_t q = static_cast<std::uint32_t>(v >> 32);
  const std::uint32_t threshold = static_cast<std::uint32_t>(v);
  const std::uint32_t base = e >= c::e_min ? (e - c::e_min) << m : 0u;
  const std::uint32_t code = base + q + (random < threshold ? 1u : 0u);
  const std::uint32_t over = ov == overflow::saturate ? (sign | c::t.max_bits)
                             : c::t.has_inf          ? (sign | c::t.inf_bits)
                             : c::fnuz               ? c::t.nan_bits
                                                     : (sign | c::t.nan_bits);
  const std::uint32_t nan_q = c::fnuz ? 0x80u
                              : N == nan_rule::keep_sign ? (sign | c::t.nan_bits)
                                                         : c::t.nan_bits;
  const std::uint32_t finite = code > c::t.max_bits ? over
                               : code == 0          ? (c::fnuz ? 0u : sign)
                                                    : (code | sign);
  // Inf (a == 0x7f800000) has code far above max and so takes `over`, as in encode
  return static_cast<std::uint8_t>(nan ? nan_q : finite);
}

/// encode_stochastic_bits for a float.
template <format F, nan_rule N = nan_rule::keep_sign>
FP8Q_HD constexpr std::uint8_t encode_stochastic(float x, std::uint32_t random, overflow ov) {
  return encode_stochastic_bits<F, N>(bits_from_f32(x), random, ov);
}

}  // namespace fp8q::detail::fast
