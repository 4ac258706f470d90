// fp8q — rowwise into a column-major output in ONE launch (gpu_path::row_band, the default where
// half the device holds more blocks at once than a band has tiles): the input is read once. A band is
// 128 rows of one batch item; its tiles are row_transpose's (128 rows x 8 units, copied into
// shared memory and cast by the same functions). The held-tile pipeline (held_tiles.hpp) runs
// the tiles: each tile's part of its rows' maxima goes to the rows' amax words, and a tile is
// cast once its band has counted every tile (docs/design.md, "Rowwise into a column-major
// output"). Row-major input with 16-byte aligned lines; column-major output, any ld.
#pragma once

#include <cstdint>

#include "fp8q/detail/gpu/families/row_transpose.hpp"
#include "fp8q/detail/gpu/held_tiles.hpp"

namespace fp8q::detail::gpu {

struct band_plan {
  std::int64_t strips;  // tiles per band (8-unit column strips)
  std::int64_t bands;   // bands per batch item
  std::int64_t items;   // batch * bands * strips
  std::uint32_t set_mask = 0;   // amax word sets - 1 (band_amax_sets): strip s counts into set
                                // s & set_mask
  std::int64_t set_stride = 0;  // amax words per set (batch * rows; a kernel argument, not
                                // recomputed, as the measured code had it)
};

/// Most amax word sets a row of a band has (band_amax_sets).
inline constexpr int band_sets_max = 8;

// The amax word sets of a band of `strips` tiles: a power of two up to band_sets_max with 16 to
// 32 tiles per set (one set below 32 tiles, 8 from 128 on). Every tile of a band sends its rows'
// maxima to the same few lines of amax words, and the blocks counting a band's tiles do so at
// nearly the same time; the atomics on one line queue at its L2 slice, and the count's release
// waits for them. Spread over sets (the cast takes the largest of a row's words), each line
// takes a set's share (docs/design.md, "Holding tiles on chip", what the count costs).
constexpr std::int64_t band_amax_sets(std::int64_t strips) {
  std::int64_t sets = 1;
  while (sets < band_sets_max && sets * 32 <= strips) sets *= 2;
  return sets;
}

// Where a tile lies: batch item b, band (batch item * bands + band: its counter), rows
// [r0, r0 + rows_here), columns [c0, c0 + cols_here), and its strip (0 stores the rows' scales).
struct band_tile {
  std::int64_t b, band, r0, c0, strip;
  int rows_here, cols_here;
};

template <int U>
__device__ inline band_tile band_tile_at(const band_plan& p, std::int64_t k, std::int64_t M, std::int64_t N) {
  band_tile t{};
  t.band = k / p.strips;
  t.b = t.band / p.bands;
  t.r0 = (t.band % p.bands) * rt_rows;
  t.strip = k % p.strips;
  t.c0 = t.strip * (rt_units * U);
  t.rows_here = M - t.r0 < rt_rows ? static_cast<int>(M - t.r0) : rt_rows;
  t.cols_here = N - t.c0 < rt_units * U ? static_cast<int>(N - t.c0) : rt_units * U;
  return t;
}

// The held-tile pipeline (held_tiles.hpp) over bands: a tile's part of each row's amax goes to the
// row's amax word in its strip's set (relaxed atomics), and its band counts it.
// amax_bits: [sets][batch * rows] f32 bits; done: [batch * bands]; tickets: [1]; all zeroed before.
// in:       [batch, rows, cols] In, row-major, 16-byte aligned lines
// out.data: [batch, rows, cols] FP8, column-major (lines are output columns)
template <class SC, class TC, class In>
__global__ void __launch_bounds__(TC::value.threads)
    row_band_kernel(matrix_view<const In> in, quantized<SC::value> out, std::uint32_t* amax_bits,
                    std::uint32_t* done, std::uint32_t* tickets, band_plan plan, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int U = unit_elems<In>;
  constexpr int threads = T.threads;
  constexpr bool packed = sizeof(In) == 2;
  __shared__ rt_shared sh[2];
  __shared__ held_words words;
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;

  auto at = [&](std::int64_t k) { return band_tile_at<U>(plan, k, M, N); };
  auto copy = [&](int slot, const band_tile& t) {
    copy_transpose_tile<In>(in, sh[slot], t.b, t.r0, t.c0, t.rows_here, t.cols_here, tid, threads);
  };
  auto count = [&](int slot, const band_tile& t) {
    const std::uint32_t set = static_cast<std::uint32_t>(t.strip) & plan.set_mask;
    std::uint32_t* row_words = amax_bits + set * plan.set_stride + t.b * M + t.r0;  // [rows_here] of the set
    for (int r = tid; r < t.rows_here; r += threads) {
      // The word's value so far, a lower bound of its final one (the word only grows): a tile
      // whose maximum is not above it sends no atomic, so after a band's first tiles most
      // send none (docs/design.md, "Holding tiles on chip", what the count costs).
      const std::uint32_t seen = backend::load_relaxed(row_words + r);
      std::uint32_t m = 0;  // packed: two 16-bit magnitudes per word; else f32 magnitude bits
#pragma unroll
      for (int u = 0; u < rt_units; ++u) {
        if (u * U < t.cols_here) {  // a cut unit is zero past its columns
          const u32x4 w = sh[slot].tile[r][quad_tile_slot(r, u)];
          if constexpr (packed) m = unit_amax16(w, m);
          else m = unit_amax<In, U>(w, m);
        }
      }
      std::uint32_t a = m;
      if constexpr (packed) a = amax16_bits<In>(m);
      if (a > seen) backend::atomic_max_bits<T.amax_order, T.amax_scope>(row_words + r, a);
    }
  };
  auto counter = [&](const band_tile& t) { return done + t.band; };
  auto cast = [&](int slot, const band_tile& t) {
    bool in_range = true;
    for (int i = tid; i < rt_rows; i += threads) {
      float s = 0.0f;
      if (i < t.rows_here) {
        // the largest of the row's words over the sets: band_sets_max loads of set g & set_mask
        // (fewer sets read some twice), all in flight at once. Not predicated on the set count:
        // that form compiled to a loop that kept the copy's addresses live and lost the gain
        // (docs/design.md).
        std::uint32_t a = 0;
#pragma unroll
        for (std::uint32_t g = 0; g < band_sets_max; ++g) {
          const std::uint32_t x =
              backend::load_relaxed(amax_bits + (g & plan.set_mask) * plan.set_stride + t.b * M + t.r0 + i);
          a = a > x ? a : x;
        }
        s = group_scale<S>(a);
        if constexpr (in_range_capable<S>()) in_range = in_range && in_range_group<S>(a, s);
        if (t.strip == 0) write_scales<S>(out, t.b, t.r0 + i, 0, s);
      }
      sh[slot].scales[i] = s;
    }
    if constexpr (in_range_capable<S>()) in_range = backend::block_all(in_range);
    else backend::block_sync();
    cast_transpose_tile<S, T, In, true>(sh[slot], out, t.b, t.r0, t.c0, t.rows_here, t.cols_here, M, N, seed, in_range);
  };
  // Counting first on every path, the hardware converter's too: on the H200, the device of the
  // targets, it ran faster there as well, though an H100 runs it slightly slower (docs/design.md,
  // "Holding tiles on chip", counting first on the H200).
  hold_and_cast<true>(tickets, plan.items, words, at, copy, count, counter, plan.strips, cast);
}

// 128 threads unless the tuning says otherwise: six blocks per multiprocessor on an H200, each
// with two tiles, against four of 256 threads (docs/design.md, "Rowwise into a column-major
// output").
template <spec S, tuning T, class In>
struct row_band {
  static constexpr gpu_path name = gpu_path::row_band;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = true;  // resident blocks
  static constexpr tuning R = resolve_tuning(T.threads == 0 ? with_threads(T, 128) : T, S, {});
  static constexpr int U = unit_elems<In>;
  static constexpr auto kernel = &row_band_kernel<spec_c<S>, tuning_c<R>, In>;
  struct plan {};

