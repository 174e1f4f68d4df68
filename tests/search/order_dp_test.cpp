// order_dp: every stage order of an entry in one DP. The search keeps one plan per (mesh shape,
// group set) entry, its best order and split; on generated clusters of three to five distinct
// GPU groups (up to 120 orders per set) the k plans returned are the k best entries of a brute
// force over every mesh, set, order and split.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "brute_force.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/search.hpp"
#include "search/candidate_space.hpp"
#include "search/top_plans.hpp"
#include "search/within_margin.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {

// 3-5 node groups of distinct GPUs (so a full set has 6-120 orders), a small model, the search
// lists short enough for the brute force.
json many_group_instance(testing::Rng& rng) {
  const int layers = 6 + rng.below(4);
  json model = {{"name", "generated"}, {"num_layers", layers}, {"hidden_size", 1024 * (1 + rng.below(2))},
                {"ffn_hidden_size", 4096}, {"num_attention_heads", 16}, {"num_query_groups", 4},
                {"vocab_size", 32000}, {"num_experts", 8}, {"moe_router_topk", 2}, {"moe_ffn_hidden_size", 1024}};
  if (rng.below(2)) {
    std::vector<int> freq(layers, 1);
    freq[0] = 0;
    model["moe_layer_freq"] = freq;
  }
  const std::vector<std::string> gpus = {"h100-sxm", "a100-sxm-80gb", "h20", "h800-sxm", "a800", "h200-sxm"};
  const int n = 3 + rng.below(3);
  std::vector<std::string> chosen = gpus;
  for (size_t i = chosen.size(); i > 1; --i) std::swap(chosen[i - 1], chosen[rng.below(static_cast<int>(i))]);
  json groups = json::array();
  for (int g = 0; g < n; ++g) {
    json gpu = {{"preset", chosen[g]}, {"memory_gib", 6 + rng.below(40)}, {"reserved_memory_gib", 1}};
    groups.push_back({{"gpu", gpu}, {"nodes", 1}, {"gpus_per_node", 2}});
  }
  return {{"model", model},
          {"cluster", {{"name", "generated"}, {"groups", groups}}},
          {"training", {{"global_batch_size", 8 * (1 + rng.below(8))}, {"seq_length", 1024 * (1 + rng.below(4))}}},
          {"search", {{"tp", {1, 2}}, {"cp", {1}}, {"ep", {1, 2}}, {"micro_batch_size", {1}}, {"vpp", {1, 2}},
                      {"recompute", {"none", "full"}}, {"optimizer_offload_fraction", {0}}, {"top_k", 4},
                      {"baselines", false}, {"memory_margin_fraction", 0}}}};
}

// An entry's identity: the mesh of the plan and the multiset of its groups' classes (orders and
// splits of one entry share it; twins are interchangeable).
std::string entry_key(const Scenario& s, const CandidateSpace& space, const Mesh& mesh,
                      const std::vector<int>& stage_groups) {
  std::vector<int> classes;
  for (size_t i = 0; i < stage_groups.size(); ++i) {
    if (i == 0 || stage_groups[i] != stage_groups[i - 1]) classes.push_back(space.group_class()[stage_groups[i]]);
  }
  std::sort(classes.begin(), classes.end());
  std::vector<int> layers(static_cast<size_t>(mesh.pp), 1);
  layers.back() = s.model.num_layers - mesh.pp + 1;
  std::string key = plan_key(plan_of(mesh, s.cluster, std::vector<int>(static_cast<size_t>(mesh.pp), 0), layers));
  for (int c : classes) key += "," + std::to_string(c);
  return key;
}

// The brute force's best split of every (mesh, order), the best per entry: of all splits, and of
// those whose every stage's peak is within the memory margin (1e300 when none is).
struct EntryBest {
  double any = 1e300, within = 1e300;
};
std::map<std::string, EntryBest> brute_entry_bests(const Scenario& s, const CandidateSpace& space, double margin) {
  std::map<std::string, EntryBest> best;
  StageModelCache cache(s);
  testing::for_each_brute_candidate(s, [&](const Mesh& mesh, const std::vector<int>& stage_groups) {
    const SplitProblem p = make_split_problem(s, mesh, stage_groups, cache);
    const int min_n = std::max(1, mesh.vpp);
    std::vector<int> v(static_cast<size_t>(mesh.pp), min_n);
    SplitCounters k;
    EntryBest t;
    std::function<void(int, int)> rec = [&](int at, int left) {
      if (at == mesh.pp - 1) {
        if (left < min_n) return;
        v[at] = left;
        bool within = true;
        const auto obj = split_objective_by(v, p.num_microbatches, p.vpp, &k, [&](int i, int first, int n) {
          const StageCost c = p.stage_models[i]->cost(i, first, n, p.links[i], p.mesh);
          within = within && c.within_margin(margin);
          return c;
        });
        if (obj && *obj < t.any) t.any = *obj;
        if (obj && within && *obj < t.within) t.within = *obj;
        return;
      }
      for (int n = min_n; n <= left - (mesh.pp - at - 1) * min_n; ++n) {
        v[at] = n;
        rec(at + 1, left - n);
      }
    };
    rec(0, s.model.num_layers);
    if (t.any >= 1e300) return;
    EntryBest& e = best[entry_key(s, space, mesh, stage_groups)];
    e.any = std::min(e.any, t.any);
    e.within = std::min(e.within, t.within);
  });
  return best;
}

