// Stochastic rounding: always a neighbour, reproducible from (seed, index), unbiased, and exact
// values untouched. Checked against oracle::encode_sr (the documented threshold rule) and
// statistically against the input value itself.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../support/oracle.hpp"
#include "fp8q/convert.hpp"

namespace {

using fp8q::format;
using fp8q::overflow;

template <format F>
std::uint8_t sr(float x, std::uint64_t seed, std::uint64_t index, overflow ov) {
  return fp8q::encode_stochastic<F>(x, fp8q::stochastic_bits(seed, index), ov).bits;
}

std::string f32_text(float x) {
  std::ostringstream s;
  s << std::hexfloat << x << " (0x" << std::hex << std::bit_cast<std::uint32_t>(x) << ')';
  return s.str();
}

// Inputs that exercise every part of a format: random f32 patterns (specials included), values
// spread over the format's range and a little past max, and values among the subnormals.
std::vector<float> random_inputs(format f, std::mt19937_64& rng, int n) {
  std::vector<float> out;
  const auto& r = oracle::ladder(f);
  const double max = r[r.size() - 2].value;
  const double min_positive = f == format::e8m0fnu ? r[0].value : r[1].value;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < n; ++i) {
    const double sign = (rng() & 1) ? -1.0 : 1.0;
    switch (i % 4) {
      case 0: out.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng()))); break;
      case 1: {
        // log-uniform from below the smallest value to past max
        const double lg = std::log2(min_positive) - 2 +
                          unit(rng) * (std::log2(max) - std::log2(min_positive) + 3);
        out.push_back(static_cast<float>(sign * std::exp2(lg)));
        break;
      }
      case 2: out.push_back(static_cast<float>(sign * unit(rng) * 1.1 * max)); break;
      case 3: out.push_back(static_cast<float>(sign * unit(rng) * 8 * min_positive)); break;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("stochastic result is always one of the two neighbours of x", "[host]") {
  std::mt19937_64 rng(20261129);
  oracle::for_each_format([&](auto tag) {
    constexpr format F = decltype(tag)::value;
    const std::vector<float> inputs = random_inputs(F, rng, 100000);
    for (overflow ov : oracle::policies) {
      long not_neighbour = 0;
      long not_documented = 0;
      std::string first;
      for (float x : inputs) {
        const std::uint64_t seed = rng();
        const std::uint64_t index = rng() >> (rng() & 63);  // small and huge indices
        const std::uint32_t bits = fp8q::stochastic_bits(seed, index);
        const std::uint8_t got = fp8q::encode_stochastic<F>(x, bits, ov).bits;
        const int special = oracle::special_byte(F, x, ov);
        if (special >= 0) {
          not_neighbour += got != special;
        } else {
          const oracle::bracket b = oracle::bracket_of(F, x, ov);
          not_neighbour += got != b.lo_byte && got != b.hi_byte;
        }
        // And exactly the neighbour the documented rule picks: up iff bits < floor(p * 2^32).
        if (got != oracle::encode_sr(F, x, bits, ov)) {
          if (not_documented++ < 4) first += f32_text(x) + " bits " + std::to_string(bits) + "\n";
        }
        // The run-time rounding overload takes the same path.
        not_documented += fp8q::encode<F>(x, fp8q::rounding::stochastic, bits, ov).bits != got;
      }
      INFO(fp8q::to_string(F) << ' ' << fp8q::to_string(ov) << '\n' << first);
      CHECK(not_neighbour == 0);
      CHECK(not_documented == 0);
    }
  });
}

TEST_CASE("stochastic rounding of bf16 and f16 inputs equals that of their f32 value", "[host]") {
  oracle::for_each_format([](auto tag) {
    constexpr format F = decltype(tag)::value;
    long bad = 0;
    for (std::uint32_t b = 0; b < 0x10000u; ++b) {
      const auto bits = static_cast<std::uint16_t>(b);
      const std::uint32_t r = fp8q::stochastic_bits(7, b);
      for (overflow ov : oracle::policies) {
        bad += fp8q::encode_stochastic<F>(fp8q::bf16{bits}, r, ov) !=
               fp8q::encode_stochastic<F>(std::bit_cast<float>(b << 16), r, ov);
        bad += fp8q::encode_stochastic<F>(fp8q::f16{bits}, r, ov) !=
               fp8q::encode_stochastic<F>(static_cast<float>(oracle::f16_value(bits)), r, ov);
      }
    }
    INFO(fp8q::to_string(F));
    CHECK(bad == 0);
  });
}

