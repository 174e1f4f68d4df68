// A plan's metrics from its stage costs and pipeline time: the one place both runtimes' plans
// (evaluate.cpp's one-mesh plans, hetero_evaluate.cpp's per-stage meshes) get them.
#pragma once

#include <vector>

#include "hapmoe/plan_evaluation.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

// Where a stage runs: its GPU group and the GPUs of its mesh (tp x cp x dp).
struct StageSite {
  int group = 0;
  long long gpus = 0;
};

// Fills ev->metrics from ev->stages and ev->time (set by the caller), the stages' sites, the
// number of micro-batches and the TP of Megatron's FLOPs formula (the first stage's).
void fill_plan_metrics(const Scenario& s, const std::vector<StageSite>& sites, int flops_tp, long long microbatches,
                       PlanEvaluation* ev);

}  // namespace hapmoe
