// fp8q — GPU entry points (CUDA or HIP, whichever compiler includes this). Each one validates
// everything it can on the host, then enqueues work on args.stream and returns: no host
// synchronization ever, so every call can be captured in a CUDA/HIP graph. Which kernel family
// runs is decided by detail/gpu/dispatch.hpp's path lists (or forced by tuning::path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "fp8q/config.hpp"

#if !(FP8Q_TOOLCHAIN_CUDA || FP8Q_TOOLCHAIN_HIP || FP8Q_TOOLCHAIN_EMU)
#error "fp8q/gpu/quantize.hpp needs nvcc (fp8q::cuda) or hipcc/clang -x hip (fp8q::hip)"
#endif

#include "fp8q/device.hpp"
#include "fp8q/detail/gpu/dispatch.hpp"
#include "fp8q/spec.hpp"
#include "fp8q/status.hpp"
#include "fp8q/tuning.hpp"
#include "fp8q/validate.hpp"
#include "fp8q/views.hpp"

namespace fp8q {

/// Everything optional of a GPU call, by name:
///   fp8q::quantize<S>(in, out, {.stream = s, .workspace = ws, .workspace_bytes = n});
struct gpu_args {
  gpu_stream stream = nullptr;      ///< where the work is enqueued (default stream when null)
  void* workspace = nullptr;        ///< [workspace_bytes] device memory; may be null when
                                    ///< workspace_size<S>(in, out) is 0
  std::size_t workspace_bytes = 0;  ///< at least workspace_size<S>(in, out)
  std::uint64_t seed = 0;           ///< stochastic rounding (quantize_args::seed)
  group_offsets groups{};           ///< group granularities (quantize_args::groups): ends (and
                                    ///< padded_ends) in device memory, read only on the device
  std::uint32_t* error_word = nullptr;  ///< [1] device, optional: the grouped kernels OR in bit 1
                                        ///< for an offset outside [0, extent], bit 2 for one below
                                        ///< its predecessor (then clamped: docs/semantics.md)
};

namespace detail::gpu {

inline quantize_args to_quantize_args(const gpu_args& a) { return {a.groups, a.seed}; }

// The workspace bytes a call brings (none without a pointer).
inline std::size_t workspace_brought(const gpu_args& a) { return a.workspace != nullptr ? a.workspace_bytes : 0; }

// The current device's facts, and T checked against them.
template <tuning T>
status current_device(const backend::device_facts** dev) {
  if (const status st = backend::current_device(dev); st != status::success) return st;
  if (validate(T, (*dev)->traits()) != tuning_error::none) return status::bad_tuning;
  return status::success;
}

// The checks of the tensorwise calls that cast dense views of one layout (quantize_with_scale,
// quantize_with_amax): the views, then the current device, then the layouts. On success *p is
// the launch's problem, with p->dev null when there is nothing to do (an empty input).
template <tuning T, spec S, class In>
status flat_tensor_problem(const matrix_view<const In>& in, const quantized<S>& out, const gpu_args& args,
                           problem<S, In>* p) {
  status st = validate_quantize(in, out, quantize_args{}, false);
  if (st != status::success || in.empty()) return st;
  const backend::device_facts* dev = nullptr;
  if ((st = current_device<T>(&dev)) != status::success) return st;
  *p = problem<S, In>{in, out, args.seed, dev};
  return flat_views(*p) ? status::success : status::bad_layout;
}

template <spec S>
constexpr void check_gpu_spec() {
  check_spec<S>();
  static_assert(gpu_supports<S>(), "fp8q: this granularity has no GPU kernel yet; use fp8q::host::quantize");
}

}  // namespace detail::gpu

/// Device workspace bytes quantize<S, T>(in, out, ...) needs (0 exactly when the family that
/// will run needs none, e.g. rowwise with row-major input and output). Asks no device.
/// Per-group colwise needs none but takes these bytes where the views allow the relay: a call
/// of one group that brings them runs it (docs/semantics.md, "Errors").
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] std::size_t workspace_size(matrix_view<const In> in, const quantized<S>& out) {
  detail::gpu::check_gpu_spec<S>();
  return detail::gpu::workspace_for<S, T, In>({in, out, 0, nullptr});
}

/// Device workspace bytes enough for quantize<S, T> from `in` into outputs of any layout.
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] std::size_t workspace_size(matrix_view<const In> in) {
  detail::gpu::check_gpu_spec<S>();
  return detail::gpu::workspace_any<S, T, In>(in);
}

