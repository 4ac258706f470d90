// Per-group rowwise and colwise on the GPU (device offsets) against the host reference, byte
// for byte, over whole buffers: every output view sits between guard regions inside one
// allocation, the host and the device buffers are poisoned alike (twice, with two patterns, so
// an unwritten byte cannot pass for a written one), and the whole allocations must be equal:
// data, scales, padded ends, and every guard and unwritten element.
// Covered: the four data formats, bf16/f16/f32 inputs, both output layouts, batches, stochastic
// rounding, G in {0, 1, 7, 24, 64, 256} with empty groups (runs of them at one line too),
// groups of one line, a group holding every line, lines past the last end, adversarial values
// (NaN, +-Inf, 0, -0, subnormals, ties), padded
// outputs (align 16 and 128), bad device offsets (clamped like device_groups.hpp says; compared
// with the host run on the clamped offsets; the error word's bits), graph capture and replay,
// and 10 repeated runs giving identical bytes. Per-group rowwise runs every path by name too
// (group_row_spans, group_row_fused, group_rowwise) on every shape the path accepts, with shapes
// at group_row_spans' edges (spans across several boundaries or the last end, idle lanes, padded
// groups shifted off the 16-byte grid, aligns off it, the 8-byte copy-out) and at the fused
// family's edges: padded leading dimensions (N not a multiple of the unit, N = 1), rows longer
// than its registers, G above its cap and unaligned lines (the walk takes group_rowwise, the
// forced path returns bad_layout). Per-group colwise runs group_col_tile and group_colwise by name
// on every shape, again with 16-byte input lines (which the tile needs), and at the tile's edges:
// groups longer than the tile (two passes), N = 1, tail strips, several strips per block; the
// dual launch through both. One group (G = 1) runs group_col_relay by the walk where the call
// brings the workspace and by name, its end anywhere in the relay's tiles, padded, bad, and
// without the workspace (the walk takes group_col_tile; by name, bad_workspace).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../support/gpu_test.hpp"
#include "fp8q/gpu/quantize.hpp"
#include "fp8q/quantize.hpp"
#include "gpu_check.hpp"

using namespace fp8q;
using i64 = std::int64_t;
using gpu_check::cuda_ok;

namespace {

constexpr i64 guard = 512;  // bytes before and after every view

// One allocation on the host and one on the device, of the same bytes; a view lives at +guard.
struct arena {
  std::vector<std::uint8_t> host;
  std::uint8_t* dev = nullptr;
  explicit arena(i64 payload_bytes) : host(static_cast<std::size_t>(payload_bytes + 2 * guard)) {
    cuda_ok(cudaMalloc(&dev, host.size()));
  }
  ~arena() { cudaFree(dev); }
  arena(const arena&) = delete;
  void poison(std::uint8_t p) {
    std::fill(host.begin(), host.end(), p);
    cuda_ok(cudaMemset(dev, p, host.size()));
  }
  template <class T>
  T* h() { return reinterpret_cast<T*>(host.data() + guard); }
  template <class T>
  T* d() { return reinterpret_cast<T*>(dev + guard); }
  // the device bytes equal the host bytes, whole allocation
  i64 diff() const {
    std::vector<std::uint8_t> back(host.size());
    cuda_ok(cudaMemcpy(back.data(), dev, back.size(), cudaMemcpyDeviceToHost));
    i64 n = 0;
    for (std::size_t k = 0; k < back.size(); ++k) n += back[k] != host[k];
    return n;
  }
};

template <class In>
In from_float(float f) {
  if constexpr (std::is_same_v<In, float>) return f;
  else if constexpr (std::is_same_v<In, bf16>) return to_bf16(f);
  else return to_f16(f);
}

// Mostly normal values spread over a few binades per line, with adversarial ones mixed in.
template <class In>
std::vector<In> make_input(std::mt19937_64& rng, i64 count, bool specials) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 999);
  std::vector<In> x(static_cast<std::size_t>(count));
  for (In& v : x) {
    float f = nd(rng) * std::ldexp(1.0f, pick(rng) % 9 - 4);
    const int k = pick(rng);
    if (specials) {
      if (k < 3) f = std::numeric_limits<float>::quiet_NaN();
      else if (k < 5) f = -std::numeric_limits<float>::infinity();
      else if (k < 7) f = std::numeric_limits<float>::infinity();
      else if (k < 15) f = 0.0f;
      else if (k < 20) f = -0.0f;
      else if (k < 25) f = std::ldexp(1.0f, -130);  // an f32 subnormal (bf16 too)
      else if (k < 35) f = static_cast<float>(pick(rng) % 64) * 0.5f;  // ties after pow2 scales
    }
    v = from_float<In>(f);
  }
  return x;
}

// Sorted ends over [0, extent] with every feature the issue lists, by pattern.
std::vector<std::int32_t> make_ends(std::mt19937_64& rng, i64 G, i64 extent, int pattern) {
  std::vector<std::int32_t> e(static_cast<std::size_t>(G));
  if (G == 0) return e;
  std::uniform_int_distribution<i64> pick(0, extent);
  for (auto& v : e) v = static_cast<std::int32_t>(pick(rng));
  std::sort(e.begin(), e.end());
  if (pattern == 1) {  // one group holds every line, the others are empty
    std::fill(e.begin(), e.end(), static_cast<std::int32_t>(extent));
    for (i64 g = 0; g < G / 2; ++g) e[static_cast<std::size_t>(g)] = 0;
  } else if (pattern == 2 && G >= 4) {  // groups of one line, then an empty one, then the rest
    e[0] = 1;
    e[1] = 2;
    e[2] = 2;
    for (std::size_t g = 3; g < e.size(); ++g) e[g] = std::max(e[g], e[g - 1]);
  } else if (pattern == 4 && G >= 24) {
    // evenly spread ends, then empty groups at one line inside a 16-byte unit: 4 of them (one
    // boundary with empty groups at it: group_row_fused's lean path takes it, 5 groups on) and
    // 10 (more than its unit_place encodes: element by element)
    for (std::size_t g = 0; g < e.size(); ++g) e[g] = static_cast<std::int32_t>(extent * static_cast<i64>(g + 1) / (G + 1));
    e[4] = static_cast<std::int32_t>(extent / 5 / 8 * 8 + 3);
    for (std::size_t g = 5; g <= 8; ++g) e[g] = e[4];
    e[11] = static_cast<std::int32_t>(extent / 2 / 8 * 8 + 5);
    for (std::size_t g = 12; g <= 21; ++g) e[g] = e[11];
  } else if (pattern == 3 && G == 3) {  // one group of 3/4 of the lines: longer than any tile
    e = {static_cast<std::int32_t>(extent / 10), static_cast<std::int32_t>(extent / 10 + extent * 3 / 4),
         static_cast<std::int32_t>(extent * 9 / 10)};
  }
  if (pattern != 1 && pattern != 3 && G > 1) {  // lines past the last end: every end at most 9/10 of the extent
    const auto cap = static_cast<std::int32_t>(extent * 9 / 10);
    for (auto& v : e) v = std::min(v, cap);
  }
  return e;
}

