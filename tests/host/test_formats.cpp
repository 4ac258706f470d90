// Format traits and decode, checked against the format definitions typed in from the specs
// (tests/support/oracle.hpp) and against literal constants, never against fp8q's own derivation.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string_view>
#include <type_traits>

#include "../support/oracle.hpp"
#include "fp8q/convert.hpp"
#include "fp8q/format.hpp"

namespace {

using fp8q::format;

// The published constants of each format, one row per format, written out by hand.
struct literal_row {
  format fmt;
  const char* name;
  int exponent_bits, mantissa_bits, bias;
  double max;
  std::uint8_t max_bits;
  double min_normal, min_subnormal;
  std::uint8_t min_normal_bits;
  int max_exponent, min_normal_exponent;
  int nan_count;
  std::uint8_t nan_bits;  // the NaN encode writes for +NaN
  bool has_inf;
  std::uint8_t inf_bits;
  bool has_negative_zero, has_zero, has_subnormals, has_sign;
};

const literal_row rows[] = {
    {format::e4m3fn, "e4m3fn", 4, 3, 7, 448.0, 0x7E, 0x1p-6, 0x1p-9, 0x08, 8, -6, 2, 0x7F, false,
     0x00, true, true, true, true},
    {format::e4m3fnuz, "e4m3fnuz", 4, 3, 8, 240.0, 0x7F, 0x1p-7, 0x1p-10, 0x08, 7, -7, 1, 0x80,
     false, 0x00, false, true, true, true},
    {format::e5m2, "e5m2", 5, 2, 15, 57344.0, 0x7B, 0x1p-14, 0x1p-16, 0x04, 15, -14, 6, 0x7E, true,
     0x7C, true, true, true, true},
    {format::e5m2fnuz, "e5m2fnuz", 5, 2, 16, 57344.0, 0x7F, 0x1p-15, 0x1p-17, 0x04, 15, -15, 1,
     0x80, false, 0x00, false, true, true, true},
    {format::e8m0fnu, "e8m0fnu", 8, 0, 127, 0x1p127, 0xFE, 0x1p-127, 0x1p-127, 0x00, 127, -127, 1,
     0xFF, false, 0x00, false, false, false, false},
};

// NaN codes of each format, listed out.
bool listed_nan(format f, int c) {
  switch (f) {
    case format::e4m3fn: return c == 0x7F || c == 0xFF;
    case format::e4m3fnuz:
    case format::e5m2fnuz: return c == 0x80;
    case format::e5m2: return (c >= 0x7D && c <= 0x7F) || (c >= 0xFD && c <= 0xFF);
    case format::e8m0fnu: return c == 0xFF;
  }
  return false;
}

bool same_bits(double a, float b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(static_cast<double>(b));
}

}  // namespace

// The storage types must not mix: an e4m3fn byte is not an e4m3fnuz byte.
static_assert(!std::is_same_v<fp8q::e4m3fn, fp8q::e4m3fnuz>);
static_assert(!std::is_same_v<fp8q::e5m2, fp8q::e5m2fnuz>);
static_assert(!std::is_convertible_v<fp8q::e4m3fn, fp8q::e4m3fnuz>);
static_assert(!std::is_convertible_v<fp8q::e4m3fnuz, fp8q::e4m3fn>);
static_assert(!std::is_convertible_v<fp8q::e5m2, fp8q::e5m2fnuz>);
static_assert(!std::is_convertible_v<fp8q::e5m2fnuz, fp8q::e5m2>);
static_assert(!std::is_convertible_v<fp8q::e4m3fn, fp8q::e5m2>);
static_assert(!std::is_convertible_v<fp8q::e8m0fnu, fp8q::e4m3fn>);
static_assert(!std::is_convertible_v<std::uint8_t, fp8q::e4m3fn>);
static_assert(!std::is_convertible_v<fp8q::e4m3fn, std::uint8_t>);
static_assert(!std::is_convertible_v<float, fp8q::e4m3fn>);
static_assert(!std::is_convertible_v<fp8q::e4m3fn, float>);
static_assert(!std::is_same_v<fp8q::bf16, fp8q::f16>);
static_assert(!std::is_convertible_v<fp8q::bf16, fp8q::f16>);
static_assert(sizeof(fp8q::e4m3fn) == 1 && sizeof(fp8q::e4m3fnuz) == 1 && sizeof(fp8q::e5m2) == 1 &&
              sizeof(fp8q::e5m2fnuz) == 1 && sizeof(fp8q::e8m0fnu) == 1);
