// Padded grouped outputs (group_offsets::align > 1, docs/semantics.md "Padded groups"): every
// group's lines land at the padded offset, the padding lines are zero bytes, lines past the last
// padded end stay untouched, the scales and the data bytes are those of the packed call, and the
// padded end offsets come back. Checked against the packed call itself (which the rest of the
// suite checks against the reference), for random offsets with empty groups, both grouped
// granularities, both output layouts, stochastic rounding and batches.
#include <catch2/catch.hpp>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "fp8q/quantize.hpp"

using namespace fp8q;
using i64 = std::int64_t;

namespace {

constexpr std::uint8_t poison = 0xA5;

template <spec S>
struct padded_case {
  i64 B, M, N, G, align;
  layout out_order;
  std::vector<float> x;           // [B][M, N] row-major
  std::vector<std::int32_t> ends;  // [G]

  static constexpr bool by_rows = S.granularity == granularity::group_col;
  i64 extent() const { return by_rows ? M : N; }
  i64 capacity() const { return extent() + G * (align - 1); }

  // Runs S packed and padded; checks every byte of the padded output and the scales.
  void check(std::uint64_t seed) const {
    INFO("B=" << B << " M=" << M << " N=" << N << " G=" << G << " align=" << align
              << (out_order == layout::row_major ? " row-major out" : " col-major out"));
    const i64 Mo = by_rows ? capacity() : M;
    const i64 No = by_rows ? N : capacity();
    const auto in = batched(row_major(x.data(), M, N), B).as_const();
    // scales: (G, N) for group_col, (G, M) for group_row
    const i64 sc = by_rows ? N : M;
    std::vector<float> s1(static_cast<std::size_t>(B * G * sc), -1.0f), i1(s1.size(), -1.0f);
    std::vector<float> s2(s1.size(), -2.0f), i2(s1.size(), -2.0f);
    auto view = [&](auto* p, i64 r, i64 c) {
      return batched(out_order == layout::row_major ? row_major(p, r, c) : col_major(p, r, c), B);
    };
    std::vector<fp8<S.out>> q1(static_cast<std::size_t>(B * M * N), fp8<S.out>{poison});
    std::vector<fp8<S.out>> q2(static_cast<std::size_t>(B * Mo * No), fp8<S.out>{poison});
    const quantized<S> packed{.data = view(q1.data(), M, N),
                              .scale = batched(row_major(s1.data(), G, sc), B),
                              .inverse = batched(row_major(i1.data(), G, sc), B)};
    const quantized<S> padded{.data = view(q2.data(), Mo, No),
                              .scale = batched(row_major(s2.data(), G, sc), B),
                              .inverse = batched(row_major(i2.data(), G, sc), B)};
    std::vector<std::int32_t> pends(static_cast<std::size_t>(G) + 1, -9);
    quantize_args a1{.groups = {ends.data(), G}, .seed = seed};
    quantize_args a2{.groups = {ends.data(), G, align, pends.data()}, .seed = seed};
    REQUIRE(host::quantize<S>(in, packed, a1) == status::success);
    REQUIRE(host::quantize<S>(in, padded, a2) == status::success);
    // scales: the same call, so the same bits (empty groups untouched in both: -1 vs -2)
    for (std::size_t k = 0; k < s1.size(); ++k) {
      if (s1[k] == -1.0f) {
        CHECK(s2[k] == -2.0f);
        CHECK(i2[k] == -2.0f);
      } else {
        CHECK(std::memcmp(&s1[k], &s2[k], 4) == 0);
        CHECK(std::memcmp(&i1[k], &i2[k], 4) == 0);
      }
    }
    // data: line x of group g goes to line x - begin + padded begin; padding is zero
    i64 pbegin = 0;
    i64 mismatches = 0;
    for (i64 g = 0; g < G; ++g) {
      const i64 b0 = g == 0 ? 0 : ends[static_cast<std::size_t>(g - 1)];
      const i64 e0 = ends[static_cast<std::size_t>(g)];
      const i64 pend = pbegin + (e0 - b0 + align - 1) / align * align;
      CHECK(pends[static_cast<std::size_t>(g)] == pend);
      for (i64 b = 0; b < B; ++b) {
        for (i64 line = pbegin; line < pend; ++line) {
          for (i64 y = 0; y < (by_rows ? N : M); ++y) {
            const i64 r2 = by_rows ? line : y, c2 = by_rows ? y : line;
            const std::uint8_t got = padded.data(b, r2, c2).bits;
            const i64 src = line - pbegin + b0;
            std::uint8_t want = 0;
            if (src < e0) want = packed.data(b, by_rows ? src : y, by_rows ? y : src).bits;
            mismatches += got != want;
          }
        }
      }
      pbegin = pend;
    }
    CHECK(pends[static_cast<std::size_t>(G)] == -9);  // nothing past count
    // past the last padded end: untouched
    for (i64 b = 0; b < B; ++b)
      for (i64 line = pbegin; line < capacity(); ++line)
        for (i64 y = 0; y < (by_rows ? N : M); ++y)
          mismatches += padded.data(b, by_rows ? line : y, by_rows ? y : line).bits != poison;
    CHECK(mismatches == 0);
  }
};

template <spec S>
padded_case<S> random_case(std::mt19937_64& rng, i64 B, i64 M, i64 N, i64 G, i64 align,
                           layout order) {
  padded_case<S> c{B, M, N, G, align, order, {}, {}};
  std::normal_distribution<float> nd(0.0f, 3.0f);
  c.x.resize(static_cast<std::size_t>(B * M * N));
  for (float& v : c.x) v = nd(rng);
  const i64 extent = c.extent();
  // sorted random ends in [0, extent], some groups empty, the last below extent at times
  std::uniform_int_distribution<i64> pick(0, extent);
  for (i64 g = 0; g < G; ++g) c.ends.push_back(static_cast<std::int32_t>(pick(rng)));
  std::sort(c.ends.begin(), c.ends.end());
  if (G > 2) c.ends[1] = c.ends[0];  // an empty group
  return c;
}

constexpr spec gcol{.out = format::e4m3fn, .granularity = granularity::group_col,
                    .store = stored_scale::both};
constexpr spec gcol_sr{.out = format::e5m2, .granularity = granularity::group_col,
                       .power_of_2 = true, .store = stored_scale::both,
                       .rounding = rounding::stochastic};
constexpr spec grow{.out = format::e4m3fnuz, .granularity = granularity::group_row,
                    .store = stored_scale::both};

}  // namespace

