// The optimizer-offload fallback, one policy for both engines (hapmoe/search.hpp).
#include <algorithm>
#include <iterator>

#include "hapmoe/search.hpp"
#include "search/within_margin.hpp"
#include "search/search_budget.hpp"

namespace hapmoe {

std::optional<Scenario> offload_fallback_scenario(const Scenario& s) {
  if (!s.search.optimizer_offload_fraction.empty() || !s.training.use_distributed_optimizer ||
      s.training.fp8_param_gather) {
    return std::nullopt;
  }
  Scenario o = s;
  o.search.optimizer_offload_fraction.assign(std::begin(kOffloadFallbackFractions), std::end(kOffloadFallbackFractions));
  return o;
}

namespace {
bool recomputes(const PlanEvaluation& ev) {
  for (const StagePlan& st : ev.plan.stages) {
    if (!(st.recompute == Recompute::kNone)) return true;
  }
  return false;
}
}  // namespace

bool offload_may_help(const SearchResult& r, double margin) {
  if (r.plans.empty() || recomputes(r.plans.front())) return true;
  // The plans within the memory margin (searched in the same pass) are ranked first: the same
  // test for the best of them, when none of the k best is within it. (Whenever the best within
  // it recomputes, a retry would prove its bounds on every offloaded entry: the upstream engine
  // on 512 GPUs of 8 NVIDIA types and the hetero engine on mixtral-8x7b-priced then reach the
  // work budget and find nothing better; Mixtral-S on 24-1, upstream, would find 18.22 s with
  // offload against 27.29 s without.)
  if (!(margin > 0)) return false;
  for (const PlanEvaluation& ev : r.plans) {
    if (within_margin(ev, margin)) return false;
  }
  return r.within_margin.empty() || recomputes(r.within_margin.front());
}

Expected<SearchResult> search_with_offload_fallback(const Scenario& s, const SearchControl& control,
                                                    const SearchBudget& budget, const SearchPass& pass) {
  const auto offload = offload_fallback_scenario(s);
  const double above = std::min(1e300, budget.prune_above);
  if (!offload) return pass(s, control, budget, above);
  constexpr double kFirstPassShare = 0.8;
  auto r = pass(s, scaled_control(control, 0, kFirstPassShare), budget, above);
  const bool spent = r.ok() && r->stats.budget_reached && !r->plans.empty();
  if (!r.ok() || r->stats.cancelled || spent || !offload_may_help(*r, s.search.memory_margin_fraction)) {
    if (r.ok() && control.progress && !r->stats.cancelled) control.progress(1.0, r->stats.evaluated);
    return r;
  }
  // Only offloaded plans that beat the k-th plan found without offload are wanted; when the retry
  // is for the plans within the memory margin (the best plan does not recompute), only those and
  // a plan faster than the best (the one above the margin the planner keeps).
  const size_t k = static_cast<size_t>(std::max(1, s.search.top_k));
  double kth = r->plans.size() < k ? above : r->plans.back().metrics.objective_value;
  if (!r->plans.empty() && !recomputes(r->plans.front())) kth = std::min(kth, r->plans.front().metrics.objective_value);
  SearchBudget left = remaining_budget(budget, r->stats.work);
  left.prune_above = kth;  // the engines' builds leave out what cannot beat it
  // Plans within the margin: only those better than the best found without offload (as the
  // planner's search within the margin: the first plan is exact, the others the fastest found).
  left.within_prune_above =
      r->within_margin.empty() ? budget.within_prune_above
                               : std::min(budget.within_prune_above, r->within_margin.front().metrics.objective_value);
  for (const auto& p : front_points(r->pareto)) left.front_seed.push_back(p);  // the fronts are merged
  auto retry = pass(*offload, scaled_control(control, kFirstPassShare, 1 - kFirstPassShare), left, kth);
  if (!retry.ok()) return r;
  const bool found_without = !r->plans.empty();
  const bool budget_without = r->stats.budget_reached;
  SearchResult out = merge_results(std::move(r).value(), std::move(retry).value(), k);
  out.stats.offload_retried = !found_without;
  out.stats.retried_after_budget = !found_without && budget_without;
  return out;
}

}  // namespace hapmoe
