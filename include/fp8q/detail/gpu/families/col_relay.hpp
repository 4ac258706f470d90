// fp8q — colwise in one launch, the relay (gpu_path::col_relay, the default where the views
// allow it): every block takes the amax of one tile, then casts a tile whose column strip is
// complete, re-reading it mostly from L2. The same kernel serves per-group colwise of one group
// (group_col_relay.hpp): its rows end where the device offset says.
#pragma once

#include <cstdint>

#include "fp8q/detail/gpu/byte_tile.hpp"
#include "fp8q/detail/gpu/device_groups.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

// Colwise in ONE launch whose second read of each tile is meant to come from L2 (Infinity Cache
// on MI300; on an H200 95-104 of the 168 MB re-read at 16384 x 5120 bf16 did, ncu 2026-11-29).
// Row-major input, 16-byte aligned lines of whole units. Work items are tiles of
// tile_rows x tile_cols; a strip is tile_cols columns over all rows, `chunks` tiles high; items
// are numbered down each strip, strip after strip (walking 2-16 strips side by side measured no
// faster, docs/design.md). Each block takes a ticket k from a counter, so every ticket below k
// belongs to a block that has already started, and
//   1. computes the column amax of item k (if k < items): one atomic per column (order and scope
//      from the tuning), then done[strip] += 1 with release;
//   2. casts item k - lag (if any) once done[strip] has counted all the strip's chunks (acquire),
//      with cast_col_tile.
// With lag = chunks, all amax items of a strip hold tickets below every cast of that strip, and
// a block waits only after publishing its own amax: every wait ends without any assumption about
// which blocks are resident together. Between its first and second read a tile stays in cache
// while about lag + (blocks in flight) tiles pass through it.
struct relay_plan {
  std::int64_t chunks;  // tiles per strip (row chunks), also the lag from a tile's amax to its cast
  std::int64_t strips;  // strips per batch item
  std::int64_t items;   // batch * strips * chunks
};

struct relay_item {
  std::int64_t b, strip, chunk;
};

__host__ __device__ constexpr relay_item relay_decode(const relay_plan& p, std::int64_t t) {
  const std::int64_t per_batch = p.strips * p.chunks;
  const std::int64_t b = t / per_batch;
  t -= b * per_batch;
  return {b, t / p.chunks, t % p.chunks};
}

// Shared memory of col_relay_kernel: the byte tile, the tile's column scales, the waves' partial
// column maxima and the block's ticket. The family fits its tile to the size of this struct.
template <tuning T, bool Staged>
struct relay_shared {
  std::uint32_t words[col_tile_bytes<T, Staged> / 4];
  float scales[T.tile_cols];
  std::uint32_t partial[T.threads / 32][T.tile_cols];
  std::uint32_t ticket;
};

// One group over the rows (per-group colwise, G = 1): the rows end at the clamped ends[0]
// (device_groups.hpp), read on the device; a padded output gets zero rows up to the group's
// padded end. count 0: plain colwise, every row.
struct relay_group {
  group_offsets gs;                      // ends: [1] int32, device (count 0: no group)
  std::uint32_t* error_word = nullptr;   // [1] device, optional
};

