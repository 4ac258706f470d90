// fp8q — tensorwise in two launches on dense views (each batch item one flat array in the
// view's order): an amax launch, then a cast launch that computes the scale itself and starts
// while the amax launch drains (dependent launch, sm_90+). The cast kernel alone is delayed
// scaling (quantize_with_scale): a given scale, this call's amax recorded in the same pass.
#pragma once

#include <cstdint>
#include <type_traits>

#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

// Tensorwise on dense data: each batch item is one flat array in the view's memory order, cut
// into chunks of K units per thread (all K loads in flight before the first use).
// in: [count] In per batch item (blockIdx.y), batch_stride apart; amax: [batch] f32 bits
template <class SC, class TC, class In, int U, int K>
__global__ void __launch_bounds__(TC::value.threads)
    flat_amax_kernel(const In* in, std::int64_t count, std::int64_t batch_stride,
                     std::uint32_t* amax_bits) {
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr std::int64_t chunk = static_cast<std::int64_t>(threads) * K;
  using reducer = backend::block_max<threads>;
  __shared__ typename reducer::storage red;
  const In* src = in + static_cast<std::int64_t>(blockIdx.y) * batch_stride;  // [count] In
  const std::int64_t units = count / U;
  const int tid = static_cast<int>(threadIdx.x);
  std::uint32_t amax = 0;
  for (std::int64_t base = blockIdx.x * chunk; base < units; base += gridDim.x * chunk) {
    unit_raw<In, U> w[K];
    load_units<In, U, K>(src, base + tid, threads, units, w);
#pragma unroll
    for (int j = 0; j < K; ++j)
      if (base + j * threads + tid < units) amax = unit_amax<In, U>(w[j], amax);
  }
  for (std::int64_t e = units * U + blockIdx.x * static_cast<std::int64_t>(threads) + tid; e < count;
       e += static_cast<std::int64_t>(gridDim.x) * threads) {
    const std::uint32_t a = abs_bits(load_one(src + e));
    amax = amax > a ? amax : a;
  }
  amax = reducer::run(amax, red);
  if (tid == 0) backend::atomic_max_bits<T.amax_order, T.amax_scope>(amax_bits + blockIdx.y, amax);
}

// Cast with the scale from amax_bits (dynamic) or from given_scale (delayed scaling), optionally
// recording this call's amax into record_bits. Scale outputs: [batch] each. Chunks are walked
// from the end of the array: the amax launch swept front to back, so the tail is what is still
// in L2 (about 50 MB on an H200) when this launch starts.
template <class SC, class TC, class In, int U, int K, bool Record>
__global__ void __launch_bounds__(TC::value.threads)
    flat_cast_kernel(const In* in, std::uint8_t* out, std::int64_t count, std::int64_t in_stride,
                     std::int64_t out_stride, const std::uint32_t* amax_bits,
                     const float* given_scale, std::uint32_t* record_bits, float* scale_out,
                     std::int64_t scale_stride, float* inverse_out, std::int64_t inverse_stride,
                     std::int64_t M, std::int64_t N, bool col_major, std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr std::int64_t chunk = static_cast<std::int64_t>(threads) * K;
  backend::wait_prior_grid();  // the amax launch (this one is a dependent launch)
  const std::int64_t b = blockIdx.y;
  const In* src = in + b * in_stride;         // [count] In
  std::uint8_t* dst = out + b * out_stride;   // [count] FP8
  const float s = given_scale != nullptr ? given_scale[b] : group_scale<S>(amax_bits[b]);
  const int tid = static_cast<int>(threadIdx.x);
  if (blockIdx.x == 0 && tid == 0) {
    if (scale_out != nullptr) scale_out[b * scale_stride] = s;
    if (inverse_out != nullptr) inverse_out[b * inverse_stride] = inverse_scale(s);
  }
  auto index_of = [&](std::int64_t off) { return flat_index(b, off, M, N, col_major); };
  const std::int64_t units = count / U;
  const std::int64_t chunks = (units + chunk - 1) / chunk;
  std::uint32_t amax = 0;
  auto cast_chunks = [&](auto in_range) {
    for (std::int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
      const std::int64_t base = (chunks - 1 - c) * chunk;
      unit_raw<In, U> w[K];
      load_units<In, U, K>(src, base + tid, threads, units, w);
#pragma unroll
      for (int j = 0; j < K; ++j) {
        const std::int64_t u = base + j * threads + tid;
        if constexpr (decltype(in_range)::value) {
          cast_unit_in_range<S, T, In, U>(w[j], s, dst + u * U, u < units);
        } else {
          if (u >= units) continue;
          if constexpr (Record) amax = unit_amax<In, U>(w[j], amax);
          cast_unit<S, T, In, U>(w[j], s, dst + u * U, seed, [&](int k) { return index_of(u * U + k); });
        }
      }
    }
  };
  // Dynamic scaling knows the tensor's amax: where it passes in_range_group, the whole tensor
  // takes the in-range encoder (one test, the same in every thread).
  // (Recording needs each unit's amax, which only the general walk folds.)
  with_in_range<S, In, U>([&] { return !Record && given_scale == nullptr && in_range_group<S>(amax_bits[b], s); },
                          cast_chunks);
  for (std::int64_t e = units * U + blockIdx.x * static_cast<std::int64_t>(threads) + tid; e < count;
       e += static_cast<std::int64_t>(gridDim.x) * threads) {
    const float x = load_one(src + e);
    if constexpr (Record) amax = amax > abs_bits(x) ? amax : abs_bits(x);
    dst[e] = encode_scaled<S>(x * s, seed, index_of(e));
  }
  if constexpr (Record) {
    using reducer = backend::block_max<threads>;
    __shared__ typename reducer::storage red;
    amax = reducer::run(amax, red);
    if (amax > 0x7f800000u) amax = 0x7fc00000u;  // one canonical NaN, whatever the payloads
    if (tid == 0) backend::atomic_max_bits<T.amax_order, T.amax_scope>(record_bits + b, amax);
  }
}

