// fp8q — GPU entry points (CUDA or HIP, whichever compiler includes this). Each one validates
// everything it can on the host, then enqueues work on `stream` and returns: no host
// synchronization ever, so every call can be captured in a CUDA/HIP graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

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

// Kernels keep their tiles in static shared memory (at most 48 KiB on every target): a tuning's
// tile larger than a kernel's budget is halved, larger side first, for that kernel only.
template <class Bytes>
constexpr tuning fit_tile(tuning t, Bytes bytes) {
  while (bytes(t) > 40 * 1024) {
    if (t.tile_rows >= t.tile_cols) t.tile_rows /= 2;
    else t.tile_cols /= 2;
  }
  return t;
}

template <spec S, tuning RT, class In, group_axis A>
status launch_tiled(const matrix_view<const In>& in, const quantized<S>& out,
                    std::uint32_t* amax_bits, std::size_t amax_bytes, std::uint64_t seed,
                    int multiprocessors, gpu_stream stream) {
  constexpr tuning R = fit_tile(RT, [](const tuning& u) {
    return u.tile_rows * (u.tile_cols + 1) * 4 + u.tile_rows * u.tile_cols + 4 * 256;
  });
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
    return backend::launch<
        tile_cast_kernel<sc, tc, In, A, decltype(vin)::value, decltype(vout)::value, decltype(stg)::value>>(
        true, grid, R.threads, stream, in, out, amax_bits, seed);
  };
  using t_ = std::true_type;
  using f_ = std::false_type;
  if (staged) {
    if (vec_in && vec_out) return go(t_{}, t_{}, t_{});
    if (vec_in) return go(t_{}, f_{}, t_{});
    if (vec_out) return go(f_{}, t_{}, t_{});
    return go(f_{}, f_{}, t_{});
  }
  if (vec_in) return go(t_{}, f_{}, f_{});
  return go(f_{}, f_{}, f_{});
}

template <spec S, tuning R, class In>
status launch_row_fused(const matrix_view<const In>& in, const quantized<S>& out,
                        std::uint64_t seed, gpu_stream stream) {
  using sc = spec_c<S>;
  using tc = tuning_c<R>;
  const std::int64_t rows = in.rows * in.batch;
  const unsigned grid = static_cast<unsigned>(rows < 65535LL * 1024 ? rows : 65535LL * 1024);
  const bool vec = lines_aligned16(in) && lines_aligned16(out.data);
  constexpr int U = unit_elems<In>;
  const std::int64_t per_thread = (in.cols / (vec ? U : 1) + R.threads - 1) / R.threads;
  auto go = [&](auto u, auto items) {
    row_fused_kernel<sc, tc, In, decltype(u)::value, decltype(items)::value>
        <<<grid, R.threads, 0, stream>>>(in, out, seed);
  };
  using u_vec = std::integral_constant<int, U>;
  using u_one = std::integral_constant<int, 1>;
  // Up to 8 units per thread stay on chip (16384 bf16 with 256 threads); longer rows re-read.
  if (!vec) go(u_one{}, std::integral_constant<int, 8>{});
  else if (per_thread <= 1) go(u_vec{}, std::integral_constant<int, 1>{});
  else if (per_thread <= 2) go(u_vec{}, std::integral_constant<int, 2>{});
  else if (per_thread <= 4) go(u_vec{}, std::integral_constant<int, 4>{});
  else go(u_vec{}, std::integral_constant<int, 8>{});
  return backend::last_launch_status();
}

// Whether the flat (tensorwise) kernels may take 16-byte units: every batch item of the input
// and of the output starts on a 16-byte boundary.
template <class In, class Out>
bool flat_vectors(const matrix_view<const In>& in, const matrix_view<Out>& out) {
  return aligned16(in.data) && aligned16(out.data) &&
         (in.batch == 1 || ((in.batch_stride * static_cast<std::int64_t>(sizeof(In))) % 16 == 0 &&
                            (out.batch_stride * static_cast<std::int64_t>(sizeof(Out))) % 16 == 0));
}

