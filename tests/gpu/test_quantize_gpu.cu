// GPU quantize (tensorwise, rowwise, colwise) against the host reference, byte for byte: every
// data format x input type x granularity x three tunings x adversarial shapes and layouts,
// plus the colwise relay's other tunings, tensorwise in one cooperative launch, spec variants,
// graph capture and replay (proof of no host synchronization; the dependent launches too),
// delayed scaling, and errors returned before any launch.
//   test_quantize_gpu            full sweep (+ 8192 x 8192, 10 runs each, + large single-launch items)
//   test_quantize_gpu --quick    small shapes (for compute-sanitizer)
//   test_quantize_gpu --only P   one part of the suite: a format's sweep (e4m3fn, e4m3fnuz, e5m2,
//                                e5m2fnuz), one input type of it (e.g. e4m3fn/f16), or rest (the
//                                variants, graphs, delayed scaling, errors). The 12 format/input
//                                parts and rest are the whole suite; as 13 processes they use a
//                                machine's cores for the host reference.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

#include "quantize_check.hpp"

namespace fp8q_gpu_check {
// one per (format, input type): quantize_sweep.inl
int sweep_e4m3fn_bf16(cudaStream_t, bool quick, bool big);
int sweep_e4m3fn_f16(cudaStream_t, bool quick, bool big);
int sweep_e4m3fn_f32(cudaStream_t, bool quick, bool big);
int sweep_e4m3fnuz_bf16(cudaStream_t, bool quick, bool big);
int sweep_e4m3fnuz_f16(cudaStream_t, bool quick, bool big);
int sweep_e4m3fnuz_f32(cudaStream_t, bool quick, bool big);
int sweep_e5m2_bf16(cudaStream_t, bool quick, bool big);
int sweep_e5m2_f16(cudaStream_t, bool quick, bool big);
int sweep_e5m2_f32(cudaStream_t, bool quick, bool big);
int sweep_e5m2fnuz_bf16(cudaStream_t, bool quick, bool big);
int sweep_e5m2fnuz_f16(cudaStream_t, bool quick, bool big);
int sweep_e5m2fnuz_f32(cudaStream_t, bool quick, bool big);
}  // namespace fp8q_gpu_check

using namespace fp8q;
using namespace fp8q_gpu_check;

