// fp8q — toolchain-neutral device building blocks shared by every kernel: vector loads of the
// input types, 16-byte FP8 stores, the element encoder (software definition or proven
// hardware path), and the scale rule evaluated per group. Only backend:: names the toolchain.
#pragma once

#include <cstdint>
#include <type_traits>

#include "fp8q/convert.hpp"
#include "fp8q/detail/fast_encode.hpp"
#include "fp8q/detail/gpu/u32x4.hpp"
#include "fp8q/scale.hpp"
#include "fp8q/spec.hpp"
#include "fp8q/tuning.hpp"

namespace fp8q::detail::gpu {

/// Wrap class-type template arguments in types: nvcc's generated host stubs cannot spell a
/// class-type non-type template argument of a __global__ function, but can spell these.
template <spec S>
struct spec_c {
  static constexpr spec value = S;
};
template <tuning T>
struct tuning_c {
  static constexpr tuning value = T;
};

/// Elements per vector step: 16 FP8 output bytes, so every vectorized store is 16 bytes wide and
/// loads are whole 16-byte vectors (2 per step for bf16/f16, 4 for f32).
inline constexpr int vec_elems = 16;

template <class In>
__device__ inline float load_one(const In* p) {
  return to_float(*p);
}

/// 16 consecutive input elements kept as raw 16-byte words (half the registers of 16 floats for
/// bf16/f16), widened to f32 when used.
template <class In>
struct raw16 {
  static constexpr int words = sizeof(In);  // 16 elements * sizeof(In) bytes / 16 bytes per word
  u32x4 w[words];
};

template <class In>
__device__ inline void load_raw16(const In* p, raw16<In>& r) {
  const u32x4* q = reinterpret_cast<const u32x4*>(p);
#pragma unroll
  for (int h = 0; h < raw16<In>::words; ++h) r.w[h] = q[h];
}

template <class In>
__device__ inline void widen16(const raw16<In>& r, float (&v)[vec_elems]) {
#pragma unroll
  for (int h = 0; h < raw16<In>::words; ++h) {
    const std::uint32_t words[4] = {r.w[h].x, r.w[h].y, r.w[h].z, r.w[h].w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (sizeof(In) == 2) {
        v[h * 8 + 2 * k] = to_float(In{static_cast<std::uint16_t>(words[k] & 0xffffu)});
        v[h * 8 + 2 * k + 1] = to_float(In{static_cast<std::uint16_t>(words[k] >> 16)});
      } else {
        v[h * 4 + k] = __builtin_bit_cast(float, words[k]);
      }
    }
  }
}

/// Elements of In in one 16-byte vector: 8 bf16/f16, 4 f32. The unit of the streaming kernels:
/// consecutive threads take consecutive units, so a warp's load is 512 contiguous bytes and its
/// store 32 * unit_elems contiguous FP8 bytes.
template <class In>
inline constexpr int unit_elems = 16 / static_cast<int>(sizeof(In));

/// U consecutive elements as they sit in memory: one 16-byte vector (U == unit_elems<In>) or one
/// element (U == 1, for views whose lines are not 16-byte aligned).
template <class In, int U>
using unit_raw = std::conditional_t<U == 1, In, u32x4>;

template <class In, int U>
__device__ inline unit_raw<In, U> load_unit(const In* p) {
  static_assert(U == 1 || U == unit_elems<In>, "a unit is one element or one 16-byte vector");
  return *reinterpret_cast<const unit_raw<In, U>*>(p);
}

template <class In, int U>
__device__ inline void widen_unit(const unit_raw<In, U>& r, float (&v)[U]) {
  if constexpr (U == 1) {
    v[0] = to_float(r);
  } else {
    const std::uint32_t words[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (sizeof(In) == 2) {
        v[2 * k] = to_float(In{static_cast<std::uint16_t>(words[k] & 0xffffu)});
        v[2 * k + 1] = to_float(In{static_cast<std::uint16_t>(words[k] >> 16)});
      } else {
        v[k] = __builtin_bit_cast(float, words[k]);
      }
    }
  }
}

/// Bit pattern of |x| for the amax atomics (f32 order == unsigned order for non-negatives,
/// every NaN above +Inf).
__device__ inline std::uint32_t abs_bits(float x) {
  return __builtin_bit_cast(std::uint32_t, x) & 0x7fffffffu;
}

/// Running column maxima for the amax passes: cmax[k] = max(cmax[k], abs_bits(x_k)) over the U
/// elements of one unit.
// The families that fold units straight from their loads (col_relay, col_streaming, col_cluster)
// keep this fold: col_relay ran slower with column_max's packed one (units.hpp), which col_hold
// and group_col_tile take from shared memory (docs/design.md, "One fold for every colwise count").
template <class In, int U>
__device__ inline void max_unit(const unit_raw<In, U>& r, std::uint32_t (&cmax)[U]) {
  float x[U];
  widen_unit<In, U>(r, x);
#pragma unroll
  for (int k = 0; k < U; ++k) cmax[k] = cmax[k] > abs_bits(x[k]) ? cmax[k] : abs_bits(x[k]);
}

/// Store N FP8 bytes (N-byte aligned): one 1, 4, 8 or 16-byte store.
template <int N>
__device__ inline void store_bytes(std::uint8_t* p, const std::uint8_t (&q)[N]) {
  static_assert(N == 1 || N == 4 || N == 8 || N == 16, "one store");
  std::uint32_t w[N >= 4 ? N / 4 : 1] = {};
#pragma unroll
  for (int k = 0; k < N; ++k) w[k / 4] |= static_cast<std::uint32_t>(q[k]) << (8 * (k % 4));
  if constexpr (N == 1) *p = q[0];
  if constexpr (N == 4) *reinterpret_cast<std::uint32_t*>(p) = w[0];
  if constexpr (N == 8) *reinterpret_cast<uint2*>(p) = make_uint2(w[0], w[1]);
  if constexpr (N == 16) *reinterpret_cast<u32x4*>(p) = u32x4{w[0], w[1], w[2], w[3]};
}

/// Store W little-endian words of FP8 codes (4 * W bytes, 4 * W-byte aligned): one 4, 8 or
/// 16-byte store.
template <int W>
__device__ inline void store_words(std::uint8_t* p, const std::uint32_t (&w)[W]) {
  static_assert(W == 1 || W == 2 || W == 4, "one store");
  if constexpr (W == 1) *reinterpret_cast<std::uint32_t*>(p) = w[0];
  if constexpr (W == 2) *reinterpret_cast<uint2*>(p) = make_uint2(w[0], w[1]);
  if constexpr (W == 4) *reinterpret_cast<u32x4*>(p) = u32x4{w[0], w[1], w[2], w[3]};
}

/// Store W little-endian words of FP8 codes (4 * W bytes) at any byte address, in aligned pieces:
/// the bytes up to the first 4-byte boundary, W - 1 whole words, the rest (W + 1 or W + 2 stores).
template <int W>
__device__ inline void store_words_unaligned(std::uint8_t* p, const std::uint32_t (&w)[W]) {
  const int mis = static_cast<int>(reinterpret_cast<std::uintptr_t>(p) % 4);
  if (mis == 0) {
#pragma unroll
    for (int k = 0; k < W; ++k) *reinterpret_cast<std::uint32_t*>(p + 4 * k) = w[k];
    return;
  }
  const int head = 4 - mis;  // bytes of w[0] before the first boundary
  if (head & 1) p[0] = static_cast<std::uint8_t>(w[0]);
  if (head & 2) *reinterpret_cast<std::uint16_t*>(p + (head & 1)) = static_cast<std::uint16_t>(w[0] >> (8 * (head & 1)));
  std::uint8_t* q = p + head;  // 4-byte aligned
#pragma unroll
  for (int k = 1; k < W; ++k)
    *reinterpret_cast<std::uint32_t*>(q + 4 * (k - 1)) = (w[k - 1] >> (8 * head)) | (w[k] << (8 * mis));
  std::uint8_t* t = q + 4 * (W - 1);  // the last mis bytes: the top of w[W - 1]
  const std::uint32_t top = w[W - 1] >> (8 * head);
  if (mis & 2) *reinterpret_cast<std::uint16_t*>(t) = static_cast<std::uint16_t>(top);
  if (mis & 1) t[mis & 2] = static_cast<std::uint8_t>(top >> (8 * (mis & 2)));
}

/// Load 16 consecutive elements (16-byte aligned) as f32.
template <class In>
__device__ inline void load16(const In* p, float (&v)[vec_elems]) {
  raw16<In> r;
  load_raw16(p, r);
  widen16(r, v);
}


/// The scale a group uses, from its amax bit pattern (the one rule in scale.hpp).
template <spec S>
__device__ inline float group_scale(std::uint32_t amax_bits) {
  return scale_from_amax(canonical_amax(__builtin_bit_cast(float, amax_bits)), traits(S.out).max,
                         S.eps.value(), S.power_of_2);
}

/// Whether tuning T may use the hardware converter for spec S on the architecture being compiled.
template <spec S, tuning T>
__device__ constexpr bool use_hw_convert() {
  constexpr bool wanted = T.convert == convert_path::hardware ||
                         (T.convert == convert_path::automatic && backend::hw_convert_by_default);
  return wanted && S.rounding == rounding::nearest_even && S.overflow == overflow::saturate &&
         backend::has_hw_convert<S.out>;
}

/// Whether tuning T asks for the fnuz-through-OCP word path (NVIDIA; backend::has_hw_fnuz_word).
template <spec S, tuning T>
__device__ constexpr bool use_hw_fnuz_word() {
  return T.convert == convert_path::hardware && S.rounding == rounding::nearest_even &&
         S.overflow == overflow::saturate && backend::has_hw_fnuz_word<S.out>;
}

/// Whether tuning T encodes spec S in software (neither hardware path applies).
template <spec S, tuning T>
__device__ constexpr bool software_cast() {
  return !use_hw_convert<S, T>() && !use_hw_fnuz_word<S, T>();
}

/// q for one already-scaled value v = x * s in software: the branch-free encoder
/// (detail/fast_encode.hpp), byte-equal to fp8q::encode of canonical_nan(v) on every f32 input
/// (the device's NaN results carry no meaningful sign, scale.hpp; docs/encoder.md).
template <spec S>
__device__ inline std::uint8_t encode_scaled(float v, std::uint64_t seed, std::uint64_t index) {
  using fast::nan_rule;
  if constexpr (S.rounding == rounding::stochastic) {
    return fast::encode_stochastic<S.out, nan_rule::canonical>(v, stochastic_bits(seed, index), S.overflow);
  } else {
    (void)seed;
    (void)index;
    return fast::encode<S.out, S.overflow, nan_rule::canonical>(v);
  }
}

/// Encode N (even) scaled values to bytes, pairs through the hardware converter where tuning T
/// selects it; index(k) gives each value's logical index for stochastic rounding.
template <spec S, tuning T, int N, class IndexFn>
__device__ inline void encode_n(const float (&v)[N], std::uint8_t (&q)[N], std::uint64_t seed,
                                IndexFn index) {
  static_assert(N % 2 == 0 || N == 1, "pairs, or one value");
  if constexpr (use_hw_convert<S, T>() && N > 1) {
    (void)seed;
    (void)index;
#pragma unroll
    for (int k = 0; k < N; k += 2) {
      const unsigned short pair = backend::hw_encode_pair_sat<S.out>(v[k], v[k + 1]);
      q[k] = static_cast<std::uint8_t>(pair & 0xffu);
      q[k + 1] = static_cast<std::uint8_t>(pair >> 8);
    }
    constexpr std::uint8_t nan_q = encode<S.out>(canonical_nan(__builtin_nanf("")), S.overflow).bits;
#pragma unroll
    for (int k = 0; k < N; ++k) q[k] = v[k] != v[k] ? nan_q : q[k];
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) q[k] = encode_scaled<S>(v[k], seed, index(k));
  }
}

