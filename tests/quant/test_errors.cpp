// Errors: every status validation can return comes back as that specific status, and nothing at
// all is written (every output buffer is poisoned first and compared whole afterwards): null
// pointers (each view, the offsets), bad shapes, offsets of the wrong length, bad strides,
// misalignment, 64-bit size overflow, offsets out of range / decreasing, run-time-built bad specs;
// the phase order of docs/semantics.md "Errors"; the dual calls validating both outputs before
// writing either; dequantize's checks.
#include <catch2/catch.hpp>

#include "quant_fixtures.hpp"

using namespace fp8q;
using fq::i64;

namespace {

constexpr i64 slack = 1 << 14;  // every buffer is this large, so mutated views stay inside it

// One valid quantize call with spec S on an M x N input, outputs poisoned.
template <spec S, class In = float>
struct qcall {
  using data_t = fp8<S.out>;
  using st_t = scale_t<S>;
  i64 M, N, G;
  std::vector<In> x;
  std::vector<data_t> q;
  std::vector<st_t> s, inv;
  std::vector<std::int32_t> ends;
  matrix_view<const In> in{};
  quantized<S> out{};
  quantize_args args{};

  qcall(i64 m, i64 n, i64 g = 0)
      : M(m), N(n), G(g), x(slack, fq::from_float<In>(1.5f)), q(slack, fq::poison_value<data_t>()),
        s(slack, fq::poison_value<st_t>()), inv(slack, fq::poison_value<st_t>()) {
    in = row_major<const In>(x.data(), M, N);
    out.data = row_major(q.data(), M, N);
    i64 sr = 0, sc = 0;
    fq::scale_extents(fq::ref_cfg_of<S>(), M, N, G, sr, sc);
    if (stores_multiplier(S)) out.scale = row_major(s.data(), sr, sc);
    if (stores_inverse(S)) out.inverse = row_major(inv.data(), sr, sc);
    if (S.granularity == granularity::group_row || S.granularity == granularity::group_col) {
      const i64 extent = S.granularity == granularity::group_row ? N : M;
      for (i64 k = 1; k <= G; ++k) ends.push_back(static_cast<std::int32_t>(extent * k / G));
      ends.resize(static_cast<std::size_t>(G) + 8, 0);  // room for longer counts
      args.groups = {ends.data(), G};
    }
  }
  status run() const { return host::quantize<S, In>(in, out, args); }
  bool untouched() const {
    for (const data_t& v : q)
      if (v.bits != fq::poison_byte) return false;
    for (const st_t& v : s)
      if (fq::raw_bits(v) != fq::poison_bits<st_t>()) return false;
    for (const st_t& v : inv)
      if (fq::raw_bits(v) != fq::poison_bits<st_t>()) return false;
    return true;
  }
};

template <class C, class F>
void expect_error(const char* what, status want, F mutate, i64 M = 4, i64 N = 6, i64 G = 0) {
  C c(M, N, G);
  mutate(c);
  INFO(what);
  const status got = c.run();
  CHECK(to_string(got) == std::string(to_string(want)));
  CHECK(c.untouched());
}

template <class C>
void expect_success(i64 M = 4, i64 N = 6, i64 G = 0) {
  C c(M, N, G);
  CHECK(c.run() == status::success);
}

template <class T>
const T* misalign(const T* p) {
  return reinterpret_cast<const T*>(reinterpret_cast<const char*>(p) + 1);
}
template <class T>
T* misalign(T* p) {
  return reinterpret_cast<T*>(reinterpret_cast<char*>(p) + 1);
}

constexpr spec row_both{.out = format::e4m3fn, .granularity = granularity::row,
                        .store = stored_scale::both};
constexpr spec row_mult{.out = format::e4m3fn, .granularity = granularity::row,
                        .store = stored_scale::multiplier};
constexpr spec tensor_inv{.out = format::e5m2, .granularity = granularity::tensor};
constexpr spec block_2x4{.out = format::e4m3fn, .granularity = granularity::block, .store = stored_scale::both,
                         .block_rows = 2, .block_cols = 4};
constexpr spec gcol{.out = format::e4m3fn, .granularity = granularity::group_col,
                    .store = stored_scale::both};
constexpr spec grow{.out = format::e4m3fn, .granularity = granularity::group_row,
                    .store = stored_scale::multiplier};
constexpr spec mx_rows = mx_spec(format::e4m3fn, 1, 32);
constexpr spec mx_cols = mx_spec(format::e4m3fn, 32, 1, e8m0_rounding::rceil);

using RB = qcall<row_both>;
using RM = qcall<row_mult>;
using TI = qcall<tensor_inv, bf16>;
using BK = qcall<block_2x4>;
using GC = qcall<gcol>;
using GR = qcall<grow, f16>;
using MXR = qcall<mx_rows, bf16>;

}  // namespace

