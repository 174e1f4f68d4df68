// The memory margin (search.memory_margin_fraction): plans above it ranked after those within it.
#include <doctest/doctest.h>

#include "hapmoe/model_shape.hpp"
#include "hapmoe/result_io.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/search.hpp"
#include "test_scenarios.hpp"

namespace {
using nlohmann::json;
using hapmoe::testing::scenario_from;

json tight_scenario(double margin) {
  return {{"model", "mixtral-8x7b"},
          {"cluster", "h100-a100-32"},
          {"training", {{"global_batch_size", 256}, {"seq_length", 4096}}},
          {"search", {{"top_k", 20}, {"memory_margin_fraction", margin}, {"baselines", false}}}};
}

double used_fraction(const hapmoe::PlanEvaluation& ev) {
  double f = 0;
  for (const auto& c : ev.stages) f = std::max(f, c.peak_bytes() / c.capacity_bytes);
  return f;
}
}  // namespace

TEST_CASE("plans above the memory margin are flagged and ranked after the plans within it") {
  const auto s = scenario_from(tight_scenario(0.3));
  const auto r = hapmoe::search_plans(s);
  REQUIRE(r.ok());
  REQUIRE(r->plans.size() > 1);
  bool seen_above = false;
  long long above = 0;
  for (size_t i = 0; i < r->plans.size(); ++i) {
    const auto& m = r->plans[i].metrics;
    CHECK(m.within_memory_margin == (used_fraction(r->plans[i]) <= 0.7 + 1e-12));
    if (!m.within_memory_margin) { seen_above = true; ++above; }
    if (seen_above) CHECK(!m.within_memory_margin);  // no plan within the margin after one above it
    if (i > 0 && r->plans[i - 1].metrics.within_memory_margin == m.within_memory_margin) {
      CHECK(r->plans[i - 1].metrics.iteration_time_s <= m.iteration_time_s);
    }
  }
  CHECK(r->stats.above_memory_margin == above);
  const json j = hapmoe::search_result_to_json(s, *r);
  CHECK(j["stats"]["above_memory_margin"] == above);
  CHECK(j["stats"]["memory_margin_fraction"] == 0.3);
}

TEST_CASE("a zero margin keeps the time order") {
  const auto s = scenario_from(tight_scenario(0));
  const auto r = hapmoe::search_plans(s);
  REQUIRE(r.ok());
  for (size_t i = 1; i < r->plans.size(); ++i) {
    CHECK(r->plans[i - 1].metrics.iteration_time_s <= r->plans[i].metrics.iteration_time_s);
  }
}

TEST_CASE("memory_margin_fraction is read, defaulted and range-checked") {
  CHECK(scenario_from(tight_scenario(0.1)).search.memory_margin_fraction == 0.1);
  json doc = tight_scenario(0);
  doc["search"].erase("memory_margin_fraction");
  CHECK(scenario_from(doc).search.memory_margin_fraction == 0.05);
  doc["search"]["memory_margin_fraction"] = 0.6;
  const auto bad = hapmoe::parse_scenario(doc, hapmoe::testing::builtin_presets());
  REQUIRE(!bad.ok());
  CHECK(bad.error().field == "search.memory_margin_fraction");
}

TEST_CASE("the result carries the model's size and each stage's parameters") {
  const auto s = scenario_from(tight_scenario(0.05));
  const auto r = hapmoe::search_plans(s);
  REQUIRE(r.ok());
  const json j = hapmoe::search_result_to_json(s, *r);
  // Mixtral 8x7B: 46.70 B total, 12.88 B active (model_shape_test.cpp; Mistral quotes 46.7 / 12.9).
  CHECK(j["model"]["parameters_total"].get<double>() == doctest::Approx(46.7028e9).epsilon(1e-5));
  CHECK(j["model"]["parameters_active"].get<double>() == doctest::Approx(12.8799e9).epsilon(1e-5));
  double sum = 0;
  for (const auto& st : j["plans"][0]["breakdown"]["stages"]) sum += st["parameters"].get<double>();
  CHECK(sum == doctest::Approx(j["model"]["parameters_total"].get<double>()).epsilon(1e-5));
}
