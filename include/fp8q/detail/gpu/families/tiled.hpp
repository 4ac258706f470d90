// fp8q — the tiled family: any granularity the GPU serves, any layouts, two launches through
// shared-memory tiles (the fallback of every path list: column-major input, padded or unaligned
// lines, transposes for rowwise and tensorwise). Which elements share a scale comes from
// index_map.hpp (unit_axes).
#pragma once

#include <cstdint>
#include <type_traits>

#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

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
template <class SC, class TC, class In, bool Vec>
__global__ void __launch_bounds__(TC::value.threads)
    tile_amax_kernel(matrix_view<const In> in, std::uint32_t* amax_bits, int tiles) {
  using ax = unit_axes<SC::value>;
  constexpr tuning T = TC::value;
  constexpr int TR = T.tile_rows;
  constexpr int TCOL = T.tile_cols;
  constexpr int threads = T.threads;
  __shared__ float tile[TR][TCOL + 1];
  constexpr int lanes = ax::per_col ? TCOL : TR;  // groups inside one tile
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
    if constexpr (ax::per_row) {
      r0 = static_cast<std::int64_t>(blockIdx.y) * TR;
      c0 = (static_cast<std::int64_t>(blockIdx.x) * tiles + t) * TCOL;
    } else {
      r0 = (static_cast<std::int64_t>(blockIdx.y) * tiles + t) * TR;
      c0 = static_cast<std::int64_t>(blockIdx.x) * TCOL;
    }
    if (r0 >= in.rows || c0 >= in.cols) break;
    load_tile<TR, TCOL, In, Vec>(in, b, r0, c0, tile, threads);
    backend::block_sync();
    if constexpr (ax::per_col) {
      const int lane = tid % TCOL;
      for (int lr = tid / TCOL; lr < TR; lr += split) {
        const std::uint32_t a = abs_bits(tile[lr][lane]);
        run = run > a ? run : a;
      }
    } else if constexpr (ax::per_row) {
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
  if constexpr (ax::whole) {
    run = reducer::run(run, red);
    if (tid == 0) backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + b, run);
  } else {
    const group_partials gp{&partial[0][0], lanes};
    gp.put(tid / lanes, tid % lanes, run);
    backend::block_sync();
    if (tid < lanes) {
      const std::uint32_t m = gp.fold(tid, split);
      const std::int64_t g = ax::per_col
                                 ? static_cast<std::int64_t>(blockIdx.x) * TCOL + tid
                                 : static_cast<std::int64_t>(blockIdx.y) * TR + tid;
      const std::int64_t groups = ax::per_col ? in.cols : in.rows;
      if (g < groups) backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + b * groups + g, m);
    }
  }
}

// Shared memory of tile_cast_kernel: the f32 tile, the byte tile in the output's order (staged
// stores) and the tile's scales. The tiled family fits its tile to the size of this struct.
template <spec S, tuning T, bool Staged>
struct tile_cast_shared {
  static constexpr int TR = T.tile_rows;
  static constexpr int TCOL = T.tile_cols;
  static constexpr int big = TR > TCOL ? TR : TCOL;
  static constexpr int pad = 4;  // lines 17 words apart (fast = 64): threads on consecutive lines hit distinct banks
  float tile[TR][TCOL + 1];
  std::uint32_t qwords[Staged ? (TR * TCOL + pad * big) / 4 : 1];
  float scales[unit_axes<S>::per_col ? TCOL : (unit_axes<S>::per_row ? TR : 1)];
};

