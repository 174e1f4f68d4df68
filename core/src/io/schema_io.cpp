// The field table as JSON (schema_to_json in scenario_io.hpp): what api::schema() returns and
// what the page builds its form from.
#include <string>
#include <vector>

#include "hapmoe/field_schema.hpp"
#include "hapmoe/scenario_io.hpp"

namespace hapmoe {
namespace {

using nlohmann::json;

json default_value(const FieldDef& f) {
  if (f.default_kind != DefaultKind::kValue) return nullptr;
  if (f.type == FieldType::kBool) return f.default_number != 0;
  if (f.type == FieldType::kInt) return static_cast<long long>(f.default_number);
  if (f.type == FieldType::kNumber) return f.default_number;
  return f.default_text;
}


json field_to_json(const FieldDef& f) {
  json j = {{"path", f.path},
            {"type", to_string(f.type)},
            {"unit", f.unit},
            {"default_kind", to_string(f.default_kind)},
            {"help", f.help}};
  if (has_range(f) || f.type == FieldType::kLayerFreq) {
    const bool integral = f.type != FieldType::kNumber && f.type != FieldType::kNumberChoices;
    j["min"] = integral ? json(static_cast<long long>(f.min)) : json(f.min);
    j["max"] = integral ? json(static_cast<long long>(f.max)) : json(f.max);
  }
  if (f.default_kind == DefaultKind::kValue) j["default"] = default_value(f);
  if (f.default_text[0] && f.default_kind != DefaultKind::kValue)
    j["default_text"] = f.default_text;
  if (f.allowed[0]) j["allowed"] = allowed_values(f);
  return j;
}

}  // namespace

json schema_to_json() {
  json fields = json::array();
  for (size_t i = 0; i < field_count(); ++i) fields.push_back(field_to_json(field_table()[i]));
  return {{"format", kSchemaFormat}, {"scenario_format", kScenarioFormat}, {"fields", fields}};
}

}  // namespace hapmoe
