// stack_rules.hpp: every software-stack rule (dispatcher backends, token handling, CUDA graphs),
// one passing and one failing plan each, reported by evaluate under the rule's name; and which
// GPUs run which flex backend.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "evaluate/stack_rules.hpp"
#include "hapmoe/evaluate.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/scenario_io.hpp"
#include "test_scenarios.hpp"

namespace {

using hapmoe::CudaGraphs;
using hapmoe::Dispatch;
using hapmoe::GraphImpl;
using hapmoe::PlanSpec;
using hapmoe::Scenario;
using nlohmann::json;

const hapmoe::PresetCatalog& presets() { return hapmoe::testing::builtin_presets(); }

// A small MoE model (4 layers, first dense) on 2 H100 nodes; TP 1, PP 2, EP 8.
Scenario base(json training = json::object()) {
  training["global_batch_size"] = 64;
  training["seq_length"] = 1024;
  const json doc = {
      {"format", "hapmoe.scenario/1"},
      {"model",
       {{"num_layers", 4}, {"hidden_size", 256}, {"ffn_hidden_size", 512}, {"num_attention_heads", 16},
        {"num_query_groups", 4}, {"vocab_size", 1024}, {"num_experts", 8}, {"moe_router_topk", 2},
        {"moe_ffn_hidden_size", 128}, {"moe_layer_freq", {0, 1, 1, 1}}}},
      {"cluster", {{"groups", json::array({{{"gpu", "h100-sxm"}, {"nodes", 2}}})}}},
      {"training", training},
      {"plan",
       {{"tp", 1}, {"pp", 2}, {"dp", 8}, {"ep", 8}, {"stages", json::array({{{"layers", 2}}, {{"layers", 2}}})}}}};
  auto s = hapmoe::parse_scenario(doc, presets());
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().field + ": " + s.error().message));
  return s.value();
}

void expect_rule(const Scenario& s, const PlanSpec& p, const std::string& rule) {
  const auto ev = hapmoe::evaluate_plan(s, p);
  REQUIRE_FALSE(ev.ok());
  CHECK(ev.error().code == "rule:" + rule);
}

void expect_pass(const Scenario& s, const PlanSpec& p) {
  const auto ev = hapmoe::evaluate_plan(s, p);
  CHECK_MESSAGE(ev.ok(), (ev.ok() ? std::string() : ev.error().code));
}

CudaGraphs te(unsigned modules) { return {GraphImpl::kTransformerEngine, modules}; }

}  // namespace

TEST_CASE("dispatch_runs_on: DeepEP on Ampere, Hopper and 8-GPU Blackwell nodes; HybridEP also on NVL72") {
  const hapmoe::PresetCatalog& c = presets();
  auto group = [&](const char* id, int per_node) {
    hapmoe::NodeGroup g;
    g.gpu = hapmoe::parse_gpu(json(id), "gpu", c).value();
    g.gpus_per_node = per_node;
    return g;
  };
  for (const char* id : {"a100-sxm-80gb", "h100-sxm", "h20", "b200", "b300"}) {
    CAPTURE(id);
    CHECK(hapmoe::dispatch_runs_on(Dispatch::kDeepEp, group(id, 8)));
    CHECK(hapmoe::dispatch_runs_on(Dispatch::kHybridEp, group(id, 8)));
  }
  for (const char* id : {"gb200", "gb300"}) {  // one NVLink domain over the rack
    CAPTURE(id);
    CHECK_FALSE(hapmoe::dispatch_runs_on(Dispatch::kDeepEp, group(id, 72)));
    CHECK(hapmoe::dispatch_runs_on(Dispatch::kHybridEp, group(id, 72)));
  }
  for (const char* id : {"v100-sxm", "mi300x", "ascend-910b"}) {
    CAPTURE(id);
    CHECK_FALSE(hapmoe::dispatch_runs_on(Dispatch::kDeepEp, group(id, 8)));
    CHECK_FALSE(hapmoe::dispatch_runs_on(Dispatch::kHybridEp, group(id, 8)));
    CHECK(hapmoe::dispatch_runs_on(Dispatch::kAlltoall, group(id, 8)));
  }
}

