// The verifier: every bundled module verifies once parsed, and each kind of
// structural or shape error is caught with a message naming the computation,
// the instruction and what was expected and found.
#include "core/ir/verifier.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/shape_inference_test_util.h"

namespace hlogym {
namespace {

using ::hlogym::testing_util::ModuleText;
using ::hlogym::testing_util::VerifyText;
using ::testing::HasSubstr;

Shape F32(std::vector<int64_t> dims) { return Shape::Array(PrimitiveType::kF32, std::move(dims)); }

// A module with an empty entry computation `main`, for building by hand.
struct Built {
  std::unique_ptr<Module> module = std::make_unique<Module>("m");
  Computation* main = nullptr;

  Built() {
    main = module->AddComputation(std::make_unique<Computation>("main"));
    module->set_entry(main);
  }
  Instruction* Param(int64_t number, Shape shape, std::string name) {
    return main->AddInstruction(Instruction::CreateParameter(number, std::move(shape), std::move(name)));
  }
  Instruction* Add(Opcode op, Shape shape, std::vector<Instruction*> operands, std::string name) {
    auto inst = Instruction::Create(op, std::move(shape), operands);
    inst->set_name(std::move(name));
    return main->AddInstruction(std::move(inst));
  }
  std::string Verify(const VerifyOptions& options = {}) const {
    absl::Status s = hlogym::Verify(*module, options);
    return s.ok() ? "OK" : std::string(s.message());
  }
};

std::vector<std::filesystem::path> HloFiles(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root = std::filesystem::path(HLOGYM_SOURCE_DIR) / dir;
  if (!std::filesystem::exists(root)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(VerifierCorpusTest, EveryBundledModuleVerifies) {
  int64_t verified = 0;
  for (const char* dir : {"data/corpus/hlo", "data/corpus/small/hlo", "data/dataset/hlo",
                          "data/corpus/xla_gpu"}) {
    for (const auto& path : HloFiles(dir)) {
      std::ifstream in(path, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      EXPECT_EQ(VerifyText(text.str()), "OK") << path;
      ++verified;
    }
  }
  // 25 corpus modules, 24 small twins, 126 dataset modules, 25 XLA:GPU dumps.
  EXPECT_GE(verified, 200);
}

// Random one-character edits of real modules: whatever parses must verify
// or be rejected with a message, never crash (run under the sanitizers).
TEST(VerifierCorpusTest, MutatedModulesNeverCrash) {
  std::vector<std::string> texts;
  for (const auto& path : HloFiles("data/corpus/small/hlo")) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    texts.push_back(text.str());
  }
  ASSERT_FALSE(texts.empty());
  std::mt19937 rng(12345);
  const std::string kReplacements = "0123456789-,{}[]x_";
  int64_t parsed = 0, rejected = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = texts[rng() % texts.size()];
    // Edit a digit most of the time: dims, attributes and indices.
    size_t pos = rng() % text.size();
    for (int tries = 0; tries < 64 && !std::isdigit(static_cast<unsigned char>(text[pos])); ++tries) {
      pos = rng() % text.size();
    }
    text[pos] = kReplacements[rng() % kReplacements.size()];
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
    if (!module.ok()) continue;
    ++parsed;
    if (!Verify(**module).ok()) ++rejected;
  }
  EXPECT_GT(parsed, 500) << rejected;
  EXPECT_GT(rejected, 100) << parsed;  // the edits break shapes, and the verifier sees it
}

TEST(VerifierTest, AcceptsAWellFormedModule) {
  EXPECT_EQ(VerifyText(ModuleText("p = f32[8] parameter(0)\nn = f32[8] negate(p)\n"
                                   "ROOT a = f32[8] add(p, n)")),
            "OK");
}

TEST(VerifierTest, WrongOperandCount) {
  Built b;
  Instruction* p = b.Param(0, F32({4}), "p");
  b.main->set_root(b.Add(Opcode::kAdd, F32({4}), {p, p, p}, "a"));
  EXPECT_EQ(b.Verify(), "computation `main`, instruction `a`: add takes 2 operands, got 3");
}

TEST(VerifierTest, WrongShapeNamesInstructionAndBothShapes) {
  EXPECT_EQ(VerifyText(ModuleText("p = f32[8] parameter(0)\nROOT a = f32[4] add(p, p)")),
            "computation `main`, instruction `a`: add's shape does not match its operands and "
            "attributes (expected f32[8], got f32[4])");
  EXPECT_EQ(VerifyText(ModuleText("p = f32[8] parameter(0)\nROOT a = s32[8] negate(p)")),
            "computation `main`, instruction `a`: negate's shape does not match its operands and "
            "attributes (expected f32[8], got s32[8])");
}

TEST(VerifierTest, BadReducerSignature) {
  const char* kReducer =
      "bad {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
      " ROOT t = (f32[], f32[]) tuple(a, b)\n}\n";
  EXPECT_EQ(VerifyText(ModuleText("p = f32[8] parameter(0)\nz = f32[] constant(0)\n"
                                  "ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=bad",
                                  kReducer)),
            "computation `main`, instruction `r`: reducer `bad` must return a scalar, got "
            "(f32[], f32[])");
}

TEST(VerifierTest, Cycle) {
  Built b;
  Instruction* p = b.Param(0, F32({4}), "p");
  Instruction* x = b.Add(Opcode::kNegate, F32({4}), {p}, "x");
  Instruction* y = b.Add(Opcode::kNegate, F32({4}), {x}, "y");
  x->ReplaceOperandWith(int64_t{0}, y);
  b.main->set_root(y);
  EXPECT_EQ(b.Verify(),
            "computation `main`, instruction `x`: is part of a cycle of operands or control "
            "predecessors: x -> y -> x");
}

TEST(VerifierTest, ControlDependencyCycle) {
  Built b;
  Instruction* p = b.Param(0, F32({4}), "p");
  Instruction* x = b.Add(Opcode::kNegate, F32({4}), {p}, "x");
  Instruction* y = b.Add(Opcode::kNegate, F32({4}), {x}, "y");
  y->AddControlDependencyTo(x);
  b.main->set_root(y);
  EXPECT_THAT(b.Verify(), HasSubstr("is part of a cycle"));
}

TEST(VerifierTest, MissingRoot) {
  Built b;
  b.Param(0, F32({4}), "p");
  EXPECT_EQ(b.Verify(), "computation `main`: has no root");
}

TEST(VerifierTest, ParameterGap) {
  Built b;
  b.main->set_root(b.Param(1, F32({4}), "p1"));
  EXPECT_EQ(b.Verify(),
            "computation `main`: has no parameter 0 but 2 parameters (they must be numbered 0..n-1)");
}

TEST(VerifierTest, DuplicateParameterNumber) {
  Built b;
  b.Param(0, F32({4}), "p");
  Instruction* q = b.Param(0, F32({4}), "q");  // takes over slot 0
  b.main->set_root(q);
  EXPECT_EQ(b.Verify(),
            "computation `main`, instruction `p`: parameter(0) is not registered as parameter 0 "
            "(is the number used twice?)");
}

TEST(VerifierTest, DuplicateName) {
  Built b;
  Instruction* p = b.Param(0, F32({4}), "p");
  b.Add(Opcode::kNegate, F32({4}), {p}, "x");
  b.main->set_root(b.Add(Opcode::kNegate, F32({4}), {p}, "x"));
  EXPECT_EQ(b.Verify(),
            "computation `main`, instruction `x`: the name is used by two instructions of the "
            "computation");
}

TEST(VerifierTest, UserAndOperandListsDisagree) {
  // An instruction of another computation uses `p`: p's user list names an
  // instruction that is not in its computation.
  Built b;
  Instruction* p = b.Param(0, F32({4}), "p");
  b.main->set_root(p);
  Computation* other = b.module->AddComputation(std::make_unique<Computation>("other"));
  other->set_root(other->AddInstruction(Instruction::Create(Opcode::kNegate, F32({4}), {p})));
  other->root()->set_name("n");
  EXPECT_EQ(b.Verify(),
            "computation `main`, instruction `p`: lists user `n` from another computation");
}

TEST(VerifierTest, CalleeMustBeInTheModuleAndComeFirst) {
  Built b;
  Instruction* p = b.Param(0, F32({4}), "p");
  auto callee = std::make_unique<Computation>("f");
  callee->set_root(callee->AddInstruction(Instruction::CreateParameter(0, F32({4}), "a")));
  Instruction* call = b.Add(Opcode::kCall, F32({4}), {p}, "c");
  call->set_called_computations({callee.get()});
  b.main->set_root(call);
  EXPECT_EQ(b.Verify(), "computation `main`, instruction `c`: calls `f`, which is not in the module");
  b.module->AddComputation(std::move(callee));  // after its caller
  EXPECT_EQ(b.Verify(),
            "computation `main`, instruction `c`: calls `f`, which does not come before its caller "
            "in the module (callees come first; recursion is not allowed)");
}

TEST(VerifierTest, CalledComputationCountPerOpcode) {
  Built b;
  Computation* f = b.module->AddComputation(std::make_unique<Computation>("f"));
  f->set_root(f->AddInstruction(Instruction::CreateParameter(0, F32({4}), "a")));
  Instruction* p = b.Param(0, F32({4}), "p");
  Instruction* n = b.Add(Opcode::kNegate, F32({4}), {p}, "n");
  n->set_called_computations({f});
  b.main->set_root(n);
  EXPECT_EQ(b.Verify(), "computation `main`, instruction `n`: negate calls 0 computations, got 1");
  Instruction* call = b.Add(Opcode::kCall, F32({4}), {p}, "c");
  n->set_called_computations({});
  b.main->set_root(call);
  EXPECT_EQ(b.Verify(), "computation `main`, instruction `c`: call calls 1 computation, got 0");
}

TEST(VerifierTest, FusionBackPointer) {
  const std::string text = ModuleText(
      "x = f32[4] parameter(0)\nROOT c = f32[4] fusion(x), kind=kLoop, calls=fused",
      "fused {\n a = f32[4] parameter(0)\n ROOT r = f32[4] negate(a)\n}\n");
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(Verify(**m).ok());
  Computation* fused = (*m)->FindComputation("fused");
  Instruction* fusion = (*m)->entry()->root();
  fused->set_fusion_instruction(nullptr);
  EXPECT_EQ(std::string(Verify(**m).message()),
            "computation `main`, instruction `c`: its fused computation `fused` does not name it "
            "as its fusion instruction");
  fused->set_fusion_instruction(fusion->operand(0));
  EXPECT_EQ(std::string(Verify(**m).message()),
            "computation `fused`: names `x` as its fusion instruction, which does not call it");
}

TEST(VerifierTest, EntryComputationLayout) {
  Built b;
  b.main->set_root(b.Param(0, F32({4}), "p"));
  b.module->set_entry_computation_layout(ComputationLayout{{F32({4})}, F32({4})});
  EXPECT_EQ(b.Verify(), "OK");
  b.module->set_entry_computation_layout(ComputationLayout{{F32({5})}, F32({4})});
  EXPECT_EQ(b.Verify(),
            "entry_computation_layout of module `m`: parameter 0 does not match `main` (expected "
            "f32[4], got f32[5])");
  b.module->set_entry_computation_layout(ComputationLayout{{F32({4}), F32({4})}, F32({4})});
  EXPECT_EQ(b.Verify(), "entry_computation_layout of module `m`: lists 2 parameters but `main` takes 1");
}

TEST(VerifierTest, LayoutsCountOnlyWhenAskedFor) {
  const std::string text = ModuleText(
      "p = (f32[2,3]{1,0}) parameter(0)\nROOT g = f32[2,3]{0,1} get-tuple-element(p), index=0");
  EXPECT_EQ(VerifyText(text), "OK");
  VerifyOptions options;
  options.layout_sensitive = true;
  EXPECT_EQ(VerifyText(text, options),
            "computation `main`, instruction `g`: get-tuple-element's shape does not match its "
            "operands and attributes (expected f32[2,3]{1,0}, got f32[2,3]{0,1})");
  // A copy may change the layout even then.
  EXPECT_EQ(VerifyText(ModuleText("p = f32[2,3]{1,0} parameter(0)\n"
                                  "ROOT c = f32[2,3]{0,1} copy(p)"),
                       options),
            "OK");
}

TEST(VerifierTest, ReportsTheFirstErrorInInstructionOrder) {
  EXPECT_EQ(VerifyText(ModuleText("p = f32[8] parameter(0)\na = f32[2] negate(p)\n"
                                  "ROOT b = f32[3] negate(p)")),
            "computation `main`, instruction `a`: negate's shape does not match its operands and "
            "attributes (expected f32[8], got f32[2])");
}

TEST(VerifierTest, ChecksCalledComputationSignatures) {
  const char* kLoop =
      "cond {\n s = f32[4] parameter(0)\n ROOT c = f32[] constant(1)\n}\n"
      "body {\n s = f32[4] parameter(0)\n ROOT n = f32[4] negate(s)\n}\n";
  EXPECT_EQ(VerifyText(ModuleText("x = f32[4] parameter(0)\n"
                                  "ROOT w = f32[4] while(x), condition=cond, body=body",
                                  kLoop)),
            "computation `main`, instruction `w`: condition computation `cond` must return "
            "pred[], got f32[]");
}

TEST(VerifierTest, ChecksComputationsOtherThanTheEntry) {
  EXPECT_EQ(VerifyText(ModuleText("x = f32[4] parameter(0)\nROOT c = f32[4] call(x), to_apply=f",
                                  "f {\n a = f32[4] parameter(0)\n ROOT r = f32[5] negate(a)\n}\n")),
            "computation `f`, instruction `r`: negate's shape does not match its operands and "
            "attributes (expected f32[4], got f32[5])");
}

}  // namespace
}  // namespace hlogym
