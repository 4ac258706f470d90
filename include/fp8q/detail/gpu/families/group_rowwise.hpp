// fp8q — per-group rowwise on the GPU (granularity::group_row): groups along the columns, read
// from device offsets; scale (g, r) for every row r of every non-empty group g (scales (G, M)).
// The MoE case: a routed activation's K dimension cut by expert. One block per row walks the
// groups in order, so each block scans the offsets once; per group it folds the amax of the
// row's segment, writes the scale, then casts the segment (a second read, from L2). Any layouts;
// row-major input reads coalesced. Padded outputs (group_offsets::align) shift each segment and
// zero its padding columns. Correct first; its speed is measured in docs/benchmarks.
#pragma once

#include <cstdint>

#include "fp8q/detail/gpu/device_groups.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

// in:       [batch, rows, cols] In, any layout
// out.data: [batch, rows, cols'] FP8, any layout (cols' >= cols + G * (align - 1) when padded)
// scales:   [batch, G, rows] f32
template <class SC, class TC, class In>
__global__ void __launch_bounds__(TC::value.threads)
    group_row_kernel(matrix_view<const In> in, quantized<SC::value> out, group_offsets gs,
                     std::uint32_t* error_word, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr int threads = TC::value.threads;
  using reducer = backend::block_max<threads>;
  __shared__ typename reducer::storage red;
  __shared__ float s_shared;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const int tid = static_cast<int>(threadIdx.x);
  for (std::int64_t row = blockIdx.x; row < in.batch * M; row += gridDim.x) {
    const std::int64_t b = row / M;
    const std::int64_t r = row % M;
    std::int64_t prev = 0;  // clamped end of the group before (device_groups.hpp's rule)
    std::int64_t out_at = 0;
    const std::int64_t align = gs.align > 1 ? gs.align : 1;
    for (std::int64_t g = 0; g < gs.count; ++g) {
      const std::int64_t end = clamp_end(gs.ends[g], prev, N);
      const device_group d{prev, end, out_at, out_at + (end - prev + align - 1) / align * align};
      if (row == 0 && tid == 0) group_bookkeeping(gs, error_word, g, N, d);
      prev = end;
      out_at = d.out_end;
      if (d.end == d.begin) continue;  // an empty group writes nothing
      std::uint32_t amax = 0;
      for (std::int64_t c = d.begin + tid; c < d.end; c += threads) {
        const std::uint32_t a = abs_bits(to_float(in(b, r, c)));
        amax = amax > a ? amax : a;
      }
      amax = reducer::run(amax, red);
      if (tid == 0) {
        const float s = group_scale<S>(amax);
        s_shared = s;
        write_scales<S>(out, b, g, r, s);
      }
      backend::block_sync();
      const float s = s_shared;
      const std::int64_t shift = d.out_begin - d.begin;
      for (std::int64_t c = d.begin + tid; c < d.end; c += threads) {
        const std::uint8_t q = encode_scaled<S>(to_float(in(b, r, c)) * s, seed, logical_index(b, r, c, M, N));
        out.data(b, r, c + shift) = fp8<S.out>{q};
      }
      for (std::int64_t c = d.out_begin + (d.end - d.begin) + tid; c < d.out_end; c += threads)
        out.data(b, r, c) = fp8<S.out>{0};  // padding
      backend::block_sync();  // red and s_shared are reused by the next group
    }
  }
}

template <spec S, tuning T, class In>
struct group_rowwise {
  static constexpr gpu_path name = gpu_path::group_rowwise;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = false;
  static constexpr tuning R = resolve_tuning(T, S, {});
  struct plan {};

  static bool accepts(const problem<S, In>&, plan*) { return true; }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>&) { return 0; }

  static status enqueue(const problem<S, In>& p, const plan&, void*, gpu_stream stream) {
    if (p.groups.count == 0) return status::success;  // G = 0 writes nothing
    const std::int64_t rows = p.in.rows * p.in.batch;
    const unsigned grid = static_cast<unsigned>(rows < 65535LL * 1024 ? rows : 65535LL * 1024);
    return backend::launch<group_row_kernel<spec_c<S>, tuning_c<R>, In>>(
        *p.dev, false, dim3(grid), R.threads, stream, p.in, p.out, p.groups, p.error_word, p.seed);
  }
};

}  // namespace fp8q::detail::gpu
