// Fitting a GPU type's efficiency factors to a measured iteration time (a Megatron-LM log of a
// known plan), and its reserved memory to the log's peak memory. One measurement gives one
// degree of freedom: every efficiency factor of that GPU type is scaled by one common factor.
#pragma once

#include <string>
#include <vector>

#include "hapmoe/error.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

// Efficiency factors scaled by k: the GEMM, attention, HBM and collective-bus efficiencies times
// k (kept within the field table's 0.01..1), the host launch times divided by k.
GpuSpec scale_efficiency(const GpuSpec& gpu, double k);

struct EfficiencyFit {
  double scale = 1;                  // the common factor k
  double analytical_iteration_s = 0;  // the plan with the GPU's own constants
  double fitted_iteration_s = 0;      // the plan with the fitted (rounded) constants
  bool reached = true;  // false: the target lies beyond what k in [1/20, 20] reaches (closest kept)
  GpuSpec gpu;          // the fitted spec (factors rounded to 4 significant digits)
};

// Finds k such that evaluating `plan` with GPU `gpu_id`'s factors scaled by k gives
// target_iteration_s (bisection on log k; the iteration time falls as k grows). `plan` must
// pass the Megatron rules and use `gpu_id` on at least one stage.
Expected<EfficiencyFit> fit_efficiency(const Scenario& s, const PlanSpec& plan, const std::string& gpu_id,
                                       double target_iteration_s);

// A rank's peak memory from the log ("max reserved", GiB).
struct RankPeak {
  long long rank = 0;
  double max_reserved_gib = 0;
};

// reserved_memory_gib that makes the model's per-stage peak equal the logged peaks: for each
// logged rank on a stage of GPU `gpu_id` (stage = rank / (tp x cp x dp), Megatron's pp-outermost
// rank order), max_reserved - (predicted peak - predicted reserved); the largest over ranks,
// kept within [0, memory_gib). Fails when no logged rank maps to such a stage.
Expected<double> fit_reserved_memory_gib(const Scenario& s, const PlanSpec& plan, const std::string& gpu_id,
                                         const std::vector<RankPeak>& peaks);

}  // namespace hapmoe
