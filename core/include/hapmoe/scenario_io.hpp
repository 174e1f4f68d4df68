// Scenario JSON (docs/scenario.md, "hapmoe.scenario/1") <-> Scenario. Parsing never throws: bad
// input comes back as an Error naming the JSON path and what was expected.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "hapmoe/error.hpp"
#include "hapmoe/field_schema.hpp"  // kScenarioFormat
#include "hapmoe/presets.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

inline constexpr const char* kSchemaFormat = "hapmoe.schema/1";

// Parses and validates a whole scenario document (text or parsed JSON).
Expected<Scenario> parse_scenario(const std::string& text, const PresetCatalog& presets);
Expected<Scenario> parse_scenario(const nlohmann::json& doc, const PresetCatalog& presets);

// Single specs (path = JSON path used in error fields). A string value is a preset id; an
// object may start from {"preset": id} and override fields.
Expected<GpuSpec> parse_gpu(const nlohmann::json& v, const std::string& path,
                            const PresetCatalog& presets);
Expected<ModelSpec> parse_model(const nlohmann::json& v, const std::string& path,
                                const PresetCatalog& presets);

nlohmann::json plan_to_json(const PlanSpec& plan);

// The field table (field_schema.hpp) as {"format", "scenario_format", "fields": [{path, type,
// unit, min?, max?, default_kind, default?, default_text?, allowed?, help}]}.
nlohmann::json schema_to_json();

}  // namespace hapmoe