TEST_CASE("rule dispatch_supported: a group whose GPUs do not run the backend") {
  Scenario s = base();
  PlanSpec p = *s.plan;
  p.dispatch = Dispatch::kDeepEp;
  expect_pass(s, p);
  s.cluster.groups[0].gpu = hapmoe::parse_gpu(json("mi300x"), "gpu", presets()).value();
  for (hapmoe::StagePlan& st : p.stages) st.gpu = "mi300x";
  expect_rule(s, p, "dispatch_supported");
  p.dispatch = Dispatch::kAlltoall;
  expect_pass(s, p);
}

TEST_CASE("rule deepep_no_pad_to_capacity") {
  Scenario s = base({{"moe_expert_capacity_factor", 1.0}, {"moe_pad_expert_input_to_capacity", true}});
  PlanSpec p = *s.plan;
  p.dispatch = Dispatch::kHybridEp;
  expect_pass(s, p);
  p.dispatch = Dispatch::kDeepEp;
  expect_rule(s, p, "deepep_no_pad_to_capacity");
}

TEST_CASE("rule rank_capacity_needs_hybridep") {
  Scenario s = base({{"moe_token_dispatcher_type", "flex"}, {"moe_expert_rank_capacity_factor", 1.5}});
  PlanSpec p = *s.plan;
  CHECK(p.dispatch == Dispatch::kDeepEp);  // the plan's default backend on H100
  expect_rule(s, p, "rank_capacity_needs_hybridep");
  p.dispatch = Dispatch::kHybridEp;
  expect_pass(s, p);
}

TEST_CASE("CUDA graph module rules") {
  using namespace hapmoe;
  const unsigned static_parts = kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess;
  Scenario s = base();
  PlanSpec p = *s.plan;
  p.cuda_graphs = te(static_parts);
  expect_pass(s, p);
  SUBCASE("modules need a per-layer implementation") {
    p.cuda_graphs = {GraphImpl::kFullIteration, kGraphAttn};
    expect_rule(s, p, "graph_modules_need_per_layer_impl");
  }
  SUBCASE("moe and moe_router exclude each other") {
    p.cuda_graphs = te(kGraphMoe | kGraphMoeRouter);
    expect_rule(s, p, "graph_moe_vs_moe_router");
  }
  SUBCASE("moe_preprocess needs moe_router with transformer_engine, not with local") {
    p.cuda_graphs = te(kGraphAttn | kGraphMoePreprocess);
    expect_rule(s, p, "graph_preprocess_needs_router");
    p.cuda_graphs = {GraphImpl::kLocal, kGraphAttn | kGraphMoePreprocess};  // local adds moe_router itself
    expect_pass(s, p);
  }
  SUBCASE("moe modules on a dense model") {
    s.model.num_experts = 0;
    s.model.moe_router_topk = 0;
    s.model.moe_layer_freq.clear();
    p.ep = 1;
    p.cuda_graphs = te(kGraphAttn | kGraphMoeRouter);
    expect_rule(s, p, "graph_moe_modules_need_experts");
  }
  SUBCASE("mlp needs a dense layer") {
    p.cuda_graphs = te(kGraphAttn | kGraphMlp);
    expect_pass(s, p);  // layer 0 is dense
    s.model.moe_layer_freq = {1, 1, 1, 1};
    expect_rule(s, p, "graph_mlp_needs_dense_layers");
  }
  SUBCASE("the MoE block or a whole MoE layer needs drop and pad") {
    p.cuda_graphs = te(kGraphAttn | kGraphMoe);
    expect_rule(s, p, "graph_moe_needs_drop_pad");
    p.cuda_graphs = te(0);  // the whole layer
    expect_rule(s, p, "graph_moe_needs_drop_pad");
    s.training.moe_expert_capacity_factor = 1;
    s.training.moe_pad_expert_input_to_capacity = true;
    expect_pass(s, p);
    p.cuda_graphs = te(kGraphAttn | kGraphMoe);
    expect_pass(s, p);
  }
  SUBCASE("moe_preprocess cannot capture alltoall's host copies when dropping without padding") {
    s.training.moe_expert_capacity_factor = 1.25;
    expect_rule(s, p, "graph_preprocess_host_sync");
    p.dispatch = Dispatch::kHybridEp;
    expect_pass(s, p);
  }
  SUBCASE("full recompute only with full-iteration graphs") {
    for (hapmoe::StagePlan& st : p.stages) st.recompute = Recompute::kFull;
    expect_rule(s, p, "graphs_full_recompute");
  }
  SUBCASE("moe recompute against a transformer_engine moe_router graph") {
    for (hapmoe::StagePlan& st : p.stages) st.recompute = Recompute::of_modules(kRecomputeMoe);
    expect_rule(s, p, "graph_te_moe_recompute");
    p.cuda_graphs = te(kGraphAttn);
    expect_pass(s, p);
  }
}

