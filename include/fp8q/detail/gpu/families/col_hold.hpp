// fp8q — colwise in ONE launch that reads the input once (gpu_path::col_hold): the held-tile
// pipeline (held_tiles.hpp) over column strips. A tile is 160 rows x 8 units of one strip (128
// rows for column-major output: col_hold_rows), copied as row_transpose copies; its column
// maxima go to the columns' amax words (relaxed atomics), and it is cast from shared memory
// (cast_col_tile) once its strip has counted every tile. The views col_relay takes: row-major
// input, 16-byte aligned input and output lines, whole units (docs/design.md, "Holding tiles on
// chip").
#pragma once

#include <cstdint>

#include "fp8q/detail/gpu/byte_tile.hpp"
#include "fp8q/detail/gpu/device_groups.hpp"
#include "fp8q/detail/gpu/families/col_relay.hpp"
#include "fp8q/detail/gpu/families/row_transpose.hpp"
#include "fp8q/detail/gpu/held_tiles.hpp"

namespace fp8q::detail::gpu {

struct strip_plan {
  std::int64_t chunks;  // tiles per strip (chunks of the tile's rows)
  std::int64_t strips;  // strips per batch item (8-unit column strips)
  std::int64_t items;   // batch * strips * chunks
};

// Rows of col_hold's held tile. 160 where the cast stores straight from the held tile (row-major
// output): a taller tile moves more bytes per turn of the pipeline, whose round trips bound it at
// an H200's load (docs/design.md, "Taller held tiles for `col_hold`"). 128 for the staged
// form (column-major output), whose byte tile lies over a held tile only at that height (at 160,
// 40 quads of 8 units do not divide over 128 threads, and a byte tile of its own makes the block
// 54 KiB, past the 48 KiB a kernel declares statically).
constexpr int col_hold_rows(bool staged) { return staged ? rt_rows : 160; }

// Where a tile lies: batch item b, strip (batch item * strips + strip: its counter), chunk,
// rows [r0, r0 + rows_here), columns [c0, c0 + cols_here).
struct strip_tile {
  std::int64_t b, strip, chunk, r0, c0;
  int rows_here, cols_here;
};

// Rows: the tile's rows (a constant of the kernel: col_hold_rows).
template <int U, int Rows>
__device__ inline strip_tile strip_tile_at(const strip_plan& p, std::int64_t k, std::int64_t M, std::int64_t N) {
  strip_tile t{};
  t.strip = k / p.chunks;
  t.b = t.strip / p.strips;
  t.chunk = k % p.chunks;
  t.r0 = t.chunk * Rows;
  t.c0 = (t.strip % p.strips) * (rt_units * U);
  t.rows_here = M - t.r0 < Rows ? static_cast<int>(M - t.r0) : Rows;
  t.cols_here = N - t.c0 < rt_units * U ? static_cast<int>(N - t.c0) : rt_units * U;
  return t;
}

template <tuning T, bool Staged>
struct hold_shared {
  // The staged byte tile lies over the held tile being cast, where each thread casts the same
  // number of quads (it holds them all in registers until a barrier: cast_col_tile's Alias). Its
  // own 8.5 KiB would take the sixth block per multiprocessor (docs/design.md, "Holding tiles on
  // chip").
  static constexpr bool alias = Staged && col_tile_aliasable(T.tile_rows, rt_units, T.threads);
  static_assert(!alias || col_tile_bytes<T, true> <= T.tile_rows * rt_units * 16, "the byte tile fits a held tile");
  rt_tile<T.tile_rows> held[2];                                 // the two tiles, quad_tile_slot order
  std::uint32_t words[alias ? 1 : col_tile_bytes<T, Staged> / 4];  // the byte tile of the cast, unless alias
  float scales[T.tile_cols];                          // [cols] the tile's column scales
  std::uint32_t partial[T.threads / 32][T.tile_cols];  // [waves][cols] column maxima
  held_words w;
};

// Blocks per multiprocessor col_hold_kernel declares: six for the staged kernel of 128 threads,
// whose byte tile lies over the held tile (80 registers and 35,088 bytes of shared memory on
// sm_90, where 95 registers and a byte tile of its own, 43,792 bytes, held five); otherwise 0,
// no floor: ptxas then gives the row-major kernel the 80 registers it had, where a floor of 1
// let it take 127. Where __launch_bounds__ does not count blocks (HIP), no floor either.
constexpr int col_hold_min_blocks(int threads, bool staged) {
  return backend::launch_bounds_counts_blocks && staged && threads == 128 ? 6 : 0;
}

// amax_bits: [batch, cols] f32 bits; done: [batch * strips]; tickets: [1]; all zeroed before.
// in:       [batch, rows, cols] In, row-major, 16-byte aligned lines
// out.data: [batch, rows, cols] FP8, either order
// group: one group over the rows (per-group colwise, G = 1: the rows end at the clamped ends[0],
// read on the device; a padded output gets zero rows up to the padded end), as col_relay's;
// count 0: plain colwise. Tiles past the group's end copy and cast nothing and count their strip.
template <class SC, class TC, class In, bool Staged>
__global__ void __launch_bounds__(TC::value.threads, col_hold_min_blocks(TC::value.threads, Staged))
    col_hold_kernel(matrix_view<const In> in, quantized<SC::value> out, std::uint32_t* amax_bits,
                    std::uint32_t* done, std::uint32_t* tickets, strip_plan plan, std::uint64_t seed,
                    relay_group group) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int U = unit_elems<In>;
  constexpr int threads = T.threads;
  constexpr int upr = rt_units;                  // units per tile row
  constexpr int rows_per_step = threads / upr;   // tile rows one pass of the block covers
  static_assert(T.tile_rows == col_hold_rows(Staged) && T.tile_cols == rt_units * U, "the tuning names the held tile");
  static_assert(threads % 32 == 0 && 32 % upr == 0, "a wave holds whole tile rows");
  __shared__ hold_shared<T, Staged> sm;
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const int wave = backend::wave_size();
  // one group's rows only for a per-group spec (group_col_relay.hpp): colwise's kernels keep no
  // trace of it
  constexpr bool per_group = S.granularity == granularity::group_col;
  const bool grouped = per_group && group.gs.count == 1;
  const device_group d = grouped ? group_bounds(group.gs, 0, M) : device_group{0, M, 0, M};
  const std::int64_t rows_end = d.end;
  if (grouped && blockIdx.x == 0 && tid == 0) group_bookkeeping(group.gs, group.error_word, 0, M, d);  // once

