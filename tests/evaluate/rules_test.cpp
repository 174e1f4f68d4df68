// rules.hpp: every Megatron rule of core/src/evaluate/rules.cpp, one passing and one failing plan each.
// A failing plan must be reported under the rule's name by check_plan_rules (and by
// check_mesh_rules for the mesh-level rules), and evaluate_plan must return "rule:<name>".
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/presets.hpp"
#include "evaluate/rules.hpp"
#include "evaluate/stack_rules.hpp"
#include "hapmoe/scenario_io.hpp"

namespace {

using hapmoe::PlanSpec;
using hapmoe::Recompute;
using hapmoe::Scenario;
using nlohmann::json;

const hapmoe::PresetCatalog& presets() {
  static const hapmoe::PresetCatalog catalog = hapmoe::load_builtin_presets();
  return catalog;
}

// A small MoE (16 heads, 4 query groups, 8 experts top-2, 4 layers) on 2 H100 nodes (group 0)
// and 1 A100 node (group 1, no FP8). The plan passes every rule: TP 2 x DP 2 per stage, PP 2,
// EP 4, 32 micro-batches.
Scenario base() {
  const json doc = {
      {"format", "hapmoe.scenario/1"},
      {"model",
       {{"num_layers", 4}, {"hidden_size", 256}, {"ffn_hidden_size", 512},
        {"num_attention_heads", 16}, {"num_query_groups", 4}, {"vocab_size", 1024},
        {"num_experts", 8}, {"moe_router_topk", 2}, {"moe_ffn_hidden_size", 128}}},
      {"cluster",
       {{"groups", json::array({{{"gpu", "h100-sxm"}, {"nodes", 2}},
                                {{"gpu", "a100-sxm-80gb"}, {"nodes", 1}}})}}},
      {"training", {{"global_batch_size", 64}, {"seq_length", 1024}}},
      {"plan",
       {{"tp", 2}, {"pp", 2}, {"dp", 2}, {"ep", 4},
        {"stages", json::array({{{"layers", 2}}, {{"layers", 2}}})}}}};
  auto s = hapmoe::parse_scenario(doc, presets());
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().code + " at " + s.error().field));
  REQUIRE(s->plan.has_value());
  return s.value();
}

PlanSpec base_plan(const Scenario& s) { return *s.plan; }

// Sets pp stages of the given layer counts on node group `group`.
void set_stages(PlanSpec& p, const std::vector<int>& layers, int group = 0,
                Recompute r = Recompute::kNone) {
  p.pp = static_cast<int>(layers.size());
  p.stages.clear();
  for (int l : layers) {
    hapmoe::StagePlan st;
    st.group = group;
    st.gpu = group == 0 ? "h100-sxm" : "a100-sxm-80gb";
    st.layers = l;
    st.recompute = r;
    p.stages.push_back(st);
  }
}

std::string rule_of(const Scenario& s, const PlanSpec& p) {
  const auto v = hapmoe::check_plan_rules(s, p);
  return v ? std::string(v->rule) : std::string();
}

std::string field_of(const Scenario& s, const PlanSpec& p) {
  const auto v = hapmoe::check_plan_rules(s, p);
  return v ? v->field : std::string();
}

void expect_pass(const Scenario& s, const PlanSpec& p) {
  CHECK(rule_of(s, p) == "");
  const auto ev = hapmoe::evaluate_plan(s, p);
  CHECK_MESSAGE(ev.ok(), (ev.ok() ? std::string() : ev.error().code));
  if (ev.ok()) {
    CHECK(ev->stages.size() == static_cast<size_t>(p.pp));
    CHECK(ev->metrics.iteration_time_s > 0);
  }
}

void expect_rule(const Scenario& s, const PlanSpec& p, const std::string& rule) {
  CHECK(rule_of(s, p) == rule);
  const auto ev = hapmoe::evaluate_plan(s, p);
  REQUIRE_FALSE(ev.ok());
  CHECK(ev.error().code == "rule:" + rule);
  CHECK(ev.error().message.find(rule) != std::string::npos);
  CHECK(ev.error().field == field_of(s, p));
}

// Mesh-level rules are also reported by check_mesh_rules alone.
void expect_mesh_rule(const Scenario& s, const PlanSpec& p, const std::string& rule) {
  const auto v = hapmoe::check_mesh_rules(s, hapmoe::mesh_of(p));
  REQUIRE(v.has_value());
  CHECK(v->rule == rule);
  expect_rule(s, p, rule);
}

