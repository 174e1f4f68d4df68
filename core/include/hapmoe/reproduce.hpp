// `hapmoe reproduce`: the paper's evaluation (Mixtral-S and Mixtral-L on its Table 1 clusters)
// run on our cost model and search. Per case, our best plan and, per comparison column, another
// plan (a baseline) with the throughput ratio between the two, beside the paper's figure when it
// has one; geometric means over the heterogeneous clusters (Table 2's scope). Where ours differs
// from the paper by more than kPaperGapFraction, a reason computed from the two plans is given.
// No JSON here (reproduce_io.hpp builds the cases from presets and writes the result).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/reproduce_types.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe {

// Megatron-default, Metis-style and best uniform split, with the paper's figures for each.
std::vector<ComparisonColumn> standard_columns();

// Runs every case and column. progress(done, total) after each case.
ReproduceResult reproduce(const std::vector<ReproduceCase>& cases,
                          const std::vector<ComparisonColumn>& columns,
                          const std::function<void(int done, int total)>& progress = nullptr,
                          const SearchBudget& budget = {});

// A row's ratio for one column, or none when either plan is missing.
std::optional<double> throughput_ratio(const PlanEvaluation& ours, const PlanEvaluation& other,
                                       bool other_over_ours);

}  // namespace hapmoe
