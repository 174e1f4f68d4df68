// parallel_config: mesh sizes, micro-batch count, PlanSpec <-> Mesh.
#include <doctest/doctest.h>

#include "hapmoe/parallel_config.hpp"

using namespace hapmoe;

TEST_CASE("mesh sizes: stage GPUs, expert data-parallel size, world") {
  Mesh m;
  m.tp = 2; m.cp = 2; m.dp = 8; m.ep = 4; m.etp = 2; m.pp = 3;
  CHECK(m.stage_gpus() == 32);
  CHECK(m.expert_dp() == 4);  // 32 / (4 x 2)
  CHECK(m.world_gpus() == 96);
}

TEST_CASE("num_microbatches = global batch / (micro-batch x dp)") {
  TrainingSpec t;
  t.global_batch_size = 1024;
  Mesh m;
  m.dp = 16;
  m.micro_batch_size = 2;
  CHECK(num_microbatches(t, m) == 32);
}

TEST_CASE("plan_of and mesh_of round-trip every mesh field") {
  ClusterSpec c;
  c.groups.resize(2);
  c.groups[0].gpu.id = "h100-sxm";
  c.groups[1].gpu.id = "a100-sxm-80gb";
  Mesh m;
  m.tp = 4; m.cp = 2; m.dp = 3; m.ep = 6; m.etp = 1; m.pp = 3; m.vpp = 2; m.micro_batch_size = 2;
  m.sequence_parallel = true;
  m.recompute = Recompute::kSelective;
  const PlanSpec p = plan_of(m, c, {0, 0, 1}, {5, 4, 3});
  REQUIRE(p.stages.size() == 3);
  CHECK(p.stages[0].gpu == "h100-sxm");
  CHECK(p.stages[2].gpu == "a100-sxm-80gb");
  CHECK(p.stages[2].group == 1);
  CHECK(p.stages[1].layers == 4);
  CHECK(p.stages[1].recompute == Recompute::kSelective);
  const Mesh back = mesh_of(p);
  CHECK(back.tp == 4); CHECK(back.cp == 2); CHECK(back.dp == 3); CHECK(back.ep == 6); CHECK(back.etp == 1);
  CHECK(back.pp == 3); CHECK(back.vpp == 2); CHECK(back.micro_batch_size == 2);
  CHECK(back.sequence_parallel);
  CHECK(back.recompute == Recompute::kSelective);
}
