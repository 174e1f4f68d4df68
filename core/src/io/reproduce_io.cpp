#include "hapmoe/reproduce_io.hpp"

#include <algorithm>

#include "reproduce/paper_figures.hpp"
#include "hapmoe/result_io.hpp"
#include "hapmoe/scenario_io.hpp"

namespace hapmoe {

using nlohmann::json;

namespace {

// A list of ids from options[key], each one of `allowed`; empty options[key] = all of them.
Expected<std::vector<std::string>> pick(const json& options, const char* key,
                                        const std::vector<std::string>& allowed) {
  if (!options.contains(key)) return allowed;
  const json& v = options[key];
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  if (!v.is_array())
    return Error{"bad_type", std::string(key) + " must be a list of ids (" + list + ")", key};
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string field = std::string(key) + "[" + std::to_string(i) + "]";
    if (!v[i].is_string() ||
        std::find(allowed.begin(), allowed.end(), v[i].get<std::string>()) == allowed.end()) {
      return Error{"bad_value", "expected one of " + list, field};
    }
    if (std::find(out.begin(), out.end(), v[i].get<std::string>()) == out.end())
      out.push_back(v[i]);
  }
  if (out.empty())
    return Error{"bad_value", std::string(key) + " must name at least one of " + list, key};
  return out;
}

json scenario_doc(const PaperTrainingSetup& t, const std::string& cluster) {
  return {
      {"format", kScenarioFormat},
      {"model", t.model},
      {"cluster", cluster},
      {"training",
       {{"global_batch_size", t.global_batch_size},
        {"seq_length", t.seq_length},
        {"precision", t.precision},
        {"moe_token_dispatcher_type", t.dispatcher},
        {"use_distributed_optimizer", t.distributed_optimizer}}},
      // Offload searched outright (not only as the fallback), so that every column searches
      // the same space and ours is never slower than a column that is a subset of it.
      {"search",
       {{"micro_batch_size", {t.micro_batch_size}},
        {"optimizer_offload_fraction", {0, 0.5, 1}},
        {"top_k", 1},
        {"baselines", true}}}};
}

json plan_json(const RowPlan& p) {
  if (!p.plan) return nullptr;
  const PlanMetrics& m = p.plan->metrics;
  return {{"plan", plan_to_json(p.plan->plan)},
          {"iteration_time_s", round_sig(m.iteration_time_s)},
          {"tokens_per_s", round_sig(m.tokens_per_s)},
          {"tflops_per_gpu", round_sig(m.tflops_per_gpu)},
          {"mfu", round_sig(m.mfu)},
          {"gpus_used", m.gpus_used},
          {"gpus_idle", m.gpus_idle}};
}

json optional_number(const std::optional<double>& v) {
  return v ? json(round_sig(*v)) : json(nullptr);
}

json paper_json(const std::optional<PaperRatio>& p) {
  if (!p) return nullptr;
  return {{"value", round_sig(p->value)}, {"basis", p->basis}};
}

json row_json(const ReproduceCase& c, const ReproduceRow& r,
              const std::vector<ComparisonColumn>& columns) {
  json cells = json::object();
  for (size_t k = 0; k < columns.size(); ++k) {
    const ColumnCell& cell = r.cells[k];
    cells[columns[k].id] = {{"result", plan_json(cell.plan)},
                            {"no_plan", cell.plan.no_plan_reason},
                            {"note", cell.plan.note},
                            {"budget_reached", cell.plan.budget_reached},
                            {"throughput_ratio", optional_number(cell.throughput_ratio)},
                            {"mfu_ratio", optional_number(cell.mfu_ratio)},
                            {"paper", paper_json(cell.paper)},
                            {"gap_reason", cell.gap_reason}};
  }
  return {{"model", r.model},
          {"cluster", r.cluster},
          {"cluster_name", c.scenario.cluster.name},
          {"heterogeneous", r.heterogeneous},
          {"ours", plan_json(r.ours)},
          {"ours_no_plan", r.ours.no_plan_reason},
          {"ours_budget_reached", r.ours.budget_reached},
          {"columns", cells}};
}

json setups_json(const std::vector<ReproduceCase>& cases) {
  json out = json::array();
  for (const auto& t : paper_training_setups()) {
    if (std::none_of(cases.begin(), cases.end(),
                     [&](const ReproduceCase& c) { return c.model == t.model; }))
      continue;
    out.push_back({{"model", t.model},
                   {"global_batch_size", t.global_batch_size},
                   {"seq_length", t.seq_length},
                   {"micro_batch_size", t.micro_batch_size},
                   {"moe_token_dispatcher_type", t.dispatcher},
                   {"precision", t.precision},
                   {"use_distributed_optimizer", t.distributed_optimizer},
                   {"assumed", t.assumed},
                   {"paper_text", t.stated}});
  }
  return out;
}

json paper_tables_json() {
  json t2 = json::array(), t3 = json::array();
  for (const auto& r : paper_table2()) {
    t2.push_back({{"model", r.model},
                  {"method", r.method},
                  {"throughput", r.throughput},
                  {"mfu", r.mfu},
                  {"latency", r.latency}});
  }
  for (const auto& r : paper_table3())
    t3.push_back({{"cluster", r.cluster}, {"latency", r.latency}, {"throughput", r.throughput}});
  return {{"source", kPaperSource}, {"table2", t2}, {"table3", t3}};
}

}  // namespace

