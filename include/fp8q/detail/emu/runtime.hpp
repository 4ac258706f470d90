// fp8q — the emulator's runtime (tests only; detail/emu/adapter.hpp says what the emulator is):
// the CUDA spellings for a host compiler, and the threads, blocks and grids of a launch run on
// the CPU. A block's threads are fibers on one OS thread, switched only where a thread waits; the
// blocks a device holds at once run on pooled OS threads; `__shared__` is thread_local.
#pragma once

#include <ucontext.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

static_assert(FP8Q_EMULATED_GPU == 32 || FP8Q_EMULATED_GPU == 64, "fp8q: FP8Q_EMULATED_GPU is the wave size, 32 or 64");

// The CUDA spellings the neutral GPU code uses, for a host compiler.
#define __global__
#define __device__
#define __host__
#define __shared__ thread_local
#define __launch_bounds__(...)
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint2 {
  unsigned x, y;
};
struct float2 {
  float x, y;
};
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline float2 make_float2(float x, float y) { return {x, y}; }

namespace fp8q::emu {

inline constexpr int wave = FP8Q_EMULATED_GPU;

/// The emulated device: few multiprocessors (so that persistent grids stay small) with an
/// H200's shared memory, at either wave size. The build's constants stay CUDA's (a family's
/// FP8Q_TOOLCHAIN_HIP choices, e.g. gfx942's smaller tiles, are not taken): 64-lane waves check
/// the wave arithmetic, not an AMD device.
inline constexpr int multiprocessors = 4;
inline constexpr int shared_optin = 232448;
inline constexpr int shared_per_mp = 233472;

/// A stream: launches run when enqueued, or are recorded while a graph is captured.
struct stream {
  bool capturing = false;
  std::vector<std::function<void()>> recorded;
};

inline void fail(const char* what) {
  std::fprintf(stderr, "fp8q emulator: %s\n", what);
  std::abort();
}

struct block_state;

// Switching threads: on x86-64 a stack switch that saves what the calling convention keeps
// (ucontext's swapcontext makes two system calls a switch, and a block switches at every
// barrier); elsewhere ucontext.
#if defined(__x86_64__)
/// Saves the callee-saved registers on the current stack, stores its pointer in *save, and
/// resumes the stack `to` (one that switch_stack saved, or a fresh one from fresh_stack).
[[gnu::naked, gnu::noinline]] inline void switch_stack(void** /*save*/, void* /*to*/) {
  asm volatile(
      "pushq %rbp\n\t"
      "pushq %rbx\n\t"
      "pushq %r12\n\t"
      "pushq %r13\n\t"
      "pushq %r14\n\t"
      "pushq %r15\n\t"
      "subq $8, %rsp\n\t"
      "stmxcsr (%rsp)\n\t"
      "fnstcw 4(%rsp)\n\t"
      "movq %rsp, (%rdi)\n\t"
      "movq %rsi, %rsp\n\t"
      "ldmxcsr (%rsp)\n\t"
      "fldcw 4(%rsp)\n\t"
      "addq $8, %rsp\n\t"
      "popq %r15\n\t"
      "popq %r14\n\t"
      "popq %r13\n\t"
      "popq %r12\n\t"
      "popq %rbx\n\t"
      "popq %rbp\n\t"
      "ret\n\t");
}
/// A stack that switch_stack resumes into entry(): control words, six zero registers, entry's
/// address, laid out so that entry starts as if called (its stack pointer 8 past a multiple of 16).
inline void* fresh_stack(char* base, std::size_t bytes, void (*entry)()) {
  auto top = reinterpret_cast<std::uintptr_t>(base + bytes) & ~std::uintptr_t{15};
  auto* sp = reinterpret_cast<std::uint64_t*>(top - 72);
  sp[0] = 0x1F80u | (std::uint64_t{0x037Fu} << 32);  // MXCSR and the x87 control word at start-up
  for (int i = 1; i <= 6; ++i) sp[i] = 0;
  sp[7] = reinterpret_cast<std::uint64_t>(entry);
  return sp;
}
struct context {
  void* sp = nullptr;
};
inline void switch_to(context& from, context& to) { switch_stack(&from.sp, to.sp); }
inline void start_context(context& c, char* stack, std::size_t bytes, void (*entry)()) {
  c.sp = fresh_stack(stack, bytes, entry);
}
#else
struct context {
  ucontext_t uc{};
};
inline void switch_to(context& from, context& to) { swapcontext(&from.uc, &to.uc); }
inline void start_context(context& c, char* stack, std::size_t bytes, void (*entry)()) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = bytes;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
}
#endif

