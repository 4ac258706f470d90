// Edges found by fuzzing the host entry points and by mutation testing the host suite:
//  - views with no elements (batch >= 2, null pointers, any batch stride): nothing is written
//    and no address is formed from them (the sanitizer build runs this file under UBSan);
//  - extents near INT64_MAX in the index maps and in validation;
//  - which status a span that overflows int64 gets (docs/semantics.md, "Errors");
//  - the multi-threaded tensorwise amax: the single maximum in the first or the last chunk;
//  - RCEIL at the underflow boundary: amax = max * 2^k for k = -125, -126, -127.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "fp8q/quantize.hpp"

using namespace fp8q;
using i64 = std::int64_t;

namespace {

constexpr i64 i64_max = std::numeric_limits<i64>::max();
constexpr float poison_f = -7.25f;

std::uint32_t bits_of(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  return u;
}

template <spec S>
bool scales_untouched(const std::vector<float>& v) {
  for (float f : v)
    if (bits_of(f) != bits_of(poison_f)) return false;
  return true;
}

constexpr spec tensor_both{.out = format::e4m3fn, .granularity = granularity::tensor,
                           .store = stored_scale::both};
constexpr spec row_both{.out = format::e4m3fnuz, .granularity = granularity::row,
                        .store = stored_scale::both};
constexpr spec col_both{.out = format::e5m2, .granularity = granularity::col,
                        .store = stored_scale::both};
constexpr spec block_1x128{.out = format::e4m3fn, .granularity = granularity::block,
                           .block_rows = 1, .block_cols = 128};
constexpr spec gcol{.out = format::e4m3fn, .granularity = granularity::group_col,
                    .store = stored_scale::both};
constexpr spec grow{.out = format::e4m3fn, .granularity = granularity::group_row};

// An M x N x batch problem whose input and output views have no elements: null data, a batch
// stride that would overflow if anything multiplied it, scale views of the right extents in
// real (poisoned) memory.
template <spec S>
void empty_batched(i64 M, i64 N, i64 batch, i64 G = 0) {
  INFO(to_string(S.granularity) << " M=" << M << " N=" << N << " batch=" << batch << " G=" << G);
  const i64 huge_stride = i64_max / 2 + 12345;
  matrix_view<const bf16> in{nullptr, M, N, N > 0 ? N : 1, layout::row_major, batch, huge_stride};
  matrix_view<fp8<S.out>> q{nullptr, M, N, N > 0 ? N : 1, layout::row_major, batch, -huge_stride};
  std::vector<std::int32_t> ends(static_cast<std::size_t>(G), 0);
  const detail::scale_map map = detail::make_scale_map(S, M, N, ends.data(), G);
  const i64 sr = detail::is_grouped(S.granularity) ? G : map.scale_rows();
  const i64 sc = map.scale_cols();
  std::vector<float> s(static_cast<std::size_t>(std::max<i64>(sr * sc * batch, 1)), poison_f);
  std::vector<float> inv(s.size(), poison_f);
  auto scale_view = [&](std::vector<float>& v) {
    return batched(row_major(sr * sc > 0 ? v.data() : nullptr, sr, sc, sc > 0 ? sc : 1), batch,
                   sr * sc);
  };
  quantized<S> out{.data = q};
  if constexpr (stores_multiplier(S)) out.scale = scale_view(s);
  if constexpr (stores_inverse(S)) out.inverse = scale_view(inv);
  quantize_args args{};
  if (detail::is_grouped(S.granularity)) args.groups = {ends.data(), G};
  CHECK(host::quantize<S>(in, out, args) == status::success);
  CHECK(scales_untouched<S>(s));
  CHECK(scales_untouched<S>(inv));
  // and back: dequantize of the empty data writes nothing either
  std::vector<float> y(4, poison_f);
  matrix_view<float> yv{nullptr, M, N, N > 0 ? N : 1, layout::row_major, batch, huge_stride};
  CHECK(host::dequantize<S>(out, yv, args) == status::success);
}

}  // namespace

TEST_CASE("edges: views with no elements, batched, null, huge batch strides", "[host][edges]") {
  for (const i64 batch : {2, 3, 7}) {
    empty_batched<tensor_both>(0, 5, batch);
    empty_batched<tensor_both>(5, 0, batch);
    empty_batched<row_both>(0, 5, batch);
    empty_batched<row_both>(5, 0, batch);
    empty_batched<col_both>(0, 5, batch);
    empty_batched<col_both>(5, 0, batch);
    empty_batched<block_1x128>(0, 300, batch);
    empty_batched<block_1x128>(3, 0, batch);
    empty_batched<gcol>(0, 5, batch, 3);
    empty_batched<gcol>(4, 0, batch, 2);
    empty_batched<grow>(4, 0, batch, 2);
    empty_batched<grow>(0, 6, batch, 3);
  }
}

