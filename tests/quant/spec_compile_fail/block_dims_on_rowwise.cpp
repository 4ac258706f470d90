// expect: block_rows/block_cols are only meaningful with granularity::block
// Block extents on a rowwise spec.
#include <fp8q/host/quantize.hpp>

constexpr fp8q::spec bad{.out = fp8q::format::e4m3fn, .granularity = fp8q::granularity::row,
                         .block_rows = 1, .block_cols = 128};

fp8q::status use(fp8q::matrix_view<const float> in, const fp8q::quantized<bad>& out) {
  return fp8q::host::quantize<bad>(in, out);
}
