#include "core/text/printer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

std::string Name(const std::string& name, const PrintOptions& o) {
  return o.long_style ? "%" + name : name;
}

// Shape::ToString, with XLA's /*index=N*/ before every fifth tuple element.
std::string ShapeText(const Shape& shape, bool print_layout = true) {
  if (!shape.IsTuple()) return shape.ToString(print_layout);
  std::string out = "(";
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    if (i > 0) out += ", ";
    if (i > 0 && i % 5 == 0) absl::StrAppend(&out, "/*index=", i, "*/");
    out += ShapeText(shape.tuple_shapes()[i], print_layout);
  }
  return out + ")";
}

std::string List(absl::Span<const int64_t> v) { return absl::StrCat("{", absl::StrJoin(v, ","), "}"); }

std::string Xs(const std::vector<int64_t>& v) { return absl::StrJoin(v, "x"); }

bool AllEqual(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
}

std::string WindowText(const Window& w) {
  std::vector<int64_t> size, stride, lo, hi, lhs, rhs, rev;
  for (const WindowDimension& d : w) {
    size.push_back(d.size);
    stride.push_back(d.stride);
    lo.push_back(d.padding_low);
    hi.push_back(d.padding_high);
    lhs.push_back(d.lhs_dilation);
    rhs.push_back(d.rhs_dilation);
    rev.push_back(d.reversal);
  }
  std::string out = "{size=" + Xs(size);
  if (!AllEqual(stride, 1)) out += " stride=" + Xs(stride);
  if (!AllEqual(lo, 0) || !AllEqual(hi, 0)) {
    std::vector<std::string> pads;
    for (size_t i = 0; i < lo.size(); ++i) pads.push_back(absl::StrCat(lo[i], "_", hi[i]));
    out += " pad=" + absl::StrJoin(pads, "x");
  }
  if (!AllEqual(lhs, 1)) out += " lhs_dilate=" + Xs(lhs);
  if (!AllEqual(rhs, 1)) out += " rhs_dilate=" + Xs(rhs);
  if (!AllEqual(rev, 0)) out += " rhs_reversal=" + Xs(rev);
  return out + "}";
}

std::string DimLabels(const ConvolutionDimensions& d) {
  const size_t n = d.input_spatial.size();
  std::string lhs(n + 2, '?'), rhs(n + 2, '?'), out(n + 2, '?');
  // Positions out of range (malformed IR) leave a '?' instead of writing
  // past the label.
  auto put = [](std::string& label, int64_t position, char c) {
    if (position >= 0 && static_cast<size_t>(position) < label.size()) label[position] = c;
  };
  put(lhs, d.input_batch, 'b');
  put(lhs, d.input_feature, 'f');
  put(rhs, d.kernel_input_feature, 'i');
  put(rhs, d.kernel_output_feature, 'o');
  put(out, d.output_batch, 'b');
  put(out, d.output_feature, 'f');
  for (size_t i = 0; i < n; ++i) {
    const char digit = static_cast<char>('0' + i);
    put(lhs, d.input_spatial[i], digit);
    if (i < d.kernel_spatial.size()) put(rhs, d.kernel_spatial[i], digit);
    if (i < d.output_spatial.size()) put(out, d.output_spatial[i], digit);
  }
  return lhs + "_" + rhs + "->" + out;
}

std::string Precisions(const std::vector<Precision>& p) {
  std::vector<std::string> names;
  bool all_default = true;
  for (Precision x : p) {
    names.emplace_back(PrecisionName(x));
    all_default &= x == Precision::kDefault;
  }
  return all_default ? "" : absl::StrCat(", operand_precision={", absl::StrJoin(names, ","), "}");
}

// Opcodes whose dimensions={...} XLA always writes (even when empty, as a
// broadcast of a scalar's `dimensions={}`): the parser requires it of most.
// clang-format off
bool PrintsDimensions(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast: case Opcode::kTranspose: case Opcode::kReverse:
    case Opcode::kReduce: case Opcode::kConcatenate: case Opcode::kSort:
    case Opcode::kMap: case Opcode::kScan: case Opcode::kAllGather:
    case Opcode::kAllGatherStart: case Opcode::kReduceScatter:
    case Opcode::kGetDimensionSize: case Opcode::kSetDimensionSize:
      return true;
    default:
      return false;
  }
}
// clang-format on

