#include "calibration_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <nlohmann/json.hpp>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/scenario_io.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe::calibration {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

// The expected error of the model on one run, in log units: a row off by 10% weighs as much as a
// parameter one prior spread from its prior.
constexpr double kRowSigma = 0.10;
// Residual (log units) charged for a run the model cannot predict (no plan, a rule refuses it).
constexpr double kUnpredictedResidual = 3;
constexpr int kFitEvaluations = 1200, kLooEvaluations = 400;
constexpr double kBandCoverage = 0.8;  // a band covers this share of its rows' leave-one-out errors
constexpr double kPairTolerance = 1.25;
// A parameter "determines" a row when a 10% change of it moves the row's prediction by 0.5%.
constexpr double kDeterminesSensitivity = 0.05;

double* field_of(GpuSpec& g, const std::string& f) {
  if (f == "gemm_efficiency") return &g.gemm_efficiency;
  if (f == "fp8_gemm_speedup") return &g.fp8_gemm_speedup;
  if (f == "attention_efficiency") return &g.attention_efficiency;
  if (f == "sink_attention_efficiency") return &g.sink_attention_efficiency;
  if (f == "grouped_gemm_half_tokens") return &g.grouped_gemm_half_tokens;
  if (f == "host_launch_us") return &g.host_launch_us;
  if (f == "host_backward_factor") return &g.host_backward_factor;
  if (f == "hbm_efficiency") return &g.hbm_efficiency;
  if (f == "alltoall_intra_node_efficiency") return &g.alltoall_intra_node_efficiency;
  if (f == "alltoall_inter_node_efficiency") return &g.alltoall_inter_node_efficiency;
  return nullptr;
}

bool is_fraction(const std::string& f) { return f.find("efficiency") != std::string::npos; }

bool uses(const Scenario& s, const std::vector<std::string>& gpus) {
  for (const NodeGroup& g : s.cluster.groups) {
    if (std::find(gpus.begin(), gpus.end(), g.gpu.id) != gpus.end()) return true;
  }
  return false;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double rel(double predicted, double published) { return (predicted - published) / published; }

// Nelder-Mead on f over x (minimises; a few hundred evaluations suffice for <= 5 parameters).
template <class F>
std::vector<double> nelder_mead(std::vector<double> x0, F f, int max_evaluations) {
  const size_t n = x0.size();
  if (n == 0) return x0;
  std::vector<std::vector<double>> p(n + 1, x0);
  for (size_t i = 0; i < n; ++i) p[i + 1][i] += 0.1;
  std::vector<double> fv(n + 1);
  for (size_t i = 0; i <= n; ++i) fv[i] = f(p[i]);
  int evals = static_cast<int>(n + 1);
  auto affine = [&](const std::vector<double>& c, const std::vector<double>& w, double t) {
    std::vector<double> y(n);
    for (size_t i = 0; i < n; ++i) y[i] = c[i] + t * (w[i] - c[i]);
    return y;
  };
  while (evals < max_evaluations) {
    std::vector<size_t> order(n + 1);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return fv[a] < fv[b]; });
    const size_t best = order[0], worst = order[n], second = order[n - 1];
    if (fv[worst] - fv[best] < 1e-9) break;
    std::vector<double> c(n, 0);
    for (size_t k = 0; k < n; ++k) {
      for (size_t i = 0; i < n; ++i) c[i] += p[order[k]][i] / n;
    }
    const std::vector<double> r = affine(c, p[worst], -1);
    const double fr = f(r);
    ++evals;
    if (fr < fv[best]) {
      const std::vector<double> e = affine(c, p[worst], -2);
      const double fe = f(e);
      ++evals;
      p[worst] = fe < fr ? e : r;
      fv[worst] = std::min(fe, fr);
    } else if (fr < fv[second]) {
      p[worst] = r;
      fv[worst] = fr;
    } else {
      const std::vector<double> k = affine(c, p[worst], 0.5);
      const double fk = f(k);
      ++evals;
      if (fk < fv[worst]) {
        p[worst] = k;
        fv[worst] = fk;
      } else {  // shrink towards the best
        for (size_t i = 0; i <= n; ++i) {
          if (i == best) continue;
          p[i] = affine(p[best], p[i], 0.5);
          fv[i] = f(p[i]);
          ++evals;
        }
      }
    }
  }
  return p[std::min_element(fv.begin(), fv.end()) - fv.begin()];
}

}  // namespace