TEST_CASE("stochastic rounding is reproducible from (seed, index)", "[host]") {
  // x halfway between 1 and the next value up: each outcome has probability 1/2.
  const float x = 1.0625f;  // e4m3fn neighbours 1 and 1.125
  constexpr format F = format::e4m3fn;
  constexpr std::uint64_t seed = 0xC0FFEE;
  std::vector<std::uint8_t> forward(4096), backward(4096);
  for (std::uint64_t i = 0; i < forward.size(); ++i) forward[i] = sr<F>(x, seed, i, overflow::saturate);
  // Same (seed, index) in another order gives the same bytes: no hidden state.
  for (std::uint64_t i = backward.size(); i-- > 0;) backward[i] = sr<F>(x, seed, i, overflow::saturate);
  CHECK(forward == backward);

  // Different indices vary: both neighbours occur, and not in long runs.
  int ups = 0;
  int changes = 0;
  for (std::size_t i = 0; i < forward.size(); ++i) {
    REQUIRE((forward[i] == 0x38 || forward[i] == 0x39));
    ups += forward[i] == 0x39;
    if (i > 0) changes += forward[i] != forward[i - 1];
  }
  CHECK(ups > 1800);
  CHECK(ups < 2300);
  CHECK(changes > 1800);

  // A different seed gives a different sequence.
  int differ = 0;
  for (std::uint64_t i = 0; i < forward.size(); ++i) {
    differ += sr<F>(x, seed + 1, i, overflow::saturate) != forward[i];
  }
  CHECK(differ > 1800);

  // The generator is part of the contract: stored stochastic results must stay reproducible
  // across fp8q versions. Changing these constants is a breaking change, to be made on purpose.
  static_assert(fp8q::stochastic_bits(0, 0) == fp8q::stochastic_bits(0, 0));
  CHECK(fp8q::stochastic_bits(0, 0) == 0xE220A839u);
  CHECK(fp8q::stochastic_bits(1, 0) == 0xF4A90164u);
  CHECK(fp8q::stochastic_bits(0, 1) == 0x6E789E6Au);
  CHECK(fp8q::stochastic_bits(0x123456789ABCDEFull, 1ull << 40) == 0x936FB8ABu);
}

TEST_CASE("stochastic bits are uniform enough for rounding", "[host]") {
  // Every bit position is set about half the time over 2^20 consecutive indices (5 standard
  // errors: 2^19 +- 2560).
  std::uint64_t ones[32] = {};
  constexpr std::uint64_t n = 1u << 20;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint32_t r = fp8q::stochastic_bits(42, i);
    for (int b = 0; b < 32; ++b) ones[b] += (r >> b) & 1u;
  }
  for (int b = 0; b < 32; ++b) {
    INFO("bit " << b);
    CHECK(std::fabs(static_cast<double>(ones[b]) - n / 2.0) < 2560.0);
  }
}

namespace {

struct mean_check {
  double mean;
  double bound;  // 5 standard errors
  bool within() const { return std::fabs(mean) <= bound; }
};

// Mean over n indices of decode(round(x)) - x, next to 5 standard errors of that mean for a
// rounding that picks hi with probability p. `round` maps (x, random bits) to a decoded value.
template <class Round>
mean_check deviation(float x, double lo, double hi, std::uint64_t seed, std::uint64_t n,
                     Round&& round) {
  long double sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += round(x, fp8q::stochastic_bits(seed, i));
  const double p = (std::fabs(x) - lo) / (hi - lo);
  const double se = (hi - lo) * std::sqrt(p * (1 - p) / static_cast<double>(n));
  return {static_cast<double>(sum / static_cast<long double>(n)) - x, 5 * se};
}

}  // namespace

TEST_CASE("stochastic rounding is unbiased", "[host]") {
  constexpr std::uint64_t n = 1u << 20;
  const double fractions[] = {1.0 / 3, 0.5, 0.01, 0.9};
  oracle::for_each_format([&](auto tag) {
    constexpr format F = decltype(tag)::value;
    const auto& r = oracle::ladder(F);
    // (lo, hi) pairs of neighbouring values: around 1, among the subnormals (for e8m0fnu: the
    // f32 subnormals between 2^-127 and 2^-126), and between zero and the smallest subnormal.
    std::vector<std::pair<double, double>> gaps;
    for (std::size_t i = 0; i + 2 < r.size(); ++i) {
      if (r[i].value == 1.0) gaps.push_back({r[i].value, r[i + 1].value});
    }
    if (F == format::e8m0fnu) {
      gaps.push_back({r[0].value, r[1].value});
      gaps.push_back({r[130].value, r[131].value});  // 2^3 .. 2^4
    } else {
      gaps.push_back({r[0].value, r[1].value});
      gaps.push_back({r[2].value, r[3].value});
    }
    for (const auto& [lo, hi] : gaps) {
      for (double frac : fractions) {
        for (double sign : {1.0, -1.0}) {
          if (F == format::e8m0fnu && sign < 0) continue;
          const float x = static_cast<float>(sign * (lo + frac * (hi - lo)));
          const std::uint64_t seed = std::bit_cast<std::uint32_t>(x);
          INFO(fp8q::to_string(F) << " x = " << f32_text(x));
          const mean_check fair = deviation(x, lo, hi, seed, n, [](float v, std::uint32_t bits) {
            return static_cast<double>(
                fp8q::decode(fp8q::encode_stochastic<F>(v, bits, overflow::propagate)));
          });
          INFO("mean - x = " << fair.mean << ", 5 standard errors = " << fair.bound);
          CHECK(fair.within());

          // The bound has teeth: a rounding that goes up with probability p + 1/64 fails it.
          const mean_check biased = deviation(x, lo, hi, seed, n, [&](float v, std::uint32_t bits) {
            const double p = (std::fabs(v) - lo) / (hi - lo) + 1.0 / 64;
            const double up = static_cast<double>(bits) < std::ldexp(p, 32) ? hi : lo;
            return std::copysign(up, v);
          });
          INFO("biased: mean - x = " << biased.mean << ", bound " << biased.bound);
          CHECK_FALSE(biased.within());
        }
      }
    }
  });
}

