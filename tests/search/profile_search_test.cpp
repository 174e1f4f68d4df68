// The search with a profile: the pruned search still returns the brute-force optimum when
// measured points replace layer and collective terms (the bounds use the same per-layer costs).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <random>

using nlohmann::json;

bool agrees_with_brute_force(const json& doc);  // tests/search/search_test.cpp

namespace {

json profiled_instance(std::mt19937& rng) {
  auto in = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int layers = in(3, 8);
  std::vector<int> freq(layers, 1);
  freq[0] = 0;
  json model = {{"name", "generated"}, {"num_layers", layers}, {"hidden_size", 1024 * in(1, 4)},
                {"ffn_hidden_size", 4096}, {"num_attention_heads", 16}, {"num_query_groups", 4},
                {"vocab_size", 32000}, {"num_experts", 8}, {"moe_router_topk", 2},
                {"moe_ffn_hidden_size", 512 * in(1, 4)}, {"moe_layer_freq", freq}};
  json groups = json::array({{{"gpu", {{"preset", "h100-sxm"}, {"memory_gib", in(16, 80)}, {"reserved_memory_gib", 2}}},
                              {"nodes", 1}, {"gpus_per_node", 4}},
                             {{"gpu", {{"preset", "a100-sxm-80gb"}, {"memory_gib", in(16, 80)}, {"reserved_memory_gib", 2}}},
                              {"nodes", 1}, {"gpus_per_node", 4}}});
  // Points around and away from the searched shapes: exact, interpolated and extrapolated lookups.
  json points = json::array();
  for (int tp : {1, 2}) {
    for (int ep : {1, 4}) {
      const double f = 0.5 * in(1, 8);
      points.push_back({{"kind", "moe"}, {"tp", tp}, {"ep", ep}, {"seq_length", 2048}, {"forward_ms", f}, {"backward_ms", 2 * f}});
    }
  }
  points.push_back({{"kind", "dense"}, {"micro_batch_size", 2}, {"seq_length", 2048}, {"forward_ms", 0.7}, {"backward_ms", 1.5}});
  json colls = json::array();
  for (const char* op : {"all_gather", "all_to_all", "reduce_scatter"}) {
    for (double bytes : {1e5, 1e7}) {
      colls.push_back({{"op", op}, {"ranks", 4}, {"placement", "intra_node"}, {"bytes", bytes}, {"busbw_gbps", 10.0 * in(1, 30)}});
    }
  }
  return {{"model", model},
          {"cluster", {{"name", "generated"}, {"groups", groups}}},
          {"training", {{"global_batch_size", 8 * in(1, 8)}, {"seq_length", 1024 * in(1, 4)}}},
          {"search", {{"tp", {1, 2}}, {"cp", {1}}, {"ep", {1, 2, 4}}, {"micro_batch_size", {1, 2}},
                      {"vpp", {1, 2}}, {"top_k", 3}, {"baselines", false}}},
          {"profile", {{"gpus", {{"h100-sxm", {{"layers", points}, {"collectives", colls}}}}}}}};
}

}  // namespace

TEST_CASE("with a profile, the pruned search returns the brute-force optimum") {
  std::mt19937 rng(8);
  int compared = 0;
  for (int i = 0; i < 40; ++i) compared += agrees_with_brute_force(profiled_instance(rng)) ? 1 : 0;
  CHECK(compared >= 20);
}
