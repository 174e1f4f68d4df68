// How the search shares a SearchBudget limit between the mesh shapes (search_budget.cpp; the
// budget's arithmetic is public in hapmoe/search.hpp).
#pragma once

#include <vector>

#include "hapmoe/search_types.hpp"

namespace hapmoe {

// `b` with its deadline_s set max_seconds from now, unless it has one.
SearchBudget with_deadline(const SearchBudget& b);

// Adds what `from` used of the budget, and the limits it reached, to *to.
void add_budget_use(const SearchStats& from, SearchStats* to);

// The largest cap such that sum over i of min(counts[i], cap) <= budget (water-filling): every
// count below it is served whole and the larger ones share the rest equally. 2^62 (no cap) when
// the counts add up to at most the budget.
long long fair_share_cap(std::vector<long long> counts, long long budget);

// How many of its counts[i] group sets each mesh shape may walk within `budget` sets in all:
// every one when they fit; else the water-filling cap when it leaves each shape at least
// kMinPartialWalk sets (the first sets of every shape); else (many shapes of few sets each,
// where a cap would leave out each shape's larger sets) whole walks for an evenly spread share
// of the shapes and none for the rest.
inline constexpr long long kMinPartialWalk = 256;
std::vector<long long> walk_allowance(const std::vector<long long>& counts, long long budget);

}  // namespace hapmoe
