// fp8q — validation shared by every backend: the views, scales and group offsets of one call are
// checked against the spec before anything is written or launched. The first problem found is
// returned; nothing throws, prints or asserts. Checks run in phases, each over every view in
// argument order (input, output data, scale, inverse), so the status reported for several
// problems at once is predictable:
//   1 spec (run-time copy of check_spec)   unsupported_type
//   2 null pointers                         null_pointer
//   3 extents                               bad_shape
//   4 group offsets length                  bad_offsets_length
//   5 leading dimensions, batch strides     bad_stride
//   6 alignment                             misaligned
//   7 64-bit sizes                          size_overflow
//   8 group offsets values (host offsets)   offsets_out_of_range / offsets_not_monotonic
#pragma once

#include <cstdint>

#include "fp8q/detail/index_map.hpp"
#include "fp8q/spec.hpp"
#include "fp8q/status.hpp"
#include "fp8q/views.hpp"

namespace fp8q {

/// Per-call arguments shared by every backend (not part of the spec: they change per step).
struct quantize_args {
  group_offsets groups{};  ///< granularity::group_row / group_col only
  std::uint64_t seed = 0;  ///< stochastic rounding: bits = stochastic_bits(seed, b*M*N + r*N + c)
};

/// The status a run-time spec check reports: success for a valid spec, unsupported_type for any
/// spec that check_spec would reject at compile time.
constexpr status to_status(spec_error e) {
  return e == spec_error::none ? status::success : status::unsupported_type;
}

/// Run-time check of a spec (the same rules check_spec enforces at compile time).
[[nodiscard]] constexpr status validate_spec(const spec& s) { return to_status(validate(s)); }

namespace detail {

/// One view as validation sees it, without its element type.
struct view_facts {
  const void* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  layout order = layout::row_major;
  std::int64_t batch = 1;
  std::int64_t batch_stride = 0;
  std::int64_t element_bytes = 1;
  std::int64_t element_align = 1;
};

template <class T>
constexpr view_facts facts_of(const matrix_view<T>& v) {
  return {static_cast<const void*>(v.data), v.rows, v.cols, v.ld, v.order, v.batch,
          v.batch_stride, static_cast<std::int64_t>(sizeof(T)),
          static_cast<std::int64_t>(alignof(T))};
}

constexpr bool has_elements(const view_facts& v) {
  return v.rows > 0 && v.cols > 0 && v.batch > 0;
}
constexpr std::int64_t inner_extent(const view_facts& v) {
  return v.order == layout::row_major ? v.cols : v.rows;
}
constexpr std::int64_t outer_extent(const view_facts& v) {
  return v.order == layout::row_major ? v.rows : v.cols;
}

// Elements from the first to the last element of one matrix, plus one (0 for a view with no
// elements, batch 0 included: its ld and batch stride address nothing). False when that does
// not fit in int64.
inline bool matrix_span(const view_facts& v, std::int64_t* span) {
  if (!has_elements(v)) {
    *span = 0;
    return true;
  }
  std::int64_t s = 0;
  if (__builtin_mul_overflow(outer_extent(v) - 1, v.ld, &s)) return false;
  return !__builtin_add_overflow(s, inner_extent(v), span);
}

// Elements from the first to the last element of the whole batch, plus one.
inline bool total_span(const view_facts& v, std::int64_t* span) {
  std::int64_t one = 0;
  if (!matrix_span(v, &one)) return false;
  if (one == 0 || v.batch <= 1) {
    *span = v.batch > 0 ? one : 0;
    return true;
  }
  std::int64_t s = 0;
  if (__builtin_mul_overflow(v.batch - 1, v.batch_stride, &s)) return false;
  return !__builtin_add_overflow(s, one, span);
}

inline status check_null(const view_facts& v) {
  return v.data == nullptr && has_elements(v) ? status::null_pointer : status::success;
}

inline status check_extents(const view_facts& v) {
  if (v.rows < 0 || v.cols < 0 || v.batch < 0) return status::bad_shape;
  if (v.batch == 0 && v.data != nullptr) return status::bad_shape;
  return status::success;
}

inline status check_stride(const view_facts& v) {
  const std::int64_t inner = inner_extent(v);
  if (v.ld < 1 || v.ld < inner) return status::bad_stride;
  if (v.batch > 1 && has_elements(v)) {
    if (v.batch_stride < 0) return status::bad_stride;
    std::int64_t one = 0;
    // One matrix's span beyond int64: no batch stride separates two of them (with one matrix
    // the same span is phase 7's size_overflow).
    if (!matrix_span(v, &one) || v.batch_stride < one) return status::bad_stride;
  }
  return status::success;
}

inline status check_alignment(const view_facts& v) {
  if (v.data == nullptr) return status::success;
  const auto address = reinterpret_cast<std::uintptr_t>(v.data);
  return address % static_cast<std::uintptr_t>(v.element_align) == 0 ? status::success
                                                                       : status::misaligned;
}

inline status check_size(const view_facts& v) {
  std::int64_t span = 0;
  std::int64_t bytes = 0;
  if (!total_span(v, &span) || __builtin_mul_overflow(span, v.element_bytes, &bytes))
    return status::size_overflow;
  std::int64_t count = 0;  // the logical count keys stochastic rounding: it must fit too
  if (v.batch > 0 && (__builtin_mul_overflow(v.rows, v.cols, &count) ||
                      __builtin_mul_overflow(count, v.batch, &count)))
    return status::size_overflow;
  return status::success;
}

}  // namespace detail

/// Host-side check of group end offsets against the extent they index (N for group_row, M for
/// group_col): the first offset that is negative or beyond `extent` gives offsets_out_of_range,
/// the first that is below its predecessor gives offsets_not_monotonic (checked in index order,
/// range before order for the same index). `g.ends` must be host memory.
[[nodiscard]] inline status validate_offset_values(const group_offsets& g, std::int64_t extent) {
  std::int64_t prev = 0;
  for (std::int64_t i = 0; i < g.count; ++i) {
    const std::int64_t e = g.ends[i];
    if (e < 0 || e > extent) return status::offsets_out_of_range;
    if (e < prev) return status::offsets_not_monotonic;
    prev = e;
  }
  return status::success;
}

/// The common check behind validate_quantize and validate_dequantize. `views[0]` is the matrix
/// that defines (M, N, batch); `views[1]` must have the same extents; `views[2..n)` are scale views,
/// checked against the spec's scale extents (detail/index_map.hpp). Offsets are read only when
/// `offsets_on_host` (a GPU backend passes false: device offsets are never read on the host).
[[nodiscard]] inline status validate_views(const spec& s, const detail::view_facts* views, int n,
                                           const group_offsets& groups, bool offsets_on_host,
                                           int padded_output = 0) {
  using detail::view_facts;
  if (const status st = validate_spec(s); st != status::success) return st;
  const bool grouped = detail::is_grouped(s.granularity);

  for (int k = 0; k < n; ++k)
    if (const status st = detail::check_null(views[k]); st != status::success) return st;
  if (grouped && groups.count > 0 && groups.ends == nullptr) return status::null_pointer;

  for (int k = 0; k < n; ++k)
    if (const status st = detail::check_extents(views[k]); st != status::success) return st;
  const view_facts& in = views[0];
  const detail::scale_map map = detail::make_scale_map(s, in.rows, in.cols, groups.ends,
                                                       groups.count > 0 ? groups.count : 0);
  // A padded grouped output (groups.align > 1) is longer than the input along the grouped axis.
  if (groups.align < 1 || (groups.align > 1 && (!grouped || padded_output < 1)))
    return status::bad_shape;
  std::int64_t out_rows = in.rows, out_cols = in.cols;
  if (groups.align > 1) {
    std::int64_t* grown = s.granularity == granularity::group_col ? &out_rows : &out_cols;
    if (!detail::padded_capacity(*grown, groups, grown)) return status::bad_shape;
  }
  for (int k = 1; k < n; ++k) {
    const view_facts& v = views[k];
    if (v.batch != in.batch) return status::bad_shape;
    if (k == 1 && groups.align > 1) {
      // the padded capacity along the grouped axis, or more; the other axis as the input's
      const bool ok = s.granularity == granularity::group_col
                          ? v.rows >= out_rows && v.cols == in.cols
                          : v.cols >= out_cols && v.rows == in.rows;
      if (!ok) return status::bad_shape;
    } else if (k == 1) {
      if (v.rows != in.rows || v.cols != in.cols) return status::bad_shape;
    } else {
      if (v.cols != map.scale_cols()) return status::bad_shape;
      if (!grouped && v.rows != map.scale_rows()) return status::bad_shape;
    }
  }

  if (grouped) {
    if (groups.count < 0) return status::bad_offsets_length;
    for (int k = 2; k < n; ++k)
      if (views[k].rows != groups.count) return status::bad_offsets_length;
  } else if (groups.count != 0) {
    return status::bad_offsets_length;
  }

  for (int k = 0; k < n; ++k)
    if (const status st = detail::check_stride(views[k]); st != status::success) return st;

  for (int k = 0; k < n; ++k)
    if (const status st = detail::check_alignment(views[k]); st != status::success) return st;
  if (grouped && groups.ends != nullptr &&
      reinterpret_cast<std::uintptr_t>(groups.ends) % alignof(std::int32_t) != 0)
    return status::misaligned;
  if (groups.padded_ends != nullptr &&
      reinterpret_cast<std::uintptr_t>(groups.padded_ends) % alignof(std::int32_t) != 0)
    return status::misaligned;

  for (int k = 0; k < n; ++k)
    if (const status st = detail::check_size(views[k]); st != status::success) return st;
  std::int64_t offset_bytes = 0;
  if (grouped && __builtin_mul_overflow(groups.count, std::int64_t{4}, &offset_bytes))
    return status::size_overflow;
  // padded end offsets are int32 like the offsets: the padded capacity must fit
  if (groups.align > 1 && groups.padded_ends != nullptr &&
      (s.granularity == granularity::group_col ? out_rows : out_cols) > 0x7fffffff)
    return status::size_overflow;

  if (grouped && offsets_on_host) {
    return validate_offset_values(groups,
                                  detail::grouped_extent(s.granularity, in.rows, in.cols));
  }
  return status::success;
}

/// Everything a quantization of `in` into `out` under spec S needs, in the order described at
/// the top of this file. Scale views are checked only when S stores them.
template <spec S, class In>
[[nodiscard]] status validate_quantize(const matrix_view<const In>& in,  // [B][M, N] In, any layout
                                       const quantized<S>& out,  // data [B][M, N]; scales per S
                                       const quantize_args& args, bool offsets_on_host) {
  detail::view_facts v[4];
  int n = 0;
  v[n++] = detail::facts_of(in);
  v[n++] = detail::facts_of(out.data);
  if (stores_multiplier(S)) v[n++] = detail::facts_of(out.scale);
  if (stores_inverse(S)) v[n++] = detail::facts_of(out.inverse);
  return validate_views(S, v, n, args.groups, offsets_on_host, /*padded_output=*/1);
}

/// Everything a dequantization of `in` into `out` needs. Only the scale view dequantization
/// reads is checked: `inverse` when S stores it, otherwise `scale`.
template <spec S, class Out>
[[nodiscard]] status validate_dequantize(const quantized<S>& in,  // data [B][M, N]; scales per S
                                         const matrix_view<Out>& out,  // [B][M, N] Out, any layout
                                         const quantize_args& args, bool offsets_on_host) {
  detail::view_facts v[3];
  v[0] = detail::facts_of(in.data);
  v[1] = detail::facts_of(out);
  v[2] = stores_inverse(S) ? detail::facts_of(in.inverse) : detail::facts_of(in.scale);
  return validate_views(S, v, 3, args.groups, offsets_on_host);
}

}  // namespace fp8q
