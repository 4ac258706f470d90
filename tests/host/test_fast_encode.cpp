// The branch-free encoder (fp8q/detail/fast_encode.hpp) against fp8q's definition (convert.hpp):
// every bf16 and f16 pattern, every f32 rounding boundary and special, the packed-word form, the
// NaN rule of the GPU kernels, and stochastic rounding on hand-picked and pseudo-random inputs.
// The exhaustive f32 sweep is tests/slow/test_fast_encode_exhaustive.cpp.
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "../support/oracle.hpp"
#include "fp8q/convert.hpp"
#include "fp8q/detail/fast_encode.hpp"
#include "fp8q/scale.hpp"

namespace {

using fp8q::format;
using fp8q::overflow;
namespace fast = fp8q::detail::fast;

template <class Fn>
void for_each_fast_format(Fn&& fn) {
  fn(std::integral_constant<format, format::e4m3fn>{});
  fn(std::integral_constant<format, format::e4m3fnuz>{});
  fn(std::integral_constant<format, format::e5m2>{});
  fn(std::integral_constant<format, format::e5m2fnuz>{});
}
constexpr overflow policies[] = {overflow::saturate, overflow::propagate};

struct tally {
  long count = 0;
  std::string first;
  void add(const std::string& what) {
    if (count++ < 8) first += what + "\n";
  }
};

std::string describe(format f, overflow ov, const char* what, std::uint32_t u, int want, int got) {
  std::ostringstream s;
  s << fp8q::to_string(f) << ' ' << fp8q::to_string(ov) << ' ' << what << " input 0x" << std::hex
    << u << ": want 0x" << want << " got 0x" << got;
  return s.str();
}

// The byte the GPU kernels write for a scaled value (tile.hpp encode_scaled): canonical NaN first.
template <format F>
std::uint8_t scaled_reference(float v, overflow ov) {
  return fp8q::encode<F>(fp8q::canonical_nan(v), ov).bits;
}

// Checks one f32 pattern in every form: both NaN rules, and the packed word at every position.
template <format F>
void check_one(std::uint32_t u, overflow ov, tally& bad) {
  const float x = std::bit_cast<float>(u);
  const int want = fp8q::encode<F>(x, ov).bits;
  const int got = fast::encode<F>(x, ov);
  if (got != want) bad.add(describe(F, ov, "keep_sign", u, want, got));
  const int want_c = scaled_reference<F>(x, ov);
  const int got_c = fast::encode<F, fast::nan_rule::canonical>(x, ov);
  if (got_c != want_c) bad.add(describe(F, ov, "canonical", u, want_c, got_c));
}

// Packed words of 8 values against the per-element reference (canonical NaN, as the kernels).
template <format F, overflow Ov>
void check_words(const std::vector<std::uint32_t>& inputs, tally& bad) {
  for (std::size_t i = 0; i + 8 <= inputs.size(); i += 8) {
    float v[8];
    for (int k = 0; k < 8; ++k) v[k] = std::bit_cast<float>(inputs[i + k]);
    std::uint32_t w[2];
    fast::encode_words<F, Ov>(v, w);
    for (int k = 0; k < 8; ++k) {
      const int got = (w[k / 4] >> (8 * (k % 4))) & 0xff;
      const int want = scaled_reference<F>(v[k], Ov);
      if (got != want) bad.add(describe(F, Ov, "words", inputs[i + k], want, got));
    }
    // the in-range words where all four are numbers below the first overflowing magnitude
    for (int h = 0; h < 2; ++h) {
      bool in_range = true;
      std::uint32_t signs = 0;
      for (int j = 0; j < 4; ++j) {
        const std::uint32_t u = inputs[i + 4 * h + j];
        in_range = in_range && fast::in_range_magnitude<F>(u & 0x7fffffffu);
        signs |= (u >> 31) << (8 * j + 7);
      }
      if (!in_range) continue;
      const float four[4] = {v[4 * h], v[4 * h + 1], v[4 * h + 2], v[4 * h + 3]};
      const std::uint32_t wr = fast::encode_word_in_range<F>(four, signs | 0x7f7f7f7fu * (h & 1));
      for (int j = 0; j < 4; ++j) {
        const int got = (wr >> (8 * j)) & 0xff;
        const int want = scaled_reference<F>(four[j], Ov);
        if (got != want) bad.add(describe(F, Ov, "in-range words", inputs[i + 4 * h + j], want, got));
      }
    }
  }
}

// Every f32 rounding boundary of F (values, midpoints, 3 ulps either side) and the specials.
std::vector<std::uint32_t> boundary_inputs(format f) {
  std::vector<std::uint32_t> out;
  const auto& r = oracle::ladder(f);
  std::vector<double> points;
  for (std::size_t i = 0; i < r.size(); ++i) {
    points.push_back(r[i].value);
    if (i + 1 < r.size()) points.push_back((r[i].value + r[i + 1].value) / 2);
  }
  for (double p : points) {
    const float center = static_cast<float>(p);
    for (int k = -3; k <= 3; ++k) {
      const std::uint32_t u = std::bit_cast<std::uint32_t>(oracle::f32_step(center, k));
      out.push_back(u);
      out.push_back(u ^ 0x80000000u);
    }
  }
  for (std::uint32_t u : {0x00000000u, 0x00000001u, 0x007fffffu, 0x00800000u, 0x7f7fffffu,
                          0x7f800000u, 0x7f800001u, 0x7fbfffffu, 0x7fc00000u, 0x7fffffffu,
                          0x3f800000u, 0x4f000000u, 0x5f7fffffu}) {
    out.push_back(u);
    out.push_back(u ^ 0x80000000u);
  }
  while (out.size() % 8) out.push_back(0);
  return out;
}

}  // namespace

