// The planner (hapmoe/planner.hpp): the one reader of search.mode. "auto" ranks the plans of both
// runtimes together; nothing slower is ranked above something faster (within each side of the
// memory margin); a gain below 1 is never written as a gain.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "hapmoe/hetero_plan.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/result_io.hpp"
#include "hetero/hetero_space.hpp"
#include "test_scenarios.hpp"

namespace {
using nlohmann::json;
using hapmoe::testing::scenario_from;

json scenario(const std::string& model, const std::string& cluster, int gbs, const std::string& mode) {
  return {{"model", model},
          {"cluster", cluster},
          {"training", {{"global_batch_size", gbs}, {"seq_length", 4096}}},
          {"search", {{"mode", mode}, {"top_k", 8}, {"baselines", true}}}};
}

// The best time among r's plans within the memory margin (all plans when none is).
double best_within(const hapmoe::SearchResult& r) {
  double best = 1e300;
  for (const auto& ev : r.plans) {
    if (ev.metrics.within_memory_margin) best = std::min(best, ev.metrics.iteration_time_s);
  }
  if (best < 1e300) return best;
  for (const auto& ev : r.plans) best = std::min(best, ev.metrics.iteration_time_s);
  return best;
}

struct Case {
  const char* model;
  const char* cluster;
  int gbs;
};
// One NVIDIA pair, one where FlagScale wins by spanning vendors, one small single-type cluster.
const Case kCases[] = {{"mixtral-8x7b", "h100-a100-32", 256},
                       {"mixtral-8x7b", "mi300x-h100-32", 256},
                       {"qwen3-30b-a3b", "h100-16", 256},
                       {"mixtral-8x7b", "h800-h20-64", 512}};
}  // namespace

TEST_CASE("auto: both runtimes' plans ranked together, each labelled, never slower above faster") {
  for (const Case& c : kCases) {
    CAPTURE(std::string(c.model) + " on " + c.cluster);
    const auto a = hapmoe::search_plans(scenario_from(scenario(c.model, c.cluster, c.gbs, "auto")));
    const auto m = hapmoe::search_plans(scenario_from(scenario(c.model, c.cluster, c.gbs, "megatron")));
    const auto h = hapmoe::search_plans(scenario_from(scenario(c.model, c.cluster, c.gbs, "hetero")));
    REQUIRE(a.ok());
    REQUIRE(m.ok());
    REQUIRE(h.ok());
    REQUIRE(!a->plans.empty());
    CHECK(!a->stats.budget_reached);
    for (size_t i = 0; i < a->plans.size(); ++i) {
      const auto& ev = a->plans[i];
      REQUIRE(ev.plan.runtime.has_value());
      if (*ev.plan.runtime == hapmoe::Runtime::kMegatron) CHECK(!hapmoe::has_stage_meshes(ev.plan));
      if (i == 0) continue;
      const auto& prev = a->plans[i - 1].metrics;
      // Within the margin first; inside each side by time.
      CHECK((prev.within_memory_margin || !ev.metrics.within_memory_margin));
      if (prev.within_memory_margin == ev.metrics.within_memory_margin) {
        CHECK(prev.iteration_time_s <= ev.metrics.iteration_time_s);
      }
    }
    // Auto's first plan is the better of the two engines' (upstream wins ties).
    const double want = std::min(best_within(*m), h->plans.empty() ? 1e300 : best_within(*h));
    CHECK(best_within(*a) == doctest::Approx(want).epsilon(1e-12));
    if (*a->plans.front().plan.runtime == hapmoe::Runtime::kFlagScale && !m->plans.empty()) {
      // The best upstream plan beside it, slower: a gain of at least 1.
      REQUIRE(a->upstream.has_value());
      CHECK(a->upstream->speedup >= 1);
    }
    // Baselines never claim a gain the first plan does not have.
    if (a->megatron_default) {
      CHECK(a->megatron_default->speedup ==
            doctest::Approx(a->megatron_default->evaluation.metrics.iteration_time_s /
                            a->plans.front().metrics.iteration_time_s));
    }
  }
}

