// fp8q — rowwise into a column-major output: the transposed copy the other side of a GEMM reads
// (a MoE layer's transpose-rhs, dgrad's W^T; docs/semantics.md "Batched views"). Two launches:
//   row_amax_kernel            one wave per row along 16-byte units, every row's amax bits into
//                              the workspace and its scale stored
//   row_transpose_cast_kernel  a tile of 128 rows x 128 input bytes copied into shared memory
//                              (swizzled, cp.async on sm_80+), read back in quads of 4 rows x
//                              one unit, encoded with the rows' scales and stored as 4-byte
//                              words of output columns: a warp writes 128 contiguous bytes of
//                              each of a unit's columns
// A row of a long matrix does not fit on chip with enough rows beside it to fill whole output
// sectors, so the input is read twice (docs/design.md, "Rowwise into a column-major output").
// Row-major input with 16-byte aligned lines; column-major output, any ld.
#pragma once

#include <cstdint>

#include "fp8q/detail/gpu/byte_tile.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

/// Rows of the cast tile: 32 quads, so that one wave's quads of one unit column are 128 output
/// bytes of each column.
inline constexpr int rt_rows = 128;
/// Units (16 input bytes) per tile row: one quad-tile row (byte_tile.hpp).
inline constexpr int rt_units = quad_tile_units;

template <int Rows>
struct rt_tile {
  u32x4 tile[Rows][rt_units];  // [rows][slots] input units, quad_tile_slot order
  float scales[Rows];          // [rows] the tile's rows' scales
};
using rt_shared = rt_tile<rt_rows>;

// Pass 1: each row's amax (f32 bits) into amax_bits and its scale into out's scale views.
// in:        [batch, rows, cols] In, row-major, 16-byte aligned lines
// amax_bits: [batch * rows] f32 bits
template <class SC, class TC, class In>
__global__ void __launch_bounds__(TC::value.threads)
    row_amax_kernel(matrix_view<const In> in, quantized<SC::value> out, std::uint32_t* amax_bits) {
  constexpr spec S = SC::value;
  constexpr int U = unit_elems<In>;
  constexpr int K = 8;  // units in flight per lane
  constexpr bool packed = sizeof(In) == 2;
  const int wave = backend::wave_size();
  const int lane = static_cast<int>(threadIdx.x) % wave;
  const std::int64_t waves = static_cast<std::int64_t>(blockDim.x) / wave;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const std::int64_t units = N / U;
  for (std::int64_t row = blockIdx.x * waves + threadIdx.x / wave; row < in.batch * M;
       row += static_cast<std::int64_t>(gridDim.x) * waves) {
    const std::int64_t b = row / M;
    const std::int64_t r = row % M;
    const In* src = in.data + in.offset(b, r, 0);  // [cols] In
    std::uint32_t m = 0;  // packed: two 16-bit magnitudes per word; else f32 magnitude bits
    for (std::int64_t u0 = lane; u0 < units; u0 += static_cast<std::int64_t>(K) * wave) {
      unit_raw<In, U> w[K];
      load_units<In, U, K>(src, u0, wave, units, w);
#pragma unroll
      for (int i = 0; i < K; ++i) {
        if (u0 + static_cast<std::int64_t>(i) * wave < units) {
          if constexpr (packed) m = unit_amax16(w[i], m);
          else m = unit_amax<In, U>(w[i], m);
        }
      }
    }
    std::uint32_t amax = 0;
    if constexpr (packed) amax = amax16_bits<In>(m);
    else amax = m;
    for (std::int64_t e = units * U + lane; e < N; e += wave) {
      const std::uint32_t a = abs_bits(load_one(src + e));
      amax = amax > a ? amax : a;
    }
    amax = backend::lanes_max<1>(amax);
    if (lane == 0) {
      amax_bits[row] = amax;
      write_scales<S>(out, b, r, 0, group_scale<S>(amax));
    }
  }
}

