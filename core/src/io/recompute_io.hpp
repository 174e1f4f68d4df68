// Reading and writing a Recompute value: "none", "full", "selective" or {"modules": [...]} with
// Megatron's --recompute-modules names (SCENARIO.md). Internal to the I/O library.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe::detail {

// The value at `path`; `pattern` is its field-table row ("plan.stages[].recompute"), whose
// "<pattern>.modules" row lists the module names. Throws InputFailure naming the field.
Recompute read_recompute(const nlohmann::json& v, const std::string& path,
                         const std::string& pattern);

// search.recompute: one value or a non-empty list (repeats dropped); absent or null -> empty.
std::vector<Recompute> read_recompute_choices(const nlohmann::json* v, const std::string& path);

// "none", "full", "selective" (core_attn alone) or {"modules": [names in Megatron's order]}.
nlohmann::json recompute_to_json(const Recompute& r);

}  // namespace hapmoe::detail
