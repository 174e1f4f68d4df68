#include "io/recompute_io.hpp"

#include <algorithm>

#include "io/json_read.hpp"

namespace hapmoe::detail {

namespace {
const char* kExpected = "expected \"none\", \"selective\", \"full\" or {\"modules\": [...]}";

unsigned module_bit(const std::string& name) {
  for (int i = 0; i < kRecomputeModuleCount; ++i) {
    if (name == recompute_module_name(i)) return 1u << i;
  }
  return 0;  // unreachable: get_enum_list accepts only the table's names
}
}  // namespace

Recompute read_recompute(const nlohmann::json& v, const std::string& path,
                         const std::string& pattern) {
  if (v.is_object()) {
    ObjectReader r(v, path, pattern);
    if (!r.has("modules"))
      r.fail_missing("modules", "a non-empty list of --recompute-modules names");
    const std::vector<std::string> names = r.get_enum_list("modules");
    r.finish();
    if (names.empty()) {
      fail("bad_value", r.path("modules"),
           "expected at least one module (\"none\" means no recompute)");
    }
    unsigned bits = 0;
    for (const auto& n : names) bits |= module_bit(n);
    return Recompute::of_modules(bits);
  }
  if (!v.is_string())
    fail("wrong_type", path, std::string(kExpected) + ", got " + json_type_name(v));
  const std::string s = v.get<std::string>();
  if (s == "none") return Recompute::kNone;
  if (s == "selective") return Recompute::kSelective;
  if (s == "full") return Recompute::kFull;
  fail("bad_value", path, std::string(kExpected) + ", got \"" + s + "\"");
}

std::vector<Recompute> read_recompute_choices(const nlohmann::json* v, const std::string& path) {
  std::vector<Recompute> out;
  if (!v || v->is_null()) return out;
  const std::string pattern = "search.recompute[]";
  if (!v->is_array()) return {read_recompute(*v, path, pattern)};
  if (v->empty()) fail("bad_value", path, "expected a non-empty list of recompute values");
  for (size_t i = 0; i < v->size(); ++i) {
    const Recompute r = read_recompute((*v)[i], index_path(path, i), pattern);
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

nlohmann::json recompute_to_json(const Recompute& r) {
  if (r.kind != Recompute::Kind::kSelective || r == Recompute::kSelective) return to_string(r);
  nlohmann::json names = nlohmann::json::array();
  for (int i = 0; i < kRecomputeModuleCount; ++i) {
    if (r.modules & (1u << i)) names.push_back(recompute_module_name(i));
  }
  return {{"modules", names}};
}

}  // namespace hapmoe::detail
