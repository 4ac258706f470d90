// fp8q — rowwise families on row-major input and output, one launch, each row read once:
//   row_wave   one wave per row, the row in registers, no barrier (rows of up to 24 units per
//              lane, 6144 bf16 on 32-lane warps); chosen for rows of up to 12 units per lane
//              where there are at least 4 rows per multiprocessor (docs/design.md, "One wave
//              per row")
//   row_block  one block per row, the first 8 units per thread in registers, the rest re-read
//              from L2, one barrier per row; unaligned lines take one element per unit
#pragma once

#include <cstdint>
#include <type_traits>

#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

// Rowwise, fused: one block per row. The row's first Items * threads units (16-byte vectors, or
// single elements when U == 1) stay in registers, raw, between the amax and the cast, so the
// row is read from device memory once; longer rows re-read the remainder (from L2: one row is
// at most a few hundred KB). Consecutive threads take consecutive units: each warp-wide load is
// 512 contiguous bytes and each store 32 * U contiguous bytes. A row that passes
// in_range_group takes the in-range encoder, as in row_wave_kernel.
// in:       [batch, rows, cols] In, row-major, ld any (16-byte aligned lines when U > 1)
// out.data: [batch, rows, cols] FP8, row-major (16-byte aligned lines when U > 1)
template <class SC, class TC, class In, int U, int Items>
__global__ void __launch_bounds__(TC::value.threads)
    row_fused_kernel(matrix_view<const In> in, quantized<SC::value> out, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr int threads = TC::value.threads;
  constexpr bool packed_amax = sizeof(In) == 2 && U == unit_elems<In>;
  // each wave's maximum, one word per wave (threads / 32 bounds the waves of any wave size), in
  // two buffers by row parity: with one barrier per row no wave is more than one row ahead
  __shared__ std::uint32_t wave_max[2][threads / 32];

  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const std::int64_t units = N / U;
  const int tid = static_cast<int>(threadIdx.x);
  const int wave = backend::wave_size();
  int parity = 0;
  for (std::int64_t row = blockIdx.x; row < in.batch * M; row += gridDim.x, parity ^= 1) {
    const std::int64_t b = row / M;
    const std::int64_t r = row % M;
    const In* src = in.data + in.offset(b, r, 0);                                          // [cols] In
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data + out.data.offset(b, r, 0));  // [cols] FP8
    const std::uint64_t row_index = logical_index(b, r, 0, M, N);

    unit_raw<In, U> keep[Items];
    std::uint32_t amax = 0;
    load_units<In, U, Items>(src, tid, threads, units, keep);  // every load in flight before the first use
    if constexpr (packed_amax) {
      std::uint32_t m = 0;
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        if (tid + static_cast<std::int64_t>(i) * threads < units) m = unit_amax16(keep[i], m);
      }
      amax = amax16_bits<In>(m);
    } else {
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        if (tid + static_cast<std::int64_t>(i) * threads < units) amax = unit_amax<In, U>(keep[i], amax);
      }
    }
    for (std::int64_t u = tid + static_cast<std::int64_t>(Items) * threads; u < units; u += threads)
      amax = unit_amax<In, U>(load_unit<In, U>(src + u * U), amax);
    for (std::int64_t e = units * U + tid; e < N; e += threads) {
      const std::uint32_t a = abs_bits(load_one(src + e));
      amax = amax > a ? amax : a;
    }
    // one barrier: every thread folds the waves' maxima and computes the scale itself
    amax = backend::lanes_max<1>(amax);
    if (tid % wave == 0) wave_max[parity][tid / wave] = amax;
    backend::block_sync();
    amax = 0;
    for (int w = 0; w < threads / wave; ++w) amax = amax > wave_max[parity][w] ? amax : wave_max[parity][w];
    const float s = group_scale<S>(amax);
    if (tid == 0) write_scales<S>(out, b, r, 0, s);

    with_in_range<S, In, U>([&] { return in_range_group<S>(amax, s); }, [&](auto in_range) {
      // store: u < units (a predicate on the store alone where the row is in range)
      auto cast_store = [&](std::int64_t u, const unit_raw<In, U>& k, bool store) {
        if constexpr (decltype(in_range)::value) {
          cast_unit_in_range<S, TC::value, In, U>(k, s, dst + u * U, store);
        } else if (store) {
          cast_unit<S, TC::value, In, U>(k, s, dst + u * U, seed, [&](int j) { return row_index + u * U + j; });
        }
      };
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        const std::int64_t u = tid + static_cast<std::int64_t>(i) * threads;
        cast_store(u, keep[i], u < units);
      }
      for (std::int64_t u = tid + static_cast<std::int64_t>(Items) * threads; u < units; u += threads)
        cast_store(u, load_unit<In, U>(src + u * U), true);
    });
    for (std::int64_t e = units * U + tid; e < N; e += threads)
      dst[e] = encode_scaled<S>(load_one(src + e) * s, seed, row_index + e);
  }
}

