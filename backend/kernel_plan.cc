#include "backend/kernel_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backend/elemental_emitter.h"
#include "core/ir/computation.h"
#include "core/ir/fingerprint.h"
#include "core/text/printer.h"

namespace hlogym {
namespace {

// Ops the executable runs on the host instead (they have no elemental form,
// or produce no array of their own).
bool IsHostOnly(Opcode op) {
  switch (op) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string KernelCacheKey(const Instruction& instruction) {
  std::string key = absl::StrCat(instruction.shape().ToString(), "|");
  for (const Instruction* operand : instruction.operands()) {
    absl::StrAppend(&key, operand->shape().ToString(), ";");
  }
  if (instruction.IsFusion()) {
    absl::StrAppend(&key, "fusion:", Fingerprint(*instruction.fused_computation()));
    return key;
  }
  // An unfused op: its text without its name and operand names.
  PrintOptions options;
  options.print_metadata = false;
  const std::string text = PrintInstruction(instruction, options);
  const std::string opcode(OpcodeName(instruction.opcode()));
  size_t open = text.find(" " + opcode + "(");
  size_t close = open == std::string::npos ? std::string::npos : text.find(')', open);
  absl::StrAppend(&key, opcode, close == std::string::npos ? text : text.substr(close));
  for (const Computation* called : instruction.called_computations()) {
    absl::StrAppend(&key, "|", Fingerprint(*called));
  }
  return key;
}

int64_t WorkPerElement(const Instruction& instruction) {
  int64_t work = 1;
  auto visit = [&](const Instruction& i) {
    if (i.opcode() == Opcode::kReduce) {
      const int64_t out = std::max<int64_t>(1, i.shape().IsTuple()
                                                   ? i.shape().tuple_shape(0).element_count()
                                                   : i.shape().element_count());
      work = std::max(work, i.operand(0)->shape().element_count() / out);
    } else if (i.opcode() == Opcode::kReduceWindow) {
      int64_t size = 1;
      for (const WindowDimension& w : i.attrs<WindowAttrs>().window) size *= w.size;
      work = std::max(work, size);
    }
  };
  if (instruction.IsFusion()) {
    for (const auto& i : instruction.fused_computation()->instructions()) visit(*i);
  } else {
    visit(instruction);
  }
  return work;
}

absl::StatusOr<std::vector<KernelOutput>> KernelOutputs(const Instruction& root,
                                                        int64_t first_buffer) {
  std::vector<KernelOutput> outputs;
  auto not_supported = [&](const Instruction& i) {
    return absl::UnimplementedError(absl::StrCat("not supported: nested tuple output of ",
                                                 std::string(OpcodeName(i.opcode())), " (",
                                                 i.name(), ")"));
  };
  if (root.opcode() == Opcode::kTuple) {
    for (int64_t j = 0; j < root.operand_count(); ++j) {
      const Instruction* operand = root.operand(j);
      if (operand->shape().IsTuple()) return not_supported(*operand);
      outputs.push_back({operand, 0, first_buffer + j, operand->shape()});
    }
  } else if (root.shape().IsTuple()) {
    for (int64_t k = 0; k < root.shape().tuple_size(); ++k) {
      if (root.shape().tuple_shape(k).IsTuple()) return not_supported(root);
      outputs.push_back({&root, k, first_buffer + k, root.shape().tuple_shape(k)});
    }
  } else {
    outputs.push_back({&root, 0, first_buffer, root.shape()});
  }
  return outputs;
}

namespace {

void CollectPrograms(const Computation& computation, std::vector<const Computation*>& out) {
  if (std::find(out.begin(), out.end(), &computation) != out.end()) return;
  out.push_back(&computation);
  for (const auto& instruction : computation.instructions()) {
    const Opcode op = instruction->opcode();
    if (op != Opcode::kWhile && op != Opcode::kConditional && op != Opcode::kCall) continue;
    for (const Computation* called : instruction->called_computations()) {
      CollectPrograms(*called, out);
    }
  }
}

}  // namespace

std::vector<const Computation*> ProgramComputations(const Computation& entry) {
  std::vector<const Computation*> programs;
  CollectPrograms(entry, programs);
  return programs;
}

bool CanCompileKernel(const Instruction& instruction) {
  if (instruction.IsFusion()) {
    return ElementalEmitter::CheckSupported(*instruction.fused_computation()).ok();
  }
  if (IsHostOnly(instruction.opcode())) return false;
  return ElementalEmitter::CheckSupported(instruction).ok();
}

}  // namespace hlogym
