// evaluate: rejects, with the rule's name, what the search never returns; reproduces the metrics
// of the search's own plans.
#include <doctest/doctest.h>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/search.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {
Scenario mixtral_on_h100(const json& plan) {
  json doc = {{"model", "mixtral-8x7b"}, {"cluster", "h100-64"},
              {"training", {{"global_batch_size", 256}, {"seq_length", 4096}}}};
  if (!plan.is_null()) doc["plan"] = plan;
  return testing::scenario_from(doc);
}
std::string rule_code(const Scenario& s) {
  const auto ev = evaluate_plan(s, *s.plan);
  return ev.ok() ? std::string() : ev.error().code;
}
json stages(std::vector<int> layers) {
  json a = json::array();
  for (int n : layers) a.push_back({{"gpu", "h100-sxm"}, {"group", 0}, {"layers", n}});
  return a;
}
}  // namespace

TEST_CASE("vpp 32 on 24-layer stages is rejected by vpp_layers") {
  // Mixtral 8x7B has 32 layers: pp 2 x vpp 32 = 64 chunks > 32 layers.
  const Scenario s = mixtral_on_h100({{"tp", 2}, {"pp", 2}, {"dp", 8}, {"ep", 8}, {"vpp", 32},
                                      {"sequence_parallel", true}, {"stages", stages({24, 8})}});
  CHECK(rule_code(s) == "rule:vpp_layers");
}

TEST_CASE("a stage with fewer layers than virtual chunks is rejected") {
  const Scenario s = mixtral_on_h100({{"tp", 2}, {"pp", 4}, {"dp", 8}, {"ep", 8}, {"vpp", 4},
                                      {"sequence_parallel", true}, {"stages", stages({3, 10, 10, 9})}});
  CHECK(rule_code(s) == "rule:stage_layers_at_least_vpp");
  const auto ev = evaluate_plan(s, *s.plan);
  CHECK(ev.error().field == "plan.stages");
}

TEST_CASE("evaluate of a searched plan reproduces its metrics exactly") {
  const Scenario s = mixtral_on_h100(nullptr);
  const auto r = search_plans(s);
  REQUIRE(r.ok());
  REQUIRE(!r->plans.empty());
  for (const auto& found : r->plans) {
    const auto ev = evaluate_plan(s, found.plan);
    REQUIRE(ev.ok());
    CHECK(ev->metrics.iteration_time_s == found.metrics.iteration_time_s);
    CHECK(ev->metrics.peak_memory_gib == found.metrics.peak_memory_gib);
    for (const auto& st : found.plan.stages) CHECK(st.layers >= found.plan.vpp);
  }
}

TEST_CASE("a plan whose cost is not finite is an error, never a result with nulls") {
  // A denormal measured bus bandwidth (the parser refuses it; set here behind its back) makes the
  // EP all-to-all and DP terms infinite.
  Scenario s = mixtral_on_h100({{"tp", 1}, {"pp", 1}, {"dp", 64}, {"ep", 8}, {"stages", stages({32})}});
  REQUIRE(evaluate_plan(s, *s.plan).ok());
  GpuProfile g;
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                          CollectiveOp::kAllToAll}) {
    for (Placement where : {Placement::kIntraNode, Placement::kInterNode}) g.collectives.push_back({op, 8, where, 1 << 20, 5e-324});
  }
  s.profile.gpus = {{"h100-sxm", g}};
  const auto ev = evaluate_plan(s, *s.plan);
  REQUIRE_FALSE(ev.ok());
  CHECK(ev.error().code == "non_finite");
  CHECK(ev.error().field == "plan");
}
