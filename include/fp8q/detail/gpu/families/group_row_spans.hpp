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
// Padded outputs (group_offsets::align), two placements (span_place):
//   - copy_out, where align is a multiple of 16: every 16-byte piece of the padded row lies in
//     one group's padded columns, so the cast is the unpadded one and the copy-out places the
//     row: each piece reads its 16 bytes from the unpadded staging row at its group's shift (a
//     table made once per block holds each piece's source and how many of its bytes are data;
//     the rest are zero);
//   - cast, for any other align: the staging row is the padded row, and each thread writes its
//     span's bytes where the padded row wants them: one run of output bytes (two where it holds a
//     boundary), placed by funnel shifts in whole 32-bit words but for the two words at each end
//     of a run, which are OR-ed in by shared atomics. The staging row's padding is zeroed once and
//     never written; the copy-out zeroes the words it has copied, so the OR-ed words start from
//     zero every row.
// Served: 16-bit inputs, row-major in and out, N a multiple of the unit, up to
// group_row_spans_max_groups groups, rows whose slots, split units and staging row (and table)
// fit shared memory.
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

/// Where a padded row's bytes are put in place (the file's head comment).
enum class span_place { unpadded, copy_out, cast };

constexpr span_place span_place_of(std::int64_t align) {
  return align <= 1 ? span_place::unpadded : align % 16 == 0 ? span_place::copy_out : span_place::cast;
}

/// Bytes of the unpadded staging row, 8 per unit, and 32 past it: the copy-out's reads of a piece
/// reach 19 bytes past its first data byte.
constexpr std::int64_t group_row_spans_plain_stage_bytes(int threads) {
  return threads * group_row_spans_items * std::int64_t{8} + 32;
}

/// Bytes of the staging row: the unpadded one, with (copy_out) the table of 4 bytes per 16 of the
/// padded row's largest extent after it; or (cast) the padded row's largest extent and 96 past it
/// (a thread's words reach up to 92 bytes past where its span's output begins; the ones past the
/// row's last byte are zeros).
constexpr std::int64_t group_row_spans_stage_bytes(int threads, std::int64_t cols, std::int64_t groups, std::int64_t align) {
  const std::int64_t padded_extent = (cols + groups * (align - 1) + 15) / 16 * 16;
  switch (span_place_of(align)) {
    case span_place::unpadded: return threads * group_row_spans_items * std::int64_t{8};
    case span_place::copy_out: return group_row_spans_plain_stage_bytes(threads) + (padded_extent / 16 * 4 + 15) / 16 * 16;
    default: return padded_extent + 96;
  }
}

/// Dynamic shared memory of a block of `threads` threads: the groups, two slots of the row
/// (bf16/f16 units), each thread's split unit and the staging row of encoded bytes.
constexpr std::int64_t group_row_spans_shared_bytes(int threads, std::int64_t cols, std::int64_t groups,
                                                    std::int64_t align) {
  return static_cast<std::int64_t>(sizeof(group_spans_shared)) + threads * group_row_spans_items * std::int64_t{32} +
         threads * std::int64_t{16} + group_row_spans_stage_bytes(threads, cols, groups, align);
}

/// The 4 bytes that start r bytes before `hi`'s first byte, where `lo` precedes `hi`: a word of
/// a byte run placed r bytes past a 32-bit boundary (r in [0, 3]; r = 0 gives hi).
__device__ inline std::uint32_t funnel_bytes(std::uint32_t lo, std::uint32_t hi, int r) {
  return static_cast<std::uint32_t>(((std::uint64_t{hi} << 32) | lo) >> (32 - 8 * r));
}

