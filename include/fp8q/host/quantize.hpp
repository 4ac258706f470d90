// fp8q — the host reference backend: std C++ only, the oracle every GPU byte is compared with.
// It may use threads (options::threads); results never depend on the thread count.
#pragma once

#include <cstdint>

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
[[nodiscard]] status quantize(matrix_view<const In> in, const quantized<S>& out,
                              const quantize_args& args = {}, const options& opt = {});

/// Two tensors sharing one set of group offsets (MoE weight gradient: per-group colwise of
/// grad_output and input in one call). Both must validate before either is written.
template <spec S, class In>
[[nodiscard]] status quantize_dual(matrix_view<const In> in_a, const quantized<S>& out_a,
                                   matrix_view<const In> in_b, const quantized<S>& out_b,
                                   const quantize_args& args = {}, const options& opt = {});

/// MX rows (1x32) and MX columns (32x1) of the same input in one call, as the GPU fuses them.
template <spec Rows, spec Cols, class In>
[[nodiscard]] status quantize_mx_dual(matrix_view<const In> in, const quantized<Rows>& out_rows,
                                      const quantized<Cols>& out_cols,
                                      const quantize_args& args = {}, const options& opt = {});

/// x' = decode(q) * inverse scale (from `inverse` if stored, else 1/s from `scale`), rounded to
/// Out (f32, bf16 or f16) to nearest even.
template <spec S, class Out>
[[nodiscard]] status dequantize(const quantized<S>& in, matrix_view<Out> out,
                                const quantize_args& args = {}, const options& opt = {});

}  // namespace host
}  // namespace fp8q
