// The memory margin's test of one plan (search.memory_margin_fraction): what the planner ranks by
// (hapmoe/search.hpp's rank_by_memory_margin) and what the hetero engine's sink keeps apart.
#pragma once

#include "hapmoe/evaluate.hpp"

namespace hapmoe {

// Whether every stage of the plan leaves at least `margin` of its GPU memory free.
inline bool within_margin(const PlanEvaluation& ev, double margin) {
  for (const StageCost& c : ev.stages) {
    if (!c.within_margin(margin)) return false;
  }
  return true;
}

}  // namespace hapmoe
