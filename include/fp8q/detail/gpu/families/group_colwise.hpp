// fp8q — per-group colwise on the GPU (granularity::group_col): groups along the rows, read from
// device offsets; scale (g, c) for every column c of every non-empty group g (scales (G, N)).
// The MoE weight-gradient case: grad_output and input cut by expert along the tokens. One block
// per (batch item, group, strip of 32 columns): a wave per row lane-per-column folds the strip's
// column maxima over the group's rows, the waves' partials meet in shared memory, then the same
// rows are cast (a second read, mostly from L2). Blocks of empty groups exit after their
// bookkeeping. Any layouts; padded outputs (group_offsets::align) shift each group's rows and
// zero its padding rows. Correct first; its speed is measured in docs/benchmarks.
#pragma once

#include <cstdint>

#include "fp8q/detail/gpu/device_groups.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

inline constexpr int group_strip_cols = 32;

// in:       [batch, rows, cols] In, any layout
// out.data: [batch, rows', cols] FP8, any layout (rows' >= rows + G * (align - 1) when padded)
// scales:   [batch, G, cols] f32
// grid:     (strips, G, batch); block: threads = waves * 32, lane = column of the strip
// One block's work: strip `strip` of group g of batch item b; `keeper`: this block does the
// group's bookkeeping (error word, padded end).
template <spec S, tuning T, class In>
__device__ inline void group_col_block(const matrix_view<const In>& in, const quantized<S>& out,
                                       const group_offsets& gs, std::uint32_t* error_word,
                                       std::uint64_t seed, std::int64_t strip, std::int64_t g,
                                       std::int64_t b, bool keeper) {
  constexpr int threads = T.threads;
  constexpr int lines = threads / group_strip_cols;  // rows in flight per block
  __shared__ std::uint32_t partial[lines][group_strip_cols];
  __shared__ float scales[group_strip_cols];
  __shared__ device_group bounds;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % group_strip_cols;
  const int line = tid / group_strip_cols;
  const std::int64_t c = strip * group_strip_cols + lane;
  if (tid == 0) {
    bounds = group_bounds(gs, g, M);
    if (keeper) group_bookkeeping(gs, error_word, g, M, bounds);
  }
  backend::block_sync();
  if (strip * group_strip_cols >= N) return;  // a dual launch's narrower tensor
  const device_group d = bounds;
  if (d.end == d.begin) return;  // an empty group writes nothing
  std::uint32_t amax = 0;
  if (c < N) {
    for (std::int64_t r = d.begin + line; r < d.end; r += lines) {
      const std::uint32_t a = abs_bits(to_float(in(b, r, c)));
      amax = amax > a ? amax : a;
    }
  }
  partial[line][lane] = amax;
  backend::block_sync();
  if (line == 0) {
    std::uint32_t m = partial[0][lane];
    for (int k = 1; k < lines; ++k) m = m > partial[k][lane] ? m : partial[k][lane];
    const float s = group_scale<S>(m);
    scales[lane] = s;
    if (c < N) write_scales<S>(out, b, g, c, s);
  }
  backend::block_sync();
  if (c >= N) return;
  const float s = scales[lane];
  const std::int64_t shift = d.out_begin - d.begin;
  for (std::int64_t r = d.begin + line; r < d.end; r += lines) {
    const std::uint8_t q = encode_scaled<S>(to_float(in(b, r, c)) * s, seed, logical_index(b, r, c, M, N));
    out.data(b, r + shift, c) = fp8<S.out>{q};
  }
  for (std::int64_t r = d.out_begin + (d.end - d.begin) + line; r < d.out_end; r += lines)
    out.data(b, r, c) = fp8<S.out>{0};  // padding
}

template <class SC, class TC, class In>
__global__ void __launch_bounds__(TC::value.threads)
    group_col_kernel(matrix_view<const In> in, quantized<SC::value> out, group_offsets gs,
                     std::uint32_t* error_word, std::uint64_t seed) {
  group_col_block<SC::value, TC::value, In>(in, out, gs, error_word, seed, blockIdx.x, blockIdx.y,
                                            blockIdx.z, blockIdx.x == 0 && blockIdx.z == 0);
}

// Two tensors with the same rows and offsets in one launch (the MoE weight gradient's
// grad_output and input): grid z runs over the batch items of a, then those of b; grid x
// covers the wider one's strips. Offsets are checked (and padded ends written) once, by a's
// blocks; b's padded ends are the same numbers.
template <class SC, class TC, class In>
__global__ void __launch_bounds__(TC::value.threads)
    group_col_dual_kernel(matrix_view<const In> in_a, quantized<SC::value> out_a,
                          matrix_view<const In> in_b, quantized<SC::value> out_b,
                          group_offsets gs, std::uint32_t* error_word, std::uint64_t seed) {
  const std::int64_t z = blockIdx.z;
  if (z < in_a.batch) {
    group_col_block<SC::value, TC::value, In>(in_a, out_a, gs, error_word, seed, blockIdx.x,
                                              blockIdx.y, z, blockIdx.x == 0 && z == 0);
  } else {
    group_offsets quiet = gs;
    quiet.padded_ends = nullptr;
    group_col_block<SC::value, TC::value, In>(in_b, out_b, quiet, nullptr, seed, blockIdx.x,
                                              blockIdx.y, z - in_a.batch, false);
  }
}

template <spec S, tuning T, class In>
struct group_colwise {
  static constexpr gpu_path name = gpu_path::group_colwise;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = false;
  static constexpr tuning R = resolve_tuning(T, S, {});
  struct plan {};

  static bool accepts(const problem<S, In>& p, plan*) {
    return p.groups.count <= 65535 && p.in.batch <= 65535 &&
           (p.in.cols + group_strip_cols - 1) / group_strip_cols <= 0x7fffffffLL;
  }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>&) { return 0; }

  static status enqueue(const problem<S, In>& p, const plan&, void*, gpu_stream stream) {
    if (p.groups.count == 0) return status::success;  // G = 0 writes nothing
    const dim3 grid(static_cast<unsigned>((p.in.cols + group_strip_cols - 1) / group_strip_cols),
                    static_cast<unsigned>(p.groups.count), static_cast<unsigned>(p.in.batch));
    return backend::launch<group_col_kernel<spec_c<S>, tuning_c<R>, In>>(
        *p.dev, false, grid, R.threads, stream, p.in, p.out, p.groups, p.error_word, p.seed);
  }
};

}  // namespace fp8q::detail::gpu
