// expect: the input elements must be float, fp8q::bf16 or fp8q::f16
// Integer input elements.
#include <fp8q/host/quantize.hpp>

constexpr fp8q::spec ok{.out = fp8q::format::e4m3fn, .granularity = fp8q::granularity::row};

fp8q::status use(fp8q::matrix_view<const int> in, const fp8q::quantized<ok>& out) {
  return fp8q::host::quantize<ok>(in, out);
}
