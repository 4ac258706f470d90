// Hand-checked small cases: blockwise R x C scaling (2x2 on a 3x3 input, 1x128, 128x1,
// 128x128 with partial blocks) and MX (1x32 and 32x1, FLOOR and RCEIL, the fused dual call,
// dequantization). Expected bytes and scales are worked out in the comments:
//   f32 blocks: s = max / amax rounded to f32, y = x*s rounded to f32, q = nearest-even code.
//   MX: FLOOR code = floor(log2 amax) - emax + 127 (emax 8 for e4m3fn);
//       RCEIL code = ceil(log2(amax / 448)) + 127; data = encode(x * 2^(127 - code)), saturating;
//       amax 0 -> code 0; exponents clamp to [-127, 127].
// e4m3fn: value 2^(E-7) * (1 + M/8), code S<<7 | E<<3 | M; subnormals M * 2^-9.
#include <catch2/catch.hpp>

#include "quant_fixtures.hpp"

using namespace fp8q;
using fq::bits_of;
using fq::bytes;
using fq::f32_bits;
using u32v = std::vector<std::uint32_t>;
using intv = std::vector<int>;

namespace {

template <format F>
std::vector<int> codes(const fp8<F>* p, std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = p[i].bits;
  return v;
}

}  // namespace

TEST_CASE("hand: block 2x2 on a 3x3 input (partial edge blocks)", "[host][hand]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::block, .store = stored_scale::both,
                   .block_rows = 2, .block_cols = 2};
  const float x[9] = {1, 2, 4,      //
                      -3, 0.5f, -8,  //
                      7, 0.25f, 16};
  // block (0,0) = {1, 2, -3, 0.5}: amax 3, s = 448/3 = 149.333328 (0x43155555), 1/s 0x3bdb6db7
  //    1*s = 149.33 -> step 16 -> 9.33 -> 144 = 1.125*2^7 -> E=14 M=1 -> 0x71
  //    2*s = 298.67 -> step 32 -> 9.33 -> 288 = 1.125*2^8 -> E=15 M=1 -> 0x79
  //   -3*s = -447.99998 -> f32 tie -> -448                -> 0xFE
  //  0.5*s = 74.67  -> step 8  -> 9.33 -> 72 = 1.125*2^6  -> E=13 M=1 -> 0x69
  // block (0,1) = {4, -8}: amax 8, s = 56: 224 -> 0x76, -448 -> 0xFE
  // block (1,0) = {7, 0.25}: amax 7, s = 64: 448 -> 0x7E, 16 = 2^4 -> E=11 -> 0x58
  // block (1,1) = {16}: s = 28: 448 -> 0x7E
  e4m3fn q[9];
  float s[4], inv[4];
  const quantized<S> out{row_major(q, 3, 3), row_major(s, 2, 2), row_major(inv, 2, 2)};
  REQUIRE(host::quantize<S>(row_major(x, 3, 3), out) == status::success);
  CHECK(codes(q, 9) == intv{0x71, 0x79, 0x76, 0xFE, 0x69, 0xFE, 0x7E, 0x58, 0x7E});
  CHECK(f32_bits(s, 4) == u32v{0x43155555u, 0x42600000u, 0x42800000u, 0x41e00000u});
  CHECK(f32_bits(inv, 4) == u32v{0x3bdb6db7u, 0x3c924925u, 0x3c800000u, 0x3d124925u});
}

