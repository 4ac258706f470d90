// fp8q — the GPU kernels, toolchain-neutral: every one is the same skeleton
//   load (16-byte vectors, coalesced) -> amax (block reduction, relaxed atomics across blocks)
//   -> scale (scale.hpp) -> cast (tile.hpp encoders) -> store (direct or staged through shared
//   memory so transposed outputs leave in whole lines)
// specialised by an index map from element to scaling group (tensor, row, col). Only
// backend:: (detail/cuda/adapter.hpp or detail/hip/adapter.hpp) names the toolchain.
#pragma once

#include <cstdint>
#include <type_traits>

#include "fp8q/detail/gpu/tile.hpp"
#include "fp8q/views.hpp"

namespace fp8q::detail::gpu {

/// Which axis a scaling group spans (the index map of the tiled kernels).
enum class group_axis : std::uint8_t {
  tensor,  ///< group = batch item
  row,     ///< group = (batch, row): reduce along columns
  col,     ///< group = (batch, col): reduce along rows
};

template <spec S>
__device__ inline void write_scales(const quantized<S>& out, std::int64_t b, std::int64_t r,
                                    std::int64_t c, float s) {
  if constexpr (stores_multiplier(S)) out.scale(b, r, c) = s;
  if constexpr (stores_inverse(S)) out.inverse(b, r, c) = inverse_scale(s);
}

// ------------------------------------------------------------------------------------------
// Rowwise, fused: one block per row; the row stays in registers between the amax and the cast
// (Items vectors of 16 per thread), so it is read from device memory once. Rows longer than
// Items * threads * 16 re-read the remainder (from L2: one row is at most a few hundred KB).
// in:       [batch, rows, cols] In, row-major, ld any (16-byte aligned rows when Vec)
// out.data: [batch, rows, cols] FP8, row-major
template <class SC, class TC, class In, int Items, bool Vec>
__global__ void __launch_bounds__(TC::value.threads)
    row_fused_kernel(matrix_view<const In> in, quantized<SC::value> out, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr int threads = TC::value.threads;
  constexpr int V = Vec ? vec_elems : 1;
  using reducer = backend::block_max<threads>;
  __shared__ typename reducer::storage red;
  __shared__ float s_shared;

  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const std::int64_t nvec = N / V;
  const int tid = static_cast<int>(threadIdx.x);
  for (std::int64_t row = blockIdx.x; row < in.batch * M; row += gridDim.x) {
    const std::int64_t b = row / M;
    const std::int64_t r = row % M;
    const In* src = in.data + in.offset(b, r, 0);                              // [cols] In
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data + out.data.offset(b, r, 0));  // [cols]
    const std::uint64_t row_index = static_cast<std::uint64_t>(b * M + r) * N;

    // The row's first Items * threads vectors stay in registers, raw (bf16/f16 take half the
    // registers of f32), between the amax pass and the cast pass.
    using keep_t = std::conditional_t<Vec, raw16<In>, float>;
    keep_t keep[Items];
    std::uint32_t amax = 0;
    auto widen = [&](const keep_t& k, float (&x)[V]) {
      if constexpr (Vec) widen16(k, x); else x[0] = k;
    };
    auto load = [&](std::int64_t v, keep_t& k) {
      if constexpr (Vec) load_raw16(src + v * V, k); else k = load_one(src + v);
    };
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const std::int64_t v = tid + static_cast<std::int64_t>(i) * threads;
      if (v < nvec) {
        load(v, keep[i]);
        float x[V];
        widen(keep[i], x);
#pragma unroll
        for (int k = 0; k < V; ++k) amax = amax > abs_bits(x[k]) ? amax : abs_bits(x[k]);
      }
    }
    for (std::int64_t v = tid + static_cast<std::int64_t>(Items) * threads; v < nvec; v += threads) {
      keep_t raw;
      load(v, raw);
      float x[V];
      widen(raw, x);
#pragma unroll
      for (int k = 0; k < V; ++k) amax = amax > abs_bits(x[k]) ? amax : abs_bits(x[k]);
    }
    for (std::int64_t e = nvec * V + tid; e < N; e += threads) {
      const std::uint32_t a = abs_bits(load_one(src + e));
      amax = amax > a ? amax : a;
    }
    amax = reducer::run(amax, red);
    if (tid == 0) {
      const float s = group_scale<S>(amax);
      s_shared = s;
      write_scales<S>(out, b, r, 0, s);
    }
    backend::block_sync();
    const float s = s_shared;

