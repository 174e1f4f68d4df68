// What a search is given and returns (hapmoe/search.hpp, the planner and the hetero engine use
// them): control, the work budget, counters, diagnosis, baselines and the result. The budget's
// functions are in search/search_budget.cpp.
#pragma once

#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hapmoe/evaluate.hpp"

namespace hapmoe {

struct SearchControl {
  std::function<void(double fraction, long long evaluated)> progress;  // called as the search goes
  const std::atomic<bool>* cancel = nullptr;                            // checked in the loops
};

// Work limits that end any accepted search in bounded time and memory. They hold for one
// planner call (search_plans, planner.hpp) as a whole: the offload retry, hetero mode's search per
// offload fraction and the other runtime's search draw on what the earlier searches left. Counted work, not wall time,
// so native and wasm stop at the same point; max_seconds is a backstop for work the counts
// miss, on the process's CPU clock (search_clock_s), so that a loaded machine does not reach it
// first (a search it ends depends on the machine's speed, and its stats say so).
struct SearchBudget {
  long long max_combinations = 50'000'000;  // combinations of the search lists looked at (rules' cuts too)
  long long max_shapes = 2'000'000;         // mesh shapes kept (those that pass the shape rules)
  long long max_group_sets = 10'000'000;    // group sets walked over all shapes (cut ones too)
  long long max_entries = 2'000'000;        // (mesh shape, group set) pairs generated
  long long max_orders = 100'000;           // stage orders searched (+ 1 per 4 order bounds checked)
  long long max_stage_costs = 30'000'000;   // stage costs the layer-split DPs use (reused ones and label work too)
  // Hetero: the label-table cells one search holds at once (24 bytes each, its labels beside; a
  // peak, not used up: each search may reach it). 16 distinct groups of Mixtral-L made 39 M.
  long long max_table_cells = 8'000'000;
  double max_seconds = 20;                  // search_clock_s, from the start of the call
  // search_clock_s() when max_seconds run out (set by the planner and the engines, unless set;
  // infinity = never).
  double deadline_s = std::numeric_limits<double>::infinity();
  // Only plans below this objective value are wanted (metrics.objective_value: seconds per
  // iteration for search.objective "time"; the offload retry sets it to the k-th plan found
  // without offload).
  double prune_above = std::numeric_limits<double>::infinity();
  // Pareto points (iteration time, USD per hour) found by an earlier search of the same call whose
  // front the new one's is merged with: a plan they weakly dominate is not wanted for the front
  // (the offload retry, the next offload fraction and "auto" mode's hetero search pass them on).
  struct FrontPoint {
    double time_s, rate;
  };
  std::vector<FrontPoint> front_seed;
  // The engines' plans within the memory margin (SearchResult::within_margin) are wanted only
  // below this objective value (the offload retry sets it to the best the first pass found within
  // the margin; "auto" mode's hetero search to upstream's k-th plan within it).
  double within_prune_above = std::numeric_limits<double>::infinity();
};

// The (time, rate) points of a result's Pareto front, for SearchBudget::front_seed.
std::vector<SearchBudget::FrontPoint> front_points(const std::vector<PlanEvaluation>& front);

// What a search used of each SearchBudget limit (summed over the searches of one call).
struct SearchWork {
  long long combinations = 0, shapes = 0, group_sets = 0, entries = 0, orders = 0, stage_costs = 0;
};

SearchWork& operator+=(SearchWork& a, const SearchWork& b);

// The budget left after `used`, with the same deadline.
SearchBudget remaining_budget(const SearchBudget& b, const SearchWork& used);
// The clock of SearchBudget::deadline_s: the process's CPU time in seconds (std::clock; under
// Emscripten the time since the module started).
double search_clock_s();
// True once b.deadline_s has passed (reads the clock).
bool past_deadline(const SearchBudget& b);

struct SearchStats {
  long long candidates = 0;  // (mesh shape, group set) pairs that pass the rules
  long long evaluated = 0;   // (mesh, stage order) combinations whose layer split was searched
  long long stage_costs = 0;
  std::map<std::string, long long> pruned;  // rule name -> count
  double elapsed_ms = 0;
  bool cancelled = false;
  bool budget_reached = false;  // the result is the best found within SearchBudget
  // nothing fit without optimizer offload: searched again with it (it is also tried, keeping
  // the better plans, when the best plan without it recomputes)
  bool offload_retried = false;
  // ... but the search without it ended at its budget before it found a plan: it is not known
  // that nothing fits without offload
  bool retried_after_budget = false;
  long long above_memory_margin = 0;  // plans returned that exceed search.memory_margin_fraction
  SearchWork work;
  // With budget_reached: the limits that cut the search short, by SearchWork name
  // ("combinations", "shapes", "group_sets", "entries", "orders", "stage_costs"), hetero's
  // "table_cells" (label-table cells held at once) or "seconds",
  // in the order reached; and what they left out.
  std::vector<std::string> limits_reached;
  long long shapes_cut_short = 0;    // mesh shapes whose group sets were not all walked (or none)
  long long entries_unsearched = 0;  // entries whose bound was below the k-th plan, never searched
  long long entries_dropped = 0;     // entries past max_entries (those of the highest bounds) dropped
  // Records that `limit` cut the search short (budget_reached, limits_reached once each).
  void reached(const char* limit);
};

// The plan closest to fitting when none fits (search/closest_plan.hpp): its evaluation (each
// stage's memory terms and capacity) and by how much its fullest stage is over.
struct ClosestPlan {
  PlanEvaluation evaluation;
  int fullest_stage = 0;      // the stage with the largest peak - capacity
  double shortfall_gib = 0;   // that stage's peak - capacity (> 0)
};

struct Diagnosis {
  std::string message;
  double shortfall_gib = 0;
  std::vector<std::string> suggestions;
  std::optional<ClosestPlan> closest;  // over memory: the plan closest to fitting
};

struct Baseline {
  PlanEvaluation evaluation;
  double speedup = 0;  // baseline iteration time / best plan's
};

struct SearchResult {
  std::vector<PlanEvaluation> plans;  // best first
  // Either engine, with search.memory_margin_fraction > 0: the k best plans within the margin,
  // searched with the others in one pass, best first; the planner flags them
  // (metrics.within_memory_margin) and ranks them first. Empty from the planner.
  std::vector<PlanEvaluation> within_margin;
  std::optional<Baseline> megatron_default;
  std::optional<Baseline> uniform;
  // "hetero" mode: the best upstream plan; "auto" mode: the same when a FlagScale plan ranks first
  // (speedup = the gain of the first plan over it)
  std::optional<Baseline> upstream;
  SearchStats stats;
  std::optional<Diagnosis> diagnosis;
  std::vector<std::string> notes;  // the planner's, after those the stats imply
  // With prices: the plans no other plan beats on both iteration time and cost per token, among
  // those the objective admits, fastest first (search/plan_sink.hpp).
  std::vector<PlanEvaluation> pareto;
};

}  // namespace hapmoe
