// Operations on search results both engines and the planner share: merging two results'
// plans and rebasing the baselines' speedups onto a new first plan.
#include <algorithm>
#include <utility>

#include "hapmoe/search.hpp"
#include "search/plan_sink.hpp"
#include "search/search_budget.hpp"

namespace hapmoe {

SearchResult merge_results(SearchResult a, SearchResult b, size_t k) {
  const bool b_wins = a.plans.empty() || (!b.plans.empty() && b.plans.front().metrics.objective_value <
                                                                  a.plans.front().metrics.objective_value);
  SearchResult out = b_wins ? std::move(b) : std::move(a);
  SearchResult& other = b_wins ? a : b;
  for (auto [mine, theirs] : {std::pair{&out.plans, &other.plans}, std::pair{&out.within_margin, &other.within_margin}}) {
    for (auto& p : *theirs) mine->push_back(std::move(p));
    std::stable_sort(mine->begin(), mine->end(), [](const PlanEvaluation& x, const PlanEvaluation& y) {
      return x.metrics.objective_value < y.metrics.objective_value;
    });
    if (mine->size() > k) mine->resize(k);
  }
  out.pareto = merge_fronts(std::move(out.pareto), std::move(other.pareto));
  out.stats.candidates += other.stats.candidates;
  out.stats.evaluated += other.stats.evaluated;
  out.stats.stage_costs += other.stats.stage_costs;
  out.stats.elapsed_ms += other.stats.elapsed_ms;
  add_budget_use(other.stats, &out.stats);
  if (!out.plans.empty() && !other.plans.empty()) out.diagnosis.reset();
  return out;
}

std::vector<PlanEvaluation> merge_fronts(std::vector<PlanEvaluation> a, std::vector<PlanEvaluation> b) {
  ParetoFront front;  // the engines' own front: a's plans first, so a's is kept of two equal points
  for (std::vector<PlanEvaluation>* v : {&a, &b}) {
    for (PlanEvaluation& ev : *v) {
      const double t = ev.metrics.iteration_time_s, rate = ev.metrics.cost_per_hour;
      front.offer(t, rate, {}, std::move(ev));
    }
  }
  return front.take();
}

Baseline baseline_against(const PlanEvaluation& ev, double best_s) {
  return Baseline{ev, ev.metrics.iteration_time_s / best_s};
}

void rebase_baselines(SearchResult* r) {
  if (r->plans.empty()) return;
  const double best_s = r->plans.front().metrics.iteration_time_s;
  if (!(best_s > 0)) return;
  for (std::optional<Baseline>* b : {&r->megatron_default, &r->uniform, &r->upstream}) {
    if (*b) **b = baseline_against((*b)->evaluation, best_s);
  }
}

}  // namespace hapmoe
