// fp8q — tensorwise in one cooperative launch on dense views (opt-in: byte-exact, not faster
// than the two launches on an H200; docs/design.md, "Single-launch tensorwise is built and opt-in").
#pragma once

#include <cstdint>
#include <type_traits>

#include "fp8q/detail/gpu/families/tensorwise.hpp"
#include "fp8q/detail/gpu/problem.hpp"
#include "fp8q/detail/gpu/units.hpp"

namespace fp8q::detail::gpu {

// Tensorwise in ONE launch (gpu_path::tensor_last_block). Every block of the grid is resident at
// once (the launch is cooperative, which guarantees it), so blocks may wait for each other and
// keep part of the tensor on chip across the wait. Per batch item (blockIdx.y), block x
//   1. loads its held slots into shared memory: slot j of thread tid is unit
//      (j * gridDim.x + x) * threads + tid, so all blocks read one contiguous window at a time;
//      then streams chunks x, x + gridDim.x, ... of the units after the held ones (chunks of
//      K units per thread); its amax covers both;
//   2. publishes its amax (one atomic, order and scope from the tuning) and counts itself in
//      with acq_rel; the block that counts last reads the item's amax, writes the scale outputs
//      and publishes the scale (release); every other block waits for it (acquire);
//   3. casts its streamed chunks back to front (the chunks read last are the ones still in L2),
//      each followed by a share of its held slots from shared memory, so reads and writes stay
//      mixed; then what is left of the held slots.
// Only the streamed units are read twice; the held ones (~29 MB on an H200) are not.
// in:  [count] In per batch item, in_stride apart (16-byte aligned items when U > 1)
// out: [count] FP8 per batch item, out_stride apart
// sync: [batch][4] words (amax bits, arrivals, scale bits, published), zeroed before the launch
//       (last_block_workspace)
// dynamic shared memory: held_slots * threads units
template <class SC, class TC, class In, int U, int K>
__global__ void __launch_bounds__(TC::value.threads, 1)
    flat_resident_kernel(const In* in, std::uint8_t* out, std::int64_t count, std::int64_t in_stride,
                         std::int64_t out_stride, std::uint32_t* sync, int held_slots,
                         float* scale_out, std::int64_t scale_stride, float* inverse_out,
                         std::int64_t inverse_stride, std::int64_t M, std::int64_t N, bool col_major,
                         std::uint64_t seed) {
  constexpr spec S = SC::value;
  constexpr tuning T = TC::value;
  constexpr int threads = T.threads;
  constexpr std::int64_t chunk = static_cast<std::int64_t>(threads) * K;
  using unit = unit_raw<In, U>;
  using reducer = backend::block_max<threads>;
  extern __shared__ u32x4 dyn[];
  unit* shelf = reinterpret_cast<unit*>(dyn);  // [held_slots][threads] units
  __shared__ typename reducer::storage red;
  __shared__ float block_scale;

  const std::int64_t b = blockIdx.y;
  const In* src = in + b * in_stride;        // [count] In
  std::uint8_t* dst = out + b * out_stride;  // [count] FP8
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t gx = gridDim.x;
  const std::int64_t x = blockIdx.x;
  const std::int64_t units = count / U;
  const std::int64_t held_end = gx * held_slots * threads < units ? gx * held_slots * threads : units;
  const std::int64_t chunks = (units - held_end + chunk - 1) / chunk;  // streamed chunks
  auto index_of = [&](std::int64_t off) { return flat_index(b, off, M, N, col_major); };
  auto slot_unit = [&](int j) { return (static_cast<std::int64_t>(j) * gx + x) * threads + tid; };
  auto in_slot = [&](int j) { return j < held_slots && slot_unit(j) < held_end; };

  // 1. held slots, then the streamed chunks front to back
  std::uint32_t amax = 0;
  for (int j0 = 0; j0 < held_slots; j0 += K) {
    unit w[K];
#pragma unroll
    for (int i = 0; i < K; ++i)
      if (in_slot(j0 + i)) w[i] = load_unit<In, U>(src + slot_unit(j0 + i) * U);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      if (in_slot(j0 + i)) {
        shelf[(j0 + i) * threads + tid] = w[i];
        amax = unit_amax<In, U>(w[i], amax);
      }
    }
  }
  for (std::int64_t c = x; c < chunks; c += gx) {
    const std::int64_t base = held_end + c * chunk + tid;
    unit w[K];
    load_units<In, U, K>(src, base, threads, units, w);
#pragma unroll
    for (int i = 0; i < K; ++i)
      if (base + i * threads < units) amax = unit_amax<In, U>(w[i], amax);
  }
  for (std::int64_t e = units * U + x * threads + tid; e < count; e += gx * threads) {
    const std::uint32_t a = abs_bits(load_one(src + e));
    amax = amax > a ? amax : a;
  }

