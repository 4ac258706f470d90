// fp8q benchmarks (Google Benchmark, CUDA-event manual time).
//
// Every benchmark is named <recipe>/<format>/<dtype>/<M>x<N>[/<variant>] so scripts can parse it
// (bench/report.py does). No variant means the library's default tuning: those are the rows the
// issue's targets are judged on. Variants name the one tuning field they change:
//   sw / hw                    convert_path::software / hardware
//   direct / staged            store_path
//   relaxed / acq_rel / seq_cst  memory order of the amax atomics
//   threads128 / threads512    threads per block
//   tile<R>x<C>                tile_rows x tile_cols
//   relay / two_launch / one_pass  colwise family by name (gpu_path::col_relay / col_streaming /
//                              col_cluster: one launch, two streaming passes, clusters)
//   two_launch / last_block    tensorwise family by name (gpu_path::tensor_two_launch /
//                              tensor_last_block: amax then cast, or one cooperative launch)
//   row_block / row_wave       rowwise family by name (one block or one wave per row)
// bound_<kind>/nomath/bf16/<M>x<N>: the no-math kernels below, a recipe's bytes without the math.
// Google Benchmark appends "/manual_time" to every name (and _mean/_median/... to aggregates);
// report.py strips that. Filter with a regex as usual: --benchmark_filter='^rowwise/'.
//
// How a call is timed, and why:
//   * A hold kernel spins on the GPU until the host has enqueued the start event, the timed call
//     and the stop event, and only then lets the stream go. The events therefore measure GPU time
//     alone (kernels plus the gaps between them), never the host's validation and launch
//     overhead, which would otherwise dominate a 5 us call. If the timed call synchronizes with
//     the device, the hold kernel times out and the benchmark fails: a free check of the
//     library's "never synchronizes with the host" promise.
//   * The counter host_us is the median host time of the call itself (validation + enqueueing,
//     the stream being held): what the CPU pays per call, hidden from the GPU when calls queue.
//   * CUDA_MODULE_LOADING defaults to EAGER here (unless set): loading a lazily loaded kernel may
//     synchronize the context, which would deadlock against the hold kernel until it times out.
//     Every benchmark also makes one untimed call, without the hold, before it times any.
//   * Each iteration times one call; the counter `us` is the median over the iterations of a
//     repetition (robust to a stray preempted iteration); `frac_copy` and the GB/s in
//     bench/report.py are computed from that median. Google Benchmark's own time column is the
//     mean, as usual.
//   * Inputs are bf16 from a normal distribution with rare 64x outliers, generated once per shape
//     on the device. Small shapes rotate among enough buffer sets (input, output, scales,
//     workspace) that at least 2x the L2 size is touched between two uses of one set: every call
//     runs from HBM, as in a training step, not from L2. The counter `buffers` says how many sets
//     were used (1 for tensors larger than that).
//   * Bytes (SetBytesProcessed, counter min_bytes) are the minimum traffic of one call: input read
//     once + FP8 output written once + every stored scale written once (+ the given scale read
//     and the amax written for tensorwise_given_scale; + a padded grouped call's padding bytes
//     and padded ends, its counter frac_copy_unpadded counting the unpadded call's bytes). A
//     second read of the input, atomics or workspace traffic are the implementation's cost and
//     are not counted.
//   * frac_copy = (min_bytes / median time) / copy bandwidth, the copy bandwidth being measured at
//     startup in this binary: device-to-device cudaMemcpyAsync of 1 GiB (1 GiB read + 1 GiB
//     written = 2 GiB moved), median of 20 timed runs. The copy is also registered as the
//     benchmark copy/d2d/1GiB so it lands in the JSON next to the others.
//
// Errors: every CUDA call and every fp8q status is checked. A failure is printed, the benchmark
// is marked failed (SkipWithError: nothing from a failed launch is ever timed or reported), every
// later benchmark is skipped, and the program exits with status 1 after the JSON is written.
//
//   fp8q_bench [Google Benchmark flags]   e.g. --benchmark_out=b.json --benchmark_out_format=json
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda/atomic>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fp8q/gpu/quantize.hpp"
#include "fp8q/quantize.hpp"
#include "bound_group_col.cuh"  // block_or, keep_of
#include "probe_util.hpp"

namespace {

using fp8q::bf16;

// ---- errors ---------------------------------------------------------------------------------

struct bench_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void cuda_check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess)
    throw bench_error(what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

void status_check(fp8q::status s, const std::string& what) {
  if (s != fp8q::status::success) {
    std::string msg = what + ": fp8q status " + std::to_string(static_cast<int>(s)) + " (" +
                      fp8q::to_string(s) + ")";
    // fp8q maps CUDA errors to device_error; a sticky one is still visible here
    if (const cudaError_t e = cudaPeekAtLastError(); e != cudaSuccess)
      msg += std::string(", CUDA: ") + cudaGetErrorName(e);
    throw bench_error(msg);
  }
}

bool g_failed = false;  // after the first failure every later benchmark is skipped

void fail(benchmark::State& state, const std::string& msg) {
  std::fprintf(stderr, "fp8q_bench: FAILED %s\n", msg.c_str());
  std::fflush(stderr);
  g_failed = true;
  state.SkipWithError(msg.c_str());
}

// ---- device helpers ---------------------------------------------------------------------------

__device__ inline std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Holds the stream until the host writes release[0] = 1 (host-mapped memory), or gives up after
// limit_ns and writes release[1] = 1 so the host can report it.
// release: [2] int, host-mapped
__global__ void hold_kernel(int* release, std::uint64_t limit_ns) {
  cuda::atomic_ref<int, cuda::thread_scope_system> go(release[0]);
  const std::uint64_t t0 = global_ns();
  while (go.load(cuda::std::memory_order_acquire) == 0) {
    if (global_ns() - t0 > limit_ns) {
      cuda::atomic_ref<int, cuda::thread_scope_system> timed_out(release[1]);
      timed_out.store(1, cuda::std::memory_order_relaxed);
      return;
    }
    __nanosleep(500);
  }
}

__host__ __device__ inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Standard normal values (Box-Muller on a counter hash), about one in 16384 scaled by 64 so that
// row, column and tensor amax differ and the scales are not all alike.
// out: [count] bf16
__global__ void fill_normal_kernel(bf16* out, std::int64_t count, std::uint64_t seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const std::uint64_t h = mix64(seed + static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ull);
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) * 0x1p-24f;          // (0, 1]
    const float u2 = static_cast<float>((h >> 16) & 0xffffffu) * 0x1p-24f;     // [0, 1)
    float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    if ((h & 0x3fffu) == 0) z *= 64.0f;
    out[i] = fp8q::to_bf16(z);
  }
}

// ---- the one stream, events and hold flag every benchmark shares -------------------------------

constexpr std::uint64_t hold_limit_ns = 5'000'000'000ull;

struct environment {
  int device = 0;
  cudaDeviceProp props{};
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  int* release_host = nullptr;  // [2] int: {go, timed out}, pinned + mapped
  int* release_dev = nullptr;
  double copy_bytes_per_s = 0.0;
};

environment& env() {
  static environment e;
  return e;
}

void set_release(int v) {
  std::atomic_ref<int>(env().release_host[0]).store(v, std::memory_order_release);
}

