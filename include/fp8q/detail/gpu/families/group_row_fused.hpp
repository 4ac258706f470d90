// fp8q — per-group rowwise on row-major views, each row read from device memory once
// (granularity::group_row: groups along the columns from device offsets, scales (G, M); the MoE
// routed activation). The host never knows a group's size, so one launch serves any mix:
//   - a persistent block (as many as fit the device at once) clamps the offsets into shared
//     memory once (a block-wide prefix max, device_groups.hpp's rule), with the padded starts
//     of the groups where the output is padded, then serves rows in turn;
//   - each thread keeps the same units of every row (16-byte vectors; unit tid + i * threads),
//     so the group of each unit, where it straddles a boundary, and its place in its group's
//     run of lanes are worked out once per block and kept in one register per unit; the block
//     is sized so that every wave holds Items units of the row or one fewer (no wave waits at
//     the barriers for another's extra unit), and the block's next row is copied into shared
//     memory while this one is processed (staged fits);
//   - per row: the first Items * threads units stay in registers (the largest fit's longer rows
//     re-read the rest from L2). A wave whose every unit lies in at most two groups (one
//     boundary, empty groups at it included) takes the lean path, chosen once per wave: the
//     unit's 16-bit magnitudes maxed two at a time, the part past a boundary sent to its group
//     by one atomic of that lane, then the lanes of each group reduced together (one wave-wide
//     max for a one-group wave, a segmented scan over lane shuffles otherwise) and one
//     shared-memory atomic max per run; the rest (units across several boundaries, columns past
//     the last end) takes the general path after the unrolled lean loop, in a rolled loop of
//     its own, element by element where it must;
//   - a barrier, one thread per group turns its maximum into the scale (and stores it) and
//     tells whether the in-range encoder applies, a barrier, then the cast from registers: each
//     element times its group's scale, one encode per unit, one 8-byte (bf16/f16) or 4-byte
//     (f32) store per unit; the rare units and whole units of a padded group shifted off the
//     output's unit grid (unaligned stores) after the lean loop, as in the fold.
// G up to group_row_fused_max_groups; more groups, other layouts and unaligned lines take
// group_rowwise (docs/design.md, "Per-group rowwise in one read").
#pragma once

#include <cstdint>
#include <type_traits>

#include "fp8q/detail/gpu/device_groups.hpp"
#include "fp8q/detail/gpu/group_row_units.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

/// Blocks per multiprocessor that group_row_fused_kernel declares for a fit of Items units per
/// thread at blocks of up to `threads` threads: the most at which ptxas (CUDA 13, sm_90) spills at
/// most a few words. Up to 5 units, two blocks of 257 to 512 threads (72 registers at the
/// default 448, 64 at 512); 256 threads or fewer, three blocks, 80 registers, up to 9 units;
/// larger fits keep one block (up to 128 registers). Occupancy is what this kernel's speed
/// follows (each block takes its rows one after another, two barriers each): docs/design.md,
/// "Per-group rowwise in one read". Where __launch_bounds__ does not count blocks (HIP), the
/// kernel declares one wave per SIMD, as before: no floor was measured there, and a higher one
/// spills (clang-19, gfx942).
constexpr int group_row_fused_min_blocks(int threads, int items) {
  return threads > 256 ? (items <= 5 ? 2 : 1) : (items <= 9 ? 3 : 1);
}

/// The largest fit (units per thread kept in registers): the only one whose rows may be longer
/// than its registers hold.
inline constexpr int group_row_fused_largest_fit = 16;

/// Whether the fit of Items units per thread stages the block's next row in shared memory (a
/// copy that runs while the row before is finished: backend::async_copy_overlaps) rather than
/// loading it into the registers as each unit is cast; up to 2560 units (40 KiB), so that the
/// blocks group_row_fused_min_blocks asks for fit an sm_90 multiprocessor's shared memory.
constexpr bool group_row_fused_staged(int threads, int items) {
  return backend::async_copy_overlaps && threads * items <= 2560;
}

