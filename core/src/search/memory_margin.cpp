// The memory margin: a plan that leaves less than search.memory_margin_fraction of a GPU's memory
// free is ranked after the plans that leave more. A prediction a few percent off (fragmentation,
// NCCL buffers, a kernel's workspace) turns such a plan into an out-of-memory failure, so the
// first recommendation is the fastest plan with room to spare; the tight ones stay listed,
// flagged, because they are still the fastest if the prediction holds.
#include <algorithm>

#include "hapmoe/search.hpp"
#include "search/within_margin.hpp"

namespace hapmoe {

void rank_by_memory_margin(const Scenario& s, SearchResult* r) {
  const double margin = s.search.memory_margin_fraction;
  long long above = 0;
  for (PlanEvaluation& ev : r->plans) {
    ev.metrics.within_memory_margin = within_margin(ev, margin);
    above += ev.metrics.within_memory_margin ? 0 : 1;
  }
  r->stats.above_memory_margin = above;
  if (above == 0) return;
  std::stable_partition(r->plans.begin(), r->plans.end(),
                        [](const PlanEvaluation& ev) { return ev.metrics.within_memory_margin; });
  rebase_baselines(r);
}

}  // namespace hapmoe