TEST_CASE("hand: block 1x128 on 2x130 and 128x1 on 130x2", "[host][hand]") {
  // Mostly zeros; blocks:
  //  (0,0) row 0, cols 0..127: x[0][5] = 2, x[0][100] = -0.5 -> amax 2, s = 224:
  //        2 -> 448 -> 0x7E;  -0.5 -> -112 = -1.75*2^6 -> E=13 M=6 -> 0xEE;  zeros -> 0x00
  //  (0,1) row 0, cols 128..129: 3, 1 -> amax 3, s = 149.333328: 3 -> 0x7E, 1 -> 144 -> 0x71
  //  (1,0) row 1, cols 0..127: all zero -> s = 448/eps = 0x57cbba10, zeros -> 0x00
  //  (1,1) row 1, cols 128..129: 0, -0.25 -> amax 0.25, s = 1792: -448 -> 0xFE, 0 -> 0x00
  std::vector<float> x(2 * 130, 0.0f);
  x[5] = 2;
  x[100] = -0.5f;
  x[128] = 3;
  x[129] = 1;
  x[130 + 129] = -0.25f;
  std::vector<int> want(2 * 130, 0x00);
  want[5] = 0x7E;
  want[100] = 0xEE;
  want[128] = 0x7E;
  want[129] = 0x71;
  want[130 + 129] = 0xFE;
  const u32v want_s{0x43600000u, 0x43155555u, 0x57cbba10u, 0x44e00000u};  // (2, 2) row-major

  SECTION("1x128 along rows") {
    constexpr spec S{.out = format::e4m3fn, .granularity = granularity::block, .store = stored_scale::multiplier,
                     .block_rows = 1, .block_cols = 128};
    std::vector<e4m3fn> q(2 * 130);
    float s[4];
    const quantized<S> out{row_major(q.data(), 2, 130), row_major(s, 2, 2), {}};
    REQUIRE(host::quantize<S>(row_major(x.data(), 2, 130).as_const(), out) == status::success);
    CHECK(codes(q.data(), q.size()) == want);
    CHECK(f32_bits(s, 4) == want_s);
  }
  SECTION("128x1 along columns: the transpose, stored column-major") {
    constexpr spec S{.out = format::e4m3fn, .granularity = granularity::block, .store = stored_scale::multiplier,
                     .block_rows = 128, .block_cols = 1};
    // the same memory read as a column-major 130 x 2 matrix is the transpose of the above
    std::vector<e4m3fn> q(2 * 130);
    float s[4];
    // scales (ceil(130/128), 2) = (2, 2): entry (i, j) is block i of column j; stored
    // column-major, so memory order is (0,0) (1,0) (0,1) (1,1) = the row case's row-major order
    const quantized<S> out{col_major(q.data(), 130, 2), col_major(s, 2, 2), {}};
    REQUIRE(host::quantize<S>(col_major(x.data(), 130, 2).as_const(), out) == status::success);
    CHECK(codes(q.data(), q.size()) == want);
    CHECK(f32_bits(s, 4) == want_s);
  }
}

TEST_CASE("hand: block 128x128 on a 3x5 input is one partial block", "[host][hand]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::block, .store = stored_scale::both,
                   .block_rows = 128, .block_cols = 128};
  const float x[15] = {1, 2, 3, 4, 5,  //
                       -1, -2, -3, -4, -5,  //
                       0.5f, 0.25f, 0, 0, 0};
  // amax 5, s = 448/5 = 89.5999985 (0x42b33333), 1/s = 0x3c36db6e
  //  1*s = 89.6  -> step 8:  11.2 -> 88  = 1.375*2^6 -> E=13 M=3 -> 0x6B
  //  2*s = 179.2 -> step 16: 11.2 -> 176 = 1.375*2^7 -> E=14 M=3 -> 0x73
  //  3*s = 268.8 -> step 32:  8.4 -> 256 = 2^8       -> E=15 M=0 -> 0x78
  //  4*s = 358.4 -> step 32: 11.2 -> 352 = 1.375*2^8 -> E=15 M=3 -> 0x7B
  //  5*s = 447.99999237 -> f32 448 (nearest)          -> 0x7E
  //  negatives: sign bit; 0.5*s = 44.8 -> step 4: 11.2 -> 44 -> 0x63; 0.25*s = 22.4 -> 22 -> 0x5B
  e4m3fn q[15];
  float s = 0, inv = 0;
  const quantized<S> out{row_major(q, 3, 5), row_major(&s, 1, 1), row_major(&inv, 1, 1)};
  REQUIRE(host::quantize<S>(row_major(x, 3, 5), out) == status::success);
  CHECK(codes(q, 15) == intv{0x6B, 0x73, 0x78, 0x7B, 0x7E, 0xEB, 0xF3, 0xF8, 0xFB, 0xFE,
                             0x63, 0x5B, 0x00, 0x00, 0x00});
  CHECK(bits_of(s) == 0x42b33333u);
  CHECK(bits_of(inv) == 0x3c36db6eu);
}

