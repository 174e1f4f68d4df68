#include "search/diagnosis.hpp"

#include <algorithm>
#include <sstream>

#include "hapmoe/cost_memory.hpp"

namespace hapmoe {

Diagnosis diagnose_no_plan(const Scenario& s, double shortfall_bytes, const SearchStats& stats) {
  Diagnosis d;
  d.shortfall_gib = std::max(0.0, shortfall_bytes / kGiB);
  if (stats.candidates == 0) {
    // Name the rule that cut the most candidates.
    std::string top;
    long long most = 0;
    for (const auto& [rule, n] : stats.pruned) {
      if (n > most) {
        most = n;
        top = rule;
      }
    }
    d.message = "No mesh shape passes the Megatron-LM rules for this model, cluster and batch size" +
                (top.empty() ? std::string(".") : " (most were cut by rule \"" + top + "\").");
    d.suggestions = {"relax the search constraints (tp, pp, ep, cp, micro_batch_size lists)",
                     "choose a global_batch_size divisible by more data-parallel sizes",
                     "check that num_experts is divisible by the allowed ep values"};
    return d;
  }
  std::ostringstream o;
  o.precision(3);
  o << std::fixed << "No plan fits in GPU memory; the closest one is " << d.shortfall_gib
    << " GiB over on its fullest stage.";
  d.message = o.str();
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

}  // namespace hapmoe