TEST_CASE("errors: the unmutated calls succeed (controls)", "[host][errors]") {
  expect_success<RB>();
  expect_success<RM>();
  expect_success<TI>();
  expect_success<BK>(5, 9);
  expect_success<GC>(7, 3, 3);
  expect_success<GR>(3, 7, 2);
  expect_success<MXR>(2, 64);
  // views with no elements may be null; unused scale views are not checked
  expect_success<RB>(0, 6);
  {
    RB c(0, 6);
    c.in.data = nullptr;
    c.out.data.data = nullptr;
    c.out.scale.data = nullptr;
    c.out.inverse.data = nullptr;
    CHECK(c.run() == status::success);
  }
  {
    RM c(4, 6);
    c.out.inverse = matrix_view<float>{nullptr, -3, 99, 0, layout::row_major, 7, -1};  // garbage, unused
    CHECK(c.run() == status::success);
  }
}

TEST_CASE("errors: null_pointer for each pointer", "[host][errors]") {
  expect_error<RB>("input", status::null_pointer, [](RB& c) { c.in.data = nullptr; });
  expect_error<RB>("output data", status::null_pointer, [](RB& c) { c.out.data.data = nullptr; });
  expect_error<RB>("scale", status::null_pointer, [](RB& c) { c.out.scale.data = nullptr; });
  expect_error<RB>("inverse", status::null_pointer, [](RB& c) { c.out.inverse.data = nullptr; });
  expect_error<TI>("tensorwise inverse", status::null_pointer, [](TI& c) { c.out.inverse.data = nullptr; });
  expect_error<MXR>("MX codes", status::null_pointer, [](MXR& c) { c.out.inverse.data = nullptr; }, 2, 64);
  expect_error<GC>("group ends", status::null_pointer, [](GC& c) { c.args.groups.ends = nullptr; }, 7, 3, 3);
  expect_error<GR>("group ends (group_row)", status::null_pointer,
                   [](GR& c) { c.args.groups.ends = nullptr; }, 3, 7, 2);
}

TEST_CASE("errors: bad_shape variants", "[host][errors]") {
  expect_error<RB>("negative input rows", status::bad_shape, [](RB& c) { c.in.rows = -1; });
  expect_error<RB>("negative input cols", status::bad_shape, [](RB& c) { c.in.cols = -2; });
  expect_error<RB>("negative batch", status::bad_shape, [](RB& c) { c.in.batch = -1; });
  expect_error<RB>("batch 0 with non-null data", status::bad_shape, [](RB& c) {
    c.in.batch = 0;
    c.out.data.batch = 0;
    c.out.scale.batch = 0;
    c.out.inverse.batch = 0;
  });
  expect_error<RB>("output rows differ", status::bad_shape, [](RB& c) { c.out.data.rows += 1; });
  expect_error<RB>("output cols differ", status::bad_shape, [](RB& c) { c.out.data.cols -= 1; });
  expect_error<RB>("output batch differs", status::bad_shape, [](RB& c) {
    c.out.data = batched(c.out.data, 2);
  });
  expect_error<RB>("scale rows != M", status::bad_shape, [](RB& c) { c.out.scale.rows += 1; });
  expect_error<RB>("inverse cols != 1", status::bad_shape, [](RB& c) { c.out.inverse.cols = 2; });
  expect_error<RB>("scale batch differs", status::bad_shape, [](RB& c) { c.out.scale = batched(c.out.scale, 3); });
  expect_error<TI>("tensorwise scale (1, 2)", status::bad_shape, [](TI& c) { c.out.inverse.cols = 2; });
  expect_error<BK>("block scales floor(M/R) instead of ceil", status::bad_shape,
                   [](BK& c) { c.out.scale.rows = 2; }, 5, 9);  // ceil(5/2) = 3
  expect_error<BK>("block scales ceil(N/C) + 1", status::bad_shape,
                   [](BK& c) { c.out.inverse.cols = 4; }, 5, 9);  // ceil(9/4) = 3
  expect_error<MXR>("MX codes (2, 1) for a 2 x 64 input", status::bad_shape,
                    [](MXR& c) { c.out.inverse.cols = 1; }, 2, 64);
  expect_error<GC>("group_col scale cols != N", status::bad_shape,
                   [](GC& c) { c.out.scale.cols = 2; }, 7, 3, 3);
  expect_error<GR>("group_row scale cols != M", status::bad_shape,
                   [](GR& c) { c.out.scale.cols = 7; }, 3, 7, 2);
}

