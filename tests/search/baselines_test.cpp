// The baselines: Megatron-default and the best uniform split (computed by the search), the
// Metis-style and even-split baselines (searches of their own). Each is checked against its
// definition and against the chain best <= even split <= uniform <= Megatron-default.
#include "search/baselines.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>

#include "hapmoe/planner.hpp"
#include "search/candidate_cost.hpp"
#include "search/even_split_baseline.hpp"
#include "search/metis_baseline.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {

json paper_doc(const std::string& cluster) {
  return {{"model", "mixtral-s"},
          {"cluster", cluster},
          {"training",
           {{"global_batch_size", 256},
            {"seq_length", 4096},
            {"moe_token_dispatcher_type", "allgather"}}},
          {"search", {{"micro_batch_size", {1}}, {"top_k", 1}}}};
}

// The paper's clusters mix vendors; its runs span them (docs/reproduce.md).
Scenario paper_scenario(const json& doc) {
  Scenario s = testing::scenario_from(doc);
  s.search.assume_cross_vendor_collectives = true;
  return s;
}

json node(const json& gpu, int nodes) {
  return {{"gpu", gpu}, {"nodes", nodes}, {"gpus_per_node", 8}};
}

Scenario with_groups(const json& groups) {
  json d = paper_doc("16-1");
  d["cluster"] = {{"name", "t"}, {"groups", groups}};
  return testing::scenario_from(d);
}

SearchResult searched(const Scenario& s) {
  auto r = search_plans(s);
  REQUIRE(r.ok());
  REQUIRE(!r->plans.empty());
  return r.value();
}

double time_of(const PlanEvaluation& e) { return e.metrics.iteration_time_s; }

bool same_mesh(const PlanSpec& a, const PlanSpec& b) {
  return a.tp == b.tp && a.cp == b.cp && a.pp == b.pp && a.dp == b.dp && a.ep == b.ep &&
         a.etp == b.etp && a.vpp == b.vpp && a.micro_batch_size == b.micro_batch_size;
}

std::vector<int> layers_of(const PlanSpec& p) {
  std::vector<int> v;
  for (const auto& st : p.stages) v.push_back(st.layers);
  return v;
}

}  // namespace

TEST_CASE("main GPU type: most GPUs summed over its groups, first-listed on ties") {
  CHECK(main_gpu_group(paper_scenario(paper_doc("24-1")).cluster) ==
        1);  // H800 1x8 + 910B 2x8
  CHECK(main_gpu_group(paper_scenario(paper_doc("24-3")).cluster) ==
        0);  // 910B 2x8 + MI300X 1x8
  CHECK(main_gpu_group(paper_scenario(paper_doc("16-1")).cluster) == 0);  // tie
  // A100 in two groups (16 GPUs) outnumbers the H100 group (8 GPUs) listed first...
  const Scenario s =
      with_groups({node("h100-sxm", 1), node("a100-sxm-80gb", 1), node("a100-sxm-80gb", 1)});
  CHECK(gpu_types_by_count(s.cluster) == std::vector<int>({1, 0}));
  // ...but not 24 H100s.
  Scenario bigger = s;
  bigger.cluster.groups[0].nodes = 3;
  CHECK(gpu_types_by_count(bigger.cluster) == std::vector<int>({0, 1}));
}

TEST_CASE("the type-blind cluster: every group the main type on one fabric, node shapes kept") {
  const Scenario s = paper_scenario(paper_doc("24-1"));
  const ClusterSpec blind = homogeneous_cluster_like(s.cluster, 1);
  REQUIRE(blind.groups.size() == 2);
  for (const auto& g : blind.groups) {
    CHECK(g.gpu == s.cluster.groups[1].gpu);
    CHECK(g.inter_node_gbps == s.cluster.groups[1].inter_node_gbps);
  }
  CHECK(blind.groups[0].nodes == 1);
  CHECK(blind.groups[1].nodes == 2);
  CHECK(blind.link_between_groups_gbps(0, 1) == s.cluster.groups[1].inter_node_gbps);
  CHECK(s.cluster.link_between_groups_gbps(0, 1) <
        blind.link_between_groups_gbps(0, 1));  // 12.5 GB/s assumed
}

