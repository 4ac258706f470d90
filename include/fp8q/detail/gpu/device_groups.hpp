// fp8q — group offsets as the GPU reads them: only on the device (the host never sees a group's
// size), clamped so that no offset, however bad, moves a write outside the views, and checked
// once so the caller can learn of bad offsets from a device word without a synchronization
// (docs/semantics.md, "Offsets on the device").
#pragma once

#include <cstdint>

#include "fp8q/views.hpp"

namespace fp8q::detail::gpu {

/// Bits of the offsets error word (gpu_args::error_word): OR-ed in by the device, never cleared.
inline constexpr std::uint32_t offsets_out_of_range_bit = 1u;  ///< an ends[g] < 0 or > the extent
inline constexpr std::uint32_t offsets_not_monotonic_bit = 2u;  ///< an ends[g] < ends[g - 1]

/// Group g's lines [begin, end) of the grouped axis, and where they go in a padded output.
/// (No member initializers: kernels keep one in __shared__ memory.)
struct device_group {
  std::int64_t begin;
  std::int64_t end;
  std::int64_t out_begin;  ///< first output line (== begin unless the output is padded)
  std::int64_t out_end;    ///< one past the group's last output line, padding included
};

/// The clamped offset c_k = min(max(ends[k], c_{k-1}), extent), c_{-1} = 0: monotone and inside
/// the extent, equal to ends[k] for valid offsets (the host's validation accepts only those).
__device__ inline std::int64_t clamp_end(std::int32_t e, std::int64_t prev, std::int64_t extent) {
  const std::int64_t v = e < prev ? prev : static_cast<std::int64_t>(e);
  return v > extent ? extent : v;
}

/// Bounds of group g (a scan of ends[0..g]: G is at most a few hundred experts, read from cache).
__device__ inline device_group group_bounds(const group_offsets& gs,  // ends: [count] device
                                            std::int64_t g, std::int64_t extent) {
  device_group d{0, 0, 0, 0};
  std::int64_t prev = 0;
  std::int64_t out = 0;
  const std::int64_t align = gs.align > 1 ? gs.align : 1;
  for (std::int64_t k = 0; k <= g; ++k) {
    const std::int64_t c = clamp_end(gs.ends[k], prev, extent);
    const std::int64_t lines = (c - prev + align - 1) / align * align;
    if (k == g) d = {prev, c, out, out + lines};
    out += lines;
    prev = c;
  }
  return d;
}

/// group_bounds computed by one whole wave (every lane calls it and gets the result; lane =
/// threadIdx.x % wave size), a wave's width of offsets per step: the clamp is a running max
/// (c_k = min(max(0, ends[0..k]), extent)), so a step is a lane prefix max and a lane sum of the
/// padded lengths, and G in the hundreds costs a few steps instead of G dependent iterations.
__device__ inline device_group group_bounds_wave(const group_offsets& gs,  // ends: [count] device
                                                 std::int64_t g, std::int64_t extent) {
  const int w = backend::wave_size();
  const int lane = static_cast<int>(threadIdx.x) % w;
  const std::int64_t align = gs.align > 1 ? gs.align : 1;
  device_group d{0, 0, 0, 0};
  std::int64_t carry = 0;  // c of the step before (c_{-1} = 0)
  std::int64_t out = 0;    // padded lines of the groups before the step
  for (std::int64_t base = 0; base <= g; base += w) {
    const std::int64_t k = base + lane;
    long long m = k <= g ? static_cast<long long>(gs.ends[k]) : 0;
    m = m > carry ? m : carry;
    for (int o = 1; o < w; o <<= 1) {
      const long long t = backend::wave_shfl_up(m, o);
      if (lane >= o) m = m > t ? m : t;
    }
    const long long c = m < extent ? m : extent;
    long long prev = backend::wave_shfl_up(c, 1);
    if (lane == 0) prev = carry;
    const long long lines = (c - prev + align - 1) / align * align;
    long long sum = k < g ? lines : 0;
    for (int o = 1; o < w; o <<= 1) sum += backend::wave_shfl_xor(sum, o);
    if (g < base + w) {  // the step holding g
      const int src = static_cast<int>(g - base);
      const long long b = backend::wave_shfl(prev, src);
      const long long e = backend::wave_shfl(c, src);
      const long long l = backend::wave_shfl(lines, src);
      d = {b, e, out + sum, out + sum + l};
    }
    out += sum;
    carry = backend::wave_shfl(c, w - 1);
  }
  return d;
}

/// The error bits ends[g] alone raises (against its predecessor), for the one block of each
/// group that checks it.
__device__ inline std::uint32_t offset_error_bits(const group_offsets& gs, std::int64_t g,
                                                  std::int64_t extent) {
  const std::int32_t e = gs.ends[g];
  std::uint32_t bits = 0;
  if (e < 0 || e > extent) bits |= offsets_out_of_range_bit;
  if (g > 0 && e < gs.ends[g - 1]) bits |= offsets_not_monotonic_bit;
  return bits;
}

/// Done by the block of group g that owns the group's bookkeeping: the error word and the
/// padded end offset.
__device__ inline void group_bookkeeping(const group_offsets& gs, std::uint32_t* error_word,
                                         std::int64_t g, std::int64_t extent,
                                         const device_group& d) {
  if (error_word != nullptr) {
    const std::uint32_t bits = offset_error_bits(gs, g, extent);
    if (bits != 0) backend::atomic_or(error_word, bits);
  }
  if (gs.align > 1 && gs.padded_ends != nullptr)
    gs.padded_ends[g] = static_cast<std::int32_t>(d.out_end);
}

/// For calls whose input has no elements: the padded end offsets and the error word alone.
/// One thread per group. (A template only so that every translation unit may define it.)
template <class = void>
__global__ void group_bookkeeping_kernel(group_offsets gs, std::uint32_t* error_word,
                                         std::int64_t extent) {
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < gs.count) group_bookkeeping(gs, error_word, g, extent, group_bounds(gs, g, extent));
}

}  // namespace fp8q::detail::gpu
