// stage_cost: a stage's terms are the sums of its layers' terms plus the first/last stage extras;
// memory grows with layers and with micro-batches in flight.
#include <doctest/doctest.h>

#include "search/candidate_cost.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;

namespace {
Scenario small_on_h100() {
  return testing::scenario_from({{"model", testing::small_moe_model()}, {"cluster", "h100-16"},
                                 {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}}});
}
Mesh mesh4() {
  Mesh m;
  m.tp = 2; m.dp = 2; m.ep = 4; m.pp = 4; m.sequence_parallel = true;
  return m;
}
}  // namespace

TEST_CASE("interior stage compute is the sum of its layers (prefix sums)") {
  const Scenario s = small_on_h100();
  StageModelCache cache(s);
  const Mesh m = mesh4();
  const StageCostModel* model = cache.get(m, 0);
  const StageCost c = model->cost(1, 2, 3, StageLinks{}, m);  // layers 2, 3, 4 on stage 1 of 4
  double fwd = 0, bwd = 0, ep = 0, tp = 0;
  for (int l = 2; l < 5; ++l) {
    fwd += model->layer(l).fwd_s;
    bwd += model->layer(l).bwd_s;
    ep += model->layer(l).ep_s;
    tp += model->layer(l).tp_s;
  }
  CHECK(c.forward_s == doctest::Approx(fwd).epsilon(1e-12));
  CHECK(c.backward_s == doctest::Approx(bwd).epsilon(1e-12));
  CHECK(c.ep_s == doctest::Approx(ep).epsilon(1e-12));
  CHECK(c.tp_s == doctest::Approx(tp).epsilon(1e-12));
  CHECK(c.pp_s == 0);  // no links given
}

TEST_CASE("first and last stages carry the embedding and the output layer") {
  const Scenario s = small_on_h100();
  StageModelCache cache(s);
  const Mesh m = mesh4();
  const StageCostModel* model = cache.get(m, 0);
  const StageCost mid = model->cost(1, 2, 2, StageLinks{}, m);
  const StageCost first = model->cost(0, 2, 2, StageLinks{}, m);
  const StageCost last = model->cost(3, 2, 2, StageLinks{}, m);
  CHECK(first.forward_s > mid.forward_s);
  CHECK(last.forward_s > first.forward_s);  // logits GEMM + loss cost more than the lookup
  CHECK(first.weights.total() > mid.weights.total());
  CHECK(last.weights.total() > mid.weights.total());
}

TEST_CASE("memory grows with layers and with micro-batches in flight") {
  const Scenario s = small_on_h100();
  StageModelCache cache(s);
  const Mesh m = mesh4();
  const StageCostModel* model = cache.get(m, 0);
  CHECK(model->cost(1, 2, 3, StageLinks{}, m).peak_bytes() > model->cost(1, 2, 2, StageLinks{}, m).peak_bytes());
  // 1F1B: stage 1 of 4 keeps 3 micro-batches in flight, stage 2 keeps 2.
  const StageCost s1 = model->cost(1, 2, 2, StageLinks{}, m), s2 = model->cost(2, 2, 2, StageLinks{}, m);
  CHECK(s1.in_flight == 3);
  CHECK(s2.in_flight == 2);
  CHECK(s1.activations_bytes == doctest::Approx(1.5 * s2.activations_bytes).epsilon(1e-12));
}

TEST_CASE("a slower link between stages costs more pipeline time") {
  const Scenario s = small_on_h100();
  StageModelCache cache(s);
  const Mesh m = mesh4();
  const StageCostModel* model = cache.get(m, 0);
  StageLinks fast, slow;
  fast.next = Link{400, 0.8, 10e-6};
  slow.next = Link{12.5, 0.8, 25e-6};
  CHECK(model->cost(1, 2, 2, slow, m).pp_s > model->cost(1, 2, 2, fast, m).pp_s);
  // One link's share (what the hetero bound takes as a stage's least link time): each link of a
  // stage adds its own.
  StageLinks both = fast;
  both.prev = slow.next;
  CHECK(model->cost(1, 2, 2, both, m).pp_s == doctest::Approx(model->link_s(*fast.next) + model->link_s(*slow.next)));
  CHECK(model->cost(1, 2, 2, slow, m).pp_s == doctest::Approx(model->link_s(*slow.next)));
}

TEST_CASE("layer parameter totals without a model equal the model's") {
  const Scenario s = small_on_h100();
  StageModelCache cache(s);
  for (int tp : {1, 2}) {
    for (int ep : {1, 4, 8}) {
      Mesh m = mesh4();
      m.tp = tp;
      m.ep = ep;
      const auto [dense, expert] = cache.layer_params(m);
      const StageCostModel* model = cache.get(m, 0);
      CHECK(dense == doctest::Approx(model->total_dense_params()).epsilon(1e-12));
      CHECK(expert == doctest::Approx(model->total_expert_params()).epsilon(1e-12));
    }
  }
}
