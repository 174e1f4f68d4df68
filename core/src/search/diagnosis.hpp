// What to tell the user when no plan is returned: which limit cut every candidate and what to
// change.
#pragma once

#include "hapmoe/search_types.hpp"

namespace hapmoe {

// shortfall_bytes: the smallest memory overflow seen (< 0 = none seen).
Diagnosis diagnose_no_plan(const Scenario& s, double shortfall_bytes, const SearchStats& stats);

// Puts the closest plan (search/closest_plan.hpp) in d and says in d's message where it is over.
void add_closest_plan(Diagnosis* d, ClosestPlan closest);

}  // namespace hapmoe