    auto cast_store = [&](std::int64_t v, const keep_t& k) {
      float x[V];
      widen(k, x);
      if constexpr (Vec) {
        float y[V];
#pragma unroll
        for (int j = 0; j < V; ++j) y[j] = x[j] * s;
        std::uint8_t q[V];
        encode16<S, TC::value>(y, q, seed, row_index + v * V, 1);
        store16(dst + v * V, q);
      } else {
        dst[v] = encode_scaled<S>(x[0] * s, seed, row_index + v);
      }
    };
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const std::int64_t v = tid + static_cast<std::int64_t>(i) * threads;
      if (v < nvec) cast_store(v, keep[i]);
    }
    for (std::int64_t v = tid + static_cast<std::int64_t>(Items) * threads; v < nvec; v += threads) {
      keep_t raw;
      load(v, raw);
      cast_store(v, raw);
    }
    for (std::int64_t e = nvec * V + tid; e < N; e += threads) {
      dst[e] = encode_scaled<S>(load_one(src + e) * s, seed, row_index + e);
    }
    backend::block_sync();  // red and s_shared are reused by the next row
  }
}

// ------------------------------------------------------------------------------------------
// Tensorwise on dense data: the batch item is one flat array in the view's memory order.
// Logical index of flat offset `off` (for stochastic rounding) in a matrix of M x N.
__device__ inline std::uint64_t flat_logical_index(std::int64_t off, std::int64_t M,
                                                   std::int64_t N, bool col_major) {
  if (!col_major) return static_cast<std::uint64_t>(off);
  const std::int64_t c = off / M;
  const std::int64_t r = off % M;
  return static_cast<std::uint64_t>(r * N + c);
}

// in: [count] In per batch item (blockIdx.y), batch_stride apart; amax: [batch] f32 bits
template <class SC, class TC, class In, bool Vec>
__global__ void __launch_bounds__(TC::value.threads)
    flat_amax_kernel(const In* in, std::int64_t count, std::int64_t batch_stride,
                     std::uint32_t* amax_bits) {
  constexpr tuning T = TC::value;
  constexpr int V = Vec ? vec_elems : 1;
  using reducer = backend::block_max<T.threads>;
  __shared__ typename reducer::storage red;
  const In* src = in + static_cast<std::int64_t>(blockIdx.y) * batch_stride;
  const std::int64_t nvec = count / V;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * T.threads;
  std::uint32_t amax = 0;
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(T.threads) + threadIdx.x; v < nvec;
       v += stride) {
    float x[V];
    if constexpr (Vec) load16(src + v * V, x); else x[0] = load_one(src + v);
#pragma unroll
    for (int k = 0; k < V; ++k) amax = amax > abs_bits(x[k]) ? amax : abs_bits(x[k]);
  }
  for (std::int64_t e = nvec * V + blockIdx.x * static_cast<std::int64_t>(T.threads) + threadIdx.x;
       e < count; e += stride) {
    const std::uint32_t a = abs_bits(load_one(src + e));
    amax = amax > a ? amax : a;
  }
  amax = reducer::run(amax, red);
  if (threadIdx.x == 0) backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + blockIdx.y, amax);
}

