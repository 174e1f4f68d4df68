// Optimizer CPU offload: the optimizer bytes a GPU keeps, the host part of the step, what a stage
// saves, and the search's retry with offload when nothing fits without it (issue 9: Mixtral-L on
// the paper's clusters 16-1, 16-3 and 24-1).
#include <doctest/doctest.h>

#include "search/candidate_cost.hpp"
#include "cost/cost_compute.hpp"
#include "hapmoe/cost_memory.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/search.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;

TEST_CASE("weight_bytes: HybridDeviceOptimizer keeps (1 - f) x 12 bytes of optimizer state") {
  TrainingSpec t;
  CHECK(weight_bytes(t).optimizer == 12);
  CHECK(weight_bytes(t, 0.5).optimizer == 6);
  CHECK(weight_bytes(t, 1).optimizer == 0);
  // The precision-aware dtypes do not apply to the offloading optimizer: fp32 copies throughout.
  t.optimizer.precision_aware = true;
  t.optimizer.exp_avg_dtype = t.optimizer.exp_avg_sq_dtype = "bf16";
  CHECK(weight_bytes(t).optimizer == 8);
  CHECK(weight_bytes(t, 0.25).optimizer == 9);
  CHECK(weight_bytes(t, 0.25).grad == 4);  // the main-gradient buffer stays on the GPU
}

TEST_CASE("optimizer_offload_time_s: the longest of the copies and the CPU Adam step") {
  GpuSpec g;
  g.host_link_gbps = 25;
  // 1e9 parameters: gradients 4 GB / 25 GB/s = 0.16 s; parameters back 2 GB -> 0.08 s;
  // CPU Adam 28 GB / 50 GB/s = 0.56 s.
  CHECK(optimizer_offload_time_s(1e9, 4, 2, g) == doctest::Approx(0.56).epsilon(1e-12));
  g.host_link_gbps = 5;  // a slow link: 4 GB / 5 GB/s = 0.8 s
  CHECK(optimizer_offload_time_s(1e9, 4, 2, g) == doctest::Approx(0.8).epsilon(1e-12));
  CHECK(optimizer_offload_time_s(0, 4, 2, g) == 0);
}

TEST_CASE("stage cost: offload moves the optimizer state off the GPU and adds host time") {
  const Scenario s =
      testing::scenario_from({{"model", testing::small_moe_model()},
                              {"cluster", "h100-16"},
                              {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}}});
  StageModelCache cache(s);
  Mesh m;
  m.tp = 1;
  m.dp = 4;
  m.ep = 4;
  m.pp = 4;
  const StageCostModel* model = cache.get(m, 0);
  const StageCost none = model->cost(1, 2, 2, StageLinks{}, m);
  Mesh half = m;
  half.optimizer_offload_fraction = 0.5;
  const StageCost off = model->cost(1, 2, 2, StageLinks{}, half);
  CHECK(off.weights.optimizer_bytes ==
        doctest::Approx(none.weights.optimizer_bytes / 2).epsilon(1e-12));
  CHECK(off.weights.gradients_bytes == none.weights.gradients_bytes);
  CHECK(off.peak_bytes() ==
        doctest::Approx(none.peak_bytes() - none.weights.optimizer_bytes / 2).epsilon(1e-12));
  const double owned = none.weights.optimizer_bytes / 12;
  const GpuSpec& gpu = s.cluster.groups[0].gpu;
  const double gpu_part =
      optimizer_step_time_s(owned / 2,
                            model->layer(2).dense_params + model->layer(2).expert_params +
                                model->layer(3).dense_params + model->layer(3).expert_params,
                            gpu);
  CHECK(off.optimizer_s ==
        doctest::Approx(gpu_part + optimizer_offload_time_s(owned / 2, 4, 2, gpu)).epsilon(1e-9));
  CHECK(off.optimizer_s > none.optimizer_s);
}

