// examples/demo.cpp — a tour of fp8q: the five formats, what encode/decode do at the edges,
// and what each visible GPU computes in natively.
//
// Built twice: by the host compiler as fp8q_demo, and, when CUDA is enabled, by nvcc through
// demo.cu as fp8q_demo_cuda, where fp8q's device query talks to the CUDA runtime. Each part is
// one print_* function so later features (quantizing a tensor, a benchmark line) slot in as
// one more function called from main().
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fp8q/arch.hpp"
#include "fp8q/config.hpp"
#include "fp8q/convert.hpp"
#include "fp8q/device.hpp"
#include "fp8q/format.hpp"
#include "fp8q/quantize.hpp"
#include "fp8q/status.hpp"

namespace demo {

using fp8q::format;
using fp8q::overflow;

// fp8q's encode takes the format as a template argument (it is always known where data is
// quantized); the demo picks formats at run time, so it switches once here.
std::uint8_t encode_bits(format f, float x, overflow ov) {
  switch (f) {
    case format::e4m3fn: return fp8q::encode<format::e4m3fn>(x, ov).bits;
    case format::e4m3fnuz: return fp8q::encode<format::e4m3fnuz>(x, ov).bits;
    case format::e5m2: return fp8q::encode<format::e5m2>(x, ov).bits;
    case format::e5m2fnuz: return fp8q::encode<format::e5m2fnuz>(x, ov).bits;
    case format::e8m0fnu: return fp8q::encode<format::e8m0fnu>(x, ov).bits;
  }
  return 0;
}

bool is_nan_code(format f, std::uint8_t bits) {
  const float v = fp8q::decode(f, bits);
  return v != v;
}

std::string hex(std::uint8_t bits) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02X", bits);
  return buf;
}

// "2^-9" for powers of two outside [1, 1e6) (every min normal / min subnormal, e8m0's max),
// else "%g".
std::string pow2_or_value(float v) {
  int e = 0;
  const float mantissa = std::frexp(v, &e);
  char buf[32];
  if (mantissa == 0.5f && (v < 1.0f || v >= 1e6f)) {
    std::snprintf(buf, sizeof(buf), "2^%d", e - 1);
  } else {
    std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(v));
  }
  return buf;
}

void print_formats() {
  std::printf("FP8 formats (every trait derived from exponent/mantissa bits and special codes)\n");
  std::printf("  %-9s %-5s %5s %8s %10s %13s  %-18s %-9s %s\n", "format", "bits", "bias", "max",
              "min normal", "min subnormal", "NaN codes", "Inf", "-0");
  for (format f : fp8q::all_formats) {
    const fp8q::format_traits t = fp8q::traits(f);
    std::string nans;
    for (int code = 0; code < 256; ++code) {
      if (is_nan_code(f, static_cast<std::uint8_t>(code))) {
        if (!nans.empty()) nans += ' ';
        nans += hex(static_cast<std::uint8_t>(code)).substr(2);
      }
    }
    char bits[8];
    std::snprintf(bits, sizeof(bits), "e%dm%d", t.exponent_bits, t.mantissa_bits);
    const std::string inf =
        t.has_inf ? hex(t.inf_bits) + "/" + hex(static_cast<std::uint8_t>(t.inf_bits | 0x80))
                  : "none";
    const char* neg_zero = t.has_negative_zero ? "0x80"
                           : t.has_zero        ? "none (0x80 is NaN)"
                                               : "none (no zero)";
    std::printf("  %-9s %-5s %5d %8s %10s %13s  %-18s %-9s %s\n", t.name, bits, t.bias,
                pow2_or_value(t.max).c_str(), pow2_or_value(t.min_normal).c_str(),
                t.has_subnormals ? pow2_or_value(t.min_subnormal).c_str() : "-", nans.c_str(),
                inf.c_str(), neg_zero);
  }
  std::printf("\n");
}

