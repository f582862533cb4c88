#include "core/ir/block_pool.h"

#include <new>

#include "core/base/prefetch.h"
#include "oneapi/tbb/scalable_allocator.h"

namespace hlogym {
namespace {

// Instructions are made and freed by the thousand every environment step (the
// module's copy, a dry pass's candidates, the previous module), so their
// blocks are kept for reuse on a per-thread free list rather than handed back
// to malloc (malloc and free were ~30% of a gpt2 step's instructions under
// callgrind; this list takes 2% of the step off). Bounded (32768 blocks, ~12
// MB a thread: a gpt2 step frees ~21K, its previous module with the dry
// pass's candidates, and makes as many again; 8192 sent ~13K a step back to
// malloc); what a thread holds is freed when it exits.
//
// The blocks themselves come from TBB's scalable allocator, not malloc: in
// the env pool a module made on one thread is often freed on the other, and
// glibc's free of another thread's chunk takes that arena's lock, where
// tbbmalloc hands the block back to its owner's heap without one.
// Sanitizer builds keep malloc, which they see: tbbmalloc's hand-backs are
// invisible to TSan (a reused block would read as a race) and its blocks to
// ASan.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define HLOGYM_BLOCK_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define HLOGYM_BLOCK_MALLOC 1
#endif
#endif

void* AllocateBlock(size_t size) {
#ifdef HLOGYM_BLOCK_MALLOC
  return ::operator new(size);
#else
  void* block = scalable_malloc(size);
  if (block == nullptr) throw std::bad_alloc();
  return block;
#endif
}

void FreeBlock(void* block) {
#ifdef HLOGYM_BLOCK_MALLOC
  ::operator delete(block);
#else
  scalable_free(block);
#endif
}

// The same holds for two other objects an env step makes and frees by the
// thousand, with a further reason: glibc's fast bins stop at 128 bytes, so
// its free of an OpAttrs (232 bytes) or a Computation (136) took the slow
// path (coalescing, unsorted bins) once its small per-size cache of 7 was
// full. A gpt2 step makes ~1,400 fused computations (a candidate's each) and
// ~3,000 attribute families; 8192 of each are kept (~3 MB a thread).
class BlockList {
 public:
  explicit BlockList(size_t max_blocks) : max_blocks_(max_blocks) {}
  ~BlockList() {
    while (head_ != nullptr) {
      Block* next = head_->next;
      FreeBlock(head_);
      head_ = next;
    }
    closed_ = true;
  }
  // Prefetches the block the next Take hands out: a step takes thousands
  // in a row (a candidate's body, a module's copy), each freed long before
  // and cold, and the read of its link and the constructor's writes to it
  // stalled on the miss (TakeBlock was ~6% of a gpt2 step's time under
  // perf, for ~1.5% of its instructions).
  void* Take(size_t block_size) {
    if (head_ == nullptr) return nullptr;
    Block* block = head_;
    head_ = block->next;
    --count_;
    if (head_ != nullptr) PrefetchForWrite(head_, block_size);
    return block;
  }
  bool Keep(void* block) {
    if (closed_ || count_ >= max_blocks_) return false;
    head_ = new (block) Block{head_};
    ++count_;
    return true;
  }

 private:
  struct Block {
    Block* next;
  };
  const size_t max_blocks_;
  Block* head_ = nullptr;
  size_t count_ = 0;
  bool closed_ = false;
};

BlockList& ListOf(BlockKind kind) {
  thread_local BlockList instructions(size_t{1} << 15);
  thread_local BlockList attrs(size_t{1} << 13);
  thread_local BlockList computations(size_t{1} << 13);
  switch (kind) {
    case BlockKind::kInstruction:
      return instructions;
    case BlockKind::kOpAttrs:
      return attrs;
    case BlockKind::kComputation:
      break;
  }
  return computations;
}

}  // namespace

void* TakeBlock(BlockKind kind, size_t size, size_t block_size) {
  if (size == block_size) {
    if (void* block = ListOf(kind).Take(block_size)) return block;
  }
  return AllocateBlock(size);
}

void GiveBackBlock(BlockKind kind, void* block, size_t size, size_t block_size) {
  if (size == block_size && ListOf(kind).Keep(block)) return;
  FreeBlock(block);
}

}  // namespace hlogym