TEST_CASE("errors: bad_offsets_length", "[host][errors]") {
  expect_error<GC>("count != scale rows", status::bad_offsets_length,
                   [](GC& c) { c.args.groups.count = 4; }, 7, 3, 3);
  expect_error<GC>("count < 0", status::bad_offsets_length, [](GC& c) { c.args.groups.count = -1; }, 7, 3, 3);
  expect_error<GC>("scale rows != count", status::bad_offsets_length,
                   [](GC& c) { c.out.inverse.rows = 2; }, 7, 3, 3);
  expect_error<GR>("group_row count != G", status::bad_offsets_length,
                   [](GR& c) { c.args.groups.count = 1; }, 3, 7, 2);
  static const std::int32_t some_ends[2] = {1, 2};
  expect_error<RB>("offsets given to rowwise", status::bad_offsets_length,
                   [](RB& c) { c.args.groups = {some_ends, 2}; });
}

TEST_CASE("errors: bad_stride", "[host][errors]") {
  expect_error<RB>("row-major input ld < cols", status::bad_stride, [](RB& c) { c.in.ld = 5; });
  expect_error<RB>("column-major input ld < rows", status::bad_stride, [](RB& c) {
    c.in = col_major<const float>(c.x.data(), 4, 6, 3);
  });
  expect_error<RB>("ld 0 on an empty view", status::bad_stride, [](RB& c) { c.in.ld = 0; }, 0, 0);
  expect_error<RB>("output data ld < cols", status::bad_stride, [](RB& c) { c.out.data.ld = 2; });
  expect_error<RB>("column-major output ld < rows", status::bad_stride, [](RB& c) {
    c.out.data = col_major(c.q.data(), 4, 6, 3);
  });
  expect_error<RB>("scale ld 0", status::bad_stride, [](RB& c) { c.out.scale.ld = 0; });
  expect_error<RB>("overlapping batch items", status::bad_stride, [](RB& c) {
    c.in = batched(c.in, 2, 23);  // one 4 x 6 matrix spans 24 elements
    c.out.data = batched(c.out.data, 2);
    c.out.scale = batched(c.out.scale, 2);
    c.out.inverse = batched(c.out.inverse, 2);
  });
  expect_error<RB>("negative batch stride", status::bad_stride, [](RB& c) {
    c.in = batched(c.in, 2);
    c.out.data = batched(c.out.data, 2);
    c.out.scale = batched(c.out.scale, 2);
    c.out.inverse = batched(c.out.inverse, 2);
    c.out.data.batch_stride = -24;
  });
}

TEST_CASE("errors: misaligned", "[host][errors]") {
  expect_error<RB>("f32 input", status::misaligned, [](RB& c) { c.in.data = misalign(c.in.data); });
  expect_error<TI>("bf16 input", status::misaligned, [](TI& c) { c.in.data = misalign(c.in.data); });
  expect_error<GR>("f16 input", status::misaligned, [](GR& c) { c.in.data = misalign(c.in.data); }, 3, 7, 2);
  expect_error<RB>("f32 scale", status::misaligned, [](RB& c) { c.out.scale.data = misalign(c.out.scale.data); });
  expect_error<RB>("f32 inverse", status::misaligned,
                   [](RB& c) { c.out.inverse.data = misalign(c.out.inverse.data); });
  expect_error<GC>("int32 group ends", status::misaligned,
                   [](GC& c) { c.args.groups.ends = misalign(c.args.groups.ends); }, 7, 3, 3);
}

TEST_CASE("errors: size_overflow", "[host][errors]") {
  constexpr i64 big = i64{1} << 40;
  expect_error<TI>("span overflows int64 elements", status::size_overflow, [](TI& c) {
    c.in = row_major<const bf16>(c.x.data(), big, big);  // (2^40 - 1) * 2^40 + 2^40 elements
    c.out.data = row_major(c.q.data(), big, big);
  });
  expect_error<TI>("span fits in elements but not in bytes", status::size_overflow, [](TI& c) {
    const i64 r = i64{1} << 31;  // 2^62 bf16 elements = 2^63 bytes
    c.in = row_major<const bf16>(c.x.data(), r, r);
    c.out.data = row_major(c.q.data(), r, r);
  });
  expect_error<TI>("batch * span overflows", status::size_overflow, [](TI& c) {
    c.in = batched(row_major<const bf16>(c.x.data(), 4, 6), i64{1} << 61);
    c.out.data = batched(row_major(c.q.data(), 4, 6), i64{1} << 61);
    c.out.inverse = batched(c.out.inverse, i64{1} << 61);
  });
}