// One block per chunk (the chunk loop only runs past 2^31 - 1 chunks): a plain 2:1 read/write
// stream reached 0.963 of copy this way against 0.949 with 8 blocks per multiprocessor walking
// the chunks (H200, 512 threads; docs/design.md, "One block per chunk in the flat kernels").
inline unsigned flat_grid(std::int64_t count, std::int64_t per_block) {
  const std::int64_t chunks = (count + per_block - 1) / per_block;
  return static_cast<unsigned>(chunks < 1 ? 1 : (chunks < 0x7fffffffLL ? chunks : 0x7fffffffLL));
}

template <spec S, class In>
bool flat_views(const problem<S, In>& p) {
  return dense(p.in) && dense(p.out.data) && p.in.order == p.out.data.order;
}

// Enqueue flat_cast_kernel: with the scale from amax_bits (dynamic scaling, a dependent of the
// amax launch just before it) or from given_scale (delayed scaling, after a memset: an
// ordinary launch), recording this call's amax into record_bits where Record.
template <spec S, tuning R, int K, bool Record, class In>
status launch_flat_cast(const problem<S, In>& p, const std::uint32_t* amax_bits, const float* given_scale,
                        std::uint32_t* record_bits, gpu_stream stream) {
  const matrix_view<const In>& in = p.in;
  const quantized<S>& out = p.out;
  const std::int64_t count = in.rows * in.cols;
  const bool vec = flat_vectors(in, out.data);
  const std::int64_t per_block = static_cast<std::int64_t>(R.threads) * K * (vec ? unit_elems<In> : 1);
  const dim3 grid(flat_grid(count, per_block), static_cast<unsigned>(in.batch));
  auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data);
  float* scale_out = stores_multiplier(S) ? out.scale.data : nullptr;
  float* inverse_out = stores_inverse(S) ? out.inverse.data : nullptr;
  const bool col_major = in.order == layout::col_major;
  auto go = [&](auto u) {
    return backend::launch<flat_cast_kernel<spec_c<S>, tuning_c<R>, In, decltype(u)::value, K, Record>>(
        *p.dev, !Record, grid, R.threads, stream, in.data, dst, count, in.batch_stride, out.data.batch_stride,
        amax_bits, given_scale, record_bits, scale_out, out.scale.batch_stride, inverse_out,
        out.inverse.batch_stride, in.rows, in.cols, col_major, p.seed);
  };
  if (vec) return go(std::integral_constant<int, unit_elems<In>>{});
  return go(std::integral_constant<int, 1>{});
}

// Enqueue flat_amax_kernel: each batch item's amax into amax_bits (zeroed before: [batch] f32
// magnitude bits, one atomic max per block).
template <spec S, tuning R, int K, class In>
status launch_flat_amax(const problem<S, In>& p, std::uint32_t* amax_bits, gpu_stream stream) {
  const std::int64_t count = p.in.rows * p.in.cols;
  const bool vec = aligned16(p.in.data) &&
                   (p.in.batch == 1 || (p.in.batch_stride * static_cast<std::int64_t>(sizeof(In))) % 16 == 0);
  const std::int64_t per_block = static_cast<std::int64_t>(R.threads) * K * (vec ? unit_elems<In> : 1);
  const dim3 grid(flat_grid(count, per_block), static_cast<unsigned>(p.in.batch));
  auto go = [&](auto u) {
    return backend::launch<flat_amax_kernel<spec_c<S>, tuning_c<R>, In, decltype(u)::value, K>>(
        *p.dev, false, grid, R.threads, stream, p.in.data, count, p.in.batch_stride, amax_bits);
  };
  return vec ? go(std::integral_constant<int, unit_elems<In>>{}) : go(std::integral_constant<int, 1>{});
}

// 256 threads and 8 units in flight per thread unless the tuning says otherwise (given scale
// 0.931 of copy against 0.913 with 512 threads, H200, docs/benchmarks/h200-2026-11-29.md).
template <spec S, tuning T, class In>
struct tensor_two_launch {
  static constexpr gpu_path name = gpu_path::tensor_two_launch;
  static constexpr bool opt_in = false;
  static constexpr bool device_dependent = false;
  static constexpr tuning R = resolve_tuning(T, S, {});
  static constexpr int K = units_or(T, 8);
  struct plan {};

  static bool accepts(const problem<S, In>& p, plan*) { return flat_views(p); }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>& in) {
    return amax_workspace::of(unit_axes<S>::groups(in.batch, in.rows, in.cols)).bytes;
  }

  static status enqueue(const problem<S, In>& p, const plan&, void* workspace, gpu_stream stream) {
    const amax_workspace ws = amax_workspace::of(unit_axes<S>::groups(p.in.batch, p.in.rows, p.in.cols));
    std::uint32_t* amax_bits = ws.carve(workspace);  // [batch] f32 bits
    status st = backend::memset_async(amax_bits, 0, ws.bytes, stream);
    if (st != status::success) return st;
    if ((st = launch_flat_amax<S, R, K>(p, amax_bits, stream)) != status::success) return st;
    return launch_flat_cast<S, R, K, false>(p, amax_bits, nullptr, nullptr, stream);
  }
};

}  // namespace fp8q::detail::gpu
