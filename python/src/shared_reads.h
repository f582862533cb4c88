// Python threads may share one C++ object (an HloModule, a forked env) and
// call it at once. Calls that change such an object keep the GIL, so no
// other Python code runs while they do; calls that only read one may release
// it (reads of core objects change nothing, so they may overlap). What is
// left is a change made while another thread's read runs without the GIL:
// such reads are registered here for their run, and the change is refused
// with an error rather than made under the reader.
//
// Both with the GIL held, which guards the registry: declare a SharedRead
// before the py::gil_scoped_release of the read, so that it ends after.
#pragma once

#include <string_view>

namespace hlogym {

class SharedRead {
 public:
  explicit SharedRead(const void* object);
  ~SharedRead();
  SharedRead(const SharedRead&) = delete;
  SharedRead& operator=(const SharedRead&) = delete;

 private:
  const void* object_;
};

// Raises RuntimeError when `object` (a `what`, say "HloModule") is being read
// by a call on another thread.
void CheckNotBeingRead(const void* object, std::string_view what);

}  // namespace hlogym
