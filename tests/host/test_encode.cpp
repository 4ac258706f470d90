// Round-to-nearest-even encode, checked against the brute-force oracle (tests/support/oracle.hpp)
// on every bf16 and f16 pattern and on every f32 rounding boundary, plus the cases that peers got
// wrong, written out as literal bytes.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "../support/oracle.hpp"
#include "fp8q/convert.hpp"

namespace {

using fp8q::format;
using fp8q::overflow;

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float qnan = std::numeric_limits<float>::quiet_NaN();

// Counts mismatches and keeps the first few for the failure message.
struct tally {
  long count = 0;
  std::string first;
  void add(const std::string& what) {
    if (count++ < 8) first += what + "\n";
  }
};

std::string describe(format f, overflow ov, const std::string& input, int want, int got) {
  std::ostringstream s;
  s << fp8q::to_string(f) << ' ' << fp8q::to_string(ov) << " input " << input << ": want 0x"
    << std::hex << want << " got 0x" << got;
  return s.str();
}

std::string f32_text(float x) {
  std::ostringstream s;
  s << std::hexfloat << x << " (0x" << std::hex << std::bit_cast<std::uint32_t>(x) << ')';
  return s.str();
}

// Every f32 input on which rounding changes its mind: each value of the format, each midpoint
// between neighbours (the overflow rung included), and the f32 values up to 3 ulps either side.
std::vector<float> boundary_inputs(format f) {
  std::vector<float> out;
  const auto& r = oracle::ladder(f);
  std::vector<double> points;
  for (std::size_t i = 0; i < r.size(); ++i) {
    points.push_back(r[i].value);
    if (i + 1 < r.size()) points.push_back((r[i].value + r[i + 1].value) / 2);
  }
  for (double p : points) {
    if (p > std::numeric_limits<float>::max()) continue;  // e8m0fnu's overflow rung, 2^128
    const float center = static_cast<float>(p);
    REQUIRE(static_cast<double>(center) == p);
    for (int k = -3; k <= 3; ++k) {
      const float x = oracle::f32_step(center, k);
      out.push_back(x);
      out.push_back(-x);
    }
  }
  // The far ends of f32, and the specials.
  const float extremes[] = {0.0f, std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
                            inf, qnan};
  for (float x : extremes) {
    out.push_back(x);
    out.push_back(-x);
  }
  out.push_back(std::bit_cast<float>(0x7F800001u));  // signalling NaN, smallest payload
  out.push_back(std::bit_cast<float>(0xFFBFFFFFu));  // negative NaN, all payload bits
  return out;
}

}  // namespace

TEST_CASE("encode of every bf16 pattern matches the oracle", "[host]") {
  oracle::for_each_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    for (overflow ov : oracle::policies) {
      tally bad;
      for (std::uint32_t b = 0; b < 0x10000u; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const int want = oracle::encode_rne(F, oracle::bf16_value(bits), ov);
        const int got = fp8q::encode<F>(fp8q::bf16{bits}, ov).bits;
        if (want != got) bad.add(describe(F, ov, "bf16 " + std::to_string(b), want, got));
      }
      INFO(bad.first);
      CHECK(bad.count == 0);
    }
  });
}

TEST_CASE("encode of every f16 pattern matches the oracle", "[host]") {
  oracle::for_each_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    for (overflow ov : oracle::policies) {
      tally bad;
      for (std::uint32_t b = 0; b < 0x10000u; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const int want = oracle::encode_rne(F, oracle::f16_value(bits), ov);
        const int got = fp8q::encode<F>(fp8q::f16{bits}, ov).bits;
        if (want != got) bad.add(describe(F, ov, "f16 " + std::to_string(b), want, got));
      }
      INFO(bad.first);
      CHECK(bad.count == 0);
    }
  });
}

TEST_CASE("encode matches the oracle on every f32 rounding boundary", "[host]") {
  oracle::for_each_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    const std::vector<float> inputs = boundary_inputs(F);
    for (overflow ov : oracle::policies) {
      tally bad;
      for (float x : inputs) {
        const int want = oracle::encode_rne(F, x, ov);
        const int got = fp8q::encode<F>(x, ov).bits;
        // The run-time rounding overload with nearest_even must ignore its random bits.
        const int got_rt = fp8q::encode<F>(x, fp8q::rounding::nearest_even, 0x12345678u, ov).bits;
        if (want != got || want != got_rt) bad.add(describe(F, ov, f32_text(x), want, got));
      }
      INFO(bad.first);
      CHECK(bad.count == 0);
    }
  });
}

