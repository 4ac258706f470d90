// fp8q — the umbrella header: formats, conversion, scale rules, spec, tuning, views, validation
// and the host reference backend (fp8q::host::quantize / dequantize). The GPU entry points join
// here when fp8q is compiled by a GPU toolchain.
#pragma once

#include "fp8q/convert.hpp"
#include "fp8q/format.hpp"
#include "fp8q/host/quantize.hpp"

#include "fp8q/scale.hpp"
#include "fp8q/spec.hpp"
#include "fp8q/status.hpp"
#include "fp8q/tuning.hpp"
#include "fp8q/validate.hpp"
#include "fp8q/views.hpp"

// GPU entry points when compiled by nvcc (fp8q::cuda) or hipcc (fp8q::hip), or for the emulator.
#if FP8Q_TOOLCHAIN_CUDA || FP8Q_TOOLCHAIN_HIP || FP8Q_TOOLCHAIN_EMU
#include "fp8q/gpu/quantize.hpp"
#endif