// The typed attributes, in XLA's order and formats.
void AppendAttributes(const Instruction& inst, std::string& out) {
  const Opcode op = inst.opcode();
  switch (op) {
    case Opcode::kGetTupleElement: absl::StrAppend(&out, ", index=", inst.tuple_index()); break;
    case Opcode::kIota: absl::StrAppend(&out, ", iota_dimension=", inst.iota_dimension()); break;
    default: break;
  }
  if (PrintsDimensions(op) || !inst.dimensions().empty()) {
    absl::StrAppend(&out, ", dimensions=", List(inst.dimensions()));
  }
  std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, SliceAttrs>) {
          // As XLA: strides are written for every dimension or, when all
          // are 1, for none.
          auto stride = [&](size_t i) { return i < a.strides.size() ? a.strides[i] : 1; };
          bool unit_strides = true;
          for (size_t i = 0; i < a.starts.size(); ++i) unit_strides &= stride(i) == 1;
          std::vector<std::string> parts;
          for (size_t i = 0; i < a.starts.size() && i < a.limits.size(); ++i) {
            parts.push_back(unit_strides
                                ? absl::StrCat("[", a.starts[i], ":", a.limits[i], "]")
                                : absl::StrCat("[", a.starts[i], ":", a.limits[i], ":", stride(i), "]"));
          }
          absl::StrAppend(&out, ", slice={", absl::StrJoin(parts, ", "), "}");
        } else if constexpr (std::is_same_v<T, DynamicSliceAttrs>) {
          absl::StrAppend(&out, ", dynamic_slice_sizes=", List(a.sizes));
        } else if constexpr (std::is_same_v<T, PadAttrs>) {
          bool interior = false;
          for (const auto& p : a.padding) interior |= p.interior != 0;
          std::vector<std::string> parts;
          for (const auto& p : a.padding) {
            parts.push_back(interior ? absl::StrCat(p.low, "_", p.high, "_", p.interior)
                                     : absl::StrCat(p.low, "_", p.high));
          }
          absl::StrAppend(&out, ", padding=", absl::StrJoin(parts, "x"));
        } else if constexpr (std::is_same_v<T, CompareAttrs>) {
          absl::StrAppend(&out, ", direction=", std::string(ComparisonDirectionName(a.direction)));
          // The parser reads a raw `order=TOTAL` as type TOTALORDER and keeps
          // the raw text, which prints below: writing both would duplicate it.
          const bool implied_by_order =
              a.type == ComparisonType::kTotalOrder && inst.FindRawAttribute("order") != nullptr;
          if (a.type != ComparisonType::kDefault && !implied_by_order) {
            absl::StrAppend(&out, ", type=", std::string(ComparisonTypeName(a.type)));
          }
        } else if constexpr (std::is_same_v<T, DotAttrs>) {
          if (!a.dims.lhs_batch.empty()) absl::StrAppend(&out, ", lhs_batch_dims=", List(a.dims.lhs_batch));
          absl::StrAppend(&out, ", lhs_contracting_dims=", List(a.dims.lhs_contracting));
          if (!a.dims.rhs_batch.empty()) absl::StrAppend(&out, ", rhs_batch_dims=", List(a.dims.rhs_batch));
          absl::StrAppend(&out, ", rhs_contracting_dims=", List(a.dims.rhs_contracting));
          out += Precisions(a.precision);
          if (!a.algorithm.empty()) absl::StrAppend(&out, ", algorithm=", a.algorithm);
        } else if constexpr (std::is_same_v<T, ConvolutionAttrs>) {
          if (!a.window.empty()) absl::StrAppend(&out, ", window=", WindowText(a.window));
          absl::StrAppend(&out, ", dim_labels=", DimLabels(a.dims));
          if (a.feature_group_count != 1) absl::StrAppend(&out, ", feature_group_count=", a.feature_group_count);
          if (a.batch_group_count != 1) absl::StrAppend(&out, ", batch_group_count=", a.batch_group_count);
          out += Precisions(a.precision);
        } else if constexpr (std::is_same_v<T, WindowAttrs>) {
          absl::StrAppend(&out, ", window=", WindowText(a.window));
        } else if constexpr (std::is_same_v<T, GatherAttrs>) {
          const auto& d = a.dims;
          absl::StrAppend(&out, ", offset_dims=", List(d.offset_dims), ", collapsed_slice_dims=",
                          List(d.collapsed_slice_dims), ", start_index_map=", List(d.start_index_map));
          if (!d.operand_batching_dims.empty()) {
            absl::StrAppend(&out, ", operand_batching_dims=", List(d.operand_batching_dims),
                            ", start_indices_batching_dims=", List(d.start_indices_batching_dims));
          }
          absl::StrAppend(&out, ", index_vector_dim=", d.index_vector_dim, ", slice_sizes=",
                          List(a.slice_sizes));
          if (a.indices_are_sorted) out += ", indices_are_sorted=true";
        } else if constexpr (std::is_same_v<T, ScatterAttrs>) {
          const auto& d = a.dims;
          absl::StrAppend(&out, ", update_window_dims=", List(d.update_window_dims),
                          ", inserted_window_dims=", List(d.inserted_window_dims),
                          ", scatter_dims_to_operand_dims=", List(d.scatter_dims_to_operand_dims));
          if (!d.input_batching_dims.empty()) {
            absl::StrAppend(&out, ", input_batching_dims=", List(d.input_batching_dims),
                            ", scatter_indices_batching_dims=", List(d.scatter_indices_batching_dims));
          }
          absl::StrAppend(&out, ", index_vector_dim=", d.index_vector_dim);
          if (a.indices_are_sorted) out += ", indices_are_sorted=true";
          if (a.unique_indices) out += ", unique_indices=true";
        } else if constexpr (std::is_same_v<T, SortAttrs>) {
          if (a.is_stable) out += ", is_stable=true";
        } else if constexpr (std::is_same_v<T, TopKAttrs>) {
          absl::StrAppend(&out, ", k=", a.k, ", largest=", a.largest ? "true" : "false");
        } else if constexpr (std::is_same_v<T, FusionAttrs>) {
          absl::StrAppend(&out, ", kind=", std::string(FusionKindName(a.kind)));
        } else if constexpr (std::is_same_v<T, CustomCallAttrs>) {
          absl::StrAppend(&out, ", custom_call_target=\"", absl::CEscape(a.target), "\"");
        } else if constexpr (std::is_same_v<T, RngAttrs>) {
          absl::StrAppend(&out, ", distribution=", std::string(RngDistributionName(a.distribution)));
        } else if constexpr (std::is_same_v<T, RngBitGeneratorAttrs>) {
          absl::StrAppend(&out, ", algorithm=", std::string(RngAlgorithmName(a.algorithm)));
        } else if constexpr (std::is_same_v<T, BatchNormAttrs>) {
          absl::StrAppend(&out, ", epsilon=", a.epsilon, ", feature_index=", a.feature_index);
        } else if constexpr (std::is_same_v<T, FftAttrs>) {
          absl::StrAppend(&out, ", fft_type=", std::string(FftTypeName(a.type)), ", fft_length=", List(a.length));
        } else if constexpr (std::is_same_v<T, ReducePrecisionAttrs>) {
          absl::StrAppend(&out, ", exponent_bits=", a.exponent_bits, ", mantissa_bits=", a.mantissa_bits);
        } else if constexpr (std::is_same_v<T, ScanAttrs>) {
          absl::StrAppend(&out, ", num_carries=", a.num_carries);
          if (a.is_reverse) out += ", is_reverse=true";
          if (a.is_associative) out += ", is_associative=true";
        }
      },
      inst.op_attrs());
}