TEST_CASE("errors: offsets_out_of_range and offsets_not_monotonic", "[host][errors]") {
  // M = 7 rows, G = 3, valid ends {2, 4, 7}
  expect_error<GC>("end beyond M", status::offsets_out_of_range, [](GC& c) { c.ends[2] = 8; }, 7, 3, 3);
  expect_error<GC>("negative end", status::offsets_out_of_range, [](GC& c) { c.ends[0] = -1; }, 7, 3, 3);
  expect_error<GC>("decreasing ends", status::offsets_not_monotonic,
                   [](GC& c) { c.ends[0] = 3; c.ends[1] = 2; }, 7, 3, 3);
  expect_error<GC>("range is checked before order at the same index", status::offsets_out_of_range,
                   [](GC& c) { c.ends[0] = 3; c.ends[1] = -1; }, 7, 3, 3);
  expect_error<GC>("the first problem in index order wins", status::offsets_not_monotonic,
                   [](GC& c) { c.ends[0] = 3; c.ends[1] = 2; c.ends[2] = 99; }, 7, 3, 3);
  expect_error<GR>("group_row: end beyond N", status::offsets_out_of_range,
                   [](GR& c) { c.ends[1] = 8; }, 3, 7, 2);
  // an end equal to the extent, and equal neighbours (empty groups), are fine
  {
    GC c(7, 3, 3);
    c.ends[0] = 0;
    c.ends[1] = 0;
    c.ends[2] = 7;
    CHECK(c.run() == status::success);
  }
}

TEST_CASE("errors: phase order", "[host][errors]") {
  // null_pointer (phase 2) before bad_shape (3) before bad_offsets_length (4) before bad_stride
  // (5) before misaligned (6) before size_overflow (7) before offset values (8)
  expect_error<GC>("null + bad shape", status::null_pointer, [](GC& c) {
    c.out.scale.data = nullptr;
    c.out.data.rows = 1;
  }, 7, 3, 3);
  expect_error<GC>("bad shape + bad offsets length", status::bad_shape, [](GC& c) {
    c.out.data.cols = 1;
    c.args.groups.count = 2;
  }, 7, 3, 3);
  expect_error<GC>("bad offsets length + bad stride", status::bad_offsets_length, [](GC& c) {
    c.args.groups.count = 2;
    c.in.ld = 1;
  }, 7, 3, 3);
  expect_error<GC>("bad stride + misaligned", status::bad_stride, [](GC& c) {
    c.in.ld = 1;
    c.out.scale.data = misalign(c.out.scale.data);
  }, 7, 3, 3);
  expect_error<GC>("misaligned + decreasing offsets", status::misaligned, [](GC& c) {
    c.out.inverse.data = misalign(c.out.inverse.data);
    c.ends[0] = 5;
  }, 7, 3, 3);
  expect_error<RB>("null input + zero output ld", status::null_pointer, [](RB& c) {
    c.in.data = nullptr;
    c.out.data.ld = 0;
  });
}

TEST_CASE("errors: run-time specs that check_spec rejects give unsupported_type", "[host][errors]") {
  spec s{};
  CHECK(validate_spec(s) == status::success);
  s.out = format::e8m0fnu;
  CHECK(validate_spec(s) == status::unsupported_type);
  s = spec{};
  s.granularity = granularity::block;
  s.block_rows = 0;
  s.block_cols = 128;
  CHECK(validate_spec(s) == status::unsupported_type);
  s = spec{};
  s.block_cols = 32;  // on rowwise
  CHECK(validate_spec(s) == status::unsupported_type);
  s = spec{};
  s.scale = scale_format::e8m0;
  CHECK(validate_spec(s) == status::unsupported_type);
  s = mx_spec(format::e4m3fn, 1, 32);
  s.store = stored_scale::both;
  CHECK(validate_spec(s) == status::unsupported_type);
  s = mx_spec(format::e4m3fn, 1, 32);
  s.power_of_2 = true;
  CHECK(validate_spec(s) == status::unsupported_type);
  s = spec{};
  s.eps = -1.0f;
  CHECK(validate_spec(s) == status::unsupported_type);
  s.eps = std::numeric_limits<float>::quiet_NaN();
  CHECK(validate_spec(s) == status::unsupported_type);
  s.eps = std::numeric_limits<float>::infinity();
  CHECK(validate_spec(s) == status::unsupported_type);
}