void show(const char* why, float x, format f, overflow ov) {
  const std::uint8_t bits = encode_bits(f, x, ov);
  std::printf("  %-34s %12g -> %-8s %-9s = %s (%g)\n", why, static_cast<double>(x),
              fp8q::to_string(f), fp8q::to_string(ov), hex(bits).c_str(),
              static_cast<double>(fp8q::decode(f, bits)));
}

void print_conversions() {
  constexpr float inf = __builtin_huge_valf();
  constexpr float nan = __builtin_nanf("");
  const float subnormal = std::ldexp(1.0f, -9);  // e4m3fn's smallest subnormal
  std::printf("encode (nearest-even) and decode\n");
  show("tie 448|480: even mantissa wins", 464.0f, format::e4m3fn, overflow::propagate);
  show("rounds past fnuz max 240", 248.0f, format::e4m3fnuz, overflow::saturate);
  show("rounds past fnuz max 240", 248.0f, format::e4m3fnuz, overflow::propagate);
  show("rounds down to max", 241.0f, format::e4m3fnuz, overflow::saturate);
  show("rounds down to 240", 241.0f, format::e4m3fn, overflow::saturate);
  show("+Inf", inf, format::e4m3fn, overflow::saturate);
  show("-Inf", -inf, format::e4m3fn, overflow::propagate);
  show("+Inf keeps Inf where it exists", inf, format::e5m2, overflow::propagate);
  show("-Inf into fnuz", -inf, format::e5m2fnuz, overflow::propagate);
  show("NaN", nan, format::e4m3fn, overflow::saturate);
  show("NaN", nan, format::e5m2, overflow::saturate);
  show("NaN (one unsigned NaN)", -nan, format::e4m3fnuz, overflow::saturate);
  show("NaN", nan, format::e8m0fnu, overflow::saturate);
  show("smallest subnormal", subnormal, format::e4m3fn, overflow::saturate);
  show("tie 1|2 subnormal steps: even", 1.5f * subnormal, format::e4m3fn, overflow::saturate);
  show("-0 keeps its sign", -0.0f, format::e4m3fn, overflow::saturate);
  show("-0 into fnuz: no negative zero", -0.0f, format::e4m3fnuz, overflow::saturate);
  show("scale 2^-3", 0.125f, format::e8m0fnu, overflow::saturate);
  std::printf("\n");
}

void print_devices() {
  std::printf("GPUs\n");
  if (!FP8Q_TOOLCHAIN_CUDA && !FP8Q_TOOLCHAIN_HIP) {
    std::printf("  no GPU: this binary was built by the host compiler without a GPU toolchain "
                "(fp8q_demo_cuda is the CUDA build)\n");
    return;
  }
  int count = 0;
  const fp8q::status st = fp8q::device_count(&count);
  if (st != fp8q::status::success || count == 0) {
    std::printf("  no GPU: the %s runtime sees none (%s)\n", FP8Q_TOOLCHAIN_CUDA ? "CUDA" : "HIP",
                fp8q::to_string(st));
    return;
  }
  for (int dev = 0; dev < count; ++dev) {
    fp8q::device_info info;
    const fp8q::status q = fp8q::query_device(dev, &info);
    if (q != fp8q::status::success) {
      std::printf("  device %d: query failed (%s)\n", dev, fp8q::to_string(q));
      continue;
    }
    const fp8q::fp8_family family = info.arch.family;
    std::printf("  device %d: %s, arch %s, %d multiprocessors, L2 %lld KiB, wave %d\n", dev,
                info.name, info.arch_name, info.multiprocessors, info.l2_bytes / 1024,
                info.arch.wave_size);
    if (family == fp8q::fp8_family::none) {
      std::printf("            native FP8: none (no FP8 hardware; choose a format explicitly)\n");
    } else {
      std::printf("            native FP8: %s family (%s, %s)\n", fp8q::to_string(family),
                  fp8q::to_string(fp8q::e4m3_of(family)), fp8q::to_string(fp8q::e5m2_of(family)));
    }
  }
}


