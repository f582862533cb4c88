#include "envs/measurement_worker.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/base/parallel.h"
#include "core/base/status_macros.h"
#include "core/ir/fingerprint.h"
#include "core/text/parser.h"
#include "envs/runtime_source.h"

namespace hlogym::measurement_worker {
namespace {

// Appends plain values and length-prefixed strings to a message.
class Writer {
 public:
  template <typename T>
  void Put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void PutString(std::string_view s) {
    Put<uint64_t>(s.size());
    bytes_.append(s);
  }
  void PutStatus(const absl::Status& status) {
    Put(static_cast<int32_t>(status.code()));
    PutString(std::string(status.message()));
  }
  std::string Take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

// Reads what Writer wrote; a short or malformed message is an error, not a
// crash (the bytes come from another process).
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  absl::StatusOr<T> Get() {
    static_assert(std::is_trivially_copyable_v<T>);
    if (bytes_.size() < sizeof(T)) return Truncated();
    T value;
    std::memcpy(&value, bytes_.data(), sizeof(T));
    bytes_.remove_prefix(sizeof(T));
    return value;
  }
  absl::StatusOr<std::string> GetString() {
    ASSIGN_OR_RETURN(const uint64_t size, Get<uint64_t>());
    if (bytes_.size() < size) return Truncated();
    std::string s(bytes_.substr(0, size));
    bytes_.remove_prefix(size);
    return s;
  }
  // Reads a status into `out`; the return says whether the bytes held one.
  absl::Status GetStatus(absl::Status& out) {
    ASSIGN_OR_RETURN(const int32_t code, Get<int32_t>());
    ASSIGN_OR_RETURN(std::string message, GetString());
    if (code < 0 || code > static_cast<int32_t>(absl::StatusCode::kUnauthenticated)) {
      return absl::DataLossError(absl::StrCat("measurement worker message: status code ", code));
    }
    out = absl::Status(static_cast<absl::StatusCode>(code), message);
    return absl::OkStatus();
  }
  // A count of items that each take at least `item_bytes` of what is left.
  absl::StatusOr<uint32_t> GetCount(size_t item_bytes) {
    ASSIGN_OR_RETURN(const uint32_t n, Get<uint32_t>());
    if (static_cast<uint64_t>(n) * item_bytes > bytes_.size()) return Truncated();
    return n;
  }
  absl::Status Done() const {
    return bytes_.empty() ? absl::OkStatus()
                          : absl::DataLossError("measurement worker message: bytes left over");
  }

 private:
  static absl::Status Truncated() {
    return absl::DataLossError("measurement worker message: truncated");
  }
  std::string_view bytes_;
};

// Errors after which the worker should not be trusted with another
// measurement: device faults and anything unexpected.
bool LeavesWorkerUnusable(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kAborted:
      return true;
    default:
      return false;
  }
}

Reply Answer(RuntimeSource& source, const Request& request) {
  Reply reply;
  // In parallel: a prepare request carries every module of a table.
  std::vector<absl::StatusOr<std::unique_ptr<Module>>> parsed(request.modules.size());
  reply.fingerprints.resize(request.modules.size());
  ParallelForEach(0, static_cast<int64_t>(parsed.size()), [&](int64_t i) {
    parsed[i] = ParseModule(request.modules[i]);
    if (parsed[i].ok()) reply.fingerprints[i] = Fingerprint(**parsed[i]);
  });
  std::vector<std::unique_ptr<Module>> modules;
  for (absl::StatusOr<std::unique_ptr<Module>>& module : parsed) {
    if (!module.ok()) {
      reply.fingerprints.clear();
      reply.status = module.status();
      return reply;
    }
    modules.push_back(*std::move(module));
  }
  if (request.kind == RequestKind::kRuntime) {
    if (modules.size() != 1) {
      reply.status = absl::InvalidArgumentError("a runtime request takes one module");
      return reply;
    }
    absl::StatusOr<double> runtime = source.Runtime(*modules[0]);
    reply.status = runtime.status();
    if (runtime.ok()) reply.runtime = *runtime;
    reply.worker_exits = LeavesWorkerUnusable(reply.status);
    return reply;
  }
  std::vector<const Module*> views;
  for (const auto& m : modules) views.push_back(m.get());
  if (request.kind == RequestKind::kPrepare) {
    reply.prepared = source.PrepareAll(views);
    reply.worker_exits = std::any_of(reply.prepared.begin(), reply.prepared.end(),
                                     LeavesWorkerUnusable);
    return reply;
  }
  absl::StatusOr<std::vector<Measurement>> timed =
      source.MeasureInterleaved(views, request.seconds_per_module);
  reply.status = timed.status();
  if (timed.ok()) reply.measurements = *std::move(timed);
  reply.worker_exits = LeavesWorkerUnusable(reply.status);
  return reply;
}

}  // namespace

