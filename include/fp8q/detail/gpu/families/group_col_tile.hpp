// fp8q — per-group colwise with each group's column strip staged on chip (granularity::group_col,
// the MoE weight gradient; docs/design.md, "Per-group colwise: one read per strip"). A block
// takes one group of one batch item and a few consecutive 128-byte column strips of it (64
// bf16/f16 columns, 32 f32). Per strip, the group's rows go from device memory to a swizzled
// shared-memory tile in 16-byte units (several loads in flight per thread) while the column
// maxima fold in registers; the scales follow; the tile is then read transposed in quads of 4
// rows x 1 unit, encoded, and written: a column-major output leaves as 4-byte words, a warp
// covering 128 contiguous bytes of one column; a row-major one as 4 or 8-byte pieces of rows.
// A group longer than the tile takes two passes inside the block (maxima over chunks of the
// tile's size, then the chunks encoded last first: the last is still in the tile, the others
// re-read, mostly from L2). Row-major input with 16-byte aligned lines; any output layout;
// padded outputs; bad offsets clamped (device_groups.hpp).
#pragma once

#include <cstdint>

#include "fp8q/config.hpp"
#include "fp8q/detail/gpu/byte_tile.hpp"
#include "fp8q/detail/gpu/device_groups.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

/// Units (16 input bytes) per strip row: a strip is 128 bytes of every input row, which is also
/// the period of the tile's swizzle (eight 16-byte slots span the 32 banks once).
inline constexpr int gct_units = 8;
/// Columns of the widest strip (2-byte inputs).
inline constexpr int gct_max_cols = gct_units * 8;

/// Rows of the tile (a multiple of 4): a group's strip of up to gct_rows - 4 rows is read from
/// device memory once (4 rows of slack align the quads to the output's rows). 704 rows (88 KiB)
/// leave two blocks per multiprocessor on sm_90 and fit the 99 KiB opt-in of sm_86/89; HIP's
/// 64 KiB of LDS per workgroup take 448.
inline constexpr int gct_rows = FP8Q_TOOLCHAIN_HIP ? 448 : 704;
inline constexpr int gct_chunk = gct_rows - 4;  // group rows per pass over the tile

/// Rounds of loads in flight per thread (each round one unit): 32 KiB of a block's reads in
/// flight with 256 threads (or more).
template <int Threads>
inline constexpr int gct_loads = Threads >= 512 ? 4 : 8;

/// One block's shared memory: the kernel lays its dynamic shared memory out as this, the host
/// launches sizeof of it (gct_smem_bytes).
template <int Threads>
struct gct_shared {
  u32x4 tile[gct_rows][gct_units];                   // [rows][slots] input units, gct_slot order
  std::uint32_t partial[Threads / 32][gct_max_cols];  // [waves][strip columns] amax bits
  float scales[gct_max_cols];                         // [strip columns] this strip's scales
  device_group bounds;
};

template <int Threads>
inline constexpr int gct_smem_bytes = static_cast<int>(sizeof(gct_shared<Threads>));

/// Slot of unit u of tile row r: rows of one quad share a rotation, consecutive quads differ, so
/// 8 lanes reading one unit column of 8 consecutive quads (or 8 units of one row) hit 8
/// distinct 4-bank groups.
__device__ inline int gct_slot(int r, int u) { return u ^ ((r >> 2) & 7); }

/// The first `count` (< U) elements of a unit at p, the rest zero (a line's last, partial unit:
/// the bytes past the line's end are never read).
template <class In, int U>
__device__ inline unit_raw<In, U> load_unit_head(const In* p, int count) {
  struct elems {
    In e[U];
  } t{};
#pragma unroll
  for (int k = 0; k < U; ++k)
    if (k < count) t.e[k] = p[k];
  return __builtin_bit_cast(unit_raw<In, U>, t);
}

// One strip of one group, as every family-wide constant of the block sees it.
struct gct_strip {
  std::int64_t c0;  // first column
  int cols_here;    // columns in this strip (fewer at the matrix's right edge)
  int units_here;   // units holding them
};

