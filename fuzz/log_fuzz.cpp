// libFuzzer target over the Megatron-LM log importer (core/include/hapmoe/profile_import.hpp):
// the input is a log, fitted against one fixed run's scenario (tests/profile/'s Qwen3-30B-A3B
// on 16 x H100). Besides the API's promises (answer_check.hpp): the fit's numbers are finite,
// each logged iteration is used once, and the scenario it prints passes `validate`.
#include <cstddef>
#include <cstdint>
#include <string>

#include "answer_check.hpp"
#include "api.hpp"
#include "hapmoe/profile_import.hpp"

using hapmoe_fuzz::require;
using nlohmann::json;

namespace {
const json& run_scenario() {
  static const json s = json::parse(R"({"format": "hapmoe.scenario/1", "model": "qwen3-30b-a3b", "cluster": "h100-16",
    "training": {"global_batch_size": 1024, "seq_length": 4096, "precision": "fp8", "moe_token_dispatcher_type": "flex",
                 "fp8_recipe": "tensorwise", "grad_reduce_in_bf16": true},
    "plan": {"tp": 1, "pp": 1, "dp": 16, "ep": 16, "micro_batch_size": 1,
             "stages": [{"group": 0, "layers": 48, "recompute": "none"}]}})");
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string log(reinterpret_cast<const char*>(data), size);
  const auto parsed = hapmoe::parse_megatron_log(log);
  if (parsed) {
    for (size_t i = 1; i < parsed->iterations.size(); ++i) {
      for (size_t j = 0; j < i && i < 64; ++j) require(parsed->iterations[i].iteration != parsed->iterations[j].iteration);
    }
  }
  const std::string request =
      json{{"scenario", run_scenario()}, {"log", log}, {"log_name", "fuzz.log"}}.dump(-1, ' ', false, json::error_handler_t::replace);
  const json r = hapmoe_fuzz::check_answer(hapmoe::api::import_log(request));
  if (!r["ok"]) return 0;
  hapmoe_fuzz::require_no_null(r["fit"]);
  require(hapmoe_fuzz::check_answer(hapmoe::api::validate(r["scenario"].dump()))["ok"] == true);
  return 0;
}
