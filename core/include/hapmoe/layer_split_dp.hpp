// Exact layer split for one mesh and one stage placement: a dynamic program over
// (stage, layers assigned) whose labels (sum c, max c, max tail) are kept Pareto-minimal, so it
// returns the exact minimum of iteration_time_s() -- the objective the plan reports -- subject
// to every stage fitting in memory. Bounds against an incumbent prune without losing the optimum.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hapmoe/stage_cost.hpp"

namespace hapmoe {

// Buffers best_layer_split reuses from one candidate to the next (fewer allocations; this
// matters most in wasm, whose allocator is slower). One per search; not shared across threads.
class SplitScratch {
 public:
  SplitScratch();
  ~SplitScratch();
  struct Buffers;
  Buffers& buffers() { return *buffers_; }

 private:
  std::unique_ptr<Buffers> buffers_;
};

struct SplitProblem {
  std::vector<const StageCostModel*> stage_models;  // per stage (its group's model)
  std::vector<StageLinks> links;                    // per stage
  Mesh mesh;
  int num_layers = 0;
  long long num_microbatches = 1;
  int vpp = 1;
  double incumbent_s = 1e300;  // prune anything that cannot beat this
  SplitScratch* scratch = nullptr;  // optional reusable buffers
};

struct SplitCounters {
  long long stage_costs = 0;      // stage-cost evaluations
  long long memory = 0;           // transitions cut because the stage does not fit
  long long lower_bound = 0;      // labels / transitions cut by the bound
  long long dominated = 0;        // labels dropped by Pareto dominance
  double min_shortfall_bytes = -1;  // smallest memory overflow seen (-1 = none)
};

struct SplitResult {
  std::vector<int> layers;  // per stage
  double objective_s = 0;
};

// Best split, or nullopt when no split fits (or none beats the incumbent).
std::optional<SplitResult> best_layer_split(const SplitProblem& p, SplitCounters* counters);

// Objective of a given split with the same stage costs (for fixed splits and brute force).
// nullopt if a stage does not fit.
std::optional<double> split_objective(const SplitProblem& p, const std::vector<int>& layers,
                                      SplitCounters* counters);

}  // namespace hapmoe
