// fp8q — GPU entry points (CUDA or HIP, whichever compiler includes this). Each one validates
// everything it can on the host, then enqueues work on `stream` and returns: no host
// synchronization ever, so every call can be captured in a CUDA/HIP graph.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fp8q/config.hpp"

#if !(FP8Q_TOOLCHAIN_CUDA || FP8Q_TOOLCHAIN_HIP)
#error "fp8q/gpu/quantize.hpp needs nvcc (fp8q::cuda) or hipcc/clang -x hip (fp8q::hip)"
#endif

#include "fp8q/device.hpp"
#include "fp8q/detail/gpu/kernels.hpp"
#include "fp8q/spec.hpp"
#include "fp8q/status.hpp"
#include "fp8q/tuning.hpp"
#include "fp8q/validate.hpp"
#include "fp8q/views.hpp"

namespace fp8q {

namespace detail::gpu {

template <spec S>
constexpr bool gpu_supports() {
  return S.scale == scale_format::f32 &&
         (S.granularity == granularity::tensor || S.granularity == granularity::row ||
          S.granularity == granularity::col);
}

inline std::size_t round_up_256(std::size_t n) { return (n + 255) / 256 * 256; }

constexpr tuning with_threads(tuning t, int threads) {
  t.threads = threads;
  return t;
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

// A batch item is one dense array in the view's order (what the flat tensorwise path needs).
template <class T>
bool dense(const matrix_view<T>& v) {
  const std::int64_t fast = v.order == layout::row_major ? v.cols : v.rows;
  return v.ld == fast && (v.batch == 1 || v.batch_stride == v.rows * v.cols);
}

template <int Blocks>
unsigned grid_for(std::int64_t work, int threads, int multiprocessors) {
  const std::int64_t want = (work + threads - 1) / threads;
  const std::int64_t cap = static_cast<std::int64_t>(multiprocessors) * Blocks;
  return static_cast<unsigned>(want < 1 ? 1 : (want < cap ? want : cap));
}

template <spec S, tuning R, class In, group_axis A>
status launch_tiled(const matrix_view<const In>& in, const quantized<S>& out,
                    std::uint32_t* amax_bits, std::size_t amax_bytes, std::uint64_t seed,
                    int multiprocessors, gpu_stream stream) {
  using sc = spec_c<S>;
  using tc = tuning_c<R>;
  status st = backend::memset_async(amax_bits, 0, amax_bytes, stream);
  if (st != status::success) return st;
  const unsigned gx = static_cast<unsigned>((in.cols + R.tile_cols - 1) / R.tile_cols);
  const unsigned gy = static_cast<unsigned>((in.rows + R.tile_rows - 1) / R.tile_rows);
  const unsigned gz = static_cast<unsigned>(in.batch);
  // Each amax block walks `tiles` tiles along the reduction axis: enough blocks to fill the
  // machine a few times over, few enough that the atomics stay a small fraction of the work.
  const std::int64_t along = A == group_axis::row ? gx : gy;
  const std::int64_t across = (A == group_axis::row ? gy : gx) * static_cast<std::int64_t>(gz);
  std::int64_t tiles = 1;
  while (tiles < along && across * ((along + tiles * 2 - 1) / (tiles * 2)) >= 8LL * multiprocessors)
    tiles *= 2;
  const unsigned ax = A == group_axis::row ? static_cast<unsigned>((gx + tiles - 1) / tiles) : gx;
  const unsigned ay = A == group_axis::row ? gy : static_cast<unsigned>((gy + tiles - 1) / tiles);
  const bool vec_in = lines_aligned16(in);
  if (vec_in) {
    tile_amax_kernel<sc, tc, In, A, true><<<dim3(ax, ay, gz), R.threads, 0, stream>>>(in, amax_bits, static_cast<int>(tiles));
  } else {
    tile_amax_kernel<sc, tc, In, A, false><<<dim3(ax, ay, gz), R.threads, 0, stream>>>(in, amax_bits, static_cast<int>(tiles));
  }
  st = backend::last_launch_status();
  if (st != status::success) return st;
  // Staged by default, transposed or not: measured on an H200 (2026-11-29, 16384 x 5120 bf16
  // colwise, row-major output): staged 220 us-class vs direct 1282 us; column-major output
  // staged 220 us vs direct 1318 us (docs/design.md).
  const bool staged = R.store != store_path::direct;
  const bool vec_out = lines_aligned16(out.data);
  const dim3 grid(gx, gy, gz);
  // The store path and vector widths are run-time facts of the views: pick the instantiation.
  auto go = [&](auto vin, auto vout, auto stg) {
    tile_cast_kernel<sc, tc, In, A, decltype(vin)::value, decltype(vout)::value, decltype(stg)::value>
        <<<grid, R.threads, 0, stream>>>(in, out, amax_bits, seed);
  };
  using t_ = std::true_type;
  using f_ = std::false_type;
  if (staged) {
    if (vec_in && vec_out) go(t_{}, t_{}, t_{});
    else if (vec_in) go(t_{}, f_{}, t_{});
    else if (vec_out) go(f_{}, t_{}, t_{});
    else go(f_{}, f_{}, t_{});
  } else {
    if (vec_in) go(t_{}, f_{}, f_{});
    else go(f_{}, f_{}, f_{});
  }
  return backend::last_launch_status();
}

template <spec S, tuning R, class In>
status launch_row_fused(const matrix_view<const In>& in, const quantized<S>& out,
                        std::uint64_t seed, int multiprocessors, gpu_stream stream) {
  using sc = spec_c<S>;
  using tc = tuning_c<R>;
  const std::int64_t rows = in.rows * in.batch;
  const unsigned grid = static_cast<unsigned>(rows < 65535LL * 1024 ? rows : 65535LL * 1024);
  (void)multiprocessors;
  const bool vec = lines_aligned16(in) && lines_aligned16(out.data);
  const std::int64_t nvec = in.cols / vec_elems;
  const std::int64_t per_thread = (nvec + R.threads - 1) / R.threads;
  if (!vec) {
    row_fused_kernel<sc, tc, In, 4, false><<<grid, R.threads, 0, stream>>>(in, out, seed);
  } else if (per_thread <= 1) {
    row_fused_kernel<sc, tc, In, 1, true><<<grid, R.threads, 0, stream>>>(in, out, seed);
  } else if (per_thread <= 2) {
    row_fused_kernel<sc, tc, In, 2, true><<<grid, R.threads, 0, stream>>>(in, out, seed);
  } else {
    // up to 4 * threads * 16 elements (16384 with 256 threads) stay on chip; longer rows re-read
    row_fused_kernel<sc, tc, In, 4, true><<<grid, R.threads, 0, stream>>>(in, out, seed);
  }
  return backend::last_launch_status();
}

template <spec S, tuning R, class In, bool Record>
status launch_flat_cast(const matrix_view<const In>& in, const quantized<S>& out,
                        const std::uint32_t* amax_bits, const float* given_scale,
                        std::uint32_t* record_bits, std::uint64_t seed, int multiprocessors,
                        gpu_stream stream) {
  using sc = spec_c<S>;
  using tc = tuning_c<R>;
  const std::int64_t count = in.rows * in.cols;
  const bool vec = aligned16(in.data) && aligned16(out.data.data) &&
                   (in.batch == 1 || ((in.batch_stride * static_cast<std::int64_t>(sizeof(In))) % 16 == 0 &&
                                      out.data.batch_stride % 16 == 0));
  const unsigned gx = grid_for<8>(vec ? count / vec_elems + 1 : count, R.threads, multiprocessors);
  const dim3 grid(gx, static_cast<unsigned>(in.batch));
  auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data);
  float* scale_out = stores_multiplier(S) ? out.scale.data : nullptr;
  float* inverse_out = stores_inverse(S) ? out.inverse.data : nullptr;
  const bool col_major = in.order == layout::col_major;
  if (vec) {
    flat_cast_kernel<sc, tc, In, true, Record><<<grid, R.threads, 0, stream>>>(
        in.data, dst, count, in.batch_stride, out.data.batch_stride, amax_bits, given_scale, record_bits,
        scale_out, out.scale.batch_stride, inverse_out, out.inverse.batch_stride, in.rows, in.cols,
        col_major, seed);
  } else {
    flat_cast_kernel<sc, tc, In, false, Record><<<grid, R.threads, 0, stream>>>(
        in.data, dst, count, in.batch_stride, out.data.batch_stride, amax_bits, given_scale, record_bits,
        scale_out, out.scale.batch_stride, inverse_out, out.inverse.batch_stride, in.rows, in.cols,
        col_major, seed);
  }
  return backend::last_launch_status();
}

template <spec S, tuning R, class In>
status launch_flat_amax(const matrix_view<const In>& in, std::uint32_t* amax_bits,
                        int multiprocessors, gpu_stream stream) {
  using sc = spec_c<S>;
  using tc = tuning_c<R>;
  const std::int64_t count = in.rows * in.cols;
  const bool vec = aligned16(in.data) &&
                   (in.batch == 1 || (in.batch_stride * static_cast<std::int64_t>(sizeof(In))) % 16 == 0);
  const unsigned gx = grid_for<8>(vec ? count / vec_elems + 1 : count, R.threads, multiprocessors);
  const dim3 grid(gx, static_cast<unsigned>(in.batch));
  if (vec) {
    flat_amax_kernel<sc, tc, In, true><<<grid, R.threads, 0, stream>>>(in.data, count, in.batch_stride, amax_bits);
  } else {
    flat_amax_kernel<sc, tc, In, false><<<grid, R.threads, 0, stream>>>(in.data, count, in.batch_stride, amax_bits);
  }
  return backend::last_launch_status();
}

template <spec S, tuning T>
status prepare(tuning& resolved, int* multiprocessors) {
  arch_traits a{};
  status st = backend::current_device_traits(&a, multiprocessors);
  if (st != status::success) return st;
  if (validate(T, a) != tuning_error::none) return status::bad_tuning;
  resolved = resolve_tuning(T, S, a);
  return status::success;
}

}  // namespace detail::gpu

/// Device workspace bytes quantize<S> needs for `in` (0 when none). The workspace holds the
/// amax of every scaling group; quantize clears it itself, on the stream.
template <spec S, class In>
std::size_t workspace_size(const matrix_view<const In>& in) {
  std::int64_t groups = 0;
  if constexpr (S.granularity == granularity::tensor) groups = in.batch;
  else if constexpr (S.granularity == granularity::row) groups = in.batch * in.rows;
  else if constexpr (S.granularity == granularity::col) groups = in.batch * in.cols;
  return groups <= 0 ? 0 : detail::gpu::round_up_256(static_cast<std::size_t>(groups) * 4);
}

/// Quantize on the GPU. Same bytes as fp8q::host::quantize<S> for every input, layout and
/// tuning T. in, out, workspace and the scales are device memory; `workspace` needs
/// workspace_size<S>(in) bytes (may be null when that is 0).
/// Implemented on the GPU: tensorwise, rowwise, colwise (f32 scales), any layouts and batches.
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] status quantize(matrix_view<const In> in,  // [batch, rows, cols] In, any layout
                              const quantized<S>& out,   // data + scales, device memory
                              const quantize_args& args,
                              void* workspace,  // [workspace_size<S>(in)] bytes, device
                              std::size_t workspace_bytes, gpu_stream stream) {
  check_spec<S>();
  static_assert(detail::gpu::gpu_supports<S>(),
                "fp8q: this granularity has no GPU kernel yet; use fp8q::host::quantize");
  status st = validate_quantize(in, out, args, /*offsets_on_host=*/false);
  if (st != status::success) return st;
  if (in.empty()) return status::success;
  const std::size_t need = workspace_size<S>(in);
  // Rowwise with row-major input and output is one fused launch that needs no workspace.
  const bool fused_row = S.granularity == granularity::row && in.order == layout::row_major &&
                         out.data.order == layout::row_major;
  if (!fused_row && need > 0 && (workspace == nullptr || workspace_bytes < need))
    return status::bad_workspace;
  tuning r{};
  int sms = 0;
  if ((st = detail::gpu::prepare<S, T>(r, &sms)) != status::success) return st;
  // The resolved tuning must be a compile-time value for the kernels: defaults are resolved
  // against the traits every supported architecture shares (validated above at run time).
  constexpr tuning R = resolve_tuning(T, S, arch_traits{});
  auto* amax = static_cast<std::uint32_t*>(workspace);
  using detail::gpu::group_axis;
  if constexpr (S.granularity == granularity::tensor) {
    if (detail::gpu::dense(in) && detail::gpu::dense(out.data) && in.order == out.data.order) {
      st = backend::memset_async(amax, 0, need, stream);
      if (st == status::success) st = detail::gpu::launch_flat_amax<S, R>(in, amax, sms, stream);
      if (st == status::success)
        st = detail::gpu::launch_flat_cast<S, R, In, false>(in, out, amax, nullptr, nullptr, args.seed, sms, stream);
      return st;
    }
    return detail::gpu::launch_tiled<S, R, In, group_axis::tensor>(in, out, amax, need, args.seed, sms, stream);
  } else if constexpr (S.granularity == granularity::row) {
    if (fused_row) {
      // Automatic thread count for the fused rowwise kernel: 128 threads for rows of up to 6144
      // elements, 256 above. Measured on an H200 (bf16 -> e4m3fn, 2026-11-29): 5120-wide rows
      // 0.751 of copy with 128 vs 0.699 with 256; 8192-wide rows 0.789 vs 0.800. The crossover
      // between the two measured widths was not measured.
      if constexpr (T.threads == 0) {
        constexpr tuning R128 = detail::gpu::with_threads(R, 128);
        if (in.cols <= 6144) return detail::gpu::launch_row_fused<S, R128>(in, out, args.seed, sms, stream);
      }
      return detail::gpu::launch_row_fused<S, R>(in, out, args.seed, sms, stream);
    }
    return detail::gpu::launch_tiled<S, R, In, group_axis::row>(in, out, amax, need, args.seed, sms, stream);
  } else {
    return detail::gpu::launch_tiled<S, R, In, group_axis::col>(in, out, amax, need, args.seed, sms, stream);
  }
}