// in:       [batch, rows, cols] In, row-major, 16-byte aligned lines, cols < 2^31
// out.data: [batch, rows, cols'] FP8, row-major, U-byte aligned lines (cols' >= cols + G * (align - 1)
//           when padded)
// scales:   [batch, G, rows] f32
// gs.ends:  [G] int32, device; G <= group_row_fused_max_groups
// The occupancy floor declared per fit (group_row_fused_min_blocks): left alone, ptxas (CUDA 13,
// sm_90) gave the 9-unit fit 157 registers, one 256-thread block per multiprocessor, which left
// each row's load latency and barriers exposed.
template <class SC, class TC, class In, int Items>
__global__ void __launch_bounds__(TC::value.threads, backend::launch_bounds_counts_blocks
                                                        ? group_row_fused_min_blocks(TC::value.threads, Items)
                                                        : 1)
    group_row_fused_kernel(matrix_view<const In> in, quantized<SC::value> out, group_offsets gs,
                           std::uint32_t* error_word, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int U = unit_elems<In>;
  // The block holds T.threads threads or fewer: the host sizes it so that every wave keeps
  // Items units of the row, or one fewer (group_row_fused::block_threads).
  const int threads = static_cast<int>(blockDim.x);
  // dynamic shared memory: the groups, then (staged) [Items][threads] 16-byte units of the next row
  extern __shared__ u32x4 dyn[];
  group_row_shared& s = *reinterpret_cast<group_row_shared*>(dyn);
  constexpr bool staged = group_row_fused_staged(T.threads, Items);
  u32x4* slots = dyn + sizeof(group_row_shared) / sizeof(u32x4);

  const int tid = static_cast<int>(threadIdx.x);
  const int wave = backend::wave_size();
  const int lane = tid % wave;
  const std::int64_t M = in.rows;
  const int N = static_cast<int>(in.cols);
  const int G = static_cast<int>(gs.count);
  const int units = N / U;
  const bool padded = gs.align > 1;
  const int align = padded ? static_cast<int>(gs.align) : 1;
  const std::int64_t stride = gridDim.x;
  // Items of this thread's wave that hold units of the row (a prefix: the block's last item may
  // lie past the row's last unit for whole waves, which then skip it).
  const int wave_items = (units - (tid - lane) + threads - 1) / threads;

  // The block's rows are blockIdx.x + k * gridDim.x, as (batch item b, row r), stepped on
  // without a 64-bit division (some 40 instructions) where the grid is smaller than a batch item.
  struct row_at {
    std::int64_t b, r;
  };
  auto step = [&](row_at p) -> row_at {
    p.r += stride;
    if (p.r >= M) {
      if (stride < M) {
        p.r -= M;
        ++p.b;
      } else {
        const std::int64_t n = p.b * M + p.r;
        p.b = n / M;
        p.r = n % M;
      }
    }
    return p;
  };
  auto row_src = [&](row_at p) { return in.data + in.offset(p.b, p.r, 0); };  // [cols] In
  // The next row's units to this thread's slots (staged fits): each thread copies and later
  // reads only its own slots, so no barrier orders them.
  auto stage = [&](row_at p) {
    if (p.b < in.batch) {
      const In* src = row_src(p);  // [cols] In
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        const int u = tid + i * threads;
        if (u < units) backend::async_copy16(&slots[i * threads + tid], src + u * U, 16);
      }
    }
    backend::async_commit();
  };

  // The first row's loads go out before the setup, which hides behind them, and so does the
  // copy of the second row where the fit is staged.
  row_at at{blockIdx.x / M, blockIdx.x % M};
  unit_raw<In, U> keep[Items];
  if (at.b < in.batch) load_units<In, U, Items>(row_src(at), tid, threads, units, keep);
  if constexpr (staged) stage(step(at));

  // Setup: clamped ends c_g = min(max(0, ends[0..g]), N) (device_groups.hpp's clamp, as a
  // prefix max), then the padded starts P_g (an exclusive prefix sum of the rounded sizes).
  {
    auto* scratch_a = reinterpret_cast<std::int32_t*>(s.amax);
    auto* scratch_b = reinterpret_cast<std::int32_t*>(s.cast);
    for (int g = tid; g < G; g += threads) s.end[g] = gs.ends[g] > 0 ? gs.ends[g] : 0;
    backend::block_sync();
    const std::int32_t* c = block_scan(s.end, scratch_a, G, threads, [](std::int32_t x, std::int32_t y) {
      return x > y ? x : y;
    });
    for (int g = tid; g < G; g += threads) s.end[g] = c[g] < N ? c[g] : N;
    backend::block_sync();
    auto rounded = [&](int g) { return (s.end[g] - group_begin(s, g) + align - 1) / align * align; };
    if (padded) {
      for (int g = tid; g < G; g += threads) scratch_b[g] = rounded(g);
      backend::block_sync();
      const std::int32_t* p = block_scan(scratch_b, scratch_a, G, threads, [](std::int32_t x, std::int32_t y) {
        return x + y;
      });
      for (int g = tid; g < G; g += threads) s.out_begin[g] = p[g] - rounded(g);
      backend::block_sync();
    }
    for (int g = tid; g < G; g += threads) {
      if (blockIdx.x == 0) {
        const int b0 = group_begin(s, g);
        const int o0 = padded ? s.out_begin[g] : b0;
        group_bookkeeping(gs, error_word, g, N, device_group{b0, s.end[g], o0, o0 + rounded(g)});
      }
      s.amax[g] = 0;
      s.cast[g] = group_cast{0.0f, 0u, group_shift(s, g, padded), 0};
    }
    backend::block_sync();
  }

  std::uint32_t place[Items];
  // This wave's items off the lean path, as bits (the same in every lane): of the fold (units in
  // more than two groups, or past the last end) and of the cast (those, and whole units of a
  // padded group off the output's unit grid, which take unaligned stores). The unrolled loops
  // take only the lean path, the rare one comes after them in a rolled loop of its own: its
  // out-of-line call sites inside those loops held the kernel about a fifth below the same loops
  // without them, taken or not (docs/design.md, "Per-group rowwise: the rare units apart").
  std::uint32_t rare_fold = 0;
  std::uint32_t rare_cast = 0;
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    place[i] = unit_place::of<U>(s, G, tid + i * threads, units, lane, wave);
    const int g = unit_place::group(place[i]);
    const bool off_grid = g < G && unit_place::split(place[i]) == 0 && s.cast[g].shift % U != 0;
    const bool on_grid = backend::lanes_max<1>(off_grid ? 1u : 0u) == 0u;
    if ((place[i] & unit_place::fast) && on_grid) place[i] |= unit_place::fast_cast;
    if (i < wave_items && !(place[i] & unit_place::fast)) rare_fold |= 1u << i;
    if (i < wave_items && !(place[i] & unit_place::fast_cast)) rare_cast |= 1u << i;
  }
  // f(unit, its registers, its place) for each item of `rare` in turn, every lane of the wave
  // together: keep[] and place[] are rotated down by one item a step, Items steps, back to where
  // they were (constant indices and no copy: with a run-time index clang-19 kept the arrays in
  // scratch memory on gfx942, and a copy made ptxas spill).
  auto each_rare = [&](std::uint32_t rare, auto&& f) {
#pragma unroll 1
    for (int i = 0; i < Items; ++i) {
      if ((rare >> i) & 1u) f(tid + i * threads, keep[0], place[0]);
      const std::uint32_t first = place[0];
      const unit_raw<In, U> first_raw = keep[0];
#pragma unroll
      for (int j = 0; j + 1 < Items; ++j) {
        place[j] = place[j + 1];
        keep[j] = keep[j + 1];
      }
      place[Items - 1] = first;
      keep[Items - 1] = first_raw;
    }
  };

  const int tail_col = units * U + tid;  // the last N % U elements, one per thread
  const int tail_group = tail_col < N ? group_of_column(s.end, G, tail_col) : G;

  while (at.b < in.batch) {
    const std::int64_t b = at.b;
    const std::int64_t r = at.r;
    const In* src = in.data + in.offset(b, r, 0);  // [cols] In

    // The lean path (a wave whose units all lie past the row's last unit is not `fast`, and
    // not rare either: it does nothing).
#pragma unroll
    for (int i = 0; i < Items; ++i)
      if (place[i] & unit_place::fast) fold_fast<In, U>(s, G, keep[i], place[i], wave);  // the same in every lane of the wave
    if (rare_fold != 0)
      each_rare(rare_fold, [&](int u, const unit_raw<In, U>& raw, std::uint32_t pl) {
        fold_unit_inline<In, U>(s, G, raw, pl, u * U, wave);
      });
    // rows longer than the registers (the largest fit only: a call site in the loop costs the
    // others speed even where it never runs)
    if constexpr (Items == group_row_fused_largest_fit)
      for (int base = Items * threads; base < units; base += threads) {
        const int u = base + tid;
        const std::uint32_t pl = unit_place::of<U>(s, G, u, units, lane, wave);
        const unit_raw<In, U> raw = u < units ? load_unit<In, U>(src + u * U) : unit_raw<In, U>{};
        fold_unit<In, U>(s, G, raw, pl, u * U, wave);
      }
    if (tail_group < G) backend::shared_max(&s.amax[tail_group], abs_bits(load_one(src + tail_col)));
    backend::block_sync();

    for (int g = tid; g < G; g += threads) {
      const std::uint32_t a = s.amax[g];
      s.amax[g] = 0;  // for the next row: its atomics come after the barrier below
      const float sc = group_scale<S>(a);
      s.cast[g].scale = sc;
      s.cast[g].in_range = in_range_group<S>(a, sc) ? 1u : 0u;
      if (s.end[g] > group_begin(s, g)) write_scales<S>(out, b, g, r, sc);  // an empty group has no scale
    }
    backend::block_sync();
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data + out.data.offset(b, r, 0));  // [cols'] FP8
    const std::uint64_t row_index = logical_index(b, r, 0, M, in.cols);
    const row_at next_at = step(at);
    const In* next_src = next_at.b < in.batch ? row_src(next_at) : nullptr;  // [cols] In

    // The rare units first: the unrolled loop below refills the registers (unstaged fits).
    if (rare_cast != 0)
      each_rare(rare_cast, [&](int u, const unit_raw<In, U>& raw, std::uint32_t pl) {
        cast_grouped_unit_inline<S, T, In, U>(s, G, padded, raw, pl, u * U, dst, seed, row_index);
      });
    // Unstaged, each unit's register is refilled from the next row as soon as it is cast, so
    // loads stay in flight through this row's stores and the next row's barriers.
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int u = tid + i * threads;
      if (place[i] & unit_place::fast_cast) cast_fast<S, T, In, U>(s, G, padded, keep[i], place[i], u * U, dst, seed, row_index);
      if (!staged && next_src != nullptr && u < units) keep[i] = load_unit<In, U>(next_src + u * U);
    }
    if constexpr (Items == group_row_fused_largest_fit)
      for (int base = Items * threads; base < units; base += threads) {
        const int u = base + tid;
        const std::uint32_t pl = unit_place::of<U>(s, G, u, units, lane, wave);
        if (u < units) cast_grouped_unit<S, T, In, U>(s, G, padded, load_unit<In, U>(src + u * U), pl, u * U, dst, seed, row_index);
      }
    if (tail_group < G)
      dst[tail_col + group_shift(s, tail_group, padded)] =
          encode_scaled<S>(load_one(src + tail_col) * s.cast[tail_group].scale, seed, row_index + tail_col);
    if (padded) {  // each group's padding columns: zero bytes, one wave per group
      const int waves = threads / wave;
      for (int g = tid / wave; g < G; g += waves) {
        const int size = s.end[g] - group_begin(s, g);
        const int pad = (size + align - 1) / align * align - size;
        for (int k = lane; k < pad; k += wave) dst[s.out_begin[g] + size + k] = 0;
      }
    }
    // the scales of this row are read above; the next row's are written after its first barrier
    if constexpr (staged) {
      if (next_src != nullptr) {
        backend::async_wait<0>();
#pragma unroll
        for (int i = 0; i < Items; ++i)
          if (tid + i * threads < units) keep[i] = slots[i * threads + tid];
        // The row after next goes to the same slots at once, so that it is in flight through
        // the whole of the next row (issued after the next row's fold instead, up to 9% slower:
        // docs/design.md, "Per-group rowwise: what a profile showed"). The slots' reads above
        // precede the copies in this thread's program order, and the copies are waited for
        // before the slots are read again.
        stage(step(next_at));
      }
    }

    at = next_at;
  }
  if constexpr (staged) backend::async_wait<0>();
}

