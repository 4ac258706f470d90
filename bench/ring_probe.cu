// fp8q_ring_probe: 3D colwise (expert weights [E, K, N] bf16 -> e4m3fn, row-major output, scales
// (E, 1, N)) by whole column strips streamed through a ring of shared memory, against the
// library's col_hold in the same process. A cluster of CL blocks (one per multiprocessor) holds
// one strip of W units (8 bf16 columns each) and all K rows, K / CL rows per block: producer
// waves stream pieces of PR rows into a ring of P slots (an mbarrier per slot, ring_load says
// how), the consumer waves take the column maxima as pieces land, pool them with the cluster's
// other blocks through distributed shared memory (one mbarrier arrival per word), then cast the
// held pieces with the library's scale and encoder and free their slots, into which the next
// strip's pieces land. No counter, ticket or wait is shared with other clusters; strips are
// dealt out statically (spread: neighbouring clusters in different batch items). nomath: no
// maxima, each byte its bf16's high byte. Same fractions, timer and hash as fp8q_hold_probe; an
// optional argument keeps the labels that contain it. sm_90 only; docs/design.md ("A ring of
// whole strips for 3D colwise") has its results.
#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include "fp8q/gpu/quantize.hpp"
#include "probe_util.hpp"

namespace fq = fp8q;
namespace cg = cooperative_groups;
using namespace probe;

namespace fp8q::detail::gpu {

__device__ inline std::uint32_t smem_addr(const void* p) { return static_cast<std::uint32_t>(__cvta_generic_to_shared(p)); }
__device__ inline void mbar_init(std::uint64_t* b, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(b)), "r"(count) : "memory");
}
__device__ inline void mbar_arrive_expect(std::uint64_t* b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(b)), "r"(bytes) : "memory");
}
__device__ inline void mbar_arrive(std::uint64_t* b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(b)) : "memory");
}
// Whether the phase of parity `parity` has completed; Cluster: with acquire at cluster scope
// (another block of the cluster arrived after its remote stores).
template <bool Cluster>
__device__ inline bool mbar_try(std::uint32_t a, unsigned parity) {
  unsigned ok;
  if constexpr (Cluster)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(ok)
                 : "r"(a), "r"(parity)
                 : "memory");
  else
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(ok)
                 : "r"(a), "r"(parity)
                 : "memory");
  return ok != 0;
}
template <bool Cluster = false>
__device__ inline void mbar_wait(std::uint64_t* b, unsigned parity) {
  const std::uint32_t a = smem_addr(b);
  while (!mbar_try<Cluster>(a, parity)) {
  }
}
__device__ inline void bulk_load(void* dst, const void* src, unsigned bytes, std::uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}
// One box of the tensor map (columns c0.., rows r0..) into dst: the whole piece in one instruction.
__device__ inline void tensor_load(void* dst, const CUtensorMap& map, int c0, int r0, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(c0), "r"(r0), "r"(smem_addr(bar))
      : "memory");
}
// The same with an L2 policy: the input is read once, so its lines may go first.
__device__ inline void tensor_load_evict_first(void* dst, const CUtensorMap& map, int c0, int r0, std::uint64_t* bar) {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3}], "
      "[%4], %5;" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(c0), "r"(r0), "r"(smem_addr(bar)), "l"(policy)
      : "memory");
}
__device__ inline std::uint32_t map_rank(const void* p, unsigned rank) {
  std::uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr(p)), "r"(rank));
  return r;
}
__device__ inline void remote_store(std::uint32_t a, std::uint32_t v) {
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(a), "r"(v) : "memory");
}
__device__ inline void remote_arrive(std::uint32_t a) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(a) : "memory");
}
template <int C>
__device__ inline void consumers_sync() {
  asm volatile("bar.sync 1, %0;" ::"n"(C) : "memory");
}

template <int W, int CL, int PR, int P, int C>
struct ring_shared {
  u32x4 ring[P][PR][W];                     // [slot][piece row][unit] bf16, as in device memory
  std::uint64_t full[P], empty[P], xbar[2];  // mbarriers: landed, freed, the cluster's maxima in
  std::uint32_t part[C / 32][W][4];         // [waves][units][words] packed column maxima
  std::uint32_t xmax[2][CL][W * 4];         // [strip parity][block][words] the cluster's maxima
  float scales[W * 8];                      // [cols] the strip's scales
  int in_range;
};

