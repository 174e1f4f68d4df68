// scenario_io.hpp: malformed scenarios come back as an Error with a code and the JSON path of
// the offending value; presets and overrides resolve; the shipped examples parse.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/scenario_io.hpp"

namespace {

using nlohmann::json;

const hapmoe::PresetCatalog& presets() {
  static const hapmoe::PresetCatalog catalog = hapmoe::load_builtin_presets();
  return catalog;
}

// A valid scenario: Mixtral-8x7B on 2 H100 nodes, with a plan.
json valid_doc() {
  return {{"format", "hapmoe.scenario/1"},
          {"model", "mixtral-8x7b"},
          {"cluster", {{"groups", json::array({{{"gpu", "h100-sxm"}, {"nodes", 2}}})}}},
          {"training", {{"global_batch_size", 256}, {"seq_length", 4096}}},
          {"plan",
           {{"tp", 2}, {"pp", 2}, {"dp", 4}, {"ep", 8},
            {"stages", json::array({{{"layers", 16}}, {{"layers", 16}}})}}}};
}

// Parses and requires an Error with this code and field.
void expect_error(const json& doc, const std::string& code, const std::string& field) {
  const auto r = hapmoe::parse_scenario(doc, presets());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code);
  CHECK(r.error().field == field);
  CHECK_FALSE(r.error().message.empty());
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("the valid document parses") {
  const auto r = hapmoe::parse_scenario(valid_doc(), presets());
  REQUIRE(r.ok());
  CHECK(r->model.id == "mixtral-8x7b");
  CHECK(r->model.num_layers == 32);
  CHECK(r->cluster.total_gpus() == 16);
  CHECK(r->training.global_batch_size == 256);
  REQUIRE(r->plan.has_value());
  CHECK(r->plan->stages.size() == 2);
  CHECK(r->plan->sequence_parallel);  // defaults to tp > 1
  CHECK(r->plan->stages[0].gpu == "h100-sxm");
  // Text and parsed-JSON entry points agree.
  const auto t = hapmoe::parse_scenario(valid_doc().dump(), presets());
  REQUIRE(t.ok());
  CHECK(t->model.hidden_size == r->model.hidden_size);
}

TEST_CASE("bad JSON text") {
  for (const char* text : {"{", "", "{\"format\": }", "[1, 2", "nul"}) {
    CAPTURE(text);
    const auto r = hapmoe::parse_scenario(std::string(text), presets());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bad_json");
    CHECK(r.error().field == "$");
  }
  // Valid JSON that is not an object.
  expect_error(json::array({1, 2}), "wrong_type", "$");
}

TEST_CASE("wrong types") {
  json d = valid_doc();
  d["training"]["global_batch_size"] = "256";
  expect_error(d, "wrong_type", "training.global_batch_size");

  d = valid_doc();
  d["training"]["seq_length"] = 4096.5;
  expect_error(d, "wrong_type", "training.seq_length");

  d = valid_doc();
  d["training"]["use_distributed_optimizer"] = 1;
  expect_error(d, "wrong_type", "training.use_distributed_optimizer");

  d = valid_doc();
  d["model"] = 7;
  expect_error(d, "wrong_type", "model");

  d = valid_doc();
  d["training"] = json::array();
  expect_error(d, "wrong_type", "training");

  d = valid_doc();
  d["plan"]["stages"] = 2;
  expect_error(d, "wrong_type", "plan.stages");

  d = valid_doc();
  d["cluster"]["groups"][0]["gpu"] = {{"preset", 5}};
  expect_error(d, "wrong_type", "cluster.groups[0].gpu.preset");
}

TEST_CASE("negative and out-of-range sizes") {
  json d = valid_doc();
  d["model"] = {{"preset", "mixtral-8x7b"}, {"num_layers", -1}};
  expect_error(d, "out_of_range", "model.num_layers");

  d = valid_doc();
  d["model"] = {{"preset", "mixtral-8x7b"}, {"hidden_size", 0}};
  expect_error(d, "out_of_range", "model.hidden_size");

  d = valid_doc();
  d["training"]["global_batch_size"] = 0;
  expect_error(d, "out_of_range", "training.global_batch_size");

  d = valid_doc();
  d["plan"]["tp"] = -2;
  expect_error(d, "out_of_range", "plan.tp");

  d = valid_doc();
  d["plan"]["stages"][1]["group"] = 1;  // only group 0 exists
  expect_error(d, "out_of_range", "plan.stages[1].group");
}

TEST_CASE("zero GPUs and empty groups") {
  json d = valid_doc();
  d["cluster"]["groups"][0]["nodes"] = 0;
  expect_error(d, "out_of_range", "cluster.groups[0].nodes");

  d = valid_doc();
  d["cluster"]["groups"][0]["gpus_per_node"] = 0;
  expect_error(d, "out_of_range", "cluster.groups[0].gpus_per_node");

  d = valid_doc();
  d["cluster"]["groups"] = json::array();
  expect_error(d, "bad_value", "cluster.groups");

  d = valid_doc();
  d["cluster"] = json::object();
  expect_error(d, "missing_field", "cluster.groups");
}

TEST_CASE("unknown presets") {
  json d = valid_doc();
  d["model"] = "nope";
  expect_error(d, "unknown_preset", "model");

  d = valid_doc();
  d["cluster"]["groups"].push_back({{"gpu", "x100"}, {"nodes", 1}});
  expect_error(d, "unknown_preset", "cluster.groups[1].gpu");

  d = valid_doc();
  d["cluster"] = "no-such-cluster";
  expect_error(d, "unknown_preset", "cluster");

  d = valid_doc();
  d["model"] = {{"preset", "nope"}, {"num_layers", 4}};
  expect_error(d, "unknown_preset", "model.preset");
}

TEST_CASE("unknown fields are reported with their path") {
  json d = valid_doc();
  d["training"]["globl_batch_size"] = 256;
  expect_error(d, "unknown_field", "training.globl_batch_size");

  d = valid_doc();
  d["model"] = {{"preset", "mixtral-8x7b"}, {"num_expert", 8}};
  expect_error(d, "unknown_field", "model.num_expert");

  d = valid_doc();
  d["cluster"]["groups"][0]["node"] = 2;
  expect_error(d, "unknown_field", "cluster.groups[0].node");

  d = valid_doc();
  d["plan"]["stages"][1]["layer"] = 3;
  expect_error(d, "unknown_field", "plan.stages[1].layer");

  d = valid_doc();
  d["extra"] = true;
  expect_error(d, "unknown_field", "extra");

  // A misspelt *required* field alone: named as the unknown field, suggesting the right name.
  d = valid_doc();
  d["training"].erase("global_batch_size");
  d["training"]["globl_batch_size"] = 256;
  expect_error(d, "unknown_field", "training.globl_batch_size");
  const auto r = hapmoe::parse_scenario(d, presets());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("global_batch_size") != std::string::npos);
  // A required field simply absent, nothing close to it: missing_field.
  d["training"].erase("globl_batch_size");
  expect_error(d, "missing_field", "training.global_batch_size");
  d = valid_doc();
  d["training"].erase("seq_length");
  expect_error(d, "missing_field", "training.seq_length");
}

