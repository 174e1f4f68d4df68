// search_budget.hpp and SearchBudget: how the walk budget is shared between mesh shapes, what is
// left for later searches of one call, and searches that reach a limit: they stop, say which
// limit and what they left out, keep their progress moving, and still search what they built.
#include "search/search_budget.hpp"
#include "io/budget_io.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "hapmoe/planner.hpp"
#include "hapmoe/result_io.hpp"
#include "hapmoe/search.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {

bool has_limit(const SearchStats& st, const std::string& l) {
  return std::find(st.limits_reached.begin(), st.limits_reached.end(), l) != st.limits_reached.end();
}

// Mixtral-S on 16 one-node groups of slightly different H100/H800s: 2^16 group sets per shape.
Scenario distinct_groups(int n, const char* mode = "megatron") {
  json groups = json::array();
  for (int i = 0; i < n; ++i) {
    groups.push_back({{"gpu", {{"preset", i % 2 ? "h800-sxm" : "h100-sxm"}, {"memory_gib", 80 - (i / 2) * 0.5}}}, {"nodes", 1}});
  }
  return testing::scenario_from({{"model", "mixtral-s"}, {"cluster", {{"groups", groups}}},
                                 {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}},
                                 {"search", {{"mode", mode}}}});
}

}  // namespace

TEST_CASE("fair_share_cap and walk_allowance share a walk budget between shapes") {
  CHECK(fair_share_cap({3, 5, 2}, 10) == 1LL << 62);  // everything fits
  CHECK(fair_share_cap({3, 5, 2}, 9) == 4);           // 3 + 4 + 2
  CHECK(fair_share_cap({10, 10, 10}, 7) == 2);
  CHECK(fair_share_cap({1, 100, 100}, 41) == 20);     // 1 + 20 + 20
  CHECK(fair_share_cap({1LL << 62, 5}, 100) == 95);   // a saturated count, no overflow
  // Many shapes of few sets: a cap (3 of 7) would leave out every shape's larger sets, so whole
  // walks for an evenly spread part of the shapes (the cap's 30 sets: 4 shapes) instead.
  const std::vector<long long> a = walk_allowance(std::vector<long long>(10, 7), 35);
  CHECK(a == std::vector<long long>{0, 0, 7, 0, 7, 0, 7, 0, 0, 7});
  // Large shapes: every shape walks its first sets (at least kMinPartialWalk each), the small
  // ones whole.
  CHECK(walk_allowance({1000, 5000, 300}, 2000) == std::vector<long long>{850, 850, 300});
  CHECK(walk_allowance({3, 4}, 100) == std::vector<long long>{3, 4});
  // Shapes of many sets and a small budget: their first sets (2^16 sets each, 20 allowed).
  CHECK(walk_allowance({65535, 65535, 2}, 42) == std::vector<long long>{20, 20, 2});
}

TEST_CASE("remaining_budget subtracts what earlier searches used, never below zero") {
  SearchBudget b;
  b.max_orders = 100;
  b.max_entries = 10;
  SearchWork used;
  used.orders = 30;
  used.entries = 25;
  const SearchBudget r = remaining_budget(b, used);
  CHECK(r.max_orders == 70);
  CHECK(r.max_entries == 0);
  CHECK(r.max_stage_costs == b.max_stage_costs);
  CHECK_FALSE(past_deadline(b));  // no deadline set
  SearchBudget gone = b;
  gone.deadline_s = search_clock_s() - 1;
  CHECK(past_deadline(gone));
}

