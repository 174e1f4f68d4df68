// candidate_cost: the bounds the search prunes by never exceed what the stage cost model charges
// (memory) and never exceed what a split achieves (time), for every memory accounting.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "search/baselines.hpp"
#include "search/candidate_cost.hpp"
#include "hapmoe/cost_memory.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {
std::vector<json> trainings() {
  const json base = {{"global_batch_size", 64}, {"seq_length", 2048}};
  json pa = base;
  pa["optimizer"] = {{"precision_aware", true}, {"main_grads_dtype", "bf16"}, {"exp_avg_dtype", "bf16"},
                     {"exp_avg_sq_dtype", "bf16"}};
  json fp8 = base;
  fp8["precision"] = "fp8";
  fp8["fp8_param_gather"] = true;
  json bf16_reduce = base;
  bf16_reduce["grad_reduce_in_bf16"] = true;
  return {base, pa, fp8, bf16_reduce};
}
}  // namespace

TEST_CASE("memory bounds never exceed the stage cost model's peak memory") {
  for (const json& training : trainings()) {
    CAPTURE(training.dump());
    const Scenario s = testing::scenario_from({{"model", testing::small_moe_model()}, {"cluster", "h100-16"},
                                               {"training", training}});
    StageModelCache cache(s);
    Mesh m;
    m.tp = 2; m.dp = 2; m.ep = 4; m.pp = 4; m.sequence_parallel = true;
    const StageCostModel* model = cache.get(m, 0);
    const GroupLayerTimes times = group_layer_times(*model, s.model.num_layers);
    const GroupBoundTerms terms = group_bound_terms(s, *model, times, m);
    const double reserved = s.cluster.groups[0].gpu.reserved_memory_gib * kGiB;
    for (int stage = 0; stage < m.pp; ++stage) {
      const double in_flight = in_flight_microbatches(stage, m.pp, m.vpp, num_microbatches(s.training, m));
      for (int first = 0; first < s.model.num_layers; ++first) {
        for (int n = 1; first + n <= s.model.num_layers; ++n) {
          const StageCost c = model->cost(stage, first, n, StageLinks{}, m);
          const double bound = terms.lightest_bytes[n] + in_flight * terms.lightest_act_bytes[n] + reserved;
          CHECK(bound <= c.peak_bytes() * (1 + 1e-12));
          // Time: the n cheapest layers never cost more than these n layers.
          CHECK(times.cheapest_sum_s[n] <= c.per_microbatch_s() * (1 + 1e-12));
        }
      }
    }
    // The static bound: all weights, gradients and optimizer state over all stages.
    double charged = 0;
    for (int stage = 0; stage < m.pp; ++stage) charged += model->cost(stage, 2 * stage, 2, StageLinks{}, m).weights.total();
    const double need = static_memory_need_bytes(s, m, model->total_dense_params(), model->total_expert_params());
    const double room = m.pp * (s.cluster.groups[0].gpu.memory_gib - s.cluster.groups[0].gpu.reserved_memory_gib) * kGiB;
    CHECK(static_memory_room_bytes(s, {0}, {m.pp}) == doctest::Approx(room).epsilon(1e-12));
    CHECK(need <= charged * (1 + 1e-12));
  }
}

