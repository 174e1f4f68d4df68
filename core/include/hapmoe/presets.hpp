// Built-in presets (GPUs, models, clusters), compiled in from presets/*.json. Each preset is
// the same JSON object a user could write inline in a scenario, plus a "source".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace hapmoe {

struct PresetCatalog {
  nlohmann::json gpus;      // id -> GpuSpec object
  nlohmann::json models;    // id -> ModelSpec object
  nlohmann::json clusters;  // id -> ClusterSpec object
};

// Parses the embedded preset files. Call once and pass the catalog around.
PresetCatalog load_builtin_presets();

// {"gpus": {...}, "models": {...}, "clusters": {...}}
nlohmann::json presets_to_json(const PresetCatalog& catalog);

}  // namespace hapmoe
