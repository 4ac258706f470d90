// Adversarial values: NaN in a group (the whole group becomes NaN codes, s = NaN), ±Inf (amax Inf
// -> s = 0, Inf * 0 = NaN), all-zero groups (s = max / eps), subnormal amaxes, FLT_MAX, rounding
// ties and overflow right after scaling, MX blocks with NaN/Inf, and random inputs sprinkled with
// NaN and Inf checked against the reference for every granularity.
// Rules: docs/semantics.md "Quantization" and ARCHITECTURE §3. Every NaN fp8q computes (x*s with
// a NaN, Inf*0, 1/NaN) is the positive canonical NaN 0x7fc00000, so quantized NaNs are the
// format's positive code: e4m3fn 0x7F, e5m2 0x7E, fnuz 0x80.
#include <catch2/catch.hpp>

#include "quant_fixtures.hpp"

using namespace fp8q;
using fq::bits_of;
using fq::bytes;
using fq::f32_bits;
using intv = std::vector<int>;

namespace {

const float nan_f = std::numeric_limits<float>::quiet_NaN();
const float inf_f = std::numeric_limits<float>::infinity();

bool e4m3fn_nan(int code) { return code == 0x7F; }  // the positive canonical NaN code
bool e5m2_nan(int code) { return code == 0x7E; }

constexpr spec row_both{.out = format::e4m3fn, .granularity = granularity::row,
                        .store = stored_scale::both};

}  // namespace