enum class wait : std::uint8_t { none, barrier, wave, done };

struct fiber {
  context ctx;
  dim3 thread_idx;
  int tid = 0;
  wait on = wait::none;  // what the thread waits for (none: runnable)
  bool spinning = false;  // runnable, but polling device memory
};

struct wave_state {
  int live = 0;
  int arrived = 0;
  unsigned gen = 0;
  long long slot[64] = {};
  long long seen[2][64] = {};  // the slots of generation g in seen[g & 1], read after release
};

struct block_state {
  dim3 block_idx, block_dim, grid_dim;
  int threads = 0;
  int live = 0;
  int arrived = 0;
  unsigned gen = 0;
  int all = 1;
  int all_result[2] = {1, 1};
  std::vector<wave_state> waves;
  std::vector<fiber> fibers;
  context main;
  std::function<void()> body;
};

inline thread_local block_state* tl_block = nullptr;
inline thread_local fiber* tl_fiber = nullptr;

inline void yield() { switch_to(tl_fiber->ctx, tl_block->main); }

// Releases: every thread waiting at the barrier (all live threads have arrived), or every lane
// of wave w waiting at its operation.
inline void release_barrier(block_state& b) {
  b.arrived = 0;
  b.all_result[b.gen & 1u] = b.all;
  b.all = 1;
  ++b.gen;
  for (fiber& f : b.fibers)
    if (f.on == wait::barrier) f.on = wait::none;
}
inline void release_wave(block_state& b, int w) {
  wave_state& ws = b.waves[static_cast<std::size_t>(w)];
  std::memcpy(ws.seen[ws.gen & 1u], ws.slot, sizeof ws.slot);
  ws.arrived = 0;
  ++ws.gen;
  const int first = w * wave, last = first + wave < b.threads ? first + wave : b.threads;
  for (int t = first; t < last; ++t)
    if (b.fibers[static_cast<std::size_t>(t)].on == wait::wave) b.fibers[static_cast<std::size_t>(t)].on = wait::none;
}

inline void fiber_entry() {
  block_state& b = *tl_block;
  b.body();
  fiber* f = tl_fiber;
  f->on = wait::done;
  const int w = f->tid / wave;
  --b.live;
  --b.waves[static_cast<std::size_t>(w)].live;
  // a thread that returns no longer holds back a barrier or its wave (as on the GPU for
  // barriers; a wave operation that a returned lane should have joined is the kernel's bug)
  if (b.live > 0 && b.arrived >= b.live) release_barrier(b);
  if (b.waves[static_cast<std::size_t>(w)].live > 0 && b.waves[static_cast<std::size_t>(w)].arrived >= b.waves[static_cast<std::size_t>(w)].live)
    release_wave(b, w);
  switch_to(f->ctx, b.main);
  fail("a finished thread was resumed");
}

inline constexpr std::size_t stack_bytes = 128 * 1024;

