// The one table of scenario fields: JSON path pattern, type, unit, range, default, allowed
// values and help text. The parser validates from it, the API exports it (schema()), the page
// builds its form from it and docs/fields.md is generated from it. Plain C++: no JSON, no
// exceptions, so the model library can include it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hapmoe {

// The scenario format tag: the "format" field's only accepted value.
inline constexpr const char* kScenarioFormat = "hapmoe.scenario/1";

// Cluster limits shared by several fields. 1M GPUs is ~10x the largest training clusters
// announced; 64 groups bound the search's work over group orders (issue 11).
inline constexpr long long kMaxGpus = 1 << 20;
inline constexpr int kMaxGroups = 64;

enum class FieldType {
  kInt,          // integer
  kNumber,       // finite number
  kBool,         // true / false
  kString,       // free text
  kEnum,         // one string of `allowed`
  kIntChoices,   // an integer or a non-empty list of integers (search dimensions)
  kEnumChoices,  // one string of `allowed` or a non-empty list of them
  kEnumList,     // a list (possibly empty) of strings of `allowed`
  kBoolChoices,       // true / false or a non-empty list of them (search dimensions)
  kNumberChoices,     // a number or a non-empty list of numbers (search dimensions)
  kRecompute,         // one string of `allowed` or {"modules": [...]} (row "<path>.modules")
  kRecomputeChoices,  // a kRecompute value or a non-empty list of them (row "<path>[].modules")
  kLayerFreq,    // moe_layer_freq: an integer N (every N-th layer) or one 0/1 per layer
  kLayerSplit,   // "auto" or a list of layers per stage
  kSpec,         // a preset id (string) or an object (optionally {"preset": id, ...overrides})
  kObject,       // an object of further fields
  kObjectList,   // a list of objects
};

// How a field gets its value when absent.
enum class DefaultKind {
  kRequired,  // must be given (a preset counts as giving it)
  kValue,     // default_number (int, number, bool as 0/1) or default_text (string, enum)
  kDerived,   // computed from other fields; default_text says how
  kUnset,     // absent means "none" / "auto"; default_text says what that means
};

struct FieldDef {
  const char* path;  // pattern: "model.num_layers", "cluster.groups[].gpu.memory_gib"
  FieldType type;
  const char* unit;  // "" when dimensionless
  double min;        // inclusive bounds for numbers, integers and list elements
  double max;
  DefaultKind default_kind;
  double default_number;
  const char* default_text;
  const char* allowed;  // enums: values separated by '|'; else ""
  const char* help;     // one or two sentences for a new user
};

// The whole table, in document order.
const FieldDef* field_table();
size_t field_count();

// The field with this exact pattern, or nullptr.
const FieldDef* find_field(const std::string& pattern);

// "cluster.groups[3].gpu.memory_gib" -> "cluster.groups[].gpu.memory_gib".
std::string field_pattern(const std::string& concrete_path);

const char* to_string(FieldType t);    // machine name: "int", "int_choices", ...
const char* describe(FieldType t);     // for people: "integer or list of integers", ...
const char* to_string(DefaultKind k);  // "required", "value", "derived", "unset"
// True when min/max bound the value (or, for lists of objects, their count).
bool has_range(const FieldDef& f);

// The table as a Markdown reference (docs/fields.md is this text).
std::string fields_markdown();

// The allowed values of an enum field, in table order ("a|b|c" -> {"a", "b", "c"}).
std::vector<std::string> allowed_values(const FieldDef& f);

// True when `name` is the last path component of some field (typo detection).
bool is_known_field_name(const std::string& name);

}  // namespace hapmoe