// The tile of rows [r0, r0 + rows_here) x columns [c0, c0 + cols_here) of batch item b into
// sh.tile (async copies, committed; the caller waits): row r's unit u at quad_tile_slot(r, u).
// Units past cols_here are not copied; a unit cut by it is zero-filled past its columns.
// in: [batch, rows, cols] In, row-major, 16-byte aligned lines
template <class In, int Rows>
__device__ inline void copy_transpose_tile(const matrix_view<const In>& in, rt_tile<Rows>& sh, std::int64_t b,
                                           std::int64_t r0, std::int64_t c0, int rows_here, int cols_here,
                                           int tid, int threads) {
  constexpr int U = unit_elems<In>;
  const In* src = in.data + in.offset(b, r0, c0);  // [rows_here, ld] In: the tile's first element
  if (rows_here == Rows && cols_here == rt_units * U && threads % rt_units == 0) {
    // A whole tile (all but the edges): each thread copies one unit column, every threads /
    // rt_units rows, stepping a pointer; the general loop's per-copy index arithmetic (64-bit
    // row offset, division, cut units) was a quarter of row_band's instructions (docs/design.md).
    const int u = static_cast<int>(static_cast<unsigned>(tid) % rt_units);
    const int step = threads / rt_units;
    const std::int64_t src_step = static_cast<std::int64_t>(step) * in.ld;
    const In* s = src + static_cast<std::int64_t>(static_cast<unsigned>(tid) / rt_units) * in.ld + u * U;
#pragma unroll
    for (int r = static_cast<int>(static_cast<unsigned>(tid) / rt_units); r < Rows; r += step, s += src_step)
      backend::async_copy16(&sh.tile[r][quad_tile_slot(r, u)], s, 16);
    backend::async_commit();
    return;
  }
  for (int i = tid; i < Rows * rt_units; i += threads) {
    const int r = i / rt_units;
    const int u = i % rt_units;
    const int head = cols_here - u * U;  // this unit's columns: whole when >= U, none when <= 0
    if (r < rows_here && head > 0)
      backend::async_copy16(&sh.tile[r][quad_tile_slot(r, u)], src + r * in.ld + u * U,
                            (head >= U ? U : head) * static_cast<int>(sizeof(In)));
  }
  backend::async_commit();
}

// A cast quad's stores: the quad of output rows 4 q .. 4 q + 3 x unit column uc (U output
// columns) as whole 4-byte words by `words(dst)` where the output allows them (`wide`) and the
// quad is whole, else byte by byte, byte(j, k) being row 4 q + j of column uc U + k.
// base: [cols][ld] FP8, output column c0, row r0 of the tile
template <int U, class Words, class Byte>
__device__ inline void store_quad_tail(std::uint8_t* base, std::int64_t ld, int uc, int q, int rows_here,
                                       int cols_unit, bool wide, Words words, Byte byte) {
  std::uint8_t* dst = base + (uc * U) * ld + 4 * q;  // output column c0 + uc * U, row r0 + 4 q
  if (!wide || 4 * q + 4 > rows_here) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int k = 0; k < U; ++k) {  // unrolled: the caller's words stay in registers
        if (4 * q + j < rows_here && k < cols_unit) dst[k * ld + j] = byte(j, k);
      }
    }
  } else {
    words(dst);
  }
}

