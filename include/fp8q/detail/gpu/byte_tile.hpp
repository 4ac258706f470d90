// fp8q — byte tiles: FP8 results in shared memory in the OUTPUT's order, leaving in whole
// 16-byte pieces of output lines; and the colwise tile cast over them (the streaming and relay
// colwise families share it; the cluster family shares the quad encoder and the store).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

// Byte tiles: FP8 results laid out in shared memory in the OUTPUT's order before they leave in
// whole 16-byte pieces of output lines. Column-major output: [cols][col_pitch] (lines of rows);
// row-major output: [rows][row_pitch] (lines of columns). Pitches are multiples of 4 plus 4, so
// the word stores of put_quad fall in distinct banks.
struct byte_tile {
  std::uint8_t* bytes;  // 4-byte aligned
  int row_pitch;        // row-major lines: tile columns + 4
  int col_pitch;        // column-major lines: tile rows + 4
  bool row_major;       // the output's order
};

// Quad tiles: 128 input bytes (8 units) of each of a tile's rows in shared memory, read back
// transposed in quads of 4 rows x 1 unit (per-group colwise, rowwise into column-major output).
/// Units per quad-tile row: 128 input bytes, also the period of the swizzle (eight 16-byte slots
/// span the 32 banks once).
inline constexpr int quad_tile_units = 8;
/// Slot of unit u of tile row r (a tile's first row on a multiple of 32): rows of one quad share a
/// rotation, consecutive quads differ, so 8 lanes reading one unit column of 8 consecutive quads
/// (or 8 units of one row) hit 8 distinct 4-bank groups. Quad q's rows hold unit u in slot u ^ (q % 8).
__device__ inline int quad_tile_slot(int r, int u) { return u ^ ((r >> 2) & 7); }

// Scale and encode 4 consecutive rows x U columns (one unit column of a row quad) to
// q[row][word]: each row's U bytes as U / 4 little-endian words.
// first_index: the logical index of the quad's first element; N: the matrix width.
template <spec S, tuning T, class In, int U>
__device__ inline void encode_quad(const unit_raw<In, U> (&v)[4], const float (&sc)[U],
                                   std::uint64_t seed, std::uint64_t first_index, std::int64_t N,
                                   std::uint32_t (&q)[4][U / 4]) {
  static_assert(U % 4 == 0, "whole words per row");
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const std::uint64_t row_index = first_index + static_cast<std::uint64_t>(j * N);
    encode_unit_words<S, T, In, U>(v[j], sc, q[j], seed, [&](int k) { return row_index + k; });
  }
}

// Word c of the column-major view of a quad: byte r of column 4 w + c for rows r = 0..3, from
// the quad's row words (a 4 x 4 byte transpose, 8 byte permutes for 4 words).
__device__ inline void transpose_quad(std::uint32_t r0, std::uint32_t r1, std::uint32_t r2,
                                      std::uint32_t r3, std::uint32_t (&c)[4]) {
  const std::uint32_t t0 = backend::byte_perm(r0, r1, 0x5140);  // r0.b0 r1.b0 r0.b1 r1.b1
  const std::uint32_t t1 = backend::byte_perm(r0, r1, 0x7362);  // r0.b2 r1.b2 r0.b3 r1.b3
  const std::uint32_t t2 = backend::byte_perm(r2, r3, 0x5140);
  const std::uint32_t t3 = backend::byte_perm(r2, r3, 0x7362);
  c[0] = backend::byte_perm(t0, t2, 0x5410);
  c[1] = backend::byte_perm(t0, t2, 0x7632);
  c[2] = backend::byte_perm(t1, t3, 0x5410);
  c[3] = backend::byte_perm(t1, t3, 0x7632);
}

// Column k's word of a quad (byte j: row 4 q + j) stored where k < cols; dst: [U][col_stride]
// FP8, the quad's bytes of its first column (4-byte aligned, as col_stride is).
__device__ inline void store_column_word(std::uint8_t* dst, std::int64_t col_stride, int k, int cols,
                                         std::uint32_t word) {
  if (k < cols) *reinterpret_cast<std::uint32_t*>(dst + k * col_stride) = word;
}

