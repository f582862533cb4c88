// Software prefetch of whole objects. An env step is bound by cache misses,
// not instructions: it makes, walks and frees ~20,000 IR objects of ~300
// bytes, most of them cold (freed or made a step ago), and a walk that
// touches them one at a time stalls on each miss in turn. Asking for the
// next object while working on this one overlaps the misses.
#pragma once

#include <cstddef>

namespace hlogym {

inline constexpr size_t kCacheLine = 64;

// Brings the `size` bytes at `p` towards the cache, to be read.
inline void PrefetchForRead(const void* p, size_t size) {
  const char* bytes = static_cast<const char*>(p);
  for (size_t line = 0; line < size; line += kCacheLine) __builtin_prefetch(bytes + line, 0);
}

// The same, for memory about to be written (a block to construct in).
inline void PrefetchForWrite(const void* p, size_t size) {
  const char* bytes = static_cast<const char*>(p);
  for (size_t line = 0; line < size; line += kCacheLine) __builtin_prefetch(bytes + line, 1);
}

// In a walk over `items` (pointers or smart pointers to objects), prefetches
// the first `bytes` of the object `ahead` places past position `i`: far
// enough on that its lines arrive before the walk does, for the few hundred
// instructions a walk spends on each object.
template <typename Items>
inline void PrefetchAhead(const Items& items, size_t i, size_t bytes, size_t ahead = 4) {
  if (i + ahead < items.size()) PrefetchForRead(&*items[i + ahead], bytes);
}

}  // namespace hlogym