// PositionBound::least_time_for_layers takes the r smallest breakpoints by merging the
// positions' non-decreasing runs: the same values as sorting all of them, with ties, short runs,
// empty runs and fewer values than asked for, through both the linear-scan and the heap merge.
TEST_CASE("smallest_of_sorted_runs: the r smallest values of non-decreasing runs, as a full sort gives") {
  std::mt19937 rng(7);
  std::vector<hapmoe::SortedRunHead> heads;
  for (int trial = 0; trial < 300; ++trial) {
    const int runs = static_cast<int>(rng() % 40);  // up to 16: linear scans; more: a heap
    std::vector<std::vector<double>> values(runs);
    std::vector<int> lengths(runs);
    std::vector<double> all;
    for (int i = 0; i < runs; ++i) {
      lengths[i] = static_cast<int>(rng() % 12);  // 0 = an empty run
      double v = static_cast<double>(rng() % 5);
      for (int n = 0; n < lengths[i]; ++n) {
        v += static_cast<double>(rng() % 3);  // steps of 0 make ties within a run
        values[i].push_back(v);
        all.push_back(v);
      }
    }
    const int limit = static_cast<int>(rng() % 80);
    std::vector<double> out;
    int calls = 0;
    const int found = hapmoe::smallest_of_sorted_runs(
        lengths, [&](int i, int n) { ++calls; return values[i][n - 1]; }, limit, &out, &heads);
    std::sort(all.begin(), all.end());
    const int expect = std::min<int>(limit, static_cast<int>(all.size()));
    CHECK(found == expect);
    REQUIRE(out.size() == static_cast<size_t>(limit) + 1);
    CHECK(out[0] == 0);
    for (int r = 1; r <= limit; ++r) CHECK(out[r] == (r <= expect ? all[r - 1] : 1e300));
    CHECK(calls <= runs + limit);  // a merge: never every value
  }
}

namespace {
// DeepSeek-V2-Lite (1 dense + 26 MoE layers: two layer kinds) on three node groups of 32 GPUs.
Scenario deepseek_three_types() {
  return testing::scenario_from(
      {{"model", "deepseek-v2-lite"},
       {"cluster",
        {{"name", "three types"},
         {"groups",
          {{{"gpu", "h100-sxm"}, {"nodes", 4}, {"gpus_per_node", 8}},
           {{"gpu", "a100-sxm-80gb"}, {"nodes", 4}, {"gpus_per_node", 8}},
           {{"gpu", "h20"}, {"nodes", 4}, {"gpus_per_node", 8}}}}}},
       {"training", {{"global_batch_size", 1024}, {"seq_length", 4096}, {"moe_token_dispatcher_type", "flex"}}}});
}

// Each group's layer times and bound terms for one mesh (kept in place: terms point at times).
struct ThreeGroups {
  explicit ThreeGroups(const Scenario& s) : cache(s) {
    mesh.tp = 2; mesh.dp = 4; mesh.ep = 8; mesh.pp = 4; mesh.sequence_parallel = true;
    times.reserve(3);
    terms.reserve(3);
    for (int g = 0; g < 3; ++g) {
      times.push_back(group_layer_times(*cache.get(mesh, g), s.model.num_layers));
      terms.push_back(group_bound_terms(s, *cache.get(mesh, g), times.back(), mesh));
    }
  }
  StageModelCache cache;
  Mesh mesh;
  std::vector<GroupLayerTimes> times;
  std::vector<GroupBoundTerms> terms;
};
}  // namespace

// The least-time sum by layer kind (a few minima, then one add per layer) is the per-layer one.
TEST_CASE("cheapest_layers_sum_s by kind equals the minimum per layer, summed in layer order") {
  const Scenario s = deepseek_three_types();
  const ThreeGroups groups(s);
  const std::vector<GroupLayerTimes>& times = groups.times;
  for (const std::vector<int>& pick : std::vector<std::vector<int>>{{0}, {1}, {2}, {0, 1}, {1, 2}, {2, 0}, {0, 1, 2}}) {
    std::vector<const GroupLayerTimes*> tv;
    for (int g : pick) tv.push_back(&times[g]);
    double least[kMaxLayerKinds];
    size_t kinds = 0;
    REQUIRE(cheapest_kind_times(tv, s.model.num_layers, least, &kinds));
    CHECK(kinds == 2);
    double per_layer = 0;
    for (int l = 0; l < s.model.num_layers; ++l) {
      double best = 1e300;
      for (const GroupLayerTimes* t : tv) best = std::min(best, t->layer_s[l]);
      per_layer += best;
    }
    CHECK(cheapest_layers_sum_s(tv, s.model.num_layers) == per_layer);  // bit for bit
    CHECK(kind_times_sum_s(*tv.front()->kind_of, least) == per_layer);
  }
}

