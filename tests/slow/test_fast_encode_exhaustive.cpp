// The branch-free encoder (fp8q/detail/fast_encode.hpp) on every one of the 2^32 f32 patterns,
// for the four signed formats and both overflow policies, against fp8q::encode; and its
// stochastic form against fp8q::encode_stochastic on 2^28 inputs per format and policy.
//
// Nearest-even: the magnitudes split into runs on which every expected byte is constant (the
// segment table of tests/support/oracle.hpp, as in test_exhaustive_f32.cpp, which proves
// fp8q::encode equal to that table on every input); fp8q::encode itself is asked once per run
// and must agree with the table there. The time goes into the fast encoder: per magnitude, both
// signs and both policies one element at a time (encode's NaN rule), in packed words (the GPU
// kernels' rule) and, below the first overflowing magnitude, in the in-range words.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "../support/oracle.hpp"
#include "fp8q/convert.hpp"
#include "fp8q/detail/fast_encode.hpp"
#include "fp8q/scale.hpp"

namespace {

using fp8q::format;
using fp8q::overflow;
namespace fast = fp8q::detail::fast;

template <class Fn>
void for_each_fast_format(Fn&& fn) {
  fn(std::integral_constant<format, format::e4m3fn>{});
  fn(std::integral_constant<format, format::e4m3fnuz>{});
  fn(std::integral_constant<format, format::e5m2>{});
  fn(std::integral_constant<format, format::e5m2fnuz>{});
}

// Expected bytes of a run of magnitudes, index 2 * negative + (policy == propagate); `scaled` is
// the kernels' byte (canonical NaN), equal to `want` except on NaN runs.
struct run {
  std::uint32_t begin, end;
  std::uint8_t want[4];
  std::uint8_t scaled[4];
};

std::vector<run> make_runs(format f, long& reference_disagreements) {
  const oracle::segment_table table = oracle::make_segment_table(f);
  std::vector<std::uint64_t> cuts(table.first.begin(), table.first.end());
  for (std::uint64_t c : {0ull, 1ull, 0x7F800000ull, 0x7F800001ull, 0x80000000ull}) cuts.push_back(c);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<run> runs;
  constexpr std::uint64_t max_run = 1u << 20;  // work unit, for load balance
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    for (std::uint64_t b = cuts[i]; b < cuts[i + 1]; b += max_run) {
      run r{static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(std::min(b + max_run, cuts[i + 1])), {}, {}};
      for (int neg = 0; neg < 2; ++neg) {
        for (int p = 0; p < 2; ++p) {
          const overflow ov = p ? overflow::propagate : overflow::saturate;
          const std::uint32_t u = r.begin | (neg ? 0x80000000u : 0u);
          const float x = std::bit_cast<float>(u);
          r.want[2 * neg + p] = oracle::encode_table(table, u, ov);
          r.scaled[2 * neg + p] = [&] {
            switch (f) {
              case format::e4m3fn: return fp8q::encode<format::e4m3fn>(fp8q::canonical_nan(x), ov).bits;
              case format::e4m3fnuz: return fp8q::encode<format::e4m3fnuz>(fp8q::canonical_nan(x), ov).bits;
              case format::e5m2: return fp8q::encode<format::e5m2>(fp8q::canonical_nan(x), ov).bits;
              default: return fp8q::encode<format::e5m2fnuz>(fp8q::canonical_nan(x), ov).bits;
            }
          }();
          const std::uint8_t ref = [&] {
            switch (f) {
              case format::e4m3fn: return fp8q::encode<format::e4m3fn>(x, ov).bits;
              case format::e4m3fnuz: return fp8q::encode<format::e4m3fnuz>(x, ov).bits;
              case format::e5m2: return fp8q::encode<format::e5m2>(x, ov).bits;
              default: return fp8q::encode<format::e5m2fnuz>(x, ov).bits;
            }
          }();
          reference_disagreements += ref != r.want[2 * neg + p];
        }
      }
      runs.push_back(r);
    }
  }
  return runs;
}

