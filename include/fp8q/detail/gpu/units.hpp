// fp8q — device primitives every family shares beside tile.hpp's loads and encoders: scale
// stores, the logical element index (index_map.hpp's, the host's definition), the scaling
// units of a spec as the GPU sees them (index_map.hpp's axis kinds), 16-byte units with K
// loads in flight, block order reversal, and the partial -> shared -> one value per group fold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "fp8q/detail/gpu/tile.hpp"
#include "fp8q/detail/index_map.hpp"
#include "fp8q/views.hpp"

namespace fp8q::detail::gpu {

template <spec S>
__device__ inline void write_scales(const quantized<S>& out, std::int64_t b, std::int64_t r,
                                    std::int64_t c, float s) {
  if constexpr (stores_multiplier(S)) out.scale(b, r, c) = s;
  if constexpr (stores_inverse(S)) out.inverse(b, r, c) = inverse_scale(s);
}

/// The logical index keying stochastic rounding of element (b, r, c) of an M x N matrix.
__device__ inline std::uint64_t logical_index(std::int64_t b, std::int64_t r, std::int64_t c,
                                              std::int64_t M, std::int64_t N) {
  return element_index(b, r, c, M, N);
}

/// The same for flat offset `off` of batch item b, a dense M x N array in the view's order.
__device__ inline std::uint64_t flat_index(std::int64_t b, std::int64_t off, std::int64_t M,
                                           std::int64_t N, bool col_major) {
  if (!col_major) return element_index(b, 0, off, M, N);
  return element_index(b, off % M, off / M, M, N);
}

/// Which elements of a batch item share a scale, for the GPU families: index_map.hpp's map of
/// spec S. The families take whole axes and uniform axes of one element (tensor, row, col).
template <spec S>
struct unit_axes {
  static constexpr scale_map map = make_scale_map(S, 1, 1, nullptr, 0);
  static constexpr bool rows_whole = map.rows.kind == axis_kind::whole;
  static constexpr bool cols_whole = map.cols.kind == axis_kind::whole;
  static_assert((rows_whole || (map.rows.kind == axis_kind::uniform && map.rows.size == 1)) &&
                    (cols_whole || (map.cols.kind == axis_kind::uniform && map.cols.size == 1)),
                "fp8q: the GPU families take whole axes and uniform axes of one element");
  static constexpr bool whole = rows_whole && cols_whole;      ///< one group per batch item
  static constexpr bool per_row = !rows_whole && cols_whole;   ///< group = (batch, row)
  static constexpr bool per_col = rows_whole && !cols_whole;   ///< group = (batch, col)
  /// Scaling groups of a batch of `batch` rows x cols matrices.
  static constexpr std::int64_t groups(std::int64_t batch, std::int64_t rows, std::int64_t cols) {
    const scale_map m = make_scale_map(S, rows, cols, nullptr, 0);
    return batch * m.rows.count() * m.cols.count();
  }
};

// Running amax (f32 bits) over one unit.
template <class In, int U>
__device__ inline std::uint32_t unit_amax(const unit_raw<In, U>& r, std::uint32_t amax) {
  float x[U];
  widen_unit<In, U>(r, x);
#pragma unroll
  for (int k = 0; k < U; ++k) amax = amax > abs_bits(x[k]) ? amax : abs_bits(x[k]);
  return amax;
}

// Running maximum of the magnitudes of a 16-byte unit of 2-byte inputs (bf16, f16) as raw
// 16-bit patterns, two per word (fast::max_u16x2); amax16_bits turns it into f32 magnitude bits.
__device__ inline std::uint32_t unit_amax16(const u32x4& r, std::uint32_t m) {
  constexpr std::uint32_t magnitude = 0x7fff7fffu;
  m = fast::max_u16x2(m, r.x & magnitude);
  m = fast::max_u16x2(m, r.y & magnitude);
  m = fast::max_u16x2(m, r.z & magnitude);
  return fast::max_u16x2(m, r.w & magnitude);
}

// f32 magnitude bits of the larger half of a unit_amax16 maximum: the same as unit_amax's over
// the same elements (widening is non-decreasing in the magnitude bits, NaNs above Inf; a NaN
// amax only matters as a NaN).
template <class In>
__device__ inline std::uint32_t amax16_bits(std::uint32_t m) {
  static_assert(sizeof(In) == 2, "2-byte inputs");
  const std::uint32_t lo = m & 0xffffu, hi = m >> 16;
  return abs_bits(to_float(In{static_cast<std::uint16_t>(lo > hi ? lo : hi)}));
}

// Two 2-byte columns' running maxima in one word: each half's magnitude is the larger of the
// halves' magnitudes, a NaN where either is a NaN; its sign bit is undefined. On sm_90 one
// max.NaN.xorsign.abs (a float maximum of magnitudes; its NaN is the canonical one, and an amax
// only matters as a NaN: scale.hpp's canonical_amax), elsewhere a mask and fast::max_u16x2
// (magnitude bits order as the magnitudes do, NaNs above Inf).
template <class In>
__device__ inline std::uint32_t max_magnitude16x2(std::uint32_t m, std::uint32_t v) {
  static_assert(sizeof(In) == 2, "2-byte inputs");
#if FP8Q_DEVICE_PASS && FP8Q_TOOLCHAIN_CUDA && __CUDA_ARCH__ >= 900
  std::uint32_t r;
  if constexpr (std::is_same_v<In, bf16>) asm("max.NaN.xorsign.abs.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(m), "r"(v));
  else asm("max.NaN.xorsign.abs.f16x2 %0, %1, %2;" : "=r"(r) : "r"(m), "r"(v));
  return r;
#else
  return fast::max_u16x2(m, v & 0x7fff7fffu);
#endif
}

// Running column maxima of the units one thread folds: for 2-byte inputs two columns per word
// (max_magnitude16x2), for f32 one per word; bits() gives max_unit's f32 bits.
template <class In>
struct column_max {
  static constexpr int U = unit_elems<In>;
  std::uint32_t w[4] = {};
  __device__ void add(const u32x4& r) {
    const std::uint32_t v[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (sizeof(In) == 2) w[k] = max_magnitude16x2<In>(w[k], v[k]);
      else w[k] = w[k] > (v[k] & 0x7fffffffu) ? w[k] : (v[k] & 0x7fffffffu);
    }
  }
  __device__ void bits(std::uint32_t (&cmax)[U]) const {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (sizeof(In) == 2) {
        // abs_bits drops each half's sign bit, which max_magnitude16x2 leaves undefined
        cmax[2 * k] = abs_bits(to_float(In{static_cast<std::uint16_t>(w[k] & 0xffffu)}));
        cmax[2 * k + 1] = abs_bits(to_float(In{static_cast<std::uint16_t>(w[k] >> 16)}));
      } else {
        cmax[k] = w[k];
      }
    }
  }
};

// The sign words of a unit for encode_words_in_range: bit 7 of byte j of word k is the sign of
// element 4k + j, taken from the input's own bits (2-byte inputs: bytes 1 and 3 of each word).
template <class In, int U>
__device__ inline void unit_signs(const unit_raw<In, U>& r, std::uint32_t (&signs)[U / 4]) {
  static_assert(U == unit_elems<In> && U % 4 == 0, "16-byte units");
  if constexpr (sizeof(In) == 2) {
    signs[0] = fast::perm<1, 3, 5, 7>(r.y, r.x);
    signs[1] = fast::perm<1, 3, 5, 7>(r.w, r.z);
  } else {
    signs[0] = fast::gather_byte<3>(r.x, r.y, r.z, r.w);
  }
}

// Unit r widened and scaled: y[k] = r[k] * s, or r[k] * s[k] where s holds a scale per column
// (Scale: float or float[U]).
template <class In, int U, class Scale>
__device__ inline void scale_unit(const unit_raw<In, U>& r, const Scale& s, float (&y)[U]) {
  widen_unit<In, U>(r, y);
#pragma unroll
  for (int k = 0; k < U; ++k) {
    if constexpr (std::is_array_v<Scale>) y[k] *= s[k];
    else y[k] *= s;
  }
}

// Scale and encode one unit of a group that passed in_range_group<S>(amax, s) (s >= +0, so x * s
// has the sign of x; Scale as scale_unit's) to U / 4 words: the same words as encode_unit_words,
// without the NaN and overflow handling.
template <spec S, tuning T, class In, int U, class Scale>
__device__ inline void encode_unit_words_in_range(const unit_raw<In, U>& r, const Scale& s, std::uint32_t (&w)[U / 4]) {
  float y[U];
  scale_unit<In, U>(r, s, y);
  std::uint32_t signs[U / 4];
  unit_signs<In, U>(r, signs);
  encode_words_in_range<S, T>(y, signs, w);
}

// cast_unit for a group that passed in_range_group<S>(amax, s): the same bytes, without the NaN
// and overflow handling. Stores only when `store` (the condition on the store alone, so that it
// is one predicate, not a branch around the unit).
template <spec S, tuning T, class In, int U>
__device__ inline void cast_unit_in_range(const unit_raw<In, U>& r, float s, std::uint8_t* dst, bool store) {
  std::uint32_t w[U / 4];
  encode_unit_words_in_range<S, T, In, U>(r, s, w);
  if (store) store_words<U / 4>(dst, w);
}

// f(std::true_type{}) where the in-range encoder applies to a group (S takes it, U is a whole
// 16-byte unit, and in_range() holds: one test, the same in every thread of the group), else
// f(std::false_type{}). in_range() is called only where S takes the in-range encoder.
template <spec S, class In, int U, class Cond, class F>
__device__ inline void with_in_range(Cond in_range, F&& f) {
  if constexpr (in_range_capable<S>() && U == unit_elems<In>) {
    if (in_range()) {
      f(std::true_type{});
      return;
    }
  }
  f(std::false_type{});
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

// Scale and encode one unit of whole words (U a multiple of 4; Scale as scale_unit's): w, U / 4
// little-endian words of codes (tile.hpp's encode_words packs four at a time); index(k): element
// k's logical index.
template <spec S, tuning T, class In, int U, class Scale, class IndexFn>
__device__ inline void encode_unit_words(const unit_raw<In, U>& r, const Scale& s, std::uint32_t (&w)[U / 4],
                                         std::uint64_t seed, IndexFn index) {
  static_assert(U % 4 == 0, "whole words");
  float y[U];
  scale_unit<In, U>(r, s, y);
  encode_words<S, T>(y, w, seed, index);
}

// Scale, encode and store one unit: dst [U] FP8 bytes; index(k): element k's logical index.
template <spec S, tuning T, class In, int U, class IndexFn>
__device__ inline void cast_unit(const unit_raw<In, U>& r, float s, std::uint8_t* dst,
                                 std::uint64_t seed, IndexFn index) {
  if constexpr (U % 4 == 0) {
    std::uint32_t w[U / 4];
    encode_unit_words<S, T, In, U>(r, s, w, seed, index);
    store_words<U / 4>(dst, w);
  } else {
    float y[U];
    widen_unit<In, U>(r, y);
#pragma unroll
    for (int k = 0; k < U; ++k) y[k] *= s;
    std::uint8_t q[U];
    encode_n<S, T>(y, q, seed, index);
    store_bytes<U>(dst, q);
  }
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

/// Per-group partial maxima (f32 bits) of one block in shared memory, one row per contributor
/// (a wave, or a slice of threads), folded to one value per group: the step between a block's
/// running maxima and its one atomic (or one shared value) per group.
/// part: [rows][pitch] f32 bits, shared memory.
struct group_partials {
  std::uint32_t* part;
  int pitch;
  __device__ void put(int row, int group, std::uint32_t v) const { part[row * pitch + group] = v; }
  /// Max of group `group` over rows 0 .. rows - 1 (after a block barrier).
  __device__ std::uint32_t fold(int group, int rows) const {
    std::uint32_t m = 0;
    for (int k = 0; k < rows; ++k) m = m > part[k * pitch + group] ? m : part[k * pitch + group];
    return m;
  }
};

/// A lane's U column maxima, each maxed over the lanes of its wave that share its unit column
/// (lane % Upr), put in row `row` of gp by the first Upr lanes (groups lane * U .. + U - 1).
template <int Upr, int U>
__device__ inline void put_unit_columns(const group_partials& gp, std::uint32_t (&cmax)[U],
                                        int lane, int row) {
#pragma unroll
  for (int e = 0; e < U; ++e) cmax[e] = backend::lanes_max<Upr>(cmax[e]);
  if (lane < Upr) {
#pragma unroll
    for (int e = 0; e < U; ++e) gp.put(row, lane * U + e, cmax[e]);
  }
}

}  // namespace fp8q::detail::gpu