// Cast with the scale from amax_bits (dynamic) or from given_scale (delayed scaling), optionally
// recording this call's amax into record_bits. Scale outputs: [batch] each.
template <class SC, class TC, class In, bool Vec, bool Record>
__global__ void __launch_bounds__(TC::value.threads)
    flat_cast_kernel(const In* in, std::uint8_t* out, std::int64_t count, std::int64_t in_stride,
                     std::int64_t out_stride, const std::uint32_t* amax_bits,
                     const float* given_scale, std::uint32_t* record_bits, float* scale_out,
                     std::int64_t scale_stride, float* inverse_out, std::int64_t inverse_stride,
                     std::int64_t M, std::int64_t N, bool col_major, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int V = Vec ? vec_elems : 1;
  const std::int64_t b = blockIdx.y;
  const In* src = in + b * in_stride;         // [count] In
  std::uint8_t* dst = out + b * out_stride;   // [count] FP8
  const float s = given_scale != nullptr ? given_scale[b] : group_scale<S>(amax_bits[b]);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    if (scale_out != nullptr) scale_out[b * scale_stride] = s;
    if (inverse_out != nullptr) inverse_out[b * inverse_stride] = inverse_scale(s);
  }
  const std::uint64_t base_index = static_cast<std::uint64_t>(b * M * N);
  const std::int64_t nvec = count / V;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * T.threads;
  std::uint32_t amax = 0;
  // Walk the vectors from the end: the amax launch swept front to back, so the tail of the
  // tensor is what is still in L2 (about 50 MB on an H200) when this launch starts.
  for (std::int64_t w = blockIdx.x * static_cast<std::int64_t>(T.threads) + threadIdx.x; w < nvec;
       w += stride) {
    const std::int64_t v = nvec - 1 - w;
    float x[V];
    if constexpr (Vec) load16(src + v * V, x); else x[0] = load_one(src + v);
    if constexpr (Record) {
#pragma unroll
      for (int k = 0; k < V; ++k) amax = amax > abs_bits(x[k]) ? amax : abs_bits(x[k]);
    }
    if constexpr (Vec) {
      float y[V];
#pragma unroll
      for (int k = 0; k < V; ++k) y[k] = x[k] * s;
      std::uint8_t q[V];
      if (S.rounding == rounding::stochastic && col_major) {
#pragma unroll
        for (int k = 0; k < V; ++k)
          q[k] = encode_scaled<S>(y[k], seed, base_index + flat_logical_index(v * V + k, M, N, true));
      } else {
        encode16<S, T>(y, q, seed, base_index + v * V, 1);
      }
      store16(dst + v * V, q);
    } else {
      dst[v] = encode_scaled<S>(x[0] * s, seed, base_index + flat_logical_index(v, M, N, col_major));
    }
  }
  for (std::int64_t e = nvec * V + blockIdx.x * static_cast<std::int64_t>(T.threads) + threadIdx.x;
       e < count; e += stride) {
    const float x = load_one(src + e);
    if constexpr (Record) amax = amax > abs_bits(x) ? amax : abs_bits(x);
    dst[e] = encode_scaled<S>(x * s, seed, base_index + flat_logical_index(e, M, N, col_major));
  }
  if constexpr (Record) {
    using reducer = backend::block_max<T.threads>;
    __shared__ typename reducer::storage red;
    amax = reducer::run(amax, red);
    if (amax > 0x7f800000u) amax = 0x7fc00000u;  // one canonical NaN, whatever the payloads
    if (threadIdx.x == 0) backend::atomic_max_bits<T.amax_order, T.amax_scope>(record_bits + b, amax);
  }
}

