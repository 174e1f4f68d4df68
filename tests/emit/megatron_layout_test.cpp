// emit/megatron_layout: --moe-layer-freq expressions read back to their pattern, and
// --pipeline-model-parallel-layout read back to the plan's split on generated splits (stage and
// chunk layer counts, E first, MTP and L last, empty exactly for Megatron's even split).
// tests/emit/layout_test.cpp has the grammar's hand-written cases.
#include "emit/megatron_layout.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures.hpp"

using namespace hapmoe;

namespace {

// "([0]*3+[1]*2)" -> {0, 0, 0, 1, 1}: Python's list arithmetic for the form the emitter writes.
std::vector<int> read_freq(const std::string& e) {
  std::vector<int> out;
  REQUIRE(e.size() >= 2);
  REQUIRE(e.front() == '(');
  REQUIRE(e.back() == ')');
  std::stringstream ss(e.substr(1, e.size() - 2));
  std::string term;
  while (std::getline(ss, term, '+')) {
    int value = 0, count = 0;
    char a = 0, b = 0, star = 0;
    std::stringstream t(term);
    t >> a >> value >> b >> star >> count;
    REQUIRE(a == '[');
    REQUIRE(b == ']');
    REQUIRE(star == '*');
    REQUIRE(count >= 1);
    out.insert(out.end(), static_cast<size_t>(count), value);
  }
  return out;
}

struct Chunk {
  int layers = 0, mtp = 0;
  bool embedding = false, loss = false;
};

// A layout string's chunks, or REQUIRE-fails on a token outside the grammar.
std::vector<Chunk> read_layout(const std::string& layout) {
  std::vector<Chunk> out;
  std::stringstream ss(layout);
  std::string text;
  while (std::getline(ss, text, '|')) {
    Chunk c;
    for (size_t i = 0; i < text.size();) {
      if (text[i] == 'E') {
        c.embedding = true, ++i;
      } else if (text[i] == 'L') {
        c.loss = true, ++i;
      } else if (text[i] == 'm') {
        ++c.mtp, ++i;
      } else if (text[i] == 't') {
        ++i;
        int n = 1;
        if (i < text.size() && text[i] == '*') {
          size_t used = 0;
          n = std::stoi(text.substr(i + 1), &used);
          REQUIRE(n >= 2);  // "t" for one layer
          i += 1 + used;
        }
        c.layers += n;
      } else {
        FAIL("unexpected character in layout: " << text);
      }
    }
    out.push_back(c);
  }
  return out;
}

PlanSpec plan_with(int vpp, const std::vector<int>& layers) {
  PlanSpec p;
  p.pp = static_cast<int>(layers.size());
  p.vpp = vpp;
  for (int n : layers) p.stages.push_back({"h100-sxm", 0, n, Recompute::kNone});
  return p;
}

}  // namespace

TEST_CASE("moe_layer_freq_expression: runs of the pattern, read back to it") {
  CHECK(moe_layer_freq_expression({0, 0, 0, 1, 1}) == "([0]*3+[1]*2)");
  CHECK(moe_layer_freq_expression({1}) == "([1]*1)");
  CHECK(moe_layer_freq_expression({1, 0, 1}) == "([1]*1+[0]*1+[1]*1)");
  std::vector<int> ds(61, 1);  // DeepSeek-V3: three dense layers, then 58 MoE
  ds[0] = ds[1] = ds[2] = 0;
  CHECK(moe_layer_freq_expression(ds) == "([0]*3+[1]*58)");
  uint64_t x = 7;
  for (int trial = 0; trial < 100; ++trial) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;  // LCG: the same everywhere
    const int n = 1 + static_cast<int>((x >> 33) % 40);
    std::vector<int> pattern(n);
    for (int i = 0; i < n; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      pattern[i] = static_cast<int>((x >> 40) & 1);
    }
    CAPTURE(trial);
    const std::string e = moe_layer_freq_expression(pattern);
    CHECK(read_freq(e) == pattern);
    // Runs are maximal: one term per run, so one "+" per change of value.
    int changes = 0;
    for (int i = 1; i < n; ++i) changes += pattern[i] != pattern[i - 1];
    CHECK(std::count(e.begin(), e.end(), '+') == changes);
  }
}

