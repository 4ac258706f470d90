// fp8q — the GPU kernels, toolchain-neutral: every one is the same skeleton
//   load (16-byte vectors, coalesced) -> amax (block reduction, relaxed atomics across blocks)
//   -> scale (scale.hpp) -> cast (tile.hpp encoders) -> store (direct or staged through shared
//   memory so transposed outputs leave in whole lines)
// specialised by an index map from element to scaling group (tensor, row, col). Only
// backend:: (detail/cuda/adapter.hpp or detail/hip/adapter.hpp) names the toolchain.
#pragma once

#include <cstddef>
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
// Rowwise, fused: one block per row. The row's first Items * threads units (16-byte vectors, or
// single elements when U == 1) stay in registers, raw, between the amax and the cast, so the
// row is read from device memory once; longer rows re-read the remainder (from L2: one row is
// at most a few hundred KB). Consecutive threads take consecutive units: each warp-wide load is
// 512 contiguous bytes and each store 32 * U contiguous bytes.
// in:       [batch, rows, cols] In, row-major, ld any (16-byte aligned lines when U > 1)
// out.data: [batch, rows, cols] FP8, row-major (16-byte aligned lines when U > 1)
template <class SC, class TC, class In, int U, int Items>
__global__ void __launch_bounds__(TC::value.threads)
    row_fused_kernel(matrix_view<const In> in, quantized<SC::value> out, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr int threads = TC::value.threads;
  using reducer = backend::block_max<threads>;
  __shared__ typename reducer::storage red;
  __shared__ float s_shared;

  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const std::int64_t units = N / U;
  const int tid = static_cast<int>(threadIdx.x);
  for (std::int64_t row = blockIdx.x; row < in.batch * M; row += gridDim.x) {
    const std::int64_t b = row / M;
    const std::int64_t r = row % M;
    const In* src = in.data + in.offset(b, r, 0);                                          // [cols] In
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data + out.data.offset(b, r, 0));  // [cols] FP8
    const std::uint64_t row_index = static_cast<std::uint64_t>(b * M + r) * N;

    unit_raw<In, U> keep[Items];
    std::uint32_t amax = 0;
    auto take = [&](const unit_raw<In, U>& k) {
      float x[U];
      widen_unit<In, U>(k, x);
#pragma unroll
      for (int j = 0; j < U; ++j) amax = amax > abs_bits(x[j]) ? amax : abs_bits(x[j]);
    };
#pragma unroll
    for (int i = 0; i < Items; ++i) {  // every load in flight before the first use
      const std::int64_t u = tid + static_cast<std::int64_t>(i) * threads;
      if (u < units) keep[i] = load_unit<In, U>(src + u * U);
    }
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      if (tid + static_cast<std::int64_t>(i) * threads < units) take(keep[i]);
    }
    for (std::int64_t u = tid + static_cast<std::int64_t>(Items) * threads; u < units; u += threads)
      take(load_unit<In, U>(src + u * U));
    for (std::int64_t e = units * U + tid; e < N; e += threads) {
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

    auto cast_store = [&](std::int64_t u, const unit_raw<In, U>& k) {
      float y[U];
      widen_unit<In, U>(k, y);
#pragma unroll
      for (int j = 0; j < U; ++j) y[j] *= s;
      std::uint8_t q[U];
      encode_n<S, TC::value>(y, q, seed, [&](int j) { return row_index + u * U + j; });
      store_bytes<U>(dst + u * U, q);
    };
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const std::int64_t u = tid + static_cast<std::int64_t>(i) * threads;
      if (u < units) cast_store(u, keep[i]);
    }
    for (std::int64_t u = tid + static_cast<std::int64_t>(Items) * threads; u < units; u += threads)
      cast_store(u, load_unit<In, U>(src + u * U));
    for (std::int64_t e = units * U + tid; e < N; e += threads)
      dst[e] = encode_scaled<S>(load_one(src + e) * s, seed, row_index + e);
    backend::block_sync();  // red and s_shared are reused by the next row
  }
}