// The device's clamp (device_groups.hpp): c_k = min(max(ends[k], c_{k-1}), extent).
std::vector<std::int32_t> clamped(const std::vector<std::int32_t>& e, i64 extent) {
  std::vector<std::int32_t> c(e.size());
  i64 prev = 0;
  for (std::size_t k = 0; k < e.size(); ++k) {
    i64 v = std::max<i64>(e[k], prev);
    v = std::min(v, extent);
    c[k] = static_cast<std::int32_t>(v);
    prev = v;
  }
  return c;
}

struct shape {
  i64 B, M, N, G;
  int pattern;
  i64 align;
  layout out_order;
  i64 in_pad = 0;   // input leading dimension = N + in_pad (row-major)
  i64 out_pad = 0;  // output leading dimension = its line length + out_pad
  i64 end0 = -1;    // G = 1 (group_col_relay's cases): ends[0] when >= -extent, else random
  bool workspace = true;  // the call brings workspace_size's bytes
};

// --quick: leave out the cases too large for the sanitizers.
bool quick = false;

// Cases each forced group_row path ran (it must run on some, and decline the rest cleanly).
int ran_by_path[256] = {};

// A group_row path's place in the walk (dispatch.hpp): a later family serves what an earlier one
// does, and more.
int row_rank(gpu_path p) {
  return p == gpu_path::group_row_spans ? 0 : p == gpu_path::group_row_fused ? 1 : p == gpu_path::group_rowwise ? 2 : -1;
}