/// Lines of a view start on `bytes`-byte boundaries (base, leading dimension, batch stride).
template <class T>
bool lines_aligned_to(const matrix_view<T>& v, std::int64_t bytes) {
  const std::int64_t e = static_cast<std::int64_t>(sizeof(T));
  return reinterpret_cast<std::uintptr_t>(v.data) % static_cast<std::uintptr_t>(bytes) == 0 &&
         (v.ld * e) % bytes == 0 && (v.batch == 1 || (v.batch_stride * e) % bytes == 0);
}

// Up to 448 threads on CUDA, 256 on HIP, unless the tuning says otherwise (default_threads;
// docs/design.md, "Per-group rowwise: what a profile showed"); Items (units per thread kept in registers)
// fitted to the row at that many threads: 2, 4, 5 (a 16640-column bf16 row: 2080 units, in a
// block of 416), 6, 8, 9 (the same row at 256 threads), 12, 16 (spare registers cost
// occupancy, as for row_wave); the block then sized to the row (block_threads).
template <spec S, tuning T, class In>
struct group_row_fused {
  static constexpr gpu_path name = gpu_path::group_row_fused;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = false;
  // 448 threads where __launch_bounds__ counts blocks (CUDA: two blocks of up to 14 warps per
  // multiprocessor at the 5-unit fit, 72 registers, H200; at 512 threads, 64 registers, the
  // kernel spilled once its blocks were sized to the row); elsewhere (HIP) 256, as before: a
  // 512-thread block holds a gfx942 thread to 256 VGPRs and the fits from 6 units on spilled
  // there (clang-19), while at 256 threads nothing spills up to 12 units.
  static constexpr int default_threads = backend::launch_bounds_counts_blocks ? 448 : 256;
  // The path names the family, not its code: a forced call and the walk share the kernels.
  static constexpr tuning R = [] {
    tuning t = T.threads == 0 ? with_threads(resolve_tuning(T, S, {}), default_threads) : resolve_tuning(T, S, {});
    t.path = gpu_path::automatic;
    return t;
  }();
  static constexpr int U = unit_elems<In>;
  struct plan {};

