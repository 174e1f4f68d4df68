// Exact layer split for one hetero pipeline (stage meshes and stage order fixed): a dynamic
// program over (stage, layers assigned) with Pareto-minimal (sum c, max c, max tail) labels,
// like layer_split_dp.hpp, where each stage also picks one of its options (the same mesh with
// recompute "none" or "full") and is costed with its own mesh (hetero_stage_mesh). Returns the
// exact minimum of iteration_time_s() subject to every stage fitting in memory.
#pragma once

#include <limits>
#include <optional>
#include <vector>

#include "search/layer_split_dp.hpp"

namespace hapmoe {

// One way to run a stage: its cost model and the mesh it is costed with.
struct StageOption {
  const StageCostModel* model = nullptr;
  Mesh mesh;
};

struct HeteroSplitProblem {
  std::vector<std::vector<StageOption>> options;  // per stage, at least one
  std::vector<StageLinks> links;                  // per stage
  int num_layers = 0;
  long long num_microbatches = 1;
  double incumbent_s = 1e300;             // prune anything that cannot beat this
  // Each stage must leave this share of its memory free (search.memory_margin_fraction: the
  // best split within the margin; 0: it must fit).
  double margin = 0;
  long long max_stage_costs = 1LL << 62;  // stop (nullopt, budget_reached) once counters reach it
  // The same once search_clock_s() passes this (the search's backstop, SearchBudget::deadline_s).
  double deadline_s = std::numeric_limits<double>::infinity();
};

struct HeteroSplit {
  std::vector<int> layers;  // per stage
  std::vector<int> option;  // per stage: index into options[i]
  double objective_s = 0;
};

// Set by best_hetero_split when max_stage_costs (or the deadline: past_deadline) stopped it.
struct HeteroSplitStatus {
  bool budget_reached = false;
  bool past_deadline = false;
};

// Best split and per-stage options, or nullopt when none fits or beats the incumbent.
std::optional<HeteroSplit> best_hetero_split(const HeteroSplitProblem& p, SplitCounters* counters,
                                             HeteroSplitStatus* status = nullptr);

// Objective of a given split and options (brute force and fixed splits); nullopt if a stage does
// not fit.
std::optional<double> hetero_split_objective(const HeteroSplitProblem& p,
                                             const std::vector<int>& layers,
                                             const std::vector<int>& option,
                                             SplitCounters* counters);

}  // namespace hapmoe
