// The readable form of `hapmoe reproduce`: the result JSON (hapmoe.reproduce/1) as a table of
// throughput ratios per cluster and geometric means, the paper's figures beside them, and the
// reasons for the gaps.
#pragma once

#include <nlohmann/json.hpp>

namespace hapmoe::cli {

void print_reproduce_table(const nlohmann::json& result);

}  // namespace hapmoe::cli
