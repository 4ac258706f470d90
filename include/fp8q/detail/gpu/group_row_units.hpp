// fp8q — the per-group rowwise pieces of group_row_fused (families/group_row_fused.hpp): one
// block's view of the groups in shared memory, what a thread knows of each unit it keeps
// (unit_place), and the per-unit fold and cast: the lean path chosen once per wave and the rare
// paths out of line. Groups along the columns from device offsets (device_groups.hpp).
#pragma once

#include <cstdint>

#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

/// The most groups group_row_fused serves: its shared memory holds seven words per group
/// (28 KiB at 1024), room for several blocks per multiprocessor.
inline constexpr int group_row_fused_max_groups = 1024;

/// A group's scale for this row, whether the in-range encoder applies to it (in_range_group),
/// and its output shift: one 16-byte shared load per unit in the cast.
struct alignas(16) group_cast {
  float scale;
  std::uint32_t in_range;
  std::int32_t shift;  ///< where the group's output column c goes minus c (0 unless padded)
  std::int32_t unused;
};

/// One block's view of the groups (static shared memory).
struct group_row_shared {
  std::int32_t end[group_row_fused_max_groups];        ///< clamped ends c_g (device_groups.hpp)
  std::int32_t out_begin[group_row_fused_max_groups];  ///< first output column of group g (padded)
  std::uint32_t amax[group_row_fused_max_groups];      ///< this row's maxima, f32 bits (setup: scan scratch)
  group_cast cast[group_row_fused_max_groups];         ///< this row's scales (setup: scan scratch)
};