/// Tensorwise with a given scale (delayed scaling): casts with given_scale[b] (last step's
/// scale, device memory) in one pass and writes this call's amax of each batch item to
/// amax_out[b] (device memory, f32; any NaN gives 0x7fc00000). Needs dense views of the same
/// layout (else bad_layout).
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] status quantize_with_scale(matrix_view<const In> in,  // [batch, rows, cols] In
                                         const quantized<S>& out,
                                         const float* given_scale,  // [batch] f32, device
                                         float* amax_out,           // [batch] f32, device
                                         const quantize_args& args, gpu_stream stream) {
  check_spec<S>();
  static_assert(S.granularity == granularity::tensor && S.scale == scale_format::f32,
                "fp8q: quantize_with_scale is tensorwise with f32 scales");
  if (given_scale == nullptr || amax_out == nullptr) return status::null_pointer;
  status st = validate_quantize(in, out, quantize_args{}, false);
  if (st != status::success) return st;
  if (in.empty()) return status::success;
  if (!(detail::gpu::dense(in) && detail::gpu::dense(out.data) && in.order == out.data.order))
    return status::bad_layout;
  tuning r{};
  int sms = 0;
  if ((st = detail::gpu::prepare<S, T>(r, &sms)) != status::success) return st;
  constexpr tuning R = resolve_tuning(T, S, arch_traits{});
  auto* record = reinterpret_cast<std::uint32_t*>(amax_out);
  st = backend::memset_async(record, 0, static_cast<std::size_t>(in.batch) * 4, stream);
  if (st != status::success) return st;
  return detail::gpu::launch_flat_cast<S, R, In, true>(in, out, nullptr, given_scale, record,
                                                       args.seed, sms, stream);
}

/// quantize_with_scale with default arguments (seed 0 for stochastic rounding).
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] status quantize_with_scale(matrix_view<const In> in, const quantized<S>& out,
                                         const float* given_scale, float* amax_out,
                                         gpu_stream stream) {
  return quantize_with_scale<S, T>(in, out, given_scale, amax_out, quantize_args{}, stream);
}

}  // namespace fp8q
