// The closest plan when nothing fits: its memory terms checked against Megatron's per-parameter
// bytes by hand, and its place in the result JSON.
#include <doctest/doctest.h>

#include "hapmoe/planner.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/result_io.hpp"
#include "hapmoe/scenario_io.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {
const PresetCatalog& presets() {
  static const PresetCatalog c = load_builtin_presets();
  return c;
}
}  // namespace

TEST_CASE("closest plan: Llama 2 7B on one 40 GiB GPU, memory terms by hand") {
  // One GPU, one mesh (tp = pp = dp = 1), no offload: the only candidate is the closest one.
  json doc = {{"model", "llama2-7b"},
              {"cluster", {{"groups", {{{"gpu", {{"preset", "h100-sxm"}, {"memory_gib", 40}}}, {"nodes", 1}, {"gpus_per_node", 1}}}}}},
              {"training", {{"global_batch_size", 8}, {"seq_length", 4096}}},
              {"search", {{"tp", 1}, {"pp", 1}, {"micro_batch_size", 1}, {"recompute", "full"}, {"optimizer_offload_fraction", 0}}}};
  const auto s = parse_scenario(doc, presets());
  REQUIRE(s.ok());
  const auto r = search_plans(*s);
  REQUIRE(r.ok());
  REQUIRE(r->plans.empty());
  REQUIRE(r->diagnosis);
  REQUIRE(r->diagnosis->closest);
  const json j = search_result_to_json(*s, *r, false);
  const json& c = j["diagnosis"]["closest_plan"];
  REQUIRE(c["stages"].size() == 1);
  const json& st = c["stages"][0];
  // Llama 2 7B: 6.738e9 parameters (Megatron's count; vocabulary 32,000, a multiple of 128):
  // BF16 weights 2 bytes, FP32 main gradients 4, Adam's FP32 master weight and two moments 12
  // (dp = 1: nothing to shard) per parameter (megatron.md 3.1: 18 bytes per parameter).
  const double params = j["model"]["parameters_total"].get<double>();
  CHECK(params == doctest::Approx(6.7384e9).epsilon(1e-4));
  CHECK(st["weights_gib"].get<double>() == doctest::Approx(2 * params / kGiB).epsilon(1e-5));
  CHECK(st["gradients_gib"].get<double>() == doctest::Approx(4 * params / kGiB).epsilon(1e-5));
  CHECK(st["optimizer_state_gib"].get<double>() == doctest::Approx(12 * params / kGiB).epsilon(1e-5));
  // Full recompute keeps each layer's input: 32 layers x seq 4096 x hidden 4096 x 2 bytes = 1 GiB at least.
  CHECK(st["activations_gib"].get<double>() >= 1.0);
  CHECK(st["activations_gib"].get<double>() < 4.0);
  CHECK(st["reserved_gib"].get<double>() == 5);  // presets/gpus.json, h100-sxm reserved_memory_gib
  const double total = st["weights_gib"].get<double>() + st["gradients_gib"].get<double>() +
                       st["optimizer_state_gib"].get<double>() + st["activations_gib"].get<double>() +
                       st["reserved_gib"].get<double>();
  CHECK(st["total_gib"].get<double>() == doctest::Approx(total).epsilon(1e-5));
  CHECK(st["capacity_gib"].get<double>() == 40);
  CHECK(st["shortfall_gib"].get<double>() == doctest::Approx(total - 40).epsilon(1e-5));
  CHECK(c["shortfall_gib"] == st["shortfall_gib"]);
  CHECK(c["fullest_stage"] == 0);
  CHECK(c["plan"]["tp"] == 1);
  // The message names the closest plan's figures; the search's bound stays in shortfall_gib.
  const std::string msg = j["diagnosis"]["message"];
  CHECK(msg.find("closest plan") != std::string::npos);
  CHECK(msg.find("stage 0 (h100-sxm, 40.000 GiB)") != std::string::npos);
  CHECK(j["diagnosis"]["shortfall_gib"].get<double>() <= c["shortfall_gib"].get<double>());
}

TEST_CASE("closest plan: DeepSeek-V3 on 8 H100, and none when a plan fits") {
  json doc = {{"model", "deepseek-v3"},
              {"cluster", {{"groups", {{{"gpu", "h100-sxm"}, {"nodes", 1}}}}}},
              {"training", {{"global_batch_size", 64}, {"seq_length", 4096}}}};
  const auto s = parse_scenario(doc, presets());
  REQUIRE(s.ok());
  const auto r = search_plans(*s);
  REQUIRE(r.ok());
  REQUIRE(r->plans.empty());
  REQUIRE(r->diagnosis);
  REQUIRE(r->diagnosis->closest);
  const ClosestPlan& c = *r->diagnosis->closest;
  CHECK(c.evaluation.plan.tp * c.evaluation.plan.dp * c.evaluation.plan.pp * c.evaluation.plan.cp == 8);
  CHECK(c.shortfall_gib >= r->diagnosis->shortfall_gib);
  // The fullest stage is the one furthest over.
  for (const StageCost& st : c.evaluation.stages) {
    CHECK((st.peak_bytes() - st.capacity_bytes) / kGiB <= doctest::Approx(c.shortfall_gib));
  }
  json fits = doc;
  fits["model"] = "mixtral-8x7b";
  fits["cluster"]["groups"][0]["nodes"] = 4;
  const auto s2 = parse_scenario(fits, presets());
  REQUIRE(s2.ok());
  const auto r2 = search_plans(*s2);
  REQUIRE(r2.ok());
  REQUIRE(!r2->plans.empty());
  CHECK(!r2->diagnosis);
}
