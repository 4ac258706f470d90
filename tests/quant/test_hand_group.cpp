// Hand-checked small cases for the grouped granularities: per-group colwise (groups along rows,
// scales (G, N), column-major data as the MoE weight-gradient GEMM wants), per-group rowwise
// (groups along columns, scales (G, M)), the dual call sharing offsets, empty groups (their
// scale rows stay untouched) and rows past the last group end (untouched).
// Offsets are int32 cumulative END indices: ends = [2, 2, 5] means groups [0,2), [2,2), [2,5).
// Rules as in test_hand_basic.cpp: s = 448 / amax rounded to f32, q = nearest-even code of x*s.
#include <catch2/catch.hpp>

#include "quant_fixtures.hpp"

using namespace fp8q;
using fq::bits_of;
using fq::bytes;
using fq::f32_bits;
using u32v = std::vector<std::uint32_t>;
using intv = std::vector<int>;

namespace {

constexpr std::uint32_t P = fq::poison_f32;  // an untouched scale entry
const e4m3fn PQ{fq::poison_byte};            // an untouched data byte

// A (5 x 2), row-major, groups along rows with ends [2, 2, 5]:
//   group 0 = rows 0..1: col 0 {1, 4} amax 4 -> s = 112;  col 1 {-2, 0.5} amax 2 -> s = 224
//   group 1 = empty: writes nothing
//   group 2 = rows 2..4: col 0 {8, -0.5, 2} amax 8 -> s = 56;
//                        col 1 {3, 1, -0.25} amax 3 -> s = 149.333328 (0x43155555)
// codes:
//   row 0:  1*112 = 112 = 1.75*2^6 -> 0x6E      -2*224 = -448 -> 0xFE
//   row 1:  4*112 = 448 -> 0x7E                 0.5*224 = 112 -> 0x6E
//   row 2:  8*56  = 448 -> 0x7E                 3*s = 447.99998 -> f32 tie -> 448 -> 0x7E
//   row 3: -0.5*56 = -28 = -1.75*2^4 -> 0xDE    1*s = 149.33 -> step 16 -> 144 -> 0x71
//   row 4:  2*56 = 112 -> 0x6E                  -0.25*s = -37.33 -> step 4 -> -36 -> 0xE1
const float A[10] = {1, -2, 4, 0.5f, 8, 3, -0.5f, 1, 2, -0.25f};
const std::int32_t ends[3] = {2, 2, 5};

}  // namespace

TEST_CASE("hand: per-group colwise, column-major output, an empty group", "[host][hand][group]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::group_col,
                   .store = stored_scale::both};
  e4m3fn q[10];
  float s[6], inv[6];
  fq::fill(s, fq::float_of(P));
  fq::fill(inv, fq::float_of(P));
  const quantized<S> out{col_major(q, 5, 2), row_major(s, 3, 2), row_major(inv, 3, 2)};
  quantize_args args;
  args.groups = {ends, 3};
  REQUIRE(host::quantize<S>(row_major(A, 5, 2), out, args) == status::success);
  // column-major memory: column 0 then column 1
  CHECK(bytes(q, 10) == intv{0x6E, 0x7E, 0x7E, 0xDE, 0x6E,  //
                             0xFE, 0x6E, 0x7E, 0x71, 0xE1});
  // scales [G][N]; group 1's row untouched
  CHECK(f32_bits(s, 6) == u32v{0x42e00000u, 0x43600000u, P, P, 0x42600000u, 0x43155555u});
  CHECK(f32_bits(inv, 6) == u32v{0x3c124925u, 0x3b924925u, P, P, 0x3c924925u, 0x3bdb6db7u});

  SECTION("dequantize uses each element's group scale") {
    float back[10];
    fq::fill(back, -99.0f);
    REQUIRE(host::dequantize<S>(out, row_major(back, 5, 2), args) == status::success);
    // x' = decode(q) * inverse of (group, column), one f32 rounding
    const float i00 = fq::float_of(0x3c124925u), i01 = fq::float_of(0x3b924925u);
    const float i20 = fq::float_of(0x3c924925u), i21 = fq::float_of(0x3bdb6db7u);
    CHECK(back[0] == static_cast<float>(112.0 * i00));
    CHECK(back[1] == static_cast<float>(-448.0 * i01));
    CHECK(back[2] == static_cast<float>(448.0 * i00));
    CHECK(back[3] == static_cast<float>(112.0 * i01));
    CHECK(back[4] == static_cast<float>(448.0 * i20));
    CHECK(back[5] == static_cast<float>(448.0 * i21));
    CHECK(back[6] == static_cast<float>(-28.0 * i20));
    CHECK(back[7] == static_cast<float>(144.0 * i21));
    CHECK(back[8] == static_cast<float>(112.0 * i20));
    CHECK(back[9] == static_cast<float>(-36.0 * i21));
  }
}

