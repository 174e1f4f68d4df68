// The candidate space: group identity by complete effective spec (never the preset id), group
// sets and orders up to identical groups.
#include <doctest/doctest.h>

#include <set>

#include "evaluate/rules.hpp"
#include "search/candidate_space.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {
Scenario with_groups(const json& groups) {
  return testing::scenario_from({{"model", testing::small_moe_model()},
                                 {"cluster", {{"name", "t"}, {"groups", groups}}},
                                 {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}},
                                 {"search", {{"tp", {8}}, {"cp", {1}}, {"ep", {8}}, {"etp", {1}},
                                             {"micro_batch_size", {1}}, {"vpp", {1}}, {"recompute", "none"}}}});
}
json node(const json& gpu) { return {{"gpu", gpu}, {"nodes", 1}, {"gpus_per_node", 8}}; }
}  // namespace

TEST_CASE("identical groups share a class; any overridden field separates them") {
  PruneCounts pruned;
  const Scenario same = with_groups({node("h100-sxm"), node("h100-sxm"), node("a100-sxm-80gb")});
  const CandidateSpace a(same, &pruned);
  CHECK(a.group_class() == std::vector<int>({0, 0, 1}));
  for (const json& override : {json{{"gemm_efficiency", 0.6}}, json{{"memory_gib", 64}}, json{{"hbm_gbps", 3000}},
                               json{{"reserved_memory_gib", 6}}, json{{"inter_node_efficiency", 0.7}}}) {
    json derated = override;
    derated["preset"] = "h100-sxm";
    const CandidateSpace b(with_groups({node("h100-sxm"), node(derated), node("a100-sxm-80gb")}), &pruned);
    CHECK_MESSAGE(b.group_class() == std::vector<int>({0, 1, 2}), override.dump());
  }
}

TEST_CASE("group sets and orders are enumerated up to identical groups") {
  PruneCounts pruned;
  // Two identical H100 nodes + one A100 node, one stage each (tp 8 x dp 1).
  const Scenario s = with_groups({node("h100-sxm"), node("h100-sxm"), node("a100-sxm-80gb")});
  const CandidateSpace space(s, &pruned);
  const MeshShape* shape = nullptr;
  for (const auto& sh : space.shapes()) {
    if (sh.mesh.dp == 1) shape = &sh;
  }
  REQUIRE(shape != nullptr);
  std::set<std::vector<int>> sets;
  std::set<std::vector<int>> orders;
  long long order_count = 0;
  RuleTally tally;
  space.for_each_group_set(*shape, [&](const GroupSet& g) {
    sets.insert(g.groups);
    space.for_each_order(*shape, g, [](auto&, auto&) { return true; }, [](auto&) {}, [&](const std::vector<int>& stage_groups) {
      orders.insert(stage_groups);
      ++order_count;
      return true;
    });
    return true;
  }, &tally);
  // Sets: {H}, {H,H}, {A}, {H,A}, {H,H,A} -- the second H100 alone is the same as the first.
  CHECK(sets == std::set<std::vector<int>>({{0}, {0, 1}, {2}, {0, 2}, {0, 1, 2}}));
  // Orders: 1 + 1 + 1 + 2 (HA, AH) + 3 (HHA, HAH, AHH): never two orders differing only by
  // which H100 group comes first.
  CHECK(order_count == 8);
  CHECK(orders.size() == 8);
  CHECK(orders.count({0, 2, 1}) == 1);
  CHECK(orders.count({1, 2, 0}) == 0);
}

TEST_CASE("three distinct types give every order") {
  PruneCounts pruned;
  const Scenario s = with_groups({node("h100-sxm"), node("h20"), node("a100-sxm-80gb")});
  const CandidateSpace space(s, &pruned);
  const MeshShape& shape = space.shapes().front();
  long long full_orders = 0;
  RuleTally tally;
  space.for_each_group_set(shape, [&](const GroupSet& g) {
    if (g.groups.size() == 3) {
      space.for_each_order(shape, g, [](auto&, auto&) { return true; }, [](auto&) {}, [&](const std::vector<int>&) { return ++full_orders, true; });
    }
    return true;
  }, &tally);
  CHECK(full_orders == 6);
}

TEST_CASE("group rules cut groups per shape and are counted") {
  PruneCounts pruned;
  // A 4-GPU-per-node group cannot hold tp 8.
  const Scenario s = with_groups({node("h100-sxm"), {{"gpu", "a100-sxm-80gb"}, {"nodes", 2}, {"gpus_per_node", 4}}});
  const CandidateSpace space(s, &pruned);
  for (const auto& sh : space.shapes()) CHECK(sh.stages_per_group()[1] == 0);
  CHECK(pruned["tp_in_scale_up_domain"] > 0);
}

