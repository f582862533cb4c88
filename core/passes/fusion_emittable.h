// The contract between the fusion passes and the backend's kernel emitter:
// which fused computations compile to one kernel. Every fusion pass, in every
// mode, only makes fusions that pass CheckEmittableFusion, and the backend may
// rely on exactly these rules (docs: hlo-text-and-xla-passes.md §3.9, §4).
//
// A fusion is emitted in one of two ways:
//  - kLoop: no reduce inside. One loop over linear index i < N; every output
//    has N elements and output k is computed elementally at the multi-index
//    that i has in output k's shape. Every op inside is elemental: it can
//    produce one element at a given index from elements of its operands.
//  - kInput: one reduction loop nest. The heroes are the reduces inside; they
//    all read inputs of the same dimensions and reduce the same dimensions
//    (a multi-output reduction). Ops feeding the heroes (the prologue) are
//    evaluated elementally while the inputs are read; ops after a hero (the
//    epilogue) are per-output-element: elementwise ops, and bitcast/reshape
//    that keep the element count, so output element j only needs hero
//    element j. Outputs that depend on no hero ("side outputs") are written
//    from the reduction loop and have as many elements as a hero input.
// Common rules: arrays of emittable element types only (the root may be a
// tuple of arrays, or a variadic reduce); constants inside are effective
// scalars (bigger ones stay buffers, as in XLA); static shapes; at most
// kMaxKernelBuffers operands plus outputs.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/computation.h"

namespace hlogym {

// Buffers one kernel may take (operands plus outputs): CUDA's 4 KiB kernel
// parameter space holds 512 pointers; half is left for sizes and strides.
inline constexpr int64_t kMaxKernelBuffers = 256;

// Element types the emitter computes with: pred, 8- to 64-bit integers, f16,
// bf16, f32, f64. Not complex, sub-byte or 8-bit float types.
bool IsEmittableElementType(PrimitiveType type);

// Ops the elemental emitter evaluates one element at a time: elementwise
// ops, and broadcast, reshape, bitcast, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse, iota, gather and
// reduce-window. (Not rng, not map, not a width-changing bitcast-convert.)
bool IsElementalOp(const Instruction& instruction);

// Epilogue ops may follow a reduce: each output element needs only the same
// element of its operands (elementwise ops; bitcast and reshape keep the
// element count, so linear indices line up).
bool IsEpilogueOp(const Instruction& instruction);

// A static array of an emittable element type.
bool IsEmittableArray(const Shape& shape);

// An array or a scalar with only 1-sized dimensions.
bool IsEffectiveScalar(const Shape& shape);

// Whether `fused` (a fusion's computation) compiles as one kernel; returns
// the kind it must have (kInput when it holds a reduce, else kLoop), or an
// InvalidArgument error saying which rule fails and where.
absl::StatusOr<FusionKind> CheckEmittableFusion(const Computation& fused);
// The same, given `fused`'s MakePostOrder() (a builder that stores each
// instruction after its operands knows it: the storage order).
absl::StatusOr<FusionKind> CheckEmittableFusion(const Computation& fused,
                                                absl::Span<Instruction* const> post_order);

}  // namespace hlogym