  // The workspace: the rows' amax words (band_amax_sets of them per row), one counter per band
  // and the ticket counter.
  struct layout_of : held_workspace {
    band_plan plan;
    explicit layout_of(const matrix_view<const In>& in)
        : held_workspace(sets(in) * in.batch * in.rows, in.batch * bands(in)),
          plan{strips(in), bands(in), in.batch * bands(in) * strips(in), static_cast<std::uint32_t>(sets(in) - 1),
               in.batch * in.rows} {}
    static std::int64_t strips(const matrix_view<const In>& in) { return (in.cols + rt_units * U - 1) / (rt_units * U); }
    static std::int64_t bands(const matrix_view<const In>& in) { return (in.rows + rt_rows - 1) / rt_rows; }
    static std::int64_t sets(const matrix_view<const In>& in) { return band_amax_sets(strips(in)); }
  };

  static bool accepts(const problem<S, In>& p, plan*) {
    if (!(p.in.order == layout::row_major && p.out.data.order == layout::col_major && lines_aligned16(p.in)))
      return false;
    const layout_of l(p.in);
    if (l.plan.items > 0x7fffffffLL || l.plan.items == 0) return false;
    if (p.dev == nullptr) return true;  // workspace sizing: may run on some device
    // every wait ends where more blocks run at once than a band has tiles (held_tiles.hpp); asked
    // of half the device, so a device shared with other work still holds enough
    return 2 * l.plan.strips <= held_capacity<kernel>(*p.dev, R.threads);
  }
  static bool preferred(const problem<S, In>& p) {
    return p.dev == nullptr || held_blocks_per_mp<kernel>(*p.dev, R.threads) >= held_min_blocks;
  }
  static std::size_t workspace(const matrix_view<const In>& in) { return layout_of(in).bytes(); }

  static status enqueue(const problem<S, In>& p, const plan&, void* workspace, gpu_stream stream) {
    const layout_of l(p.in);
    status st = backend::memset_async(workspace, 0, l.zeroed(), stream);
    if (st != status::success) return st;
    // a persistent grid: tiles are taken by ticket, so more blocks than the device holds would
    // only wait for a slot
    const std::int64_t resident = held_capacity<kernel>(*p.dev, R.threads);
    const unsigned grid = static_cast<unsigned>(l.plan.items < resident ? l.plan.items : resident);
    return backend::launch<kernel>(*p.dev, false, dim3(grid), R.threads, stream,
                                   p.in, p.out, l.amax(workspace), l.done(workspace), l.tickets(workspace), l.plan,
                                   p.seed);
  }
};

}  // namespace fp8q::detail::gpu