TEST_CASE("the fast segment-table oracle agrees with the brute-force oracle", "[host]") {
  // tests/slow/test_exhaustive_f32.cpp trusts the segment table on all 2^32 inputs; it earns that
  // trust here, on every boundary and every bf16 pattern.
  for (format f : oracle::formats) {
    const oracle::segment_table table = oracle::make_segment_table(f);
    std::vector<float> inputs = boundary_inputs(f);
    for (std::uint32_t b = 0; b < 0x10000u; ++b) inputs.push_back(std::bit_cast<float>(b << 16));
    for (overflow ov : oracle::policies) {
      tally bad;
      for (float x : inputs) {
        const int want = oracle::encode_rne(f, x, ov);
        const int got = oracle::encode_table(table, std::bit_cast<std::uint32_t>(x), ov);
        if (want != got) bad.add(describe(f, ov, f32_text(x), want, got));
      }
      INFO(bad.first);
      CHECK(bad.count == 0);
    }
  }
}

TEST_CASE("every value of a format encodes to its own code", "[host]") {
  oracle::for_each_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    for (overflow ov : oracle::policies) {
      for (int c = 0; c < 256; ++c) {
        const auto code = static_cast<std::uint8_t>(c);
        if (oracle::is_nan_code(F, code) || oracle::is_inf_code(F, code)) continue;
        INFO(fp8q::to_string(F) << ' ' << fp8q::to_string(ov) << " code " << c);
        CHECK(fp8q::encode<F>(fp8q::decode(fp8q::fp8<F>{code}), ov).bits == c);
      }
    }
  });
}

