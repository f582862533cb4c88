#include "envs/isolated_runtime_source.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/base/parallel.h"
#include "core/base/status_macros.h"
#include "core/ir/fingerprint.h"
#include "core/text/printer.h"

extern char** environ;

namespace hlogym {
namespace {

using measurement_worker::Clock;
using measurement_worker::Reply;
using measurement_worker::Request;
using measurement_worker::RequestKind;

// The worker finds its socket here (envs/worker/hlogym_measure_worker.cc).
constexpr int kWorkerSocketFd = 3;

std::string DescribeWaitStatus(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return absl::StrCat("was killed by signal ", signal, " (", strsignal(signal), ")");
  }
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  return "ended";
}

Clock::time_point DeadlineIn(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

}  // namespace

std::string MeasureWorkerPath() {
  if (const char* path = std::getenv("HLOGYM_MEASURE_WORKER"); path != nullptr && *path) {
    return path;
  }
  // An installed package keeps the worker beside its extension module.
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&MeasureWorkerPath), &info) != 0 &&
      info.dli_fname != nullptr && std::strchr(info.dli_fname, '/') != nullptr) {
    std::string beside(info.dli_fname);
    beside.erase(beside.find_last_of('/') + 1);
    beside += "hlogym_measure_worker";
    if (access(beside.c_str(), X_OK) == 0) return beside;
  }
  return HLOGYM_MEASURE_WORKER_PATH;
}

absl::StatusOr<std::shared_ptr<IsolatedRuntimeSource>> IsolatedRuntimeSource::Create(
    std::string name, std::string worker_spec, IsolationOptions options) {
  if (!(options.timeout_seconds > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("reward source `", name,
                                                   "`: need timeout_s > 0, got ",
                                                   options.timeout_seconds));
  }
  std::shared_ptr<IsolatedRuntimeSource> source(
      new IsolatedRuntimeSource(std::move(name), std::move(worker_spec), options));
  std::lock_guard<std::mutex> lock(source->mutex_);
  RETURN_IF_ERROR(source->StartWorker());
  return source;
}

IsolatedRuntimeSource::~IsolatedRuntimeSource() {
  std::lock_guard<std::mutex> lock(mutex_);
  StopWorker(/*kill=*/false);
}

pid_t IsolatedRuntimeSource::worker_pid() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pid_;
}

int64_t IsolatedRuntimeSource::workers_started() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return started_;
}

absl::Status IsolatedRuntimeSource::StartWorker() {
  const std::string path = MeasureWorkerPath();
  if (access(path.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "reward source `", name_, "`: the measurement worker `", path,
        "` is missing or not executable; build the target hlogym_measure_worker (part of the "
        "default build) or point HLOGYM_MEASURE_WORKER at it"));
  }
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    return absl::UnavailableError(
        absl::StrCat("reward source `", name_, "`: socketpair failed: ", std::strerror(errno)));
  }
  int child_end = ends[1];
  if (child_end == kWorkerSocketFd) {
    // dup2 onto the same number would leave close-on-exec set.
    child_end = fcntl(ends[1], F_DUPFD_CLOEXEC, kWorkerSocketFd + 1);
    close(ends[1]);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_end, kWorkerSocketFd);
  // Whatever the worker's libraries print goes to stderr, never into the
  // stdout of the process that asked (a table, a pipe).
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  const std::string parent = std::to_string(getpid());
  std::vector<std::string> args = {path, "--parent", parent, worker_spec_};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int spawned =
      child_end < 0 ? errno
                    : posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (child_end >= 0) close(child_end);
  if (spawned != 0) {
    close(ends[0]);
    return absl::UnavailableError(absl::StrCat("reward source `", name_,
                                               "`: could not start the measurement worker `",
                                               path, "`: ", std::strerror(spawned)));
  }
  pid_ = pid;
  socket_ = ends[0];
  ++started_;
  // The hello says whether the worker could build its source (a GPU, ...).
  absl::StatusOr<std::string> hello =
      measurement_worker::ReceiveMessage(socket_, DeadlineIn(options_.timeout_seconds));
  absl::StatusOr<Reply> reply =
      hello.ok() ? measurement_worker::DecodeReply(*hello) : hello.status();
  if (!reply.ok()) {
    const std::string how = StopWorker(/*kill=*/true);
    return absl::UnavailableError(absl::StrCat("reward source `", name_,
                                               "`: the measurement worker did not start (",
                                               reply.status().message(), "); it ", how));
  }
  if (!reply->status.ok()) {
    StopWorker(/*kill=*/false);
    return reply->status;
  }
  return absl::OkStatus();
}

