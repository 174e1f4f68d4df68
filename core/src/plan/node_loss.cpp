// The N-1 re-plan (hapmoe/planner.hpp, plan_after_node_loss): for each group a plan uses, the
// best plan on the cluster with one node of that group gone, searched afresh as search_plans
// would on that cluster (same model, training, search and objective).
#include <chrono>

#include "hapmoe/planner.hpp"
#include "search/search_budget.hpp"

namespace hapmoe {

Scenario without_one_node(const Scenario& s, int group) {
  Scenario out = s;
  out.plan.reset();
  ClusterSpec& c = out.cluster;
  if (c.groups[group].nodes > 1) {
    --c.groups[group].nodes;
  } else {
    c.groups.erase(c.groups.begin() + group);
  }
  c.id = "custom";
  return out;
}

Expected<NodeLossResult> plan_after_node_loss(const Scenario& s, const PlanSpec& plan, const SearchControl& control,
                                              const SearchBudget& given) {
  const auto start = std::chrono::steady_clock::now();
  // One budget for the whole call (its work and its seconds), as for any planner call: a
  // cluster of many groups never runs a full search per group.
  const SearchBudget budget = with_deadline(given);
  SearchWork spent;
  auto selected = evaluate_plan(s, plan);
  if (!selected) return selected.error();
  NodeLossResult out{std::move(selected).value(), {}, 0};
  const std::vector<long long>& used = out.selected.metrics.gpus_used_per_group;
  std::vector<int> groups;
  for (size_t g = 0; g < used.size(); ++g) {
    if (used[g] > 0) groups.push_back(static_cast<int>(g));
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    const int g = groups[i];
    NodeLoss loss;
    loss.group = g;
    loss.nodes_left = s.cluster.groups[g].nodes - 1;
    if (s.cluster.groups.size() == 1 && loss.nodes_left == 0) {
      loss.message = "the cluster has no other node";
      out.losses.push_back(std::move(loss));
      continue;
    }
    loss.scenario = without_one_node(s, g);
    loss.scenario.search.baselines = false;
    SearchControl part;
    part.cancel = control.cancel;
    const double n = static_cast<double>(groups.size());
    if (control.progress) {
      part.progress = [&control, i, n](double f, long long evaluated) { control.progress((i + f) / n, evaluated); };
    }
    auto r = search_plans(loss.scenario, part, remaining_budget(budget, spent));
    if (!r) return r.error();
    spent += r->stats.work;
    loss.budget_reached = r->stats.budget_reached;
    if (r->stats.cancelled) {
      out.cancelled = true;
      break;
    }
    if (!r->plans.empty()) {
      loss.best = std::move(r->plans.front());
    } else {
      loss.message = loss.budget_reached ? "the call's search budget ran out before a plan was found"
                     : r->diagnosis       ? r->diagnosis->message
                                          : "no plan fits";
    }
    out.losses.push_back(std::move(loss));
  }
  out.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace hapmoe
