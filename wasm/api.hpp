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
// If a node fails: the N-1 re-plan of the scenario's "plan" (the first plan of a search when it
// has none): {"format": "hapmoe.node_loss/1", "ok", "plan", "losses": [...]}.
std::string node_loss(const std::string& scenario_json, const ProgressFn& progress = nullptr,
                      bool include_timing = false);

// Profile importers (core/include/hapmoe/profile_import_io.hpp): a JSON request in,
// {"format": "hapmoe.profile_import/1", "ok": true, ...} or an error result out.
std::string import_nccl(const std::string& request_json);
std::string import_log(const std::string& request_json);
// The paper's evaluation (docs/reproduce.md): options {"models": [...], "clusters": [...]} (both
// optional; "" = {}) -> {"format": "hapmoe.reproduce/1", ...}. progress(done, total) per case.
std::string reproduce(const std::string& options_json,
                      const std::function<void(int done, int total)>& progress = nullptr);

}  // namespace hapmoe::api
