// fp8q — colwise in two streaming passes (gpu_path::col_streaming) over a row-major input whose
// lines are 16-byte aligned and a whole number of units: a column amax pass and a cast pass,
// both reading whole rows with 16-byte loads, the cast starting while the amax pass drains
// (dependent launch, sm_90+).
#pragma once

#include <cstdint>

#include "fp8q/detail/gpu/byte_tile.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

// Colwise in two streaming passes over a row-major input whose lines are 16-byte aligned and
// whose width is a whole number of units. Both passes read whole rows with 16-byte loads
// (blocks side by side along a row run together, so DRAM sees long runs), unlike column strips.
//
// Pass 1: column amax. A block covers a band of wave * U columns (512 bytes of input per row)
// and `rows_per_block` rows; its waves take rows in turn with K loads in flight per lane, each
// lane keeps the running max of its U columns, the waves meet in shared memory, and one atomic
// per column (relaxed by default) goes to amax_bits[batch][cols], zeroed before the launch.
template <class SC, class TC, class In, int K>
__global__ void __launch_bounds__(TC::value.threads)
    col_amax_kernel(matrix_view<const In> in, std::uint32_t* amax_bits, int rows_per_block) {
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr int U = unit_elems<In>;
  __shared__ std::uint32_t partial[threads * U];  // [threads / wave][wave * U]
  const int wave = backend::wave_size();
  const int waves = threads / wave;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % wave;
  const int w = tid / wave;
  const std::int64_t b = blockIdx.z;
  const std::int64_t c = (static_cast<std::int64_t>(blockIdx.x) * wave + lane) * U;  // first column
  const std::int64_t r_begin = static_cast<std::int64_t>(blockIdx.y) * rows_per_block;
  const std::int64_t r_end = r_begin + rows_per_block < in.rows ? r_begin + rows_per_block : in.rows;
  const bool col_ok = c < in.cols;
  std::uint32_t cmax[U] = {};
  const In* col = in.data + in.offset(b, 0, col_ok ? c : 0);  // [rows, ld] In: this lane's unit column
  for (std::int64_t r0 = r_begin + w; r0 < r_end; r0 += static_cast<std::int64_t>(waves) * K) {
    u32x4 v[K];
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const std::int64_t r = r0 + static_cast<std::int64_t>(j) * waves;
      v[j] = u32x4{0, 0, 0, 0};
      if (col_ok && r < r_end) v[j] = load_unit<In, U>(col + r * in.ld);
    }
#pragma unroll
    for (int j = 0; j < K; ++j) max_unit<In, U>(v[j], cmax);
  }
  const int band = wave * U;
  const group_partials gp{partial, band};
#pragma unroll
  for (int k = 0; k < U; ++k) gp.put(w, lane * U + k, cmax[k]);
  backend::block_sync();
  for (int i = tid; i < band; i += threads) {
    const std::uint32_t m = gp.fold(i, waves);
    const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * band + i;
    if (col < in.cols) backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + b * in.cols + col, m);
  }
}

// Shared memory of col_cast_kernel: the byte tile and the tile's column scales. The family fits
// its tile to the size of this struct.
template <tuning T, bool Staged>
struct col_cast_shared {
  std::uint32_t words[col_tile_bytes<T, Staged> / 4];
  float scales[T.tile_cols];
};

// run in reverse order: pass 1 ended on the last rows, which are what L2 still holds.
template <class SC, class TC, class In, bool Staged>
__global__ void __launch_bounds__(TC::value.threads)
    col_cast_kernel(matrix_view<const In> in, quantized<SC::value> out,
                    const std::uint32_t* amax_bits, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int TR = T.tile_rows;
  constexpr int TCOL = T.tile_cols;
  __shared__ col_cast_shared<T, Staged> sm;
  auto& words = sm.words;    // the byte tile
  auto& scales = sm.scales;  // [TCOL] f32

  backend::wait_prior_grid();  // the amax launch (this one is a dependent launch)
  const block_pos at = reverse_block();
  const std::int64_t bx = at.x;
  const std::int64_t by = at.y;
  const std::int64_t b = at.z;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const std::int64_t r0 = by * TR;
  const std::int64_t c0 = bx * TCOL;
  const int rows_here = static_cast<int>(M - r0 < TR ? M - r0 : TR);
  const int cols_here = static_cast<int>(N - c0 < TCOL ? N - c0 : TCOL);

  const bool in_range = tile_column_scales<S, TCOL>(out, scales, b, 0, c0, cols_here, by == 0,
                              [&](int i) { return amax_bits[b * N + c0 + i]; });
  const byte_tile tile{reinterpret_cast<std::uint8_t*>(words), TCOL + 4, TR + 4,
                       out.data.order == layout::row_major};
  cast_col_tile<S, T, In, Staged>(in, out, tile, scales, b, r0, c0, rows_here, cols_here, seed, in_range);
}

