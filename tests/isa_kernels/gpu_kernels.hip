// Every GPU kernel instantiation fp8q ships (tensorwise, rowwise, colwise; all four data formats;
// bf16/f16/f32 inputs), compiled for AMD targets by the ISA checks in CMakeLists.txt. The memory
// order of the amax atomics and the conversion path come from the compile line
// (-DFP8Q_ISA_ORDER=..., -DFP8Q_ISA_CONVERT=...) so the assembly checks can tell them apart;
// -DFP8Q_ISA_ONE_FORMAT=1 keeps e4m3fnuz only (for checks that do not depend on the format);
// -DFP8Q_ISA_PAIRS=1 compiles four (format, input) pairs that take every format and every input
// type once (the compile-only checks; CMakeLists.txt says why).
#include "fp8q/gpu/quantize.hpp"

namespace {

using namespace fp8q;

constexpr tuning isa_tuning{.amax_order = memory_order::FP8Q_ISA_ORDER,
                            .convert = convert_path::FP8Q_ISA_CONVERT};

// tensorwise also in one cooperative launch (gpu_path::tensor_last_block)
constexpr tuning isa_tuning_last_block{.amax_order = memory_order::FP8Q_ISA_ORDER,
                                       .convert = convert_path::FP8Q_ISA_CONVERT,
                                       .path = gpu_path::tensor_last_block};

template <format F, granularity G>
constexpr spec isa_spec{.out = F, .granularity = G, .store = stored_scale::both};

template <spec S, class In, tuning T = isa_tuning>
status instantiate(matrix_view<const In> in, const quantized<S>& out, void* ws, gpu_stream s) {
  return quantize<S, T>(in, out, {.stream = s, .workspace = ws, .workspace_bytes = workspace_size<S, T>(in)});
}

template <format F, class In>
void all_granularities(matrix_view<const In> in, void* ws, gpu_stream s) {
  (void)instantiate<isa_spec<F, granularity::tensor>, In>(in, {}, ws, s);
  (void)instantiate<isa_spec<F, granularity::tensor>, In, isa_tuning_last_block>(in, {}, ws, s);
  (void)instantiate<isa_spec<F, granularity::row>, In>(in, {}, ws, s);
  (void)instantiate<isa_spec<F, granularity::col>, In>(in, {}, ws, s);
  // the split tensorwise calls (several GPUs): the two-launch family's kernels on their own
  (void)tensor_amax<isa_spec<F, granularity::tensor>, isa_tuning>(in, static_cast<std::uint32_t*>(ws), {.stream = s});
  (void)quantize_with_amax<isa_spec<F, granularity::tensor>, isa_tuning>(in, {}, static_cast<const std::uint32_t*>(ws),
                                                                           {.stream = s});
}

// Every granularity with stochastic rounding as well: the nearest-even-only code (the in-range
// encoder) must compile away for the other specs (test_quantize_gpu once failed to build on a
// stochastic spec that no compile check here instantiated).
template <format F, class In>
void stochastic_granularities(matrix_view<const In> in, void* ws, gpu_stream s) {
  constexpr spec sr_tensor{.out = F, .granularity = granularity::tensor, .rounding = rounding::stochastic};
  constexpr spec sr_row{.out = F, .granularity = granularity::row, .rounding = rounding::stochastic};
  constexpr spec sr_col{.out = F, .granularity = granularity::col, .rounding = rounding::stochastic};
  (void)instantiate<sr_tensor, In>(in, {}, ws, s);
  (void)instantiate<sr_row, In>(in, {}, ws, s);
  (void)instantiate<sr_col, In>(in, {}, ws, s);
}

template <class In>
void every_format(matrix_view<const In> in, void* ws, gpu_stream s) {
  all_granularities<format::e4m3fnuz, In>(in, ws, s);
#if !FP8Q_ISA_ONE_FORMAT
  all_granularities<format::e5m2fnuz, In>(in, ws, s);
  all_granularities<format::e4m3fn, In>(in, ws, s);
  all_granularities<format::e5m2, In>(in, ws, s);
#endif
}

}  // namespace

void fp8q_isa_instantiate_all(const void* data, void* ws, gpu_stream s) {
  const auto b = row_major(static_cast<const bf16*>(data), 64, 64);
  const auto h = row_major(static_cast<const f16*>(data), 64, 64);
  const auto f = row_major(static_cast<const float*>(data), 64, 64);
#if FP8Q_ISA_PAIRS
  all_granularities<format::e4m3fnuz, bf16>(b, ws, s);
  all_granularities<format::e4m3fn, bf16>(b, ws, s);
  all_granularities<format::e5m2fnuz, f16>(h, ws, s);
  all_granularities<format::e5m2, float>(f, ws, s);
  stochastic_granularities<format::e4m3fn, bf16>(b, ws, s);
#else
  stochastic_granularities<format::e4m3fn, bf16>(b, ws, s);
  every_format(b, ws, s);
  every_format(h, ws, s);
  every_format(f, ws, s);
#endif
}