// Units in flight per thread in the flat (tensorwise) kernels.
inline constexpr int flat_items = 8;

// One block per chunk (the chunk loop only runs past 2^31 - 1 chunks): measured on an H200
// (2026-11-29, 512 threads), a plain 2:1 read/write stream reached 0.963 of copy this way
// against 0.949 with a grid of 8 blocks per multiprocessor walking the chunks.
inline unsigned flat_grid(std::int64_t count, std::int64_t per_block) {
  const std::int64_t chunks = (count + per_block - 1) / per_block;
  return static_cast<unsigned>(chunks < 1 ? 1 : (chunks < 0x7fffffffLL ? chunks : 0x7fffffffLL));
}

template <spec S, tuning R, class In, bool Record, int K = flat_items>
status launch_flat_cast(const matrix_view<const In>& in, const quantized<S>& out,
                        const std::uint32_t* amax_bits, const float* given_scale,
                        std::uint32_t* record_bits, std::uint64_t seed, gpu_stream stream) {
  using sc = spec_c<S>;
  using tc = tuning_c<R>;
  const std::int64_t count = in.rows * in.cols;
  const bool vec = flat_vectors(in, out.data);
  const std::int64_t per_block = static_cast<std::int64_t>(R.threads) * K * (vec ? unit_elems<In> : 1);
  const unsigned gx = flat_grid(count, per_block);
  const dim3 grid(gx, static_cast<unsigned>(in.batch));
  auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data);
  float* scale_out = stores_multiplier(S) ? out.scale.data : nullptr;
  float* inverse_out = stores_inverse(S) ? out.inverse.data : nullptr;
  const bool col_major = in.order == layout::col_major;
  // Dynamic scaling: a dependent of the amax launch just before it. With a given scale the
  // launch before is a memset: an ordinary launch.
  auto go = [&](auto u) {
    return backend::launch<flat_cast_kernel<sc, tc, In, decltype(u)::value, K, Record>>(
        !Record, grid, R.threads, stream, in.data, dst, count, in.batch_stride, out.data.batch_stride,
        amax_bits, given_scale, record_bits, scale_out, out.scale.batch_stride, inverse_out,
        out.inverse.batch_stride, in.rows, in.cols, col_major, seed);
  };
  if (vec) return go(std::integral_constant<int, unit_elems<In>>{});
  return go(std::integral_constant<int, 1>{});
}

template <spec S, tuning R, class In>
status launch_flat_amax(const matrix_view<const In>& in, std::uint32_t* amax_bits,
                        gpu_stream stream) {
  using sc = spec_c<S>;
  using tc = tuning_c<R>;
  const std::int64_t count = in.rows * in.cols;
  const bool vec = aligned16(in.data) &&
                   (in.batch == 1 || (in.batch_stride * static_cast<std::int64_t>(sizeof(In))) % 16 == 0);
  const std::int64_t per_block = static_cast<std::int64_t>(R.threads) * flat_items * (vec ? unit_elems<In> : 1);
  const unsigned gx = flat_grid(count, per_block);
  const dim3 grid(gx, static_cast<unsigned>(in.batch));
  if (vec) {
    flat_amax_kernel<sc, tc, In, unit_elems<In>, flat_items><<<grid, R.threads, 0, stream>>>(in.data, count, in.batch_stride, amax_bits);
  } else {
    flat_amax_kernel<sc, tc, In, 1, flat_items><<<grid, R.threads, 0, stream>>>(in.data, count, in.batch_stride, amax_bits);
  }
  return backend::last_launch_status();
}

