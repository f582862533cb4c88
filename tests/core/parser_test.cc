// Parser structure tests: modules, computations, names, roots, parameters,
// header attributes, the older-XLA inputs in tests/data/hlo, async sugar,
// inline computations, nested operands, shapes and layouts.
#include "core/text/parser.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/core/parser_test_util.h"

namespace hlogym {
namespace {

using testing_util::FindInstruction;
using testing_util::RawValue;
using testing_util::ReadSourceFile;

constexpr char kJaxStyle[] =
    R"(HloModule jit_mlp, entry_computation_layout={(f32[8,4]{1,0}, f32[4]{0}, f32[16,8]{1,0})->f32[16]{0}}

region_0.9 {
  Arg_0.10 = f32[] parameter(0)
  Arg_1.11 = f32[] parameter(1)
  ROOT add.12 = f32[] add(Arg_0.10, Arg_1.11)
}

ENTRY main.20 {
  Arg_0.1 = f32[8,4]{1,0} parameter(0)
  Arg_1.2 = f32[4]{0} parameter(1)
  Arg_2.3 = f32[16,8]{1,0} parameter(2)
  dot.4 = f32[16,4]{1,0} dot(Arg_2.3, Arg_0.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  broadcast.5 = f32[16,4]{1,0} broadcast(Arg_1.2), dimensions={1}
  add.6 = f32[16,4]{1,0} add(dot.4, broadcast.5)
  constant.7 = f32[] constant(0)
  broadcast.8 = f32[16,4]{1,0} broadcast(constant.7), dimensions={}
  maximum.13 = f32[16,4]{1,0} maximum(add.6, broadcast.8)
  ROOT reduce.14 = f32[16]{0} reduce(maximum.13, constant.7), dimensions={1}, to_apply=region_0.9
}
)";

TEST(ParserTest, JaxShortStyleModule) {
  HLOGYM_PARSE_OR_FAIL(module, kJaxStyle);
  EXPECT_EQ(module->name(), "jit_mlp");
  ASSERT_EQ(module->computation_count(), 2);
  const Computation* region = module->computations()[0].get();
  const Computation* entry = module->computations()[1].get();
  EXPECT_EQ(region->name(), "region_0.9");
  EXPECT_EQ(module->entry(), entry);
  EXPECT_EQ(entry->name(), "main.20");
  EXPECT_EQ(entry->instruction_count(), 10);
  EXPECT_EQ(module->instruction_count(), 13);
  ASSERT_EQ(entry->parameter_count(), 3);
  EXPECT_EQ(entry->parameter(2)->name(), "Arg_2.3");
  EXPECT_EQ(entry->parameter(2)->parameter_number(), 2);
  EXPECT_EQ(entry->root()->name(), "reduce.14");
  EXPECT_EQ(region->root()->name(), "add.12");

  const Instruction* dot = FindInstruction(*module, "dot.4");
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->opcode(), Opcode::kDot);
  EXPECT_EQ(dot->shape().ToString(), "f32[16,4]{1,0}");
  ASSERT_EQ(dot->operand_count(), 2);
  EXPECT_EQ(dot->operand(0)->name(), "Arg_2.3");
  EXPECT_EQ(dot->operand(1)->name(), "Arg_0.1");
  EXPECT_EQ(dot->attrs<DotAttrs>().dims.lhs_contracting, std::vector<int64_t>{1});
  EXPECT_EQ(dot->attrs<DotAttrs>().dims.rhs_contracting, std::vector<int64_t>{0});
  ASSERT_EQ(dot->users().size(), 1u);
  EXPECT_EQ(dot->users()[0]->name(), "add.6");

  const Instruction* constant = FindInstruction(*module, "constant.7");
  EXPECT_EQ(constant->user_count(), 2);
  EXPECT_EQ(constant->literal().GetAsDouble(0), 0.0);

  const Instruction* reduce = entry->root();
  EXPECT_EQ(reduce->dimensions(), (std::vector<int64_t>{1}));
  ASSERT_EQ(reduce->called_computations().size(), 1u);
  EXPECT_EQ(reduce->to_apply(), region);
  EXPECT_TRUE(FindInstruction(*module, "broadcast.8")->dimensions().empty());