void expect_mesh_pass(const Scenario& s, const PlanSpec& p) {
  CHECK_FALSE(hapmoe::check_mesh_rules(s, hapmoe::mesh_of(p)).has_value());
  expect_pass(s, p);
}

void make_dense(Scenario& s) {
  s.model.num_experts = 0;
  s.model.moe_router_topk = 0;
  s.model.moe_ffn_hidden_size = 0;
  s.model.moe_layer_freq.clear();
}

}  // namespace

TEST_CASE("rules: the base plan passes every rule") {
  const Scenario s = base();
  expect_mesh_pass(s, base_plan(s));
}

TEST_CASE("rule heads_divisible_by_tp") {
  const Scenario s = base();
  PlanSpec p = base_plan(s);
  p.tp = 4;  // 16 heads / 4; 4 x 2 GPUs per stage, 16 in all
  expect_mesh_pass(s, p);
  p.tp = 3;  // 16 % 3 != 0
  expect_mesh_rule(s, p, "heads_divisible_by_tp");
  CHECK(field_of(s, p) == "plan.tp");
}

TEST_CASE("rule query_groups_vs_tp") {
  Scenario s = base();
  s.model.num_attention_heads = 12;  // 12 heads of 16 in 6 groups
  s.model.num_query_groups = 6;
  s.model.kv_channels = 16;
  PlanSpec p = base_plan(s);
  p.tp = 2;  // 6 % 2 == 0
  expect_mesh_pass(s, p);
  p.tp = 4;  // 12 % 4 == 0, but neither 6 % 4 nor 4 % 6 is 0
  expect_mesh_rule(s, p, "query_groups_vs_tp");
  // MLA has no query groups: the rule does not apply.
  s.model.multi_latent_attention = true;
  CHECK_FALSE(hapmoe::check_mesh_rules(s, hapmoe::mesh_of(p)).has_value());
}

TEST_CASE("rule expert_parallel_requires_experts") {
  Scenario s = base();
  make_dense(s);
  PlanSpec p = base_plan(s);
  p.ep = 1;
  expect_mesh_pass(s, p);
  p.ep = 2;
  expect_mesh_rule(s, p, "expert_parallel_requires_experts");
  CHECK(field_of(s, p) == "plan.ep");
  p.ep = 1;
  p.etp = 2;
  expect_mesh_rule(s, p, "expert_parallel_requires_experts");
  CHECK(field_of(s, p) == "plan.etp");
}

TEST_CASE("rule experts_divisible_by_ep") {
  const Scenario s = base();
  PlanSpec p = base_plan(s);
  p.tp = 1;
  p.sequence_parallel = false;
  p.dp = 8;
  p.ep = 8;  // 8 experts / 8
  expect_mesh_pass(s, p);
  p.ep = 3;  // 8 % 3 != 0
  expect_mesh_rule(s, p, "experts_divisible_by_ep");
}

TEST_CASE("rule expert_grid") {
  const Scenario s = base();
  PlanSpec p = base_plan(s);
  p.dp = 4;
  p.ep = 8;  // etp x ep = 8 divides tp x cp x dp = 8
  expect_mesh_pass(s, p);
  p.dp = 2;  // 8 does not divide 4
  expect_mesh_rule(s, p, "expert_grid");
  p.ep = 4;
  p.etp = 2;  // etp x ep = 8 again
  expect_mesh_rule(s, p, "expert_grid");
}

TEST_CASE("rule batch_divisible") {
  const Scenario s = base();
  PlanSpec p = base_plan(s);
  p.micro_batch_size = 2;  // 64 % (2 x 2) == 0
  expect_mesh_pass(s, p);
  p.micro_batch_size = 3;  // 64 % 6 != 0
  expect_mesh_rule(s, p, "batch_divisible");
}

TEST_CASE("rule vpp_requires_pp") {
  const Scenario s = base();
  PlanSpec p = base_plan(s);
  p.vpp = 2;  // pp 2, 32 micro-batches
  expect_mesh_pass(s, p);
  set_stages(p, {4});
  expect_mesh_rule(s, p, "vpp_requires_pp");
}