TEST_CASE("adversarial: a NaN makes its whole row NaN, other rows are unaffected", "[host][adversarial]") {
  // row 0 [1, NaN, 3]          -> amax NaN (canonical 0x7fc00000) -> s NaN, 1/s NaN, all NaN codes
  // row 1 [2, 4, -8]           -> amax 8, s 56: 112 -> 0x6E, 224 -> 0x76, -448 -> 0xFE
  // row 2 [-NaN(payload), 0, 1] -> like row 0 (any payload, any sign): all 0x7F
  const float x[9] = {1, nan_f, 3, 2, 4, -8, fq::float_of(0xffc01234u), 0, 1};
  e4m3fn q[9];
  float s[3], inv[3];
  const quantized<row_both> out{row_major(q, 3, 3), row_major(s, 3, 1), row_major(inv, 3, 1)};
  REQUIRE(host::quantize<row_both>(row_major(x, 3, 3), out) == status::success);
  for (int i : {0, 1, 2, 6, 7, 8}) {
    INFO("element " << i << " code " << static_cast<int>(q[i].bits));
    CHECK(e4m3fn_nan(q[i].bits));
  }
  CHECK(bytes(q + 3, 3) == intv{0x6E, 0x76, 0xFE});
  CHECK(bits_of(s[0]) == 0x7fc00000u);  // s = scale_from_amax(canonical NaN) = that NaN
  CHECK(bits_of(s[2]) == 0x7fc00000u);
  CHECK(bits_of(inv[0]) == 0x7fc00000u);  // 1/NaN, canonical
  CHECK(bits_of(inv[2]) == 0x7fc00000u);
  CHECK(bits_of(s[1]) == 0x42600000u);  // 56

  SECTION("dequantize: NaN codes times a NaN inverse give the canonical NaN") {
    // decode(0x7F) = NaN, times 1/s = NaN -> 0x7fc00000 (f32) -> bf16 0x7FC0
    float back[9];
    REQUIRE(host::dequantize<row_both>(out, row_major(back, 3, 3)) == status::success);
    for (int i : {0, 1, 2, 6, 7, 8}) CHECK(bits_of(back[i]) == 0x7fc00000u);
    bf16 back16[9];
    REQUIRE(host::dequantize<row_both>(out, row_major(back16, 3, 3)) == status::success);
    for (int i : {0, 1, 2, 6, 7, 8}) CHECK(static_cast<int>(back16[i].bits) == 0x7FC0);
  }
  SECTION("e4m3fnuz has one NaN code: 0x80 exactly") {
    constexpr spec S{.out = format::e4m3fnuz, .granularity = granularity::row};
    e4m3fnuz qz[9];
    float invz[3];
    const quantized<S> outz{row_major(qz, 3, 3), {}, row_major(invz, 3, 1)};
    REQUIRE(host::quantize<S>(row_major(x, 3, 3), outz) == status::success);
    // row 1 with 240: s = 240/8 = 30: 60 = 1.875*2^5 -> bias 8: E=13 M=7 -> 0x6F;
    //   120 = 1.875*2^6 -> 0x77; -240 -> 0xFF
    CHECK(bytes(qz, 9) == intv{0x80, 0x80, 0x80, 0x6F, 0x77, 0xFF, 0x80, 0x80, 0x80});
  }
  SECTION("tensorwise: one NaN poisons the whole tensor") {
    constexpr spec S{.out = format::e4m3fnuz, .granularity = granularity::tensor};
    e4m3fnuz qz[9];
    float invz = 0;
    const quantized<S> outz{row_major(qz, 3, 3), {}, row_major(&invz, 1, 1)};
    REQUIRE(host::quantize<S>(row_major(x, 3, 3), outz) == status::success);
    CHECK(bytes(qz, 9) == intv(9, 0x80));
    CHECK(bits_of(invz) == 0x7fc00000u);
  }
  SECTION("per-group colwise: only the NaN's (group, column) unit") {
    constexpr spec S{.out = format::e4m3fnuz, .granularity = granularity::group_col,
                     .store = stored_scale::multiplier};
    // 3 x 3 with ends [1, 3]: group 0 = row 0 [1, NaN, 3], group 1 = rows 1..2
    //   unit (0, 1) is the only one with a NaN; (1, 0) = {2, -NaN}: NaN as well
    //   (0,0) {1}: s = 240 -> 0x7F;   (0,2) {3}: s = 80 -> 240 -> 0x7F
    //   (1,1) {4, 0}: s = 60 -> 240 -> 0x7F, 0 -> 0x00;  (1,2) {-8, 1}: s = 30 -> -240 -> 0xFF,
    //   30 = 1.875*2^4 -> E=12 M=7 -> 0x67
    const std::int32_t ends[2] = {1, 3};
    e4m3fnuz qz[9];
    float sz[6];
    const quantized<S> outz{row_major(qz, 3, 3), row_major(sz, 2, 3), {}};
    quantize_args args;
    args.groups = {ends, 2};
    REQUIRE(host::quantize<S>(row_major(x, 3, 3), outz, args) == status::success);
    CHECK(bytes(qz, 9) == intv{0x7F, 0x80, 0x7F, 0x80, 0x7F, 0xFF, 0x80, 0x00, 0x67});
    CHECK(bits_of(sz[1]) == 0x7fc00000u);
    CHECK(bits_of(sz[3]) == 0x7fc00000u);
    CHECK(f32_bits(sz, 6)[0] == 0x43700000u);  // 240
  }
}

TEST_CASE("adversarial: Inf gives s = 0, finite values become signed zeros, Inf becomes NaN", "[host][adversarial]") {
  // row 0 [1, Inf]: amax Inf -> s = 448/Inf = 0, 1/s = Inf; 1*0 = 0 -> 0x00; Inf*0 = NaN -> 0x7F
  // row 1 [-2, -Inf]: -2*0 = -0 -> 0x80; -Inf*0 = NaN (x86: a negative NaN) -> canonical 0x7F
  const float x[4] = {1, inf_f, -2, -inf_f};
  e4m3fn q[4];
  float s[2], inv[2];
  const quantized<row_both> out{row_major(q, 2, 2), row_major(s, 2, 1), row_major(inv, 2, 1)};
  REQUIRE(host::quantize<row_both>(row_major(x, 2, 2), out) == status::success);
  CHECK(static_cast<int>(q[0].bits) == 0x00);
  CHECK(e4m3fn_nan(q[1].bits));
  CHECK(static_cast<int>(q[2].bits) == 0x80);
  CHECK(e4m3fn_nan(q[3].bits));
  CHECK(f32_bits(s, 2) == std::vector<std::uint32_t>{0u, 0u});
  CHECK(f32_bits(inv, 2) == std::vector<std::uint32_t>{0x7f800000u, 0x7f800000u});

  SECTION("e5m2 without saturation: the same (Inf * 0 is NaN, not Inf)") {
    constexpr spec S{.out = format::e5m2, .granularity = granularity::row,
                     .overflow = overflow::propagate};
    e5m2 q5[4];
    float inv5[2];
    const quantized<S> o5{row_major(q5, 2, 2), {}, row_major(inv5, 2, 1)};
    REQUIRE(host::quantize<S>(row_major(x, 2, 2), o5) == status::success);
    CHECK(static_cast<int>(q5[0].bits) == 0x00);
    CHECK(e5m2_nan(q5[1].bits));
    CHECK(static_cast<int>(q5[2].bits) == 0x80);
    CHECK(e5m2_nan(q5[3].bits));
  }
}