// Rowwise, fused, one wave per row (for rows of at most Items * wave units): no shared memory
// and no block barrier; the amax is a butterfly across the wave's lanes. Same data path as
// row_fused_kernel otherwise. Rows per block = threads / wave size.
// Every row has the same length, so whether a lane's Items units all lie in the row is known once
// per launch (`full`); units of a shorter row that lie past its end are zero, which leaves the
// amax as it is, and are not stored. A row whose amax bounds every product in range
// (in_range_group) is encoded without NaN and overflow handling; any other row takes the
// general path.
template <class SC, class TC, class In, int U, int Items>
__global__ void __launch_bounds__(TC::value.threads)
    row_wave_kernel(matrix_view<const In> in, quantized<SC::value> out, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr bool packed_amax = sizeof(In) == 2 && U == unit_elems<In>;
  const int wave = backend::wave_size();
  const int lane = static_cast<int>(threadIdx.x) % wave;
  const std::int64_t waves = static_cast<std::int64_t>(blockDim.x) / wave;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const std::int64_t units = N / U;
  // units of a row this lane holds: lane + i * wave < units exactly for i < mine
  const std::int64_t left = units - lane;
  const int mine = left <= 0                                         ? 0
                   : left >= static_cast<std::int64_t>(Items) * wave ? Items
                                                                     : static_cast<int>((left + wave - 1) / wave);
  const bool full = units >= static_cast<std::int64_t>(Items) * wave;  // the same for every lane
  for (std::int64_t row = blockIdx.x * waves + threadIdx.x / wave; row < in.batch * M;
       row += static_cast<std::int64_t>(gridDim.x) * waves) {
    const std::int64_t b = in.batch == 1 ? 0 : row / M;
    const std::int64_t r = in.batch == 1 ? row : row % M;
    const In* row_src = in.data + (b * in.batch_stride + r * in.ld);                        // [cols] In
    const In* src = row_src + static_cast<std::int64_t>(lane) * U;                          // this lane's first unit
    auto* row_dst = reinterpret_cast<std::uint8_t*>(out.data.data + out.data.offset(b, r, 0));  // [cols] FP8
    std::uint8_t* dst = row_dst + static_cast<std::int64_t>(lane) * U;                      // this lane's first unit
    const std::uint64_t row_index = logical_index(b, r, 0, M, N);
    unit_raw<In, U> keep[Items];
    if (full) {
#pragma unroll
      for (int i = 0; i < Items; ++i) keep[i] = load_unit<In, U>(src + i * wave * U);
    } else {
#pragma unroll
      for (int i = 0; i < Items; ++i) keep[i] = i < mine ? load_unit<In, U>(src + i * wave * U) : unit_raw<In, U>{};
    }
    std::uint32_t amax = 0;
    if constexpr (packed_amax) {
      std::uint32_t m = 0;
#pragma unroll
      for (int i = 0; i < Items; ++i) m = unit_amax16(keep[i], m);
      amax = amax16_bits<In>(m);
    } else {
#pragma unroll
      for (int i = 0; i < Items; ++i) amax = unit_amax<In, U>(keep[i], amax);
    }
    for (std::int64_t e = units * U + lane; e < N; e += wave) {
      const std::uint32_t a = abs_bits(load_one(row_src + e));
      amax = amax > a ? amax : a;
    }
    amax = backend::lanes_max<1>(amax);
    const float s = group_scale<S>(amax);
    if (lane == 0) write_scales<S>(out, b, r, 0, s);
    auto general = [&] {
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        const std::int64_t u = lane + static_cast<std::int64_t>(i) * wave;
        if (i < mine)
          cast_unit<S, T, In, U>(keep[i], s, dst + i * wave * U, seed, [&](int j) { return row_index + u * U + j; });
      }
    };
    if constexpr (in_range_capable<S>()) {
      if (in_range_group<S>(amax, s)) {
#pragma unroll
        for (int i = 0; i < Items; ++i) cast_unit_in_range<S, T, In, U>(keep[i], s, dst + i * wave * U, i < mine);
      } else {
        general();
      }
    } else {
      general();
    }
    for (std::int64_t e = units * U + lane; e < N; e += wave)
      row_dst[e] = encode_scaled<S>(load_one(row_src + e) * s, seed, row_index + e);
  }
}

template <spec S, class In>
bool rowwise_layouts(const problem<S, In>& p) {
  return p.in.order == layout::row_major && p.out.data.order == layout::row_major;
}

// 128 threads unless the tuning says otherwise: 4 rows per block (H200, 16384 x 5120: 0.915
// of copy, 256 threads 0.899, 512 0.769; docs/benchmarks/h200-2026-11-29.md).
template <spec S, tuning T, class In>
struct row_wave {
  static constexpr gpu_path name = gpu_path::row_wave;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = true;  // wave size, multiprocessors
  static constexpr tuning R = T.threads == 0 ? with_threads(resolve_tuning(T, S, {}), 128)
                                             : resolve_tuning(T, S, {});
  static constexpr int U = unit_elems<In>;
  static constexpr int max_units = 24;  // per lane (docs/design.md: fitted in steps of 4)
  // Longer rows go to row_block by default: row_block measured faster at 16 and 20 units per
  // lane, row_wave at 8 (H200, 2026-12-01 18:46 UTC; docs/design.md "One wave per row").
  static constexpr int preferred_units = 12;
  struct plan {};

