// `hapmoe reproduce` input and output: the paper's cases built from the presets (models
// mixtral-s / mixtral-l with §5.1's training setup, clusters of Table 1) and the result as JSON
// ("hapmoe.reproduce/1", docs/reproduce.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hapmoe/error.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/reproduce.hpp"

namespace hapmoe {

inline constexpr const char* kReproduceFormat = "hapmoe.reproduce/1";

// Options {"models": [ids], "clusters": [ids]} (each optional, default: all the paper's) ->
// one case per (model, cluster), models outermost. Unknown ids are an Error naming the field.
Expected<std::vector<ReproduceCase>> paper_cases(const nlohmann::json& options,
                                                 const PresetCatalog& presets);

nlohmann::json reproduce_to_json(const std::vector<ReproduceCase>& cases,
                                 const std::vector<ComparisonColumn>& columns,
                                 const ReproduceResult& result);

}  // namespace hapmoe
