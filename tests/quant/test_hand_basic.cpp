// Hand-checked small cases: tensorwise, rowwise, colwise (row- and column-major output), the 3D
// expert layouts (colwise (E,K,N) -> scales (E,1,N); transpose-rhs -> data (E,N,K), scales (E,K))
// and dequantization. Every expected byte and scale below is worked out in the comments from
// the written rules (ARCHITECTURE §3):
//   amax = max|x|;  s = max / max(amax, eps) rounded once to f32;  y = x*s rounded to f32;
//   q = nearest-even FP8 code of y (saturating at ±max).
// FP8 codes: e4m3fn value 2^(E-7) * (1 + M/8), code = S<<7 | E<<3 | M;
//            e4m3fnuz the same with bias 8; e5m2 2^(E-15) * (1 + M/4), code = S<<7 | E<<2 | M.
#include <catch2/catch.hpp>

#include "quant_fixtures.hpp"

using namespace fp8q;
using fq::bits_of;
using fq::bytes;
using fq::f32_bits;
using u32v = std::vector<std::uint32_t>;
using intv = std::vector<int>;

TEST_CASE("hand: tensorwise e4m3fn, exact products, both scales stored", "[host][hand]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::tensor,
                   .store = stored_scale::both};
  // [2, 3] f32, row-major
  const float x[6] = {1.0f, -2.0f, 4.0f, 0.5f, 3.0f, -7.0f};
  // amax = 7, s = 448 / 7 = 64 (exact), 1/s = 2^-6
  // x*s = 64, -128, 256, 32, 192, -448
  //   64  = 2^6           -> E=13 M=0 -> 0x68
  //  -128 = 2^7           -> E=14 M=0 -> 0xF0
  //   256 = 2^8           -> E=15 M=0 -> 0x78
  //   32  = 2^5           -> E=12 M=0 -> 0x60
  //   192 = 1.5 * 2^7     -> E=14 M=4 -> 0x74
  //  -448 = 1.75 * 2^8    -> E=15 M=6 -> 0xFE
  e4m3fn q[6];
  float s = 0, inv = 0;
  const quantized<S> out{row_major(q, 2, 3), row_major(&s, 1, 1), row_major(&inv, 1, 1)};
  REQUIRE(host::quantize<S>(row_major(x, 2, 3), out) == status::success);
  CHECK(bytes(q, 6) == intv{0x68, 0xF0, 0x78, 0x60, 0x74, 0xFE});
  CHECK(bits_of(s) == 0x42800000u);    // 64
  CHECK(bits_of(inv) == 0x3c800000u);  // 0.015625

  SECTION("dequantize gives the inputs back exactly (every product is exact)") {
    float back[6];
    fq::fill(back, -1.0f);
    REQUIRE(host::dequantize<S>(out, row_major(back, 2, 3)) == status::success);
    // decode(q) * 2^-6: 64/64 = 1, -128/64 = -2, 256/64 = 4, 32/64 = 0.5, 192/64 = 3, -448/64 = -7
    CHECK(f32_bits(back, 6) == f32_bits(x, 6));
    bf16 back16[6];
    REQUIRE(host::dequantize<S>(out, row_major(back16, 2, 3)) == status::success);
    for (int i = 0; i < 6; ++i) CHECK(to_float(back16[i]) == x[i]);
  }
}

TEST_CASE("hand: tensorwise per batch item gets its own scale", "[host][hand]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::tensor,
                   .store = stored_scale::multiplier};
  // two items of [1, 2]
  const float x[4] = {7.0f, -3.5f, 0.875f, 0.5f};
  // item 0: amax 7     -> s = 64:  7*64 = 448 -> 0x7E;  -3.5*64 = -224 = -1.75*2^7 -> E=14 M=6 -> 0xF6
  // item 1: amax 0.875 -> s = 512: 0.875*512 = 448 -> 0x7E;  0.5*512 = 256 -> 0x78
  e4m3fn q[4];
  float s[2] = {0, 0};
  const quantized<S> out{batched(row_major(q, 1, 2), 2), batched(row_major(s, 1, 1), 2), {}};
  REQUIRE(host::quantize<S>(batched(row_major(x, 1, 2), 2), out) == status::success);
  CHECK(bytes(q, 4) == intv{0x7E, 0xF6, 0x7E, 0x78});
  CHECK(f32_bits(s, 2) == u32v{0x42800000u, 0x44000000u});  // 64, 512
}