struct result {
  std::uint64_t mismatches = 0;
  std::uint32_t first_input = ~0u;
  int first_kind = 0;  // 0..3 element (2 * negative + propagate), 4..7 words, 8..11 in-range words
  std::uint8_t first_want = 0, first_got = 0;
  void add(std::uint32_t u, int kind, std::uint8_t want, std::uint8_t got) {
    if (mismatches++ == 0 || u < first_input) {
      first_input = u;
      first_kind = kind;
      first_want = want;
      first_got = got;
    }
  }
  void merge(const result& o) {
    if (o.mismatches == 0) return;
    if (mismatches == 0 || o.first_input < first_input) {
      first_input = o.first_input;
      first_kind = o.first_kind;
      first_want = o.first_want;
      first_got = o.first_got;
    }
    mismatches += o.mismatches;
  }
};

// Packed words of {+a, -a, +(a + 1), -(a + 1)}: every magnitude of the run, both signs, in the
// GPU kernels' NaN rule (a run has an even length except at the end of a binade run, where the
// last magnitude pairs with itself).
template <format F, overflow Ov>
void check_words(const run& r, std::uint32_t a, result& out) {
  const int p = Ov == overflow::propagate ? 1 : 0;
  const std::uint32_t b = a + 1 < r.end ? a + 1 : a;
  const std::uint32_t u[4] = {a, a | 0x80000000u, b, b | 0x80000000u};
  const float v[4] = {std::bit_cast<float>(u[0]), std::bit_cast<float>(u[1]),
                      std::bit_cast<float>(u[2]), std::bit_cast<float>(u[3])};
  const std::uint32_t w = fast::encode_word<F, Ov, fast::nan_rule::canonical>(v);
  for (int j = 0; j < 4; ++j) {
    const auto got = static_cast<std::uint8_t>(w >> (8 * j));
    const std::uint8_t want = r.scaled[2 * (j & 1) + p];
    if (got != want) out.add(u[j], 4 + 2 * (j & 1) + p, want, got);
  }
  // magnitudes below the first overflowing one: the in-range word (no NaN, no clamp), whose
  // bytes are those of either policy; signs on bytes 1 and 3
  if (Ov == overflow::saturate && fast::in_range_magnitude<F>(b)) {
    const std::uint32_t wr = fast::encode_word_in_range<F>(v, 0x80008000u);
    for (int j = 0; j < 4; ++j) {
      const auto got = static_cast<std::uint8_t>(wr >> (8 * j));
      for (int q = 0; q < 2; ++q) {
        const std::uint8_t want = r.scaled[2 * (j & 1) + q];
        if (got != want) out.add(u[j], 8 + 2 * (j & 1) + q, want, got);
      }
    }
  }
}

