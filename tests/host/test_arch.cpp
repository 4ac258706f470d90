// Architecture names -> FP8 family and wave size, and the host-only device query.
#include <catch2/catch.hpp>

#include <string_view>

#include "fp8q/arch.hpp"
#include "fp8q/device.hpp"

namespace {

using fp8q::fp8_family;
using fp8q::gpu_vendor;

struct arch_case {
  std::string_view name;
  gpu_vendor vendor;
  int version;
  fp8_family family;
  int wave_size;
};

// Families from the vendors' ISA documents: MI300 (gfx940/941/942) computes in the fnuz formats,
// MI355X (gfx950), RDNA4 (gfx12xx) and NVIDIA from sm_89 in the OCP ones; CDNA runs 64-wide
// waves, RDNA and NVIDIA 32-wide.
constexpr arch_case cases[] = {
    {"gfx90a", gpu_vendor::amd, 0x90a, fp8_family::none, 64},
    {"gfx90a:sramecc+:xnack-", gpu_vendor::amd, 0x90a, fp8_family::none, 64},
    {"gfx940", gpu_vendor::amd, 0x940, fp8_family::fnuz, 64},
    {"gfx941", gpu_vendor::amd, 0x941, fp8_family::fnuz, 64},
    {"gfx942", gpu_vendor::amd, 0x942, fp8_family::fnuz, 64},
    {"gfx942:sramecc+:xnack-", gpu_vendor::amd, 0x942, fp8_family::fnuz, 64},
    {"gfx950", gpu_vendor::amd, 0x950, fp8_family::ocp, 64},
    {"gfx1100", gpu_vendor::amd, 0x1100, fp8_family::none, 32},
    {"gfx1201", gpu_vendor::amd, 0x1201, fp8_family::ocp, 32},
    {"sm_80", gpu_vendor::nvidia, 80, fp8_family::none, 32},
    {"sm_89", gpu_vendor::nvidia, 89, fp8_family::ocp, 32},
    {"sm_90", gpu_vendor::nvidia, 90, fp8_family::ocp, 32},
    {"sm_90a", gpu_vendor::nvidia, 90, fp8_family::ocp, 32},
    {"compute_90", gpu_vendor::nvidia, 90, fp8_family::ocp, 32},
    {"sm_100", gpu_vendor::nvidia, 100, fp8_family::ocp, 32},
};

}  // namespace

TEST_CASE("parse_arch maps names to family and wave size", "[host]") {
  for (const arch_case& c : cases) {
    INFO(c.name);
    const fp8q::arch_info a = fp8q::parse_arch(c.name);
    CHECK(a.valid);
    CHECK(a.vendor == c.vendor);
    CHECK(a.version == c.version);
    CHECK(a.family == c.family);
    CHECK(a.wave_size == c.wave_size);
  }
}

TEST_CASE("parse_arch rejects names it does not understand", "[host]") {
  const std::string_view bad[] = {"", "gfx", "sm_", "foo", "gfxzz", "sm_9", "sm_x0", "compute_",
                                  "GFX942", "gfx:sramecc+"};
  for (std::string_view name : bad) {
    INFO('"' << name << '"');
    const fp8q::arch_info a = fp8q::parse_arch(name);
    CHECK_FALSE(a.valid);
    CHECK(a.family == fp8_family::none);
  }
}

TEST_CASE("parse_arch works in constant expressions", "[host]") {
  static_assert(fp8q::parse_arch("gfx942:sramecc+:xnack-").family == fp8_family::fnuz);
  static_assert(fp8q::parse_arch("sm_90a").family == fp8_family::ocp);
  static_assert(!fp8q::parse_arch("gfxzz").valid);
  SUCCEED();
}

TEST_CASE("e4m3_of and e5m2_of pick the family's formats", "[host]") {
  CHECK(fp8q::e4m3_of(fp8_family::ocp) == fp8q::format::e4m3fn);
  CHECK(fp8q::e5m2_of(fp8_family::ocp) == fp8q::format::e5m2);
  CHECK(fp8q::e4m3_of(fp8_family::fnuz) == fp8q::format::e4m3fnuz);
  CHECK(fp8q::e5m2_of(fp8_family::fnuz) == fp8q::format::e5m2fnuz);
  // No FP8 hardware: the OCP formats, the interchange default.
  CHECK(fp8q::e4m3_of(fp8_family::none) == fp8q::format::e4m3fn);
  CHECK(fp8q::e5m2_of(fp8_family::none) == fp8q::format::e5m2);
  CHECK(std::string_view(fp8q::to_string(fp8_family::fnuz)) == "fnuz");
  CHECK(std::string_view(fp8q::to_string(fp8_family::ocp)) == "ocp");
  CHECK(std::string_view(fp8q::to_string(fp8_family::none)) == "none");
}

TEST_CASE("host code reports no compiled family", "[host]") {
  // One host binary serves every device, so only the run-time query may answer there.
  CHECK(fp8q::compiled_fp8_family() == fp8_family::none);
  CHECK(fp8q::compiled_wave_size() == 0);
}

TEST_CASE("a host-only build sees no device", "[host]") {
  int n = -1;
  CHECK(fp8q::device_count(&n) == fp8q::status::no_device);
  CHECK(n == 0);
  CHECK(fp8q::device_count(nullptr) == fp8q::status::null_pointer);
  fp8q::device_info info;
  CHECK(fp8q::query_device(0, &info) == fp8q::status::no_device);
  CHECK(fp8q::query_device(0, nullptr) == fp8q::status::null_pointer);
}