  ASSERT_TRUE(module->entry_computation_layout().has_value());
  const ComputationLayout& layout = *module->entry_computation_layout();
  ASSERT_EQ(layout.parameters.size(), 3u);
  EXPECT_EQ(layout.parameters[2].ToString(), "f32[16,8]{1,0}");
  EXPECT_EQ(layout.result.ToString(), "f32[16]{0}");
  EXPECT_TRUE(module->raw_attributes().empty());
}

TEST(ParserTest, ModuleWithoutHeader) {
  HLOGYM_PARSE_OR_FAIL(module, ReadSourceFile("tests/data/hlo/no_header.hlo"));
  ASSERT_EQ(module->computation_count(), 3);
  EXPECT_EQ(module->entry()->name(), "main");
  EXPECT_EQ(module->name(), "main");
  EXPECT_EQ(module->entry()->root()->to_apply()->name(), "add_f32");
}

TEST(ParserTest, WithoutEntryMarkTheLastComputationIsEntry) {
  HLOGYM_PARSE_OR_FAIL(module, R"(
    first {
      ROOT a = f32[] parameter(0)
    }
    second {
      b = s32[2]{0} parameter(0)
      ROOT c = s32[2]{0} negate(b)
    })");
  EXPECT_EQ(module->entry()->name(), "second");
}

TEST(ParserTest, LastInstructionIsRootWithoutRootMark) {
  HLOGYM_PARSE_OR_FAIL(module, R"(HloModule m
    ENTRY e {
      a = f32[2]{0} parameter(0)
      b = f32[2]{0} negate(a)
      c = f32[2]{0} abs(b)
    })");
  EXPECT_EQ(module->entry()->root()->name(), "c");
}

TEST(ParserTest, RootNeedNotBeLast) {
  HLOGYM_PARSE_OR_FAIL(module, R"(HloModule m
    ENTRY e {
      a = f32[2]{0} parameter(0)
      ROOT b = f32[2]{0} negate(a)
      c = f32[2]{0} abs(b)
    })");
  EXPECT_EQ(module->entry()->root()->name(), "b");
}

TEST(ParserTest, ParametersMayAppearOutOfOrder) {
  HLOGYM_PARSE_OR_FAIL(module, R"(HloModule m
    ENTRY e {
      y = f32[] parameter(1)
      x = f32[] parameter(0)
      ROOT s = f32[] subtract(x, y)
    })");
  const Computation* entry = module->entry();
  ASSERT_EQ(entry->parameter_count(), 2);
  EXPECT_EQ(entry->parameter(0)->name(), "x");
  EXPECT_EQ(entry->parameter(1)->name(), "y");
  EXPECT_EQ(entry->instructions()[0]->name(), "y");  // text order kept
}

TEST(ParserTest, OldStyleDumpWithOperandShapesAndSignatures) {
  HLOGYM_PARSE_OR_FAIL(module, ReadSourceFile("tests/data/hlo/old_style_mlp.hlo"));
  EXPECT_EQ(module->name(), "old_style_mlp");
  ASSERT_EQ(module->raw_attributes().size(), 1u);
  EXPECT_EQ(module->raw_attributes()[0], (RawAttribute{"is_scheduled", "true"}));
  ASSERT_TRUE(module->entry_computation_layout().has_value());
  EXPECT_EQ(module->entry()->name(), "main.20");
  EXPECT_EQ(module->computations()[0]->name(), "region_0.9");

  const Instruction* add = FindInstruction(*module, "add.12");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(RawValue(*add, "metadata"), R"({op_type="add" op_name="jit(mlp)/reduce_sum"})");
  const Instruction* dot = FindInstruction(*module, "dot.4");
  EXPECT_EQ(RawValue(*dot, "metadata"),
            R"({op_name="jit(mlp)/dot_general" source_file="mlp.py" source_line=7})");

  const Instruction* table = FindInstruction(*module, "table.8");
  EXPECT_TRUE(table->literal().is_elided());
  EXPECT_EQ(table->literal().shape().ToString(), "f32[16,4]{1,0}");

  const Instruction* tuple = FindInstruction(*module, "tuple.15");
  ASSERT_EQ(tuple->operand_count(), 6);
  EXPECT_EQ(tuple->operand(5)->name(), "multiply.14");
  EXPECT_EQ(tuple->shape().tuple_size(), 6);
  const Instruction* gte = FindInstruction(*module, "get-tuple-element.16");
  EXPECT_EQ(gte->tuple_index(), 5);
  EXPECT_EQ(module->entry()->root()->to_apply()->name(), "region_0.9");
}

TEST(ParserTest, CustomCallsKeepBackendConfigVerbatim) {
  HLOGYM_PARSE_OR_FAIL(module, ReadSourceFile("tests/data/hlo/custom_calls.hlo"));
  const Instruction* gemm = FindInstruction(*module, "gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->custom_call_target(), "__cublas$gemm");
  ASSERT_EQ(gemm->raw_attributes().size(), 2u);
  EXPECT_EQ(gemm->raw_attributes()[0].name, "operand_layout_constraints");
  EXPECT_EQ(gemm->raw_attributes()[0].value, "{f32[16,8]{1,0}, f32[8,4]{1,0}}");
  EXPECT_EQ(gemm->raw_attributes()[1].name, "backend_config");
  EXPECT_EQ(
      gemm->raw_attributes()[1].value,
      R"({"operation_queue_id":"0","wait_on_operation_queues":[],"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]},"epilogue":"DEFAULT","note":"a } and a { in a string"}})");

  const Instruction* callback = FindInstruction(*module, "callback");
  EXPECT_EQ(callback->operand_count(), 0);
  EXPECT_TRUE(callback->shape().IsTuple());
  EXPECT_EQ(callback->shape().tuple_size(), 0);
  ASSERT_EQ(callback->raw_attributes().size(), 3u);
  EXPECT_EQ(callback->raw_attributes()[0], (RawAttribute{"custom_call_has_side_effect", "true"}));
  EXPECT_EQ(callback->raw_attributes()[1],
            (RawAttribute{"api_version", "API_VERSION_STATUS_RETURNING"}));
  EXPECT_EQ(callback->raw_attributes()[2],
            (RawAttribute{"backend_config", R"("opaque \"escaped\" string")"}));

  const Instruction* in_place = FindInstruction(*module, "in_place");
  EXPECT_EQ(RawValue(*in_place, "output_to_operand_aliasing"), "{{}: (0, {})}");
  EXPECT_EQ(RawValue(*in_place, "schedule"), "SCHEDULE_LATEST");
}

TEST(ParserTest, WhileLoopWithTupleState) {
  HLOGYM_PARSE_OR_FAIL(module, ReadSourceFile("tests/data/hlo/while_loop.hlo"));
  const Instruction* loop = FindInstruction(*module, "loop");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->opcode(), Opcode::kWhile);
  EXPECT_EQ(loop->while_condition()->name(), "cond");
  EXPECT_EQ(loop->while_body()->name(), "body");
  EXPECT_EQ(RawValue(*loop, "backend_config"), R"({"known_trip_count":{"n":"10"}})");
  EXPECT_EQ(loop->shape().ToString(), "(s32[], f32[4]{0})");
  const Computation* body = loop->while_body();
  EXPECT_EQ(body->parameter(0)->shape().ToString(), "(s32[], f32[4]{0})");
  EXPECT_EQ(body->root()->opcode(), Opcode::kTuple);
  const Instruction* half = FindInstruction(*module, "half");
  EXPECT_EQ(half->literal().GetAsDouble(3), 0.5);
}