namespace {

constexpr spec propagate_mult{.out = format::e4m3fn, .granularity = granularity::row,
                              .store = stored_scale::multiplier, .overflow = overflow::propagate};
constexpr spec pow2_col{.out = format::e4m3fnuz, .granularity = granularity::col, .power_of_2 = true,
                        .store = stored_scale::multiplier};
constexpr spec sr_row{.out = format::e5m2, .granularity = granularity::row, .rounding = rounding::stochastic};
constexpr spec sr_col{.out = format::e4m3fn, .granularity = granularity::col, .rounding = rounding::stochastic};
constexpr spec sr_tensor{.out = format::e4m3fn, .granularity = granularity::tensor, .store = stored_scale::both,
                         .rounding = rounding::stochastic};
constexpr spec big_eps_tensor{.out = format::e4m3fn, .granularity = granularity::tensor, .eps = 1e-2f};
constexpr tuning hw{.convert = convert_path::hardware};

int variants(cudaStream_t s) {
  int p = 0;
  const shape shapes[] = {{1, 50, 300}, {2, 65, 129, layout::row_major, 7}, {1, 64, 80, layout::col_major, 0, layout::col_major, 3},
                          {1, 70, 90, layout::row_major, 0, layout::col_major, 0},
                          // 16-byte input lines into a column-major output: row_transpose, stochastic rounding too
                          {2, 140, 96, layout::row_major, 0, layout::col_major, 0}};
  std::uint64_t seed = 99;
  for (const shape& sh : shapes) {
    for (data_kind k : {data_kind::random, data_kind::adversarial}) {
      p += run_case<propagate_mult, tuning{}, bf16>("variant/propagate_multiplier", sh, k, ++seed, 1, s);
      p += run_case<pow2_col, tuning{}, bf16>("variant/pow2_col", sh, k, ++seed, 1, s);
      p += run_case<sr_row, tuning{}, bf16>("variant/sr_row", sh, k, ++seed, 1, s);
      p += run_case<sr_row, hw, f16>("variant/sr_row_hw_requested", sh, k, ++seed, 1, s);
      p += run_case<sr_col, tuning{}, float>("variant/sr_col", sh, k, ++seed, 1, s);
      p += run_case<sr_tensor, tuning{}, bf16>("variant/sr_tensor", sh, k, ++seed, 1, s);
      p += run_case<big_eps_tensor, tuning{}, bf16>("variant/eps", sh, k, ++seed, 1, s);
    }
  }
  std::printf("spec variants: %d failing cases\n", p);
  return p;
}

// The one-launch colwise relay (col_relay_kernel) under the tunings the sweep does not give it:
// direct stores (column-major output) and staged ones (row-major output), software conversion,
// acq_rel / seq_cst amax atomics, small and wide tiles, 1024 threads; tiles of one unit, of one
// row, partial strips and chunks, batches.
int relay_paths(cudaStream_t s) {
  constexpr spec e4{.out = format::e4m3fn, .granularity = granularity::col, .store = stored_scale::both};
  constexpr spec e5{.out = format::e5m2, .granularity = granularity::col, .store = stored_scale::both};
  constexpr spec fnuz{.out = format::e4m3fnuz, .granularity = granularity::col, .store = stored_scale::multiplier};
  constexpr tuning direct{.store = store_path::direct, .path = gpu_path::col_relay};
  constexpr tuning direct_sw{.store = store_path::direct, .amax_order = memory_order::acq_rel,
                             .convert = convert_path::software, .path = gpu_path::col_relay};
  constexpr tuning small{.threads = 128, .tile_rows = 32, .tile_cols = 64, .convert = convert_path::software,
                         .path = gpu_path::col_relay};
  constexpr tuning wide{.threads = 512, .tile_rows = 64, .tile_cols = 128, .amax_order = memory_order::seq_cst,
                        .path = gpu_path::col_relay};
  constexpr tuning big{.threads = 1024, .tile_rows = 128, .tile_cols = 128, .path = gpu_path::col_relay};
  constexpr tuning staged{.store = store_path::staged, .path = gpu_path::col_relay};  // row-major output's non-default
  const shape col_out[] = {{1, 1, 8, layout::row_major, 0, layout::col_major, 0},
                           {1, 257, 8, layout::row_major, 0, layout::col_major, 0},
                           {3, 63, 72, layout::row_major, 0, layout::col_major, 0},
                           {1, 700, 264, layout::row_major, 8, layout::col_major, 16},
                           {1, 1000, 1000, layout::row_major, 0, layout::col_major, 0}};
  const shape row_out[] = {{5, 300, 136}, {2, 1000, 1000, layout::row_major, 0, layout::row_major, 16}};
  int p = 0;
  std::uint64_t seed = 700;
  for (data_kind k : {data_kind::random, data_kind::adversarial}) {
    for (const shape& sh : col_out) {
      p += run_case<e4, direct, bf16>("relay/direct", sh, k, ++seed, 1, s);
      p += run_case<e5, direct_sw, f16>("relay/direct_sw", sh, k, ++seed, 1, s);
      p += run_case<fnuz, small, bf16>("relay/small", sh, k, ++seed, 1, s);
      p += run_case<e5, wide, bf16>("relay/wide", sh, k, ++seed, 1, s);
      p += run_case<e4, big, float>("relay/1024_f32", sh, k, ++seed, 1, s);
    }
    for (const shape& sh : row_out) {
      p += run_case<e4, direct, f16>("relay/direct/row_out", sh, k, ++seed, 1, s);
      p += run_case<e5, wide, float>("relay/wide/row_out", sh, k, ++seed, 1, s);
      p += run_case<fnuz, small, bf16>("relay/small/row_out", sh, k, ++seed, 1, s);
      p += run_case<e4, staged, bf16>("relay/staged/row_out", sh, k, ++seed, 1, s);
    }
  }
  std::printf("colwise relay tunings: %d failing cases\n", p);
  return p;
}

// The held-tile families (col_hold, row_band) under block sizes and stores the sweep does not give
// them, on shapes whose strips and bands hold many tiles (so blocks wait on one another).
int held_paths(cudaStream_t s) {
  constexpr spec c4{.out = format::e4m3fn, .granularity = granularity::col, .store = stored_scale::both};
  constexpr spec c5{.out = format::e5m2fnuz, .granularity = granularity::col, .store = stored_scale::both};
  constexpr spec r4{.out = format::e4m3fn, .granularity = granularity::row, .store = stored_scale::both};
  constexpr spec rf{.out = format::e4m3fnuz, .granularity = granularity::row, .store = stored_scale::multiplier,
                    .rounding = rounding::stochastic};
  constexpr tuning hold64{.threads = 64, .path = gpu_path::col_hold};
  constexpr tuning hold256_staged{.threads = 256, .store = store_path::staged, .amax_order = memory_order::acq_rel,
                                  .path = gpu_path::col_hold};
  constexpr tuning hold1024_sw{.threads = 1024, .convert = convert_path::software, .path = gpu_path::col_hold};
  constexpr tuning band64{.threads = 64, .path = gpu_path::row_band};
  constexpr tuning band256_sw{.threads = 256, .convert = convert_path::software, .path = gpu_path::row_band};
  constexpr tuning band512{.threads = 512, .amax_order = memory_order::seq_cst, .path = gpu_path::row_band};
  // col_hold takes col_relay's views: 16-byte aligned output lines (ld 4112, 272, 144)
  const shape col_shapes[] = {{1, 4112, 136, layout::row_major, 0, layout::col_major, 0},
                              {2, 2000, 264, layout::row_major, 8, layout::row_major, 8},
                              {1, 129, 4104, layout::row_major, 0, layout::col_major, 15}};
  // row_band's amax word sets (band_amax_sets): 8 / 1 / 4 / 1 for 2-byte inputs, 8 / 2 / 8 / 1 for f32
  const shape row_shapes[] = {{1, 300, 8200, layout::row_major, 0, layout::col_major, 0},
                              {3, 257, 1032, layout::row_major, 8, layout::col_major, 4},
                              {1, 200, 4104, layout::row_major, 0, layout::col_major, 0},
                              {1, 4100, 72, layout::row_major, 0, layout::col_major, 0}};
  int p = 0;
  std::uint64_t seed = 900;
  for (data_kind k : {data_kind::random, data_kind::adversarial}) {
    for (const shape& sh : col_shapes) {
      p += run_case<c4, hold64, bf16>("hold/64", sh, k, ++seed, 1, s);
      p += run_case<c5, hold256_staged, f16>("hold/256_staged", sh, k, ++seed, 1, s);
      p += run_case<c4, hold1024_sw, float>("hold/1024_sw_f32", sh, k, ++seed, 1, s);
    }
    for (const shape& sh : row_shapes) {
      p += run_case<r4, band64, bf16>("band/64", sh, k, ++seed, 1, s);
      p += run_case<rf, band256_sw, f16>("band/256_sw_sr", sh, k, ++seed, 1, s);
      p += run_case<r4, band512, float>("band/512_f32", sh, k, ++seed, 1, s);
    }
  }
  std::printf("held-tile tunings: %d failing cases\n", p);
  return p;
}

// The automatic walk takes a held-tile family only where a multiprocessor holds
// detail::gpu::held_min_blocks (4) of its blocks, and the two-read family otherwise, with the
// same bytes: row_band at 1024 threads (at most two such blocks fit any NVIDIA multiprocessor's
// 2048 threads) and col_hold at 512 (its kernel takes more than 32 registers a thread, so at most
// three fit 64K registers) go to row_transpose and col_relay; at their default 128 threads sm_90
// holds 6 and 5 of them, and the walk keeps them.
int held_walk(cudaStream_t s) {
  constexpr spec r4{.out = format::e4m3fn, .granularity = granularity::row};
  constexpr spec c4{.out = format::e4m3fn, .granularity = granularity::col};
  constexpr tuning t512{.threads = 512};
  constexpr tuning t1024{.threads = 1024};
  const shape row_sh{1, 300, 8200, layout::row_major, 0, layout::col_major, 0};
  const shape col_sh{1, 4112, 136, layout::row_major, 0, layout::col_major, 0};
  int p = 0;
  // which family ran: the one whose count the case added to
  auto ran = [&](auto run) {
    int before[32];
    std::copy(std::begin(path_runs()), std::end(path_runs()), before);
    p += run();
    for (int k = 0; k < 32; ++k)
      if (path_runs()[k] != before[k]) return static_cast<gpu_path>(k);
    return gpu_path::automatic;
  };
  auto expect = [&](const char* what, gpu_path got, gpu_path want) {
    std::printf("held-tile walk, %s: path %d (want %d)\n", what, static_cast<int>(got), static_cast<int>(want));
    if (got != want) ++p;
  };
  expect("row, 1024 threads",
         ran([&] { return run_case<r4, t1024, bf16>("walk/1024/row", row_sh, data_kind::adversarial, 990, 1, s); }),
         gpu_path::row_transpose);
  expect("col, 512 threads",
         ran([&] { return run_case<c4, t512, bf16>("walk/512/col", col_sh, data_kind::random, 991, 1, s); }),
         gpu_path::col_relay);
  const gpu_path row_default = ran([&] { return run_case<r4, tuning{}, bf16>("walk/default/row", row_sh, data_kind::random, 992, 1, s); });
  const gpu_path col_default = ran([&] { return run_case<c4, tuning{}, bf16>("walk/default/col", col_sh, data_kind::adversarial, 993, 1, s); });
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
      major == 9) {
    expect("row, default (sm_90)", row_default, gpu_path::row_band);
    expect("col, default (sm_90)", col_default, gpu_path::col_hold);
  }
  std::printf("held-tile walk: %d failing cases\n", p);
  return p;
}