bool Calibration::load(const std::string& runs_json, const std::string& parameters_json, std::string* error) {
  const PresetCatalog presets = load_builtin_presets();
  json runs, params;
  try {
    runs = json::parse(runs_json);
    params = json::parse(parameters_json);
  } catch (const json::exception& e) {
    *error = std::string("not valid JSON: ") + e.what();
    return false;
  }
  for (const json& r : runs.at("runs")) {
    Run run;
    run.id = r.at("id");
    run.fit = r.at("fit");
    run.metric = r.at("metric");
    run.published = r.at("published");
    for (const json& u : r.value("unknown", json::array())) run.unknown.push_back(u);
    auto s = parse_scenario(r.at("scenario"), presets);
    if (!s) {
      *error = run.id + ": " + s.error().field + ": " + s.error().message;
      return false;
    }
    run.scenario = std::move(s).value();
    const NodeGroup& g = run.scenario.cluster.groups.front();
    run.label = run.scenario.model.name + ", " + std::to_string(run.scenario.cluster.total_gpus()) + " x " + g.gpu.id +
                ", " + to_string(run.scenario.training.precision);
    runs_.push_back(std::move(run));
  }
  for (const json& p : runs.at("pairs")) pairs_.push_back({p.at("a"), p.at("b"), p.at("what"), p.value("named", false)});
  for (const json& p : params.at("parameters")) {
    Parameter x;
    x.name = p.at("name");
    x.field = p.at("field");
    x.gpus = p.at("gpus").get<std::vector<std::string>>();
    x.prior = p.at("prior");
    x.spread = p.at("spread");
    auto gpu = parse_gpu(json(x.gpus.front()), "gpu", presets);
    GpuSpec g = gpu ? gpu.value() : GpuSpec{};
    const double* v = field_of(g, x.field);
    if (!gpu || !v) {
      *error = x.name + ": unknown GPU preset or field";
      return false;
    }
    x.value = *v;
    params_.push_back(x);
  }
  for (const json& b : params.at("bands")) bands_.push_back({b.at("name"), b.at("gpus").get<std::vector<std::string>>(), 0, 0});
  return true;
}

RowResult Calibration::predict(const Run& r, const std::vector<double>& log_values) const {
  Scenario s = r.scenario;
  for (size_t j = 0; j < params_.size(); ++j) {
    const Parameter& p = params_[j];
    for (NodeGroup& g : s.cluster.groups) {
      if (std::find(p.gpus.begin(), p.gpus.end(), g.gpu.id) == p.gpus.end()) continue;
      double v = std::exp(log_values[j]);
      if (is_fraction(p.field)) v = std::min(v, 1.0);
      *field_of(g.gpu, p.field) = v;
    }
  }
  RowResult out;
  auto take = [&](const PlanEvaluation& ev) {
    out.predicted = r.metric == "tflops_per_gpu" ? ev.metrics.tflops_per_gpu : ev.metrics.tokens_per_s_per_gpu;
    out.fits = ev.metrics.fits_memory;
  };
  if (s.plan) {
    auto ev = evaluate_plan(s, *s.plan);
    if (!ev) out.error = ev.error().code + ": " + ev.error().message;
    else take(ev.value());
  } else {
    auto res = search_plans(s);
    if (!res) out.error = res.error().message;
    else if (res->plans.empty()) out.error = "no plan fits";
    else take(res->plans.front());
  }
  return out;
}

double Calibration::objective(const std::vector<double>& x, const std::vector<int>& params,
                              const std::vector<int>& rows) const {
  std::vector<double> all(params_.size());
  for (size_t j = 0; j < params_.size(); ++j) all[j] = std::log(params_[j].value);
  for (size_t k = 0; k < params.size(); ++k) all[params[k]] = x[k];
  double sum = 0;
  for (int i : rows) {
    const RowResult p = predict(runs_[i], all);
    const double res = p.error.empty() && p.predicted > 0 ? std::log(p.predicted / runs_[i].published) : kUnpredictedResidual;
    sum += (res / kRowSigma) * (res / kRowSigma);
  }
  for (size_t k = 0; k < params.size(); ++k) {
    const Parameter& p = params_[params[k]];
    const double z = (x[k] - std::log(p.prior)) / p.spread;
    sum += z * z;
  }
  return sum;
}

