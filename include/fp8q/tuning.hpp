// fp8q — the tuning: HOW a GPU kernel runs (threads, vectors, tiles, store path, atomics,
// conversion path). It never changes an output byte: tests/gpu proves that for every tuning it
// runs. The host backend ignores it. Zero fields mean "the default for this architecture",
// resolved by resolve_tuning(), the one constexpr function that both the host-side dispatch
// (grid sizes) and the kernels (launch bounds, tile arrays) evaluate.
#pragma once

#include <cstdint>

#include "fp8q/config.hpp"
#include "fp8q/spec.hpp"

namespace fp8q {

/// Memory order of the amax atomics. Max is commutative and nothing is read back inside the
/// launch, so relaxed is enough and cheapest; acq_rel and seq_cst exist to measure that.
enum class memory_order : std::uint8_t { relaxed, acq_rel, seq_cst };

/// Scope of the amax atomics.
enum class memory_scope : std::uint8_t { device, system };

/// How a tile reaches global memory.
enum class store_path : std::uint8_t {
  automatic,  ///< staged, except direct for the colwise relay's row-major output (each the
              ///< measured faster one there, docs/design.md)
  direct,     ///< each thread stores what it computed
  staged,     ///< through a padded shared-memory/LDS tile so stores are whole coalesced lines
};

/// How tensorwise dynamic scaling finds the scale before casting.
enum class tensor_path : std::uint8_t {
  automatic,   ///< the measured faster one: two_launch (docs/design.md)
  two_launch,  ///< amax launch, then cast launch that computes the scale itself
  last_block,  ///< one cooperative launch: every block keeps part of the tensor on chip, the
               ///< last block to count in (acq_rel counter) publishes the scale, then all cast
               ///< (dense views; elsewhere, or without cooperative launches, the two launches)
};

/// How colwise finds each column's amax before casting.
enum class col_path : std::uint8_t {
  automatic,   ///< relay where the views allow it (measured fastest, docs/design.md)
  relay,       ///< one launch: tiles walk column strips in order; each block takes the amax
               ///< of one tile, then casts a tile whose strip is complete, a second read that
               ///< mostly hits L2 (row-major 16-byte aligned input; elsewhere the two launches
               ///< or the tiled kernels run)
  one_pass,    ///< thread-block cluster holding whole column strips on chip (NVIDIA sm_90+,
               ///< row-major 16-byte aligned input); falls back to two_launch where it cannot run
  two_launch,  ///< amax launch, then a cast launch that re-reads the input (every toolchain)
};

/// Which f32 -> FP8 conversion the kernels use.
enum class convert_path : std::uint8_t {
  automatic,  ///< hardware where proven identical on every input, software elsewhere
  software,   ///< fp8q::encode (the definition)
  hardware,   ///< NVIDIA cvt.rn.satfinite (sm_89+) / AMD v_cvt_pk_fp8_f32 after a NaN-keeping clamp
};

/// A tuning. Zero / automatic fields take the architecture's defaults.
struct tuning {
  int threads = 0;       ///< threads per block (a multiple of the wave size)
  int tile_rows = 0;     ///< rows per block tile (colwise / transposed paths)
  int tile_cols = 0;     ///< columns per block tile
  store_path store = store_path::automatic;
  memory_order amax_order = memory_order::relaxed;
  memory_scope amax_scope = memory_scope::device;
  tensor_path tensor = tensor_path::automatic;
  col_path col = col_path::automatic;
  convert_path convert = convert_path::automatic;
  friend constexpr bool operator==(const tuning&, const tuning&) = default;
};

/// Hardware facts a default tuning depends on, known at compile time for each device pass.
struct arch_traits {
  int wave_size = 32;
  int shared_bytes = 48 * 1024;  ///< static shared memory a block may use without opt-in
};

/// Fill every automatic field of `t` for spec `s` on an architecture with traits `a`. Vectors
/// are always 16 bytes where the views' alignment allows (scalar otherwise): not a tuning knob.
/// A kernel family may refine a field left at 0 before this resolves it (gpu/quantize.hpp says
/// where and carries the measurements). Evidence (NVIDIA H200, bf16 -> e4m3fn, 2026-11-29,
/// docs/benchmarks/h200-2026-11-29.md):
///   threads 256: tensorwise and delayed scaling (8 units in flight per thread: given scale
///     0.931 of copy against 0.913 with 512 threads); rowwise takes 128 per block when left
///     automatic (16384 x 5120: 0.915, 256: 0.899, 512: 0.769); one-pass colwise 512. A
///     multiple of 64, so also 4 CDNA waves.
///   tile 64 x 64 for the tiled kernels (any layout); the colwise relay and the streaming
///     colwise cast take 256 x 64 when the tile is left automatic (relay 102.6 us against
///     105.2 us for 128 x 128 at 16384 x 5120; gpu/quantize.hpp has the rest).
constexpr tuning resolve_tuning(tuning t, const spec& s, arch_traits a) {
  (void)s;
  if (t.threads == 0) t.threads = 256;
  if (t.tile_rows == 0) t.tile_rows = 64;
  if (t.tile_cols == 0) t.tile_cols = 64;
  if (t.tensor == tensor_path::automatic) t.tensor = tensor_path::two_launch;
  // convert stays `automatic` here: the backend resolves it per device pass (hardware on NVIDIA
  // sm_89+ for e4m3fn/e5m2, proven identical on all 2^32 inputs on an H200; software on AMD,
  // where the hardware path is ISA-checked but was never run).
  (void)a;
  return t;
}

/// Why a tuning is rejected (none when fine).
enum class tuning_error : std::uint8_t { none, threads, tile };

constexpr tuning_error validate(const tuning& t, arch_traits a) {
  if (t.threads != 0 && (t.threads < a.wave_size || t.threads > 1024 || t.threads % a.wave_size))
    return tuning_error::threads;
  if (t.tile_rows < 0 || t.tile_cols < 0 || t.tile_rows % 16 || t.tile_cols % 16)
    return tuning_error::tile;
  return tuning_error::none;
}

}  // namespace fp8q