TEST_CASE("rule full_iteration_needs_static_moe") {
  using namespace hapmoe;
  Scenario s = base({{"moe_token_dispatcher_type", "flex"}, {"moe_flex_dispatcher_backend", "hybridep"}});
  PlanSpec p = *s.plan;
  p.cuda_graphs = {GraphImpl::kFullIteration, 0};
  expect_rule(s, p, "full_iteration_needs_static_moe");  // dropless, dynamic receive sizes
  s.training.moe_expert_rank_capacity_factor = 1.5;       // HybridEP's static budget
  expect_pass(s, p);
  for (hapmoe::StagePlan& st : p.stages) st.recompute = Recompute::kFull;
  expect_pass(s, p);  // full recompute is allowed with full-iteration graphs
}

TEST_CASE("rule ep_overlap_graph_modules") {
  using namespace hapmoe;
  Scenario s = base({{"moe_expert_capacity_factor", 1.0}, {"moe_pad_expert_input_to_capacity", true}});
  PlanSpec p = *s.plan;
  p.vpp = 1;
  p.pp = 1;
  p.dp = 16;
  p.stages = {p.stages[0]};
  p.stages[0].layers = 4;
  p.ep_comm_overlap = true;
  p.cuda_graphs = te(kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess);
  expect_pass(s, p);
  p.cuda_graphs = te(kGraphAttn | kGraphMoe);
  expect_rule(s, p, "ep_overlap_graph_modules");
}

TEST_CASE("scenario rules of token handling name their field") {
  auto error_field = [](json training) {
    training["global_batch_size"] = 8;
    training["seq_length"] = 1024;
    const json doc = {{"format", "hapmoe.scenario/1"}, {"model", "mixtral-s"}, {"cluster", "16-1"}, {"training", training}};
    const auto s = hapmoe::parse_scenario(doc, presets());
    return s.ok() ? std::string() : s.error().field;
  };
  CHECK(error_field({{"moe_pad_expert_input_to_capacity", true}}) == "training.moe_pad_expert_input_to_capacity");
  CHECK(error_field({{"moe_paged_stash", true}}) == "training.moe_paged_stash");
  CHECK(error_field({{"moe_expert_rank_capacity_factor", 1.5}}) == "training.moe_expert_rank_capacity_factor");
  CHECK(error_field({{"moe_token_dispatcher_type", "flex"}, {"moe_flex_dispatcher_backend", "deepep"},
                     {"moe_expert_rank_capacity_factor", 1.5}}) == "training.moe_expert_rank_capacity_factor");
  CHECK(error_field({{"fp8_dot_product_attention", true}}) == "training.fp8_dot_product_attention");
  CHECK(error_field({{"cuda_graph_impl", "full_iteration"}, {"cuda_graph_modules", {"attn"}}}) ==
        "training.cuda_graph_modules");
  CHECK(error_field({{"cuda_graphs", true}, {"cuda_graph_impl", "transformer_engine"}}) == "training.cuda_graphs");
  CHECK(error_field({{"moe_token_dispatcher_type", "auto"}, {"moe_expert_rank_capacity_factor", 1.5},
                     {"moe_paged_stash", true}}).empty());
}

TEST_CASE("rule fp8_attention_sinks_need_blackwell") {
  auto scenario = [](const char* gpu, bool fp8_attention) {
    json training = {{"global_batch_size", 64}, {"seq_length", 4096}, {"precision", "fp8"}};
    if (fp8_attention) training["fp8_dot_product_attention"] = true;
    const json doc = {{"format", "hapmoe.scenario/1"}, {"model", "gpt-oss-20b"},
                      {"cluster", {{"groups", json::array({{{"gpu", gpu}, {"nodes", 1}}})}}},
                      {"training", training},
                      {"plan", {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 8}, {"stages", json::array({{{"layers", 24}}})}}}};
    return hapmoe::parse_scenario(doc, presets()).value();
  };
  Scenario s = scenario("b200", true);
  expect_pass(s, *s.plan);
  s = scenario("h100-sxm", true);
  expect_rule(s, *s.plan, "fp8_attention_sinks_need_blackwell");
  s = scenario("h100-sxm", false);
  expect_pass(s, *s.plan);
}
