// fp8q — the 16-byte word every kernel moves (loads, stores, shared-memory tiles); its own
// header so that a toolchain adapter can name it before the building blocks (tile.hpp) exist.
#pragma once

#include <cstdint>

namespace fp8q::detail::gpu {

struct alignas(16) u32x4 {
  std::uint32_t x, y, z, w;
};

}  // namespace fp8q::detail::gpu