std::string IsolatedRuntimeSource::StopWorker(bool kill) {
  if (socket_ >= 0) close(socket_);  // the worker's loop ends on EOF
  socket_ = -1;
  if (pid_ < 0) return "";
  if (kill) ::kill(pid_, SIGKILL);
  const Clock::time_point give_up = DeadlineIn(2.0);
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid_, &status, kill ? 0 : WNOHANG);
    if (done == pid_) break;
    if (done < 0 && errno == EINTR) continue;
    if (done < 0) {  // SIGCHLD ignored by the host program, or reaped elsewhere
      pid_ = -1;
      return "ended";
    }
    if (Clock::now() > give_up) {
      ::kill(pid_, SIGKILL);
      kill = true;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  return DescribeWaitStatus(status);
}

absl::StatusOr<Reply> IsolatedRuntimeSource::Ask(const Request& request, double timeout_seconds,
                                                 const std::string& what) {
  if (pid_ < 0) RETURN_IF_ERROR(StartWorker());
  const Clock::time_point deadline = DeadlineIn(timeout_seconds);
  absl::Status sent = measurement_worker::SendMessage(socket_, EncodeRequest(request));
  absl::StatusOr<std::string> answer =
      sent.ok() ? measurement_worker::ReceiveMessage(socket_, deadline) : sent;
  if (!answer.ok()) {
    if (absl::IsDeadlineExceeded(answer.status())) {
      StopWorker(/*kill=*/true);
      return absl::DeadlineExceededError(absl::StrCat(
          what, " on `", name_, "` gave no answer within ", timeout_seconds,
          " s (timeout_s); its worker process was killed and the next measurement starts a "
          "new one"));
    }
    const std::string how = StopWorker(/*kill=*/false);
    return absl::InternalError(absl::StrCat(what, " on `", name_, "` failed: its worker process ",
                                            how, " before answering; the next measurement "
                                            "starts a new one"));
  }
  absl::StatusOr<Reply> reply = measurement_worker::DecodeReply(*answer);
  if (!reply.ok()) {
    StopWorker(/*kill=*/true);
    return reply.status();
  }
  if (reply->worker_exits) StopWorker(/*kill=*/false);
  return reply;
}

