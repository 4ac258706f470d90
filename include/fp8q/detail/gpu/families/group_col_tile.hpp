// fp8q — per-group colwise with each group's column strip staged on chip (granularity::group_col,
// the MoE weight gradient; docs/design.md, "Per-group colwise: one read per strip"). A block
// takes one group of one batch item and a few consecutive 128-byte column strips of it (64
// bf16/f16 columns, 32 f32). The tile is two halves; a strip's rows go to them in pieces of
// one half each, copied from device memory straight into shared memory (backend::async_copy16:
// no registers held, a whole piece in flight at once) in 16-byte units, swizzled. A thread
// folds the column maxima of the units it copied itself (no barrier), the scales follow, and
// the tile is read transposed in quads of 4 rows x 1 unit, encoded and written: a column-major
// output leaves as 4-byte words, a warp covering 128 contiguous bytes of one column; a
// row-major one as 4 or 8-byte pieces of rows.
//   - A group of one piece: the next strip's copy goes into the other half before this strip's
//     fold, so a block's loads stay in flight through its own encode.
//   - A longer group: two passes inside the block. The maxima over its pieces (the next piece
//     in flight while one is folded), then the pieces encoded last first: the last two are
//     still in the tile, the others come back (mostly from L2), the next one in flight while
//     one is encoded.
// Row-major input with 16-byte aligned lines; any output layout; padded outputs; bad offsets
// clamped (device_groups.hpp).
#pragma once

#include <cstdint>

#include "fp8q/config.hpp"
#include "fp8q/detail/gpu/byte_tile.hpp"
#include "fp8q/detail/gpu/device_groups.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

/// Units (16 input bytes) per strip row: a strip is one quad-tile row (byte_tile.hpp).
inline constexpr int gct_units = quad_tile_units;
/// Columns of the widest strip (2-byte inputs).
inline constexpr int gct_max_cols = gct_units * 8;

/// Rows of the tile, two halves of gct_half rows: 704 rows (88 KiB) leave two blocks per
/// multiprocessor on sm_90 and fit the 99 KiB opt-in of sm_86/89; HIP's 64 KiB of LDS per
/// workgroup take 448.
inline constexpr int gct_rows = FP8Q_TOOLCHAIN_HIP ? 448 : 704;
inline constexpr int gct_half = gct_rows / 2;
/// Group rows per piece: a half less 4 rows of slack that align the quads to the output's rows.
inline constexpr int gct_piece = gct_half - 4;
static_assert(gct_half % 32 == 0, "a half starts on the swizzle's period (8 quads)");

/// One block's shared memory: the kernel lays its dynamic shared memory out as this, the host
/// launches sizeof of it (gct_smem_bytes).
template <int Threads>
struct gct_shared {
  u32x4 tile[gct_rows][gct_units];                   // [rows][slots] input units, quad_tile_slot order
  std::uint32_t partial[Threads / 32][gct_max_cols];  // [waves][strip columns] amax bits
  float scales[gct_max_cols];                         // [strip columns] this strip's scales
  device_group bounds;
};

template <int Threads>
inline constexpr int gct_smem_bytes = static_cast<int>(sizeof(gct_shared<Threads>));

// One strip of one group, as every family-wide constant of the block sees it.
struct gct_strip {
  std::int64_t c0;  // first column
  int cols_here;    // columns in this strip (fewer at the matrix's right edge)
  int units_here;   // units holding them
};

// Piece k of the strip (group rows [k * gct_piece, + rows_c); src: the group's first row of the
// strip) copied into half `half` at its rows + phase: one committed group of async copies per
// thread. Thread tid copies unit tid % gct_units of rows tid / gct_units + j * (Threads /
// gct_units), the same units it folds (gct_fold_piece).
template <int Threads, class In>
__device__ inline void gct_issue_piece(gct_shared<Threads>& sh,
                                       const In* src,  // [n, ld] In: the group's strip
                                       std::int64_t ld, std::int64_t k, int rows_c, int half,
                                       int phase, const gct_strip& st) {
  constexpr int U = unit_elems<In>;
  constexpr int step = Threads / gct_units;
  const int tid = static_cast<int>(threadIdx.x);
  const int u = tid % gct_units;
  const int head = st.cols_here - u * U;  // this thread's unit: whole when >= U, none when <= 0
  if (head > 0) {
    const int bytes = (head >= U ? U : head) * static_cast<int>(sizeof(In));
    const In* p = src + (k * gct_piece) * ld + u * U;
    const int at = half * gct_half + phase;
    for (int r = tid / gct_units; r < rows_c; r += step)
      backend::async_copy16(&sh.tile[at + r][quad_tile_slot(at + r, u)], p + r * ld, bytes);
  }
  backend::async_commit();
}