TEST_CASE("hand: tensorwise all-zero tensor, eps decides the scale", "[host][hand]") {
  // amax 0 -> s = max / eps. eps = 1e-12f = 9.99999996e-13 (0x2b8cbccc)
  // e4m3fn:   448 / 9.99999996e-13 = 4.4799998558e14 -> 0x57cbba10;  1/s -> 0x2720d7c5
  // e4m3fnuz: 240 / 9.99999996e-13                   -> 0x575a475b;  1/s -> 0x27961eb7
  // q = 0 * s = 0 (sign kept): e4m3fn +0 -> 0x00, -0 -> 0x80; e4m3fnuz has one zero 0x00
  const float x[4] = {0.0f, -0.0f, 0.0f, -0.0f};
  {
    constexpr spec S{.out = format::e4m3fn, .granularity = granularity::tensor,
                     .store = stored_scale::both};
    e4m3fn q[4];
    float s = 0, inv = 0;
    const quantized<S> out{row_major(q, 2, 2), row_major(&s, 1, 1), row_major(&inv, 1, 1)};
    REQUIRE(host::quantize<S>(row_major(x, 2, 2), out) == status::success);
    CHECK(bytes(q, 4) == intv{0x00, 0x80, 0x00, 0x80});
    CHECK(bits_of(s) == 0x57cbba10u);
    CHECK(bits_of(inv) == 0x2720d7c5u);
  }
  {
    constexpr spec S{.out = format::e4m3fnuz, .granularity = granularity::tensor,
                     .store = stored_scale::both};
    e4m3fnuz q[4];
    float s = 0, inv = 0;
    const quantized<S> out{row_major(q, 2, 2), row_major(&s, 1, 1), row_major(&inv, 1, 1)};
    REQUIRE(host::quantize<S>(row_major(x, 2, 2), out) == status::success);
    CHECK(bytes(q, 4) == intv{0x00, 0x00, 0x00, 0x00});
    CHECK(bits_of(s) == 0x575a475bu);
    CHECK(bits_of(inv) == 0x27961eb7u);
  }
  {
    // eps = 1: amax 0.5 < eps -> s = 448 / 1 = 448; x = 0.5 -> 224 = 1.75*2^7 -> 0x76
    constexpr spec S{.out = format::e4m3fn, .granularity = granularity::tensor, .store = stored_scale::multiplier,
                     .eps = 1.0f};
    const float y[2] = {0.5f, -0.25f};  // -0.25*448 = -112 = -1.75*2^6 -> E=13 M=6 -> 0xEE
    e4m3fn q[2];
    float s = 0;
    const quantized<S> out{row_major(q, 1, 2), row_major(&s, 1, 1), {}};
    REQUIRE(host::quantize<S>(row_major(y, 1, 2), out) == status::success);
    CHECK(bytes(q, 2) == intv{0x76, 0xEE});
    CHECK(bits_of(s) == 0x43e00000u);  // 448
  }
}

TEST_CASE("hand: rowwise e4m3fn with a rounded scale and rounded products", "[host][hand]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::row,
                   .store = stored_scale::both};
  // [2, 3] f32
  const float x[6] = {3.0f, 1.0f, -0.3f, 0.5f, -0.25f, 0.125f};
  // row 0: amax 3, s = 448/3 = 149.333328 (f32 0x43155555, rounded), 1/s = 0.00669642864 (0x3bdb6db7)
  //   3 * s = 447.9999847 exactly, halfway between the f32 neighbours 448 - 2^-15 and 448:
  //           ties to even -> 448.0 -> E=15 M=6 -> 0x7E
  //   1 * s = 149.333328: in [128, 256) the e4m3fn step is 16: 149.33/16 = 9.33 -> 9 -> 144
  //           = 1.125*2^7 -> E=14 M=1 -> 0x71
  //  -0.3f (= -0.300000012) * s = -44.8: step 4 in [32, 64): 11.2 -> 11 -> -44 = -1.375*2^5
  //           -> E=12 M=3 -> 0xE3
  // row 1: amax 0.5, s = 896 (0x44600000), 1/s = 0x3a924925
  //   0.5*896 = 448 -> 0x7E;  -0.25*896 = -224 -> 0xF6;  0.125*896 = 112 = 1.75*2^6 -> 0x6E
  e4m3fn q[6];
  float s[2] = {0, 0}, inv[2] = {0, 0};
  const quantized<S> out{row_major(q, 2, 3), row_major(s, 2, 1), row_major(inv, 2, 1)};
  REQUIRE(host::quantize<S>(row_major(x, 2, 3), out) == status::success);
  CHECK(bytes(q, 6) == intv{0x7E, 0x71, 0xE3, 0x7E, 0xF6, 0x6E});
  CHECK(f32_bits(s, 2) == u32v{0x43155555u, 0x44600000u});
  CHECK(f32_bits(inv, 2) == u32v{0x3bdb6db7u, 0x3a924925u});

  SECTION("dequantize multiplies decode(q) by the stored inverse") {
    float back[6];
    REQUIRE(host::dequantize<S>(out, row_major(back, 2, 3)) == status::success);
    // decode(q) * inv, one f32 rounding each:
    //   448 * 0.00669642864 = 3.0000000307 -> 3.0f ; 144 * inv = 0.964285724 ; -44 * inv = -0.29464286
    //   row 1 (inv = 1/896 = 0.00111607148): 448 -> 0.5, -224 -> -0.25, 112 -> 0.125 (the f32
    //   products round back to the exact values)
    const float inv0 = fq::float_of(0x3bdb6db7u);
    CHECK(back[0] == static_cast<float>(448.0 * inv0));
    CHECK(back[1] == static_cast<float>(144.0 * inv0));
    CHECK(back[2] == static_cast<float>(-44.0 * inv0));
    CHECK(back[0] == 3.0f);
    CHECK(back[3] == 0.5f);
    CHECK(back[4] == -0.25f);
    CHECK(back[5] == 0.125f);
  }
}

