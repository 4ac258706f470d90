// A downstream program: uses fp8q through whichever way the consumer project found it, and
// checks a few values so a broken install (wrong headers, missing include dir) cannot pass.
#include <fp8q/convert.hpp>
#include <fp8q/device.hpp>
#include <fp8q/format.hpp>

#include <cstdio>

int main() {
  using fp8q::format;
  int failures = 0;
  const auto q = fp8q::encode<format::e4m3fn>(464.0f, fp8q::overflow::propagate);
  if (q.bits != 0x7E) {
    std::printf("FAILED: encode<e4m3fn>(464) = 0x%02X, want 0x7E\n", q.bits);
    ++failures;
  }
  if (fp8q::decode(q) != 448.0f) {
    std::printf("FAILED: decode(0x7E) = %g, want 448\n", fp8q::decode(q));
    ++failures;
  }
  if (fp8q::traits(format::e4m3fnuz).max != 240.0f) {
    std::printf("FAILED: traits(e4m3fnuz).max = %g, want 240\n", fp8q::traits(format::e4m3fnuz).max);
    ++failures;
  }
  int devices = 0;
  const fp8q::status st = fp8q::device_count(&devices);
  std::printf("consumer: 464 -> e4m3fn 0x%02X -> %g; e4m3fnuz max %g; devices: %d (%s)\n", q.bits,
              fp8q::decode(q), fp8q::traits(format::e4m3fnuz).max, devices, fp8q::to_string(st));
  return failures == 0 ? 0 : 1;
}