// Fold the units this thread copied of a piece in half `half` (after its async_wait).
template <int Threads, class In>
__device__ inline void gct_fold_piece(const gct_shared<Threads>& sh, int rows_c, int half, int phase,
                                      const gct_strip& st, column_max<In>& cm) {
  constexpr int step = Threads / gct_units;
  const int tid = static_cast<int>(threadIdx.x);
  const int u = tid % gct_units;
  if (st.cols_here - u * unit_elems<In> <= 0) return;
  const int at = half * gct_half + phase;
  for (int r = tid / gct_units; r < rows_c; r += step) cm.add(sh.tile[at + r][quad_tile_slot(at + r, u)]);
}

// Encode piece k (group rows [i0, i0 + rows_c), i0 = k * gct_piece, in half `half` at its rows
// + phase) and store it; in_range: every column of the strip passed in_range_group. A work item
// is one quad (4 tile rows, 4-aligned in the output's rows) x one unit column, and a thread keeps
// its unit column (and its scales and output address) over the piece, stepping over quads:
// column-major output gives consecutive quads of one unit column to consecutive lanes (a warp
// then writes 128 contiguous bytes of each of U columns), row-major output consecutive units of
// one quad (each row's strip leaves as one piece per lane).
// Pads: the group's padding rows follow the piece (its last piece, column-major output): quads
// past its data carry them as zero bytes, and the quad holding the data's last row writes its
// rows past the data as zeros, so each column's padding leaves in the same 4-byte words as its
// data (pad_rows of them).
template <spec S, tuning T, class In, bool Pads = false>
__device__ inline void gct_encode_piece(const gct_shared<T.threads>& sh, const quantized<S>& out,
                                        const device_group& d, std::int64_t b, std::int64_t i0,
                                        int rows_c, int half, int phase, const gct_strip& st,
                                        std::int64_t M, std::int64_t N, bool col_out, bool wide,
                                        bool in_range, std::uint64_t seed, int pad_rows = 0) {
  constexpr int U = unit_elems<In>;
  constexpr int threads = T.threads;
  constexpr int per_round = threads / gct_units;  // quads per round of the block
  static_assert(threads % gct_units == 0, "whole rounds of unit columns");
  const int tid = static_cast<int>(threadIdx.x);
  const int uc = col_out ? tid / per_round : tid % gct_units;
  if (uc >= st.units_here) return;
  const int nq = (rows_c + (Pads ? pad_rows : 0) + phase + 3) / 4;
  const int at = half * gct_half;                          // a multiple of 32: quads keep their rotation
  const std::int64_t in_row0 = d.begin + i0 - phase;       // input row of the half's row 0
  const std::int64_t out_row0 = d.out_begin + i0 - phase;  // its output row: a multiple of 4
  const std::int64_t c = st.c0 + uc * U;
  const int cols_unit = N - c < U ? static_cast<int>(N - c) : U;
  const std::int64_t rs = col_out ? 1 : out.data.ld;  // output bytes between rows
  const std::int64_t cs = col_out ? out.data.ld : 1;  // and between columns
  // [quads][4 rows][U columns] FP8 (strides 4 rs, rs, cs): output row out_row0, column c
  std::uint8_t* base = reinterpret_cast<std::uint8_t*>(out.data.data) + out.data.offset(b, out_row0, c);
  float sc[U];
#pragma unroll
  for (int k = 0; k < U; ++k) sc[k] = sh.scales[uc * U + k];
  with_in_range<S, In, U>([&] { return in_range; }, [&](auto fast) {
    for (int q = col_out ? tid % per_round : tid / gct_units; q < nq; q += per_round) {
      const int lo = phase - 4 * q;  // rows j of the quad with lo <= j < hi are the group's
      const int hi = rows_c + phase - 4 * q;
      const int end = Pads ? hi + pad_rows : hi;  // and rows hi <= j < end its padding
      std::uint8_t* dst = base + 4 * q * rs;
      if (Pads && hi <= 0) {  // padding only
        if (wide && end >= 4) {
#pragma unroll
          for (int k = 0; k < U; ++k)
            if (k < cols_unit) *reinterpret_cast<std::uint32_t*>(dst + k * cs) = 0u;
        } else {
          for (int j = 0; j < 4 && j < end; ++j) {
#pragma unroll
            for (int k = 0; k < U; ++k)
              if (k < cols_unit) dst[j * rs + k * cs] = 0;
          }
        }
        continue;
      }
      unit_raw<In, U> v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        v[j] = unit_raw<In, U>{};
        if (j >= lo && j < hi) v[j] = sh.tile[at + 4 * q + j][uc ^ (q & 7)];
      }
      std::uint32_t qw[4][U / 4];
      if constexpr (decltype(fast)::value) encode_quad_in_range<S, T, In, U>(v, sc, qw);
      else encode_quad<S, T, In, U>(v, sc, seed, logical_index(b, in_row0 + 4 * q, c, M, N), N, qw);
      if constexpr (Pads) {  // rows past the data: padding (a zero input need not encode as 0x00)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (j >= hi) {
#pragma unroll
            for (int w = 0; w < U / 4; ++w) qw[j][w] = 0u;
          }
      }
      if (col_out && wide && lo <= 0 && end >= 4) {
        store_quad_columns<U>(qw, dst, cs, cols_unit);
        continue;
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (j < lo || j >= end) continue;
        if (!col_out && wide && cols_unit == U) {
          store_words<U / 4>(dst + j * rs, qw[j]);
        } else {
#pragma unroll
          for (int k = 0; k < U; ++k) {  // unrolled: qw stays in registers
            if (k < cols_unit) dst[j * rs + k * cs] = static_cast<std::uint8_t>(qw[j][k / 4] >> (8 * (k % 4)));
          }
        }
      }
    }
  });
}