// The cast of a copied tile with its rows' scales (sh.scales; in_range: every row passed
// in_range_group, the same in every thread): quads of 4 rows x one unit, consecutive lanes on
// consecutive quads of one unit column, stored as 4-byte words of output columns.
// ColumnWords: where the hardware converter encodes, take each output word straight from it (a
// column's four rows), not rows of words transposed. row_band does; row_transpose does not,
// since its cast kernel would go from 48 to 58 registers (sm_90), a block of 256 threads fewer
// per multiprocessor, which no device has measured (docs/design.md, "Three cuts").
// out.data: [batch, rows, cols] FP8, column-major (lines are output columns)
template <spec S, tuning T, class In, bool ColumnWords>
__device__ inline void cast_transpose_tile(const rt_shared& sh, const quantized<S>& out, std::int64_t b,
                                           std::int64_t r0, std::int64_t c0, int rows_here, int cols_here,
                                           std::int64_t M, std::int64_t N, std::uint64_t seed, bool in_range) {
  constexpr int U = unit_elems<In>;
  constexpr int threads = T.threads;
  const int tid = static_cast<int>(threadIdx.x);
  const bool wide = reinterpret_cast<std::uintptr_t>(out.data.data) % 4 == 0 && out.data.ld % 4 == 0 &&
                    (out.data.batch == 1 || out.data.batch_stride % 4 == 0);
  const std::int64_t ld = out.data.ld;
  // [cols][ld] FP8: output column c0, row r0
  std::uint8_t* base = reinterpret_cast<std::uint8_t*>(out.data.data) + out.data.offset(b, r0, c0);
  with_in_range<S, In, U>([&] { return in_range; }, [&](auto fast) {
    // item: unit column uc x quad q; a wave's items are consecutive quads of one unit column
    for (int it = tid; it < (rt_rows / 4) * rt_units; it += threads) {
      const int uc = it / (rt_rows / 4);
      const int q = it % (rt_rows / 4);
      const int cols_unit = cols_here - uc * U < U ? cols_here - uc * U : U;
      if (cols_unit <= 0 || 4 * q >= rows_here) continue;
      if constexpr (ColumnWords && use_hw_convert<S, T>()) {
        // the converter takes a column's four values at once: its words are the output's, with
        // no byte transposes (8 permutes per 4 words from rows of words)
        float y[4][U];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          unit_raw<In, U> v{};
          if (4 * q + j < rows_here) v = sh.tile[4 * q + j][uc ^ (q & 7)];
          widen_unit<In, U>(v, y[j]);
          const float s = sh.scales[4 * q + j];
#pragma unroll
          for (int k = 0; k < U; ++k) y[j][k] *= s;
        }
        std::uint32_t cw[U];  // cw[k]: output column c0 + uc U + k, rows 4 q .. 4 q + 3 (byte j: row 4 q + j)
#pragma unroll
        for (int k = 0; k < U; ++k) {
          const float col[4] = {y[0][k], y[1][k], y[2][k], y[3][k]};
          std::uint32_t w[1];
          if constexpr (decltype(fast)::value) encode_words_in_range<S, T>(col, {0u}, w);
          else encode_words<S, T>(col, w, seed, [](int) { return std::uint64_t{0}; });
          cw[k] = w[0];
        }
        store_quad_tail<U>(
            base, ld, uc, q, rows_here, cols_unit, wide,
            [&](std::uint8_t* dst) {
#pragma unroll
              for (int k = 0; k < U; ++k) store_column_word(dst, ld, k, cols_unit, cw[k]);
            },
            [&](int j, int k) { return static_cast<std::uint8_t>(cw[k] >> (8 * j)); });
      } else {
        std::uint32_t qw[4][U / 4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          unit_raw<In, U> v{};
          if (4 * q + j < rows_here) v = sh.tile[4 * q + j][uc ^ (q & 7)];
          const float s = sh.scales[4 * q + j];
          if constexpr (decltype(fast)::value) {
            encode_unit_words_in_range<S, T, In, U>(v, s, qw[j]);
          } else {
            const std::uint64_t first = logical_index(b, r0 + 4 * q + j, c0 + uc * U, M, N);
            encode_unit_words<S, T, In, U>(v, s, qw[j], seed, [&](int k) { return first + k; });
          }
        }
        store_quad_tail<U>(
            base, ld, uc, q, rows_here, cols_unit, wide,
            [&](std::uint8_t* dst) { store_quad_columns<U>(qw, dst, ld, cols_unit); },
            [&](int j, int k) { return static_cast<std::uint8_t>(qw[j][k / 4] >> (8 * (k % 4))); });
      }
    }
  });
}

