// What to tell the user when no plan is returned: which limit cut every candidate and what to
// change.
#pragma once

#include "hapmoe/search_types.hpp"

namespace hapmoe {

// shortfall_bytes: the smallest memory overflow seen (< 0 = none seen).
Diagnosis diagnose_no_plan(const Scenario& s, double shortfall_bytes, const SearchStats& stats);

}  // namespace hapmoe