TEST_CASE("hand: rowwise e4m3fnuz with power-of-2 scales", "[host][hand]") {
  constexpr spec S{.out = format::e4m3fnuz, .granularity = granularity::row, .power_of_2 = true,
                   .store = stored_scale::multiplier};
  const float x[3] = {3.0f, 1.0f, -0.3f};
  // amax 3: 240/3 = 80 -> power of two below: 64
  //   3*64 = 192 = 1.5*2^7 -> bias 8: E=15 M=4 -> 0x7C
  //   1*64 = 64 = 2^6 -> E=14 M=0 -> 0x70
  //  -0.3f*64 = -19.2000008: step 2 in [16, 32): 9.6 -> 10 -> -20 = -1.25*2^4 -> E=12 M=2 -> 0xE2
  e4m3fnuz q[3];
  float s = 0;
  const quantized<S> out{row_major(q, 1, 3), row_major(&s, 1, 1), {}};
  REQUIRE(host::quantize<S>(row_major(x, 1, 3), out) == status::success);
  CHECK(bytes(q, 3) == intv{0x7C, 0x70, 0xE2});
  CHECK(bits_of(s) == 0x42800000u);  // 64
}

TEST_CASE("hand: rounding ties after scaling go to the even code", "[host][hand]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::row,
                   .store = stored_scale::multiplier};
  // amax 448 -> s = 1, so q = code of x. In [16, 32) the step is 2:
  //   17 = halfway 16 (M=0, even) / 18 (M=1)  -> 16 = 0x58
  //   19 = halfway 18 (M=1) / 20 (M=2, even)  -> 20 = 0x5A
  //  -21 = halfway 20 (M=2, even) / 22 (M=3)  -> -20 = 0xDA
  //   subnormals (below 2^-6) step by 2^-9, code = value / 2^-9:
  //   0.0048828125 = 2.5 * 2^-9 -> halfway codes 0x02 (even) / 0x03 -> 0x02
  //   0.01171875   = 6 * 2^-9 exactly                                -> 0x06
  const float x[6] = {448.0f, 17.0f, 19.0f, -21.0f, 0.0048828125f, 0.01171875f};
  e4m3fn q[6];
  float s = 0;
  const quantized<S> out{row_major(q, 1, 6), row_major(&s, 1, 1), {}};
  REQUIRE(host::quantize<S>(row_major(x, 1, 6), out) == status::success);
  CHECK(bits_of(s) == 0x3f800000u);
  CHECK(bytes(q, 6) == intv{0x7E, 0x58, 0x5A, 0xDA, 0x02, 0x06});

  SECTION("a row whose amax 464 lies above max") {
    // amax 464 -> s = 448/464 = 0.965517223 (f32), 464*s rounds to 448.0f -> 0x7E
    const float y[2] = {464.0f, -17.0f};
    // -17*0.965517223 = -16.4137928 -> step 2 -> 8.2 -> 8 -> -16 -> 0xD8
    e4m3fn q2[2];
    float s2 = 0;
    const quantized<S> out2{row_major(q2, 1, 2), row_major(&s2, 1, 1), {}};
    REQUIRE(host::quantize<S>(row_major(y, 1, 2), out2) == status::success);
    CHECK(bytes(q2, 2) == intv{0x7E, 0xD8});
    CHECK(s2 == static_cast<float>(448.0 / 464.0));
  }
}

