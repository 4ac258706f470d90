// fp8q — colwise in one pass on thread-block clusters (gpu_path::col_cluster; NVIDIA sm_90+,
// opt-in: byte-exact, slower than the relay on an H200, docs/design.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "fp8q/detail/gpu/byte_tile.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

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

// Static shared memory of col_cluster_kernel (the host adds it to the dynamic bytes it fits).
template <int Threads, int StripCols>
struct cluster_shared {
  std::uint32_t partial[Threads / 32][StripCols];
  std::uint32_t cta_amax[StripCols];
  float scales[StripCols];
};

template <class SC, class TC, class In, int StripCols, int K, class Cluster>
__global__ void __launch_bounds__(TC::value.threads, 1)
    col_cluster_kernel(matrix_view<const In> in, quantized<SC::value> out, int seg_rows,
                       std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr int U = unit_elems<In>;
  constexpr int upr = StripCols / U;             // units per row of the strip
  constexpr int warps = threads / 32;            // NVIDIA-only kernel: 32-thread warps
  static_assert(threads % 32 == 0 && 32 % upr == 0, "a warp holds whole strip rows");
  static_assert(threads >= StripCols, "one thread per strip column for the amax");
  extern __shared__ u32x4 dyn[];
  u32x4* tile = dyn;  // [seg_rows][upr] units of In
  auto* bytes = reinterpret_cast<std::uint8_t*>(dyn + static_cast<std::size_t>(seg_rows) * upr);
  __shared__ cluster_shared<threads, StripCols> sm;
  auto& partial = sm.partial;    // [warps][StripCols] f32 bits
  auto& cta_amax = sm.cta_amax;  // [StripCols] f32 bits: this CTA's, read by its peers
  auto& scales = sm.scales;      // [StripCols] f32

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
    const group_partials gp{&partial[0][0], StripCols};
    put_unit_columns<upr, U>(gp, cmax, tid % 32, tid / 32);
    backend::block_sync();
    if (tid < StripCols) cta_amax[tid] = gp.fold(tid, warps);
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
      encode_quad<S, T, In, U>(v, sc, seed, logical_index(b, r0 + rq * 4, c0 + uc * U, M, N), N, q);
      put_quad<U>(out_tile, rq, uc, q);
    }
    backend::block_sync();

    // 5. whole 16-byte pieces of output lines to device memory
    store_byte_tile<S>(out_tile, out, b, r0, c0, rows_here, cols_here, tid, threads);
    backend::block_sync();  // the byte tile and the input tile are reused by the next task
    Cluster::wait();        // every peer has read this CTA's cta_amax: it may be rewritten (or freed)
  }
}

// 512 threads unless the tuning says otherwise (one CTA per multiprocessor holds up to ~200 KB
// of a column strip); 16 loads in flight per thread up to 512 threads, 8 above.
template <spec S, tuning T, class In>
struct col_cluster {
  static constexpr gpu_path name = gpu_path::col_cluster;
  static constexpr bool opt_in = true;
  static constexpr bool device_dependent = true;  // clusters, shared memory, occupancy
  static constexpr tuning R = T.threads == 0 ? with_threads(resolve_tuning(T, S, {}), 512)
                                             : resolve_tuning(T, S, {});
  static constexpr int strip = 64;  // columns per strip: one 128-byte line of bf16 per row
  static constexpr int K = units_or(T, R.threads <= 512 ? 16 : 8);
  static constexpr bool runs = backend::has_clusters && R.threads >= strip;
  // dependent on In, so that a toolchain without clusters never looks into it
  using cluster_api = std::conditional_t<sizeof(In) != 0, backend::cluster_api, void>;
  struct plan {
    int cluster = 0;  // CTAs per cluster
    int seg = 0;      // rows per CTA
    unsigned grid_x = 0;
  };

  static bool accepts(const problem<S, In>& p, plan* pl) {
    if constexpr (!runs) {
      return false;
    } else {
      constexpr int max_cluster = cluster_api::max_size;
      if (!streams_columns(p) || p.in.rows > static_cast<std::int64_t>(max_cluster) * 65536) return false;
      if (p.dev == nullptr) return true;
      const int shared = cluster_api::shared_bytes(*p.dev);
      if (shared == 0) return false;
      auto seg_rows = [&](int cs) {
        const std::int64_t per = (p.in.rows + cs - 1) / cs;
        return static_cast<int>((per + 15) / 16 * 16);
      };
      auto fits = [&](int cs) {
        return cluster_shared_bytes<In, strip>(seg_rows(cs)) + sizeof(cluster_shared<R.threads, strip>) <=
               static_cast<std::size_t>(shared);
      };
      int cs = 1;
      while (cs <= max_cluster && !fits(cs)) cs *= 2;
      if (cs > max_cluster) return false;  // a column strip does not fit on chip
      const std::int64_t tasks = (p.in.cols + strip - 1) / strip * p.in.batch;
      while (cs < max_cluster && tasks * cs < p.dev->multiprocessors) cs *= 2;  // spread small problems out
      const int seg = seg_rows(cs);
      int clusters = 0;
      if (cluster_api::fit(kernel(), cs, R.threads, cluster_shared_bytes<In, strip>(seg), &clusters) != status::success ||
          clusters < 1)
        return false;
      if (pl != nullptr) *pl = plan{cs, seg, static_cast<unsigned>(tasks < clusters ? tasks : clusters)};
      return true;
    }
  }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>&) { return 0; }

  static status enqueue(const problem<S, In>& p, const plan& pl, void*, gpu_stream stream) {
    if constexpr (!runs) {
      return status::bad_layout;
    } else {
      return cluster_api::launch(kernel(), pl.grid_x, pl.cluster, R.threads,
                                          cluster_shared_bytes<In, strip>(pl.seg), stream, p.in, p.out, pl.seg, p.seed);
    }
  }

 private:
  static auto kernel() {
    return &col_cluster_kernel<spec_c<S>, tuning_c<R>, In, strip, K, cluster_api>;
  }
};

}  // namespace fp8q::detail::gpu
