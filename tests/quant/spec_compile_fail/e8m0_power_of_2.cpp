// expect: e8m0 scales are powers of two already
// power_of_2 on an MX spec.
#include <fp8q/host/quantize.hpp>

constexpr fp8q::spec bad = [] {
  fp8q::spec s = fp8q::mx_spec(fp8q::format::e4m3fn, 32, 1);
  s.power_of_2 = true;
  return s;
}();

fp8q::status use(fp8q::matrix_view<const float> in, const fp8q::quantized<bad>& out) {
  return fp8q::host::quantize<bad>(in, out);
}