/// How the hardware path joins a word's two pair conversions: in the converter (the second
/// writes the first's high half: no packing instruction) or by packing two independent results
/// (`permute`). The same bytes; the choice is register allocation only: ptxas schedules the
/// joined form differently, and a kernel at its register bound can spill with it (docs/design.md).
enum class hw_join : unsigned char { converter, permute };

/// encode_n packed four bytes to a word (little-endian): N (a multiple of 4) scaled values to
/// N / 4 words. Where the hardware converter is used for a format whose NaNs all have the top
/// code bits set (e4m3fn, e5m2), its pairs are packed directly and NaN encodings, which a
/// saturating converter returns for NaN inputs and for nothing else, become the canonical NaN
/// byte four at a time; that is the same rule as encode_n's, in fewer instructions.
template <spec S, tuning T, hw_join J = hw_join::converter, int N, class IndexFn>
__device__ inline void encode_words(const float (&v)[N], std::uint32_t (&w)[N / 4], std::uint64_t seed,
                                    IndexFn index) {
  static_assert(N % 4 == 0, "whole words");
  if constexpr (use_hw_convert<S, T>() && nans_on_top<S.out>()) {
    (void)seed;
    (void)index;
    constexpr std::uint32_t nan_q = encode<S.out>(canonical_nan(__builtin_nanf("")), S.overflow).bits;
#pragma unroll
    for (int k = 0; k < N / 4; ++k) {
      std::uint32_t x = 0;
      if constexpr (J == hw_join::converter) {
        x = backend::hw_encode_word_sat<S.out>(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
      } else {
        x = backend::hw_encode_pair_sat<S.out>(v[4 * k], v[4 * k + 1]) |
            (std::uint32_t{backend::hw_encode_pair_sat<S.out>(v[4 * k + 2], v[4 * k + 3])} << 16);
      }
      const std::uint32_t mask = nan_byte_mask<S.out>(x);
      w[k] = (x & ~mask) | (nan_q * 0x01010101u & mask);
    }
  } else if constexpr (use_hw_fnuz_word<S, T>()) {
    (void)seed;
    (void)index;
#pragma unroll
    for (int k = 0; k < N / 4; ++k) {
      const float four[4] = {v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]};
      w[k] = backend::hw_fnuz_word_sat<S.out>(four);
    }
  } else if constexpr (!use_hw_convert<S, T>() && S.rounding == rounding::nearest_even) {
    (void)seed;
    (void)index;
    fast::encode_words<S.out, S.overflow, fast::nan_rule::canonical>(v, w);  // packed, branch-free
  } else {
    std::uint8_t q[N];
    encode_n<S, T>(v, q, seed, index);
#pragma unroll
    for (int k = 0; k < N / 4; ++k) {
      w[k] = q[4 * k] | (q[4 * k + 1] << 8) | (q[4 * k + 2] << 16) | (static_cast<std::uint32_t>(q[4 * k + 3]) << 24);
    }
  }
}