// Rows [i0, i0 + rows_c) of the group (src: the group's first row of the strip) into the tile at
// tile rows + phase, folding column maxima into cmax where Fold, storing where Keep.
template <int Threads, class In, bool Fold, bool Keep>
__device__ inline void gct_load_chunk(gct_shared<Threads>& sh,
                                      const In* src,  // [n, ld] In: the group's strip
                                      std::int64_t ld, std::int64_t i0, int rows_c, int phase,
                                      const gct_strip& st, std::uint32_t (&cmax)[unit_elems<In>]) {
  constexpr int U = unit_elems<In>;
  constexpr int step = Threads / gct_units;  // rows per round
  const int tid = static_cast<int>(threadIdx.x);
  const int u = tid % gct_units;
  const int r0 = tid / gct_units;
  const int head = st.cols_here - u * U;  // this thread's unit: whole when >= U, none when <= 0
  const In* p = src + i0 * ld + u * U;
  for (int base = 0; base < rows_c; base += step * gct_loads<Threads>) {
    unit_raw<In, U> v[gct_loads<Threads>];
#pragma unroll
    for (int i = 0; i < gct_loads<Threads>; ++i) {
      const int r = base + r0 + step * i;
      v[i] = unit_raw<In, U>{};
      if (r < rows_c && head > 0)
        v[i] = head >= U ? load_unit<In, U>(p + r * ld) : load_unit_head<In, U>(p + r * ld, head);
    }
#pragma unroll
    for (int i = 0; i < gct_loads<Threads>; ++i) {
      const int r = base + r0 + step * i;
      if (r >= rows_c) continue;
      if constexpr (Fold) max_unit<In, U>(v[i], cmax);
      if constexpr (Keep) sh.tile[r + phase][gct_slot(r + phase, u)] = v[i];
    }
  }
}

// Encode the tile's rows (group rows [i0, i0 + rows_c), at tile rows + phase) and store them.
// A work item is one quad (4 tile rows, 4-aligned in the output's rows) x one unit column:
// column-major output gives consecutive quads of one unit column to consecutive lanes (a warp
// then writes 128 contiguous bytes of each of U columns), row-major output consecutive units of
// one quad (each row's strip leaves as one piece per lane).
template <spec S, tuning T, class In>
__device__ inline void gct_encode_chunk(const gct_shared<T.threads>& sh, const quantized<S>& out,
                                        const device_group& d, std::int64_t b, std::int64_t i0,
                                        int rows_c, int phase, const gct_strip& st, std::int64_t M,
                                        std::int64_t N, bool col_out, bool wide, std::uint64_t seed) {
  constexpr int U = unit_elems<In>;
  constexpr int threads = T.threads;
  auto* out_bytes = reinterpret_cast<std::uint8_t*>(out.data.data);  // [batch, rows', cols] FP8
  const int nq = (rows_c + phase + 3) / 4;
  const std::int64_t in_row0 = d.begin + i0 - phase;       // input row of tile row 0
  const std::int64_t out_row0 = d.out_begin + i0 - phase;  // its output row: a multiple of 4
  const int items = nq * st.units_here;
  for (int it = static_cast<int>(threadIdx.x); it < items; it += threads) {
    const int q = col_out ? it % nq : it / st.units_here;
    const int uc = col_out ? it / nq : it % st.units_here;
    const int lo = phase - 4 * q;            // rows j of the quad with lo <= j < hi are the group's
    const int hi = rows_c + phase - 4 * q;
    unit_raw<In, U> v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      v[j] = unit_raw<In, U>{};
      if (j >= lo && j < hi) v[j] = sh.tile[4 * q + j][uc ^ (q & 7)];
    }
    float sc[U];
#pragma unroll
    for (int k = 0; k < U; ++k) sc[k] = sh.scales[uc * U + k];
    const std::int64_t c = st.c0 + uc * U;
    std::uint32_t qw[4][U / 4];
    encode_quad<S, T, In, U>(v, sc, seed, logical_index(b, in_row0 + 4 * q, c, M, N), N, qw);
    const std::int64_t o = out_row0 + 4 * q;
    const int cols_unit = N - c < U ? static_cast<int>(N - c) : U;
    if (col_out && wide && lo <= 0 && hi >= 4) {
#pragma unroll
      for (int w = 0; w < U / 4; ++w) {
        std::uint32_t cw[4];
        transpose_quad(qw[0][w], qw[1][w], qw[2][w], qw[3][w], cw);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          if (4 * w + k < cols_unit)
            *reinterpret_cast<std::uint32_t*>(out_bytes + out.data.offset(b, o, c + 4 * w + k)) = cw[k];
        }
      }
      continue;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (j < lo || j >= hi) continue;
      if (!col_out && wide && cols_unit == U) {
        store_words<U / 4>(out_bytes + out.data.offset(b, o + j, c), qw[j]);
      } else {
#pragma unroll
        for (int k = 0; k < U; ++k) {  // unrolled: qw stays in registers
          if (k < cols_unit)
            out_bytes[out.data.offset(b, o + j, c + k)] = static_cast<std::uint8_t>(qw[j][k / 4] >> (8 * (k % 4)));
        }
      }
    }
  }
}