TEST_CASE("adversarial: MX blocks with NaN and Inf", "[host][adversarial][mx]") {
  // one row of 64 = two 1x32 blocks; block 0 holds [1, NaN], block 1 holds [1, Inf, -Inf]
  std::vector<float> x(64, 0.0f);
  x[0] = 1;
  x[1] = nan_f;
  x[32] = 1;
  x[33] = inf_f;
  x[34] = -inf_f;
  SECTION("e4m3fn FLOOR, saturate") {
    // block 0: NaN amax -> code 0xFF, multiplier NaN: every element a NaN code (zeros too)
    // block 1: Inf amax counts as 2^128: 128 - 8 = 120 -> code 247, multiplier 2^-120:
    //   1 -> 2^-120 -> 0x00;  Inf -> Inf -> saturates to 448 -> 0x7E;  -Inf -> 0xFE; 0 -> 0x00
    constexpr spec S = mx_spec(format::e4m3fn, 1, 32, e8m0_rounding::floor);
    std::vector<e4m3fn> q(64);
    e8m0fnu c[2];
    const quantized<S> out{row_major(q.data(), 1, 64), {}, row_major(c, 1, 2)};
    REQUIRE(host::quantize<S>(row_major(x.data(), 1, 64).as_const(), out) == status::success);
    CHECK(static_cast<int>(c[0].bits) == 0xFF);
    CHECK(static_cast<int>(c[1].bits) == 247);
    for (int i = 0; i < 32; ++i) CHECK(e4m3fn_nan(q[static_cast<std::size_t>(i)].bits));
    std::vector<int> want(32, 0x00);
    want[1] = 0x7E;
    want[2] = 0xFE;
    CHECK(bytes(q.data() + 32, 32) == want);
  }
  SECTION("e4m3fn RCEIL: Inf/448 = Inf -> 2^128 -> clamps to code 254") {
    // multiplier 2^-127: 1 -> 0x00, Inf -> 0x7E, -Inf -> 0xFE
    constexpr spec S = mx_spec(format::e4m3fn, 1, 32, e8m0_rounding::rceil);
    std::vector<e4m3fn> q(64);
    e8m0fnu c[2];
    const quantized<S> out{row_major(q.data(), 1, 64), {}, row_major(c, 1, 2)};
    REQUIRE(host::quantize<S>(row_major(x.data(), 1, 64).as_const(), out) == status::success);
    CHECK(static_cast<int>(c[0].bits) == 0xFF);
    CHECK(static_cast<int>(c[1].bits) == 254);
    CHECK(static_cast<int>(q[32].bits) == 0x00);
    CHECK(static_cast<int>(q[33].bits) == 0x7E);
    CHECK(static_cast<int>(q[34].bits) == 0xFE);
  }
  SECTION("e5m2 FLOOR without saturation: Inf stays Inf") {
    // Inf amax: 128 - 15 = 113 -> code 240, multiplier 2^-113: Inf -> 0x7C, -Inf -> 0xFC
    constexpr spec S = [] {
      spec s = mx_spec(format::e5m2, 1, 32, e8m0_rounding::floor);
      s.overflow = overflow::propagate;
      return s;
    }();
    std::vector<e5m2> q(64);
    e8m0fnu c[2];
    const quantized<S> out{row_major(q.data(), 1, 64), {}, row_major(c, 1, 2)};
    REQUIRE(host::quantize<S>(row_major(x.data(), 1, 64).as_const(), out) == status::success);
    CHECK(static_cast<int>(c[0].bits) == 0xFF);
    CHECK(static_cast<int>(c[1].bits) == 240);
    CHECK(static_cast<int>(q[32].bits) == 0x00);
    CHECK(static_cast<int>(q[33].bits) == 0x7C);
    CHECK(static_cast<int>(q[34].bits) == 0xFC);
    for (int i = 0; i < 32; ++i) CHECK(e5m2_nan(q[static_cast<std::size_t>(i)].bits));
  }
}