template <int W, int CL, int PR, int P, int C>
constexpr std::size_t ring_bytes = sizeof(ring_shared<W, CL, PR, P, C>);

// in: [E, K, N] bf16 row-major; out: [E, K, N] FP8 row-major, scales (E, 1, N).
// How the producer loads a piece: a bulk copy (cp.async.bulk) per row by one wave; one box of
// the tensor map (in as [E K, N], boxes of PR rows x 8 W columns) by one lane; or 16-byte
// cp.async by PW waves, each thread's arrival when its own copies land.
enum class ring_load { bulk_rows, tensor, cp_async };

// K % (CL * PR) == 0, N % (8 W) == 0, grid = clusters * CL.
// NoMath: no column maxima (zeros are pooled), no scales, each output byte its bf16's high byte:
// the ring's structure alone. evict_first: the loads' L2 policy.
template <class SC, class TC, int W, int CL, int PR, int P, int C, ring_load Load, bool NoMath, int PW>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(C + 32 * PW, 1)
    ring_kernel(const bf16* __restrict__ in, quantized<SC::value> out, std::int64_t E, std::int64_t K, std::int64_t N,
                const __grid_constant__ CUtensorMap map, bool evict_first, bool spread) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  using sh_t = ring_shared<W, CL, PR, P, C>;
  extern __shared__ __align__(128) unsigned char raw[];
  sh_t& sm = *reinterpret_cast<sh_t*>(raw);
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const std::int64_t clusters = gridDim.x / CL;
  const std::int64_t cid = blockIdx.x / CL;
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t strips_per_item = N / (8 * W);
  const std::int64_t strips = E * strips_per_item;
  const std::int64_t rows = K / CL;  // rows of a strip this block holds
  const int pieces = static_cast<int>(rows / PR);
  if (tid == 0) {
    for (int s = 0; s < P; ++s) {
      mbar_init(&sm.full[s], Load == ring_load::cp_async ? 32 * PW : 1);
      mbar_init(&sm.empty[s], C / 32);
    }
    mbar_init(&sm.xbar[0], (CL - 1) * W * 4);
    mbar_init(&sm.xbar[1], (CL - 1) * W * 4);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster.sync();
  if (tid >= C) {  // the producer waves
    const int lane = tid - C;  // 0 .. 32 PW - 1
    std::int64_t seq = 0;
    for (std::int64_t t0 = cid; t0 < strips; t0 += clusters) {
      const std::int64_t t = spread ? (t0 % E) * strips_per_item + t0 / E : t0;  // spread: clusters side by side in different items
      const std::int64_t b = t / strips_per_item;
      const std::int64_t c0 = (t % strips_per_item) * (8 * W);
      const bf16* base = in + (b * K + rank * rows) * N + c0;  // [rows, N] this block's rows of the strip
      for (int p = 0; p < pieces; ++p, ++seq) {
        const int slot = static_cast<int>(seq % P);
        const std::int64_t use = seq / P;
        if (use > 0) mbar_wait(&sm.empty[slot], static_cast<unsigned>((use - 1) & 1));
        if constexpr (Load == ring_load::tensor) {
          if (lane == 0) {
            mbar_arrive_expect(&sm.full[slot], PR * W * 16);
            const int r0 = static_cast<int>(b * K + rank * rows + p * PR);
            if (evict_first) tensor_load_evict_first(&sm.ring[slot][0][0], map, static_cast<int>(c0), r0, &sm.full[slot]);
            else tensor_load(&sm.ring[slot][0][0], map, static_cast<int>(c0), r0, &sm.full[slot]);
          }
        } else if constexpr (Load == ring_load::bulk_rows) {
          if (lane == 0) mbar_arrive_expect(&sm.full[slot], PR * W * 16);
          __syncwarp();
          for (int r = lane; r < PR; r += 32)
            bulk_load(&sm.ring[slot][r][0], base + (static_cast<std::int64_t>(p) * PR + r) * N, W * 16, &sm.full[slot]);
        } else {  // 16-byte asynchronous copies, each thread's arrival when its own have landed
          const bf16* src = base + static_cast<std::int64_t>(p) * PR * N;  // [PR, N] the piece
#pragma unroll
          for (int i = lane; i < PR * W; i += 32 * PW) {
            const std::uint32_t dst = smem_addr(&sm.ring[slot][i / W][i % W]);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src + (i / W) * N + (i % W) * 8) : "memory");
          }
          asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(&sm.full[slot])) : "memory");
        }
      }
    }
  } else {  // the consumer waves
    const int wave = tid / 32, lane = tid % 32;
    const int uc = tid % W;           // this thread's unit column
    constexpr int rstep = C / W;      // piece rows one pass of the consumers covers
    static_assert(PR % rstep == 0 && 32 % W == 0, "whole passes");
    std::int64_t seq = 0;
    std::int64_t j = 0;  // strips done
    for (std::int64_t t0 = cid; t0 < strips; t0 += clusters, ++j) {
      const std::int64_t t = spread ? (t0 % E) * strips_per_item + t0 / E : t0;
      const std::int64_t b = t / strips_per_item;
      const std::int64_t c0 = (t % strips_per_item) * (8 * W);
      // the count: column maxima of every piece as it lands
      column_max<bf16> cm;
      for (int p = 0; p < pieces; ++p) {
        const std::int64_t s = seq + p;
        const int slot = static_cast<int>(s % P);
        mbar_wait(&sm.full[slot], static_cast<unsigned>((s / P) & 1));
        if constexpr (!NoMath) {
#pragma unroll
          for (int r = tid / W; r < PR; r += rstep) cm.add(sm.ring[slot][r][uc]);
        }
      }
      // fold over the wave's lanes of the same unit column, then over the waves
#pragma unroll
      for (int k = 0; k < 4; ++k) {
#pragma unroll
        for (int m = 16; m >= W; m /= 2) cm.w[k] = max_magnitude16x2<bf16>(cm.w[k], __shfl_xor_sync(0xffffffffu, cm.w[k], m));
      }
      if (lane < W) {
#pragma unroll
        for (int k = 0; k < 4; ++k) sm.part[wave][lane][k] = cm.w[k] & 0x7fff7fffu;
      }
      consumers_sync<C>();
      const int buf = static_cast<int>(j & 1);
      if (wave == 0) {
        std::uint32_t mine = 0;
        if (lane < W * 4) {
#pragma unroll
          for (int v = 0; v < C / 32; ++v) mine = fast::max_u16x2(mine, sm.part[v][lane / 4][lane % 4]);
          if constexpr (CL > 1) {
            for (unsigned r = 0; r < CL; ++r) {
              if (r == rank) continue;
              remote_store(map_rank(&sm.xmax[buf][rank][lane], r), mine);
              remote_arrive(map_rank(&sm.xbar[buf], r));
            }
          }
        }
        if constexpr (CL > 1) {
          mbar_wait<true>(&sm.xbar[buf], static_cast<unsigned>((j >> 1) & 1));
          if (lane < W * 4) {
            for (unsigned r = 0; r < CL; ++r)
              if (r != rank) mine = fast::max_u16x2(mine, sm.xmax[buf][r][lane]);
          }
        }
        // the scales: column 2 lane + h from half h of word lane
        bool ok = true;
        if (lane < W * 4) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const std::uint32_t a = abs_bits(to_float(bf16{static_cast<std::uint16_t>(h == 0 ? mine & 0xffffu : mine >> 16)}));
            const float sc = group_scale<S>(a);
            if constexpr (in_range_capable<S>()) ok = ok && in_range_group<S>(a, sc);
            sm.scales[2 * lane + h] = sc;
            if (rank == 0) write_scales<S>(out, b, 0, c0 + 2 * lane + h, sc);
          }
        }
        const bool all_ok = __all_sync(0xffffffffu, ok);
        if (lane == 0) sm.in_range = all_ok ? 1 : 0;
      }
      consumers_sync<C>();
      float sc[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) sc[k] = sm.scales[uc * 8 + k];
      const bool in_range = in_range_capable<S>() && sm.in_range != 0;
      auto* dst0 = reinterpret_cast<std::uint8_t*>(out.data.data) + (b * K + rank * rows) * N + c0 + uc * 8;  // [rows, N] FP8
      for (int p = 0; p < pieces; ++p, ++seq) {
        const int slot = static_cast<int>(seq % P);
        auto body = [&](auto fast_tag) {
#pragma unroll
          for (int r = tid / W; r < PR; r += rstep) {
            const u32x4 v = sm.ring[slot][r][uc];
            const std::int64_t row = static_cast<std::int64_t>(p) * PR + r;
            if constexpr (NoMath) {
              *reinterpret_cast<uint2*>(dst0 + row * N) = make_uint2(__byte_perm(v.x, v.y, 0x7531), __byte_perm(v.z, v.w, 0x7531));
              continue;
            }
            std::uint32_t w[2];
            if constexpr (decltype(fast_tag)::value) {
              encode_unit_words_in_range<S, T, bf16, 8>(v, sc, w);
            } else {
              const std::uint64_t first = logical_index(b, rank * rows + row, c0 + uc * 8, K, N);
              encode_unit_words<S, T, bf16, 8>(v, sc, w, 0, [&](int k) { return first + k; });
            }
            *reinterpret_cast<uint2*>(dst0 + row * N) = make_uint2(w[0], w[1]);
          }
        };
        if (in_range) body(std::true_type{});
        else body(std::false_type{});
        __syncwarp();
        if (lane == 0) mbar_arrive(&sm.empty[slot]);
      }
    }
  }
  cluster.sync();  // no block leaves while another may still write its maxima here
}

}  // namespace fp8q::detail::gpu