  static bool accepts(const problem<S, In>& p, plan*) {
    if (!rowwise_layouts(p) || !lines_aligned16(p.in) || !lines_aligned16(p.out.data)) return false;
    return p.dev == nullptr || p.in.cols / U <= static_cast<std::int64_t>(max_units) * p.dev->wave_size;
  }
  // Fewer than 4 rows per multiprocessor take one block per row, so every multiprocessor gets
  // work (128 x 5120: 5.7 us against 6.9 us, H200, 2026-11-29).
  static bool preferred(const problem<S, In>& p) {
    return p.dev == nullptr || (p.in.rows * p.in.batch >= 4LL * p.dev->multiprocessors &&
                                p.in.cols / U <= static_cast<std::int64_t>(preferred_units) * p.dev->wave_size);
  }
  static std::size_t workspace(const matrix_view<const In>&) { return 0; }

  static status enqueue(const problem<S, In>& p, const plan&, void*, gpu_stream stream) {
    const int wave = p.dev->wave_size;
    const std::int64_t units = p.in.cols / U;
    const std::int64_t rows = p.in.rows * p.in.batch;
    const std::int64_t per_block = R.threads / wave;
    const std::int64_t blocks = (rows + per_block - 1) / per_block;
    const unsigned grid = static_cast<unsigned>(blocks < 0x7fffffffLL ? blocks : 0x7fffffffLL);
    auto go = [&](auto items) {
      return backend::launch<row_wave_kernel<spec_c<S>, tuning_c<R>, In, U, decltype(items)::value>>(
          *p.dev, false, dim3(grid), R.threads, stream, p.in, p.out, p.seed);
    };
    // Items fitted to the row in steps of 4 (spare registers cost occupancy: 24 units per lane
    // for a 20-unit row measured 0.842 of copy against 0.915 with 20, H200, 2026-11-29)
    if (units <= 8LL * wave) return go(std::integral_constant<int, 8>{});
    if (units <= 12LL * wave) return go(std::integral_constant<int, 12>{});
    if (units <= 16LL * wave) return go(std::integral_constant<int, 16>{});
    if (units <= 20LL * wave) return go(std::integral_constant<int, 20>{});
    return go(std::integral_constant<int, 24>{});
  }
};

// 128 threads up to 1024 units per row (8192 bf16; 0.906 of copy at 8192 x 8192, 256 threads
// 0.899), 256 above, unless the tuning says otherwise (docs/benchmarks/h200-2026-11-29.md).
template <spec S, tuning T, class In>
struct row_block {
  static constexpr gpu_path name = gpu_path::row_block;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = false;
  static constexpr tuning R = resolve_tuning(T, S, {});
  static constexpr tuning R128 = T.threads == 0 ? with_threads(R, 128) : R;
  static constexpr tuning R256 = T.threads == 0 ? with_threads(R, 256) : R;
  static constexpr int U = unit_elems<In>;
  struct plan {};

  static bool accepts(const problem<S, In>& p, plan*) { return rowwise_layouts(p); }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>&) { return 0; }

  static status enqueue(const problem<S, In>& p, const plan&, void*, gpu_stream stream) {
    const bool vec = lines_aligned16(p.in) && lines_aligned16(p.out.data);
    if (p.in.cols / U > 8LL * R128.threads) return launch<R256>(p, vec, stream);
    return launch<R128>(p, vec, stream);
  }

 private:
  template <tuning RT>
  static status launch(const problem<S, In>& p, bool vec, gpu_stream stream) {
    const std::int64_t rows = p.in.rows * p.in.batch;
    const unsigned grid = static_cast<unsigned>(rows < 65535LL * 1024 ? rows : 65535LL * 1024);
    const std::int64_t per_thread = (p.in.cols / (vec ? U : 1) + RT.threads - 1) / RT.threads;
    auto go = [&](auto u, auto items) {
      return backend::launch<row_fused_kernel<spec_c<S>, tuning_c<RT>, In, decltype(u)::value, decltype(items)::value>>(
          *p.dev, false, dim3(grid), RT.threads, stream, p.in, p.out, p.seed);
    };
    using u_vec = std::integral_constant<int, U>;
    using u_one = std::integral_constant<int, 1>;
    // Up to 8 units per thread stay on chip (16384 bf16 with 256 threads); longer rows re-read.
    if (!vec) return go(u_one{}, std::integral_constant<int, 8>{});
    if (per_thread <= 1) return go(u_vec{}, std::integral_constant<int, 1>{});
    if (per_thread <= 2) return go(u_vec{}, std::integral_constant<int, 2>{});
    if (per_thread <= 4) return go(u_vec{}, std::integral_constant<int, 4>{});
    return go(u_vec{}, std::integral_constant<int, 8>{});
  }
};

}  // namespace fp8q::detail::gpu