namespace {

// The worker measured what it parsed; a module that printing and parsing
// changed would be a wrong measurement, so it is an error instead.
absl::Status CheckSameModules(const Reply& reply, const std::vector<const Module*>& modules,
                              const std::vector<uint64_t>& fingerprints) {
  for (size_t i = 0; i < modules.size(); ++i) {
    if (i >= reply.fingerprints.size() || reply.fingerprints[i] != fingerprints[i]) {
      return absl::InternalError(absl::StrCat(
          "module `", modules[i]->name(),
          "` changed on its way to the measurement worker (its fingerprint differs after "
          "printing and parsing): a printer or parser bug"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<double> IsolatedRuntimeSource::Runtime(const Module& module) {
  const uint64_t fingerprint = Fingerprint(module);
  auto cached = [&]() -> std::optional<double> {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(fingerprint);
    return it == cache_.end() ? std::nullopt : std::optional<double>(it->second);
  };
  if (std::optional<double> seconds = cached()) return *seconds;
  Request request;
  request.kind = RequestKind::kRuntime;
  request.modules.push_back(PrintModule(module));
  std::lock_guard<std::mutex> lock(mutex_);
  // Measured while this waited for the worker?
  if (std::optional<double> seconds = cached()) return *seconds;
  std::lock_guard<std::mutex> device(DeviceTimingMutex(device_));
  ASSIGN_OR_RETURN(Reply reply, Ask(request, options_.timeout_seconds,
                                    absl::StrCat("measuring module `", module.name(), "`")));
  RETURN_IF_ERROR(reply.status);
  RETURN_IF_ERROR(CheckSameModules(reply, {&module}, {fingerprint}));
  std::lock_guard<std::mutex> cache_lock(cache_mutex_);
  cache_[fingerprint] = reply.runtime;
  return reply.runtime;
}

absl::Status IsolatedRuntimeSource::Prepare(const Module& module) {
  return PrepareAll({&module})[0];
}

std::vector<absl::Status> IsolatedRuntimeSource::PrepareAll(
    const std::vector<const Module*>& modules) {
  std::vector<absl::Status> verdicts(modules.size());
  std::vector<uint64_t> fingerprints(modules.size());
  ParallelForEach(0, static_cast<int64_t>(modules.size()),
                  [&](int64_t i) { fingerprints[i] = Fingerprint(*modules[i]); });
  std::vector<size_t> asked;  // indices of the modules sent
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    for (size_t i = 0; i < modules.size(); ++i) {
      if (cache_.count(fingerprints[i]) == 0) asked.push_back(i);
    }
  }
  if (asked.empty()) return verdicts;
  Request request;
  request.kind = RequestKind::kPrepare;
  request.modules.resize(asked.size());
  ParallelForEach(0, static_cast<int64_t>(asked.size()),
                  [&](int64_t k) { request.modules[k] = PrintModule(*modules[asked[k]]); });
  std::vector<const Module*> sent;
  std::vector<uint64_t> sent_fingerprints;
  for (size_t i : asked) {
    sent.push_back(modules[i]);
    sent_fingerprints.push_back(fingerprints[i]);
  }
  // Compiling times nothing, so the device's timing mutex is not taken.
  const double timeout = options_.timeout_seconds * static_cast<double>(asked.size());
  std::lock_guard<std::mutex> lock(mutex_);
  absl::StatusOr<Reply> reply =
      Ask(request, timeout, absl::StrCat("compiling ", asked.size(), " modules"));
  if (!reply.ok()) return verdicts;
  absl::Status whole = reply->status;
  if (whole.ok()) whole = CheckSameModules(*reply, sent, sent_fingerprints);
  if (whole.ok() && reply->prepared.size() != asked.size()) {
    whole = absl::InternalError(absl::StrCat("the measurement worker compiled ",
                                             reply->prepared.size(), " modules of ",
                                             asked.size()));
  }
  for (size_t k = 0; k < asked.size(); ++k) {
    verdicts[asked[k]] = whole.ok() ? reply->prepared[k] : whole;
  }
  return verdicts;
}

absl::StatusOr<std::vector<Measurement>> IsolatedRuntimeSource::MeasureInterleaved(
    const std::vector<const Module*>& modules, double seconds_per_module) {
  Request request;
  request.kind = RequestKind::kInterleaved;
  request.seconds_per_module = seconds_per_module;
  std::vector<uint64_t> fingerprints;
  for (const Module* m : modules) {
    request.modules.push_back(PrintModule(*m));
    fingerprints.push_back(Fingerprint(*m));
  }
  const double timeout =
      options_.timeout_seconds * static_cast<double>(std::max<size_t>(1, modules.size()));
  std::lock_guard<std::mutex> lock(mutex_);
  std::lock_guard<std::mutex> device(DeviceTimingMutex(device_));
  ASSIGN_OR_RETURN(Reply reply,
                   Ask(request, timeout, absl::StrCat("timing ", modules.size(), " modules")));
  RETURN_IF_ERROR(reply.status);
  RETURN_IF_ERROR(CheckSameModules(reply, modules, fingerprints));
  if (reply.measurements.size() != modules.size()) {
    return absl::InternalError(absl::StrCat("the measurement worker timed ",
                                            reply.measurements.size(), " modules of ",
                                            modules.size()));
  }
  return std::move(reply.measurements);
}

}  // namespace hlogym
