#include "core/passes/scan_blocking.h"

#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/ir/literal.h"
#include "core/passes/fusion_chain.h"
#include "core/passes/lowering_walk.h"

namespace hlogym {
namespace {

// The op of a cumulative body (x, c) -> (y, y), y = x op c; kParameter when
// the body has another form.
Opcode CumulativeOp(const Computation& body) {
  const Instruction* root = body.root();
  if (body.parameter_count() != 2 || root == nullptr || root->opcode() != Opcode::kTuple ||
      root->operand_count() != 2 || root->operand(0) != root->operand(1)) {
    return Opcode::kParameter;
  }
  const Instruction* y = root->operand(0);
  const Opcode op = y->opcode();
  if ((op != Opcode::kAdd && op != Opcode::kMultiply && op != Opcode::kMaximum &&
       op != Opcode::kMinimum) ||
      y->operand_count() != 2 || y->operand(0)->opcode() != Opcode::kParameter ||
      y->operand(1)->opcode() != Opcode::kParameter || y->operand(0) == y->operand(1)) {
    return Opcode::kParameter;
  }
  return op;
}

// op's identity: op(x, identity) == x.
Literal Identity(Opcode op, PrimitiveType type) {
  Literal value(Shape::Scalar(type));
  const bool floats = IsFloat(type);
  const int bits = 8 * ByteWidth(type);
  const bool is_signed = IsSignedInteger(type);
  switch (op) {
    case Opcode::kMultiply: return Literal::ScalarFromInt64(type, 1);
    case Opcode::kMaximum:
      if (floats) {
        value.SetFromDouble(0, -std::numeric_limits<double>::infinity());
      } else if (is_signed) {
        value.SetFromInt64(
            0, bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)));
      }  // unsigned: 0, as made
      break;
    case Opcode::kMinimum:
      if (floats) {
        value.SetFromDouble(0, std::numeric_limits<double>::infinity());
      } else if (is_signed) {
        value.SetFromInt64(
            0, bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1);
      } else {
        value.SetFromInt64(0, bits == 64 ? -1 : (int64_t{1} << bits) - 1);
      }
      break;
    default:  // add: 0, as made
      break;
  }
  return value;
}

// The block length for rows of `length`: its divisor in [kMinBlock,
// kMaxBlock] nearest sqrt(length) (balancing the two scans' steps); 0 if
// none.
int64_t BlockLength(int64_t length) {
  const double root = std::sqrt(static_cast<double>(length));
  int64_t best = 0;
  for (int64_t t = ScanBlockingPass::kMinBlock; t <= ScanBlockingPass::kMaxBlock; ++t) {
    if (length % t != 0) continue;
    if (best == 0 ||
        std::abs(static_cast<double>(t) - root) <= std::abs(static_cast<double>(best) - root)) {
      best = t;
    }
  }
  return best;
}

std::vector<int64_t> Without(absl::Span<const int64_t> dims, int64_t d) {
  std::vector<int64_t> out(dims.begin(), dims.end());
  out.erase(out.begin() + d);
  return out;
}

// The cumulative body (x, c) -> (x op c, x op c) over slices of `slice`.
std::unique_ptr<Computation> Body(Module& module, Opcode op, PrimitiveType type,
                                  const std::vector<int64_t>& slice) {
  auto body = std::make_unique<Computation>(module.UniqueComputationName("scan_blocked"));
  const Shape shape = Shape::Array(type, slice);
  Instruction* x = body->AddInstruction(Instruction::CreateParameter(0, shape, "x"));
  Instruction* c = body->AddInstruction(Instruction::CreateParameter(1, shape, "carry"));
  Instruction* y = body->AddInstruction(Instruction::Create(op, shape, {x, c}));
  body->set_root(body->AddInstruction(
      Instruction::Create(Opcode::kTuple, Shape::Tuple({shape, shape}), {y, y})));
  return body;
}

Instruction* Scan(Rewriter& rewriter, Computation* computation, Instruction* input,
                  Instruction* init, int64_t dim, bool reverse, Computation* body) {
  const PrimitiveType type = input->shape().element_type();
  const Shape shape =
      Shape::Tuple({input->shape(), Shape::Array(type, Without(input->shape().dims(), dim))});
  Instruction* scan =
      rewriter.Add(computation, Instruction::Create(Opcode::kScan, shape, {input, init}));
  scan->mutable_dimensions().assign({dim});
  ScanAttrs& attrs = scan->mutable_attrs<ScanAttrs>();
  attrs.num_carries = 1;
  attrs.is_reverse = reverse;
  attrs.is_associative = true;
  scan->set_called_computations({body});
  return scan;
}

Instruction* Element(Rewriter& rewriter, Computation* computation, Instruction* tuple,
                     int64_t index) {
  auto gte =
      Instruction::Create(Opcode::kGetTupleElement, tuple->shape().tuple_shape(index), {tuple});
  gte->set_index(index);
  return rewriter.Add(computation, std::move(gte));
}

