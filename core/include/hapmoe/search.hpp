// The upstream engine of `hapmoe plan` (plans upstream Megatron-LM runs; the planner,
// planner.hpp, runs it and the hetero engine): search over mesh shapes (TP, CP, EP, ETP, micro-batch, VPP, recompute, DP), the
// GPU groups that hold stages and their order, and the exact layer split (layer_split_dp.hpp).
// Returns the top-k distinct plans, the baselines, counters per pruning rule, and a diagnosis
// when nothing fits. No JSON here (result_io.hpp writes it) and no exceptions.
#pragma once

#include <atomic>
#include <limits>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hapmoe/error.hpp"
#include "hapmoe/evaluate.hpp"
#include "hapmoe/search_types.hpp"

namespace hapmoe {

// Ranks the plans whose stages all stay within search.memory_margin_fraction of their GPU memory
// first (each part ordered by time as before), flags the others (metrics.within_memory_margin),
// counts them in stats.above_memory_margin and re-bases the baselines' speedups on the new best.
// The planner (hapmoe/planner.hpp) applies it to every mode's result.
void rank_by_memory_margin(const Scenario& s, SearchResult* r);

// The best upstream Megatron-LM plans (one mesh for every stage, GPUs of one vendor), whatever
// search.mode says, ordered by time alone. With search.optimizer_offload_fraction unset, searches
// without offload first and, when no plan fits or the best one recomputes, again with the
// fractions of offload_fallback_scenario.
Expected<SearchResult> upstream_search(const Scenario& s, const SearchControl& control = {},
                                       const SearchBudget& budget = {});

// Optimizer offload fractions tried when no plan fits without (half, then all of the optimizer
// state in host memory).
inline constexpr double kOffloadFallbackFractions[] = {0.5, 1.0};
// `s` with search.optimizer_offload_fraction = kOffloadFallbackFractions, or nullopt when the
// fraction was given or offload is not allowed (no distributed optimizer, fp8_param_gather).
std::optional<Scenario> offload_fallback_scenario(const Scenario& s);

// Whether offload could beat the plans found without it: none fits, or the best one
// recomputes (memory binds, so freeing optimizer memory may buy a faster plan); with a memory
// margin and none of r.plans within it, the same for r.within_margin (none, or its best
// recomputes).
bool offload_may_help(const SearchResult& r, double margin = 0);

// The k best plans of both searches by objective value (a's first on ties), their fronts merged, with b's baselines and diagnosis when a
// found nothing or b's best won.
SearchResult merge_results(SearchResult a, SearchResult b, size_t k);

// One pass of an engine: the k best plans of `s` faster than prune_above, within `budget`.
using SearchPass = std::function<Expected<SearchResult>(const Scenario& s, const SearchControl& control,
                                                        const SearchBudget& budget, double prune_above)>;

// The optimizer-offload fallback of both engines (one policy): a pass on `s`; then, with
// search.optimizer_offload_fraction unset (offload_fallback_scenario), a second pass with the
// fallback fractions on what the first left of the budget, for plans faster than the k-th found,
// unless the first was cancelled, offload cannot help (offload_may_help), or it spent its budget
// and found plans (a retry would double the largest searches; its notes say the result is the
// best so far). The k best of both; stats.offload_retried when only the retry found plans.
// Progress: the first pass to 0.8, the retry the rest. The pass fills SearchResult::within_margin
// (both engines do), which offload_may_help reads.
Expected<SearchResult> search_with_offload_fallback(const Scenario& s, const SearchControl& control,
                                                    const SearchBudget& budget, const SearchPass& pass);

// The non-dominated plans of two Pareto fronts (SearchResult::pareto), fastest first.
std::vector<PlanEvaluation> merge_fronts(std::vector<PlanEvaluation> a, std::vector<PlanEvaluation> b);

// A baseline plan with its speedup over a best plan of best_s seconds.
Baseline baseline_against(const PlanEvaluation& ev, double best_s);
// r's baselines (Megatron default, even split, upstream) rebased onto its first plan (none: kept).
void rebase_baselines(SearchResult* r);

}  // namespace hapmoe