// Regression: a valid field read later ("ep") must not be mistaken for a typo of a missing
// required one ("dp").
TEST_CASE("missing plan.dp next to a valid plan.ep is reported as missing") {
  json d = valid_doc();
  d["plan"].erase("dp");
  expect_error(d, "missing_field", "plan.dp");
}

TEST_CASE("MoE cross-field checks") {
  // DeepSeek-V3: 256 experts in 8 router groups; 7 groups do not divide 256.
  json d = valid_doc();
  d["model"] = {{"preset", "deepseek-v3"}, {"moe_router_num_groups", 7}};
  expect_error(d, "bad_value", "model.moe_router_num_groups");

  d["model"] = {{"preset", "deepseek-v3"}, {"moe_router_group_topk", 9}};  // > 8 groups
  expect_error(d, "out_of_range", "model.moe_router_group_topk");

  d["model"] = {{"preset", "deepseek-v3"}, {"moe_router_group_topk", nullptr}};
  expect_error(d, "bad_value", "model.moe_router_group_topk");  // groups without group top-k

  d["model"] = {{"preset", "mixtral-8x7b"}, {"moe_router_topk", 9}};  // top-9 of 8 experts
  expect_error(d, "out_of_range", "model.moe_router_topk");

  d["model"] = {{"preset", "mixtral-8x7b"}, {"moe_layer_freq", {1, 1, 1}}};  // 3 entries, 32 layers
  expect_error(d, "bad_value", "model.moe_layer_freq");

  d["model"] = {{"preset", "mixtral-8x7b"}, {"moe_layer_freq", json::array()}};
  expect_error(d, "bad_value", "model.moe_layer_freq");

  json freq = json::array();
  for (int i = 0; i < 32; ++i) freq.push_back(i == 5 ? 2 : 1);
  d["model"] = {{"preset", "mixtral-8x7b"}, {"moe_layer_freq", freq}};
  expect_error(d, "out_of_range", "model.moe_layer_freq[5]");

  d["model"] = {{"preset", "llama2-7b"}, {"moe_router_topk", 2}};  // dense model with MoE fields
  expect_error(d, "bad_value", "model.moe_router_topk");

  d["model"] = {{"preset", "mixtral-8x7b"}, {"num_query_groups", 5}};  // 32 % 5 != 0
  expect_error(d, "bad_value", "model.num_query_groups");
}

