#include "search/diagnosis.hpp"

#include <algorithm>
#include <sstream>

#include "evaluate/rules.hpp"
#include "hapmoe/cost_memory.hpp"
#include "search/stack_choices.hpp"

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

// The rule to name when no mesh shape passes: the one the simplest mesh the scenario allows
// (smallest listed sizes, dp = ep x etp so the expert grid holds, the first software stack)
// breaks, when the search counted it too: such a rule (a training flag's, e.g. full-iteration
// CUDA graphs with a dropless MoE) cuts every mesh that passes the others, while a grid rule
// such as expert_grid can cut more of the search's own combinations without being the
// obstacle (*simplest = true). Else the rule that cut the most.
std::string blocking_rule(const Scenario& s, const SearchStats& stats, bool* simplest) {
  *simplest = false;
  auto least = [](const std::vector<int>& list) {
    return list.empty() ? 1 : *std::min_element(list.begin(), list.end());
  };
  const SearchSpec& sp = s.search;
  Mesh m;
  m.tp = least(sp.tp), m.cp = least(sp.cp), m.ep = least(sp.ep), m.etp = least(sp.etp);
  m.dp = m.ep * m.etp;
  m.micro_batch_size = least(sp.micro_batch_size);
  m.sequence_parallel = m.tp > 1;
  if (!sp.recompute.empty()) m.recompute = sp.recompute.front();
  if (!sp.optimizer_offload_fraction.empty()) {
    m.optimizer_offload_fraction =
        *std::min_element(sp.optimizer_offload_fraction.begin(), sp.optimizer_offload_fraction.end());
  }
  const std::vector<Dispatch> dispatches = dispatch_choices(s);
  if (!dispatches.empty()) {
    m.dispatch = dispatches.front();
    const std::vector<CudaGraphs> graphs = graph_choices(s, m.dispatch);
    if (!graphs.empty()) m.cuda_graphs = graphs.front();
  }
  if (const RuleResult v = check_shape_rules(s, m)) {
    const auto counted = stats.pruned.find(std::string(v->rule));
    if (counted != stats.pruned.end() && counted->second > 0) {
      *simplest = true;
      return counted->first;
    }
  }
  return top_rule(stats);
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
    bool simplest = false;
    const std::string top = blocking_rule(s, stats, &simplest);
    d.message = "No mesh shape passes the Megatron-LM rules for this model, cluster and batch size" +
                (top.empty()  ? std::string(".")
                 : simplest ? " (rule \"" + top + "\" cuts even the simplest mesh the search lists allow)."
                            : " (most were cut by rule \"" + top + "\").");
    d.suggestions = {"relax the search constraints (tp, pp, ep, cp, micro_batch_size lists)",
                     "choose a global_batch_size divisible by more data-parallel sizes",
                     "check that num_experts is divisible by the allowed ep values"};
    return d;
  }
  // The memory prunes (the layer-split DPs' stage_memory, the searches' memory bounds) cut
  // candidates for memory even when no overflow was measured: a bound cut them before costing.
  bool memory_cut = false;
  for (const char* counter : {"stage_memory", "stage_memory_bound", "memory_bound"}) {
    const auto n = stats.pruned.find(counter);
    memory_cut = memory_cut || (n != stats.pruned.end() && n->second > 0);
  }
  if (!(shortfall_bytes > 0) && !memory_cut) {
    // Nothing was over memory: the candidates failed otherwise (e.g. no finite time).
    const std::string top = top_rule(stats);
    d.message = "No plan passed the search's checks although none was over memory" +
                (top.empty() ? std::string(".") : " (most candidates were cut by \"" + top + "\").");
    d.suggestions = {"check the scenario's profile points and GPU figures for values far from the rest"};
    return d;
  }
  d.message = shortfall_bytes > 0
                  // At least: a candidate cut by a memory bound (weights and optimizer state, no
                  // activations) reports the bound's overflow, less than what it really lacks.
                  ? "No plan fits in GPU memory; the closest one is at least " + gib_text(d.shortfall_gib) +
                        " GiB over on its fullest stage."
                  : std::string("No plan fits in GPU memory: the search's memory bounds cut every candidate.");
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
