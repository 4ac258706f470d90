// fp8q — the spec: WHAT a quantization produces. A spec fixes every output bit; a tuning
// (tuning.hpp) only changes speed. Specs are constexpr values used as template arguments, and
// nonsense specs stop the build with a sentence (check_spec).
#pragma once

#include <cstdint>
#include <type_traits>

#include "fp8q/config.hpp"
#include "fp8q/convert.hpp"
#include "fp8q/format.hpp"

namespace fp8q {

/// Which elements share one scale (see docs/semantics.md for the index maps).
enum class granularity : std::uint8_t {
  tensor,     ///< one scale per matrix (per batch item)
  row,        ///< one scale per row                         scales (M, 1)
  col,        ///< one scale per column                      scales (1, N)
  block,      ///< one scale per block_rows x block_cols tile scales (ceil(M/R), ceil(N/C))
  group_row,  ///< per row, per column group (offsets along columns)  scales (G, M)
  group_col,  ///< per column, per row group (offsets along rows)     scales (G, N)
};

/// Number format of the stored scales.
enum class scale_format : std::uint8_t {
  f32,   ///< an f32 multiplier from amax (tensor/row/col/block/group)
  e8m0,  ///< an e8m0fnu power of two (MX); requires granularity::block
};

/// How an MX block's e8m0 exponent is chosen from its amax.
enum class e8m0_rounding : std::uint8_t {
  floor,  ///< OCP MX v1.0: 2^(floor(log2 amax) - emax(format)); may clip the largest values
  rceil,  ///< round amax / max up to a power of two (TransformerEngine, TorchAO MoE); never clips
};

/// Which scale(s) a quantization writes.
enum class stored_scale : std::uint8_t {
  multiplier,  ///< s, with q = encode(x * s)          (TorchAO convention)
  inverse,     ///< 1/s, what a GEMM multiplies back   (MX scales are always this)
  both,        ///< s and 1/s                          (TransformerEngine convention)
};

/// An f32 constant that can live in a template argument (older clang rejects float members
/// in class-type template arguments). Converts implicitly from float.
struct f32_constant {
  std::uint32_t bits = 0;
  constexpr f32_constant() = default;
  constexpr f32_constant(float f) : bits(__builtin_bit_cast(std::uint32_t, f)) {}  // NOLINT
  constexpr f32_constant(double d) : f32_constant(static_cast<float>(d)) {}       // NOLINT
  // From raw bits: nvcc's generated host stubs spell class-type template arguments this way.
  constexpr f32_constant(std::uint32_t raw) : bits(raw) {}  // NOLINT
  FP8Q_HD constexpr float value() const { return __builtin_bit_cast(float, bits); }
  friend constexpr bool operator==(f32_constant, f32_constant) = default;
};

/// What to produce. Designated initializers read well:
///   constexpr fp8q::spec rowwise{.out = fp8q::format::e4m3fnuz,
///                                .granularity = fp8q::granularity::row};
/// The one-byte fields come first and the four-byte ones last, so a spec has no padding (a
/// class with padding is misread as a template argument by clang: see template_argument_safe).
struct spec {
  fp8q::format out = fp8q::format::e4m3fn;
  fp8q::granularity granularity = fp8q::granularity::row;
  fp8q::scale_format scale = fp8q::scale_format::f32;
  bool power_of_2 = false;  ///< round s down to a power of two (exponent mask)
  fp8q::e8m0_rounding mx_rounding = fp8q::e8m0_rounding::floor;
  stored_scale store = stored_scale::inverse;
  fp8q::rounding rounding = fp8q::rounding::nearest_even;
  fp8q::overflow overflow = fp8q::overflow::saturate;
  int block_rows = 0;         ///< granularity::block only
  int block_cols = 0;         ///< granularity::block only
  f32_constant eps = 1e-12f;  ///< s = max / max(amax, eps)

