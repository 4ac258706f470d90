// One (format, input type) part of the GPU quantize test's sweep, compiled once per part
// (quantize_sweep_<format>_<input>.cu) so the kernel instantiations build in parallel: twelve
// translation units instead of four cut a 16-core build's wall time to about a third. Expects
// FP8Q_SWEEP_FORMAT, FP8Q_SWEEP_INPUT (bf16, f16 or float), FP8Q_SWEEP_INPUT_ID (0, 1, 2: seeds
// differ per part) and FP8Q_SWEEP_FUNCTION from the including file. The bf16 part also runs the
// large 8192 x 8192 cases.
#include "quantize_check.hpp"

namespace fp8q_gpu_check {

namespace {

constexpr format F = format::FP8Q_SWEEP_FORMAT;

template <granularity G>
constexpr spec base_spec{.out = F, .granularity = G, .store = stored_scale::both};

// Three tunings that differ in everything a tuning can change; bytes must not. The default
// resolves `convert` per backend (hardware on NVIDIA), t_small forces software, t_wide hardware.
// Each runs the automatic walk, then every family of the granularity by name (gpu_path) on the
// shapes that family accepts, so a family the walk never picks by default is proven too.
// relay_paths() and single_launch_tensor() in test_quantize_gpu.cu cover more tunings of the
// one-launch families.
constexpr tuning t_default{};
constexpr tuning t_small{.threads = 128, .tile_rows = 32, .tile_cols = 64, .store = store_path::direct,
                         .amax_order = memory_order::acq_rel, .convert = convert_path::software};
constexpr tuning t_wide{.threads = 512, .tile_rows = 64, .tile_cols = 128, .store = store_path::staged,
                        .amax_order = memory_order::seq_cst, .convert = convert_path::hardware};

constexpr tuning with_path(tuning t, gpu_path p) {
  t.path = p;
  return t;
}

constexpr int tuning_id(const tuning& t) {
  tuning base = t;
  base.path = gpu_path::automatic;
  return base == t_default ? 0 : (base == t_small ? 1 : 2);
}

std::vector<shape> shapes(bool quick) {
  std::vector<shape> v = {
      {1, 1, 1},
      {1, 1, 1000},                                      // 1 x K, K % 16 != 0
      {1, 777, 1},                                       // M x 1
      {1, 63, 65}, {1, 64, 64}, {1, 65, 63},             // tile - 1, tile, tile + 1
      {1, 129, 200, layout::row_major, 3},               // odd leading dimension
      {1, 131, 200, layout::row_major, 0, layout::col_major, 0},  // transposed (row_transpose): a
                                                         // partial quad, byte stores
      {1, 100, 4096 + 16},                               // long rows, vector path
      {1, 33, 20000},                                    // rows longer than the on-chip path
      {2, 40, 6144},                                     // few rows: one block per row
      {1, 40, 8192},                                     // one block per row, all on chip
      {1, 70, 7000},                                     // a partial last unit per thread (row_block)
      {1, 600, 2560}, {1, 600, 4000}, {1, 600, 5120}, {1, 600, 5128},  // one wave per row:
                                                         // 12, 16, 20, 24 units per lane (bf16)
      {3, 70, 90},                                       // batched (3D)
      {1, 130, 96, layout::col_major, 0, layout::col_major, 0},
      {1, 96, 130, layout::row_major, 0, layout::col_major, 5},  // transposed, padded output
      {2, 64, 48, layout::col_major, 1, layout::row_major, 0},
      {2, 256, 136, layout::row_major, 0, layout::col_major, 4},   // transposed: word stores, a tail strip
      {1, 1000, 1032, layout::row_major, 8, layout::col_major, 0}, // transposed: a partial last tile
  };
  if (quick) v.resize(8);
  return v;
}

template <granularity G, tuning T, class In>
int sweep_one(const char* in_name, cudaStream_t stream, bool quick, std::uint64_t& seed) {
  int problems = 0;
  char label[256];
  int i = 0;
  for (const shape& sh : shapes(quick)) {
    for (data_kind kind : {data_kind::random, data_kind::adversarial}) {
      std::snprintf(label, sizeof label, "%s/%s/%s/tuning%d/path%d/shape%d/%s", to_string(G), to_string(F), in_name,
                    tuning_id(T), static_cast<int>(T.path), i, kind == data_kind::random ? "random" : "adversarial");
      problems += run_case<base_spec<G>, T, In>(label, sh, kind, ++seed, quick ? 0 : 1, stream);
    }
    ++i;
  }
  return problems;
}

// The automatic walk, then each of the granularity's families by name, under tuning T.
template <granularity G, tuning T, class In>
int sweep_paths(const char* in_name, cudaStream_t stream, bool quick, std::uint64_t& seed) {
  int p = sweep_one<G, T, In>(in_name, stream, quick, seed);
  if constexpr (G == granularity::tensor) {
    p += sweep_one<G, with_path(T, gpu_path::tensor_two_launch), In>(in_name, stream, quick, seed);
    p += sweep_one<G, with_path(T, gpu_path::tensor_last_block), In>(in_name, stream, quick, seed);
  } else if constexpr (G == granularity::row) {
    p += sweep_one<G, with_path(T, gpu_path::row_wave), In>(in_name, stream, quick, seed);
    p += sweep_one<G, with_path(T, gpu_path::row_block), In>(in_name, stream, quick, seed);
    p += sweep_one<G, with_path(T, gpu_path::row_transpose), In>(in_name, stream, quick, seed);
    p += sweep_one<G, with_path(T, gpu_path::row_band), In>(in_name, stream, quick, seed);
  } else {
    p += sweep_one<G, with_path(T, gpu_path::col_relay), In>(in_name, stream, quick, seed);
    p += sweep_one<G, with_path(T, gpu_path::col_hold), In>(in_name, stream, quick, seed);
    p += sweep_one<G, with_path(T, gpu_path::col_streaming), In>(in_name, stream, quick, seed);
    p += sweep_one<G, with_path(T, gpu_path::col_cluster), In>(in_name, stream, quick, seed);
  }
  p += sweep_one<G, with_path(T, gpu_path::tiled), In>(in_name, stream, quick, seed);
  return p;
}

template <class In>
int sweep_input(const char* in_name, cudaStream_t stream, bool quick, std::uint64_t& seed) {
  int p = 0;
  p += sweep_paths<granularity::tensor, t_default, In>(in_name, stream, quick, seed);
  p += sweep_paths<granularity::row, t_default, In>(in_name, stream, quick, seed);
  p += sweep_paths<granularity::col, t_default, In>(in_name, stream, quick, seed);
  if (!quick) {
    p += sweep_paths<granularity::tensor, t_small, In>(in_name, stream, quick, seed);
    p += sweep_paths<granularity::row, t_small, In>(in_name, stream, quick, seed);
    p += sweep_paths<granularity::col, t_small, In>(in_name, stream, quick, seed);
    p += sweep_paths<granularity::tensor, t_wide, In>(in_name, stream, quick, seed);
    p += sweep_paths<granularity::row, t_wide, In>(in_name, stream, quick, seed);
    p += sweep_paths<granularity::col, t_wide, In>(in_name, stream, quick, seed);
  }
  return p;
}

}  // namespace

int FP8Q_SWEEP_FUNCTION(cudaStream_t stream, bool quick, bool big) {
  using In = FP8Q_SWEEP_INPUT;
  const char* in_name = std::is_same_v<In, float> ? "f32" : std::is_same_v<In, bf16> ? "bf16" : "f16";
  std::uint64_t seed = 1000 * static_cast<std::uint64_t>(F) + 100 * FP8Q_SWEEP_INPUT_ID + 17;
  int p = 0;
  p += sweep_input<In>(in_name, stream, quick, seed);
  big = big && std::is_same_v<In, bf16>;
  if (big) {
    // 8192 x 8192 bf16, each granularity, 10 runs each: the size where scheduling varies most.
    const shape s8k{1, 8192, 8192};
    p += run_case<base_spec<granularity::tensor>, t_default, bf16>("tensor/8192x8192", s8k, data_kind::adversarial, ++seed, 9, stream);
    p += run_case<base_spec<granularity::row>, t_default, bf16>("row/8192x8192", s8k, data_kind::adversarial, ++seed, 9, stream);
    p += run_case<base_spec<granularity::col>, t_default, bf16>("col/8192x8192", s8k, data_kind::random, ++seed, 9, stream);
    const shape s8k_t{1, 8192, 8192, layout::row_major, 0, layout::col_major, 0};
    p += run_case<base_spec<granularity::col>, t_wide, bf16>("col/8192x8192/colmajor-out", s8k_t, data_kind::adversarial, ++seed, 9, stream);
    p += run_case<base_spec<granularity::col>, with_path(t_wide, gpu_path::col_cluster), bf16>(
        "col/8192x8192/colmajor-out/cluster", s8k_t, data_kind::adversarial, ++seed, 9, stream);
    p += run_case<base_spec<granularity::tensor>, with_path(t_wide, gpu_path::tensor_last_block), bf16>(
        "tensor/8192x8192/last_block", s8k, data_kind::adversarial, ++seed, 9, stream);
  }
  std::printf("%s %s: %d failing cases\n", to_string(F), in_name, p);
  return p;
}

}  // namespace fp8q_gpu_check
