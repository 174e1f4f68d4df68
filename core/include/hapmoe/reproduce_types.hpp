// The result types of `hapmoe reproduce` (hapmoe/reproduce.hpp): the cases, the columns, the
// cells and rows, shared by the driver and the reasons it gives (reproduce_reasons), so neither
// depends on the other's functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe {

// Relative difference from the paper's figure above which a reason is given.
inline constexpr double kPaperGapFraction = 0.30;

struct ReproduceCase {
  std::string model;    // preset id
  std::string cluster;  // preset id
  Scenario scenario;    // what our search runs (top_k 1, baselines on)
};

// A plan of a row (ours or a column's), or why there is none.
struct RowPlan {
  std::optional<PlanEvaluation> plan;
  std::string no_plan_reason;
  std::string
      note;  // how it was obtained, when the column's rule leaves a choice (e.g. the fixed EP)
  bool budget_reached = false;
};

// A paper figure in the direction of our ratio, and how it follows from the paper's tables.
struct PaperRatio {
  double value = 0;
  std::string basis;  // e.g. "Table 2: 1.67 / 1.45"
};

// A plan computed beside ours. The list given to reproduce() defines the table: a further
// column (e.g. "hetero vs upstream") is one more ComparisonColumn.
struct ComparisonColumn {
  std::string id, label, rule;
  bool subset_of_ours = true;     // its plans lie in our search space: ours is never slower
  bool column_over_ours = false;  // ratio = column throughput / ours (default: ours / column)
  std::function<RowPlan(const Scenario&, const SearchResult& ours)> run;
  std::function<std::optional<PaperRatio>(const std::string& model, const std::string& cluster)>
      paper_row;
  std::function<std::optional<PaperRatio>(const std::string& model)>
      paper_geomean;  // Table 2 scope
};

struct ColumnCell {
  RowPlan plan;
  std::optional<double> throughput_ratio;  // tokens/s ratio (equal GBS: iteration-time ratio)
  std::optional<double> mfu_ratio;
  std::optional<PaperRatio> paper;
  std::string gap_reason;  // set when the paper has a figure and ours is off by > kPaperGapFraction
};

struct ReproduceRow {
  std::string model, cluster;
  bool heterogeneous = false;  // more than one GPU type
  RowPlan ours;
  std::vector<ColumnCell> cells;  // one per column, in column order
};

struct GeomeanCell {
  std::string model;
  std::optional<double> value;        // geometric mean of the rows' throughput ratios
  std::vector<std::string> clusters;  // heterogeneous clusters that have a ratio
  int of = 0;                         // heterogeneous clusters run for this model
  std::optional<PaperRatio> paper;
  std::string gap_reason;
};

struct ReproduceResult {
  std::vector<ReproduceRow> rows;
  std::vector<std::vector<GeomeanCell>> geomeans;  // [column][model, in case order]
};

}  // namespace hapmoe