TEST_CASE("moe_layer_freq: integer and list forms") {
  auto m = hapmoe::parse_model(json{{"preset", "mixtral-8x7b"}, {"moe_layer_freq", 2}}, "model", presets());
  REQUIRE(m.ok());
  REQUIRE(m->moe_layer_freq.size() == 32);
  CHECK(m->moe_layer_freq[0] == 1);  // i % 2 == 0
  CHECK(m->moe_layer_freq[1] == 0);
  CHECK(m->moe_layer_freq[30] == 1);
  CHECK(m->moe_layer_freq[31] == 0);
  const auto ds = hapmoe::parse_model(json("deepseek-v3"), "model", presets());
  REQUIRE(ds.ok());
  CHECK(ds->moe_layer_freq[2] == 0);
  CHECK(ds->moe_layer_freq[3] == 1);
}

TEST_CASE("preset overrides") {
  const auto g = hapmoe::parse_gpu(json{{"preset", "h100-sxm"}, {"memory_gib", 94}}, "gpu", presets());
  REQUIRE(g.ok());
  CHECK(g->memory_gib == 94);       // overridden
  CHECK(g->bf16_tflops == 989);     // from the preset
  CHECK(g->fp8_tflops.has_value());
  CHECK(g->id == "h100-sxm");

  // The override reaches the costed plan: the stage capacity is 94 GiB.
  json d = valid_doc();
  d["cluster"]["groups"][0]["gpu"] = {{"preset", "h100-sxm"}, {"memory_gib", 94}};
  auto s = hapmoe::parse_scenario(d, presets());
  REQUIRE(s.ok());
  CHECK(s->cluster.groups[0].gpu.memory_gib == 94);
  auto ev = hapmoe::evaluate_plan(*s, *s->plan);
  REQUIRE(ev.ok());
  CHECK(ev->metrics.memory_capacity_gib[0] == doctest::Approx(94));

  auto m = hapmoe::parse_model(json{{"preset", "mixtral-8x7b"}, {"num_layers", 8}}, "model", presets());
  REQUIRE(m.ok());
  CHECK(m->num_layers == 8);
  CHECK(m->moe_layer_freq.size() == 8);  // the expanded pattern follows the override
  CHECK(m->hidden_size == 4096);

  // A fully custom GPU object (no preset) gets id "custom".
  auto c = hapmoe::parse_gpu(json{{"memory_gib", 80}, {"bf16_tflops", 100}, {"hbm_gbps", 1000},
                                  {"intra_node_gbps", 100}, {"inter_node_gbps", 10}},
                             "gpu", presets());
  REQUIRE(c.ok());
  CHECK(c->id == "custom");
  CHECK_FALSE(c->fp8_tflops.has_value());
}

TEST_CASE("reserved memory must stay below memory") {
  auto g = hapmoe::parse_gpu(json{{"preset", "h100-sxm"}, {"reserved_memory_gib", 80}}, "gpu", presets());
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().code == "bad_value");
  CHECK(g.error().field == "gpu.reserved_memory_gib");

  json d = valid_doc();  // equal is rejected too
  d["cluster"]["groups"][0]["gpu"] = {{"preset", "h100-sxm"}, {"memory_gib", 10}, {"reserved_memory_gib", 10}};
  expect_error(d, "bad_value", "cluster.groups[0].gpu.reserved_memory_gib");

  d["cluster"]["groups"][0]["gpu"] = {{"preset", "h100-sxm"}, {"memory_gib", 10}, {"reserved_memory_gib", 9.5}};
  CHECK(hapmoe::parse_scenario(d, presets()).ok());
}