template <spec S, class In, tuning T = tuning{}>
// walk: the path the automatic walk must choose (automatic: not checked); a forced path must
// then accept the views exactly when the walk chooses it.
void run_case(fp8q_test::checker& check, std::mt19937_64& rng, const shape& sh, bool specials,
              bool bad_offsets = false, gpu_path walk = gpu_path::automatic) {
  constexpr bool by_rows = S.granularity == granularity::group_col;
  const i64 extent = by_rows ? sh.M : sh.N;
  const i64 cap = extent + sh.G * (sh.align - 1);
  const i64 Mo = by_rows ? cap : sh.M, No = by_rows ? sh.N : cap;
  const i64 sc = by_rows ? sh.N : sh.M;
  const std::vector<In> x = make_input<In>(rng, sh.B * sh.M * sh.N, specials);
  std::vector<std::int32_t> ends = make_ends(rng, sh.G, extent, sh.pattern);
  if (sh.G == 1 && sh.end0 >= -extent) ends[0] = static_cast<std::int32_t>(sh.end0);
  const bool end0_bad = sh.G == 1 && (ends[0] < 0 || ends[0] > extent);
  std::uint32_t want_error = end0_bad ? detail::gpu::offsets_out_of_range_bit : 0u;
  if (bad_offsets && sh.G >= 3) {
    ends[1] = -5;                                     // out of range and below ends[0]
    ends[2] = static_cast<std::int32_t>(extent + 7);  // out of range
    want_error = detail::gpu::offsets_out_of_range_bit | (ends[0] > -5 ? detail::gpu::offsets_not_monotonic_bit : 0u);
  }
  const std::vector<std::int32_t> host_ends = bad_offsets || end0_bad ? clamped(ends, extent) : ends;

  const i64 ldi = sh.N + sh.in_pad;
  const i64 ldo = (sh.out_order == layout::row_major ? No : Mo) + sh.out_pad;
  const i64 out_item = (sh.out_order == layout::row_major ? Mo : No) * ldo;
  arena in(sh.B * sh.M * ldi * static_cast<i64>(sizeof(In)));
  for (i64 line = 0; line < sh.B * sh.M; ++line)  // the padding elements keep the arena's bytes
    std::memcpy(in.h<In>() + line * ldi, x.data() + line * sh.N, static_cast<std::size_t>(sh.N) * sizeof(In));
  cuda_ok(cudaMemcpy(in.dev, in.host.data(), in.host.size(), cudaMemcpyHostToDevice));
  arena q(sh.B * out_item), s(sh.B * sh.G * sc * 4), inv(sh.B * sh.G * sc * 4), pe(sh.G * 4 + 4);
  arena ends_h(sh.G * 4 + 4), err(4);
  std::memcpy(ends_h.h<std::int32_t>(), host_ends.data(), host_ends.size() * 4);
  cuda_ok(cudaMemcpy(ends_h.d<std::int32_t>(), ends.data(), ends.size() * 4, cudaMemcpyHostToDevice));

  auto views = [&](bool dev) {
    std::uint8_t* qb = dev ? q.d<std::uint8_t>() : q.h<std::uint8_t>();
    auto* data = reinterpret_cast<fp8<S.out>*>(qb);
    quantized<S> o{};
    o.data = batched(sh.out_order == layout::row_major ? row_major(data, Mo, No, ldo) : col_major(data, Mo, No, ldo), sh.B);
    if constexpr (stores_multiplier(S)) o.scale = batched(row_major(dev ? s.d<float>() : s.h<float>(), sh.G, sc), sh.B);
    if constexpr (stores_inverse(S)) o.inverse = batched(row_major(dev ? inv.d<float>() : inv.h<float>(), sh.G, sc), sh.B);
    return o;
  };
  const auto in_h = batched(row_major<const In>(in.h<In>(), sh.M, sh.N, ldi), sh.B);
  const auto in_d = batched(row_major<const In>(in.d<In>(), sh.M, sh.N, ldi), sh.B);
  const std::uint64_t seed = rng();
  const group_offsets gh{ends_h.h<std::int32_t>(), sh.G, sh.align, sh.align > 1 ? pe.h<std::int32_t>() : nullptr};
  const group_offsets gd{ends_h.d<std::int32_t>(), sh.G, sh.align, sh.align > 1 ? pe.d<std::int32_t>() : nullptr};
  // the workspace workspace_size asks for (poisoned: a family zeroes what it uses), unless the
  // case calls without one
  const i64 ws_bytes = sh.workspace ? static_cast<i64>(workspace_size<S, T>(in_d, views(true))) : 0;
  arena ws(ws_bytes);
  void* const ws_ptr = ws_bytes > 0 ? ws.d<void>() : nullptr;
  const gpu_args walk_args{.workspace = ws_ptr, .workspace_bytes = static_cast<std::size_t>(ws_bytes), .groups = gd};

  // group_col_tile takes 16-byte aligned input lines only: elsewhere, forced, bad_layout, and the
  // automatic walk falls back to group_colwise. One group with the workspace at hand, whole units
  // per input line and 16-byte aligned output lines: group_col_relay.
  const bool tile_takes = (ldi * static_cast<i64>(sizeof(In))) % 16 == 0;
  const bool relay_views = tile_takes && sh.N % (16 / static_cast<i64>(sizeof(In))) == 0 && ldo % 16 == 0 &&
                           (sh.B == 1 || out_item % 16 == 0);
  if constexpr (by_rows) {
    gpu_path chosen{};
    const gpu_path want = sh.G == 1 && ws_bytes > 0 && relay_views ? gpu_path::group_col_relay
                          : tile_takes                             ? gpu_path::group_col_tile
                                                                   : gpu_path::group_colwise;
    const bool walk_ok = chosen_path<S>(in_d, views(true), &chosen, walk_args) == status::success && chosen == want;
    if (!walk_ok) std::printf("  walk chose path %d, want %d\n", static_cast<int>(chosen), static_cast<int>(want));
    FP8Q_TEST_CHECK(check, walk_ok);
    // the workspace a size query reports covers the relay wherever its views fit
    if (T.path == gpu_path::automatic && relay_views && sh.workspace)
      FP8Q_TEST_CHECK(check, ws_bytes >= static_cast<i64>(workspace_size<S, tuning{.path = gpu_path::group_col_relay}>(
                                              in_d, views(true))) && ws_bytes > 0);
  }
  if constexpr (T.path != gpu_path::automatic) {  // a forced path runs only where it accepts
    gpu_path chosen{};
    const status cs = chosen_path<S, T>(in_d, views(true), &chosen, walk_args);
    if (cs == status::bad_layout) {
      const status qs = quantize<S, T>(in_d, views(true), {.workspace = ws_ptr,
                                                           .workspace_bytes = static_cast<std::size_t>(ws_bytes),
                                                           .seed = seed, .groups = gd});
      FP8Q_TEST_CHECK(check, qs == status::bad_layout && (walk == gpu_path::automatic || walk != T.path));
      return;
    }
    // a forced path runs what the walk gives an earlier (more specialised) family too, and
    // group_row_spans by name takes more groups than the walk gives it
    const bool spans_above_walk = T.path == gpu_path::group_row_spans && sh.G > detail::gpu::group_row_spans_preferred_groups;
    FP8Q_TEST_CHECK(check, cs == status::success && chosen == T.path &&
                               (walk == gpu_path::automatic || walk == T.path || row_rank(T.path) > row_rank(walk) ||
                                spans_above_walk));
    ++ran_by_path[static_cast<int>(T.path)];
  } else if (walk != gpu_path::automatic) {
    gpu_path chosen{};
    const status cs = chosen_path<S, T>(in_d, views(true), &chosen, walk_args);
    if (cs != status::success || chosen != walk)
      std::printf("  walk: %s, chose path %d (want %d)\n", to_string(cs), static_cast<int>(chosen), static_cast<int>(walk));
    FP8Q_TEST_CHECK(check, cs == status::success && chosen == walk);
  }
  char what[320];
  std::snprintf(what, sizeof what, "%s%s%s %s %s B=%lld M=%lld N=%lld G=%lld pattern=%d align=%lld ld+%lld/+%lld %s%s%s",
                T.path == gpu_path::automatic ? "" : "path ",
                T.path == gpu_path::group_row_spans ? "group_row_spans "
                : T.path == gpu_path::group_row_fused ? "group_row_fused "
                : T.path == gpu_path::group_rowwise ? "group_rowwise "
                : T.path == gpu_path::group_col_tile ? "group_col_tile "
                : T.path == gpu_path::group_col_relay ? "group_col_relay "
                : T.path == gpu_path::group_colwise ? "group_colwise " : "",
                to_string(S.granularity), to_string(S.out),
                std::is_same_v<In, float> ? "f32" : std::is_same_v<In, bf16> ? "bf16" : "f16",
                static_cast<long long>(sh.B), static_cast<long long>(sh.M), static_cast<long long>(sh.N),
                static_cast<long long>(sh.G), sh.pattern, static_cast<long long>(sh.align),
                static_cast<long long>(sh.in_pad), static_cast<long long>(sh.out_pad), sh.out_order == layout::row_major ? "row-major" : "col-major", specials ? " specials" : "",
                bad_offsets ? " bad-offsets" : "");
  if (sh.G == 1 && sh.end0 >= -extent)
    std::snprintf(what + std::strlen(what), sizeof what - std::strlen(what), " end0=%lld%s",
                  static_cast<long long>(sh.end0), sh.workspace ? "" : " no-workspace");
  for (const std::uint8_t pattern : {gpu_check::poison_a, gpu_check::poison_b}) {
    for (arena* a : {&q, &s, &inv, &pe}) a->poison(pattern);
    err.poison(0);
    const status hs = host::quantize<S>(in_h, views(false), {.groups = gh, .seed = seed});
    ws.poison(pattern);
    const status ds = quantize<S, T>(in_d, views(true),
                                     {.workspace = ws_ptr, .workspace_bytes = static_cast<std::size_t>(ws_bytes),
                                      .seed = seed, .groups = gd, .error_word = err.d<std::uint32_t>()});
    if (T.path == gpu_path::group_col_tile && !tile_takes) {
      if (ds != status::bad_layout) std::printf("  %s: forced past its views, %s\n", what, to_string(ds));
      FP8Q_TEST_CHECK(check, ds == status::bad_layout);
      return;
    }
    if (T.path == gpu_path::group_col_relay && !sh.workspace) {  // by name without its workspace
      if (ds != status::bad_workspace) std::printf("  %s: %s, want bad_workspace\n", what, to_string(ds));
      FP8Q_TEST_CHECK(check, ds == status::bad_workspace);
      return;
    }
    cuda_ok(cudaDeviceSynchronize());
    const i64 dq = q.diff(), ds_ = s.diff(), di = inv.diff(), dp = pe.diff();
    std::uint32_t got_error = 0;
    cuda_ok(cudaMemcpy(&got_error, err.d<std::uint32_t>(), 4, cudaMemcpyDeviceToHost));
    const bool ok = hs == status::success && ds == status::success && dq == 0 && ds_ == 0 && di == 0 &&
                    dp == 0 && got_error == want_error;
    if (!ok)
      std::printf("  %s: host %s, device %s, differing bytes data %lld scale %lld inverse %lld "
                  "padded ends %lld, error word %u (want %u)\n",
                  what, to_string(hs), to_string(ds), static_cast<long long>(dq),
                  static_cast<long long>(ds_), static_cast<long long>(di), static_cast<long long>(dp),
                  got_error, want_error);
    FP8Q_TEST_CHECK(check, ok);
  }
}