void AppendCalled(const Instruction& inst, const PrintOptions& o, std::string& out) {
  const auto called = inst.called_computations();
  if (called.empty()) return;
  // A computation missing from the IR prints as "<null>" rather than crash.
  auto name = [&](const Computation* c) { return c ? Name(c->name(), o) : std::string("<null>"); };
  // Malformed IR (wrong callee counts) prints as a plain list, never crashes.
  const bool pair = called.size() == 2;
  switch (inst.opcode()) {
    case Opcode::kFusion: case Opcode::kAsyncStart:
      if (called.size() != 1) break;
      absl::StrAppend(&out, ", calls=", name(called[0]));
      return;
    case Opcode::kWhile:
      if (!pair) break;
      absl::StrAppend(&out, ", condition=", name(called[0]), ", body=", name(called[1]));
      return;
    case Opcode::kSelectAndScatter:
      if (!pair) break;
      absl::StrAppend(&out, ", select=", name(called[0]), ", scatter=", name(called[1]));
      return;
    case Opcode::kConditional:
      if (pair && inst.operand_count() > 0 &&
          inst.operand(0)->shape().element_type() == PrimitiveType::kPred) {
        absl::StrAppend(&out, ", true_computation=", name(called[0]), ", false_computation=",
                        name(called[1]));
      } else {
        std::vector<std::string> names;
        for (const Computation* c : called) names.push_back(name(c));
        absl::StrAppend(&out, ", branch_computations={", absl::StrJoin(names, ", "), "}");
      }
      return;
    case Opcode::kCustomCall:
      break;
    default:
      if (called.size() != 1) break;
      absl::StrAppend(&out, ", to_apply=", name(called[0]));
      return;
  }
  std::vector<std::string> names;
  for (const Computation* c : called) names.push_back(name(c));
  absl::StrAppend(&out, ", called_computations={", absl::StrJoin(names, ", "), "}");
}