TEST_CASE("format mismatch") {
  json d = valid_doc();
  d["format"] = "hapmoe.scenario/2";
  expect_error(d, "bad_value", "format");
  d["format"] = 1;
  expect_error(d, "wrong_type", "format");
  d.erase("format");  // absent: taken as the current format
  CHECK(hapmoe::parse_scenario(d, presets()).ok());
}

TEST_CASE("plan shape errors") {
  json d = valid_doc();
  d["plan"]["pp"] = 4;  // 2 stages listed
  expect_error(d, "bad_value", "plan.stages");

  d = valid_doc();
  d["plan"]["stages"].push_back({{"layers", 1}});  // 3 stages, pp 2
  expect_error(d, "bad_value", "plan.stages");

  d = valid_doc();
  d["plan"].erase("dp");
  d["plan"].erase("ep");
  expect_error(d, "missing_field", "plan.dp");

  d = valid_doc();
  d["plan"]["stages"][0].erase("layers");
  expect_error(d, "missing_field", "plan.stages[0].layers");

  d = valid_doc();
  d["plan"]["stages"][0]["gpu"] = "a100-sxm-80gb";  // group 0 is H100
  expect_error(d, "bad_value", "plan.stages[0].gpu");

  d = valid_doc();
  d["plan"]["stages"][1]["recompute"] = "partial";
  expect_error(d, "bad_value", "plan.stages[1].recompute");

  d = valid_doc();
  d["training"]["overlap_param_gather"] = true;
  d["training"]["use_distributed_optimizer"] = false;
  expect_error(d, "bad_value", "training.overlap_param_gather");

  d = valid_doc();
  d["training"]["precision"] = "fp4";
  expect_error(d, "bad_value", "training.precision");
}

// Recompute values: the three names or {"modules": [...]} with Megatron's module names; a plan
// writes them back in the same form ("selective" is Megatron's default set, core_attn alone).
TEST_CASE("recompute values, EP overlap and optimizer offload") {
  using hapmoe::Recompute;
  json d = valid_doc();
  d["plan"]["stages"][0]["recompute"] = {{"modules", {"moe_act", "layernorm", "moe_act"}}};
  d["plan"]["stages"][1]["recompute"] = {{"modules", {"core_attn"}}};
  d["plan"]["ep_comm_overlap"] = true;
  d["plan"]["optimizer_offload_fraction"] = 0.5;
  d["search"] = {{"recompute", {"none", {{"modules", {"moe"}}}, "full", "none"}},
                 {"ep_comm_overlap", {true, false}},
                 {"optimizer_offload_fraction", 0.25}};
  auto r = hapmoe::parse_scenario(d, presets());
  REQUIRE(r.ok());
  const hapmoe::PlanSpec& p = *r->plan;
  CHECK(p.stages[0].recompute == Recompute::of_modules(hapmoe::kRecomputeMoeAct | hapmoe::kRecomputeLayernorm));
  CHECK(p.stages[1].recompute == Recompute::kSelective);
  CHECK(p.ep_comm_overlap);
  CHECK(p.optimizer_offload_fraction == 0.5);
  CHECK(r->search.recompute ==
        std::vector<Recompute>{Recompute::kNone, Recompute::of_modules(hapmoe::kRecomputeMoe), Recompute::kFull});
  CHECK(r->search.ep_comm_overlap == std::vector<bool>{true, false});
  CHECK(r->search.optimizer_offload_fraction == std::vector<double>{0.25});
  const json out = hapmoe::plan_to_json(p);
  CHECK(out["stages"][0]["recompute"] == json{{"modules", {"moe_act", "layernorm"}}});
  CHECK(out["stages"][1]["recompute"] == "selective");
  CHECK(out["ep_comm_overlap"] == true);
  CHECK(out["optimizer_offload_fraction"] == 0.5);

  d = valid_doc();
  d["plan"]["stages"][0]["recompute"] = {{"modules", json::array()}};
  expect_error(d, "bad_value", "plan.stages[0].recompute.modules");
  d["plan"]["stages"][0]["recompute"] = {{"modules", {"attention"}}};
  expect_error(d, "bad_value", "plan.stages[0].recompute.modules[0]");
  d["plan"]["stages"][0]["recompute"] = {{"module", {"moe_act"}}};
  expect_error(d, "unknown_field", "plan.stages[0].recompute.module");
  d["plan"]["stages"][0]["recompute"] = 3;
  expect_error(d, "wrong_type", "plan.stages[0].recompute");
  d = valid_doc();
  d["search"] = {{"recompute", {"none", {{"modules", {"moe_act"}}, {"x", 1}}}}};
  expect_error(d, "unknown_field", "search.recompute[1].x");
  d["search"] = {{"recompute", json::array()}};
  expect_error(d, "bad_value", "search.recompute");
  d["search"] = {{"optimizer_offload_fraction", {0, 1.5}}};
  expect_error(d, "out_of_range", "search.optimizer_offload_fraction[1]");
  d["search"] = {{"ep_comm_overlap", "yes"}};
  expect_error(d, "wrong_type", "search.ep_comm_overlap");
  d = valid_doc();
  d["plan"]["optimizer_offload_fraction"] = -0.1;
  expect_error(d, "out_of_range", "plan.optimizer_offload_fraction");
}