/// OR of a byte into the staging row (the element path of a padded row: its neighbours' end words
/// are OR-ed into the same 32-bit words). row: [bytes] in shared memory, 4-byte aligned.
__device__ inline void or_byte(std::uint8_t* row, int x, std::uint8_t v) {
  backend::shared_or(reinterpret_cast<std::uint32_t*>(row) + (x >> 2), std::uint32_t{v} << (8 * (x & 3)));
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
/// left alone; placed by the cast, each byte OR-ed in at its group's shift). src: [cols] In;
/// stage: [cols or padded cols] FP8 bytes of the row.
template <spec S, class In, bool Shifted>
[[gnu::noinline]] __device__ void cast_span_elements(const group_spans_shared& s, int G, const In* src, int c0,
                                                     int c1, std::uint8_t* stage, std::uint64_t seed,
                                                     std::uint64_t row_index) {
  int h = 0;
  for (int c = c0; c < c1; ++c) {
    while (h < G && s.end[h] <= c) ++h;
    if (h >= G) break;
    const std::uint8_t v =
        encode_scaled<S>(load_one(src + c) * s.cast[h].scale, seed, row_index + static_cast<std::uint64_t>(c));
    if constexpr (Shifted) or_byte(stage, c + s.cast[h].shift, v);
    else stage[c] = v;
  }
}

// in:       [batch, rows, cols] bf16/f16, row-major, 16-byte aligned lines, cols % 8 == 0
// out.data: [batch, rows, cols'] FP8, row-major, 8-byte aligned lines (cols' >= cols + G * (align - 1)
//           when padded)
// scales:   [batch, G, rows] f32
// gs.ends:  [G] int32, device; G <= group_row_spans_max_groups
// Place: span_place_of(gs.align) (a kernel each: the copy-out, the setup and the cast differ).
template <class SC, class TC, class In, span_place Place>
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
  // [cols, or placed by the cast: the padded row's extent] FP8, the encoded row (placed by the
  // cast: zero but for data)
  auto* stage_row = reinterpret_cast<std::uint8_t*>(split_units + threads);
  // copy_out: [padded extent / 16] each 16-byte piece of the padded row: its first byte's source
  // in the staging row (bits 0-25) and how many of its bytes are data (bits 26-30)
  auto* piece = reinterpret_cast<std::uint32_t*>(stage_row + group_row_spans_plain_stage_bytes(static_cast<int>(blockDim.x)));

  const int tid = static_cast<int>(threadIdx.x);
  const int wave = backend::wave_size();
  const int lane = tid % wave;
  const std::int64_t M = in.rows;
  const int N = static_cast<int>(in.cols);
  const int G = static_cast<int>(gs.count);
  const int units = N / U;
  constexpr bool padded = Place != span_place::unpadded;
  constexpr bool shifted = Place == span_place::cast;  // the cast places the padded row
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
  // prefix sum of the rounded sizes) and (copy_out) the piece table; block 0 does the
  // bookkeeping (error word, padded ends).
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
    const int padded_end = b0 + shift + rounded(g);
    // copy_out: the padded ends, for the piece table below (the scans are done with s.scratch)
    if constexpr (Place == span_place::copy_out) s.scratch[g] = padded_end;
    if (blockIdx.x == 0) group_bookkeeping(gs, error_word, g, N, device_group{b0, s.end[g], b0 + shift, padded_end});
  }
  backend::block_sync();
  if constexpr (shifted) {  // the padding stays zero; the data's words are zeroed by each copy-out
    const int stage_bytes = static_cast<int>(group_row_spans_stage_bytes(threads, N, G, align));
    for (int j = tid; j < stage_bytes / 16; j += threads) reinterpret_cast<u32x4*>(stage_row)[j] = u32x4{0, 0, 0, 0};
  }
  if constexpr (Place == span_place::copy_out) {
    // out_end and every group's padded columns are multiples of 16: piece j lies in the first
    // group whose padded end (s.scratch) passes 16 j (empty groups have none)
    for (int j = tid; j < out_end / 16; j += threads) {
      const int x0 = j * 16;
      const int g = group_of_column(s.scratch, G, x0);  // < G: x0 < out_end
      const int src = x0 - s.cast[g].shift;  // >= begin_of(g): a group's data precede its padding
      const int data = s.end[g] - src;
      piece[j] = data <= 0 ? 0u : static_cast<std::uint32_t>(src) | static_cast<std::uint32_t>(data < 16 ? data : 16) << 26;
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
    if constexpr (Place == span_place::copy_out) {
      const auto* words = reinterpret_cast<const std::uint32_t*>(stage_row);
#pragma unroll 1
      for (int j = tid; j < out_end / 16; j += threads) {
        const std::uint32_t e = piece[j];
        const int src = static_cast<int>(e & ((1u << 26) - 1u));
        const int data = static_cast<int>(e >> 26);
        const std::uint32_t* w = words + (src >> 2);
        // bytes r .. r + 3 of {hi, lo} (a funnel shift; a byte permute with a run-time selector
        // goes through scratch memory on gfx942)
        const int r8 = 8 * (src & 3);
        auto join = [r8](std::uint32_t lo, std::uint32_t hi) {
          return static_cast<std::uint32_t>(((std::uint64_t{hi} << 32) | lo) >> r8);
        };
        const std::uint32_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4];
        std::uint32_t v[4] = {join(w0, w1), join(w1, w2), join(w2, w3), join(w3, w4)};
        if (data < 16) {  // a group's last piece (its padding zero), or padding alone
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            const int d = data - 4 * k;
            v[k] = d <= 0 ? 0u : d >= 4 ? v[k] : v[k] & ((1u << (8 * d)) - 1u);
          }
        }
        if (wide) {
          *reinterpret_cast<u32x4*>(prev + j * 16) = u32x4{v[0], v[1], v[2], v[3]};
        } else {
          *reinterpret_cast<uint2*>(prev + j * 16) = uint2{v[0], v[1]};
          *reinterpret_cast<uint2*>(prev + j * 16 + 8) = uint2{v[2], v[3]};
        }
      }
    } else if (wide) {
      // (not unrolled: keep[] is live here, and unrolled copies made ptxas spill.) Placed by the
      // cast, each word copied is zeroed for the next row's OR-ed end words.
      auto* o = reinterpret_cast<u32x4*>(stage_row);
#pragma unroll 1
      for (int j = tid; j < out_end / 16; j += threads) {
        *reinterpret_cast<u32x4*>(prev + j * 16) = o[j];
        if constexpr (shifted) o[j] = u32x4{0, 0, 0, 0};
      }
      for (int c = out_end / 16 * 16 + tid; c < out_end; c += threads) {
        prev[c] = stage_row[c];
        if constexpr (shifted) stage_row[c] = 0;
      }
    } else {
      auto* o = reinterpret_cast<uint2*>(stage_row);
#pragma unroll 1
      for (int j = tid; j < out_end / 8; j += threads) {
        *reinterpret_cast<uint2*>(prev + j * 8) = o[j];
        if constexpr (shifted) o[j] = uint2{0, 0};
      }
      for (int c = out_end / 8 * 8 + tid; c < out_end; c += threads) {
        prev[c] = stage_row[c];
        if constexpr (shifted) stage_row[c] = 0;
      }
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
    // Padded: a run of encoded bytes (word k of `word`, k < Words; zeros outside the run) placed
    // from byte `base` of the staging row: its words 1 .. Words - 1 lie in this thread's output
    // and padding (stored, or OR-ed where a second run shares them), its first and last words
    // are shared with the neighbours' (OR-ed into the zeroed row).
    auto place_run = [&](auto words, auto word, int base, auto or_all) {
      constexpr int n = decltype(words)::value;
      const int r = base & 3;
      auto* row = reinterpret_cast<std::uint32_t*>(stage_row + (base - r));  // word k: run bytes [4k - r, 4k - r + 4)
      backend::shared_or(row, funnel_bytes(0u, word(0), r));
#pragma unroll
      for (int k = 1; k < n; ++k) {
        const std::uint32_t v = funnel_bytes(word(k - 1), word(k), r);
        if constexpr (decltype(or_all)::value) backend::shared_or(row + k, v);
        else row[k] = v;
      }
      backend::shared_or(row + n, funnel_bytes(word(n - 1), 0u, r));
    };
    using span_words = std::integral_constant<int, 2 * Items>;  // a span's run
    using unit_words = std::integral_constant<int, 2>;          // one unit's
    // Unpadded, the kernel sits at 128 registers with no room: the converter-joined word made
    // ptxas spill there (8 bytes, CUDA 13), the permute does not; placed by the cast it fits
    // either way and runs faster joined (docs/design.md, "Holding tiles on chip"); placed by the
    // copy-out it fits either way (107 registers, 118 joined) and ran alike.
    constexpr hw_join join = shifted ? hw_join::converter : hw_join::permute;
    auto cast_span = [&] {
      const group_cast ch = s.cast[g0];
      const group_cast ct = split ? s.cast[gl] : ch;
      std::uint32_t enc[2 * Items];  // placed by the cast: the span's encoded units, placed below
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        const bool head = i < q || !split;
        const float sc = head ? ch.scale : ct.scale;
        float y[U];
        widen_unit<In, U>(keep[i], y);
#pragma unroll
        for (int e = 0; e < U; ++e) y[e] *= sc;
        std::uint32_t w[W];
        encode_scaled_unit<S, T, In, U, join>(keep[i], y, (head ? ch.in_range : ct.in_range) != 0, w, seed,
                                        row_index + static_cast<std::uint64_t>(c0 + i * U));
        if constexpr (shifted) {
          enc[2 * i] = w[0];
          enc[2 * i + 1] = w[1];
        } else if (i < own && !(split && i == q)) {
          *reinterpret_cast<uint2*>(stage_row + c0 + i * U) = uint2{w[0], w[1]};
        }
      }
      if constexpr (shifted) {  // the head group's units (all of an unsplit span's) at its shift
        const int head_units = split ? q : own;
        place_run(span_words{}, [&](int k) { return k / 2 < head_units ? enc[k] : 0u; }, c0 + ch.shift,
                  std::false_type{});
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
        encode_scaled_unit<S, T, In, U, join>(rq, y, ch.in_range != 0 && ct.in_range != 0, w, seed,
                                        row_index + static_cast<std::uint64_t>(c0 + q * U));
        if constexpr (shifted) {
          // the tail group's units at its shift, then the split unit's head bytes (below `at`) at
          // the head's shift and its tail bytes at the tail's, each as a run of one unit
          place_run(span_words{}, [&](int k) { return k / 2 > q ? enc[k] : 0u; }, c0 + ct.shift,
                    std::true_type{});
          const std::uint32_t h0 = at >= 4 ? w[0] : w[0] & ((1u << (8 * at)) - 1u);
          const std::uint32_t h1 = at >= 4 ? w[1] & ((std::uint32_t{1} << (8 * (at - 4))) - 1u) : 0u;
          place_run(unit_words{}, [&](int k) { return k == 0 ? h0 : h1; }, c0 + q * U + ch.shift,
                    std::true_type{});
          place_run(unit_words{}, [&](int k) { return k == 0 ? w[0] & ~h0 : w[1] & ~h1; },
                    c0 + q * U + ct.shift, std::true_type{});
        } else {
          *reinterpret_cast<uint2*>(stage_row + c0 + q * U) = uint2{w[0], w[1]};
        }
      }
    };
    if (many) cast_span_elements<S, In, shifted>(s, G, src, c0, c1, stage_row, seed, row_index);
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
      auto go = [&](auto place) -> status {
        constexpr auto kernel = group_row_spans_kernel<spec_c<S>, tuning_c<R>, In, decltype(place)::value>;
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
      using place = span_place;
      switch (span_place_of(p.groups.align)) {
        case place::unpadded: return go(std::integral_constant<place, place::unpadded>{});
        case place::copy_out: return go(std::integral_constant<place, place::copy_out>{});
        default: return go(std::integral_constant<place, place::cast>{});
      }
    }
  }
};

}  // namespace fp8q::detail::gpu
