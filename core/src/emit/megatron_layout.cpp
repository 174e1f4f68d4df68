#include "emit/megatron_layout.hpp"

#include <string>
#include <vector>

namespace hapmoe {

namespace {
std::string repeat_t(int n) {
  if (n <= 0) return "";
  if (n == 1) return "t";
  return "t*" + std::to_string(n);
}

// Layers of each (virtual chunk, pp rank) in layout order: chunk-major, as Megatron lists them.
std::vector<std::vector<int>> chunk_layers(const PlanSpec& p) {
  std::vector<std::vector<int>> chunks(p.vpp, std::vector<int>(p.pp, 0));
  for (int r = 0; r < p.pp; ++r) {
    const int n = p.stages[r].layers;
    for (int c = 0; c < p.vpp; ++c) chunks[c][r] = n / p.vpp + (c < n % p.vpp ? 1 : 0);
  }
  return chunks;
}
}  // namespace

std::string pipeline_layout(const ModelSpec& m, const PlanSpec& p) {
  if (p.pp <= 1) return "";
  bool uniform = m.num_layers % p.pp == 0 && (m.num_layers / p.pp) % p.vpp == 0;
  for (const auto& st : p.stages) uniform = uniform && st.layers == m.num_layers / p.pp;
  if (uniform) return "";
  const auto chunks = chunk_layers(p);
  std::string out;
  for (int c = 0; c < p.vpp; ++c) {
    for (int r = 0; r < p.pp; ++r) {
      std::string stage;
      if (c == 0 && r == 0) stage += "E";
      stage += repeat_t(chunks[c][r]);
      if (c == p.vpp - 1 && r == p.pp - 1) {
        for (int i = 0; i < m.mtp_num_layers; ++i) stage += "m";
        stage += "L";
      }
      if (!out.empty() || c > 0 || r > 0) out += "|";
      out += stage;
    }
  }
  return out;
}

std::string moe_layer_freq_expression(const std::vector<int>& pattern) {
  std::string out;
  size_t i = 0;
  while (i < pattern.size()) {
    size_t j = i;
    while (j < pattern.size() && pattern[j] == pattern[i]) ++j;
    if (!out.empty()) out += "+";
    out += "[" + std::to_string(pattern[i]) + "]*" + std::to_string(j - i);
    i = j;
  }
  return "(" + out + ")";
}

}  // namespace hapmoe
