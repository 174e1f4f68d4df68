// libFuzzer target over the JSON API entry points (wasm/api.hpp), built with
// -fsanitize=fuzzer,address,undefined (cmake -DHAPMOE_SANITIZE=ON with clang; see README).
// The first byte picks the entry point, the rest is the scenario text. Every answer must be a
// JSON object with a boolean "ok" and, when not ok, an error with a code, message and field:
// anything else (crash, sanitizer report, exception, non-JSON output) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "api.hpp"
#include "hapmoe/json_text.hpp"

namespace {

// Output the API promises for any input: valid UTF-8 JSON with ok and, if not ok, an error.
void check_answer(const std::string& out) {
  if (hapmoe::first_invalid_utf8(out) != std::string::npos) std::abort();
  const auto r = nlohmann::json::parse(out, nullptr, false);
  if (!r.is_object() || !r.contains("ok") || !r["ok"].is_boolean()) std::abort();
  if (r["ok"]) return;
  const auto& e = r["error"];
  if (!e.is_object() || !e["code"].is_string() || !e["message"].is_string() ||
      !e["field"].is_string())
    std::abort();
  if (e["message"].get<std::string>().empty()) std::abort();
}

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
