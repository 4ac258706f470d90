// expect: granularity::block needs block_rows > 0 and block_cols > 0
// A block with zero rows.
#include <fp8q/host/quantize.hpp>

constexpr fp8q::spec bad{.out = fp8q::format::e4m3fn, .granularity = fp8q::granularity::block,
                         .block_rows = 0, .block_cols = 128};

fp8q::status use(fp8q::matrix_view<const float> in, const fp8q::quantized<bad>& out) {
  return fp8q::host::quantize<bad>(in, out);
}
