// Built-in presets (GPUs, models, clusters), compiled in from presets/*.json. Each preset is
// the same JSON object a user could write inline in a scenario, plus a "source".
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace hapmoe {

// One section of a preset file ("gpus", "models" or "clusters"): id -> the preset's JSON object.
// The file's text is only split into entries up front; an entry is parsed when first asked for.
// A scenario names a few presets, and parsing all of them (138 KB of JSON) was 18% of the
// instructions of the page's first plan, with the JSON parser then hot enough for the browser to
// spend its optimizing compiler on it.
class PresetSection {
 public:
  // text: a whole preset file, {"format": ..., "<section>": {"<id>": {...}, ...}}; the text must
  // outlive the section (it is a compiled-in literal). Throws std::invalid_argument on a file
  // the splitter cannot read (tests/io/presets_test.cpp checks every entry against a full parse).
  PresetSection(const char* text, const char* section);

  // The preset, or nullptr when there is none with that id.
  const nlohmann::json* find(const std::string& id) const;
  // The preset; throws nlohmann::json::out_of_range when absent, as json::at() does.
  const nlohmann::json& at(const std::string& id) const;
  // Every id, sorted (the order a JSON object's keys iterate in).
  std::vector<std::string> ids() const;
  size_t size() const { return text_.size(); }
  // The whole section as one JSON object (every entry parsed, once).
  const nlohmann::json& all() const;

 private:
  std::map<std::string, std::string_view> text_;  // id -> the text of its JSON object
  mutable std::mutex mutex_;
  mutable std::map<std::string, nlohmann::json> parsed_;
  mutable std::optional<nlohmann::json> all_;
};

struct PresetCatalog {
  PresetSection gpus;      // id -> GpuSpec object
  PresetSection models;    // id -> ModelSpec object
  PresetSection clusters;  // id -> ClusterSpec object
};

// The embedded preset files, split into entries. Call once and pass the catalog around.
PresetCatalog load_builtin_presets();

// {"gpus": {...}, "models": {...}, "clusters": {...}}
nlohmann::json presets_to_json(const PresetCatalog& catalog);

}  // namespace hapmoe