// PositionBound keeps a group's rows per (terms, pp, vpp, micro-batches): one object reset through
// pipelines that repeat and alternate answers as a fresh one built for each.
TEST_CASE("PositionBound reset across pipelines answers as a fresh one") {
  const Scenario s = deepseek_three_types();
  const ThreeGroups groups(s);
  std::vector<const GroupBoundTerms*> set = {&groups.terms[0], &groups.terms[1], &groups.terms[2]};
  struct Pipeline {
    int pp;
    long long m;
    int vpp;
    std::vector<int> blocks;
  };
  const std::vector<Pipeline> pipelines = {{6, 64, 1, {2, 2, 2}}, {12, 128, 1, {4, 4, 4}}, {6, 64, 1, {2, 2, 2}},
                                           {6, 64, 3, {2, 2, 2}}, {6, 2, 1, {2, 2, 2}}, {12, 128, 1, {4, 4, 4}},
                                           {12, 3, 1, {4, 4, 4}}, {3, 16, 1, {1, 1, 1}}};
  // (fewer micro-batches than stages keep fewer in flight: other rows for the same pp and vpp)
  PositionBound reused(set, pipelines[0].pp, s.model.num_layers, pipelines[0].m, pipelines[0].vpp, pipelines[0].blocks);
  int bounded = 0;
  for (const Pipeline& p : pipelines) {
    CAPTURE(p.pp);
    CAPTURE(p.m);
    CAPTURE(p.vpp);
    reused.reset(p.pp, s.model.num_layers, p.m, p.vpp, p.blocks);
    const PositionBound fresh(set, p.pp, s.model.num_layers, p.m, p.vpp, p.blocks);
    PositionBound::Options any(p.pp, std::vector<int>{0, 1, 2});
    PositionBound::Options first_fixed = any;
    first_fixed[0] = {1};
    for (const PositionBound::Options* o : {&any, &first_fixed}) {
      for (int free_from : {-1, 0, 1}) {
        const double a = reused.lower_bound_s(*o, free_from), b = fresh.lower_bound_s(*o, free_from);
        CHECK(a == b);
        if (a < 1e300) {
          ++bounded;
          CHECK(reused.reaches(*o, a * 1.001, free_from) == fresh.reaches(*o, a * 1.001, free_from));
          CHECK(reused.reaches(*o, a * 0.999, free_from) == fresh.reaches(*o, a * 0.999, free_from));
        }
      }
      for (int from = 0; from <= p.pp; ++from) {
        CHECK(reused.layers_fit_from(*o, from) == fresh.layers_fit_from(*o, from));
        std::vector<double> fa, fb;
        reused.least_time_for_layers(*o, from, &fa);
        fresh.least_time_for_layers(*o, from, &fb);
        CHECK(fa == fb);
      }
    }
  }
  CHECK(bounded > 0);
}