// amax_bits: [batch, cols] f32 bits; done: [batch, strips]; tickets: [1]; all zeroed before.
template <class SC, class TC, class In, bool Staged>
__global__ void __launch_bounds__(TC::value.threads)
    col_relay_kernel(matrix_view<const In> in, quantized<SC::value> out, std::uint32_t* amax_bits,
                     std::uint32_t* done, std::uint32_t* tickets, relay_plan plan, std::uint64_t seed,
                     relay_group group) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr int TR = T.tile_rows;
  constexpr int TCOL = T.tile_cols;
  constexpr int U = unit_elems<In>;
  constexpr int upr = TCOL / U;                     // units per tile row
  constexpr int rows_per_step = threads / upr;      // tile rows one load step covers
  constexpr int steps = (TR + rows_per_step - 1) / rows_per_step;
  static_assert(threads % upr == 0 && 32 % upr == 0, "a wave holds whole tile rows");
  __shared__ relay_shared<T, Staged> sm;
  auto& words = sm.words;      // the byte tile
  auto& scales = sm.scales;    // [TCOL] f32
  auto& partial = sm.partial;  // [threads / 32][TCOL] f32 bits
  auto& ticket = sm.ticket;
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const bool grouped = group.gs.count == 1;
  if (tid == 0) ticket = backend::take_ticket(tickets);
  // the group's rows [0, d.end) and padded end (device_groups.hpp's rule), read while the ticket
  // is on its way
  const device_group d = grouped ? group_bounds(group.gs, 0, M) : device_group{0, M, 0, M};
  const std::int64_t rows_end = d.end;
  backend::block_sync();
  const std::int64_t k = ticket;
  auto here = [&](std::int64_t left, int tile) { return static_cast<int>(left < tile ? left : tile); };

  if (grouped && k == 0 && tid == 0) group_bookkeeping(group.gs, group.error_word, 0, M, d);  // once

  if (k < plan.items) {  // 1. amax of item k
    const relay_item it = relay_decode(plan, k);
    const std::int64_t r0 = it.chunk * TR;
    const std::int64_t c0 = it.strip * TCOL;
    const int rows_here = here(rows_end - r0, TR);  // none past the group's end
    const int cols_here = here(N - c0, TCOL);
    if (grouped && it.chunk == 0 && d.out_end > d.end) {  // the strip's padding rows: zero bytes
      const std::int64_t pad = d.out_end - d.end;
      auto* first = reinterpret_cast<std::uint8_t*>(&out.data(it.b, rows_end, c0));  // [pad, cols_here] FP8
      if (out.data.order == layout::col_major) zero_lines(first, out.data.ld, cols_here, pad, tid, threads);
      else zero_lines(first, out.data.ld, pad, cols_here, tid, threads);
    }
    if (rows_here > 0) {
      const int uc = tid % upr;
      const bool col_ok = uc * U < cols_here;
      const In* p = in.data + in.offset(it.b, r0 + tid / upr, c0 + uc * U);  // this thread's first unit
      const std::int64_t step = rows_per_step * in.ld;
      unit_raw<In, U> v[steps];
#pragma unroll
      for (int j = 0; j < steps; ++j) {  // every load in flight before the first use
        v[j] = unit_raw<In, U>{};
        if (col_ok && j * rows_per_step + tid / upr < rows_here) v[j] = load_unit<In, U>(p + j * step);
      }
      std::uint32_t cmax[U] = {};
#pragma unroll
      for (int j = 0; j < steps; ++j) max_unit<In, U>(v[j], cmax);
      const int wave = backend::wave_size();
      const group_partials gp{&partial[0][0], TCOL};
      put_unit_columns<upr, U>(gp, cmax, tid % wave, tid / wave);
      backend::block_sync();
      if (tid < cols_here) {
        const std::uint32_t m = gp.fold(tid, threads / wave);
        backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + it.b * N + c0 + tid, m);
      }
      backend::block_sync();
    }
    if (tid == 0) backend::count_release(done + it.b * plan.strips + it.strip);
  }

  const std::int64_t j = k - plan.chunks;  // 2. cast of item k - lag (lag = chunks)
  if (j < 0 || j >= plan.items) return;
  const relay_item it = relay_decode(plan, j);
  if (it.chunk * TR >= rows_end) return;  // past the group's end: nothing to write
  std::uint32_t* strip_done = done + it.b * plan.strips + it.strip;
  if (tid == 0) {
    while (static_cast<std::int64_t>(backend::count_acquire(strip_done)) < plan.chunks) backend::spin_pause();
  }
  backend::block_sync();
  const std::int64_t r0 = it.chunk * TR;
  const std::int64_t c0 = it.strip * TCOL;
  const int rows_here = here(rows_end - r0, TR);
  const int cols_here = here(N - c0, TCOL);
  const bool in_range = tile_column_scales<S, TCOL>(out, scales, it.b, 0, c0, cols_here, it.chunk == 0, [&](int i) {
    return backend::load_relaxed(amax_bits + it.b * N + c0 + i);
  });
  const byte_tile tile{reinterpret_cast<std::uint8_t*>(words), TCOL + 4, TR + 4,
                       out.data.order == layout::row_major};
  cast_col_tile<S, T, In, Staged>(in, out, tile, scales, it.b, r0, c0, rows_here, cols_here, seed, in_range);
}

