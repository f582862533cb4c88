#include "backend/cpu_vector_math.h"

#include "absl/strings/str_cat.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

namespace hlogym {
namespace {

// The double-precision functions glibc 2.35+ libmvec exports (x86-64), by
// arity; the float ones are the same names with "f". Which of them a given
// libmvec has is checked symbol by symbol.
constexpr const char* kUnary[] = {"acos", "acosh", "asin", "asinh", "atan",  "atanh",
                                  "cbrt", "cos",   "cosh", "erf",   "erfc",  "exp",
                                  "exp10", "exp2", "expm1", "log",  "log10", "log1p",
                                  "log2", "sin",   "sinh", "tan",   "tanh"};
constexpr const char* kBinary[] = {"atan2", "hypot", "pow"};

std::string VariantName(char isa, int lanes, int arity, absl::string_view name) {
  return absl::StrCat("_ZGV", std::string(1, isa), "N", lanes, std::string(arity, 'v'), "_",
                      name);
}

bool HasFeature(const std::string& features, absl::string_view feature) {
  const std::string plus = absl::StrCat("+", feature);
  size_t at = features.find(plus);
  while (at != std::string::npos) {
    const size_t end = at + plus.size();
    if (end == features.size() || features[end] == ',') return true;
    at = features.find(plus, end);
  }
  return false;
}

}  // namespace

VectorMathLibrary VectorMathLibrary::ForHost(const llvm::TargetMachine& target) {
  VectorMathLibrary library;
  if (target.getTargetTriple().getArch() != llvm::Triple::x86_64) return library;
  std::string error;
  llvm::sys::DynamicLibrary mvec =
      llvm::sys::DynamicLibrary::getPermanentLibrary("libmvec.so.1", &error);
  if (!mvec.isValid()) return library;
  // One variant per register width, the newest ISA the host has for it
  // (AVX2's 256-bit functions over AVX's).
  const std::string features = target.getTargetFeatureString().str();
  library.isas_.push_back({'b', 128});
  if (HasFeature(features, "avx2")) {
    library.isas_.push_back({'d', 256});
  } else if (HasFeature(features, "avx")) {
    library.isas_.push_back({'c', 256});
  }
  if (HasFeature(features, "avx512f")) library.isas_.push_back({'e', 512});
  auto keep = [&](int arity, const std::string& name, int element_bits) {
    for (const Isa& isa : library.isas_) {
      const std::string variant = VariantName(isa.letter, isa.bits / element_bits, arity, name);
      if (mvec.getAddressOfSymbol(variant.c_str()) != nullptr) library.variants_.insert(variant);
    }
  };
  for (const char* name : kUnary) {
    keep(1, name, 64);
    keep(1, absl::StrCat(name, "f"), 32);
  }
  for (const char* name : kBinary) {
    keep(2, name, 64);
    keep(2, absl::StrCat(name, "f"), 32);
  }
  return library;
}

int VectorMathLibrary::Annotate(llvm::CallInst* call, absl::string_view name) const {
  llvm::Type* type = call->getType();
  if (!type->isFloatTy() && !type->isDoubleTy()) return 0;
  const int element_bits = static_cast<int>(type->getPrimitiveSizeInBits());
  const int arity = static_cast<int>(call->arg_size());
  llvm::Module& module = *call->getModule();
  std::vector<std::string> mappings;
  for (const Isa& isa : isas_) {
    const int lanes = isa.bits / element_bits;
    const std::string variant = VariantName(isa.letter, lanes, arity, name);
    if (variants_.count(variant) == 0) continue;
    llvm::Function* function = module.getFunction(variant);
    if (function == nullptr) {
      llvm::Type* vector = llvm::FixedVectorType::get(type, lanes);
      function = llvm::Function::Create(
          llvm::FunctionType::get(vector, std::vector<llvm::Type*>(arity, vector), false),
          llvm::Function::ExternalLinkage, variant, module);
      function->setDoesNotAccessMemory();
      function->setDoesNotThrow();
      function->setWillReturn();
      // The vectorizer finds a variant by its declaration; unused until
      // then, which the passes before it would delete.
      llvm::appendToCompilerUsed(module, {function});
    }
    mappings.push_back(absl::StrCat(variant, "(", variant, ")"));
  }
  if (!mappings.empty()) llvm::VFABI::setVectorVariantNames(call, mappings);
  return static_cast<int>(mappings.size());
}

}  // namespace hlogym