// Tensorwise in one cooperative launch (gpu_path::tensor_last_block): items held entirely on chip,
// items that stream most of their units, unaligned (scalar) views, batches, column-major
// views, stochastic rounding, every thread count the kernel takes. `big` adds the benchmark's
// shape and items larger than the shared memory of the whole GPU.
int single_launch_tensor(cudaStream_t s, bool big) {
  constexpr spec e4{.out = format::e4m3fn, .granularity = granularity::tensor, .store = stored_scale::both};
  constexpr spec fnuz{.out = format::e5m2fnuz, .granularity = granularity::tensor, .store = stored_scale::multiplier};
  constexpr spec sr{.out = format::e4m3fn, .granularity = granularity::tensor, .store = stored_scale::both,
                    .rounding = rounding::stochastic};
  constexpr tuning lb{.path = gpu_path::tensor_last_block};
  constexpr tuning lb_sw{.threads = 256, .amax_order = memory_order::acq_rel, .convert = convert_path::software,
                         .path = gpu_path::tensor_last_block};
  constexpr tuning lb_512{.threads = 512, .amax_order = memory_order::seq_cst, .path = gpu_path::tensor_last_block};
  int p = 0;
  std::uint64_t seed = 900;
  const shape small[] = {{1, 1, 1}, {1, 1, 7}, {1, 1, 1000}, {3, 70, 90}, {1, 129, 200, layout::row_major, 3},
                         {1, 130, 96, layout::col_major, 0, layout::col_major, 0}};
  for (data_kind k : {data_kind::random, data_kind::adversarial}) {
    for (const shape& sh : small) {
      p += run_case<e4, lb, bf16>("last_block", sh, k, ++seed, 1, s);
      p += run_case<fnuz, lb_sw, f16>("last_block/sw", sh, k, ++seed, 1, s);
      p += run_case<sr, lb_512, float>("last_block/512/sr", sh, k, ++seed, 1, s);
    }
  }
  if (big) {
    const shape bench{1, 16384, 5120};
    p += run_case<e4, lb, bf16>("last_block/16384x5120", bench, data_kind::adversarial, ++seed, 2, s);
    p += run_case<e4, lb, bf16>("last_block/16384x5120/graph", bench, data_kind::random, ++seed, 2, s, true);
    p += run_case<sr, lb, bf16>("last_block/16384x5120/sr", bench, data_kind::random, ++seed, 0, s);
    p += run_case<e4, lb_sw, f16>("last_block/sw/8192x8192", shape{1, 8192, 8192}, data_kind::adversarial, ++seed, 0, s);
    p += run_case<e4, lb_512, float>("last_block/512/3x5000x5001", shape{3, 5000, 5001}, data_kind::adversarial, ++seed, 0, s);
    p += run_case<e4, lb, bf16>("last_block/200x1024x520", shape{200, 1024, 520}, data_kind::random, ++seed, 0, s);
    p += run_case<fnuz, lb, bf16>("last_block/2x20000x5120", shape{2, 20000, 5120}, data_kind::adversarial, ++seed, 0, s);
  }
  std::printf("tensorwise single launch: %d failing cases\n", p);
  return p;
}