namespace {

// The 2 x 64 MX input (row-major): two 1x32 blocks per row.
//   row 0, block 0: 460.8f (= 460.799988, mantissa 1.8 * 2^8), 3, -0.1f, zeros
//   row 0, block 1: x[0][40] = 1, x[0][41] = -0.75
//   row 1, block 0: zeros and a -0
//   row 1, block 1: x[1][33] = 2^-130 and x[1][34] = -2^-131 (f32 subnormals)
std::vector<float> mx_input() {
  std::vector<float> x(2 * 64, 0.0f);
  x[0] = 460.8f;
  x[1] = 3.0f;
  x[2] = -0.1f;
  x[40] = 1.0f;
  x[41] = -0.75f;
  x[64 + 3] = -0.0f;
  x[64 + 33] = std::ldexp(1.0f, -130);
  x[64 + 34] = -std::ldexp(1.0f, -131);
  return x;
}

// Expected codes, logical (2, 64) row-major.
// FLOOR: block (0,0) amax 460.8: floor(log2) = 8, 8 - 8 = 0 -> code 127, multiplier 1:
//          460.8 -> beyond 448, saturates -> 0x7E; 3 = 1.5*2^1 -> E=8 M=4 -> 0x44;
//          -0.1f -> step 2^-7: 12.8 -> 13*2^-7 = 1.625*2^-4 -> E=3 M=5 -> 0x9D
// RCEIL: 460.8/448 = 1.0286 -> ceil(log2) = 1 -> code 128, multiplier 1/2:
//          230.4 -> step 16: 14.4 -> 224 = 1.75*2^7 -> 0x76; 1.5 -> E=7 M=4 -> 0x3C;
//          -0.05 -> step 2^-8: 12.8 -> 13*2^-8 = 1.625*2^-5 -> E=2 M=5 -> 0x95
// both:  block (0,1) amax 1: FLOOR 0 - 8 = -8; RCEIL ceil(log2(1/448)) = ceil(-8.81) = -8
//          -> code 119, multiplier 256: 1 -> 256 -> 0x78; -0.75 -> -192 -> 0xF4
//        block (1,0) amax 0 -> code 0, multiplier 2^127: 0 -> 0x00, -0 -> 0x80
//        block (1,1) amax 2^-130: FLOOR -130 - 8 = -138 -> clamps to -127 -> code 0;
//          RCEIL 2^-130/448 rounds to the f32 subnormal 1170 * 2^-149, ceil(log2) = -138
//          -> clamps -> code 0; multiplier 2^127: 2^-130 -> 2^-3 -> E=4 -> 0x20,
//          -2^-131 -> -2^-4 -> E=3 -> 0x98
std::vector<int> mx_want(bool rceil) {
  std::vector<int> q(2 * 64, 0x00);
  q[0] = rceil ? 0x76 : 0x7E;
  q[1] = rceil ? 0x3C : 0x44;
  q[2] = rceil ? 0x95 : 0x9D;
  q[40] = 0x78;
  q[41] = 0xF4;
  q[64 + 3] = 0x80;
  q[64 + 33] = 0x20;
  q[64 + 34] = 0x98;
  return q;
}

}  // namespace

TEST_CASE("hand: MX 1x32 e4m3fn, FLOOR and RCEIL differ on a 1.8 * 2^8 amax", "[host][hand][mx]") {
  const std::vector<float> x = mx_input();
  std::vector<e4m3fn> q(128);
  e8m0fnu codes_out[4];
  SECTION("FLOOR") {
    constexpr spec S = mx_spec(format::e4m3fn, 1, 32, e8m0_rounding::floor);
    const quantized<S> out{row_major(q.data(), 2, 64), {}, row_major(codes_out, 2, 2)};
    REQUIRE(host::quantize<S>(row_major(x.data(), 2, 64).as_const(), out) == status::success);
    CHECK(codes(q.data(), 128) == mx_want(false));
    CHECK(codes(codes_out, 4) == intv{127, 119, 0, 0});

    // dequantize: decode(q) * 2^(code - 127)
    //   448 (clipped), 3, -0.1015625, 256 * 2^-8 = 1, -192 * 2^-8 = -0.75, -0, 2^-3 * 2^-127,
    //   -2^-4 * 2^-127
    std::vector<float> back(128, -1.0f);
    REQUIRE(host::dequantize<S>(out, row_major(back.data(), 2, 64)) == status::success);
    CHECK(back[0] == 448.0f);
    CHECK(back[1] == 3.0f);
    CHECK(back[2] == -0.1015625f);
    CHECK(back[40] == 1.0f);
    CHECK(back[41] == -0.75f);
    CHECK(bits_of(back[64 + 3]) == 0x80000000u);
    CHECK(back[64 + 33] == std::ldexp(1.0f, -130));
    CHECK(back[64 + 34] == -std::ldexp(1.0f, -131));
    CHECK(back[5] == 0.0f);
  }
  SECTION("RCEIL") {
    constexpr spec S = mx_spec(format::e4m3fn, 1, 32, e8m0_rounding::rceil);
    const quantized<S> out{row_major(q.data(), 2, 64), {}, row_major(codes_out, 2, 2)};
    REQUIRE(host::quantize<S>(row_major(x.data(), 2, 64).as_const(), out) == status::success);
    CHECK(codes(q.data(), 128) == mx_want(true));
    CHECK(codes(codes_out, 4) == intv{128, 119, 0, 0});
  }
}

