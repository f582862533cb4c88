#include "core/ir/shape_inference.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

absl::Status Error(const std::string& what) { return absl::InvalidArgumentError(what); }

std::string S(const Shape& s) { return s.ToString(false); }

// An array of the operand's dims with element type `type`.
Shape WithType(const Shape& like, PrimitiveType type) {
  Shape s = like;
  s.set_element_type(type);
  s.clear_layout();
  s.FillMissingLayout();
  return s;
}

absl::StatusOr<Shape> SameDims(const Instruction& inst, PrimitiveType result_type,
                               bool scalars_broadcast = false) {
  const Shape* first = nullptr;
  for (const Instruction* o : inst.operands()) {
    const Shape& s = o->shape();
    if (!s.IsArray()) return Error(absl::StrCat("operand `", o->name(), "` is not an array"));
    if (scalars_broadcast && s.rank() == 0) continue;
    if (first == nullptr) {
      first = &s;
    } else if (!first->SameDimensions(s)) {
      return Error(absl::StrCat("operands have different dimensions: ", S(*first), " and ", S(s)));
    }
  }
  if (first == nullptr) first = &inst.operand(0)->shape();
  return WithType(*first, result_type);
}

absl::StatusOr<Shape> Elementwise(const Instruction& inst) {
  const Opcode op = inst.opcode();
  const PrimitiveType in = inst.operand(0)->shape().element_type();
  const PrimitiveType declared = inst.shape().element_type();
  switch (op) {
    case Opcode::kCompare: case Opcode::kIsFinite:
      return SameDims(inst, PrimitiveType::kPred);
    case Opcode::kConvert: case Opcode::kBitcastConvert: case Opcode::kReducePrecision:
    case Opcode::kStochasticConvert:
      return inst.shape();  // the element type is the instruction's own
    case Opcode::kSelect: {
      const Shape& p = inst.operand(0)->shape();
      if (p.element_type() != PrimitiveType::kPred) {
        return Error(absl::StrCat("select's predicate must be pred, got ", S(p)));
      }
      absl::StatusOr<Shape> s = SameDims(inst, inst.operand(1)->shape().element_type(), true);
      return s;
    }
    case Opcode::kClamp:
      return SameDims(inst, inst.operand(1)->shape().element_type(), true);
    case Opcode::kAbs: case Opcode::kReal: case Opcode::kImag:
      return SameDims(inst, IsComplex(in) ? declared : in);
    case Opcode::kComplex:
      return SameDims(inst, declared);
    default:
      for (const Instruction* o : inst.operands()) {
        if (o->shape().element_type() != in) {
          return Error(absl::StrCat("operand types differ: ", S(inst.operand(0)->shape()), " and ",
                                    S(o->shape())));
        }
      }
      return SameDims(inst, in);
  }
}

absl::StatusOr<Shape> Dot(const Instruction& inst) {
  if (!inst.has_attrs<DotAttrs>()) return inst.shape();
  const DotDimensions& d = inst.attrs<DotAttrs>().dims;
  const Shape& l = inst.operand(0)->shape();
  const Shape& r = inst.operand(1)->shape();
  if (d.lhs_batch.size() != d.rhs_batch.size() || d.lhs_contracting.size() != d.rhs_contracting.size()) {
    return Error("dot: batch and contracting dimension lists must pair up");
  }
  auto in_range = [](const std::vector<int64_t>& dims, const Shape& s) {
    return std::all_of(dims.begin(), dims.end(), [&](int64_t x) { return x >= 0 && x < s.rank(); });
  };
  if (!in_range(d.lhs_batch, l) || !in_range(d.lhs_contracting, l) || !in_range(d.rhs_batch, r) ||
      !in_range(d.rhs_contracting, r)) {
    return Error("dot: a dimension number is out of range");
  }
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    if (l.dim(d.lhs_contracting[i]) != r.dim(d.rhs_contracting[i])) {
      return Error(absl::StrCat("dot: contracting dimensions differ in size: ", S(l), " and ", S(r)));
    }
  }
  std::vector<int64_t> dims;
  for (int64_t b : d.lhs_batch) dims.push_back(l.dim(b));
  auto free = [&](const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& c) {
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (std::find(batch.begin(), batch.end(), i) == batch.end() &&
          std::find(c.begin(), c.end(), i) == c.end()) {
        dims.push_back(s.dim(i));
      }
    }
  };
  free(l, d.lhs_batch, d.lhs_contracting);
  free(r, d.rhs_batch, d.rhs_contracting);
  return Shape::Array(inst.shape().element_type(), dims);
}