  /// The fit (units per thread kept in registers) for a row of `cols` elements.
  static int fit(std::int64_t cols) {
    const std::int64_t per_thread = (cols / U + R.threads - 1) / R.threads;
    for (const int items : {2, 4, 5, 6, 8, 9, 12})
      if (per_thread <= items) return items;
    return group_row_fused_largest_fit;
  }
  /// The block for a fit of `items` units per thread: the fewest whole waves that hold the
  /// row's units at `items` each, at most R.threads. Every wave then holds items or items - 1
  /// units of each row (at 512 threads, a 16640-column bf16 row of 2080 units left 15 of 16
  /// waves a unit short of the first, whom they waited for at each barrier). It mattered for the
  /// lean-path copy (0.65 -> 0.76 of copy at G = 16) more than for this kernel, which its
  /// out-of-line call sites hold (docs/design.md, "Per-group rowwise: what a profile showed").
  static int block_threads(std::int64_t cols, int items, int wave) {
    const std::int64_t waves_of_units = (cols / U + wave - 1) / wave;
    const std::int64_t t = (waves_of_units + items - 1) / items * wave;
    return static_cast<int>(t < wave ? wave : t > R.threads ? R.threads : t);
  }
  /// Dynamic shared memory of a launch of the fit with `threads` threads: the groups, and the
  /// staged row.
  static int shared_bytes(int items, int threads = R.threads) {
    return static_cast<int>(sizeof(group_row_shared)) +
           (group_row_fused_staged(R.threads, items) ? items * threads * static_cast<int>(sizeof(u32x4)) : 0);
  }