std::string InstructionText(const Instruction& inst, const PrintOptions& o) {
  std::string out = absl::StrCat(Name(inst.name(), o), " = ", ShapeText(inst.shape()), " ",
                                 std::string(OpcodeName(inst.opcode())), "(");
  if (inst.opcode() == Opcode::kParameter) {
    absl::StrAppend(&out, inst.parameter_number());
  } else if (inst.opcode() == Opcode::kConstant && inst.has_attrs<ConstantAttrs>()) {
    const Literal& literal = inst.literal();
    const bool large = literal.shape().IsTuple() || literal.element_count() > 10;
    out += (large && !o.print_large_constants) ? "{...}" : literal.ToString();
  } else {
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (i) out += ", ";
      if (o.long_style && i > 0 && i % 5 == 0) absl::StrAppend(&out, "/*index=", i, "*/");
      if (o.long_style) absl::StrAppend(&out, ShapeText(inst.operand(i)->shape()), " ");
      out += Name(inst.operand(i)->name(), o);
    }
  }
  out += ")";
  AppendAttributes(inst, out);
  AppendCalled(inst, o, out);
  for (const RawAttribute& raw : inst.raw_attributes()) {
    if (!o.print_metadata && raw.name == "metadata") continue;
    absl::StrAppend(&out, ", ", raw.name, "=", raw.value);
  }
  if (!inst.control_predecessors().empty()) {
    std::vector<std::string> names;
    for (const Instruction* p : inst.control_predecessors()) names.push_back(Name(p->name(), o));
    absl::StrAppend(&out, ", control-predecessors={", absl::StrJoin(names, ", "), "}");
  }
  return out;
}

}  // namespace

std::string PrintInstruction(const Instruction& instruction, const PrintOptions& options) {
  return InstructionText(instruction, options);
}

std::string PrintComputation(const Computation& c, const PrintOptions& o) {
  std::string out;
  if (c.IsEntry()) out += "ENTRY ";
  out += Name(c.name(), o);
  if (o.long_style) {
    std::vector<std::string> params;
    for (const Instruction* p : c.parameters()) {
      if (p != nullptr) params.push_back(absl::StrCat(p->name(), ": ", ShapeText(p->shape(), false)));
    }
    absl::StrAppend(&out, " (", absl::StrJoin(params, ", "), ") -> ",
                    c.root() ? ShapeText(c.root()->shape(), false) : "()");
  }
  out += " {\n";
  for (const Instruction* inst : c.MakePostOrder()) {
    absl::StrAppend(&out, "  ", inst == c.root() ? "ROOT " : "", InstructionText(*inst, o), "\n");
  }
  out += "}";
  if (!c.execution_thread().empty()) absl::StrAppend(&out, ", execution_thread=\"", c.execution_thread(), "\"");
  return out;
}

std::string PrintModule(const Module& module, const PrintOptions& o) {
  std::string out = "HloModule " + module.name();
  if (const auto& layout = module.entry_computation_layout()) {
    // XLA prints the parameter list like a tuple: with /*index=N*/ comments.
    const Shape params = Shape::Tuple(layout->parameters);
    absl::StrAppend(&out, ", entry_computation_layout={", ShapeText(params), "->",
                    ShapeText(layout->result), "}");
  }
  for (const RawAttribute& raw : module.raw_attributes()) {
    absl::StrAppend(&out, ", ", raw.name, "=", raw.value);
  }
  out += "\n\n";
  if (!module.stack_frame_index().empty()) absl::StrAppend(&out, module.stack_frame_index(), "\n\n");
  for (const auto& c : module.computations()) absl::StrAppend(&out, PrintComputation(*c, o), "\n\n");
  return out;
}

}  // namespace hlogym
