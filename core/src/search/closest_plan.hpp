// When nothing fits: the closest plan that does not, with its memory per stage, so a user sees
// which term is over and by how much. A memory-only walk over the upstream candidate space (no
// time costs, no layer-split DP): the mesh shapes and group sets whose static memory need is the
// least over their room (the search's own bound), each with the layer split that keeps its
// fullest stage the least over, costed by the evaluator.
#pragma once

#include <optional>

#include "hapmoe/search_types.hpp"

namespace hapmoe {

// At most this many (mesh shape, group set) pairs are walked, and this many of them costed.
inline constexpr long long kClosestPlanMaxSets = 200'000;
inline constexpr int kClosestPlanCosted = 12;

// The upstream plan of s whose fullest stage is the least over its GPU memory, or nullopt when
// no candidate passes the rules (or the walk finds none to cost).
std::optional<ClosestPlan> closest_infeasible_plan(const Scenario& s);

}  // namespace hapmoe
