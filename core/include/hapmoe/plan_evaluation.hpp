// What evaluating a plan gives: its stage costs, pipeline time and metrics (hapmoe/evaluate.hpp
// computes them for upstream plans, hetero/hetero_evaluate for per-stage meshes, both through
// evaluate/plan_metrics).
#pragma once

#include <string>
#include <vector>

#include "hapmoe/schedule.hpp"
#include "hapmoe/specs.hpp"
#include "hapmoe/stage_cost.hpp"

namespace hapmoe {

struct PlanMetrics {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double tflops_per_gpu = 0;  // Megatron num_floating_point_operations / time / GPUs
  double mfu = 0;             // model FLOPs / (time x sum of the used GPUs' dense peaks)
  double bubble_fraction = 0;
  // Error band of iteration_time_s (error_band of the stages' GPUs), where it comes from, and
  // whether every stage's GPU has calibrated efficiency constants.
  double iteration_time_error_fraction = 0;
  std::string error_basis;
  bool error_calibrated = true;
  long long gpus_used = 0;
  long long gpus_idle = 0;
  std::vector<long long> gpus_used_per_group;  // by cluster group
  long long num_microbatches = 0;
  std::vector<double> peak_memory_gib;
  std::vector<double> memory_capacity_gib;
  bool fits_memory = true;
  // Every stage's peak is at most (1 - search.memory_margin_fraction) of its GPU memory (set by
  // rank_by_memory_margin; true before it runs).
  bool within_memory_margin = true;
  // With a price on every group (ClusterSpec::priced): the USD per hour the plan's GPUs bill and
  // its USD per million training tokens (evaluate/objective.hpp).
  bool priced = false;
  double cost_per_hour = 0;
  double cost_per_million_tokens = 0;
  // search.objective's value: what the engines and the planner rank by (iteration_time_s for
  // "time" and "time_within_budget"; for "cost" proportional to cost_per_million_tokens).
  double objective_value = 0;
  // With training.train_tokens: the whole run's hours and (priced) USD at this plan's rate.
  double train_hours = 0;
  double train_cost = 0;
};

struct PlanEvaluation {
  PlanSpec plan;
  std::vector<StageCost> stages;
  PipelineTime time;
  PlanMetrics metrics;
};

}  // namespace hapmoe
