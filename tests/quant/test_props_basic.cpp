// Properties over fresh random inputs for tensorwise, rowwise and colwise scaling (2D and
// batched 3D): byte-exact agreement with the independent reference in every storage layout,
// scales exactly as the rule says, |q| <= max, the round-trip bound, untouched padding,
// independence from options::threads, and reproducible stochastic rounding.
// The seed is printed once; FP8Q_TEST_SEED=<seed> replays a run.
#include <catch2/catch.hpp>

#include "quant_fixtures.hpp"

using namespace fp8q;
using fq::shape3;

namespace {

// 1x1, 1xN, Mx1, odd extents, batches, empty matrices
const std::vector<shape3> shapes{{1, 1, 1},  {1, 1, 37}, {1, 29, 1}, {1, 17, 33}, {2, 7, 5},
                                 {3, 13, 65}, {1, 64, 130}, {1, 0, 5}, {1, 4, 0}, {2, 1, 1}};

template <spec S, class In>
void props(const char* tag, const fq::gen_cfg& g = {}, fq::i64 min_covered = 101) {
  const std::uint64_t seed = fq::test_seed(tag);
  INFO("seed " << seed << " (FP8Q_TEST_SEED=" << fq::base_seed() << "), input " << fq::type_name<In>());
  std::mt19937_64 rng(seed);
  fq::i64 covered = 0;
  CHECK(fq::props_run<S, In>(rng, shapes, g, 0, &covered) == "");
  CHECK(covered >= min_covered);  // the round-trip bound was really exercised
}

constexpr spec tensor_both{.out = format::e4m3fn, .granularity = granularity::tensor,
                           .store = stored_scale::both};
constexpr spec row_pow2{.out = format::e4m3fnuz, .granularity = granularity::row,
                        .power_of_2 = true, .store = stored_scale::multiplier};
constexpr spec row_e5m2{.out = format::e5m2, .granularity = granularity::row,
                        .store = stored_scale::both, .overflow = overflow::propagate};
constexpr spec col_fnuz{.out = format::e5m2fnuz, .granularity = granularity::col};
constexpr spec col_sr{.out = format::e4m3fn, .granularity = granularity::col,
                      .store = stored_scale::both, .rounding = rounding::stochastic};
constexpr spec row_big_eps{.out = format::e4m3fn, .granularity = granularity::row,
                           .store = stored_scale::both, .eps = 1e-3f};

}  // namespace

TEMPLATE_TEST_CASE("props: tensorwise e4m3fn, s and 1/s", "[host][props]", float, bf16, f16) {
  props<tensor_both, TestType>("tensor_both");
}

TEMPLATE_TEST_CASE("props: rowwise e4m3fnuz, power-of-2 multiplier", "[host][props]", float, bf16, f16) {
  props<row_pow2, TestType>("row_pow2");
}

TEMPLATE_TEST_CASE("props: rowwise e5m2 without saturation", "[host][props]", float, bf16, f16) {
  props<row_e5m2, TestType>("row_e5m2");
}

TEMPLATE_TEST_CASE("props: colwise e5m2fnuz, inverse only", "[host][props]", float, bf16, f16) {
  props<col_fnuz, TestType>("col_fnuz");
}

TEMPLATE_TEST_CASE("props: colwise e4m3fn stochastic rounding", "[host][props]", float, bf16) {
  props<col_sr, TestType>("col_sr");
}

TEST_CASE("props: rowwise with eps above many amaxes", "[host][props]") {
  // tiny rows (exponents down to -40) sit below eps = 1e-3: s = max / eps
  fq::gen_cfg g;
  g.exp_lo = -30;
  g.exp_hi = 2;
  props<row_big_eps, float>("row_big_eps", g);
  props<row_big_eps, bf16>("row_big_eps16", g);
}

TEST_CASE("props: NaN and infinite inputs", "[host][props][nan]") {
  // NaN makes its unit's amax and scale NaN (every byte the canonical NaN code); Inf gives a
  // zero scale. Units holding neither still get the round-trip bound.
  fq::gen_cfg g;
  g.p_nan = 0.004;
  g.p_inf = 0.004;
  props<tensor_both, float>("nan_tensor_both", g, 0);
  props<row_pow2, bf16>("nan_row_pow2", g, 1);
  props<row_e5m2, f16>("nan_row_e5m2", g, 1);
  props<col_fnuz, float>("nan_col_fnuz", g, 1);
  props<col_sr, bf16>("nan_col_sr", g, 1);
}