std::string EncodeRequest(const Request& request) {
  Writer w;
  w.Put(static_cast<uint8_t>(request.kind));
  w.Put(request.seconds_per_module);
  w.Put(static_cast<uint32_t>(request.modules.size()));
  for (const std::string& m : request.modules) w.PutString(m);
  return w.Take();
}

absl::StatusOr<Request> DecodeRequest(std::string_view bytes) {
  Reader r(bytes);
  Request request;
  ASSIGN_OR_RETURN(const uint8_t kind, r.Get<uint8_t>());
  if (kind != static_cast<uint8_t>(RequestKind::kRuntime) &&
      kind != static_cast<uint8_t>(RequestKind::kInterleaved) &&
      kind != static_cast<uint8_t>(RequestKind::kPrepare)) {
    return absl::DataLossError(absl::StrCat("measurement worker: unknown request kind ", kind));
  }
  request.kind = static_cast<RequestKind>(kind);
  ASSIGN_OR_RETURN(request.seconds_per_module, r.Get<double>());
  ASSIGN_OR_RETURN(const uint32_t n, r.GetCount(sizeof(uint64_t)));
  for (uint32_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(std::string text, r.GetString());
    request.modules.push_back(std::move(text));
  }
  RETURN_IF_ERROR(r.Done());
  return request;
}

std::string EncodeReply(const Reply& reply) {
  Writer w;
  w.PutStatus(reply.status);
  w.Put(reply.runtime);
  w.Put(static_cast<uint32_t>(reply.measurements.size()));
  for (const Measurement& m : reply.measurements) {
    w.Put(m.median_seconds);
    w.Put(m.min_seconds);
    w.Put(m.spread);
    w.Put(static_cast<int32_t>(m.runs));
    w.Put(static_cast<uint8_t>(m.converged));
  }
  w.Put(static_cast<uint32_t>(reply.prepared.size()));
  for (const absl::Status& verdict : reply.prepared) w.PutStatus(verdict);
  w.Put(static_cast<uint32_t>(reply.fingerprints.size()));
  for (uint64_t f : reply.fingerprints) w.Put(f);
  w.Put(static_cast<uint8_t>(reply.worker_exits));
  return w.Take();
}

