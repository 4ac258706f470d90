// fp8q — the held-tile pipeline: one read of the input for a recipe whose scale needs a whole
// strip of tiles (colwise: a column strip; rowwise into a column-major output: a band of rows).
// Each block of a persistent grid holds two tiles in shared memory: it counts one into its
// strip's amax while the other waits for its strip to be complete and is cast. The families
// (col_hold.hpp, row_band.hpp) supply what a tile is and how it is copied, counted and cast.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fp8q/detail/gpu/problem.hpp"

namespace fp8q::detail::gpu {

// The shared words the pipeline passes between its threads.
struct held_words {
  std::uint32_t ticket;
  int complete;
};

// The threads that make the pipeline's round trips to L2, each in its own wave where the block
// has enough, so that the round trips overlap instead of following each other: the asker takes
// tickets and asks whether strips are complete; the releaser makes the count's release increment
// (whose fence waits long); the first waves load a strip's amax words for the cast
// (docs/design.md, "The round trips apart").
/// The asker: the last wave's first lane (thread 0 in a block of one wave).
__device__ inline int held_asker() {
  const int n = static_cast<int>(blockDim.x), w = backend::wave_size();
  return n >= 2 * w ? n - w : 0;
}
/// The releaser: the first lane of the wave before the asker's where the block has three waves
/// or more, else thread 0.
__device__ inline int held_releaser() {
  const int n = static_cast<int>(blockDim.x), w = backend::wave_size();
  return n >= 3 * w ? n - 2 * w : 0;
}

// Tickets are taken in order (tiles along each strip, strip after strip). A block takes ticket
// k' and starts copying tile k' before it casts tile k, so tile k' lands while tile k waits.
// The rule that makes every wait end: a block blocks on a strip only once every tile it has
// taken is counted. So while a strip misses a tile, that tile is not taken yet, and a block that
// waits on no strip takes it, as long as more blocks of the grid run at once than a strip has
// tiles (the families' accepts() ask for twice that of the device's occupancy). When tile k's
// strip is already complete as tile k' goes out, tile k is cast while tile k' lands, and tile k'
// is counted after.
//   at(k)              the tile of ticket k (a value the other calls take)
//   copy(slot, t)      start copying tile t into slot (asynchronous copies, committed)
//   count(slot, t)     after the copy landed and a barrier: add the tile to its strip's amax;
//                      the pipeline then passes a barrier and the releaser counts the tile into
//                      counter(t) with release
//   counter(t)         t's strip's counter, complete at `needed` counts (the asker acquires it)
//   cast(slot, t)      cast the tile, once the asker has seen its strip complete and a barrier
//                      followed (the pipeline waits for that)
// Where the whole block waits is what the pipeline costs (docs/design.md, "Holding tiles on
// chip", the barrier cuts): the asker takes the next ticket and asks whether the held tile's
// strip is complete before one barrier (both round trips in flight together, and beside the
// releaser's fence); a strip seen complete is not asked again before the cast. Every path from
// that barrier to the next ask passes another barrier (the count's, or the wait's), so the asker
// may write the words again, and the copy into the slot cast last comes after the barrier.
// CountFirst: count tile k' before casting tile k even when tile k's strip is complete. The
// count's release then waits on no stores of the cast; it measured faster where the cast is long
// (the software encoder) and, on an H100, slower where it is short (the hardware converter);
// each family's call says which order it takes and why.
template <bool CountFirst, class At, class Copy, class Count, class Counter, class Cast>
__device__ inline void hold_and_cast(std::uint32_t* tickets, std::int64_t items, held_words& w, At at, Copy copy,
                                     Count count_amax, Counter counter, std::int64_t needed, Cast cast) {
  const int tid = static_cast<int>(threadIdx.x);
  const int asker = held_asker();
  const int releaser = held_releaser();
  auto count = [&](int slot, const auto& t) {
    count_amax(slot, t);
    backend::block_sync();  // every thread's amax atomics before the release
    if (tid == releaser) backend::count_release(counter(t));
  };
  auto complete = [&](const auto& t) { return static_cast<std::int64_t>(backend::count_acquire(counter(t))) >= needed; };
  if (tid == asker) w.ticket = backend::take_ticket(tickets);
  backend::block_sync();
  const std::int64_t k = w.ticket;
  if (k >= items) return;
  auto cur = at(k);
  copy(0, cur);
  backend::async_wait<0>();
  backend::block_sync();
  count(0, cur);
  int s = 0;
  for (;;) {
    if (tid == asker) {
      const std::uint32_t ticket = backend::take_ticket(tickets);
      const bool ready = complete(cur);
      w.ticket = ticket;
      w.complete = ready ? 1 : 0;
    }
    backend::block_sync();
    const std::int64_t k2 = w.ticket;
    const bool more = k2 < items;
    const bool ready = w.complete != 0;
    decltype(cur) nxt{};
    if (more) {
      nxt = at(k2);
      copy(s ^ 1, nxt);
    }
    if (more && (CountFirst || !ready)) {  // count tile k' before blocking on tile k's strip
      backend::async_wait<0>();
      backend::block_sync();
      count(s ^ 1, nxt);
    }
    if (!ready) {  // wait for tile k's strip
      if (tid == asker) {
        while (!complete(cur)) backend::spin_pause();
      }
      backend::block_sync();
    }
    cast(s, cur);
    if (!more) break;
    if (!CountFirst && ready) {
      backend::async_wait<0>();
      backend::block_sync();
      count(s ^ 1, nxt);
    }
    s ^= 1;
    cur = nxt;
  }
}

// The held-tile families' workspace, zeroed before the launch: `words` amax words, then one
// counter per strip and the ticket counter.
struct held_workspace {
  std::size_t amax_bytes = 0;
  std::size_t counter_bytes = 0;
  held_workspace(std::int64_t words, std::int64_t strips)
      : amax_bytes(round_up_256(static_cast<std::size_t>(words) * 4)),
        counter_bytes(static_cast<std::size_t>(strips + 1) * 4) {}
  std::size_t bytes() const { return amax_bytes + round_up_256(counter_bytes); }
  std::size_t zeroed() const { return amax_bytes + counter_bytes; }
  std::uint32_t* amax(void* ws) const { return static_cast<std::uint32_t*>(ws); }  // [words]
  std::uint32_t* done(void* ws) const {  // [strips]
    return reinterpret_cast<std::uint32_t*>(static_cast<char*>(ws) + amax_bytes);
  }
  std::uint32_t* tickets(void* ws) const { return done(ws) + (counter_bytes / 4 - 1); }  // [1]
};

/// Blocks of Kernel (threads each) one multiprocessor of dev holds at once; 0 where the query
/// fails.
template <auto Kernel>
int held_blocks_per_mp(const backend::device_facts& dev, int threads) {
  int per_mp = 0;
  return backend::resident_blocks<Kernel>(dev, threads, &per_mp) == status::success ? per_mp : 0;
}

/// Blocks of Kernel (threads each) the device holds at once; 0 where the query fails.
template <auto Kernel>
std::int64_t held_capacity(const backend::device_facts& dev, int threads) {
  return static_cast<std::int64_t>(held_blocks_per_mp<Kernel>(dev, threads)) * dev.multiprocessors;
}

/// Fewest blocks per multiprocessor (held_blocks_per_mp) at which the automatic walk takes a
/// held-tile family; by name it runs wherever every wait ends.
// The pipeline keeps two tiles per block, so fewer blocks keep fewer tiles in flight: on the
// H200, 6 blocks of 128 threads ran well above the two-read families and 4 of 256 either side of
// them. A gfx942 compute unit (64 KiB of LDS) holds one block of either family, two waves for
// four SIMDs, so the walk takes row_transpose and col_relay there (docs/design.md, "Holding
// tiles on chip", where the walk takes them).
inline constexpr int held_min_blocks = 4;

}  // namespace fp8q::detail::gpu
