// fp8q — per-group rowwise with each thread on a span of consecutive units
// (granularity::group_row: groups along the columns from device offsets, scales (G, M)).
// group_row_fused gives a thread the units tid + i * threads of a row, so every unit meets the
// group boundaries of its own wave: one segmented lane reduction per unit. Here a thread takes
// Items consecutive units (columns [tid * Items * U, (tid + 1) * Items * U)), folds them in its
// registers and joins the other lanes once per row; a span lies in one group, or across one
// boundary (a head and a tail part, empty groups at the boundary included), or, rarely, across
// more (element by element, out of line). Per row, in a persistent block:
//   - the row arrives in one of two shared-memory slots by coalesced 16-byte copies
//     (backend::async_copy16), issued two rows ahead; each thread reads its span from the slot;
//   - fold: the span's 16-bit magnitudes maxed two at a time; the head part of a split span goes
//     to its group by one shared atomic; the lanes of each group reduced together (one wave-wide
//     max where the wave holds one group, else a segmented scan over lane shuffles), one shared
//     atomic max per run of lanes;
//   - a barrier; one thread per group turns its maximum into the scale and stores it; the
//     previous row's encoded bytes leave a shared staging row in coalesced 16-byte stores; the
//     slot just read takes the copy of the row two ahead; a barrier;
//   - cast: each unit times its group's scale, encoded into the staging row (the split unit
//     from a copy in shared memory: the slot holds the next row by then).
// Padded outputs (group_offsets::align): the cast and the staging row are the same; the copy-out
// assembles each 16-byte chunk of the padded row from its group's columns, by a table made once
// per block (the offsets hold for every row): a shift where the chunk lies in one group's bytes,
// zeros in padding; the few chunks across a group's edge in a loop of their own, under byte
// masks. Served: 16-bit inputs, row-major in and out, N a multiple of the unit, up to
// group_row_spans_max_groups groups, rows whose slots, split units and staging row fit shared
// memory.
// The walk prefers it up to group_row_spans_preferred_groups (more groups make more spans split
// or cross several boundaries). Measured against group_row_fused in docs/design.md
// ("Per-group rowwise: a span per thread").
#pragma once

#include <cstdint>
#include <type_traits>

#include "fp8q/detail/gpu/device_groups.hpp"
#include "fp8q/detail/gpu/families/group_row_fused.hpp"
#include "fp8q/detail/gpu/group_row_units.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

/// The most groups group_row_spans serves (its shared memory holds seven words per group).
inline constexpr int group_row_spans_max_groups = 256;
/// The most groups for which the walk prefers group_row_spans to group_row_fused.
inline constexpr int group_row_spans_preferred_groups = 64;
/// Units (16 bytes of input) per thread: odd, so that a wave's 16-byte reads of its spans from
/// shared memory and its 8-byte writes to the staging row meet no bank twice (docs/design.md).
inline constexpr int group_row_spans_items = 11;
/// The largest block (the kernel's launch bound, whatever the tuning asks above it): 512 threads
/// on CUDA (at 1024 ptxas would hold a thread to 64 registers, half of what a span takes), 256
/// on HIP (at 512, clang-19 spills on gfx942 with 256 VGPRs a lane).
inline constexpr int group_row_spans_max_threads = backend::launch_bounds_counts_blocks ? 512 : 256;

/// One block's view of the groups.
struct group_spans_shared {
  std::int32_t end[group_row_spans_max_groups];      ///< clamped ends c_g (device_groups.hpp)
  std::uint32_t amax[group_row_spans_max_groups];    ///< this row's maxima, f32 bits
  std::int32_t scratch[group_row_spans_max_groups];  ///< the setup's scan
  group_cast cast[group_row_spans_max_groups];       ///< this row's scales
};

/// Bytes of the staging row (8 per unit) and, where the output is padded, 16 past it (the
/// copy-out reads the two aligned 16-byte words around an unaligned one) and the chunk table (4
/// bytes per 16 bytes of the padded row).
constexpr std::int64_t group_row_spans_stage_bytes(int threads, std::int64_t cols, std::int64_t groups, std::int64_t align) {
  const std::int64_t stage = threads * group_row_spans_items * std::int64_t{8};
  const std::int64_t padded_cols = cols + groups * (align - 1);
  return stage + (align > 1 ? 16 + (padded_cols + 15) / 16 * 4 : 0);
}

