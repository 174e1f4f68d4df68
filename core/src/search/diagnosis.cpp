#include "search/diagnosis.hpp"

#include <algorithm>
#include <sstream>

#include "hapmoe/cost_memory.hpp"

namespace hapmoe {

namespace {

// "0.788", "12.500"; below 0.001 three significant digits ("0.00012": a shortfall is never "0.000").
std::string gib_text(double gib) {
  std::ostringstream o;
  o.precision(3);
  if (gib >= 0.001) o << std::fixed;
  o << gib;
  return o.str();
}

// The rule that cut the most candidates, or "".
std::string top_rule(const SearchStats& stats) {
  std::string top;
  long long most = 0;
  for (const auto& [rule, n] : stats.pruned) {
    if (n > most) {
      most = n;
      top = rule;
    }
  }
  return top;
}

}  // namespace

Diagnosis diagnose_no_plan(const Scenario& s, double shortfall_bytes, const SearchStats& stats) {
  Diagnosis d;
  d.shortfall_gib = std::max(0.0, shortfall_bytes / kGiB);
  if (stats.budget_reached) {
    // Not a finding about memory: the search did not get to look at everything.
    d.message = "No plan found within the search's work budget: it stopped before it could tell whether a plan fits"
                " (stats.budget says what it left out)" +
                (shortfall_bytes > 0 ? "; the closest candidate it costed is " + gib_text(d.shortfall_gib) +
                                           " GiB over on its fullest stage."
                                     : std::string("."));
    d.suggestions = {"narrow the search lists (search.micro_batch_size, search.optimizer_offload_fraction, "
                     "search.ep, ...) to the values worth trying",
                     "list fewer distinct GPU groups (identical groups cost nothing extra)",
                     "fix search.tp, search.pp or search.ep when they are known"};
    return d;
  }
  if (stats.candidates == 0) {
    // Name the rule that cut the most candidates.
    const std::string top = top_rule(stats);
    d.message = "No mesh shape passes the Megatron-LM rules for this model, cluster and batch size" +
                (top.empty() ? std::string(".") : " (most were cut by rule \"" + top + "\").");
    d.suggestions = {"relax the search constraints (tp, pp, ep, cp, micro_batch_size lists)",
                     "choose a global_batch_size divisible by more data-parallel sizes",
                     "check that num_experts is divisible by the allowed ep values"};
    return d;
  }
  if (!(shortfall_bytes > 0)) {
    // Nothing was over memory: the candidates failed otherwise (e.g. no finite time).
    const std::string top = top_rule(stats);
    d.message = "No plan passed the search's checks although none was over memory" +
                (top.empty() ? std::string(".") : " (most candidates were cut by \"" + top + "\").");
    d.suggestions = {"check the scenario's profile points and GPU figures for values far from the rest"};
    return d;
  }
  d.message = "No plan fits in GPU memory; the closest one is " + gib_text(d.shortfall_gib) + " GiB over on its fullest stage.";
  const auto& rc = s.search.recompute;
  if (!rc.empty() && std::find(rc.begin(), rc.end(), Recompute::kFull) == rc.end()) {
    d.suggestions.push_back("allow recompute \"full\"");
  }
  if (!s.search.micro_batch_size.empty() &&
      *std::min_element(s.search.micro_batch_size.begin(), s.search.micro_batch_size.end()) > 1) {
    d.suggestions.push_back("allow micro_batch_size 1");
  }
  if (!s.search.tp.empty() || !s.search.ep.empty() || !s.search.pp.empty()) {
    d.suggestions.push_back("allow higher tp, ep or pp (shards weights and activations further)");
  }
  d.suggestions.push_back("add GPUs, or use GPUs with more memory");
  if (!s.training.use_distributed_optimizer) {
    d.suggestions.push_back("turn on use_distributed_optimizer (it also allows optimizer CPU offload)");
  } else {
    const auto& off = s.search.optimizer_offload_fraction;
    if (!off.empty() && *std::max_element(off.begin(), off.end()) < 1) {
      d.suggestions.push_back("allow optimizer_offload_fraction up to 1 (optimizer state in host memory)");
    }
  }
  if (s.model.mtp_num_layers > 0) d.suggestions.push_back("fewer MTP layers");
  return d;
}

void add_closest_plan(Diagnosis* d, ClosestPlan closest) {
  const PlanEvaluation& ev = closest.evaluation;
  const int i = closest.fullest_stage;
  const StageCost& st = ev.stages[i];
  const PlanSpec& p = ev.plan;
  std::ostringstream o;
  o << "No plan fits in GPU memory. The closest plan (TP " << p.tp << ", PP " << p.pp << ", DP " << p.dp << ", EP "
    << p.ep << ") needs " << gib_text(st.peak_bytes() / kGiB) << " GiB per GPU on stage " << i << " ("
    << p.stages[i].gpu << ", " << gib_text(st.capacity_bytes / kGiB) << " GiB): " << gib_text(closest.shortfall_gib)
    << " GiB over";
  if (d->shortfall_gib > 0 && d->shortfall_gib < closest.shortfall_gib) {
    o << " (the search's memory bound: no candidate is less than " << gib_text(d->shortfall_gib) << " GiB short)";
  }
  o << ".";
  d->message = o.str();
  d->closest = std::move(closest);
}

}  // namespace hapmoe