TEST_CASE("hand: per-group colwise, rows past the last end are untouched", "[host][hand][group]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::group_col,
                   .store = stored_scale::multiplier};
  // ends [2, 2, 4]: group 2 = rows 2..3 (col 0 {8, -0.5} amax 8, col 1 {3, 1} amax 3: the same
  // scales as above), row 4 belongs to no group
  const std::int32_t short_ends[3] = {2, 2, 4};
  e4m3fn q[10];
  fq::fill(q, PQ);
  float s[6];
  fq::fill(s, fq::float_of(P));
  const quantized<S> out{row_major(q, 5, 2), row_major(s, 3, 2), {}};
  quantize_args args;
  args.groups = {short_ends, 3};
  REQUIRE(host::quantize<S>(row_major(A, 5, 2), out, args) == status::success);
  CHECK(bytes(q, 10) == intv{0x6E, 0xFE, 0x7E, 0x6E, 0x7E, 0x7E, 0xDE, 0x71, PQ.bits, PQ.bits});
  CHECK(f32_bits(s, 6) == u32v{0x42e00000u, 0x43600000u, P, P, 0x42600000u, 0x43155555u});
}

TEST_CASE("hand: per-group rowwise, groups along columns, bf16 in", "[host][hand][group]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::group_row,
                   .store = stored_scale::multiplier};
  // The transpose of A (2 x 5), groups along columns with ends [2, 2, 5]: the same units, so
  // the same codes (transposed) and the same scales, stored (G, M):
  //   (0,0) = row 0 cols 0..1 -> 112   (0,1) = row 1 cols 0..1 -> 224
  //   (1,*) untouched                   (2,0) -> 56    (2,1) -> 149.333328
  bf16 x[10];
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 5; ++c) x[r * 5 + c] = to_bf16(A[c * 2 + r]);
  e4m3fn q[10];
  float s[6];
  fq::fill(s, fq::float_of(P));
  const quantized<S> out{row_major(q, 2, 5), row_major(s, 3, 2), {}};
  quantize_args args;
  args.groups = {ends, 3};
  REQUIRE(host::quantize<S>(row_major<const bf16>(x, 2, 5), out, args) == status::success);
  CHECK(bytes(q, 10) == intv{0x6E, 0x7E, 0x7E, 0xDE, 0x6E,  //
                             0xFE, 0x6E, 0x7E, 0x71, 0xE1});
  CHECK(f32_bits(s, 6) == u32v{0x42e00000u, 0x43600000u, P, P, 0x42600000u, 0x43155555u});
}

TEST_CASE("hand: dual per-group colwise shares the offsets", "[host][hand][group]") {
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::group_col,
                   .store = stored_scale::multiplier};
  // B (5 x 3), same ends [2, 2, 5]:
  //   group 0: col 0 {0.5, 0.25} amax 0.5 -> s = 896: 448 -> 0x7E, 224 -> 0x76
  //            col 1 zeros -> s = 448/eps = 0x57cbba10, codes 0x00
  //            col 2 {16, -1} amax 16 -> s = 28: 448 -> 0x7E, -28 -> 0xDE
  //   group 2: col 0 {6, -3, 1.5} amax 6 -> s = 74.6666641 (0x42955555):
  //              6*s = 447.99998 -> f32 448 -> 0x7E; -3*s -> -224 -> 0xF6; 1.5*s -> 112 -> 0x6E
  //            col 1 zeros -> 0x57cbba10, 0x00
  //            col 2 {1, 0.5, 2} amax 2 -> s = 224: 224 -> 0x76, 112 -> 0x6E, 448 -> 0x7E
  const float B[15] = {0.5f, 0, 16, 0.25f, 0, -1, 6, 0, 1, -3, 0, 0.5f, 1.5f, 0, 2};
  e4m3fn qa[10], qb[15];
  float sa[6], sb[9];
  fq::fill(sa, fq::float_of(P));
  fq::fill(sb, fq::float_of(P));
  const quantized<S> out_a{col_major(qa, 5, 2), row_major(sa, 3, 2), {}};
  const quantized<S> out_b{col_major(qb, 5, 3), row_major(sb, 3, 3), {}};
  quantize_args args;
  args.groups = {ends, 3};
  REQUIRE(host::quantize_dual<S>(row_major(A, 5, 2), out_a, row_major(B, 5, 3), out_b, args) ==
          status::success);
  CHECK(bytes(qa, 10) == intv{0x6E, 0x7E, 0x7E, 0xDE, 0x6E, 0xFE, 0x6E, 0x7E, 0x71, 0xE1});
  CHECK(f32_bits(sa, 6) == u32v{0x42e00000u, 0x43600000u, P, P, 0x42600000u, 0x43155555u});
  // column-major: col 0, col 1, col 2
  CHECK(bytes(qb, 15) == intv{0x7E, 0x76, 0x7E, 0xF6, 0x6E,  //
                              0x00, 0x00, 0x00, 0x00, 0x00,  //
                              0x7E, 0xDE, 0x76, 0x6E, 0x7E});
  CHECK(f32_bits(sb, 9) == u32v{0x44600000u, 0x57cbba10u, 0x41e00000u,  //
                                P, P, P,                                //
                                0x42955555u, 0x57cbba10u, 0x43600000u});
}
