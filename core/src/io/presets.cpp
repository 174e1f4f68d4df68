#include "hapmoe/presets.hpp"

#include <stdexcept>

namespace hapmoe {
namespace detail {
extern const char* const kPresetGpusJson;
extern const char* const kPresetModelsJson;
extern const char* const kPresetClustersJson;
}  // namespace detail

namespace {

// A cursor over JSON text that finds where values end without building them.
class Splitter {
 public:
  Splitter(std::string_view text, const char* section) : t_(text), section_(section) {}

  [[noreturn]] void fail(const char* what) const {
    throw std::invalid_argument(std::string("preset file (section \"") + section_ + "\"): " + what + " at byte " +
                                std::to_string(i_));
  }
  void space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
  }
  void expect(char c) {
    space();
    if (i_ >= t_.size() || t_[i_] != c) fail((std::string("expected '") + c + "'").c_str());
    ++i_;
  }
  bool next_is(char c) {
    space();
    return i_ < t_.size() && t_[i_] == c;
  }
  // A key (no escapes: preset ids and the files' top-level keys are plain).
  std::string key() {
    expect('"');
    const size_t start = i_;
    while (i_ < t_.size() && t_[i_] != '"') {
      if (t_[i_] == '\\') fail("escape in a key");
      ++i_;
    }
    if (i_ >= t_.size()) fail("unterminated key");
    return std::string(t_.substr(start, i_++ - start));
  }
  // Skips one value; returns its text.
  std::string_view value() {
    space();
    const size_t start = i_;
    int depth = 0;
    for (; i_ < t_.size(); ++i_) {
      const char c = t_[i_];
      if (c == '"') {
        for (++i_; i_ < t_.size() && t_[i_] != '"'; ++i_) {
          if (t_[i_] == '\\') ++i_;
        }
        if (i_ >= t_.size()) fail("unterminated string");
        if (depth == 0) {
          ++i_;
          break;
        }
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth == 0) break;  // the end of the enclosing object: a scalar ends here
        if (--depth == 0) {
          ++i_;
          break;
        }
      } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
        break;
      }
    }
    if (i_ == start) fail("expected a value");
    return t_.substr(start, i_ - start);
  }
  // Calls f(key) for each member of the object at the cursor, with the cursor at its value; f
  // must move the cursor past the value (value() does).
  template <typename F>
  void members(F&& f) {
    expect('{');
    if (next_is('}')) {
      ++i_;
      return;
    }
    for (;;) {
      std::string k = key();
      expect(':');
      f(std::move(k));
      if (next_is(',')) {
        ++i_;
        continue;
      }
      expect('}');
      return;
    }
  }

  std::string_view t_;
  const char* section_;
  size_t i_ = 0;
};

}  // namespace

PresetSection::PresetSection(const char* text, const char* section) {
  Splitter p(text, section);
  bool found = false;
  p.members([&](std::string top) {
    if (top != section) {
      p.value();
      return;
    }
    found = true;
    p.members([&](std::string id) {
      if (!p.next_is('{')) p.fail("expected a preset object");
      text_[std::move(id)] = p.value();  // a repeated id: the last one, as a JSON parser keeps
    });
  });
  p.space();
  if (p.i_ != p.t_.size()) p.fail("text after the top-level object");
  if (!found) p.fail("no such section");
}

const nlohmann::json* PresetSection::find(const std::string& id) const {
  const auto t = text_.find(id);
  if (t == text_.end()) return nullptr;
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = parsed_.find(id);
  if (it == parsed_.end()) it = parsed_.emplace(id, nlohmann::json::parse(t->second)).first;
  return &it->second;  // std::map: stays in place as entries are added
}

const nlohmann::json& PresetSection::at(const std::string& id) const {
  if (const nlohmann::json* p = find(id)) return *p;
  return all().at(id);  // throws json's out_of_range, with its message
}

std::vector<std::string> PresetSection::ids() const {
  std::vector<std::string> out;
  out.reserve(text_.size());
  for (const auto& [id, text] : text_) out.push_back(id);
  return out;
}

const nlohmann::json& PresetSection::all() const {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (all_) return *all_;
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [id, text] : text_) out[id] = *find(id);
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!all_) all_ = std::move(out);
  return *all_;
}

PresetCatalog load_builtin_presets() {
  return PresetCatalog{PresetSection(detail::kPresetGpusJson, "gpus"), PresetSection(detail::kPresetModelsJson, "models"),
                       PresetSection(detail::kPresetClustersJson, "clusters")};
}

nlohmann::json presets_to_json(const PresetCatalog& catalog) {
  return {{"gpus", catalog.gpus.all()}, {"models", catalog.models.all()}, {"clusters", catalog.clusters.all()}};
}

}  // namespace hapmoe