TEST_CASE("shipped examples parse and evaluate") {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(std::string(HAPMOE_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() == ".json") names.push_back(e.path().filename().string());
  }
  CHECK(names.size() >= 5);
  for (const std::string& name : names) {
    CAPTURE(name);
    const std::string text = read_text(std::string(HAPMOE_SOURCE_DIR) + "/examples/" + name);
    const auto s = hapmoe::parse_scenario(text, presets());
    REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().code + " at " + s.error().field));
    CHECK(s->cluster.total_gpus() > 0);
    if (s->plan) {
      const auto ev = hapmoe::evaluate_plan(*s, *s->plan);
      CHECK_MESSAGE(ev.ok(), (ev.ok() ? std::string() : ev.error().code));
    }
  }
  // c3 in detail: Qwen3-30B-A3B on h100-16, FP8, PP 2 x VPP 12, EP 8.
  const auto s = hapmoe::parse_scenario(
      read_text(std::string(HAPMOE_SOURCE_DIR) + "/examples/c3-qwen3-30b-a3b-h100-16.json"), presets());
  REQUIRE(s.ok());
  CHECK(s->model.num_experts == 128);
  CHECK(s->cluster.total_gpus() == 16);
  CHECK(s->training.precision == hapmoe::Precision::kFp8);
  REQUIRE(s->plan.has_value());
  CHECK(s->plan->pp == 2);
  CHECK(s->plan->vpp == 12);
  CHECK(s->plan->ep == 8);
  CHECK(s->plan->stages[1].layers == 24);
}

TEST_CASE("Megatron flag fields and gpus_per_host are checked with their path") {
  json d = valid_doc();
  d["model"] = {{"preset", "gpt-oss-120b"}, {"swiglu", false}};  // quick-GeGLU is a gated MLP
  expect_error(d, "bad_value", "model.quick_geglu");
  d["model"] = {{"preset", "deepseek-v3"}, {"moe_router_score_function", "softmax"}};  // expert bias needs sigmoid
  expect_error(d, "bad_value", "model.moe_router_enable_expert_bias");
  d["model"] = {{"preset", "mixtral-8x7b"}, {"moe_shared_expert_gate", true}};  // no shared expert
  expect_error(d, "bad_value", "model.moe_shared_expert_gate");
  d["model"] = {{"preset", "mixtral-8x7b"}, {"normalization", "BatchNorm"}};
  expect_error(d, "bad_value", "model.normalization");
  d["model"] = "mixtral-8x7b";
  d["cluster"]["groups"][0]["gpus_per_host"] = 3;  // 3 does not divide an 8-GPU NVLink domain
  expect_error(d, "bad_value", "cluster.groups[0].gpus_per_host");
  d["cluster"]["groups"][0]["gpus_per_host"] = 4;
  const auto r = hapmoe::parse_scenario(d, presets());
  REQUIRE(r.ok());
  CHECK(r->cluster.groups[0].gpus_per_host == 4);
  CHECK(r->model.rotary_base == 1000000);  // Mixtral's rope_theta, from the preset
}
