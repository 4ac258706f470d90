// The CUDA build of the demo (fp8q_demo_cuda): the same program compiled by nvcc, so that
// fp8q/device.hpp queries the CUDA runtime for every visible device, plus one GPU step: the
// quantization of one MoE layer step on the GPU (routed activations rowwise, expert weights 3D
// colwise, the dgrad's transpose-rhs, the wgrad's dual per-group colwise over device offsets),
// each call timed with CUDA events and its bytes compared with the host reference byte for byte.
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <initializer_list>

#include "demo.cpp"

namespace demo {
namespace gpu_step {

// ---- CUDA plumbing: every call checked, everything freed on every return path ---------------

bool cuda_ok(cudaError_t e, const char* what, int line) {
  if (e == cudaSuccess) return true;
  std::printf("  CUDA error at demo.cu:%d, %s: %s\n", line, what, cudaGetErrorString(e));
  return false;
}
#define DEMO_CUDA(call) ::demo::gpu_step::cuda_ok((call), #call, __LINE__)

// Device memory that frees itself, so an early return frees whatever was allocated before it.
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() {
    if (ptr_ != nullptr) DEMO_CUDA(cudaFree(ptr_));
  }
  bool allocate(std::size_t bytes) {
    bytes_ = bytes;
    return DEMO_CUDA(cudaMalloc(&ptr_, bytes));
  }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// A CUDA stream or event, created by create() and destroyed with its owner.
template <class H, cudaError_t (*Create)(H*), cudaError_t (*Destroy)(H)>
class cuda_handle {
 public:
  cuda_handle() = default;
  cuda_handle(const cuda_handle&) = delete;
  cuda_handle& operator=(const cuda_handle&) = delete;
  ~cuda_handle() {
    if (h_ != nullptr) DEMO_CUDA(Destroy(h_));
  }
  bool create() { return DEMO_CUDA(Create(&h_)); }
  H get() const { return h_; }