static_assert(sizeof(fp8q::bf16) == 2 && sizeof(fp8q::f16) == 2);
static_assert(std::is_trivially_copyable_v<fp8q::e4m3fnuz> && std::is_trivially_copyable_v<fp8q::bf16>);
static_assert(fp8q::e4m3fnuz::fmt == format::e4m3fnuz && fp8q::e8m0fnu::fmt == format::e8m0fnu);

// Traits and decode are usable in constant expressions (device code and template arguments rely
// on it).
static_assert(fp8q::traits_v<format::e4m3fn>.max == 448.0f);
static_assert(fp8q::traits_v<format::e4m3fnuz>.max_bits == 0x7F);
static_assert(fp8q::decode(fp8q::e4m3fn{0x7E}) == 448.0f);
static_assert(fp8q::decode(fp8q::e5m2fnuz{0x01}) == 0x1p-17f);
static_assert(fp8q::decode(fp8q::e8m0fnu{0x7F}) == 1.0f);

TEST_CASE("all_formats lists the five formats in declaration order", "[host]") {
  REQUIRE(std::size(fp8q::all_formats) == 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(fp8q::all_formats[i] == rows[i].fmt);
}

TEST_CASE("traits equal the published constants", "[host]") {
  for (const literal_row& r : rows) {
    const fp8q::format_traits t = fp8q::traits(r.fmt);
    INFO(r.name);
    CHECK(std::string_view(t.name) == r.name);
    CHECK(std::string_view(fp8q::to_string(r.fmt)) == r.name);
    CHECK(t.exponent_bits == r.exponent_bits);
    CHECK(t.mantissa_bits == r.mantissa_bits);
    CHECK(t.bias == r.bias);
    CHECK(t.max == r.max);
    CHECK(t.max_bits == r.max_bits);
    CHECK(t.min_normal == r.min_normal);
    CHECK(t.min_subnormal == r.min_subnormal);
    CHECK(t.min_normal_bits == r.min_normal_bits);
    CHECK(t.max_exponent == r.max_exponent);
    CHECK(t.min_normal_exponent == r.min_normal_exponent);
    CHECK(t.nan_count == r.nan_count);
    CHECK(t.nan_bits == r.nan_bits);
    CHECK(t.has_inf == r.has_inf);
    CHECK(t.inf_bits == r.inf_bits);
    CHECK(t.has_negative_zero == r.has_negative_zero);
    CHECK(t.has_zero == r.has_zero);
    CHECK(t.has_subnormals == r.has_subnormals);
    CHECK(t.has_sign == r.has_sign);
  }
}

TEST_CASE("the literal table agrees with the format definitions", "[host]") {
  // Guards the two hand-written sources against each other: the constants in `rows` must be
  // what the bit-level definitions in oracle.hpp produce.
  for (const literal_row& r : rows) {
    INFO(r.name);
    const oracle::facts d = oracle::facts_of(r.fmt);
    CHECK(d.exponent_bits == r.exponent_bits);
    CHECK(d.mantissa_bits == r.mantissa_bits);
    CHECK(d.bias == r.bias);
    CHECK(d.nan_code == r.nan_bits);
    CHECK(oracle::value_of(r.fmt, r.max_bits) == r.max);
    CHECK(oracle::max_code(r.fmt) == r.max_bits);
    CHECK(oracle::value_of(r.fmt, r.min_normal_bits) == r.min_normal);
    double smallest_positive = HUGE_VAL;
    double largest_finite = 0;
    int nans = 0;
    for (int c = 0; c < 256; ++c) {
      const double v = oracle::value_of(r.fmt, static_cast<std::uint8_t>(c));
      CHECK(static_cast<bool>(std::isnan(v)) == listed_nan(r.fmt, c));
      nans += std::isnan(v) ? 1 : 0;
      if (std::isfinite(v) && v > 0) smallest_positive = std::min(smallest_positive, v);
      if (std::isfinite(v)) largest_finite = std::max(largest_finite, v);
    }
    CHECK(nans == r.nan_count);
    CHECK(smallest_positive == r.min_subnormal);
    CHECK(largest_finite == r.max);
  }
}

TEST_CASE("special codes: NaN, Inf and zeros", "[host]") {
  for (format f : oracle::formats) {
    INFO(fp8q::to_string(f));
    for (int c = 0; c < 256; ++c) {
      INFO("code " << c);
      const float v = fp8q::decode(f, static_cast<std::uint8_t>(c));
      CHECK(static_cast<bool>(std::isnan(v)) == listed_nan(f, c));
      // Inf exists only in e5m2, as 0x7C and 0xFC.
      CHECK(static_cast<bool>(std::isinf(v)) == (f == format::e5m2 && (c == 0x7C || c == 0xFC)));
      // -0 exists only in e4m3fn and e5m2, as 0x80.
      const bool negative_zero = v == 0.0f && std::signbit(v);
      CHECK(negative_zero == ((f == format::e4m3fn || f == format::e5m2) && c == 0x80));
      // e8m0fnu has no zero at all; every other format has +0 at 0x00 only (or 0x80 as -0).
      if (v == 0.0f) CHECK((c == 0x00 || c == 0x80));
      if (f == format::e8m0fnu) CHECK(v != 0.0f);
    }
  }
  CHECK(std::isinf(fp8q::decode(fp8q::e5m2{0x7C})));
  CHECK(fp8q::decode(fp8q::e5m2{0xFC}) < 0);
}

TEST_CASE("decode of all 256 codes matches the format definition bit for bit", "[host]") {
  oracle::for_each_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    const oracle::facts d = oracle::facts_of(F);
    INFO(d.name);
    int mismatches = 0;
    for (int c = 0; c < 256; ++c) {
      const auto code = static_cast<std::uint8_t>(c);
      const double want = oracle::value_of(F, code);
      const float got = fp8q::decode(fp8q::fp8<F>{code});
      const float got_rt = fp8q::decode(F, code);  // run-time format overload
      bool ok = false;
      if (std::isnan(want)) {
        // NaN stays NaN; its sign is the code's in formats with signed NaNs, else positive.
        ok = std::isnan(got) && std::isnan(got_rt) && std::signbit(got) == std::signbit(want) &&
             fp8q::is_nan(fp8q::fp8<F>{code});
      } else {
        // Every FP8 value is exactly an f32 value, sign of zero included.
        ok = same_bits(want, got) && same_bits(want, got_rt) && !fp8q::is_nan(fp8q::fp8<F>{code});
      }
      if (!ok) {
        ++mismatches;
        UNSCOPED_INFO("code 0x" << std::hex << c << std::dec << ": want " << want << " got " << got);
      }
    }
    CHECK(mismatches == 0);
  });
}

