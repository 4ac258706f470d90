// Every one of the 2^32 f32 patterns, through every format and both overflow policies, against
// the segment-table oracle (tests/support/oracle.hpp), which never calls fp8q's encode and is
// itself checked against the brute-force oracle in tests/host/test_encode.cpp.
//
// Round-to-nearest is a step function of the f32 bit pattern within each sign, so the magnitudes
// split into intervals on which all four expected bytes (two signs x two policies) are constant:
// the oracle costs nothing per input and the time goes into fp8q's encode. ~43e9 encodes; on
// 2 cores of the CI machine this takes about a minute.
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

namespace {

using fp8q::format;
using fp8q::overflow;

// One run of magnitudes [begin, end) with constant expected bytes, indexed by
// 2 * negative + (policy == propagate).
struct run {
  std::uint32_t begin, end;
  std::uint8_t want[4];
};

std::vector<run> make_runs(format f) {
  const oracle::segment_table table = oracle::make_segment_table(f);
  // Where the expected bytes may change: every segment start, zero (special in e8m0fnu), Inf and
  // the NaNs; and the end of the magnitudes.
  std::vector<std::uint64_t> cuts(table.first.begin(), table.first.end());
  for (std::uint64_t c : {0ull, 1ull, 0x7F800000ull, 0x7F800001ull, 0x80000000ull}) cuts.push_back(c);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<run> runs;
  constexpr std::uint64_t max_run = 1u << 20;  // work unit size, for load balance
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    for (std::uint64_t b = cuts[i]; b < cuts[i + 1]; b += max_run) {
      const auto begin = static_cast<std::uint32_t>(b);
      const auto end = static_cast<std::uint32_t>(std::min(b + max_run, cuts[i + 1]));
      run r{begin, end, {}};
      for (int neg = 0; neg < 2; ++neg) {
        for (int p = 0; p < 2; ++p) {
          const std::uint32_t u = begin | (neg ? 0x80000000u : 0u);
          r.want[2 * neg + p] =
              oracle::encode_table(table, u, p ? overflow::propagate : overflow::saturate);
        }
      }
      runs.push_back(r);
    }
  }
  return runs;
}

struct result {
  std::uint64_t mismatches[2] = {};             // per policy, both signs
  std::uint32_t first_input[2] = {~0u, ~0u};    // first mismatching f32 pattern seen, per policy
  std::uint8_t first_want[2] = {}, first_got[2] = {};
};

template <format F>
std::uint8_t enc(std::uint32_t u, overflow ov) {
  return fp8q::encode<F>(std::bit_cast<float>(u), ov).bits;
}

template <format F>
result check_format(unsigned threads) {
  const std::vector<run> runs = make_runs(F);
  std::atomic<std::size_t> next{0};
  result total;
  std::mutex m;
  auto worker = [&] {
    result mine;
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < runs.size();) {
      const run& r = runs[i];
      std::uint64_t bad[4] = {};
      for (std::uint32_t a = r.begin; a < r.end; ++a) {
        const std::uint32_t n = a | 0x80000000u;
        bad[0] += enc<F>(a, overflow::saturate) != r.want[0];
        bad[1] += enc<F>(a, overflow::propagate) != r.want[1];
        bad[2] += enc<F>(n, overflow::saturate) != r.want[2];
        bad[3] += enc<F>(n, overflow::propagate) != r.want[3];
      }
      for (int k = 0; k < 4; ++k) {
        if (bad[k] == 0) continue;
        const int p = k & 1;
        const overflow ov = p ? overflow::propagate : overflow::saturate;
        mine.mismatches[p] += bad[k];
        for (std::uint32_t a = r.begin; a < r.end; ++a) {  // rare: find the first for the report
          const std::uint32_t u = a | (k >= 2 ? 0x80000000u : 0u);
          if (enc<F>(u, ov) != r.want[k] && u < mine.first_input[p]) {
            mine.first_input[p] = u;
            mine.first_want[p] = r.want[k];
            mine.first_got[p] = enc<F>(u, ov);
            break;
          }
        }
      }
    }
    std::lock_guard<std::mutex> lock(m);
    for (int p = 0; p < 2; ++p) {
      total.mismatches[p] += mine.mismatches[p];
      if (mine.first_input[p] < total.first_input[p]) {
        total.first_input[p] = mine.first_input[p];
        total.first_want[p] = mine.first_want[p];
        total.first_got[p] = mine.first_got[p];
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  return total;
}

}  // namespace

TEST_CASE("encode of all 2^32 f32 patterns matches the oracle", "[slow]") {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const auto start = std::chrono::steady_clock::now();
  oracle::for_each_format([&](auto tag) {
    constexpr format F = decltype(tag)::value;
    const auto t0 = std::chrono::steady_clock::now();
    const result r = check_format<F>(threads);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int p = 0; p < 2; ++p) {
      const overflow ov = p ? overflow::propagate : overflow::saturate;
      std::printf("%s %s mismatches=%llu", fp8q::to_string(F), fp8q::to_string(ov),
                  static_cast<unsigned long long>(r.mismatches[p]));
      if (r.mismatches[p] != 0) {
        std::printf(" (first: input 0x%08x want 0x%02x got 0x%02x)", r.first_input[p],
                    r.first_want[p], r.first_got[p]);
      }
      std::printf("\n");
      INFO(fp8q::to_string(F) << ' ' << fp8q::to_string(ov));
      CHECK(r.mismatches[p] == 0);
    }
    std::printf("%s: 2 x 2^32 inputs in %.1f s on %u threads\n", fp8q::to_string(F), seconds,
                threads);
    std::fflush(stdout);
  });
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("all formats: %.1f s\n", total);
}