// in:       [batch, rows, cols] In, row-major, 16-byte aligned lines
// out.data: [batch, rows', cols] FP8, any layout (rows' >= rows + G * (align - 1) when padded)
// scales:   [batch, G, cols] f32
// One block's work: strips [strip_first, strip_first + strips_per_block) of group g of batch
// item b; `keeper`: this block does the group's bookkeeping (error word, padded end).
template <spec S, tuning T, class In>
__device__ inline void group_col_tile_block(const matrix_view<const In>& in, const quantized<S>& out,
                                            const group_offsets& gs, std::uint32_t* error_word,
                                            std::uint64_t seed, std::int64_t strip_first,
                                            int strips_per_block, std::int64_t g, std::int64_t b,
                                            bool keeper, gct_shared<T.threads>& sh) {
  constexpr int U = unit_elems<In>;
  constexpr int cols = gct_units * U;
  constexpr int threads = T.threads;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const int tid = static_cast<int>(threadIdx.x);
  const int wave_n = backend::wave_size();
  if (tid < wave_n) {
    const device_group d = group_bounds_wave(gs, g, M);
    if (tid == 0) {
      sh.bounds = d;
      if (keeper) group_bookkeeping(gs, error_word, g, M, d);
    }
  }
  backend::block_sync();
  const device_group d = sh.bounds;
  const std::int64_t n = d.end - d.begin;
  const std::int64_t strips = (N + cols - 1) / cols;
  if (n == 0 || strip_first >= strips) return;  // an empty group writes nothing; a dual launch's narrower tensor
  const std::int64_t strip_end = strip_first + strips_per_block < strips ? strip_first + strips_per_block : strips;
  const int phase = static_cast<int>(d.out_begin % 4);
  const std::int64_t chunks = (n + gct_chunk - 1) / gct_chunk;
  const auto rows_of = [&](std::int64_t ch) {
    const std::int64_t left = n - ch * gct_chunk;
    return static_cast<int>(left < gct_chunk ? left : gct_chunk);
  };
  const bool col_out = out.data.order == layout::col_major;
  const std::int64_t word = col_out ? 4 : U;  // the bytes one wide store writes
  const bool wide = reinterpret_cast<std::uintptr_t>(out.data.data) % word == 0 && out.data.ld % word == 0 &&
                    (out.data.batch == 1 || out.data.batch_stride % word == 0);
  const group_partials gp{&sh.partial[0][0], gct_max_cols};
  const int lane = tid % wave_n;
  const int wave = tid / wave_n;
  for (std::int64_t strip = strip_first; strip < strip_end; ++strip) {
    gct_strip st{};
    st.c0 = strip * cols;
    st.cols_here = N - st.c0 < cols ? static_cast<int>(N - st.c0) : cols;
    st.units_here = (st.cols_here + U - 1) / U;
    const In* src = in.data + in.offset(b, d.begin, st.c0);  // [n, ld] In: the group's strip
    if (strip != strip_first) backend::block_sync();  // the strip before has left the tile
    std::uint32_t cmax[U] = {};
    for (std::int64_t ch = 0; ch + 1 < chunks; ++ch)
      gct_load_chunk<threads, In, true, false>(sh, src, in.ld, ch * gct_chunk, rows_of(ch), phase, st, cmax);
    gct_load_chunk<threads, In, true, true>(sh, src, in.ld, (chunks - 1) * gct_chunk, rows_of(chunks - 1),
                                            phase, st, cmax);
    put_unit_columns<gct_units, U>(gp, cmax, lane, wave);
    backend::block_sync();
    for (int i = tid; i < cols; i += threads) {
      const float s = i < st.cols_here ? group_scale<S>(gp.fold(i, threads / wave_n)) : 0.0f;
      sh.scales[i] = s;
      if (i < st.cols_here) write_scales<S>(out, b, g, st.c0 + i, s);
    }
    backend::block_sync();
    for (std::int64_t ch = chunks - 1; ch >= 0; --ch) {
      if (ch != chunks - 1) {  // the last chunk is still in the tile; the others come back
        backend::block_sync();
        gct_load_chunk<threads, In, false, true>(sh, src, in.ld, ch * gct_chunk, rows_of(ch), phase, st, cmax);
        backend::block_sync();
      }
      gct_encode_chunk<S, T, In>(sh, out, d, b, ch * gct_chunk, rows_of(ch), phase, st, M, N, col_out,
                                 wide, seed);
    }
    const std::int64_t pad = d.out_end - d.out_begin - n;  // padding rows: zero bytes
    auto* out_bytes = reinterpret_cast<std::uint8_t*>(out.data.data);
    for (std::int64_t it = tid; it < pad * st.cols_here; it += threads) {
      const std::int64_t r = col_out ? it % pad : it / st.cols_here;
      const std::int64_t k = col_out ? it / pad : it % st.cols_here;
      out_bytes[out.data.offset(b, d.out_begin + n + r, st.c0 + k)] = 0;
    }
  }
}

