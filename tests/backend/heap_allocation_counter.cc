// Replaces the global operator new of the backend test binary with a counting
// one. It lives in its own file so the compiler never inlines the pair into a
// caller and mistakes malloc/free for a mismatched new/delete.
#include "tests/backend/heap_allocation_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
namespace hlogym {
bool CountsHeapAllocations() { return true; }
}  // namespace hlogym
#else
namespace hlogym {
bool CountsHeapAllocations() { return false; }
}  // namespace hlogym
#endif

namespace hlogym {
long HeapAllocationCount() { return g_allocations.load(std::memory_order_relaxed); }
}  // namespace hlogym
