// Checkpoints and failures of a plan (training.checkpoint_write_gbps, node_failures_per_year,
// restart_s): the checkpoint's size from the memory model's bytes per parameter (the bf16
// parameters and the optimizer state, fp32 master weights and Adam moments unless the
// precision-aware optimizer lowers them; weight_bytes in cost_memory.hpp), its write time, the
// job's mean time between failures over the nodes the plan uses, Daly's optimum checkpoint
// interval and the expected goodput.
//  - Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
//    Future Generation Computer Systems 22 (2006): for write time d and MTBF M, the interval of
//    useful work between checkpoints is sqrt(2dM) [1 + sqrt(d/2M)/3 + (d/2M)/9] - d when d < 2M,
//    else M (Young's sqrt(2dM) to first order); with restart time R and exponential failures the
//    wall time per useful time T is M e^(R/M) (e^((t+d)/M) - 1) / t, so goodput is its inverse.
#pragma once

#include <optional>

#include "hapmoe/plan_evaluation.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

struct Resilience {
  double checkpoint_bytes = 0;
  double write_s = 0;          // checkpoint_bytes / checkpoint_write_gbps
  long long nodes = 0;         // nodes the plan uses (a node counted once any GPU of it is used)
  double job_mtbf_s = 0;       // one year / (node_failures_per_year x nodes)
  double interval_s = 0;       // Daly's optimum useful time between checkpoints
  long long save_interval = 0; // interval_s in iterations (Megatron's --save-interval), >= 1
  double goodput = 0;          // useful time / wall time at that interval
};

// Daly's optimum interval and the goodput at an interval (see above).
double daly_interval_s(double write_s, double mtbf_s);
double daly_goodput(double interval_s, double write_s, double mtbf_s, double restart_s);

// The plan's figures, or nullopt without training.checkpoint_write_gbps.
std::optional<Resilience> plan_resilience(const Scenario& s, const PlanEvaluation& ev);

}  // namespace hapmoe
