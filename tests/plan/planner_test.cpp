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
  int compared = 0;
  for (const Case& c : kCases) {
    CAPTURE(std::string(c.model) + " on " + c.cluster);
    const auto a = hapmoe::search_plans(scenario_from(scenario(c.model, c.cluster, c.gbs, "auto")));
    const auto m = hapmoe::search_plans(scenario_from(scenario(c.model, c.cluster, c.gbs, "megatron")));
    const auto h = hapmoe::search_plans(scenario_from(scenario(c.model, c.cluster, c.gbs, "hetero")));
    REQUIRE(a.ok());
    REQUIRE(m.ok());
    REQUIRE(h.ok());
    REQUIRE(!a->plans.empty());
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
    // Auto's first plan is the better of the two engines' (upstream wins ties), where the budget
    // ended neither (the re-search within the memory margin can spend it: h800-h20-64, whose
    // upstream list has 7 plans within the margin for 8 places, searches hetero again in full).
    if (!a->stats.budget_reached && !m->stats.budget_reached && !h->stats.budget_reached) {
      const double want = std::min(best_within(*m), h->plans.empty() ? 1e300 : best_within(*h));
      CHECK(best_within(*a) == doctest::Approx(want).epsilon(1e-12));
      ++compared;
    }
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
  CHECK(compared >= 3);
}

TEST_CASE("the first plan is the fastest within the memory margin, as a search on the memory less the margin finds") {
  // Qwen3-30B-A3B on 16 H100 at FP8 (calibration C3): its fastest plans leave under 5% free, and
  // the k fastest keep one within the margin that is not the fastest within it.
  json doc = {{"model", "qwen3-30b-a3b"},
              {"cluster", "h100-16"},
              {"training",
               {{"global_batch_size", 1024}, {"seq_length", 4096}, {"precision", "fp8"}, {"fp8_param_gather", true},
                {"grad_reduce_in_bf16", true}, {"fp8_recipe", "tensorwise"}}},
              {"search", {{"mode", "megatron"}, {"top_k", 5}}}};
  const hapmoe::Scenario s = scenario_from(doc);
  const auto r = hapmoe::search_plans(s);
  REQUIRE(r.ok());
  REQUIRE(r->plans.size() == 5);
  // The reference: the upstream engine alone, on each GPU's memory less the margin.
  hapmoe::Scenario tight = s;
  for (auto& g : tight.cluster.groups) g.gpu.memory_gib *= 1 - s.search.memory_margin_fraction;
  const auto t = hapmoe::upstream_search(tight);
  REQUIRE(t.ok());
  REQUIRE(!t->plans.empty());
  CHECK(r->plans.front().metrics.within_memory_margin);
  CHECK(r->plans.front().metrics.iteration_time_s == doctest::Approx(t->plans.front().metrics.iteration_time_s).epsilon(1e-12));
  // The k fastest plans alone hold a slower plan within the margin than the first.
  const auto plain = hapmoe::upstream_search(s);
  REQUIRE(plain.ok());
  double plain_within = 1e300, plain_fastest = 1e300;
  for (const auto& ev : plain->plans) {
    plain_fastest = std::min(plain_fastest, ev.metrics.iteration_time_s);
    bool within = true;
    for (const auto& c : ev.stages) within = within && c.peak_bytes() <= (1 - s.search.memory_margin_fraction) * c.capacity_bytes;
    if (within) plain_within = std::min(plain_within, ev.metrics.iteration_time_s);
  }
  CHECK(r->plans.front().metrics.iteration_time_s < plain_within);
  // Within the margin first, by time; the fastest plan above it keeps a place, flagged.
  bool flagged_seen = false;
  for (size_t i = 1; i < r->plans.size(); ++i) {
    const auto& prev = r->plans[i - 1].metrics;
    const auto& cur = r->plans[i].metrics;
    CHECK((prev.within_memory_margin || !cur.within_memory_margin));
    if (prev.within_memory_margin == cur.within_memory_margin) CHECK(prev.iteration_time_s <= cur.iteration_time_s);
    flagged_seen = flagged_seen || !cur.within_memory_margin;
  }
  CHECK(flagged_seen);
  bool has_fastest = false;
  for (const auto& ev : r->plans) has_fastest = has_fastest || ev.metrics.iteration_time_s == plain_fastest;
  CHECK(has_fastest);
  CHECK(r->stats.above_memory_margin >= 1);
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