TEST_CASE("adversarial: all-zero groups get s = max / eps and zero codes", "[host][adversarial]") {
  // row 0 zeros, row 1 [-0, 0, -0]
  const float x[6] = {0, 0, 0, -0.0f, 0, -0.0f};
  SECTION("e5m2: s = 57344 / 1e-12f = 0x5b4bba10, 1/s = 0x23a0d7c5") {
    constexpr spec S{.out = format::e5m2, .granularity = granularity::row,
                     .store = stored_scale::both};
    e5m2 q[6];
    float s[2], inv[2];
    const quantized<S> out{row_major(q, 2, 3), row_major(s, 2, 1), row_major(inv, 2, 1)};
    REQUIRE(host::quantize<S>(row_major(x, 2, 3), out) == status::success);
    CHECK(bytes(q, 6) == intv{0x00, 0x00, 0x00, 0x80, 0x00, 0x80});
    CHECK(f32_bits(s, 2) == std::vector<std::uint32_t>{0x5b4bba10u, 0x5b4bba10u});
    CHECK(f32_bits(inv, 2) == std::vector<std::uint32_t>{0x23a0d7c5u, 0x23a0d7c5u});
  }
  SECTION("power of 2: 448 / 1e-12f = 4.48e14 -> 2^48 (0x57800000)") {
    constexpr spec S{.out = format::e4m3fn, .granularity = granularity::row, .power_of_2 = true,
                     .store = stored_scale::both};
    e4m3fn q[6];
    float s[2], inv[2];
    const quantized<S> out{row_major(q, 2, 3), row_major(s, 2, 1), row_major(inv, 2, 1)};
    REQUIRE(host::quantize<S>(row_major(x, 2, 3), out) == status::success);
    CHECK(bytes(q, 6) == intv{0x00, 0x00, 0x00, 0x80, 0x00, 0x80});
    CHECK(f32_bits(s, 2) == std::vector<std::uint32_t>{0x57800000u, 0x57800000u});
    CHECK(f32_bits(inv, 2) == std::vector<std::uint32_t>{0x27800000u, 0x27800000u});  // 2^-48
  }
}

