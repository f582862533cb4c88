// hlogym_measure_worker: the process an isolated runtime source measures in
// (envs/isolated_runtime_source.h starts it; envs/measurement_worker.h is the
// protocol). It talks on file descriptor 3 and dies with the process that
// started it.
//
//   hlogym_measure_worker --parent PID SPEC      e.g. SPEC = "gpu(isolate=0)"
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "envs/measurement_worker.h"

int main(int argc, char** argv) {
  if (argc != 4 || std::string(argv[1]) != "--parent") {
    std::fprintf(stderr,
                 "usage: %s --parent PID SPEC (started by hlogym's isolated runtime sources, "
                 "not by hand)\n",
                 argv[0]);
    return 2;
  }
  // A worker outliving its parent would hold the GPU. Its socket closing
  // ends the loop, but not a kernel that hangs; so a watchdog checks that
  // the parent is still there. (PR_SET_PDEATHSIG would fire when the parent
  // *thread* ends, and a pool's threads may come and go.)
  const pid_t parent = static_cast<pid_t>(std::atoll(argv[2]));
  if (getppid() != parent) return 1;
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (getppid() != parent) std::_Exit(1);
    }
  }).detach();
  return hlogym::measurement_worker::ServeMeasurements(3, argv[3]);
}