absl::StatusOr<Shape> Reduce(const Instruction& inst) {
  const int64_t n = inst.operand_count() / 2;
  if (inst.operand_count() % 2 != 0 || n == 0) return Error("reduce needs N inputs and N inits");
  std::vector<Shape> results;
  for (int64_t k = 0; k < n; ++k) {
    const Shape& in = inst.operand(k)->shape();
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < in.rank(); ++i) {
      if (std::find(inst.dimensions().begin(), inst.dimensions().end(), i) == inst.dimensions().end()) {
        dims.push_back(in.dim(i));
      }
    }
    for (int64_t d : inst.dimensions()) {
      if (d < 0 || d >= in.rank()) return Error(absl::StrCat("reduce dimension ", d, " out of range"));
    }
    results.push_back(Shape::Array(in.element_type(), dims));
  }
  return n == 1 ? results[0] : Shape::Tuple(results);
}

}  // namespace

absl::StatusOr<Shape> InferShape(const Instruction& inst) {
  const Opcode op = inst.opcode();
  const int arity = OpcodeArity(op);
  if (arity >= 0 && inst.operand_count() != arity) {
    return Error(absl::StrCat(std::string(OpcodeName(op)), " takes ", arity, " operands, got ", inst.operand_count()));
  }
  if (IsElementwise(op) || op == Opcode::kCompare) return Elementwise(inst);
  switch (op) {
    case Opcode::kBroadcast: {
      const Shape& in = inst.operand(0)->shape();
      if (static_cast<int64_t>(inst.dimensions().size()) != in.rank()) {
        return Error(absl::StrCat("broadcast: ", inst.dimensions().size(), " dimensions for operand ", S(in)));
      }
      for (int64_t k = 0; k < in.rank(); ++k) {
        const int64_t d = inst.dimension(k);
        if (d < 0 || d >= inst.shape().rank() || inst.shape().dim(d) != in.dim(k)) {
          return Error(absl::StrCat("broadcast: operand ", S(in), " does not map into ", S(inst.shape())));
        }
      }
      return WithType(inst.shape(), in.element_type());
    }
    case Opcode::kReshape: {
      const Shape& in = inst.operand(0)->shape();
      if (in.is_static() && inst.shape().is_static() &&
          in.element_count() != inst.shape().element_count()) {
        return Error(absl::StrCat("reshape: ", S(in), " and ", S(inst.shape()), " differ in size"));
      }
      return WithType(inst.shape(), in.element_type());
    }
    case Opcode::kTranspose: {
      const Shape& in = inst.operand(0)->shape();
      std::vector<int64_t> perm(inst.dimensions().begin(), inst.dimensions().end());
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (int64_t i = 0; i < static_cast<int64_t>(sorted.size()); ++i) {
        if (sorted[i] != i) return Error("transpose: dimensions are not a permutation");
      }
      if (static_cast<int64_t>(perm.size()) != in.rank()) return Error("transpose: wrong rank");
      std::vector<int64_t> dims;
      for (int64_t p : perm) dims.push_back(in.dim(p));
      return Shape::Array(in.element_type(), dims);
    }
    case Opcode::kGetTupleElement: {
      const Shape& in = inst.operand(0)->shape();
      if (!in.IsTuple() || inst.tuple_index() < 0 || inst.tuple_index() >= in.tuple_size()) {
        return Error(absl::StrCat("get-tuple-element index ", inst.tuple_index(), " out of range for ", S(in)));
      }
      return in.tuple_shape(inst.tuple_index());
    }
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Instruction* o : inst.operands()) elements.push_back(o->shape());
      return Shape::Tuple(elements);
    }
    case Opcode::kAlternatives:
      for (const Instruction* o : inst.operands()) {
        if (!o->shape().Compatible(inst.operand(0)->shape())) {
          return Error(absl::StrCat("alternatives: candidate `", o->name(), "` ", S(o->shape()),
                                    " differs from the original ", S(inst.operand(0)->shape())));
        }
      }
      return inst.operand(0)->shape();
    case Opcode::kFusion: case Opcode::kCall: {
      if (inst.called_computations().empty() || inst.called_computations()[0] == nullptr) {
        return Error("missing called computation");
      }
      const Computation& c = *inst.called_computations()[0];
      if (c.parameter_count() != inst.operand_count()) {
        return Error(absl::StrCat("calls `", c.name(), "` with ", inst.operand_count(),
                                  " operands; it takes ", c.parameter_count()));
      }
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        if (c.parameter(i) == nullptr || !c.parameter(i)->shape().Compatible(inst.operand(i)->shape())) {
          return Error(absl::StrCat("operand ", i, " ", S(inst.operand(i)->shape()),
                                    " does not match parameter ", i, " of `", c.name(), "`"));
        }
      }
      return c.root() ? c.root()->shape() : inst.shape();
    }
    case Opcode::kDot: return Dot(inst);
    case Opcode::kReduce: return Reduce(inst);
    case Opcode::kConstant:
      if (inst.has_attrs<ConstantAttrs>() && !inst.literal().shape().Compatible(inst.shape())) {
        return Error(absl::StrCat("constant literal ", S(inst.literal().shape()), " does not match"));
      }
      return inst.shape();
    default:
      // Opcodes whose full inference is not written yet keep their declared
      // shape (checked by the interpreter and the backends when they run).
      return inst.shape();
  }
}

}  // namespace hlogym
