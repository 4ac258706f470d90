// Every granularity under the block sizes a tuning may ask for at its ends (64 and 1024 threads,
// and 512), for a 2-byte and a 4-byte input: each family in a walk must compile for the tuning or
// step aside (a family whose shared memory grows with the block and passes 48 KiB fails ptxas;
// col_hold did at 1024 threads of bf16 until 2026-12-04). Compile only (isa_block_sizes_nvcc).
#include "fp8q/gpu/quantize.hpp"

namespace {

using namespace fp8q;

template <granularity G, class In, int Threads>
void one(matrix_view<const In> in, void* ws, gpu_stream s) {
  constexpr spec S{.out = format::e4m3fn, .granularity = G};
  constexpr tuning T{.threads = Threads};
  (void)quantize<S, T>(in, quantized<S>{}, {.stream = s, .workspace = ws, .workspace_bytes = workspace_size<S, T>(in)});
}

template <class In, int Threads>
void every_granularity(matrix_view<const In> in, void* ws, gpu_stream s) {
  one<granularity::tensor, In, Threads>(in, ws, s);
  one<granularity::row, In, Threads>(in, ws, s);
  one<granularity::col, In, Threads>(in, ws, s);
  one<granularity::group_row, In, Threads>(in, ws, s);
  one<granularity::group_col, In, Threads>(in, ws, s);
}

}  // namespace

void fp8q_isa_block_sizes(const void* data, void* ws, gpu_stream s) {
  const auto b = row_major(static_cast<const bf16*>(data), 64, 64);
  const auto f = row_major(static_cast<const float*>(data), 64, 64);
  every_granularity<bf16, 64>(b, ws, s);
  every_granularity<bf16, 512>(b, ws, s);
  every_granularity<bf16, 1024>(b, ws, s);
  every_granularity<float, 1024>(f, ws, s);
}
