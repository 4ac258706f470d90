// group_row_fused's register fits that per-group rowwise takes at the default 448 threads on
// sm_90 for bf16 rows of up to 17920 columns (2, 4 and 5 units per thread; the benchmark's 16640
// columns take 5), with power-of-2 scales and with stored scale and inverse: ptxas must not spill
// in any of them. A change that made every fit spill (c2bc642, reverted) cost per-group rowwise
// 27% of its speed with its bytes unchanged (docs/benchmarks/h200-2026-12-02-2017.md), which no
// byte test sees. Compiled by nvcc with ptxas's spill warnings as errors (CMakeLists.txt).
// group_row_spans (a thread on 11 consecutive units, 128 registers at its 512-thread bound) with
// power-of-2 scales, unpadded and both padded placements: a split unit kept in registers through the barriers,
// and one kernel for both output kinds, made it spill. (With stored scale and inverse it spills
// 4 bytes, CUDA 13: not asserted here.)
#include "fp8q/gpu/quantize.hpp"

namespace {

using namespace fp8q;
using namespace fp8q::detail::gpu;

constexpr spec pow2{.out = format::e4m3fn, .granularity = granularity::group_row, .power_of_2 = true};
constexpr spec both{.out = format::e4m3fn, .granularity = granularity::group_row, .store = stored_scale::both};

template <spec S, int Items>
void* fit() {
  using family = group_row_fused<S, tuning{}, bf16>;
  static_assert(family::R.threads == 448, "the CUDA default this check is about");
  return reinterpret_cast<void*>(&group_row_fused_kernel<spec_c<S>, tuning_c<family::R>, bf16, Items>);
}

template <spec S, span_place Place>
void* spans() {
  using family = group_row_spans<S, tuning{}, bf16>;
  return reinterpret_cast<void*>(&group_row_spans_kernel<spec_c<S>, tuning_c<family::R>, bf16, Place>);
}

}  // namespace

void* fp8q_group_row_fits[] = {fit<pow2, 2>(), fit<pow2, 4>(), fit<pow2, 5>(), fit<both, 5>(), spans<pow2, span_place::unpadded>(),
                               spans<pow2, span_place::copy_out>(), spans<pow2, span_place::cast>()};
