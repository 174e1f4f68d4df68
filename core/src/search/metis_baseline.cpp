#include "search/metis_baseline.hpp"

#include "search/baselines.hpp"

namespace hapmoe {

namespace {

// The scenario's search, best plan only and without the built-in baselines.
Scenario single_plan_search(const Scenario& s) {
  Scenario out = s;
  out.search.top_k = 1;
  out.search.baselines = false;
  return out;
}

std::string no_plan_text(const Expected<SearchResult>& r) {
  if (!r) return r.error().message;
  return r->diagnosis ? r->diagnosis->message : "no plan";
}

}  // namespace

MetisStyleBaseline metis_style_baseline(const Scenario& s, const SearchBudget& budget) {
  MetisStyleBaseline out;
  std::string tried;
  for (int g : gpu_types_by_count(s.cluster)) {
    Scenario homogeneous = single_plan_search(s);
    homogeneous.cluster = homogeneous_cluster_like(s.cluster, g);
    const auto h = upstream_search(homogeneous, {}, budget);
    if (h) out.budget_reached = out.budget_reached || h->stats.budget_reached;
    if (h && !h->plans.empty()) {
      out.ep = h->plans.front().plan.ep;
      out.etp = h->plans.front().plan.etp;
      out.homogeneous_group = g;
      break;
    }
    tried += (tried.empty() ? "" : "; ") + s.cluster.groups[g].gpu.name + ": " + no_plan_text(h);
  }
  if (!out.ep) {
    out.no_plan_reason = "no homogeneous cluster of " + std::to_string(s.cluster.total_gpus()) +
                         " GPUs of one type has a plan to take EP/ETP from (" + tried + ")";
    return out;
  }
  Scenario fixed = single_plan_search(s);
  fixed.search.ep = {*out.ep};
  fixed.search.etp = {*out.etp};
  const auto r = upstream_search(fixed, {}, budget);
  if (r) out.budget_reached = out.budget_reached || r->stats.budget_reached;
  if (!r || r->plans.empty()) {
    out.no_plan_reason = "no plan with ep " + std::to_string(*out.ep) + ", etp " +
                         std::to_string(*out.etp) + ": " + no_plan_text(r);
    return out;
  }
  out.plan = r->plans.front();
  return out;
}

}  // namespace hapmoe
