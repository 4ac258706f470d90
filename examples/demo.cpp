// examples/demo.cpp — a tour of fp8q: the five formats, what encode/decode do at the edges,
// and what each visible GPU computes in natively.
//
// Built twice: by the host compiler as fp8q_demo, and, when CUDA is enabled, by nvcc through
// demo.cu as fp8q_demo_cuda, where fp8q's device query talks to the CUDA runtime. Each part is
// one print_* function so later features (quantizing a tensor, a benchmark line) slot in as
// one more function called from main().
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fp8q/arch.hpp"
#include "fp8q/config.hpp"
#include "fp8q/convert.hpp"
#include "fp8q/device.hpp"
#include "fp8q/format.hpp"
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

// "2^-9" for exact powers of two (every min normal / min subnormal here), else "%g".
std::string pow2_or_value(float v) {
  int e = 0;
  const float mantissa = std::frexp(v, &e);
  char buf[32];
  if (mantissa == 0.5f) {
    std::snprintf(buf, sizeof(buf), "2^%d", e - 1);
  } else {
    std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(v));
  }
  return buf;
}

void print_formats() {
  std::printf("FP8 formats (every trait derived from exponent/mantissa bits and special codes)\n");
  std::printf("  %-9s %-5s %5s %11s %10s %13s  %-18s %-9s %s\n", "format", "bits", "bias", "max",
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
    std::printf("  %-9s %-5s %5d %11g %10s %13s  %-18s %-9s %s\n", t.name, bits, t.bias,
                static_cast<double>(t.max), pow2_or_value(t.min_normal).c_str(),
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

}  // namespace demo

int main() {
  demo::print_formats();
  demo::print_conversions();
  demo::print_devices();
  return 0;
}
