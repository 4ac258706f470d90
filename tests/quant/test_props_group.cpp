// Properties over fresh random inputs for per-group rowwise / colwise scaling and the dual call:
// random cumulative end offsets with empty groups (G = 1 .. 16), byte-exact agreement with the
// independent reference in every layout, scale rows of empty groups and elements past the last
// end left untouched (outputs are poisoned first), scales exactly as the rule says, the
// round-trip bound, and independence from options::threads.
// The seed is printed once; FP8Q_TEST_SEED=<seed> replays a run.
#include <array>

#include <catch2/catch.hpp>

#include "quant_fixtures.hpp"

using namespace fp8q;
using fq::shape3;

namespace {

const std::vector<shape3> shapes{{1, 1, 1}, {1, 1, 40}, {1, 37, 1}, {1, 17, 33}, {1, 64, 9},
                                 {1, 130, 7}, {1, 0, 5}, {1, 6, 0}};

template <spec S, class In>
void props(const char* tag, fq::i64 groups, const fq::gen_cfg& g = {}, fq::i64 min_covered = 51) {
  const std::uint64_t seed = fq::test_seed(tag);
  INFO("seed " << seed << " (FP8Q_TEST_SEED=" << fq::base_seed() << "), input "
               << fq::type_name<In>() << ", G = " << groups);
  std::mt19937_64 rng(seed + static_cast<std::uint64_t>(groups));
  fq::i64 covered = 0;
  CHECK(fq::props_run<S, In>(rng, shapes, g, groups, &covered) == "");
  CHECK(covered >= min_covered);
}

constexpr spec gcol_both{.out = format::e4m3fn, .granularity = granularity::group_col,
                         .store = stored_scale::both};
constexpr spec gcol_torchao{.out = format::e4m3fn, .granularity = granularity::group_col,
                            .power_of_2 = true, .store = stored_scale::multiplier};
constexpr spec grow_e5m2{.out = format::e5m2, .granularity = granularity::group_row};
constexpr spec grow_fnuz_sr{.out = format::e4m3fnuz, .granularity = granularity::group_row,
                            .store = stored_scale::both, .rounding = rounding::stochastic};

}  // namespace

TEMPLATE_TEST_CASE("props: per-group colwise e4m3fn", "[host][props][group]", float, bf16, f16) {
  for (fq::i64 g : {1, 3, 8, 16}) props<gcol_both, TestType>("gcol_both", g);
}
TEMPLATE_TEST_CASE("props: per-group colwise power-of-2 multiplier", "[host][props][group]", float, bf16) {
  for (fq::i64 g : {2, 5}) props<gcol_torchao, TestType>("gcol_torchao", g);
}
TEMPLATE_TEST_CASE("props: per-group rowwise e5m2", "[host][props][group]", float, bf16, f16) {
  for (fq::i64 g : {1, 4, 9}) props<grow_e5m2, TestType>("grow_e5m2", g);
}
TEST_CASE("props: per-group rowwise e4m3fnuz stochastic", "[host][props][group]") {
  for (fq::i64 g : {1, 3, 7}) props<grow_fnuz_sr, bf16>("grow_fnuz_sr", g);
}

TEST_CASE("props: per-group with NaN and infinite inputs", "[host][props][group][nan]") {
  fq::gen_cfg g;
  g.p_nan = 0.004;
  g.p_inf = 0.004;
  for (fq::i64 n : {1, 5}) props<gcol_both, bf16>("nan_gcol_both", n, g, 1);
  for (fq::i64 n : {2, 7}) props<grow_fnuz_sr, float>("nan_grow_fnuz_sr", n, g, 1);
}

