// Look-ups over the scenario field table (field_table.cpp).
#include "hapmoe/field_schema.hpp"

#include <cctype>
#include <cstring>

namespace hapmoe {

const FieldDef* find_field(const std::string& pattern) {
  for (size_t i = 0; i < field_count(); ++i) {
    if (pattern == field_table()[i].path) return &field_table()[i];
  }
  return nullptr;
}

std::string field_pattern(const std::string& concrete_path) {
  std::string out;
  out.reserve(concrete_path.size());
  for (size_t i = 0; i < concrete_path.size(); ++i) {
    out += concrete_path[i];
    if (concrete_path[i] != '[') continue;
    while (i + 1 < concrete_path.size() &&
           std::isdigit(static_cast<unsigned char>(concrete_path[i + 1])))
      ++i;
  }
  return out;
}

bool is_known_field_name(const std::string& name) {
  for (size_t i = 0; i < field_count(); ++i) {
    const char* path = field_table()[i].path;
    const char* dot = std::strrchr(path, '.');
    if (name == (dot ? dot + 1 : path)) return true;
  }
  return false;
}

const char* to_string(FieldType t) {
  switch (t) {
    case FieldType::kInt:
      return "int";
    case FieldType::kNumber:
      return "number";
    case FieldType::kBool:
      return "bool";
    case FieldType::kString:
      return "string";
    case FieldType::kEnum:
      return "enum";
    case FieldType::kIntChoices:
      return "int_choices";
    case FieldType::kEnumChoices:
      return "enum_choices";
    case FieldType::kEnumList:
      return "enum_list";
    case FieldType::kBoolChoices:
      return "bool_choices";
    case FieldType::kNumberChoices:
      return "number_choices";
    case FieldType::kRecompute:
      return "recompute";
    case FieldType::kRecomputeChoices:
      return "recompute_choices";
    case FieldType::kLayerFreq:
      return "layer_freq";
    case FieldType::kLayerSplit:
      return "layer_split";
    case FieldType::kSpec:
      return "spec";
    case FieldType::kObject:
      return "object";
    case FieldType::kObjectList:
      return "object_list";
  }
  return "?";
}

const char* describe(FieldType t) {
  switch (t) {
    case FieldType::kInt:
      return "integer";
    case FieldType::kNumber:
      return "number";
    case FieldType::kBool:
      return "boolean";
    case FieldType::kString:
      return "string";
    case FieldType::kEnum:
      return "one of";
    case FieldType::kIntChoices:
      return "integer or list of integers";
    case FieldType::kEnumChoices:
      return "one or a list of";
    case FieldType::kEnumList:
      return "list (may be empty) of";
    case FieldType::kBoolChoices:
      return "boolean or list of booleans";
    case FieldType::kNumberChoices:
      return "number or list of numbers";
    case FieldType::kRecompute:
      return "{\"modules\": [...]} or one of";
    case FieldType::kRecomputeChoices:
      return "one or a list of: {\"modules\": [...]} or";
    case FieldType::kLayerFreq:
      return "integer N or list of 0/1 per layer";
    case FieldType::kLayerSplit:
      return "\"auto\" or list of layers per stage";
    case FieldType::kSpec:
      return "preset id or object";
    case FieldType::kObject:
      return "object";
    case FieldType::kObjectList:
      return "list of objects";
  }
  return "?";
}

std::vector<std::string> allowed_values(const FieldDef& f) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* c = f.allowed; *c; ++c) {
    if (*c == '|') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += *c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool has_range(const FieldDef& f) {
  switch (f.type) {
    case FieldType::kInt:
    case FieldType::kNumber:
    case FieldType::kIntChoices:
    case FieldType::kNumberChoices:
    case FieldType::kLayerSplit:
    case FieldType::kObjectList:
      return true;
    default:
      return false;
  }
}

const char* to_string(DefaultKind k) {
  switch (k) {
    case DefaultKind::kRequired:
      return "required";
    case DefaultKind::kValue:
      return "value";
    case DefaultKind::kDerived:
      return "derived";
    case DefaultKind::kUnset:
      return "unset";
  }
  return "?";
}

}  // namespace hapmoe