// ---- a realistic MoE quantization step ---------------------------------------------------------
// activations [tokens, hidden] rowwise, expert weights [E, K, N] colwise (scales [E, 1, N]) and
// weight gradients per-group colwise with uneven, partly empty groups of tokens.

// The e4m3 format the matrix units of device 0 consume, and why.
format choose_e4m3(std::string& why) {
  int count = 0;
  if ((FP8Q_TOOLCHAIN_CUDA || FP8Q_TOOLCHAIN_HIP) && fp8q::device_count(&count) == fp8q::status::success &&
      count > 0) {
    fp8q::device_info info;
    if (fp8q::query_device(0, &info) == fp8q::status::success &&
        info.arch.family != fp8q::fp8_family::none) {
      why = std::string("device 0 is ") + info.arch_name + ", native family " +
            fp8q::to_string(info.arch.family);
      return fp8q::e4m3_of(info.arch.family);
    }
  }
  why = "no GPU with FP8 here: OCP e4m3fn, the interchange format (MI300 would get e4m3fnuz)";
  return format::e4m3fn;
}

template <class T>
std::vector<fp8q::bf16> random_bf16(std::size_t n, std::mt19937& rng, float sigma) {
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<fp8q::bf16> v(n);
  for (auto& x : v) x = fp8q::to_bf16(d(rng));
  return v;
}

// Largest |x' - x| over the tensor, relative to the tensor's largest |x| (x' dequantized).
template <fp8q::spec S>
double round_trip(const fp8q::matrix_view<const fp8q::bf16>& in, const fp8q::quantized<S>& q,
                  const fp8q::quantize_args& args) {
  std::vector<float> back(static_cast<std::size_t>(in.batch * in.rows * in.cols));
  const auto out = fp8q::batched(fp8q::row_major(back.data(), in.rows, in.cols), in.batch);
  if (fp8q::host::dequantize<S>(q, out, args) != fp8q::status::success) return -1.0;
  double worst = 0.0;
  double amax = 0.0;
  for (std::int64_t b = 0; b < in.batch; ++b)
    for (std::int64_t r = 0; r < in.rows; ++r)
      for (std::int64_t c = 0; c < in.cols; ++c) {
        const double x = fp8q::to_float(in(b, r, c));
        worst = std::fmax(worst, std::fabs(static_cast<double>(out(b, r, c)) - x));
        amax = std::fmax(amax, std::fabs(x));
      }
  return amax > 0 ? worst / amax : 0.0;
}