// in:       [batch, rows, cols] In, row-major, 16-byte aligned lines
// out.data: [batch, rows', cols] FP8, any layout (rows' >= rows + G * (align - 1) when padded)
// scales:   [batch, G, cols] f32
// One block's work: strips [strip_first, strip_first + strips_per_block) of group g of batch
// item b; `keeper`: this block does the group's bookkeeping (error word, padded end).
// PadQuads: padded column-major outputs take their padding in the last piece's quads (a kernel of
// its own, so that the unpadded kernel carries one copy of the piece encoder).
template <spec S, tuning T, class In, bool PadQuads>
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
  const std::int64_t pieces = (n + gct_piece - 1) / gct_piece;
  const auto rows_of = [&](std::int64_t k) {
    const std::int64_t left = n - k * gct_piece;
    return static_cast<int>(left < gct_piece ? left : gct_piece);
  };
  const bool col_out = out.data.order == layout::col_major;
  const std::int64_t word = col_out ? 4 : U;  // the bytes one wide store writes
  const bool wide = reinterpret_cast<std::uintptr_t>(out.data.data) % word == 0 && out.data.ld % word == 0 &&
                    (out.data.batch == 1 || out.data.batch_stride % word == 0);
  const group_partials gp{&sh.partial[0][0], gct_max_cols};
  const int lane = tid % wave_n;
  const int wave = tid / wave_n;
  const auto strip_of = [&](std::int64_t strip) {
    gct_strip st{};
    st.c0 = strip * cols;
    st.cols_here = N - st.c0 < cols ? static_cast<int>(N - st.c0) : cols;
    st.units_here = (st.cols_here + U - 1) / U;
    return st;
  };
  const auto src_of = [&](const gct_strip& st) {  // [n, ld] In: the group's strip
    return in.data + in.offset(b, d.begin, st.c0);
  };
  // PadQuads, column-major: the last piece's quads write its columns' padding rows
  // (gct_encode_piece); otherwise zero_lines writes them after the strip's encode
  std::int64_t quad_pad = 0;
  if constexpr (PadQuads) {
    const std::int64_t pad = d.out_end - d.out_begin - n;
    if (col_out && pad > 0 && pad < (std::int64_t{1} << 30)) quad_pad = pad;  // quads counted in int
  }
  const auto encode = [&](const gct_strip& st, std::int64_t k, int half, bool in_range) {
    if constexpr (PadQuads) {
      if (quad_pad > 0 && k == pieces - 1) {
        gct_encode_piece<S, T, In, true>(sh, out, d, b, k * gct_piece, rows_of(k), half, phase, st, M, N, col_out,
                                         wide, in_range, seed, static_cast<int>(quad_pad));
        return;
      }
    }
    {
      gct_encode_piece<S, T, In>(sh, out, d, b, k * gct_piece, rows_of(k), half, phase, st, M, N, col_out, wide,
                                 in_range, seed);
    }
  };
  int half = 0;  // one-piece groups: the half holding the current strip
  if (pieces == 1) {
    const gct_strip st = strip_of(strip_first);
    gct_issue_piece<threads, In>(sh, src_of(st), in.ld, 0, rows_of(0), half, phase, st);
  }
  for (std::int64_t strip = strip_first; strip < strip_end; ++strip) {
    const gct_strip st = strip_of(strip);
    const In* src = src_of(st);
    column_max<In> cm;
    if (pieces == 1) {  // the next strip goes into the other half, freed by the barrier that ended the last strip
      if (strip + 1 < strip_end) {
        const gct_strip next = strip_of(strip + 1);
        gct_issue_piece<threads, In>(sh, src_of(next), in.ld, 0, rows_of(0), half ^ 1, phase, next);
        backend::async_wait<1>();
      } else {
        backend::async_wait<0>();
      }
      gct_fold_piece<threads, In>(sh, rows_of(0), half, phase, st, cm);
    } else {  // piece k in half k % 2; a thread folds only what it copied, so no barrier
      gct_issue_piece<threads, In>(sh, src, in.ld, 0, rows_of(0), 0, phase, st);
      for (std::int64_t k = 0; k < pieces; ++k) {
        if (k + 1 < pieces) {
          gct_issue_piece<threads, In>(sh, src, in.ld, k + 1, rows_of(k + 1), static_cast<int>((k + 1) % 2), phase, st);
          backend::async_wait<1>();
        } else {
          backend::async_wait<0>();
        }
        gct_fold_piece<threads, In>(sh, rows_of(k), static_cast<int>(k % 2), phase, st, cm);
      }
    }
    std::uint32_t cmax[U];
    cm.bits(cmax);
    put_unit_columns<gct_units, U>(gp, cmax, lane, wave);
    backend::block_sync();  // also: every thread's copies are visible to the block
    const bool in_range = tile_column_scales<S, cols>(out, sh.scales, b, g, st.c0, st.cols_here, true,
                                                      [&](int i) { return gp.fold(i, threads / wave_n); });
    if (pieces == 1) {
      encode(st, 0, half, in_range);
      half ^= 1;
    } else {  // last first: pieces - 1 and pieces - 2 are still in the tile
      for (std::int64_t k = pieces - 1; k >= 0; --k) {
        if (k != pieces - 1) backend::block_sync();  // piece k + 1 is encoded: its half is free
        const bool fetch = k >= 1 && k - 1 < pieces - 2;
        if (fetch) gct_issue_piece<threads, In>(sh, src, in.ld, k - 1, rows_of(k - 1), static_cast<int>((k - 1) % 2), phase, st);
        if (k < pieces - 2) {  // piece k, copied during the encode of k + 1
          if (fetch) backend::async_wait<1>();
          else backend::async_wait<0>();
          backend::block_sync();
        }
        encode(st, k, static_cast<int>(k % 2), in_range);
      }
    }
    const std::int64_t pad = d.out_end - d.out_begin - n;  // padding rows: zero bytes
    if (pad > 0 && quad_pad == 0) {
      // lines of the output's order: a column's pad rows (column-major) or a pad row's strip columns
      auto* out_bytes = reinterpret_cast<std::uint8_t*>(out.data.data);
      zero_lines(out_bytes + out.data.offset(b, d.out_begin + n, st.c0), out.data.ld, col_out ? st.cols_here : pad,
                 col_out ? pad : st.cols_here, tid, threads);
    }
    backend::block_sync();  // the tile's halves, the partials and the scales are free
  }
}