std::vector<double> Calibration::fit(std::vector<double> x, const std::vector<int>& params, const std::vector<int>& rows,
                                     int max_evaluations) const {
  return nelder_mead(std::move(x), [&](const std::vector<double>& y) { return objective(y, params, rows); },
                     max_evaluations);
}

Report Calibration::report(bool refit) const {
  Report r;
  r.refit = refit;
  const size_t np = params_.size(), nr = runs_.size();
  std::vector<double> x(np);
  for (size_t j = 0; j < np; ++j) x[j] = std::log(params_[j].value);
  // Components: parameters linked through the runs they act on (fitted independently).
  std::vector<int> comp(np);
  std::iota(comp.begin(), comp.end(), 0);
  auto find = [&](int a) {
    while (comp[a] != a) a = comp[a] = comp[comp[a]];
    return a;
  };
  for (const Run& run : runs_) {
    int first = -1;
    for (size_t j = 0; j < np; ++j) {
      if (!uses(run.scenario, params_[j].gpus)) continue;
      if (first < 0) first = static_cast<int>(j);
      else comp[find(static_cast<int>(j))] = find(first);
    }
  }
  r.rows.resize(nr);
  std::vector<double> loo(nr, 0);
  if (refit) {
    for (size_t root = 0; root < np; ++root) {
      if (find(static_cast<int>(root)) != static_cast<int>(root)) continue;
      std::vector<int> params, rows;
      for (size_t j = 0; j < np; ++j) {
        if (find(static_cast<int>(j)) == static_cast<int>(root)) params.push_back(static_cast<int>(j));
      }
      for (size_t i = 0; i < nr; ++i) {
        const bool touched = std::any_of(params.begin(), params.end(),
                                         [&](int j) { return uses(runs_[i].scenario, params_[j].gpus); });
        if (runs_[i].fit && touched) rows.push_back(static_cast<int>(i));
      }
      std::vector<double> x0;
      for (int j : params) x0.push_back(x[j]);
      const std::vector<double> best = fit(x0, params, rows, kFitEvaluations);
      for (size_t k = 0; k < params.size(); ++k) x[params[k]] = best[k];
      for (int out : rows) {  // leave one out, from the full fit
        std::vector<int> others;
        for (int i : rows) {
          if (i != out) others.push_back(i);
        }
        const std::vector<double> y = fit(best, params, others, kLooEvaluations);
        std::vector<double> all = x;
        for (size_t k = 0; k < params.size(); ++k) all[params[k]] = y[k];
        loo[out] = predict(runs_[out], all).predicted;
      }
    }
  }
  r.values.resize(np);
  for (size_t j = 0; j < np; ++j) r.values[j] = is_fraction(params_[j].field) ? std::min(std::exp(x[j]), 1.0) : std::exp(x[j]);
  std::vector<double> in_err, loo_err;
  for (size_t i = 0; i < nr; ++i) {
    r.rows[i] = predict(runs_[i], x);
    r.rows[i].loo = loo[i];
    r.all_fit_memory = r.all_fit_memory && r.rows[i].fits && r.rows[i].error.empty();
    if (!runs_[i].fit) continue;
    in_err.push_back(std::fabs(rel(r.rows[i].predicted, runs_[i].published)));
    if (refit) loo_err.push_back(std::fabs(rel(loo[i], runs_[i].published)));
  }
  r.in_median = median(in_err);
  r.in_max = in_err.empty() ? 0 : *std::max_element(in_err.begin(), in_err.end());
  r.loo_median = median(loo_err);
  r.loo_max = loo_err.empty() ? 0 : *std::max_element(loo_err.begin(), loo_err.end());
  // Parameters and the rows they determine.
  r.determined_by.resize(np);
  for (size_t j = 0; j < np; ++j) {
    std::vector<double> y = x;
    y[j] += 0.1;
    for (size_t i = 0; i < nr; ++i) {
      if (!runs_[i].fit || !uses(runs_[i].scenario, params_[j].gpus) || r.rows[i].predicted <= 0) continue;
      const double moved = predict(runs_[i], y).predicted;
      if (moved > 0 && std::fabs(std::log(moved / r.rows[i].predicted)) >= 0.1 * kDeterminesSensitivity) {
        r.determined_by[j].push_back(runs_[i].id);
      }
    }
  }
  // Bands: the leave-one-out error covering kBandCoverage of each group's fitted rows.
  int covered = 0, counted = 0;
  for (Band b : bands_) {
    std::vector<double> errs;
    for (size_t i = 0; i < nr; ++i) {
      if (runs_[i].fit && uses(runs_[i].scenario, b.gpus)) {
        errs.push_back(std::fabs(rel(refit ? loo[i] : r.rows[i].predicted, runs_[i].published)));
      }
    }
    std::sort(errs.begin(), errs.end());
    b.rows = static_cast<int>(errs.size());
    if (!refit) {  // the presets' band
      for (const Run& run : runs_) {
        for (const NodeGroup& g : run.scenario.cluster.groups) {
          if (std::find(b.gpus.begin(), b.gpus.end(), g.gpu.id) != b.gpus.end()) b.fraction = g.gpu.error_fraction;
        }
      }
    } else if (!errs.empty()) {
      const size_t k = static_cast<size_t>(std::ceil(kBandCoverage * errs.size())) - 1;
      b.fraction = std::ceil(errs[k] * 100 - 1e-9) / 100;
    }
    for (double e : errs) covered += e <= b.fraction ? 1 : 0;
    counted += static_cast<int>(errs.size());
    r.bands.push_back(b);
  }
  r.band_coverage = counted ? static_cast<double>(covered) / counted : 0;
  // Pairs.
  auto index = [&](const std::string& id) {
    for (size_t i = 0; i < nr; ++i) {
      if (runs_[i].id == id) return static_cast<int>(i);
    }
    return -1;
  };
  for (const Pair& p : pairs_) {
    PairResult q;
    const int a = index(p.a), b = index(p.b);
    if (a >= 0 && b >= 0 && r.rows[b].predicted > 0) {
      q.measured = runs_[a].published / runs_[b].published;
      q.predicted = r.rows[a].predicted / r.rows[b].predicted;
      q.ordered = (q.measured >= 1) == (q.predicted >= 1);
      q.within = std::max(q.predicted / q.measured, q.measured / q.predicted) <= kPairTolerance;
    }
    if (p.named) r.named_pairs_ordered = r.named_pairs_ordered && q.ordered && q.within;
    r.pairs.push_back(q);
  }
  return r;
}