TEST_CASE("props: stochastic rounding depends on the seed and the logical index only", "[host][props]") {
  const std::uint64_t seed = fq::test_seed("sr_seed");
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const fq::problem p = fq::random_problem<float>(rng, {2, 33, 47}, {}, granularity::col, 0);
  const std::uint64_t s1 = rng(), s2 = s1 ^ 0x5555;
  // same seed, different layouts and thread counts: same bytes (each equal to the reference)
  CHECK(fq::check_quantize<col_sr, float>(p, {layout::row_major, 0, 0}, {}, s1) == "");
  CHECK(fq::check_quantize<col_sr, float>(p, {layout::col_major, 3, 2}, fq::output_layouts()[1], s1, 4) == "");
  // another seed: some byte differs (2*33*47 elements; nearly all are inexact after scaling)
  const auto a = fq::run_quantize<col_sr, float>(p, {}, {}, s1);
  const auto b = fq::run_quantize<col_sr, float>(p, {}, {}, s2);
  REQUIRE(a.st == status::success);
  REQUIRE(b.st == status::success);
  CHECK(a.got.q != b.got.q);
  CHECK(fq::check_quantize<col_sr, float>(p, {}, {}, s2) == "");
}

TEST_CASE("props: results do not depend on options::threads", "[host][props][threads]") {
  const std::uint64_t seed = fq::test_seed("threads_basic");
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  // 2^18+ elements so the backend starts several threads
  CHECK(fq::threads_run<tensor_both, bf16>(rng, {1, 520, 600}) == "");
  CHECK(fq::threads_run<tensor_both, float>(rng, {3, 200, 450}) == "");
  CHECK(fq::threads_run<row_pow2, bf16>(rng, {1, 700, 411}) == "");
  CHECK(fq::threads_run<col_sr, float>(rng, {2, 300, 451}) == "");
}

TEST_CASE("props: dequantize to bf16 and f16", "[host][props]") {
  // Power-of-2 scales make decode(q) * (1/s) exact in f32, so only the rounding to Out remains.
  const std::uint64_t seed = fq::test_seed("dequant16");
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  for (const shape3& sh : {shape3{1, 9, 70}, shape3{2, 33, 5}}) {
    const fq::problem p = fq::random_problem<bf16>(rng, sh, {}, granularity::row, 0);
    const auto r = fq::run_quantize<row_pow2, bf16>(p, {}, {});
    REQUIRE(r.st == status::success);
    CHECK(fq::check_dequantize<row_pow2, bf16, bf16>(p, r, {layout::row_major, 1, 0}) == "");
    CHECK(fq::check_dequantize<row_pow2, bf16, f16>(p, r, {layout::col_major, 0, 0}) == "");
    // rounded inverses: f32 product, then narrowed (two roundings, docs/semantics.md)
    const fq::problem p32 = fq::random_problem<float>(rng, sh, {}, granularity::tensor, 0);
    const auto r32 = fq::run_quantize<tensor_both, float>(p32, {}, {});
    REQUIRE(r32.st == status::success);
    CHECK(fq::check_dequantize<tensor_both, float, bf16>(p32, r32, {layout::col_major, 0, 3}) == "");
    CHECK(fq::check_dequantize<tensor_both, float, f16>(p32, r32, {}) == "");
  }
}

TEST_CASE("hand: dequantize to bf16 rounds twice (f32 product, then bf16)", "[host][hand][dequant_rounding]") {
  // docs/semantics.md "Dequantization": y = decode(q) * inv as one f32 multiply, then narrowed to
  // Out by to_bf16 (two roundings, as torch's q.float() * inv then .to(bfloat16)). With an
  // inverse that is not a power of two the exact product has up to 28 significant bits, so the
  // two roundings can differ from one. Crafted case:
  //   q = 0x3F (e4m3fn: E=7 M=7 -> 1.875), stored inverse 0x3c051111 = 0.008121744729578495
  //   exact product 1.875 * 0.008121744729578495 = 0.015228271367959678, just below the bf16
  //   midpoint 0x3c798000 (0.0152282714843750)
  //   f32 product: rounds to 0x3c798000, the midpoint itself; to_bf16: tie -> even -> 0x3c7a
  //   (a single rounding of the exact product would give 0x3c79)
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::tensor};
  e4m3fn q[1] = {{0x3F}};
  float inv = fq::float_of(0x3c051111u);
  const quantized<S> in{row_major(q, 1, 1), {}, row_major(&inv, 1, 1)};
  bf16 out[1] = {{0}};
  REQUIRE(host::dequantize<S>(in, row_major(out, 1, 1)) == status::success);
  CHECK(static_cast<int>(out[0].bits) == 0x3c7a);
  float out32 = 0;
  REQUIRE(host::dequantize<S>(in, row_major(&out32, 1, 1)) == status::success);
  CHECK(fq::bits_of(out32) == 0x3c798000u);
}