template <format F>
result check_format(unsigned threads, long& reference_disagreements) {
  const std::vector<run> runs = make_runs(F, reference_disagreements);
  std::atomic<std::size_t> next{0};
  result total;
  std::mutex m;
  auto worker = [&] {
    result mine;
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < runs.size();) {
      const run& r = runs[i];
      std::uint64_t bad = 0;
      for (std::uint32_t a = r.begin; a < r.end; ++a) {
        const std::uint32_t n = a | 0x80000000u;
        bad += fast::encode_bits<F, overflow::saturate>(a) != r.want[0];
        bad += fast::encode_bits<F, overflow::propagate>(a) != r.want[1];
        bad += fast::encode_bits<F, overflow::saturate>(n) != r.want[2];
        bad += fast::encode_bits<F, overflow::propagate>(n) != r.want[3];
      }
      if (bad != 0) {  // rare: redo the run recording what differs
        for (std::uint32_t a = r.begin; a < r.end; ++a) {
          for (int k = 0; k < 4; ++k) {
            const std::uint32_t u = a | (k >= 2 ? 0x80000000u : 0u);
            const std::uint8_t got = k & 1 ? fast::encode_bits<F, overflow::propagate>(u)
                                           : fast::encode_bits<F, overflow::saturate>(u);
            if (got != r.want[k]) mine.add(u, k, r.want[k], got);
          }
        }
      }
      for (std::uint32_t a = r.begin; a < r.end; a += 2) {
        check_words<F, overflow::saturate>(r, a, mine);
        check_words<F, overflow::propagate>(r, a, mine);
      }
    }
    std::lock_guard<std::mutex> lock(m);
    total.merge(mine);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  return total;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("fast encode of all 2^32 f32 patterns equals encode", "[slow]") {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const auto start = std::chrono::steady_clock::now();
  for_each_fast_format([&](auto tag) {
    constexpr format F = decltype(tag)::value;
    const auto t0 = std::chrono::steady_clock::now();
    long reference_disagreements = 0;
    const result r = check_format<F>(threads, reference_disagreements);
    static const char* kinds[] = {"saturate", "propagate", "-saturate", "-propagate",
                                  "words saturate", "words propagate", "words -saturate",
                                  "words -propagate", "in-range words saturate",
                                  "in-range words propagate", "in-range words -saturate",
                                  "in-range words -propagate"};
    std::printf("%s: 2^32 inputs x 2 policies, elements and words: %llu mismatches", fp8q::to_string(F),
                static_cast<unsigned long long>(r.mismatches));
    if (r.mismatches != 0) {
      std::printf(" (first: %s input 0x%08x want 0x%02x got 0x%02x)", kinds[r.first_kind],
                  r.first_input, r.first_want, r.first_got);
    }
    std::printf(", %.1f s on %u threads\n", seconds_since(t0), threads);
    std::fflush(stdout);
    INFO(fp8q::to_string(F));
    CHECK(reference_disagreements == 0);  // encode agrees with the run table at every run start
    CHECK(r.mismatches == 0);
  });
  std::printf("nearest-even, all formats: %.1f s\n", seconds_since(start));
}

TEST_CASE("fast stochastic encode equals encode_stochastic on 2^28 inputs", "[slow]") {
  // input i is the f32 pattern i * 0x9E3779B1 (odd, so distinct; every sign and exponent), with
  // the bits of stochastic_bits(seed, i), as in tests/gpu/test_convert_gpu.cu
  constexpr std::uint64_t count = std::uint64_t{1} << 28;
  constexpr std::uint64_t seed = 0x5EEDF8ull;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const auto start = std::chrono::steady_clock::now();
  for_each_fast_format([&](auto tag) {
    constexpr format F = decltype(tag)::value;
    for (overflow ov : {overflow::saturate, overflow::propagate}) {
      std::atomic<std::uint64_t> next{0}, bad{0}, first{~0ull};
      auto worker = [&] {
        constexpr std::uint64_t grain = 1u << 20;
        std::uint64_t mine = 0, lowest = ~0ull;
        for (std::uint64_t b; (b = next.fetch_add(grain)) < count;) {
          for (std::uint64_t i = b; i < b + grain; ++i) {
            const std::uint32_t u = static_cast<std::uint32_t>(i * 0x9E3779B1u);
            const float x = std::bit_cast<float>(u);
            const std::uint32_t rnd = fp8q::stochastic_bits(seed, i);
            // (the canonical NaN rule differs only on NaN inputs: tests/host/test_fast_encode.cpp)
            const bool differs = fast::encode_stochastic<F>(x, rnd, ov) !=
                                 fp8q::encode_stochastic<F>(x, rnd, ov).bits;
            if (differs && mine++ == 0) lowest = i;
          }
        }
        bad += mine;
        std::uint64_t f = first.load();
        while (lowest < f && !first.compare_exchange_weak(f, lowest)) {
        }
      };
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
      for (std::thread& t : pool) t.join();
      std::printf("%s %s stochastic: 2^28 inputs, %llu mismatches", fp8q::to_string(F),
                  fp8q::to_string(ov), static_cast<unsigned long long>(bad.load()));
      if (bad != 0) std::printf(" (first index %llu)", static_cast<unsigned long long>(first.load()));
      std::printf("\n");
      INFO(fp8q::to_string(F) << ' ' << fp8q::to_string(ov));
      CHECK(bad == 0);
    }
  });
  std::printf("stochastic, all formats: %.1f s\n", seconds_since(start));
}
