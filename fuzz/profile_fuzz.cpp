// libFuzzer target over a scenario's `profile` section (docs/scenario.md, "Profile"): the input
// is the section's JSON text, set into a fixed scenario with a plan (Mixtral-S on 16 x H800,
// tp 2 pp 2 dp 4 ep 4) that `evaluate` and `timeline` then cost; with the first byte odd, a small
// search (`plan`, top 1, no baselines) runs on it too. Besides the API's promises
// (answer_check.hpp: an accepted profile never yields a null, i.e. a non-finite number), every
// answer is an error value naming a field or a result.
#include <cstddef>
#include <cstdint>
#include <string>

#include "answer_check.hpp"
#include "api.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string section(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string head =
      R"({"format": "hapmoe.scenario/1", "model": "mixtral-s", "cluster": "16-1-h",
          "training": {"global_batch_size": 64, "seq_length": 2048},
          "plan": {"tp": 2, "pp": 2, "dp": 4, "ep": 4, "sequence_parallel": true,
                   "stages": [{"group": 0, "layers": 12}, {"group": 0, "layers": 12}]},
          "search": {"top_k": 1, "baselines": false, "tp": [1, 2], "pp": [1, 2], "vpp": 1, "micro_batch_size": 1},
          "profile": )";
  const std::string text = head + section + "}";
  hapmoe_fuzz::check_answer(hapmoe::api::validate(text));
  hapmoe_fuzz::check_answer(hapmoe::api::evaluate(text));
  hapmoe_fuzz::check_answer(hapmoe::api::timeline(text));
  if (data[0] & 1) hapmoe_fuzz::check_answer(hapmoe::api::plan(text));
  return 0;
}