// GPU time of the work `enqueue` puts on the stream, in milliseconds (see the top of the file).
template <class Enqueue>
double time_once(Enqueue&& enqueue) {
  environment& e = env();
  set_release(0);
  hold_kernel<<<1, 1, 0, e.stream>>>(e.release_dev, hold_limit_ns);
  cuda_check(cudaGetLastError(), "hold kernel launch");
  struct release_guard {  // an exception below must not leave the stream held for 5 s
    ~release_guard() {
      set_release(1);
      if (std::uncaught_exceptions() > 0) (void)cudaStreamSynchronize(env().stream);
    }
  } guard;
  cuda_check(cudaEventRecord(e.start, e.stream), "cudaEventRecord(start)");
  enqueue(e.stream);
  cuda_check(cudaEventRecord(e.stop, e.stream), "cudaEventRecord(stop)");
  set_release(1);
  cuda_check(cudaEventSynchronize(e.stop), "cudaEventSynchronize(stop)");
  if (std::atomic_ref<int>(e.release_host[1]).load(std::memory_order_acquire) != 0)
    throw bench_error("the hold kernel timed out: the timed call waited for the device "
                      "(host synchronization inside the call?)");
  float ms = 0.0f;
  cuda_check(cudaEventElapsedTime(&ms, e.start, e.stop), "cudaEventElapsedTime");
  return ms;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ---- buffers, one cache entry per shape ---------------------------------------------------------

template <class T>
T* device_alloc(std::size_t count, const std::string& what) {
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc " + what);
  return static_cast<T*>(p);
}

struct buffer_set {
  const bf16* in = nullptr;      // [M, N] bf16, row-major
  std::uint8_t* out = nullptr;   // [M * N] FP8 bytes, row- or column-major as the case says
  float* scale = nullptr;        // [max(M, N)] f32: s
  float* inverse = nullptr;      // [max(M, N)] f32: 1/s
  void* workspace = nullptr;     // [workspace_bytes]
  std::size_t workspace_bytes = 0;
  float* given_scale = nullptr;  // [1] f32: last step's scale (tensorwise_given_scale)
  float* amax = nullptr;         // [1] f32: this step's amax (tensorwise_given_scale)
};

struct shape_buffers {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<buffer_set> sets;  // device memory, kept until the process exits
  std::size_t next = 0;  // rotation index, continues across repetitions
};

// Bytes one call touches at least, for the rotation count: bf16 in + FP8 out.
std::size_t set_bytes(std::int64_t rows, std::int64_t cols) {
  return static_cast<std::size_t>(rows * cols) * 3;
}

std::size_t rotation_count(std::int64_t rows, std::int64_t cols) {
  const std::size_t l2 = static_cast<std::size_t>(env().props.l2CacheSize);
  const std::size_t one = set_bytes(rows, cols);
  return std::max<std::size_t>(1, (2 * l2 + one - 1) / one);
}

// The largest workspace any granularity asks for at this shape (fp8q::workspace_size, for any
// output layout): the colwise relays (colwise, per-group colwise of one group) need their counters
// beside the column amax words.
std::size_t workspace_bytes_for(std::int64_t rows, std::int64_t cols) {
  const auto in = fp8q::row_major<const bf16>(nullptr, rows, cols);  // extents only
  constexpr fp8q::spec row{.granularity = fp8q::granularity::row};
  constexpr fp8q::spec col{.granularity = fp8q::granularity::col};
  constexpr fp8q::spec tensor{.granularity = fp8q::granularity::tensor};
  constexpr fp8q::spec group_col{.granularity = fp8q::granularity::group_col};
  return std::max({fp8q::workspace_size<row>(in), fp8q::workspace_size<col>(in),
                   fp8q::workspace_size<tensor>(in), fp8q::workspace_size<group_col>(in), std::size_t{256}});
}

shape_buffers& buffers_for(std::int64_t rows, std::int64_t cols) {
  static std::map<std::pair<std::int64_t, std::int64_t>, std::unique_ptr<shape_buffers>> cache;
  auto& slot = cache[{rows, cols}];
  if (slot) return *slot;
  auto sb = std::make_unique<shape_buffers>();
  sb->rows = rows;
  sb->cols = cols;
  const std::size_t count = static_cast<std::size_t>(rows * cols);
  const std::size_t groups = static_cast<std::size_t>(std::max(rows, cols));
  const std::size_t ws_bytes = workspace_bytes_for(rows, cols);
  const std::size_t n = rotation_count(rows, cols);
  const std::string tag = std::to_string(rows) + "x" + std::to_string(cols);
  environment& e = env();
  for (std::size_t k = 0; k < n; ++k) {
    buffer_set s;
    bf16* in = device_alloc<bf16>(count, "input " + tag);
    fill_normal_kernel<<<std::min<std::size_t>((count + 255) / 256, 4096), 256, 0, e.stream>>>(
        in, static_cast<std::int64_t>(count), 0x5eed0000ull + k * 0x10001ull + count);
    cuda_check(cudaGetLastError(), "fill_normal_kernel launch");
    s.in = in;
    s.out = device_alloc<std::uint8_t>(count, "output " + tag);
    s.scale = device_alloc<float>(groups, "scales " + tag);
    s.inverse = device_alloc<float>(groups, "inverse scales " + tag);
    s.workspace = device_alloc<std::uint8_t>(ws_bytes, "workspace " + tag);
    s.workspace_bytes = ws_bytes;
    s.given_scale = device_alloc<float>(1, "given scale");
    s.amax = device_alloc<float>(1, "amax");
    // Outliers reach about 64 * 5 = 320: a plausible previous-step scale for e4m3fn.
    static constexpr float given = 448.0f / 320.0f;
    cuda_check(cudaMemcpyAsync(s.given_scale, &given, sizeof(float), cudaMemcpyHostToDevice,
                               e.stream),
               "copy given scale");
    cuda_check(cudaMemsetAsync(s.out, 0, count, e.stream), "clear output " + tag);
    sb->sets.push_back(s);
  }
  cuda_check(cudaStreamSynchronize(e.stream), "generate inputs " + tag);
  slot = std::move(sb);
  return *slot;
}

// ---- cases ------------------------------------------------------------------------------------

struct case_desc {
  std::string name;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  double bytes = 0.0;                // minimum traffic of one call
  double unpadded_bytes = 0.0;       // a padded grouped call: the same call's traffic without its padding
  std::size_t workspace_bytes = 0;   // what fp8q::workspace_size asked for
  std::function<void(const buffer_set&, cudaStream_t)> enqueue;  // throws bench_error
};

void run_case(benchmark::State& state, const case_desc& c) {
  if (g_failed) {
    state.SkipWithError("not run: an earlier benchmark failed");
    return;
  }
  try {
    shape_buffers& sb = buffers_for(c.rows, c.cols);
    if (c.workspace_bytes > sb.sets.front().workspace_bytes)
      throw bench_error(c.name + ": fp8q::workspace_size asks for " +
                        std::to_string(c.workspace_bytes) + " bytes, more than the benchmark has");
    // Untimed first call, outside any hold: first-touch costs, and module loading if lazy
    // loading is on after all (loading may synchronize the context, which a held stream would
    // turn into a hold timeout).
    c.enqueue(sb.sets[sb.next], env().stream);
    cuda_check(cudaStreamSynchronize(env().stream), c.name + " (warm-up)");
    sb.next = (sb.next + 1) % sb.sets.size();

    std::vector<double> us;
    std::vector<double> host_us;
    us.reserve(4096);
    host_us.reserve(4096);
    for (auto _ : state) {
      const buffer_set& set = sb.sets[sb.next];
      sb.next = (sb.next + 1) % sb.sets.size();
      double host = 0.0;
      const double ms = time_once([&](cudaStream_t s) {
        const auto t0 = std::chrono::steady_clock::now();
        c.enqueue(set, s);
        const auto t1 = std::chrono::steady_clock::now();
        host = std::chrono::duration<double, std::micro>(t1 - t0).count();
      });
      state.SetIterationTime(ms * 1e-3);
      us.push_back(ms * 1e3);
      host_us.push_back(host);
    }
    const double med = median(us);
    state.SetBytesProcessed(static_cast<std::int64_t>(c.bytes) * state.iterations());
    state.counters["us"] = med;
    state.counters["host_us"] = median(host_us);
    state.counters["frac_copy"] = med > 0 ? c.bytes / (med * 1e-6) / env().copy_bytes_per_s : 0.0;
    state.counters["min_bytes"] = c.bytes;
    if (c.unpadded_bytes > 0)
      state.counters["frac_copy_unpadded"] = med > 0 ? c.unpadded_bytes / (med * 1e-6) / env().copy_bytes_per_s : 0.0;
    state.counters["buffers"] = static_cast<double>(sb.sets.size());
  } catch (const bench_error& err) {
    fail(state, err.what());
  }
}

std::string shape_name(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

std::string case_name(const std::string& recipe, fp8q::format f, std::int64_t rows,
                      std::int64_t cols, const std::string& variant) {
  std::string n = recipe + "/" + fp8q::to_string(f) + "/bf16/" + shape_name(rows, cols);
  if (!variant.empty()) n += "/" + variant;
  return n;
}

// Scale matrix extents per batch item (views.hpp): tensor (1, 1), row (M, 1), col (1, N).
template <fp8q::spec S>
std::pair<std::int64_t, std::int64_t> scale_extents(std::int64_t rows, std::int64_t cols) {
  if constexpr (S.granularity == fp8q::granularity::row) return {rows, 1};
  else if constexpr (S.granularity == fp8q::granularity::col) return {1, cols};
  else return {1, 1};
}

template <fp8q::spec S>
fp8q::quantized<S> output_views(const buffer_set& b, std::int64_t rows, std::int64_t cols,
                                fp8q::layout order) {
  using data_t = typename fp8q::quantized<S>::data_t;
  auto* data = reinterpret_cast<data_t*>(b.out);  // [M, N] FP8, `order`
  const auto [sr, sc] = scale_extents<S>(rows, cols);
  fp8q::quantized<S> out{};
  out.data = order == fp8q::layout::row_major ? fp8q::row_major(data, rows, cols)
                                              : fp8q::col_major(data, rows, cols);
  out.scale = fp8q::row_major(b.scale, sr, sc);
  out.inverse = fp8q::row_major(b.inverse, sr, sc);
  return out;
}

template <fp8q::spec S>
double scale_bytes(std::int64_t rows, std::int64_t cols) {
  const auto [sr, sc] = scale_extents<S>(rows, cols);
  const int stored = (fp8q::stores_multiplier(S) ? 1 : 0) + (fp8q::stores_inverse(S) ? 1 : 0);
  return static_cast<double>(sr * sc) * 4.0 * stored;
}

double data_bytes(std::int64_t rows, std::int64_t cols) {
  return static_cast<double>(rows) * static_cast<double>(cols) * (sizeof(bf16) + 1.0);
}

// fp8q::quantize<S, T> from a row-major bf16 input into an output of layout Out.
template <fp8q::spec S, fp8q::tuning T, fp8q::layout Out>
case_desc quantize_case(const std::string& recipe, const std::string& variant, std::int64_t rows,
                        std::int64_t cols) {
  case_desc c;
  c.name = case_name(recipe, S.out, rows, cols, variant);
  c.rows = rows;
  c.cols = cols;
  c.bytes = data_bytes(rows, cols) + scale_bytes<S>(rows, cols);
  c.workspace_bytes = fp8q::workspace_size<S, T>(fp8q::row_major<const bf16>(nullptr, rows, cols));
  const std::string name = c.name;
  c.enqueue = [rows, cols, name](const buffer_set& b, cudaStream_t stream) {
    const auto in = fp8q::row_major(b.in, rows, cols);  // [M, N] bf16, row-major
    const fp8q::quantized<S> out = output_views<S>(b, rows, cols, Out);
    status_check(fp8q::quantize<S, T>(in, out, {.stream = stream, .workspace = b.workspace,
                                                .workspace_bytes = b.workspace_bytes}),
                 name);
  };
  return c;
}

// fp8q::quantize_with_scale<S, T>: delayed scaling, one pass, records this step's amax.
template <fp8q::spec S, fp8q::tuning T>
case_desc given_scale_case(const std::string& variant, std::int64_t rows, std::int64_t cols) {
  case_desc c;
  c.name = case_name("tensorwise_given_scale", S.out, rows, cols, variant);
  c.rows = rows;
  c.cols = cols;
  c.bytes = data_bytes(rows, cols) + scale_bytes<S>(rows, cols) + 4.0 /*given s*/ + 4.0 /*amax*/;
  const std::string name = c.name;
  c.enqueue = [rows, cols, name](const buffer_set& b, cudaStream_t stream) {
    const auto in = fp8q::row_major(b.in, rows, cols);  // [M, N] bf16, row-major
    const fp8q::quantized<S> out = output_views<S>(b, rows, cols, fp8q::layout::row_major);
    status_check(fp8q::quantize_with_scale<S, T>(in, out, b.given_scale, b.amax, {.stream = stream}), name);
  };
  return c;
}

// Per-group (MoE) quantization with device offsets: G groups along the grouped axis (rows for
// group_col, columns for group_row) of random non-uniform sizes, group 1 empty; scales (G, M or
// N) in buffers of the case's own. Bytes: input read once + FP8 written once + the stored scales
// of the non-empty groups.
template <fp8q::spec S, fp8q::tuning T = fp8q::tuning{}>
case_desc grouped_case(const std::string& recipe, std::int64_t rows, std::int64_t cols,
                       std::int64_t groups, fp8q::layout order, std::int64_t align = 1,
                       const std::string& variant = "") {
  constexpr bool by_rows = S.granularity == fp8q::granularity::group_col;
  const std::int64_t extent = by_rows ? rows : cols;
  const std::int64_t sc = by_rows ? cols : rows;
  const std::vector<std::int32_t> ends = probe::bench_ends(extent, groups);  // group 1 empty
  const std::int64_t nonempty = groups > 1 ? groups - 1 : groups;
  const int stored = (fp8q::stores_multiplier(S) ? 1 : 0) + (fp8q::stores_inverse(S) ? 1 : 0);
  case_desc c;
  c.name = recipe + (align > 1 ? "_align" + std::to_string(align) : std::string()) + "_G" +
           std::to_string(groups) + "/" + fp8q::to_string(S.out) + "/bf16/" + shape_name(rows, cols) +
           (variant.empty() ? std::string() : "/" + variant);
  c.rows = rows;
  c.cols = cols;
  c.bytes = data_bytes(rows, cols) + static_cast<double>(nonempty * sc) * 4.0 * stored;
  if (align > 1) {
    // the padding lines (zero bytes) the call writes along the grouped axis, and the padded
    // ends (docs/semantics.md, "Padded groups")
    const std::int64_t out_lines = ends.empty() ? extent : probe::padded_ends(ends, align).back();
    c.unpadded_bytes = c.bytes;
    c.bytes += static_cast<double>(out_lines - extent) * static_cast<double>(sc) + 4.0 * static_cast<double>(groups);
  }
  c.workspace_bytes = fp8q::workspace_size<S, T>(fp8q::row_major<const bf16>(nullptr, rows, cols));
  const std::string name = c.name;
  // Device buffers made on the first (untimed, unheld) call: registration touches no device.
  // Padded (align > 1): the output grows by G * (align - 1) lines along the grouped axis and
  // lives in a buffer of the case's own. frac_copy counts the padded call's own minimum traffic
  // (the padding bytes are part of its output); frac_copy_unpadded counts the unpadded call's,
  // so it compares the two calls' times directly (docs/design.md, "Padded calls: which bytes").
  const std::int64_t padded = extent + groups * (align - 1);
  struct group_buffers {
    std::int32_t* ends = nullptr;         // [G] int32, device
    std::int32_t* padded_ends = nullptr;  // [G] int32, device (align > 1)
    std::uint8_t* out = nullptr;          // [padded output] FP8, device (align > 1)
    float* scale = nullptr;               // [G, sc] f32, device
    float* inverse = nullptr;             // [G, sc] f32, device
  };
  auto gb = std::make_shared<group_buffers>();
  c.enqueue = [=](const buffer_set& b, cudaStream_t stream) {
    if (gb->ends == nullptr) {
      gb->ends = device_alloc<std::int32_t>(ends.size() + 1, "offsets " + name);
      cuda_check(cudaMemcpy(gb->ends, ends.data(), ends.size() * 4, cudaMemcpyHostToDevice), "copy offsets");
      gb->scale = device_alloc<float>(static_cast<std::size_t>(groups * sc), "group scales " + name);
      gb->inverse = device_alloc<float>(static_cast<std::size_t>(groups * sc), "group inverses " + name);
      if (align > 1) {
        gb->padded_ends = device_alloc<std::int32_t>(ends.size() + 1, "padded ends " + name);
        gb->out = device_alloc<std::uint8_t>(static_cast<std::size_t>(padded * sc), "padded output " + name);
      }
    }
    std::int32_t* d_ends = gb->ends;
    float* d_scale = gb->scale;
    float* d_inverse = gb->inverse;
    const auto in = fp8q::row_major(b.in, rows, cols);  // [M, N] bf16, row-major
    using data_t = typename fp8q::quantized<S>::data_t;
    auto* data = reinterpret_cast<data_t*>(align > 1 ? gb->out : b.out);  // [M', N'] FP8, `order`
    const std::int64_t out_rows = by_rows ? padded : rows, out_cols = by_rows ? cols : padded;
    fp8q::quantized<S> out{};
    out.data = order == fp8q::layout::row_major ? fp8q::row_major(data, out_rows, out_cols)
                                                : fp8q::col_major(data, out_rows, out_cols);
    out.scale = fp8q::row_major(d_scale, groups, sc);    // [G, sc] f32
    out.inverse = fp8q::row_major(d_inverse, groups, sc);  // [G, sc] f32
    // the workspace fp8q::workspace_size asks for (per-group colwise of one group runs the relay)
    status_check(fp8q::quantize<S, T>(in, out, {.stream = stream, .workspace = b.workspace,
                                                .workspace_bytes = b.workspace_bytes,
                                                .groups = {d_ends, groups, align, gb->padded_ends}}),
                 name);
  };
  return c;
}

// 3D expert weights (E, K, N) bf16 row-major, as docs/semantics.md's batched views: colwise
// (q (E, K, N), scales (E, 1, N)) or transpose-rhs (rowwise on each K x N matrix written through a
// column-major view: q (E, N, K), scales (E, K)). Scales in buffers of the case's own.
template <fp8q::spec S, fp8q::tuning T = fp8q::tuning{}>
case_desc expert_case(const std::string& recipe, std::int64_t experts, std::int64_t k, std::int64_t n,
                      const std::string& variant = "") {
  constexpr bool transpose = S.granularity == fp8q::granularity::row;
  const std::int64_t per_expert = transpose ? k : n;  // scales per expert
  const int stored = (fp8q::stores_multiplier(S) ? 1 : 0) + (fp8q::stores_inverse(S) ? 1 : 0);
  case_desc c;
  c.name = recipe + "/" + fp8q::to_string(S.out) + "/bf16/" + std::to_string(experts) + "x" + shape_name(k, n) +
           (variant.empty() ? "" : "/" + variant);
  c.rows = experts * k;
  c.cols = n;
  c.bytes = data_bytes(experts * k, n) + static_cast<double>(experts * per_expert) * 4.0 * stored;
  const std::string name = c.name;
  struct expert_buffers {
    float* scale = nullptr;    // [E, per_expert] f32, device
    float* inverse = nullptr;  // [E, per_expert] f32, device
    void* workspace = nullptr;  // [workspace_bytes]
    std::size_t workspace_bytes = 0;
  };
  auto eb = std::make_shared<expert_buffers>();
  c.enqueue = [=](const buffer_set& b, cudaStream_t stream) {
    if (eb->scale == nullptr) {
      eb->scale = device_alloc<float>(static_cast<std::size_t>(experts * per_expert), "expert scales " + name);
      eb->inverse = device_alloc<float>(static_cast<std::size_t>(experts * per_expert), "expert inverses " + name);
    }
    using data_t = typename fp8q::quantized<S>::data_t;
    auto* q = reinterpret_cast<data_t*>(b.out);
    const auto in = fp8q::batched(fp8q::row_major<const bf16>(b.in, k, n), experts);  // [E, K, N] bf16
    fp8q::quantized<S> out{};
    if constexpr (transpose) {
      out.data = fp8q::batched(fp8q::col_major(q, k, n), experts);  // [E, N, K] FP8, row-major
      out.scale = fp8q::batched(fp8q::row_major(eb->scale, k, 1), experts);      // [E, K] f32
      out.inverse = fp8q::batched(fp8q::row_major(eb->inverse, k, 1), experts);  // [E, K] f32
    } else {
      out.data = fp8q::batched(fp8q::row_major(q, k, n), experts);  // [E, K, N] FP8, row-major
      out.scale = fp8q::batched(fp8q::row_major(eb->scale, 1, n), experts);      // [E, 1, N] f32
      out.inverse = fp8q::batched(fp8q::row_major(eb->inverse, 1, n), experts);  // [E, 1, N] f32
    }
    if (eb->workspace == nullptr) {  // a batch's workspace (per-item column words for colwise)
      eb->workspace_bytes = std::max<std::size_t>(fp8q::workspace_size<S, T>(in, out), 256);
      eb->workspace = device_alloc<std::uint8_t>(eb->workspace_bytes, "expert workspace " + name);
    }
    status_check(fp8q::quantize<S, T>(in, out, {.stream = stream, .workspace = eb->workspace,
                                               .workspace_bytes = eb->workspace_bytes}),
                 name);
  };
  return c;
}

// Dual per-group colwise (the weight gradient's grad_output and input, one launch): two M x N
// tensors with one set of offsets, random non-uniform group sizes with group 1 empty (as the
// other per-group cases); the second input and output are buffers of their own (the input a copy
// of the first set's). Until 2026-12-02 this case had equal group sizes and read the first input
// twice: the sizes made it read 0.66 of copy where random ones give 0.45 (the second read made
// no difference), docs/benchmarks/h200-2026-12-02-2028-strips.md.
template <fp8q::spec S>
case_desc grouped_dual_case(std::int64_t rows, std::int64_t cols, std::int64_t groups) {
  case_desc c;
  c.name = "group_colwise_dual_colmajor_G" + std::to_string(groups) + "/" + fp8q::to_string(S.out) +
           "/bf16/" + shape_name(rows, cols) + "x2";
  c.rows = rows;
  c.cols = cols;
  // two inputs read, two FP8 outputs written, the inverse scales of the non-empty groups
  const std::int64_t nonempty = groups > 1 ? groups - 1 : groups;
  c.bytes = 2.0 * (data_bytes(rows, cols) + static_cast<double>(nonempty * cols) * 4.0);
  const std::vector<std::int32_t> ends = probe::bench_ends(rows, groups);  // group 1 empty
  const std::string name = c.name;
  struct dual_buffers {
    std::int32_t* ends = nullptr;    // [G] int32, device
    bf16* in_b = nullptr;            // [M, N] bf16, row-major, device
    std::uint8_t* out_b = nullptr;   // [M, N] FP8, column-major, device
    float* scales = nullptr;         // [2, G, N] f32 inverse scales, device
  };
  auto db = std::make_shared<dual_buffers>();
  c.enqueue = [=](const buffer_set& b, cudaStream_t stream) {
    if (db->ends == nullptr) {
      db->ends = device_alloc<std::int32_t>(ends.size() + 1, "offsets " + name);
      cuda_check(cudaMemcpy(db->ends, ends.data(), ends.size() * 4, cudaMemcpyHostToDevice), "copy offsets");
      db->out_b = device_alloc<std::uint8_t>(static_cast<std::size_t>(rows * cols), "second output " + name);
      db->in_b = device_alloc<bf16>(static_cast<std::size_t>(rows * cols), "second input " + name);
      cuda_check(cudaMemcpy(db->in_b, b.in, static_cast<std::size_t>(rows * cols) * sizeof(bf16), cudaMemcpyDeviceToDevice),
                 "copy second input");
      db->scales = device_alloc<float>(static_cast<std::size_t>(2 * groups * cols), "scales " + name);
    }
    using data_t = typename fp8q::quantized<S>::data_t;
    const auto in = fp8q::row_major(b.in, rows, cols);  // [M, N] bf16, row-major
    const fp8q::quantized<S> oa{.data = fp8q::col_major(reinterpret_cast<data_t*>(b.out), rows, cols),
                                .inverse = fp8q::row_major(db->scales, groups, cols)};
    const fp8q::quantized<S> ob{.data = fp8q::col_major(reinterpret_cast<data_t*>(db->out_b), rows, cols),
                                .inverse = fp8q::row_major(db->scales + groups * cols, groups, cols)};
    const auto in_b = fp8q::row_major<const bf16>(db->in_b, rows, cols);  // [M, N] bf16, row-major
    status_check(fp8q::quantize_dual<S>(in, oa, in_b, ob, {.stream = stream, .groups = {db->ends, groups}}), name);
  };
  return c;
}

// ---- the host's floor: what a launch alone costs --------------------------------------------
// An empty kernel with rowwise's parameters (the input view, the quantized views, the seed) and
// rowwise's grid, enqueued the ways a library can: the triple-chevron launch, cudaLaunchKernelEx
// (what fp8q's adapter used), cudaGetDevice + cudaLaunchKernelEx, and the driver's cuLaunchKernel
// on a CUfunction looked up once. Their host_us is what any call that launches one kernel pays
// before fp8q does any work of its own: the floor under rowwise's host_us, measured in the same
// run. Bytes are 0 (nothing is moved), so frac_copy is 0.
// (The spec travels as a type, spec_c, as in fp8q's own kernels: nvcc's host stubs cannot name
// a class-type template argument.)
template <class SC>
__global__ void empty_kernel(fp8q::matrix_view<const bf16>, fp8q::quantized<SC::value>, std::uint64_t) {}

enum class floor_way { chevron, launch_ex, get_device_launch_ex, driver };

template <fp8q::spec S>
case_desc launch_floor_case(floor_way way, const std::string& variant, std::int64_t rows, std::int64_t cols) {
  case_desc c;
  c.name = std::string("launch_floor/") + fp8q::to_string(S.out) + "/bf16/" + shape_name(rows, cols) + "/" + variant;
  c.rows = rows;
  c.cols = cols;
  c.bytes = 0.0;
  const std::string name = c.name;
  struct driver_state {
    CUfunction fn = nullptr;
    PFN_cuLaunchKernel_v4000 launch = nullptr;
  };
  auto ds = std::make_shared<driver_state>();
  c.enqueue = [=](const buffer_set& b, cudaStream_t stream) {
    const auto in = fp8q::row_major<const bf16>(b.in, rows, cols);  // [M, N] bf16, row-major
    const fp8q::quantized<S> out = output_views<S>(b, rows, cols, fp8q::layout::row_major);
    std::uint64_t seed = 0;
    const dim3 grid(static_cast<unsigned>((rows + 3) / 4));
    constexpr int threads = 128;
    auto ex = [&] {
      cudaLaunchConfig_t cfg{};
      cfg.gridDim = grid;
      cfg.blockDim = dim3(threads);
      cfg.stream = stream;
      cuda_check(cudaLaunchKernelEx(&cfg, empty_kernel<fp8q::detail::gpu::spec_c<S>>, in, out, seed), name);
    };
    switch (way) {
      case floor_way::chevron:
        empty_kernel<fp8q::detail::gpu::spec_c<S>><<<grid, threads, 0, stream>>>(in, out, seed);
        cuda_check(cudaGetLastError(), name);
        break;
      case floor_way::launch_ex:
        ex();
        break;
      case floor_way::get_device_launch_ex: {
        int dev = 0;
        cuda_check(cudaGetDevice(&dev), name);
        ex();
        break;
      }
      case floor_way::driver: {
        if (ds->fn == nullptr) {  // once, on the first (untimed) call
          cudaFunction_t f = nullptr;
          cuda_check(cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(empty_kernel<fp8q::detail::gpu::spec_c<S>>)), name);
          void* pfn = nullptr;
          cudaDriverEntryPointQueryResult q{};
          cuda_check(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &pfn, 12000, cudaEnableDefault, &q), name);
          if (q != cudaDriverEntryPointSuccess) throw bench_error(name + ": no cuLaunchKernel entry point");
          ds->fn = reinterpret_cast<CUfunction>(f);
          ds->launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(pfn);
        }
        auto in_v = in;
        auto out_v = out;
        void* params[] = {&in_v, &out_v, &seed};
        if (ds->launch(ds->fn, grid.x, 1, 1, threads, 1, 1, 0, stream, params, nullptr) != CUDA_SUCCESS)
          throw bench_error(name + ": cuLaunchKernel failed");
        break;
      }
    }
  };
  return c;
}