/// Blocks per multiprocessor the launch bounds ask for (two tiles fit one sm_90 multiprocessor).
template <int Threads>
inline constexpr int gct_min_blocks = Threads <= 512 ? 2 : 1;

// grid: (strip groups, G, batch); block: T.threads; dynamic shared memory gct_smem_bytes.
template <class SC, class TC, class In>
__global__ void __launch_bounds__(TC::value.threads, gct_min_blocks<TC::value.threads>)
    group_col_tile_kernel(matrix_view<const In> in, quantized<SC::value> out, group_offsets gs,
                          std::uint32_t* error_word, std::uint64_t seed, int strips_per_block) {
  extern __shared__ u32x4 dyn[];
  auto& sh = *reinterpret_cast<gct_shared<TC::value.threads>*>(dyn);
  group_col_tile_block<SC::value, TC::value, In>(
      in, out, gs, error_word, seed, static_cast<std::int64_t>(blockIdx.x) * strips_per_block,
      strips_per_block, blockIdx.y, blockIdx.z, blockIdx.x == 0 && blockIdx.z == 0, sh);
}

// Two tensors with the same rows and offsets in one launch (quantize_dual): grid z runs over the
// batch items of a, then those of b; grid x covers the wider one's strip groups. Offsets are
// checked (and padded ends written) once, by a's blocks.
template <class SC, class TC, class In>
__global__ void __launch_bounds__(TC::value.threads, gct_min_blocks<TC::value.threads>)
    group_col_tile_dual_kernel(matrix_view<const In> in_a, quantized<SC::value> out_a,
                               matrix_view<const In> in_b, quantized<SC::value> out_b,
                               group_offsets gs, std::uint32_t* error_word, std::uint64_t seed,
                               int strips_per_block) {
  extern __shared__ u32x4 dyn[];
  auto& sh = *reinterpret_cast<gct_shared<TC::value.threads>*>(dyn);
  const std::int64_t z = blockIdx.z;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * strips_per_block;
  if (z < in_a.batch) {
    group_col_tile_block<SC::value, TC::value, In>(in_a, out_a, gs, error_word, seed, first,
                                                   strips_per_block, blockIdx.y, z,
                                                   blockIdx.x == 0 && z == 0, sh);
  } else {
    group_offsets quiet = gs;
    quiet.padded_ends = nullptr;
    group_col_tile_block<SC::value, TC::value, In>(in_b, out_b, quiet, nullptr, seed, first,
                                                   strips_per_block, blockIdx.y, z - in_a.batch,
                                                   false, sh);
  }
}