int graphs(cudaStream_t s) {
  constexpr spec t{.out = format::e4m3fn, .granularity = granularity::tensor, .store = stored_scale::both};
  constexpr spec r{.out = format::e4m3fnuz, .granularity = granularity::row};
  constexpr spec c{.out = format::e5m2, .granularity = granularity::col};
  const shape sh{1, 300, 520};
  const shape sh_t{1, 300, 520, layout::row_major, 0, layout::col_major, 0};
  int p = 0;
  p += run_case<t, tuning{}, bf16>("graph/tensor", sh, data_kind::adversarial, 5, 3, s, true);
  p += run_case<t, tuning{.path = gpu_path::tensor_last_block}, bf16>("graph/tensor/last_block", sh, data_kind::adversarial, 8, 3, s, true);
  p += run_case<r, tuning{}, bf16>("graph/row", sh, data_kind::adversarial, 6, 3, s, true);
  p += run_case<c, tuning{}, bf16>("graph/col", sh_t, data_kind::adversarial, 7, 3, s, true);
  // the cast launches that start while their amax launch drains (dependent launches, sm_90+)
  const shape sh_ci{1, 300, 520, layout::col_major, 0, layout::row_major, 0};
  p += run_case<c, tuning{.path = gpu_path::col_streaming}, bf16>("graph/col/two_launch", sh_t, data_kind::adversarial, 9, 3, s, true);
  p += run_case<r, tuning{}, bf16>("graph/row/tiled", sh_ci, data_kind::adversarial, 10, 3, s, true);
  std::printf("graph capture + replay: %d failing cases\n", p);
  return p;
}

