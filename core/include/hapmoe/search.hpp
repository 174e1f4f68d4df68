// `hapmoe plan`: search over mesh shapes (TP, CP, EP, ETP, micro-batch, VPP, recompute, DP), the
// GPU groups that hold stages and their order, and the exact layer split (layer_split_dp.hpp).
// Returns the top-k distinct plans, the baselines, counters per pruning rule, and a diagnosis
// when nothing fits. No JSON here (result_io.hpp writes it) and no exceptions.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hapmoe/error.hpp"
#include "hapmoe/evaluate.hpp"

namespace hapmoe {

struct SearchControl {
  std::function<void(double fraction, long long evaluated)> progress;  // called as the search goes
  const std::atomic<bool>* cancel = nullptr;                            // checked in the loops
};

// Work limits that end any accepted search in bounded time and memory. Deterministic (counted
// work, not wall time), so native and wasm stop at the same point.
struct SearchBudget {
  long long max_entries = 2'000'000;      // (mesh shape, group set) pairs generated
  long long max_orders = 100'000;         // stage orders searched (+ 1 per 4 order bounds checked)
  long long max_stage_costs = 50'000'000;  // stage costs the layer-split DPs use (reused ones count too)
};

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
};

struct Diagnosis {
  std::string message;
  double shortfall_gib = 0;
  std::vector<std::string> suggestions;
};

struct Baseline {
  PlanEvaluation evaluation;
  double speedup = 0;  // baseline iteration time / best plan's
};

struct SearchResult {
  std::vector<PlanEvaluation> plans;  // best first
  std::optional<Baseline> megatron_default;
  std::optional<Baseline> uniform;
  std::optional<Baseline> upstream;  // "hetero" mode: the best "megatron" mode plan (speedup = gain)
  SearchStats stats;
  std::optional<Diagnosis> diagnosis;
};

// With search.optimizer_offload_fraction unset, searches without offload first and, only when no
// plan fits, again with the fractions of offload_fallback_scenario.
Expected<SearchResult> search_plans(const Scenario& s, const SearchControl& control = {},
                                    const SearchBudget& budget = {});

// Optimizer offload fractions tried when no plan fits without (half, then all of the optimizer
// state in host memory).
inline constexpr double kOffloadFallbackFractions[] = {0.5, 1.0};
// `s` with search.optimizer_offload_fraction = kOffloadFallbackFractions, or nullopt when the
// fraction was given or offload is not allowed (no distributed optimizer, fp8_param_gather).
std::optional<Scenario> offload_fallback_scenario(const Scenario& s);

// Whether offload could beat the plans found without it: none fits, or the best one
// recomputes (memory binds, so freeing optimizer memory may buy a faster plan).
bool offload_may_help(const SearchResult& r);

// The k best plans of both searches (a's first on ties), with b's baselines and diagnosis when a
// found nothing or b's best won.
SearchResult merge_results(SearchResult a, SearchResult b, size_t k);

// Stable identity of a plan, used for distinctness and tie-breaking.
std::string plan_key(const PlanSpec& p);

}  // namespace hapmoe