void print_report(const Calibration& c, const Report& r, FILE* out) {
  std::fprintf(out, "%-13s %-44s %-10s %10s %10s %8s", "run", "model, GPUs, precision", "metric", "published", "predicted",
               "error");
  if (r.refit) std::fprintf(out, " %10s %8s", "left out", "error");
  std::fprintf(out, "  fits\n");
  for (size_t i = 0; i < c.runs().size(); ++i) {
    const Run& run = c.runs()[i];
    const RowResult& x = r.rows[i];
    const char* metric = run.metric == "tflops_per_gpu" ? "TFLOPS/GPU" : "tok/s/GPU";
    if (!x.error.empty()) {
      std::fprintf(out, "%-13s %-44s %s\n", run.id.c_str(), run.label.c_str(), x.error.c_str());
      continue;
    }
    std::fprintf(out, "%-13s %-44s %-10s %10.1f %10.1f %+7.1f%%", run.id.c_str(), run.label.substr(0, 44).c_str(), metric,
                 run.published, x.predicted, 100 * rel(x.predicted, run.published));
    if (r.refit && run.fit) std::fprintf(out, " %10.1f %+7.1f%%", x.loo, 100 * rel(x.loo, run.published));
    else if (r.refit) std::fprintf(out, " %10s %8s", "(checked)", "");
    std::fprintf(out, "  %s\n", x.fits ? "yes" : "NO");
  }
  std::fprintf(out, "\nfitted rows: in-sample median %.1f%%, max %.1f%%", 100 * r.in_median, 100 * r.in_max);
  if (r.refit) std::fprintf(out, "; leave-one-out median %.1f%%, max %.1f%%", 100 * r.loo_median, 100 * r.loo_max);
  std::fprintf(out, "\n\npairs (ratio of the first run's metric to the second's):\n");
  for (size_t k = 0; k < c.pairs().size(); ++k) {
    const Pair& p = c.pairs()[k];
    const PairResult& q = r.pairs[k];
    std::fprintf(out, "  %-13s / %-13s measured %5.2f predicted %5.2f  %s%s  %s\n", p.a.c_str(), p.b.c_str(), q.measured,
                 q.predicted, q.ordered ? "ordered" : "WRONG ORDER", q.within ? ", within 1.25x" : ", OFF > 1.25x",
                 (p.named ? "[calibration.md] " + p.what : p.what).c_str());
  }
  std::fprintf(out, "\nparameters (value, prior; the fitted rows each moves by >= 0.5%% at +10%%):\n");
  for (size_t j = 0; j < c.parameters().size(); ++j) {
    const Parameter& p = c.parameters()[j];
    std::string rows;
    for (const std::string& id : r.determined_by[j]) rows += (rows.empty() ? "" : " ") + id;
    std::fprintf(out, "  %-42s %8.4g (prior %g)  %s\n", p.name.c_str(), r.values[j], p.prior, rows.c_str());
  }
  std::fprintf(out, "\nerror bands (leave-one-out error covering %.0f%% of each group's rows%s):\n", 100 * kBandCoverage,
               r.refit ? ", refitted" : ", as in the presets");
  for (const Band& b : r.bands) std::fprintf(out, "  %-10s +-%.0f%% over %d published runs\n", b.name.c_str(), 100 * b.fraction, b.rows);
  std::fprintf(out, "band coverage: %.0f%% of the fitted rows' %s errors\n", 100 * r.band_coverage,
               r.refit ? "leave-one-out" : "in-sample");
}