TEST_CASE("edges: batch 0 and rows 0 are both views with no elements", "[host][edges]") {
  // A huge ld is accepted for either (it addresses nothing); before, batch 0 with a huge ld was
  // size_overflow while rows 0 with the same ld passed.
  for (const i64 ld : {i64{1} << 40, i64_max}) {
    INFO("ld " << ld);
    std::vector<float> s(8, poison_f);
    matrix_view<const float> in0{nullptr, 1 << 20, 8, ld, layout::row_major, 0, 0};
    const quantized<row_both> out0{.data = {nullptr, 1 << 20, 8, ld, layout::row_major, 0, 0},
                                   .scale = {nullptr, 1 << 20, 1, 1, layout::row_major, 0, 0},
                                   .inverse = {nullptr, 1 << 20, 1, 1, layout::row_major, 0, 0}};
    CHECK(host::quantize<row_both>(in0, out0) == status::success);
    matrix_view<const float> in1{nullptr, 0, 8, ld, layout::row_major, 3, 0};
    const quantized<row_both> out1{.data = {nullptr, 0, 8, ld, layout::row_major, 3, 0},
                                   .scale = {nullptr, 0, 1, 1, layout::row_major, 3, 0},
                                   .inverse = {nullptr, 0, 1, 1, layout::row_major, 3, 0}};
    CHECK(host::quantize<row_both>(in1, out1) == status::success);
  }
}

TEST_CASE("edges: extents near INT64_MAX in the index maps", "[host][edges]") {
  const detail::axis_map a{detail::axis_kind::uniform, i64_max, 128, nullptr, 0};
  CHECK(a.count() == (i64_max - 1) / 128 + 1);
  CHECK(a.begin(a.count() - 1) == (a.count() - 1) * 128);
  CHECK(a.end(a.count() - 1) == i64_max);
  CHECK(a.end(a.count() - 2) == (a.count() - 1) * 128);
  const detail::axis_map one{detail::axis_kind::uniform, i64_max, 1, nullptr, 0};
  CHECK(one.count() == i64_max);
  CHECK(one.end(i64_max - 1) == i64_max);
  const detail::axis_map none{detail::axis_kind::uniform, 0, 128, nullptr, 0};
  CHECK(none.count() == 0);
  // validation of a 0 x INT64_MAX input with 1 x 128 blocks: ceil(N / 128) scale columns
  const i64 sc = (i64_max - 1) / 128 + 1;
  matrix_view<const float> in{nullptr, 0, i64_max, i64_max, layout::row_major, 1, 0};
  const quantized<block_1x128> out{.data = {nullptr, 0, i64_max, i64_max, layout::row_major, 1, 0},
                                   .inverse = {nullptr, 0, sc, sc, layout::row_major, 1, 0}};
  CHECK(host::quantize<block_1x128>(in, out) == status::success);
}

TEST_CASE("edges: a matrix span beyond int64 is bad_stride in a batch, size_overflow alone",
          "[host][edges]") {
  // (rows - 1) * ld + cols overflows int64: one matrix cannot be addressed (size_overflow); in a
  // batch no batch stride separates two such matrices (bad_stride, phase 5 before
  // misalignment and sizes: docs/semantics.md).
  std::vector<float> x(64, 1.0f), s(64), inv(64);
  std::vector<e4m3fnuz> q(64);
  const i64 rows = i64{1} << 33, ld = i64{1} << 31;
  for (const i64 batch : {1, 2}) {
    INFO("batch " << batch);
    const matrix_view<const float> in{x.data(), rows, 4, ld, layout::row_major, batch, 1 << 20};
    const quantized<row_both> out{
        .data = {q.data(), rows, 4, 4, layout::row_major, batch, rows * 4},
        .scale = {s.data(), rows, 1, 1, layout::row_major, batch, rows},
        .inverse = {inv.data(), rows, 1, 1, layout::row_major, batch, rows}};
    const status want = batch == 1 ? status::size_overflow : status::bad_stride;
    CHECK(to_string(host::quantize<row_both>(in, out)) == std::string(to_string(want)));
    // misaligned input as well: still bad_stride in a batch (phase 5 comes first)
    const matrix_view<const float> bad{reinterpret_cast<const float*>(reinterpret_cast<const char*>(x.data()) + 1),
                                       rows, 4, ld, layout::row_major, batch, 1 << 20};
    const status want_bad = batch == 1 ? status::misaligned : status::bad_stride;
    CHECK(to_string(host::quantize<row_both>(bad, out)) == std::string(to_string(want_bad)));
  }
}