template <format F>
void moe_step(const char* why) {
  using clock = std::chrono::steady_clock;
  std::mt19937 rng(2026);
  const std::int64_t tokens = 4096, hidden = 2048, experts = 8, ffn = 512;
  std::printf("MoE quantization step on the host (%s)\n  format %s: %s\n", "reference backend",
              fp8q::to_string(F), why);

  // activations [tokens, hidden] bf16 -> rowwise, one scale per token
  constexpr fp8q::spec rowwise{.out = F, .granularity = fp8q::granularity::row};
  auto act = random_bf16<fp8q::bf16>(static_cast<std::size_t>(tokens * hidden), rng, 1.0f);
  std::vector<fp8q::fp8<F>> act_q(act.size());
  std::vector<float> act_inv(static_cast<std::size_t>(tokens));
  const auto act_v = fp8q::row_major<const fp8q::bf16>(act.data(), tokens, hidden);
  const fp8q::quantized<rowwise> act_out{.data = fp8q::row_major(act_q.data(), tokens, hidden),
                                         .inverse = fp8q::row_major(act_inv.data(), tokens, 1)};

  // expert weights [E, K, N] bf16 -> colwise per expert, scales [E, 1, N]
  constexpr fp8q::spec colwise{.out = F, .granularity = fp8q::granularity::col};
  auto w = random_bf16<fp8q::bf16>(static_cast<std::size_t>(experts * hidden * ffn), rng, 0.02f);
  std::vector<fp8q::fp8<F>> w_q(w.size());
  std::vector<float> w_inv(static_cast<std::size_t>(experts * ffn));
  const auto w_v = fp8q::batched(fp8q::row_major<const fp8q::bf16>(w.data(), hidden, ffn), experts);
  const fp8q::quantized<colwise> w_out{.data = fp8q::batched(fp8q::row_major(w_q.data(), hidden, ffn), experts),
                                       .inverse = fp8q::batched(fp8q::row_major(w_inv.data(), 1, ffn), experts)};

  // weight gradient input: grad [tokens, ffn] per-group colwise over uneven token groups
  // (two experts received no tokens), column-major output, scales [G, N]
  constexpr fp8q::spec grouped{.out = F, .granularity = fp8q::granularity::group_col,
                               .power_of_2 = true, .store = fp8q::stored_scale::both};
  const std::int32_t ends[experts] = {700, 700, 1900, 2100, 2100, 3000, 3900, 4096};
  auto g = random_bf16<fp8q::bf16>(static_cast<std::size_t>(tokens * ffn), rng, 1e-3f);
  std::vector<fp8q::fp8<F>> g_q(g.size());
  std::vector<float> g_s(static_cast<std::size_t>(experts * ffn)), g_inv(g_s.size());
  const auto g_v = fp8q::row_major<const fp8q::bf16>(g.data(), tokens, ffn);
  const fp8q::quantized<grouped> g_out{.data = fp8q::col_major(g_q.data(), tokens, ffn),
                                       .scale = fp8q::row_major(g_s.data(), experts, ffn),
                                       .inverse = fp8q::row_major(g_inv.data(), experts, ffn)};
  fp8q::quantize_args g_args{};
  g_args.groups = {ends, experts};

  const auto t0 = clock::now();
  const fp8q::status s1 = fp8q::host::quantize<rowwise>(act_v, act_out);
  const auto t1 = clock::now();
  const fp8q::status s2 = fp8q::host::quantize<colwise>(w_v, w_out);
  const auto t2 = clock::now();
  const fp8q::status s3 = fp8q::host::quantize<grouped>(g_v, g_out, g_args);
  const auto t3 = clock::now();
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("  %-48s %-20s %-8s %8.1f ms  max |x'-x| / max|x| %.4f\n",
              "activations rowwise", "[4096, 2048] bf16", fp8q::to_string(s1), ms(t0, t1),
              round_trip<rowwise>(act_v, act_out, {}));
  std::printf("  %-48s %-20s %-8s %8.1f ms  max |x'-x| / max|x| %.4f\n",
              "expert weights colwise, scales [E, 1, N]", "[8, 2048, 512] bf16", fp8q::to_string(s2),
              ms(t1, t2), round_trip<colwise>(w_v, w_out, {}));
  std::printf("  %-48s %-20s %-8s %8.1f ms  max |x'-x| / max|x| %.4f\n",
              "gradients per-group colwise, 8 groups, 2 empty", "[4096, 512] bf16", fp8q::to_string(s3),
              ms(t2, t3), round_trip<grouped>(g_v, g_out, g_args));
  std::printf("  (e4m3 keeps 3 mantissa bits: near a group's amax one step is 2^-3 of the value, so "
              "errors up to ~0.03 of max|x| are the format's, not fp8q's)\n\n");
}

#if FP8Q_TOOLCHAIN_CUDA
int print_gpu_step();  // demo.cu: one MoE layer step on the GPU, compared with the host
#endif

void print_moe_step() {
  std::string why;
  const format f = choose_e4m3(why);
  if (f == format::e4m3fnuz) moe_step<format::e4m3fnuz>(why.c_str());
  else moe_step<format::e4m3fn>(why.c_str());
}
}  // namespace demo

int main() {
  demo::print_formats();
  demo::print_conversions();
  demo::print_devices();
  std::printf("\n");
  demo::print_moe_step();
#if FP8Q_TOOLCHAIN_CUDA
  return demo::print_gpu_step();
#else
  return 0;
#endif
}