TEST_CASE("padded groups: hand case, group_col with an empty group", "[host][padded]") {
  // M = 5 rows, ends {2, 2, 5}, align 4: group 0 rows 0-1 -> 0-1, padding 2-3; group 1 empty;
  // group 2 rows 2-4 -> 4-6, padding 7; padded ends {4, 4, 8}; capacity 5 + 3 * 3 = 14 rows
  padded_case<gcol> c{1, 5, 3, 3, 4, layout::row_major, {}, {2, 2, 5}};
  for (int k = 0; k < 15; ++k) c.x.push_back(static_cast<float>(k % 7) - 3.0f);
  c.check(0);
}

TEST_CASE("padded groups: random offsets, both granularities and layouts", "[host][padded]") {
  std::mt19937_64 rng(20261201);
  for (const i64 align : {2, 16, 32, 128}) {
    for (const layout order : {layout::row_major, layout::col_major}) {
      random_case<gcol>(rng, 1, 300, 7, 5, align, order).check(0);
      random_case<gcol>(rng, 2, 37, 5, 1, align, order).check(0);
      random_case<gcol_sr>(rng, 1, 129, 9, 4, align, order).check(1234);
      random_case<grow>(rng, 1, 6, 333, 7, align, order).check(0);
      random_case<grow>(rng, 3, 4, 40, 3, align, order).check(0);
    }
  }
}

