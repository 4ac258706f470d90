// MX scale codes for tiny (subnormal) amaxes, and MX properties over the whole f32 exponent
// range. A separate executable with a short timeout: an amax below 448 * 2^-150 makes the
// RCEIL quotient amax / 448 round to zero in f32, and the rule must still give a code (it once
// looped forever there).
//   RCEIL: code = clamp(ceil(log2(amax / max)), -127, 127) + 127, the quotient rounded to f32;
//          a quotient of 0 has log2 = -inf, which clamps to -127: code 0.
//   FLOOR: code = clamp(floor(log2 amax) - emax, -127, 127) + 127.
#include <catch2/catch.hpp>

#include "quant_fixtures.hpp"

using namespace fp8q;
using fq::shape3;

namespace {

template <format F>
std::vector<int> codes(const fp8<F>* p, std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = p[i].bits;
  return v;
}

constexpr spec rows_rceil = mx_spec(format::e4m3fn, 1, 32, e8m0_rounding::rceil);
constexpr spec rows_floor = mx_spec(format::e4m3fn, 1, 32, e8m0_rounding::floor);
constexpr spec cols_rceil = mx_spec(format::e4m3fn, 32, 1, e8m0_rounding::rceil);
constexpr spec rows_e5m2_rceil = mx_spec(format::e5m2, 1, 32, e8m0_rounding::rceil);

}  // namespace

TEST_CASE("hand: MX amax 2^-149 (RCEIL quotient rounds to 0) gives code 0", "[host][hand][mx]") {
  // one 1x32 block: x[0] = 2^-149 (the smallest f32 subnormal), x[1] = -2^-149, zeros
  //   RCEIL: 2^-149 / 448 = 2^-157.8 -> rounds to 0 in f32 -> log2 = -inf -> clamp -127 -> code 0
  //   FLOOR: floor(log2 2^-149) - 8 = -157 -> clamp -127 -> code 0
  //   data: x * 2^127 = 2^-22, below half the smallest e4m3fn subnormal 2^-9 -> 0x00 / 0x80
  float x[32] = {};
  x[0] = std::ldexp(1.0f, -149);
  x[1] = -std::ldexp(1.0f, -149);
  std::vector<int> want(32, 0x00);
  want[1] = 0x80;
  e4m3fn q[32];
  e8m0fnu code[1] = {{0xA5}};
  SECTION("RCEIL") {
    const quantized<rows_rceil> out{row_major(q, 1, 32), {}, row_major(code, 1, 1)};
    REQUIRE(host::quantize<rows_rceil>(row_major<const float>(x, 1, 32), out) == status::success);
    CHECK(static_cast<int>(code[0].bits) == 0);
    CHECK(codes(q, 32) == want);
  }
  SECTION("FLOOR") {
    const quantized<rows_floor> out{row_major(q, 1, 32), {}, row_major(code, 1, 1)};
    REQUIRE(host::quantize<rows_floor>(row_major<const float>(x, 1, 32), out) == status::success);
    CHECK(static_cast<int>(code[0].bits) == 0);
    CHECK(codes(q, 32) == want);
  }
}

TEST_CASE("hand: MX amax 2^-142 and 2^-141 around the RCEIL underflow", "[host][hand][mx]") {
  // 2^-141 / 448 = 0.571 * 2^-149 -> rounds up to 2^-149 -> ceil(log2) = -149 -> code 0
  // 2^-142 / 448 = 0.286 * 2^-149 -> rounds to 0 -> code 0
  // data: 2^-141 * 2^127 = 2^-14 and 2^-142 * 2^127 = 2^-15, both below 2^-10 -> 0x00
  for (int k : {141, 142}) {
    INFO("amax 2^-" << k);
    float x[32] = {};
    x[7] = std::ldexp(1.0f, -k);
    e4m3fn q[32];
    e8m0fnu code[1] = {{0xA5}};
    const quantized<rows_rceil> out{row_major(q, 1, 32), {}, row_major(code, 1, 1)};
    REQUIRE(host::quantize<rows_rceil>(row_major<const float>(x, 1, 32), out) == status::success);
    CHECK(static_cast<int>(code[0].bits) == 0);
    CHECK(codes(q, 32) == std::vector<int>(32, 0x00));
  }
}

TEST_CASE("props: MX over the whole f32 exponent range (e8m0 clamps)", "[host][props][mx]") {
  // amaxes from 2^-149 to 2^127: exponents below -127 clamp to code 0
  fq::gen_cfg g;
  g.exp_lo = -149;
  g.exp_hi = 126;
  g.spread = 0;
  g.full_range = true;
  g.p_subnormal = 0.05;
  const std::vector<shape3> shapes{{1, 1, 1}, {1, 1, 32}, {1, 32, 1}, {1, 2, 64}, {2, 33, 65}, {1, 97, 31}};
  for (const char* tag : {"wide_floor", "wide_rceil", "wide_cols", "wide_e5m2"}) {
    const std::uint64_t seed = fq::test_seed(tag);
    INFO(tag << " seed " << seed << " (FP8Q_TEST_SEED=" << fq::base_seed() << ")");
    std::mt19937_64 rng(seed);
    std::string d;
    if (tag[5] == 'f') d = fq::props_run<rows_floor, float>(rng, shapes, g);
    if (tag[5] == 'r') d = fq::props_run<rows_rceil, float>(rng, shapes, g);
    if (tag[5] == 'c') d = fq::props_run<cols_rceil, bf16>(rng, shapes, g);
    if (tag[5] == 'e') d = fq::props_run<rows_e5m2_rceil, float>(rng, shapes, g);
    CHECK(d == "");
  }
}
