// TorchAO conventions (../shared/ANCHORS.md "How peers compute scales"): with power-of-2 scales,
// eps 1e-12, the multiplier stored and bf16 inputs, fp8q must give TorchAO's scales and bytes.
// The TorchAO rule is modelled here step by step, as its recipes write it:
//   amax  = max |x| in the input dtype (exact)
//   s     = (max / clamp(amax.to(float64), min=1e-12)).to(float32)
//   s     = exp2(floor(log2(s)))                 (power-of-2 rounding down; evaluated in f64)
//   y     = x.to(float32) * s                     (an f32 multiply)
//   q     = clamp(y, -max, max).to(float8_*)      (nearest-even cast, ml_dtypes semantics)
// for rowwise (activations), per-group colwise (MoE weight gradients, groups along rows,
// column-major output, scales [G][N]) and per-expert colwise (E, K, N) -> scales (E, 1, N).
// Not modelled: TorchAO's scale for an EMPTY group (fp8q writes nothing there, by design:
// docs/semantics.md "Group offsets"); those entries are skipped.
#include <array>
#include <utility>

#include <catch2/catch.hpp>

#include "quant_fixtures.hpp"

using namespace fp8q;

namespace {

// TorchAO's scale for one amax (double max of the format).
float torchao_scale(double fmt_max, float amax) {
  const double clamped = std::max(static_cast<double>(amax), 1e-12);  // eps as an f64 1e-12
  float s = static_cast<float>(fmt_max / clamped);
  s = static_cast<float>(std::exp2(std::floor(std::log2(static_cast<double>(s)))));
  return s;
}

// TorchAO's cast of one element.
std::uint8_t torchao_cast(format f, float x, float s) {
  const float fmax = static_cast<float>(fq::desc(f).max);
  float y = x * s;                 // x.to(torch.float32) * scale
  y = std::min(std::max(y, -fmax), fmax);  // torch.clamp(y, -max, max) (no NaN inputs here)
  return fq::ref_encode(f, y, /*saturate=*/false);  // .to(float8): RNE, overflow is NaN/Inf
}

// bf16 inputs like activations and gradients: wide per-row/column ranges, some zeros.
std::vector<bf16> torchao_input(std::mt19937_64& rng, fq::i64 n_rows, fq::i64 n_cols, std::vector<float>& xf) {
  fq::gen_cfg g;
  g.exp_lo = -12;
  g.exp_hi = 4;
  g.spread = 8;
  xf = fq::random_values<bf16>(rng, 1, n_rows, n_cols, g);
  std::vector<bf16> x(xf.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = to_bf16(xf[i]);
  return x;
}

template <format F>
void rowwise_case(std::mt19937_64& rng, fq::i64 M, fq::i64 N) {
  constexpr spec S{.out = F, .granularity = granularity::row, .power_of_2 = true,
                   .store = stored_scale::multiplier};
  std::vector<float> xf;
  std::vector<bf16> x = torchao_input(rng, M, N, xf);
  if (M > 2) {  // row 1 all zero: s = 448 / 1e-12 -> 2^48
    for (fq::i64 c = 0; c < N; ++c) {
      xf[static_cast<std::size_t>(N + c)] = 0.0f;
      x[static_cast<std::size_t>(N + c)] = bf16{0};
    }
  }
  std::vector<fp8<F>> q(static_cast<std::size_t>(M * N));
  std::vector<float> s(static_cast<std::size_t>(M));
  const quantized<S> out{row_major(q.data(), M, N), row_major(s.data(), M, 1), {}};
  REQUIRE(host::quantize<S>(row_major(x.data(), M, N).as_const(), out) == status::success);
  const double fmax = fq::desc(F).max;
  int bad = 0;
  for (fq::i64 r = 0; r < M; ++r) {
    float amax = 0;
    for (fq::i64 c = 0; c < N; ++c) amax = std::max(amax, std::fabs(xf[static_cast<std::size_t>(r * N + c)]));
    const float ts = torchao_scale(fmax, amax);
    if (fq::bits_of(ts) != fq::bits_of(s[static_cast<std::size_t>(r)]) && bad++ < 5)
      FAIL_CHECK("row " << r << " amax " << amax << ": fp8q s " << fq::fstr(s[static_cast<std::size_t>(r)])
                        << ", TorchAO s " << fq::fstr(ts));
    for (fq::i64 c = 0; c < N; ++c) {
      const std::size_t i = static_cast<std::size_t>(r * N + c);
      const std::uint8_t want = torchao_cast(F, xf[i], ts);
      if (q[i].bits != want && bad++ < 5)
        FAIL_CHECK("(" << r << "," << c << ") x " << xf[i] << ": fp8q " << fq::hex(q[i].bits, 2)
                       << ", TorchAO " << fq::hex(want, 2));
    }
  }
  CHECK(bad == 0);
}

template <format F>
void group_colwise_case(std::mt19937_64& rng, fq::i64 M, fq::i64 N, fq::i64 G) {
  constexpr spec S{.out = F, .granularity = granularity::group_col, .power_of_2 = true,
                   .store = stored_scale::multiplier};
  std::vector<float> xf;
  std::vector<bf16> x = torchao_input(rng, M, N, xf);
  const std::vector<std::int32_t> ends = fq::random_offsets(rng, M, G);
  std::vector<fp8<F>> q(static_cast<std::size_t>(M * N));  // column-major (M, N)
  std::vector<float> s(static_cast<std::size_t>(G * N));   // [G][N]
  const quantized<S> out{col_major(q.data(), M, N), row_major(s.data(), G, N), {}};
  quantize_args args;
  args.groups = {ends.data(), G};
  REQUIRE(host::quantize<S>(row_major(x.data(), M, N).as_const(), out, args) == status::success);
  const double fmax = fq::desc(F).max;
  int bad = 0;
  fq::i64 start = 0;
  for (fq::i64 g = 0; g < G; ++g) {
    const fq::i64 end = ends[static_cast<std::size_t>(g)];
    for (fq::i64 c = 0; c < N && end > start; ++c) {
      float amax = 0;
      for (fq::i64 r = start; r < end; ++r) amax = std::max(amax, std::fabs(xf[static_cast<std::size_t>(r * N + c)]));
      const float ts = torchao_scale(fmax, amax);
      const float got_s = s[static_cast<std::size_t>(g * N + c)];
      if (fq::bits_of(ts) != fq::bits_of(got_s) && bad++ < 5)
        FAIL_CHECK("group " << g << " col " << c << ": fp8q s " << fq::fstr(got_s) << ", TorchAO s " << fq::fstr(ts));
      for (fq::i64 r = start; r < end; ++r) {
        const std::uint8_t want = torchao_cast(F, xf[static_cast<std::size_t>(r * N + c)], ts);
        const std::uint8_t got = q[static_cast<std::size_t>(c * M + r)].bits;  // column-major
        if (got != want && bad++ < 5)
          FAIL_CHECK("(" << r << "," << c << "): fp8q " << fq::hex(got, 2) << ", TorchAO " << fq::hex(want, 2));
      }
    }
    start = std::max(start, end);
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("torchao: rowwise, power-of-2 multipliers, bf16 -> e4m3fn / e4m3fnuz", "[host][torchao]") {
  const std::uint64_t seed = fq::test_seed("torchao_rowwise");
  INFO("seed " << seed << " (FP8Q_TEST_SEED=" << fq::base_seed() << ")");
  std::mt19937_64 rng(seed);
  for (const auto& [m, n] : std::vector<std::pair<fq::i64, fq::i64>>{{1, 1}, {7, 300}, {64, 129}, {300, 64}}) {
    INFO(m << " x " << n);
    rowwise_case<format::e4m3fn>(rng, m, n);
    rowwise_case<format::e4m3fnuz>(rng, m, n);
  }
}

TEST_CASE("torchao: per-group colwise, column-major output, scales [G][N]", "[host][torchao]") {
  const std::uint64_t seed = fq::test_seed("torchao_group_col");
  INFO("seed " << seed << " (FP8Q_TEST_SEED=" << fq::base_seed() << ")");
  std::mt19937_64 rng(seed);
  for (const auto& [m, n, g] : std::vector<std::array<fq::i64, 3>>{{1, 1, 1}, {160, 48, 4}, {333, 17, 16}, {64, 130, 1}}) {
    INFO(m << " x " << n << ", G = " << g);
    group_colwise_case<format::e4m3fn>(rng, m, n, g);
  }
}

TEST_CASE("torchao: per-expert colwise (E, K, N) -> scales (E, 1, N)", "[host][torchao]") {
  // TorchAO's 3D colwise: for each expert e and column n, s = rule(amax over k of x[e, :, n]).
  constexpr spec S{.out = format::e4m3fn, .granularity = granularity::col, .power_of_2 = true,
                   .store = stored_scale::multiplier};
  const std::uint64_t seed = fq::test_seed("torchao_3d");
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const fq::i64 E = 3, K = 40, N = 70;
  std::vector<float> xf;
  std::vector<bf16> x = torchao_input(rng, E * K, N, xf);
  std::vector<e4m3fn> q(static_cast<std::size_t>(E * K * N));
  std::vector<float> s(static_cast<std::size_t>(E * N));
  const quantized<S> out{batched(row_major(q.data(), K, N), E), batched(row_major(s.data(), 1, N), E), {}};
  REQUIRE(host::quantize<S>(batched(row_major(x.data(), K, N).as_const(), E), out) == status::success);
  int bad = 0;
  for (fq::i64 e = 0; e < E; ++e)
    for (fq::i64 n = 0; n < N; ++n) {
      float amax = 0;
      for (fq::i64 k = 0; k < K; ++k) amax = std::max(amax, std::fabs(xf[static_cast<std::size_t>((e * K + k) * N + n)]));
      const float ts = torchao_scale(448.0, amax);
      if (fq::bits_of(ts) != fq::bits_of(s[static_cast<std::size_t>(e * N + n)])) ++bad;
      for (fq::i64 k = 0; k < K; ++k) {
        const std::size_t i = static_cast<std::size_t>((e * K + k) * N + n);
        if (q[i].bits != torchao_cast(format::e4m3fn, xf[i], ts)) ++bad;
      }
    }
  CHECK(bad == 0);
}
