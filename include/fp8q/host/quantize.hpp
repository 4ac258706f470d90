// fp8q — the host reference backend: std C++ only, the oracle every GPU byte is compared with.
// It may use threads (options::threads); results never depend on the thread count.
#pragma once

#include <cstdint>
#include <type_traits>

#include "fp8q/host/detail/engine.hpp"
#include "fp8q/spec.hpp"
#include "fp8q/status.hpp"
#include "fp8q/validate.hpp"
#include "fp8q/views.hpp"

namespace fp8q {
// quantize_args (group offsets, seed) lives in validate.hpp: every backend shares it.

namespace host {

/// Execution options of the host backend (never change results).
struct options {
  unsigned threads = 0;  ///< 0: std::thread::hardware_concurrency()
};

/// Quantize `in` (f32, bf16 or f16; any layout, batched or not) as spec S says.
/// Validates everything first (validate.hpp) and writes nothing on error.
template <spec S, class In>
[[nodiscard]] status quantize(matrix_view<const In> in,  // [B][M, N] In, any layout
                              const quantized<S>& out,   // data [B][M, N]; scales per S
                              const quantize_args& args = {}, const options& opt = {});

/// The same for a view of non-const elements.
template <spec S, class In>
  requires(!std::is_const_v<In>)
[[nodiscard]] status quantize(matrix_view<In> in,       // [B][M, N] In, any layout
                              const quantized<S>& out,  // data [B][M, N]; scales per S
                              const quantize_args& args = {}, const options& opt = {});

/// Two tensors sharing one set of group offsets (MoE weight gradient: per-group colwise of
/// grad_output and input in one call). Both must validate before either is written.
template <spec S, class In>
[[nodiscard]] status quantize_dual(matrix_view<const In> in_a,  // [B][M, N] In, any layout
                                   const quantized<S>& out_a,   // data [B][M, N]; scales per S
                                   matrix_view<const In> in_b,  // [B'][M', N'] In, any layout
                                   const quantized<S>& out_b,   // data [B'][M', N']; scales per S
                                   const quantize_args& args = {}, const options& opt = {});

/// MX rows (1x32) and MX columns (32x1) of the same input in one call, as the GPU fuses them.
/// Rows must be an MX block of one row (mx_spec(f, 1, 32)), Cols of one column (mx_spec(f, 32, 1)).
/// Both outputs must validate before either is written.
template <spec Rows, spec Cols, class In>
[[nodiscard]] status quantize_mx_dual(matrix_view<const In> in,          // [B][M, N] In, any layout
                                      const quantized<Rows>& out_rows,  // data [B][M, N]; codes per Rows
                                      const quantized<Cols>& out_cols,  // data [B][M, N]; codes per Cols
                                      const quantize_args& args = {}, const options& opt = {});

/// x' = decode(q) * inverse scale (from `inverse` if stored, else 1/s from `scale`) as one f32
/// multiply, then narrowed to Out: f32 as is, bf16/f16 by to_bf16/to_f16 (nearest even), the
/// way torch's q.float() * inv then .to(bfloat16) rounds. Group kinds need the same args.groups.
template <spec S, class Out>
[[nodiscard]] status dequantize(const quantized<S>& in,  // data [B][M, N]; scales per S
                                matrix_view<Out> out,    // [B][M, N] Out, any layout
                                const quantize_args& args = {}, const options& opt = {});

// ---------------------------------------------------------------------------------------------
// Definitions

namespace detail {

template <class In>
constexpr void check_input_type() {
  static_assert(is_input_type_v<In>,
                "fp8q: the input elements must be float, fp8q::bf16 or fp8q::f16");
}

}  // namespace detail

template <spec S, class In>
status quantize(matrix_view<const In> in, const quantized<S>& out, const quantize_args& args,
                const options& opt) {
  check_spec<S>();
  detail::check_input_type<In>();
  if (const status st = validate_quantize<S, In>(in, out, args, true); st != status::success)
    return st;
  detail::run_quantize<S, In>(in, out, args, opt.threads);
  return status::success;
}

template <spec S, class In>
  requires(!std::is_const_v<In>)
status quantize(matrix_view<In> in, const quantized<S>& out, const quantize_args& args,
                const options& opt) {
  return quantize<S, In>(in.as_const(), out, args, opt);
}

template <spec S, class In>
status quantize_dual(matrix_view<const In> in_a, const quantized<S>& out_a,
                     matrix_view<const In> in_b, const quantized<S>& out_b,
                     const quantize_args& args, const options& opt) {
  check_spec<S>();
  detail::check_input_type<In>();
  if (const status st = validate_quantize<S, In>(in_a, out_a, args, true); st != status::success)
    return st;
  if (const status st = validate_quantize<S, In>(in_b, out_b, args, true); st != status::success)
    return st;
  detail::run_quantize<S, In>(in_a, out_a, args, opt.threads);
  detail::run_quantize<S, In>(in_b, out_b, args, opt.threads);
  return status::success;
}

template <spec Rows, spec Cols, class In>
status quantize_mx_dual(matrix_view<const In> in, const quantized<Rows>& out_rows,
                        const quantized<Cols>& out_cols, const quantize_args& args,
                        const options& opt) {
  check_spec<Rows>();
  check_spec<Cols>();
  static_assert(Rows.scale == scale_format::e8m0 && Rows.granularity == granularity::block &&
                    Rows.block_rows == 1,
                "fp8q: quantize_mx_dual's Rows spec must be an MX block of one row, "
                "e.g. mx_spec(format::e4m3fn, 1, 32)");
  static_assert(Cols.scale == scale_format::e8m0 && Cols.granularity == granularity::block &&
                    Cols.block_cols == 1,
                "fp8q: quantize_mx_dual's Cols spec must be an MX block of one column, "
                "e.g. mx_spec(format::e4m3fn, 32, 1)");
  detail::check_input_type<In>();
  if (const status st = validate_quantize<Rows, In>(in, out_rows, args, true);
      st != status::success)
    return st;
  if (const status st = validate_quantize<Cols, In>(in, out_cols, args, true);
      st != status::success)
    return st;
  detail::run_quantize<Rows, In>(in, out_rows, args, opt.threads);
  detail::run_quantize<Cols, In>(in, out_cols, args, opt.threads);
  return status::success;
}

template <spec S, class Out>
status dequantize(const quantized<S>& in, matrix_view<Out> out, const quantize_args& args,
                  const options& opt) {
  check_spec<S>();
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, bf16> ||
                    std::is_same_v<Out, f16>,
                "fp8q: dequantize writes float, fp8q::bf16 or fp8q::f16 (a non-const view)");
  if (const status st = validate_dequantize<S, Out>(in, out, args, true); st != status::success)
    return st;
  detail::run_dequantize<S, Out>(in, out, args, opt.threads);
  return status::success;
}

}  // namespace host
}  // namespace fp8q