absl::StatusOr<Reply> DecodeReply(std::string_view bytes) {
  Reader r(bytes);
  Reply reply;
  RETURN_IF_ERROR(r.GetStatus(reply.status));
  ASSIGN_OR_RETURN(reply.runtime, r.Get<double>());
  ASSIGN_OR_RETURN(const uint32_t measured, r.GetCount(3 * sizeof(double) + 5));
  for (uint32_t i = 0; i < measured; ++i) {
    Measurement m;
    ASSIGN_OR_RETURN(m.median_seconds, r.Get<double>());
    ASSIGN_OR_RETURN(m.min_seconds, r.Get<double>());
    ASSIGN_OR_RETURN(m.spread, r.Get<double>());
    ASSIGN_OR_RETURN(m.runs, r.Get<int32_t>());
    ASSIGN_OR_RETURN(const uint8_t converged, r.Get<uint8_t>());
    m.converged = converged != 0;
    reply.measurements.push_back(m);
  }
  ASSIGN_OR_RETURN(const uint32_t prepared, r.GetCount(sizeof(int32_t) + sizeof(uint64_t)));
  for (uint32_t i = 0; i < prepared; ++i) {
    RETURN_IF_ERROR(r.GetStatus(reply.prepared.emplace_back()));
  }
  ASSIGN_OR_RETURN(const uint32_t fingerprints, r.GetCount(sizeof(uint64_t)));
  for (uint32_t i = 0; i < fingerprints; ++i) {
    ASSIGN_OR_RETURN(const uint64_t f, r.Get<uint64_t>());
    reply.fingerprints.push_back(f);
  }
  ASSIGN_OR_RETURN(const uint8_t exits, r.Get<uint8_t>());
  reply.worker_exits = exits != 0;
  RETURN_IF_ERROR(r.Done());
  return reply;
}

absl::Status SendMessage(int fd, std::string_view payload) {
  const uint64_t size = payload.size();
  std::string bytes(reinterpret_cast<const char*>(&size), sizeof(size));
  bytes.append(payload);
  std::string_view left = bytes;
  while (!left.empty()) {
    const ssize_t sent = send(fd, left.data(), left.size(), MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          absl::StrCat("measurement worker socket: send failed: ", std::strerror(errno)));
    }
    left.remove_prefix(static_cast<size_t>(sent));
  }
  return absl::OkStatus();
}

namespace {

// Fills `out` from the socket: an error on EOF, a socket error or the
// deadline.
absl::Status ReadExactly(int fd, char* out, size_t size,
                         std::optional<Clock::time_point> deadline) {
  while (size > 0) {
    int wait_ms = -1;
    if (deadline.has_value()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - Clock::now());
      if (left.count() <= 0) return absl::DeadlineExceededError("no answer in time");
      wait_ms = static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("poll failed: ", std::strerror(errno)));
    }
    if (ready == 0) continue;  // the deadline check above ends the wait
    const ssize_t got = recv(fd, out, size, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("recv failed: ", std::strerror(errno)));
    }
    if (got == 0) return absl::UnavailableError("the peer closed the socket");
    out += got;
    size -= static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReceiveMessage(int fd, std::optional<Clock::time_point> deadline) {
  uint64_t size = 0;
  RETURN_IF_ERROR(ReadExactly(fd, reinterpret_cast<char*>(&size), sizeof(size), deadline));
  // Modules travel as text; none comes near this, so a larger count means a
  // stream out of step, not a message to allocate for.
  if (size > (uint64_t{1} << 30)) {
    return absl::DataLossError(absl::StrCat("measurement worker message of ", size, " bytes"));
  }
  std::string payload(size, '\0');
  RETURN_IF_ERROR(ReadExactly(fd, payload.data(), size, deadline));
  return payload;
}

int ServeMeasurements(int fd, std::string_view spec) {
  absl::StatusOr<std::shared_ptr<RuntimeSource>> source = MakeRuntimeSource(spec);
  Reply hello;
  hello.status = source.status();
  if (!SendMessage(fd, EncodeReply(hello)).ok() || !source.ok()) return 1;
  for (;;) {
    absl::StatusOr<std::string> message = ReceiveMessage(fd, std::nullopt);
    if (!message.ok()) return 0;  // the asking side closed the socket: done
    absl::StatusOr<Request> request = DecodeRequest(*message);
    Reply reply;
    if (request.ok()) {
      reply = Answer(**source, *request);
    } else {
      reply.status = request.status();
      reply.worker_exits = true;
    }
    if (!SendMessage(fd, EncodeReply(reply)).ok()) return 1;
    if (reply.worker_exits) return 0;
  }
}

}  // namespace hlogym::measurement_worker