TEST_CASE("decoded values increase with the code over the positive half", "[host]") {
  // Sorting bytes sorts values (within a sign), which encode's overflow test (code > max_bits)
  // relies on.
  for (format f : oracle::formats) {
    INFO(fp8q::to_string(f));
    const int last = oracle::max_code(f);
    for (int c = 1; c <= last; ++c) {
      CHECK(fp8q::decode(f, static_cast<std::uint8_t>(c - 1)) <
            fp8q::decode(f, static_cast<std::uint8_t>(c)));
    }
  }
}

TEST_CASE("bf16 and f16 widen to f32 exactly", "[host]") {
  int bf16_bad = 0;
  int f16_bad = 0;
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double want_bf = oracle::bf16_value(bits);
    const float got_bf = fp8q::to_float(fp8q::bf16{bits});
    if (std::isnan(want_bf) ? !(std::isnan(got_bf) && std::signbit(got_bf) == std::signbit(want_bf))
                            : !same_bits(want_bf, got_bf)) {
      ++bf16_bad;
    }
    const double want_h = oracle::f16_value(bits);
    const float got_h = fp8q::to_float(fp8q::f16{bits});
    if (std::isnan(want_h) ? !(std::isnan(got_h) && std::signbit(got_h) == std::signbit(want_h))
                           : !same_bits(want_h, got_h)) {
      ++f16_bad;
    }
  }
  CHECK(bf16_bad == 0);
  CHECK(f16_bad == 0);
}