  friend constexpr bool operator==(const spec&, const spec&) = default;
};

namespace detail {
/// Whether T may be the type of a class-type template parameter in fp8q: every bit of it is
/// value (no padding). clang 14-19 compute member offsets of a template parameter object with
/// padding against the wrong LLVM type (llvm/llvm-project#146272): a member read after interior
/// padding returns the bytes of another member, on the host and on AMD GPUs alike
/// (docs/design.md, "Class-type template arguments").
template <class T>
inline constexpr bool template_argument_safe = std::has_unique_object_representations_v<T>;
}  // namespace detail

static_assert(detail::template_argument_safe<spec>,
              "fp8q: spec must have no padding (clang misreads padded template arguments)");
/// MX spec: blocks of 1x32 (along rows) or 32x1 (along columns) with e8m0 scales.
constexpr spec mx_spec(format out, int block_rows, int block_cols,
                       e8m0_rounding r = e8m0_rounding::floor) {
  spec s{};
  s.out = out;
  s.granularity = granularity::block;
  s.block_rows = block_rows;
  s.block_cols = block_cols;
  s.scale = scale_format::e8m0;
  s.mx_rounding = r;
  s.store = stored_scale::inverse;
  return s;
}

/// Why a spec is rejected (none when it is fine).
enum class spec_error : std::uint8_t {
  none,
  e8m0_data,
  bad_block,
  block_on_non_block,
  e8m0_needs_block,
  e8m0_stores_inverse_only,
  e8m0_power_of_2,
  bad_eps,
};

/// Validation shared by check_spec (compile time) and run-time dispatch.
constexpr spec_error validate(const spec& s) {
  if (s.out == format::e8m0fnu) return spec_error::e8m0_data;
  if (s.granularity == granularity::block) {
    if (s.block_rows <= 0 || s.block_cols <= 0) return spec_error::bad_block;
  } else if (s.block_rows != 0 || s.block_cols != 0) {
    return spec_error::block_on_non_block;
  }
  if (s.scale == scale_format::e8m0) {
    if (s.granularity != granularity::block) return spec_error::e8m0_needs_block;
    if (s.store != stored_scale::inverse) return spec_error::e8m0_stores_inverse_only;
    if (s.power_of_2) return spec_error::e8m0_power_of_2;
  }
  const float e = s.eps.value();
  if (!(e > 0.0f) || e > 3.4e38f) return spec_error::bad_eps;  // also rejects NaN
  return spec_error::none;
}

/// Compile-time gate: every entry point calls check_spec<S>() so a bad spec fails to build with
/// one of these sentences.
template <spec S>
constexpr void check_spec() {
  constexpr spec_error e = validate(S);
  static_assert(e != spec_error::e8m0_data,
                "fp8q: e8m0fnu is a scale format; choose e4m3fn, e4m3fnuz, e5m2 or e5m2fnuz as .out");
  static_assert(e != spec_error::bad_block,
                "fp8q: granularity::block needs block_rows > 0 and block_cols > 0");
  static_assert(e != spec_error::block_on_non_block,
                "fp8q: block_rows/block_cols are only meaningful with granularity::block");
  static_assert(e != spec_error::e8m0_needs_block,
                "fp8q: e8m0 (MX) scales need granularity::block (use mx_spec(format, 1, 32))");
  static_assert(e != spec_error::e8m0_stores_inverse_only,
                "fp8q: an e8m0 scale is the dequantization factor; use store = stored_scale::inverse");
  static_assert(e != spec_error::e8m0_power_of_2,
                "fp8q: e8m0 scales are powers of two already; leave power_of_2 false");
  static_assert(e != spec_error::bad_eps, "fp8q: eps must be a positive finite number");
}

/// Element type of the stored scales of a spec.
template <spec S>
using scale_t = std::conditional_t<S.scale == scale_format::e8m0, e8m0fnu, float>;

constexpr bool stores_multiplier(const spec& s) { return s.store != stored_scale::inverse; }
constexpr bool stores_inverse(const spec& s) { return s.store != stored_scale::multiplier; }

constexpr const char* to_string(granularity g) {
  switch (g) {
    case granularity::tensor: return "tensorwise";
    case granularity::row: return "rowwise";
    case granularity::col: return "colwise";
    case granularity::block: return "blockwise";
    case granularity::group_row: return "group_rowwise";
    case granularity::group_col: return "group_colwise";
  }
  return "?";
}

}  // namespace fp8q