TEST_CASE("pipeline_layout: hand-computed interleaved case and the even splits it leaves out") {
  ModelSpec m = testing::tiny_dense_model();
  m.num_layers = 12;
  // 6 layers per stage over 4 chunks: 2, 2, 1, 1 on each stage; chunk-major.
  CHECK(pipeline_layout(m, plan_with(4, {6, 6})) == "Et*2|t*2|t*2|t*2|t|t|t|tL");
  CHECK(pipeline_layout(m, plan_with(3, {6, 6})) == "");  // 6 per stage, 2 per chunk: Megatron's
  CHECK(pipeline_layout(m, plan_with(2, {6, 6})) == "");
  CHECK(pipeline_layout(m, plan_with(1, {12})) == "");  // pp 1: no layout
  m.num_layers = 9;
  CHECK(pipeline_layout(m, plan_with(1, {3, 3, 3})) == "");
  CHECK(pipeline_layout(m, plan_with(1, {3, 4, 2})) == "Et*3|t*4|t*2L");
  m.mtp_num_layers = 2;
  CHECK(pipeline_layout(m, plan_with(1, {3, 4, 2})) == "Et*3|t*4|t*2mmL");
}

TEST_CASE("pipeline_layout reads back to the plan's split on generated splits") {
  uint64_t x = 99;
  auto next = [&](int n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
  };
  int spelled = 0, even = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int pp = 2 + next(5), vpp = 1 + next(3), mtp = next(3);
    std::vector<int> layers(pp);
    int total = 0;
    for (int& n : layers) total += n = vpp + next(6);  // every stage holds at least vpp layers
    if (next(4) == 0) {                                // sometimes Megatron's even split
      const int per = vpp * (1 + next(4));
      layers.assign(pp, per);
      total = per * pp;
    }
    ModelSpec m = testing::tiny_dense_model();
    m.num_layers = total;
    m.mtp_num_layers = mtp;
    CAPTURE(trial);
    const std::string layout = pipeline_layout(m, plan_with(vpp, layers));
    CAPTURE(layout);
    bool uniform = total % pp == 0 && (total / pp) % vpp == 0;
    for (int n : layers) uniform = uniform && n == total / pp;
    if (uniform) {
      CHECK(layout.empty());
      ++even;
      continue;
    }
    ++spelled;
    const std::vector<Chunk> chunks = read_layout(layout);
    REQUIRE(chunks.size() == static_cast<size_t>(pp * vpp));
    for (size_t k = 0; k < chunks.size(); ++k) {
      CHECK(chunks[k].embedding == (k == 0));
      CHECK(chunks[k].loss == (k + 1 == chunks.size()));
      CHECK(chunks[k].mtp == (k + 1 == chunks.size() ? mtp : 0));
      CHECK(chunks[k].layers >= 1);
    }
    // Chunk c of stage r is entry c * pp + r; a stage's chunks sum to its layers and differ by
    // at most one, earlier chunks first.
    for (int r = 0; r < pp; ++r) {
      int sum = 0;
      for (int c = 0; c < vpp; ++c) {
        const int n = chunks[static_cast<size_t>(c * pp + r)].layers;
        sum += n;
        if (c > 0) {
          const int before = chunks[static_cast<size_t>((c - 1) * pp + r)].layers;
          CHECK(before >= n);
          CHECK(before - n <= 1);
        }
      }
      CHECK(sum == layers[r]);
    }
  }
  MESSAGE("layouts spelled out: " << spelled << ", even splits left to Megatron: " << even);
  CHECK(spelled >= 150);
  CHECK(even >= 30);
}