TEST_CASE("rule vpp_microbatches") {
  Scenario s = base();
  PlanSpec p = base_plan(s);
  p.vpp = 2;
  s.training.global_batch_size = 8;  // 8 / (1 x 2) = 4 micro-batches, a multiple of pp 2
  expect_mesh_pass(s, p);
  s.training.global_batch_size = 6;  // 3 micro-batches: not a multiple of pp 2
  expect_mesh_rule(s, p, "vpp_microbatches");
  // Fewer micro-batches than stages: pp 4, 2 micro-batches (8 layers, so that pp x vpp fits).
  s.model.num_layers = 8;
  s.model.moe_layer_freq.assign(8, 1);
  set_stages(p, {2, 2, 2, 2});
  s.training.global_batch_size = 4;
  expect_mesh_rule(s, p, "vpp_microbatches");
  s.training.global_batch_size = 8;  // 4 micro-batches, pp 4
  expect_mesh_pass(s, p);
}

TEST_CASE("rule sequence_parallel_needs_tp") {
  const Scenario s = base();
  PlanSpec p = base_plan(s);
  p.tp = 1;
  p.dp = 4;  // keeps 4 GPUs per stage for EP 4
  p.sequence_parallel = false;
  expect_mesh_pass(s, p);
  p.sequence_parallel = true;
  expect_mesh_rule(s, p, "sequence_parallel_needs_tp");
}

TEST_CASE("rule cp_seq_divisible") {
  Scenario s = base();
  PlanSpec p = base_plan(s);
  p.cp = 2;  // 1024 % 4 == 0; tp 2 x cp 2 x dp 2 = 8 GPUs per stage
  expect_mesh_pass(s, p);
  p.cp = 3;  // 1024 % 6 != 0
  expect_mesh_rule(s, p, "cp_seq_divisible");
  // The factor 2 matters (load-balanced causal chunks): 1023 is divisible by cp 3, not by 6.
  s.training.seq_length = 1023;
  expect_mesh_rule(s, p, "cp_seq_divisible");
}

TEST_CASE("rule sp_seq_divisible") {
  Scenario s = base();
  s.training.seq_length = 1002;
  PlanSpec p = base_plan(s);
  p.tp = 2;  // 1002 % 2 == 0
  p.sequence_parallel = true;
  expect_mesh_pass(s, p);
  p.tp = 4;  // 1002 % 4 == 2
  expect_mesh_rule(s, p, "sp_seq_divisible");
  p.sequence_parallel = false;  // without SP the sequence is not scattered over TP
  expect_mesh_pass(s, p);
}

TEST_CASE("rule flex_dispatcher_needs_tp_ep") {
  Scenario s = base();
  PlanSpec p = base_plan(s);
  p.dispatch = hapmoe::Dispatch::kDeepEp;
  p.tp = 1;
  p.sequence_parallel = false;
  p.ep = 2;  // tp x ep = 2
  expect_mesh_pass(s, p);
  p.ep = 1;  // tp x ep = 1
  expect_mesh_rule(s, p, "flex_dispatcher_needs_tp_ep");
  make_dense(s);  // dense models have no dispatcher
  expect_mesh_pass(s, p);
}

// One named rule per condition of --overlap-moe-expert-parallel-comm in Megatron's
// transformer_config.py (bf16 is always on: every emitted plan trains with --bf16).
TEST_CASE("rules ep_overlap_*") {
  Scenario s = base();
  PlanSpec p = base_plan(s);
  p.ep_comm_overlap = true;
  p.vpp = 2;  // ep 4 > 1, pp 2 with vpp, alltoall, no full recompute, no MTP
  expect_mesh_pass(s, p);

  SUBCASE("ep 1") {
    p.ep = 1;
    expect_mesh_rule(s, p, "ep_overlap_needs_ep");
    CHECK(field_of(s, p) == "plan.ep_comm_overlap");
  }
  SUBCASE("pp > 1 without vpp") {
    p.vpp = 1;
    expect_mesh_rule(s, p, "ep_overlap_vpp");
    CHECK(field_of(s, p) == "plan.vpp");
  }
  SUBCASE("pp 1 needs no vpp") {
    p.vpp = 1;
    p.dp = 4;
    set_stages(p, {4});
    expect_mesh_pass(s, p);
  }
  SUBCASE("allgather dispatcher") {
    p.dispatch = hapmoe::Dispatch::kAllgather;
    expect_mesh_rule(s, p, "ep_overlap_dispatcher");
  }
  SUBCASE("flex dispatcher is fine") {
    p.dispatch = hapmoe::Dispatch::kHybridEp;
    expect_mesh_pass(s, p);
  }
  SUBCASE("full recompute") {
    set_stages(p, {2, 2}, 0, Recompute::kFull);
    expect_mesh_rule(s, p, "ep_overlap_recompute");
  }
  SUBCASE("moe recompute module") {
    set_stages(p, {2, 2}, 0, Recompute::of_modules(hapmoe::kRecomputeMoe | hapmoe::kRecomputeLayernorm));
    expect_mesh_rule(s, p, "ep_overlap_recompute");
  }
  SUBCASE("more than one MTP layer") {
    s.model.mtp_num_layers = 2;
    expect_mesh_rule(s, p, "ep_overlap_mtp");
  }
  SUBCASE("one MTP layer and selective module recompute are fine") {
    s.model.mtp_num_layers = 1;
    set_stages(p, {2, 2}, 0, Recompute::of_modules(hapmoe::kRecomputeMoeAct | hapmoe::kRecomputeLayernorm));
    expect_mesh_pass(s, p);
  }
  SUBCASE("off: none of them applies") {
    p.ep_comm_overlap = false;
    p.vpp = 1;
    p.dispatch = hapmoe::Dispatch::kAllgather;
    set_stages(p, {2, 2}, 0, Recompute::kFull);
    expect_mesh_pass(s, p);
  }
}