constexpr tuning spans_path{.path = gpu_path::group_row_spans};
constexpr tuning fused_path{.path = gpu_path::group_row_fused};
constexpr tuning block_path{.path = gpu_path::group_rowwise};

// One case on the automatic walk, then on every path by name (group_row), or the walk alone.
template <spec S, class In>
void every_path(fp8q_test::checker& check, std::mt19937_64& rng, const shape& sh, bool specials,
                bool bad_offsets = false, gpu_path walk = gpu_path::automatic) {
  // group_row_spans takes 16-bit inputs only: the walk gives f32 rows to group_row_fused
  if (sizeof(In) != 2 && walk == gpu_path::group_row_spans) walk = gpu_path::group_row_fused;
  run_case<S, In>(check, rng, sh, specials, bad_offsets, walk);
  if constexpr (S.granularity == granularity::group_row) {
    run_case<S, In, spans_path>(check, rng, sh, specials, bad_offsets, walk);
    run_case<S, In, fused_path>(check, rng, sh, specials, bad_offsets, walk);
    run_case<S, In, block_path>(check, rng, sh, specials, bad_offsets, walk);
  }
}

// group_row shapes at group_row_fused's edges, with the path the walk must take on each.
template <spec S>
void fused_edges(fp8q_test::checker& check, std::mt19937_64& rng) {
  constexpr layout row = layout::row_major;
  constexpr gpu_path spans = gpu_path::group_row_spans, fused = gpu_path::group_row_fused,
                     block = gpu_path::group_rowwise;
  const std::vector<std::pair<shape, gpu_path>> edges = {
      {{1, 70, 2112, 7, 0, 1, row}, spans},          // aligned lines, boundaries inside units
      {{2, 33, 776, 7, 2, 1, row}, spans},           // batches; groups of 1 column, an empty one
      {{1, 64, 1504, 64, 0, 1, row}, spans},
      {{1, 40, 3000, 256, 1, 1, row}, fused},        // G = 256, one group holds every column
      // a long row (group_row_spans' block 448 threads at 32- and 64-lane waves; at 40000
      // columns 64-lane waves round it to 512, whose shared memory passes the device's)
      {{1, 9, 38000, 16, 0, 1, row}, spans},
      {{1, 31, 1001, 5, 2, 1, row, 7, 7}, fused},    // N % 8 != 0 on padded lines
      {{1, 1, 1, 1, 0, 1, row, 7, 7}, fused},        // N = 1, M = 1
      {{1, 50, 1000, 9, 2, 16, row, 0, 1}, spans},   // align 16 (output ld 1136)
      {{2, 65, 600, 7, 0, 128, row, 0, 7}, spans},   // align 128 (output ld 1496)
      {{1, 8, 4096, 1500, 0, 1, row}, block},        // G above the fused cap
      {{1, 20, 512, 9, 0, 1, row, 1, 0}, block},     // input lines not 16-byte aligned
      // many rows per persistent block (the registers refilled from the next row), with
      // padded outputs, batches and G above 256
      {{2, 700, 2112, 7, 0, 1, row}, spans},
      {{1, 900, 1504, 300, 0, 1, row}, fused},
      {{1, 600, 1000, 9, 2, 16, row, 0, 1}, spans},
      // runs of 4 and 10 empty groups at one column inside a unit; padded, with output lines on
      // the unit grid (2472 columns) and off it (2473: the walk takes group_rowwise)
      {{1, 70, 2112, 24, 4, 1, row}, spans},
      {{1, 70, 2112, 24, 4, 16, row}, spans},
      {{1, 70, 2112, 24, 4, 16, row, 0, 1}, block},
      // blocks sized to the row (group_row_fused::block_threads): 2048 units at 5 per thread
      // take 13 waves, whose last leaves a whole wave's item past the row; 2080 units (the
      // benchmark's 16640 columns) take 13 waves of exactly 5; 7500 units are longer than the
      // registers hold at the largest fit (the rest re-read)
      {{1, 40, 16384, 16, 0, 1, row}, spans},
      {{1, 300, 16640, 64, 0, 1, row}, spans},
      {{1, 5, 60000, 16, 0, 1, row}, fused},
      // an unstaged fit (6 units per thread) with rare units in fold and cast (runs of empty
      // groups, columns past the last end, padded groups off the unit grid): the rare cast must
      // come before the registers are refilled from the next row
      {{1, 9, 20000, 24, 4, 16, row}, spans},
      // group_row_spans (a thread on 11 consecutive units; the walk takes the padded shapes
      // above too): spans across several boundaries
      // (groups narrower than a span), the last end inside a span, a partial last span and idle
      // lanes in the last wave (2120 columns: 265 units), output lines off 16 bytes (8-byte
      // copy-out), one unit per row, many rows per block with batches, G = 65 (the walk's limit
      // + 1), rows too long for its shared memory
      {{1, 50, 640, 64, 0, 1, row}, spans},
      {{1, 70, 2120, 9, 0, 1, row}, spans},
      {{2, 333, 2120, 3, 2, 1, row, 0, 8}, spans},
      {{1, 20, 8, 1, 0, 1, row}, spans},
      {{3, 400, 1048, 40, 4, 1, row}, spans},
      {{1, 30, 1600, 65, 0, 1, row}, fused},
      {{1, 3, 48000, 7, 0, 1, row}, fused},
      // padded: groups shifted off the 16-byte grid (the copy-out's unaligned chunks, and the
      // chunks across a group's edge under byte masks), split units across two groups, the
      // padded last end inside a span; output lines off 16 bytes
      {{1, 80, 2120, 13, 0, 16, row, 0, 5}, spans},
      {{2, 300, 1600, 64, 0, 128, row, 0, 8}, spans},
      {{1, 40, 640, 64, 2, 32, row}, spans},
      // align off the 16-byte grid (8; 3 with groups of one column): the padded last end inside
      // the copy-out's last chunk, chunks across several groups
      {{1, 70, 2120, 9, 0, 8, row, 0, 1}, spans},
      {{2, 50, 2120, 9, 2, 3, row, 0, 6}, spans},
      // G = 256 padded on the 16-byte grid (group_row_spans by name places it in the copy-out:
      // a piece table over 256 groups, one of them holding every column; output lines off 16)
      {{1, 40, 3000, 256, 1, 128, row}, fused},
      {{1, 33, 3000, 256, 0, 16, row, 0, 8}, fused},
  };
  for (const auto& [sh, walk] : edges) every_path<S, bf16>(check, rng, sh, true, false, walk);
  for (const int k : {0, 5, 8, 11}) every_path<S, float>(check, rng, edges[k].first, true, false, edges[k].second);
  every_path<S, f16>(check, rng, edges[1].first, true, false, edges[1].second);
  every_path<S, bf16>(check, rng, edges[0].first, true, /*bad_offsets=*/true, edges[0].second);
  every_path<S, bf16>(check, rng, edges[7].first, false, /*bad_offsets=*/true, edges[7].second);
}

