// Class-type template arguments read at run time. clang (14-19) misreads members of a template
// parameter object whose type has padding (llvm/llvm-project#146272): under clang an all-zero
// row once quantized to NaN codes because `S.eps.value()` read other members' bytes. fp8q's
// rule is that such types have no padding (detail::template_argument_safe, asserted where each
// type is defined; tests/host/check_template_arguments.py finds every class type used as a
// template parameter and requires that assertion). This test reads every member of specs and
// tunings with distinct values in every field through the template parameter at run time, in
// a function the optimizer may not fold, and compares with the constant: it fails under a
// compiler that misreads them again. Built and run with every host compiler (g++, clang-19).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

#include "fp8q/quantize.hpp"
#include "fp8q/tuning.hpp"

using namespace fp8q;

namespace {

// Keep the reads at run time: the member values leave through a volatile sink one by one.
template <class T>
[[gnu::noinline]] std::uint32_t pass(T v) {
  volatile std::uint32_t sink = 0;
  if constexpr (sizeof(T) == 4) {
    std::uint32_t u = 0;
    std::memcpy(&u, &v, 4);
    sink = u;
  } else {
    sink = static_cast<std::uint32_t>(v);
  }
  return sink;
}

template <spec S>
[[gnu::noinline]] spec read_spec() {
  spec r{};
  r.out = static_cast<format>(pass(S.out));
  r.granularity = static_cast<granularity>(pass(S.granularity));
  r.scale = static_cast<scale_format>(pass(S.scale));
  r.power_of_2 = pass(S.power_of_2) != 0;
  r.mx_rounding = static_cast<e8m0_rounding>(pass(S.mx_rounding));
  r.store = static_cast<stored_scale>(pass(S.store));
  r.rounding = static_cast<rounding>(pass(S.rounding));
  r.overflow = static_cast<overflow>(pass(S.overflow));
  r.block_rows = static_cast<int>(pass(S.block_rows));
  r.block_cols = static_cast<int>(pass(S.block_cols));
  r.eps = f32_constant{pass(S.eps.value())};  // through the member function, as the engines read it
  return r;
}

template <tuning T>
[[gnu::noinline]] tuning read_tuning() {
  tuning r{};
  r.threads = static_cast<std::int16_t>(pass(T.threads));
  r.tile_rows = static_cast<std::int16_t>(pass(T.tile_rows));
  r.tile_cols = static_cast<std::int16_t>(pass(T.tile_cols));
  r.store = static_cast<store_path>(pass(T.store));
  r.amax_order = static_cast<memory_order>(pass(T.amax_order));
  r.amax_scope = static_cast<memory_scope>(pass(T.amax_scope));
  r.convert = static_cast<convert_path>(pass(T.convert));
  r.path = static_cast<gpu_path>(pass(T.path));
  r.units = static_cast<std::uint8_t>(pass(T.units));
  return r;
}

// Every field differs from its default and from its neighbours.
constexpr spec odd_spec{.out = format::e5m2fnuz, .granularity = granularity::block,
                        .scale = scale_format::f32, .power_of_2 = true,
                        .mx_rounding = e8m0_rounding::rceil, .store = stored_scale::both,
                        .rounding = rounding::stochastic, .overflow = overflow::propagate,
                        .block_rows = 3, .block_cols = 129, .eps = 1.5e-7f};
constexpr spec default_spec{};
constexpr spec mx = mx_spec(format::e4m3fnuz, 32, 1, e8m0_rounding::rceil);

constexpr tuning odd_tuning{.threads = 96, .tile_rows = 48, .tile_cols = 80,
                            .store = store_path::staged, .amax_order = memory_order::seq_cst,
                            .amax_scope = memory_scope::system, .convert = convert_path::hardware,
                            .path = gpu_path::col_streaming, .units = 5};

}  // namespace

TEST_CASE("template arguments: every spec member reads back at run time", "[host][template]") {
  CHECK(read_spec<odd_spec>() == odd_spec);
  CHECK(read_spec<default_spec>() == default_spec);
  CHECK(read_spec<mx>() == mx);
  CHECK(read_spec<odd_spec>().eps.bits == f32_constant{1.5e-7f}.bits);
  CHECK(read_spec<default_spec>().eps.bits == 0x2b8cbcccu);  // 1e-12f
}

TEST_CASE("template arguments: every tuning member reads back at run time", "[host][template]") {
  CHECK(read_tuning<odd_tuning>() == odd_tuning);
  CHECK(read_tuning<tuning{}>() == tuning{});
}

TEST_CASE("template arguments: the types used as template arguments have no padding",
          "[host][template]") {
  STATIC_REQUIRE(detail::template_argument_safe<spec>);
  STATIC_REQUIRE(sizeof(spec) == 20);
}

TEST_CASE("template arguments: an all-zero row takes the eps scale under every compiler",
          "[host][template]") {
  // The case clang got wrong: rowwise e4m3fn of a zero row. amax 0 -> s = 448 / 1e-12f
  // (0x57cbba10), 1/s = 2.23214e-15 (0x2720d7c5), codes 00 (+0) / 80 (-0); clang with the
  // padded spec wrote 7F 7F 7F 7F (NaN codes) and inverse 0.
  constexpr spec rowwise{.out = format::e4m3fn, .granularity = granularity::row};
  const float x[8] = {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, -2.0f, 0.0f, 0.0f};
  e4m3fn q[8];
  float inv[2] = {-1.0f, -1.0f};
  const quantized<rowwise> out{.data = row_major(q, 2, 4), .inverse = row_major(inv, 2, 1)};
  REQUIRE(host::quantize<rowwise>(row_major(x, 2, 4), out) == status::success);
  for (int k = 0; k < 4; ++k) CHECK(q[k].bits == 0x00);
  std::uint32_t inv_bits = 0;
  std::memcpy(&inv_bits, &inv[0], 4);
  CHECK(inv_bits == 0x2720d7c5u);
  CHECK(inv[0] == Approx(2.23214e-15f).epsilon(1e-5));
  // row 1: amax 2 -> s = 224, 1 -> 224 = 0x76, -2 -> -448 = 0xFE
  CHECK(q[4].bits == 0x76);
  CHECK(q[5].bits == 0xFE);
  CHECK(inv[1] == 1.0f / 224.0f);
}