TEST_CASE("rule recompute_modules_apply") {
  Scenario s = base();
  PlanSpec p = base_plan(s);
  set_stages(p, {2, 2}, 0, Recompute::of_modules(hapmoe::kRecomputeMoeAct | hapmoe::kRecomputeCoreAttn));
  expect_mesh_pass(s, p);
  set_stages(p, {2, 2}, 0, Recompute::of_modules(hapmoe::kRecomputeMlaUpProj));
  expect_mesh_rule(s, p, "recompute_modules_apply");  // GQA model: Megatron raises ValueError
  s.model.multi_latent_attention = true;
  s.model.kv_lora_rank = 64;
  s.model.qk_head_dim = 32;
  s.model.qk_pos_emb_head_dim = 16;
  s.model.v_head_dim = 32;
  expect_mesh_pass(s, p);
  make_dense(s);
  set_stages(p, {2, 2}, 0, Recompute::of_modules(hapmoe::kRecomputeMoeAct));
  p.ep = 1;
  expect_mesh_rule(s, p, "recompute_modules_apply");  // no --moe-grouped-gemm without experts
  set_stages(p, {2, 2}, 0, Recompute::of_modules(hapmoe::kRecomputeMlp));
  expect_mesh_pass(s, p);
}

// --optimizer-cpu-offload: validate_args needs --use-precision-aware-optimizer (emitted with the
// offload), which needs the distributed optimizer; with --fp8-param-gather only the delayed recipe.
TEST_CASE("rules offload_*") {
  Scenario s = base();
  PlanSpec p = base_plan(s);
  p.optimizer_offload_fraction = 0.5;
  expect_mesh_pass(s, p);
  s.training.use_distributed_optimizer = false;
  s.training.overlap_param_gather = false;
  expect_mesh_rule(s, p, "offload_needs_distributed_optimizer");
  CHECK(field_of(s, p) == "plan.optimizer_offload_fraction");
  s.training.use_distributed_optimizer = true;
  s.training.fp8_param_gather = true;
  expect_mesh_rule(s, p, "offload_vs_fp8_param_gather");
  p.optimizer_offload_fraction = 0;
  expect_mesh_pass(s, p);
}

TEST_CASE("rule tp_in_scale_up_domain") {
  Scenario s = base();
  PlanSpec p = base_plan(s);
  set_stages(p, {4});
  p.tp = 8;  // one 8-GPU node
  expect_pass(s, p);
  p.tp = 16;  // mesh rules pass (16 heads, 4 groups), but TP would span two nodes
  p.dp = 1;
  CHECK_FALSE(hapmoe::check_mesh_rules(s, hapmoe::mesh_of(p)).has_value());
  expect_rule(s, p, "tp_in_scale_up_domain");
  // TP must also divide the scale-up domain: 4 does not divide a 6-GPU node.
  p.tp = 4;
  p.dp = 1;
  s.cluster.groups[0].gpus_per_node = 6;
  expect_rule(s, p, "tp_in_scale_up_domain");
}

