// Scenario builders shared by the search-side unit tests.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "hapmoe/presets.hpp"
#include "hapmoe/scenario_io.hpp"

namespace hapmoe::testing {

// splitmix64: the same sequence on every platform (the standard distributions differ between
// libraries), for the generated-instance tests.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(below(static_cast<int>(v.size())))];
  }
};

inline const PresetCatalog& builtin_presets() {
  static const PresetCatalog c = load_builtin_presets();
  return c;
}

// Parses a scenario document; fails the calling test on error.
inline Scenario scenario_from(const nlohmann::json& doc) {
  auto s = parse_scenario(doc, builtin_presets());
  if (!s.ok()) throw std::runtime_error(s.error().field + ": " + s.error().message);
  return s.value();
}

// A small MoE (8 layers, 8 experts top-2) for placement tests.
inline nlohmann::json small_moe_model() {
  return {{"name", "small"}, {"num_layers", 8}, {"hidden_size", 1024}, {"ffn_hidden_size", 4096},
          {"num_attention_heads", 16}, {"num_query_groups", 4}, {"vocab_size", 32000},
          {"num_experts", 8}, {"moe_router_topk", 2}, {"moe_ffn_hidden_size", 1024}};
}

}  // namespace hapmoe::testing