// Tensorwise in one cooperative launch (flat_resident_kernel) on dense views; *launched false
// means nothing was enqueued (no cooperative launches on this device, or more batch items than
// blocks fit at once) and the caller takes the two launches. sync: [batch][4] words. One block
// per multiprocessor holds as many units as its dynamic shared memory takes; the rest is
// streamed (read twice).
template <spec S, tuning R, class In, int K = 4>
status launch_flat_resident(const matrix_view<const In>& in, const quantized<S>& out,
                            std::uint32_t* sync, std::size_t sync_bytes, std::uint64_t seed,
                            gpu_stream stream, bool* launched) {
  *launched = false;
  using sc = spec_c<S>;
  using tc = tuning_c<R>;
  const std::int64_t count = in.rows * in.cols;
  const bool vec = flat_vectors(in, out.data);
  if (static_cast<std::size_t>(in.batch) * 16 > sync_bytes || in.batch > 65535)
    return status::success;
  auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data);
  float* scale_out = stores_multiplier(S) ? out.scale.data : nullptr;
  float* inverse_out = stores_inverse(S) ? out.inverse.data : nullptr;
  const bool col_major = in.order == layout::col_major;
  auto go = [&](auto u) -> status {
    constexpr int U = decltype(u)::value;
    auto* kernel = &flat_resident_kernel<sc, tc, In, U, K>;
    const int unit_bytes = static_cast<int>(sizeof(unit_raw<In, U>));
    int shared = 0;
    status st = backend::cooperative_api::shared_bytes(kernel, &shared);
    if (st != status::success || shared == 0) return st;
    const std::int64_t units = count / U;
    const int shelf_max = shared / (R.threads * unit_bytes);  // held slots per thread that fit
    int blocks = 0;
    st = backend::cooperative_api::resident_blocks(kernel, R.threads, shelf_max * R.threads * unit_bytes, &blocks);
    if (st != status::success) return st;
    const std::int64_t per_item = blocks / in.batch;  // blocks of one batch item
    if (per_item < 1) return status::success;
    // Slots per thread that hold the whole item on per_item blocks, capped by what fits: a
    // small item takes as few blocks as hold it, a large one every block and streams the rest.
    const std::int64_t need = (units + per_item * R.threads - 1) / (per_item * R.threads);
    const int held = static_cast<int>(need < shelf_max ? need : shelf_max);
    const std::int64_t gx = held == 0 ? (units == 0 ? 1 : per_item)
                            : need <= shelf_max ? (units + static_cast<std::int64_t>(held) * R.threads - 1) / (static_cast<std::int64_t>(held) * R.threads)
                                                : per_item;
    st = backend::memset_async(sync, 0, static_cast<std::size_t>(in.batch) * 16, stream);
    if (st != status::success) return st;
    *launched = true;
    return backend::cooperative_api::launch(
        kernel, dim3(static_cast<unsigned>(gx), static_cast<unsigned>(in.batch)), R.threads,
        held * R.threads * unit_bytes, stream, in.data, dst, count, in.batch_stride, out.data.batch_stride,
        sync, held, scale_out, out.scale.batch_stride, inverse_out, out.inverse.batch_stride, in.rows,
        in.cols, col_major, seed);
  };
  if (vec) return go(std::integral_constant<int, unit_elems<In>>{});
  return go(std::integral_constant<int, 1>{});
}

constexpr tuning with_tile(tuning t, int rows, int cols) {
  t.tile_rows = rows;
  t.tile_cols = cols;
  return t;
}