template <spec S, tuning T, class In>
struct group_col_tile {
  static constexpr gpu_path name = gpu_path::group_col_tile;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = true;  // the tile needs the device's opt-in shared memory
  // 256 threads: two blocks per multiprocessor at up to 128 registers (512 spill at the 64 that
  // two blocks of them allow), 32 KiB of loads in flight per block.
  static constexpr tuning R = resolve_tuning(T.threads == 0 ? with_threads(T, 256) : T, S, {});
  static constexpr int smem = gct_smem_bytes<R.threads>;
  static constexpr int cols = gct_units * unit_elems<In>;
  struct plan {};

  static std::int64_t strips(std::int64_t n) { return (n + cols - 1) / cols; }

  static bool accepts(const problem<S, In>& p, plan*) {
    return p.in.order == layout::row_major && lines_aligned16(p.in) && p.groups.count <= 65535 &&
           p.in.batch <= 65535 && strips(p.in.cols) <= 0x7fffffffLL &&
           (p.dev == nullptr || backend::max_dynamic_shared(*p.dev) >= smem);
  }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>&) { return 0; }

  /// Strips per block: one per (group, strip) task while tasks are few; with many small groups
  /// (G in the hundreds) up to 8, so that each block's offsets scan and start-up serve several
  /// strips while the grid still holds 16 blocks per multiprocessor.
  static int strips_per_block(std::int64_t tasks, int multiprocessors) {
    const std::int64_t k = tasks / (16 * static_cast<std::int64_t>(multiprocessors > 0 ? multiprocessors : 1));
    return static_cast<int>(k < 1 ? 1 : k > 8 ? 8 : k);
  }

  static status enqueue(const problem<S, In>& p, const plan&, void*, gpu_stream stream) {
    if (p.groups.count == 0) return status::success;  // G = 0 writes nothing
    const std::int64_t n = strips(p.in.cols);
    const int per = strips_per_block(n * p.groups.count * p.in.batch, p.dev->multiprocessors);
    const dim3 grid(static_cast<unsigned>((n + per - 1) / per), static_cast<unsigned>(p.groups.count),
                    static_cast<unsigned>(p.in.batch));
    return backend::launch_shared<group_col_tile_kernel<spec_c<S>, tuning_c<R>, In>>(
        *p.dev, grid, R.threads, smem, stream, p.in, p.out, p.groups, p.error_word, p.seed, per);
  }

  /// quantize_dual's launch: a and b share rows and offsets; both accepted by accepts().
  static status enqueue_dual(const problem<S, In>& a, const problem<S, In>& b, gpu_stream stream) {
    if (a.groups.count == 0) return status::success;
    const std::int64_t na = strips(a.in.cols), nb = strips(b.in.cols);
    const std::int64_t n = na > nb ? na : nb;
    if (a.in.batch + b.in.batch > 65535) return status::bad_layout;
    const int per = strips_per_block((na * a.in.batch + nb * b.in.batch) * a.groups.count, a.dev->multiprocessors);
    const dim3 grid(static_cast<unsigned>((n + per - 1) / per), static_cast<unsigned>(a.groups.count),
                    static_cast<unsigned>(a.in.batch + b.in.batch));
    return backend::launch_shared<group_col_tile_dual_kernel<spec_c<S>, tuning_c<R>, In>>(
        *a.dev, grid, R.threads, smem, stream, a.in, a.out, b.in, b.out, a.groups, a.error_word,
        a.seed, per);
  }
};

}  // namespace fp8q::detail::gpu