// The Megatron-default baseline's type-blind cache takes the main type's models from the search's
// cache: for every stage, layer range and link, the same costs as models of its own.
TEST_CASE("a cache with models_from shares the models of equal node groups, and they cost the same") {
  const Scenario s = deepseek_three_types();
  Scenario blind = s;
  blind.cluster = homogeneous_cluster_like(s.cluster, 1);  // every group an A100 group
  StageModelCache search(s);
  StageModelCache shared(blind, search);
  StageModelCache own(blind);
  Mesh m;
  m.tp = 2; m.dp = 4; m.ep = 8; m.pp = 4; m.sequence_parallel = true;
  StageLinks links;
  links.prev = stage_link(blind.cluster, m.stage_gpus(), 0, 0, 1, 0);
  for (int g = 0; g < 3; ++g) {
    CAPTURE(g);
    CHECK(shared.get(m, g) == search.get(m, 1));  // the search's A100 models, not copies
    for (int stage = 0; stage < m.pp; ++stage) {
      for (int first = 0; first < s.model.num_layers; first += 5) {
        const int n = std::min(7, s.model.num_layers - first);
        const StageCost a = shared.get(m, g)->cost(stage, first, n, links, m);
        const StageCost b = own.get(m, g)->cost(stage, first, n, links, m);
        CHECK(a.per_microbatch_s() == b.per_microbatch_s());
        CHECK(a.peak_bytes() == b.peak_bytes());
      }
    }
  }
  // A node group that none of the other cluster's groups has keeps models of its own.
  Scenario other = s;
  other.cluster.groups[2].gpus_per_node = 4;
  StageModelCache mixed(other, search);
  CHECK(mixed.get(m, 0) == search.get(m, 0));
  CHECK(mixed.get(m, 2) != search.get(m, 2));
  CHECK(mixed.get(m, 2)->cost(1, 0, 3, links, m).per_microbatch_s() !=
        search.get(m, 2)->cost(1, 0, 3, links, m).per_microbatch_s());
}

// Two groups, one stage each, 2 dense layers then 4 MoE layers (group A: 1 s and 4 s per layer,
// group B: 2 s and 8 s), 10 micro-batches. By hand: the layers' least times sum to 18 s. All six
// layers at their least time need C >= 6 / (1/1 + 1/2) = 4 s (fractional) or 4 s (A holds 4, B 2);
// the four MoE layers alone need C >= 4 / (1/4 + 1/8) = 10.67 s, or 12 s in whole layers (A 3,
// B 1). So T >= 18 + 9 x 10.67 = 114 s (fractional) and 18 + 9 x 12 = 126 s; the best split
// (A: 2 dense + 3 MoE = 14 s, B: 1 MoE = 8 s) is 22 + 9 x 14 = 148 s, above both. Without the MoE
// term the bound was 18 + 9 x 9 = 99 s.
TEST_CASE("set_lower_bound_s bounds the MoE layers at their own time (dense layers cheaper)") {
  GroupLayerTimes a, b;
  a.layer_s = {1, 1, 4, 4, 4, 4};
  a.min_layer_s = 1;
  a.cheapest_sum_s = {0, 1, 2, 6, 10, 14, 18};
  a.cheapest_moe_sum_s = {0, 4, 8, 12, 16};
  b.layer_s = {2, 2, 8, 8, 8, 8};
  b.min_layer_s = 2;
  b.cheapest_sum_s = {0, 2, 4, 12, 20, 28, 36};
  b.cheapest_moe_sum_s = {0, 8, 16, 24, 32};
  const std::vector<const GroupLayerTimes*> times = {&a, &b};
  const std::vector<int> stages = {1, 1};
  CHECK(set_lower_bound_s(times, stages, 6, 10, 1, true) == doctest::Approx(18 + 9 * (4 / 0.375)));
  CHECK(set_lower_bound_s(times, stages, 6, 10, 1, false) == doctest::Approx(18 + 9 * 12.0));
  // A split's objective: A holds the dense layers and 3 MoE (14 s), B one MoE layer (8 s).
  const double best = 14 + 8 + 9 * 14.0;
  CHECK(set_lower_bound_s(times, stages, 6, 10, 1, false) <= best);
  // All MoE (no dense layers): the MoE term is the all-layers term.
  GroupLayerTimes c = a;
  c.layer_s = {4, 4, 4, 4, 4, 4};
  c.min_layer_s = 4;
  c.cheapest_sum_s = {0, 4, 8, 12, 16, 20, 24};
  c.cheapest_moe_sum_s = {0, 4, 8, 12, 16, 20, 24};
  CHECK(set_lower_bound_s({&c}, {2}, 6, 10, 1, true) == doctest::Approx(24 + 9 * 12.0));
}
