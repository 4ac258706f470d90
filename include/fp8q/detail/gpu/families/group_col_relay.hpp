// fp8q — per-group colwise of ONE group (G = 1, granularity::group_col) as plain colwise over
// the group's rows (gpu_path::group_col_relay). One group is plain colwise of a row range whose
// end only the device knows; group_col_tile gives it one block per 128-byte strip (80 at 5120
// bf16 columns: fewer than two per multiprocessor), while colwise's one-launch kernels spread
// every strip over tiles: col_hold's held tiles (one read) wherever the walk would take col_hold
// for plain colwise of the same views, else the relay's tiles of 256 rows, each re-read from L2
// (docs/design.md, "Per-group colwise: one group"). Both need a zeroed workspace (column maxima,
// counters): the walk takes this family only where the call brings one (workspace_size reports
// it), else group_col_tile runs, same bytes.
// Row-major input of whole 16-byte units per line, 16-byte aligned output lines; padded outputs.
#pragma once

#include <cstdint>

#include "fp8q/detail/gpu/families/col_hold.hpp"
#include "fp8q/detail/gpu/families/col_relay.hpp"
#include "fp8q/detail/gpu/problem.hpp"

namespace fp8q::detail::gpu {

template <spec S, tuning T, class In>
struct group_col_relay {
  static constexpr gpu_path name = gpu_path::group_col_relay;
  static constexpr bool opt_in = false;
  // G and the workspace are the call's: a size query (no call yet) counts this family in
  static constexpr bool device_dependent = true;
  using relay = col_relay<S, T, In>;
  // the held pipeline over the group's rows where the walk would take col_hold for plain colwise
  // of these views (one read: plain colwise 16384x5120 0.610 of copy against the relay's 0.55)
  using hold = col_hold<S, T, In>;
  static constexpr tuning R = relay::R;
  struct plan {};

  static bool accepts(const problem<S, In>& p, plan*) {
    if (!relay::accepts(p, nullptr)) return false;
    if (p.dev == nullptr) return true;  // a size query: any G, any workspace
    if (p.groups.count != 1) return false;
    // by name it runs (a call without the workspace then gets bad_workspace); the walk takes it
    // only with the workspace at hand
    return T.path == name || p.workspace_bytes >= workspace(p.in);
  }
  static bool preferred(const problem<S, In>&) { return true; }
  static std::size_t workspace(const matrix_view<const In>& in) {
    const std::size_t r = relay::workspace(in), h = hold::workspace(in);
    return r > h ? r : h;
  }

  static status enqueue(const problem<S, In>& p, const plan&, void* workspace, gpu_stream stream) {
    const relay_group group{p.groups, p.error_word};
    if (hold::accepts(p, nullptr) && hold::preferred(p)) return hold::run(p, workspace, stream, group);
    return relay::run(p, workspace, stream, group);
  }
};

}  // namespace fp8q::detail::gpu