/// Which family quantize<S, T>(in, out, ...) runs on the current device (*path), or the status
/// the call would return before launching anything (bad_layout: a forced path that does not
/// accept these views). Grouped specs pass the call's args (its groups shape the views).
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] status chosen_path(matrix_view<const In> in, const quantized<S>& out, gpu_path* path,
                                 const gpu_args& args = {}) {
  detail::gpu::check_gpu_spec<S>();
  if (path == nullptr) return status::null_pointer;
  status st = validate_quantize(in, out, detail::gpu::to_quantize_args(args), /*offsets_on_host=*/false);
  if (st != status::success) return st;
  const backend::device_facts* dev = nullptr;
  if ((st = detail::gpu::current_device<T>(&dev)) != status::success) return st;
  const detail::gpu::problem<S, In> p{in, out, 0, dev, args.groups, args.error_word, detail::gpu::workspace_brought(args)};
  const bool found = detail::gpu::choose<S, T>(p, [&](auto* f, const auto&) {
    *path = std::remove_pointer_t<decltype(f)>::name;
  });
  return found ? status::success : status::bad_layout;
}

/// Quantize on the GPU. Same bytes as fp8q::host::quantize<S> for every input, layout and
/// tuning T. in, out, the workspace and the scales are device memory.
/// Implemented on the GPU: tensorwise, rowwise, colwise, per-group rowwise and colwise (f32
/// scales), any layouts and batches.
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] status quantize(matrix_view<const In> in,  // [batch, rows, cols] In, any layout
                              const quantized<S>& out,   // data + scales, device memory
                              const gpu_args& args = {}) {
  detail::gpu::check_gpu_spec<S>();
  status st = validate_quantize(in, out, detail::gpu::to_quantize_args(args), /*offsets_on_host=*/false);
  if (st != status::success) return st;
  constexpr bool grouped = detail::is_grouped(S.granularity);
  if (in.empty() && !(grouped && args.groups.count > 0)) return status::success;
  const backend::device_facts* dev = nullptr;
  if ((st = detail::gpu::current_device<T>(&dev)) != status::success) return st;
  if (in.empty()) {  // grouped, no data: the padded ends and the offsets check still happen
    const std::int64_t extent = detail::grouped_extent(S.granularity, in.rows, in.cols);
    const unsigned blocks = static_cast<unsigned>((args.groups.count + 255) / 256);
    return backend::launch<detail::gpu::group_bookkeeping_kernel<>>(
        *dev, false, dim3(blocks), 256, args.stream, args.groups, args.error_word, extent);
  }
  const detail::gpu::problem<S, In> p{in, out, args.seed, dev, args.groups, args.error_word,
                                      detail::gpu::workspace_brought(args)};
  st = status::bad_layout;  // a forced path that does not accept the views
  detail::gpu::choose<S, T>(p, [&](auto* f, const auto& plan) {
    using F = std::remove_pointer_t<decltype(f)>;
    const std::size_t need = F::workspace(in);
    if (need > 0 && (args.workspace == nullptr || args.workspace_bytes < need)) {
      st = status::bad_workspace;
      return;
    }
    st = F::enqueue(p, plan, args.workspace, args.stream);
  });
  return st;
}

/// The same for a view of non-const elements.
template <spec S, tuning T = tuning{}, class In>
  requires(!std::is_const_v<In>)
[[nodiscard]] status quantize(matrix_view<In> in, const quantized<S>& out, const gpu_args& args = {}) {
  return quantize<S, T, In>(in.as_const(), out, args);
}