// Every group_col path by name on every shape, the same shapes with 16-byte aligned input lines
// (so that group_col_tile takes them), and the tile's own edges: a group longer than the tile
// (two passes), N = 1, tail strips, f32, batches, padded outputs, bad offsets.
template <spec S, tuning T>
void col_path_cases(fp8q_test::checker& check, std::mt19937_64& rng, const std::vector<shape>& shapes) {
  for (shape sh : shapes) {
    run_case<S, bf16, T>(check, rng, sh, true);
    sh.in_pad = (sh.N + 7) / 8 * 8 - sh.N;  // 16-byte lines of bf16
    run_case<S, bf16, T>(check, rng, sh, true);
  }
  const std::vector<shape> edges{{1, 20000, 130, 3, 3, 1, layout::col_major, 6},
                                 {1, 20000, 64, 3, 3, 16, layout::row_major},
                                 {2, 1500, 1, 4, 0, 1, layout::col_major, 7},
                                 {1, 703, 200, 2, 0, 128, layout::col_major},
                                 // column-major padding written by the last piece's quads: aligns
                                 // off the 4-row grid (wide and byte stores), groups of several
                                 // pieces
                                 {1, 1000, 72, 7, 0, 6, layout::col_major, 0, 1},
                                 {1, 1000, 72, 7, 2, 3, layout::col_major},
                                 {1, 2000, 72, 3, 0, 128, layout::col_major},
                                 {2, 777, 72, 7, 2, 1, layout::row_major},
                                 // enough (group, strip) tasks for several strips per block
                                 {1, 2000, 2048, 256, 0, 1, layout::col_major},
                                 {1, 1000, 2056, 256, 2, 16, layout::row_major}};
  for (const shape& sh : edges) run_case<S, bf16, T>(check, rng, sh, true);
  // several strips per block of groups longer than one piece of the tile: 24 x 88 tasks, 500
  // rows per group (67 M elements: left out of --quick, the sanitizer runs)
  if (!quick) run_case<S, bf16, T>(check, rng, {1, 12000, 5632, 24, 0, 1, layout::col_major}, true);
  // several strips per block of groups of about 200 rows (rings of two to four slots, and
  // groups longer than one piece), a tail strip of 8 columns (33 M elements each: not --quick)
  if (!quick) {
    run_case<S, bf16, T>(check, rng, {1, 8000, 4104, 40, 0, 1, layout::col_major}, true);
    run_case<S, bf16, T>(check, rng, {1, 8000, 4104, 40, 2, 16, layout::row_major}, true);
  }
  run_case<S, float, T>(check, rng, {2, 1200, 37, 5, 0, 16, layout::col_major, 3}, true);
  run_case<S, float, T>(check, rng, {1, 5000, 33, 2, 0, 1, layout::row_major, 3}, true);
  run_case<S, f16, T>(check, rng, {1, 2111, 70, 7, 0, 1, layout::col_major, 2}, true);
  run_case<S, bf16, T>(check, rng, {1, 2111, 72, 7, 0, 16, layout::col_major}, true, /*bad_offsets=*/true);
  run_case<S, bf16, T>(check, rng, {1, 2111, 72, 7, 0, 128, layout::col_major}, true, /*bad_offsets=*/true);
  run_case<S, bf16, T>(check, rng, {1, 9000, 64, 3, 3, 1, layout::row_major}, false, /*bad_offsets=*/true);
}