TEST(ParserTest, OldStyleRng) {
  HLOGYM_PARSE_OR_FAIL(module, ReadSourceFile("tests/data/hlo/rng_old_style.hlo"));
  EXPECT_EQ(module->entry()->parameter_count(), 0);
  EXPECT_EQ(FindInstruction(*module, "uniform")->attrs<RngAttrs>().distribution,
            RngDistribution::kUniform);
  EXPECT_EQ(FindInstruction(*module, "normal")->attrs<RngAttrs>().distribution,
            RngDistribution::kNormal);
  EXPECT_EQ(FindInstruction(*module, "bits")->attrs<RngBitGeneratorAttrs>().algorithm,
            RngAlgorithm::kPhilox);
  const Literal& state = FindInstruction(*module, "state")->literal();
  EXPECT_EQ(state.data<uint64_t>()[0], 42u);
  EXPECT_EQ(state.data<uint64_t>()[1], 18446744073709551615u);
}

TEST(ParserTest, ConditionalBranches) {
  HLOGYM_PARSE_OR_FAIL(module, ReadSourceFile("tests/data/hlo/conditionals.hlo"));
  const Instruction* sw = FindInstruction(*module, "switch");
  ASSERT_EQ(sw->called_computations().size(), 3u);
  EXPECT_EQ(sw->called_computations()[0]->name(), "branch_neg");
  EXPECT_EQ(sw->called_computations()[1]->name(), "branch_exp");
  EXPECT_EQ(sw->called_computations()[2]->name(), "branch_id");
  const Instruction* if_op = FindInstruction(*module, "if");
  ASSERT_EQ(if_op->called_computations().size(), 2u);
  EXPECT_EQ(if_op->called_computations()[0]->name(), "branch_exp");  // true
  EXPECT_EQ(if_op->called_computations()[1]->name(), "branch_neg");  // false
}