TEST_CASE("uniform and Megatron-default follow their rules; best <= uniform <= Megatron-default") {
  for (const char* cluster : {"16-1", "24-1", "32-3"}) {
    CAPTURE(cluster);
    const Scenario s = paper_scenario(paper_doc(cluster));
    const SearchResult r = searched(s);
    REQUIRE(r.uniform);
    REQUIRE(r.megatron_default);
    for (const PlanEvaluation* b : {&r.uniform->evaluation, &r.megatron_default->evaluation}) {
      CHECK(layers_of(b->plan) == even_split(s.model.num_layers, b->plan.pp));
      for (size_t i = 1; i < b->plan.stages.size(); ++i)
        CHECK(b->plan.stages[i - 1].group <= b->plan.stages[i].group);
    }
    std::set<int> used;
    for (const auto& st : r.megatron_default->evaluation.plan.stages) used.insert(st.group);
    CHECK(used.size() == s.cluster.groups.size());
    const double best = time_of(r.plans.front());
    CHECK(best <= time_of(r.uniform->evaluation));
    CHECK(time_of(r.uniform->evaluation) <= time_of(r.megatron_default->evaluation));
    CHECK(r.megatron_default->speedup ==
          doctest::Approx(time_of(r.megatron_default->evaluation) / best));
  }
}

TEST_CASE("Megatron-default ranks meshes on the type-blind cluster and runs the first that fits") {
  const Scenario s = paper_scenario(paper_doc("16-1"));
  Scenario blind = s;
  blind.cluster = homogeneous_cluster_like(s.cluster, main_gpu_group(s.cluster));
  const SearchResult real = searched(s);
  const SearchResult seen = searched(blind);
  REQUIRE(real.megatron_default);
  REQUIRE(seen.megatron_default);
  // On a homogeneous cluster the blind choice is the best even split over all groups.
  const PlanEvaluation& first = seen.megatron_default->evaluation;
  CHECK(time_of(first) == doctest::Approx(time_of(seen.uniform->evaluation)));
  // The real cluster's pick ranks no better on the blind cluster...
  const auto ranked = evaluate_plan(blind, real.megatron_default->evaluation.plan);
  REQUIRE(ranked.ok());
  CHECK(time_of(*ranked) >= time_of(first));
  // ...and when it is another mesh, the blind first choice does not fit the real GPUs (here:
  // 74.8 GiB per H800 with 4 stages of 6 layers, over a 910B's 64 GiB).
  if (!same_mesh(real.megatron_default->evaluation.plan, first.plan)) {
    PlanSpec on_real = first.plan;
    for (auto& st : on_real.stages) st.gpu = s.cluster.groups[st.group].gpu.id;
    const auto costed = evaluate_plan(s, on_real);
    REQUIRE(costed.ok());
    CHECK_FALSE(costed->metrics.fits_memory);
  }
  CHECK(time_of(real.megatron_default->evaluation) > time_of(first));  // 910B is slower
}

TEST_CASE("on a homogeneous cluster every baseline equals the best even split") {
  const Scenario s = paper_scenario(paper_doc("16-3-h"));
  const SearchResult r = searched(s);
  const EvenSplitBaseline even = even_split_baseline(s);
  REQUIRE(even.plan);
  CHECK(time_of(r.megatron_default->evaluation) == doctest::Approx(time_of(r.uniform->evaluation)));
  CHECK(time_of(r.uniform->evaluation) == doctest::Approx(time_of(*even.plan)));
  const MetisStyleBaseline m = metis_style_baseline(s);
  REQUIRE(m.plan);
  CHECK(*m.ep == r.plans.front().plan.ep);
  CHECK(*m.etp == r.plans.front().plan.etp);
  CHECK(time_of(*m.plan) == doctest::Approx(time_of(r.plans.front())));
}

