// expect: an e8m0 scale is the dequantization factor
// An MX spec asking for the multiplier as well: e8m0 codes are always the inverse.
#include <fp8q/host/quantize.hpp>

constexpr fp8q::spec bad = [] {
  fp8q::spec s = fp8q::mx_spec(fp8q::format::e4m3fn, 1, 32);
  s.store = fp8q::stored_scale::both;
  return s;
}();

fp8q::status use(fp8q::matrix_view<const float> in, const fp8q::quantized<bad>& out) {
  return fp8q::host::quantize<bad>(in, out);
}