namespace {

struct literal_case {
  format fmt;
  float x;
  overflow ov;
  std::uint8_t want;
  const char* why;
};

constexpr overflow sat = overflow::saturate;
constexpr overflow prop = overflow::propagate;

// Bytes written out by hand from the format definitions (ANCHORS.md lists the peers' bugs).
const literal_case literal_cases[] = {
    // e4m3fn: max 448 = 0x7E; 480 would be 0x7F, which is NaN.
    {format::e4m3fn, 464.0f, sat, 0x7E, "tie 448|480 goes to even 0x7E"},
    {format::e4m3fn, 464.0f, prop, 0x7E, "tie 448|480 goes to even 0x7E, no overflow"},
    {format::e4m3fn, -464.0f, prop, 0xFE, "negative tie"},
    {format::e4m3fn, 464.00003f, prop, 0x7F, "just above the tie overflows to NaN"},
    {format::e4m3fn, 464.00003f, sat, 0x7E, "just above the tie saturates"},
    {format::e4m3fn, 480.0f, prop, 0x7F, "overflow without saturation is NaN"},
    {format::e4m3fn, -480.0f, prop, 0xFF, "negative overflow is -NaN"},
    {format::e4m3fn, 480.0f, sat, 0x7E, "overflow saturates"},
    {format::e4m3fn, 1e30f, sat, 0x7E, "far overflow saturates"},
    {format::e4m3fn, inf, sat, 0x7E, "+Inf saturates to +max"},
    {format::e4m3fn, -inf, sat, 0xFE, "-Inf saturates to -max"},
    {format::e4m3fn, inf, prop, 0x7F, "+Inf without saturation is NaN"},
    {format::e4m3fn, -inf, prop, 0xFF, "-Inf without saturation is -NaN"},
    {format::e4m3fn, qnan, sat, 0x7F, "NaN"},
    {format::e4m3fn, -qnan, sat, 0xFF, "-NaN keeps its sign"},
    {format::e4m3fn, -qnan, prop, 0xFF, "-NaN keeps its sign"},
    {format::e4m3fn, 0x1p-9f, prop, 0x01, "smallest subnormal"},
    {format::e4m3fn, 0x1p-10f, prop, 0x00, "tie 0|2^-9 goes to even 0x00"},
    {format::e4m3fn, 0x1.000002p-10f, prop, 0x01, "just above half the smallest subnormal"},
    {format::e4m3fn, 0x3p-10f, prop, 0x02, "tie 0x01|0x02 goes to even 0x02"},
    {format::e4m3fn, 0x7p-10f, prop, 0x04, "tie 0x03|0x04 goes to even 0x04"},
    {format::e4m3fn, 0x1.ep-7f, prop, 0x08, "tie largest subnormal|min normal goes to even 0x08"},
    {format::e4m3fn, -0x1p-10f, prop, 0x80, "negative value rounding to zero keeps its sign"},
    {format::e4m3fn, -0.0f, sat, 0x80, "-0 is representable"},
    {format::e4m3fn, -1e-30f, sat, 0x80, "tiny negative is -0"},
    // e4m3fnuz: max 240 = 0x7F (odd), so the tie at 248 goes up to 256 and overflows.
    {format::e4m3fnuz, 248.0f, prop, 0x80, "tie 240|256 goes to even 256: overflow, NaN"},
    {format::e4m3fnuz, 248.0f, sat, 0x7F, "tie 240|256 overflows, saturates to 240"},
    {format::e4m3fnuz, -248.0f, sat, 0xFF, "negative saturates to -240"},
    {format::e4m3fnuz, -248.0f, prop, 0x80, "fnuz NaN is unsigned"},
    {format::e4m3fnuz, 241.0f, sat, 0x7F, "241 rounds to 240"},
    {format::e4m3fnuz, 241.0f, prop, 0x7F, "241 rounds to 240"},
    {format::e4m3fnuz, 247.99998f, prop, 0x7F, "just below the tie"},
    {format::e4m3fnuz, inf, sat, 0x7F, "+Inf saturates"},
    {format::e4m3fnuz, -inf, sat, 0xFF, "-Inf saturates"},
    {format::e4m3fnuz, inf, prop, 0x80, "+Inf is NaN"},
    {format::e4m3fnuz, -inf, prop, 0x80, "-Inf is NaN"},
    {format::e4m3fnuz, qnan, sat, 0x80, "NaN"},
    {format::e4m3fnuz, -qnan, prop, 0x80, "-NaN is the one NaN"},
    {format::e4m3fnuz, -0.0f, sat, 0x00, "no -0 in fnuz"},
    {format::e4m3fnuz, -0.0f, prop, 0x00, "no -0 in fnuz"},
    {format::e4m3fnuz, -1e-30f, prop, 0x00, "tiny negative rounds to +0 (0x80 is NaN)"},
    {format::e4m3fnuz, -0x1p-11f, sat, 0x00, "negative tie to zero gives +0"},
    {format::e4m3fnuz, 0x1p-10f, prop, 0x01, "smallest subnormal"},
    {format::e4m3fnuz, -0x1p-10f, prop, 0x81, "negative smallest subnormal"},
    // e5m2: max 57344 = 0x7B, Inf 0x7C; the tie 57344|65536 at 61440 goes to even 0x7C.
    {format::e5m2, 57344.0f, prop, 0x7B, "max"},
    {format::e5m2, 61439.996f, prop, 0x7B, "just below the tie"},
    {format::e5m2, 61440.0f, prop, 0x7C, "tie goes to even 0x7C: Inf"},
    {format::e5m2, 61440.0f, sat, 0x7B, "tie overflows, saturates to max"},
    {format::e5m2, -61440.0f, prop, 0xFC, "-Inf"},
    {format::e5m2, -61440.0f, sat, 0xFB, "-max"},
    {format::e5m2, 65536.0f, prop, 0x7C, "overflow is Inf"},
    {format::e5m2, 1e10f, sat, 0x7B, "far overflow saturates"},
    {format::e5m2, inf, prop, 0x7C, "+Inf"},
    {format::e5m2, -inf, prop, 0xFC, "-Inf"},
    {format::e5m2, inf, sat, 0x7B, "+Inf saturates"},
    {format::e5m2, -inf, sat, 0xFB, "-Inf saturates"},
    {format::e5m2, qnan, prop, 0x7E, "canonical NaN 0x7E (ml_dtypes), not torch's 0x7F"},
    {format::e5m2, -qnan, sat, 0xFE, "-NaN keeps its sign"},
    {format::e5m2, 0x1p-16f, prop, 0x01, "smallest subnormal"},
    {format::e5m2, 0x1p-17f, prop, 0x00, "tie 0|2^-16 goes to even 0x00"},
    {format::e5m2, -0.0f, prop, 0x80, "-0"},
    // e5m2fnuz: max 57344 = 0x7F (odd): the tie at 61440 goes up and overflows.
    {format::e5m2fnuz, 61440.0f, prop, 0x80, "tie goes to even 0x80: overflow, NaN"},
    {format::e5m2fnuz, 61440.0f, sat, 0x7F, "tie saturates"},
    {format::e5m2fnuz, inf, sat, 0x7F, "+Inf saturates"},
    {format::e5m2fnuz, -inf, prop, 0x80, "-Inf is NaN"},
    {format::e5m2fnuz, -0.0f, prop, 0x00, "no -0"},
    {format::e5m2fnuz, -1e-30f, sat, 0x00, "tiny negative is +0"},
    {format::e5m2fnuz, 0x1p-17f, sat, 0x01, "smallest subnormal"},
    {format::e5m2fnuz, -qnan, sat, 0x80, "NaN"},
    // e8m0fnu: 2^(c-127), no zero, no sign; ties 1.5*2^k go up.
    {format::e8m0fnu, 1.0f, prop, 0x7F, "1 = 2^0"},
    {format::e8m0fnu, 1.5f, prop, 0x80, "tie 1|2 goes up"},
    {format::e8m0fnu, 1.4999999f, prop, 0x7F, "below the tie"},
    {format::e8m0fnu, 3.0f, sat, 0x81, "tie 2|4 goes up"},
    {format::e8m0fnu, 0x1p127f, prop, 0xFE, "max 2^127"},
    {format::e8m0fnu, 0x1.7ffffep127f, prop, 0xFE, "below the overflow tie"},
    {format::e8m0fnu, 0x1.8p127f, prop, 0xFF, "tie 2^127|2^128 goes up: overflow, NaN"},
    {format::e8m0fnu, 0x1.8p127f, sat, 0xFE, "tie 2^127|2^128 saturates"},
    {format::e8m0fnu, std::numeric_limits<float>::max(), sat, 0xFE, "FLT_MAX saturates"},
    {format::e8m0fnu, inf, sat, 0xFE, "+Inf saturates"},
    {format::e8m0fnu, inf, prop, 0xFF, "+Inf is NaN"},
    {format::e8m0fnu, -inf, sat, 0x00, "-Inf is <= 0"},
    {format::e8m0fnu, -inf, prop, 0xFF, "-Inf is NaN"},
    {format::e8m0fnu, 0.0f, sat, 0x00, "zero saturates to the smallest value"},
    {format::e8m0fnu, 0.0f, prop, 0xFF, "zero is not representable"},
    {format::e8m0fnu, -0.0f, sat, 0x00, "-0 saturates to the smallest value"},
    {format::e8m0fnu, -0.0f, prop, 0xFF, "-0 is not representable"},
    {format::e8m0fnu, -1.0f, sat, 0x00, "negative saturates to the smallest value"},
    {format::e8m0fnu, -1.0f, prop, 0xFF, "negative is not representable"},
    {format::e8m0fnu, qnan, sat, 0xFF, "NaN"},
    {format::e8m0fnu, -qnan, sat, 0xFF, "NaN is unsigned"},
    {format::e8m0fnu, 0x1p-127f, prop, 0x00, "smallest value, an f32 subnormal"},
    {format::e8m0fnu, 0x1p-149f, prop, 0x00, "below 2^-127 everything is 0x00"},
    {format::e8m0fnu, 0x1.0p-128f, prop, 0x00, "half the smallest value is 0x00, not NaN"},
    {format::e8m0fnu, 0x1.000004p-127f, prop, 0x00, "just above 2^-127, nearest is 2^-127"},
    {format::e8m0fnu, 0x1.7ffffcp-127f, prop, 0x00,
     "just below 1.5*2^-127: nearest is 2^-127 (torch rounds up here)"},
    {format::e8m0fnu, 0x1.8p-127f, prop, 0x01, "tie 2^-127|2^-126 goes up"},
};

}  // namespace