/// Dynamic shared memory of a block of `threads` threads: the groups, two slots of the row
/// (bf16/f16 units), each thread's split unit, the staging row of encoded bytes and, padded,
/// the chunk table.
constexpr std::int64_t group_row_spans_shared_bytes(int threads, std::int64_t cols, std::int64_t groups,
                                                    std::int64_t align) {
  return static_cast<std::int64_t>(sizeof(group_spans_shared)) + threads * group_row_spans_items * std::int64_t{32} +
         threads * std::int64_t{16} + group_row_spans_stage_bytes(threads, cols, groups, align);
}

/// The elements of a span that crosses several boundaries or the last end, one by one (out of
/// line: inlined, such paths cost group_row_fused's unrolled loops a fifth of their speed
/// whether taken or not). Fold: every element's magnitude to its own group's maximum.
/// src: [cols] In, this row's input.
template <class In>
[[gnu::noinline]] __device__ void fold_span_elements(group_spans_shared& s, int G, const In* src, int c0, int c1) {
  int h = 0;
  while (h < G && s.end[h] <= c0) ++h;
  for (int c = c0; c < c1; ++c) {
    while (h < G && s.end[h] <= c) ++h;
    if (h >= G) break;
    backend::shared_max(&s.amax[h], abs_bits(load_one(src + c)));
  }
}

/// Cast of such a span, element by element, into the staging row (columns past the last end are
/// left alone). src: [cols] In; stage: [cols] FP8 bytes of the row.
template <spec S, class In>
[[gnu::noinline]] __device__ void cast_span_elements(const group_spans_shared& s, int G, const In* src, int c0,
                                                     int c1, std::uint8_t* stage, std::uint64_t seed,
                                                     std::uint64_t row_index) {
  int h = 0;
  for (int c = c0; c < c1; ++c) {
    while (h < G && s.end[h] <= c) ++h;
    if (h >= G) break;
    stage[c] =
        encode_scaled<S>(load_one(src + c) * s.cast[h].scale, seed, row_index + static_cast<std::uint64_t>(c));
  }
}

/// The 16 bytes at byte a of `row` (any a >= -16; reads the two aligned words around them).
/// row: [bytes] in shared memory, 16-byte aligned.
__device__ inline u32x4 unaligned16(const u32x4* row, int a) {
  const u32x4 lo = row[a >> 4];
  const u32x4 hi = row[(a >> 4) + 1];
  const unsigned bo = static_cast<unsigned>(a & 3) * 8;
  auto join = [&](std::uint32_t x, std::uint32_t y) {
    return static_cast<std::uint32_t>(((std::uint64_t{y} << 32) | x) >> bo);
  };
  // a branch on the word offset, not selects: it is the same in the lanes of a run of chunks
  // of one group, and an indexed register array would go to local memory
  switch ((a >> 2) & 3) {
    case 0: return u32x4{join(lo.x, lo.y), join(lo.y, lo.z), join(lo.z, lo.w), join(lo.w, hi.x)};
    case 1: return u32x4{join(lo.y, lo.z), join(lo.z, lo.w), join(lo.w, hi.x), join(hi.x, hi.y)};
    case 2: return u32x4{join(lo.z, lo.w), join(lo.w, hi.x), join(hi.x, hi.y), join(hi.y, hi.z)};
    default: return u32x4{join(lo.w, hi.x), join(hi.x, hi.y), join(hi.y, hi.z), join(hi.z, hi.w)};
  }
}

/// A mask of the bytes [lo, hi) of 16 (lo, hi clamped to [0, 16]).
__device__ inline u32x4 byte_range16(int lo, int hi) {
  auto word = [&](int k) {
    const int a = lo - 4 * k < 0 ? 0 : lo - 4 * k > 4 ? 4 : lo - 4 * k;
    const int b = hi - 4 * k < 0 ? 0 : hi - 4 * k > 4 ? 4 : hi - 4 * k;
    return static_cast<std::uint32_t>((std::uint64_t{1} << (8 * b)) - (std::uint64_t{1} << (8 * a)));
  };
  return u32x4{word(0), word(1), word(2), word(3)};
}