// Rowwise, fused, one wave per row (for rows of at most Items * wave units): no shared memory
// and no block barrier; the amax is a butterfly across the wave's lanes. Same data path as
// row_fused_kernel otherwise. Rows per block = threads / wave size.
template <class SC, class TC, class In, int U, int Items>
__global__ void __launch_bounds__(TC::value.threads)
    row_wave_kernel(matrix_view<const In> in, quantized<SC::value> out, std::uint64_t seed) {
  constexpr spec S = SC::value;
  const int wave = backend::wave_size();
  const int lane = static_cast<int>(threadIdx.x) % wave;
  const std::int64_t waves = static_cast<std::int64_t>(blockDim.x) / wave;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const std::int64_t units = N / U;
  for (std::int64_t row = blockIdx.x * waves + threadIdx.x / wave; row < in.batch * M;
       row += static_cast<std::int64_t>(gridDim.x) * waves) {
    const std::int64_t b = row / M;
    const std::int64_t r = row % M;
    const In* src = in.data + in.offset(b, r, 0);                                          // [cols] In
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data + out.data.offset(b, r, 0));  // [cols] FP8
    const std::uint64_t row_index = static_cast<std::uint64_t>(b * M + r) * N;
    unit_raw<In, U> keep[Items];
    std::uint32_t amax = 0;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const std::int64_t u = lane + static_cast<std::int64_t>(i) * wave;
      if (u < units) keep[i] = load_unit<In, U>(src + u * U);
    }
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      if (lane + static_cast<std::int64_t>(i) * wave < units) {
        float x[U];
        widen_unit<In, U>(keep[i], x);
#pragma unroll
        for (int j = 0; j < U; ++j) amax = amax > abs_bits(x[j]) ? amax : abs_bits(x[j]);
      }
    }
    for (std::int64_t e = units * U + lane; e < N; e += wave) {
      const std::uint32_t a = abs_bits(load_one(src + e));
      amax = amax > a ? amax : a;
    }
    amax = backend::lanes_max<1>(amax);
    const float s = group_scale<S>(amax);
    if (lane == 0) write_scales<S>(out, b, r, 0, s);
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const std::int64_t u = lane + static_cast<std::int64_t>(i) * wave;
      if (u < units) {
        float y[U];
        widen_unit<In, U>(keep[i], y);
#pragma unroll
        for (int j = 0; j < U; ++j) y[j] *= s;
        std::uint8_t q[U];
        encode_n<S, TC::value>(y, q, seed, [&](int j) { return row_index + u * U + j; });
        store_bytes<U>(dst + u * U, q);
      }
    }
    for (std::int64_t e = units * U + lane; e < N; e += wave)
      dst[e] = encode_scaled<S>(load_one(src + e) * s, seed, row_index + e);
  }
}

// ------------------------------------------------------------------------------------------
// Tensorwise on dense data: each batch item is one flat array in the view's memory order, cut
// into chunks of K units per thread (all K loads in flight before the first use).
// Logical index of flat offset `off` (for stochastic rounding) in a matrix of M x N.
__device__ inline std::uint64_t flat_logical_index(std::int64_t off, std::int64_t M,
                                                   std::int64_t N, bool col_major) {
  if (!col_major) return static_cast<std::uint64_t>(off);
  const std::int64_t c = off / M;
  const std::int64_t r = off % M;
  return static_cast<std::uint64_t>(r * N + c);
}

// Running amax (f32 bits) over one unit.
template <class In, int U>
__device__ inline std::uint32_t unit_amax(const unit_raw<In, U>& r, std::uint32_t amax) {
  float x[U];
  widen_unit<In, U>(r, x);
#pragma unroll
  for (int k = 0; k < U; ++k) amax = amax > abs_bits(x[k]) ? amax : abs_bits(x[k]);
  return amax;
}

// K units of src, unit first + i * stride for i < K, those below `units` (the others keep
// their values): all K loads in flight before the first use.
template <class In, int U, int K>
__device__ inline void load_units(const In* src, std::int64_t first, std::int64_t stride,
                                  std::int64_t units, unit_raw<In, U> (&w)[K]) {
#pragma unroll
  for (int i = 0; i < K; ++i)
    if (first + i * stride < units) w[i] = load_unit<In, U>(src + (first + i * stride) * U);
}

// Scale, encode and store one unit: dst [U] FP8 bytes; index(k): element k's logical index.
template <spec S, tuning T, class In, int U, class IndexFn>
__device__ inline void cast_unit(const unit_raw<In, U>& r, float s, std::uint8_t* dst,
                                 std::uint64_t seed, IndexFn index) {
  float y[U];
  widen_unit<In, U>(r, y);
#pragma unroll
  for (int k = 0; k < U; ++k) y[k] *= s;
  std::uint8_t q[U];
  encode_n<S, T>(y, q, seed, index);
  store_bytes<U>(dst, q);
}

// in: [count] In per batch item (blockIdx.y), batch_stride apart; amax: [batch] f32 bits
template <class SC, class TC, class In, int U, int K>
__global__ void __launch_bounds__(TC::value.threads)
    flat_amax_kernel(const In* in, std::int64_t count, std::int64_t batch_stride,
                     std::uint32_t* amax_bits) {
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr std::int64_t chunk = static_cast<std::int64_t>(threads) * K;
  using reducer = backend::block_max<threads>;
  __shared__ typename reducer::storage red;
  const In* src = in + static_cast<std::int64_t>(blockIdx.y) * batch_stride;  // [count] In
  const std::int64_t units = count / U;
  const int tid = static_cast<int>(threadIdx.x);
  std::uint32_t amax = 0;
  for (std::int64_t base = blockIdx.x * chunk; base < units; base += gridDim.x * chunk) {
    unit_raw<In, U> w[K];
    load_units<In, U, K>(src, base + tid, threads, units, w);
#pragma unroll
    for (int j = 0; j < K; ++j)
      if (base + j * threads + tid < units) amax = unit_amax<In, U>(w[j], amax);
  }
  for (std::int64_t e = units * U + blockIdx.x * static_cast<std::int64_t>(threads) + tid; e < count;
       e += static_cast<std::int64_t>(gridDim.x) * threads) {
    const std::uint32_t a = abs_bits(load_one(src + e));
    amax = amax > a ? amax : a;
  }
  amax = reducer::run(amax, red);
  if (tid == 0) backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + blockIdx.y, amax);
}

