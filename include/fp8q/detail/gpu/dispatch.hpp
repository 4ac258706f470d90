// fp8q — dispatch is data: per granularity an ordered list of families (paths). The automatic
// walk runs the first family that is not opt-in, accepts the problem and prefers it; a tuning
// with a path name runs that family only. A new family is one file and one entry here.
#pragma once

#include <cstddef>
#include <type_traits>

#include "fp8q/detail/gpu/families/col_cluster.hpp"
#include "fp8q/detail/gpu/families/col_hold.hpp"
#include "fp8q/detail/gpu/families/col_relay.hpp"
#include "fp8q/detail/gpu/families/col_streaming.hpp"
#include "fp8q/detail/gpu/families/group_col_relay.hpp"
#include "fp8q/detail/gpu/families/group_col_tile.hpp"
#include "fp8q/detail/gpu/families/group_colwise.hpp"
#include "fp8q/detail/gpu/families/group_row_fused.hpp"
#include "fp8q/detail/gpu/families/group_row_spans.hpp"
#include "fp8q/detail/gpu/families/group_rowwise.hpp"
#include "fp8q/detail/gpu/families/row_band.hpp"
#include "fp8q/detail/gpu/families/row_transpose.hpp"
#include "fp8q/detail/gpu/families/rowwise.hpp"
#include "fp8q/detail/gpu/families/tensor_single.hpp"
#include "fp8q/detail/gpu/families/tensorwise.hpp"
#include "fp8q/detail/gpu/families/tiled.hpp"
#include "fp8q/detail/gpu/problem.hpp"

namespace fp8q::detail::gpu {

template <template <spec, tuning, class> class... F>
struct path_list {
  /// visit(f) for each family in order until one returns true; whether one did.
  template <spec S, tuning T, class In, class Visit>
  static bool visit(Visit&& v) {
    return (v(static_cast<F<S, T, In>*>(nullptr)) || ...);
  }
  template <spec S, tuning T, class In>
  static constexpr bool has(gpu_path name) {
    return ((F<S, T, In>::name == name) || ...);
  }
};

template <granularity G>
struct paths;
template <>
struct paths<granularity::tensor> : path_list<tensor_last_block, tensor_two_launch, tiled> {};
template <>
struct paths<granularity::row> : path_list<row_wave, row_block, row_band, row_transpose, tiled> {};
template <>
struct paths<granularity::col> : path_list<col_cluster, col_hold, col_relay, col_streaming, tiled> {};
template <>
struct paths<granularity::group_row> : path_list<group_row_spans, group_row_fused, group_rowwise> {};
template <>
struct paths<granularity::group_col> : path_list<group_col_relay, group_col_tile, group_colwise> {};

template <spec S>
constexpr bool gpu_supports() {
  return S.scale == scale_format::f32 &&
         (S.granularity == granularity::tensor || S.granularity == granularity::row ||
          S.granularity == granularity::col || S.granularity == granularity::group_row ||
          S.granularity == granularity::group_col);
}

/// Whether family F may run under tuning T: by name, or in the automatic walk unless opt-in.
template <class F, tuning T>
constexpr bool selectable() {
  return T.path == gpu_path::automatic ? !F::opt_in : T.path == F::name;
}

template <spec S, tuning T, class In>
constexpr void check_path() {
  static_assert(T.path == gpu_path::automatic || paths<S.granularity>::template has<S, T, In>(T.path),
                "fp8q: the tuning's gpu_path does not serve this granularity");
}

/// Calls run(F*, plan) with the family that runs p (the one chosen by the walk); false when
/// none accepts p.
template <spec S, tuning T, class In, class Run>
bool choose(const problem<S, In>& p, Run&& run) {
  check_path<S, T, In>();
  return paths<S.granularity>::template visit<S, T, In>([&](auto* f) {
    using F = std::remove_pointer_t<decltype(f)>;
    if constexpr (!selectable<F, T>()) {
      return false;
    } else {
      typename F::plan pl{};
      if (!F::accepts(p, &pl) || (T.path == gpu_path::automatic && !F::preferred(p))) return false;
      run(f, pl);
      return true;
    }
  });
}

/// Workspace bytes for p without asking the device (p.dev null): the largest need over the
/// families the walk may choose on some device, i.e. up to the first that accepts p whatever the
/// device.
template <spec S, tuning T, class In>
std::size_t workspace_for(const problem<S, In>& p) {
  check_path<S, T, In>();
  std::size_t need = 0;
  paths<S.granularity>::template visit<S, T, In>([&](auto* f) {
    using F = std::remove_pointer_t<decltype(f)>;
    if constexpr (!selectable<F, T>()) {
      return false;
    } else {
      if (!F::accepts(p, nullptr)) return false;
      const std::size_t w = F::workspace(p.in);
      need = w > need ? w : need;
      return !F::device_dependent;
    }
  });
  return need;
}

/// Workspace bytes enough for any output views: the largest need over every family the tuning
/// may select.
template <spec S, tuning T, class In>
std::size_t workspace_any(const matrix_view<const In>& in) {
  check_path<S, T, In>();
  std::size_t need = 0;
  paths<S.granularity>::template visit<S, T, In>([&](auto* f) {
    using F = std::remove_pointer_t<decltype(f)>;
    if constexpr (selectable<F, T>()) {
      const std::size_t w = F::workspace(in);
      need = w > need ? w : need;
    }
    return false;
  });
  return need;
}

}  // namespace fp8q::detail::gpu
