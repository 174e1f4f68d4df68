// How the search shares a SearchBudget limit between the mesh shapes (search_budget.cpp; the
// budget's arithmetic is public in hapmoe/search.hpp).
#pragma once

#include <vector>

#include "hapmoe/search_types.hpp"

namespace hapmoe {

// `b` with its deadline_s set max_seconds from now, unless it has one.
SearchBudget with_deadline(const SearchBudget& b);

// `control` with its progress mapped from [0, 1] onto [from, from + share] (its cancel flag
// unchanged): one part of a search made of several. Refers to `control`, which must outlive it.
SearchControl scaled_control(const SearchControl& control, double from, double share);
// `control` whose progress never goes back, whatever rounding the parts' shares leave; the
// highest fraction so far is kept in *last. Refers to `control` and `last`.
SearchControl monotone_control(const SearchControl& control, double* last);

// Adds what `from` used of the budget, and the limits it reached, to *to.
void add_budget_use(const SearchStats& from, SearchStats* to);

// The largest cap such that sum over i of min(counts[i], cap) <= budget (water-filling): every
// count below it is served whole and the larger ones share the rest equally. 2^62 (no cap) when
// the counts add up to at most the budget.
long long fair_share_cap(const std::vector<long long>& counts, long long budget);

// How many of its counts[i] group sets each mesh shape may walk within `budget` sets in all:
// every one when they fit; else the water-filling cap when it leaves each shape at least
// kMinPartialWalk sets (the first sets of every shape); else (many shapes of few sets each,
// where a cap would leave out each shape's larger sets) whole walks for an evenly spread share
// of the shapes and none for the rest.
inline constexpr long long kMinPartialWalk = 256;
std::vector<long long> walk_allowance(const std::vector<long long>& counts, long long budget);

}  // namespace hapmoe
