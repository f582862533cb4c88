// Per-thread free lists of fixed-size blocks for the IR objects an env step
// makes and frees by the thousand: instructions, their attribute families and
// computations (core/ir/block_pool.cc says why and how large).
#pragma once

#include <cstddef>

namespace hlogym {

enum class BlockKind { kInstruction, kOpAttrs, kComputation };

// A block for `kind`, of `size` bytes: from the thread's list when `size` is
// the kind's block size (the size of the object it holds) and one is kept,
// else newly allocated.
void* TakeBlock(BlockKind kind, size_t size, size_t block_size);
// Gives a block from TakeBlock back: onto the thread's list while it has
// room, else freed.
void GiveBackBlock(BlockKind kind, void* block, size_t size, size_t block_size);

}  // namespace hlogym
