// expect: e8m0fnu is a scale format
// e8m0fnu as the data format: it has no sign and no zero, so it only serves as an MX scale.
#include <fp8q/host/quantize.hpp>

constexpr fp8q::spec bad{.out = fp8q::format::e8m0fnu, .granularity = fp8q::granularity::row};

fp8q::status use(fp8q::matrix_view<const float> in, const fp8q::quantized<bad>& out) {
  return fp8q::host::quantize<bad>(in, out);
}