TEST(ParserTest, ShardingAndControlPredecessors) {
  HLOGYM_PARSE_OR_FAIL(module, ReadSourceFile("tests/data/hlo/sharding_control.hlo"));
  ASSERT_EQ(module->raw_attributes().size(), 3u);
  EXPECT_EQ(module->raw_attributes()[0], (RawAttribute{"replica_count", "1"}));
  EXPECT_EQ(module->raw_attributes()[1], (RawAttribute{"num_partitions", "2"}));
  EXPECT_EQ(
      module->raw_attributes()[2],
      (RawAttribute{"frontend_attributes", R"({xla.sdy.meshes="{mesh = #sdy.mesh<[\"x\"=2]>}"})"}));
  const Instruction* a = FindInstruction(*module, "a");
  ASSERT_EQ(a->raw_attributes().size(), 2u);
  EXPECT_EQ(a->raw_attributes()[0], (RawAttribute{"sharding", "{devices=[2,1]0,1}"}));
  EXPECT_EQ(a->raw_attributes()[1], (RawAttribute{"parameter_replication", "{false}"}));
  const Instruction* add = FindInstruction(*module, "add");
  const Instruction* mul = FindInstruction(*module, "mul");
  const Instruction* sub = FindInstruction(*module, "sub");
  ASSERT_EQ(mul->control_predecessors().size(), 1u);
  EXPECT_EQ(mul->control_predecessors()[0], add);
  ASSERT_EQ(sub->control_predecessors().size(), 2u);
  EXPECT_EQ(sub->control_predecessors()[1], mul);
  EXPECT_EQ(add->control_successors().size(), 2u);
  EXPECT_EQ(mul->FindRawAttribute("control-predecessors"), nullptr);
  EXPECT_EQ(RawValue(*mul, "sharding"), "{maximal device=0}");
  EXPECT_EQ(RawValue(*sub, "statistics"), "{visualizing_index=1,stat-0=0.5}");
  EXPECT_EQ(RawValue(*module->entry()->root(), "sharding"),
            R"({devices=[2,1]0,1 metadata={op_name="shard"}})");
  EXPECT_EQ(RawValue(*add, "frontend_attributes"), R"({_xla_stream_annotation="1"})");
}

TEST(ParserTest, CollectivesAndRealAsyncOpcodes) {
  HLOGYM_PARSE_OR_FAIL(module, ReadSourceFile("tests/data/hlo/collectives.hlo"));
  const Instruction* ar = FindInstruction(*module, "ar");
  EXPECT_EQ(ar->to_apply()->name(), "sum");
  EXPECT_EQ(RawValue(*ar, "replica_groups"), "{{0,1,2,3}}");
  EXPECT_EQ(RawValue(*ar, "channel_id"), "1");
  const Instruction* ag = FindInstruction(*module, "ag-start");
  EXPECT_EQ(ag->opcode(), Opcode::kAllGatherStart);
  EXPECT_EQ(ag->dimensions(), (std::vector<int64_t>{0}));
  EXPECT_EQ(RawValue(*ag, "replica_groups"), "[1,4]<=[4]");
  EXPECT_EQ(FindInstruction(*module, "ag-done")->opcode(), Opcode::kAllGatherDone);
  EXPECT_EQ(RawValue(*FindInstruction(*module, "cp"), "source_target_pairs"),
            "{{0,1},{1,2},{2,3},{3,0}}");
  EXPECT_EQ(FindInstruction(*module, "copy-start")->opcode(), Opcode::kCopyStart);
}

TEST(ParserTest, AsyncSugarWrapsTheOpInAComputation) {
  HLOGYM_PARSE_OR_FAIL(module, R"(HloModule m
    fused {
      p = f32[8]{0} parameter(0)
      ROOT n = f32[8]{0} negate(p)
    }
    ENTRY e {
      x = f32[8]{0} parameter(0)
      start = ((f32[8]{0}), f32[8]{0}, u32[]) fusion-start(x), kind=kLoop, calls=fused, sharding={replicated}, metadata={op_name="neg"}, backend_config={"a":1}
      update = ((f32[8]{0}), f32[8]{0}, u32[]) fusion-update(start)
      ROOT done = f32[8]{0} fusion-done(update), metadata={op_name="neg"}
    })");
  const Instruction* start = FindInstruction(*module, "start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->opcode(), Opcode::kAsyncStart);
  ASSERT_EQ(start->called_computations().size(), 1u);
  const Computation* wrapper = start->called_computations()[0];
  EXPECT_EQ(wrapper->parameter_count(), 1);
  EXPECT_EQ(wrapper->parameter(0)->shape().ToString(), "f32[8]{0}");
  const Instruction* fusion = wrapper->root();
  EXPECT_EQ(fusion->opcode(), Opcode::kFusion);
  EXPECT_EQ(fusion->shape().ToString(), "f32[8]{0}");
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(fusion->fused_computation()->name(), "fused");
  EXPECT_EQ(fusion->fused_computation()->fusion_instruction(), fusion);
  EXPECT_EQ(fusion->operand(0), wrapper->parameter(0));
  // Computations stay callee-first: fused, wrapper, entry.
  ASSERT_EQ(module->computation_count(), 3);
  EXPECT_EQ(module->computations()[1].get(), wrapper);
  // sharding describes the async op; metadata and backend_config both.
  EXPECT_EQ(RawValue(*start, "sharding"), "{replicated}");
  EXPECT_EQ(RawValue(*fusion, "sharding"), "<absent>");
  EXPECT_EQ(RawValue(*start, "metadata"), R"({op_name="neg"})");
  EXPECT_EQ(RawValue(*fusion, "metadata"), R"({op_name="neg"})");
  EXPECT_EQ(RawValue(*fusion, "backend_config"), R"({"a":1})");
  EXPECT_EQ(FindInstruction(*module, "update")->opcode(), Opcode::kAsyncUpdate);
  const Instruction* done = module->entry()->root();
  EXPECT_EQ(done->opcode(), Opcode::kAsyncDone);
  EXPECT_EQ(done->operand(0)->name(), "update");
}

TEST(ParserTest, ExplicitAsyncStart) {
  HLOGYM_PARSE_OR_FAIL(module, R"(HloModule m
    wrapped {
      p = f32[8]{0} parameter(0)
      ROOT c = f32[8]{0} custom-call(p), custom_call_target="foo"
    }
    ENTRY e {
      x = f32[8]{0} parameter(0)
      start = ((f32[8]{0}), f32[8]{0}, s32[]) async-start(x), calls=wrapped, async_execution_thread="thread"
      ROOT done = f32[8]{0} async-done(start), calls=wrapped
    })");
  const Instruction* start = FindInstruction(*module, "start");
  EXPECT_EQ(start->called_computations()[0]->name(), "wrapped");
  EXPECT_EQ(RawValue(*start, "async_execution_thread"), R"("thread")");
  EXPECT_TRUE(module->entry()->root()->called_computations().empty());
}

TEST(ParserTest, InlineComputation) {
  HLOGYM_PARSE_OR_FAIL(module, R"(HloModule m
    ENTRY e {
      x = f32[4]{0} parameter(0)
      zero = f32[] constant(0)
      ROOT r = f32[] reduce(x, zero), dimensions={0}, to_apply={
        a = f32[] parameter(0)
        b = f32[] parameter(1)
        ROOT s = f32[] add(a, b)
      }
    })");
  ASSERT_EQ(module->computation_count(), 2);
  const Computation* reducer = module->entry()->root()->to_apply();
  EXPECT_EQ(reducer, module->computations()[0].get());
  EXPECT_EQ(reducer->name(), "r.to_apply");
  EXPECT_EQ(reducer->root()->opcode(), Opcode::kAdd);
}

TEST(ParserTest, GeneratedComputationNameGivesWayToTextName) {
  HLOGYM_PARSE_OR_FAIL(module, R"(HloModule m
    helper {
      ROOT h = f32[] parameter(0)
    }
    ENTRY e {
      x = f32[4]{0} parameter(0)
      zero = f32[] constant(0)
      ROOT r = f32[] reduce(x, zero), dimensions={0}, to_apply={
        a = f32[] parameter(0)
        b = f32[] parameter(1)
        ROOT s = f32[] add(a, b)
      }
    }
    r.to_apply {
      ROOT q = f32[] parameter(0)
    })");
  ASSERT_EQ(module->computation_count(), 4);
  EXPECT_EQ(module->entry()->root()->to_apply()->name(), "r.to_apply.1");
  EXPECT_EQ(module->computations()[3]->name(), "r.to_apply");
}

TEST(ParserTest, NestedOperandInstructions) {
  HLOGYM_PARSE_OR_FAIL(module, R"(HloModule m
    ENTRY e {
      x = f32[4]{0} parameter(0)
      y = f32[4]{0} parameter(1)
      ROOT sum = f32[4]{0} add(f32[4]{0} multiply(f32[4]{0} x, f32[4]{0} y), x)
    })");
  const Instruction* sum = module->entry()->root();
  EXPECT_EQ(sum->operand(0)->opcode(), Opcode::kMultiply);
  EXPECT_EQ(sum->operand(0)->operand(1)->name(), "y");
  EXPECT_FALSE(sum->operand(0)->name().empty());
  EXPECT_EQ(module->entry()->instruction_count(), 4);
}

TEST(ParserTest, StackFrameIndexIsKeptVerbatim) {
  const std::string index = R"(FileNames
1 "a.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1})";
  HLOGYM_PARSE_OR_FAIL(module, "HloModule m\n\n" + index + R"(


    ENTRY e {
      ROOT x = f32[] parameter(0), metadata={op_name="x" stack_frame_id=1}
    })");
  EXPECT_EQ(module->stack_frame_index(), index);
}

TEST(ParserTest, ExecutionThread) {
  HLOGYM_PARSE_OR_FAIL(module, R"(HloModule m
    side {
      ROOT p = f32[] parameter(0)
    }, execution_thread="host"
    ENTRY e {
      ROOT q = f32[] parameter(0)
    }, execution_thread="main")");
  EXPECT_EQ(module->computations()[0]->execution_thread(), "host");
  EXPECT_EQ(module->entry()->execution_thread(), "");
}

TEST(ParserTest, UnknownAttributesAreKeptInTextOrder) {
  HLOGYM_PARSE_OR_FAIL(module, R"(HloModule m
    ENTRY e {
      x = f32[4]{0} parameter(0)
      ROOT y = f32[4]{0} negate(x), future_attr={a=[1,2], b="}"}, metadata={op_name="y"}, another=FOO_BAR, result_accuracy={mode=highest}
    })");
  const auto& raw = module->entry()->root()->raw_attributes();
  ASSERT_EQ(raw.size(), 4u);
  EXPECT_EQ(raw[0], (RawAttribute{"future_attr", R"({a=[1,2], b="}"})"}));
  EXPECT_EQ(raw[1], (RawAttribute{"metadata", R"({op_name="y"})"}));
  EXPECT_EQ(raw[2], (RawAttribute{"another", "FOO_BAR"}));
  EXPECT_EQ(raw[3], (RawAttribute{"result_accuracy", "{mode=highest}"}));
}

TEST(ParserTest, OmittedShapesAreInferred) {
  auto module = ParseModule(R"(HloModule m
    ENTRY e {
      x = f32[4]{0} parameter(0)
      y = f32[4]{0} parameter(1)
      s = add(x, y)
      ROOT t = tuple(s, x)
    })");
  if (!module.ok() &&
      module.status().message().find("not supported: shape inference") != absl::string_view::npos) {
    GTEST_SKIP() << "core/ir/shape_inference.cc is not built yet: " << module.status();
  }
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(FindInstruction(**module, "s")->shape().ToString(), "f32[4]{0}");
  EXPECT_EQ((*module)->entry()->root()->shape().ToString(), "(f32[4]{0}, f32[4]{0})");
}

TEST(ParserTest, FillMissingLayouts) {
  constexpr char kText[] = R"(HloModule m
    ENTRY e {
      x = f32[2,3] parameter(0)
      ROOT t = (f32[2,3], s32[4]) tuple(x, s32[4] constant({1, 2, 3, 4}))
    })";
  {
    HLOGYM_PARSE_OR_FAIL(module, kText);
    const Shape& shape = module->entry()->root()->shape();
    EXPECT_EQ(shape.ToString(), "(f32[2,3]{1,0}, s32[4]{0})");
    EXPECT_TRUE(module->entry()->parameter(0)->shape().has_layout());
  }
  ParseOptions options;
  options.fill_missing_layouts = false;
  auto module = ParseModule(kText, options);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_FALSE((*module)->entry()->parameter(0)->shape().has_layout());
  EXPECT_EQ((*module)->entry()->root()->shape().ToString(), "(f32[2,3], s32[4])");
}

TEST(ParserTest, ShapesWithDynamicDimsAndLayoutExtras) {
  auto shape = ParseShape("f32[<=4,?,8]{2,1,0}");
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_TRUE(shape->is_dynamic_dim(0));
  EXPECT_EQ(shape->dim(0), 4);
  EXPECT_TRUE(shape->is_dynamic_dim(1));
  EXPECT_EQ(shape->dim(1), kUnboundedSize);
  EXPECT_FALSE(shape->is_dynamic_dim(2));
  EXPECT_EQ(shape->ToString(), "f32[<=4,?,8]{2,1,0}");

  shape = ParseShape("bf16[128,256]{1,0:T(8,128)(2,1)E(16)S(1)}");
  ASSERT_TRUE(shape.ok()) << shape.status();
  const Layout& layout = shape->layout();
  EXPECT_EQ(layout.minor_to_major, (DimVector{1, 0}));
  ASSERT_NE(layout.extras, nullptr);
  EXPECT_EQ(layout.extras->tiles, (std::vector<std::vector<int64_t>>{{8, 128}, {2, 1}}));
  EXPECT_EQ(layout.extras->element_size_bits, 16);
  EXPECT_EQ(layout.extras->memory_space, 1);
  EXPECT_EQ(layout.extras->other, "");

  shape = ParseShape("s4[64]{0:T(1024)(*,2)L(16)E(4)#(s8)M(2)}");
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->layout().extras->tiles[1][0], kCombineDimension);
  EXPECT_EQ(shape->layout().extras->element_size_bits, 4);
  EXPECT_EQ(shape->layout().extras->other, "L(16)#(s8)M(2)");

  shape = ParseShape("(token[], opaque[], (), (pred[], c128[2]{0}))");
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_TRUE(shape->tuple_shape(0).IsToken());
  EXPECT_TRUE(shape->tuple_shape(1).IsOpaque());
  EXPECT_EQ(shape->tuple_shape(2).tuple_size(), 0);
  EXPECT_EQ(shape->ToString(), "(token[], opaque[], (), (pred[], c128[2]{0}))");

  shape = ParseShape("f32[2,3]");  // ParseShape fills the row-major layout
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->ToString(), "f32[2,3]{1,0}");
  shape = ParseShape("f32[2,3]{0,1}");
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->layout().minor_to_major, (DimVector{0, 1}));
}

