// `hapmoe plan` in "hetero" mode (FlagScale's heterogeneous Megatron): a process mesh per node
// group (TP, EP, ETP, DP, PP per mesh; CP 1, as FlagScale requires), the order of the groups
// along the pipeline, the micro-batch size of mesh 0, and per stage the layer count and full
// recompute on or off, chosen exactly by hetero_split.hpp's DP. Entries (group order, mesh per
// group, micro-batch) pass check_hetero_plan_rules, are sorted by a lower bound valid for every
// split and recompute choice, and are split until the bound reaches the k-th best plan or the
// SearchBudget is spent. It never runs the upstream search: the planner (planner.hpp) compares
// the two.
#pragma once

#include "hetero/hetero_space.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe {



Expected<SearchResult> hetero_search(const Scenario& s, const SearchControl& control = {},
                                     const SearchBudget& budget = {});

}  // namespace hapmoe