// Cast with the scale from amax_bits (dynamic) or from given_scale (delayed scaling), optionally
// recording this call's amax into record_bits. Scale outputs: [batch] each. Chunks are walked
// from the end of the array: the amax launch swept front to back, so the tail is what is still
// in L2 (about 50 MB on an H200) when this launch starts.
template <class SC, class TC, class In, int U, int K, bool Record>
__global__ void __launch_bounds__(TC::value.threads)
    flat_cast_kernel(const In* in, std::uint8_t* out, std::int64_t count, std::int64_t in_stride,
                     std::int64_t out_stride, const std::uint32_t* amax_bits,
                     const float* given_scale, std::uint32_t* record_bits, float* scale_out,
                     std::int64_t scale_stride, float* inverse_out, std::int64_t inverse_stride,
                     std::int64_t M, std::int64_t N, bool col_major, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr std::int64_t chunk = static_cast<std::int64_t>(threads) * K;
  backend::wait_prior_grid();  // the amax launch (this one is a dependent launch)
  const std::int64_t b = blockIdx.y;
  const In* src = in + b * in_stride;         // [count] In
  std::uint8_t* dst = out + b * out_stride;   // [count] FP8
  const float s = given_scale != nullptr ? given_scale[b] : group_scale<S>(amax_bits[b]);
  const int tid = static_cast<int>(threadIdx.x);
  if (blockIdx.x == 0 && tid == 0) {
    if (scale_out != nullptr) scale_out[b * scale_stride] = s;
    if (inverse_out != nullptr) inverse_out[b * inverse_stride] = inverse_scale(s);
  }
  const std::uint64_t base_index = static_cast<std::uint64_t>(b * M * N);
  auto index_of = [&](std::int64_t off) { return base_index + flat_logical_index(off, M, N, col_major); };
  const std::int64_t units = count / U;
  const std::int64_t chunks = (units + chunk - 1) / chunk;
  std::uint32_t amax = 0;
  for (std::int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const std::int64_t base = (chunks - 1 - c) * chunk;
    unit_raw<In, U> w[K];
    load_units<In, U, K>(src, base + tid, threads, units, w);
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const std::int64_t u = base + j * threads + tid;
      if (u >= units) continue;
      if constexpr (Record) amax = unit_amax<In, U>(w[j], amax);
      cast_unit<S, T, In, U>(w[j], s, dst + u * U, seed, [&](int k) { return index_of(u * U + k); });
    }
  }
  for (std::int64_t e = units * U + blockIdx.x * static_cast<std::int64_t>(threads) + tid; e < count;
       e += static_cast<std::int64_t>(gridDim.x) * threads) {
    const float x = load_one(src + e);
    if constexpr (Record) amax = amax > abs_bits(x) ? amax : abs_bits(x);
    dst[e] = encode_scaled<S>(x * s, seed, index_of(e));
  }
  if constexpr (Record) {
    using reducer = backend::block_max<threads>;
    __shared__ typename reducer::storage red;
    amax = reducer::run(amax, red);
    if (amax > 0x7f800000u) amax = 0x7fc00000u;  // one canonical NaN, whatever the payloads
    if (tid == 0) backend::atomic_max_bits<T.amax_order, T.amax_scope>(record_bits + b, amax);
  }
}

