// The cost objectives (search.objective "cost" and "time_within_budget") and the Pareto front:
// the billed rate and cost per token by hand, the fields' validation, and both engines against
// brute force over group subsets (upstream: brute_force.hpp; hetero: hetero_fixtures.hpp) on
// generated instances with random prices and billing.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>

#include "brute_force.hpp"
#include "evaluate/objective.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/result_io.hpp"
#include "hapmoe/scenario_io.hpp"
#include "hetero/hetero_search.hpp"
#include "../hetero/hetero_fixtures.hpp"

using namespace hapmoe;
using hapmoe::testing::BrutePoint;
using nlohmann::json;

namespace {

json priced_doc() {
  return {{"format", "hapmoe.scenario/1"},
          {"model", "mixtral-8x7b"},
          {"cluster",
           {{"name", "priced"},
            {"groups",
             {{{"gpu", "h100-sxm"}, {"nodes", 2}, {"price_per_gpu_hour", 2.5}},
              {{"gpu", "a100-sxm-80gb"}, {"nodes", 2}, {"price_per_gpu_hour", 1.0}, {"billed", "all"}}}}}},
          {"training", {{"global_batch_size", 256}, {"seq_length", 4096}, {"train_tokens", 1e11}}}};
}

Error parse_error(const json& doc) {
  auto s = parse_scenario(doc, testing::builtin_presets());
  REQUIRE_FALSE(s.ok());
  return s.error();
}

}  // namespace

TEST_CASE("billed rate and cost per million tokens, by hand") {
  const Scenario s = testing::scenario_from(priced_doc());
  REQUIRE(s.cluster.priced());
  // 8 H100 used at 2.5 USD/h, the A100 group billed whole: 16 x 1.0.
  CHECK(billed_rate_per_hour(s.cluster, {8, 0}) == doctest::Approx(36.0));
  CHECK(billed_rate_per_hour(s.cluster, {16, 4}) == doctest::Approx(56.0));
  // 36 USD/h for 10 s is 0.1 USD per iteration of 256 x 4096 = 1,048,576 tokens.
  CHECK(cost_per_million_tokens(s.training, 36.0, 10.0) == doctest::Approx(0.1 / 1.048576));
  CHECK(objective_value(s.search, 36.0, 10.0) == doctest::Approx(10.0));  // "time"
  SearchSpec cost = s.search;
  cost.objective = Objective::kCost;
  CHECK(objective_value(cost, 36.0, 10.0) == doctest::Approx(360.0));
  CHECK(objective_value(cost, 0.0, 10.0) > 0);  // billing nothing: ordered by time
  SearchSpec budget = s.search;
  budget.objective = Objective::kTimeWithinBudget;
  budget.budget_per_hour = 36;
  CHECK(objective_admits(budget, 36.0));
  CHECK_FALSE(objective_admits(budget, 36.5));

  // A plan's metrics: 8 H100 (tp 2, dp 4... one stage) and the whole A100 group.
  json doc = priced_doc();
  doc["plan"] = {{"tp", 2}, {"pp", 1}, {"dp", 4}, {"ep", 4}, {"stages", {{{"group", 0}, {"layers", 32}, {"recompute", "full"}}}}};
  const Scenario e = testing::scenario_from(doc);
  auto ev = evaluate_plan(e, *e.plan);
  REQUIRE(ev.ok());
  const PlanMetrics& m = ev->metrics;
  CHECK(m.priced);
  CHECK(m.cost_per_hour == doctest::Approx(8 * 2.5 + 16 * 1.0));
  CHECK(m.cost_per_million_tokens == doctest::Approx(36.0 * m.iteration_time_s / 3600 / 1.048576));
  CHECK(m.train_hours == doctest::Approx(1e11 / m.tokens_per_s / 3600));
  CHECK(m.train_cost == doctest::Approx(m.train_hours * 36.0));
  const json out = evaluation_to_json(e, *ev);
  CHECK(out["metrics"]["cost_per_hour"] == 36.0);
  CHECK(out["metrics"].contains("train_cost"));
}

TEST_CASE("price and objective fields are validated with the field named") {
  json doc = priced_doc();
  doc["cluster"]["groups"][1].erase("price_per_gpu_hour");
  Error e = parse_error(doc);
  CHECK(e.field == "cluster.groups[1].price_per_gpu_hour");
  CHECK(e.message.find("every group") != std::string::npos);

  doc = priced_doc();
  doc["cluster"]["groups"][0]["price_per_gpu_hour"] = -1;
  CHECK(parse_error(doc).field == "cluster.groups[0].price_per_gpu_hour");

  doc = priced_doc();
  doc["cluster"]["groups"][0]["billed"] = "sometimes";
  CHECK(parse_error(doc).field == "cluster.groups[0].billed");

  doc = priced_doc();
  doc["search"] = {{"objective", "time_within_budget"}};
  e = parse_error(doc);
  CHECK(e.field == "search.budget_per_hour");

  doc = priced_doc();
  for (json& g : doc["cluster"]["groups"]) g.erase("price_per_gpu_hour");
  doc["search"] = {{"objective", "cost"}};
  e = parse_error(doc);
  CHECK(e.field == "cluster.groups[0].price_per_gpu_hour");
  CHECK(e.message.find("\"cost\"") != std::string::npos);

  doc = priced_doc();
  doc["training"]["train_tokens"] = 0;
  CHECK(parse_error(doc).field == "training.train_tokens");
}