  auto at = [&](std::int64_t k) {
    strip_tile t = strip_tile_at<U, T.tile_rows>(plan, k, rows_end, N);
    if (per_group && t.rows_here < 0) t.rows_here = 0;  // past the group's end
    return t;
  };
  auto copy = [&](int slot, const strip_tile& t) {
    copy_transpose_tile<In>(in, sm.held[slot], t.b, t.r0, t.c0, t.rows_here, t.cols_here, tid, threads);
  };
  auto count = [&](int slot, const strip_tile& t) {
    const int uc = tid % upr;
    column_max<In> cm;
    if (uc * U < t.cols_here) {  // a cut unit is zero past its columns
      for (int r = tid / upr; r < t.rows_here; r += rows_per_step) cm.add(sm.held[slot].tile[r][quad_tile_slot(r, uc)]);
    }
    std::uint32_t cmax[U];
    cm.bits(cmax);
    const group_partials gp{&sm.partial[0][0], T.tile_cols};
    put_unit_columns<upr, U>(gp, cmax, tid % wave, tid / wave);
    backend::block_sync();
    if (tid < t.cols_here && (!per_group || t.rows_here > 0)) {
      const std::uint32_t m = gp.fold(tid, threads / wave);
      backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + t.b * N + t.c0 + tid, m);
    }
  };
  auto counter = [&](const strip_tile& t) { return done + t.strip; };
  auto cast = [&](int slot, const strip_tile& t) {
    if (per_group && t.rows_here == 0) return;  // past the group's end: nothing to write (the same in every thread)
    if (grouped && t.chunk == 0 && d.out_end > d.end) {  // the strip's padding rows: zero bytes
      const std::int64_t pad = d.out_end - d.end;
      auto* first = reinterpret_cast<std::uint8_t*>(&out.data(t.b, rows_end, t.c0));  // [pad, cols_here] FP8
      if (out.data.order == layout::col_major) zero_lines(first, out.data.ld, t.cols_here, pad, tid, threads);
      else zero_lines(first, out.data.ld, pad, t.cols_here, tid, threads);
    }
    const bool in_range = tile_column_scales<S, T.tile_cols>(out, sm.scales, t.b, 0, t.c0, t.cols_here, t.chunk == 0,
                                                             [&](int i) {
                                                               return backend::load_relaxed(amax_bits + t.b * N + t.c0 + i);
                                                             });
    constexpr bool alias = hold_shared<T, Staged>::alias;
    // [tile bytes] the byte tile: over the held tile being cast, or words of its own
    auto* bytes = alias ? reinterpret_cast<std::uint8_t*>(&sm.held[slot].tile[0][0]) : reinterpret_cast<std::uint8_t*>(sm.words);
    const byte_tile tile{bytes, T.tile_cols + 4, T.tile_rows + 4, out.data.order == layout::row_major};
    cast_col_tile<S, T, In, Staged, alias>(
        in, out, tile, sm.scales, t.b, t.r0, t.c0, t.rows_here, t.cols_here, seed, in_range,
        [&](int r, int c) { return unit_raw<In, U>(sm.held[slot].tile[r][quad_tile_slot(r, c)]); });
  };
  // Counting first where the cast encodes in software, where it measured faster; casting first
  // on the hardware converter, where counting first measured no faster on the H200 (docs/design.md,
  // "Holding tiles on chip", the barrier cuts).
  hold_and_cast<software_cast<S, T>()>(tickets, plan.items, sm.w, at, copy, count, counter, plan.chunks, cast);
}

