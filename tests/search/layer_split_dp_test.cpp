// layer_split_dp: the stage-by-stage DP reads stage costs from a StageCostMemo shared by every
// push of the same (position, model, links); results and counters are those of a DP that costs
// each stage afresh.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "search/candidate_cost.hpp"
#include "hapmoe/evaluate.hpp"
#include "search/layer_split_dp.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;

namespace {
// Mixtral-S (32 layers) on three node groups of 8 GPUs: H100, A100 80 GB, and H20 cut to
// 24 GiB so that long stages run out of memory (the DP's shortfall path).
Scenario three_types() {
  return testing::scenario_from(
      {{"model", "mixtral-s"},
       {"cluster",
        {{"name", "three types"},
         {"groups",
          {{{"gpu", "h100-sxm"}, {"nodes", 1}, {"gpus_per_node", 8}},
           {{"gpu", "a100-sxm-80gb"}, {"nodes", 1}, {"gpus_per_node", 8}},
           {{"gpu", {{"preset", "h20"}, {"memory_gib", 24}}}, {"nodes", 1}, {"gpus_per_node", 8}}}}}},
       {"training", {{"global_batch_size", 64}, {"seq_length", 4096}}}});
}

Mesh six_stages() {
  Mesh m;
  m.tp = 2; m.dp = 2; m.ep = 2; m.pp = 6; m.sequence_parallel = true;
  return m;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

struct Outcome {
  std::optional<SplitResult> best;
  SplitCounters k;
};

// Splits one order; memos (optional) shared across calls.
Outcome split(const Scenario& s, const Mesh& mesh, StageModelCache& cache, const std::vector<int>& stage_groups,
              double incumbent_s, long long layers_after_max, StageCostMemos* memos) {
  std::vector<const StageCostModel*> models;
  for (int g : stage_groups) models.push_back(cache.get(mesh, g));
  const std::vector<StageLinks> links = stage_links(s.cluster, mesh.stage_gpus(), stage_groups);
  const int L = s.model.num_layers;
  IncrementalSplit dp;
  dp.reset(mesh, L, num_microbatches(s.training, mesh), cheapest_layer_times(models, L), cheapest_last_extra_s(models));
  Outcome o;
  for (int i = 0; i < mesh.pp; ++i) {
    StageCostMemo* memo = memos ? memos->get(i, models[i], links[i]) : nullptr;
    if (!dp.push(*models[i], links[i], incumbent_s, incumbent_s, &o.k, layers_after_max, nullptr, memo)) return o;
  }
  o.best = dp.best(incumbent_s);
  return o;
}
}  // namespace

TEST_CASE("stage costs read from a shared memo give the same splits and counters as costs computed afresh") {
  const Scenario s = three_types();
  const Mesh mesh = six_stages();
  StageModelCache cache(s);
  std::vector<int> order = {0, 0, 1, 1, 2, 2};
  StageCostMemos memos;
  memos.reset(s.model.num_layers);
  int orders = 0, split_ok = 0, shortfalls = 0, cut = 0;
  double best_plain = 1e300;
  do {  // all 90 orders of the multiset, each with and without a bound and a layer cap
    for (double incumbent : {1e300, best_plain * 1.02}) {
      for (long long after_max : {1LL << 40, 20LL}) {
        const Outcome plain = split(s, mesh, cache, order, incumbent, after_max, nullptr);
        const Outcome memo = split(s, mesh, cache, order, incumbent, after_max, &memos);
        REQUIRE(plain.best.has_value() == memo.best.has_value());
        if (plain.best) {
          CHECK(same_bits(plain.best->objective_s, memo.best->objective_s));
          CHECK(plain.best->layers == memo.best->layers);
          best_plain = std::min(best_plain, plain.best->objective_s);
          ++split_ok;
        } else {
          ++cut;
        }
        CHECK(plain.k.stage_costs == memo.k.stage_costs);
        CHECK(plain.k.memory == memo.k.memory);
        CHECK(plain.k.lower_bound == memo.k.lower_bound);
        CHECK(plain.k.dominated == memo.k.dominated);
        CHECK(same_bits(plain.k.min_shortfall_bytes, memo.k.min_shortfall_bytes));
        if (plain.k.min_shortfall_bytes > 0) ++shortfalls;
      }
    }
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));
  CHECK(orders == 90);
  // The paths compared are all taken: splits found, splits cut, stages out of memory.
  CHECK(split_ok > 0);
  CHECK(cut > 0);
  CHECK(shortfalls > 0);
}

TEST_CASE("StageCostMemos: one memo per (position, model, links), a bounded number of them") {
  const Scenario s = three_types();
  const Mesh mesh = six_stages();
  StageModelCache cache(s);
  const StageCostModel* h100 = cache.get(mesh, 0);
  const StageCostModel* a100 = cache.get(mesh, 1);
  StageLinks none, fast, slow;
  fast.next = Link{400, 0.8, 10e-6};
  slow.next = Link{12.5, 0.8, 25e-6};
  StageCostMemos memos;
  memos.reset(s.model.num_layers);
  StageCostMemo* m = memos.get(1, h100, fast);
  REQUIRE(m != nullptr);
  CHECK(memos.get(1, h100, fast) == m);
  CHECK(memos.get(2, h100, fast) != m);   // another position
  CHECK(memos.get(1, a100, fast) != m);   // another model
  CHECK(memos.get(1, h100, slow) != m);   // another link
  CHECK(memos.get(1, h100, none) != m);   // no link
  StageLinks fast_prev = fast;
  fast_prev.prev = fast.next;
  CHECK(memos.get(1, h100, fast_prev) != m);

  // A cost set in a memo is known until the memo is cleared, which a new mesh (reset) does.
  StageCostMemo::Item* row = m->row(3, 5);
  CHECK_FALSE(m->known(row[4]));
  m->set(&row[4], h100->cost(1, 3, 4, fast, mesh));
  CHECK(m->known(row[4]));
  CHECK(row[4].usable);
  CHECK(same_bits(row[4].a, h100->cost(1, 3, 4, fast, mesh).per_microbatch_s()));
  memos.reset(s.model.num_layers);
  StageCostMemo* again = memos.get(1, h100, fast);
  REQUIRE(again != nullptr);
  CHECK_FALSE(again->known(again->row(3, 5)[4]));

  // Memory stays bounded: with 2000 layers a memo may hold 2M costs, so one memo at most.
  memos.reset(2000);
  CHECK(memos.get(0, h100, none) != nullptr);
  CHECK(memos.get(0, h100, none) != nullptr);  // the same key again
  CHECK(memos.get(1, h100, none) == nullptr);  // the caller's push then uses its own memo
}
