#include "hapmoe/presets.hpp"

namespace hapmoe {
namespace detail {
extern const char* const kPresetGpusJson;
extern const char* const kPresetModelsJson;
extern const char* const kPresetClustersJson;
}  // namespace detail

PresetCatalog load_builtin_presets() {
  PresetCatalog c;
  c.gpus = nlohmann::json::parse(detail::kPresetGpusJson).at("gpus");
  c.models = nlohmann::json::parse(detail::kPresetModelsJson).at("models");
  c.clusters = nlohmann::json::parse(detail::kPresetClustersJson).at("clusters");
  return c;
}

nlohmann::json presets_to_json(const PresetCatalog& catalog) {
  return {{"gpus", catalog.gpus}, {"models", catalog.models}, {"clusters", catalog.clusters}};
}

}  // namespace hapmoe
