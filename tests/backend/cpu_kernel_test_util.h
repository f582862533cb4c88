// Support for the CPU kernel and executable tests: one compiler for the test
// binary, run a compiled kernel on literals, and compare kernel outputs with
// the reference interpreter element by element.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "backend/cpu_kernel.h"
#include "backend/cpu_split_reduce.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/ir/computation.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym::kernel_test {

// One compiler for the whole test binary (JIT start-up is not free).
inline CpuKernelCompiler& Compiler() {
  static CpuKernelCompiler* compiler = [] {
    absl::StatusOr<std::unique_ptr<CpuKernelCompiler>> c = CpuKernelCompiler::Create();
    if (!c.ok()) std::abort();
    return c->release();
  }();
  return *compiler;
}

// The module `text` parses to, or null after a failed expectation.
inline std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

// The instruction's result leaves, each a dense row-major literal.
inline std::vector<Shape> LeafShapes(const Shape& shape) {
  if (!shape.IsTuple()) return {shape};
  return shape.tuple_shapes();
}

// Compiles `instruction` and runs it on `operands`, splitting the parallel
// extent into `pieces` ranges (so range boundaries are exercised).
inline absl::StatusOr<std::vector<Literal>> RunKernel(const Instruction& instruction,
                                                      const std::vector<const Literal*>& operands,
                                                      int pieces = 3) {
  absl::StatusOr<CpuKernel> kernel = Compiler().Compile(instruction);
  if (!kernel.ok()) return kernel.status();
  std::vector<Literal> outputs;
  for (const Shape& s : LeafShapes(instruction.shape())) outputs.emplace_back(s);
  std::vector<void*> buffers;
  for (const Literal* l : operands) buffers.push_back(const_cast<uint8_t*>(l->raw_data()));
  for (Literal& l : outputs) buffers.push_back(l.raw_data());
  std::vector<std::vector<double>> scratch;
  for (int64_t n : kernel->scratch_doubles) {
    scratch.emplace_back(n);
    buffers.push_back(scratch.back().data());
  }
  const int64_t extent = kernel->parallel_extent;
  int64_t begin = 0;
  for (int p = 1; p <= pieces; ++p) {
    const int64_t end = extent * p / pieces;
    if (end > begin) kernel->fn(buffers.data(), begin, end);
    begin = end;
  }
  FinishSplitReductions(*kernel, buffers.data());
  return outputs;
}

// Elementwise comparison: bitwise for non-floats, NaN == NaN, and floats
// within `ulps` units in the last place of the type (0: exact).
inline std::string Mismatch(const Literal& expected, const Literal& actual, int64_t ulps) {
  const PrimitiveType t = expected.shape().element_type();
  if (!expected.shape().Compatible(actual.shape())) {
    return absl::StrCat("shape ", expected.shape().ToString(), " vs ", actual.shape().ToString());
  }
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    if (IsFloat(t)) {
      const double e = expected.GetAsDouble(i), a = actual.GetAsDouble(i);
      if (std::isnan(e) && std::isnan(a)) continue;
      if (e == a && std::signbit(e) == std::signbit(a)) continue;
      double ulp;
      switch (t) {
        case PrimitiveType::kF64: ulp = std::ldexp(1.0, -52); break;
        case PrimitiveType::kF32: ulp = std::ldexp(1.0, -23); break;
        case PrimitiveType::kF16: ulp = std::ldexp(1.0, -10); break;
        default: ulp = std::ldexp(1.0, -7); break;
      }
      const double scale =
          std::max({std::fabs(e), std::fabs(a), t == PrimitiveType::kF32 ? 1e-30 : 1e-6});
      if (std::fabs(e - a) <= ulps * ulp * scale) continue;
      return absl::StrCat("element ", i, ": expected ", e, " got ", a);
    } else if (expected.GetAsInt64(i) != actual.GetAsInt64(i)) {
      return absl::StrCat("element ", i, ": expected ", expected.GetAsInt64(i), " got ",
                          actual.GetAsInt64(i));
    }
  }
  return "";
}

// Parses `text`, runs the entry root compiled on `args` and through the
// interpreter, and returns the first mismatch ("" when all match).
inline absl::StatusOr<std::string> CompareRoot(const std::string& text,
                                               const std::vector<Literal>& args, int64_t ulps) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
  if (!module.ok()) return module.status();
  absl::StatusOr<std::vector<Literal>> expected = EvaluateFlat(**module, args);
  if (!expected.ok()) return expected.status();
  const Instruction& root = *(*module)->entry()->root();
  std::vector<const Literal*> operands;
  for (const Instruction* operand : root.operands()) {
    if (operand->opcode() != Opcode::kParameter) {
      return absl::InvalidArgumentError("the root's operands must be entry parameters");
    }
    operands.push_back(&args.at(operand->parameter_number()));
  }
  absl::StatusOr<std::vector<Literal>> actual = RunKernel(root, operands);
  if (!actual.ok()) return actual.status();
  for (size_t k = 0; k < expected->size(); ++k) {
    std::string m = Mismatch((*expected)[k], (*actual)[k], ulps);
    if (!m.empty()) return absl::StrCat("output ", k, " ", m);
  }
  return std::string();
}

// Expects the entry root of `text`, compiled, to equal the interpreter
// exactly on the formula inputs.
inline void ExpectExact(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::string> m = CompareRoot(text, FormulaInputs(**module), 0);
  ASSERT_TRUE(m.ok()) << m.status() << "\n" << text;
  EXPECT_EQ(*m, "") << text;
}

}  // namespace hlogym::kernel_test
