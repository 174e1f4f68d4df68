// The pruned search against brute force over the same space: on generated instances the best
// objective must agree exactly (same stage costs, same objective function).
#include <doctest/doctest.h>

#include <functional>
#include <random>
#include <set>

#include "search/top_plans.hpp"
#include "search/layer_split_dp.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/scenario_io.hpp"
#include "hapmoe/result_io.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/search.hpp"
#include "brute_force.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {

const PresetCatalog& presets() {
  static const PresetCatalog c = load_builtin_presets();
  return c;
}

json random_instance(std::mt19937& rng) {
  auto pick = [&](std::vector<const char*> v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  auto in = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int layers = in(3, 10);
  const bool moe = in(0, 3) != 0;
  json model = {{"name", "generated"}, {"num_layers", layers}, {"hidden_size", 1024 * in(1, 4)},
                {"ffn_hidden_size", 2048 * in(1, 4)}, {"num_attention_heads", 16}, {"num_query_groups", 4},
                {"vocab_size", 32000 * in(1, 4)}};
  if (moe) {
    model["num_experts"] = 8 * in(1, 4);
    model["moe_router_topk"] = in(1, 4);
    model["moe_ffn_hidden_size"] = 512 * in(1, 8);
    if (in(0, 1)) {
      std::vector<int> freq(layers, 1);
      freq[0] = 0;
      model["moe_layer_freq"] = freq;
    }
  }
  json groups = json::array();
  const int ngroups = in(1, 3);
  for (int g = 0; g < ngroups; ++g) {
    json gpu = {{"preset", pick({"h100-sxm", "a100-sxm-80gb", "h20", "ascend-910b", "mi300x"})},
                {"memory_gib", in(8, 80)}, {"reserved_memory_gib", 2}};
    groups.push_back({{"gpu", gpu}, {"nodes", 1}, {"gpus_per_node", pick({"2", "4"})[0] - '0'}});
  }
  const int gbs = 8 * in(1, 8);
  json training = {{"global_batch_size", gbs}, {"seq_length", 1024 * in(1, 4)},
                   {"moe_load_imbalance", 1.0 + 0.1 * in(0, 5)}};
  // The alltoall dispatcher: EP overlap on wherever allowed (ep > 1, and vpp > 1 once pp > 1), so
  // one shape's sets have models with and without it.
  if (moe && in(0, 1)) training["moe_token_dispatcher_type"] = "alltoall";
  return {{"model", model},
          {"cluster", {{"name", "generated"}, {"groups", groups}}},
          {"training", training},
          {"search", {{"tp", {1, 2}}, {"cp", {1}}, {"ep", {1, 2, 4}}, {"micro_batch_size", {1, 2}},
                      {"vpp", {1, 2}}, {"top_k", 3}, {"baselines", false},
                      {"memory_margin_fraction", 0}}}};  // the time order alone (brute force's objective)
}

}  // namespace

// Searches `doc` and checks the best plan against brute force (and that no plan has a stage with
// fewer layers than vpp). Returns false when nothing fits (then the search must say so too).
bool agrees_with_brute_force(const json& doc) {
  const auto s = parse_scenario(doc, presets());
  REQUIRE_MESSAGE(s.ok(), s.error().field << ": " << s.error().message);
  const auto r = search_plans(*s);
  REQUIRE(r.ok());
  const double brute = testing::brute_force_best(*s);
  if (brute >= 1e300) {
    CHECK_MESSAGE(r->plans.empty(), doc.dump());
    CHECK(r->diagnosis.has_value());
    return false;
  }
  REQUIRE_MESSAGE(!r->plans.empty(), doc.dump());
  CHECK_MESSAGE(r->plans.front().metrics.iteration_time_s == doctest::Approx(brute).epsilon(1e-12), doc.dump());
  for (const auto& p : r->plans) {
    for (const auto& st : p.plan.stages) CHECK(st.layers >= p.plan.vpp);
  }
  return true;
}

TEST_CASE("pruned search returns the brute-force optimum on 200 generated instances") {
  std::mt19937 rng(20261130);
  int compared = 0, infeasible = 0;
  for (int i = 0; i < 200; ++i) {
    if (agrees_with_brute_force(random_instance(rng))) ++compared; else ++infeasible;
  }
  MESSAGE("compared " << compared << " feasible instances, " << infeasible << " infeasible");
  CHECK(compared >= 150);
}