absl::Status Lower(Module& module, Rewriter& rewriter, Instruction* scan) {
  Computation* computation = scan->parent();
  Instruction* x = scan->operand(0);
  Instruction* carry = scan->operand(1);
  const Opcode op = CumulativeOp(*scan->to_apply());
  const PrimitiveType type = x->shape().element_type();
  const bool reverse = scan->attrs<ScanAttrs>().is_reverse;
  const int64_t d = scan->dimension(0);
  const std::vector<int64_t> dims(x->shape().dims().begin(), x->shape().dims().end());
  const int64_t block = BlockLength(dims[d]);
  std::vector<int64_t> split = dims;  // the row as [blocks, block]
  split[d] = dims[d] / block;
  split.insert(split.begin() + d + 1, block);
  const std::vector<int64_t> totals = Without(split, d + 1);

  // 1. Within blocks, from the identity.
  Instruction* rows = rewriter.Add(
      computation, Instruction::Create(Opcode::kReshape, Shape::Array(type, split), {x}));
  Instruction* identity =
      rewriter.Add(computation, Instruction::CreateConstant(Identity(op, type)));
  Instruction* from_identity = rewriter.Add(
      computation, Instruction::Create(Opcode::kBroadcast, Shape::Array(type, totals), {identity}));
  Computation* in_block = rewriter.AddComputation(Body(module, op, type, totals), computation);
  Instruction* first = Scan(rewriter, computation, rows, from_identity, d + 1, reverse, in_block);

  // 2. The blocks' totals scanned from the original carry: through each
  // block, and the final carry.
  Computation* across =
      rewriter.AddComputation(Body(module, op, type, Without(totals, d)), computation);
  Instruction* second = Scan(rewriter, computation, Element(rewriter, computation, first, 1), carry,
                             d, reverse, across);

  // 3. Each element combined with what comes before its block: the carry
  // for the first block (the last when reversed), else the scan through
  // the block before it.
  FusionChain chain(rewriter, computation);
  const int64_t blocks = split[d];
  std::vector<int64_t> one = totals;
  one[d] = 1;
  Instruction* before = chain.Reshape(carry, one);
  if (blocks > 1) {
    Instruction* through = Element(rewriter, computation, second, 0);
    SliceAttrs shift;
    for (int64_t i = 0; i < static_cast<int64_t>(totals.size()); ++i) {
      shift.starts.push_back(i == d && reverse ? 1 : 0);
      shift.limits.push_back(i == d && !reverse ? blocks - 1 : totals[i]);
      shift.strides.push_back(1);
    }
    Instruction* shifted = chain.Slice(through, std::move(shift));
    std::vector<Instruction*> parts = {before, shifted};
    if (reverse) std::swap(parts[0], parts[1]);
    before = chain.Add(Opcode::kConcatenate, Shape::Array(type, totals), parts);
    before->mutable_dimensions().assign({d});
  }
  std::vector<int64_t> kept;  // every split dimension but the block's
  for (int64_t i = 0; i < static_cast<int64_t>(split.size()); ++i) {
    if (i != d + 1) kept.push_back(i);
  }
  Instruction* combined =
      chain.Add(op, Shape::Array(type, split),
                {Element(rewriter, computation, first, 0), chain.Broadcast(before, split, kept)});
  ASSIGN_OR_RETURN(Instruction * y, chain.Fuse(chain.Reshape(combined, dims)));
  Instruction* result = rewriter.Add(
      computation, Instruction::Create(Opcode::kTuple, scan->shape(),
                                       {y, Element(rewriter, computation, second, 1)}));
  return rewriter.Replace(scan, result);
}

}  // namespace

std::string ScanBlockingRefusal(const Instruction& scan) {
  if (scan.opcode() != Opcode::kScan || !scan.has_attrs<ScanAttrs>() ||
      scan.to_apply() == nullptr || scan.dimensions().size() != 1 || !scan.shape().IsTuple()) {
    return "not a scan";
  }
  if (std::string why = CommonLoweringRefusal(scan); !why.empty()) return why;
  const ScanAttrs& attrs = scan.attrs<ScanAttrs>();
  if (scan.operand_count() != 2 || attrs.num_carries != 1 || scan.shape().tuple_size() != 2) {
    return "not one input and one carry";
  }
  if (!attrs.is_associative) return "not marked is_associative";
  if (CumulativeOp(*scan.to_apply()) == Opcode::kParameter) {
    return "a body other than (x, c) -> (y, y), y = x op c with op add, multiply, max or min";
  }
  const Shape& x = scan.operand(0)->shape();
  const PrimitiveType type = x.element_type();
  if (!x.IsArray() || (!IsFloat(type) && !IsInteger(type)) || !scan.operand(1)->shape().IsArray() ||
      scan.operand(1)->shape().element_type() != type) {
    return "operands that are not float or integer arrays of one type";
  }
  const int64_t d = scan.dimension(0);
  if (d < 0 || d >= x.rank()) return "a scan dimension outside the operand";
  const int64_t length = x.dim(d);
  if (length < ScanBlockingPass::kMinLength) {
    return absl::StrCat("rows of ", length, ", shorter than ", ScanBlockingPass::kMinLength);
  }
  const int64_t rows = x.element_count() / length;
  if (rows > ScanBlockingPass::kMaxRows) {
    return absl::StrCat(rows, " rows, more than ", ScanBlockingPass::kMaxRows);
  }
  if (BlockLength(length) == 0) {
    return absl::StrCat("rows of ", length, " with no divisor in [", ScanBlockingPass::kMinBlock,
                        ", ", ScanBlockingPass::kMaxBlock, "]");
  }
  return "";
}

absl::StatusOr<bool> ScanBlockingPass::Run(Module& module, Rewriter& rewriter) {
  return LowerEach(
      module, rewriter, name(), Opcode::kScan,
      [](const Instruction& scan) { return ScanBlockingRefusal(scan).empty(); },
      [&](Instruction* scan) { return Lower(module, rewriter, scan); });
}

}  // namespace hlogym