TEST_CASE("hand: MX 32x1 e4m3fn on the transpose, column-major data", "[host][hand][mx]") {
  // The same memory viewed as a column-major 64 x 2 matrix is the transpose of the 2 x 64 case:
  // column j holds row j of the row case, and its two 32x1 blocks are that row's two 1x32 blocks.
  // Scales (64/32, 2) = (2, 2): entry (i, j) = block i of column j; column-major storage gives
  // the memory order (0,0) (1,0) (0,1) (1,1).
  const std::vector<float> x = mx_input();
  std::vector<e4m3fn> q(128);
  e8m0fnu codes_out[4];
  SECTION("FLOOR") {
    constexpr spec S = mx_spec(format::e4m3fn, 32, 1, e8m0_rounding::floor);
    const quantized<S> out{col_major(q.data(), 64, 2), {}, col_major(codes_out, 2, 2)};
    REQUIRE(host::quantize<S>(col_major(x.data(), 64, 2).as_const(), out) == status::success);
    CHECK(codes(q.data(), 128) == mx_want(false));
    CHECK(codes(codes_out, 4) == intv{127, 119, 0, 0});
  }
  SECTION("RCEIL, data written row-major from a column-major input") {
    constexpr spec S = mx_spec(format::e4m3fn, 32, 1, e8m0_rounding::rceil);
    const quantized<S> out{row_major(q.data(), 64, 2), {}, row_major(codes_out, 2, 2)};
    REQUIRE(host::quantize<S>(col_major(x.data(), 64, 2).as_const(), out) == status::success);
    const std::vector<int> want = mx_want(true);  // want[j*64 + i] is element (i, j)
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 2; ++j) {
        INFO("element (" << i << ", " << j << ")");
        CHECK(static_cast<int>(q[static_cast<std::size_t>(i * 2 + j)].bits) == want[static_cast<std::size_t>(j * 64 + i)]);
      }
    CHECK(codes(codes_out, 4) == intv{128, 0, 119, 0});  // row-major: (0,0) (0,1) (1,0) (1,1)
  }
}

TEST_CASE("hand: MX dual, rows FLOOR and columns RCEIL in one call", "[host][hand][mx]") {
  constexpr spec Rows = mx_spec(format::e4m3fn, 1, 32, e8m0_rounding::floor);
  constexpr spec Cols = mx_spec(format::e4m3fn, 32, 1, e8m0_rounding::rceil);
  // 32 x 32: x[0][0] = 460.8f, x[5][0] = 3, x[0][7] = -0.1f, zeros elsewhere
  std::vector<float> x(32 * 32, 0.0f);
  x[0] = 460.8f;
  x[5 * 32] = 3.0f;
  x[7] = -0.1f;
  // rows (FLOOR): row 0 amax 460.8 -> code 127, multiplier 1: 460.8 -> 0x7E, -0.1 -> 0x9D
  //               row 5 amax 3: floor(log2 3) = 1, 1 - 8 = -7 -> code 120, multiplier 2^7:
  //                 384 = 1.5*2^8 -> E=15 M=4 -> 0x7C
  //               every other row amax 0 -> code 0
  // cols (RCEIL): col 0 amax 460.8 -> code 128, multiplier 1/2: 230.4 -> 0x76; 1.5 -> 0x3C
  //               col 7 amax 0.1f: 0.1/448 = 2.232e-4, log2 = -12.13 -> ceil -12 -> code 115,
  //                 multiplier 2^12: -409.6 -> step 32: 12.8 -> -416 = -1.625*2^8 -> E=15 M=5 -> 0xFD
  //               every other column amax 0 -> code 0
  std::vector<e4m3fn> qr(32 * 32), qc(32 * 32);
  e8m0fnu sr[32], sc[32];
  const quantized<Rows> out_r{row_major(qr.data(), 32, 32), {}, row_major(sr, 32, 1)};
  const quantized<Cols> out_c{col_major(qc.data(), 32, 32), {}, row_major(sc, 1, 32)};
  REQUIRE(host::quantize_mx_dual<Rows, Cols>(row_major(x.data(), 32, 32).as_const(), out_r, out_c) ==
          status::success);
  std::vector<int> want_r(32 * 32, 0), want_c(32 * 32, 0);  // logical row-major
  want_r[0] = 0x7E;
  want_r[7] = 0x9D;
  want_r[5 * 32] = 0x7C;
  want_c[0] = 0x76;
  want_c[5 * 32] = 0x3C;
  want_c[7] = 0xFD;
  std::vector<int> got_r(32 * 32), got_c(32 * 32);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      got_r[static_cast<std::size_t>(i * 32 + j)] = out_r.data(i, j).bits;
      got_c[static_cast<std::size_t>(i * 32 + j)] = out_c.data(i, j).bits;
    }
  CHECK(got_r == want_r);
  CHECK(got_c == want_c);
  std::vector<int> want_sr(32, 0), want_sc(32, 0);
  want_sr[0] = 127;
  want_sr[5] = 120;
  want_sc[0] = 128;
  want_sc[7] = 115;
  CHECK(codes(sr, 32) == want_sr);
  CHECK(codes(sc, 32) == want_sc);
}