TEST_CASE("a search past its group-set budget says so and still finds plans") {
  const Scenario s = distinct_groups(16);
  SearchBudget budget;
  budget.max_group_sets = 20'000;
  std::vector<double> seen;
  SearchControl control;
  control.progress = [&](double f, long long) { seen.push_back(f); };
  const auto r = search_plans(s, control, budget);
  REQUIRE(r.ok());
  CHECK(r->stats.budget_reached);
  CHECK(has_limit(r->stats, "group_sets"));
  CHECK(r->stats.shapes_cut_short > 0);
  CHECK(r->stats.work.group_sets <= budget.max_group_sets);
  CHECK_FALSE(r->plans.empty());  // every shape walked its first sets: a plan, not "no fit"
  // Progress never goes back, moves during the build and reaches 1.
  REQUIRE(seen.size() > 10);
  for (size_t i = 1; i < seen.size(); ++i) CHECK(seen[i] >= seen[i - 1]);
  CHECK(seen.back() == 1.0);
  CHECK(std::count_if(seen.begin(), seen.end(), [](double f) { return f > 0 && f < 0.1; }) > 0);
  // The same input stops at the same point.
  const auto again = search_plans(s, {}, budget);
  CHECK(again->plans.front().metrics.iteration_time_s == r->plans.front().metrics.iteration_time_s);
  CHECK(again->stats.evaluated == r->stats.evaluated);
}

TEST_CASE("the entry budget keeps the entries of the lowest bounds and the search reads them") {
  // Margin 0: the plans in time order alone, which is what the budget must not lose.
  const Scenario s = testing::scenario_from({{"model", "mixtral-s"}, {"cluster", "h100-a100-32"},
                                             {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}},
                                             {"search", {{"memory_margin_fraction", 0}}}});
  const auto full = search_plans(s);
  REQUIRE(full.ok());
  REQUIRE_FALSE(full->stats.budget_reached);
  const long long all = full->stats.work.entries;
  REQUIRE(all > 160);
  // Reaching the entry limit while building does not end the search of the entries built (it
  // did: no plan at all). The entries kept are those of the lowest bounds, so the kept sets of
  // growing limits are nested: a larger limit never finds a slower plan, and a limit that keeps
  // every entry finds the exact optimum.
  double previous = std::numeric_limits<double>::infinity();
  for (long long limit : {40LL, 80LL, 160LL, all}) {
    CAPTURE(limit);
    SearchBudget budget;
    budget.max_entries = limit;
    const auto r = search_plans(s, {}, budget);
    REQUIRE(r.ok());
    CHECK(r->stats.evaluated > 0);
    REQUIRE_FALSE(r->plans.empty());
    const double t = r->plans.front().metrics.iteration_time_s;
    CHECK(t >= full->plans.front().metrics.iteration_time_s);
    CHECK(t <= previous);
    previous = t;
    if (limit < all) {
      CHECK(has_limit(r->stats, "entries"));
      CHECK(r->stats.entries_dropped > 0);
    } else {
      CHECK_FALSE(r->stats.budget_reached);
      CHECK(t == full->plans.front().metrics.iteration_time_s);
    }
  }
}

