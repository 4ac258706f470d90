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

/// Which kernel family runs a call (detail/gpu/families/). `automatic` walks the granularity's
/// ordered path list (detail/gpu/dispatch.hpp) and runs the first family that accepts the views;
/// any other name forces that family: the call returns bad_layout when it does not accept them
/// and does not compile for a granularity the family does not serve.
enum class gpu_path : std::uint8_t {
  automatic,
  row_wave,           ///< rowwise: one wave per row, the row in registers (row-major in and out)
  row_block,          ///< rowwise: one block per row (row-major in and out)
  tensor_two_launch,  ///< tensorwise on dense views: amax launch, then a cast launch
  tensor_last_block,  ///< tensorwise on dense views: one cooperative launch; the last block to
                      ///< count in publishes the scale (opt-in, docs/design.md)
  col_relay,          ///< colwise: one launch; each block takes one tile's amax, then casts a
                      ///< tile whose strip is complete (row-major 16-byte aligned input)
  col_streaming,      ///< colwise: two streaming passes along whole rows
  col_cluster,        ///< colwise: one pass on thread-block clusters (NVIDIA sm_90+; opt-in)
  tiled,              ///< any granularity, any layouts: two launches through shared-memory tiles
  group_rowwise,      ///< per-group rowwise (groups along columns): a block per row, any layouts
  group_row_fused,    ///< per-group rowwise: each row read once, kept in registers (row-major in
                      ///< and out, 16-byte aligned input lines, G <= 1024)
  group_colwise,      ///< per-group colwise (groups along rows): a block per (group, 32-column
                      ///< strip), any layouts
  group_col_tile,     ///< per-group colwise: each group's 128-byte column strips staged in a
                      ///< shared-memory tile, read once (row-major 16-byte aligned input)
  row_transpose,      ///< rowwise into a column-major output: an amax launch, then a cast
                      ///< launch through shared-memory tiles (row-major 16-byte aligned input)
  group_col_relay,    ///< per-group colwise of one group (G = 1): col_relay over the group's
                      ///< rows; the walk takes it where the call brings its workspace
  col_hold,           ///< colwise in one launch reading the input once: each block holds two
                      ///< tiles, one counted into its strip's amax while the other waits for its
                      ///< strip and is cast (row-major 16-byte aligned input; where half the
                      ///< device holds more blocks at once than a strip has tiles)
  row_band,           ///< rowwise into a column-major output in one launch reading the input
                      ///< once: col_hold's pipeline over bands of 128 rows (row-major 16-byte
                      ///< aligned input; where half the device holds more blocks at once
                      ///< than a band has tiles)
  group_row_spans,    ///< per-group rowwise: each row read once through shared memory, each
                      ///< thread on a span of consecutive units (bf16/f16, row-major in and
                      ///< out, cols % 8 == 0, G <= 256; padded outputs too)
};

/// Which f32 -> FP8 conversion the kernels use.
enum class convert_path : std::uint8_t {
  automatic,  ///< hardware where proven identical on every input, software elsewhere
  software,   ///< the branch-free encoder, byte-equal to fp8q::encode (docs/encoder.md)
  hardware,   ///< NVIDIA cvt.rn.satfinite (sm_89+; the fnuz formats as OCP codes of 2x, fixed
              ///< up) / AMD v_cvt_pk_fp8_f32 after a NaN-keeping clamp
};

/// A tuning. Zero / automatic fields take the family's defaults for the architecture. Three
/// two-byte fields, then six one-byte ones: 12 bytes, no padding (see template_argument_safe).
struct tuning {
  std::int16_t threads = 0;    ///< threads per block (a multiple of the wave size, at most 1024)
  std::int16_t tile_rows = 0;  ///< rows per block tile (colwise / transposed paths)
  std::int16_t tile_cols = 0;  ///< columns per block tile
  store_path store = store_path::automatic;
  memory_order amax_order = memory_order::relaxed;
  memory_scope amax_scope = memory_scope::device;
  convert_path convert = convert_path::automatic;
  gpu_path path = gpu_path::automatic;
  std::uint8_t units = 0;  ///< 16-byte units in flight per thread in the streaming loops of the
                           ///< tensorwise families and the colwise amax pass (0: the family's)
  friend constexpr bool operator==(const tuning&, const tuning&) = default;
};

static_assert(detail::template_argument_safe<tuning>,
              "fp8q: tuning must have no padding (clang misreads padded template arguments)");

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
  // convert stays `automatic` here: the backend resolves it per device pass (hardware on NVIDIA
  // sm_89+ for e4m3fn/e5m2, proven identical on all 2^32 inputs on an H200; software on AMD,
  // where the hardware path is ISA-checked but was never run).
  (void)a;
  return t;
}

/// Why a tuning is rejected (none when fine).
enum class tuning_error : std::uint8_t { none, threads, tile, units };

constexpr tuning_error validate(const tuning& t, arch_traits a) {
  if (t.threads != 0 && (t.threads < a.wave_size || t.threads > 1024 || t.threads % a.wave_size))
    return tuning_error::threads;
  if (t.tile_rows < 0 || t.tile_cols < 0 || t.tile_rows % 16 || t.tile_cols % 16)
    return tuning_error::tile;
  if (t.units > 32) return tuning_error::units;
  return tuning_error::none;
}

}  // namespace fp8q