TEST_CASE("rule fp8_needs_hardware") {
  Scenario s = base();
  s.training.precision = hapmoe::Precision::kFp8;
  PlanSpec p = base_plan(s);
  set_stages(p, {4}, 0);  // H100: FP8
  expect_pass(s, p);
  set_stages(p, {4}, 1);  // A100: no FP8
  expect_rule(s, p, "fp8_needs_hardware");
  s.training.precision = hapmoe::Precision::kBf16;
  expect_pass(s, p);
}

TEST_CASE("rule recompute_uniform") {
  const Scenario s = base();
  PlanSpec p = base_plan(s);
  set_stages(p, {2, 2}, 0, Recompute::kSelective);
  expect_pass(s, p);
  p.stages[1].recompute = Recompute::kFull;
  expect_rule(s, p, "recompute_uniform");
}

TEST_CASE("rule stage_has_layers") {
  const Scenario s = base();
  PlanSpec p = base_plan(s);
  set_stages(p, {1, 3});
  expect_pass(s, p);
  set_stages(p, {0, 4});  // sums to 4 but stage 0 is empty
  expect_rule(s, p, "stage_has_layers");
}

TEST_CASE("rule stage_gpus_fit_group") {
  const Scenario s = base();
  PlanSpec p = base_plan(s);
  p.dp = 8;  // 16 GPUs per stage
  set_stages(p, {4});
  expect_pass(s, p);
  set_stages(p, {2, 2});  // 2 x 16 = 32 > 16 H100s
  expect_rule(s, p, "stage_gpus_fit_group");
  // Heterogeneous: 8 GPUs per stage, one stage per group fits (A100 group has 8).
  p.dp = 4;
  set_stages(p, {2, 2});
  p.stages[1].group = 1;
  p.stages[1].gpu = "a100-sxm-80gb";
  expect_pass(s, p);
  // Both on the A100 group: 16 > 8.
  set_stages(p, {2, 2}, 1);
  expect_rule(s, p, "stage_gpus_fit_group");
}

TEST_CASE("rule layers_sum") {
  const Scenario s = base();
  PlanSpec p = base_plan(s);
  set_stages(p, {3, 1});
  expect_pass(s, p);
  set_stages(p, {2, 1});  // 3 != 4
  expect_rule(s, p, "layers_sum");
  set_stages(p, {3, 2});  // 5 != 4
  expect_rule(s, p, "layers_sum");
}

TEST_CASE("rule moe_bias_needs_etp1") {
  Scenario s = base();
  PlanSpec p = base_plan(s);
  p.ep = 2;
  p.etp = 2;  // etp x ep = 4 divides tp x dp = 4
  expect_mesh_pass(s, p);
  s.model.add_bias_linear = true;  // GPT-OSS: biases on every linear layer
  expect_mesh_rule(s, p, "moe_bias_needs_etp1");
  p.etp = 1;
  expect_mesh_pass(s, p);
}

TEST_CASE("rule fp8_recipe_supported") {
  Scenario s = base();
  s.training.precision = hapmoe::Precision::kFp8;
  PlanSpec p = base_plan(s);
  set_stages(p, {2, 2}, 0);  // H100: tensorwise, blockwise
  s.training.fp8_recipe = "blockwise";
  expect_pass(s, p);
  s.training.fp8_recipe = "mxfp8";  // Blackwell only
  expect_rule(s, p, "fp8_recipe_supported");
  s.training.fp8_recipe = "";
  s.cluster.groups[0].gpu.fp8_recipes.clear();  // FP8 tensor cores but no recipe listed
  expect_rule(s, p, "fp8_recipe_supported");
}

TEST_CASE("rule fp8_common_recipe: the default recipe is one every stage's GPU runs") {
  Scenario s = hapmoe::parse_scenario(json{{"model", "mixtral-s"},
                                           {"cluster", {{"groups", json::array({{{"gpu", "b200"}, {"nodes", 1}},
                                                                                {{"gpu", "l40s"}, {"nodes", 1}}})}}},
                                           {"training", {{"global_batch_size", 64}, {"seq_length", 1024}, {"precision", "fp8"}}}},
                                      presets())
                   .value();
  PlanSpec p;
  p.tp = 8;
  p.pp = 2;
  p.dp = 1;
  p.ep = 8;
  p.sequence_parallel = true;
  p.stages = {{"b200", 0, 12, Recompute::kNone}, {"l40s", 1, 12, Recompute::kNone}};
  CHECK(rule_of(s, p) == "");  // B200 {mxfp8, tensorwise, blockwise} and L40S {tensorwise}: tensorwise
  CHECK(hapmoe::check_group_set_rules(s, {0, 1}) == std::nullopt);
  s.cluster.groups[1].gpu.fp8_recipes = {"blockwise"};
  s.cluster.groups[0].gpu.fp8_recipes = {"mxfp8"};
  expect_rule(s, p, "fp8_common_recipe");
  CHECK(hapmoe::check_group_set_rules(s, {0})  == std::nullopt);  // one type alone is fine
}

