// fp8q — status codes. Nothing in fp8q throws or prints; every entry point returns one of these.
#pragma once

namespace fp8q {

/// Result of every fp8q entry point. `success` is zero; everything else names the first problem
/// found, before anything was written or launched.
enum class [[nodiscard]] status : int {
  success = 0,
  null_pointer,          ///< a required pointer is null
  bad_shape,             ///< negative extent, or output extents that do not match the input
  bad_stride,            ///< leading dimension smaller than the contiguous extent
  bad_offsets_length,    ///< group offsets length differs from the group count
  offsets_not_monotonic, ///< group end offsets decrease
  offsets_out_of_range,  ///< a group end offset is negative or beyond the grouped extent
  unsupported_type,      ///< input dtype / output format / scale format pair not supported
  misaligned,            ///< a pointer or extent breaks the alignment the granularity needs
  size_overflow,         ///< an element or byte count does not fit in 64 bits
  bad_layout,            ///< a view's layout is not one this granularity accepts
  bad_workspace,         ///< workspace pointer null or smaller than the queried size
  bad_tuning,            ///< a run-time tuning value is out of range for this device
  no_device,             ///< no GPU is visible, or the device index is out of range
  device_error,          ///< the GPU runtime reported an error (query it with the runtime)
};

/// Short, stable English description of a status.
constexpr const char* to_string(status s) noexcept {
  switch (s) {
    case status::success: return "success";
    case status::null_pointer: return "null pointer";
    case status::bad_shape: return "bad shape";
    case status::bad_stride: return "bad stride (leading dimension too small)";
    case status::bad_offsets_length: return "group offsets length differs from group count";
    case status::offsets_not_monotonic: return "group offsets decrease";
    case status::offsets_out_of_range: return "group offset outside the grouped extent";
    case status::unsupported_type: return "unsupported dtype/format combination";
    case status::misaligned: return "misaligned pointer or extent";
    case status::size_overflow: return "size overflows 64 bits";
    case status::bad_layout: return "layout not accepted by this granularity";
    case status::bad_workspace: return "workspace missing or too small";
    case status::bad_tuning: return "tuning out of range";
    case status::no_device: return "no GPU device";
    case status::device_error: return "GPU runtime error";
  }
  return "unknown status";
}

}  // namespace fp8q