TEST_CASE("even-split baseline: even split, order searched; best <= even split <= uniform") {
  for (const char* cluster : {"16-1", "24-1"}) {
    CAPTURE(cluster);
    const Scenario s = paper_scenario(paper_doc(cluster));
    const SearchResult r = searched(s);
    const EvenSplitBaseline even = even_split_baseline(s);
    REQUIRE(even.plan);
    CHECK(layers_of(even.plan->plan) == even_split(s.model.num_layers, even.plan->plan.pp));
    CHECK(time_of(r.plans.front()) <= time_of(*even.plan));
    CHECK(time_of(*even.plan) <= time_of(r.uniform->evaluation));
  }
}

TEST_CASE("Metis-style: EP/ETP of the homogeneous main-type search, the rest searched") {
  const Scenario s = paper_scenario(paper_doc("24-1"));
  const MetisStyleBaseline m = metis_style_baseline(s);
  REQUIRE(m.plan);
  REQUIRE(m.homogeneous_group);
  CHECK(*m.homogeneous_group == main_gpu_group(s.cluster));
  Scenario homogeneous = s;
  homogeneous.cluster = homogeneous_cluster_like(s.cluster, *m.homogeneous_group);
  const SearchResult h = searched(homogeneous);
  CHECK(*m.ep == h.plans.front().plan.ep);
  CHECK(*m.etp == h.plans.front().plan.etp);
  CHECK(m.plan->plan.ep == *m.ep);
  CHECK(m.plan->plan.etp == *m.etp);
  CHECK(time_of(searched(s).plans.front()) <= time_of(*m.plan));
}

TEST_CASE("Metis-style falls back to the next GPU type when the main type's cluster has no plan") {
  // 16 GPUs with 8 GiB (3 GiB usable) cannot hold Mixtral-S alone; 8 H100s are the second type.
  const Scenario s =
      with_groups({node({{"preset", "h100-sxm"}, {"memory_gib", 8}}, 2), node("h100-sxm", 1)});
  REQUIRE(main_gpu_group(s.cluster) == 0);
  const MetisStyleBaseline m = metis_style_baseline(s);
  REQUIRE(m.homogeneous_group);
  CHECK(*m.homogeneous_group == 1);
  REQUIRE(m.ep);
}

TEST_CASE("SortedEntries reads entries in (bound, shape, set) order, sorting only as far as read") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<SearchEntry> entries;
    const int n = static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) {
      // Few distinct bounds and shapes, so that ties on the bound and on the shape are common.
      entries.push_back({static_cast<double>(rng() % 7) * 0.5, static_cast<int>(rng() % 5), i});
    }
    std::shuffle(entries.begin(), entries.end(), rng);
    std::vector<SearchEntry> want = entries;
    std::sort(want.begin(), want.end(), [](const SearchEntry& a, const SearchEntry& b) {
      return std::tie(a.bound_s, a.shape, a.set) < std::tie(b.bound_s, b.shape, b.set);
    });
    SortedEntries sorted;
    sorted.assign(entries);
    REQUIRE(sorted.size() == want.size());
    // Read a prefix first: what was read stays in place while later entries are sorted.
    const size_t prefix = n > 0 ? rng() % n : 0;
    std::vector<const SearchEntry*> read;
    for (size_t i = 0; i < prefix; ++i) read.push_back(&sorted[i]);
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK(sorted[i].bound_s == want[i].bound_s);
      CHECK(sorted[i].shape == want[i].shape);
      CHECK(sorted[i].set == want[i].set);
    }
    for (size_t i = 0; i < prefix; ++i) CHECK(read[i] == &sorted[i]);
    // any_order(): every entry once (sets are unique here).
    std::set<int> seen;
    for (const SearchEntry& e : sorted.any_order()) seen.insert(e.set);
    CHECK(seen.size() == entries.size());
  }
}
