// No-math kernels with per-group colwise's dependency (docs/design.md, "Per-group colwise: what
// its dependency costs"): the recipe's minimum traffic (bf16 read once where a group's strip fits,
// FP8 bytes written once as column-major lines) and its one dependency (no byte of a (group,
// column) is written before every row of the group has been read), with the amax an OR of the
// bits and the encode each bf16's high byte. Used by fp8q_group_col_probe. CUDA only (the cluster
// kernels need sm_90).
//
// Every kernel takes (group, 64-column strip) tasks; its rows are aligned to 16 (base = the
// group's first row rounded down), a thread holds quads of 4 rows x one 16-byte unit in registers,
// and a tile's high bytes leave through a shared tile of column lines as 16-byte pieces (bytes at
// a run's two ends). A group longer than what a task holds is read twice.
//   - group_col_kernel<Q>: a block per task, Q quads per thread (pieces of Q * 128 - 16 rows);
//   - group_col_cluster_kernel: a cluster of C CTAs of 128 rows per task, the OR pooled through
//     distributed shared memory (the shape of a cluster family of the library, not kept);
//   - group_col_persistent_kernel: the same with persistent clusters walking the tasks.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "fp8q/detail/gpu/byte_tile.hpp"

namespace bound {

constexpr int pitch_of(int rows) { return rows + 16; }  // bytes per tile line: 16-aligned, banks staggered

// High bytes of two words of bf16 pairs: bytes 1 and 3 of lo, then of hi.
__device__ inline std::uint32_t high_bytes2(std::uint32_t lo, std::uint32_t hi) { return __byte_perm(lo, hi, 0x7531); }

// One quad (4 rows x 8 bf16 of unit column uc, rows 4 quad .. of the tile) into the byte tile of
// column lines ([64][pitch]), masked by keep (the dependency on the group's OR).
__device__ inline void put_quad(std::uint8_t* tile, int pitch, int uc, int quad, const uint4 (&v)[4], std::uint32_t keep) {
  std::uint32_t q[4][2];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    q[j][0] = high_bytes2(v[j].x, v[j].y) & keep;
    q[j][1] = high_bytes2(v[j].z, v[j].w) & keep;
  }
#pragma unroll
  for (int w = 0; w < 2; ++w) {
    std::uint32_t c[4];
    fp8q::detail::gpu::transpose_quad(q[0][w], q[1][w], q[2][w], q[3][w], c);  // the library's 4 x 4 byte transpose
#pragma unroll
    for (int k = 0; k < 4; ++k) *reinterpret_cast<std::uint32_t*>(tile + (uc * 8 + 4 * w + k) * pitch + quad * 4) = c[k];
  }
}

// Rows [lo, hi) of the tile (its row 0 is output row b0, a multiple of 16) to the 64 column lines
// at out + (c0 + line) * rows, by 256 threads.
__device__ inline void store_tile(const std::uint8_t* tile, int pitch, std::uint8_t* out, std::int64_t rows,
                                  std::int64_t c0, std::int64_t b0, std::int64_t lo, std::int64_t hi, int tid) {
  const int per_line = static_cast<int>((hi - b0 + 15) / 16);
  for (int it = tid; it < 64 * per_line; it += 256) {
    const int line = it / per_line;
    const int w = it % per_line;
    const std::int64_t r0 = b0 + 16 * w;
    std::uint8_t* dst = out + (c0 + line) * rows + r0;  // [16] bytes of column line c0 + line
    const std::uint8_t* src = tile + line * pitch + 16 * w;
    if (r0 >= lo && r0 + 16 <= hi) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    } else {
      for (int b = 0; b < 16; ++b)
        if (r0 + b >= lo && r0 + b < hi) dst[b] = src[b];
    }
  }
}

// Rows r0 .. r0 + 3 of unit column uc, the ones in [begin, end) (the rest zero).
__device__ inline void load_quad(const std::uint16_t* in, std::int64_t cols, std::int64_t c0, int uc, std::int64_t r0,
                                 std::int64_t begin, std::int64_t end, uint4 (&v)[4]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    v[j] = uint4{0, 0, 0, 0};
    if (r0 + j >= begin && r0 + j < end) v[j] = *reinterpret_cast<const uint4*>(in + (r0 + j) * cols + c0 + uc * 8);
  }
}