// in:       [batch, rows, cols] bf16/f16, row-major, 16-byte aligned lines, cols % 8 == 0
// out.data: [batch, rows, cols'] FP8, row-major, 8-byte aligned lines (cols' >= cols + G * (align - 1)
//           when padded)
// scales:   [batch, G, rows] f32
// gs.ends:  [G] int32, device; G <= group_row_spans_max_groups
// Padded: gs.align > 1 (a kernel of its own: the copy-out and the setup differ).
template <class SC, class TC, class In, bool Padded>
__global__ void __launch_bounds__(group_row_spans_max_threads)
    group_row_spans_kernel(matrix_view<const In> in, quantized<SC::value> out, group_offsets gs,
                           std::uint32_t* error_word, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int U = unit_elems<In>;
  constexpr int W = U / 4;
  constexpr int Items = group_row_spans_items;
  static_assert(U == 8, "group_row_spans: 16-bit inputs");
  const int threads = static_cast<int>(blockDim.x);
  const int slot_units = threads * Items;
  extern __shared__ u32x4 dyn[];
  group_spans_shared& s = *reinterpret_cast<group_spans_shared*>(dyn);
  u32x4* slots = dyn + sizeof(group_spans_shared) / sizeof(u32x4);        // [2][slot_units] the row
  u32x4* split_units = slots + 2 * slot_units;                              // [threads] each split unit
  auto* stage_row = reinterpret_cast<std::uint8_t*>(split_units + threads);  // [cols] FP8, the encoded row
  // [chunks] padded only: per 16 bytes of the padded row, a shift, -1 (padding) or -2 - first group
  auto* chunk_code = reinterpret_cast<std::int32_t*>(stage_row + slot_units * 8 + 16);

  const int tid = static_cast<int>(threadIdx.x);
  const int wave = backend::wave_size();
  const int lane = tid % wave;
  const std::int64_t M = in.rows;
  const int N = static_cast<int>(in.cols);
  const int G = static_cast<int>(gs.count);
  const int units = N / U;
  constexpr bool padded = Padded;
  const int align = padded ? static_cast<int>(gs.align) : 1;
  const std::int64_t stride = gridDim.x;
  const std::int64_t rows = in.batch * M;

  auto src_of = [&](std::int64_t m) {  // [cols] In, row m of the batch's rows
    const std::int64_t b = in.batch == 1 ? 0 : m / M;
    return in.data + in.offset(b, m - b * M, 0);
  };
  // The row n to `slot`, coalesced (chunk tid + k * threads); a commit either way, so that the
  // waits below count rows.
  auto copy_row = [&](std::int64_t n, int slot) {
    if (n < rows) {
      const In* src = src_of(n);  // [cols] In
      for (int u = tid; u < units; u += threads) backend::async_copy16(&slots[slot * slot_units + u], src + u * U, 16);
    }
    backend::async_commit();
  };
  std::int64_t n = blockIdx.x;
  copy_row(n, 0);
  copy_row(n + stride, 1);

  // Setup (under the copies): clamped ends c_g = min(max(0, ends[0..g]), N), device_groups.hpp's
  // rule, as a prefix max; where padded, each group's shift to its output columns (an exclusive
  // prefix sum of the rounded sizes), its padded end (s.scratch) and the chunk table; block 0
  // does the bookkeeping (error word, padded ends).
  for (int g = tid; g < G; g += threads) s.end[g] = gs.ends[g] > 0 ? gs.ends[g] : 0;
  backend::block_sync();
  {
    const std::int32_t* c = block_scan(s.end, s.scratch, G, threads, [](std::int32_t x, std::int32_t y) {
      return x > y ? x : y;
    });
    for (int g = tid; g < G; g += threads) s.amax[g] = static_cast<std::uint32_t>(c[g] < N ? c[g] : N);
  }
  backend::block_sync();
  for (int g = tid; g < G; g += threads) s.end[g] = static_cast<std::int32_t>(s.amax[g]);
  backend::block_sync();
  auto begin_of = [&](int g) { return g > 0 ? s.end[g - 1] : 0; };
  auto rounded = [&](int g) { return (s.end[g] - begin_of(g) + align - 1) / align * align; };
  int out_end = G > 0 ? s.end[G - 1] : 0;  // the staging row's bytes that leave: [0, out_end)
  if constexpr (padded) {
    for (int g = tid; g < G; g += threads) s.scratch[g] = rounded(g);
    backend::block_sync();
    const std::int32_t* p = block_scan(s.scratch, reinterpret_cast<std::int32_t*>(s.amax), G, threads,
                                       [](std::int32_t x, std::int32_t y) { return x + y; });
    for (int g = tid; g < G; g += threads) s.cast[g].shift = p[g] - rounded(g) - begin_of(g);
    out_end = G > 0 ? p[G - 1] : 0;
    backend::block_sync();
  }
  for (int g = tid; g < G; g += threads) {
    const int shift = padded ? s.cast[g].shift : 0;
    s.amax[g] = 0;
    s.cast[g] = group_cast{0.0f, 0u, shift, 0};
    const int b0 = begin_of(g);
    if (blockIdx.x == 0) group_bookkeeping(gs, error_word, g, N, device_group{b0, s.end[g], b0 + shift, b0 + shift + rounded(g)});
  }
  backend::block_sync();
  if constexpr (padded) {
    for (int g = tid; g < G; g += threads) s.scratch[g] = begin_of(g) + s.cast[g].shift + rounded(g);
    backend::block_sync();
    for (int j = tid; j < (out_end + 15) / 16; j += threads) {
      const int x0 = j * 16;
      const int x1 = x0 + 16 < out_end ? x0 + 16 : out_end;
      int g = 0;  // the first group whose padded end lies past x0 (a group of data there)
      for (int hi = G - 1; g < hi;) {
        const int mid = (g + hi) / 2;
        if (s.scratch[mid] > x0) hi = mid;
        else g = mid + 1;
      }
      const int shift = s.cast[g].shift;
      const int data_end = s.end[g] + shift;  // in the padded row
      // (the row's last chunk, where it is partial, is mixed: it is stored byte by byte)
      chunk_code[j] = x1 - x0 < 16                                   ? -2 - g
                      : x0 >= begin_of(g) + shift && x1 <= data_end ? shift
                      : x0 >= data_end && x1 <= s.scratch[g]       ? -1
                                                                     : -2 - g;
    }
    backend::block_sync();
  }

  // This thread's span: units [u0, u0 + own), columns [c0, c1); head group g0 (of c0), tail
  // group gl (of c1 - 1); G where past the last end or where the thread holds no unit.
  const int u0 = tid * Items;
  const int own = units - u0 < 0 ? 0 : units - u0 > Items ? Items : units - u0;
  const int c0 = u0 * U;
  const int c1 = c0 + own * U;
  auto tail_group = [&](int t) {  // the key of thread t's span: its tail group
    const int first = t * Items;
    const int last_unit = (units - first > Items ? first + Items : units) - 1;
    return first < units ? group_of_column(s.end, G, last_unit * U + U - 1) : G;
  };
  const int g0 = own > 0 ? group_of_column(s.end, G, c0) : G;
  const int gl = tail_group(tid);
  int q = Items - 1;  // the unit holding the split (q) and the split's column in it (at; U: none)
  int at = U;
  bool split = false;
  bool many = false;
  if (g0 < G && gl != g0) {
    if (gl < G && s.end[gl - 1] == s.end[g0]) {
      split = true;
      q = (s.end[g0] - c0) / U;
      at = (s.end[g0] - c0) % U;
    } else {
      many = true;  // several boundaries, or the last end inside the span
    }
  }
  const u32x4 head_mask = below_mask16(at);
  const std::uint32_t key = static_cast<std::uint32_t>(gl);
  std::uint32_t steps = 0;  // bit k: the lane 2^k below holds a span of the same key
  for (int k = 0; (1 << k) < wave; ++k)
    if (backend::lanes_up(key, 1 << k) == key) steps |= 1u << k;
  const bool run_end = lane == wave - 1 || static_cast<std::uint32_t>(tail_group(tid + 1)) != key;
  // uniform: every lane's span lies whole in one and the same group (largest key == smallest)
  const bool whole = g0 == gl && g0 < G;
  const std::uint32_t wkey = whole ? key : 0x10000u + static_cast<std::uint32_t>(lane);
  const bool uniform = backend::lanes_max<1>(wkey) == ~backend::lanes_max<1>(~wkey);
  const bool wide = reinterpret_cast<std::uintptr_t>(out.data.data) % 16 == 0 && out.data.ld % 16 == 0 &&
                    (out.data.batch == 1 || out.data.batch_stride % 16 == 0);
  backend::async_wait<1>();
  backend::block_sync();

  std::uint8_t* prev = nullptr;  // [cols] FP8, the row in the staging row
  // The staging row to prev's row: its columns up to the (padded) last end, 16 bytes a store
  // where the output lines allow, else 8.
  auto copy_out = [&] {
    if constexpr (padded) {
      const auto* o = reinterpret_cast<const u32x4*>(stage_row);
      auto put = [&](int x0, const u32x4& v) {
        if (wide) {
          *reinterpret_cast<u32x4*>(prev + x0) = v;
        } else {
          *reinterpret_cast<uint2*>(prev + x0) = uint2{v.x, v.y};
          *reinterpret_cast<uint2*>(prev + x0 + 8) = uint2{v.z, v.w};
        }
      };
      // Whole chunks of one group's bytes or of padding. The chunks across an edge are left to
      // the loop below: inside this one, a wave would run their path whenever any lane has one
      // (most waves, most rows), doubling the copy-out's instructions.
      for (int j = tid; j < (out_end + 15) / 16; j += threads) {
        const int code = chunk_code[j];
        if (code >= -1) put(j * 16, code >= 0 ? unaligned16(o, j * 16 - code) : u32x4{0, 0, 0, 0});
      }
      // The edges, in order: group g's padded begin (2g) and data end (2g + 1), the padded last
      // end (2G). A chunk with an edge strictly inside is one across an edge (or the row's
      // partial last chunk); the first such edge takes it. At most 2G + 1 chunks.
      auto edge = [&](int e) {
        const int g = e >> 1;
        return e == 2 * G ? out_end : ((e & 1) ? s.end[g] : begin_of(g)) + s.cast[g].shift;
      };
      for (int e = tid; e <= 2 * G; e += threads) {
        const int b = edge(e);
        const int x0 = b & ~15;
        if (b == x0 || (e > 0 && edge(e - 1) > x0)) continue;
        const int code = chunk_code[x0 / 16];
        if (code > -2) continue;  // (not reached: such a chunk is never whole)
        u32x4 v{0, 0, 0, 0};  // each group's bytes under a mask, padding 0
        for (int g = -2 - code; g < G && begin_of(g) + s.cast[g].shift < x0 + 16; ++g) {
          const int shift = s.cast[g].shift;
          const int lo = begin_of(g) + shift - x0;  // the group's data in the chunk: [lo, hi)
          const int hi = s.end[g] + shift - x0;
          if (hi <= 0 || hi <= lo) continue;
          const u32x4 m = byte_range16(lo, hi);
          const u32x4 w = unaligned16(o, x0 - shift);  // (x0 - shift >= -15: the word below the
                                                       // staging row lies in shared memory)
          v = u32x4{v.x | (w.x & m.x), v.y | (w.y & m.y), v.z | (w.z & m.z), v.w | (w.w & m.w)};
        }
        if (out_end - x0 >= 16) {
          put(x0, v);
        } else {  // the row's last bytes: none past the padded last end
          for (int k = 0; k < out_end - x0; ++k) {
            const std::uint32_t w = k < 4 ? v.x : k < 8 ? v.y : k < 12 ? v.z : v.w;
            prev[x0 + k] = static_cast<std::uint8_t>(w >> (8 * (k % 4)));
          }
        }
      }
    } else if (wide) {  // (not unrolled: keep[] is live here, and unrolled copies made ptxas spill)
      const auto* o = reinterpret_cast<const u32x4*>(stage_row);
#pragma unroll 1
      for (int j = tid; j < out_end / 16; j += threads) *reinterpret_cast<u32x4*>(prev + j * 16) = o[j];
      for (int c = out_end / 16 * 16 + tid; c < out_end; c += threads) prev[c] = stage_row[c];
    } else {
      const auto* o = reinterpret_cast<const uint2*>(stage_row);
#pragma unroll 1
      for (int j = tid; j < out_end / 8; j += threads) *reinterpret_cast<uint2*>(prev + j * 8) = o[j];
      for (int c = out_end / 8 * 8 + tid; c < out_end; c += threads) prev[c] = stage_row[c];
    }
  };
  for (int k = 0; n < rows; ++k, n += stride) {
    const int slot = k & 1;
    const std::int64_t b = in.batch == 1 ? 0 : n / M;  // no 64-bit division for one batch item
    const std::int64_t r = n - b * M;
    const In* src = in.data + in.offset(b, r, 0);  // [cols] In
    u32x4 keep[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) keep[i] = i < own ? slots[slot * slot_units + u0 + i] : u32x4{0, 0, 0, 0};
    {
      const u32x4 rq = slots[slot * slot_units + u0 + (q < own ? q : 0)];  // the split unit
      std::uint32_t h16 = 0;
      std::uint32_t t16 = 0;
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        const std::uint32_t m = unit_amax16(keep[i], 0);
        h16 = fast::max_u16x2(h16, i < q ? m : 0u);
        t16 = fast::max_u16x2(t16, i > q ? m : 0u);
      }
      h16 = unit_amax16(u32x4{rq.x & head_mask.x, rq.y & head_mask.y, rq.z & head_mask.z, rq.w & head_mask.w}, h16);
      t16 = unit_amax16(u32x4{rq.x & ~head_mask.x, rq.y & ~head_mask.y, rq.z & ~head_mask.z, rq.w & ~head_mask.w}, t16);
      const std::uint32_t hv = amax16_bits<In>(h16);
      std::uint32_t v = split ? amax16_bits<In>(t16) : whole ? hv : 0u;
      if (split) {
        backend::shared_max(&s.amax[g0], hv);
        split_units[tid] = rq;  // for the cast, after the slot has taken the row two ahead
      }
      if (many) fold_span_elements<In>(s, G, src, c0, c1);
      if (uniform) {
        v = backend::wave_max(v);
      } else {
        for (int j = 0; (1 << j) < wave; ++j) {
          const std::uint32_t w = backend::lanes_up(v, 1 << j);
          if ((steps >> j) & 1u) v = v > w ? v : w;
        }
      }
      if (run_end && gl < G) backend::shared_max(&s.amax[gl], v);
    }
    backend::block_sync();
    // Every thread has read this slot: it takes the row two ahead. The staging row holds the
    // previous row's bytes (cast after its second barrier).
    copy_row(n + 2 * stride, slot);
    if (prev != nullptr) copy_out();
    for (int g = tid; g < G; g += threads) {
      const std::uint32_t a = s.amax[g];
      s.amax[g] = 0;  // for the next row: its atomics come after the barrier below
      const float sc = group_scale<S>(a);
      s.cast[g].scale = sc;
      s.cast[g].in_range = in_range_group<S>(a, sc) ? 1u : 0u;
      if (s.end[g] > (g > 0 ? s.end[g - 1] : 0)) write_scales<S>(out, b, g, r, sc);  // an empty group has no scale
    }
    backend::async_wait<1>();  // the next row's slot
    backend::block_sync();

    const std::uint64_t row_index = logical_index(b, r, 0, M, in.cols);
    auto cast_span = [&] {
      const group_cast ch = s.cast[g0];
      const group_cast ct = split ? s.cast[gl] : ch;
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        const bool head = i < q || !split;
        const float sc = head ? ch.scale : ct.scale;
        float y[U];
        widen_unit<In, U>(keep[i], y);
#pragma unroll
        for (int e = 0; e < U; ++e) y[e] *= sc;
        std::uint32_t w[W];
        encode_scaled_unit<S, T, In, U>(keep[i], y, (head ? ch.in_range : ct.in_range) != 0, w, seed,
                                        row_index + static_cast<std::uint64_t>(c0 + i * U));
        if (i < own && !(split && i == q)) *reinterpret_cast<uint2*>(stage_row + c0 + i * U) = uint2{w[0], w[1]};
      }
      if (split) {  // the unit across the boundary: each element by its own group's scale
        // kept in shared memory through the barriers: in registers it made ptxas spill, and
        // read again from device memory its latency cost every row (docs/design.md)
        const u32x4 rq = split_units[tid];
        float y[U];
        widen_unit<In, U>(rq, y);
#pragma unroll
        for (int e = 0; e < U; ++e) y[e] *= e < at ? ch.scale : ct.scale;
        std::uint32_t w[W];
        encode_scaled_unit<S, T, In, U>(rq, y, ch.in_range != 0 && ct.in_range != 0, w, seed,
                                        row_index + static_cast<std::uint64_t>(c0 + q * U));
        *reinterpret_cast<uint2*>(stage_row + c0 + q * U) = uint2{w[0], w[1]};
      }
    };
    if (many) cast_span_elements<S, In>(s, G, src, c0, c1, stage_row, seed, row_index);
    else if (g0 < G) cast_span();
    prev = reinterpret_cast<std::uint8_t*>(out.data.data + out.data.offset(b, r, 0));
  }
  if (prev != nullptr) {
    backend::block_sync();
    copy_out();
  }
  backend::async_wait<0>();
}