// A quad's first `cols` columns (q[row][word]: 4 rows, 4-aligned in the output) stored as one
// 4-byte word per column of a column-major output (store_column_word's dst).
template <int U>
__device__ inline void store_quad_columns(const std::uint32_t (&q)[4][U / 4], std::uint8_t* dst,
                                          std::int64_t col_stride, int cols) {
#pragma unroll
  for (int w = 0; w < U / 4; ++w) {
    std::uint32_t c[4];
    transpose_quad(q[0][w], q[1][w], q[2][w], q[3][w], c);
#pragma unroll
    for (int k = 0; k < 4; ++k) store_column_word(dst, col_stride, 4 * w + k, cols, c[k]);
  }
}

// encode_quad for a tile whose every column passed in_range_group (scales sc >= +0).
template <spec S, tuning T, class In, int U>
__device__ inline void encode_quad_in_range(const unit_raw<In, U> (&v)[4], const float (&sc)[U],
                                            std::uint32_t (&q)[4][U / 4]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) encode_unit_words_in_range<S, T, In, U>(v[j], sc, q[j]);
}

// Put a quad's bytes (rows 4 rq .. 4 rq + 3, columns U uc .. U uc + U - 1 of the tile) in t:
// 4 bytes of each of U column lines, or U bytes of each of 4 row lines, as 32-bit words.
template <int U>
__device__ inline void put_quad(const byte_tile& t, int rq, int uc, const std::uint32_t (&q)[4][U / 4]) {
  if (t.row_major) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int w = 0; w < U / 4; ++w)
        *reinterpret_cast<std::uint32_t*>(t.bytes + (rq * 4 + j) * t.row_pitch + uc * U + 4 * w) = q[j][w];
    }
  } else {
#pragma unroll
    for (int w = 0; w < U / 4; ++w) {
      std::uint32_t c[4];
      transpose_quad(q[0][w], q[1][w], q[2][w], q[3][w], c);
#pragma unroll
      for (int k = 0; k < 4; ++k)
        *reinterpret_cast<std::uint32_t*>(t.bytes + (uc * U + 4 * w + k) * t.col_pitch + rq * 4) = c[k];
    }
  }
}

// Store the tile's rows_here x cols_here bytes to out at (b, r0, c0): whole 16-byte pieces of
// output lines (16-byte aligned when the output's lines are), bytes for a line's tail.
template <spec S>
__device__ inline void store_byte_tile(const byte_tile& t, const quantized<S>& out, std::int64_t b,
                                       std::int64_t r0, std::int64_t c0, int rows_here,
                                       int cols_here, int tid, int threads) {
  // [lines][ld] FP8: the tile's first byte; lines are output rows (row-major) or columns
  std::uint8_t* base = reinterpret_cast<std::uint8_t*>(out.data.data) + out.data.offset(b, r0, c0);
  const std::int64_t ld = out.data.ld;
  const int lines = t.row_major ? rows_here : cols_here;
  const int line_len = t.row_major ? cols_here : rows_here;
  const int pitch = t.row_major ? t.row_pitch : t.col_pitch;
  const int per_line = (line_len + 15) / 16;
  for (int i = tid; i < lines * per_line; i += threads) {
    const int line = i / per_line;
    const int f = (i % per_line) * 16;
    std::uint8_t* dst = base + line * ld + f;
    const std::uint8_t* src = t.bytes + line * pitch + f;
    if (f + 16 <= line_len) {
      const auto* w = reinterpret_cast<const std::uint32_t*>(src);
      *reinterpret_cast<u32x4*>(dst) = u32x4{w[0], w[1], w[2], w[3]};
    } else {
      for (int k = 0; k < line_len - f; ++k) dst[k] = src[k];
    }
  }
}