// ------------------------------------------------------------------------------------------
// Tensorwise in ONE launch (tensor_path::last_block). Every block of the grid is resident at
// once (the launch is cooperative, which guarantees it), so blocks may wait for each other and
// keep part of the tensor on chip across the wait. Per batch item (blockIdx.y), block x
//   1. loads its held slots into shared memory: slot j of thread tid is unit
//      (j * gridDim.x + x) * threads + tid, so all blocks read one contiguous window at a time;
//      then streams chunks x, x + gridDim.x, ... of the units after the held ones (chunks of
//      K units per thread); its amax covers both;
//   2. publishes its amax (one atomic, order and scope from the tuning) and counts itself in
//      with acq_rel; the block that counts last reads the item's amax, writes the scale outputs
//      and publishes the scale (release); every other block waits for it (acquire);
//   3. casts its streamed chunks back to front (the chunks read last are the ones still in L2),
//      each followed by a share of its held slots from shared memory, so reads and writes stay
//      mixed; then what is left of the held slots.
// Only the streamed units are read twice; the held ones (~29 MB on an H200) are not.
// in:  [count] In per batch item, in_stride apart (16-byte aligned items when U > 1)
// out: [count] FP8 per batch item, out_stride apart
// sync: [batch][4] words (amax bits, arrivals, scale bits, published), zeroed before the launch
// dynamic shared memory: held_slots * threads units
template <class SC, class TC, class In, int U, int K>
__global__ void __launch_bounds__(TC::value.threads, 1)
    flat_resident_kernel(const In* in, std::uint8_t* out, std::int64_t count, std::int64_t in_stride,
                         std::int64_t out_stride, std::uint32_t* sync, int held_slots,
                         float* scale_out, std::int64_t scale_stride, float* inverse_out,
                         std::int64_t inverse_stride, std::int64_t M, std::int64_t N, bool col_major,
                         std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr std::int64_t chunk = static_cast<std::int64_t>(threads) * K;
  using unit = unit_raw<In, U>;
  using reducer = backend::block_max<threads>;
  extern __shared__ u32x4 dyn[];
  unit* shelf = reinterpret_cast<unit*>(dyn);  // [held_slots][threads] units
  __shared__ typename reducer::storage red;
  __shared__ float block_scale;

  const std::int64_t b = blockIdx.y;
  const In* src = in + b * in_stride;        // [count] In
  std::uint8_t* dst = out + b * out_stride;  // [count] FP8
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t gx = gridDim.x;
  const std::int64_t x = blockIdx.x;
  const std::int64_t units = count / U;
  const std::int64_t held_end = gx * held_slots * threads < units ? gx * held_slots * threads : units;
  const std::int64_t chunks = (units - held_end + chunk - 1) / chunk;  // streamed chunks
  const std::uint64_t base_index = static_cast<std::uint64_t>(b * M * N);
  auto index_of = [&](std::int64_t off) { return base_index + flat_logical_index(off, M, N, col_major); };
  auto slot_unit = [&](int j) { return (static_cast<std::int64_t>(j) * gx + x) * threads + tid; };
  auto in_slot = [&](int j) { return j < held_slots && slot_unit(j) < held_end; };

  // 1. held slots, then the streamed chunks front to back
  std::uint32_t amax = 0;
  for (int j0 = 0; j0 < held_slots; j0 += K) {
    unit w[K];
#pragma unroll
    for (int i = 0; i < K; ++i)
      if (in_slot(j0 + i)) w[i] = load_unit<In, U>(src + slot_unit(j0 + i) * U);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      if (in_slot(j0 + i)) {
        shelf[(j0 + i) * threads + tid] = w[i];
        amax = unit_amax<In, U>(w[i], amax);
      }
    }
  }
  for (std::int64_t c = x; c < chunks; c += gx) {
    const std::int64_t base = held_end + c * chunk + tid;
    unit w[K];
    load_units<In, U, K>(src, base, threads, units, w);
#pragma unroll
    for (int i = 0; i < K; ++i)
      if (base + i * threads < units) amax = unit_amax<In, U>(w[i], amax);
  }
  for (std::int64_t e = units * U + x * threads + tid; e < count; e += gx * threads) {
    const std::uint32_t a = abs_bits(load_one(src + e));
    amax = amax > a ? amax : a;
  }

  // 2. the scale: published by the last block of the item to count in
  amax = reducer::run(amax, red);
  std::uint32_t* item = sync + 4 * b;  // amax bits, arrivals, scale bits, published
  if (tid == 0) {
    backend::atomic_max_bits<T.amax_order, T.amax_scope>(item, amax);
    if (backend::count_acq_rel(item + 1) == static_cast<std::uint32_t>(gx - 1)) {
      const float s = group_scale<S>(backend::load_relaxed(item));
      if (scale_out != nullptr) scale_out[b * scale_stride] = s;
      if (inverse_out != nullptr) inverse_out[b * inverse_stride] = inverse_scale(s);
      backend::store_relaxed(item + 2, __builtin_bit_cast(std::uint32_t, s));
      backend::store_release(item + 3, 1u);
      block_scale = s;
    } else {
      while (backend::count_acquire(item + 3) == 0) backend::spin_pause();
      block_scale = __builtin_bit_cast(float, backend::load_relaxed(item + 2));
    }
  }
  backend::block_sync();
  const float s = block_scale;

  // 3. streamed chunks back to front, each followed by `per` held slots; then the rest
  auto cast_at = [&](const unit& w, std::int64_t u) {
    cast_unit<S, T, In, U>(w, s, dst + u * U, seed, [&](int k) { return index_of(u * U + k); });
  };
  auto cast_held = [&](int j0, int n) {
    for (int j = j0; j < j0 + n; ++j)
      if (in_slot(j)) cast_at(shelf[j * threads + tid], slot_unit(j));
  };
  const std::int64_t mine = chunks > x ? (chunks - 1 - x) / gx + 1 : 0;  // this block's chunks
  const int per = mine > 0 ? static_cast<int>((held_slots + mine - 1) / mine) : 0;
  int next_held = 0;
  for (std::int64_t c = chunks - 1 - x; c >= 0; c -= gx) {
    const std::int64_t base = held_end + c * chunk + tid;
    unit w[K];
    load_units<In, U, K>(src, base, threads, units, w);
#pragma unroll
    for (int i = 0; i < K; ++i)
      if (base + i * threads < units) cast_at(w[i], base + i * threads);
    cast_held(next_held, per);
    next_held += per;
  }
  for (std::int64_t e = units * U + x * threads + tid; e < count; e += gx * threads)
    dst[e] = encode_scaled<S>(load_one(src + e) * s, seed, index_of(e));
  cast_held(next_held, held_slots - next_held);
}

