// `hapmoe plan` in "hetero" mode (FlagScale's heterogeneous Megatron): a process mesh per node
// group (TP, EP, ETP, DP, PP per mesh; CP 1, as FlagScale requires), the order of the groups
// along the pipeline, the micro-batch size of mesh 0, and per stage the layer count and full
// recompute on or off. One run per (tokens per micro-batch, recompute set) is searched exactly by
// hetero_dp.hpp's DP over pipeline suffixes; runs are read in order of their lower bound, by
// rising levels above the least bound (each run's DP looks for plans below the level, a tight cap
// keeping its states few), after a first plan per run from its capacity table, until what the
// sink still wants is below the level searched or the SearchBudget is spent. It never runs the
// upstream search: the planner (planner.hpp) compares the two.
#pragma once

#include "hetero/hetero_space.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe {

Expected<SearchResult> hetero_search(const Scenario& s, const SearchControl& control = {},
                                     const SearchBudget& budget = {});

}  // namespace hapmoe