// Zero `lines` lines of `len` bytes each, line i at first + i * stride, with the block's threads.
// Short lines (a few padding rows of a column-major output) one byte per thread, so a warp's
// byte stores cover whole runs of each line; longer ones one 16-byte window per thread (a
// 16-byte store where the window lies inside the line, its bytes one by one at the line's two
// ends). Padding of aligned groups: one byte and two 64-bit divisions per byte cost G = 64,
// align 128 a fifth of its time (docs/design.md, "Per-group colwise").
__device__ inline void zero_lines(std::uint8_t* first, std::int64_t stride, std::int64_t lines, std::int64_t len,
                                  int tid, int threads) {
  if (lines <= 0 || len <= 0) return;
  if (len < 32) {
    for (std::int64_t it = tid; it < lines * len; it += threads) {
      const std::int64_t line = it / len;
      first[line * stride + (it - line * len)] = 0;
    }
    return;
  }
  const std::int64_t windows = len / 16 + 2;  // 16-byte windows a line touches at most
  for (std::int64_t it = tid; it < lines * windows; it += threads) {
    const std::int64_t line = it / windows;
    std::uint8_t* s = first + line * stride;  // [len] FP8: the line
    std::uint8_t* e = s + len;
    // pointer arithmetic from s, not an integer round trip, so HIP keeps the global address space
    std::uint8_t* w = s - static_cast<int>(reinterpret_cast<std::uintptr_t>(s) % 16) + 16 * (it - line * windows);
    if (w >= e) continue;
    if (w >= s && w + 16 <= e) {
      *reinterpret_cast<u32x4*>(w) = u32x4{0u, 0u, 0u, 0u};
    } else {
      for (int k = 0; k < 16; ++k)
        if (w + k >= s && w + k < e) w[k] = 0;
    }
  }
}

// Whether cast_col_tile may lay its byte tile over the held tile (Alias): a tile of tile_rows
// rows and `units` unit columns gives every one of `threads` threads the same number of quads.
constexpr bool col_tile_aliasable(int tile_rows, int units, int threads) {
  return (tile_rows / 4) * units % threads == 0;
}

// A quad's encoded words: 4 rows of U bytes.
template <int U>
struct quad_words {
  std::uint32_t w[4][U / 4];
};