/// Blocks per multiprocessor the launch bounds ask for (two tiles fit one sm_90 multiprocessor).
template <int Threads>
inline constexpr int gct_min_blocks = Threads <= 512 ? 2 : 1;

// grid: (strip groups, G, batch); block: T.threads; dynamic shared memory gct_smem_bytes.
template <class SC, class TC, class In, bool PadQuads>
__global__ void __launch_bounds__(TC::value.threads, gct_min_blocks<TC::value.threads>)
    group_col_tile_kernel(matrix_view<const In> in, quantized<SC::value> out, group_offsets gs,
                          std::uint32_t* error_word, std::uint64_t seed, int strips_per_block) {
  extern __shared__ u32x4 dyn[];
  auto& sh = *reinterpret_cast<gct_shared<TC::value.threads>*>(dyn);
  group_col_tile_block<SC::value, TC::value, In, PadQuads>(
      in, out, gs, error_word, seed, static_cast<std::int64_t>(blockIdx.x) * strips_per_block,
      strips_per_block, blockIdx.y, blockIdx.z, blockIdx.x == 0 && blockIdx.z == 0, sh);
}

// Two tensors with the same rows and offsets in one launch (quantize_dual): grid z runs over the
// batch items of a, then those of b; grid x covers the wider one's strip groups. Offsets are
// checked (and padded ends written) once, by a's blocks.
template <class SC, class TC, class In, bool PadQuads>
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
    group_col_tile_block<SC::value, TC::value, In, PadQuads>(in_a, out_a, gs, error_word, seed, first,
                                                   strips_per_block, blockIdx.y, z,
                                                   blockIdx.x == 0 && z == 0, sh);
  } else {
    group_offsets quiet = gs;
    quiet.padded_ends = nullptr;
    group_col_tile_block<SC::value, TC::value, In, PadQuads>(in_b, out_b, quiet, nullptr, seed, first,
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

  /// Strips per block: consecutive strips of one group, so that a one-piece group's next strip
  /// is in flight while a strip is encoded and each block's offsets scan serves several strips;
  /// about 800 rows' worth of the average group (M / G rows) per block, 1 to 8 strips, and never
  /// fewer than four blocks per resident slot (two per multiprocessor). H200, 16640 x 5120 bf16,
  /// random group sizes (docs/benchmarks/h200-2026-12-02-2028-strips.md): G = 16 best at 1,
  /// G = 64 and the dual launch at 3 (8-14% faster than 4 and 8), G = 128 flat from 4 to 10.
  static int strips_per_block(std::int64_t tasks, int multiprocessors, std::int64_t rows, std::int64_t groups) {
    const std::int64_t by_tasks = tasks / (8 * static_cast<std::int64_t>(multiprocessors > 0 ? multiprocessors : 1));
    const std::int64_t by_rows = rows > 0 ? (800 * groups + rows / 2) / rows : 8;
    const std::int64_t k = by_tasks < by_rows ? by_tasks : by_rows;
    return static_cast<int>(k < 1 ? 1 : k > 8 ? 8 : k);
  }

  static status enqueue(const problem<S, In>& p, const plan&, void*, gpu_stream stream) {
    if (p.groups.count == 0) return status::success;  // G = 0 writes nothing
    const std::int64_t n = strips(p.in.cols);
    const int per = strips_per_block(n * p.groups.count * p.in.batch, p.dev->multiprocessors, p.in.rows, p.groups.count);
    const dim3 grid(static_cast<unsigned>((n + per - 1) / per), static_cast<unsigned>(p.groups.count),
                    static_cast<unsigned>(p.in.batch));
    auto go = [&](auto pad_quads) -> status {
      constexpr auto kernel = group_col_tile_kernel<spec_c<S>, tuning_c<R>, In, decltype(pad_quads)::value>;
      return backend::launch_shared<kernel>(*p.dev, grid, R.threads, smem, stream, p.in, p.out, p.groups,
                                            p.error_word, p.seed, per);
    };
    return p.groups.align > 1 ? go(std::true_type{}) : go(std::false_type{});
  }

  /// quantize_dual's launch: a and b share rows and offsets; both accepted by accepts().
  static status enqueue_dual(const problem<S, In>& a, const problem<S, In>& b, gpu_stream stream) {
    if (a.groups.count == 0) return status::success;
    const std::int64_t na = strips(a.in.cols), nb = strips(b.in.cols);
    const std::int64_t n = na > nb ? na : nb;
    if (a.in.batch + b.in.batch > 65535) return status::bad_layout;
    const int per = strips_per_block((na * a.in.batch + nb * b.in.batch) * a.groups.count, a.dev->multiprocessors,
                                     a.in.rows, a.groups.count);
    const dim3 grid(static_cast<unsigned>((n + per - 1) / per), static_cast<unsigned>(a.groups.count),
                    static_cast<unsigned>(a.in.batch + b.in.batch));
    auto go = [&](auto pad_quads) -> status {
      constexpr auto kernel = group_col_tile_dual_kernel<spec_c<S>, tuning_c<R>, In, decltype(pad_quads)::value>;
      return backend::launch_shared<kernel>(*a.dev, grid, R.threads, smem, stream, a.in, a.out, b.in, b.out,
                                            a.groups, a.error_word, a.seed, per);
    };
    return a.groups.align > 1 ? go(std::true_type{}) : go(std::false_type{});
  }
};

}  // namespace fp8q::detail::gpu
