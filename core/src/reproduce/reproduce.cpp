#include "hapmoe/reproduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "hapmoe/planner.hpp"
#include "search/baselines.hpp"
#include "search/even_split_baseline.hpp"
#include "search/metis_baseline.hpp"
#include "reproduce/paper_figures.hpp"
#include "reproduce/reproduce_reasons.hpp"

namespace hapmoe {

namespace {

std::string fmt2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// A baseline the search computed beside our plan.
RowPlan from_search(const std::optional<Baseline>& b, const SearchResult& ours,
                    const std::string& rule_text) {
  RowPlan out;
  out.budget_reached = ours.stats.budget_reached;
  if (b)
    out.plan = b->evaluation;
  else if (ours.plans.empty())
    out.no_plan_reason = "not computed: our search has no plan";
  else
    out.no_plan_reason = "no " + rule_text + " fits every stage's memory";
  return out;
}

// Table 2: HAPMoE's geometric mean over `method`'s, for one model.
std::optional<PaperRatio> table2_over(const std::string& model, const std::string& method) {
  const auto ours = paper_table2_row(model, "hapmoe");
  const auto other = paper_table2_row(model, method);
  if (!ours || !other) return std::nullopt;
  if (method == "megatron_infinigence") {
    return PaperRatio{ours->throughput,
                      "Table 2: HAPMoE " + fmt2(ours->throughput) + "x Megatron-Infinigence"};
  }
  return PaperRatio{ours->throughput / other->throughput,
                    "Table 2: HAPMoE " + fmt2(ours->throughput) + " / " + method + " " +
                        fmt2(other->throughput) + " (derived)"};
}

// Why Megatron-default has no plan: its type-blind first choice (the best even split over all
// groups on the homogeneous main-type cluster), costed on the real GPUs, overflows a stage.
std::string megatron_default_no_plan(const Scenario& s) {
  Scenario blind = s;
  blind.cluster = homogeneous_cluster_like(s.cluster, main_gpu_group(s.cluster));
  blind.search.top_k = 1;
  const auto seen = search_plans(blind);
  const std::string rule =
      "no type-blind mesh over all groups with an even split fits every stage's memory";
  if (!seen || !seen->megatron_default) {
    const std::string why = !seen             ? seen.error().message
                            : seen->diagnosis ? seen->diagnosis->message
                                              : "no even split over all groups";
    const bool memory = why.find("memory") != std::string::npos;
    return (memory ? "memory: " : "") + rule +
           ", and the type-blind ranking has nothing to rank: on " +
           std::to_string(s.cluster.total_gpus()) + " " + blind.cluster.groups[0].gpu.name +
           " GPUs: " + why;
  }
  PlanSpec plan = seen->megatron_default->evaluation.plan;
  for (auto& st : plan.stages) st.gpu = s.cluster.groups[st.group].gpu.id;
  const auto real = evaluate_plan(s, plan);
  if (!real) return rule;
  size_t worst = 0;
  for (size_t i = 0; i < real->stages.size(); ++i) {
    const StageCost& c = real->stages[i];
    if (c.peak_bytes() - c.capacity_bytes >
        real->stages[worst].peak_bytes() - real->stages[worst].capacity_bytes)
      worst = i;
  }
  const StageCost& c = real->stages[worst];
  return "memory: " + rule + "; the blind first choice (tp " + std::to_string(plan.tp) + ", pp " +
         std::to_string(plan.pp) + ", dp " + std::to_string(plan.dp) + ", ep " +
         std::to_string(plan.ep) + ") needs " + fmt2(c.peak_bytes() / kGiB) +
         " GiB per GPU on stage " + std::to_string(worst) + " (" + plan.stages[worst].gpu + ", " +
         fmt2(c.capacity_bytes / kGiB) + " GiB)";
}

bool is_heterogeneous(const ClusterSpec& c) {
  for (const auto& g : c.groups) {
    if (!(g.gpu == c.groups.front().gpu)) return true;
  }
  return false;
}

RowPlan our_plan(const Expected<SearchResult>& r) {
  RowPlan out;
  if (!r) {
    out.no_plan_reason = r.error().message;
    return out;
  }
  out.budget_reached = r->stats.budget_reached;
  if (!r->plans.empty())
    out.plan = r->plans.front();
  else
    out.no_plan_reason = r->diagnosis ? r->diagnosis->message : "no plan";
  return out;
}

ColumnCell run_cell(const ReproduceCase& c, const ComparisonColumn& col,
                    const Expected<SearchResult>& r, const RowPlan& ours) {
  ColumnCell cell;
  if (r)
    cell.plan = col.run(c.scenario, *r);
  else
    cell.plan.no_plan_reason = "not computed: " + r.error().message;
  if (col.paper_row) cell.paper = col.paper_row(c.model, c.cluster);
  if (ours.plan && cell.plan.plan) {
    cell.throughput_ratio = throughput_ratio(*ours.plan, *cell.plan.plan, col.column_over_ours);
    const double a = ours.plan->metrics.mfu, b = cell.plan.plan->metrics.mfu;
    if (a > 0 && b > 0) cell.mfu_ratio = col.column_over_ours ? b / a : a / b;
  }
  return cell;
}

GeomeanCell geomean_of(const std::string& model, const std::vector<const ReproduceRow*>& rows,
                       size_t column, const ComparisonColumn& col) {
  GeomeanCell g;
  g.model = model;
  g.of = static_cast<int>(rows.size());
  double log_sum = 0;
  for (const ReproduceRow* r : rows) {
    const auto& ratio = r->cells[column].throughput_ratio;
    if (!ratio) continue;
    log_sum += std::log(*ratio);
    g.clusters.push_back(r->cluster);
  }
  if (!g.clusters.empty()) g.value = std::exp(log_sum / static_cast<double>(g.clusters.size()));
  if (col.paper_geomean) g.paper = col.paper_geomean(model);
  g.gap_reason = geomean_gap_reason(g, col, rows, column);
  return g;
}

}  // namespace

std::optional<double> throughput_ratio(const PlanEvaluation& ours, const PlanEvaluation& other,
                                       bool other_over_ours) {
  const double a = ours.metrics.tokens_per_s, b = other.metrics.tokens_per_s;
  if (!(a > 0) || !(b > 0)) return std::nullopt;
  return other_over_ours ? b / a : a / b;
}

// FlagScale's heterogeneous mode: a mesh per GPU type (search.mode "hetero"); not a subset of
// ours (ours is one mesh for all stages): ratio ours over hetero, below 1 where hetero wins.
ComparisonColumn hetero_column() {
  ComparisonColumn c;
  c.id = "hetero";
  c.label = "Hetero mode";
  c.rule = "search.mode \"hetero\": a FlagScale process mesh per GPU group (TP, EP, ETP, DP, PP each), "
           "per-stage full recompute, no VPP, optimizer offload as in ours; below 1 where it beats ours";
  c.subset_of_ours = false;
  c.run = [](const Scenario& s, const SearchResult&) {
    Scenario h = s;
    h.search.mode = SearchMode::kHetero;
    h.search.top_k = 1;
    h.search.baselines = false;
    RowPlan out;
    auto r = search_plans(h);
    if (!r.ok()) {
      out.no_plan_reason = r.error().message;
    } else if (r->plans.empty()) {
      out.no_plan_reason = "no hetero-mode plan fits";
    } else {
      out.plan = r->plans.front();
    }
    out.budget_reached = r.ok() && r->stats.budget_reached;
    return out;
  };
  return c;
}

std::vector<ComparisonColumn> standard_columns() {
  std::vector<ComparisonColumn> cols(4);
  cols[0].id = "megatron_default";
  cols[0].label = "Megatron-default";
  cols[0].rule = kMegatronDefaultRule;
  cols[0].run = [](const Scenario& s, const SearchResult& r) {
    RowPlan out =
        from_search(r.megatron_default, r, "type-blind mesh over all groups with an even split");
    if (!out.plan && !r.plans.empty()) out.no_plan_reason = megatron_default_no_plan(s);
    return out;
  };
  cols[0].paper_geomean = [](const std::string& model) {
    return table2_over(model, "megatron_infinigence");
  };

  cols[1].id = "metis_style";
  cols[1].label = "Metis-style";
  cols[1].rule = kMetisStyleRule;
  cols[1].run = [](const Scenario& s, const SearchResult&) {
    const MetisStyleBaseline m = metis_style_baseline(s);
    RowPlan out{m.plan, m.no_plan_reason, "", m.budget_reached};
    if (m.ep) {
      out.note = "ep " + std::to_string(*m.ep) + ", etp " + std::to_string(*m.etp) +
                 " from the homogeneous " + s.cluster.groups[*m.homogeneous_group].gpu.id +
                 " search";
    }
    return out;
  };
  cols[1].paper_geomean = [](const std::string& model) {
    return table2_over(model, "metis_style");
  };

  cols[2].id = "uniform";
  cols[2].label = "Best uniform split";
  cols[2].rule = kUniformRule;
  cols[2].run = [](const Scenario&, const SearchResult& r) {
    return from_search(r.uniform, r, "plan with an even split and groups in cluster order");
  };

  cols[3].id = "even_split";
  cols[3].label = "Best even split";
  cols[3].rule = kEvenSplitRule;
  cols[3].run = [](const Scenario& s, const SearchResult&) {
    const EvenSplitBaseline e = even_split_baseline(s);
    RowPlan out{e.plan, "", "", e.budget_reached};
    if (!e.plan) {
      out.no_plan_reason = "no plan with an even layer split" +
                           (e.closest_no_plan.empty() ? std::string() : ": " + e.closest_no_plan);
    }
    return out;
  };
  cols[3].paper_row = [](const std::string&,
                         const std::string& cluster) -> std::optional<PaperRatio> {
    const auto t3 = paper_table3_row(cluster);
    if (!t3) return std::nullopt;
    return PaperRatio{1 / t3->throughput,
                      "Table 3 (model not stated): 1 / " + fmt2(t3->throughput) + " (derived)"};
  };
  cols.push_back(hetero_column());
  return cols;
}

ReproduceResult reproduce(const std::vector<ReproduceCase>& cases,
                          const std::vector<ComparisonColumn>& columns,
                          const std::function<void(int, int)>& progress,
                          const SearchBudget& budget) {
  ReproduceResult out;
  for (const ReproduceCase& given : cases) {
    // The paper ranks plans by time alone, as every baseline column is built: our plan and the
    // columns' are the fastest ones, without the memory margin's re-ranking and re-search.
    ReproduceCase c = given;
    c.scenario.search.memory_margin_fraction = 0;
    ReproduceRow row;
    row.model = c.model;
    row.cluster = c.cluster;
    row.heterogeneous = is_heterogeneous(c.scenario.cluster);
    const auto r = search_plans(c.scenario, {}, budget);
    row.ours = our_plan(r);
    for (const ComparisonColumn& col : columns) row.cells.push_back(run_cell(c, col, r, row.ours));
    for (size_t k = 0; k < columns.size(); ++k) {
      row.cells[k].gap_reason = row_gap_reason(row, columns[k], row.cells[k], c.scenario);
    }
    out.rows.push_back(std::move(row));
    if (progress) progress(static_cast<int>(out.rows.size()), static_cast<int>(cases.size()));
  }
  std::vector<std::string> models;
  for (const ReproduceCase& c : cases) {
    if (std::find(models.begin(), models.end(), c.model) == models.end()) models.push_back(c.model);
  }
  for (size_t k = 0; k < columns.size(); ++k) {
    out.geomeans.emplace_back();
    for (const std::string& m : models) {
      std::vector<const ReproduceRow*> rows;
      for (const ReproduceRow& r : out.rows) {
        if (r.model == m && r.heterogeneous) rows.push_back(&r);
      }
      out.geomeans.back().push_back(geomean_of(m, rows, k, columns[k]));
    }
  }
  return out;
}

}  // namespace hapmoe
