#include "core/passes/fusion_chain.h"

#include <algorithm>

#include "core/base/status_macros.h"
#include "core/passes/fusion_builder.h"

namespace hlogym {

Instruction* FusionChain::Add(std::unique_ptr<Instruction> instruction) {
  Instruction* inst = rewriter_.Add(computation_, std::move(instruction));
  members_.push_back(inst);
  return inst;
}

Instruction* FusionChain::Add(Opcode opcode, Shape shape, std::vector<Instruction*> operands) {
  return Add(Instruction::Create(opcode, std::move(shape), operands));
}

Instruction* FusionChain::Constant(Literal value) {
  return Add(Instruction::CreateConstant(std::move(value)));
}

Instruction* FusionChain::Transpose(Instruction* x, const std::vector<int64_t>& perm) {
  bool identity = true;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < perm.size(); ++i) {
    identity &= perm[i] == static_cast<int64_t>(i);
    dims.push_back(x->shape().dim(perm[i]));
  }
  if (identity) return x;
  Instruction* t = Add(Opcode::kTranspose, Shape::Array(x->shape().element_type(), dims), {x});
  t->mutable_dimensions().assign(perm.begin(), perm.end());
  return t;
}

Instruction* FusionChain::Reshape(Instruction* x, const std::vector<int64_t>& dims) {
  const absl::Span<const int64_t> now = x->shape().dims();
  if (std::equal(now.begin(), now.end(), dims.begin(), dims.end())) return x;
  return Add(Opcode::kReshape, Shape::Array(x->shape().element_type(), dims), {x});
}

Instruction* FusionChain::Slice(Instruction* x, SliceAttrs attrs) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < attrs.starts.size(); ++i) {
    dims.push_back((attrs.limits[i] - attrs.starts[i] + attrs.strides[i] - 1) / attrs.strides[i]);
  }
  Instruction* s = Add(Opcode::kSlice, Shape::Array(x->shape().element_type(), dims), {x});
  s->mutable_attrs<SliceAttrs>() = std::move(attrs);
  return s;
}

Instruction* FusionChain::Broadcast(Instruction* x, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& dimensions) {
  Instruction* b = Add(Opcode::kBroadcast, Shape::Array(x->shape().element_type(), dims), {x});
  b->mutable_dimensions().assign(dimensions.begin(), dimensions.end());
  return b;
}

absl::StatusOr<Instruction*> FusionChain::Fuse(Instruction* result) {
  if (members_.empty() || (members_.size() == 1 && result->opcode() == Opcode::kReshape)) {
    return result;
  }
  FusionSpec spec;
  spec.members = members_;
  if (result->shape().IsTuple()) {
    for (int64_t i = 0; i < result->shape().tuple_size(); ++i) spec.outputs.push_back({result, i});
  } else {
    spec.outputs = {{result, -1}};
  }
  absl::StatusOr<Instruction*> fusion = BuildFusion(rewriter_, spec);
  if (absl::IsFailedPrecondition(fusion.status())) return result;  // runs unfused
  RETURN_IF_ERROR(fusion.status());
  RETURN_IF_ERROR(rewriter_.Replace(result, *fusion));  // unlinks the chain, now unused
  return *fusion;
}

}  // namespace hlogym