/// Per-group colwise of two tensors with the same rows and the same device offsets in one launch
/// (the MoE weight gradient: grad_output and input). Both are validated before anything is
/// launched; the bytes are host::quantize_dual's. Offsets are checked and padded ends written
/// once (they are the same for both). Runs group_col_tile where it accepts both tensors, else
/// group_colwise; T.path may force either (bad_layout where the tile does not accept them).
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] status quantize_dual(matrix_view<const In> in_a,  // [batch, M, N] In, any layout
                                   const quantized<S>& out_a,   // data + scales, device memory
                                   matrix_view<const In> in_b,  // [batch', M, N'] In, any layout
                                   const quantized<S>& out_b,   // data + scales, device memory
                                   const gpu_args& args = {}) {
  detail::gpu::check_gpu_spec<S>();
  static_assert(S.granularity == granularity::group_col,
                "fp8q: quantize_dual on the GPU is per-group colwise (granularity::group_col)");
  const quantize_args qa = detail::gpu::to_quantize_args(args);
  status st = validate_quantize(in_a, out_a, qa, /*offsets_on_host=*/false);
  if (st == status::success) st = validate_quantize(in_b, out_b, qa, false);
  if (st != status::success) return st;
  if (in_a.rows != in_b.rows) return status::bad_shape;  // one set of offsets over the rows
  if (in_a.empty() || in_b.empty()) {  // one tensor's launch (or the bookkeeping alone)
    if (!in_b.empty()) return quantize<S, T>(in_b, out_b, args);
    return quantize<S, T>(in_a, out_a, args);
  }
  const backend::device_facts* dev = nullptr;
  if ((st = detail::gpu::current_device<T>(&dev)) != status::success) return st;
  if (args.groups.count == 0) return status::success;
  static_assert(T.path == gpu_path::automatic || T.path == gpu_path::group_col_tile ||
                    T.path == gpu_path::group_colwise,
                "fp8q: quantize_dual runs group_col_tile or group_colwise");
  // the staged tile where it accepts both tensors, else the any-layout kernel
  using tile = detail::gpu::group_col_tile<S, T, In>;
  if constexpr (T.path != gpu_path::group_colwise) {
    const detail::gpu::problem<S, In> pa{in_a, out_a, args.seed, dev, args.groups, args.error_word};
    const detail::gpu::problem<S, In> pb{in_b, out_b, args.seed, dev, args.groups, nullptr};
    if (tile::accepts(pa, nullptr) && tile::accepts(pb, nullptr)) return tile::enqueue_dual(pa, pb, args.stream);
    if constexpr (T.path == gpu_path::group_col_tile) return status::bad_layout;
  }
  using family = detail::gpu::group_colwise<S, T, In>;
  constexpr int w = detail::gpu::group_strip_cols;
  const std::int64_t strips = ((in_a.cols > in_b.cols ? in_a.cols : in_b.cols) + w - 1) / w;
  if (args.groups.count > 65535 || in_a.batch + in_b.batch > 65535 || strips > 0x7fffffffLL)
    return status::bad_layout;
  return backend::launch<detail::gpu::group_col_dual_kernel<detail::gpu::spec_c<S>,
                                                            detail::gpu::tuning_c<family::R>, In>>(
      *dev, false,
      dim3(static_cast<unsigned>(strips), static_cast<unsigned>(args.groups.count),
           static_cast<unsigned>(in_a.batch + in_b.batch)),
      family::R.threads, args.stream, in_a, out_a, in_b, out_b, args.groups, args.error_word,
      args.seed);
}

/// Tensorwise with a given scale (delayed scaling): casts with given_scale[b] (last step's
/// scale, device memory) in one pass and writes this call's amax of each batch item to
/// amax_out[b] (device memory, f32; any NaN gives 0x7fc00000). Needs dense views of the same
/// layout (else bad_layout). Takes no workspace.
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] status quantize_with_scale(matrix_view<const In> in,  // [batch, rows, cols] In
                                         const quantized<S>& out,
                                         const float* given_scale,  // [batch] f32, device
                                         float* amax_out,           // [batch] f32, device
                                         const gpu_args& args = {}) {
  check_spec<S>();
  static_assert(S.granularity == granularity::tensor && S.scale == scale_format::f32,
                "fp8q: quantize_with_scale is tensorwise with f32 scales");
  if (given_scale == nullptr || amax_out == nullptr) return status::null_pointer;
  detail::gpu::problem<S, In> p{};
  status st = detail::gpu::flat_tensor_problem<T>(in, out, args, &p);
  if (st != status::success || p.dev == nullptr) return st;
  using family = detail::gpu::tensor_two_launch<S, T, In>;  // its cast kernel, its tuning
  auto* record = reinterpret_cast<std::uint32_t*>(amax_out);
  st = backend::memset_async(record, 0, static_cast<std::size_t>(in.batch) * 4, args.stream);
  if (st != status::success) return st;
  return detail::gpu::launch_flat_cast<S, family::R, family::K, true>(p, nullptr, given_scale, record, args.stream);
}

/// The same for a view of non-const elements.
template <spec S, tuning T = tuning{}, class In>
  requires(!std::is_const_v<In>)