// Cast the tile of rows_here x cols_here at (b, r0, c0) of a row-major input (T.tile_rows x
// T.tile_cols at most) with its column scales (scales: [T.tile_cols] f32 in shared memory, written
// and synchronized by the caller) and store it; in_range: every column passed in_range_group
// (tile_column_scales' answer), so the in-range encoder applies. Each thread loads one unit column of 4
// consecutive rows (all loads in flight), so it holds 4 bytes of U column lines (column-major
// output) or U bytes of 4 row lines (row-major output). Staged: those go to `tile`, a byte tile
// in the output's order, then whole 16-byte pieces of output lines to device memory; direct:
// each thread stores them itself (4-byte or U-byte stores; from a held tile to a row-major
// output, one unit row at a time).
// held(r, uc): the tile's row r, unit column uc, where the caller holds the tile on chip
// (rows_here x whole units); without it the units are loaded from `in`. Alias (staged, held):
// `tile` lies over the held tile, so every thread encodes all its quads before a barrier and
// only then writes them to `tile`.
template <spec S, tuning T, class In, bool Staged, bool Alias = false, class Held = std::nullptr_t>
__device__ inline void cast_col_tile(const matrix_view<const In>& in, const quantized<S>& out,
                                     const byte_tile& tile, const float* scales, std::int64_t b,
                                     std::int64_t r0, std::int64_t c0, int rows_here, int cols_here,
                                     std::uint64_t seed, bool in_range, Held held = nullptr) {
  constexpr int threads = T.threads;
  constexpr int TR = T.tile_rows;
  constexpr int U = unit_elems<In>;
  constexpr int upr = T.tile_cols / U;  // units per tile row
  static_assert(T.tile_cols % U == 0 && TR % 4 == 0, "whole units, whole row quads");
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const int tid = static_cast<int>(threadIdx.x);
  const In* src = in.data + in.offset(b, r0, c0);  // [rows_here, ld] In: the tile's first element
  const std::int64_t ld = in.ld;
  auto* out_bytes = reinterpret_cast<std::uint8_t*>(out.data.data);
  constexpr int items = (TR / 4) * upr;
  // Item i's quad: rows 4 rq .. 4 rq + 3 of unit column uc, held or loaded, encoded with the
  // columns' scales.
  auto encode_item = [&](auto fast, int i) {
    const int uc = i % upr;
    const int rq = i / upr;
    const bool col_ok = uc * U < cols_here;
    unit_raw<In, U> v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      v[j] = unit_raw<In, U>{};
      if constexpr (std::is_same_v<Held, std::nullptr_t>) {
        const In* p = src + (rq * 4) * ld + uc * U;  // this thread's unit column, row rq * 4
        if (col_ok && rq * 4 + j < rows_here) v[j] = load_unit<In, U>(p + j * ld);
      } else {
        if (col_ok && rq * 4 + j < rows_here) v[j] = held(rq * 4 + j, uc);
      }
    }
    float sc[U];
#pragma unroll
    for (int k = 0; k < U; ++k) sc[k] = scales[uc * U + k];
    quad_words<U> q;
    const std::int64_t c = c0 + uc * U;
    if constexpr (decltype(fast)::value) encode_quad_in_range<S, T, In, U>(v, sc, q.w);
    else encode_quad<S, T, In, U>(v, sc, seed, logical_index(b, r0 + rq * 4, c, M, N), N, q.w);
    return q;
  };
  static_assert(!Alias || (Staged && col_tile_aliasable(TR, upr, threads)), "aliasing needs the staged tile and whole turns");
  auto body_alias = [&](auto fast) {
    constexpr int per = Alias ? items / threads : 1;
    quad_words<U> qa[per];
#pragma unroll
    for (int p = 0; p < per; ++p) qa[p] = encode_item(fast, tid + p * threads);
    backend::block_sync();
#pragma unroll
    for (int p = 0; p < per; ++p) put_quad<U>(tile, (tid + p * threads) / upr, (tid + p * threads) % upr, qa[p].w);
  };
  auto body = [&](auto fast) {
  for (int i = tid; i < items; i += threads) {
    const int uc = i % upr;
    const int rq = i / upr;
    const quad_words<U> qw = encode_item(fast, i);
    const auto& q = qw.w;
    if constexpr (Staged) {
      put_quad<U>(tile, rq, uc, q);
    } else {
      if (uc * U >= cols_here) continue;
      const std::int64_t c = c0 + uc * U;
      if (tile.row_major) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (rq * 4 + j >= rows_here) continue;
          store_words<U / 4>(out_bytes + out.data.offset(b, r0 + rq * 4 + j, c), q[j]);
        }
      } else if (rq * 4 + 4 <= rows_here) {
#pragma unroll
        for (int w = 0; w < U / 4; ++w) {
          std::uint32_t cw[4];
          transpose_quad(q[0][w], q[1][w], q[2][w], q[3][w], cw);
#pragma unroll
          for (int k = 0; k < 4; ++k)
            *reinterpret_cast<std::uint32_t*>(out_bytes + out.data.offset(b, r0 + rq * 4, c + 4 * w + k)) = cw[k];
        }
      } else {
        for (int j = 0; j < 4 && rq * 4 + j < rows_here; ++j) {
#pragma unroll
          for (int k = 0; k < U; ++k)
            out_bytes[out.data.offset(b, r0 + rq * 4 + j, c + k)] = static_cast<std::uint8_t>(q[j][k / 4] >> (8 * (k % 4)));
        }
      }
    }
  }
  };
  // A held tile cast to a row-major output by the threads themselves: items are unit rows, not
  // quads, so every thread casts the same rows where the quads do not divide over the threads
  // (160 rows: 320 quads for 128 threads, of which half the threads cast 3 and the block waits
  // for them) and loads its column scales once, its unit column being the same in every item.
  constexpr bool held_rows = !Staged && !std::is_same_v<Held, std::nullptr_t> && threads % upr == 0;
  if constexpr (held_rows) {
    auto body_rows = [&](auto fast) {
      constexpr int step = threads / upr;  // tile rows one pass of the block covers
      const int uc = tid % upr;
      if (uc * U >= cols_here) return;
      float sc[U];
#pragma unroll
      for (int k = 0; k < U; ++k) sc[k] = scales[uc * U + k];
      const std::int64_t c = c0 + uc * U;
      // five rows' loads in flight: unrolled whole, the software encoder's kernel takes more
      // registers than four blocks per multiprocessor leave it (docs/design.md, "Every thread
      // casts as many rows")
#pragma unroll 5
      for (int i = 0; i < (TR + step - 1) / step; ++i) {
        const int r = tid / upr + i * step;
        if (r >= rows_here) break;
        const unit_raw<In, U> v = held(r, uc);
        std::uint32_t w[U / 4];
        if constexpr (decltype(fast)::value) {
          encode_unit_words_in_range<S, T, In, U>(v, sc, w);
        } else {
          const std::uint64_t row_index = logical_index(b, r0 + r, c, M, N);
          encode_unit_words<S, T, In, U>(v, sc, w, seed, [&](int k) { return row_index + k; });
        }
        store_words<U / 4>(out_bytes + out.data.offset(b, r0 + r, c), w);
      }
    };
    if (tile.row_major) {
      with_in_range<S, In, U>([&] { return in_range; }, body_rows);
      return;
    }
  }
  if constexpr (Alias) with_in_range<S, In, U>([&] { return in_range; }, body_alias);
  else with_in_range<S, In, U>([&] { return in_range; }, body);
  if constexpr (Staged) {
    backend::block_sync();
    store_byte_tile<S>(tile, out, b, r0, c0, rows_here, cols_here, tid, threads);
  }
}

