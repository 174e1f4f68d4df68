// The optimizer-offload fallback, one policy for both engines (hapmoe/search.hpp).
#include <algorithm>
#include <iterator>

#include "hapmoe/search.hpp"
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

bool offload_may_help(const SearchResult& r) {
  if (r.plans.empty()) return true;
  for (const StagePlan& st : r.plans.front().plan.stages) {
    if (!(st.recompute == Recompute::kNone)) return true;
  }
  return false;
}

Expected<SearchResult> search_with_offload_fallback(const Scenario& s, const SearchControl& control,
                                                    const SearchBudget& budget, const SearchPass& pass) {
  const auto offload = offload_fallback_scenario(s);
  const double above = std::min(1e300, budget.prune_above);
  if (!offload) return pass(s, control, budget, above);
  constexpr double kFirstPassShare = 0.8;
  auto r = pass(s, scaled_control(control, 0, kFirstPassShare), budget, above);
  const bool spent = r.ok() && r->stats.budget_reached && !r->plans.empty();
  if (!r.ok() || r->stats.cancelled || spent || !offload_may_help(*r)) {
    if (r.ok() && control.progress && !r->stats.cancelled) control.progress(1.0, r->stats.evaluated);
    return r;
  }
  // Only offloaded plans that beat the k-th plan found without offload are wanted.
  const size_t k = static_cast<size_t>(std::max(1, s.search.top_k));
  const double kth = r->plans.size() < k ? above : r->plans.back().metrics.objective_value;
  SearchBudget left = remaining_budget(budget, r->stats.work);
  left.prune_above = kth;  // the engines' builds leave out what cannot beat it
  for (const auto& p : front_points(r->pareto)) left.front_seed.push_back(p);  // the fronts are merged
  auto retry = pass(*offload, scaled_control(control, kFirstPassShare, 1 - kFirstPassShare), left, kth);
  if (!retry.ok()) return r;
  const bool found_without = !r->plans.empty();
  SearchResult out = merge_results(std::move(r).value(), std::move(retry).value(), k);
  out.stats.offload_retried = !found_without;
  return out;
}

}  // namespace hapmoe
