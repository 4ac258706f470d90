// expect: e8m0 (MX) scales need granularity::block
// e8m0 scales on a rowwise spec (MX scales belong to 1x32 / 32x1 blocks).
#include <fp8q/host/quantize.hpp>

constexpr fp8q::spec bad{.out = fp8q::format::e4m3fn, .granularity = fp8q::granularity::row,
                         .scale = fp8q::scale_format::e8m0};

fp8q::status use(fp8q::matrix_view<const float> in, const fp8q::quantized<bad>& out) {
  return fp8q::host::quantize<bad>(in, out);
}
