#include "io/json_read.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace hapmoe::detail {

void fail(std::string code, std::string field, std::string message) {
  throw InputFailure{Error{std::move(code), std::move(message), std::move(field)}};
}

std::string join_path(const std::string& base, const std::string& key) {
  return base.empty() ? key : base + "." + key;
}

std::string index_path(const std::string& base, size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

std::string json_type_name(const json& j) {
  if (j.is_number_integer() || j.is_number_unsigned()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_null()) return "null";
  if (j.is_array()) return "a list";
  return "an object";
}

namespace {
std::string fmt_num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string int_range(long long lo, long long hi) {
  return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
}

std::string number_range(const FieldDef& f) {
  return "a number from " + fmt_num(f.min) + " to " + fmt_num(f.max);
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

long long as_int(const json& v, const std::string& path, long long lo, long long hi) {
  double d = 0;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<unsigned long long>() > 9e15) {
      fail("out_of_range", path, "expected " + int_range(lo, hi));
    }
    d = static_cast<double>(v.get<long long>());
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
             v.get<double>() == std::floor(v.get<double>())) {
    d = v.get<double>();
  } else {
    fail("wrong_type", path, "expected an integer, got " + json_type_name(v));
  }
  if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
    fail("out_of_range", path, "expected " + int_range(lo, hi) + ", got " + fmt_num(d));
  }
  return static_cast<long long>(d);
}

long long as_int(const json& v, const std::string& path, const FieldDef& f) {
  return as_int(v, path, static_cast<long long>(f.min), static_cast<long long>(f.max));
}

double as_number(const json& v, const std::string& path, const FieldDef& f) {
  if (!v.is_number()) fail("wrong_type", path, "expected a number, got " + json_type_name(v));
  const double d = v.get<double>();
  if (!std::isfinite(d) || !(d >= f.min) || d > f.max) {
    fail("out_of_range", path, "expected " + number_range(f) + ", got " + fmt_num(d));
  }
  return d;
}


std::string quoted_choices(const FieldDef& f) {
  std::string s;
  for (const auto& a : allowed_values(f)) s += (s.empty() ? "\"" : ", \"") + a + "\"";
  return s;
}

std::string as_enum(const json& v, const std::string& path, const FieldDef& f) {
  const std::string choices = quoted_choices(f);
  if (!v.is_string())
    fail("wrong_type", path, "expected one of " + choices + ", got " + json_type_name(v));
  const std::string s = v.get<std::string>();
  for (const auto& a : allowed_values(f)) {
    if (s == a) return s;
  }
  fail("bad_value", path, "expected one of " + choices + ", got \"" + s + "\"");
}

ObjectReader::ObjectReader(const json& j, std::string path, std::string pattern)
    : j_(j), path_(std::move(path)), pattern_(std::move(pattern)) {
  if (!j_.is_object()) {
    fail("wrong_type", path_.empty() ? "$" : path_,
         "expected an object, got " + json_type_name(j_));
  }
}

const FieldDef& ObjectReader::def(const char* key) const {
  const FieldDef* f = find_field(join_path(pattern_, key));
  // A programming error, not bad input: every key the parser reads has a table row.
  if (!f) throw std::logic_error("field table has no row " + join_path(pattern_, key));
  return *f;
}

void ObjectReader::fail_missing(const char* key, const std::string& expected) const {
  // A missing required field is most often a typo: name the misspelt field instead.
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (!seen_.count(it.key()) && !is_known_field_name(it.key()) &&
        edit_distance(it.key(), key) <= 2) {
      fail("unknown_field", join_path(path_, it.key()),
           "unknown field \"" + it.key() + "\"; did you mean \"" + key + "\"?");
    }
  }
  fail("missing_field", path(key), "required: " + expected);
}

bool ObjectReader::has(const char* key) const {
  auto it = j_.find(key);
  return it != j_.end() && !it->is_null();
}

const json* ObjectReader::present(const char* key) {
  seen_.insert(key);
  auto it = j_.find(key);
  return it == j_.end() || it->is_null() ? nullptr : &*it;
}

const json& ObjectReader::raw(const char* key) {
  seen_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) fail_missing(key, "this field");
  return *it;
}

long long ObjectReader::get_int(const char* key) {
  const FieldDef& f = def(key);
  if (const json* v = present(key)) return as_int(*v, path(key), f);
  if (f.default_kind != DefaultKind::kValue) {
    fail_missing(key, int_range(static_cast<long long>(f.min), static_cast<long long>(f.max)));
  }
  return static_cast<long long>(f.default_number);
}

long long ObjectReader::get_int(const char* key, long long derived) {
  const FieldDef& f = def(key);
  if (const json* v = present(key)) return as_int(*v, path(key), f);
  return derived;
}

double ObjectReader::get_number(const char* key) {
  const FieldDef& f = def(key);
  if (const json* v = present(key)) return as_number(*v, path(key), f);
  if (f.default_kind != DefaultKind::kValue) fail_missing(key, number_range(f));
  return f.default_number;
}