TEST_CASE("rule same_collective_library: upstream mode never spans GPU vendors") {
  Scenario s = hapmoe::parse_scenario(json{{"model", "mixtral-s"}, {"cluster", "16-1"},
                                           {"training", {{"global_batch_size", 64}, {"seq_length", 1024}}}},
                                      presets())
                   .value();  // H800 (nvidia) + Ascend 910B (huawei)
  PlanSpec p;
  p.tp = 8;
  p.pp = 2;
  p.dp = 1;
  p.ep = 8;
  p.sequence_parallel = true;
  p.stages = {{"h800-sxm", 0, 12, Recompute::kNone}, {"ascend-910b", 1, 12, Recompute::kNone}};
  expect_rule(s, p, "same_collective_library");
  CHECK(hapmoe::mixed_vendor_note(s).find("search.mode \"hetero\"") != std::string::npos);
  p.stages = {{"h800-sxm", 0, 12, Recompute::kNone}, {"h800-sxm", 0, 12, Recompute::kNone}};
  p.tp = 4;
  p.ep = 4;
  CHECK(rule_of(s, p) == "");  // 2 stages of 4 on the H800 node
  // The rule is upstream Megatron-LM's whatever search.mode says: only the planner reads the mode
  // (hetero mode runs the hetero engine, whose own rules decide).
  s.search.mode = hapmoe::SearchMode::kHetero;
  CHECK(hapmoe::check_group_set_rules(s, {0, 1}).has_value());
  s.search.assume_cross_vendor_collectives = true;
  CHECK(hapmoe::check_group_set_rules(s, {0, 1}) == std::nullopt);
  CHECK(hapmoe::mixed_vendor_note(s) == "");
}