// Colwise in two streaming passes (col_amax_kernel, col_cast_kernel) where the input is
// row-major with 16-byte aligned lines of whole units and the output lines are 16-byte aligned;
// *launched false means nothing was enqueued and the caller takes the tiled path.
template <spec S, tuning RT, class In>
status launch_col_streaming(const matrix_view<const In>& in, const quantized<S>& out,
                            std::uint32_t* amax_bits, std::size_t amax_bytes, std::uint64_t seed,
                            int wave, gpu_stream stream, bool* launched) {
  *launched = false;
  // the cast's byte tile in static shared memory (either output order)
  constexpr tuning R = fit_tile(RT, [](const tuning& u) {
    const int col = u.tile_cols * (u.tile_rows + 4);
    const int row = u.tile_rows * (u.tile_cols + 4);
    return (col > row ? col : row) + u.tile_cols * 4;
  });
  constexpr int U = unit_elems<In>;
  constexpr int K = 8;  // rows in flight per lane in the amax pass
  if (in.order != layout::row_major || !lines_aligned16(in) || !lines_aligned16(out.data) ||
      in.cols % U != 0 || in.batch > 65535 || (in.rows + R.tile_rows - 1) / R.tile_rows > 65535)
    return status::success;
  // pass 1: bands of wave * U columns by blocks of two loop trips of rows (many short blocks:
  // a grid of ~8 long blocks per multiprocessor left a 1.6-wave tail, H200 ncu, 2026-11-29)
  const std::int64_t band = static_cast<std::int64_t>(wave) * U;
  const std::int64_t gx = (in.cols + band - 1) / band;
  const std::int64_t rows_per_block = 2LL * (R.threads / wave) * K;
  const std::int64_t gy = (in.rows + rows_per_block - 1) / rows_per_block;
  if (gy > 65535) return status::success;
  status st = backend::memset_async(amax_bits, 0, amax_bytes, stream);
  if (st != status::success) return st;
  *launched = true;
  col_amax_kernel<spec_c<S>, tuning_c<R>, In, K>
      <<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(in.batch)), R.threads, 0, stream>>>(
          in, amax_bits, static_cast<int>(rows_per_block));
  st = backend::last_launch_status();
  if (st != status::success) return st;
  // pass 2
  const dim3 grid(static_cast<unsigned>((in.cols + R.tile_cols - 1) / R.tile_cols),
                  static_cast<unsigned>((in.rows + R.tile_rows - 1) / R.tile_rows), static_cast<unsigned>(in.batch));
  constexpr bool staged = R.store != store_path::direct;
  return backend::launch<col_cast_kernel<spec_c<S>, tuning_c<R>, In, staged>>(
      true, grid, R.threads, stream, in, out, amax_bits, seed);
}

// Colwise in one launch (col_relay_kernel) where the input is row-major with 16-byte aligned
// lines of whole units and the output lines are 16-byte aligned; *launched false means nothing
// was enqueued and the caller takes another path. workspace: the column amax ([batch, cols]
// words), then one counter per strip and the ticket counter (workspace_size<S> covers both).
template <spec S, tuning RT, class In>
status launch_col_relay(const matrix_view<const In>& in, const quantized<S>& out, void* workspace,
                        std::size_t workspace_bytes, std::uint64_t seed, gpu_stream stream,
                        bool* launched) {
  *launched = false;
  constexpr tuning R = fit_tile(RT, [](const tuning& u) {
    const int col = u.tile_cols * (u.tile_rows + 4);
    const int row = u.tile_rows * (u.tile_cols + 4);
    return (col > row ? col : row) + u.tile_cols * 4 + (u.threads / 32) * u.tile_cols * 4;
  });
  constexpr int U = unit_elems<In>;
  constexpr int upr = R.tile_cols / U;
  if constexpr (R.tile_cols % U != 0 || (upr & (upr - 1)) != 0 || upr > 32 || R.threads % upr != 0) {
    return status::success;  // a tile row is not a power-of-two number of units within a wave
  } else {
    if (in.order != layout::row_major || !lines_aligned16(in) || !lines_aligned16(out.data) ||
        in.cols % U != 0)
      return status::success;
    const std::size_t amax_bytes = round_up_256(static_cast<std::size_t>(in.batch * in.cols) * 4);
    relay_plan plan{};
    plan.chunks = (in.rows + R.tile_rows - 1) / R.tile_rows;
    plan.strips = (in.cols + R.tile_cols - 1) / R.tile_cols;
    plan.items = in.batch * plan.strips * plan.chunks;
    const std::size_t counters = static_cast<std::size_t>(in.batch * plan.strips + 1) * 4;
    if (plan.items + plan.chunks > 0x7fffffffLL || amax_bytes + counters > workspace_bytes)
      return status::success;
    auto* amax_bits = static_cast<std::uint32_t*>(workspace);
    auto* done = reinterpret_cast<std::uint32_t*>(static_cast<char*>(workspace) + amax_bytes);
    std::uint32_t* tickets = done + in.batch * plan.strips;
    status st = backend::memset_async(workspace, 0, amax_bytes + counters, stream);
    if (st != status::success) return st;
    *launched = true;
    // Automatic stores: staged for column-major output, direct for row-major output. Measured
    // on an H200 (bf16 16384 x 5120, bench/run_h200.sh, 2026-11-29): row-major output direct
    // 101.3 / 100.9 / 101.3 us against staged 104.4 / 104.4 / 105.1 us (runs at 18:37, 16:13,
    // 15:41 UTC); column-major output direct 122.0 us against staged 102.4 us (18:37).
    const bool staged = R.store == store_path::staged ||
                        (R.store == store_path::automatic && out.data.order == layout::col_major);
    const unsigned grid = static_cast<unsigned>(plan.items + plan.chunks);
    if (staged) {
      col_relay_kernel<spec_c<S>, tuning_c<R>, In, true><<<grid, R.threads, 0, stream>>>(in, out, amax_bits, done, tickets, plan, seed);
    } else {
      col_relay_kernel<spec_c<S>, tuning_c<R>, In, false><<<grid, R.threads, 0, stream>>>(in, out, amax_bits, done, tickets, plan, seed);
    }
    return backend::last_launch_status();
  }
}