// Pass 2 (a dependent launch): the tile of rows [r0, r0 + 128) x units [8 x, 8 x + 8) of batch
// item z, encoded with the rows' scales from pass 1.
// in:        [batch, rows, cols] In, row-major, 16-byte aligned lines
// out.data:  [batch, rows, cols] FP8, column-major (lines are output columns)
// amax_bits: [batch * rows] f32 bits from row_amax_kernel
template <class SC, class TC, class In>
__global__ void __launch_bounds__(TC::value.threads)
    row_transpose_cast_kernel(matrix_view<const In> in, quantized<SC::value> out,
                              const std::uint32_t* amax_bits, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int U = unit_elems<In>;
  constexpr int threads = T.threads;
  __shared__ rt_shared sh;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const std::int64_t b = blockIdx.z;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * rt_rows;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * (rt_units * U);
  const int rows_here = M - r0 < rt_rows ? static_cast<int>(M - r0) : rt_rows;
  const int cols_here = N - c0 < rt_units * U ? static_cast<int>(N - c0) : rt_units * U;
  const int tid = static_cast<int>(threadIdx.x);

  // The input is final before this launch's predecessor (pass 1, an ordinary launch) started,
  // so the copies go out before the wait; only the amax comes from pass 1.
  copy_transpose_tile<In>(in, sh, b, r0, c0, rows_here, cols_here, tid, threads);
  backend::wait_prior_grid();
  bool in_range = true;
  for (int i = tid; i < rt_rows; i += threads) {
    float s = 0.0f;
    if (i < rows_here) {
      const std::uint32_t a = amax_bits[b * M + r0 + i];
      s = group_scale<S>(a);
      if constexpr (in_range_capable<S>()) in_range = in_range && in_range_group<S>(a, s);
    }
    sh.scales[i] = s;
  }
  backend::async_wait<0>();
  if constexpr (in_range_capable<S>()) in_range = backend::block_all(in_range);
  else backend::block_sync();
  cast_transpose_tile<S, T, In, false>(sh, out, b, r0, c0, rows_here, cols_here, M, N, seed, in_range);
}

// 256 threads for both launches unless the tuning says otherwise: 8 rows per amax block, one
// item (a quad of one unit column) per thread in the cast.
template <spec S, tuning T, class In>
struct row_transpose {
  static constexpr gpu_path name = gpu_path::row_transpose;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = false;
  static constexpr tuning R = resolve_tuning(T.threads == 0 ? with_threads(T, 256) : T, S, {});
  static constexpr int U = unit_elems<In>;
  struct plan {};

  static std::int64_t strips(std::int64_t cols) { return (cols + rt_units * U - 1) / (rt_units * U); }

  static bool accepts(const problem<S, In>& p, plan*) {
    return p.in.order == layout::row_major && p.out.data.order == layout::col_major && lines_aligned16(p.in) &&
           (p.in.rows + rt_rows - 1) / rt_rows <= 65535 && p.in.batch <= 65535 && strips(p.in.cols) <= 0x7fffffffLL;
  }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>& in) {
    return amax_workspace::of(in.batch * in.rows).bytes;
  }

  static status enqueue(const problem<S, In>& p, const plan&, void* workspace, gpu_stream stream) {
    const matrix_view<const In>& in = p.in;
    std::uint32_t* amax_bits = amax_workspace::of(in.batch * in.rows).carve(workspace);  // [batch * rows] f32 bits
    using sc = spec_c<S>;
    using tc = tuning_c<R>;
    const std::int64_t rows = in.batch * in.rows;
    const std::int64_t per_block = R.threads / p.dev->wave_size;
    const std::int64_t blocks = (rows + per_block - 1) / per_block;
    const status st = backend::launch<row_amax_kernel<sc, tc, In>>(
        *p.dev, false, dim3(static_cast<unsigned>(blocks < 0x7fffffffLL ? blocks : 0x7fffffffLL)), R.threads,
        stream, in, p.out, amax_bits);
    if (st != status::success) return st;
    const dim3 grid(static_cast<unsigned>(strips(in.cols)), static_cast<unsigned>((in.rows + rt_rows - 1) / rt_rows),
                    static_cast<unsigned>(in.batch));
    return backend::launch<row_transpose_cast_kernel<sc, tc, In>>(*p.dev, true, grid, R.threads, stream, in,
                                                                  p.out, amax_bits, p.seed);
  }
};

}  // namespace fp8q::detail::gpu