/// The first group whose clamped end lies above column c: c's group, or G past the last end.
/// end: [G] clamped ends, shared memory.
__device__ inline int group_of_column(const std::int32_t* end, int G, int c) {
  int lo = 0;
  int hi = G;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (end[mid] > c) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/// Inclusive scan of a[0, n) under op by the whole block of `threads` threads (Hillis-Steele,
/// b[0, n) as the other buffer); a is complete (after a barrier) on entry, the result (a or b)
/// on return.
template <class Op>
__device__ std::int32_t* block_scan(std::int32_t* a, std::int32_t* b, int n, int threads, Op op) {
  const int tid = static_cast<int>(threadIdx.x);
  for (int off = 1; off < n; off <<= 1) {
    for (int g = tid; g < n; g += threads) b[g] = g >= off ? op(a[g - off], a[g]) : a[g];
    backend::block_sync();
    std::int32_t* t = a;
    a = b;
    b = t;
  }
  return a;
}

/// What a thread knows of one of its units, packed in one word: the group g of its first
/// element (G: past the last end; G + 1: no such unit); where it straddles exactly one
/// boundary, into the next nonempty group h (or past the last end; h - g up to 7, empty groups
/// between them), the column of that boundary within the unit (split, 1 .. U - 1; 0 where the
/// unit lies in one group) and h; whether it straddles more (groups of fewer than U columns
/// at the boundary, or more than 6 empty groups there: element by element);
/// whether its lane ends its group's run in the wave; for each scan step k whether the lane
/// 2^k below holds a unit of the same group; whether every lane of the wave holds a whole
/// unit of this one group (`uniform`: one wave-wide max, no scan); and whether every lane of
/// the wave holds a unit of at most two groups below G (`fast`: the kernel's lean path, chosen
/// for the whole wave at once; the rest, rare, takes the general path after the lean loops; the
/// cast also sends there whole units of a padded group off the output's unit grid).
struct unit_place {
  static constexpr std::uint32_t group_mask = 0xfffu;   // up to G + 1
  static_assert(group_row_fused_max_groups + 1 <= group_mask);
  // Set by the kernel, not by of(): fast, and no lane's whole unit off the output's unit grid.
  static constexpr std::uint32_t fast_cast = 1u << 12;
  static constexpr int split_shift = 16;               // 3 bits
  static constexpr std::uint32_t many = 1u << 19;      // more than one boundary, or an empty group at it
  static constexpr std::uint32_t run_end = 1u << 20;
  static constexpr int steps_shift = 21;               // up to 6 bits (64-lane waves)
  static constexpr std::uint32_t uniform = 1u << 27;
  static constexpr std::uint32_t fast = 1u << 28;
  static constexpr int next_shift = 29;                // 3 bits: the group past the split is g + 1 .. g + 7

  /// Unit u of `units` in a row, at lane `lane` of a wave of `wave` lanes (every lane of the
  /// wave calls this together: it exchanges group ids across lanes).
  template <int U>
  __device__ static std::uint32_t of(const group_row_shared& s, int G, int u, int units, int lane, int wave) {
    static_assert(U <= 8, "split takes 3 bits");
    const bool valid = u < units;
    const int c0 = u * U;
    const int g = valid ? group_of_column(s.end, G, c0) : G + 1;
    std::uint32_t w = static_cast<std::uint32_t>(g);
    if (valid && g < G) {
      const int last = group_of_column(s.end, G, c0 + U - 1);
      // one boundary, possibly with empty groups at it: the unit's elements lie in g and in
      // `last` (or past the last end), split at g's end
      if (last != g && s.end[last - 1] == s.end[g] && last - g <= 7)
        w |= static_cast<std::uint32_t>(s.end[g] - c0) << split_shift | static_cast<std::uint32_t>(last - g) << next_shift;
      else if (last != g) w |= many;
    }
    const int next = u + 1 < units ? group_of_column(s.end, G, c0 + U) : G + 2;
    if (lane == wave - 1 || next != g) w |= run_end;
    for (int k = 0; (1 << k) < wave; ++k)
      if (backend::lanes_up(static_cast<std::uint32_t>(g), 1 << k) == static_cast<std::uint32_t>(g))
        w |= 1u << (steps_shift + k);
    // uniform: the largest and the smallest key over the wave agree, a lane's key being its
    // group where its unit lies whole in one group and a value of its own otherwise
    const bool whole = g < G && (w & ((7u << split_shift) | many)) == 0;
    const std::uint32_t key = whole ? static_cast<std::uint32_t>(g) : 0x10000u + static_cast<std::uint32_t>(lane);
    if (backend::lanes_max<1>(key) == ~backend::lanes_max<1>(~key)) w |= uniform;
    // fast: no lane of the wave fails (a max over the wave of a 0/1 flag)
    const bool lean = g < G && !(w & many);
    if (backend::lanes_max<1>(lean ? 0u : 1u) == 0u) w |= fast;
    return w;
  }
  __device__ static int group(std::uint32_t w) { return static_cast<int>(w & group_mask); }
  __device__ static int split(std::uint32_t w) { return static_cast<int>((w >> split_shift) & 7u); }
  /// The group of the part of a split unit past its boundary (G or more: past the last end).
  __device__ static int next(std::uint32_t w) { return group(w) + static_cast<int>(w >> next_shift); }
};

/// Group g's first input column (its predecessor's clamped end).
__device__ inline int group_begin(const group_row_shared& s, int g) { return g > 0 ? s.end[g - 1] : 0; }

/// Where group g's output column c goes minus c (0 unless the output is padded).
__device__ inline int group_shift(const group_row_shared& s, int g, bool padded) {
  return padded ? s.out_begin[g] - group_begin(s, g) : 0;
}

/// v maxed over the lanes of the wave whose units start in this lane's group (every lane of the
/// wave calls it): one wave-wide max where the wave holds one group (`uniform`, the same in every
/// lane), else a segmented scan over lane shuffles (the last lane of each run gets its group's
/// max; run_end marks it). On sm_90 the scan measured within 2% of match.any + redux.sync at
/// G = 16 and 64 and 10% faster at G = 256, where the reduction's lane masks differ across the
/// wave and the compiler serialises it (docs/design.md, "Per-group rowwise: what a profile
/// showed").
__device__ inline std::uint32_t wave_group_max(std::uint32_t v, std::uint32_t place, int wave) {
  if (place & unit_place::uniform) return backend::wave_max(v);
  for (int k = 0; (1 << k) < wave; ++k) {
    const std::uint32_t w = backend::lanes_up(v, 1 << k);
    if ((place >> (unit_place::steps_shift + k)) & 1u) v = v > w ? v : w;
  }
  return v;
}

/// The 16-bit lanes of a unit of 2-byte elements below element `split` (0 .. 8), as masks of
/// its four words: the part of a unit that lies in the group before a boundary.
__device__ inline u32x4 below_mask16(int split) {
  auto word = [&](int j) {
    const int bits = 16 * split - 32 * j;
    return bits >= 32 ? 0xffffffffu : bits <= 0 ? 0u : (1u << bits) - 1u;
  };
  return u32x4{word(0), word(1), word(2), word(3)};
}

/// The rare unit whose columns cross an empty group or more than one boundary: its elements
/// past g's end go straight to their own groups' maxima; returns the max of the part in g.
/// Out of line, so that the unrolled loops over a thread's units stay small ([[gnu::noinline]]:
/// HIP's __noinline__ is an empty macro, and inlined, the rare paths made gfx942 spill).
template <class In, int U>
[[gnu::noinline]] __device__ std::uint32_t fold_many_unit(group_row_shared& s, int G, unit_raw<In, U> raw, int g, int c0) {
  float x[U];
  widen_unit<In, U>(raw, x);
  std::uint32_t v = 0;
  int h = g;
#pragma unroll
  for (int k = 0; k < U; ++k) {
    while (h < G && s.end[h] <= c0 + k) ++h;
    const std::uint32_t a = abs_bits(x[k]);
    if (h == g) v = v > a ? v : a;
    else if (h < G) backend::shared_max(&s.amax[h], a);
  }
  return v;
}

/// Fold one unit (first column c0) into its groups' maxima across the wave (every lane of the
/// wave calls this together), then one shared atomic per run of lanes of one group: a uniform
/// wave takes one wave-wide max; otherwise the lanes of a group are reduced by a segmented scan
/// across the wave.
/// 2-byte inputs take the maxima of their 16-bit magnitudes, two per instruction.
template <class In, int U>
__device__ inline void fold_unit_inline(group_row_shared& s, int G, unit_raw<In, U> raw, std::uint32_t place,
                                       int c0, int wave) {
  constexpr bool packed = sizeof(In) == 2 && U == unit_elems<In>;
  const int g = unit_place::group(place);
  const int split = unit_place::split(place);  // the part from split on is group h's
  const int h = unit_place::next(place);
  std::uint32_t v = 0;
  if (g < G) {
    if (!(place & ((7u << unit_place::split_shift) | unit_place::many))) {  // the whole unit is g's
      if constexpr (packed) v = amax16_bits<In>(unit_amax16(raw, 0));
      else v = unit_amax<In, U>(raw, 0);
    } else if (!(place & unit_place::many)) {
      std::uint32_t v2 = 0;
      if constexpr (packed) {
        const u32x4 m = below_mask16(split);
        v = amax16_bits<In>(unit_amax16(u32x4{raw.x & m.x, raw.y & m.y, raw.z & m.z, raw.w & m.w}, 0));
        v2 = amax16_bits<In>(unit_amax16(u32x4{raw.x & ~m.x, raw.y & ~m.y, raw.z & ~m.z, raw.w & ~m.w}, 0));
      } else {
        float x[U];
        widen_unit<In, U>(raw, x);
#pragma unroll
        for (int k = 0; k < U; ++k) {
          const std::uint32_t a = abs_bits(x[k]);
          if (k < split) v = v > a ? v : a;
          else v2 = v2 > a ? v2 : a;
        }
      }
      if (h < G) backend::shared_max(&s.amax[h], v2);
    } else {
      v = fold_many_unit<In, U>(s, G, raw, g, c0);
    }
  }
  v = wave_group_max(v, place, wave);
  if ((place & unit_place::run_end) && g < G) backend::shared_max(&s.amax[g], v);
}

/// fold_unit_inline out of line: the call site of the largest fit's loop over the rest of a long
/// row.
template <class In, int U>
[[gnu::noinline]] __device__ void fold_unit(group_row_shared& s, int G, unit_raw<In, U> raw, std::uint32_t place,
                                       int c0, int wave) {
  fold_unit_inline<In, U>(s, G, raw, place, c0, wave);
}

/// Byte k of little-endian words w.
template <int W>
__device__ inline std::uint8_t word_byte(const std::uint32_t (&w)[W], int k) {
  return static_cast<std::uint8_t>(w[k / 4] >> (8 * (k % 4)));
}

/// The words of one unit's scaled values y (each element times its own group's scale), by the
/// in-range encoder where `in_range` holds for every group the unit touches (signs from the
/// input's own bits), else by encode_words; index0: the logical index of the unit's first element.
/// J: how a hardware word is joined (tile.hpp; a register-allocation choice, the same bytes).
template <spec S, tuning T, class In, int U, hw_join J = hw_join::converter>
__device__ inline void encode_scaled_unit(const unit_raw<In, U>& raw, const float (&y)[U], bool in_range,
                                          std::uint32_t (&w)[U / 4], std::uint64_t seed, std::uint64_t index0) {
  constexpr int W = U / 4;
  with_in_range<S, In, U>([&] { return in_range; }, [&](auto fits) {
    if constexpr (decltype(fits)::value) {
      std::uint32_t signs[W];
      unit_signs<In, U>(raw, signs);
      encode_words_in_range<S, T, J>(y, signs, w);
    } else {
      encode_words<S, T, J>(y, w, seed, [&](int k) { return index0 + k; });
    }
  });
}

/// The rare unit that crosses an empty group or several boundaries, element by element (out of
/// line, as fold_many_unit). dst: [cols'] FP8 bytes of the row.
template <spec S, class In, int U>
[[gnu::noinline]] __device__ void cast_many_unit(const group_row_shared& s, int G, bool padded, unit_raw<In, U> raw,
                                            int g, int c0, std::uint8_t* dst, std::uint64_t seed,
                                            std::uint64_t row_index) {
  float x[U];
  widen_unit<In, U>(raw, x);
  int h = g;
#pragma unroll
  for (int k = 0; k < U; ++k) {
    const int c = c0 + k;
    while (h < G && s.end[h] <= c) ++h;
    if (h < G) dst[c + group_shift(s, h, padded)] = encode_scaled<S>(x[k] * s.cast[h].scale, seed, row_index + c);
  }
}

/// Cast one unit (first column c0) with its groups' scales into the output row: every element
/// is multiplied by its own group's scale (a unit that straddles one boundary selects the scale
/// per element), the unit is encoded once, by the in-range encoder where every group it touches
/// passed in_range_group, and stored as one 8-byte (bf16/f16) or 4-byte (f32) word store, byte
/// by byte only where a padded output moves a group off the unit grid or the unit ends the last
/// group. dst: [cols'] FP8 bytes of the row (U-byte aligned).
template <spec S, tuning T, class In, int U>
__device__ inline void cast_grouped_unit_inline(const group_row_shared& s, int G, bool padded, unit_raw<In, U> raw,
                                               std::uint32_t place, int c0, std::uint8_t* dst,
                                               std::uint64_t seed, std::uint64_t row_index) {
  constexpr int W = U / 4;
  const int g = unit_place::group(place);
  if (g >= G) return;  // past the last end: not written
  if (place & unit_place::many) {
    cast_many_unit<S, In, U>(s, G, padded, raw, g, c0, dst, seed, row_index);
    return;
  }
  const int split = unit_place::split(place);  // 0: the whole unit is g's
  const int h = unit_place::next(place);
  const bool second = split != 0 && h < G;  // else any part past g lies past the last end: not written
  const group_cast gc = s.cast[g];
  float y[U];
  widen_unit<In, U>(raw, y);
  bool in_range = gc.in_range != 0;
  if (split == 0) {
#pragma unroll
    for (int k = 0; k < U; ++k) y[k] *= gc.scale;
  } else {
    const group_cast gc2 = second ? s.cast[h] : group_cast{0.0f, 1u, 0, 0};
    in_range = in_range && gc2.in_range != 0;
#pragma unroll
    for (int k = 0; k < U; ++k) y[k] *= k < split ? gc.scale : gc2.scale;
  }
  std::uint32_t w[W];
  encode_scaled_unit<S, T, In, U>(raw, y, in_range, w, seed, row_index + c0);
  const int at = c0 + gc.shift;
  if (split == 0 || (!padded && second)) {
    if (at % U == 0) store_words<W>(dst + at, w);
    else store_words_unaligned<W>(dst + at, w);  // a padded group shifted off the unit grid
    return;
  }
  // a unit across a boundary of a padded output, or across the last end
  const int at2 = c0 + (second ? group_shift(s, h, padded) : 0);
#pragma unroll
  for (int k = 0; k < U; ++k) {
    if (split == 0 || k < split) dst[at + k] = word_byte(w, k);
    else if (second) dst[at2 + k] = word_byte(w, k);
  }
}

/// cast_grouped_unit_inline out of line (as fold_unit).
template <spec S, tuning T, class In, int U>
[[gnu::noinline]] __device__ void cast_grouped_unit(const group_row_shared& s, int G, bool padded, unit_raw<In, U> raw,
                                               std::uint32_t place, int c0, std::uint8_t* dst,
                                               std::uint64_t seed, std::uint64_t row_index) {
  cast_grouped_unit_inline<S, T, In, U>(s, G, padded, raw, place, c0, dst, seed, row_index);
}

/// fold_unit for a wave whose every unit is `fast` (unit_place): its part in g (all of it, or
/// the part below a boundary, whose rest goes to the next group by one atomic of the lane that
/// holds it), then the wave's maxima per group and one shared atomic per run of lanes.
template <class In, int U>
__device__ inline void fold_fast(group_row_shared& s, int G, const unit_raw<In, U>& raw, std::uint32_t place,
                                 int wave) {
  constexpr bool packed = sizeof(In) == 2 && U == unit_elems<In>;
  const int g = unit_place::group(place);
  const int split = unit_place::split(place);
  std::uint32_t v = 0;
  if constexpr (packed) {
    u32x4 r = raw;
    if (split != 0) {  // few lanes: the part past the boundary is the next group's
      const u32x4 m = below_mask16(split);
      const std::uint32_t v2 = amax16_bits<In>(unit_amax16(u32x4{raw.x & ~m.x, raw.y & ~m.y, raw.z & ~m.z, raw.w & ~m.w}, 0));
      const int h = unit_place::next(place);
      if (h < G) backend::shared_max(&s.amax[h], v2);
      r = u32x4{raw.x & m.x, raw.y & m.y, raw.z & m.z, raw.w & m.w};
    }
    v = amax16_bits<In>(unit_amax16(r, 0));
  } else {
    float x[U];
    widen_unit<In, U>(raw, x);
    const int below = split != 0 ? split : U;
    std::uint32_t v2 = 0;
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const std::uint32_t a = abs_bits(x[k]);
      if (k < below) v = v > a ? v : a;
      else v2 = v2 > a ? v2 : a;
    }
    if (split != 0 && unit_place::next(place) < G) backend::shared_max(&s.amax[unit_place::next(place)], v2);
  }
  v = wave_group_max(v, place, wave);
  if (place & unit_place::run_end) backend::shared_max(&s.amax[g], v);
}