// The k least of the entries' bests (of all, or within the margin).
std::vector<double> k_least(const std::map<std::string, EntryBest>& best, bool within, size_t k) {
  std::vector<double> out;
  for (const auto& [key, t] : best) {
    const double x = within ? t.within : t.any;
    if (x < 1e300) out.push_back(x);
  }
  std::sort(out.begin(), out.end());
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace

TEST_CASE("one plan per (mesh, group set) entry: the k best entries of a brute force over every order") {
  testing::Rng rng{20261206};
  int compared = 0, full = 0;
  for (int i = 0; i < 40; ++i) {
    const json doc = many_group_instance(rng);
    const Scenario s = testing::scenario_from(doc);
    const auto r = search_plans(s);
    REQUIRE(r.ok());
    PruneCounts pruned;
    const CandidateSpace space(s, &pruned);
    const std::vector<double> want = k_least(brute_entry_bests(s, space, 0), false, 4);
    REQUIRE_MESSAGE(r->plans.size() == want.size(), doc.dump());
    std::set<std::string> keys;
    for (size_t p = 0; p < want.size(); ++p) {
      const PlanEvaluation& ev = r->plans[p];
      CHECK_MESSAGE(ev.metrics.iteration_time_s == doctest::Approx(want[p]).epsilon(1e-12), doc.dump());
      std::vector<int> stage_groups;
      for (const StagePlan& st : ev.plan.stages) stage_groups.push_back(st.group);
      keys.insert(entry_key(s, space, mesh_of(ev.plan), stage_groups));
    }
    CHECK_MESSAGE(keys.size() == want.size(), "two plans of one entry: " << doc.dump());
    compared += !want.empty();
    full += want.size() == 4;
  }
  MESSAGE("compared " << compared << " instances, " << full << " with 4 plans");
  CHECK(compared >= 30);
}

TEST_CASE("upstream search finds the k best entries within the memory margin in the same pass (brute force)") {
  // With a margin, the engine returns beside its k best plans the k best entries' best plans
  // within the margin (SearchResult::within_margin): those of a brute force that counts a split
  // only when every stage's peak stays within 1 - margin of its memory. Megatron mode ranks the
  // best of them first when the fastest plan is above the margin.
  testing::Rng rng{20261207};
  constexpr double kMargin = 0.15;
  int compared = 0, binding = 0;
  for (int i = 0; i < 40; ++i) {
    json doc = many_group_instance(rng);
    doc["search"]["memory_margin_fraction"] = kMargin;
    const Scenario s = testing::scenario_from(doc);
    const auto r = upstream_search(s);
    REQUIRE(r.ok());
    PruneCounts pruned;
    const CandidateSpace space(s, &pruned);
    const auto best = brute_entry_bests(s, space, kMargin);
    const std::vector<double> want = k_least(best, false, 4), want_within = k_least(best, true, 4);
    REQUIRE_MESSAGE(r->plans.size() == want.size(), doc.dump());
    for (size_t p = 0; p < want.size(); ++p) {
      CHECK_MESSAGE(r->plans[p].metrics.iteration_time_s == doctest::Approx(want[p]).epsilon(1e-12), doc.dump());
    }
    REQUIRE_MESSAGE(r->within_margin.size() == want_within.size(), doc.dump());
    for (size_t p = 0; p < want_within.size(); ++p) {
      CHECK(within_margin(r->within_margin[p], kMargin));
      CHECK_MESSAGE(r->within_margin[p].metrics.iteration_time_s == doctest::Approx(want_within[p]).epsilon(1e-12),
                    doc.dump());
    }
    compared += !want_within.empty();
    if (want.empty() || want_within.empty() || want_within.front() <= want.front() * (1 + 1e-12)) continue;
    ++binding;
    doc["search"]["mode"] = "megatron";
    const auto m = search_plans(testing::scenario_from(doc));
    REQUIRE(m.ok());
    REQUIRE(!m->plans.empty());
    CHECK(m->plans.front().metrics.within_memory_margin);
    CHECK(m->plans.front().metrics.iteration_time_s == doctest::Approx(want_within.front()).epsilon(1e-12));
    CHECK(m->within_margin.empty());
  }
  MESSAGE("compared " << compared << " instances, the margin binds in " << binding);
  CHECK(compared >= 25);
  CHECK(binding >= 5);
}
