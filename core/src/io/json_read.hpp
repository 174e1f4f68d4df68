// Internal: typed field access on nlohmann::json, validated from the field table
// (field_schema.hpp): type, range, default and allowed values of every key come from there, and
// errors name the JSON path. Every input failure goes through detail::fail, the one place that
// builds an Error; the public parse functions catch it and return the Error as a value.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hapmoe/error.hpp"
#include "hapmoe/field_schema.hpp"

namespace hapmoe::detail {

using nlohmann::json;

struct InputFailure {
  Error error;
};

[[noreturn]] void fail(std::string code, std::string field, std::string message);

std::string join_path(const std::string& base, const std::string& key);
std::string index_path(const std::string& base, size_t i);
std::string json_type_name(const json& j);

// Reads the fields of one JSON object found at `path` (concrete, e.g. "cluster.groups[2]"),
// whose fields are described in the table under `pattern` (e.g. "cluster.groups[]").
// finish() rejects fields nobody asked for.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path, std::string pattern);

  bool has(const char* key) const;  // present and not null
  std::string path(const char* key) const { return join_path(path_, key); }
  const FieldDef& def(const char* key) const;  // the table row of key (internal error if none)
  const json& raw(const char* key);            // the value; missing -> error
  [[noreturn]] void fail_missing(const char* key, const std::string& expected) const;

  // Required or table-default fields (DefaultKind kRequired / kValue).
  long long get_int(const char* key);
  double get_number(const char* key);
  bool get_bool(const char* key);
  std::string get_string(const char* key);
  std::string get_enum(const char* key);
  // Fields whose default the caller computes (DefaultKind kDerived).
  long long get_int(const char* key, long long derived);
  double get_number(const char* key, double derived);
  bool get_bool(const char* key, bool derived);
  std::string get_string(const char* key, const std::string& derived);
  // Optional fields (DefaultKind kUnset): absent or null -> nullopt.
  std::optional<long long> get_optional_int(const char* key);
  std::optional<double> get_optional_number(const char* key);
  // An integer or a non-empty list of integers (search dimensions); absent -> empty.
  // Repeated values are dropped (first occurrence kept): the list is a set of allowed values.
  std::vector<int> get_int_choices(const char* key);
  // One allowed string or a non-empty list of them; absent -> empty; repeats dropped.
  std::vector<std::string> get_enum_choices(const char* key);
  // true / false or a non-empty list of them; absent -> empty; repeats dropped.
  std::vector<bool> get_bool_choices(const char* key);
  // A number or a non-empty list of numbers within the row's bounds; absent -> empty; repeats dropped.
  std::vector<double> get_number_choices(const char* key);
  // A list of allowed strings, possibly empty; absent = empty; repeats dropped.
  std::vector<std::string> get_enum_list(const char* key);
  void ignore(const char* key) { seen_.insert(key); }
  void finish() const;

 private:
  const json* present(const char* key);  // marks key seen; nullptr when absent or null
  const json& j_;
  std::string path_;
  std::string pattern_;
  std::set<std::string> seen_;
};

// A JSON value checked against a table row's type and bounds.
long long as_int(const json& v, const std::string& path, const FieldDef& f);
long long as_int(const json& v, const std::string& path, long long lo, long long hi);
double as_number(const json& v, const std::string& path, const FieldDef& f);
std::string as_enum(const json& v, const std::string& path, const FieldDef& f);

// The table's allowed values of an enum row, as a vector and as "\"a\", \"b\"".
std::string quoted_choices(const FieldDef& f);

}  // namespace hapmoe::detail