TEST_CASE("padded groups: empty inputs still report the padded ends", "[host][padded]") {
  std::vector<std::int32_t> ends{0, 0}, pends{-1, -1};
  std::vector<float> s(4), inv(4);
  const quantized<gcol> out{.data = {nullptr, 0 + 2 * 15, 0, 1, layout::row_major, 1, 0},
                            .scale = row_major(s.data(), 2, 0, 1),
                            .inverse = row_major(inv.data(), 2, 0, 1)};
  const quantize_args args{.groups = {ends.data(), 2, 16, pends.data()}};
  CHECK(host::quantize<gcol>(matrix_view<const float>{nullptr, 0, 0, 1}, out, args) ==
        status::success);
  CHECK(pends == std::vector<std::int32_t>{0, 0});
}

TEST_CASE("padded groups: invalid alignments and short outputs are rejected, nothing written",
          "[host][padded][errors]") {
  std::vector<float> x(64, 1.0f), s(16, -1.0f), inv(16, -1.0f);
  std::vector<e4m3fn> q(256, e4m3fn{poison});
  std::vector<std::int32_t> ends{3, 8}, pends{-1, -1};
  const auto in = row_major<const float>(x.data(), 8, 4);
  auto out_rows = [&](i64 rows) {
    return quantized<gcol>{.data = row_major(q.data(), rows, 4),
                           .scale = row_major(s.data(), 2, 4),
                           .inverse = row_major(inv.data(), 2, 4)};
  };
  auto untouched = [&] {
    for (const e4m3fn v : q)
      if (v.bits != poison) return false;
    return pends == std::vector<std::int32_t>{-1, -1} && s[0] == -1.0f;
  };
  // capacity = 8 + 2 * (16 - 1) = 38 rows
  CHECK(host::quantize<gcol>(in, out_rows(37), {.groups = {ends.data(), 2, 16, pends.data()}}) ==
        status::bad_shape);
  CHECK(host::quantize<gcol>(in, out_rows(38), {.groups = {ends.data(), 2, 0, pends.data()}}) ==
        status::bad_shape);
  CHECK(host::quantize<gcol>(in, out_rows(38), {.groups = {ends.data(), 2, -4, pends.data()}}) ==
        status::bad_shape);
  auto* odd = reinterpret_cast<std::int32_t*>(reinterpret_cast<char*>(pends.data()) + 1);
  CHECK(host::quantize<gcol>(in, out_rows(38), {.groups = {ends.data(), 2, 16, odd}}) ==
        status::misaligned);
  CHECK(untouched());
  // a padded layout only for grouped granularities
  constexpr spec row{.out = format::e4m3fn, .granularity = granularity::row};
  const quantized<row> rq{.data = row_major(q.data(), 8, 4), .inverse = row_major(inv.data(), 8, 1)};
  CHECK(host::quantize<row>(in, rq, {.groups = {nullptr, 0, 16}}) == status::bad_shape);
  // dequantize reads a padded output as a packed one whose offsets are the padded ends
  CHECK(host::dequantize<gcol>(out_rows(38), row_major(x.data(), 38, 4),
                               {.groups = {ends.data(), 2, 16}}) == status::bad_shape);
  CHECK(untouched());
  // and accepts it so: the padding rows dequantize to zero
  std::vector<float> y(38 * 4, -5.0f);
  REQUIRE(host::quantize<gcol>(in, out_rows(38), {.groups = {ends.data(), 2, 16, pends.data()}}) ==
          status::success);
  CHECK(pends == std::vector<std::int32_t>{16, 32});
  REQUIRE(host::dequantize<gcol>(out_rows(32),
                                 row_major(y.data(), 32, 4), {.groups = {pends.data(), 2}}) ==
          status::success);
  for (int r = 0; r < 32; ++r) {
    const bool data_row = r < 3 || (r >= 16 && r < 21);
    for (int c = 0; c < 4; ++c) CHECK(y[static_cast<std::size_t>(r * 4 + c)] == (data_row ? 1.0f : 0.0f));
  }
}