double ObjectReader::get_number(const char* key, double derived) {
  const FieldDef& f = def(key);
  if (const json* v = present(key)) return as_number(*v, path(key), f);
  return derived;
}

bool ObjectReader::get_bool(const char* key, bool derived) {
  (void)def(key);
  const json* v = present(key);
  if (!v) return derived;
  if (!v->is_boolean())
    fail("wrong_type", path(key), "expected true or false, got " + json_type_name(*v));
  return v->get<bool>();
}

bool ObjectReader::get_bool(const char* key) {
  const FieldDef& f = def(key);
  if (!has(key) && f.default_kind != DefaultKind::kValue) fail_missing(key, "true or false");
  return get_bool(key, f.default_number != 0);
}

std::string ObjectReader::get_string(const char* key, const std::string& derived) {
  (void)def(key);
  const json* v = present(key);
  if (!v) return derived;
  if (!v->is_string())
    fail("wrong_type", path(key), "expected a string, got " + json_type_name(*v));
  return v->get<std::string>();
}

std::string ObjectReader::get_string(const char* key) {
  const FieldDef& f = def(key);
  if (!has(key) && f.default_kind != DefaultKind::kValue) fail_missing(key, "a string");
  return get_string(key, f.default_text);
}

std::string ObjectReader::get_enum(const char* key) {
  const FieldDef& f = def(key);
  if (const json* v = present(key)) return as_enum(*v, path(key), f);
  if (f.default_kind != DefaultKind::kValue) fail_missing(key, "one of " + quoted_choices(f));
  return f.default_text;
}

std::optional<long long> ObjectReader::get_optional_int(const char* key) {
  const FieldDef& f = def(key);
  if (const json* v = present(key)) return as_int(*v, path(key), f);
  return std::nullopt;
}

std::optional<double> ObjectReader::get_optional_number(const char* key) {
  const FieldDef& f = def(key);
  if (const json* v = present(key)) return as_number(*v, path(key), f);
  return std::nullopt;
}

std::vector<int> ObjectReader::get_int_choices(const char* key) {
  const FieldDef& f = def(key);
  std::vector<int> out;
  const json* v = present(key);
  if (!v) return out;
  if (!v->is_array()) return {static_cast<int>(as_int(*v, path(key), f))};
  if (v->empty()) fail("bad_value", path(key), "expected a non-empty list of integers");
  for (size_t i = 0; i < v->size(); ++i) {
    const int x = static_cast<int>(as_int((*v)[i], index_path(path(key), i), f));
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  }
  return out;
}

std::vector<std::string> ObjectReader::get_enum_choices(const char* key) {
  const FieldDef& f = def(key);
  std::vector<std::string> out;
  const json* v = present(key);
  if (!v) return out;
  if (!v->is_array()) return {as_enum(*v, path(key), f)};
  if (v->empty()) fail("bad_value", path(key), "expected a non-empty list");
  for (size_t i = 0; i < v->size(); ++i) {
    std::string x = as_enum((*v)[i], index_path(path(key), i), f);
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(std::move(x));
  }
  return out;
}

std::vector<bool> ObjectReader::get_bool_choices(const char* key) {
  (void)def(key);
  std::vector<bool> out;
  const json* v = present(key);
  if (!v) return out;
  auto one = [](const json& x, const std::string& p) {
    if (!x.is_boolean()) fail("wrong_type", p, "expected true or false, got " + json_type_name(x));
    return x.get<bool>();
  };
  if (!v->is_array()) return {one(*v, path(key))};
  if (v->empty()) fail("bad_value", path(key), "expected true, false or a non-empty list of them");
  for (size_t i = 0; i < v->size(); ++i) {
    const bool x = one((*v)[i], index_path(path(key), i));
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  }
  return out;
}

std::vector<double> ObjectReader::get_number_choices(const char* key) {
  const FieldDef& f = def(key);
  std::vector<double> out;
  const json* v = present(key);
  if (!v) return out;
  if (!v->is_array()) return {as_number(*v, path(key), f)};
  if (v->empty()) fail("bad_value", path(key), "expected a non-empty list of numbers");
  for (size_t i = 0; i < v->size(); ++i) {
    const double x = as_number((*v)[i], index_path(path(key), i), f);
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  }
  return out;
}

std::vector<std::string> ObjectReader::get_enum_list(const char* key) {
  const FieldDef& f = def(key);
  std::vector<std::string> out;
  const json* v = present(key);
  if (!v) return out;
  if (!v->is_array()) fail("wrong_type", path(key), "expected a list of strings, got " + json_type_name(*v));
  for (size_t i = 0; i < v->size(); ++i) {
    std::string x = as_enum((*v)[i], index_path(path(key), i), f);
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(std::move(x));
  }
  return out;
}

void ObjectReader::finish() const {
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (!seen_.count(it.key())) {
      fail("unknown_field", join_path(path_, it.key()),
           "unknown field \"" + it.key() + "\" (see docs/fields.md for the field list)");
    }
  }
}

}  // namespace hapmoe::detail