// group_col_relay (one group): by the walk (which takes it where the call brings the workspace)
// and by name, the group's end anywhere in its 256-row tiles: empty, one row, tile edges, every
// row; a tail strip, batches, f32 and f16, padded outputs, bad ends (clamped, flagged), the
// benchmark's shape; without the workspace the walk takes group_col_tile and the path by name
// returns bad_workspace. On the other group_col paths' shapes (G != 1) it declines (bad_layout).
// The family runs col_hold's held pipeline where the walk would take col_hold for plain colwise
// (the default 128 threads on an H200) and colwise's relay elsewhere: at 512 threads col_hold
// holds too few blocks per multiprocessor (held_min_blocks), so `relay512` keeps the relay's
// kernel covered on the same cases.
template <spec S>
void relay_cases(fp8q_test::checker& check, std::mt19937_64& rng) {
  constexpr tuning relay{.path = gpu_path::group_col_relay};
  constexpr tuning relay512{.threads = 512, .path = gpu_path::group_col_relay};
  constexpr layout col = layout::col_major, row = layout::row_major;
  std::vector<shape> cases;
  for (const i64 end : {0, 1, 255, 256, 257, 2051, 4999, 5000}) cases.push_back({1, 5000, 640, 1, 0, 1, row, 0, 0, end});
  cases.push_back({1, 5008, 200, 1, 0, 1, col, 0, 0, 3001});   // a tail strip of 8 columns
  cases.push_back({2, 1024, 136, 1, 0, 1, col, 0, 0, 777});    // batches
  cases.push_back({1, 1009, 128, 1, 0, 16, col, 0, 0, 1000});  // align 16: rows 1000..1007 zero
  cases.push_back({1, 1009, 128, 1, 0, 16, col, 0, 0, 1009});  // padded past the input's rows
  cases.push_back({2, 2049, 64, 1, 0, 128, row, 0, 0, 2049});  // align 128
  cases.push_back({1, 3000, 64, 1, 0, 1, row, 0, 0, -5});      // bad: below 0, clamped to 0
  cases.push_back({1, 3000, 64, 1, 0, 1, col, 0, 8, 3007});    // bad: past the rows, clamped
  cases.push_back({1, 1009, 128, 1, 0, 16, col, 0, 0, 1020});  // bad, padded
  cases.push_back({1, 3000, 640, 1, 0, 1, col, 0, 8, 2500, false});  // no workspace
  for (const shape& sh : cases) {
    run_case<S, bf16>(check, rng, sh, true);
    run_case<S, bf16, relay>(check, rng, sh, true);
    run_case<S, bf16, relay512>(check, rng, sh, true);
  }
  run_case<S, float, relay>(check, rng, {1, 2048, 36, 1, 0, 1, col, 0, 0, 1500}, true);
  run_case<S, f16, relay>(check, rng, {1, 3000, 80, 1, 0, 1, row, 0, 0, 2999}, true);
  run_case<S, bf16, relay>(check, rng, {1, 300, 64, 7, 0, 1, col}, true);  // G = 7: declined
  if (!quick) run_case<S, bf16>(check, rng, {1, 16640, 5120, 1, 0, 1, col, 0, 0, 16000}, false);
}

template <spec S>
void sweep_col_paths(fp8q_test::checker& check, std::mt19937_64& rng, const std::vector<shape>& shapes) {
  col_path_cases<S, tuning{.path = gpu_path::group_col_tile}>(check, rng, shapes);
  col_path_cases<S, tuning{.path = gpu_path::group_colwise}>(check, rng, shapes);
  relay_cases<S>(check, rng);
}

template <spec S>
void sweep(fp8q_test::checker& check, std::mt19937_64& rng) {
  constexpr bool by_rows = S.granularity == granularity::group_col;
  // (B, M, N, G, pattern, align, output layout); the grouped axis is M for group_col, N for
  // group_row: shapes swap so both see long groups, G up to 256, odd extents.
  const std::vector<shape> shapes = by_rows
      ? std::vector<shape>{{1, 1, 1, 1, 0, 1, layout::row_major},     {1, 300, 97, 0, 0, 1, layout::row_major},
                           {1, 300, 97, 1, 0, 1, layout::row_major},  {1, 2111, 70, 7, 0, 1, layout::row_major},
                           {2, 777, 33, 7, 2, 1, layout::col_major},  {1, 1500, 64, 64, 0, 1, layout::row_major},
                           {1, 3000, 40, 256, 0, 1, layout::col_major}, {1, 900, 31, 5, 1, 1, layout::row_major},
                           {1, 1000, 50, 9, 2, 16, layout::row_major}, {2, 600, 65, 7, 0, 128, layout::col_major}}
      : std::vector<shape>{{1, 1, 1, 1, 0, 1, layout::row_major},     {1, 97, 300, 0, 0, 1, layout::row_major},
                           {1, 97, 300, 1, 0, 1, layout::row_major},  {1, 70, 2111, 7, 0, 1, layout::row_major},
                           {2, 33, 777, 7, 2, 1, layout::col_major},  {1, 64, 1500, 64, 0, 1, layout::row_major},
                           {1, 40, 3000, 256, 0, 1, layout::col_major}, {1, 31, 900, 5, 1, 1, layout::row_major},
                           {1, 50, 1000, 9, 2, 16, layout::row_major}, {2, 65, 600, 7, 0, 128, layout::col_major}};
  for (const shape& sh : shapes) {
    every_path<S, bf16>(check, rng, sh, false);
    every_path<S, bf16>(check, rng, sh, true);
  }
  every_path<S, f16>(check, rng, shapes[3], true);
  every_path<S, float>(check, rng, shapes[4], true);
  every_path<S, float>(check, rng, shapes[8], true);
  every_path<S, bf16>(check, rng, shapes[3], false, /*bad_offsets=*/true);
  every_path<S, bf16>(check, rng, shapes[8], true, /*bad_offsets=*/true);
  if constexpr (!by_rows) fused_edges<S>(check, rng);
  if constexpr (by_rows) sweep_col_paths<S>(check, rng, shapes);
}

