// --pipeline-model-parallel-layout grammar (megatron.md §1.2): E opens the first chunk, L (and m
// per MTP layer) close the last one, chunks listed chunk-major, "t*n" for n decoder layers.
#include <doctest/doctest.h>

#include <sstream>

#include "fixtures.hpp"
#include "emit/megatron_emit.hpp"

using namespace hapmoe;

namespace {
PlanSpec plan_with(int vpp, std::vector<int> layers) {
  PlanSpec p;
  p.pp = static_cast<int>(layers.size());
  p.vpp = vpp;
  for (int n : layers) p.stages.push_back({"h100-sxm", 0, n, Recompute::kNone});
  return p;
}
// Layers per chunk: the counts of t in each |-separated chunk.
std::vector<int> chunk_counts(const std::string& layout) {
  std::vector<int> out;
  std::stringstream ss(layout);
  std::string chunk;
  while (std::getline(ss, chunk, '|')) {
    int n = 0;
    const auto star = chunk.find("t*");
    if (star != std::string::npos) n = std::stoi(chunk.substr(star + 2));
    else if (chunk.find('t') != std::string::npos) n = 1;
    out.push_back(n);
  }
  return out;
}
}  // namespace

TEST_CASE("even split needs no layout; uneven split is spelled out") {
  ModelSpec m = testing::tiny_dense_model();
  m.num_layers = 8;
  CHECK(pipeline_layout(m, plan_with(1, {4, 4})) == "");
  CHECK(pipeline_layout(m, plan_with(1, {5, 3})) == "Et*5|t*3L");
  CHECK(pipeline_layout(m, plan_with(1, {7, 1})) == "Et*7|tL");
}

TEST_CASE("interleaved layout lists chunks chunk-major, earlier chunks take the remainder") {
  ModelSpec m = testing::tiny_dense_model();
  m.num_layers = 10;
  // stage 0: 7 layers over 2 chunks (4 + 3); stage 1: 3 layers (2 + 1)
  CHECK(pipeline_layout(m, plan_with(2, {7, 3})) == "Et*4|t*2|t*3|tL");
}

TEST_CASE("MTP layers close the last chunk") {
  ModelSpec m = testing::tiny_dense_model();
  m.num_layers = 6;
  m.mtp_num_layers = 1;
  CHECK(pipeline_layout(m, plan_with(1, {4, 2})) == "Et*4|t*2mL");
}

TEST_CASE("no empty chunk when every stage holds at least vpp layers") {
  ModelSpec m = testing::tiny_dense_model();
  m.num_layers = 24;
  for (int vpp : {2, 3, 4}) {
    const std::vector<int> layers{vpp, 24 - 3 * vpp, vpp, vpp};
    const auto counts = chunk_counts(pipeline_layout(m, plan_with(vpp, layers)));
    REQUIRE(counts.size() == static_cast<size_t>(4 * vpp));
    int total = 0;
    for (int n : counts) {
      CHECK(n >= 1);
      total += n;
    }
    CHECK(total == 24);
  }
}