// This block's place when blocks are taken in reverse launch order (the last launched block
// gets (0, 0, 0)): the cast launches after an amax launch start on the tiles the amax launch
// read last, which are the ones still in L2.
struct block_pos {
  std::int64_t x, y, z;
};

__device__ inline block_pos reverse_block() {
  const std::uint64_t gx = gridDim.x;
  const std::uint64_t gy = gridDim.y;
  const std::uint64_t rev = gx * gy * gridDim.z - 1 - (blockIdx.x + gx * (blockIdx.y + gy * blockIdx.z));
  return {static_cast<std::int64_t>(rev % gx), static_cast<std::int64_t>(rev / gx % gy),
          static_cast<std::int64_t>(rev / (gx * gy))};
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

  backend::wait_prior_grid();  // the amax launch (this one is a dependent launch)
  // Tiles in reverse launch order: the amax launch finished on the last tiles, which are the
  // ones still in L2 when this launch starts.
  const block_pos at = reverse_block();
  const std::int64_t bx = at.x;
  const std::int64_t by = at.y;
  const std::int64_t b = at.z;
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

// ------------------------------------------------------------------------------------------
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
    float y[U];
    widen_unit<In, U>(v[j], y);
#pragma unroll
    for (int k = 0; k < U; ++k) y[k] *= sc[k];
    const std::uint64_t row_index = first_index + static_cast<std::uint64_t>(j * N);
    encode_words<S, T>(y, q[j], seed, [&](int k) { return row_index + k; });
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

// ------------------------------------------------------------------------------------------
// Colwise in two streaming passes over a row-major input whose lines are 16-byte aligned and
// whose width is a whole number of units. Both passes read whole rows with 16-byte loads
// (blocks side by side along a row run together, so DRAM sees long runs), unlike column strips.
//
// Pass 1: column amax. A block covers a band of wave * U columns (512 bytes of input per row)
// and `rows_per_block` rows; its waves take rows in turn with K loads in flight per lane, each
// lane keeps the running max of its U columns, the waves meet in shared memory, and one atomic
// per column (relaxed by default) goes to amax_bits[batch][cols], zeroed before the launch.
template <class SC, class TC, class In, int K>
__global__ void __launch_bounds__(TC::value.threads)
    col_amax_kernel(matrix_view<const In> in, std::uint32_t* amax_bits, int rows_per_block) {
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr int U = unit_elems<In>;
  __shared__ std::uint32_t partial[threads * U];  // [threads / wave][wave * U]
  const int wave = backend::wave_size();
  const int waves = threads / wave;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % wave;
  const int w = tid / wave;
  const std::int64_t b = blockIdx.z;
  const std::int64_t c = (static_cast<std::int64_t>(blockIdx.x) * wave + lane) * U;  // first column
  const std::int64_t r_begin = static_cast<std::int64_t>(blockIdx.y) * rows_per_block;
  const std::int64_t r_end = r_begin + rows_per_block < in.rows ? r_begin + rows_per_block : in.rows;
  const bool col_ok = c < in.cols;
  std::uint32_t cmax[U] = {};
  const In* col = in.data + in.offset(b, 0, col_ok ? c : 0);  // [rows, ld] In: this lane's unit column
  for (std::int64_t r0 = r_begin + w; r0 < r_end; r0 += static_cast<std::int64_t>(waves) * K) {
    u32x4 v[K];
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const std::int64_t r = r0 + static_cast<std::int64_t>(j) * waves;
      v[j] = u32x4{0, 0, 0, 0};
      if (col_ok && r < r_end) v[j] = load_unit<In, U>(col + r * in.ld);
    }
#pragma unroll
    for (int j = 0; j < K; ++j) max_unit<In, U>(v[j], cmax);
  }
#pragma unroll
  for (int k = 0; k < U; ++k) partial[w * wave * U + lane * U + k] = cmax[k];
  backend::block_sync();
  const int band = wave * U;
  for (int i = tid; i < band; i += threads) {
    std::uint32_t m = 0;
    for (int q = 0; q < waves; ++q) m = m > partial[q * band + i] ? m : partial[q * band + i];
    const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * band + i;
    if (col < in.cols) backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + b * in.cols + col, m);
  }
}

