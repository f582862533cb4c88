// Counts the C++ heap allocations of the backend test binary, so a test can
// check that a timed run allocates nothing, including an allocation freed
// again within the run, which heap statistics miss.
#pragma once

namespace hlogym {

// Whether this build counts (sanitizer builds keep their own operator new).
bool CountsHeapAllocations();

// operator new calls so far, on every thread.
long HeapAllocationCount();

}  // namespace hlogym
