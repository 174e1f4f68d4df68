// recompute: the extra backward work of each --recompute-modules entry, which modules act on a
// model, the default search set, and (through the stage cost model) that a layer's backward
// grows by exactly the re-run forward part.
#include "spec/recompute.hpp"

#include <doctest/doctest.h>

#include "fixtures.hpp"
#include "search/candidate_cost.hpp"
#include "cost/cost_compute.hpp"
#include "emit/megatron_emit.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;

namespace {
// Powers of two so that every sum names its parts.
LayerForwardParts parts() {
  LayerForwardParts p;
  p.core_attn_s = 1;
  p.norms_s = 2;
  p.mla_up_proj_s = 4;
  p.mlp_s = 8;
  p.moe_s = 16;
  p.moe_act_s = 32;
  p.shared_experts_s = 64;
  p.mlp_tp_comm_s = 128;
  p.moe_ep_comm_s = 256;
  return p;
}
RecomputeExtra extra(unsigned bits) {
  return selective_recompute_extra(Recompute::of_modules(bits), parts());
}
}  // namespace

TEST_CASE("selective_recompute_extra: each module re-runs its own forward") {
  CHECK(selective_recompute_extra(Recompute::kNone, parts()).compute_s == 0);
  CHECK(selective_recompute_extra(Recompute::kFull, parts()).compute_s == 0);       // the caller's
  CHECK(selective_recompute_extra(Recompute::kSelective, parts()).compute_s == 1);  // core_attn
  CHECK(extra(kRecomputeLayernorm).compute_s == 2);
  CHECK(extra(kRecomputeMlaUpProj).compute_s == 4);
  CHECK(extra(kRecomputeMoeAct).compute_s == 32);
  CHECK(extra(kRecomputeMoeAct | kRecomputeLayernorm).compute_s == 34);
  // mlp and shared_experts re-run their TP collectives too.
  CHECK(extra(kRecomputeMlp).compute_s == 8);
  CHECK(extra(kRecomputeMlp).tp_s == 128);
  CHECK(extra(kRecomputeSharedExperts).compute_s == 64);
  CHECK(extra(kRecomputeSharedExperts).tp_s == 128);
  // moe re-runs the whole block with its dispatch and combine; moe_act and shared_experts are
  // inside it and not counted twice.
  const RecomputeExtra moe = extra(kRecomputeMoe | kRecomputeMoeAct | kRecomputeSharedExperts);
  CHECK(moe.compute_s == 16);
  CHECK(moe.ep_s == 256);
  CHECK(moe.tp_s == 128);
  CHECK(extra(kRecomputeMoe | kRecomputeCoreAttn).compute_s == 17);
  CHECK(extra(kRecomputeMoeAct).ep_s == 0);
}

TEST_CASE("selective_recompute_extra: absent parts cost nothing") {
  LayerForwardParts dense = parts();
  dense.moe_s = dense.moe_act_s = dense.shared_experts_s = dense.moe_ep_comm_s = 0;
  CHECK(selective_recompute_extra(Recompute::of_modules(kRecomputeMoe | kRecomputeSharedExperts),
                                  dense)
            .tp_s == 0);
  LayerForwardParts moe = parts();
  moe.mlp_s = 0;
  CHECK(selective_recompute_extra(Recompute::of_modules(kRecomputeMlp), moe).tp_s == 0);
}

TEST_CASE("applicable and rejected modules, default search set") {
  ModelSpec m = testing::tiny_moe_model();  // one dense and one MoE layer, GQA, no shared expert
  CHECK(applicable_recompute_modules(m) == (kRecomputeCoreAttn | kRecomputeLayernorm |
                                            kRecomputeMlp | kRecomputeMoe | kRecomputeMoeAct));
  CHECK(rejected_recompute_modules(m) == kRecomputeMlaUpProj);
  auto d = default_recompute_choices(m);
  REQUIRE(d.size() == 4);
  CHECK(d[0] == Recompute::kNone);
  CHECK(d[1] == Recompute::of_modules(kRecomputeMoeAct | kRecomputeLayernorm));
  CHECK(d[2] == Recompute::of_modules(kRecomputeLayernorm | kRecomputeMoe));
  CHECK(d[3] == Recompute::kFull);
  m.multi_latent_attention = true;
  CHECK(default_recompute_choices(m)[2] ==
        Recompute::of_modules(kRecomputeCoreAttn | kRecomputeMoeAct | kRecomputeLayernorm |
                              kRecomputeMlaUpProj));
  CHECK(rejected_recompute_modules(m) == 0);
  const ModelSpec dense = testing::tiny_dense_model();
  CHECK(rejected_recompute_modules(dense) == (kRecomputeMlaUpProj | kRecomputeMoeAct));
  CHECK(applicable_recompute_modules(dense) == (kRecomputeCoreAttn | kRecomputeMlp));
  d = default_recompute_choices(dense);
  REQUIRE(d.size() == 4);
  CHECK(d[1] == Recompute::kSelective);
  CHECK(d[2] == Recompute::of_modules(kRecomputeCoreAttn | kRecomputeMlp));
}

