#include "python/src/shared_reads.h"

#include <stdexcept>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

// Reads in progress by object; guarded by the GIL. Never destroyed: calls
// may still end during interpreter shutdown.
absl::flat_hash_map<const void*, int>& Readers() {
  static auto* readers = new absl::flat_hash_map<const void*, int>();
  return *readers;
}

}  // namespace

SharedRead::SharedRead(const void* object) : object_(object) { ++Readers()[object]; }

SharedRead::~SharedRead() {
  auto it = Readers().find(object_);
  if (--it->second == 0) Readers().erase(it);
}

void CheckNotBeingRead(const void* object, std::string_view what) {
  if (!Readers().contains(object)) return;
  throw std::runtime_error(absl::StrCat(
      "this ", std::string(what), " is being read by a call on another thread (evaluate, estimate, "
      "observe, ...); change it once that call returns, or change a copy (clone)"));
}

}  // namespace hlogym
