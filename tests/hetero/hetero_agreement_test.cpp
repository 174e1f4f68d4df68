// hetero_search against the independent brute force (hetero_fixtures.hpp) on generated small
// instances: 2-3 groups (identical twins, two and three vendors), 1-2 nodes of 1-2 GPUs, memory
// from roomy to binding, 3-5 layers (all MoE, or one dense), tp/ep lists, recompute none/full,
// output layers light or heavy, scale-out inside and between the groups fast or slow,
// optimizer offload fractions, micro-batch sizes. Deterministic: a fixed seed and a generator of our own (the
// standard distributions differ between libraries).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <map>

#include "hetero/hetero_search.hpp"
#include "hetero_fixtures.hpp"

using namespace hapmoe;
using hapmoe::testing::hetero_brute_force;
using hapmoe::testing::Rng;
using hapmoe::testing::hetero_scenario;
using hapmoe::testing::small_moe_model;
using nlohmann::json;

namespace {

struct Instance {
  json model, cluster, search;
  int seq_length = 1024;
};

json group_json(const std::string& gpu, double memory_gib, int nodes, int gpn) {
  return {{"gpu", {{"preset", gpu}, {"memory_gib", memory_gib}, {"reserved_memory_gib", 5}}},
          {"nodes", nodes},
          {"gpus_per_node", gpn}};
}

// One instance. Three groups only when they are small (each 1 or 2 GPUs), so the brute force
// stays fast.
Instance generate(Rng& rng) {
  static const std::vector<std::string> gpus = {"h800-sxm", "ascend-910b", "h20", "mi300x"};
  // Above the 5 GiB reserve: roomy, a little tight, binding, too small for anything.
  static const std::vector<double> headroom = {75, 3, 1.6, 1.4, 1.25, 1.1, 1.0, 0.9, 0.7, 0.5, 0.3};
  Instance in;
  in.model = small_moe_model();
  in.model["num_layers"] = 3 + rng.below(3);
  in.seq_length = rng.below(2) ? 4096 : 1024;
  const int groups = rng.below(3) == 0 ? 3 : 2;
  const double memory = 5 + rng.pick(headroom);
  json list = json::array();
  const std::string first = rng.pick(gpus);
  std::string second = rng.pick(gpus);
  if (second == first && rng.below(2)) second = first == "h800-sxm" ? "ascend-910b" : "h800-sxm";
  for (int g = 0; g < groups; ++g) {
    int nodes = 1 + rng.below(2), gpn = 1 + rng.below(2);
    if (groups == 3 && nodes * gpn > 2) nodes = 1;
    std::string gpu = g == 0 ? first : second;
    // The third group: an identical twin of group 0 or of group 1, or a third type.
    json grp = group_json(gpu, memory, nodes, gpn);
    if (g == 2) {
      const int kind = rng.below(3);
      if (kind < 2) {
        grp = list[kind];
      } else {
        grp = group_json(rng.pick(gpus), memory, 1, 1 + rng.below(2));
      }
    }
    list.push_back(grp);
  }
  in.cluster = {{"groups", list}, {"inter_group_gbps", std::vector<double>{12.5, 50, 1, 0.1}[rng.below(4)]}};
  static const std::vector<json> recompute = {json::array({"none", "full"}), json::array({"none"}),
                                              json::array({"full"})};
  static const std::vector<json> offload = {json::array({0}), json::array({0, 1}),
                                            json::array({0, 0.5, 1}), json::array({1})};
  static const std::vector<json> mbs = {json::array({1}), json::array({1, 2}), json::array({2})};
  static const std::vector<json> eps = {json::array({1}), json::array({1, 2}), json::array({2, 4})};
  in.search = {{"baselines", false},
               {"top_k", 1},
               {"recompute", rng.pick(recompute)},
               {"optimizer_offload_fraction", rng.pick(offload)},
               {"micro_batch_size", rng.pick(mbs)},
               {"ep", groups == 3 ? json::array({1, 2}) : rng.pick(eps)}};
  if (rng.below(3) == 0) in.search["tp"] = json::array({1});
  // Dense layers among the MoE ones (DeepSeek-V3's first three): the first, or one at random.
  const int layers = in.model["num_layers"].get<int>();
  if (const int dense = rng.below(3); dense > 0) {
    json freq = json::array();
    const int at = dense == 1 ? 0 : rng.below(layers);
    for (int l = 0; l < layers; ++l) freq.push_back(l == at ? 0 : 1);
    in.model["moe_layer_freq"] = freq;
  }
  // An output layer that outweighs the layers (the last stage holds it besides a layer).
  if (rng.below(4) == 0) in.model["vocab_size"] = 32000 * 64;
  // A slow scale-out inside the groups: a pipeline link between nodes takes most of a stage's time.
  if (rng.below(4) == 0) {
    for (json& g : in.cluster["groups"]) g["inter_node_gbps"] = 0.1;
  }
  return in;
}

}  // namespace