TEST_CASE("adversarial: subnormal amaxes", "[host][adversarial]") {
  // f32 row [2^-140, -2^-141, 0]: amax 2^-140 (subnormal) is below eps = 1e-12f, so
  // s = 448/eps = 0x57cbba10; x*s = 2^-140 * 4.48e14 ~ 3.2e-28, far below e4m3fn's 2^-10
  // rounding threshold -> 0x00, 0x80, 0x00
  const float x[3] = {std::ldexp(1.0f, -140), -std::ldexp(1.0f, -141), 0.0f};
  {
    e4m3fn q[3];
    float s = 0, inv = 0;
    const quantized<row_both> out{row_major(q, 1, 3), row_major(&s, 1, 1), row_major(&inv, 1, 1)};
    REQUIRE(host::quantize<row_both>(row_major(x, 1, 3), out) == status::success);
    CHECK(bytes(q, 3) == intv{0x00, 0x80, 0x00});
    CHECK(bits_of(s) == 0x57cbba10u);
  }
  SECTION("eps = 2^-149: s = 448 / 2^-140 overflows f32 to Inf, 1/s = 0") {
    // x*Inf = ±Inf -> saturates to ±448 (0x7E / 0xFE); 0*Inf = NaN -> a NaN code
    constexpr spec S{.out = format::e4m3fn, .granularity = granularity::row,
                     .store = stored_scale::both, .eps = f32_constant{std::uint32_t{1}}};
    e4m3fn q[3];
    float s = 0, inv = 0;
    const quantized<S> out{row_major(q, 1, 3), row_major(&s, 1, 1), row_major(&inv, 1, 1)};
    REQUIRE(host::quantize<S>(row_major(x, 1, 3), out) == status::success);
    CHECK(static_cast<int>(q[0].bits) == 0x7E);
    CHECK(static_cast<int>(q[1].bits) == 0xFE);
    CHECK(e4m3fn_nan(q[2].bits));
    CHECK(bits_of(s) == 0x7f800000u);
    CHECK(bits_of(inv) == 0u);
  }
  SECTION("bf16 subnormal amax 2^-130, eps 2^-140: s = 448 * 2^130 overflows as well") {
    constexpr spec S{.out = format::e4m3fn, .granularity = granularity::tensor,
                     .store = stored_scale::multiplier, .eps = f32_constant{std::uint32_t{1u << 9}}};
    const bf16 y[2] = {to_bf16(std::ldexp(1.0f, -130)), to_bf16(-std::ldexp(1.0f, -133))};
    REQUIRE(to_float(y[0]) == std::ldexp(1.0f, -130));
    e4m3fn q[2];
    float s = 0;
    const quantized<S> out{row_major(q, 1, 2), row_major(&s, 1, 1), {}};
    REQUIRE(host::quantize<S>(row_major<const bf16>(y, 1, 2), out) == status::success);
    CHECK(bytes(q, 2) == intv{0x7E, 0xFE});
    CHECK(bits_of(s) == 0x7f800000u);
  }
}

TEST_CASE("adversarial: FLT_MAX in a row", "[host][adversarial]") {
  // amax FLT_MAX: s = 448 / 3.40282347e38 = 1.31655376e-36 (0x03e00001, rounded up);
  // FLT_MAX*s = 448.00000... -> f32 448 -> 0x7E; -FLT_MAX/2 * s -> -224 -> 0xF6;
  // 1*s = 1.3e-36 -> 0x00
  const float fmax = std::numeric_limits<float>::max();
  const float x[3] = {fmax, -fmax / 2, 1.0f};
  e4m3fn q[3];
  float s = 0, inv = 0;
  const quantized<row_both> out{row_major(q, 1, 3), row_major(&s, 1, 1), row_major(&inv, 1, 1)};
  REQUIRE(host::quantize<row_both>(row_major(x, 1, 3), out) == status::success);
  CHECK(bytes(q, 3) == intv{0x7E, 0xF6, 0x00});
  CHECK(bits_of(s) == 0x03e00001u);
}