// ---- no-math bounds: the same bytes, the same dependency, no arithmetic ---------------------
// What a target is measured against when it looks out of reach (docs/design.md, "Bounds"): a
// kernel that moves exactly a recipe's minimum traffic and keeps the one dependency every
// quantize kernel has (nothing is written before the whole scaling group has been read), with
// the encode replaced by taking each bf16's high byte. bound_row_*: a team of Team threads per row
// (a wave: the row in registers, no barrier; a block: a barrier), Items 16-byte units per thread
// in flight, one f32 per row written. bound_transpose: 128 x 64 tiles, each thread one unit
// column of 4 rows, a 4 x 4 byte transpose into a shared tile in the output's order, whole
// 16-byte pieces of column lines out (what the colwise families' staged stores do), with no
// amax: the write side of every column-major recipe.

// High bytes of two words of bf16 pairs: bytes 1 and 3 of lo, then of hi.
__device__ inline std::uint32_t high_bytes(std::uint32_t lo, std::uint32_t hi) { return __byte_perm(lo, hi, 0x7531); }

// in: [rows, units * 8] bf16 as 16-byte units, row-major; out: [rows, units * 8] bytes;
// scale: [rows] f32
template <int Team, int Items>
__global__ void __launch_bounds__(Team < 128 ? 128 : Team)
    bound_row_kernel(const uint4* in, uint2* out, float* scale, std::int64_t rows, std::int64_t units) {
  constexpr int threads = Team < 128 ? 128 : Team;
  constexpr int teams = threads / Team;
  const int t = static_cast<int>(threadIdx.x) % Team;
  __shared__ unsigned red[threads / 32];
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * teams + threadIdx.x / Team; row < rows;
       row += static_cast<std::int64_t>(gridDim.x) * teams) {
    const uint4* src = in + row * units;
    uint4 v[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const std::int64_t u = t + static_cast<std::int64_t>(i) * Team;
      v[i] = u < units ? src[u] : uint4{0, 0, 0, 0};
    }
    unsigned m = 0;
#pragma unroll
    for (int i = 0; i < Items; ++i) m |= v[i].x | v[i].y | v[i].z | v[i].w;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) m |= __shfl_xor_sync(0xffffffffu, m, d);
    if constexpr (Team > 32) {  // the group's dependency across waves: one barrier
      if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = m;
      __syncthreads();
      m = 0;
      for (int w = 0; w < Team / 32; ++w) m |= red[w];
      __syncthreads();
    }
    if (t == 0) scale[row] = __uint_as_float(m & 0x3f800000u);
    uint2* dst = out + row * units;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const std::int64_t u = t + static_cast<std::int64_t>(i) * Team;
      if (u < units) dst[u] = make_uint2(high_bytes(v[i].x, v[i].y), high_bytes(v[i].z, v[i].w));
    }
  }
}