 private:
  H h_ = nullptr;
};
using cuda_stream = cuda_handle<cudaStream_t, cudaStreamCreate, cudaStreamDestroy>;
using cuda_event = cuda_handle<cudaEvent_t, cudaEventCreate, cudaEventDestroy>;

// Allocates d and copies h into it (inputs, and outputs that start as the host's poisoned copy).
template <class T>
bool to_device(const std::vector<T>& h, device_buffer& d) {
  return d.allocate(h.size() * sizeof(T)) &&
         DEMO_CUDA(cudaMemcpy(d.get(), h.data(), d.bytes(), cudaMemcpyHostToDevice));
}

// n elements of T, every byte 0xA5. Each output starts like this on the host and (copied) on the
// device: bytes fp8q leaves alone by its semantics (padding lines past the last group, scales of
// an empty group) then compare equal, and a byte written only on one side shows up as different.
template <class T>
std::vector<T> poisoned(std::size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void*>(v.data()), 0xA5, n * sizeof(T));
  return v;
}

// Bytes of device buffer d that differ from host vector h. A buffer that cannot be copied back
// counts as entirely different: none of its bytes was verified.
template <class T>
std::size_t bytes_differ(const device_buffer& d, const std::vector<T>& h) {
  std::vector<unsigned char> got(d.bytes());
  if (got.size() != h.size() * sizeof(T) ||
      !DEMO_CUDA(cudaMemcpy(got.data(), d.get(), got.size(), cudaMemcpyDeviceToHost)))
    return got.size();
  const auto* want = reinterpret_cast<const unsigned char*>(h.data());
  std::size_t n = 0;
  for (std::size_t i = 0; i < got.size(); ++i) n += got[i] != want[i];
  return n;
}

std::string shape(std::initializer_list<std::int64_t> dims) {
  std::string s = "[";
  for (const std::int64_t d : dims) s += (s.size() > 1 ? ", " : "") + std::to_string(d);
  return s + "]";
}

// One library call of the step. It is enqueued once to warm up (the device query and launch
// configuration are cached on the first call, the kernels' modules load) and once between two
// events; the time is the second pass's.
struct step_call {
  std::string name;
  std::string shape;
  std::function<fp8q::status(cudaStream_t)> enqueue;
  cuda_event start, stop;
  fp8q::status status = fp8q::status::success;
  bool timed = false;  // ran in the timed pass, both events recorded
  float us = 0.0f;
  std::size_t differ = 0;  // bytes (FP8 data, scales, padded ends) not equal to the host's
};

// ---- the MoE layer step ---------------------------------------------------------------------

// The step's specs, one per call, at namespace scope: nvcc 13.0 rejected the calls in the lambdas
// below ("no instance ... matches") while the specs were constexpr locals of run().
constexpr format F = format::e4m3fn;
using fp8_t = fp8q::fp8<F>;
// Power-of-2 scales throughout (TorchAO's FP8 MoE training recipe): x * s and q * (1/s) are then
// exact in f32, so the scale adds no rounding of its own.
constexpr fp8q::spec act_spec{.out = F, .granularity = fp8q::granularity::row, .power_of_2 = true};
constexpr fp8q::spec w_spec{.out = F, .granularity = fp8q::granularity::col, .power_of_2 = true};
// dgrad: dX = dY * W^T reduces over N, so W^T needs one scale per row of W (per k)
constexpr fp8q::spec dgrad_spec{.out = F, .granularity = fp8q::granularity::row, .power_of_2 = true};
// wgrad: dW_e = X_e^T * dY_e reduces over expert e's tokens: one scale per (group, column)
constexpr fp8q::spec wgrad_spec{.out = F, .granularity = fp8q::granularity::group_col,
                                .power_of_2 = true};

// One line per call: name, shape, time of the timed pass, bytes different from the host (or
// why the call did not run). Returns the bytes different over all calls.
template <std::size_t Calls>
std::size_t print_results(const fp8q::device_info& dev, const step_call (&calls)[Calls]) {
  std::printf("GPU step on device 0 (%s, %s): one MoE layer step, bf16 -> %s, power-of-2 "
              "scales;\n  each call timed with CUDA events after a warm-up pass, its bytes compared "
              "with the host reference\n", dev.name, dev.arch_name,
              fp8q::to_string(F));
  std::printf("  %-48s %-36s %10s  %s\n", "call", "shape (bf16 in)", "time", "bytes != host");
  std::size_t total = 0;
  for (const step_call& c : calls) {
    if (c.status != fp8q::status::success) {
      std::printf("  %-48s %-36s failed: %s\n", c.name.c_str(), c.shape.c_str(), fp8q::to_string(c.status));
    } else if (!c.timed) {
      std::printf("  %-48s %-36s not run or not timed (see above)\n", c.name.c_str(), c.shape.c_str());
    } else {
      std::printf("  %-48s %-36s %7.1f us  %zu\n", c.name.c_str(), c.shape.c_str(),
                  static_cast<double>(c.us), c.differ);
      total += c.differ;
    }
  }
  return total;
}

bool run(const fp8q::device_info& dev) {
  // One layer, shapes consistent with each other: the routed tokens x (tokens, hidden) meet the
  // expert weights W (E, K = hidden, N), and the wgrad's input is the same x. Eight experts of
  // 5120 x 1024 keep the host reference of the whole step to seconds (about 4 s on 2 CPU cores).
  const std::int64_t tokens = 16384, hidden = 5120, experts = 8, K = hidden, N = 1024;
  const std::int64_t G = experts;
  // Tokens per expert: uneven, expert 1 received none, expert 4 a single one. The wgrad output
  // is padded to 16 rows per group (FP8 _scaled_grouped_mm's alignment), which adds at most
  // G * 15 rows.
  const std::vector<std::int32_t> ends = {3000, 3000, 5500, 9000, 9001, 12000, 14000, 16384};
  const std::int64_t align = 16;
  const std::int64_t padded_rows = tokens + G * (align - 1);

  std::mt19937 rng(7);
  const auto x =  // [tokens, hidden] bf16, row-major: routed activations
      random_bf16<fp8q::bf16>(static_cast<std::size_t>(tokens * hidden), rng, 1.0f);
  const auto w =  // [E, K, N] bf16, row-major: expert weights
      random_bf16<fp8q::bf16>(static_cast<std::size_t>(experts * K * N), rng, 0.02f);
  const auto dy =  // [tokens, N] bf16, row-major: grad_output of the expert GEMM
      random_bf16<fp8q::bf16>(static_cast<std::size_t>(tokens * N), rng, 1e-3f);

  // Host-side outputs, poisoned; the host reference fills them after the GPU has run.
  using sz = std::size_t;
  auto x_q = poisoned<fp8_t>(x.size());                              // [tokens, hidden], row-major
  auto x_inv = poisoned<float>(sz(tokens));                          // [tokens, 1]
  auto w_q = poisoned<fp8_t>(w.size());                              // [E, K, N], row-major
  auto w_inv = poisoned<float>(sz(experts * N));                     // [E, 1, N]
  auto wt_q = poisoned<fp8_t>(w.size());                             // [E, N, K], row-major
  auto wt_inv = poisoned<float>(sz(experts * K));                    // [E, K]
  auto dy_gq = poisoned<fp8_t>(sz(padded_rows * N));                 // [padded_rows, N], col-major
  auto dy_ginv = poisoned<float>(sz(G * N));                         // [G, N]
  auto x_gq = poisoned<fp8_t>(sz(padded_rows * hidden));             // [padded_rows, hidden], col-major
  auto x_ginv = poisoned<float>(sz(G * hidden));                     // [G, hidden]
  auto padded_ends = poisoned<std::int32_t>(sz(G));                  // [G]
  const std::vector<std::uint32_t> error_word_init(1, 0u);           // [1]

  // Device copies: inputs, then outputs starting as the poisoned host bytes.
  device_buffer x_d;          // [tokens, hidden] bf16, row-major
  device_buffer w_d;          // [E, K, N] bf16, row-major
  device_buffer dy_d;         // [tokens, N] bf16, row-major
  device_buffer ends_d;       // [G] int32 cumulative end offsets: read only on the device
  device_buffer x_q_d;        // [tokens, hidden] e4m3fn, row-major
  device_buffer x_inv_d;      // [tokens, 1] f32 inverse scales
  device_buffer w_q_d;        // [E, K, N] e4m3fn, row-major
  device_buffer w_inv_d;      // [E, 1, N] f32
  device_buffer wt_q_d;       // [E, N, K] e4m3fn, row-major (= [E] column-major K x N)
  device_buffer wt_inv_d;     // [E, K] f32 (a K x 1 view per expert)
  device_buffer dy_gq_d;      // [padded_rows, N] e4m3fn, column-major
  device_buffer dy_ginv_d;    // [G, N] f32
  device_buffer x_gq_d;       // [padded_rows, hidden] e4m3fn, column-major
  device_buffer x_ginv_d;     // [G, hidden] f32
  device_buffer padded_d;     // [G] int32 padded end offsets, written by the wgrad call
  device_buffer error_d;      // [1] uint32 offsets error word: fp8q ORs bits in, never clears
  if (!to_device(x, x_d) || !to_device(w, w_d) || !to_device(dy, dy_d) || !to_device(ends, ends_d) ||
      !to_device(x_q, x_q_d) || !to_device(x_inv, x_inv_d) || !to_device(w_q, w_q_d) ||
      !to_device(w_inv, w_inv_d) || !to_device(wt_q, wt_q_d) || !to_device(wt_inv, wt_inv_d) ||
      !to_device(dy_gq, dy_gq_d) || !to_device(dy_ginv, dy_ginv_d) || !to_device(x_gq, x_gq_d) ||
      !to_device(x_ginv, x_ginv_d) || !to_device(padded_ends, padded_d) ||
      !to_device(error_word_init, error_d)) {
    std::printf("GPU step: allocation or copy failed\n");
    return false;
  }

  // Views of device memory. in/out views are all the library needs to know about layouts.
  const auto x_v = fp8q::row_major<const fp8q::bf16>(x_d.as<fp8q::bf16>(), tokens, hidden);
  const auto w_v = fp8q::batched(fp8q::row_major<const fp8q::bf16>(w_d.as<fp8q::bf16>(), K, N), experts);
  const auto dy_v = fp8q::row_major<const fp8q::bf16>(dy_d.as<fp8q::bf16>(), tokens, N);
  const fp8q::quantized<act_spec> x_out{.data = fp8q::row_major(x_q_d.as<fp8_t>(), tokens, hidden),
                                        .inverse = fp8q::row_major(x_inv_d.as<float>(), tokens, 1)};
  const fp8q::quantized<w_spec> w_out{
      .data = fp8q::batched(fp8q::row_major(w_q_d.as<fp8_t>(), K, N), experts),
      .inverse = fp8q::batched(fp8q::row_major(w_inv_d.as<float>(), 1, N), experts)};
  // transpose-rhs: rowwise on each K x N matrix, written through a column-major K x N view
  // (ld = K), which is exactly (E, N, K) row-major (docs/semantics.md, "Layouts and views")
  const fp8q::quantized<dgrad_spec> wt_out{
      .data = fp8q::batched(fp8q::col_major(wt_q_d.as<fp8_t>(), K, N), experts),
      .inverse = fp8q::batched(fp8q::row_major(wt_inv_d.as<float>(), K, 1), experts)};
  // column-major outputs: a grouped GEMM's wgrad reads each column's tokens contiguously
  const fp8q::quantized<wgrad_spec> dy_gout{.data = fp8q::col_major(dy_gq_d.as<fp8_t>(), padded_rows, N),
                                            .inverse = fp8q::row_major(dy_ginv_d.as<float>(), G, N)};
  const fp8q::quantized<wgrad_spec> x_gout{.data = fp8q::col_major(x_gq_d.as<fp8_t>(), padded_rows, hidden),
                                           .inverse = fp8q::row_major(x_ginv_d.as<float>(), G, hidden)};
  const fp8q::group_offsets groups_d{.ends = ends_d.as<std::int32_t>(), .count = G, .align = align,
                                     .padded_ends = padded_d.as<std::int32_t>()};

  // Workspace per call (0 for rowwise on row-major views and for the per-group families; the
  // colwise relay keeps column amax there, the transposing tiled path its row amax). The calls
  // run one after another on one stream, so one workspace of the largest size serves them all.
  const std::size_t ws_x = fp8q::workspace_size<act_spec>(x_v, x_out);
  const std::size_t ws_w = fp8q::workspace_size<w_spec>(w_v, w_out);
  const std::size_t ws_wt = fp8q::workspace_size<dgrad_spec>(w_v, wt_out);
  const std::size_t ws_g = std::max(fp8q::workspace_size<wgrad_spec>(dy_v, dy_gout),
                                    fp8q::workspace_size<wgrad_spec>(x_v, x_gout));
  device_buffer ws;  // [max of the four] bytes, device scratch
  const std::size_t ws_max = std::max({ws_x, ws_w, ws_wt, ws_g});
  if (ws_max > 0 && !ws.allocate(ws_max)) return false;

  cuda_stream stream;
  if (!stream.create()) return false;

  step_call calls[4];
  calls[0].name = "routed activations rowwise";
  calls[0].shape = shape({tokens, hidden});
  calls[0].enqueue = [&](cudaStream_t s) {
    return fp8q::quantize<act_spec>(x_v, x_out,
                                    {.stream = s, .workspace = ws.get(), .workspace_bytes = ws_x});
  };
  calls[1].name = "expert weights 3D colwise";
  calls[1].shape = shape({experts, K, N});
  calls[1].enqueue = [&](cudaStream_t s) {
    return fp8q::quantize<w_spec>(w_v, w_out,
                                  {.stream = s, .workspace = ws.get(), .workspace_bytes = ws_w});
  };
  calls[2].name = "dgrad weights transpose-rhs";
  calls[2].shape = shape({experts, K, N}) + " -> " + shape({experts, N, K});
  calls[2].enqueue = [&](cudaStream_t s) {
    return fp8q::quantize<dgrad_spec>(w_v, wt_out,
                                      {.stream = s, .workspace = ws.get(), .workspace_bytes = ws_wt});
  };
  calls[3].name = "wgrad dual per-group colwise, G = " + std::to_string(G) + ", align " +
                  std::to_string(align);
  calls[3].shape = shape({tokens, N}) + " + " + shape({tokens, hidden});
  calls[3].enqueue = [&](cudaStream_t s) {
    return fp8q::quantize_dual<wgrad_spec>(dy_v, dy_gout, x_v, x_gout,
                                           {.stream = s, .workspace = ws.get(), .workspace_bytes = ws_g,
                                            .groups = groups_d, .error_word = error_d.as<std::uint32_t>()});
  };

  bool ok = true;
  for (step_call& c : calls) ok = ok && c.start.create() && c.stop.create();
  for (int pass = 0; pass < 2 && ok; ++pass) {  // pass 0 warms up, pass 1 is timed
    for (step_call& c : calls) {
      ok = ok && DEMO_CUDA(cudaEventRecord(c.start.get(), stream.get()));
      if (ok) c.status = c.enqueue(stream.get());
      ok = ok && c.status == fp8q::status::success &&
           DEMO_CUDA(cudaEventRecord(c.stop.get(), stream.get()));
      c.timed = ok && pass == 1;
    }
  }
  // The calls never synchronize; this is the first time the host waits for the GPU (and where
  // an error of a kernel that ran would show).
  ok = DEMO_CUDA(cudaStreamSynchronize(stream.get())) && ok;
  for (step_call& c : calls) {
    float ms = 0.0f;
    if (c.timed) c.timed = DEMO_CUDA(cudaEventElapsedTime(&ms, c.start.get(), c.stop.get()));
    c.us = ms * 1000.0f;
  }
  if (!ok) {  // nothing worth comparing: say which call failed
    print_results(dev, calls);
    std::printf("  FAILED: a call or a CUDA operation failed (above)\n");
    return false;
  }

  // The host reference on the same inputs, into the host outputs the device copies started from.
  const auto x_h = fp8q::row_major<const fp8q::bf16>(x.data(), tokens, hidden);
  const auto w_h = fp8q::batched(fp8q::row_major<const fp8q::bf16>(w.data(), K, N), experts);
  const auto dy_h = fp8q::row_major<const fp8q::bf16>(dy.data(), tokens, N);
  const fp8q::quantized<act_spec> x_ref{.data = fp8q::row_major(x_q.data(), tokens, hidden),
                                        .inverse = fp8q::row_major(x_inv.data(), tokens, 1)};
  const fp8q::quantized<w_spec> w_ref{.data = fp8q::batched(fp8q::row_major(w_q.data(), K, N), experts),
                                      .inverse = fp8q::batched(fp8q::row_major(w_inv.data(), 1, N), experts)};
  const fp8q::quantized<dgrad_spec> wt_ref{
      .data = fp8q::batched(fp8q::col_major(wt_q.data(), K, N), experts),
      .inverse = fp8q::batched(fp8q::row_major(wt_inv.data(), K, 1), experts)};
  const fp8q::quantized<wgrad_spec> dy_gref{.data = fp8q::col_major(dy_gq.data(), padded_rows, N),
                                            .inverse = fp8q::row_major(dy_ginv.data(), G, N)};
  const fp8q::quantized<wgrad_spec> x_gref{.data = fp8q::col_major(x_gq.data(), padded_rows, hidden),
                                           .inverse = fp8q::row_major(x_ginv.data(), G, hidden)};
  const fp8q::quantize_args groups_h{
      .groups = {.ends = ends.data(), .count = G, .align = align, .padded_ends = padded_ends.data()}};
  const fp8q::status host_st[4] = {
      fp8q::host::quantize<act_spec>(x_h, x_ref),
      fp8q::host::quantize<w_spec>(w_h, w_ref),
      fp8q::host::quantize<dgrad_spec>(w_h, wt_ref),
      fp8q::host::quantize_dual<wgrad_spec>(dy_h, dy_gref, x_h, x_gref, groups_h),
  };
  for (int i = 0; i < 4; ++i) {
    if (host_st[i] != fp8q::status::success) {
      std::printf("  host reference of %s failed: %s\n", calls[i].name.c_str(), fp8q::to_string(host_st[i]));
      ok = false;
    }
  }

  calls[0].differ = bytes_differ(x_q_d, x_q) + bytes_differ(x_inv_d, x_inv);
  calls[1].differ = bytes_differ(w_q_d, w_q) + bytes_differ(w_inv_d, w_inv);
  calls[2].differ = bytes_differ(wt_q_d, wt_q) + bytes_differ(wt_inv_d, wt_inv);
  calls[3].differ = bytes_differ(dy_gq_d, dy_gq) + bytes_differ(dy_ginv_d, dy_ginv) +
                    bytes_differ(x_gq_d, x_gq) + bytes_differ(x_ginv_d, x_ginv) +
                    bytes_differ(padded_d, padded_ends);
  // The offsets are valid, so the device must have seen nothing wrong with them.
  std::vector<std::uint32_t> error_word(1, 0u);
  if (!DEMO_CUDA(cudaMemcpy(error_word.data(), error_d.get(), 4, cudaMemcpyDeviceToHost))) ok = false;
  if (error_word[0] != 0) {
    std::printf("  offsets error word: 0x%x (expected 0)\n", error_word[0]);
    ok = false;
  }

  const std::size_t differ = print_results(dev, calls);
  std::printf("  %s\n", ok && differ == 0 ? "every byte equals the host reference"
                                          : "FAILED: bytes differ or a check failed (above)");
  return ok && differ == 0;
}

}  // namespace gpu_step

int print_gpu_step() {
  int count = 0;
  if (fp8q::device_count(&count) != fp8q::status::success || count == 0) {
    std::printf("GPU step: skipped, no GPU visible\n");
    return 0;
  }
  std::string why;
  const format f = choose_e4m3(why);
  if (f != format::e4m3fn) {
    std::printf("GPU step: skipped, device 0's native format is %s (this demo's GPU step is "
                "instantiated for e4m3fn)\n", fp8q::to_string(f));
    return 0;
  }
  fp8q::device_info dev;
  if (const fp8q::status st = fp8q::query_device(0, &dev); st != fp8q::status::success) {
    std::printf("GPU step: device 0 query failed (%s)\n", fp8q::to_string(st));
    return 1;
  }
  return gpu_step::run(dev) ? 0 : 1;
}

}  // namespace demo
