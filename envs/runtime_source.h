// RuntimeSource: where an environment's runtimes come from (the cost model,
// the CPU backend, the GPU backend). Rewards are computed from them.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "backend/cost_model.h"
#include "core/ir/module.h"

namespace hlogym {

class RuntimeSource {
 public:
  virtual ~RuntimeSource() = default;
  // "cost:h100", "cpu", ...
  virtual std::string name() const = 0;
  // The module's runtime in seconds. Must be safe to call from several
  // threads at once on different modules.
  virtual absl::StatusOr<double> Runtime(const Module& module) = 0;
  // Whether equal modules always get equal runtimes (false for measurement).
  virtual bool deterministic() const = 0;
};

// The analytical cost model on a device; deterministic and thread-safe.
class CostModelSource : public RuntimeSource {
 public:
  explicit CostModelSource(DeviceSpec device) : device_(std::move(device)) {}
  std::string name() const override { return "cost:" + device_.name; }
  absl::StatusOr<double> Runtime(const Module& module) override;
  bool deterministic() const override { return true; }

 private:
  DeviceSpec device_;
};

// "cost" (the H100 cost model), "cost:h100" or "cost:cpu". Measured sources
// ("cpu", "gpu") arrive with the backends; asking for them now is an error.
absl::StatusOr<std::shared_ptr<RuntimeSource>> MakeRuntimeSource(std::string_view spec);

}  // namespace hlogym
