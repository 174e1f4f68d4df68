// libFuzzer target over the JSON API entry points (wasm/api.hpp), built with
// -fsanitize=fuzzer,address,undefined (cmake -DHAPMOE_SANITIZE=ON with clang; see README).
// The first byte picks the entry point, the rest is the scenario text. Every answer must keep
// the API's promises (answer_check.hpp): anything else (crash, sanitizer report, exception,
// non-JSON output, an internal error, a null among a plan's numbers) is a finding. The
// importers and the profile section have targets of their own (nccl_fuzz, log_fuzz,
// profile_fuzz).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "answer_check.hpp"
#include "api.hpp"

namespace {

using hapmoe_fuzz::check_answer;

// presets() takes no input and answers the catalog: an object of gpus, models and clusters.
void check_presets(const std::string& out) {
  const auto r = nlohmann::json::parse(out, nullptr, false);
  if (!r.is_object() || !r.contains("gpus") || !r.contains("models") || !r.contains("clusters"))
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      check_answer(hapmoe::api::validate(text));
      break;
    case 1:
      check_answer(hapmoe::api::evaluate(text));
      break;
    case 2:
      check_answer(hapmoe::api::plan(text));
      break;
    default:
      check_presets(hapmoe::api::presets());
      check_answer(hapmoe::api::validate(text));
      check_answer(hapmoe::api::import_nccl(text));  // the profile importers take JSON requests too
      check_answer(hapmoe::api::import_log(text));
      break;
  }
  return 0;
}