// Columns per strip of the one-pass colwise kernel: one 128-byte line of bf16 per row.
inline constexpr int cluster_strip_cols = 64;
// One-pass colwise on a thread-block cluster where the toolchain, device and views allow it;
// *launched false means nothing was enqueued and the caller takes the two-launch path.
template <spec S, tuning R, class In, class Cluster, int Strip = cluster_strip_cols, int MaxCluster = Cluster::max_size>
status launch_col_cluster(const matrix_view<const In>& in, const quantized<S>& out,
                          std::uint64_t seed, int multiprocessors, gpu_stream stream, bool* launched) {
  *launched = false;
  constexpr int strip = Strip;
  if constexpr (R.threads < strip) {
    return status::success;
  } else {
    if (in.order != layout::row_major || !lines_aligned16(in) || !lines_aligned16(out.data) ||
        in.cols % unit_elems<In> != 0 || in.rows > static_cast<std::int64_t>(MaxCluster) * 65536)
      return status::success;
    int shared = 0;
    status st = Cluster::shared_bytes(&shared);
    if (st != status::success || shared == 0) return st;
    constexpr int static_bytes = (R.threads / 32 + 2) * strip * 4;  // partial, cta_amax, scales
    auto seg_rows = [&](int cs) {
      const std::int64_t per = (in.rows + cs - 1) / cs;
      return static_cast<int>((per + 15) / 16 * 16);
    };
    auto fits = [&](int cs) {
      return cluster_shared_bytes<In, strip>(seg_rows(cs)) + static_bytes <= static_cast<std::size_t>(shared);
    };
    int cs = 1;
    while (cs <= MaxCluster && !fits(cs)) cs *= 2;
    if (cs > MaxCluster) return status::success;  // a column strip does not fit on chip
    const std::int64_t tasks = (in.cols + strip - 1) / strip * in.batch;
    while (cs < MaxCluster && tasks * cs < multiprocessors) cs *= 2;  // spread small problems out
    const int seg = seg_rows(cs);
    return Cluster::launch(col_cluster_kernel<spec_c<S>, tuning_c<R>, In, strip, Cluster>, tasks, cs, R.threads,
                           cluster_shared_bytes<In, strip>(seg), stream, launched, in, out, seg, seed);
  }
}

template <spec S, tuning T>
status prepare(tuning& resolved, int* multiprocessors, arch_traits* traits = nullptr) {
  arch_traits a{};
  status st = backend::current_device_traits(&a, multiprocessors);
  if (st != status::success) return st;
  if (validate(T, a) != tuning_error::none) return status::bad_tuning;
  resolved = resolve_tuning(T, S, a);
  if (traits != nullptr) *traits = a;
  return status::success;
}