// Blocks sized to the row: the fewest whole waves whose threads hold Items units each, at most
// the tuning's threads and group_row_spans_max_threads, where shared memory holds the block's
// share (unpadded: rows up to 42,240 columns in an H200's 227 KB, 11,264 in gfx942's 64 KB).
template <spec S, tuning T, class In>
struct group_row_spans {
  static constexpr gpu_path name = gpu_path::group_row_spans;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = true;  // the row must fit the device's shared memory
  static constexpr tuning R = [] {
    const tuning r = resolve_tuning(T, S, {});
    tuning t = with_threads(r, T.threads == 0 || r.threads > group_row_spans_max_threads ? group_row_spans_max_threads
                                                                                          : r.threads);
    t.path = gpu_path::automatic;
    return t;
  }();
  static constexpr int U = unit_elems<In>;
  struct plan {};

  static int block_threads(std::int64_t cols, int wave) {
    const std::int64_t spans = (cols / U + group_row_spans_items - 1) / group_row_spans_items;
    const std::int64_t t = (spans + wave - 1) / wave * wave;
    return static_cast<int>(t < wave ? wave : t);
  }

  static bool accepts(const problem<S, In>& p, plan*) {
    if constexpr (sizeof(In) != 2) {
      return false;
    } else {
      const int wave = p.dev != nullptr ? p.dev->wave_size : 64;
      const int threads = block_threads(p.in.cols, wave);
      return p.in.order == layout::row_major && p.out.data.order == layout::row_major &&
             lines_aligned16(p.in) && lines_aligned_to(p.out.data, 8) && p.in.cols % U == 0 &&
             p.groups.count <= group_row_spans_max_groups && threads <= R.threads && p.groups.align <= (1 << 20) &&
             (p.dev == nullptr || backend::max_dynamic_shared(*p.dev) >= shared_bytes(p, threads));
    }
  }
  static std::int64_t shared_bytes(const problem<S, In>& p, int threads) {
    return group_row_spans_shared_bytes(threads, p.in.cols, p.groups.count, p.groups.align);
  }
  static bool preferred(const problem<S, In>& p) { return p.groups.count <= group_row_spans_preferred_groups; }
  static std::size_t workspace(const matrix_view<const In>&) { return 0; }

