// The formula inputs of a module depend only on its parameters' shapes, and
// rewrites keep a module's parameters, so each runtime keeps the inputs of
// the last few parameter signatures: making the inputs of a big module
// (millions of elements, each from its formula) takes longer than measuring it.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/ir/computation.h"
#include "core/ir/module.h"

namespace hlogym {

// Inputs is what a runtime makes of the formula inputs (literals, aligned
// host copies, ...). Thread-safe; the last kKept signatures are kept.
template <typename Inputs>
class FormulaInputCache {
 public:
  static constexpr size_t kKept = 4;

  // The inputs of `module`'s parameter signature, made by make(module) when
  // they are not kept.
  template <typename Make>
  std::shared_ptr<const Inputs> Get(const Module& module, Make&& make) {
    std::string key;
    for (const Instruction* p : module.entry()->parameters()) {
      absl::StrAppend(&key, p->shape().ToString(), ";");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->first == key) {
        kept_.splice(kept_.begin(), kept_, it);
        return kept_.front().second;
      }
    }
    std::shared_ptr<const Inputs> inputs = make(module);
    kept_.emplace_front(std::move(key), inputs);
    if (kept_.size() > kKept) kept_.pop_back();
    return inputs;
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const Inputs>>> kept_;  // newest first
};

}  // namespace hlogym
