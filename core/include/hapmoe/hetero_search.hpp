// `hapmoe plan` in "hetero" mode (FlagScale's heterogeneous Megatron): a process mesh per node
// group (TP, EP, ETP, DP, PP per mesh; CP 1, as FlagScale requires), the order of the groups
// along the pipeline, the micro-batch size of mesh 0, and per stage the layer count and full
// recompute on or off, chosen exactly by hetero_split.hpp's DP. Entries (group order, mesh per
// group, micro-batch) pass check_hetero_plan_rules, are sorted by a lower bound valid for every
// split and recompute choice, and are split until the bound reaches the k-th best plan or the
// SearchBudget is spent. The result also holds the best upstream ("megatron" mode) plan and the
// gain over it.
#pragma once

#include "hapmoe/search.hpp"

namespace hapmoe {

// One node group's process mesh shape (cp = 1).
struct HeteroShape {
  int tp = 1, ep = 1, etp = 1, dp = 1, pp = 1;
};

// Every mesh shape that uses all of `group`'s GPUs and passes Megatron's shape rules and the
// group rules (TP inside the scale-up domain, node alignment, FP8), within search.tp/ep/etp.
std::vector<HeteroShape> hetero_group_shapes(const Scenario& s, int group);

// Stable identity of a hetero plan (stage meshes included).
std::string hetero_plan_key(const PlanSpec& p);

Expected<SearchResult> hetero_search(const Scenario& s, const SearchControl& control = {},
                                     const SearchBudget& budget = {});

}  // namespace hapmoe