__device__ inline std::uint32_t or_quad(const uint4 (&v)[4]) {
  std::uint32_t m = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) m |= v[j].x | v[j].y | v[j].z | v[j].w;
  return m;
}

// The OR of m over the block (Threads threads); red: [Threads / 32] shared words; ends with a
// barrier (which also publishes every thread's earlier shared-memory writes to the block).
template <int Threads = 256>
__device__ inline std::uint32_t block_or(std::uint32_t m, std::uint32_t* red, int tid) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) m |= __shfl_xor_sync(0xffffffffu, m, d);
  if (tid % 32 == 0) red[tid / 32] = m;
  __syncthreads();
  m = 0;
#pragma unroll
  for (int w = 0; w < Threads / 32; ++w) m |= red[w];
  return m;
}

// m == 0 only where every input bit is 0, whose high bytes are 0 anyway: the mask keeps the
// dependency without changing a byte.
__device__ inline std::uint32_t keep_of(std::uint32_t m) { return m != 0 ? 0xffffffffu : 0u; }

// in: [rows, cols] bf16 bits, row-major (cols % 64 == 0); out: [rows, cols] bytes, column-major
// (ld = rows, rows % 16 == 0); ends: [G] int32 (monotone, <= rows); grid (cols / 64, G); 256 threads.
template <int Q>
__global__ void __launch_bounds__(256) group_col_kernel(const std::uint16_t* in, std::uint8_t* out,
                                                        const std::int32_t* ends, std::int64_t rows, std::int64_t cols) {
  constexpr int P = Q * 128;     // rows of the tile
  constexpr int piece = P - 16;  // group rows per piece: the tile keeps 16 rows of phase
  constexpr int pitch = pitch_of(P);
  __shared__ __align__(16) std::uint8_t tile[64 * pitch];  // [64 columns][pitch] bytes
  __shared__ std::uint32_t red[8];
  const int g = static_cast<int>(blockIdx.y);
  const std::int64_t begin = g == 0 ? 0 : ends[g - 1];
  const std::int64_t end = ends[g];
  if (end <= begin) return;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * 64;
  const int tid = static_cast<int>(threadIdx.x);
  const int uc = tid % 8;
  const int rq = tid / 8;
  const std::int64_t pieces = (end - begin + piece - 1) / piece;
  auto base_of = [&](std::int64_t k) { return (begin + k * piece) & ~std::int64_t{15}; };
  auto load = [&](std::int64_t k, uint4 (&v)[Q][4]) {
    const std::int64_t lo = begin + k * piece, hi = lo + piece < end ? lo + piece : end;
#pragma unroll
    for (int i = 0; i < Q; ++i) load_quad(in, cols, c0, uc, base_of(k) + (i * 32 + rq) * 4, lo, hi, v[i]);
  };
  uint4 v[Q][4];
  std::uint32_t m = 0;
  for (std::int64_t k = 0; k < pieces; ++k) {  // pass 1: every piece's bits
    load(k, v);
#pragma unroll
    for (int i = 0; i < Q; ++i) m |= or_quad(v[i]);
  }
  const std::uint32_t keep = keep_of(block_or(m, red, tid));
  for (std::int64_t k = pieces - 1; k >= 0; --k) {  // pass 2, last piece first (still in registers, then L2)
    if (k != pieces - 1) load(k, v);
    const std::int64_t lo = begin + k * piece, hi = lo + piece < end ? lo + piece : end;
#pragma unroll
    for (int i = 0; i < Q; ++i) put_quad(tile, pitch, uc, i * 32 + rq, v[i], keep);
    __syncthreads();
    store_tile(tile, pitch, out, rows, c0, base_of(k), lo, hi, tid);
    __syncthreads();
  }
}