/// Whether every product x * s of a group whose amax (f32 magnitude bits) is amax_bits is a
/// number of magnitude below the first one that rounds past S.out's max, with the sign of x: the
/// bound amax * s is (rounding is monotone, so |x| * s <= amax * s), and it fails for a NaN or
/// Inf amax, a NaN, Inf or negative s, and 0 * Inf. Then encode_words_in_range gives the same
/// bytes as encode_words (one test per group; only where in_range_capable<S>()).
template <spec S>
__device__ constexpr bool in_range_capable() {
  return S.rounding == rounding::nearest_even && fast::supported<S.out>;
}
// False where S does not take the in-range encoder, so that a caller's test (with_in_range's
// condition) compiles for every spec.
template <spec S>
__device__ inline bool in_range_group(std::uint32_t amax_bits, float s) {
  if constexpr (!in_range_capable<S>()) {
    (void)amax_bits;
    (void)s;
    return false;
  } else {
    return fast::in_range_magnitude<S.out>(__builtin_bit_cast(std::uint32_t, __builtin_bit_cast(float, amax_bits) * s));
  }
}

/// encode_words for the scaled values of a group that passed in_range_group: no NaN fix-up, no
/// clamp; signs[k] has bit 7 of byte j set when v[4k + j] is negative.
template <spec S, tuning T, hw_join J = hw_join::converter, int N>
__device__ inline void encode_words_in_range(const float (&v)[N], const std::uint32_t (&signs)[N / 4],
                                             std::uint32_t (&w)[N / 4]) {
  static_assert(N % 4 == 0, "whole words");
  if constexpr (use_hw_convert<S, T>()) {
    // a saturating converter's byte for a number is the byte (the NaN rule is all that the
    // other paths add)
#pragma unroll
    for (int k = 0; k < N / 4; ++k) {
      if constexpr (J == hw_join::converter) {
        w[k] = backend::hw_encode_word_sat<S.out>(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
      } else {
        const std::uint32_t lo = backend::hw_encode_pair_sat<S.out>(v[4 * k], v[4 * k + 1]);
        const std::uint32_t hi = backend::hw_encode_pair_sat<S.out>(v[4 * k + 2], v[4 * k + 3]);
        w[k] = fast::perm<0, 1, 4, 5>(hi, lo);
      }
    }
  } else if constexpr (use_hw_fnuz_word<S, T>()) {
#pragma unroll
    for (int k = 0; k < N / 4; ++k) {
      const float four[4] = {v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]};
      w[k] = backend::hw_fnuz_word_sat<S.out>(four);
    }
  } else {
    static_assert(in_range_capable<S>(), "only where in_range_group applies");
#pragma unroll
    for (int k = 0; k < N / 4; ++k) {
      const float four[4] = {v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]};
      w[k] = fast::encode_word_in_range<S.out>(four, signs[k]);
    }
  }
}

}  // namespace fp8q::detail::gpu
