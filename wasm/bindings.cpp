// Embind registration only: the JSON-in/JSON-out API of api.hpp, as plain strings.
#include <emscripten/bind.h>

#include "api.hpp"

namespace {
std::string plan_with_progress(const std::string& scenario, emscripten::val progress) {
  if (progress.isUndefined() || progress.isNull()) return hapmoe::api::plan(scenario);
  return hapmoe::api::plan(scenario, [&progress](double fraction, long long evaluated) {
    progress(fraction, static_cast<double>(evaluated));
  });
}
// progress(fraction of cases done, cases done), like plan's (fraction, evaluated).
std::string reproduce_with_progress(const std::string& options, emscripten::val progress) {
  if (progress.isUndefined() || progress.isNull()) return hapmoe::api::reproduce(options);
  return hapmoe::api::reproduce(options, [&progress](int done, int total) {
    progress(static_cast<double>(done) / total, static_cast<double>(done));
  });
}
std::string node_loss_with_progress(const std::string& scenario, emscripten::val progress) {
  if (progress.isUndefined() || progress.isNull()) return hapmoe::api::node_loss(scenario);
  return hapmoe::api::node_loss(scenario, [&progress](double fraction, long long evaluated) {
    progress(fraction, static_cast<double>(evaluated));
  });
}
std::string plan_plain(const std::string& scenario) { return hapmoe::api::plan(scenario); }
std::string plan_timed(const std::string& scenario) { return hapmoe::api::plan(scenario, nullptr, true); }
}  // namespace

EMSCRIPTEN_BINDINGS(hapmoe) {
  emscripten::function("version", &hapmoe::api::version);
  emscripten::function("presets", &hapmoe::api::presets);
  emscripten::function("schema", &hapmoe::api::schema);
  emscripten::function("validate", &hapmoe::api::validate);
  emscripten::function("evaluate", &hapmoe::api::evaluate);
  emscripten::function("timeline", &hapmoe::api::timeline);
  emscripten::function("plan", &plan_with_progress);
  emscripten::function("planQuiet", &plan_plain);
  emscripten::function("planTimed", &plan_timed);  // adds stats.elapsed_ms (benchmarks)
  emscripten::function("nodeLoss", &node_loss_with_progress);  // the N-1 re-plan of scenario.plan
  emscripten::function("importNccl", &hapmoe::api::import_nccl);
  emscripten::function("importLog", &hapmoe::api::import_log);
  emscripten::function("reproduce", &reproduce_with_progress);  // the paper's evaluation (docs/reproduce.md)
}