TEST_CASE("Recompute values: Megatron's default set, names, keys") {
  CHECK(Recompute::kSelective == Recompute::of_modules(kRecomputeCoreAttn));
  CHECK(Recompute::of_modules(0) == Recompute::kNone);
  CHECK(to_string(Recompute::kSelective) == "selective");
  CHECK(to_string(Recompute::of_modules(kRecomputeLayernorm | kRecomputeMoeAct)) ==
        "moe_act+layernorm");
  CHECK(to_string(Recompute::kFull) == "full");
  CHECK(Recompute::kFull.key() != Recompute::kNone.key());
  CHECK(Recompute::of_modules(kRecomputeMoe).key() !=
        Recompute::of_modules(kRecomputeMoeAct).key());
}

// A MoE layer's backward grows by the activation function's forward with moe_act, by the norm's
// with layernorm, and by the MoE block's forward and its all-to-all with moe.
TEST_CASE("stage cost: module recompute adds the re-run forward to the layer's backward") {
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
  auto layer = [&](Recompute rc) {
    m.recompute = rc;
    return cache.get(m, 0)->layer(1);
  };
  const LayerCost none = layer(Recompute::kNone);
  const LayerCost act = layer(Recompute::of_modules(kRecomputeMoeAct));
  const LayerCost norm = layer(Recompute::of_modules(kRecomputeLayernorm));
  const LayerCost moe = layer(Recompute::of_modules(kRecomputeMoe));
  const GpuSpec& gpu = s.cluster.groups[0].gpu;
  // copies = 2 x 2048 tokens; SwiGLU reads gate and up and writes the product: 3 x 1024 x 2 B.
  const double act_s = elementwise_time_s(2.0 * 2048 * 1024 * 3 * 2, gpu);
  CHECK(act.bwd_s - none.bwd_s == doctest::Approx(act_s).epsilon(1e-9));
  // RMSNorm reads and writes 2048 x 1024 BF16 values.
  CHECK(norm.bwd_s - none.bwd_s ==
        doctest::Approx(elementwise_time_s(2.0 * 2048 * 1024 * 2, gpu)).epsilon(1e-9));
  CHECK(moe.bwd_s > act.bwd_s);
  CHECK(moe.ep_s > none.ep_s);  // dispatch and combine run again
  CHECK(act.ep_s == none.ep_s);
  CHECK(moe.activation_bytes < act.activation_bytes);
  CHECK(act.activation_bytes < none.activation_bytes);
  CHECK(norm.fwd_s == none.fwd_s);
}

// The emitted flags are what the cost model priced: the plan's modules in Megatron's order, the
// EP overlap pair, and the offload flags with the precision-aware optimizer they need.
TEST_CASE("megatron_command: recompute modules, EP overlap and optimizer offload flags") {
  const Scenario s =
      testing::scenario_from({{"model", testing::small_moe_model()},
                              {"cluster", "h100-16"},
                              {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}}});
  Mesh m;
  m.tp = 1;
  m.dp = 8;
  m.ep = 4;
  m.pp = 2;
  m.vpp = 2;
  m.recompute = Recompute::of_modules(kRecomputeLayernorm | kRecomputeMoeAct);
  PlanSpec p = plan_of(m, s.cluster, {0, 0}, {4, 4});
  std::string args = megatron_command(s, p).args;
  CHECK(args.find("--recompute-granularity selective --recompute-modules moe_act layernorm") !=
        std::string::npos);
  CHECK(args.find("--overlap-moe-expert-parallel-comm") == std::string::npos);
  CHECK(args.find("--optimizer-cpu-offload") == std::string::npos);
  m.recompute = Recompute::kSelective;
  m.ep_comm_overlap = true;
  m.optimizer_offload_fraction = 0.5;
  p = plan_of(m, s.cluster, {0, 0}, {4, 4});
  args = megatron_command(s, p).args;
  CHECK(args.find("--recompute-granularity selective --recompute-modules core_attn") !=
        std::string::npos);
  CHECK(args.find("--overlap-moe-expert-parallel-comm --delay-wgrad-compute") != std::string::npos);
  CHECK(args.find("--use-precision-aware-optimizer --optimizer-cpu-offload "
                  "--optimizer-offload-fraction 0.5 "
                  "--overlap-cpu-optimizer-d2h-h2d") != std::string::npos);
  m.recompute = Recompute::kFull;
  p = plan_of(m, s.cluster, {0, 0}, {4, 4});
  CHECK(megatron_command(s, p).args.find(
            "--recompute-granularity full --recompute-method uniform") != std::string::npos);
}

// A stage also holds what one layer's recomputed modules rebuild before their backward.
TEST_CASE("stage cost: selective recompute adds one layer's rebuilt tensors as a working set") {
  const Scenario s = testing::scenario_from({{"model", testing::small_moe_model()},
                                             {"cluster", "h100-16"},
                                             {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}}});
  StageModelCache cache(s);
  Mesh m;
  m.tp = 1;
  m.dp = 4;
  m.ep = 4;
  m.pp = 4;
  const StageCostModel* none = cache.get(m, 0);
  m.recompute = Recompute::of_modules(kRecomputeMoe);
  const StageCostModel* moe = cache.get(m, 0);
  const StageCost c = moe->cost(1, 2, 2, StageLinks{}, m);
  double rebuilt = 0;
  for (int l = 0; l < s.model.num_layers; ++l) {
    rebuilt = std::max(rebuilt, none->layer(l).activation_bytes - moe->layer(l).activation_bytes);
  }
  CHECK(rebuilt > 0);
  const double kept = c.in_flight * (moe->layer(2).activation_bytes + moe->layer(3).activation_bytes);
  CHECK(c.activations_bytes == doctest::Approx(kept + rebuilt).epsilon(1e-12));
}