Expected<std::vector<ReproduceCase>> paper_cases(const json& options,
                                                 const PresetCatalog& presets) {
  if (!options.is_object()) return Error{"bad_type", "reproduce options must be a JSON object", ""};
  for (const auto& [k, v] : options.items()) {
    if (k != "models" && k != "clusters")
      return Error{"unknown_field", "expected \"models\" or \"clusters\"", k};
  }
  std::vector<std::string> model_ids;
  for (const auto& t : paper_training_setups()) model_ids.push_back(t.model);
  const auto models = pick(options, "models", model_ids);
  if (!models) return models.error();
  const auto clusters = pick(options, "clusters", paper_clusters());
  if (!clusters) return clusters.error();
  std::vector<ReproduceCase> cases;
  for (const auto& t : paper_training_setups()) {
    if (std::find(models->begin(), models->end(), t.model) == models->end()) continue;
    for (const std::string& cluster : paper_clusters()) {
      if (std::find(clusters->begin(), clusters->end(), cluster) == clusters->end()) continue;
      auto s = parse_scenario(scenario_doc(t, cluster), presets);
      if (!s)
        return Error{"internal",
                     "preset scenario " + t.model + " on " + cluster + ": " + s.error().message,
                     s.error().field};
      Scenario scenario = std::move(s).value();
      scenario.search.assume_cross_vendor_collectives = true;  // as the paper's runs (docs/reproduce.md)
      cases.push_back({t.model, cluster, std::move(scenario)});
    }
  }
  return cases;
}

json reproduce_to_json(const std::vector<ReproduceCase>& cases,
                       const std::vector<ComparisonColumn>& columns,
                       const ReproduceResult& result) {
  json cols = json::array();
  for (const auto& c : columns) {
    cols.push_back({{"id", c.id},
                    {"label", c.label},
                    {"rule", c.rule},
                    {"ratio", c.column_over_ours ? "column / ours" : "ours / column"},
                    {"subset_of_ours", c.subset_of_ours}});
  }
  json rows = json::array();
  for (size_t i = 0; i < result.rows.size(); ++i)
    rows.push_back(row_json(cases[i], result.rows[i], columns));
  json geomeans = json::array();
  for (size_t k = 0; k < columns.size(); ++k) {
    for (const GeomeanCell& g : result.geomeans[k]) {
      geomeans.push_back({{"model", g.model},
                          {"column", columns[k].id},
                          {"scope", "heterogeneous clusters"},
                          {"value", optional_number(g.value)},
                          {"clusters", g.clusters},
                          {"of", g.of},
                          {"paper", paper_json(g.paper)},
                          {"gap_reason", g.gap_reason}});
    }
  }
  return {{"format", kReproduceFormat},
          {"ok", true},
          {"setups", setups_json(cases)},
          {"columns", cols},
          {"rows", rows},
          {"geomeans", geomeans},
          {"paper", paper_tables_json()},
          {"definitions",
           {{"throughput_ratio",
             "tokens/s of the first plan over the second (ratio field); equal global batch, so the "
             "inverse iteration-time ratio; dimensionless (x)"},
            {"geomean",
             "geometric mean of the throughput ratios over the heterogeneous clusters where both "
             "plans exist "
             "(Table 2's scope)"},
            {"gap_reason", "given where the paper has a figure and ours differs by more than " +
                               std::to_string(static_cast<int>(kPaperGapFraction * 100)) + "%"}}}};
}

}  // namespace hapmoe