// search.ep_comm_overlap unset: each shape overlaps where Megatron allows it; at pp > 1 without
// VPP the mesh turns it off. Listed values are searched as given (and the rules still apply).
// A search keeps each group's stage models by (model class, EP overlap): two shapes share a class
// exactly when every other field a stage cost model reads is the same (stage_cost.hpp: not dp,
// pp, vpp or the offload fraction).
TEST_CASE("shapes share a model class exactly when their stage models are the same") {
  const Scenario s = testing::scenario_from(
      {{"model", testing::small_moe_model()}, {"cluster", "h100-16"},
       {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}},
       {"search", {{"tp", {1, 2}}, {"cp", {1, 2}}, {"ep", {1, 4}}, {"micro_batch_size", {1, 2}}, {"vpp", {1, 2}},
                   {"recompute", {"none", "full"}}, {"optimizer_offload_fraction", {0, 0.5}}}}});
  PruneCounts pruned;
  const CandidateSpace space(s, &pruned);
  const auto& shapes = space.shapes();
  REQUIRE(shapes.size() > 20);
  auto model_fields = [](const Mesh& m) {
    return std::vector<int>{m.tp, m.cp, m.ep, m.etp, m.micro_batch_size, m.recompute.key(), m.sequence_parallel ? 1 : 0,
                            static_cast<int>(m.dispatch), m.cuda_graphs.key()};
  };
  std::set<int> classes;
  long long shared = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    REQUIRE(shapes[i].model_class >= 0);
    REQUIRE(shapes[i].model_class < space.model_classes());
    classes.insert(shapes[i].model_class);
    for (size_t j = 0; j < i; ++j) {
      const bool same = model_fields(shapes[i].mesh) == model_fields(shapes[j].mesh);
      CHECK((shapes[i].model_class == shapes[j].model_class) == same);
      shared += same;
    }
  }
  CHECK(static_cast<int>(classes.size()) == space.model_classes());
  CHECK(shared > 0);  // shapes of several dp, vpp and offloads share classes
}

// complete_mesh keeps its pipeline verdicts by the fields the pipeline rules read: on every shape
// and group set it gives what mesh_for and check_pipeline_rules give.
TEST_CASE("complete_mesh: the mesh and pipeline verdict of mesh_for and check_pipeline_rules") {
  std::set<std::string> rules;
  long long passed = 0, overlap_turned_off = 0;
  // EP overlap decided by the search (unset), then listed.
  for (const json& overlaps : {json(nullptr), json{false, true}}) {
    json search = {{"tp", {4, 8}}, {"cp", {1}}, {"ep", {1, 4}}, {"micro_batch_size", {1, 2, 3}}, {"vpp", {1, 2, 4}},
                   {"recompute", {"none", "full"}}};
    if (!overlaps.is_null()) search["ep_comm_overlap"] = overlaps;
    const Scenario s = testing::scenario_from(
        {{"model", testing::small_moe_model()},
         {"cluster", {{"name", "t"}, {"groups", {{{"gpu", "h100-sxm"}, {"nodes", 4}, {"gpus_per_node", 8}},
                                                 {{"gpu", "a100-sxm-80gb"}, {"nodes", 2}, {"gpus_per_node", 8}}}}}},
         {"training", {{"global_batch_size", 48}, {"seq_length", 2048}, {"moe_token_dispatcher_type", "alltoall"}}},
         {"search", search}});
    PruneCounts pruned;
    const CandidateSpace space(s, &pruned);
    for (int round = 0; round < 2; ++round) {  // the second from the kept verdicts
      for (const MeshShape& shape : space.shapes()) {
        RuleTally tally;
        space.for_each_group_set(shape, [&](const GroupSet& set) {
          Mesh got;
          std::string_view rule;
          const bool ok = space.complete_mesh(shape, set, &got, &rule);
          const Mesh want = space.mesh_for(shape, set);
          const RuleResult v = check_pipeline_rules(s, want);
          CHECK(ok == !v.has_value());
          if (v) {
            CHECK(rule == v->rule);
            rules.insert(std::string(v->rule));
          } else {
            ++passed;
          }
          CHECK(got.pp == want.pp);
          CHECK(got.ep_comm_overlap == want.ep_comm_overlap);
          overlap_turned_off += shape.mesh.ep_comm_overlap && !want.ep_comm_overlap;
          CHECK(got.vpp == want.vpp);
          CHECK(got.dp == want.dp);
          CHECK(got.micro_batch_size == want.micro_batch_size);
          return true;
        }, &tally);
      }
    }
  }
  CHECK(passed > 0);
  CHECK(overlap_turned_off > 0);
  for (const char* rule : {"vpp_requires_pp", "vpp_microbatches", "ep_overlap_vpp"}) {
    CHECK_MESSAGE(rules.count(rule) == 1, std::string(rule));
  }
}