/// Thread stacks, kept for the process's lifetime and shared by the launches (a launch would
/// otherwise map and touch a fresh stack per thread).
class stack_pool {
 public:
  std::unique_ptr<char[]> take() {
    std::lock_guard<std::mutex> lock(m_);
    if (free_.empty()) return std::unique_ptr<char[]>(new char[stack_bytes]);
    std::unique_ptr<char[]> s = std::move(free_.back());
    free_.pop_back();
    return s;
  }
  void give(std::vector<std::unique_ptr<char[]>>& stacks) {
    std::lock_guard<std::mutex> lock(m_);
    for (auto& s : stacks) free_.push_back(std::move(s));
    stacks.clear();
  }
  static stack_pool& get() {
    static stack_pool pool;
    return pool;
  }

 private:
  std::mutex m_;
  std::vector<std::unique_ptr<char[]>> free_;
};

/// Runs one block: every thread a fiber, switched from wait to wait (a waiting thread is not
/// resumed before it is released), until all have returned.
inline void run_block(block_state& b, std::vector<std::unique_ptr<char[]>>& stacks) {
  const int n = b.threads;
  b.fibers.assign(static_cast<std::size_t>(n), fiber{});
  b.waves.assign(static_cast<std::size_t>((n + wave - 1) / wave), wave_state{});
  b.live = n;
  for (int t = 0; t < n; ++t) ++b.waves[static_cast<std::size_t>(t / wave)].live;
  while (stacks.size() < static_cast<std::size_t>(n)) stacks.push_back(stack_pool::get().take());
  tl_block = &b;
  for (int t = 0; t < n; ++t) {
    fiber& f = b.fibers[static_cast<std::size_t>(t)];
    f.tid = t;
    f.thread_idx = dim3(static_cast<unsigned>(t) % b.block_dim.x, static_cast<unsigned>(t) / b.block_dim.x, 0);
    start_context(f.ctx, stacks[static_cast<std::size_t>(t)].get(), stack_bytes, fiber_entry);
  }
  while (b.live > 0) {
    bool ran = false;
    bool only_spinning = true;
    for (int t = 0; t < n; ++t) {
      fiber& f = b.fibers[static_cast<std::size_t>(t)];
      if (f.on != wait::none) continue;
      tl_fiber = &f;
      f.spinning = false;
      switch_to(b.main, f.ctx);
      ran = true;
      only_spinning = only_spinning && f.spinning;
    }
    tl_fiber = nullptr;
    if (!ran && b.live > 0)
      fail("deadlock: every thread of a block waits at a barrier or a wave operation that not "
           "every thread reaches");
    if (ran && only_spinning) std::this_thread::yield();  // polling another block's progress
  }
  tl_block = nullptr;
}

/// The blocks the emulated device holds at once for blocks of `threads` threads: 1024 threads a
/// multiprocessor, at most 8 blocks (close to what an H200 holds of fp8q's kernels, whose
/// registers the emulator cannot count), and what `smem` bytes of shared memory allow.
inline int blocks_per_mp(int threads, std::size_t smem) {
  int n = 1024 / (threads > 0 ? threads : 1);
  n = n < 1 ? 1 : n > 8 ? 8 : n;
  if (smem > 0) {
    const int by_shared = static_cast<int>(shared_per_mp / (smem + 1024));
    n = n < by_shared ? n : by_shared;
  }
  return n < 1 ? 1 : n;
}

/// OS threads kept for the process's lifetime: a block's `__shared__` variables are thread_local,
/// and a new thread would zero that storage (every kernel's) first.
class worker_pool {
 public:
  /// Runs fn on n threads of the pool at once and returns when every one has returned.
  void run(int n, const std::function<void()>& fn) {
    std::lock_guard<std::mutex> one_at_a_time(run_);
    std::unique_lock<std::mutex> lk(m_);
    while (threads_.size() < static_cast<std::size_t>(n)) {
      const std::size_t id = threads_.size();
      threads_.emplace_back([this, id] { loop(id); });
    }
    job_ = &fn;
    want_ = n;
    finished_ = 0;
    ++gen_;
    start_.notify_all();
    done_.wait(lk, [&] { return finished_ == want_; });
    job_ = nullptr;
  }
  ~worker_pool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    start_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  static worker_pool& get() {
    static worker_pool pool;
    return pool;
  }

