// The calibration fit behind build/calibration: published runs with their settings, the model's
// free parameters with physics priors, a least-squares fit in log space (Nelder-Mead), leave-one-
// out errors, pair ratios, and the error bands written into the GPU presets.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe::calibration {

// A published run (calibration/runs.json).
struct Run {
  std::string id;
  bool fit = true;      // fitted (C1-C23) or only checked
  std::string metric;   // "tokens_per_s_per_gpu" or "tflops_per_gpu"
  double published = 0;
  std::string label;    // model, GPUs, precision
  std::vector<std::string> unknown;
  Scenario scenario;
};

// One free parameter: a GPU-spec field shared by the listed presets.
struct Parameter {
  std::string name, field;
  std::vector<std::string> gpus;
  double prior = 0, spread = 0;  // Gaussian prior on log(value): mean log(prior), sd spread
  double value = 0;              // the presets' value (after report(true): the fitted one)
};

struct Band {
  std::string name;
  std::vector<std::string> gpus;
  double fraction = 0;  // covers the leave-one-out errors of 80% of its fitted rows
  int rows = 0;
};

struct Pair {
  std::string a, b, what;
  bool named = false;  // named in shared/reference/calibration.md
};

struct RowResult {
  double predicted = 0;   // with the presets' constants (or the fitted ones after report(true))
  double loo = 0;         // fitted without this row (fit rows, report(true) only)
  bool fits = true;       // fits in memory
  std::string error;      // why it could not be predicted
};

struct PairResult {
  double measured = 0, predicted = 0;  // ratio a / b of the runs' metric
  bool ordered = false;                // predicted on the same side of 1 as measured
  bool within = false;                 // predicted within 1.25x of measured
};

struct Report {
  bool refit = false;
  std::vector<RowResult> rows;   // as Calibration::runs()
  std::vector<PairResult> pairs;
  std::vector<double> values;    // per parameter
  std::vector<std::vector<std::string>> determined_by;  // per parameter: rows it moves >= 0.5%
  std::vector<Band> bands;
  double in_median = 0, in_max = 0, loo_median = 0, loo_max = 0, band_coverage = 0;
  bool all_fit_memory = true, named_pairs_ordered = true;
};

class Calibration {
 public:
  // Parses runs.json and parameters.json; false with *error on bad input.
  bool load(const std::string& runs_json, const std::string& parameters_json, std::string* error);
  // Predictions with the presets' constants; with refit, the fitted constants, leave-one-out
  // predictions and the bands they imply.
  Report report(bool refit) const;

  const std::vector<Run>& runs() const { return runs_; }
  const std::vector<Parameter>& parameters() const { return params_; }
  const std::vector<Pair>& pairs() const { return pairs_; }

 private:
  RowResult predict(const Run& r, const std::vector<double>& log_values) const;
  double objective(const std::vector<double>& x, const std::vector<int>& params, const std::vector<int>& rows) const;
  std::vector<double> fit(std::vector<double> x, const std::vector<int>& params, const std::vector<int>& rows,
                          int max_evaluations) const;
  std::vector<Run> runs_;
  std::vector<Parameter> params_;
  std::vector<Band> bands_;
  std::vector<Pair> pairs_;
};

void print_report(const Calibration& c, const Report& r, FILE* out);
// Rewrites the fitted fields, error_fraction and error_basis of the parameters' GPUs in the text
// of presets/gpus.json.
bool write_fitted_presets(const Calibration& c, const Report& r, std::string* gpus_json, std::string* error);
// The acceptance figures (issue: leave-one-out median <= 10%, max <= 25%; in-sample median <= 6%;
// named pairs ordered and within 1.25x; bands covering >= 80% of the rows' leave-one-out errors).
bool acceptance_holds(const Report& r);

}  // namespace hapmoe::calibration