// ------------------------------------------------------------------------------------------
// Tiled kernels for any layouts: a tile of tile_rows x tile_cols elements is loaded with
// coalesced (16-byte when Vec) reads along the input's contiguous axis into shared memory;
// amax and cast read it from there in whichever direction the group axis needs.
template <int TR, int TC, class In, bool Vec>
__device__ inline void load_tile(const matrix_view<const In>& in, std::int64_t b, std::int64_t r0,
                                 std::int64_t c0, float (*tile)[TC + 1], int threads) {
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const bool row_major = in.order == layout::row_major;
  // the contiguous axis of the input is the fast axis of the slots
  const int fast = row_major ? TC : TR;
  const int slow = row_major ? TR : TC;
  const std::int64_t fast_limit = row_major ? N - c0 : M - r0;
  const std::int64_t slow_limit = row_major ? M - r0 : N - c0;
  constexpr int V = Vec ? vec_elems : 1;
  const int vecs_per_line = fast / V;
  // Consecutive threads take consecutive LINES: their shared-memory stores then fall in
  // different banks (a line is TC + 1 words apart), while each thread's 16-byte global loads
  // still fill whole 32-byte sectors. (Consecutive vectors of one line per thread made the
  // 16 stores of a thread hit 2 banks: a 16-way conflict that capped the tiled kernels.)
  for (int slot = static_cast<int>(threadIdx.x); slot < slow * vecs_per_line; slot += threads) {
    const int ls = slot % slow;
    const int lf = (slot / slow) * V;
    const bool line_ok = ls < slow_limit;
    const std::int64_t lr = row_major ? ls : lf;
    const std::int64_t lc = row_major ? lf : ls;
    float x[V];
    bool whole = false;
    if constexpr (Vec) {
      whole = line_ok && lf + V <= fast_limit;
      if (whole) load16(in.data + in.offset(b, r0 + lr, c0 + lc), x);
    }
    if (!whole) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const bool ok = line_ok && lf + k < fast_limit;
        const std::int64_t rr = r0 + lr + (row_major ? 0 : k);
        const std::int64_t cc = c0 + lc + (row_major ? k : 0);
        x[k] = ok ? load_one(in.data + in.offset(b, rr, cc)) : 0.0f;
      }
    }
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if (row_major) tile[ls][lf + k] = x[k];
      else tile[lf + k][ls] = x[k];
    }
  }
}

// Partial amax per group over `tiles` consecutive tiles along the reduction axis, then one
// atomic per group. amax_bits: [batch * groups] f32 bits, zeroed before the launch.
template <class SC, class TC, class In, group_axis A, bool Vec>
__global__ void __launch_bounds__(TC::value.threads)
    tile_amax_kernel(matrix_view<const In> in, std::uint32_t* amax_bits, int tiles) {
  constexpr tuning T = TC::value;
  constexpr int TR = T.tile_rows;
  constexpr int TCOL = T.tile_cols;
  constexpr int threads = T.threads;
  __shared__ float tile[TR][TCOL + 1];
  constexpr int lanes = A == group_axis::col ? TCOL : TR;  // groups inside one tile
  constexpr int split = threads / lanes;                   // threads sharing one group
  __shared__ std::uint32_t partial[split > 0 ? split : 1][lanes > 0 ? lanes : 1];
  using reducer = backend::block_max<threads>;
  __shared__ typename reducer::storage red;

  const std::int64_t b = blockIdx.z;
  const int tid = static_cast<int>(threadIdx.x);
  std::uint32_t run = 0;  // this thread's running max for its group (or all, for tensor)
  for (int t = 0; t < tiles; ++t) {
    std::int64_t r0 = 0;
    std::int64_t c0 = 0;
    if constexpr (A == group_axis::row) {
      r0 = static_cast<std::int64_t>(blockIdx.y) * TR;
      c0 = (static_cast<std::int64_t>(blockIdx.x) * tiles + t) * TCOL;
    } else {
      r0 = (static_cast<std::int64_t>(blockIdx.y) * tiles + t) * TR;
      c0 = static_cast<std::int64_t>(blockIdx.x) * TCOL;
    }
    if (r0 >= in.rows || c0 >= in.cols) break;
    load_tile<TR, TCOL, In, Vec>(in, b, r0, c0, tile, threads);
    backend::block_sync();
    if constexpr (A == group_axis::col) {
      const int lane = tid % TCOL;
      for (int lr = tid / TCOL; lr < TR; lr += split) {
        const std::uint32_t a = abs_bits(tile[lr][lane]);
        run = run > a ? run : a;
      }
    } else if constexpr (A == group_axis::row) {
      const int lane = tid % TR;
      for (int lc = tid / TR; lc < TCOL; lc += split) {
        const std::uint32_t a = abs_bits(tile[lane][lc]);
        run = run > a ? run : a;
      }
    } else {
      for (int i = tid; i < TR * TCOL; i += threads) {
        const std::uint32_t a = abs_bits(tile[i / TCOL][i % TCOL]);
        run = run > a ? run : a;
      }
    }
    backend::block_sync();
  }
  if constexpr (A == group_axis::tensor) {
    run = reducer::run(run, red);
    if (tid == 0) backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + b, run);
  } else {
    partial[tid / lanes][tid % lanes] = run;
    backend::block_sync();
    if (tid < lanes) {
      std::uint32_t m = 0;
      for (int k = 0; k < split; ++k) m = m > partial[k][tid] ? m : partial[k][tid];
      const std::int64_t g = A == group_axis::col
                                 ? static_cast<std::int64_t>(blockIdx.x) * TCOL + tid
                                 : static_cast<std::int64_t>(blockIdx.y) * TR + tid;
      const std::int64_t groups = A == group_axis::col ? in.cols : in.rows;
      if (g < groups) backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + b * groups + g, m);
    }
  }
}