  static bool accepts(const problem<S, In>& p, plan*) {
    const std::int64_t limit = 0x3fffffffLL;  // columns and padded columns as int in the kernel
    return p.in.order == layout::row_major && p.out.data.order == layout::row_major &&
           lines_aligned16(p.in) && lines_aligned_to(p.out.data, U) &&
           p.groups.count <= group_row_fused_max_groups && p.in.cols <= limit &&
           p.out.data.cols <= limit && p.groups.align <= limit &&
           (p.dev == nullptr || backend::max_dynamic_shared(*p.dev) >= shared_bytes(fit(p.in.cols)));
  }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>&) { return 0; }

  static status enqueue(const problem<S, In>& p, const plan&, void*, gpu_stream stream) {
    if (p.groups.count == 0) return status::success;  // G = 0 writes nothing
    const std::int64_t rows = p.in.rows * p.in.batch;
    auto go = [&](auto items) -> status {
      constexpr auto kernel = group_row_fused_kernel<spec_c<S>, tuning_c<R>, In, decltype(items)::value>;
      // One wave of persistent blocks: each serves rows/grid rows, give or take one, so the
      // last wave is never a partial one. resident_blocks counts registers only: a staged fit's
      // shared memory (at most 68 KiB a block) keeps as many resident on sm_90 (228 KiB); where a
      // multiprocessor holds less, the blocks that do not fit start as others finish (the same
      // bytes, later).
      const int threads = block_threads(p.in.cols, decltype(items)::value, p.dev->wave_size);
      int per_mp = 0;
      if (const status st = backend::resident_blocks<kernel>(*p.dev, threads, &per_mp); st != status::success)
        return st;
      const std::int64_t resident = static_cast<std::int64_t>(per_mp > 0 ? per_mp : 1) * p.dev->multiprocessors;
      const unsigned grid = static_cast<unsigned>(rows < resident ? rows : resident);
      return backend::launch_shared<kernel>(*p.dev, dim3(grid), threads, shared_bytes(decltype(items)::value, threads),
                                            stream, p.in, p.out, p.groups, p.error_word, p.seed);
    };
    switch (fit(p.in.cols)) {
      case 2: return go(std::integral_constant<int, 2>{});
      case 4: return go(std::integral_constant<int, 4>{});
      case 5: return go(std::integral_constant<int, 5>{});
      case 6: return go(std::integral_constant<int, 6>{});
      case 8: return go(std::integral_constant<int, 8>{});
      case 9: return go(std::integral_constant<int, 9>{});
      case 12: return go(std::integral_constant<int, 12>{});
      default: return go(std::integral_constant<int, 16>{});
    }
  }
};

}  // namespace fp8q::detail::gpu
