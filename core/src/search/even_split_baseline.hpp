// The non-uniform split disabled (the ablation of the HAPMoE paper's Table 3): the best plan
// whose layer split is even (even_split: num_layers / pp per stage, the first num_layers % pp
// stages one more), everything else searched as our search does -- mesh, the GPU groups used
// and their order. Unlike the "uniform" baseline of a plan result (baselines.hpp), the order of
// the groups is searched, so only the split differs from our search space.
#pragma once

#include <optional>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe {

inline constexpr const char* kEvenSplitRule =
    "non-uniform split disabled (Table 3's ablation): even layer split for every pp; mesh, GPU "
    "groups used "
    "and their order searched";

struct EvenSplitBaseline {
  std::optional<PlanEvaluation> plan;
  bool budget_reached = false;  // one of the searches stopped at its work budget
  std::string closest_no_plan;  // without a plan: the diagnosis with the smallest memory shortfall
};

// One search per pipeline size (the scenario's search.pp, else 1 .. min(layers, GPUs)) with the
// split fixed to even_split; the best of them. Each search has `budget`.
EvenSplitBaseline even_split_baseline(const Scenario& s, const SearchBudget& budget = {});

}  // namespace hapmoe