TEST_CASE("peer bug cases and special values encode to the literal bytes", "[host]") {
  for (const literal_case& c : literal_cases) {
    INFO(fp8q::to_string(c.fmt) << ' ' << fp8q::to_string(c.ov) << " x = " << f32_text(c.x)
                                << ": " << c.why);
    const int got = [&] {
      switch (c.fmt) {
        case format::e4m3fn: return int{fp8q::encode<format::e4m3fn>(c.x, c.ov).bits};
        case format::e4m3fnuz: return int{fp8q::encode<format::e4m3fnuz>(c.x, c.ov).bits};
        case format::e5m2: return int{fp8q::encode<format::e5m2>(c.x, c.ov).bits};
        case format::e5m2fnuz: return int{fp8q::encode<format::e5m2fnuz>(c.x, c.ov).bits};
        case format::e8m0fnu: return int{fp8q::encode<format::e8m0fnu>(c.x, c.ov).bits};
      }
      return -1;
    }();
    CHECK(got == c.want);
    // The oracle must agree with the hand-written bytes too, or it is the oracle that is wrong.
    CHECK(oracle::encode_rne(c.fmt, c.x, c.ov) == c.want);
  }
}

TEST_CASE("the literal inputs are the f32 values they claim to be", "[host]") {
  // Guards the table above against decimal literals that land on a different f32.
  CHECK(464.00003f == std::nextafter(464.0f, inf));
  CHECK(247.99998f == std::nextafter(248.0f, 0.0f));
  CHECK(61439.996f == std::nextafter(61440.0f, 0.0f));
  CHECK(1.4999999f == std::nextafter(1.5f, 0.0f));
  CHECK(0x1.7ffffep127f == std::nextafter(0x1.8p127f, 0.0f));
  CHECK(0x1.7ffffcp-127f == std::nextafter(0x1.8p-127f, 0.0f));
  CHECK(0x1.000004p-127f == std::nextafter(0x1p-127f, inf));
}