TEST_CASE("EP overlap: on wherever allowed when unset, as listed otherwise") {
  auto space_of = [](const json& search) {
    json sr = {{"tp", {1}}, {"cp", {1}}, {"etp", {1}}, {"micro_batch_size", {1}}};
    sr.update(search);
    return testing::scenario_from({{"model", testing::small_moe_model()}, {"cluster", "h100-16"},
                                   {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}},
                                   {"search", sr}});
  };
  PruneCounts pruned;
  const Scenario s = space_of({{"ep", {1, 4}}, {"vpp", {1, 2}}, {"recompute", {"none", "full"}}});
  const CandidateSpace auto_space(s, &pruned);
  int on = 0;
  for (const MeshShape& sh : auto_space.shapes()) {
    CHECK(sh.ep_overlap_auto);
    const bool allowed = sh.mesh.ep > 1 && !sh.mesh.recompute.full();
    CHECK(sh.mesh.ep_comm_overlap == allowed);
    on += allowed ? 1 : 0;
    GroupSet two{{0}};  // h100-16: one group of 2 nodes
    Mesh m = auto_space.mesh_for(sh, two);
    if (m.pp > 1 && m.vpp == 1) CHECK_FALSE(m.ep_comm_overlap);
  }
  CHECK(on > 0);
  const CandidateSpace listed(space_of({{"ep", {1, 4}}, {"vpp", {2}}, {"ep_comm_overlap", {false, true}}}), &pruned);
  int with = 0, without = 0;
  for (const MeshShape& sh : listed.shapes()) {
    CHECK_FALSE(sh.ep_overlap_auto);
    (sh.mesh.ep_comm_overlap ? with : without) += 1;
    if (sh.mesh.ep_comm_overlap) CHECK(sh.mesh.ep > 1);  // ep_overlap_needs_ep pruned the rest
  }
  CHECK(with > 0);
  CHECK(without > with);
  CHECK(pruned["ep_overlap_needs_ep"] > 0);
}

// for_each_group_set keeps its walk per stages_per_group and replays it, and walks past
// kSetChunk sets in chunks. Against a plain enumeration (all groups distinct: the walk's order
// is the groups' bit mask, ascending), the sets, their order and the cuts counted are the same on
// a first walk, on a replay and after a walk that stopped early.
TEST_CASE("group-set walk: every set once with its verdict, kept, replayed and chunked") {
  for (int n : {10, 15}) {  // 1,023 sets (one chunk, replayed) and 32,767 (two chunks)
    json groups = json::array();
    for (int i = 0; i < n; ++i) {
      groups.push_back(node({{"preset", "h100-sxm"}, {"gemm_efficiency", 0.5 + 0.01 * i}}));  // each its own class
    }
    groups[3] = node("mi300x");  // another vendor: sets mixing it are cut by a rule
    const Scenario s = testing::scenario_from({{"model", testing::small_moe_model()},  // 8 layers
                                               {"cluster", {{"name", "t"}, {"groups", groups}}},
                                               {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}},
                                               {"search", {{"tp", {8}}, {"cp", {1}}, {"ep", {8}}, {"etp", {1}},
                                                           {"micro_batch_size", {1, 2}}, {"vpp", {1}}, {"recompute", "none"}}}});
    PruneCounts unused;
    const CandidateSpace space(s, &unused);
    REQUIRE(space.shapes().size() >= 2);  // two shapes with the same stages_per_group
    const MeshShape& shape = space.shapes().front();
    for (int g = 0; g < n; ++g) REQUIRE(shape.stages_per_group()[g] == 1);

    std::vector<std::vector<int>> expected;
    PruneCounts expected_cuts;
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      std::vector<int> set;
      for (int g = 0; g < n; ++g) {
        if (mask & (1u << g)) set.push_back(g);
      }
      if (set.size() > 8) {  // pp > layers
        ++expected_cuts["pp_range"];
      } else if (const RuleResult v = check_group_set_rules(s, set)) {
        ++expected_cuts[std::string(v->rule)];
      } else {
        expected.push_back(set);
      }
    }
    REQUIRE(expected_cuts.size() == 2);  // both kinds of cut happen

    auto walk = [&](const MeshShape& sh, size_t stop_after) {
      std::vector<std::vector<int>> seen;
      RuleTally tally;
      space.for_each_group_set(sh, [&](const GroupSet& g) {
        seen.push_back(g.groups);
        return seen.size() < stop_after;
      }, &tally);
      PruneCounts cuts;
      tally.add_to(&cuts);
      return std::make_pair(seen, cuts);
    };
    for (const MeshShape* sh : {&space.shapes()[0], &space.shapes()[1], &space.shapes()[0]}) {
      const auto [seen, cuts] = walk(*sh, SIZE_MAX);
      CHECK(seen == expected);
      CHECK(cuts == expected_cuts);
      const auto [part, part_cuts] = walk(*sh, 100);  // stopped early: only what came before is counted
      REQUIRE(part.size() == 100);
      CHECK(std::equal(part.begin(), part.end(), expected.begin()));
      long long cut_before = 0;
      for (const auto& [rule, k] : part_cuts) cut_before += k;
      CHECK(cut_before > 0);
      CHECK(cut_before < expected_cuts.begin()->second + std::next(expected_cuts.begin())->second);
    }
  }
}