// Delayed scaling: cast with a given scale, record this call's amax in the same pass.
int delayed(cudaStream_t s, fp8q_test::checker& check) {
  constexpr spec t{.out = format::e4m3fn, .granularity = granularity::tensor, .store = stored_scale::both};
  const std::int64_t M = 1000, N = 777, B = 2;
  std::mt19937_64 rng(4242);
  std::vector<bf16> x = make_data<bf16, format::e4m3fn>(B * M * N, N, data_kind::adversarial, rng);
  for (auto& v : x) if (to_float(v) != to_float(v)) v = to_bf16(1.0f);  // keep amax finite here
  const float given[2] = {0.37f, 3.0f};
  device_buffer<bf16> xd(x.size());
  device_buffer<e4m3fn> qd(x.size());
  device_buffer<float> gd(2), ad(2), sd(2), id(2);
  cudaMemcpy(xd.ptr, x.data(), x.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(gd.ptr, given, 8, cudaMemcpyHostToDevice);
  cudaMemset(qd.ptr, 0xA5, x.size());
  cudaMemset(ad.ptr, 0xFF, 8);
  const matrix_view<const bf16> in = batched(row_major<const bf16>(xd.ptr, M, N), B);
  quantized<t> out{batched(row_major(qd.ptr, M, N), B), batched(row_major(sd.ptr, 1, 1), B),
                   batched(row_major(id.ptr, 1, 1), B)};
  const status st = quantize_with_scale<t>(in, out, gd.ptr, ad.ptr, {.stream = s});
  FP8Q_TEST_CHECK(check, st == status::success);
  FP8Q_TEST_CUDA(check, cudaStreamSynchronize(s));
  std::vector<e4m3fn> q(x.size());
  float amax[2], sc[2], inv[2];
  cudaMemcpy(q.data(), qd.ptr, q.size(), cudaMemcpyDeviceToHost);
  cudaMemcpy(amax, ad.ptr, 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(sc, sd.ptr, 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(inv, id.ptr, 8, cudaMemcpyDeviceToHost);
  std::int64_t bad = 0;
  for (std::int64_t b = 0; b < B; ++b) {
    float a = 0.0f;
    for (std::int64_t i = 0; i < M * N; ++i) {
      const float v = to_float(x[b * M * N + i]);
      a = amax_combine(a, abs_value(v));
      if (q[b * M * N + i].bits != quantize_value<format::e4m3fn>(v, given[b], overflow::saturate, rounding::nearest_even, 0).bits) ++bad;
    }
    if (bits_of(amax[b]) != bits_of(canonical_amax(a)))
      std::printf("delayed scaling: item %lld amax bits 0x%08x, host 0x%08x\n", (long long)b, bits_of(amax[b]),
                  bits_of(canonical_amax(a)));
    FP8Q_TEST_CHECK(check, bits_of(amax[b]) == bits_of(canonical_amax(a)));
    FP8Q_TEST_CHECK(check, bits_of(sc[b]) == bits_of(given[b]) && bits_of(inv[b]) == bits_of(1.0f / given[b]));
  }
  std::printf("delayed scaling: %lld mismatches\n", (long long)bad);
  FP8Q_TEST_CHECK(check, bad == 0);
  return 0;
}

// The split tensorwise calls against quantize<tensor>: tensor_amax + quantize_with_amax of the
// whole tensor (a batch of 2), and of two row shards of batch item 0 whose amax words are
// combined by a max on the words (what an all-reduce with ncclMax on ncclUint32 computes), give
// quantize's bytes and scales. Random data, then a NaN in item 0's second shard. Returns the
// number of mismatching runs.
constexpr spec split_spec{.out = format::e4m3fn, .granularity = granularity::tensor, .store = stored_scale::both};

int split_tensor(cudaStream_t s) {
  constexpr spec t = split_spec;
  constexpr std::int64_t B = 2, M = 300, N = 520, half = 140;
  int bad = 0;
  for (int with_nan = 0; with_nan < 2; ++with_nan) {
    std::vector<bf16> h(static_cast<std::size_t>(B * M * N));
    std::uint64_t x = 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(with_nan);
    for (bf16& v : h) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      v = to_bf16((static_cast<float>(x >> 40) / 16777216.0f - 0.5f) * 100.0f);
    }
    if (with_nan) h[static_cast<std::size_t>(200 * N + 7)] = bf16{0x7fc1};
    device_buffer<bf16> in(h.size());
    device_buffer<e4m3fn> q_ref(h.size()), q_whole(h.size()), q_shards(h.size());
    device_buffer<float> sc(6 * B);  // [3 runs][multiplier, inverse][B]
    device_buffer<std::uint32_t> amax(B + 2);
    device_buffer<unsigned char> ws(4096);
    if (!in.ptr || !q_ref.ptr || !q_whole.ptr || !q_shards.ptr || !sc.ptr || !amax.ptr || !ws.ptr) return 1;
    cudaMemcpy(in.ptr, h.data(), h.size() * sizeof(bf16), cudaMemcpyHostToDevice);
    cudaMemset(q_shards.ptr, 0x5A, h.size());
    const auto whole = batched(row_major<const bf16>(in.ptr, M, N), B);  // [B, M, N] bf16
    auto whole_out = [&](e4m3fn* q, int k) {
      return quantized<t>{batched(row_major(q, M, N), B), batched(row_major(sc.ptr + 2 * k * B, 1, 1), B),
                          batched(row_major(sc.ptr + (2 * k + 1) * B, 1, 1), B)};
    };
    auto shard = [&](std::int64_t r0, std::int64_t rows) {  // rows [r0, r0 + rows) of item 0
      return row_major<const bf16>(in.ptr + r0 * N, rows, N);
    };
    auto shard_out = [&](std::int64_t r0, std::int64_t rows) {
      return quantized<t>{row_major(q_shards.ptr + r0 * N, rows, N), row_major(sc.ptr + 4 * B, 1, 1),
                          row_major(sc.ptr + 5 * B, 1, 1)};
    };
    bool ok = quantize<t>(whole, whole_out(q_ref.ptr, 0), {.stream = s, .workspace = ws.ptr, .workspace_bytes = 4096}) ==
              status::success;
    ok = ok && tensor_amax<t>(whole, amax.ptr, {.stream = s}) == status::success;
    ok = ok && quantize_with_amax<t>(whole, whole_out(q_whole.ptr, 1), amax.ptr, {.stream = s}) == status::success;
    ok = ok && tensor_amax<t>(shard(0, half), amax.ptr + B, {.stream = s}) == status::success;
    ok = ok && tensor_amax<t>(shard(half, M - half), amax.ptr + B + 1, {.stream = s}) == status::success;
    std::uint32_t words[B + 2] = {};
    ok = ok && cudaMemcpyAsync(words, amax.ptr, sizeof words, cudaMemcpyDeviceToHost, s) == cudaSuccess &&
         cudaStreamSynchronize(s) == cudaSuccess;
    const std::uint32_t combined = std::max(words[B], words[B + 1]);  // the all-reduce
    ok = ok && combined == words[0];                                  // = item 0's whole amax
    ok = ok && cudaMemcpy(amax.ptr + B, &combined, sizeof combined, cudaMemcpyHostToDevice) == cudaSuccess;
    ok = ok && quantize_with_amax<t>(shard(0, half), shard_out(0, half), amax.ptr + B, {.stream = s}) == status::success;
    ok = ok && quantize_with_amax<t>(shard(half, M - half), shard_out(half, M - half), amax.ptr + B, {.stream = s}) ==
                   status::success;
    ok = ok && cudaStreamSynchronize(s) == cudaSuccess;
    std::vector<unsigned char> a(h.size()), w(h.size()), sh(h.size());
    std::vector<float> scales(6 * B);
    cudaMemcpy(a.data(), q_ref.ptr, a.size(), cudaMemcpyDeviceToHost);
    cudaMemcpy(w.data(), q_whole.ptr, w.size(), cudaMemcpyDeviceToHost);
    cudaMemcpy(sh.data(), q_shards.ptr, sh.size(), cudaMemcpyDeviceToHost);
    cudaMemcpy(scales.data(), sc.ptr, scales.size() * sizeof(float), cudaMemcpyDeviceToHost);
    auto same = [&](int k, int i, int k2) {  // run k's value i (0 multiplier, 1 inverse) of item 0
      return std::memcmp(&scales[static_cast<std::size_t>((2 * k + i) * B)], &scales[static_cast<std::size_t>((2 * k2 + i) * B)],
                         sizeof(float)) == 0;
    };
    ok = ok && a == w && std::memcmp(scales.data(), scales.data() + 2 * B, 2 * B * sizeof(float)) == 0;
    ok = ok && std::equal(a.begin(), a.begin() + M * N, sh.begin()) && same(0, 0, 2) && same(0, 1, 2);
    std::printf("split tensorwise (%s): %s\n", with_nan ? "with a NaN" : "random", ok ? "equal" : "MISMATCH");
    bad += ok ? 0 : 1;
  }
  return bad;
}

// Bad input: a status before anything is launched or written.
void errors(cudaStream_t s, fp8q_test::checker& check) {
  constexpr spec r{.out = format::e4m3fn, .granularity = granularity::row};
  constexpr spec c{.out = format::e4m3fn, .granularity = granularity::col};
  device_buffer<bf16> x(64 * 64);
  device_buffer<e4m3fn> q(64 * 64);
  device_buffer<float> sc(64);
  cudaMemset(q.ptr, 0x5A, 64 * 64);
  const matrix_view<const bf16> in = row_major<const bf16>(x.ptr, 64, 64);
  quantized<r> out{row_major(q.ptr, 64, 64), row_major(sc.ptr, 64, 1), row_major(sc.ptr, 64, 1)};
  quantized<r> null_out = out;
  null_out.data.data = nullptr;
  FP8Q_TEST_CHECK(check, quantize<r>(in, null_out, {.stream = s}) == status::null_pointer);
  quantized<r> bad_shape = out;
  bad_shape.data.cols = 63;
  FP8Q_TEST_CHECK(check, quantize<r>(in, bad_shape, {.stream = s}) == status::bad_shape);
  matrix_view<const bf16> bad_ld = in;
  bad_ld.ld = 10;
  FP8Q_TEST_CHECK(check, quantize<r>(bad_ld, out, {.stream = s}) == status::bad_stride);
  quantized<c> cout{row_major(q.ptr, 64, 64), row_major(sc.ptr, 1, 64), row_major(sc.ptr, 1, 64)};
  FP8Q_TEST_CHECK(check, quantize<c>(in, cout, {.stream = s}) == status::bad_workspace);
  constexpr tuning odd_threads{.threads = 100};
  device_buffer<unsigned char> ws(4096);
  FP8Q_TEST_CHECK(check, (quantize<c, odd_threads>(in, cout, {.stream = s, .workspace = ws.ptr, .workspace_bytes = 4096})) == status::bad_tuning);
  // a forced family that does not take the views: bad_layout, nothing launched
  quantized<r> col_major_out = out;
  col_major_out.data = col_major(q.ptr, 64, 64);
  constexpr tuning by_block{.path = gpu_path::row_block};
  FP8Q_TEST_CHECK(check, (quantize<r, by_block>(in, col_major_out, {.stream = s, .workspace = ws.ptr, .workspace_bytes = 4096})) ==
                             status::bad_layout);
  // rowwise with row-major views runs a family that needs no workspace
  FP8Q_TEST_CHECK(check, workspace_size<r>(in, out) == 0);
  // the split tensorwise calls (several GPUs): null words, padded views
  constexpr spec t{.out = format::e4m3fn, .granularity = granularity::tensor};
  device_buffer<std::uint32_t> amax(1);
  quantized<t> tout{row_major(q.ptr, 64, 64), row_major(sc.ptr, 1, 1), row_major(sc.ptr, 1, 1)};
  FP8Q_TEST_CHECK(check, tensor_amax<t>(in, nullptr, {.stream = s}) == status::null_pointer);
  FP8Q_TEST_CHECK(check, quantize_with_amax<t>(in, tout, nullptr, {.stream = s}) == status::null_pointer);
  const matrix_view<const bf16> padded = row_major<const bf16>(x.ptr, 32, 60, 64);  // ld 64 > 60 columns
  FP8Q_TEST_CHECK(check, tensor_amax<t>(padded, amax.ptr, {.stream = s}) == status::bad_layout);
  quantized<t> tpad{row_major(q.ptr, 32, 60, 64), row_major(sc.ptr, 1, 1), row_major(sc.ptr, 1, 1)};
  FP8Q_TEST_CHECK(check, quantize_with_amax<t>(padded, tpad, amax.ptr, {.stream = s}) == status::bad_layout);
  FP8Q_TEST_CUDA(check, cudaStreamSynchronize(s));
  std::vector<unsigned char> back(64 * 64);
  cudaMemcpy(back.data(), q.ptr, back.size(), cudaMemcpyDeviceToHost);
  bool untouched = true;
  for (unsigned char b : back) untouched = untouched && b == 0x5A;
  FP8Q_TEST_CHECK(check, untouched);
}

}  // namespace

int main(int argc, char** argv) {
  if (!fp8q_test::gpu_visible()) return fp8q_test::skip_exit_code;
  bool quick = false;
  bool big = true;
  const char* only = nullptr;  // a part's name, or null for all of them
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) { quick = true; big = false; }
    if (std::strcmp(argv[i], "--no-big") == 0) big = false;
    if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
  }
  struct part {
    const char* format;
    const char* input;
    int (*run)(cudaStream_t, bool, bool);
  };
  const part parts[] = {
      {"e4m3fn", "bf16", sweep_e4m3fn_bf16},     {"e4m3fn", "f16", sweep_e4m3fn_f16},
      {"e4m3fn", "f32", sweep_e4m3fn_f32},       {"e4m3fnuz", "bf16", sweep_e4m3fnuz_bf16},
      {"e4m3fnuz", "f16", sweep_e4m3fnuz_f16},   {"e4m3fnuz", "f32", sweep_e4m3fnuz_f32},
      {"e5m2", "bf16", sweep_e5m2_bf16},         {"e5m2", "f16", sweep_e5m2_f16},
      {"e5m2", "f32", sweep_e5m2_f32},           {"e5m2fnuz", "bf16", sweep_e5m2fnuz_bf16},
      {"e5m2fnuz", "f16", sweep_e5m2fnuz_f16},   {"e5m2fnuz", "f32", sweep_e5m2fnuz_f32},
  };
  auto selected = [&](const part& p) {
    if (only == nullptr) return true;
    const std::string full = std::string(p.format) + "/" + p.input;
    return only == full || std::strcmp(only, p.format) == 0;
  };
  const bool rest = only == nullptr || std::strcmp(only, "rest") == 0;
  if (!rest && std::none_of(std::begin(parts), std::end(parts), selected)) {
    std::fprintf(stderr, "test_quantize_gpu: unknown part '%s' (a format, format/input or rest)\n", only);
    return 2;
  }
  auto runs = [&](const char*) { return rest; };
  fp8q_test::checker check("test_quantize_gpu");
  // A blocking stream: the checks' own copies and memsets (cudaMemcpy, cudaMemset) run on the
  // legacy default stream, which a non-blocking stream does not wait for (a call could then read
  // its input before the copy lands, or a poison memset land after the call wrote).
  cudaStream_t s = nullptr;
  FP8Q_TEST_CUDA(check, cudaStreamCreate(&s));
  bool sweeps = false;
  for (const part& p : parts) {
    if (!selected(p)) continue;
    sweeps = true;
    FP8Q_TEST_CHECK(check, p.run(s, quick, big) == 0);
  }
  if (runs("rest")) {
    FP8Q_TEST_CHECK(check, variants(s) == 0);
    if (!quick) FP8Q_TEST_CHECK(check, relay_paths(s) == 0);
    if (!quick) FP8Q_TEST_CHECK(check, held_paths(s) == 0);
    FP8Q_TEST_CHECK(check, held_walk(s) == 0);
    FP8Q_TEST_CHECK(check, single_launch_tensor(s, big) == 0);
    FP8Q_TEST_CHECK(check, graphs(s) == 0);
    FP8Q_TEST_CHECK(check, split_tensor(s) == 0);
  }
  // every family ran at least once (by name or by the automatic walk) in each part with a sweep
  const char* names[] = {"automatic", "row_wave", "row_block", "tensor_two_launch", "tensor_last_block",
                         "col_relay", "col_streaming", "col_cluster", "tiled"};
  for (int k = 1; k <= static_cast<int>(gpu_path::tiled) && sweeps; ++k) {
    std::printf("path %s: %d cases\n", names[k], path_runs()[k]);
    // the emulator (tests/emu) has no clusters
    if (k == static_cast<int>(gpu_path::col_cluster) && !fp8q::backend::has_clusters) continue;
    FP8Q_TEST_CHECK(check, path_runs()[k] > 0);
  }
  if (sweeps) {
    for (const gpu_path path : {gpu_path::row_transpose, gpu_path::col_hold, gpu_path::row_band}) {
      const int k = static_cast<int>(path);
      std::printf("path %s: %d cases\n",
                  path == gpu_path::row_band ? "row_band" : path == gpu_path::col_hold ? "col_hold" : "row_transpose",
                  path_runs()[k]);
      FP8Q_TEST_CHECK(check, path_runs()[k] > 0);
    }
  }
  if (runs("rest")) {
    delayed(s, check);
    errors(s, check);
  }
  FP8Q_TEST_CUDA(check, cudaStreamDestroy(s));
  return check.finish();
}