// in: [rows, cols] bf16, row-major (cols % 64 == 0, rows % 128 == 0); out: [cols, rows] bytes
// (column-major [rows, cols])
__global__ void __launch_bounds__(256) bound_transpose_kernel(const bf16* in, std::uint8_t* out, std::int64_t rows,
                                                              std::int64_t cols) {
  constexpr int TR = 128, TC = 64, pitch = TR + 4;
  __shared__ std::uint32_t tile[TC * pitch / 4];  // [TC][pitch] bytes: column lines
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * TR;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * TC;
  const int uc = static_cast<int>(threadIdx.x) % 8;
  const int rq = static_cast<int>(threadIdx.x) / 8;
  const bf16* p = in + (r0 + rq * 4) * cols + c0 + uc * 8;
  uint4 v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) v[j] = *reinterpret_cast<const uint4*>(p + j * cols);
  std::uint32_t q[4][2];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    q[j][0] = high_bytes(v[j].x, v[j].y);
    q[j][1] = high_bytes(v[j].z, v[j].w);
  }
  auto* bytes = reinterpret_cast<std::uint8_t*>(tile);
#pragma unroll
  for (int w = 0; w < 2; ++w) {
    const std::uint32_t t0 = __byte_perm(q[0][w], q[1][w], 0x5140), t1 = __byte_perm(q[0][w], q[1][w], 0x7362);
    const std::uint32_t t2 = __byte_perm(q[2][w], q[3][w], 0x5140), t3 = __byte_perm(q[2][w], q[3][w], 0x7362);
    const std::uint32_t c[4] = {__byte_perm(t0, t2, 0x5410), __byte_perm(t0, t2, 0x7632),
                                __byte_perm(t1, t3, 0x5410), __byte_perm(t1, t3, 0x7632)};
#pragma unroll
    for (int k = 0; k < 4; ++k)
      *reinterpret_cast<std::uint32_t*>(bytes + (uc * 8 + 4 * w + k) * pitch + rq * 4) = c[k];
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < TC * (TR / 16); i += 256) {
    const int line = i / (TR / 16);
    const int f = (i % (TR / 16)) * 16;
    const auto* w = reinterpret_cast<const std::uint32_t*>(bytes + line * pitch + f);
    *reinterpret_cast<uint4*>(out + (c0 + line) * rows + r0 + f) = uint4{w[0], w[1], w[2], w[3]};
  }
}