// Cast the tile of rows_here x cols_here at (b, r0, c0) of a row-major input (T.tile_rows x
// T.tile_cols at most) with its column scales (scales: [T.tile_cols] f32 in shared memory, written
// and synchronized by the caller) and store it. Each thread loads one unit column of 4
// consecutive rows (all loads in flight), so it holds 4 bytes of U column lines (column-major
// output) or U bytes of 4 row lines (row-major output). Staged: those go to `tile`, a byte tile
// in the output's order, then whole 16-byte pieces of output lines to device memory; direct:
// each thread stores them itself (4-byte or U-byte stores).
template <spec S, tuning T, class In, bool Staged>
__device__ inline void cast_col_tile(const matrix_view<const In>& in, const quantized<S>& out,
                                     const byte_tile& tile, const float* scales, std::int64_t b,
                                     std::int64_t r0, std::int64_t c0, int rows_here, int cols_here,
                                     std::uint64_t seed) {
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
  for (int i = tid; i < items; i += threads) {
    const int uc = i % upr;
    const int rq = i / upr;
    const bool col_ok = uc * U < cols_here;
    const In* p = src + (rq * 4) * ld + uc * U;
    unit_raw<In, U> v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      v[j] = unit_raw<In, U>{};
      if (col_ok && rq * 4 + j < rows_here) v[j] = load_unit<In, U>(p + j * ld);
    }
    float sc[U];
#pragma unroll
    for (int k = 0; k < U; ++k) sc[k] = scales[uc * U + k];
    std::uint32_t q[4][U / 4];
    const std::int64_t c = c0 + uc * U;
    encode_quad<S, T, In, U>(v, sc, seed, static_cast<std::uint64_t>((b * M + r0 + rq * 4) * N + c), N, q);
    if constexpr (Staged) {
      put_quad<U>(tile, rq, uc, q);
    } else {
      if (!col_ok) continue;
      if (tile.row_major) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (rq * 4 + j >= rows_here) continue;
          auto* dst = out_bytes + out.data.offset(b, r0 + rq * 4 + j, c);
          if constexpr (U == 8) *reinterpret_cast<uint2*>(dst) = make_uint2(q[j][0], q[j][1]);
          else *reinterpret_cast<std::uint32_t*>(dst) = q[j][0];
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
  if constexpr (Staged) {
    backend::block_sync();
    store_byte_tile<S>(tile, out, b, r0, c0, rows_here, cols_here, tid, threads);
  }
}

// Scales of the tile's columns into scales[] (shared memory; the stored scales too where
// `store`), then a block barrier. amax(i): column c0 + i's amax bits.
template <spec S, int TCOL, class AmaxFn>
__device__ inline void tile_column_scales(const quantized<S>& out, float* scales, std::int64_t b,
                                          std::int64_t c0, int cols_here, bool store, AmaxFn amax) {
  for (int i = static_cast<int>(threadIdx.x); i < TCOL; i += static_cast<int>(blockDim.x)) {
    const float sc = i < cols_here ? group_scale<S>(amax(i)) : 0.0f;
    scales[i] = sc;
    if (i < cols_here && store) write_scales<S>(out, b, 0, c0 + i, sc);
  }
  backend::block_sync();
}

// Shared memory of cast_col_tile's byte tile for tuning T (either output order; 4 bytes when
// the stores are direct).
template <tuning T, bool Staged>
inline constexpr int col_tile_bytes = !Staged ? 4
    : (T.tile_cols * (T.tile_rows + 4) > T.tile_rows * (T.tile_cols + 4) ? T.tile_cols * (T.tile_rows + 4)
                                                                           : T.tile_rows * (T.tile_cols + 4));

// Pass 2: cast a tile of tile_rows x tile_cols with the columns' scales (cast_col_tile). Tiles
// run in reverse order: pass 1 ended on the last rows, which are what L2 still holds.
template <class SC, class TC, class In, bool Staged>
__global__ void __launch_bounds__(TC::value.threads)
    col_cast_kernel(matrix_view<const In> in, quantized<SC::value> out,
                    const std::uint32_t* amax_bits, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int TR = T.tile_rows;
  constexpr int TCOL = T.tile_cols;
  __shared__ std::uint32_t words[col_tile_bytes<T, Staged> / 4];
  __shared__ float scales[TCOL];

  backend::wait_prior_grid();  // the amax launch (this one is a dependent launch)
  const block_pos at = reverse_block();
  const std::int64_t bx = at.x;
  const std::int64_t by = at.y;
  const std::int64_t b = at.z;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const std::int64_t r0 = by * TR;
  const std::int64_t c0 = bx * TCOL;
  const int rows_here = static_cast<int>(M - r0 < TR ? M - r0 : TR);
  const int cols_here = static_cast<int>(N - c0 < TCOL ? N - c0 : TCOL);

  tile_column_scales<S, TCOL>(out, scales, b, c0, cols_here, by == 0,
                              [&](int i) { return amax_bits[b * N + c0 + i]; });
  const byte_tile tile{reinterpret_cast<std::uint8_t*>(words), TCOL + 4, TR + 4,
                       out.data.order == layout::row_major};
  cast_col_tile<S, T, In, Staged>(in, out, tile, scales, b, r0, c0, rows_here, cols_here, seed);
}

// ------------------------------------------------------------------------------------------
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

// amax_bits: [batch, cols] f32 bits; done: [batch, strips]; tickets: [1]; all zeroed before.
template <class SC, class TC, class In, bool Staged>
__global__ void __launch_bounds__(TC::value.threads)
    col_relay_kernel(matrix_view<const In> in, quantized<SC::value> out, std::uint32_t* amax_bits,
                     std::uint32_t* done, std::uint32_t* tickets, relay_plan plan, std::uint64_t seed) {
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
  __shared__ std::uint32_t words[col_tile_bytes<T, Staged> / 4];
  __shared__ float scales[TCOL];
  __shared__ std::uint32_t partial[threads / 32][TCOL];
  __shared__ std::uint32_t ticket;
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) ticket = backend::take_ticket(tickets);
  backend::block_sync();
  const std::int64_t k = ticket;
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  auto here = [&](std::int64_t left, int tile) { return static_cast<int>(left < tile ? left : tile); };

  if (k < plan.items) {  // 1. amax of item k
    const relay_item it = relay_decode(plan, k);
    const std::int64_t r0 = it.chunk * TR;
    const std::int64_t c0 = it.strip * TCOL;
    const int rows_here = here(M - r0, TR);
    const int uc = tid % upr;
    const bool col_ok = uc * U < here(N - c0, TCOL);
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
#pragma unroll
    for (int e = 0; e < U; ++e) cmax[e] = backend::lanes_max<upr>(cmax[e]);
    const int wave = backend::wave_size();
    if (tid % wave < upr) {
#pragma unroll
      for (int e = 0; e < U; ++e) partial[tid / wave][uc * U + e] = cmax[e];
    }
    backend::block_sync();
    if (tid < here(N - c0, TCOL)) {
      std::uint32_t m = 0;
      for (int w = 0; w < threads / wave; ++w) m = m > partial[w][tid] ? m : partial[w][tid];
      backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + it.b * N + c0 + tid, m);
    }
    backend::block_sync();
    if (tid == 0) backend::count_release(done + it.b * plan.strips + it.strip);
  }

  const std::int64_t j = k - plan.chunks;  // 2. cast of item k - lag (lag = chunks)
  if (j < 0 || j >= plan.items) return;
  const relay_item it = relay_decode(plan, j);
  std::uint32_t* strip_done = done + it.b * plan.strips + it.strip;
  if (tid == 0) {
    while (static_cast<std::int64_t>(backend::count_acquire(strip_done)) < plan.chunks) backend::spin_pause();
  }
  backend::block_sync();
  const std::int64_t r0 = it.chunk * TR;
  const std::int64_t c0 = it.strip * TCOL;
  const int rows_here = here(M - r0, TR);
  const int cols_here = here(N - c0, TCOL);
  tile_column_scales<S, TCOL>(out, scales, it.b, c0, cols_here, it.chunk == 0, [&](int i) {
    return backend::load_relaxed(amax_bits + it.b * N + c0 + i);
  });
  const byte_tile tile{reinterpret_cast<std::uint8_t*>(words), TCOL + 4, TR + 4,
                       out.data.order == layout::row_major};
  cast_col_tile<S, T, In, Staged>(in, out, tile, scales, it.b, r0, c0, rows_here, cols_here, seed);
}

