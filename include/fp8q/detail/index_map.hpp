// fp8q — index maps: which elements share one scale, and where that scale is stored. Every
// granularity is two axis maps (how the rows axis and the columns axis are cut into scaling
// units) plus whether the scale matrix is indexed (row unit, column unit) or the transpose.
// Validation, the host backend and the GPU kernels all use these maps, so they cannot disagree.
//
//   granularity  rows axis          cols axis          scale(sr, sc) of unit (i, j)  scales
//   tensor       whole              whole              (i, j) = (0, 0)               (1, 1)
//   row          uniform 1          whole              (i, 0)                        (M, 1)
//   col          whole              uniform 1          (0, j)                        (1, N)
//   block R x C  uniform R          uniform C          (i, j)                        (ceil(M/R), ceil(N/C))
//   group_row    uniform 1          grouped (ends, G)  (j, i) = (g, r)               (G, M)
//   group_col    grouped (ends, G)  uniform 1          (i, j) = (g, c)               (G, N)
#pragma once

#include <cstdint>

#include "fp8q/config.hpp"
#include "fp8q/spec.hpp"

namespace fp8q::detail {

/// How one axis of a matrix is cut into scaling units.
enum class axis_kind : std::uint8_t {
  whole,    ///< one unit spanning the axis (count 1, even when the extent is 0)
  uniform,  ///< units of `size` elements; the last one may be partial
  grouped,  ///< units from int32 cumulative end offsets; elements past the last end are in none
};

/// One axis of the unit grid. For grouped axes `ends` is read by begin/end only (host
/// memory on the host, device memory in a kernel); offsets outside [0, extent] are clamped so a
/// kernel never leaves the matrix even when its (unvalidated) device offsets are garbage.
struct axis_map {
  axis_kind kind = axis_kind::whole;
  std::int64_t extent = 0;              ///< elements along this axis
  std::int64_t size = 1;                ///< uniform: elements per unit (> 0)
  const std::int32_t* ends = nullptr;   ///< grouped: [groups] cumulative end offsets
  std::int64_t groups = 0;              ///< grouped: number of groups G

  /// Number of units along the axis.
  FP8Q_HD constexpr std::int64_t count() const {
    switch (kind) {
      case axis_kind::whole: return 1;
      // (extent - 1) / size + 1 rather than (extent + size - 1) / size: no overflow for an
      // extent near INT64_MAX (validation builds the map before it checks sizes)
      case axis_kind::uniform: return extent > 0 ? (extent - 1) / size + 1 : 0;
      case axis_kind::grouped: return groups;
    }
    return 0;
  }
  /// First element of unit i.
  FP8Q_HD constexpr std::int64_t begin(std::int64_t i) const {
    switch (kind) {
      case axis_kind::whole: return 0;
      case axis_kind::uniform: return i * size;
      case axis_kind::grouped: return i == 0 ? 0 : clamp_offset(ends[i - 1]);
    }
    return 0;
  }
  /// One past the last element of unit i (never below begin(i): a bad offset gives an empty unit).
  FP8Q_HD constexpr std::int64_t end(std::int64_t i) const {
    switch (kind) {
      case axis_kind::whole: return extent;
      case axis_kind::uniform: return extent - i * size > size ? (i + 1) * size : extent;
      case axis_kind::grouped: {
        const std::int64_t b = begin(i);
        const std::int64_t e = clamp_offset(ends[i]);
        return e > b ? e : b;
      }
    }
    return 0;
  }

 private:
  FP8Q_HD constexpr std::int64_t clamp_offset(std::int32_t v) const {
    return v < 0 ? 0 : (v > extent ? extent : static_cast<std::int64_t>(v));
  }
};

/// The unit grid of one matrix (per batch item) and where each unit's scale is stored.
struct scale_map {
  axis_map rows;            ///< units along the matrix rows: index i
  axis_map cols;            ///< units along the matrix columns: index j
  bool transposed = false;  ///< scale of unit (i, j) at (j, i) (group_row: scales (G, M))

  /// Extents of the scale matrix (per batch item).
  FP8Q_HD constexpr std::int64_t scale_rows() const { return transposed ? cols.count() : rows.count(); }
  FP8Q_HD constexpr std::int64_t scale_cols() const { return transposed ? rows.count() : cols.count(); }
  /// Scale coordinates of unit (i, j).
  FP8Q_HD constexpr std::int64_t scale_row(std::int64_t i, std::int64_t j) const { return transposed ? j : i; }
  FP8Q_HD constexpr std::int64_t scale_col(std::int64_t i, std::int64_t j) const { return transposed ? i : j; }
  /// True when unit (i, j) covers no element: it writes nothing, neither data nor scale.
  FP8Q_HD constexpr bool unit_empty(std::int64_t i, std::int64_t j) const {
    return rows.end(i) <= rows.begin(i) || cols.end(j) <= cols.begin(j);
  }
};

/// The map of spec `s` for a rows x cols matrix. `ends`/`groups` are the group offsets (used by
/// group_row / group_col only; `ends` is not read here, so it may be device memory).
FP8Q_HD constexpr scale_map make_scale_map(const spec& s, std::int64_t rows, std::int64_t cols,
                                           const std::int32_t* ends, std::int64_t groups) {
  const axis_map whole_rows{axis_kind::whole, rows, 1, nullptr, 0};
  const axis_map whole_cols{axis_kind::whole, cols, 1, nullptr, 0};
  const axis_map each_row{axis_kind::uniform, rows, 1, nullptr, 0};
  const axis_map each_col{axis_kind::uniform, cols, 1, nullptr, 0};
  switch (s.granularity) {
    case granularity::tensor: return {whole_rows, whole_cols, false};
    case granularity::row: return {each_row, whole_cols, false};
    case granularity::col: return {whole_rows, each_col, false};
    case granularity::block:
      return {axis_map{axis_kind::uniform, rows, s.block_rows > 0 ? s.block_rows : 1, nullptr, 0},
              axis_map{axis_kind::uniform, cols, s.block_cols > 0 ? s.block_cols : 1, nullptr, 0},
              false};
    case granularity::group_row:
      return {each_row, axis_map{axis_kind::grouped, cols, 1, ends, groups}, true};
    case granularity::group_col:
      return {axis_map{axis_kind::grouped, rows, 1, ends, groups}, each_col, false};
  }
  return {whole_rows, whole_cols, false};
}

/// True for the granularities that take group offsets.
FP8Q_HD constexpr bool is_grouped(granularity g) {
  return g == granularity::group_row || g == granularity::group_col;
}

/// Extent that group offsets index: columns (N) for group_row, rows (M) for group_col.
FP8Q_HD constexpr std::int64_t grouped_extent(granularity g, std::int64_t rows, std::int64_t cols) {
  return g == granularity::group_row ? cols : rows;
}

/// The logical element index keying stochastic rounding: b*M*N + r*N + c, whatever the layout.
FP8Q_HD constexpr std::uint64_t element_index(std::int64_t b, std::int64_t r, std::int64_t c,
                                              std::int64_t rows, std::int64_t cols) {
  return (static_cast<std::uint64_t>(b) * static_cast<std::uint64_t>(rows) +
          static_cast<std::uint64_t>(r)) * static_cast<std::uint64_t>(cols) +
         static_cast<std::uint64_t>(c);
}

}  // namespace fp8q::detail