// bound_expert_col: 3D colwise (E, K, N) with its dependency and one read, the structure the issue
// suggests: a strip of all K rows x 16 columns (K * 32 bytes: 160 KiB at K = 5120) copied into
// shared memory (cp.async), a block-wide OR, then each row's 16 high bytes out as one 16-byte
// store. One block per multiprocessor (the strip fills its shared memory); 32-column strips do
// not fit. No scales are written (E x N f32: 0.04% of the bytes, left out of the count too).
// in: [E, K, N] bf16, row-major; out: [E, K, N] bytes, row-major; grid (N / 16, E); 512 threads
__global__ void __launch_bounds__(512) bound_expert_col_kernel(const bf16* in, std::uint8_t* out, std::int64_t K,
                                                               std::int64_t N) {
  extern __shared__ uint4 strip[];  // [K][2] 16-byte pieces: the strip's rows
  __shared__ unsigned red[16];
  const std::int64_t e = blockIdx.y;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * 16;
  const bf16* src = in + e * K * N + c0;  // [K, 16] bf16 of row stride N
  const int tid = static_cast<int>(threadIdx.x);
  namespace be = fp8q::backend;
  for (std::int64_t p = tid; p < 2 * K; p += 512) be::async_copy16(&strip[p], src + (p >> 1) * N + (p & 1) * 8, 16);
  be::async_commit();
  be::async_wait<0>();
  unsigned m = 0;
  for (std::int64_t p = tid; p < 2 * K; p += 512) m |= strip[p].x | strip[p].y | strip[p].z | strip[p].w;
  const unsigned keep = bound::keep_of(bound::block_or<512>(m, red, tid));  // the dependency, no byte changed
  std::uint8_t* dst = out + e * K * N + c0;  // [K, 16] bytes of row stride N
  for (std::int64_t r = tid; r < K; r += 512) {
    const uint4 a = strip[2 * r], b = strip[2 * r + 1];
    *reinterpret_cast<uint4*>(dst + r * N) = uint4{high_bytes(a.x, a.y) & keep, high_bytes(a.z, a.w) & keep,
                                                   high_bytes(b.x, b.y) & keep, high_bytes(b.z, b.w) & keep};
  }
}

