// expect: <compiles>
// Control: the same calls with valid specs compile, so the failures above come from the specs.
#include <fp8q/host/quantize.hpp>

constexpr fp8q::spec row{.out = fp8q::format::e4m3fn, .granularity = fp8q::granularity::row};
constexpr fp8q::spec blk{.out = fp8q::format::e4m3fn, .granularity = fp8q::granularity::block,
                         .block_rows = 1, .block_cols = 128, .eps = 1e-12f};
constexpr fp8q::spec rows = fp8q::mx_spec(fp8q::format::e4m3fn, 1, 32);
constexpr fp8q::spec cols = fp8q::mx_spec(fp8q::format::e4m3fn, 32, 1);

fp8q::status use(fp8q::matrix_view<const float> in, const fp8q::quantized<row>& a,
                 const fp8q::quantized<blk>& b, const fp8q::quantized<rows>& r,
                 const fp8q::quantized<cols>& c) {
  fp8q::status st = fp8q::host::quantize<row>(in, a);
  if (st == fp8q::status::success) st = fp8q::host::quantize<blk>(in, b);
  if (st == fp8q::status::success) st = fp8q::host::quantize_mx_dual<rows, cols>(in, r, c);
  return st;
}
