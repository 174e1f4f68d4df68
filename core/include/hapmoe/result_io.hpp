// Result JSON ("hapmoe.result/1", SCENARIO.md): plans with metrics, per-stage breakdown and the
// Megatron command; errors as {code, message, field}. Numbers are rounded to 6 significant
// digits so that native and wasm builds print the same bytes.
#pragma once

#include <nlohmann/json.hpp>

#include "hapmoe/error.hpp"
#include "hapmoe/evaluate.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe {

inline constexpr const char* kResultFormat = "hapmoe.result/1";

double round_sig(double x);  // 6 significant digits

nlohmann::json metrics_to_json(const PlanMetrics& m);
// {"name", "parameters_total", "parameters_active", "parameters_basis"}: the model's size in
// parameters (elements), as Megatron-LM counts them.
nlohmann::json model_size_to_json(const ModelSpec& m);
// {"plan", "metrics", "breakdown", "megatron"} for one evaluated plan.
nlohmann::json evaluation_to_json(const Scenario& s, const PlanEvaluation& ev);
nlohmann::json error_result(const Error& e);
// The result of `evaluate`: one entry in plans.
nlohmann::json evaluate_result(const Scenario& s, const PlanEvaluation& ev);
// The result of `plan`. include_timing adds stats.elapsed_ms (off by default so that output is
// byte-identical across runs).
nlohmann::json search_result_to_json(const Scenario& s, const SearchResult& r, bool include_timing = false);

// {"format": "hapmoe.node_loss/1", "ok": true, "plan": {...}, "losses": [...]}: the N-1 re-plan
// (planner.hpp); each loss's "entry" is its best plan as a plans[] entry of the reduced cluster.
nlohmann::json node_loss_to_json(const Scenario& s, const NodeLossResult& r, bool include_timing = false);

}  // namespace hapmoe