[[nodiscard]] status quantize_with_scale(matrix_view<In> in, const quantized<S>& out,
                                         const float* given_scale, float* amax_out,
                                         const gpu_args& args = {}) {
  return quantize_with_scale<S, T, In>(in.as_const(), out, given_scale, amax_out, args);
}

/// Tensorwise in two calls, for an amax combined across devices in between (several GPUs
/// quantizing shards of one tensor; docs/semantics.md, "Tensorwise across devices"):
///   1. tensor_amax<S>(shard, amax, ...): amax[b] = the f32 bit pattern of max |x| over batch
///      item b of the shard (a NaN anywhere gives a NaN pattern, above every number's);
///   2. an all-reduce with max on the words (NCCL: ncclUint32 with ncclMax): exact, because
///      non-negative floats order as their bit patterns;
///   3. quantize_with_amax<S>(shard, out, amax, ...): each shard scales by the combined amax, so
///      its bytes and its scale are those quantize<S> gives for the whole tensor.
/// The input is dense (else bad_layout); no workspace. amax is overwritten (no need to zero it).
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] status tensor_amax(matrix_view<const In> in,  // [batch, rows, cols] In, dense
                                 std::uint32_t* amax,       // [batch] f32 bits, device
                                 const gpu_args& args = {}) {
  check_spec<S>();
  static_assert(S.granularity == granularity::tensor && S.scale == scale_format::f32,
                "fp8q: tensor_amax is for tensorwise specs with f32 scales");
  if (amax == nullptr) return status::null_pointer;
  const detail::view_facts v = detail::facts_of(in);
  status st = validate_views(S, &v, 1, {}, false);
  if (st != status::success) return st;
  if (!detail::gpu::dense(in)) return status::bad_layout;
  if (in.batch == 0) return status::success;
  if ((st = backend::memset_async(amax, 0, static_cast<std::size_t>(in.batch) * 4, args.stream)) != status::success)
    return st;
  if (in.empty()) return status::success;  // rows or columns 0: an amax of +0
  const backend::device_facts* dev = nullptr;
  if ((st = detail::gpu::current_device<T>(&dev)) != status::success) return st;
  using family = detail::gpu::tensor_two_launch<S, T, In>;  // its amax kernel, its tuning
  const detail::gpu::problem<S, In> p{in, {}, args.seed, dev};
  return detail::gpu::launch_flat_amax<S, family::R, family::K>(p, amax, args.stream);
}

/// Step 3 of the above: tensorwise with the scale computed from amax[b] (device words as
/// tensor_amax writes them, combined or not), stored in out's scale views as quantize<S> would.
/// Dense views of one layout (else bad_layout); no workspace.
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] status quantize_with_amax(matrix_view<const In> in,   // [batch, rows, cols] In, dense
                                        const quantized<S>& out,    // [batch, rows, cols] FP8, same layout
                                        const std::uint32_t* amax,  // [batch] f32 bits, device
                                        const gpu_args& args = {}) {
  check_spec<S>();
  static_assert(S.granularity == granularity::tensor && S.scale == scale_format::f32,
                "fp8q: quantize_with_amax is tensorwise with f32 scales");
  if (amax == nullptr) return status::null_pointer;
  detail::gpu::problem<S, In> p{};
  const status st = detail::gpu::flat_tensor_problem<T>(in, out, args, &p);
  if (st != status::success || p.dev == nullptr) return st;
  using family = detail::gpu::tensor_two_launch<S, T, In>;  // its cast kernel, its tuning
  return detail::gpu::launch_flat_cast<S, family::R, family::K, false>(p, amax, nullptr, nullptr, args.stream);
}

/// The same for views of non-const elements.
template <spec S, tuning T = tuning{}, class In>
  requires(!std::is_const_v<In>)
[[nodiscard]] status tensor_amax(matrix_view<In> in, std::uint32_t* amax, const gpu_args& args = {}) {
  return tensor_amax<S, T, In>(in.as_const(), amax, args);
}
template <spec S, tuning T = tuning{}, class In>
  requires(!std::is_const_v<In>)
[[nodiscard]] status quantize_with_amax(matrix_view<In> in, const quantized<S>& out,
                                        const std::uint32_t* amax, const gpu_args& args = {}) {
  return quantize_with_amax<S, T, In>(in.as_const(), out, amax, args);
}

}  // namespace fp8q