// bound_expert_transpose: transpose-rhs (E, K, N) -> (E, N, K) with rowwise scales over N, one
// read: 8 whole rows (8 x N bf16: 128 KiB at N = 8192) copied into shared memory, a block-wide
// OR (the rows' dependency), 8 f32 scales, then for each column n the 8 rows' high bytes as one
// 8-byte store into the column-major output. One block per multiprocessor; 16 rows do not fit.
// in: [E, K, N] bf16, row-major; out: [E, N, K] bytes; scale: [E, K] f32; grid (K / 8, E);
// 512 threads
__global__ void __launch_bounds__(512) bound_expert_transpose_kernel(const bf16* in, std::uint8_t* out, float* scale,
                                                                     std::int64_t K, std::int64_t N) {
  extern __shared__ uint4 rows8[];  // [8][N / 8] 16-byte pieces
  __shared__ unsigned red[16];
  const std::int64_t e = blockIdx.y;
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.x) * 8;
  const bf16* src = in + (e * K + k0) * N;  // [8, N] bf16, contiguous
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t pieces = N;  // 8 rows x N / 8 pieces
  namespace be = fp8q::backend;
  for (std::int64_t p = tid; p < pieces; p += 512) be::async_copy16(&rows8[p], src + p * 8, 16);
  be::async_commit();
  be::async_wait<0>();
  unsigned m = 0;
  for (std::int64_t p = tid; p < pieces; p += 512) m |= rows8[p].x | rows8[p].y | rows8[p].z | rows8[p].w;
  m = bound::block_or<512>(m, red, tid);
  const unsigned keep = bound::keep_of(m);
  if (tid < 8) scale[e * K + k0 + tid] = __uint_as_float(m & 0x3f800000u);
  const auto* h = reinterpret_cast<const std::uint32_t*>(rows8);  // [8][N / 2] bf16 pairs
  std::uint8_t* dst = out + e * N * K + k0;                        // [N, 8] bytes of stride K
  for (std::int64_t pr = tid; pr < N / 2; pr += 512) {           // columns 2 pr, 2 pr + 1
    std::uint32_t w[8];
#pragma unroll
    for (int r = 0; r < 8; ++r) w[r] = h[r * (N / 2) + pr];
    // column 2 pr: the high bytes of the low halves; column 2 pr + 1: of the high halves
    const std::uint32_t lo0 = __byte_perm(__byte_perm(w[0], w[1], 0x0051), __byte_perm(w[2], w[3], 0x0051), 0x5410);
    const std::uint32_t lo1 = __byte_perm(__byte_perm(w[4], w[5], 0x0051), __byte_perm(w[6], w[7], 0x0051), 0x5410);
    const std::uint32_t hi0 = __byte_perm(__byte_perm(w[0], w[1], 0x0073), __byte_perm(w[2], w[3], 0x0073), 0x5410);
    const std::uint32_t hi1 = __byte_perm(__byte_perm(w[4], w[5], 0x0073), __byte_perm(w[6], w[7], 0x0073), 0x5410);
    *reinterpret_cast<uint2*>(dst + (2 * pr) * K) = make_uint2(lo0 & keep, lo1 & keep);
    *reinterpret_cast<uint2*>(dst + (2 * pr + 1) * K) = make_uint2(hi0 & keep, hi1 & keep);
  }
}

enum class bound_kind { row_wave, row_block, transpose };

// Bytes: bf16 in + one byte per element out (+ one f32 per row for bound_row_*), as the recipe.
case_desc bound_case(bound_kind kind, std::int64_t rows, std::int64_t cols) {
  case_desc c;
  const char* what = kind == bound_kind::transpose ? "transpose" : kind == bound_kind::row_wave ? "row_wave" : "row_block";
  c.name = std::string("bound_") + what + "/nomath/bf16/" + shape_name(rows, cols);
  c.rows = rows;
  c.cols = cols;
  c.bytes = data_bytes(rows, cols) + (kind == bound_kind::transpose ? 0.0 : 4.0 * static_cast<double>(rows));
  const std::string name = c.name;
  c.enqueue = [=](const buffer_set& b, cudaStream_t stream) {
    const std::int64_t units = cols / 8;
    if (kind == bound_kind::transpose) {
      if (rows % 128 != 0 || cols % 64 != 0) throw bench_error(name + ": shape not whole tiles");
      bound_transpose_kernel<<<dim3(static_cast<unsigned>(cols / 64), static_cast<unsigned>(rows / 128)), 256, 0, stream>>>(
          b.in, b.out, rows, cols);
    } else if (kind == bound_kind::row_wave) {
      const unsigned grid = static_cast<unsigned>((rows + 3) / 4);
      auto* in = reinterpret_cast<const uint4*>(b.in);
      auto* out = reinterpret_cast<uint2*>(b.out);
      if (units <= 20 * 32) bound_row_kernel<32, 20><<<grid, 128, 0, stream>>>(in, out, b.scale, rows, units);
      else if (units <= 32 * 32) bound_row_kernel<32, 32><<<grid, 128, 0, stream>>>(in, out, b.scale, rows, units);
      else throw bench_error(name + ": rows too long for a wave");
    } else {
      const unsigned grid = static_cast<unsigned>(rows);
      auto* in = reinterpret_cast<const uint4*>(b.in);
      auto* out = reinterpret_cast<uint2*>(b.out);
      if (units <= 8 * 128) bound_row_kernel<128, 8><<<grid, 128, 0, stream>>>(in, out, b.scale, rows, units);
      else if (units <= 9 * 256) bound_row_kernel<256, 9><<<grid, 256, 0, stream>>>(in, out, b.scale, rows, units);
      else throw bench_error(name + ": rows too long for a block");
    }
    cuda_check(cudaGetLastError(), name);
  };
  return c;
}

// The expert bounds at (E, K, N): bytes of bf16 in and one byte out per element (+ E x K f32
// scales for transpose-rhs), beside expert_case's figures.
case_desc bound_expert_case(bool transpose, std::int64_t experts, std::int64_t k, std::int64_t n) {
  case_desc c;
  c.name = std::string("bound_expert_") + (transpose ? "transpose_rhs" : "colwise") + "/nomath/bf16/" +
           std::to_string(experts) + "x" + shape_name(k, n);
  c.rows = experts * k;
  c.cols = n;
  c.bytes = data_bytes(experts * k, n) + (transpose ? 4.0 * static_cast<double>(experts * k) : 0.0);
  const std::string name = c.name;
  c.enqueue = [=](const buffer_set& b, cudaStream_t stream) {
    if (transpose) {
      if (k % 8 != 0 || n % 2 != 0) throw bench_error(name + ": K not a multiple of 8");
      const int smem = static_cast<int>(16 * n);
      cuda_check(cudaFuncSetAttribute(bound_expert_transpose_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), name);
      bound_expert_transpose_kernel<<<dim3(static_cast<unsigned>(k / 8), static_cast<unsigned>(experts)), 512, smem, stream>>>(
          b.in, b.out, b.scale, k, n);
    } else {
      if (n % 16 != 0) throw bench_error(name + ": N not a multiple of 16");
      const int smem = static_cast<int>(32 * k);
      cuda_check(cudaFuncSetAttribute(bound_expert_col_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), name);
      bound_expert_col_kernel<<<dim3(static_cast<unsigned>(n / 16), static_cast<unsigned>(experts)), 512, smem, stream>>>(
          b.in, b.out, k, n);
    }
    cuda_check(cudaGetLastError(), name);
  };
  return c;
}

// ---- the copy reference -------------------------------------------------------------------------

constexpr std::size_t copy_bytes = std::size_t{1} << 30;  // copied; 2x this is moved

struct copy_buffers {
  void* src = nullptr;
  void* dst = nullptr;
};

copy_buffers& copy_buffers_get() {
  static copy_buffers c;
  if (c.src == nullptr) {
    cuda_check(cudaMalloc(&c.src, copy_bytes), "cudaMalloc copy source (1 GiB)");
    cuda_check(cudaMalloc(&c.dst, copy_bytes), "cudaMalloc copy destination (1 GiB)");
    cuda_check(cudaMemsetAsync(c.src, 0x3c, copy_bytes, env().stream), "fill copy source");
    cuda_check(cudaMemsetAsync(c.dst, 0, copy_bytes, env().stream), "fill copy destination");
    cuda_check(cudaStreamSynchronize(env().stream), "fill copy buffers");
  }
  return c;
}

void enqueue_copy(cudaStream_t stream) {
  const copy_buffers& c = copy_buffers_get();
  cuda_check(cudaMemcpyAsync(c.dst, c.src, copy_bytes, cudaMemcpyDeviceToDevice, stream),
             "cudaMemcpyAsync d2d 1 GiB");
}

// Median of 20 timed copies after 2 untimed ones; returns bytes moved (read + write) per second.
double measure_copy_bandwidth() {
  for (int i = 0; i < 2; ++i) {  // untimed and unheld (see CUDA_MODULE_LOADING at the top)
    enqueue_copy(env().stream);
    cuda_check(cudaStreamSynchronize(env().stream), "copy warm-up");
  }
  std::vector<double> ms;
  for (int i = 0; i < 20; ++i) ms.push_back(time_once(enqueue_copy));
  return 2.0 * static_cast<double>(copy_bytes) / (median(ms) * 1e-3);
}

void run_copy(benchmark::State& state) {
  if (g_failed) {
    state.SkipWithError("not run: an earlier benchmark failed");
    return;
  }
  try {
    std::vector<double> us;
    for (auto _ : state) {
      const double ms = time_once(enqueue_copy);
      state.SetIterationTime(ms * 1e-3);
      us.push_back(ms * 1e3);
    }
    const double bytes = 2.0 * static_cast<double>(copy_bytes);
    const double med = median(us);
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
    state.counters["us"] = med;
    state.counters["frac_copy"] = med > 0 ? bytes / (med * 1e-6) / env().copy_bytes_per_s : 0.0;
    state.counters["min_bytes"] = bytes;
    state.counters["buffers"] = 1;
  } catch (const bench_error& err) {
    fail(state, err.what());
  }
}

