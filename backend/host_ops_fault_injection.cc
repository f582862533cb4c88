// Deliberately broken kernels, for testing that a measurement fault stays in
// the measurement: a custom-call to `hlogym.inject_fault` whose
// backend_config says how it fails when it runs. Nothing else emits it.
#include <chrono>
#include <csignal>
#include <thread>

#include "absl/strings/str_cat.h"
#include "backend/host_ops.h"

namespace hlogym {
namespace {

enum class Fault { kSegfault, kHang, kError };

class FaultOp : public HostOp {
 public:
  FaultOp(Fault fault, std::string name) : fault_(fault), name_(std::move(name)) {}

  absl::Status Run(void* const* /*buffers*/) override {
    switch (fault_) {
      case Fault::kSegfault:
        std::raise(SIGSEGV);
        break;
      case Fault::kHang:
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      case Fault::kError:
        break;
    }
    return absl::InternalError(absl::StrCat("injected fault in `", name_, "`"));
  }
  bool allocates() const override { return false; }
  std::string kind() const override { return "fault-injection"; }

 private:
  Fault fault_;
  std::string name_;
};

}  // namespace

std::string_view FaultInjectionKind(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCustomCall ||
      instruction.custom_call_target() != kFaultInjectionTarget) {
    return {};
  }
  const std::string* config = instruction.FindRawAttribute("backend_config");
  std::string_view kind = config != nullptr ? std::string_view(*config) : std::string_view();
  if (kind.size() >= 2 && kind.front() == '"' && kind.back() == '"') {
    kind = kind.substr(1, kind.size() - 2);
  }
  return kind.empty() ? std::string_view("(none)") : kind;
}

absl::StatusOr<std::unique_ptr<HostOp>> MakeFaultInjectionOp(const Instruction& instruction) {
  const std::string_view kind = FaultInjectionKind(instruction);
  if (kind.empty()) return std::unique_ptr<HostOp>();
  Fault fault;
  // On the host an illegal address is a segfault (the GPU runs a kernel).
  if (kind == "segfault" || kind == "illegal_address") {
    fault = Fault::kSegfault;
  } else if (kind == "hang") {
    fault = Fault::kHang;
  } else if (kind == "error") {
    fault = Fault::kError;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("custom-call `", instruction.name(), "` to ", kFaultInjectionTarget,
                     " needs backend_config=\"segfault\", \"illegal_address\", \"hang\" or "
                     "\"error\", got `", std::string(kind), "`"));
  }
  return std::unique_ptr<HostOp>(new FaultOp(fault, instruction.name()));
}

}  // namespace hlogym
