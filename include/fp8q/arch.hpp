// fp8q — which FP8 flavour a device computes in natively, at compile time and at run time.
//
// MI300 (gfx940/941/942) multiplies e4m3fnuz/e5m2fnuz; MI355X (gfx950), RDNA4 (gfx12xx) and
// NVIDIA sm_89+ use the OCP formats e4m3fn/e5m2. Scales computed against the wrong max clip
// silently, so every device is asked separately: never device 0 for all, never cached.
#pragma once

#include <cstdint>
#include <string_view>

#include "fp8q/config.hpp"
#include "fp8q/format.hpp"

namespace fp8q {

/// Family of FP8 formats a device's matrix units consume.
enum class fp8_family : std::uint8_t {
  none,  ///< no FP8 hardware (gfx90a, gfx1100, sm_80, ...): pick a format explicitly
  ocp,   ///< e4m3fn / e5m2
  fnuz,  ///< e4m3fnuz / e5m2fnuz
};

constexpr const char* to_string(fp8_family f) {
  return f == fp8_family::ocp ? "ocp" : f == fp8_family::fnuz ? "fnuz" : "none";
}

/// The family's e4m3 and e5m2 formats (OCP for `none`, the interchange default).
FP8Q_HD constexpr format e4m3_of(fp8_family f) {
  return f == fp8_family::fnuz ? format::e4m3fnuz : format::e4m3fn;
}
FP8Q_HD constexpr format e5m2_of(fp8_family f) {
  return f == fp8_family::fnuz ? format::e5m2fnuz : format::e5m2;
}

enum class gpu_vendor : std::uint8_t { unknown, nvidia, amd };

/// What fp8q needs to know about one GPU architecture, parsed from its name.
struct arch_info {
  gpu_vendor vendor = gpu_vendor::unknown;
  int version = 0;        ///< NVIDIA: 10*major+minor (90 for sm_90); AMD: gfx number as hex (0x942)
  fp8_family family = fp8_family::none;
  int wave_size = 0;      ///< threads that execute in lockstep (32 NVIDIA/RDNA, 64 CDNA)
  bool valid = false;     ///< false when the name was not understood
};

namespace detail {

constexpr int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace detail

/// Family of an NVIDIA compute capability (FP8 tensor cores from sm_89 on).
constexpr arch_info nvidia_arch(int major, int minor) {
  arch_info a;
  a.vendor = gpu_vendor::nvidia;
  a.version = major * 10 + minor;
  a.family = a.version >= 89 ? fp8_family::ocp : fp8_family::none;
  a.wave_size = 32;
  a.valid = major > 0 && minor >= 0 && minor < 10;
  return a;
}

/// Family of an AMD gfx number (0x942 for "gfx942").
constexpr arch_info amd_arch(int gfx) {
  arch_info a;
  a.vendor = gpu_vendor::amd;
  a.version = gfx;
  const int major = gfx >> 8;  // 9 CDNA/GCN, 10-12 RDNA
  a.wave_size = major == 9 ? 64 : 32;
  if (gfx == 0x940 || gfx == 0x941 || gfx == 0x942) {
    a.family = fp8_family::fnuz;
  } else if (gfx == 0x950 || major == 0x12) {
    a.family = fp8_family::ocp;
  } else {
    a.family = fp8_family::none;
  }
  a.valid = gfx > 0;
  return a;
}

/// Parse an architecture name: AMD "gfx942", "gfx942:sramecc+:xnack-" (hipDeviceProp_t::
/// gcnArchName), or NVIDIA "sm_90", "sm_90a", "compute_90", "sm_100". Unknown names give
/// valid == false.
constexpr arch_info parse_arch(std::string_view name) {
  if (name.substr(0, 3) == "gfx") {
    std::string_view digits = name.substr(3);
    const auto colon = digits.find(':');
    if (colon != std::string_view::npos) digits = digits.substr(0, colon);
    if (digits.empty() || digits.size() > 4) return {};
    int gfx = 0;
    for (char c : digits) {
      const int d = detail::hex_digit(c);
      if (d < 0) return {};
      gfx = gfx * 16 + d;
    }
    // "gfx1100" is read as hex 0x1100: major 0x11, matching how the gfx names are formed.
    return amd_arch(gfx);
  }
  std::string_view digits;
  if (name.substr(0, 3) == "sm_") digits = name.substr(3);
  else if (name.substr(0, 8) == "compute_") digits = name.substr(8);
  else return {};
  while (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.remove_suffix(1);
  if (digits.size() < 2 || digits.size() > 3) return {};
  int v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return {};
    v = v * 10 + (c - '0');
  }
  return nvidia_arch(v / 10, v % 10);
}

/// Family of the architecture being compiled for, from the target macros. Meaningful in a device
/// pass only (FP8Q_DEVICE_PASS); in host code it is `none`, because one host binary serves every
/// device: ask the run-time query (fp8q/device.hpp) there.
FP8Q_HD constexpr fp8_family compiled_fp8_family() {
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
  return fp8_family::fnuz;
#elif defined(__gfx950__) || defined(__gfx1200__) || defined(__gfx1201__)
  return fp8_family::ocp;
#elif defined(__HIP_DEVICE_COMPILE__)
  return fp8_family::none;
#elif defined(__CUDA_ARCH__)
  return __CUDA_ARCH__ >= 890 ? fp8_family::ocp : fp8_family::none;
#else
  return fp8_family::none;
#endif
}

/// Wave (warp) size of the architecture being compiled for; 0 in host code.
FP8Q_HD constexpr int compiled_wave_size() {
#if defined(__HIP_DEVICE_COMPILE__) && defined(__AMDGCN_WAVEFRONT_SIZE__)
  return __AMDGCN_WAVEFRONT_SIZE__;
#elif defined(__HIP_DEVICE_COMPILE__) && defined(__AMDGCN_WAVEFRONT_SIZE)
  return __AMDGCN_WAVEFRONT_SIZE;
#elif defined(__CUDA_ARCH__)
  return 32;
#else
  return 0;
#endif
}

}  // namespace fp8q
