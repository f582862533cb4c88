// The calling thread's CPU time. Timings that must not count the
// neighbours on a shared machine (the pool's schedule, kernel compiles,
// benchmarks) read this rather than a wall clock.
#pragma once

#include <ctime>

namespace hlogym {

inline double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace hlogym