// The paper trained Mixtral-L on 16-1, 16-3 and 24-1. Upstream mode keeps a plan on one vendor's
// GPUs (rule same_collective_library), so on 16-3 and 24-1 it uses the Ascend (or MI300X) part, and
// 16-1's 8-GPU halves cannot hold the model at all; 16-1-h (16 H800) stands in for it. Without
// offload nothing fits on any of them.
TEST_CASE("search: Mixtral-L plans on 16-1-h, 16-3 and 24-1 with optimizer offload") {
  for (const char* cluster : {"16-1-h", "16-3", "24-1"}) {
    CAPTURE(cluster);
    Scenario s =
        testing::scenario_from({{"model", "mixtral-l"},
                                {"cluster", cluster},
                                {"training", {{"global_batch_size", 512}, {"seq_length", 4096}}},
                                {"search", {{"top_k", 1}, {"baselines", false}}}});
    auto r = search_plans(s);
    REQUIRE(r.ok());
    REQUIRE_FALSE(r->plans.empty());
    CHECK(r->stats.offload_retried);
    CHECK(r->plans[0].plan.optimizer_offload_fraction > 0);
    s.search.optimizer_offload_fraction = {0};  // offload ruled out: no plan
    auto without = search_plans(s);
    REQUIRE(without.ok());
    CHECK(without->plans.empty());
    CHECK(without->diagnosis.has_value());
  }
}

TEST_CASE("search: no offload retry when a plan fits, or when offload is not allowed") {
  Scenario s =
      testing::scenario_from({{"model", testing::small_moe_model()},
                              {"cluster", "h100-16"},
                              {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}},
                              {"search", {{"top_k", 1}, {"baselines", false}}}});
  auto r = search_plans(s);
  REQUIRE(r.ok());
  REQUIRE_FALSE(r->plans.empty());
  CHECK_FALSE(r->stats.offload_retried);
  CHECK(r->plans[0].plan.optimizer_offload_fraction == 0);
  CHECK(offload_fallback_scenario(s).has_value());
  s.training.use_distributed_optimizer = false;
  s.training.overlap_param_gather = false;
  CHECK_FALSE(offload_fallback_scenario(s).has_value());
  s.training.use_distributed_optimizer = true;
  s.search.optimizer_offload_fraction = {0.5};
  CHECK_FALSE(offload_fallback_scenario(s).has_value());
}

// The retry wants only offloaded plans faster than the k-th plan found without offload: its build
// bounds whole mesh shapes against that time (the group sets of 3 distinct groups: 7 per shape)
// and its entries against it. Merged with the first pass, its plans must be exactly those of one
// search over every fraction listed. Mixtral 8x7B on H20 + A800 + L40S: the fastest plan without
// offload recomputes, and the k best mix fractions 0 and 0.5; Mixtral-L on H100 + 2 A100 types:
// all of them offload.
TEST_CASE("search: the offload retry's plans are those of a search over fractions 0, 0.5 and 1 listed") {
  struct Case {
    const char* model;
    std::vector<const char*> gpus;
  };
  for (const Case& c : {Case{"mixtral-8x7b", {"h20", "a800", "l40s"}},
                        Case{"mixtral-l", {"h100-sxm", "a100-sxm-40gb", "a100-sxm-80gb"}}}) {
    CAPTURE(c.model);
    nlohmann::json groups = nlohmann::json::array();
    for (const char* g : c.gpus) groups.push_back({{"gpu", g}, {"nodes", 1}});
    Scenario s = testing::scenario_from({{"model", c.model},
                                         {"cluster", {{"groups", groups}}},
                                         {"training", {{"global_batch_size", 256}, {"seq_length", 4096}}},
                                         {"search",
                                          {{"mode", "megatron"},
                                           {"top_k", 5},
                                           {"memory_margin_fraction", 0},
                                           {"baselines", false}}}});
    auto retried = search_plans(s);
    REQUIRE(retried.ok());
    REQUIRE(retried->plans.size() == 5);
    s.search.optimizer_offload_fraction = {0, 0.5, 1.0};
    auto listed = search_plans(s);
    REQUIRE(listed.ok());
    REQUIRE(listed->plans.size() == 5);
    bool offloads = false;
    for (size_t i = 0; i < 5; ++i) {
      CAPTURE(i);
      CHECK(retried->plans[i].metrics.iteration_time_s == doctest::Approx(listed->plans[i].metrics.iteration_time_s).epsilon(1e-9));
      offloads = offloads || retried->plans[i].plan.optimizer_offload_fraction > 0;
    }
    CHECK(offloads);  // the retry ran and found what the first pass could not
  }
}