namespace {

using testing::Rng;

// The small MoE model (3-5 layers) on H800 + Ascend 910B nodes of 1-2 GPUs with drawn memory, and
// the hetero search fields the generated hetero tests use (recompute none/full, no offload, the
// time order alone).
json small_hetero_model(Rng& rng) {
  json model = testing::small_moe_model();
  model["num_layers"] = 3 + rng.below(3);
  return model;
}
json small_hetero_cluster(Rng& rng) {
  return testing::two_type_cluster(20 + rng.below(60), 20 + rng.below(44), 1 + rng.below(2));
}
json small_hetero_search() {
  return {{"baselines", false}, {"top_k", 2}, {"recompute", {"none", "full"}},
          {"optimizer_offload_fraction", {0}}, {"micro_batch_size", {1}}, {"ep", {1, 2}},
          {"memory_margin_fraction", 0}};
}

// Prices from free to 4 USD per GPU-hour, billed by use or whole, on every group.
void add_prices(Rng& rng, json& groups) {
  static const double prices[] = {0, 0.5, 1, 1.7, 2.5, 4};
  for (json& g : groups) {
    g["price_per_gpu_hour"] = prices[rng.below(6)];
    if (rng.below(3) == 0) g["billed"] = "all";
  }
}

json upstream_instance(Rng& rng) {
  const int layers = 3 + rng.below(6);
  json model = {{"name", "generated"}, {"num_layers", layers}, {"hidden_size", 1024 * (1 + rng.below(3))},
                {"ffn_hidden_size", 4096}, {"num_attention_heads", 16}, {"num_query_groups", 4},
                {"vocab_size", 32000}, {"num_experts", 8}, {"moe_router_topk", 2},
                {"moe_ffn_hidden_size", 512 * (1 + rng.below(4))}};
  static const char* gpus[] = {"h100-sxm", "a100-sxm-80gb", "h20", "h800-sxm"};
  json groups = json::array();
  const int n = 1 + rng.below(3);
  for (int g = 0; g < n; ++g) {
    json gpu = {{"preset", gpus[rng.below(4)]}, {"memory_gib", 8 + rng.below(60)}, {"reserved_memory_gib", 2}};
    groups.push_back({{"gpu", gpu}, {"nodes", 1}, {"gpus_per_node", rng.below(2) ? 2 : 4}});
  }
  if (n >= 2 && rng.below(3) == 0) groups[1]["gpu"] = groups[0]["gpu"];  // twins, priced apart
  add_prices(rng, groups);
  return {{"format", "hapmoe.scenario/1"},
          {"model", model},
          {"cluster", {{"name", "generated"}, {"groups", groups}}},
          {"training", {{"global_batch_size", 8 * (1 + rng.below(8))}, {"seq_length", 1024 * (1 + rng.below(4))}}},
          {"search", {{"tp", {1, 2}}, {"cp", {1}}, {"ep", {1, 2, 4}}, {"micro_batch_size", {1, 2}},
                      {"vpp", {1, 2}}, {"top_k", 3}, {"baselines", false}, {"optimizer_offload_fraction", {0}},
                      {"memory_margin_fraction", 0}}}};
}

// The points a result's front holds: (time, rate).
std::vector<BrutePoint> result_points(const std::vector<PlanEvaluation>& front) {
  std::vector<BrutePoint> out;
  for (const PlanEvaluation& ev : front) out.push_back({ev.metrics.iteration_time_s, ev.metrics.cost_per_hour});
  return out;
}

// The two fronts hold the same (time, cost) points.
void check_same_front(const std::vector<BrutePoint>& got, const std::vector<BrutePoint>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].time_s == doctest::Approx(want[i].time_s).epsilon(1e-9));
    CHECK(got[i].rate * got[i].time_s == doctest::Approx(want[i].rate * want[i].time_s).epsilon(1e-9));
  }
}

// The objective's best over brute-force points (1e300: none admitted).
double best_value(const SearchSpec& s, const std::vector<BrutePoint>& pts) {
  double best = 1e300;
  for (const BrutePoint& p : pts) {
    if (objective_admits(s, p.rate)) best = std::min(best, objective_value(s, p.rate, p.time_s));
  }
  return best;
}