// 128 threads unless the tuning says otherwise; the tile is col_hold_rows(staged) rows x 8 units.
template <spec S, tuning T, class In>
struct col_hold {
  static constexpr gpu_path name = gpu_path::col_hold;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = true;  // resident blocks
  static constexpr int U = unit_elems<In>;
  template <bool Staged>
  static constexpr tuning R_of = with_tile(resolve_tuning(T.threads == 0 ? with_threads(T, 128) : T, S, {}),
                                           col_hold_rows(Staged), rt_units * U);
  static constexpr tuning R = R_of<true>;  // threads and store path: the same in both forms
  // whole waves of 64 or 32 lanes (the column maxima fold over the block's waves), and the
  // shared memory in the 48 KiB a block may take statically on every target (1024 threads of a
  // 2-byte input pass it by their waves' column maxima)
  static constexpr bool block_ok = R.threads % 64 == 0 && sizeof(hold_shared<R_of<true>, true>) <= 48 * 1024 &&
                                   sizeof(hold_shared<R_of<false>, false>) <= 48 * 1024;
  struct plan {};

  // The workspace: the columns' amax words, one counter per strip and the ticket counter.
  // Tiles of `rows` rows (col_hold_rows): the workspace does not depend on it.
  struct layout_of : held_workspace {
    strip_plan plan;
    layout_of(const matrix_view<const In>& in, int rows)
        : held_workspace(in.batch * in.cols, in.batch * strips(in)),
          plan{chunks(in, rows), strips(in), in.batch * strips(in) * chunks(in, rows)} {}
    static std::int64_t chunks(const matrix_view<const In>& in, int rows) { return (in.rows + rows - 1) / rows; }
    static std::int64_t strips(const matrix_view<const In>& in) { return (in.cols + rt_units * U - 1) / (rt_units * U); }
  };

  template <bool Staged>
  using kernel_of = std::integral_constant<decltype(&col_hold_kernel<spec_c<S>, tuning_c<R_of<Staged>>, In, Staged>),
                                           &col_hold_kernel<spec_c<S>, tuning_c<R_of<Staged>>, In, Staged>>;

  static bool staged(const problem<S, In>& p) {
    return R.store == store_path::staged || (R.store == store_path::automatic && p.out.data.order == layout::col_major);
  }
  static int rows(const problem<S, In>& p) { return col_hold_rows(staged(p)); }

  // blocks of the kernel p runs (staged or not) that one multiprocessor holds (p.dev set)
  static int blocks_per_mp(const problem<S, In>& p) {
    return staged(p) ? held_blocks_per_mp<kernel_of<true>::value>(*p.dev, R.threads)
                     : held_blocks_per_mp<kernel_of<false>::value>(*p.dev, R.threads);
  }

  static bool accepts(const problem<S, In>& p, plan*) {
    if constexpr (!block_ok) {
      return false;
    } else {
      if (!streams_columns(p)) return false;  // whole units, and output lines the byte tile's stores fit
      const layout_of l(p.in, rows(p));
      if (l.plan.items > 0x7fffffffLL || l.plan.items == 0) return false;
      if (p.dev == nullptr) return true;  // workspace sizing: may run on some device
      // every wait ends where more blocks run at once than a strip has tiles (held_tiles.hpp);
      // asked of half the device, so a device shared with other work still holds enough
      return 2 * l.plan.chunks <= static_cast<std::int64_t>(blocks_per_mp(p)) * p.dev->multiprocessors;
    }
  }
  static bool preferred(const problem<S, In>& p) {
    if constexpr (!block_ok) {
      return false;
    } else {
      return p.dev == nullptr || blocks_per_mp(p) >= held_min_blocks;
    }
  }
  static std::size_t workspace(const matrix_view<const In>& in) {
    return held_workspace(in.batch * in.cols, in.batch * layout_of::strips(in)).bytes();
  }

  static status enqueue(const problem<S, In>& p, const plan&, void* workspace, gpu_stream stream) {
    return run(p, workspace, stream, relay_group{});
  }

  /// The launch, for colwise (`group` empty) and for per-group colwise of one group
  /// (group_col_relay.hpp, where the walk would take col_hold for the same views).
  static status run(const problem<S, In>& p, void* workspace, gpu_stream stream, relay_group group) {
    if constexpr (!block_ok) {
      return status::bad_layout;
    } else {
      const layout_of l(p.in, rows(p));
      status st = backend::memset_async(workspace, 0, l.zeroed(), stream);
      if (st != status::success) return st;
      auto go = [&](auto stg) {
        constexpr auto kernel = kernel_of<decltype(stg)::value>::value;
        // a persistent grid: tiles are taken by ticket
        const std::int64_t resident = held_capacity<kernel>(*p.dev, R.threads);
        const unsigned grid = static_cast<unsigned>(l.plan.items < resident ? l.plan.items : resident);
        return backend::launch<kernel>(*p.dev, false, dim3(grid), R.threads, stream, p.in, p.out, l.amax(workspace),
                                       l.done(workspace), l.tickets(workspace), l.plan, p.seed, group);
      };
      return staged(p) ? go(std::true_type{}) : go(std::false_type{});
    }
  }
};

}  // namespace fp8q::detail::gpu