TEST_CASE("adversarial: ties and overflow right after scaling (MX FLOOR e4m3fnuz)", "[host][adversarial][mx]") {
  // FLOOR for e4m3fnuz (emax 7): amax 248 -> floor(log2 248) = 7 -> code 127, multiplier 1.
  //   248: halfway between 240 (M=7, odd) and 256 -> rounds up to 256 > max: overflow
  //        saturate -> 240 = 0x7F, propagate -> NaN 0x80 (the only NaN)
  //   232: halfway between 224 (M=6, even) and 240 -> 224 = 1.75*2^7 -> E=15 M=6 -> 0x7E
  //  -248: saturate -> -240 = 0xFF, propagate -> 0x80
  //   17:  halfway 16 (M=0) / 18 (M=1) -> 16 = 2^4 -> E=12 -> 0x60
  std::vector<float> x(32, 0.0f);
  x[0] = 248;
  x[1] = 232;
  x[2] = -248;
  x[3] = 17;
  SECTION("saturate") {
    constexpr spec S = mx_spec(format::e4m3fnuz, 1, 32, e8m0_rounding::floor);
    std::vector<e4m3fnuz> q(32);
    e8m0fnu c[1];
    const quantized<S> out{row_major(q.data(), 1, 32), {}, row_major(c, 1, 1)};
    REQUIRE(host::quantize<S>(row_major(x.data(), 1, 32).as_const(), out) == status::success);
    CHECK(static_cast<int>(c[0].bits) == 127);
    CHECK(bytes(q.data(), 4) == intv{0x7F, 0x7E, 0xFF, 0x60});
  }
  SECTION("propagate") {
    constexpr spec S = [] {
      spec s = mx_spec(format::e4m3fnuz, 1, 32, e8m0_rounding::floor);
      s.overflow = overflow::propagate;
      return s;
    }();
    std::vector<e4m3fnuz> q(32);
    e8m0fnu c[1];
    const quantized<S> out{row_major(q.data(), 1, 32), {}, row_major(c, 1, 1)};
    REQUIRE(host::quantize<S>(row_major(x.data(), 1, 32).as_const(), out) == status::success);
    CHECK(bytes(q.data(), 4) == intv{0x80, 0x7E, 0x80, 0x60});
  }
  SECTION("RCEIL never clips: 248/240 -> ceil(log2 1.033) = 1 -> code 128, multiplier 1/2") {
    // in [64, 128) the e4m3fnuz step is 8, in [8, 16) it is 1:
    //   124 = 15.5 steps: halfway 120 (M=7, odd) / 128 (M=0, even) -> 128 = 2^7 -> E=15 -> 0x78
    //   116 = 14.5 steps: halfway 112 (M=6, even) / 120 -> 112 = 1.75*2^6 -> E=14 M=6 -> 0x76
    //  -124 -> -128 -> 0xF8;  8.5: halfway 8 (even) / 9 -> 8 = 2^3 -> E=11 -> 0x58
    constexpr spec S = mx_spec(format::e4m3fnuz, 1, 32, e8m0_rounding::rceil);
    std::vector<e4m3fnuz> q(32);
    e8m0fnu c[1];
    const quantized<S> out{row_major(q.data(), 1, 32), {}, row_major(c, 1, 1)};
    REQUIRE(host::quantize<S>(row_major(x.data(), 1, 32).as_const(), out) == status::success);
    CHECK(static_cast<int>(c[0].bits) == 128);
    CHECK(bytes(q.data(), 4) == intv{0x78, 0x76, 0xF8, 0x58});
  }
}

namespace {

constexpr spec adv_tensor{.out = format::e4m3fnuz, .granularity = granularity::tensor,
                          .store = stored_scale::both};
constexpr spec adv_col{.out = format::e5m2, .granularity = granularity::col,
                       .store = stored_scale::both, .overflow = overflow::propagate};
constexpr spec adv_block{.out = format::e4m3fn, .granularity = granularity::block, .power_of_2 = true,
                         .store = stored_scale::both, .block_rows = 3, .block_cols = 4};
constexpr spec adv_mx = mx_spec(format::e4m3fn, 32, 1, e8m0_rounding::rceil);
constexpr spec adv_gcol{.out = format::e4m3fn, .granularity = granularity::group_col,
                        .store = stored_scale::both};

template <spec S, class In>
void random_adversarial(const char* tag, fq::i64 groups = 0) {
  const std::uint64_t seed = fq::test_seed(tag);
  INFO(tag << " seed " << seed << " (FP8Q_TEST_SEED=" << fq::base_seed() << "), input " << fq::type_name<In>());
  std::mt19937_64 rng(seed);
  fq::gen_cfg g;
  g.p_nan = 0.004;
  g.p_inf = 0.004;
  g.p_zero = 0.1;
  g.p_subnormal = 0.05;
  CHECK(fq::props_run<S, In>(rng, {{1, 1, 40}, {1, 40, 1}, {1, 37, 70}, {2, 9, 33}, {1, 70, 64}}, g,
                             groups) == "");
}

}  // namespace

TEST_CASE("adversarial: random inputs with NaN, Inf, zeros and subnormals", "[host][adversarial]") {
  random_adversarial<adv_tensor, float>("adv_tensor");
  random_adversarial<adv_col, bf16>("adv_col");
  random_adversarial<adv_col, f16>("adv_col16");
  random_adversarial<adv_block, float>("adv_block");
  random_adversarial<adv_mx, bf16>("adv_mx");
  random_adversarial<adv_gcol, float>("adv_gcol", 5);
}