  // 2. the scale: published by the last block of the item to count in
  amax = reducer::run(amax, red);
  std::uint32_t* item = sync + 4 * b;  // amax bits, arrivals, scale bits, published
  if (tid == 0) {
    backend::atomic_max_bits<T.amax_order, T.amax_scope>(item, amax);
    if (backend::count_acq_rel(item + 1) == static_cast<std::uint32_t>(gx - 1)) {
      const float s = group_scale<S>(backend::load_relaxed(item));
      if (scale_out != nullptr) scale_out[b * scale_stride] = s;
      if (inverse_out != nullptr) inverse_out[b * inverse_stride] = inverse_scale(s);
      backend::store_relaxed(item + 2, __builtin_bit_cast(std::uint32_t, s));
      backend::store_release(item + 3, 1u);
      block_scale = s;
    } else {
      while (backend::count_acquire(item + 3) == 0) backend::spin_pause();
      block_scale = __builtin_bit_cast(float, backend::load_relaxed(item + 2));
    }
  }
  backend::block_sync();
  const float s = block_scale;

  // 3. streamed chunks back to front, each followed by `per` held slots; then the rest
  auto cast_at = [&](const unit& w, std::int64_t u) {
    cast_unit<S, T, In, U>(w, s, dst + u * U, seed, [&](int k) { return index_of(u * U + k); });
  };
  auto cast_held = [&](int j0, int n) {
    for (int j = j0; j < j0 + n; ++j)
      if (in_slot(j)) cast_at(shelf[j * threads + tid], slot_unit(j));
  };
  const std::int64_t mine = chunks > x ? (chunks - 1 - x) / gx + 1 : 0;  // this block's chunks
  const int per = mine > 0 ? static_cast<int>((held_slots + mine - 1) / mine) : 0;
  int next_held = 0;
  for (std::int64_t c = chunks - 1 - x; c >= 0; c -= gx) {
    const std::int64_t base = held_end + c * chunk + tid;
    unit w[K];
    load_units<In, U, K>(src, base, threads, units, w);
#pragma unroll
    for (int i = 0; i < K; ++i)
      if (base + i * threads < units) cast_at(w[i], base + i * threads);
    cast_held(next_held, per);
    next_held += per;
  }
  for (std::int64_t e = units * U + x * threads + tid; e < count; e += gx * threads)
    dst[e] = encode_scaled<S>(load_one(src + e) * s, seed, index_of(e));
  cast_held(next_held, held_slots - next_held);
}

// Workspace of the single launch: 4 words per batch item (amax bits, arrivals, scale bits,
// published), zeroed before the launch.
struct last_block_workspace {
  std::size_t bytes = 0;
  std::size_t used = 0;  // bytes the launch reads (and the memset clears)
  static last_block_workspace of(std::int64_t batch) {
    const std::size_t used = static_cast<std::size_t>(batch > 0 ? batch : 0) * 16;
    return {round_up_256(used), used};
  }
  std::uint32_t* carve(void* workspace) const { return static_cast<std::uint32_t*>(workspace); }  // [batch][4]
};