// Cast one tile with its groups' scales and store it through the output's layout: staged (a
// padded byte tile in shared memory laid out in the OUTPUT's order, then 16-byte stores along
// the output's contiguous axis) or direct (each thread stores the bytes it encoded).
template <class SC, class TC, class In, group_axis A, bool VecIn, bool VecOut, bool Staged>
__global__ void __launch_bounds__(TC::value.threads)
    tile_cast_kernel(matrix_view<const In> in, quantized<SC::value> out,
                     const std::uint32_t* amax_bits, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int TR = T.tile_rows;
  constexpr int TCOL = T.tile_cols;
  constexpr int threads = T.threads;
  constexpr int big = TR > TCOL ? TR : TCOL;
  constexpr int pad = 4;  // lines 17 words apart (fast = 64): threads on consecutive lines hit distinct banks
  constexpr int E = 4;    // bytes each thread encodes per step, consecutive in the output
  __shared__ float tile[TR][TCOL + 1];
  __shared__ std::uint32_t qwords[Staged ? (TR * TCOL + pad * big) / 4 : 1];
  __shared__ float scales[A == group_axis::col ? TCOL : (A == group_axis::row ? TR : 1)];

  // Tiles in reverse launch order: the amax launch finished on the last tiles, which are the
  // ones still in L2 when this launch starts.
  const std::uint64_t blocks = static_cast<std::uint64_t>(gridDim.x) * gridDim.y * gridDim.z;
  const std::uint64_t rev = blocks - 1 -
      (blockIdx.x + static_cast<std::uint64_t>(gridDim.x) * (blockIdx.y + static_cast<std::uint64_t>(gridDim.y) * blockIdx.z));
  const std::int64_t bx = static_cast<std::int64_t>(rev % gridDim.x);
  const std::int64_t by = static_cast<std::int64_t>((rev / gridDim.x) % gridDim.y);
  const std::int64_t b = static_cast<std::int64_t>(rev / (static_cast<std::uint64_t>(gridDim.x) * gridDim.y));
  const std::int64_t r0 = by * TR;
  const std::int64_t c0 = bx * TCOL;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const int tid = static_cast<int>(threadIdx.x);

  if constexpr (A == group_axis::tensor) {
    if (tid == 0) {
      const float s = group_scale<S>(amax_bits[b]);
      scales[0] = s;
      if (bx == 0 && by == 0) write_scales<S>(out, b, 0, 0, s);
    }
  } else if constexpr (A == group_axis::col) {
    if (tid < TCOL && c0 + tid < N) {
      const float s = group_scale<S>(amax_bits[b * N + c0 + tid]);
      scales[tid] = s;
      if (by == 0) write_scales<S>(out, b, 0, c0 + tid, s);
    }
  } else {
    if (tid < TR && r0 + tid < M) {
      const float s = group_scale<S>(amax_bits[b * M + r0 + tid]);
      scales[tid] = s;
      if (bx == 0) write_scales<S>(out, b, r0 + tid, 0, s);
    }
  }
  load_tile<TR, TCOL, In, VecIn>(in, b, r0, c0, tile, threads);
  backend::block_sync();

  // The byte tile follows the output's order: line = output's slow axis, fast = contiguous axis.
  const bool out_row_major = out.data.order == layout::row_major;
  const int fast = out_row_major ? TCOL : TR;
  const int slow = out_row_major ? TR : TCOL;
  const int pitch = fast + pad;
  const std::int64_t fast_limit = out_row_major ? N - c0 : M - r0;
  const std::int64_t slow_limit = out_row_major ? M - r0 : N - c0;
  auto* qbytes = reinterpret_cast<std::uint8_t*>(qwords);
  auto* out_bytes = reinterpret_cast<std::uint8_t*>(out.data.data);
  for (int i = tid; i < slow * (fast / E); i += threads) {
    // Staged: consecutive threads on consecutive lines (conflict-free shared-memory reads and
    // writes). Direct: consecutive threads along a line, so their global stores coalesce.
    const int ls = Staged ? i % slow : i / (fast / E);
    const int lf = Staged ? (i / slow) * E : (i % (fast / E)) * E;
    if (ls >= slow_limit || lf >= fast_limit) continue;
    float y[E];
#pragma unroll
    for (int k = 0; k < E; ++k) {
      const int lr = out_row_major ? ls : lf + k;
      const int lc = out_row_major ? lf + k : ls;
      const float sc = A == group_axis::col ? scales[lc] : (A == group_axis::row ? scales[lr] : scales[0]);
      y[k] = lf + k < fast_limit ? tile[lr][lc] * sc : 0.0f;
    }
    std::uint8_t q[E];
    encode_n<S, T>(y, q, seed, [&](int k) {
      const std::int64_t r = r0 + (out_row_major ? ls : lf + k);
      const std::int64_t c = c0 + (out_row_major ? lf + k : ls);
      return static_cast<std::uint64_t>((b * M + r) * N + c);
    });
    if constexpr (Staged) {
      std::uint32_t w = 0;
#pragma unroll
      for (int k = 0; k < E; ++k) w |= static_cast<std::uint32_t>(q[k]) << (8 * k);
      *reinterpret_cast<std::uint32_t*>(qbytes + ls * pitch + lf) = w;
    } else {
      for (int k = 0; k < E && lf + k < fast_limit; ++k) {
        const std::int64_t r = r0 + (out_row_major ? ls : lf + k);
        const std::int64_t c = c0 + (out_row_major ? lf + k : ls);
        out_bytes[out.data.offset(b, r, c)] = q[k];
      }
    }
  }
  if constexpr (Staged) {
    backend::block_sync();
    constexpr int V = VecOut ? vec_elems : 1;
    const int per_line = fast / V;
    for (int slot = tid; slot < slow * per_line; slot += threads) {
      const int ls = slot / per_line;
      const int lf = (slot % per_line) * V;
      if (ls >= slow_limit || lf >= fast_limit) continue;
      const std::int64_t lr = out_row_major ? ls : lf;
      const std::int64_t lc = out_row_major ? lf : ls;
      std::uint8_t* dst = out_bytes + out.data.offset(b, r0 + lr, c0 + lc);
      const std::uint8_t* src = qbytes + ls * pitch + lf;
      if (VecOut && lf + V <= fast_limit) {
        const auto* w = reinterpret_cast<const std::uint32_t*>(src);  // 4-byte aligned lines
        *reinterpret_cast<u32x4*>(dst) = u32x4{w[0], w[1], w[2], w[3]};
      } else {
        for (int k = 0; k < V && lf + k < fast_limit; ++k) dst[k] = src[k];
      }
    }
  }
}

}  // namespace fp8q::detail::gpu