TEST_CASE("the searches of one call share the budget: the offload retry and hetero's per-fraction searches") {
  // Mixtral-L on 16-2 fits only with optimizer offload: the retry draws on what the first left.
  const Scenario off = testing::scenario_from({{"model", "mixtral-l"}, {"cluster", "16-2"},
                                               {"training", {{"global_batch_size", 512}, {"seq_length", 4096}}}});
  SearchBudget budget;
  budget.max_orders = 60;
  budget.max_seconds = 1e6;  // the counted work decides, not a clock slowed by the sanitizers
  const auto r = search_plans(off, {}, budget);
  REQUIRE(r.ok());
  CHECK(r->stats.work.orders <= budget.max_orders + 1);
  CHECK(has_limit(r->stats, "orders"));
  // Hetero mode, ten offload fractions: one search each, all within the one budget.
  Scenario h = distinct_groups(4, "hetero");
  h.search.optimizer_offload_fraction = {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  h.search.baselines = false;
  budget.max_orders = 200;
  const auto hr = search_plans(h, {}, budget);
  REQUIRE(hr.ok());
  CHECK(hr->stats.evaluated <= budget.max_orders);
  CHECK(has_limit(hr->stats, "orders"));
}

TEST_CASE("a deep model's split counts its label work, and stops inside a stage push") {
  json model = testing::small_moe_model();
  model["num_layers"] = 1024;
  const Scenario s = testing::scenario_from({{"model", model}, {"cluster", "h100-a100-32"},
                                             {"training", {{"global_batch_size", 256}, {"seq_length", 4096}}},
                                             {"search", {{"tp", 1}, {"ep", 1}, {"micro_batch_size", 1}}}});
  SearchBudget budget;
  budget.max_stage_costs = 200'000;
  const auto r = search_plans(s, {}, budget);
  REQUIRE(r.ok());
  CHECK(has_limit(r->stats, "stage_costs"));
  // Label steps count (16 a stage cost): the stage costs alone are far below the limit.
  CHECK(r->stats.stage_costs < budget.max_stage_costs / 2);
  CHECK(r->stats.work.stage_costs <= budget.max_stage_costs + 2 * 1024 * 1024 / 16);  // one state's overshoot
}

TEST_CASE("no plan within the budget is not reported as a memory shortfall") {
  const Scenario s = distinct_groups(16);
  SearchBudget budget;
  budget.max_orders = 0;
  const auto r = search_plans(s, {}, budget);
  REQUIRE(r.ok());
  REQUIRE(r->plans.empty());
  REQUIRE(r->diagnosis);
  CHECK(r->diagnosis->message.find("within the search's work budget") != std::string::npos);
  CHECK(r->diagnosis->message.find("No plan fits in GPU memory") == std::string::npos);
  // The offload retry's note says the same: nothing was found without offload, not that
  // nothing fits.
  CHECK(r->stats.offload_retried);
  const std::string notes = search_result_to_json(s, *r)["notes"].dump();
  CHECK(notes.find("no plan was found without optimizer CPU offload before the search budget ran out") != std::string::npos);
  CHECK(notes.find("no plan fits without optimizer CPU offload") == std::string::npos);
}

TEST_CASE("hetero runs' bounds take at most half the stage-cost budget: the runs built are searched") {
  // Ten distinct groups: 1,024 group sets, a capacity table of 1.4 M label steps per call and
  // about 20 calls per run's bound. The bounds of every run were 30x this budget, and no run
  // was searched (no plan; at 16 groups the CPU backstop ended the search).
  Scenario s = distinct_groups(10, "hetero");
  s.search.baselines = false;
  SearchBudget budget;
  budget.max_stage_costs = 3'000'000;
  budget.max_seconds = 1e6;  // the counted work decides
  const auto r = search_plans(s, {}, budget);
  REQUIRE(r.ok());
  CHECK(has_limit(r->stats, "stage_costs"));
  CHECK_FALSE(has_limit(r->stats, "seconds"));
  CHECK(r->stats.work.stage_costs <= budget.max_stage_costs + budget.max_stage_costs / 10);
  CHECK_FALSE(r->plans.empty());
}

TEST_CASE("hetero label tables past their cell limit end the search, which says so and keeps its plans") {
  Scenario s = distinct_groups(4, "hetero");
  s.search.baselines = false;
  SearchBudget budget;
  budget.max_seconds = 1e6;
  const auto full = search_plans(s, {}, budget);
  REQUIRE(full.ok());
  CHECK_FALSE(has_limit(full->stats, "table_cells"));
  budget.max_table_cells = 2'000;  // a few dozen tables
  const auto r = search_plans(s, {}, budget);
  REQUIRE(r.ok());
  CHECK(has_limit(r->stats, "table_cells"));
  CHECK(r->stats.budget_reached);
  REQUIRE_FALSE(r->plans.empty());  // the runs' first plans come before any table
  CHECK(r->plans.front().metrics.iteration_time_s >= full->plans.front().metrics.iteration_time_s);
  const std::string note = budget_note(s, r->stats);
  CHECK(note.find("label-table cells") != std::string::npos);
}

TEST_CASE("hetero mode on 64 distinct groups: set indices past 2^63 are exact (the sanitizers' build checks the overflow)") {
  // 64 classes of one group: 2^64 group sets, whose mixed-radix indices a signed 64-bit
  // integer overflowed (undefined; the front test then read negative counts).
  Scenario s = distinct_groups(64, "hetero");
  s.search.baselines = false;
  SearchBudget budget;
  budget.max_stage_costs = 300'000;
  budget.max_seconds = 1e6;
  const auto r = search_plans(s, {}, budget);
  REQUIRE(r.ok());
  CHECK(has_limit(r->stats, "stage_costs"));
  CHECK_FALSE(r->plans.empty());
}
