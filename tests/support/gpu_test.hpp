// tests/support/gpu_test.hpp — the rules every GPU test program follows. GPU tests are plain
// programs (no Catch2, which the GPU machine may lack):
//
//   int main() {
//     if (!fp8q_test::gpu_visible()) return fp8q_test::skip_exit_code;  // "skipped: no GPU"
//     fp8q_test::checker check("rowwise");
//     FP8Q_TEST_CHECK(check, bytes_equal);
//     FP8Q_TEST_CUDA(check, cudaDeviceSynchronize());
//     return check.finish();  // 0 when every check passed, 1 otherwise
//   }
//
// Exit 77 is registered as SKIP_RETURN_CODE by fp8q_add_gpu_test, so a machine without a GPU
// reports the test as skipped, never as passed.
#pragma once

#include <cstdio>

#include "fp8q/device.hpp"

namespace fp8q_test {

inline constexpr int skip_exit_code = 77;

/// True when at least one GPU is visible; otherwise prints "skipped: no GPU (...)".
inline bool gpu_visible() {
  int count = 0;
  const fp8q::status st = fp8q::device_count(&count);
  if (st == fp8q::status::success && count > 0) return true;
  std::printf("skipped: no GPU (%s)\n", fp8q::to_string(st));
  return false;
}

/// Counts checks and failures, printing each failure with its location.
class checker {
 public:
  explicit checker(const char* name) : name_(name) {}

  bool check(bool ok, const char* what, const char* file, int line) {
    ++checks_;
    if (!ok) {
      ++failures_;
      std::printf("%s:%d: FAILED: %s\n", file, line, what);
    }
    return ok;
  }

  int failures() const { return failures_; }

  /// Prints the summary; the program's exit code.
  int finish() const {
    std::printf("%s: %d checks, %d failed\n", name_, checks_, failures_);
    return failures_ == 0 ? 0 : 1;
  }

 private:
  const char* name_;
  int checks_ = 0;
  int failures_ = 0;
};

}  // namespace fp8q_test

#define FP8Q_TEST_CHECK(checker, ...) (checker).check((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)

#if FP8Q_TOOLCHAIN_CUDA || FP8Q_TOOLCHAIN_EMU
// A CUDA runtime call that must succeed (the emulator's stand-in too: tests/emu); the error string
// goes into the failure message.
#define FP8Q_TEST_CUDA(checker, ...)                                                     \
  [&](cudaError_t fp8q_test_err) {                                                       \
    if (fp8q_test_err != cudaSuccess) std::printf("%s\n", cudaGetErrorString(fp8q_test_err)); \
    return (checker).check(fp8q_test_err == cudaSuccess, #__VA_ARGS__, __FILE__, __LINE__); \
  }(__VA_ARGS__)
#endif