// 1024 threads and 4 units in flight per thread unless the tuning says otherwise. One block per
// multiprocessor holds as many units as its dynamic shared memory takes; the rest is streamed
// (read twice).
template <spec S, tuning T, class In>
struct tensor_last_block {
  static constexpr gpu_path name = gpu_path::tensor_last_block;
  static constexpr bool opt_in = true;
  static constexpr bool device_dependent = true;  // cooperative launches, resident blocks
  static constexpr tuning R = T.threads == 0 ? with_threads(resolve_tuning(T, S, {}), 1024)
                                             : resolve_tuning(T, S, {});
  static constexpr int K = units_or(T, 4);
  struct plan {
    bool vec = false;
    int held = 0;        // held slots per thread
    std::int64_t gx = 0;  // blocks per batch item
  };

  template <int U>
  static constexpr auto kernel = &flat_resident_kernel<spec_c<S>, tuning_c<R>, In, U, K>;

  static bool accepts(const problem<S, In>& p, plan* pl) {
    if (!flat_views(p) || p.in.batch > 65535) return false;
    if (p.dev == nullptr) return true;
    const bool vec = flat_vectors(p.in, p.out.data);
    return vec ? fit<unit_elems<In>>(p, pl) : fit<1>(p, pl);
  }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>& in) {
    return last_block_workspace::of(in.batch).bytes;
  }

  static status enqueue(const problem<S, In>& p, const plan& pl, void* workspace, gpu_stream stream) {
    return pl.vec ? go<unit_elems<In>>(p, pl, workspace, stream) : go<1>(p, pl, workspace, stream);
  }

 private:
  template <int U>
  static bool fit(const problem<S, In>& p, plan* pl) {
    const int unit_bytes = static_cast<int>(sizeof(unit_raw<In, U>));
    int shared = 0;
    if (backend::cooperative_api::shared_bytes(*p.dev, kernel<U>, &shared) != status::success || shared == 0)
      return false;
    const std::int64_t units = p.in.rows * p.in.cols / U;
    const int shelf_max = shared / (R.threads * unit_bytes);  // held slots per thread that fit
    int blocks = 0;
    if (backend::cooperative_api::resident_blocks(*p.dev, kernel<U>, R.threads, shelf_max * R.threads * unit_bytes,
                                                  &blocks) != status::success)
      return false;
    const std::int64_t per_item = blocks / p.in.batch;  // blocks of one batch item
    if (per_item < 1) return false;
    // Slots per thread that hold the whole item on per_item blocks, capped by what fits: a
    // small item takes as few blocks as hold it, a large one every block and streams the rest.
    const std::int64_t need = (units + per_item * R.threads - 1) / (per_item * R.threads);
    const int held = static_cast<int>(need < shelf_max ? need : shelf_max);
    const std::int64_t gx = held == 0 ? (units == 0 ? 1 : per_item)
                            : need <= shelf_max ? (units + static_cast<std::int64_t>(held) * R.threads - 1) / (static_cast<std::int64_t>(held) * R.threads)
                                                : per_item;
    if (pl != nullptr) *pl = plan{U != 1, held, gx};
    return true;
  }

  template <int U>
  static status go(const problem<S, In>& p, const plan& pl, void* workspace, gpu_stream stream) {
    const int unit_bytes = static_cast<int>(sizeof(unit_raw<In, U>));
    const last_block_workspace ws = last_block_workspace::of(p.in.batch);
    std::uint32_t* sync = ws.carve(workspace);
    const status st = backend::memset_async(sync, 0, ws.used, stream);
    if (st != status::success) return st;
    const quantized<S>& out = p.out;
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data.data);
    float* scale_out = stores_multiplier(S) ? out.scale.data : nullptr;
    float* inverse_out = stores_inverse(S) ? out.inverse.data : nullptr;
    const bool col_major = p.in.order == layout::col_major;
    return backend::cooperative_api::launch(
        kernel<U>, dim3(static_cast<unsigned>(pl.gx), static_cast<unsigned>(p.in.batch)), R.threads,
        pl.held * R.threads * unit_bytes, stream, p.in.data, dst, p.in.rows * p.in.cols, p.in.batch_stride,
        out.data.batch_stride, sync, pl.held, scale_out, out.scale.batch_stride, inverse_out,
        out.inverse.batch_stride, p.in.rows, p.in.cols, col_major, p.seed);
  }
};

}  // namespace fp8q::detail::gpu
