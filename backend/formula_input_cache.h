// The formula inputs of a module depend only on its parameters' shapes, and
// rewrites keep a module's parameters, so each runtime keeps the inputs of
// the last few parameter signatures: making the inputs of a big module
// (millions of elements, each from its formula) takes longer than measuring it.
// "Few" is by bytes as well as by count: a table of results times each
// module's original, default and final modules in turn for every agent, and
// the inputs of a whole chunk of modules (optax_*_1024: 128 MiB each, 1.5-2 s
// to make) stay kept across those turns.
#pragma once

#include <cstddef>
#include <cstdint>
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
// host copies, ...). Thread-safe; the most recently used signatures are kept
// while they hold at most kKeptBytes of parameters in all, and the last kKept
// whatever their size.
template <typename Inputs>
class FormulaInputCache {
 public:
  static constexpr size_t kKept = 4;
  static constexpr int64_t kKeptBytes = int64_t{1} << 30;

  // The inputs of `module`'s parameter signature, made by make(module) when
  // they are not kept.
  template <typename Make>
  std::shared_ptr<const Inputs> Get(const Module& module, Make&& make) {
    std::string key;
    int64_t bytes = 0;
    for (const Instruction* p : module.entry()->parameters()) {
      absl::StrAppend(&key, p->shape().ToString(), ";");
      bytes += p->shape().byte_size();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->key == key) {
        kept_.splice(kept_.begin(), kept_, it);
        return kept_.front().inputs;
      }
    }
    std::shared_ptr<const Inputs> inputs = make(module);
    kept_.push_front({std::move(key), bytes, inputs});
    kept_bytes_ += bytes;
    while (kept_.size() > kKept && kept_bytes_ > kKeptBytes) {
      kept_bytes_ -= kept_.back().bytes;
      kept_.pop_back();
    }
    return inputs;
  }

  // Signatures kept, and their parameters' bytes.
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return kept_.size();
  }
  int64_t bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return kept_bytes_;
  }

 private:
  struct Entry {
    std::string key;
    int64_t bytes;
    std::shared_ptr<const Inputs> inputs;
  };
  mutable std::mutex mutex_;
  std::list<Entry> kept_;  // most recently used first
  int64_t kept_bytes_ = 0;
};

}  // namespace hlogym