TEST_CASE("hand: colwise e5m2, row-major and column-major output", "[host][hand]") {
  constexpr spec S{.out = format::e5m2, .granularity = granularity::col,
                   .store = stored_scale::both};
  // [3, 2] f32 row-major
  const float x[6] = {1.0f, -8.0f, 2.0f, 0.5f, -4.0f, 3.0f};
  // col 0: amax 4 -> s = 57344/4 = 14336 = 1.75*2^13 (exact); 1/s -> 0x38924925
  //    1*s = 14336 = 1.75*2^13  -> E=28 M=3 -> 0x73
  //    2*s = 28672 = 1.75*2^14  -> E=29 M=3 -> 0x77
  //   -4*s = -57344 = -1.75*2^15 -> E=30 M=3 -> 0xFB
  // col 1: amax 8 -> s = 7168 = 1.75*2^12; 1/s -> 0x39124925
  //   -8*s = -57344             -> 0xFB
  //  0.5*s = 3584 = 1.75*2^11   -> E=26 M=3 -> 0x6B
  //    3*s = 21504 = 1.3125*2^14: step 2^12, 21504/4096 = 5.25 -> 5 -> 1.25*2^14 -> E=29 M=1 -> 0x75
  const intv logical{0x73, 0xFB, 0x77, 0x6B, 0xFB, 0x75};  // [3, 2] row-major order
  float s[2] = {0, 0}, inv[2] = {0, 0};
  SECTION("row-major output") {
    e5m2 q[6];
    const quantized<S> out{row_major(q, 3, 2), row_major(s, 1, 2), row_major(inv, 1, 2)};
    REQUIRE(host::quantize<S>(row_major(x, 3, 2), out) == status::success);
    CHECK(bytes(q, 6) == logical);
  }
  SECTION("column-major output (memory holds column 0, then column 1)") {
    e5m2 q[6];
    const quantized<S> out{col_major(q, 3, 2), row_major(s, 1, 2), row_major(inv, 1, 2)};
    REQUIRE(host::quantize<S>(row_major(x, 3, 2), out) == status::success);
    CHECK(bytes(q, 6) == intv{0x73, 0x77, 0xFB, 0xFB, 0x6B, 0x75});
  }
  CHECK(f32_bits(s, 2) == u32v{0x46600000u, 0x45e00000u});
  CHECK(f32_bits(inv, 2) == u32v{0x38924925u, 0x39124925u});
}

TEST_CASE("hand: 3D expert colwise (E,K,N) with scales (E,1,N), bf16 in", "[host][hand]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::col,
                   .store = stored_scale::multiplier};
  // E=2, K=2, N=3, row-major (E, K, N)
  const float xf[12] = {1, 2, -4, 0.5f, -8, 1,   // expert 0
                        3, 0, 0, -6, 0, 2};      // expert 1
  bf16 x[12];
  for (int i = 0; i < 12; ++i) x[i] = to_bf16(xf[i]);
  // expert 0: column amax 1, 8, 4 -> s = 448, 56, 112
  //   col 0: 1*448 = 448 -> 0x7E;  0.5*448 = 224 -> 0x76
  //   col 1: 2*56 = 112 -> 0x6E;   -8*56 = -448 -> 0xFE
  //   col 2: -4*112 = -448 -> 0xFE; 1*112 = 112 -> 0x6E
  // expert 1: column amax 6, 0, 2
  //   col 0: s = 448/6 = 74.6666641 (0x42955555); 3*s = 223.99999237 = 224 - 2^-17, a tie
  //          between the f32 neighbours 224 - 2^-16 and 224 -> even -> 224 -> 0x76;
  //          -6*s = -447.9999847 -> tie -> -448 -> 0xFE
  //   col 1: amax 0 -> s = 448/eps = 0x57cbba10; 0*s = 0 -> 0x00
  //   col 2: s = 224; 0 -> 0x00; 2*224 = 448 -> 0x7E
  e4m3fn q[12];
  float s[6];
  fq::fill(s, -1.0f);
  const quantized<S> out{batched(row_major(q, 2, 3), 2), batched(row_major(s, 1, 3), 2), {}};
  REQUIRE(host::quantize<S>(batched(row_major<const bf16>(x, 2, 3), 2), out) == status::success);
  CHECK(bytes(q, 12) == intv{0x7E, 0x6E, 0xFE, 0x76, 0xFE, 0x6E,  //
                             0x76, 0x00, 0x00, 0xFE, 0x00, 0x7E});
  CHECK(f32_bits(s, 6) == u32v{0x43e00000u, 0x42600000u, 0x42e00000u,  // 448, 56, 112
                               0x42955555u, 0x57cbba10u, 0x43600000u}); // 74.67, 448/eps, 224
}