 private:
  void loop(std::size_t id) {
    unsigned seen = 0;
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      start_.wait(lk, [&] { return stop_ || (gen_ != seen && id < static_cast<std::size_t>(want_)); });
      if (stop_) return;
      seen = gen_;
      const std::function<void()>* fn = job_;
      lk.unlock();
      (*fn)();
      lk.lock();
      if (++finished_ == want_) done_.notify_all();
    }
  }
  std::mutex run_, m_;
  std::condition_variable start_, done_;
  std::vector<std::thread> threads_;
  const std::function<void()>* job_ = nullptr;
  unsigned gen_ = 0;
  int want_ = 0;
  int finished_ = 0;
  bool stop_ = false;
};

/// Runs a grid: blocks on up to `resident` OS threads at once, each taking the next block.
inline void run_grid(dim3 grid, int threads, int resident, const std::function<void()>& kernel) {
  const long long blocks = static_cast<long long>(grid.x) * grid.y * grid.z;
  if (blocks == 0 || threads <= 0) return;
  if (threads > 1024) fail("more than 1024 threads in a block");
  std::atomic<long long> next{0};
  const std::function<void()> worker = [&] {
    std::vector<std::unique_ptr<char[]>> stacks;
    for (long long i; (i = next.fetch_add(1)) < blocks;) {
      block_state b;
      b.grid_dim = grid;
      b.block_dim = dim3(static_cast<unsigned>(threads));
      b.block_idx = dim3(static_cast<unsigned>(i % grid.x), static_cast<unsigned>(i / grid.x % grid.y),
                         static_cast<unsigned>(i / (static_cast<long long>(grid.x) * grid.y)));
      b.threads = threads;
      b.body = kernel;
      run_block(b, stacks);
    }
    stack_pool::get().give(stacks);
  };
  const long long pool = blocks < resident ? blocks : resident;
  static const bool trace = std::getenv("FP8Q_EMU_TRACE") != nullptr;
  const auto start = std::chrono::steady_clock::now();
  if (pool <= 1) {
    worker();
  } else {
    worker_pool::get().run(static_cast<int>(pool), worker);
  }
  if (trace)
    std::fprintf(stderr, "fp8q emulator: grid (%u, %u, %u) x %d threads on %lld OS threads: %.1f ms\n", grid.x, grid.y,
                 grid.z, threads, pool,
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

/// Enqueues fn on s: now, or into the graph being captured.
inline void enqueue(stream* s, std::function<void()> fn) {
  if (s != nullptr && s->capturing) s->recorded.push_back(std::move(fn));
  else fn();
}

// ---- what the threads of a block do together -----------------------------------------------

inline void block_barrier() {
  block_state& b = *tl_block;
  if (++b.arrived >= b.live) {
    release_barrier(b);
    return;
  }
  tl_fiber->on = wait::barrier;
  yield();
}

/// Every live lane of the caller's wave deposits v; f(slots, lane) is the lane's result.
template <class F>
inline long long wave_exchange(long long v, F f) {
  block_state& b = *tl_block;
  const int t = tl_fiber->tid;
  const int w = t / wave;
  wave_state& ws = b.waves[static_cast<std::size_t>(w)];
  const int lane = t % wave;
  const unsigned g = ws.gen;
  ws.slot[lane] = v;
  if (++ws.arrived >= ws.live) {
    release_wave(b, w);
  } else {
    tl_fiber->on = wait::wave;
    yield();
  }
  return f(static_cast<const long long*>(ws.seen[g & 1u]), lane);
}

inline int thread_rank() { return tl_fiber->tid; }

}  // namespace fp8q::emu

#define threadIdx (::fp8q::emu::tl_fiber->thread_idx)
#define blockIdx (::fp8q::emu::tl_block->block_idx)
#define blockDim (::fp8q::emu::tl_block->block_dim)
#define gridDim (::fp8q::emu::tl_block->grid_dim)
