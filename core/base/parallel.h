// Parallel loops and task hand-offs on TBB, the one way hlogym code runs
// work on other threads. Besides naming the two loop shapes the code base
// uses, it tells ThreadSanitizer about TBB's hand-offs: Debian's libtbb is not
// built with -fsanitize=thread, so without these edges TSan reports every
// read inside a task of data written before the task was spawned.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/task_arena.h"

#if defined(__SANITIZE_THREAD__)
#define HLOGYM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HLOGYM_TSAN 1
#endif
#endif

#ifdef HLOGYM_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace hlogym {

// A happens-before edge TSan cannot see: everything a thread did before
// HandOff(edge) happens before everything after TakeOver(edge) on another.
// One object per direction (spawn, join). No-ops in other builds.
class HandOffEdge {
 public:
  void HandOff() {
#ifdef HLOGYM_TSAN
    __tsan_release(this);
#endif
  }
  void TakeOver() {
#ifdef HLOGYM_TSAN
    __tsan_acquire(this);
#endif
  }

 private:
  char unused_ = 0;  // a distinct address per edge
};

// The function object ParallelFor hands TBB. TBB copies it into its tasks,
// on whichever thread splits the range, after our spawn edge was released,
// and recycles a finished task's memory for the next task's copy: TSan saw
// neither (a range of two chunks, stolen whole, read its copy before any TBB
// frame did). So every access to a copy is bracketed: acquire its address
// before, release it after, whoever makes, reads or remakes it.
template <typename Body>
class LoopTask {
 public:
  LoopTask(Body& body, HandOffEdge& spawn, HandOffEdge& join) {
    Acquire(this);
    body_ = &body;
    spawn_ = &spawn;
    join_ = &join;
    Release(this);
  }
  LoopTask(const LoopTask& other) {
    Acquire(this);
    Acquire(&other);
    body_ = other.body_;
    spawn_ = other.spawn_;
    join_ = other.join_;
    Release(&other);
    Release(this);
  }
  LoopTask& operator=(const LoopTask&) = delete;
  void operator()(const tbb::blocked_range<int64_t>& range) const {
    Acquire(this);
    Body* body = body_;
    HandOffEdge* spawn = spawn_;
    HandOffEdge* join = join_;
    Release(this);
    spawn->TakeOver();
    (*body)(range.begin(), range.end());
    join->HandOff();
  }

 private:
  static void Acquire([[maybe_unused]] const void* copy) {
#ifdef HLOGYM_TSAN
    __tsan_acquire(const_cast<void*>(copy));
#endif
  }
  static void Release([[maybe_unused]] const void* copy) {
#ifdef HLOGYM_TSAN
    __tsan_release(const_cast<void*>(copy));
#endif
  }

  Body* body_;
  HandOffEdge* spawn_;
  HandOffEdge* join_;
};

// Runs body(lo, hi) over [begin, end) in chunks of at least `grain`, on the
// current TBB arena; returns once every chunk has run.
template <typename Body>
void ParallelFor(int64_t begin, int64_t end, int64_t grain, Body&& body) {
  HandOffEdge spawn, join;
  spawn.HandOff();
  tbb::parallel_for(tbb::blocked_range<int64_t>(begin, end, grain > 0 ? grain : 1),
                    LoopTask<std::remove_reference_t<Body>>(body, spawn, join));
  join.TakeOver();
}

// Runs body(i) for every i in [begin, end), one task each where TBB sees fit.
template <typename Body>
void ParallelForEach(int64_t begin, int64_t end, Body&& body) {
  ParallelFor(begin, end, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) body(i);
  });
}

// ParallelFor from inside a task that holds thread-local state (a buffer
// the loop reads): while it waits for the chunks, the calling thread runs
// only chunks of this loop, never another task of the arena that could
// reuse that state before the loop is done. On an arena of one thread, or
// for under two chunks (2 x `grain` items), the body runs on the calling
// thread alone, in one call.
template <typename Body>
void ParallelForIsolated(int64_t begin, int64_t end, int64_t grain, Body&& body) {
  if (end - begin < 2 * grain || tbb::this_task_arena::max_concurrency() < 2) {
    body(begin, end);
    return;
  }
  tbb::this_task_arena::isolate([&] { ParallelFor(begin, end, grain, body); });
}

}  // namespace hlogym
