#include "search/even_split_baseline.hpp"

#include <algorithm>

#include "search/candidate_cost.hpp"

namespace hapmoe {

EvenSplitBaseline even_split_baseline(const Scenario& s, const SearchBudget& budget) {
  EvenSplitBaseline out;
  double closest_gib = -1;
  std::vector<int> pps = s.search.pp;
  if (pps.empty()) {
    for (int pp = 1; pp <= std::min(s.model.num_layers, s.cluster.total_gpus()); ++pp)
      pps.push_back(pp);
  }
  for (int pp : pps) {
    if (pp > s.model.num_layers) continue;
    Scenario fixed = s;
    fixed.search.top_k = 1;
    fixed.search.baselines = false;
    fixed.search.pp = {pp};
    fixed.search.layer_split = even_split(s.model.num_layers, pp);
    const auto r = upstream_search(fixed, {}, budget);
    if (!r) continue;  // only a malformed request fails, and this one is the scenario's own
    out.budget_reached = out.budget_reached || r->stats.budget_reached;
    if (r->plans.empty()) {
      const auto& d = r->diagnosis;
      if (d && d->shortfall_gib > 0 && (closest_gib < 0 || d->shortfall_gib < closest_gib)) {
        closest_gib = d->shortfall_gib;
        out.closest_no_plan = d->message;
      } else if (d && out.closest_no_plan.empty()) {
        out.closest_no_plan = d->message;
      }
      continue;
    }
    const PlanEvaluation& p = r->plans.front();
    if (!out.plan || p.metrics.iteration_time_s < out.plan->metrics.iteration_time_s) out.plan = p;
  }
  return out;
}

}  // namespace hapmoe