// One (group, strip) task of a cluster of C CTAs (rank: this CTA's): CTA rank takes rows base +
// (j * C + rank) * 128 .. + 127; pooled: rank 0's word for this task's OR (zero before).
__device__ inline void cluster_task(const std::uint16_t* in, std::uint8_t* out, const std::int32_t* ends,
                                    std::int64_t rows, std::int64_t cols, std::int64_t t, int C, int rank,
                                    std::uint8_t* tile, std::uint32_t* red, std::uint32_t* pooled) {
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  constexpr int pitch = pitch_of(128);
  const std::int64_t strips = cols / 64;
  const std::int64_t g = t / strips;
  const std::int64_t c0 = (t % strips) * 64;
  const std::int64_t begin = g == 0 ? 0 : ends[g - 1];
  const std::int64_t end = ends[g];
  const int tid = static_cast<int>(threadIdx.x);
  const int uc = tid % 8;
  const int rq = tid / 8;
  const std::int64_t base = begin & ~std::int64_t{15};
  const std::int64_t rounds = end > begin ? (end - base + C * 128 - 1) / (C * 128) : 0;
  auto tile_row = [&](std::int64_t k) { return base + (k * C + rank) * 128; };
  uint4 v[4];
  std::uint32_t m = 0;
  for (std::int64_t k = 0; k < rounds; ++k) {
    load_quad(in, cols, c0, uc, tile_row(k) + rq * 4, begin, end, v);
    m |= or_quad(v);
  }
  m = block_or(m, red, tid);
  if (tid == 0) atomicOr(cluster.map_shared_rank(pooled, 0), m);
  cluster.sync();
  const std::uint32_t keep = keep_of(*cluster.map_shared_rank(pooled, 0));
  for (std::int64_t k = rounds - 1; k >= 0; --k) {
    const std::int64_t b0 = tile_row(k);
    const std::int64_t lo = b0 > begin ? b0 : begin;
    const std::int64_t hi = b0 + 128 < end ? b0 + 128 : end;
    if (hi <= lo) continue;
    if (k != rounds - 1) load_quad(in, cols, c0, uc, b0 + rq * 4, begin, end, v);
    put_quad(tile, pitch, uc, rq, v, keep);
    __syncthreads();
    store_tile(tile, pitch, out, rows, c0, b0, lo, hi, tid);
    __syncthreads();
  }
}

// grid (cols / 64 * G, C); 256 threads; cluster (1, C, 1): one cluster per task.
__global__ void __launch_bounds__(256)
    group_col_cluster_kernel(const std::uint16_t* in, std::uint8_t* out, const std::int32_t* ends,
                             std::int64_t rows, std::int64_t cols) {
  __shared__ __align__(16) std::uint8_t tile[64 * pitch_of(128)];  // [64 columns][pitch] bytes
  __shared__ std::uint32_t red[8];
  __shared__ std::uint32_t pooled;
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  if (threadIdx.x == 0) pooled = 0;
  cluster.sync();  // every CTA's word is zero before anyone ORs into rank 0's
  cluster_task(in, out, ends, rows, cols, blockIdx.x, static_cast<int>(gridDim.y),
               static_cast<int>(cluster.block_rank()), tile, red, &pooled);
  cluster.sync();  // rank 0's word stays until every CTA has read it
}

// grid (clusters, C); cluster (1, C, 1): persistent clusters walk the tasks. The OR in three
// rotating words of rank 0 (one cluster barrier per task: rank 0 clears the word of task i + 2
// after task i's barrier, when every CTA has read task i - 1's).
__global__ void __launch_bounds__(256, 5)
    group_col_persistent_kernel(const std::uint16_t* in, std::uint8_t* out, const std::int32_t* ends,
                                std::int64_t rows, std::int64_t cols, std::int64_t groups) {
  __shared__ __align__(16) std::uint8_t tile[64 * pitch_of(128)];  // [64 columns][pitch] bytes
  __shared__ std::uint32_t red[8];
  __shared__ std::uint32_t pooled[3];
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  if (threadIdx.x < 3) pooled[threadIdx.x] = 0;
  cluster.sync();
  int turn = 0;
  for (std::int64_t t = blockIdx.x; t < groups * (cols / 64); t += gridDim.x, turn = turn == 2 ? 0 : turn + 1) {
    cluster_task(in, out, ends, rows, cols, t, static_cast<int>(gridDim.y), rank, tile, red, &pooled[turn]);
    if (rank == 0 && threadIdx.x == 0) pooled[turn == 0 ? 2 : turn - 1] = 0;  // task i + 2's word
  }
  cluster.sync();
}

// Launch `kernel` on `stream` with grid (x, c) and clusters (1, c, 1).
template <class... P, class... A>
cudaError_t launch_clusters(void (*kernel)(P...), unsigned x, int c, cudaStream_t stream, A... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(x, static_cast<unsigned>(c), 1);
  cfg.blockDim = dim3(256);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 1;
  attr[0].val.clusterDim.y = static_cast<unsigned>(c);
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, args...);
}

}  // namespace bound