// ------------------------------------------------------------------------------------------
// Colwise in one pass on thread-block clusters (Cluster = backend::cluster_api, where the
// toolchain has clusters). A cluster's CTAs split one strip of StripCols columns by rows: each
// keeps its seg_rows x StripCols piece of the input in shared memory, the column amax is pooled
// through distributed shared memory, and each CTA casts its piece from shared memory and stores
// it through a byte tile laid out in the output's order. Input read once, output written once.
// The clusters are persistent: grid (clusters that fit at once, cluster size), cluster
// (1, cluster size, 1), each walking (batch item, strip) tasks; cluster size * seg_rows >= rows.
// in:       [batch, rows, cols] In, row-major, 16-byte aligned lines, cols % unit_elems == 0
// out.data: [batch, rows, cols] FP8, either layout, 16-byte aligned lines
// dynamic shared memory: cluster_shared_bytes<In, StripCols>(seg_rows)
template <class In, int StripCols>
constexpr std::size_t cluster_shared_bytes(int seg_rows) {
  const std::size_t in_bytes = static_cast<std::size_t>(seg_rows) * StripCols * sizeof(In);
  const std::size_t row_tile = static_cast<std::size_t>(seg_rows) * (StripCols + 4);
  const std::size_t col_tile = static_cast<std::size_t>(StripCols) * (seg_rows + 4);
  return in_bytes + (row_tile > col_tile ? row_tile : col_tile);
}