constexpr spec gcol_e4m3fn{.out = format::e4m3fn, .granularity = granularity::group_col,
                           .store = stored_scale::both};
constexpr spec gcol_e4m3fnuz{.out = format::e4m3fnuz, .granularity = granularity::group_col,
                             .power_of_2 = true};
constexpr spec gcol_e5m2_sr{.out = format::e5m2, .granularity = granularity::group_col,
                            .store = stored_scale::both, .rounding = rounding::stochastic,
                            .overflow = overflow::propagate};
constexpr spec gcol_e5m2fnuz{.out = format::e5m2fnuz, .granularity = granularity::group_col,
                             .store = stored_scale::multiplier};
constexpr spec grow_e4m3fn{.out = format::e4m3fn, .granularity = granularity::group_row,
                           .power_of_2 = true, .store = stored_scale::both};
constexpr spec grow_e4m3fnuz{.out = format::e4m3fnuz, .granularity = granularity::group_row};
constexpr spec grow_e5m2{.out = format::e5m2, .granularity = granularity::group_row,
                         .store = stored_scale::both, .overflow = overflow::propagate};
constexpr spec grow_e5m2fnuz_sr{.out = format::e5m2fnuz, .granularity = granularity::group_row,
                                .store = stored_scale::both, .rounding = rounding::stochastic};

// quantize_dual: grad_output (M x Na) and input (M x Nb) with one set of offsets, one launch,
// against host::quantize_dual; both outputs guarded.
template <spec S, tuning T = tuning{}>
void dual_case(fp8q_test::checker& check, std::mt19937_64& rng, i64 M, i64 Na, i64 Nb, i64 G,
               i64 align) {
  const i64 cap = M + G * (align - 1);
  const std::vector<bf16> xa = make_input<bf16>(rng, M * Na, true), xb = make_input<bf16>(rng, M * Nb, false);
  const std::vector<std::int32_t> ends = make_ends(rng, G, M, 2);
  arena ia(M * Na * 2), ib(M * Nb * 2), qa(cap * Na), qb(cap * Nb), sa(G * Na * 4), sb(G * Nb * 4),
      va(G * Na * 4), vb(G * Nb * 4), e(G * 4 + 4), pe(G * 4 + 4);
  std::memcpy(ia.h<bf16>(), xa.data(), xa.size() * 2);
  std::memcpy(ib.h<bf16>(), xb.data(), xb.size() * 2);
  std::memcpy(e.h<std::int32_t>(), ends.data(), ends.size() * 4);
  cuda_ok(cudaMemcpy(ia.d<bf16>(), xa.data(), xa.size() * 2, cudaMemcpyHostToDevice));
  cuda_ok(cudaMemcpy(ib.d<bf16>(), xb.data(), xb.size() * 2, cudaMemcpyHostToDevice));
  cuda_ok(cudaMemcpy(e.d<std::int32_t>(), ends.data(), ends.size() * 4, cudaMemcpyHostToDevice));
  auto out = [&](arena& q, arena& s, arena& v, i64 n, bool dev) {
    quantized<S> o{};
    o.data = col_major(reinterpret_cast<fp8<S.out>*>(dev ? q.d<std::uint8_t>() : q.h<std::uint8_t>()), cap, n);
    if constexpr (stores_multiplier(S)) o.scale = row_major(dev ? s.d<float>() : s.h<float>(), G, n);
    if constexpr (stores_inverse(S)) o.inverse = row_major(dev ? v.d<float>() : v.h<float>(), G, n);
    return o;
  };
  const std::uint64_t seed = rng();
  for (const std::uint8_t p : {gpu_check::poison_a, gpu_check::poison_b}) {
    for (arena* a : {&qa, &qb, &sa, &sb, &va, &vb, &pe}) a->poison(p);
    const group_offsets gh{e.h<std::int32_t>(), G, align, align > 1 ? pe.h<std::int32_t>() : nullptr};
    const group_offsets gd{e.d<std::int32_t>(), G, align, align > 1 ? pe.d<std::int32_t>() : nullptr};
    const status hs = host::quantize_dual<S>(row_major<const bf16>(ia.h<bf16>(), M, Na), out(qa, sa, va, Na, false),
                                            row_major<const bf16>(ib.h<bf16>(), M, Nb), out(qb, sb, vb, Nb, false),
                                            {.groups = gh, .seed = seed});
    const status ds = quantize_dual<S, T>(row_major<const bf16>(ia.d<bf16>(), M, Na), out(qa, sa, va, Na, true),
                                       row_major<const bf16>(ib.d<bf16>(), M, Nb), out(qb, sb, vb, Nb, true),
                                       {.seed = seed, .groups = gd});
    cuda_ok(cudaDeviceSynchronize());
    const i64 d = qa.diff() + qb.diff() + sa.diff() + sb.diff() + va.diff() + vb.diff() + pe.diff();
    if (hs != status::success || ds != status::success || d != 0)
      std::printf("  dual M=%lld Na=%lld Nb=%lld G=%lld align=%lld: host %s device %s, %lld bytes differ\n",
                  static_cast<long long>(M), static_cast<long long>(Na), static_cast<long long>(Nb),
                  static_cast<long long>(G), static_cast<long long>(align), to_string(hs), to_string(ds),
                  static_cast<long long>(d));
    FP8Q_TEST_CHECK(check, hs == status::success && ds == status::success && d == 0);
  }
}