TEST_CASE("hetero search equals the brute force on 300 generated instances") {
  Rng rng{20261203};
  constexpr int kInstances = 300;
  int with_plan = 0, memory_bound = 0, bound_with_plan = 0, three_groups = 0, twins = 0, dense = 0;
  double search_s = 0, brute_s = 0;
  for (int i = 0; i < kInstances; ++i) {
    const Instance in = generate(rng);
    CAPTURE(i);
    CAPTURE(in.model.dump());
    CAPTURE(in.cluster.dump());
    CAPTURE(in.search.dump());
    CAPTURE(in.seq_length);
    const Scenario s = hetero_scenario(in.model, in.cluster, in.search, in.seq_length);
    const auto t0 = std::chrono::steady_clock::now();
    double ignoring_memory = 0;
    const double brute = hetero_brute_force(s, &ignoring_memory);
    const auto t1 = std::chrono::steady_clock::now();
    auto r = hetero_search(s);
    const auto t2 = std::chrono::steady_clock::now();
    brute_s += std::chrono::duration<double>(t1 - t0).count();
    search_s += std::chrono::duration<double>(t2 - t1).count();
    REQUIRE(r.ok());
    CHECK(!r.value().stats.budget_reached);
    const bool found = !r.value().plans.empty();
    REQUIRE(found == (brute < 1e300));
    if (found) {
      const PlanEvaluation& best = r.value().plans.front();
      CHECK(best.metrics.iteration_time_s == doctest::Approx(brute).epsilon(1e-9));
      CHECK(best.metrics.fits_memory);
      ++with_plan;
      // Given a threshold just above the best plan (as the offload retry gives one), the DP's
      // caps are at that plan's own stage times: a bound that is not one (a stage's links,
      // the embedding or the output layer taken as longer than they can be) cuts it.
      SearchBudget tight;
      tight.prune_above = brute * (1 + 1e-9);
      tight.within_prune_above = tight.prune_above;
      auto t = hetero_search(s, {}, tight);
      REQUIRE(t.ok());
      REQUIRE_FALSE(t.value().plans.empty());
      CHECK(t.value().plans.front().metrics.iteration_time_s == doctest::Approx(brute).epsilon(1e-9));
    }
    // Memory binds: something the rules pass is faster (or is all there is) but does not fit.
    if (ignoring_memory < 1e300 && brute > ignoring_memory * (1 + 1e-9)) {
      ++memory_bound;
      bound_with_plan += found;
    }
    dense += in.model.contains("moe_layer_freq");
    const auto& groups = s.cluster.groups;
    if (groups.size() == 3) {
      ++three_groups;
      twins += groups[2] == groups[0] || groups[2] == groups[1];
    }
  }
  MESSAGE("generated instances: " << kInstances << ", with a plan: " << with_plan
                                  << ", memory-bound: " << memory_bound << " (of them with a plan: "
                                  << bound_with_plan << "), three groups: " << three_groups
                                  << " (twins: " << twins << "), with a dense layer: " << dense << "; brute force " << brute_s
                                  << " s, search " << search_s << " s");
  CHECK(with_plan >= kInstances / 3);
  CHECK(memory_bound >= kInstances / 5);
  CHECK(bound_with_plan >= kInstances / 10);
  CHECK(with_plan <= kInstances - kInstances / 10);  // some instances have no plan at all
  CHECK(three_groups >= kInstances / 5);
  CHECK(twins >= kInstances / 10);
  CHECK(dense >= kInstances / 2);
}

// One plan per entry (group order, meshes, micro-batch, offload fraction): the k plans the search
// returns are the k best entries of the brute force, each at its best split and recompute.
TEST_CASE("hetero search's top k are the k best entries of the brute force (120 instances)") {
  Rng rng{20261206};
  int compared = 0, with_three = 0;
  for (int i = 0; i < 120; ++i) {
    Instance in = generate(rng);
    in.search["top_k"] = 3;
    in.search["recompute"] = json::array({"none", "full"});  // the brute force's per-stage choices
    CAPTURE(i);
    CAPTURE(in.cluster.dump());
    CAPTURE(in.search.dump());
    const Scenario s = hetero_scenario(in.model, in.cluster, in.search, in.seq_length);
    std::map<std::string, double> entries;
    hetero_brute_force(s, nullptr, nullptr, &entries);
    std::vector<double> want;
    for (const auto& [key, t] : entries) want.push_back(t);
    std::sort(want.begin(), want.end());
    if (want.size() > 3) want.resize(3);
    auto r = hetero_search(s);
    REQUIRE(r.ok());
    CHECK(!r.value().stats.budget_reached);
    REQUIRE(r.value().plans.size() == want.size());
    for (size_t p = 0; p < want.size(); ++p) {
      CHECK(r.value().plans[p].metrics.iteration_time_s == doctest::Approx(want[p]).epsilon(1e-9));
    }
    compared += !want.empty();
    with_three += want.size() == 3;
  }
  MESSAGE("compared " << compared << " instances, " << with_three << " with three entries");
  CHECK(compared >= 60);
}