// 256 x 64 tiles and 256 threads unless the tuning says otherwise (the two passes' tiles,
// 16384 x 5120 bf16: 256 x 64 123.6 us, 128 x 128 124.1 us, 128 x 64 130.7 us, 64 x 64 150.3 us,
// H200, docs/design.md); 8 rows in flight per lane in the amax pass.
template <spec S, tuning T, class In>
struct col_streaming {
  static constexpr gpu_path name = gpu_path::col_streaming;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = true;  // wave size (rows per amax block)
  template <tuning U>
  using shared_of = col_cast_shared<U, true>;
  static constexpr tuning base = resolve_tuning(T, S, {});
  static constexpr tuning R = fit_tile<T.tile_rows == 0 && T.tile_cols == 0 ? with_tile(base, 256, 64) : base, shared_of>();
  static constexpr int K = units_or(T, 8);  // rows in flight per lane in the amax pass
  static constexpr int U = unit_elems<In>;
  struct plan {};

  static std::int64_t rows_per_block(int wave) { return 2LL * (R.threads / wave) * K; }

  static bool accepts(const problem<S, In>& p, plan*) {
    if (!streams_columns(p) || p.in.batch > 65535 || (p.in.rows + R.tile_rows - 1) / R.tile_rows > 65535)
      return false;
    if (p.dev == nullptr) return true;
    const std::int64_t rpb = rows_per_block(p.dev->wave_size);
    return (p.in.rows + rpb - 1) / rpb <= 65535;
  }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>& in) {
    return amax_workspace::of(unit_axes<S>::groups(in.batch, in.rows, in.cols)).bytes;
  }

  static status enqueue(const problem<S, In>& p, const plan&, void* workspace, gpu_stream stream) {
    const matrix_view<const In>& in = p.in;
    const amax_workspace ws = amax_workspace::of(unit_axes<S>::groups(in.batch, in.rows, in.cols));
    std::uint32_t* amax_bits = ws.carve(workspace);  // [batch, cols] f32 bits
    const int wave = p.dev->wave_size;
    // pass 1: bands of wave * U columns by blocks of two loop trips of rows (many short blocks:
    // a grid of ~8 long blocks per multiprocessor left a 1.6-wave tail, H200 ncu, 2026-11-29)
    const std::int64_t band = static_cast<std::int64_t>(wave) * U;
    const std::int64_t gx = (in.cols + band - 1) / band;
    const std::int64_t rpb = rows_per_block(wave);
    const std::int64_t gy = (in.rows + rpb - 1) / rpb;
    status st = backend::memset_async(amax_bits, 0, ws.bytes, stream);
    if (st != status::success) return st;
    st = backend::launch<col_amax_kernel<spec_c<S>, tuning_c<R>, In, K>>(
        *p.dev, false, dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(in.batch)),
        R.threads, stream, in, amax_bits, static_cast<int>(rpb));
    if (st != status::success) return st;
    // pass 2
    const dim3 grid(static_cast<unsigned>((in.cols + R.tile_cols - 1) / R.tile_cols),
                    static_cast<unsigned>((in.rows + R.tile_rows - 1) / R.tile_rows), static_cast<unsigned>(in.batch));
    constexpr bool staged = R.store != store_path::direct;
    return backend::launch<col_cast_kernel<spec_c<S>, tuning_c<R>, In, staged>>(
        *p.dev, true, grid, R.threads, stream, in, p.out, amax_bits, p.seed);
  }
};

}  // namespace fp8q::detail::gpu