// One call captured in a graph, replayed; then 10 plain runs: identical bytes every time.
void graph_and_repeats(fp8q_test::checker& check, std::mt19937_64& rng) {
  constexpr spec S = gcol_e4m3fn;
  const i64 M = 4000, N = 256, G = 16;
  const std::vector<bf16> x = make_input<bf16>(rng, M * N, true);
  const std::vector<std::int32_t> ends = make_ends(rng, G, M, 0);
  gpu_check::device_buffer<bf16> in(x.size());
  gpu_check::device_buffer<std::uint8_t> q(static_cast<std::size_t>(M * N));
  gpu_check::device_buffer<float> s(static_cast<std::size_t>(G * N)), inv(static_cast<std::size_t>(G * N));
  gpu_check::device_buffer<std::int32_t> e(static_cast<std::size_t>(G));
  cuda_ok(cudaMemcpy(in.get(), x.data(), x.size() * 2, cudaMemcpyHostToDevice));
  cuda_ok(cudaMemcpy(e.get(), ends.data(), ends.size() * 4, cudaMemcpyHostToDevice));
  const quantized<S> out{.data = row_major(reinterpret_cast<e4m3fn*>(q.get()), M, N),
                         .scale = row_major(s.get(), G, N), .inverse = row_major(inv.get(), G, N)};
  cudaStream_t stream{};
  cuda_ok(cudaStreamCreate(&stream));
  const gpu_args args{.stream = stream, .groups = {e.get(), G}};
  auto bytes = [&] {
    std::vector<std::uint8_t> b(q.size() + 8 * s.size());
    cuda_ok(cudaStreamSynchronize(stream));
    cuda_ok(cudaMemcpy(b.data(), q.get(), q.size(), cudaMemcpyDeviceToHost));
    cuda_ok(cudaMemcpy(b.data() + q.size(), s.get(), 4 * s.size(), cudaMemcpyDeviceToHost));
    cuda_ok(cudaMemcpy(b.data() + q.size() + 4 * s.size(), inv.get(), 4 * s.size(), cudaMemcpyDeviceToHost));
    return b;
  };
  gpu_check::poison(q.get(), q.size(), gpu_check::poison_a, stream);
  FP8Q_TEST_CHECK(check, quantize<S>(row_major<const bf16>(in.get(), M, N), out, args) == status::success);
  const std::vector<std::uint8_t> first = bytes();
  bool same = true;
  for (int k = 0; k < 10; ++k) {
    // the same poison every run: lines past the last end are never written (by design)
    gpu_check::poison(q.get(), q.size(), gpu_check::poison_a, stream);
    FP8Q_TEST_CHECK(check, quantize<S>(row_major<const bf16>(in.get(), M, N), out, args) == status::success);
    same = same && bytes() == first;
  }
  FP8Q_TEST_CHECK(check, same);
  cudaGraph_t graph{};
  cudaGraphExec_t exec{};
  gpu_check::poison(q.get(), q.size(), gpu_check::poison_a, stream);
  cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const status st = quantize<S>(row_major<const bf16>(in.get(), M, N), out, args);
  cuda_ok(cudaStreamEndCapture(stream, &graph));
  FP8Q_TEST_CHECK(check, st == status::success);
  cuda_ok(cudaGraphInstantiate(&exec, graph, 0));
  for (int k = 0; k < 2; ++k) {
    gpu_check::poison(q.get(), q.size(), gpu_check::poison_a, stream);
    cuda_ok(cudaGraphLaunch(exec, stream));
    FP8Q_TEST_CHECK(check, bytes() == first);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace

int main(int argc, char** argv) {
  quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (!fp8q_test::gpu_visible()) return fp8q_test::skip_exit_code;
  fp8q_test::checker check("grouped");
  std::mt19937_64 rng(20261201);
  sweep<gcol_e4m3fn>(check, rng);
  sweep<gcol_e4m3fnuz>(check, rng);
  sweep<gcol_e5m2_sr>(check, rng);
  sweep<gcol_e5m2fnuz>(check, rng);
  sweep<grow_e4m3fn>(check, rng);
  sweep<grow_e4m3fnuz>(check, rng);
  sweep<grow_e5m2>(check, rng);
  sweep<grow_e5m2fnuz_sr>(check, rng);
  dual_case<gcol_e4m3fn>(check, rng, 2000, 96, 200, 7, 1);
  dual_case<gcol_e5m2_sr>(check, rng, 1500, 130, 64, 64, 16);
  dual_case<gcol_e4m3fnuz>(check, rng, 3000, 33, 33, 256, 128);
  // by name: the tile (16-byte input lines: widths a multiple of 8 bf16), and the fallback
  constexpr tuning tile{.path = gpu_path::group_col_tile}, any{.path = gpu_path::group_colwise};
  dual_case<gcol_e4m3fn, tile>(check, rng, 2000, 96, 200, 7, 1);
  dual_case<gcol_e5m2_sr, tile>(check, rng, 1500, 136, 64, 64, 16);
  dual_case<gcol_e4m3fnuz, tile>(check, rng, 9000, 40, 72, 3, 128);
  dual_case<gcol_e4m3fn, any>(check, rng, 2000, 96, 200, 7, 1);
  dual_case<gcol_e5m2_sr, any>(check, rng, 1500, 130, 64, 64, 16);
  graph_and_repeats(check, rng);
  // every group_row path ran on some shapes (and declined the others with bad_layout)
  FP8Q_TEST_CHECK(check, ran_by_path[static_cast<int>(gpu_path::group_row_spans)] > 0 &&
                             ran_by_path[static_cast<int>(gpu_path::group_row_fused)] > 0 &&
                             ran_by_path[static_cast<int>(gpu_path::group_rowwise)] > 0 &&
                             ran_by_path[static_cast<int>(gpu_path::group_col_relay)] > 0);
  return check.finish();
}
