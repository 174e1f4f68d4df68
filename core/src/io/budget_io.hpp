// How a search that its work budget cut short says so: stats.budget (the limits reached, the
// work used, what was left out) and one note for people, naming the longest search lists.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "hapmoe/search.hpp"

namespace hapmoe {

// {"limits_reached": [...], "used": {"combinations", "shapes", "group_sets", "entries", "orders",
//  "stage_costs"},
//  "shapes_cut_short": n, "entries_dropped": n, "entries_unsearched": n}
nlohmann::json budget_to_json(const SearchStats& st);

// "search budget reached (group sets): ... not proven optimal; what was left out; what to narrow".
std::string budget_note(const Scenario& s, const SearchStats& st);

}  // namespace hapmoe