// The enumerator checks the shape rules once per mesh shape and reuses a verdict across vpp
// values (and for every pp of the shape's group sets): no shape rule may read pp or vpp.
TEST_CASE("check_shape_rules reads neither pp nor vpp") {
  Scenario s = base();
  s.training.moe_token_dispatcher_type = hapmoe::Dispatcher::kAlltoall;  // overlap allowed where the rest is
  int failing = 0, passing = 0;
  for (int tp : {1, 2, 4, 8, 16}) {
    for (int ep : {1, 2, 4, 8, 16}) {
      for (int etp : {1, 2}) {
        for (int dp : {1, 2, 3}) {
          for (int mbs : {1, 2, 3}) {
            for (const Recompute& rc : {Recompute::kNone, Recompute::kFull}) {
              for (bool overlap : {false, true}) {
                for (double offload : {0.0, 0.5}) {
                  hapmoe::Mesh m;
                  m.tp = tp;
                  m.ep = ep;
                  m.etp = etp;
                  m.dp = dp;
                  m.micro_batch_size = mbs;
                  m.recompute = rc;
                  m.ep_comm_overlap = overlap;
                  m.optimizer_offload_fraction = offload;
                  m.sequence_parallel = tp > 1;
                  m.pp = 1;
                  m.vpp = 1;
                  const auto first = hapmoe::check_shape_rules(s, m);
                  (first ? failing : passing) += 1;
                  for (auto [pp, vpp] : {std::pair{2, 2}, std::pair{4, 3}, std::pair{8, 1}, std::pair{64, 8}}) {
                    m.pp = pp;
                    m.vpp = vpp;
                    const auto other = hapmoe::check_shape_rules(s, m);
                    REQUIRE(other.has_value() == first.has_value());
                    if (first) CHECK(other->rule == first->rule);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  CHECK(failing > 0);
  CHECK(passing > 0);
}

namespace {
// CUDA graph settings for the shape-rule tests: none, TE with moe and moe_router, local, full
// iteration, modules without an implementation, TE with attn.
std::vector<hapmoe::CudaGraphs> graph_settings() {
  using namespace hapmoe;
  std::vector<CudaGraphs> graphs(6);
  graphs[1].impl = GraphImpl::kTransformerEngine;
  graphs[1].modules = kGraphMoe | kGraphMoeRouter;
  graphs[2].impl = GraphImpl::kLocal;
  graphs[3].impl = GraphImpl::kFullIteration;
  graphs[4].modules = kGraphAttn;
  graphs[5].impl = GraphImpl::kTransformerEngine;
  graphs[5].modules = kGraphAttn;
  return graphs;
}

// Calls fn(m) with m's fields past the grid (recompute, EP overlap, offload, dispatcher, CUDA
// graphs) set to each combination of a few values; its grid fields as given.
template <class F>
void for_each_past_grid(hapmoe::Mesh m, F fn) {
  using namespace hapmoe;
  for (const Recompute& rc : {Recompute::kNone, Recompute::kFull}) {
    for (bool overlap : {false, true}) {
      for (double offload : {0.0, 0.5}) {
        for (Dispatch d : {Dispatch::kAlltoall, Dispatch::kAllgather, Dispatch::kDeepEp}) {
          for (const CudaGraphs& g : graph_settings()) {
            m.recompute = rc;
            m.ep_comm_overlap = overlap;
            m.optimizer_offload_fraction = offload;
            m.dispatch = d;
            m.cuda_graphs = g;
            fn(m);
          }
        }
      }
    }
  }
}
}  // namespace

// The enumerator checks check_grid_rules once per (tp, cp, dp, ep, etp, micro-batch size) and
// reuses its verdict for every recompute choice, EP overlap, offload and software stack: no grid
// rule may read those. check_shape_rules is the grid's first violation, else the others'.
TEST_CASE("check_grid_rules reads only the parallel grid") {
  Scenario s = base();
  s.training.moe_token_dispatcher_type = hapmoe::Dispatcher::kAlltoall;
  s.model.mtp_num_layers = 2;  // ep_overlap_mtp cuts every overlap: some non-grid rule fails
  int grid_cuts = 0, later_cuts = 0;
  for (int tp : {1, 2, 4, 8, 16}) {
    for (int ep : {1, 2, 4, 16}) {
      for (int dp : {1, 2, 3}) {
        for (int mbs : {1, 3}) {
          hapmoe::Mesh grid_mesh;
          grid_mesh.tp = tp;
          grid_mesh.ep = ep;
          grid_mesh.dp = dp;
          grid_mesh.micro_batch_size = mbs;
          grid_mesh.sequence_parallel = tp > 1;
          const auto grid = hapmoe::check_grid_rules(s, grid_mesh);
          for_each_past_grid(grid_mesh, [&](const hapmoe::Mesh& m) {
            const auto again = hapmoe::check_grid_rules(s, m);
            REQUIRE(again.has_value() == grid.has_value());
            if (grid) CHECK(again->rule == grid->rule);
            const auto shape = hapmoe::check_shape_rules(s, m);
            const auto later = hapmoe::check_shape_rules_past_grid(s, m);
            const auto& expected = grid ? grid : later;
            REQUIRE(shape.has_value() == expected.has_value());
            if (shape) CHECK(shape->rule == expected->rule);
            grid_cuts += grid.has_value();
            later_cuts += !grid && later.has_value();
          });
        }
      }
    }
  }
  CHECK(grid_cuts > 0);
  CHECK(later_cuts > 0);
}

// check_shape_rules is the first violation of every shape rule in one fixed order (the grid's,
// then the rest, the CUDA graph rules last, which it skips without graphs).
TEST_CASE("check_shape_rules: the first violation of the shape rules, in order") {
  using Rule = hapmoe::RuleResult (*)(const Scenario&, const hapmoe::Mesh&);
  using namespace hapmoe;
  const Rule order[] = {
      rule_heads_divisible_by_tp, rule_query_groups_vs_tp, rule_expert_parallel_requires_experts,
      rule_experts_divisible_by_ep, rule_expert_grid, rule_batch_divisible, rule_sequence_parallel_needs_tp,
      rule_cp_seq_divisible, rule_sp_seq_divisible, rule_flex_dispatcher_needs_tp_ep, rule_recompute_modules_apply,
      rule_ep_overlap_needs_ep, rule_ep_overlap_dispatcher, rule_ep_overlap_recompute, rule_ep_overlap_mtp,
      rule_offload_needs_distributed_optimizer, rule_offload_vs_fp8_param_gather, rule_moe_bias_needs_etp1,
      rule_deepep_no_pad_to_capacity, rule_rank_capacity_needs_hybridep, rule_graph_modules_need_per_layer_impl,
      rule_graph_moe_vs_moe_router, rule_graph_preprocess_needs_router, rule_graph_moe_modules_need_experts,
      rule_graph_mlp_needs_dense_layers, rule_graph_moe_needs_drop_pad, rule_graph_preprocess_host_sync,
      rule_full_iteration_needs_static_moe, rule_graphs_full_recompute, rule_graph_te_moe_recompute,
      rule_ep_overlap_graph_modules, rule_graph_delay_wgrad_attn_bias};
  std::set<std::string> seen;
  for (bool pad : {false, true}) {
    Scenario s = base();
    s.training.moe_pad_expert_input_to_capacity = pad;
    s.training.use_distributed_optimizer = !pad;
    for (int tp : {1, 2, 3}) {
      for (int ep : {1, 4}) {
        Mesh grid_mesh;
        grid_mesh.tp = tp;
        grid_mesh.ep = ep;
        grid_mesh.dp = 2;
        grid_mesh.sequence_parallel = tp > 1;
        for_each_past_grid(grid_mesh, [&](const Mesh& m) {
          RuleResult expected;
          for (Rule r : order) {
            if ((expected = r(s, m))) break;
          }
          const RuleResult got = check_shape_rules(s, m);
          REQUIRE(got.has_value() == expected.has_value());
          if (got) {
            CHECK(got->rule == expected->rule);
            seen.insert(std::string(got->rule));
          }
        });
      }
    }
  }
  // Grid, later and graph rules all come first somewhere.
  for (const char* rule : {"heads_divisible_by_tp", "ep_overlap_needs_ep", "deepep_no_pad_to_capacity",
                           "graph_modules_need_per_layer_impl", "graphs_full_recompute"}) {
    CHECK_MESSAGE(seen.count(rule) == 1, std::string(rule));
  }
}

// The enumerator keeps the verdicts of the shape rules past the grid for a whole search, by
// (tp x ep > 1, ep > 1, etp > 1) and the other fields: those rules may read no other grid field.
TEST_CASE("check_shape_rules_past_grid reads the grid only through tp x ep > 1, ep > 1, etp > 1") {
  using namespace hapmoe;
  Scenario s = base();
  s.model.add_bias_linear = true;  // moe_bias_needs_etp1 applies
  std::map<std::vector<int>, std::string> verdict;  // by (flags, other fields) -> first rule ("" passes)
  std::set<std::string> rules;
  for (int tp : {1, 2, 4}) {
    for (int ep : {1, 2, 4}) {
      for (int etp : {1, 2}) {
        for (int cp : {1, 2}) {
          for (int dp : {1, 3}) {
            for (int mbs : {1, 2}) {
              Mesh grid_mesh;
              grid_mesh.tp = tp;
              grid_mesh.ep = ep;
              grid_mesh.etp = etp;
              grid_mesh.cp = cp;
              grid_mesh.dp = dp;
              grid_mesh.micro_batch_size = mbs;
              grid_mesh.sequence_parallel = tp > 1 && dp > 1;
              grid_mesh.pp = dp;
              grid_mesh.vpp = mbs;
              for_each_past_grid(grid_mesh, [&](const Mesh& m) {
                const RuleResult v = check_shape_rules_past_grid(s, m);
                const std::string rule = v ? std::string(v->rule) : std::string();
                const std::vector<int> key = {tp * ep > 1, ep > 1, etp > 1, m.recompute.key(), m.ep_comm_overlap,
                                              m.optimizer_offload_fraction > 0, static_cast<int>(m.dispatch),
                                              m.cuda_graphs.key()};
                const auto [at, first] = verdict.emplace(key, rule);
                if (!first) CHECK(at->second == rule);
                if (!rule.empty()) rules.insert(rule);
              });
            }
          }
        }
      }
    }
  }
  for (const char* rule : {"flex_dispatcher_needs_tp_ep", "ep_overlap_needs_ep", "moe_bias_needs_etp1"}) {
    CHECK_MESSAGE(rules.count(rule) == 1, std::string(rule));
  }
}