// ---- registration -------------------------------------------------------------------------------

namespace fq = fp8q;

constexpr fq::spec rowwise_fn{.out = fq::format::e4m3fn, .granularity = fq::granularity::row};
constexpr fq::spec rowwise_fnuz{.out = fq::format::e4m3fnuz, .granularity = fq::granularity::row};
constexpr fq::spec colwise_fn{.out = fq::format::e4m3fn, .granularity = fq::granularity::col};
constexpr fq::spec tensorwise_fn{.out = fq::format::e4m3fn, .granularity = fq::granularity::tensor};

constexpr fq::spec group_col_fn{.out = fq::format::e4m3fn, .granularity = fq::granularity::group_col,
                                .power_of_2 = true};
constexpr fq::spec group_row_fn{.out = fq::format::e4m3fn, .granularity = fq::granularity::group_row,
                                .power_of_2 = true};

constexpr fq::spec expert_col_fn{.out = fq::format::e4m3fn, .granularity = fq::granularity::col,
                                 .power_of_2 = true};
constexpr fq::spec expert_row_fn{.out = fq::format::e4m3fn, .granularity = fq::granularity::row,
                                 .power_of_2 = true};

constexpr fq::tuning t_default{};
constexpr fq::tuning t_sw{.convert = fq::convert_path::software};
constexpr fq::tuning t_hw{.convert = fq::convert_path::hardware};
constexpr fq::tuning t_direct{.store = fq::store_path::direct};
constexpr fq::tuning t_staged{.store = fq::store_path::staged};
constexpr fq::tuning t_relaxed{.amax_order = fq::memory_order::relaxed};
constexpr fq::tuning t_acq_rel{.amax_order = fq::memory_order::acq_rel};
constexpr fq::tuning t_seq_cst{.amax_order = fq::memory_order::seq_cst};
constexpr fq::tuning t_threads128{.threads = 128};
constexpr fq::tuning t_threads256{.threads = 256};
constexpr fq::tuning t_group_row_fused{.path = fq::gpu_path::group_row_fused};
constexpr fq::tuning t_threads512{.threads = 512};
constexpr fq::tuning t_threads1024{.threads = 1024};
constexpr fq::tuning t_tile128x64{.tile_rows = 128, .tile_cols = 64};
constexpr fq::tuning t_tile128x128{.tile_rows = 128, .tile_cols = 128};
constexpr fq::tuning t_tile32x128{.tile_rows = 32, .tile_cols = 128};
constexpr fq::tuning t_one_pass{.path = fq::gpu_path::col_cluster};
constexpr fq::tuning t_relay{.path = fq::gpu_path::col_relay};
constexpr fq::tuning t_two_launch{.path = fq::gpu_path::col_streaming};
constexpr fq::tuning t_tensor_two{.path = fq::gpu_path::tensor_two_launch};
constexpr fq::tuning t_last_block{.path = fq::gpu_path::tensor_last_block};
constexpr fq::tuning t_row_block{.path = fq::gpu_path::row_block};
constexpr fq::tuning t_row_wave{.path = fq::gpu_path::row_wave};
constexpr fq::tuning t_row_block256{.threads = 256, .path = fq::gpu_path::row_block};
constexpr fq::tuning t_tiled{.path = fq::gpu_path::tiled};

constexpr auto row_out = fq::layout::row_major;
constexpr auto col_out = fq::layout::col_major;

