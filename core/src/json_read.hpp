// Internal: typed field access on nlohmann::json with JSON-path error reporting. Every input
// failure goes through detail::fail, the one place that builds an Error; the public parse
// functions catch it and return the Error as a value.
#pragma once

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hapmoe/error.hpp"

namespace hapmoe::detail {

using nlohmann::json;

struct InputFailure {
  Error error;
};

[[noreturn]] void fail(std::string code, std::string field, std::string message);

std::string join_path(const std::string& base, const std::string& key);
std::string index_path(const std::string& base, size_t i);
std::string json_type_name(const json& j);

// Reads the fields of one JSON object; finish() rejects fields nobody asked for.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path);

  bool has(const char* key) const;  // present and not null
  std::string path(const char* key) const { return join_path(path_, key); }
  const json& raw(const char* key);

  long long get_int(const char* key, long long lo, long long hi, std::optional<long long> def);
  double get_number(const char* key, double lo, double hi, std::optional<double> def,
                    bool lo_exclusive = false);
  std::optional<double> get_nullable_number(const char* key, double lo, double hi,
                                            bool lo_exclusive = false);
  std::optional<long long> get_nullable_int(const char* key, long long lo, long long hi);
  bool get_bool(const char* key, std::optional<bool> def);
  std::string get_string(const char* key, std::optional<std::string> def);
  std::string get_enum(const char* key, std::initializer_list<const char*> allowed,
                       std::optional<std::string> def);
  // An integer or a non-empty list of integers (search dimensions).
  std::vector<int> get_int_choices(const char* key, long long lo, long long hi);
  void ignore(const char* key) { seen_.insert(key); }
  void finish() const;

 private:
  [[noreturn]] void fail_missing(const char* key, const std::string& expected) const;
  const json& j_;
  std::string path_;
  std::set<std::string> seen_;
};

long long as_int(const json& v, const std::string& path, long long lo, long long hi);
double as_number(const json& v, const std::string& path, double lo, double hi, bool lo_exclusive);

}  // namespace hapmoe::detail
