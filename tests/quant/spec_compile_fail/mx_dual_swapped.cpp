// expect: quantize_mx_dual's Rows spec must be an MX block of one row
// quantize_mx_dual with the column spec where the row spec belongs.
#include <fp8q/host/quantize.hpp>

constexpr fp8q::spec rows = fp8q::mx_spec(fp8q::format::e4m3fn, 1, 32);
constexpr fp8q::spec cols = fp8q::mx_spec(fp8q::format::e4m3fn, 32, 1);

fp8q::status use(fp8q::matrix_view<const float> in, const fp8q::quantized<cols>& a,
                 const fp8q::quantized<rows>& b) {
  return fp8q::host::quantize_mx_dual<cols, rows>(in, a, b);
}