TEST_CASE("hetero mode with a faster upstream plan says so: the ratio below 1 is never called a gain") {
  const auto s = scenario_from(scenario("mixtral-8x7b", "h100-a100-32", 256, "hetero"));
  const auto r = hapmoe::search_plans(s);
  REQUIRE(r.ok());
  REQUIRE(r->upstream.has_value());
  REQUIRE(!r->plans.empty());
  const json j = hapmoe::search_result_to_json(s, *r);
  std::string notes;
  for (const auto& n : j["notes"]) notes += n.get<std::string>() + "\n";
  CAPTURE(notes);
  if (r->upstream->speedup < 1) {
    CHECK(notes.find("gains") == std::string::npos);
    CHECK(notes.find("faster than hetero mode's best") != std::string::npos);
  } else {
    CHECK(notes.find("gains") != std::string::npos);
  }
}

TEST_CASE("plan_runtime: the given runtime, else FlagScale for per-stage meshes or hetero mode") {
  auto s = scenario_from(scenario("mixtral-8x7b", "h100-a100-32", 256, "megatron"));
  const auto r = hapmoe::search_plans(s);
  REQUIRE(r.ok());
  REQUIRE(!r->plans.empty());
  hapmoe::PlanSpec p = r->plans.front().plan;
  p.runtime.reset();
  CHECK(hapmoe::plan_runtime(s, p) == hapmoe::Runtime::kMegatron);
  s.search.mode = hapmoe::SearchMode::kHetero;
  CHECK(hapmoe::plan_runtime(s, p) == hapmoe::Runtime::kFlagScale);
  s.search.mode = hapmoe::SearchMode::kAuto;
  CHECK(hapmoe::plan_runtime(s, p) == hapmoe::Runtime::kMegatron);
  p.runtime = hapmoe::Runtime::kFlagScale;
  CHECK(hapmoe::plan_runtime(s, p) == hapmoe::Runtime::kFlagScale);
  // The same plan evaluates under either runtime (FlagScale runs one mesh too).
  p.runtime = hapmoe::Runtime::kMegatron;
  CHECK(hapmoe::evaluate_plan(s, p).ok());
}

TEST_CASE("hetero's space holds every FlagScale plan: on one vendor it is never worse than upstream restricted to FlagScale's features") {
  // FlagScale's pinned Megatron-LM runs --recompute-modules, but not VPP, CP or EP overlap in its
  // hetero mode: upstream restricted to those is a subset of hetero's space.
  for (const char* model : {"mixtral-8x7b", "qwen3-30b-a3b"}) {
    for (const char* cluster : {"h100-a100-32", "h800-h20-64", "b200-h100-32", "h100-16"}) {
      CAPTURE(std::string(model) + " on " + cluster);
      json doc = scenario(model, cluster, 256, "megatron");
      doc["search"]["vpp"] = json::array({1});
      doc["search"]["cp"] = json::array({1});
      doc["search"]["ep_comm_overlap"] = json::array({false});
      doc["search"]["memory_margin_fraction"] = 0;  // by time alone
      doc["search"]["baselines"] = false;
      const auto up = hapmoe::search_plans(scenario_from(doc));
      doc["search"]["mode"] = "hetero";
      const auto het = hapmoe::search_plans(scenario_from(doc));
      REQUIRE(up.ok());
      REQUIRE(het.ok());
      if (up->plans.empty()) continue;
      REQUIRE(!het->plans.empty());
      CHECK(!het->stats.budget_reached);
      CHECK(het->plans.front().metrics.iteration_time_s <= up->plans.front().metrics.iteration_time_s * (1 + 1e-9));
    }
  }
}

TEST_CASE("hetero's recompute choices are upstream's: none/full per stage, each module set for all stages") {
  const auto s = scenario_from(scenario("mixtral-8x7b", "h100-a100-32", 256, "hetero"));
  const auto sets = hapmoe::hetero_recompute_sets(s);
  REQUIRE(sets.size() >= 2);
  CHECK(sets.front() == std::vector<hapmoe::Recompute>{hapmoe::Recompute::kNone, hapmoe::Recompute::kFull});
  bool moe_act_layernorm = false;
  for (size_t i = 1; i < sets.size(); ++i) {
    REQUIRE(sets[i].size() == 1);
    CHECK(sets[i][0].kind == hapmoe::Recompute::Kind::kSelective);
    moe_act_layernorm |= sets[i][0] == hapmoe::Recompute::of_modules(hapmoe::kRecomputeMoeAct | hapmoe::kRecomputeLayernorm);
  }
  CHECK(moe_act_layernorm);
}
