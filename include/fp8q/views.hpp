// fp8q — non-owning views: strided 2D matrices (row- or column-major, any leading dimension),
// batches of them (3D expert weights), group offsets, and the quantized output bundle.
#pragma once

#include <cstdint>

#include "fp8q/config.hpp"
#include "fp8q/format.hpp"
#include "fp8q/spec.hpp"

namespace fp8q {

/// Storage order of a matrix view.
enum class layout : std::uint8_t {
  row_major,  ///< element (r, c) at r * ld + c
  col_major,  ///< element (r, c) at c * ld + r
};

/// A batch of `batch` matrices of rows x cols elements of T. Element (b, r, c) lives at
/// data[b * batch_stride + (row_major ? r * ld + c : c * ld + r)]. Extents are logical: a
/// column-major view of a K x N matrix has rows = K, cols = N.
template <class T>
struct matrix_view {
  T* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;  ///< elements between consecutive rows (row-major) / columns (col-major)
  layout order = layout::row_major;
  std::int64_t batch = 1;
  std::int64_t batch_stride = 0;  ///< elements between consecutive matrices

  FP8Q_HD constexpr std::int64_t offset(std::int64_t b, std::int64_t r, std::int64_t c) const {
    return b * batch_stride + (order == layout::row_major ? r * ld + c : c * ld + r);
  }
  FP8Q_HD constexpr T& operator()(std::int64_t b, std::int64_t r, std::int64_t c) const {
    return data[offset(b, r, c)];
  }
  FP8Q_HD constexpr T& operator()(std::int64_t r, std::int64_t c) const { return data[offset(0, r, c)]; }
  /// The same memory with const elements.
  constexpr matrix_view<const T> as_const() const {
    return {data, rows, cols, ld, order, batch, batch_stride};
  }
  constexpr bool empty() const { return rows == 0 || cols == 0 || batch == 0; }
};

/// Dense row-major view (ld defaults to cols).
template <class T>
constexpr matrix_view<T> row_major(T* data, std::int64_t rows, std::int64_t cols,
                                   std::int64_t ld = -1) {
  return {data, rows, cols, ld < 0 ? cols : ld, layout::row_major, 1, 0};
}
/// Dense column-major view (ld defaults to rows).
template <class T>
constexpr matrix_view<T> col_major(T* data, std::int64_t rows, std::int64_t cols,
                                   std::int64_t ld = -1) {
  return {data, rows, cols, ld < 0 ? rows : ld, layout::col_major, 1, 0};
}
/// The view repeated `batch` times, `batch_stride` elements apart (dense by default).
template <class T>
constexpr matrix_view<T> batched(matrix_view<T> v, std::int64_t batch,
                                 std::int64_t batch_stride = -1) {
  v.batch = batch;
  v.batch_stride = batch_stride >= 0 ? batch_stride
                                     : (v.order == layout::row_major ? v.rows : v.cols) * v.ld;
  return v;
}

/// Group boundaries as int32 cumulative END offsets of length `count` (TorchAO / _grouped_mm
/// convention): group g spans [g == 0 ? 0 : ends[g-1], ends[g]). Host memory for the host
/// backend, device memory for the GPU backends (read on the device, never synchronized).
/// With align > 1 the output is padded for a grouped GEMM (16 for FP8 `_scaled_grouped_mm`, 32
/// for MXFP8, 128 for DeepGEMM's contiguous layout): group g's data starts at the padded offset
/// sum over k < g of round_up(size_k, align) along the grouped axis of the output, the
/// round_up(size_g, align) - size_g lines after it are written as zero bytes, and the output's
/// grouped extent must be at least the input's + count * (align - 1) (docs/semantics.md, "Padded
/// groups").
struct group_offsets {
  const std::int32_t* ends = nullptr;   ///< [count] cumulative end offsets
  std::int64_t count = 0;
  std::int64_t align = 1;               ///< 1: the output is packed like the input
  std::int32_t* padded_ends = nullptr;  ///< align > 1, optional: [count] padded end offsets, written
};

namespace detail {
/// Lines the output of a padded grouped call needs along its grouped axis: every group may grow
/// by align - 1. False when that does not fit in int64.
constexpr bool padded_capacity(std::int64_t extent, const group_offsets& g, std::int64_t* out) {
  if (g.align <= 1) {
    *out = extent;
    return true;
  }
  std::int64_t grow = 0;
  return !__builtin_mul_overflow(g.count, g.align - 1, &grow) &&
         !__builtin_add_overflow(extent, grow, out);
}
}  // namespace detail

/// What a quantization writes: the FP8 data and the scale(s) the spec stores.
/// Scale matrix extents per granularity (per batch item; batch_stride as in any view):
///   tensor (1, 1)  row (M, 1)  col (1, N)  block (ceil(M/R), ceil(N/C))
///   group_row (G, M)  group_col (G, N)
template <spec S>
struct quantized {
  using data_t = fp8<S.out>;
  using scale_type = scale_t<S>;
  // Default member initializers: `{.data = q, .inverse = inv}` leaves `scale` empty without a
  // -Wmissing-field-initializers warning (g++ 12, clang 19).
  matrix_view<data_t> data{};         ///< same logical extents as the input
  matrix_view<scale_type> scale{};    ///< s (used when S.store is multiplier or both)
  matrix_view<scale_type> inverse{};  ///< 1/s (used when S.store is inverse or both; MX codes)
};

/// Input element types accepted everywhere.
template <class T>
inline constexpr bool is_input_type_v =
    std::is_same_v<std::remove_const_t<T>, float> || std::is_same_v<std::remove_const_t<T>, bf16> ||
    std::is_same_v<std::remove_const_t<T>, f16>;

}  // namespace fp8q