// Cast one tile with its groups' scales and store it through the output's layout: staged (a
// padded byte tile in shared memory laid out in the OUTPUT's order, then 16-byte stores along
// the output's contiguous axis) or direct (each thread stores the bytes it encoded).
template <class SC, class TC, class In, bool VecIn, bool VecOut, bool Staged>
__global__ void __launch_bounds__(TC::value.threads)
    tile_cast_kernel(matrix_view<const In> in, quantized<SC::value> out,
                     const std::uint32_t* amax_bits, std::uint64_t seed) {
  constexpr spec S = SC::value;
  using ax = unit_axes<S>;
  constexpr tuning T = TC::value;
  constexpr int TR = T.tile_rows;
  constexpr int TCOL = T.tile_cols;
  constexpr int threads = T.threads;
  constexpr int pad = tile_cast_shared<S, T, Staged>::pad;
  constexpr int E = 4;    // bytes each thread encodes per step, consecutive in the output
  __shared__ tile_cast_shared<S, T, Staged> sm;
  auto& tile = sm.tile;      // [TR][TCOL + 1] f32
  auto& qwords = sm.qwords;  // the byte tile, [slow][fast + pad] FP8 as words
  auto& scales = sm.scales;  // the tile's groups' scales

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

  if constexpr (ax::whole) {
    if (tid == 0) {
      const float s = group_scale<S>(amax_bits[b]);
      scales[0] = s;
      if (bx == 0 && by == 0) write_scales<S>(out, b, 0, 0, s);
    }
  } else if constexpr (ax::per_col) {
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
      const float sc = ax::per_col ? scales[lc] : (ax::per_row ? scales[lr] : scales[0]);
      y[k] = lf + k < fast_limit ? tile[lr][lc] * sc : 0.0f;
    }
    std::uint8_t q[E];
    encode_n<S, T>(y, q, seed, [&](int k) {
      const std::int64_t r = r0 + (out_row_major ? ls : lf + k);
      const std::int64_t c = c0 + (out_row_major ? lf + k : ls);
      return logical_index(b, r, c, M, N);
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

// 256 threads, 64 x 64 tiles unless the tuning says otherwise (resolve_tuning); staged stores
// unless the tuning says direct: 16384 x 5120 bf16 colwise, staged 220 us-class against 1282 us
// direct (row-major output) and 1318 us (column-major output), H200, docs/design.md.
template <spec S, tuning T, class In>
struct tiled {
  static constexpr gpu_path name = gpu_path::tiled;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = false;
  template <tuning U>
  using shared_of = tile_cast_shared<S, U, true>;
  static constexpr tuning R = fit_tile<resolve_tuning(T, S, {}), shared_of>();
  using ax = unit_axes<S>;
  struct plan {};

  static bool accepts(const problem<S, In>&, plan*) { return true; }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>& in) {
    return amax_workspace::of(ax::groups(in.batch, in.rows, in.cols)).bytes;
  }

  static status enqueue(const problem<S, In>& p, const plan&, void* workspace, gpu_stream stream) {
    const matrix_view<const In>& in = p.in;
    const amax_workspace ws = amax_workspace::of(ax::groups(in.batch, in.rows, in.cols));
    std::uint32_t* amax_bits = ws.carve(workspace);  // [batch * groups] f32 bits
    using sc = spec_c<S>;
    using tc = tuning_c<R>;
    status st = backend::memset_async(amax_bits, 0, ws.bytes, stream);
    if (st != status::success) return st;
    const unsigned gx = static_cast<unsigned>((in.cols + R.tile_cols - 1) / R.tile_cols);
    const unsigned gy = static_cast<unsigned>((in.rows + R.tile_rows - 1) / R.tile_rows);
    const unsigned gz = static_cast<unsigned>(in.batch);
    // Each amax block walks `tiles` tiles along the reduction axis: enough blocks to fill the
    // machine a few times over, few enough that the atomics stay a small fraction of the work.
    const std::int64_t along = ax::per_row ? gx : gy;
    const std::int64_t across = (ax::per_row ? gy : gx) * static_cast<std::int64_t>(gz);
    std::int64_t tiles = 1;
    while (tiles < along && across * ((along + tiles * 2 - 1) / (tiles * 2)) >= 8LL * p.dev->multiprocessors)
      tiles *= 2;
    const unsigned ax_ = ax::per_row ? static_cast<unsigned>((gx + tiles - 1) / tiles) : gx;
    const unsigned ay = ax::per_row ? gy : static_cast<unsigned>((gy + tiles - 1) / tiles);
    const bool vec_in = lines_aligned16(in);
    const dim3 amax_grid(ax_, ay, gz);
    st = vec_in ? backend::launch<tile_amax_kernel<sc, tc, In, true>>(*p.dev, false, amax_grid, R.threads, stream,
                                                                      in, amax_bits, static_cast<int>(tiles))
                : backend::launch<tile_amax_kernel<sc, tc, In, false>>(*p.dev, false, amax_grid, R.threads, stream,
                                                                       in, amax_bits, static_cast<int>(tiles));
    if (st != status::success) return st;
    const bool staged = R.store != store_path::direct;
    const bool vec_out = lines_aligned16(p.out.data);
    const dim3 grid(gx, gy, gz);
    // The store path and vector widths are run-time facts of the views: pick the instantiation.
    auto go = [&](auto vin, auto vout, auto stg) {
      return backend::launch<
          tile_cast_kernel<sc, tc, In, decltype(vin)::value, decltype(vout)::value, decltype(stg)::value>>(
          *p.dev, true, grid, R.threads, stream, in, p.out, amax_bits, p.seed);
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
};

}  // namespace fp8q::detail::gpu