TEST_CASE("errors: dual calls validate both outputs before writing either", "[host][errors]") {
  SECTION("quantize_dual: second tensor bad") {
    GC a(7, 3, 3), b(7, 5, 3);
    b.out.data.rows = 6;
    CHECK(host::quantize_dual<gcol>(a.in, a.out, b.in, b.out, a.args) == status::bad_shape);
    CHECK(a.untouched());
    CHECK(b.untouched());
  }
  SECTION("quantize_dual: second tensor's offsets out of its range") {
    GC a(7, 3, 3), b(5, 3, 3);  // the shared ends {2, 4, 7} exceed b's 5 rows
    CHECK(host::quantize_dual<gcol>(a.in, a.out, b.in, b.out, a.args) == status::offsets_out_of_range);
    CHECK(a.untouched());
    CHECK(b.untouched());
  }
  SECTION("quantize_mx_dual: column output bad") {
    MXR r(64, 64);
    qcall<mx_cols, bf16> c(64, 64);
    c.out.inverse.data = nullptr;
    CHECK(host::quantize_mx_dual<mx_rows, mx_cols>(r.in, r.out, c.out) == status::null_pointer);
    CHECK(r.untouched());
    CHECK(c.untouched());
  }
  SECTION("quantize_mx_dual: row output bad") {
    MXR r(64, 64);
    qcall<mx_cols, bf16> c(64, 64);
    r.out.data.ld = 3;
    CHECK(host::quantize_mx_dual<mx_rows, mx_cols>(r.in, r.out, c.out) == status::bad_stride);
    CHECK(r.untouched());
    CHECK(c.untouched());
  }
}

TEST_CASE("errors: dequantize validates and writes nothing on error", "[host][errors]") {
  // a valid quantized block-2x4 input (5 x 9), dequantized into a poisoned f32 buffer
  BK src(5, 9);
  REQUIRE(src.run() == status::success);
  const float poison = fq::float_of(fq::poison_f32);
  auto attempt = [&](const char* what, status want, auto mutate) {
    std::vector<float> y(slack, poison);
    matrix_view<float> out = row_major(y.data(), 5, 9);
    quantized<block_2x4> in = src.out;
    mutate(in, out);
    INFO(what);
    CHECK(to_string(host::dequantize<block_2x4>(in, out)) == std::string(to_string(want)));
    bool untouched = true;
    for (float v : y) untouched = untouched && fq::bits_of(v) == fq::poison_f32;
    CHECK(untouched);
  };
  attempt("output null", status::null_pointer, [](auto&, auto& out) { out.data = nullptr; });
  attempt("data null", status::null_pointer, [](auto& in, auto&) { in.data.data = nullptr; });
  attempt("inverse null", status::null_pointer, [](auto& in, auto&) { in.inverse.data = nullptr; });
  attempt("output extents", status::bad_shape, [](auto&, auto& out) { out.cols = 8; });
  attempt("inverse extents", status::bad_shape, [](auto& in, auto&) { in.inverse.rows = 2; });
  attempt("output ld", status::bad_stride, [](auto&, auto& out) { out.ld = 8; });
  attempt("output misaligned", status::misaligned, [](auto&, auto& out) { out.data = misalign(out.data); });
  {
    // only the scale view dequantization reads (the inverse, stored here) is checked
    std::vector<float> y(45);
    quantized<block_2x4> in = src.out;
    in.scale.data = nullptr;
    CHECK(host::dequantize<block_2x4>(in, row_major(y.data(), 5, 9)) == status::success);
  }
}

TEST_CASE("errors: grouped dequantize checks the offsets too", "[host][errors]") {
  GC src(7, 3, 3);
  REQUIRE(src.run() == status::success);
  auto attempt = [&](const char* what, status want, auto mutate) {
    std::vector<float> y(slack, fq::float_of(fq::poison_f32));
    std::vector<std::int32_t> ends = src.ends;
    quantize_args args;
    args.groups = {ends.data(), 3};
    mutate(args, ends);
    INFO(what);
    CHECK(to_string(host::dequantize<gcol>(src.out, row_major(y.data(), 7, 3), args)) ==
          std::string(to_string(want)));
    bool untouched = true;
    for (float v : y) untouched = untouched && fq::bits_of(v) == fq::poison_f32;
    CHECK(untouched);
  };
  attempt("count != G", status::bad_offsets_length, [](quantize_args& a, auto&) { a.groups.count = 2; });
  attempt("ends null", status::null_pointer, [](quantize_args& a, auto&) { a.groups.ends = nullptr; });
  attempt("end beyond M", status::offsets_out_of_range, [](quantize_args&, auto& e) { e[2] = 9; });
  attempt("decreasing", status::offsets_not_monotonic, [](quantize_args&, auto& e) { e[1] = 1; });
}