std::vector<BrutePoint> admitted(const SearchSpec& s, const std::vector<BrutePoint>& pts) {
  std::vector<BrutePoint> out;
  for (const BrutePoint& p : pts) {
    if (objective_admits(s, p.rate)) out.push_back(p);
  }
  return out;
}

// A budget between the least and the largest rate the points bill (from the points' own rates).
double budget_from(Rng& rng, const std::vector<BrutePoint>& pts) {
  std::vector<double> rates;
  for (const BrutePoint& p : pts) rates.push_back(p.rate);
  std::sort(rates.begin(), rates.end());
  rates.erase(std::unique(rates.begin(), rates.end()), rates.end());
  const double r = rates[static_cast<size_t>(rng.below(static_cast<int>(rates.size())))];
  return std::max(0.01, r);
}

}  // namespace

TEST_CASE("upstream: cost, budget and Pareto front equal the brute force over group subsets (150 instances)") {
  Rng rng{20261204};
  int compared = 0, fronts_of_two = 0, budget_cut = 0;
  for (int i = 0; i < 150; ++i) {
    json doc = upstream_instance(rng);
    const Scenario base = testing::scenario_from(doc);
    const std::vector<BrutePoint> pts = testing::brute_force_points(base);
    if (pts.empty()) continue;
    const int kind = rng.below(3);
    doc["search"]["objective"] = kind == 0 ? "time" : kind == 1 ? "cost" : "time_within_budget";
    if (kind == 2) doc["search"]["budget_per_hour"] = budget_from(rng, pts);
    CAPTURE(doc.dump());
    const Scenario s = testing::scenario_from(doc);
    auto r = search_plans(s);
    REQUIRE(r.ok());
    REQUIRE_FALSE(r->stats.budget_reached);
    const double want = best_value(s.search, pts);
    REQUIRE(want < 1e300);
    REQUIRE_FALSE(r->plans.empty());
    CHECK(r->plans.front().metrics.objective_value == doctest::Approx(want).epsilon(1e-9));
    for (const PlanEvaluation& ev : r->plans) CHECK(objective_admits(s.search, ev.metrics.cost_per_hour));
    const std::vector<BrutePoint> front = testing::non_dominated(admitted(s.search, pts));
    check_same_front(result_points(r->pareto), front);
    ++compared;
    fronts_of_two += front.size() >= 2;
    budget_cut += kind == 2 && r->stats.pruned.count("over_budget") && r->stats.pruned.at("over_budget") > 0;
  }
  MESSAGE("compared " << compared << " instances; fronts of 2+ plans: " << fronts_of_two
                      << "; budget objective cut entries: " << budget_cut);
  CHECK(compared >= 100);
  CHECK(fronts_of_two >= 20);
  CHECK(budget_cut >= 10);
}

TEST_CASE("hetero: cost, budget and Pareto front equal the brute force (100 instances)") {
  Rng rng{20261205};
  int compared = 0, fronts_of_two = 0;
  for (int i = 0; i < 100; ++i) {
    const json model = small_hetero_model(rng);
    json cluster = small_hetero_cluster(rng);
    if (rng.below(3) == 0) {
      cluster["groups"].push_back({{"gpu", {{"preset", "h20"}, {"memory_gib", 40 + rng.below(50)}}},
                                   {"nodes", 1},
                                   {"gpus_per_node", 1 + rng.below(2)}});
    }
    add_prices(rng, cluster["groups"]);
    json search = small_hetero_search();
    const Scenario base = testing::hetero_scenario(model, cluster, search);
    std::vector<std::pair<double, double>> seen;
    testing::hetero_brute_force(base, nullptr, &seen);
    if (seen.empty()) continue;
    std::vector<BrutePoint> pts;
    for (const auto& [t, rate] : seen) pts.push_back({t, rate});
    const int kind = rng.below(3);
    search["objective"] = kind == 0 ? "time" : kind == 1 ? "cost" : "time_within_budget";
    if (kind == 2) search["budget_per_hour"] = budget_from(rng, pts);
    CAPTURE(cluster.dump());
    CAPTURE(search.dump());
    const Scenario s = testing::hetero_scenario(model, cluster, search);
    auto r = hetero_search(s);
    REQUIRE(r.ok());
    REQUIRE_FALSE(r->stats.budget_reached);
    REQUIRE_FALSE(r->plans.empty());
    CHECK(r->plans.front().metrics.objective_value == doctest::Approx(best_value(s.search, pts)).epsilon(1e-9));
    for (const PlanEvaluation& ev : r->plans) CHECK(objective_admits(s.search, ev.metrics.cost_per_hour));
    const std::vector<BrutePoint> front = testing::non_dominated(admitted(s.search, pts));
    check_same_front(result_points(r->pareto), front);
    ++compared;
    fronts_of_two += front.size() >= 2;
  }
  MESSAGE("compared " << compared << " hetero instances; fronts of 2+ plans: " << fronts_of_two);
  CHECK(compared >= 60);
  CHECK(fronts_of_two >= 10);
}

