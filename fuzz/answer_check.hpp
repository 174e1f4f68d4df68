// What every fuzz target requires of an API answer (wasm/api.hpp): valid UTF-8 JSON, an object
// with a boolean "ok" and, when not ok, an error with a code, a non-empty message and a field;
// when ok, no null (a non-finite number) among a plan's metrics and breakdown. Anything else
// aborts, which libFuzzer reports as a finding.
#pragma once

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "hapmoe/json_text.hpp"

namespace hapmoe_fuzz {

inline void require(bool ok) {
  if (!ok) std::abort();
}

// No null anywhere in j (every number the cost model writes is finite).
inline void require_no_null(const nlohmann::json& j) {
  require(!j.is_null());
  if (j.is_structured()) {
    for (const auto& v : j) require_no_null(v);
  }
}

// The parsed answer (abort unless it keeps the API's promises).
inline nlohmann::json check_answer(const std::string& out) {
  require(hapmoe::first_invalid_utf8(out) == std::string::npos);
  const auto r = nlohmann::json::parse(out, nullptr, false);
  require(r.is_object() && r.contains("ok") && r["ok"].is_boolean());
  if (!r["ok"]) {
    const auto& e = r["error"];
    require(e.is_object() && e["code"].is_string() && e["message"].is_string() && e["field"].is_string());
    require(!e["message"].get<std::string>().empty());
    require(e["code"] != "internal");
    return r;
  }
  for (const auto& p : r.value("plans", nlohmann::json::array())) {
    require_no_null(p["metrics"]);
    require_no_null(p["breakdown"]);
  }
  return r;
}

}  // namespace hapmoe_fuzz