TEST_CASE("encode is usable in constant expressions", "[host]") {
  static_assert(fp8q::encode<format::e4m3fn>(464.0f, overflow::saturate).bits == 0x7E);
  static_assert(fp8q::encode<format::e4m3fnuz>(248.0f, overflow::propagate).bits == 0x80);
  static_assert(fp8q::encode<format::e5m2>(fp8q::bf16{0x4780}, overflow::propagate).bits == 0x7C);
  static_assert(fp8q::encode<format::e8m0fnu>(1.5f, overflow::saturate).bits == 0x80);
  SUCCEED();
}

TEST_CASE("bf16 and f16 overloads agree with the f32 overload on the same value", "[host]") {
  oracle::for_each_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    for (overflow ov : oracle::policies) {
      long bad = 0;
      for (std::uint32_t b = 0; b < 0x10000u; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const float xb = std::bit_cast<float>(b << 16);
        bad += fp8q::encode<F>(fp8q::bf16{bits}, ov) != fp8q::encode<F>(xb, ov);
        const double xh = oracle::f16_value(bits);
        bad += fp8q::encode<F>(fp8q::f16{bits}, ov) != fp8q::encode<F>(static_cast<float>(xh), ov);
      }
      INFO(fp8q::to_string(F) << ' ' << fp8q::to_string(ov));
      CHECK(bad == 0);
    }
  });
}

// The GPU kernels' four-bytes-at-a-time NaN test (nan_byte_mask) against is_nan on one byte:
// every pair of neighbouring bytes in every position, with NaN and non-NaN bytes around them,
// so a carry leaking from one byte into the next would show.
template <format F>
std::int64_t nan_mask_mismatches() {
  std::int64_t bad = 0;
  const std::uint32_t fillers[] = {0x00u, 0x7Fu, 0xFFu, 0x7Eu, 0xFEu, 0x7Cu, 0x80u};
  for (std::uint32_t a = 0; a < 256; ++a) {
    for (std::uint32_t b = 0; b < 256; ++b) {
      for (std::uint32_t fill : fillers) {
        for (int pos = 0; pos < 3; ++pos) {
          std::uint32_t bytes[4] = {fill, fill ^ 0x80u, fill, fill ^ 0x80u};
          bytes[pos] = a;
          bytes[pos + 1] = b;
          const std::uint32_t word = bytes[0] | bytes[1] << 8 | bytes[2] << 16 | bytes[3] << 24;
          const std::uint32_t mask = fp8q::nan_byte_mask<F>(word);
          for (int k = 0; k < 4; ++k) {
            const bool nan = fp8q::is_nan(fp8q::fp8<F>{static_cast<std::uint8_t>(bytes[k])});
            if (((mask >> (8 * k)) & 0xFFu) != (nan ? 0xFFu : 0x00u)) ++bad;
          }
        }
      }
    }
  }
  return bad;
}

TEST_CASE("nan_byte_mask marks exactly the NaN codes of four bytes at once", "[host]") {
  static_assert(fp8q::first_nan_code<format::e4m3fn>() == 0x7F);
  static_assert(fp8q::first_nan_code<format::e5m2>() == 0x7D);
  static_assert(fp8q::first_nan_code<format::e4m3fnuz>() == 0x80);
  static_assert(fp8q::nans_on_top<format::e4m3fn>() && fp8q::nans_on_top<format::e5m2>());
  static_assert(!fp8q::nans_on_top<format::e4m3fnuz>() && !fp8q::nans_on_top<format::e5m2fnuz>());
  CHECK(nan_mask_mismatches<format::e4m3fn>() == 0);
  CHECK(nan_mask_mismatches<format::e5m2>() == 0);
  CHECK(fp8q::nan_byte_mask<format::e4m3fn>(0xFF7F7E00u) == 0xFFFF0000u);
  CHECK(fp8q::nan_byte_mask<format::e5m2>(0x7C7DFEFFu) == 0x00FFFFFFu);  // Inf, NaN, -NaN, -NaN
}
