// The per-group families (group_row_fused, group_rowwise, group_col_relay, group_col_tile,
// group_colwise, both dual colwise launches) for AMD targets: every data format, bf16/f16/f32
// inputs. The checks in CMakeLists.txt require the offsets error word's relaxed atomic OR and no
// cache write-back/invalidate around it on gfx942, the 16-byte loads of group_col_relay (both of its
// kernels: col_relay's and col_hold's),
// group_col_tile and group_row_fused, and group_row_fused's LDS atomic max. The automatic walk instantiates every
// family of its path list, so one call per granularity compiles them all. -DFP8Q_ISA_PAIRS=1
// compiles four (format, input) pairs that take every format and every input type once.
#include "fp8q/gpu/quantize.hpp"

namespace {

using namespace fp8q;

template <format F, granularity G>
constexpr spec grouped_spec{.out = F, .granularity = G, .store = stored_scale::both};

template <format F, class In>
void both(matrix_view<const In> in, const gpu_args& a) {
  constexpr tuning tile{.path = gpu_path::group_col_tile}, any{.path = gpu_path::group_colwise};
  (void)quantize<grouped_spec<F, granularity::group_row>>(in, {}, a);
  (void)quantize<grouped_spec<F, granularity::group_col>>(in, {}, a);  // group_col_relay, _tile, colwise
  (void)quantize<grouped_spec<F, granularity::group_col>, any>(in, {}, a);
  (void)quantize_dual<grouped_spec<F, granularity::group_col>, tile>(in, {}, in, {}, a);
  (void)quantize_dual<grouped_spec<F, granularity::group_col>, any>(in, {}, in, {}, a);
}

template <class In>
void every_format(matrix_view<const In> in, const gpu_args& a) {
  both<format::e4m3fnuz, In>(in, a);
  both<format::e5m2fnuz, In>(in, a);
  both<format::e4m3fn, In>(in, a);
  both<format::e5m2, In>(in, a);
}

}  // namespace

void fp8q_isa_grouped(const void* data, const gpu_args& a) {
  const auto b = row_major(static_cast<const bf16*>(data), 64, 64);
  const auto h = row_major(static_cast<const f16*>(data), 64, 64);
  const auto f = row_major(static_cast<const float*>(data), 64, 64);
#if FP8Q_ISA_PAIRS
  both<format::e4m3fnuz, bf16>(b, a);
  both<format::e4m3fn, bf16>(b, a);
  both<format::e5m2fnuz, f16>(h, a);
  both<format::e5m2, float>(f, a);
#else
  every_format(b, a);
  every_format(h, a);
  every_format(f, a);
#endif
}