// Scales of the tile's columns into scales[] (shared memory; the stored scales of group g too
// where `store`), then a block barrier. amax(i): column c0 + i's amax bits. Returns, the same in every
// thread, whether every column passed in_range_group (columns past cols_here hold zeros, scale 0).
template <spec S, int TCOL, class AmaxFn>
__device__ inline bool tile_column_scales(const quantized<S>& out, float* scales, std::int64_t b,
                                          std::int64_t g, std::int64_t c0, int cols_here, bool store,
                                          AmaxFn amax) {
  bool in_range = true;
  for (int i = static_cast<int>(threadIdx.x); i < TCOL; i += static_cast<int>(blockDim.x)) {
    float sc = 0.0f;
    if (i < cols_here) {
      const std::uint32_t a = amax(i);
      sc = group_scale<S>(a);
      if constexpr (in_range_capable<S>()) in_range = in_range && in_range_group<S>(a, sc);
    }
    scales[i] = sc;
    if (i < cols_here && store) write_scales<S>(out, b, g, c0 + i, sc);
  }
  if constexpr (in_range_capable<S>()) return backend::block_all(in_range);
  backend::block_sync();
  return false;
}

// Shared memory of cast_col_tile's byte tile for tuning T (either output order; 4 bytes when
// the stores are direct).
template <tuning T, bool Staged>
inline constexpr int col_tile_bytes = !Staged ? 4
    : (T.tile_cols * (T.tile_rows + 4) > T.tile_rows * (T.tile_cols + 4) ? T.tile_cols * (T.tile_rows + 4)
                                                                           : T.tile_rows * (T.tile_cols + 4));

// Pass 2: cast a tile of tile_rows x tile_cols with the columns' scales (cast_col_tile). Tiles
}  // namespace fp8q::detail::gpu
