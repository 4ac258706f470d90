// Instruction count of the FP8 encoders on gfx942 (MI300X), for the ISA check in CMakeLists.txt.
// Each kernel does one thread's share of a rowwise main loop for a 16-byte output unit: two
// 16-byte loads of bf16, widen, multiply by the scale, encode 16 values, one 16-byte store.
//   fp8q_isa_unit_base:       the same loads, multiply and store with the top byte of each
//                             product stored in place of a code (no encoder): the fixed part
//   fp8q_isa_unit_fast_<F>:   fast::encode_words (fp8q/detail/fast_encode.hpp), the NaN rule of
//                             the kernels (encode_scaled: canonical NaN)
//   fp8q_isa_unit_in_range_<F>: fast::encode_word_in_range, the form the rowwise kernel takes
//                             for a row whose amax bounds every product (no NaN, no clamp)
//   fp8q_isa_unit_today_<F>:  today's software path, encode_scaled's encode(canonical_nan(v))
// The encoder's share per element is (count - count of the base kernel) / 16.
#include <cstdint>

#include "fp8q/convert.hpp"
#include "fp8q/detail/fast_encode.hpp"
#include "fp8q/scale.hpp"

namespace {

using fp8q::format;
using fp8q::overflow;

struct alignas(16) u32x4 {
  std::uint32_t x, y, z, w;
};

__device__ unsigned unit_index() {
  return __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 256u;
}

__device__ void load_scaled(const u32x4* in, unsigned i, float s, float (&v)[16]) {
  const u32x4 a = in[2 * i], b = in[2 * i + 1];
  const std::uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    v[2 * k] = __builtin_bit_cast(float, w[k] << 16) * s;
    v[2 * k + 1] = __builtin_bit_cast(float, w[k] & 0xffff0000u) * s;
  }
}

template <format F>
__device__ void fast_unit(const u32x4* in, u32x4* out, float s) {
  const unsigned i = unit_index();
  float v[16];
  load_scaled(in, i, s, v);
  std::uint32_t w[4];
  fp8q::detail::fast::encode_words<F, overflow::saturate, fp8q::detail::fast::nan_rule::canonical>(v, w);
  out[i] = u32x4{w[0], w[1], w[2], w[3]};
}

// The in-range form (a group whose amax bounds every product): signs from the bf16 words.
template <format F>
__device__ void in_range_unit(const u32x4* in, u32x4* out, float s) {
  const unsigned i = unit_index();
  float v[16];
  load_scaled(in, i, s, v);
  const u32x4 a = in[2 * i], b = in[2 * i + 1];
  const std::uint32_t raw[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  std::uint32_t w[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float four[4] = {v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]};
    w[k] = fp8q::detail::fast::encode_word_in_range<F>(four, fp8q::detail::fast::perm<1, 3, 5, 7>(raw[2 * k + 1], raw[2 * k]));
  }
  out[i] = u32x4{w[0], w[1], w[2], w[3]};
}

template <format F>
__device__ void today_unit(const u32x4* in, u32x4* out, float s) {
  const unsigned i = unit_index();
  float v[16];
  load_scaled(in, i, s, v);
  std::uint32_t w[4] = {};
#pragma unroll
  for (int k = 0; k < 16; ++k) {
    const std::uint32_t q = fp8q::encode<F>(fp8q::canonical_nan(v[k]), overflow::saturate).bits;
    w[k / 4] |= q << (8 * (k % 4));
  }
  out[i] = u32x4{w[0], w[1], w[2], w[3]};
}

}  // namespace

extern "C" __global__ void fp8q_isa_unit_base(const u32x4* in, u32x4* out, float s) {
  const unsigned i = unit_index();
  float v[16];
  load_scaled(in, i, s, v);
  std::uint32_t w[4] = {};
#pragma unroll
  for (int k = 0; k < 16; ++k) w[k / 4] |= (__builtin_bit_cast(std::uint32_t, v[k]) >> 24) << (8 * (k % 4));
  out[i] = u32x4{w[0], w[1], w[2], w[3]};
}

extern "C" __global__ void fp8q_isa_unit_fast_e4m3fn(const u32x4* in, u32x4* out, float s) { fast_unit<format::e4m3fn>(in, out, s); }
extern "C" __global__ void fp8q_isa_unit_fast_e4m3fnuz(const u32x4* in, u32x4* out, float s) { fast_unit<format::e4m3fnuz>(in, out, s); }
extern "C" __global__ void fp8q_isa_unit_fast_e5m2(const u32x4* in, u32x4* out, float s) { fast_unit<format::e5m2>(in, out, s); }
extern "C" __global__ void fp8q_isa_unit_fast_e5m2fnuz(const u32x4* in, u32x4* out, float s) { fast_unit<format::e5m2fnuz>(in, out, s); }
extern "C" __global__ void fp8q_isa_unit_today_e4m3fn(const u32x4* in, u32x4* out, float s) { today_unit<format::e4m3fn>(in, out, s); }
extern "C" __global__ void fp8q_isa_unit_today_e4m3fnuz(const u32x4* in, u32x4* out, float s) { today_unit<format::e4m3fnuz>(in, out, s); }
extern "C" __global__ void fp8q_isa_unit_in_range_e4m3fn(const u32x4* in, u32x4* out, float s) { in_range_unit<format::e4m3fn>(in, out, s); }
extern "C" __global__ void fp8q_isa_unit_in_range_e4m3fnuz(const u32x4* in, u32x4* out, float s) { in_range_unit<format::e4m3fnuz>(in, out, s); }
extern "C" __global__ void fp8q_isa_unit_in_range_e5m2(const u32x4* in, u32x4* out, float s) { in_range_unit<format::e5m2>(in, out, s); }
extern "C" __global__ void fp8q_isa_unit_in_range_e5m2fnuz(const u32x4* in, u32x4* out, float s) { in_range_unit<format::e5m2fnuz>(in, out, s); }