std::vector<case_desc> all_cases() {
  constexpr std::int64_t M = 16384, N = 5120;  // the issue's main shape
  std::vector<case_desc> v;
  v.push_back(quantize_case<rowwise_fn, t_default, row_out>("rowwise", "", M, N));
  v.push_back(quantize_case<rowwise_fn, t_sw, row_out>("rowwise", "sw", M, N));
  v.push_back(quantize_case<rowwise_fn, t_hw, row_out>("rowwise", "hw", M, N));
  v.push_back(quantize_case<rowwise_fn, t_threads128, row_out>("rowwise", "threads128", M, N));
  v.push_back(quantize_case<rowwise_fn, t_threads512, row_out>("rowwise", "threads512", M, N));
  v.push_back(quantize_case<rowwise_fnuz, t_default, row_out>("rowwise", "", M, N));
  v.push_back(quantize_case<rowwise_fnuz, t_sw, row_out>("rowwise", "sw", M, N));
  v.push_back(quantize_case<rowwise_fnuz, t_hw, row_out>("rowwise", "hw", M, N));
  v.push_back(quantize_case<rowwise_fn, t_default, row_out>("rowwise", "", 8192, 8192));
  v.push_back(quantize_case<rowwise_fn, t_threads128, row_out>("rowwise", "threads128", 8192, 8192));
  v.push_back(quantize_case<rowwise_fn, t_threads512, row_out>("rowwise", "threads512", 8192, 8192));
  v.push_back(quantize_case<rowwise_fn, t_sw, row_out>("rowwise", "sw", 8192, 8192));
  v.push_back(quantize_case<rowwise_fn, t_hw, row_out>("rowwise", "hw", 8192, 8192));
  v.push_back(quantize_case<rowwise_fn, t_default, row_out>("rowwise", "", 128, N));
  v.push_back(quantize_case<rowwise_fn, t_sw, row_out>("rowwise", "sw", 128, N));
  v.push_back(quantize_case<rowwise_fn, t_hw, row_out>("rowwise", "hw", 128, N));
  v.push_back(quantize_case<colwise_fn, t_default, col_out>("colwise_colmajor", "", M, N));
  v.push_back(quantize_case<colwise_fn, t_sw, col_out>("colwise_colmajor", "sw", M, N));
  v.push_back(quantize_case<colwise_fn, t_hw, col_out>("colwise_colmajor", "hw", M, N));
  v.push_back(quantize_case<colwise_fn, t_direct, col_out>("colwise_colmajor", "direct", M, N));
  v.push_back(quantize_case<colwise_fn, t_staged, col_out>("colwise_colmajor", "staged", M, N));
  v.push_back(quantize_case<colwise_fn, t_tile128x64, col_out>("colwise_colmajor", "tile128x64", M, N));
  v.push_back(quantize_case<colwise_fn, t_tile128x128, col_out>("colwise_colmajor", "tile128x128", M, N));
  v.push_back(quantize_case<colwise_fn, t_tile32x128, col_out>("colwise_colmajor", "tile32x128", M, N));
  v.push_back(quantize_case<colwise_fn, t_relay, col_out>("colwise_colmajor", "relay", M, N));
  v.push_back(quantize_case<colwise_fn, t_two_launch, col_out>("colwise_colmajor", "two_launch", M, N));
  v.push_back(quantize_case<colwise_fn, t_one_pass, col_out>("colwise_colmajor", "one_pass", M, N));
  v.push_back(quantize_case<colwise_fn, t_default, row_out>("colwise_rowmajor", "", M, N));
  v.push_back(quantize_case<colwise_fn, t_direct, row_out>("colwise_rowmajor", "direct", M, N));
  v.push_back(quantize_case<colwise_fn, t_staged, row_out>("colwise_rowmajor", "staged", M, N));
  v.push_back(quantize_case<colwise_fn, t_relay, row_out>("colwise_rowmajor", "relay", M, N));
  v.push_back(quantize_case<colwise_fn, t_two_launch, row_out>("colwise_rowmajor", "two_launch", M, N));
  v.push_back(quantize_case<colwise_fn, t_one_pass, row_out>("colwise_rowmajor", "one_pass", M, N));
  v.push_back(quantize_case<tensorwise_fn, t_default, row_out>("tensorwise", "", M, N));
  v.push_back(quantize_case<tensorwise_fn, t_sw, row_out>("tensorwise", "sw", M, N));
  v.push_back(quantize_case<tensorwise_fn, t_hw, row_out>("tensorwise", "hw", M, N));
  v.push_back(quantize_case<tensorwise_fn, t_relaxed, row_out>("tensorwise", "relaxed", M, N));
  v.push_back(quantize_case<tensorwise_fn, t_acq_rel, row_out>("tensorwise", "acq_rel", M, N));
  v.push_back(quantize_case<tensorwise_fn, t_seq_cst, row_out>("tensorwise", "seq_cst", M, N));
  v.push_back(quantize_case<tensorwise_fn, t_tensor_two, row_out>("tensorwise", "two_launch", M, N));
  v.push_back(quantize_case<tensorwise_fn, t_last_block, row_out>("tensorwise", "last_block", M, N));
  v.push_back(quantize_case<tensorwise_fn, t_tensor_two, row_out>("tensorwise", "two_launch", 2048, N));
  v.push_back(quantize_case<tensorwise_fn, t_last_block, row_out>("tensorwise", "last_block", 2048, N));
  v.push_back(given_scale_case<tensorwise_fn, t_default>("", M, N));
  v.push_back(given_scale_case<tensorwise_fn, t_hw>("hw", M, N));
  // Other shapes, default tuning: how the colwise relay and the tensorwise passes scale with the
  // tensor's size against L2 (a 4096x4096 bf16 tensor is 32 MB; buffers rotate, so each call
  // starts from device memory).
  for (const auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{4096, 4096}, {8192, 8192}, {32768, 5120}}) {
    v.push_back(quantize_case<colwise_fn, t_default, col_out>("colwise_colmajor", "", rows, cols));
    v.push_back(quantize_case<colwise_fn, t_default, row_out>("colwise_rowmajor", "", rows, cols));
    v.push_back(quantize_case<tensorwise_fn, t_default, row_out>("tensorwise", "", rows, cols));
  }
  // MoE (issue 15's shapes): per-group colwise with column-major output, per-group rowwise.
  for (const std::int64_t g : {1, 16, 64, 128})
    v.push_back(grouped_case<group_col_fn>("group_colwise_colmajor", 16640, 5120, g, col_out));
  for (const std::int64_t g : {16, 64})
    v.push_back(grouped_case<group_row_fn>("group_rowwise", 8192, 16640, g, row_out));
  for (const std::int64_t g : {1, 16, 64, 256})  // the family before group_row_spans, by name
    v.push_back(grouped_case<group_row_fn, t_group_row_fused>("group_rowwise", 8192, 16640, g, row_out, 1, "group_row_fused"));
  v.push_back(grouped_case<group_row_fn>("group_rowwise", 8192, 16640, 1, row_out));
  v.push_back(grouped_case<group_row_fn>("group_rowwise", 8192, 16640, 256, row_out));
  v.push_back(grouped_case<group_row_fn>("group_rowwise", 8192, 16640, 64, row_out, 128));  // padded
  v.push_back(grouped_case<group_row_fn, t_group_row_fused>("group_rowwise", 8192, 16640, 64, row_out, 128, "group_row_fused"));
  for (const std::int64_t g : {16, 64}) {  // blocks of 256 and 1024 threads beside the default 512
    v.push_back(grouped_case<group_row_fn, t_threads256>("group_rowwise", 8192, 16640, g, row_out, 1, "threads256"));
    v.push_back(grouped_case<group_row_fn, t_threads1024>("group_rowwise", 8192, 16640, g, row_out, 1, "threads1024"));
  }
  v.push_back(grouped_dual_case<group_col_fn>(16640, 5120, 64));
  v.push_back(grouped_case<group_col_fn>("group_colwise_colmajor", 16640, 5120, 64, col_out, 128));
  v.push_back(expert_case<expert_col_fn>("expert_colwise", 128, 5120, 8192));
  v.push_back(expert_case<expert_row_fn>("expert_transpose_rhs", 128, 5120, 8192));
  v.push_back(expert_case<expert_row_fn, t_tiled>("expert_transpose_rhs", 128, 5120, 8192, "tiled"));
  v.push_back(quantize_case<rowwise_fn, t_default, col_out>("rowwise_colmajor", "", M, N));
  v.push_back(quantize_case<rowwise_fn, t_tiled, col_out>("rowwise_colmajor", "tiled", M, N));
  // No-math bounds (above) at the shapes of the targets they bound.
  v.push_back(quantize_case<rowwise_fn, t_row_block, row_out>("rowwise", "row_block", 8192, 8192));
  v.push_back(quantize_case<rowwise_fn, t_row_block256, row_out>("rowwise", "row_block_threads256", 8192, 8192));
  v.push_back(quantize_case<rowwise_fn, t_row_block, row_out>("rowwise", "row_block", M, N));
  v.push_back(quantize_case<rowwise_fn, t_row_wave, row_out>("rowwise", "row_wave", M, N));
  v.push_back(quantize_case<rowwise_fn, t_row_block, row_out>("rowwise", "row_block", 4096, 4096));
  v.push_back(quantize_case<rowwise_fn, t_row_wave, row_out>("rowwise", "row_wave", 4096, 4096));
  v.push_back(quantize_case<rowwise_fn, t_row_block, row_out>("rowwise", "row_block", 16384, 2048));
  v.push_back(quantize_case<rowwise_fn, t_row_wave, row_out>("rowwise", "row_wave", 16384, 2048));
  v.push_back(bound_case(bound_kind::row_wave, M, N));
  v.push_back(bound_case(bound_kind::row_wave, 8192, 8192));
  v.push_back(bound_case(bound_kind::row_block, 8192, 8192));
  v.push_back(bound_case(bound_kind::row_block, 8192, 16640));
  v.push_back(bound_case(bound_kind::transpose, M, N));
  v.push_back(bound_case(bound_kind::transpose, 16640, 5120));
  v.push_back(bound_expert_case(false, 128, 5120, 8192));
  v.push_back(bound_expert_case(true, 128, 5120, 8192));
  // The launch floor under rowwise's host_us (16384 x 5120 and 128 x 5120 grids).
  for (const std::int64_t rows : {M, std::int64_t{128}}) {
    v.push_back(launch_floor_case<rowwise_fn>(floor_way::chevron, "chevron", rows, N));
    v.push_back(launch_floor_case<rowwise_fn>(floor_way::launch_ex, "launch_ex", rows, N));
    v.push_back(launch_floor_case<rowwise_fn>(floor_way::get_device_launch_ex, "get_device_launch_ex", rows, N));
    v.push_back(launch_floor_case<rowwise_fn>(floor_way::driver, "driver", rows, N));
  }
  return v;
}

void register_all() {
  benchmark::RegisterBenchmark("copy/d2d/1GiB", run_copy)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  for (case_desc& c : all_cases()) {
    auto shared = std::make_shared<case_desc>(std::move(c));
    auto* b = benchmark::RegisterBenchmark(shared->name.c_str(),
                                           [shared](benchmark::State& s) { run_case(s, *shared); });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
  }
}

// ---- setup ------------------------------------------------------------------------------------

void setup_environment() {
  environment& e = env();
  int count = 0;
  cuda_check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (count == 0) throw bench_error("no CUDA device");
  cuda_check(cudaGetDevice(&e.device), "cudaGetDevice");
  cuda_check(cudaGetDeviceProperties(&e.props, e.device), "cudaGetDeviceProperties");
  cuda_check(cudaStreamCreateWithFlags(&e.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cuda_check(cudaEventCreate(&e.start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&e.stop), "cudaEventCreate");
  void* flags = nullptr;
  cuda_check(cudaHostAlloc(&flags, 2 * sizeof(int), cudaHostAllocMapped), "cudaHostAlloc");
  e.release_host = static_cast<int*>(flags);
  e.release_host[0] = 0;
  e.release_host[1] = 0;
  void* dev = nullptr;
  cuda_check(cudaHostGetDevicePointer(&dev, flags, 0), "cudaHostGetDevicePointer");
  e.release_dev = static_cast<int*>(dev);
}

}  // namespace

int main(int argc, char** argv) {
  ::setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);  // before the first CUDA call
  bool list_only = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_list_tests", 22) == 0 &&
        std::strcmp(argv[i], "--benchmark_list_tests=false") != 0)
      list_only = true;

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();

  if (!list_only) {
    try {
      setup_environment();
      environment& e = env();
      e.copy_bytes_per_s = measure_copy_bandwidth();
      std::printf("device %d: %s (sm_%d%d), %d SMs, L2 %.1f MiB\n", e.device, e.props.name,
                  e.props.major, e.props.minor, e.props.multiProcessorCount,
                  e.props.l2CacheSize / 1048576.0);
      std::printf("copy bandwidth: %.1f GB/s (device-to-device cudaMemcpyAsync of 1 GiB, "
                  "1 GiB read + 1 GiB written, median of 20)\n",
                  e.copy_bytes_per_s * 1e-9);
      std::fflush(stdout);
      char buf[64];
      benchmark::AddCustomContext("device", e.props.name);
      const std::string arch = "sm_" + std::to_string(e.props.major * 10 + e.props.minor);
      benchmark::AddCustomContext("device_arch", arch);
      benchmark::AddCustomContext("device_sms", std::to_string(e.props.multiProcessorCount));
      benchmark::AddCustomContext("device_l2_bytes", std::to_string(e.props.l2CacheSize));
      std::snprintf(buf, sizeof buf, "%.1f", e.copy_bytes_per_s * 1e-9);
      benchmark::AddCustomContext("copy_GBps", buf);
      benchmark::AddCustomContext("copy_method",
                                  "cudaMemcpyAsync d2d 1 GiB, 2 GiB moved, median of 20");
      benchmark::AddCustomContext("cuda_runtime", std::to_string(CUDART_VERSION));
    } catch (const bench_error& err) {
      std::fprintf(stderr, "fp8q_bench: setup failed: %s\n", err.what());
      return 1;
    }
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return g_failed ? 1 : 0;
}