bool write_fitted_presets(const Calibration& c, const Report& r, std::string* gpus_json, std::string* error) {
  ojson doc;
  try {
    doc = ojson::parse(*gpus_json);
  } catch (const ojson::exception& e) {
    *error = std::string("presets/gpus.json: ") + e.what();
    return false;
  }
  ojson& gpus = doc["gpus"];
  auto round3 = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return std::strtod(buf, nullptr);
  };
  for (size_t j = 0; j < c.parameters().size(); ++j) {
    const Parameter& p = c.parameters()[j];
    for (const std::string& id : p.gpus) {
      if (!gpus.contains(id)) {
        *error = "presets/gpus.json has no GPU " + id;
        return false;
      }
      ojson& g = gpus[id];
      g[p.field] = round3(r.values[j]);
      ojson& assumed = g["assumed"];
      ojson kept = ojson::array();
      for (const auto& a : assumed) {
        if (a != p.field) kept.push_back(a);
      }
      assumed = kept;
    }
  }
  for (const Band& b : r.bands) {
    for (const std::string& id : b.gpus) {
      ojson& g = gpus[id];
      g["error_fraction"] = b.fraction;
      char basis[320];
      std::snprintf(basis, sizeof basis,
                    "the leave-one-out error (each run predicted by a fit without it) covering %.0f%% of %d "
                    "published Megatron runs on %s GPUs (calibration/runs.json, build/calibration --fit)",
                    100 * kBandCoverage, b.rows, b.name.c_str());
      g["error_basis"] = basis;
    }
  }
  *gpus_json = doc.dump(2, ' ', false) + "\n";
  return true;
}

bool acceptance_holds(const Report& r) {
  return r.loo_median <= 0.10 && r.loo_max <= 0.25 && r.in_median <= 0.06 && r.named_pairs_ordered &&
         r.band_coverage >= kBandCoverage && r.all_fit_memory;
}

}  // namespace hapmoe::calibration
