// The JSON-in/JSON-out API exported to JavaScript (bindings.cpp registers it) and used by the
// native CLI and tests, so both produce the same bytes. Every function returns a JSON string;
// none throws.
#pragma once

#include <functional>
#include <string>

namespace hapmoe::api {

// Progress callback: fraction done in [0, 1], candidates evaluated so far.
using ProgressFn = std::function<void(double fraction, long long evaluated)>;

std::string version();
std::string presets();
// The scenario field table: {"format": "hapmoe.schema/1", "scenario_format", "fields": [...]}.
std::string schema();
std::string validate(const std::string& scenario_json);
std::string evaluate(const std::string& scenario_json);
// The concrete schedule of the scenario's "plan": {"format", "ok", "metrics", "timeline"}.
std::string timeline(const std::string& scenario_json);
// include_timing adds stats.elapsed_ms (off by default: the output is then byte-identical).
std::string plan(const std::string& scenario_json, const ProgressFn& progress = nullptr,
                 bool include_timing = false);

}  // namespace hapmoe::api
