// expect: eps must be a positive finite number
// A negative eps (s = max / max(amax, eps) would no longer guard the division).
#include <fp8q/host/quantize.hpp>

constexpr fp8q::spec bad{.out = fp8q::format::e4m3fn, .granularity = fp8q::granularity::tensor,
                         .eps = -1e-12f};

fp8q::status use(fp8q::matrix_view<const float> in, const fp8q::quantized<bad>& out) {
  return fp8q::host::quantize<bad>(in, out);
}
