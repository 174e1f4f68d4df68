// The N-1 re-plan (hapmoe/planner.hpp, plan_after_node_loss): for each group a plan uses, the
// best plan on the cluster with one node of that group gone, searched afresh as search_plans
// would on that cluster (same model, training, search and objective).
#include <chrono>

#include "hapmoe/planner.hpp"

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
                                              const SearchBudget& budget) {
  const auto start = std::chrono::steady_clock::now();
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
    auto r = search_plans(loss.scenario, part, budget);
    if (!r) return r.error();
    loss.budget_reached = r->stats.budget_reached;
    if (r->stats.cancelled) {
      out.cancelled = true;
      break;
    }
    if (!r->plans.empty()) {
      loss.best = std::move(r->plans.front());
    } else {
      loss.message = r->diagnosis ? r->diagnosis->message : "no plan fits";
    }
    out.losses.push_back(std::move(loss));
  }
  out.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace hapmoe
