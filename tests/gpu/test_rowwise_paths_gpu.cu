// The rowwise families under every conversion path (automatic, software, hardware) for the four
// data formats, bf16/f16/f32, against the host reference byte for byte (quantize_check.hpp):
// shapes at each register fit of row_wave (8 to 24 units per lane), rows that the walk gives
// row_block (28, 32 units per lane and longer), partial and tail units, single rows, batches,
// then row_block by name on the same shapes;
// random data (every row takes the
// in-range encoder: no NaN select, no clamp) and adversarial data (rows with NaN, ±Inf, ±max
// and ties: the general encoder). A small program next to test_quantize_gpu's full sweep, so
// that a change to the rowwise kernels can be proven on a GPU within minutes of building.
#include "quantize_check.hpp"

using namespace fp8q;
using fp8q_gpu_check::data_kind;
using fp8q_gpu_check::shape;

namespace {

constexpr tuning t_auto{};
constexpr tuning t_sw{.convert = convert_path::software};
constexpr tuning t_hw{.convert = convert_path::hardware};
constexpr tuning t_block{.path = gpu_path::row_block};
constexpr tuning t_block_sw{.convert = convert_path::software, .path = gpu_path::row_block};

template <format F, tuning T, class In>
int one(const char* name, cudaStream_t stream, std::uint64_t& seed) {
  constexpr spec S{.out = F, .granularity = granularity::row, .store = stored_scale::both};
  const shape shapes[] = {
      {1, 600, 2048}, {1, 600, 3072}, {1, 600, 4096}, {1, 600, 5120}, {1, 600, 6144},  // 8..24 units
      {1, 600, 7168}, {1, 600, 8192},                      // 28, 32 units: row_block
      {1, 333, 5000},                                      // a partial last unit
      {1, 257, 5123},                                      // a tail past the last unit
      {1, 1, 5120},  {2, 129, 1000},                       // one row; batches
      {1, 40, 20000},                                      // row_block, re-read from L2
  };
  int problems = 0;
  char label[160];
  int i = 0;
  for (const shape& sh : shapes) {
    for (data_kind kind : {data_kind::random, data_kind::adversarial}) {
      std::snprintf(label, sizeof label, "row/%s/%s/%s/shape%d/%s", to_string(F), name,
                    std::is_same_v<In, float> ? "f32" : std::is_same_v<In, bf16> ? "bf16" : "f16", i,
                    kind == data_kind::random ? "random" : "adversarial");
      problems += fp8q_gpu_check::run_case<S, T, In>(label, sh, kind, ++seed, 1, stream);
    }
    ++i;
  }
  return problems;
}

template <format F, class In>
int every_convert(cudaStream_t stream, std::uint64_t& seed) {
  return one<F, t_auto, In>("auto", stream, seed) + one<F, t_sw, In>("sw", stream, seed) +
         one<F, t_hw, In>("hw", stream, seed) + one<F, t_block, In>("block", stream, seed) +
         one<F, t_block_sw, In>("block_sw", stream, seed);
}

template <format F>
int every_input(cudaStream_t stream, std::uint64_t& seed) {
  const int p = every_convert<F, bf16>(stream, seed) + every_convert<F, f16>(stream, seed) +
                every_convert<F, float>(stream, seed);
  std::printf("%s: %d failing cases\n", to_string(F), p);
  return p;
}

}  // namespace

int main() {
  if (!fp8q_test::gpu_visible()) return fp8q_test::skip_exit_code;
  fp8q_test::checker check("test_rowwise_paths_gpu");
  cudaStream_t s = nullptr;
  FP8Q_TEST_CUDA(check, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::uint64_t seed = 20261201;
  FP8Q_TEST_CHECK(check, every_input<format::e4m3fn>(s, seed) == 0);
  FP8Q_TEST_CHECK(check, every_input<format::e4m3fnuz>(s, seed) == 0);
  FP8Q_TEST_CHECK(check, every_input<format::e5m2>(s, seed) == 0);
  FP8Q_TEST_CHECK(check, every_input<format::e5m2fnuz>(s, seed) == 0);
  // the walk took row_wave for most of the shapes above, row_block for the long rows
  FP8Q_TEST_CHECK(check, fp8q_gpu_check::path_runs()[static_cast<int>(gpu_path::row_wave)] > 0 &&
                             fp8q_gpu_check::path_runs()[static_cast<int>(gpu_path::row_block)] > 0);
  FP8Q_TEST_CUDA(check, cudaStreamDestroy(s));
  return check.finish();
}
