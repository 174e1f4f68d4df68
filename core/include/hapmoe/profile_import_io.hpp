// The importers as JSON requests (what the CLI's `hapmoe profile ...` and the wasm API take):
// nccl-tests files -> a `profile` section; a Megatron-LM log + the scenario of its run -> the
// scenario with that GPU type's efficiency factors (and reserved memory) fitted. Bad input
// comes back as an Error naming the request field.
#pragma once

#include <nlohmann/json.hpp>

#include "hapmoe/error.hpp"
#include "hapmoe/presets.hpp"

namespace hapmoe {

// {"gpu": id, "op"?: "all_reduce"|..., "placement"?: "intra_node"|..., "files": [{"name", "text"}]}
// -> {"profile": {"gpus": {id: {"collectives": [...], "source"}}}, "imported": [{"file", "op",
// "ranks", "placement", "hosts", "device", "points", "max_busbw_gbps"}]}.
Expected<nlohmann::json> import_nccl_request(const nlohmann::json& request);

// {"scenario": {... with "plan"}, "log": text, "log_name"?: text, "gpu"?: id, "warmup_iterations"?: N}
// -> {"scenario": the scenario with the fitted GPU spec in its cluster, "fit": {"gpu", "scale",
// "log": {...}, "analytical_iteration_s", "fitted_iteration_s", "logged_iteration_s", ...}}.
Expected<nlohmann::json> import_log_request(const nlohmann::json& request, const PresetCatalog& catalog);

}  // namespace hapmoe
