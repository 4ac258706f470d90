// GPU quantize vs the host reference, byte for byte. One case = one (spec, tuning, input type,
// shape, layouts, data kind): fresh random data, outputs poisoned before every run, device bytes
// and scale bits compared with fp8q::host::quantize at every logical position, padding bytes
// checked untouched, then `repeats` further runs (alternating poison), each compared again.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "fp8q/gpu/quantize.hpp"
#include "fp8q/host/quantize.hpp"
#include "gpu_test.hpp"

namespace fp8q_gpu_check {

using namespace fp8q;

struct shape {
  std::int64_t batch = 1, rows = 1, cols = 1;
  layout in_order = layout::row_major;
  std::int64_t in_pad = 0;  // extra elements per line (odd leading dimension)
  layout out_order = layout::row_major;
  std::int64_t out_pad = 0;
};

enum class data_kind { random, adversarial };

template <class T>
T from_float(float f) {
  if constexpr (std::is_same_v<T, float>) return f;
  else if constexpr (std::is_same_v<T, bf16>) return to_bf16(f);
  else return to_f16(f);
}

// Random values with a per-line magnitude so scales differ between groups; adversarial data mixes
// in exact ±max (making s = 1 so FP8 midpoints become exact ties), midpoints, zeros, subnormals of
// the input type, ±Inf and NaN.
template <class In, format F>
std::vector<In> make_data(std::int64_t count, std::int64_t line, data_kind kind, std::mt19937_64& rng) {
  std::vector<In> v(static_cast<std::size_t>(count));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const float fmax = traits(F).max;
  const float sub = std::is_same_v<In, float> ? 1e-40f : (std::is_same_v<In, bf16> ? 1e-40f : 3e-6f);
  float mag = 1.0f;
  for (std::int64_t i = 0; i < count; ++i) {
    if (line > 0 && i % line == 0) mag = std::ldexp(1.0f, static_cast<int>(unit(rng) * 24) - 12);
    float x = normal(rng) * mag;
    if (kind == data_kind::adversarial) {
      const float u = unit(rng);
      if (u < 0.08f) x = unit(rng) < 0.5f ? fmax : -fmax;
      else if (u < 0.25f) {
        // a midpoint between two neighbouring FP8 values in [0.5, 256)
        const int e = static_cast<int>(unit(rng) * 9) - 1;
        const int m = traits(F).mantissa_bits;
        const int k = static_cast<int>(unit(rng) * (1 << m));
        x = std::ldexp(1.0f + (k + 0.5f) / static_cast<float>(1 << m), e);
        if (unit(rng) < 0.5f) x = -x;
      } else if (u < 0.29f) x = unit(rng) < 0.5f ? 0.0f : -0.0f;
      else if (u < 0.31f) x = sub * (1.0f + unit(rng));
      else if (u < 0.312f) x = unit(rng) < 0.5f ? INFINITY : -INFINITY;
      else if (u < 0.313f) x = NAN;
    }
    v[static_cast<std::size_t>(i)] = from_float<In>(x);
  }
  return v;
}

template <class T>
struct device_buffer {
  T* ptr = nullptr;
  std::size_t count = 0;
  explicit device_buffer(std::size_t n) : count(n) {
    if (n > 0 && cudaMalloc(&ptr, n * sizeof(T)) != cudaSuccess) ptr = nullptr;
  }
  ~device_buffer() { cudaFree(ptr); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

// A view of `rows x cols` (x batch) with `pad` extra elements per line over base pointer p.
template <class T>
matrix_view<T> make_view(T* p, std::int64_t batch, std::int64_t rows, std::int64_t cols, layout o,
                         std::int64_t pad) {
  const std::int64_t fast = o == layout::row_major ? cols : rows;
  const std::int64_t slow = o == layout::row_major ? rows : cols;
  matrix_view<T> v{p, rows, cols, fast + pad, o, batch, (fast + pad) * slow};
  return v;
}

template <class T>
std::int64_t span(const matrix_view<T>& v) {
  return v.batch * v.batch_stride > 0 ? v.batch * v.batch_stride
                                      : (v.order == layout::row_major ? v.rows : v.cols) * v.ld;
}

template <spec S>
void scale_extents(const shape& sh, std::int64_t& r, std::int64_t& c) {
  r = S.granularity == granularity::row ? sh.rows : 1;
  c = S.granularity == granularity::col ? sh.cols : 1;
}

inline std::uint32_t bits_of(float f) { return __builtin_bit_cast(std::uint32_t, f); }

/// Cases run per family (index: gpu_path), over the whole program.
inline int (&path_runs())[32] {
  static int runs[32] = {};
  return runs;
}

/// Runs one case; returns the number of problems found (0 = byte-identical every time).
template <spec S, tuning T, class In>
int run_case(const char* label, const shape& sh, data_kind kind, std::uint64_t seed, int repeats,
             cudaStream_t stream, bool use_graph = false) {
  std::mt19937_64 rng(seed);
  // host input with its layout
  auto in_h_view = make_view<In>(nullptr, sh.batch, sh.rows, sh.cols, sh.in_order, sh.in_pad);
  const std::int64_t in_span = span(in_h_view);
  std::vector<In> in_h = make_data<In, S.out>(in_span, in_h_view.ld, kind, rng);
  in_h_view.data = in_h.data();

  using data_t = fp8<S.out>;
  auto out_h_view = make_view<data_t>(nullptr, sh.batch, sh.rows, sh.cols, sh.out_order, sh.out_pad);
  const std::int64_t out_span = span(out_h_view);
  std::int64_t sr = 1, sc = 1;
  scale_extents<S>(sh, sr, sc);
  const std::int64_t n_scales = sh.batch * sr * sc;
  std::vector<data_t> ref(static_cast<std::size_t>(out_span), data_t{0xA5});
  std::vector<float> ref_s(static_cast<std::size_t>(n_scales), 0.0f), ref_i(ref_s);
  out_h_view.data = ref.data();
  quantized<S> ref_out{out_h_view, row_major(ref_s.data(), sr, sc), row_major(ref_i.data(), sr, sc)};
  ref_out.scale = batched(ref_out.scale, sh.batch);
  ref_out.inverse = batched(ref_out.inverse, sh.batch);
  quantize_args args{};
  args.seed = seed * 7 + 1;
  const status hs = host::quantize<S>(in_h_view.as_const(), ref_out, args);
  if (hs != status::success) {
    std::printf("  [%s] host reference failed: %s\n", label, to_string(hs));
    return 1;
  }

  device_buffer<In> in_d(static_cast<std::size_t>(in_span));
  device_buffer<data_t> out_d(static_cast<std::size_t>(out_span));
  device_buffer<float> s_d(static_cast<std::size_t>(n_scales)), i_d(static_cast<std::size_t>(n_scales));
  const matrix_view<const In> in_v = make_view<const In>(in_d.ptr, sh.batch, sh.rows, sh.cols, sh.in_order, sh.in_pad);
  // on the call's stream, so the call cannot read the input before it lands
  cudaMemcpyAsync(in_d.ptr, in_h.data(), in_h.size() * sizeof(In), cudaMemcpyHostToDevice, stream);
  quantized<S> out{make_view<data_t>(out_d.ptr, sh.batch, sh.rows, sh.cols, sh.out_order, sh.out_pad),
                   batched(row_major(s_d.ptr, sr, sc), sh.batch), batched(row_major(i_d.ptr, sr, sc), sh.batch)};
  // The family that runs: a forced path runs only on the views it accepts (elsewhere the call
  // returns bad_layout and the case is not counted); the automatic walk always finds one.
  gpu_path path{};
  const status chosen = chosen_path<S, T>(in_v, out, &path);
  if (chosen == status::bad_layout && T.path != gpu_path::automatic) return 0;
  if (chosen != status::success || (T.path != gpu_path::automatic && path != T.path)) {
    std::printf("  [%s] chosen_path: %s (path %d)\n", label, to_string(chosen), static_cast<int>(path));
    return 1;
  }
  ++path_runs()[static_cast<int>(path)];
  // The exact size for these views, never above the size for any output; the workspace is
  // poisoned before every run (each family zeroes what it reads).
  const std::size_t ws_bytes = workspace_size<S, T>(in_v, out);
  if (ws_bytes > workspace_size<S, T>(in_v)) {
    std::printf("  [%s] workspace_size(in, out) %zu above workspace_size(in) %zu\n", label, ws_bytes,
                workspace_size<S, T>(in_v));
    return 1;
  }
  device_buffer<unsigned char> ws(ws_bytes > 0 ? ws_bytes : 1);
  const gpu_args call{.stream = stream, .workspace = ws_bytes > 0 ? ws.ptr : nullptr,
                      .workspace_bytes = ws_bytes, .seed = args.seed};

  int problems = 0;
  std::vector<data_t> got(static_cast<std::size_t>(out_span));
  std::vector<float> got_s(static_cast<std::size_t>(n_scales)), got_i(got_s);
  cudaGraphExec_t exec = nullptr;
  cudaGraph_t graph = nullptr;
  if (use_graph) {
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    if (ws_bytes > 0) cudaMemsetAsync(ws.ptr, 0xA5, ws_bytes, stream);
    const status st = quantize<S, T>(in_v, out, call);
    const cudaError_t e = cudaStreamEndCapture(stream, &graph);
    if (st != status::success || e != cudaSuccess ||
        cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
      std::printf("  [%s] graph capture failed: %s / %s\n", label, to_string(st), cudaGetErrorString(e));
      return 1;
    }
  }
  for (int run = 0; run <= repeats; ++run) {
    const int poison = run % 2 == 0 ? 0xA5 : 0x5A;
    cudaMemsetAsync(out_d.ptr, poison, out_span, stream);
    cudaMemsetAsync(s_d.ptr, 0xFF, n_scales * 4, stream);
    cudaMemsetAsync(i_d.ptr, 0xFF, n_scales * 4, stream);
    if (ws_bytes > 0 && !use_graph) cudaMemsetAsync(ws.ptr, poison, ws_bytes, stream);
    status st = status::success;
    if (use_graph) {
      if (cudaGraphLaunch(exec, stream) != cudaSuccess) st = status::device_error;
    } else {
      st = quantize<S, T>(in_v, out, call);
    }
    const cudaError_t e = cudaStreamSynchronize(stream);
    if (st != status::success || e != cudaSuccess) {
      std::printf("  [%s] quantize failed: %s / %s\n", label, to_string(st), cudaGetErrorString(e));
      return problems + 1;
    }
    cudaMemcpy(got.data(), out_d.ptr, out_span, cudaMemcpyDeviceToHost);
    cudaMemcpy(got_s.data(), s_d.ptr, n_scales * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(got_i.data(), i_d.ptr, n_scales * 4, cudaMemcpyDeviceToHost);
    // every logical element; padding must keep the poison
    std::vector<char> logical(static_cast<std::size_t>(out_span), 0);
    std::int64_t bad = 0;
    for (std::int64_t b = 0; b < sh.batch; ++b)
      for (std::int64_t r = 0; r < sh.rows; ++r)
        for (std::int64_t c = 0; c < sh.cols; ++c) {
          const std::int64_t o = out.data.offset(b, r, c);
          logical[static_cast<std::size_t>(o)] = 1;
          if (got[o].bits != ref[o].bits) {
            if (bad < 3) {
              const std::int64_t io = in_v.offset(b, r, c);
              std::printf("  [%s] run %d: (%lld,%lld,%lld) x=%g gpu 0x%02X host 0x%02X\n", label, run,
                          (long long)b, (long long)r, (long long)c, (double)to_float(in_h[io]), got[o].bits,
                          ref[o].bits);
            }
            ++bad;
          }
        }
    std::int64_t touched = 0;
    for (std::int64_t o = 0; o < out_span; ++o)
      if (!logical[static_cast<std::size_t>(o)] && got[o].bits != poison) ++touched;
    std::int64_t bad_s = 0;
    for (std::int64_t k = 0; k < n_scales; ++k) {
      if (stores_multiplier(S) && bits_of(got_s[k]) != bits_of(ref_s[k])) ++bad_s;
      if (stores_inverse(S) && bits_of(got_i[k]) != bits_of(ref_i[k])) ++bad_s;
      if (!stores_multiplier(S) && bits_of(got_s[k]) != 0xFFFFFFFFu) ++bad_s;
      if (!stores_inverse(S) && bits_of(got_i[k]) != 0xFFFFFFFFu) ++bad_s;
    }
    if (bad || touched || bad_s) {
      std::printf("  [%s] run %d: %lld data mismatches, %lld padding bytes written, %lld scale mismatches\n",
                  label, run, (long long)bad, (long long)touched, (long long)bad_s);
      ++problems;
    }
  }
  if (use_graph) {
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  return problems;
}

}  // namespace fp8q_gpu_check