// Clusters where symmetry matters: the same preset with an overridden field (a derated H100),
// identical groups, and three or four GPU types.
json symmetry_instance(std::mt19937& rng) {
  json doc = random_instance(rng);
  auto in = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int gpn = in(0, 1) ? 2 : 4;
  json base = {{"preset", "h100-sxm"}, {"memory_gib", in(4, 40)}, {"reserved_memory_gib", 1}};
  json derated = base;
  derated["gemm_efficiency"] = 0.4 + 0.05 * in(0, 4);
  json other = {{"preset", in(0, 1) ? "h20" : "a100-sxm-80gb"}, {"memory_gib", in(4, 40)}, {"reserved_memory_gib", 1}};
  json groups = json::array();
  for (const json& g : {base, derated, base, other}) {
    if (groups.size() >= 3 && in(0, 1)) break;
    groups.push_back({{"gpu", g}, {"nodes", 1}, {"gpus_per_node", gpn}});
  }
  doc["cluster"]["groups"] = groups;
  // Memory accounting the bounds must never overestimate: bf16 gradients and moments, FP8 with
  // FP8 parameter gather.
  if (in(0, 2) == 0) {
    doc["training"]["optimizer"] = {{"precision_aware", true}, {"main_grads_dtype", "bf16"},
                                    {"exp_avg_dtype", "bf16"}, {"exp_avg_sq_dtype", "bf16"}};
  }
  if (in(0, 3) == 0) {
    doc["training"]["precision"] = "fp8";
    doc["training"]["fp8_param_gather"] = true;
  }
  return doc;
}

TEST_CASE("exact over overridden presets, identical groups and 3+ types (brute force)") {
  std::mt19937 rng(20261201);
  int compared = 0;
  for (int i = 0; i < 60; ++i) compared += agrees_with_brute_force(symmetry_instance(rng)) ? 1 : 0;
  MESSAGE("compared " << compared << " feasible instances with derated / identical / 3+ groups");
  CHECK(compared >= 30);
}

TEST_CASE("search output is deterministic and top-k is sorted and distinct") {
  std::mt19937 rng(7);
  for (int i = 0; i < 10; ++i) {
    const json doc = random_instance(rng);
    const auto s = parse_scenario(doc, presets());
    REQUIRE(s.ok());
    const auto a = search_plans(*s), b = search_plans(*s);
    REQUIRE(a.ok());
    CHECK(search_result_to_json(*s, *a).dump() == search_result_to_json(*s, *b).dump());
    std::set<std::string> keys;
    for (size_t k = 0; k < a->plans.size(); ++k) {
      CHECK(keys.insert(plan_key(a->plans[k].plan)).second);
      if (k > 0) CHECK(a->plans[k - 1].metrics.iteration_time_s <= a->plans[k].metrics.iteration_time_s);
    }
  }
}

TEST_CASE("no feasible plan gives plans [] with a diagnosis") {
  json doc = {{"model", "deepseek-v3"},
              {"cluster", {{"groups", {{{"gpu", "h100-sxm"}, {"nodes", 1}}}}}},
              {"training", {{"global_batch_size", 64}, {"seq_length", 4096}}}};
  const auto s = parse_scenario(doc, presets());
  REQUIRE(s.ok());
  const auto r = search_plans(*s);
  REQUIRE(r.ok());
  CHECK(r->plans.empty());
  REQUIRE(r->diagnosis.has_value());
  CHECK(r->diagnosis->shortfall_gib > 0);
  CHECK(!r->diagnosis->suggestions.empty());
}

TEST_CASE("cancel flag stops the search") {
  json doc = {{"model", "mixtral-8x7b"}, {"cluster", "h100-64"},
              {"training", {{"global_batch_size", 256}, {"seq_length", 4096}}}};
  const auto s = parse_scenario(doc, presets());
  REQUIRE(s.ok());
  std::atomic<bool> cancel{true};
  SearchControl control;
  control.cancel = &cancel;
  const auto r = search_plans(*s, control);
  REQUIRE(r.ok());
  CHECK(r->stats.cancelled);
  CHECK(r->stats.evaluated == 0);
}

TEST_CASE("progress reaches 1") {
  json doc = {{"model", "mixtral-s"}, {"cluster", "16-1"},
              {"training", {{"global_batch_size", 256}, {"seq_length", 4096}}}};
  const auto s = parse_scenario(doc, presets());
  REQUIRE(s.ok());
  double last = -1;
  SearchControl control;
  control.progress = [&](double f, long long) {
    CHECK(f >= last);
    last = f;
  };
  REQUIRE(search_plans(*s, control).ok());
  CHECK(last == 1.0);
}