  static status enqueue(const problem<S, In>& p, const plan&, void*, gpu_stream stream) {
    if constexpr (sizeof(In) != 2) {
      return status::bad_layout;
    } else {
      if (p.groups.count == 0) return status::success;  // G = 0 writes nothing
      auto go = [&](auto padded) -> status {
        constexpr auto kernel = group_row_spans_kernel<spec_c<S>, tuning_c<R>, In, decltype(padded)::value>;
        const int threads = block_threads(p.in.cols, p.dev->wave_size);
        const int smem = static_cast<int>(shared_bytes(p, threads));
        // One wave of persistent blocks: as many as the registers and the shared memory let a
        // multiprocessor hold.
        int per_mp = 0;
        if (const status st = backend::resident_blocks<kernel>(*p.dev, threads, &per_mp); st != status::success)
          return st;
        const int by_shared = backend::max_dynamic_shared(*p.dev) / (smem + 1024);
        per_mp = per_mp < by_shared ? per_mp : by_shared;
        const std::int64_t resident = static_cast<std::int64_t>(per_mp > 0 ? per_mp : 1) * p.dev->multiprocessors;
        const std::int64_t rows = p.in.rows * p.in.batch;
        const unsigned grid = static_cast<unsigned>(rows < resident ? rows : resident);
        return backend::launch_shared<kernel>(*p.dev, dim3(grid), threads, smem, stream, p.in, p.out, p.groups,
                                              p.error_word, p.seed);
      };
      return p.groups.align > 1 ? go(std::true_type{}) : go(std::false_type{});
    }
  }
};

}  // namespace fp8q::detail::gpu