namespace gd = fp8q::detail::gpu;

constexpr fq::spec col{.out = fq::format::e4m3fn, .granularity = fq::granularity::col};
template <fq::tuning T> struct tn { static constexpr fq::tuning value = T; };
template <fq::spec S> struct sp { static constexpr fq::spec value = S; };
template <int V> using ic = std::integral_constant<int, V>;
template <fp8q::detail::gpu::ring_load L> using load_c = std::integral_constant<fp8q::detail::gpu::ring_load, L>;

int main(int argc, char** argv) {
  const expert_buffers buf;  // in: [128, 5120, 8192] bf16
  const auto* in = reinterpret_cast<const fq::bf16*>(buf.in);
  cudaStream_t st; cuda_ok(cudaStreamCreate(&st));
  const int iters = std::getenv("EXP_ITERS") ? std::atoi(std::getenv("EXP_ITERS")) : 41;
  timer tm(st, iters, 3);
  const double copy_bw = copy_bandwidth(tm);
  use_probe_stream(st, tm);
  int sms = 0;
  cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (const char* e = std::getenv("FP8Q_PROBE_SMS")) sms = std::atoi(e);
  const std::string only = argc > 1 ? argv[1] : "";
  auto skip = [&](const char* label) { return !only.empty() && std::string(label).find(only) == std::string::npos; };
  constexpr fq::spec S = col;
  auto view = [&](i64 E, i64 K, i64 N) {
    fq::quantized<S> q{};
    auto* d = reinterpret_cast<typename fq::quantized<S>::data_t*>(buf.out);
    q.data = fq::batched(fq::row_major(d, K, N), E);        // [E, K, N] FP8
    q.scale = fq::batched(fq::row_major(buf.sc, 1, N), E);   // [E, 1, N] f32
    q.inverse = fq::batched(fq::row_major(buf.inv, 1, N), E);  // [E, 1, N] f32
    return q;
  };
  auto report = [&](const char* label, i64 E, i64 K, i64 N, auto call) {
    const std::size_t n = static_cast<std::size_t>(E * K * N);
    cuda_ok(poison_memset(buf.out, 0xa5, n)); cuda_ok(poison_memset(buf.sc, 0xa5, E * N * 4)); cuda_ok(poison_memset(buf.inv, 0xa5, E * N * 4));
    if (!call()) return;
    cuda_ok(cudaStreamSynchronize(st));
    cuda_ok(cudaGetLastError());
    const std::uint64_t hh = device_hash({{buf.out, n}, {buf.sc, static_cast<std::size_t>(E * N * 4)}, {buf.inv, static_cast<std::size_t>(E * N * 4)}});
    const float t = tm.median_us(call);
    const double bytes = 3.0 * static_cast<double>(n) + 8.0 * static_cast<double>(E * N);
    std::printf("%-40s %8.1f us  frac_copy %.3f  hash %016llx\n", label, t, bytes / (t * 1e-6) / copy_bw, (unsigned long long)hh);
  };
  auto run_lib = [&](const char* label, auto tuning_tag, i64 E, i64 K, i64 N) {
    if (skip(label)) return;
    constexpr fq::tuning T = decltype(tuning_tag)::value;
    const auto iv = fq::batched(fq::row_major<const fq::bf16>(in, K, N), E);  // [E, K, N] bf16
    const auto q = view(E, K, N);
    report(label, E, K, N, [&] {
      auto s = fq::quantize<S, T>(iv, q, {.stream = st, .workspace = buf.ws, .workspace_bytes = expert_buffers::ws_bytes});
      if (s != fq::status::success) { std::printf("%s: status %d\n", label, (int)s); return false; }
      return true;
    });
  };
  constexpr fq::tuning hold{.path = fq::gpu_path::col_hold};
  constexpr fq::tuning hold_r = gd::col_hold<S, hold, fq::bf16>::R;
  auto run_ring = [&](const char* label, auto kernel_tag, std::size_t smem, int cl, int w, int pr, int threads, bool evict,
                      bool spread, i64 E, i64 K, i64 N) {
    if (skip(label)) return;
    constexpr auto kernel = decltype(kernel_tag)::value;
    cuda_ok(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    const i64 strips = E * (N / (8 * w));
    // every cluster resident at once: the strips are dealt out statically
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(sms / cl * cl));
    cfg.blockDim = dim3(static_cast<unsigned>(threads));
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = static_cast<unsigned>(cl);
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int fit = 0;
    cuda_ok(cudaOccupancyMaxActiveClusters(&fit, kernel, &cfg));
    const i64 clusters = std::min<i64>(std::min<i64>(sms / cl, fit), strips);
    std::printf("%s: %d clusters fit the device, %lld launched, %zu bytes of shared memory\n", label, fit,
                static_cast<long long>(clusters), smem);
    const auto q = view(E, K, N);
    // in as [E K, N] bf16, boxes of pr rows x 8 w columns, no swizzle: a box lands as [pr][w] units
    CUtensorMap map{};
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(N), static_cast<cuuint64_t>(E * K)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(N * 2)};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(8 * w), static_cast<cuuint32_t>(pr)};
    const cuuint32_t estr[2] = {1, 1};
    if (cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, buf.in, dims, strides, box, estr,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      std::printf("%s: cuTensorMapEncodeTiled failed\n", label);
      return;
    }
    report(label, E, K, N, [&] {
      kernel<<<static_cast<unsigned>(clusters * cl), threads, smem, st>>>(in, q, E, K, N, map, evict, spread);
      return true;
    });
  };
  const i64 E = 128, K = 5120, N = 8192;
  // W units a strip, CL blocks a cluster, PR rows a piece, P pieces a ring, C consumer threads
  auto ring = [&](const char* label, auto w, auto cl, auto pr, auto p, auto c, auto load, auto nomath, auto pw, bool evict,
                  bool spread) {
    constexpr int W = decltype(w)::value, CL = decltype(cl)::value, PR = decltype(pr)::value;
    constexpr int P = decltype(p)::value, C = decltype(c)::value;
    constexpr auto kernel = &gd::ring_kernel<sp<S>, tn<hold_r>, W, CL, PR, P, C, decltype(load)::value, decltype(nomath)::value,
                                            decltype(pw)::value>;
    run_ring(label, std::integral_constant<decltype(kernel), kernel>{}, gd::ring_bytes<W, CL, PR, P, C>, CL, W, PR,
             C + 32 * decltype(pw)::value, evict, spread, E, K, N);
  };
  for (int rep = 0; rep < 2; ++rep) {
    run_lib("col3d 128x5120x8192 col_hold", tn<hold>{}, E, K, N);
    ring("ring w4 cl2 pr128 p26 c256 rows", ic<4>{}, ic<2>{}, ic<128>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::bulk_rows>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w8 cl4 pr64 p26 c256 rows", ic<8>{}, ic<4>{}, ic<64>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::bulk_rows>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w4 cl2 pr128 p26 c256 tma", ic<4>{}, ic<2>{}, ic<128>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w4 cl2 pr64 p52 c256 tma", ic<4>{}, ic<2>{}, ic<64>{}, ic<52>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w4 cl2 pr32 p104 c128 tma", ic<4>{}, ic<2>{}, ic<32>{}, ic<104>{}, ic<128>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w4 cl2 pr128 p26 c512 tma", ic<4>{}, ic<2>{}, ic<128>{}, ic<26>{}, ic<512>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w4 cl2 pr128 p26 c256 tma evict_first", ic<4>{}, ic<2>{}, ic<128>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, true, false);
    ring("ring w4 cl2 pr128 p26 c256 tma spread", ic<4>{}, ic<2>{}, ic<128>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, true);
    ring("ring w4 cl2 pr128 p26 c256 tma nomath", ic<4>{}, ic<2>{}, ic<128>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<true>{}, ic<1>{}, false, false);
    ring("ring w4 cl2 pr128 p26 c256 tma nomath spread", ic<4>{}, ic<2>{}, ic<128>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<true>{}, ic<1>{}, false, true);
    ring("ring w4 cl4 pr64 p52 c256 tma", ic<4>{}, ic<4>{}, ic<64>{}, ic<52>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w4 cl4 pr64 p52 c256 tma spread", ic<4>{}, ic<4>{}, ic<64>{}, ic<52>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, true);
    ring("ring w4 cl4 pr64 p52 c256 tma nomath", ic<4>{}, ic<4>{}, ic<64>{}, ic<52>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<true>{}, ic<1>{}, false, false);
    ring("ring w4 cl8 pr64 p52 c256 tma", ic<4>{}, ic<8>{}, ic<64>{}, ic<52>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w8 cl4 pr64 p26 c256 tma", ic<8>{}, ic<4>{}, ic<64>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w8 cl4 pr64 p26 c512 tma", ic<8>{}, ic<4>{}, ic<64>{}, ic<26>{}, ic<512>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w8 cl4 pr32 p52 c256 tma", ic<8>{}, ic<4>{}, ic<32>{}, ic<52>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w8 cl4 pr64 p26 c256 tma spread", ic<8>{}, ic<4>{}, ic<64>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, true);
    ring("ring w8 cl4 pr64 p26 c256 tma nomath", ic<8>{}, ic<4>{}, ic<64>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<true>{}, ic<1>{}, false, false);
    ring("ring w8 cl4 pr64 p26 c256 tma nomath spread", ic<8>{}, ic<4>{}, ic<64>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<true>{}, ic<1>{}, false, true);
    ring("ring w8 cl8 pr32 p52 c256 tma", ic<8>{}, ic<8>{}, ic<32>{}, ic<52>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<false>{}, ic<1>{}, false, false);
    ring("ring w8 cl8 pr32 p52 c256 tma nomath", ic<8>{}, ic<8>{}, ic<32>{}, ic<52>{}, ic<256>{}, load_c<gd::ring_load::tensor>{},
         std::bool_constant<true>{}, ic<1>{}, false, false);
    ring("ring w4 cl2 pr128 p26 c256 cpasync pw2", ic<4>{}, ic<2>{}, ic<128>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::cp_async>{},
         std::bool_constant<false>{}, ic<2>{}, false, false);
    ring("ring w4 cl2 pr128 p26 c256 cpasync pw4", ic<4>{}, ic<2>{}, ic<128>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::cp_async>{},
         std::bool_constant<false>{}, ic<4>{}, false, false);
    ring("ring w4 cl2 pr128 p26 c256 cpasync pw4 nomath", ic<4>{}, ic<2>{}, ic<128>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::cp_async>{},
         std::bool_constant<true>{}, ic<4>{}, false, false);
    ring("ring w4 cl4 pr64 p52 c256 cpasync pw4", ic<4>{}, ic<4>{}, ic<64>{}, ic<52>{}, ic<256>{}, load_c<gd::ring_load::cp_async>{},
         std::bool_constant<false>{}, ic<4>{}, false, false);
    ring("ring w8 cl4 pr64 p26 c256 cpasync pw4", ic<8>{}, ic<4>{}, ic<64>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::cp_async>{},
         std::bool_constant<false>{}, ic<4>{}, false, false);
    ring("ring w8 cl4 pr64 p26 c256 cpasync pw4 nomath", ic<8>{}, ic<4>{}, ic<64>{}, ic<26>{}, ic<256>{}, load_c<gd::ring_load::cp_async>{},
         std::bool_constant<true>{}, ic<4>{}, false, false);
  }
  return 0;
}
