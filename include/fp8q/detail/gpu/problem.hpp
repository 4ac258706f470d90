// fp8q — what every GPU family sees of one call (`problem`), the view facts its accepts() tests,
// and the compile-time tile fitting of the families whose tiles live in static shared memory.
// A family (families/*.hpp) is a class template F<S, T, In> exposing, in one place:
//   name               the gpu_path that forces it
//   opt_in             true: never chosen automatically, only by name
//   device_dependent   true: accepts() also reads what a size query (p.dev null) does not
//                      see (the device, the call's groups or workspace); the query then assumes
//                      the call is taken
//   R                  its resolved tuning (the policy: family defaults over resolve_tuning)
//   plan               what accepts() found out and enqueue() needs (empty for most)
//   accepts(p, plan*)  whether it runs p correctly (views, alignment, arch)
//   preferred(p)       whether the automatic walk takes it when it accepts (a speed rule)
//   workspace(in)      the device workspace bytes it needs (its workspace layout declared once,
//                      the same struct carves the buffer in enqueue)
//   enqueue(p, plan, workspace, stream)
#pragma once

#include <cstddef>
#include <cstdint>

#include "fp8q/spec.hpp"
#include "fp8q/tuning.hpp"
#include "fp8q/views.hpp"

namespace fp8q::detail::gpu {

/// One call as the families see it.
template <spec S, class In>
struct problem {
  matrix_view<const In> in;  // [batch, rows, cols] In, any layout, device memory
  quantized<S> out;          // data [batch, rows, cols] FP8 + scales per S, device memory
  std::uint64_t seed = 0;    // stochastic rounding
  const backend::device_facts* dev = nullptr;  // the current device; null in a size query
  group_offsets groups{};                      // group granularities: ends in device memory
  std::uint32_t* error_word = nullptr;         // [1] device, optional: bad offsets seen
  std::size_t workspace_bytes = 0;             // what the call brings (0 without a workspace)
};

inline std::size_t round_up_256(std::size_t n) { return (n + 255) / 256 * 256; }

constexpr tuning with_threads(tuning t, int threads) {
  t.threads = static_cast<std::int16_t>(threads);
  return t;
}

constexpr tuning with_tile(tuning t, int rows, int cols) {
  t.tile_rows = static_cast<std::int16_t>(rows);
  t.tile_cols = static_cast<std::int16_t>(cols);
  return t;
}

/// Units in flight per thread: the tuning's, else the family's default.
constexpr int units_or(const tuning& t, int family_default) {
  return t.units != 0 ? t.units : family_default;
}

template <class T>
bool aligned16(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// Rows of a view start on 16-byte boundaries (base aligned, ld a multiple of 16 bytes).
template <class T>
bool lines_aligned16(const matrix_view<T>& v) {
  return aligned16(v.data) && (v.ld * static_cast<std::int64_t>(sizeof(T))) % 16 == 0 &&
         (v.batch == 1 || (v.batch_stride * static_cast<std::int64_t>(sizeof(T))) % 16 == 0);
}

// A batch item is one dense array in the view's order (what the flat tensorwise paths need).
template <class T>
bool dense(const matrix_view<T>& v) {
  const std::int64_t fast = v.order == layout::row_major ? v.cols : v.rows;
  return v.ld == fast && (v.batch == 1 || v.batch_stride == v.rows * v.cols);
}

// Whether the flat (tensorwise) kernels may take 16-byte units: every batch item of the input
// and of the output starts on a 16-byte boundary.
template <class In, class Out>
bool flat_vectors(const matrix_view<const In>& in, const matrix_view<Out>& out) {
  return aligned16(in.data) && aligned16(out.data) &&
         (in.batch == 1 || ((in.batch_stride * static_cast<std::int64_t>(sizeof(In))) % 16 == 0 &&
                            (out.batch_stride * static_cast<std::int64_t>(sizeof(Out))) % 16 == 0));
}

// Row-major input whose lines are 16-byte aligned and a whole number of units, output lines
// 16-byte aligned: what the streaming colwise families (relay, two passes, clusters) read.
template <spec S, class In>
bool streams_columns(const problem<S, In>& p) {
  return p.in.order == layout::row_major && lines_aligned16(p.in) && lines_aligned16(p.out.data) &&
         p.in.cols % unit_elems<In> == 0;
}

/// Workspace of the families whose amax launch and cast launch meet in device memory: one word
/// (f32 bits of the amax) per scaling group, zeroed by the family before its amax launch.
struct amax_workspace {
  std::size_t bytes = 0;
  static amax_workspace of(std::int64_t groups) {
    return {round_up_256(static_cast<std::size_t>(groups > 0 ? groups : 0) * 4)};
  }
  std::uint32_t* carve(void* workspace) const { return static_cast<std::uint32_t*>(workspace); }  // [groups]
};

constexpr tuning halve_tile(tuning t) {
  if (t.tile_rows >= t.tile_cols) t.tile_rows = static_cast<std::int16_t>(t.tile_rows / 2);
  else t.tile_cols = static_cast<std::int16_t>(t.tile_cols / 2);
  return t;
}

/// Kernels keep their tiles in static shared memory (at most 48 KiB on every target): a tuning's
/// tile whose Shared<T> (the kernel's own shared-memory struct) exceeds 40 KiB is halved, larger
/// side first, for that family only.
template <tuning T, template <tuning> class Shared>
constexpr tuning fit_tile() {
  if constexpr (sizeof(Shared<T>) <= 40 * 1024) return T;
  else return fit_tile<halve_tile(T), Shared>();
}

}  // namespace fp8q::detail::gpu