TEST(ParserTest, EveryElementTypeParses) {
  for (const char* type : {"pred",
                           "s1",
                           "s2",
                           "s4",
                           "s8",
                           "s16",
                           "s32",
                           "s64",
                           "u1",
                           "u2",
                           "u4",
                           "u8",
                           "u16",
                           "u32",
                           "u64",
                           "f16",
                           "bf16",
                           "f32",
                           "f64",
                           "f8e5m2",
                           "f8e4m3",
                           "f8e4m3fn",
                           "f8e4m3b11fnuz",
                           "f8e5m2fnuz",
                           "f8e4m3fnuz",
                           "f8e3m4",
                           "f4e2m1fn",
                           "f8e8m0fnu",
                           "c64",
                           "c128"}) {
    auto shape = ParseShape(std::string(type) + "[3]{0}");
    ASSERT_TRUE(shape.ok()) << type << ": " << shape.status();
    EXPECT_EQ(PrimitiveTypeName(shape->element_type()), type);
  }
}

TEST(ParserTest, CommentsAnywhere) {
  HLOGYM_PARSE_OR_FAIL(module, R"(// leading comment
    HloModule /* inline */ m // trailing
    ENTRY e {
      x = f32[2]{0} /* shape done */ parameter(0) // param
      // a whole-line comment
      ROOT y = f32[2]{0} negate(/*index=0*/x)
    }
    // after everything)");
  EXPECT_EQ(module->entry()->root()->operand(0)->name(), "x");
}

}  // namespace
}  // namespace hlogym
