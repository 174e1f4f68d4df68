// Why one of `hapmoe reproduce`'s ratios differs from the paper's: sentences built from facts
// computed on the two plans (stage balance, idle GPUs, per-layer time per GPU type, mesh,
// exposed communication, bubble), never fixed text per row.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hapmoe/reproduce_types.hpp"

namespace hapmoe {

struct PlanFacts {
  double stage_imbalance = 1;  // slowest stage / mean stage, per-micro-batch time
  double comm_share = 0;       // exposed communication / per-micro-batch time, on the slowest stage
  double bubble_fraction = 0;
  long long gpus_idle = 0;
};
PlanFacts plan_facts(const PlanEvaluation& ev);

// Per GPU preset id of the plan's stages: the smallest forward + backward compute time of one
// layer per micro-batch (s), in first-stage order.
std::vector<std::pair<std::string, double>> layer_time_by_gpu(const PlanEvaluation& ev);

// "tp 1 vs 8, ep 2 vs 8" for the mesh fields where a differs from b; "" when equal.
std::string mesh_difference(const PlanSpec& a, const PlanSpec& b);

// The reason for a cell whose paper figure exists and whose ratio is missing or differs by more
// than kPaperGapFraction; "" otherwise.
std::string row_gap_reason(const ReproduceRow& row, const ComparisonColumn& col,
                           const ColumnCell& cell, const Scenario& s);

// The reason for a geometric mean that differs from the paper's by more than kPaperGapFraction
// (or has no value): its coverage and the row farthest from the paper; "" otherwise.
std::string geomean_gap_reason(const GeomeanCell& g, const ComparisonColumn& col,
                               const std::vector<const ReproduceRow*>& rows, size_t column);

}  // namespace hapmoe