// 256 x 64 tiles and 256 threads unless the tuning says otherwise (16384 x 5120 bf16,
// column-major output: 102.6 us against 105.2 us for 128 x 128 tiles, 110.9 us for 256 x 64
// with 128 threads; H200 2026-11-29, docs/design.md "Colwise in one launch").
template <spec S, tuning T, class In>
struct col_relay {
  static constexpr gpu_path name = gpu_path::col_relay;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = false;
  template <tuning U>
  using shared_of = relay_shared<U, true>;
  static constexpr tuning base = resolve_tuning(T, S, {});
  static constexpr tuning R = fit_tile<T.tile_rows == 0 && T.tile_cols == 0 ? with_tile(base, 256, 64) : base, shared_of>();
  static constexpr int U = unit_elems<In>;
  static constexpr int upr = R.tile_cols / U;
  // a tile row is a power-of-two number of units within a wave
  static constexpr bool tile_ok = R.tile_cols % U == 0 && (upr & (upr - 1)) == 0 && upr <= 32 && R.threads % upr == 0;
  struct plan {};

  // The workspace: the column amax ([batch, cols] words), then one counter per strip and the
  // ticket counter, all zeroed before the launch.
  struct layout_of {
    relay_plan plan{};
    std::size_t amax_bytes = 0;
    std::size_t counter_bytes = 0;
    explicit layout_of(const matrix_view<const In>& in) {
      plan.chunks = (in.rows + R.tile_rows - 1) / R.tile_rows;
      plan.strips = (in.cols + R.tile_cols - 1) / R.tile_cols;
      plan.items = in.batch * plan.strips * plan.chunks;
      amax_bytes = round_up_256(static_cast<std::size_t>(in.batch * in.cols) * 4);
      counter_bytes = static_cast<std::size_t>(in.batch * plan.strips + 1) * 4;
    }
    std::size_t bytes() const { return amax_bytes + round_up_256(counter_bytes); }
    std::uint32_t* amax(void* ws) const { return static_cast<std::uint32_t*>(ws); }
    std::uint32_t* done(void* ws) const {
      return reinterpret_cast<std::uint32_t*>(static_cast<char*>(ws) + amax_bytes);
    }
    std::uint32_t* tickets(void* ws) const { return done(ws) + (counter_bytes / 4 - 1); }
  };

  static bool accepts(const problem<S, In>& p, plan*) {
    if constexpr (!tile_ok) {
      return false;
    } else {
      const layout_of l(p.in);
      return streams_columns(p) && l.plan.items + l.plan.chunks <= 0x7fffffffLL;
    }
  }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>& in) { return tile_ok ? layout_of(in).bytes() : 0; }

  static status enqueue(const problem<S, In>& p, const plan&, void* workspace, gpu_stream stream) {
    return run(p, workspace, stream, relay_group{});
  }

  /// The launch, for colwise (`group` empty) and for per-group colwise of one group
  /// (group_col_relay.hpp).
  static status run(const problem<S, In>& p, void* workspace, gpu_stream stream, relay_group group) {
    if constexpr (!tile_ok) {
      return status::bad_layout;
    } else {
      const layout_of l(p.in);
      status st = backend::memset_async(workspace, 0, l.amax_bytes + l.counter_bytes, stream);
      if (st != status::success) return st;
      // Automatic stores: staged for column-major output, direct for row-major output (H200,
      // bf16 16384 x 5120: row-major output direct 101.3 us against staged 104.4 us,
      // column-major output staged 102.4 us against direct 122.0 us; docs/design.md).
      const bool staged = R.store == store_path::staged ||
                          (R.store == store_path::automatic && p.out.data.order == layout::col_major);
      const dim3 grid(static_cast<unsigned>(l.plan.items + l.plan.chunks));
      auto go = [&](auto stg) {
        return backend::launch<col_relay_kernel<spec_c<S>, tuning_c<R>, In, decltype(stg)::value>>(
            *p.dev, false, grid, R.threads, stream, p.in, p.out, l.amax(workspace), l.done(workspace),
            l.tickets(workspace), l.plan, p.seed, group);
      };
      return staged ? go(std::true_type{}) : go(std::false_type{});
    }
  }
};

}  // namespace fp8q::detail::gpu