namespace {

// Tensorwise with `threads` threads over an M x N input whose single largest magnitude sits at
// (r, c): the scale must be that maximum's, and the bytes those of one thread.
void tensor_threads_case(layout order, i64 M, i64 N, i64 r, i64 c, unsigned threads) {
  INFO((order == layout::row_major ? "row-major" : "col-major") << " " << M << "x" << N
                                                                << " max at (" << r << ", " << c
                                                                << "), threads " << threads);
  std::vector<float> x(static_cast<std::size_t>(M * N));
  std::uint32_t state = 12345;
  for (float& v : x) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<int>(state >> 20) - 2048) / 1024.0f;  // |v| <= 2
  }
  const auto view = [&](auto* p) {
    return order == layout::row_major ? row_major(p, M, N) : col_major(p, M, N);
  };
  const i64 at = order == layout::row_major ? r * N + c : c * M + r;
  x[static_cast<std::size_t>(at)] = -1000.0f;
  std::vector<e4m3fn> q1(x.size()), qn(x.size());
  float s1 = 0, inv1 = 0, sn = 0, invn = 0;
  const quantized<tensor_both> o1{.data = view(q1.data()), .scale = row_major(&s1, 1, 1),
                                  .inverse = row_major(&inv1, 1, 1)};
  const quantized<tensor_both> on{.data = view(qn.data()), .scale = row_major(&sn, 1, 1),
                                  .inverse = row_major(&invn, 1, 1)};
  REQUIRE(host::quantize<tensor_both>(view(x.data()).as_const(), o1, {}, {.threads = 1}) ==
          status::success);
  REQUIRE(host::quantize<tensor_both>(view(x.data()).as_const(), on, {}, {.threads = threads}) ==
          status::success);
  CHECK(bits_of(s1) == bits_of(448.0f / 1000.0f));
  CHECK(bits_of(sn) == bits_of(448.0f / 1000.0f));
  CHECK(bits_of(invn) == bits_of(1.0f / (448.0f / 1000.0f)));
  CHECK(qn[static_cast<std::size_t>(at)].bits == 0xFE);  // -448
  CHECK(std::memcmp(q1.data(), qn.data(), q1.size()) == 0);
}

}  // namespace

TEST_CASE("edges: multi-threaded tensorwise finds a single maximum in the first or last chunk",
          "[host][edges][threads]") {
  // 2^19 elements: enough for 4 threads (2^16 elements each at least), chunks of lines.
  constexpr i64 M = 512, N = 1024;
  for (const unsigned t : {2u, 4u}) {
    tensor_threads_case(layout::row_major, M, N, M - 1, N / 2, t);  // last row: last chunk
    tensor_threads_case(layout::row_major, M, N, M - 1, N - 1, t);  // the very last element
    tensor_threads_case(layout::row_major, M, N, 0, 3, t);          // first row: first chunk
    tensor_threads_case(layout::col_major, M, N, M / 3, N - 1, t);  // last column: last chunk
    tensor_threads_case(layout::col_major, M, N, 7, 0, t);          // first column
  }
  // 2^17 elements, 2 threads: the smallest tensor the threads split
  tensor_threads_case(layout::row_major, 128, 1024, 127, 5, 2);
  tensor_threads_case(layout::col_major, 1024, 128, 9, 127, 2);
}

namespace {

// MX RCEIL with a block amax of exactly max * 2^k: the scale is 2^k exactly (code k + 127) and
// the maximum encodes to the format's largest finite code; just above, one code more.
template <format F>
void rceil_boundary() {
  constexpr spec S = mx_spec(F, 1, 32, e8m0_rounding::rceil);
  constexpr float max = traits(F).max;
  for (int k = -127; k <= -124; ++k) {
    for (int above = 0; above < 2; ++above) {
      // above: amax * (1 + 2^-20), whose quotient amax / max stays above 2^k even where it is
      // an f32 subnormal (one ulp above would round back to 2^-127 there)
      const float amax = std::ldexp(max, k) * (above ? 1.0f + std::ldexp(1.0f, -20) : 1.0f);
      INFO(to_string(F) << " amax = max * 2^" << k << (above ? " * (1 + 2^-20)" : ""));
      float x[32];
      for (int j = 0; j < 32; ++j) x[j] = std::ldexp(max, k - 3) * (j % 2 ? -1.0f : 1.0f);
      x[5] = -amax;
      fp8<F> q[32];
      e8m0fnu code{0x77};
      const quantized<S> out{.data = row_major(q, 1, 32), .inverse = row_major(&code, 1, 1)};
      REQUIRE(host::quantize<S>(row_major(x, 1, 32), out) == status::success);
      const int want = k + 127 + above;
      CHECK(static_cast<int>(code.bits) == want);
      if (!above) CHECK(q[5].bits == (0x80u | traits(F).max_bits));
    }
  }
}

}  // namespace

TEST_CASE("edges: RCEIL of an exact power of two at the e8m0 underflow boundary",
          "[host][edges][mx]") {
  rceil_boundary<format::e4m3fn>();
  rceil_boundary<format::e4m3fnuz>();
  rceil_boundary<format::e5m2>();
  rceil_boundary<format::e5m2fnuz>();
}