TEST_CASE("exactly representable values never change under stochastic rounding", "[host]") {
  std::mt19937_64 rng(7);
  oracle::for_each_format([&](auto tag) {
    constexpr format F = decltype(tag)::value;
    long bad = 0;
    for (overflow ov : oracle::policies) {
      for (int c = 0; c < 256; ++c) {
        const auto code = static_cast<std::uint8_t>(c);
        if (oracle::is_nan_code(F, code) || oracle::is_inf_code(F, code)) continue;
        const float x = fp8q::decode(fp8q::fp8<F>{code});
        const std::uint32_t extremes[] = {0u, 1u, 0x80000000u, 0xFFFFFFFFu};
        for (std::uint32_t bits : extremes) bad += fp8q::encode_stochastic<F>(x, bits, ov).bits != c;
        for (int k = 0; k < 1000; ++k) {
          bad += fp8q::encode_stochastic<F>(x, static_cast<std::uint32_t>(rng()), ov).bits != c;
        }
      }
    }
    INFO(fp8q::to_string(F));
    CHECK(bad == 0);
  });
}

TEST_CASE("fractions of a step below 2^-32 never round up", "[host]") {
  // The rounding compares 32 random bits with floor(p * 2^32): p = 2^-32 rounds up for exactly
  // one of the 2^32 bit patterns (0), and anything smaller never does.
  constexpr format F = format::e4m3fn;  // step between 0 and the smallest subnormal is 2^-9
  for (overflow ov : oracle::policies) {
    CHECK(fp8q::encode_stochastic<F>(0x1p-41f, 0u, ov).bits == 0x01);
    CHECK(fp8q::encode_stochastic<F>(0x1p-41f, 1u, ov).bits == 0x00);
    CHECK(fp8q::encode_stochastic<F>(-0x1p-41f, 0u, ov).bits == 0x81);
    CHECK(fp8q::encode_stochastic<F>(0x1.fffffep-42f, 0u, ov).bits == 0x00);
    CHECK(fp8q::encode_stochastic<F>(std::numeric_limits<float>::denorm_min(), 0u, ov).bits == 0x00);
    // Same limit in e8m0fnu between 2^3 and 2^4: p = 2^-23 is the smallest nonzero fraction, so
    // there it is exact.
    CHECK(fp8q::encode_stochastic<format::e8m0fnu>(0x1.000002p3f, 511u, ov).bits == 0x83);
    CHECK(fp8q::encode_stochastic<format::e8m0fnu>(0x1.000002p3f, 512u, ov).bits == 0x82);
  }
}

TEST_CASE("stochastic rounding past max follows the overflow policy", "[host]") {
  // Between max and the overflow rung, rounding up is an overflow: saturate gives max either way,
  // propagate gives Inf (e5m2) or NaN.
  const float x = 464.0f;  // e4m3fn: halfway between 448 and the virtual 480
  int sat_other = 0, prop_up = 0, prop_down = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    sat_other += sr<format::e4m3fn>(x, 1, i, overflow::saturate) != 0x7E;
    const std::uint8_t p = sr<format::e4m3fn>(x, 1, i, overflow::propagate);
    prop_up += p == 0x7F;
    prop_down += p == 0x7E;
  }
  CHECK(sat_other == 0);
  CHECK(prop_up + prop_down == 1000);
  CHECK(prop_up > 400);
  CHECK(prop_down > 400);
  CHECK(sr<format::e5m2>(61440.0f, 1, 0, overflow::propagate) ==
        (fp8q::stochastic_bits(1, 0) < 0x80000000u ? 0x7C : 0x7B));
}