// Rowwise with row-major input and output, one launch that reads each row once:
//  * rows of up to 24 units per lane (6144 bf16 on 32-lane warps), at least 4 rows per
//    multiprocessor: one wave per row, the row in registers, no barrier. Measured on an H200
//    (bf16 -> e4m3fn 16384 x 5120, 2026-11-29): 0.915 of copy with 128-thread blocks (4 rows),
//    0.899 with 256, 0.769 with 512; the block-per-row kernel reached 0.874 with 128 threads.
//    Fewer rows take one block per row so every multiprocessor gets work (128 x 5120: 6.9 us
//    with 4 rows per block, 32 blocks).
//  * longer rows: one block per row, 128 threads up to 1024 units (8192 bf16; 0.906 of copy at
//    8192 x 8192, 256 threads 0.899), 256 above; the first 8 units per thread stay in registers
//    and the rest is re-read (from L2).
// Lines not 16-byte aligned take the block kernel with one element per unit.
template <spec S, tuning T, tuning R, class In>
status launch_rowwise(const matrix_view<const In>& in, const quantized<S>& out, std::uint64_t seed,
                      int multiprocessors, int wave, gpu_stream stream) {
  constexpr int U = unit_elems<In>;
  const bool vec = lines_aligned16(in) && lines_aligned16(out.data);
  const std::int64_t units = in.cols / U;
  constexpr tuning R128 = T.threads == 0 ? with_threads(R, 128) : R;
  constexpr tuning R256 = T.threads == 0 ? with_threads(R, 256) : R;
  const std::int64_t rows = in.rows * in.batch;
  if (vec && units <= 24LL * wave && rows >= 4LL * multiprocessors) {
    const std::int64_t per_block = R128.threads / wave;
    const std::int64_t blocks = (rows + per_block - 1) / per_block;
    const unsigned grid = static_cast<unsigned>(blocks < 0x7fffffffLL ? blocks : 0x7fffffffLL);
    auto go = [&](auto items) {
      row_wave_kernel<spec_c<S>, tuning_c<R128>, In, U, decltype(items)::value>
          <<<grid, R128.threads, 0, stream>>>(in, out, seed);
    };
    // Items fitted to the row in steps of 4 (spare registers cost occupancy: 24 units per lane
    // for a 20-unit row measured 0.842 of copy against 0.915 with 20, H200, 2026-11-29)
    if (units <= 8LL * wave) go(std::integral_constant<int, 8>{});
    else if (units <= 12LL * wave) go(std::integral_constant<int, 12>{});
    else if (units <= 16LL * wave) go(std::integral_constant<int, 16>{});
    else if (units <= 20LL * wave) go(std::integral_constant<int, 20>{});
    else go(std::integral_constant<int, 24>{});
    return backend::last_launch_status();
  }
  if (units > 8LL * R128.threads) return launch_row_fused<S, R256>(in, out, seed, stream);
  return launch_row_fused<S, R128>(in, out, seed, stream);
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
  if (groups <= 0) return 0;
  // tensorwise in one launch keeps 4 words per batch item (amax, arrivals, scale, published)
  if constexpr (S.granularity == granularity::tensor) return detail::gpu::round_up_256(static_cast<std::size_t>(groups) * 16);
  const std::size_t amax = detail::gpu::round_up_256(static_cast<std::size_t>(groups) * 4);
  // colwise in one launch also counts finished tiles per column strip (at most one strip per
  // column) and hands out tickets
  if constexpr (S.granularity == granularity::col) return 2 * amax + 256;
  return amax;
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
  arch_traits traits{};
  if ((st = detail::gpu::prepare<S, T>(r, &sms, &traits)) != status::success) return st;
  // The resolved tuning must be a compile-time value for the kernels: defaults are resolved
  // against the traits every supported architecture shares (validated above at run time).
  constexpr tuning R = resolve_tuning(T, S, arch_traits{});
  auto* amax = static_cast<std::uint32_t*>(workspace);
  using detail::gpu::group_axis;
  if constexpr (S.granularity == granularity::tensor) {
    if (detail::gpu::dense(in) && detail::gpu::dense(out.data) && in.order == out.data.order) {
      if constexpr (R.tensor == tensor_path::last_block) {
        // one cooperative launch, 1024 threads unless the tuning says otherwise
        constexpr tuning RL = T.threads == 0 ? detail::gpu::with_threads(R, 1024) : R;
        bool launched = false;
        st = detail::gpu::launch_flat_resident<S, RL>(in, out, amax, need, args.seed, stream, &launched);
        if (st != status::success || launched) return st;
      }
      st = backend::memset_async(amax, 0, need, stream);
      if (st == status::success) st = detail::gpu::launch_flat_amax<S, R>(in, amax, stream);
      if (st == status::success)
        st = detail::gpu::launch_flat_cast<S, R, In, false>(in, out, amax, nullptr, nullptr, args.seed, stream);
      return st;
    }
    return detail::gpu::launch_tiled<S, R, In, group_axis::tensor>(in, out, amax, need, args.seed, sms, stream);
  } else if constexpr (S.granularity == granularity::row) {
    if (fused_row) return detail::gpu::launch_rowwise<S, T, R>(in, out, args.seed, sms, traits.wave_size, stream);
    return detail::gpu::launch_tiled<S, R, In, group_axis::row>(in, out, amax, need, args.seed, sms, stream);
  } else {
    bool launched = false;
    if constexpr (backend::has_clusters && T.col == col_path::one_pass) {
      // One pass on thread-block clusters, 512 threads unless the tuning says otherwise (one
      // CTA per multiprocessor holds up to ~200 KB of a column strip).
      constexpr tuning RC = T.threads == 0 ? detail::gpu::with_threads(R, 512) : R;
      st = detail::gpu::launch_col_cluster<S, RC, In, backend::cluster_api>(in, out, args.seed, sms, stream, &launched);
      if (st != status::success || launched) return st;
    }
    // The relay (one launch) by default, else two streaming passes; 256 x 64 tiles and 256
    // threads unless the tuning says otherwise. Measured on an H200 (bf16 16384 x 5120,
    // column-major output, 2026-11-29, .exp harness at 15:11 UTC): relay 102.6 us against 108.4
    // us for the two passes; relay tiles 128 x 128 105.2 us, 256 x 64 with 128 threads 110.9 us,
    // 512 x 64 with 512 threads 115.2 us; strips walked one at a time (group 1) with the
    // smallest safe lag: groups of 2 / 4 strips 103.6 / 103.8 us, a lag twice as long 103.8 us.
    // The two passes' tiles, before this change: 256 x 64 123.6 us, 128 x 128 124.1 us,
    // 128 x 64 130.7 us, 64 x 64 150.3 us.
    constexpr tuning RS = T.tile_rows == 0 && T.tile_cols == 0 ? detail::gpu::with_tile(R, 256, 64) : R;
    if constexpr (T.col == col_path::automatic || T.col == col_path::relay) {
      st = detail::gpu::launch_col_relay<S, RS>(in, out, workspace, workspace_bytes, args.seed, stream, &launched);
      if (st != status::success || launched) return st;
    }
    st = detail::gpu::launch_col_streaming<S, RS>(in, out, amax, need, args.seed, traits.wave_size, stream, &launched);
    if (st != status::success || launched) return st;
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
                                                       args.seed, stream);
}

/// quantize_with_scale with default arguments (seed 0 for stochastic rounding).
template <spec S, tuning T = tuning{}, class In>
[[nodiscard]] status quantize_with_scale(matrix_view<const In> in, const quantized<S>& out,
                                         const float* given_scale, float* amax_out,
                                         gpu_stream stream) {
  return quantize_with_scale<S, T>(in, out, given_scale, amax_out, quantize_args{}, stream);
}

}  // namespace fp8q