template <class SC, class TC, class In, int StripCols, class Cluster>
__global__ void __launch_bounds__(TC::value.threads, 1)
    col_cluster_kernel(matrix_view<const In> in, quantized<SC::value> out, int seg_rows,
                       std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr int U = unit_elems<In>;
  constexpr int upr = StripCols / U;             // units per row of the strip
  constexpr int warps = threads / 32;            // NVIDIA-only kernel: 32-thread warps
  constexpr int K = threads <= 512 ? 16 : 8;     // loads in flight per thread
  static_assert(threads % 32 == 0 && 32 % upr == 0, "a warp holds whole strip rows");
  static_assert(threads >= StripCols, "one thread per strip column for the amax");
  extern __shared__ u32x4 dyn[];
  u32x4* tile = dyn;  // [seg_rows][upr] units of In
  auto* bytes = reinterpret_cast<std::uint8_t*>(dyn + static_cast<std::size_t>(seg_rows) * upr);
  __shared__ std::uint32_t partial[warps][StripCols];
  __shared__ std::uint32_t cta_amax[StripCols];
  __shared__ float scales[StripCols];

  const int tid = static_cast<int>(threadIdx.x);
  const int rank = Cluster::rank();
  const std::int64_t M = in.rows;
  const std::int64_t N = in.cols;
  const std::int64_t r0 = static_cast<std::int64_t>(rank) * seg_rows;
  const int rows_here = static_cast<int>(M - r0 < seg_rows ? (M - r0 > 0 ? M - r0 : 0) : seg_rows);
  const int units = rows_here * upr;
  const int uc = tid % upr;  // this thread's unit column: the same in every step (threads % upr == 0)
  const byte_tile out_tile{bytes, StripCols + 4, seg_rows + 4, out.data.order == layout::row_major};
  const std::int64_t strips = (N + StripCols - 1) / StripCols;

  for (std::int64_t task = blockIdx.x; task < strips * in.batch; task += gridDim.x) {
    const std::int64_t b = task / strips;
    const std::int64_t c0 = (task % strips) * StripCols;
    const int cols_here = static_cast<int>(N - c0 < StripCols ? N - c0 : StripCols);
    const bool col_ok = uc * U < cols_here;

    // 1. load the piece into shared memory; running max of this thread's U columns
    std::uint32_t cmax[U] = {};
    for (int base = 0; base < units; base += threads * K) {
      u32x4 w[K];
#pragma unroll
      for (int j = 0; j < K; ++j) {
        const int i = base + j * threads + tid;
        w[j] = u32x4{0, 0, 0, 0};
        if (i < units && col_ok) w[j] = load_unit<In, U>(in.data + in.offset(b, r0 + i / upr, c0 + uc * U));
      }
#pragma unroll
      for (int j = 0; j < K; ++j) {
        const int i = base + j * threads + tid;
        if (i >= units) continue;
        tile[i] = w[j];
        max_unit<In, U>(w[j], cmax);
      }
    }
    // 2. amax of the piece's columns: lanes of one unit column, then warps
#pragma unroll
    for (int k = 0; k < U; ++k) cmax[k] = backend::lanes_max<upr>(cmax[k]);
    const int lane = tid % 32;
    if (lane < upr) {
#pragma unroll
      for (int k = 0; k < U; ++k) partial[tid / 32][lane * U + k] = cmax[k];
    }
    backend::block_sync();
    if (tid < StripCols) {
      std::uint32_t m = 0;
      for (int w = 0; w < warps; ++w) m = m > partial[w][tid] ? m : partial[w][tid];
      cta_amax[tid] = m;
    }
    // 3. pool the cluster's pieces (release/acquire at the cluster barrier), scale per column
    Cluster::arrive();
    Cluster::wait();
    if (tid < StripCols) {
      std::uint32_t m = 0;
#pragma unroll
      for (int q = 0; q < Cluster::max_size; ++q) {  // all remote loads in flight together
        if (q < static_cast<int>(gridDim.y)) {
          const std::uint32_t v = Cluster::peer(cta_amax, q)[tid];
          m = m > v ? m : v;
        }
      }
      const float s = group_scale<S>(m);
      scales[tid] = s;
      if (rank == 0 && tid < cols_here) write_scales<S>(out, b, 0, c0 + tid, s);
    }
    Cluster::arrive();  // done reading the peers' cta_amax; waited for at the end of the task
    backend::block_sync();

    // 4. cast from shared memory into the byte tile: each thread takes one unit column of 4
    // consecutive rows
    float sc[U];
#pragma unroll
    for (int k = 0; k < U; ++k) sc[k] = scales[uc * U + k];
    const int quads = (rows_here + 3) / 4;
    for (int i = tid; i < quads * upr; i += threads) {
      const int rq = i / upr;
      unit_raw<In, U> v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) v[j] = tile[(rq * 4 + j < rows_here ? rq * 4 + j : 0) * upr + uc];
      std::uint32_t q[4][U / 4];
      encode_quad<S, T, In, U>(v, sc, seed, static_cast<std::uint64_t>((b * M + r0 + rq * 4) * N + c0 + uc * U), N, q);
      put_quad<U>(out_tile, rq, uc, q);
    }
    backend::block_sync();

    // 5. whole 16-byte pieces of output lines to device memory
    store_byte_tile<S>(out_tile, out, b, r0, c0, rows_here, cols_here, tid, threads);
    backend::block_sync();  // the byte tile and the input tile are reused by the next task
    Cluster::wait();        // every peer has read this CTA's cta_amax: it may be rewritten (or freed)
  }
}

}  // namespace fp8q::detail::gpu