/// cast_grouped_unit for a `fast` unit: its group's scale (and the next group's past a
/// boundary), one encode of the unit, one word store on the output's unit grid; a unit across a
/// boundary of a padded output, or across the last end, stores its bytes one by one.
/// dst: [cols'] FP8 bytes of the row (U-byte aligned).
template <spec S, tuning T, class In, int U>
__device__ inline void cast_fast(const group_row_shared& s, int G, bool padded, const unit_raw<In, U>& raw,
                                 std::uint32_t place, int c0, std::uint8_t* dst, std::uint64_t seed,
                                 std::uint64_t row_index) {
  constexpr int W = U / 4;
  const int g = unit_place::group(place);
  const int split = unit_place::split(place);
  const group_cast gc = s.cast[g];
  float y[U];
  widen_unit<In, U>(raw, y);
#pragma unroll
  for (int k = 0; k < U; ++k) y[k] *= gc.scale;
  bool in_range = gc.in_range != 0;
  const int h = unit_place::next(place);
  const bool second = split != 0 && h < G;
  if (split != 0) {  // the elements from split on take h's scale (0 past the last end: not written)
    const group_cast gc2 = second ? s.cast[h] : group_cast{0.0f, 1u, 0, 0};
    in_range = in_range && gc2.in_range != 0;
    float x[U];
    widen_unit<In, U>(raw, x);
#pragma unroll
    for (int k = 0; k < U; ++k) y[k] = k < split ? y[k] : x[k] * gc2.scale;
  }
  std::uint32_t w[W];
  encode_scaled_unit<S, T, In, U>(raw, y, in_range, w, seed, row_index + c0);
  const int at = c0 + gc.shift;
  if (split == 0 || (!padded && second)) {
    store_words<W>(dst + at, w);
  } else {
    const int at2 = c0 + (second ? s.cast[h].shift : 0);
#pragma unroll
    for (int k = 0; k < U; ++k) {
      if (k < split) dst[at + k] = word_byte(w, k);
      else if (second) dst[at2 + k] = word_byte(w, k);
    }
  }
}

}  // namespace fp8q::detail::gpu