TEST_CASE("hand: 3D transpose-rhs, data (E,N,K) and scales (E,K), bf16 in", "[host][hand]") {
  // Rowwise scaling of each K x N expert (one scale per k over n), written through a column-major
  // output view so the memory holds (E, N, K).
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::row,
                   .store = stored_scale::multiplier};
  const float xf[12] = {1, 2, -4, 0.5f, -8, 1,   // expert 0 (K=2 rows, N=3 cols)
                        3, 0, 0, -6, 0, 2};      // expert 1
  bf16 x[12];
  for (int i = 0; i < 12; ++i) x[i] = to_bf16(xf[i]);
  // expert 0 row 0 [1 2 -4]: amax 4, s = 112: 112 -> 0x6E, 224 -> 0x76, -448 -> 0xFE
  //          row 1 [0.5 -8 1]: amax 8, s = 56: 28 = 1.75*2^4 -> E=11 M=6 -> 0x5E, -448 -> 0xFE,
  //                                          56 = 1.75*2^5 -> 0x66
  // expert 1 row 0 [3 0 0]: amax 3, s = 149.333328: 3*s -> 448 (tie, see rowwise) -> 0x7E, 0, 0
  //          row 1 [-6 0 2]: amax 6, s = 74.6666641: -6*s -> -448 -> 0xFE, 0 -> 0x00,
  //                          2*s = 149.333328 -> step 16 -> 144 -> 0x71
  // memory (E, N, K): e0: n0 [0x6E 0x5E] n1 [0x76 0xFE] n2 [0xFE 0x66]
  //                   e1: n0 [0x7E 0xFE] n1 [0x00 0x00] n2 [0x00 0x71]
  e4m3fn q[12];
  float s[4];
  fq::fill(s, -1.0f);
  const quantized<S> out{batched(col_major(q, 2, 3), 2), batched(row_major(s, 2, 1), 2), {}};
  REQUIRE(host::quantize<S>(batched(row_major<const bf16>(x, 2, 3), 2), out) == status::success);
  CHECK(bytes(q, 12) == intv{0x6E, 0x5E, 0x76, 0xFE, 0xFE, 0x66,  //
                             0x7E, 0xFE, 0x00, 0x00, 0x00, 0x71});
  CHECK(f32_bits(s, 4) == u32v{0x42e00000u, 0x42600000u, 0x43155555u, 0x42955555u});
}

TEST_CASE("hand: dequantize of a stored multiplier uses 1/s", "[host][hand]") {
  // Only s stored: x' = decode(q) * (1/s). Column scales s = [14336, 7168] (e5m2 case above).
  constexpr spec S{.out = format::e5m2, .granularity = granularity::col,
                   .store = stored_scale::multiplier};
  e5m2 q[6] = {{0x73}, {0xFB}, {0x77}, {0x6B}, {0xFB}, {0x75}};
  float s[2] = {14336.0f, 7168.0f};
  const quantized<S> in{row_major(q, 3, 2), row_major(s, 1, 2), {}};
  float back[6];
  REQUIRE(host::dequantize<S>(in, row_major(back, 3, 2)) == status::success);
  // decode: 14336, -57344, 28672, 3584, -57344, 20480
  // times 1/14336 (col 0) or 1/7168 (col 1), the inverses rounded to f32 (0x38924925, 0x39124925):
  const float i0 = fq::float_of(0x38924925u), i1 = fq::float_of(0x39124925u);
  CHECK(back[0] == static_cast<float>(14336.0 * i0));
  CHECK(back[1] == static_cast<float>(-57344.0 * i1));
  CHECK(back[2] == static_cast<float>(28672.0 * i0));
  CHECK(back[3] == static_cast<float>(3584.0 * i1));
  CHECK(back[4] == static_cast<float>(-57344.0 * i0));
  CHECK(back[5] == static_cast<float>(20480.0 * i1));
  // and these round back to the simple values: 1, -8, 2, 0.5, -4, 2.857142... (20480/7168)
  CHECK(back[0] == 1.0f);
  CHECK(back[1] == -8.0f);
  CHECK(back[4] == -4.0f);
}