TEST_CASE("without prices the result is as before: no cost metrics, no front") {
  json doc = priced_doc();
  for (json& g : doc["cluster"]["groups"]) {
    g.erase("price_per_gpu_hour");
    g.erase("billed");
  }
  doc["search"] = {{"top_k", 2}};
  const Scenario s = testing::scenario_from(doc);
  auto r = search_plans(s);
  REQUIRE(r.ok());
  REQUIRE_FALSE(r->plans.empty());
  CHECK(r->pareto.empty());
  CHECK_FALSE(r->plans.front().metrics.priced);
  CHECK(r->plans.front().metrics.objective_value == r->plans.front().metrics.iteration_time_s);
  const json out = search_result_to_json(s, *r, false);
  CHECK_FALSE(out.contains("pareto"));
  CHECK_FALSE(out["plans"][0]["metrics"].contains("cost_per_hour"));
}

TEST_CASE("nothing within the budget: the diagnosis says what the cheapest plan that fits bills") {
  json doc = priced_doc();
  doc["search"] = {{"objective", "time_within_budget"}, {"budget_per_hour", 1}, {"top_k", 2}};
  const Scenario s = testing::scenario_from(doc);
  auto r = search_plans(s);
  REQUIRE(r.ok());
  CHECK(r->plans.empty());
  REQUIRE(r->diagnosis.has_value());
  CHECK(r->diagnosis->message.find("search.budget_per_hour") != std::string::npos);
  CHECK(r->diagnosis->shortfall_gib == 0);
  doc["search"]["objective"] = "cost";
  auto cheapest = search_plans(testing::scenario_from(doc));
  REQUIRE(cheapest.ok());
  REQUIRE_FALSE(cheapest->plans.empty());
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.4g", cheapest->plans.front().metrics.cost_per_hour);
  CHECK(r->diagnosis->message.find(rate) != std::string::npos);
  REQUIRE_FALSE(r->diagnosis->suggestions.empty());
  CHECK(r->diagnosis->suggestions.front().find("raise search.budget_per_hour") != std::string::npos);
  const json out = search_result_to_json(s, *r, false);
  bool named = false;
  for (const json& rule : out["diagnosis"]["rules"]) named = named || rule["rule"] == "over_budget";
  CHECK(named);
}

TEST_CASE("auto mode's front is the non-dominated union of both runtimes' fronts (40 instances)") {
  Rng rng{20261206};
  int compared = 0, mixed = 0;
  for (int i = 0; i < 40; ++i) {
    const json model = small_hetero_model(rng);
    json cluster = small_hetero_cluster(rng);
    cluster["groups"][1]["gpu"]["preset"] = rng.below(2) ? "h20" : "ascend-910b";  // one vendor or two
    add_prices(rng, cluster["groups"]);
    json search = small_hetero_search();
    search["objective"] = rng.below(2) ? "cost" : "time";
    CAPTURE(cluster.dump());
    CAPTURE(search.dump());
    std::vector<BrutePoint> both;
    for (const char* mode : {"megatron", "hetero"}) {
      Scenario s = testing::hetero_scenario(model, cluster, search);
      s.search.mode = std::string(mode) == "hetero" ? SearchMode::kHetero : SearchMode::kMegatron;
      auto r = search_plans(s);
      REQUIRE(r.ok());
      REQUIRE_FALSE(r->stats.budget_reached);
      for (const BrutePoint& p : result_points(r->pareto)) both.push_back(p);
    }
    Scenario a = testing::hetero_scenario(model, cluster, search);
    a.search.mode = SearchMode::kAuto;
    auto r = search_plans(a);
    REQUIRE(r.ok());
    REQUIRE_FALSE(r->stats.budget_reached);
    const std::vector<BrutePoint> want = testing::non_dominated(both);
    check_same_front(result_points(r->pareto), want);
    for (const PlanEvaluation& ev : r->pareto) CHECK(ev.plan.runtime.has_value());
    if (want.empty()) continue;
    ++compared;
    bool fs = false, mlm = false;
    for (const PlanEvaluation& ev : r->pareto) (ev.plan.runtime == Runtime::kFlagScale ? fs : mlm) = true;
    mixed += fs && mlm;
  }
  MESSAGE("compared " << compared << " auto fronts; with both runtimes on the front: " << mixed);
  CHECK(compared >= 25);
}