TEST_CASE("props: degenerate offsets", "[host][props][group]") {
  const std::uint64_t seed = fq::test_seed("group_degenerate");
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  fq::problem p;
  p.M = 23;
  p.N = 11;
  p.x = fq::random_values<bf16>(rng, 1, p.M, p.N);
  SECTION("every row in the last group, all others empty") {
    p.ends = {0, 0, 0, 23};
    CHECK(fq::check_quantize<gcol_both, bf16>(p) == "");
  }
  SECTION("every row in the first group, the rest empty") {
    p.ends = {23, 23, 23};
    CHECK(fq::check_quantize<gcol_both, bf16>(p, {layout::col_major, 2, 0}, fq::output_layouts()[1]) == "");
  }
  SECTION("offsets ending early: later rows belong to no group and stay untouched") {
    p.ends = {5, 9, 9, 14};
    CHECK(fq::check_quantize<gcol_both, bf16>(p) == "");
  }
  SECTION("all groups empty: nothing at all is written") {
    p.ends = {0, 0};
    CHECK(fq::check_quantize<gcol_both, bf16>(p) == "");
  }
  SECTION("zero groups") {
    p.ends = {};
    CHECK(fq::check_quantize<gcol_both, bf16>(p) == "");
  }
  SECTION("group_row, columns past the last end untouched") {
    p.ends = {3, 3, 8};
    CHECK(fq::check_quantize<grow_e5m2, bf16>(p, {layout::col_major, 0, 0}, fq::output_layouts()[2]) == "");
  }
}

TEST_CASE("props: dual per-group colwise equals two single calls and the reference",
          "[host][props][group]") {
  const std::uint64_t seed = fq::test_seed("group_dual");
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  for (const auto& [m, na, nb, g] : std::vector<std::array<fq::i64, 4>>{
           {40, 7, 13, 4}, {1, 1, 1, 1}, {129, 33, 5, 16}, {64, 0, 9, 3}}) {
    fq::problem pa, pb;
    pa.M = pb.M = m;
    pa.N = na;
    pb.N = nb;
    pa.x = fq::random_values<bf16>(rng, 1, m, na);
    pb.x = fq::random_values<bf16>(rng, 1, m, nb);
    pa.ends = pb.ends = fq::random_offsets(rng, m, g);
    fq::owned<bf16> in_a = fq::make_input<bf16>(pa, {layout::row_major, 1, 0});
    fq::owned<bf16> in_b = fq::make_input<bf16>(pb, {layout::col_major, 0, 0});
    fq::outputs<gcol_torchao> oa = fq::make_outputs<gcol_torchao>(1, m, na, g, fq::output_layouts()[1]);
    fq::outputs<gcol_torchao> ob = fq::make_outputs<gcol_torchao>(1, m, nb, g, fq::output_layouts()[1]);
    REQUIRE(host::quantize_dual<gcol_torchao>(in_a.v.as_const(), oa.q, in_b.v.as_const(), ob.q,
                                              fq::args_of(pa, 0)) == status::success);
    const fq::actual ga = fq::read_back<gcol_torchao>(oa, 1, m, na);
    const fq::actual gb = fq::read_back<gcol_torchao>(ob, 1, m, nb);
    CHECK(fq::compare<gcol_torchao>(fq::ref_quantize(fq::ref_cfg_of<gcol_torchao>(), pa), ga) == "");
    CHECK(fq::compare<gcol_torchao>(fq::ref_quantize(fq::ref_cfg_of<gcol_torchao>(), pb), gb) == "");
    const auto sa = fq::run_quantize<gcol_torchao, bf16>(pa, {}, fq::output_layouts()[1]);
    const auto sb = fq::run_quantize<gcol_torchao, bf16>(pb, {}, fq::output_layouts()[1]);
    CHECK(sa.got.q == ga.q);
    CHECK(sa.got.s == ga.s);
    CHECK(sb.got.q == gb.q);
    CHECK(sb.got.s == gb.s);
  }
}

TEST_CASE("props: grouped results do not depend on options::threads", "[host][props][threads]") {
  const std::uint64_t seed = fq::test_seed("threads_group");
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  CHECK(fq::threads_run<gcol_both, bf16>(rng, {1, 1000, 300}, {}, 8) == "");
  CHECK(fq::threads_run<grow_e5m2, float>(rng, {1, 300, 1000}, {}, 16) == "");
  CHECK(fq::threads_run<gcol_torchao, bf16>(rng, {1, 700, 400}, {}, 1) == "");
  CHECK(fq::threads_run<grow_fnuz_sr, bf16>(rng, {1, 400, 700}, {}, 5) == "");
}