TEST_CASE("fast encode equals encode on every bf16 and f16 pattern", "[host]") {
  for_each_fast_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    for (overflow ov : policies) {
      tally bad;
      std::vector<std::uint32_t> all;
      for (std::uint32_t b = 0; b < 0x10000u; ++b) {
        const std::uint32_t from_bf16 = std::bit_cast<std::uint32_t>(fp8q::to_float(fp8q::bf16{static_cast<std::uint16_t>(b)}));
        const std::uint32_t from_f16 = std::bit_cast<std::uint32_t>(fp8q::to_float(fp8q::f16{static_cast<std::uint16_t>(b)}));
        check_one<F>(from_bf16, ov, bad);
        check_one<F>(from_f16, ov, bad);
        all.push_back(from_bf16);
        all.push_back(from_f16);
      }
      if (ov == overflow::saturate) {
        check_words<F, overflow::saturate>(all, bad);
      } else {
        check_words<F, overflow::propagate>(all, bad);
      }
      INFO(bad.first);
      CHECK(bad.count == 0);
    }
  });
}

TEST_CASE("fast encode equals encode on every f32 rounding boundary and special", "[host]") {
  for_each_fast_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    const std::vector<std::uint32_t> inputs = boundary_inputs(F);
    for (overflow ov : policies) {
      tally bad;
      for (std::uint32_t u : inputs) check_one<F>(u, ov, bad);
      if (ov == overflow::saturate) {
        check_words<F, overflow::saturate>(inputs, bad);
      } else {
        check_words<F, overflow::propagate>(inputs, bad);
      }
      INFO(bad.first);
      CHECK(bad.count == 0);
    }
  });
}

TEST_CASE("fast encode maps every NaN pattern by the rule asked for", "[host]") {
  for_each_fast_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    for (overflow ov : policies) {
      tally bad;
      // every payload of one sign in steps that touch each mantissa bit, both signs
      for (std::uint32_t p = 1; p < 0x800000u; p = p * 3 + 1) {
        check_one<F>(0x7f800000u | p, ov, bad);
        check_one<F>(0xff800000u | p, ov, bad);
      }
      INFO(bad.first);
      CHECK(bad.count == 0);
    }
  });
}

TEST_CASE("fast encode is usable in constant expressions", "[host]") {
  static_assert(fast::encode<format::e4m3fn, overflow::saturate>(448.0f) == 0x7E);
  static_assert(fast::encode<format::e4m3fn, overflow::saturate>(-1e9f) == 0xFE);
  static_assert(fast::encode<format::e4m3fnuz, overflow::saturate>(-0.0f) == 0x00);
  static_assert(fast::encode<format::e4m3fnuz, overflow::propagate>(250.0f) == 0x80);
  static_assert(fast::encode<format::e5m2, overflow::propagate>(-61440.0f) == 0xFC);
  static_assert(fast::encode<format::e5m2fnuz, overflow::saturate>(0x1p-17f) == 0x01);
  static_assert(fast::encode_stochastic<format::e4m3fn>(1.0f, 0u, overflow::saturate) == 0x38);
  CHECK(true);
}

TEST_CASE("fast stochastic encode equals encode_stochastic", "[host]") {
  for_each_fast_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    for (overflow ov : policies) {
      tally bad;
      auto one = [&](std::uint32_t u, std::uint32_t r) {
        const float x = std::bit_cast<float>(u);
        const int want = fp8q::encode_stochastic<F>(x, r, ov).bits;
        const int got = fast::encode_stochastic<F>(x, r, ov);
        if (got != want) bad.add(describe(F, ov, "stochastic", u, want, got));
        const int want_c = fp8q::encode_stochastic<F>(fp8q::canonical_nan(x), r, ov).bits;
        const int got_c = fast::encode_stochastic<F, fast::nan_rule::canonical>(x, r, ov);
        if (got_c != want_c) bad.add(describe(F, ov, "stochastic canonical", u, want_c, got_c));
      };
      // Hand cases: boundaries and specials with random bits at the extremes and around the
      // exact thresholds (0, 1, 2^31 - 1, 2^31, 2^32 - 1), and f32 subnormals whose fraction is
      // below 2^-32 of a step.
      const std::uint32_t randoms[] = {0u, 1u, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu,
                                       0xffffffffu, 0x12345678u};
      for (std::uint32_t u : boundary_inputs(F)) {
        for (std::uint32_t r : randoms) one(u, r);
      }
      for (std::uint32_t u : {0x00000001u, 0x00400000u, 0x00800000u, 0x33800000u, 0x34000000u}) {
        for (std::uint32_t r : randoms) {
          one(u, r);
          one(u | 0x80000000u, r);
        }
      }
      // Pseudo-random inputs over every sign and exponent with stochastic_bits.
      for (std::uint64_t i = 0; i < (1u << 20); ++i) {
        one(static_cast<std::uint32_t>(i * 0x9E3779B1u), fp8q::stochastic_bits(7, i));
      }
      INFO(bad.first);
      CHECK(bad.count == 0);
    }
  });
}
