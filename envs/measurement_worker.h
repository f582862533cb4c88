// The measurement worker's protocol, both ends. The worker is a child process
// that owns a measured runtime source (the GPU's context, the CPU backend's
// JIT) and answers measurement requests over a socket, so that a kernel that
// crashes, hangs or poisons the device fails one measurement instead of the
// process that asked (envs/isolated_runtime_source.h is the asking side,
// envs/worker/hlogym_measure_worker.cc the worker's main).
//
// Every message is a u64 byte count and then that many bytes. The worker
// first sends a hello: a reply whose status is how building its source went.
// Then it answers each request with one reply until the socket closes. Both
// ends run from one build, so the encoding is the machine's own.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backend/measurement.h"

namespace hlogym::measurement_worker {

enum class RequestKind : uint8_t {
  kRuntime = 1,      // RuntimeSource::Runtime of one module
  kInterleaved = 2,  // RuntimeSource::MeasureInterleaved of several
  kPrepare = 3,      // RuntimeSource::PrepareAll of several (compiled in parallel)
};

struct Request {
  RequestKind kind = RequestKind::kRuntime;
  double seconds_per_module = 0;     // kInterleaved
  std::vector<std::string> modules;  // HLO text
};

struct Reply {
  absl::Status status;
  double runtime = 0;                      // kRuntime
  std::vector<Measurement> measurements;   // kInterleaved
  std::vector<absl::Status> prepared;      // kPrepare: one verdict per module
  std::vector<uint64_t> fingerprints;      // of the modules as the worker parsed them
  // The worker exits after this reply: the error may have left its device
  // unusable (a CUDA context is after an illegal address), so the next
  // request goes to a new one.
  bool worker_exits = false;
};

std::string EncodeRequest(const Request& request);
absl::StatusOr<Request> DecodeRequest(std::string_view bytes);
std::string EncodeReply(const Reply& reply);
absl::StatusOr<Reply> DecodeReply(std::string_view bytes);

// Sends one message (never raises SIGPIPE; a closed peer is an error).
absl::Status SendMessage(int fd, std::string_view payload);
// Receives one message. UnavailableError when the peer closed the socket,
// DeadlineExceededError when `deadline` passed first.
using Clock = std::chrono::steady_clock;
absl::StatusOr<std::string> ReceiveMessage(int fd, std::optional<Clock::time_point> deadline);

// The worker's loop on socket `fd`: builds the source from `spec` (e.g.
// "gpu(min_runs=5)"), says hello, then answers requests until the socket
// closes or an error means the worker should not go on. Returns the
// process's exit code.
int ServeMeasurements(int fd, std::string_view spec);

}  // namespace hlogym::measurement_worker
