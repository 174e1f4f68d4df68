#include "reproduce/reproduce_reasons.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hapmoe {

namespace {

std::string fmt(double v, int digits = 2) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string percent(double fraction) { return fmt(100 * fraction, 0) + "%"; }

std::string signed_percent(double fraction) {
  return (fraction >= 0 ? "+" : "") + percent(fraction);
}

bool off_from_paper(double ours, double paper) {
  return std::fabs(ours / paper - 1) > kPaperGapFraction;
}

// Facts that make a column's plan slower than ours (useful when we gain more than the paper).
void add_column_weakness(const std::string& label, const PlanEvaluation& ours,
                         const PlanEvaluation& other, std::vector<std::string>& facts) {
  const PlanFacts o = plan_facts(ours), c = plan_facts(other);
  if (c.stage_imbalance > 1.05) {
    facts.push_back(label + "'s slowest stage takes " + fmt(c.stage_imbalance) +
                    "x its mean stage time (ours " + fmt(o.stage_imbalance) + "x)");
  }
  if (c.gpus_idle != o.gpus_idle) {
    facts.push_back(label + " leaves " + std::to_string(c.gpus_idle) + " GPUs idle, ours " +
                    std::to_string(o.gpus_idle));
  }
}

// What our model says about the GPU types and the links (useful either way).
void add_model_facts(const std::string& label, const PlanEvaluation& ours,
                     const PlanEvaluation& other, const Scenario& s,
                     std::vector<std::string>& facts) {
  const auto times = layer_time_by_gpu(ours);
  if (times.size() >= 2) {
    auto [fast, slow] =
        std::minmax_element(times.begin(), times.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; });
    facts.push_back("in our cost model a layer takes " + fmt(slow->second / fast->second) +
                    "x as long on " + slow->first + " as on " + fast->first + " (" +
                    fmt(1e3 * fast->second, 1) + " vs " + fmt(1e3 * slow->second, 1) +
                    " ms per micro-batch, forward + backward)");
  }
  const std::string diff = mesh_difference(other.plan, ours.plan);
  if (!diff.empty()) facts.push_back(label + "'s mesh differs from ours in " + diff);
  const PlanFacts o = plan_facts(ours);
  std::string comm = "exposed communication is " + percent(o.comm_share) +
                     " of our slowest stage's micro-batch time";
  if (s.cluster.groups.size() > 1) {
    comm +=
        " (inter-group link " + fmt(s.cluster.link_between_groups_gbps(0, 1), 1) + " GB/s per GPU)";
  }
  facts.push_back(comm);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace

PlanFacts plan_facts(const PlanEvaluation& ev) {
  PlanFacts f;
  f.bubble_fraction = ev.metrics.bubble_fraction;
  f.gpus_idle = ev.metrics.gpus_idle;
  if (ev.stages.empty()) return f;
  double sum = 0;
  const StageCost* slowest = &ev.stages.front();
  for (const auto& st : ev.stages) {
    sum += st.per_microbatch_s();
    if (st.per_microbatch_s() > slowest->per_microbatch_s()) slowest = &st;
  }
  const double mean = sum / static_cast<double>(ev.stages.size());
  if (mean > 0) f.stage_imbalance = slowest->per_microbatch_s() / mean;
  const double c = slowest->per_microbatch_s();
  if (c > 0) f.comm_share = (slowest->tp_s + slowest->cp_s + slowest->ep_s + slowest->pp_s) / c;
  return f;
}

std::vector<std::pair<std::string, double>> layer_time_by_gpu(const PlanEvaluation& ev) {
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < ev.stages.size() && i < ev.plan.stages.size(); ++i) {
    const StagePlan& sp = ev.plan.stages[i];
    if (sp.layers <= 0) continue;
    const double t = (ev.stages[i].forward_s + ev.stages[i].backward_s) / sp.layers;
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == sp.gpu; });
    if (it == out.end())
      out.emplace_back(sp.gpu, t);
    else
      it->second = std::min(it->second, t);
  }
  return out;
}

std::string mesh_difference(const PlanSpec& a, const PlanSpec& b) {
  std::vector<std::string> parts;
  const std::pair<const char*, std::pair<int, int>> fields[] = {
      {"tp", {a.tp, b.tp}}, {"cp", {a.cp, b.cp}},    {"pp", {a.pp, b.pp}},   {"dp", {a.dp, b.dp}},
      {"ep", {a.ep, b.ep}}, {"etp", {a.etp, b.etp}}, {"vpp", {a.vpp, b.vpp}}};
  for (const auto& [name, v] : fields) {
    if (v.first != v.second)
      parts.push_back(std::string(name) + " " + std::to_string(v.first) + " vs " +
                      std::to_string(v.second));
  }
  return join(parts, ", ");
}

std::string row_gap_reason(const ReproduceRow& row, const ComparisonColumn& col,
                           const ColumnCell& cell, const Scenario& s) {
  if (!cell.paper) return "";
  if (!row.ours.plan) return "no ratio: our search has no plan (" + row.ours.no_plan_reason + ")";
  if (!cell.plan.plan)
    return "no ratio: " + col.label + " has no plan (" + cell.plan.no_plan_reason + ")";
  if (!cell.throughput_ratio || !off_from_paper(*cell.throughput_ratio, cell.paper->value))
    return "";
  const PlanEvaluation& ours = *row.ours.plan;
  const PlanEvaluation& other = *cell.plan.plan;
  std::vector<std::string> facts;
  if (*cell.throughput_ratio > cell.paper->value)
    add_column_weakness(col.label, ours, other, facts);
  add_model_facts(col.label, ours, other, s, facts);
  return fmt(*cell.throughput_ratio) + "x vs the paper's " + fmt(cell.paper->value) + "x (" +
         signed_percent(*cell.throughput_ratio / cell.paper->value - 1) + "): " + join(facts, "; ");
}

namespace {

// "no ratio on 16-1, 24-1 (our search has no plan: memory); 16-2 (Megatron-default has no plan:
// memory)" for the rows of a mean without a ratio, grouped by whose plan is missing and why.
std::string missing_ratios(const ComparisonColumn& col,
                           const std::vector<const ReproduceRow*>& rows, size_t column) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // who + why -> clusters
  for (const ReproduceRow* r : rows) {
    if (r->cells[column].throughput_ratio) continue;
    const bool ours = !r->ours.plan;
    const std::string& why = ours ? r->ours.no_plan_reason : r->cells[column].plan.no_plan_reason;
    const bool memory = why.find("memory") != std::string::npos;
    const std::string who =
        (ours ? "our search" : col.label) + " has no plan" + (memory ? ": memory" : "");
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == who; });
    if (it == groups.end()) it = groups.insert(groups.end(), {who, {}});
    it->second.push_back(r->cluster);
  }
  std::vector<std::string> parts;
  for (const auto& [who, clusters] : groups)
    parts.push_back(join(clusters, ", ") + " (" + who + ")");
  return parts.empty() ? "" : "; no ratio on " + join(parts, "; ");
}

}  // namespace

std::string geomean_gap_reason(const GeomeanCell& g, const ComparisonColumn& col,
                               const std::vector<const ReproduceRow*>& rows, size_t column) {
  if (!g.paper) return "";
  const std::string coverage = std::to_string(g.clusters.size()) + " of " + std::to_string(g.of) +
                               " heterogeneous clusters have both plans" +
                               missing_ratios(col, rows, column);
  if (!g.value) return "no geometric mean: " + coverage;
  if (!off_from_paper(*g.value, g.paper->value)) return "";
  const ReproduceRow* far = nullptr;
  double far_gap = -1;
  for (const ReproduceRow* r : rows) {
    const auto& ratio = r->cells[column].throughput_ratio;
    if (!ratio) continue;
    const double gap = std::fabs(std::log(*ratio / g.paper->value));
    if (gap > far_gap) {
      far_gap = gap;
      far = r;
    }
  }
  std::string out = fmt(*g.value) + "x vs the paper's " + fmt(g.paper->value) + "x (" +
                    signed_percent(*g.value / g.paper->value - 1) + "); " + coverage;
  if (far) {
    out += "; farthest from the paper: " + far->cluster + " at " +
           fmt(*far->cells[column].throughput_ratio) + "x";
    std::vector<std::string> facts;
    const PlanEvaluation& ours = *far->ours.plan;
    const PlanEvaluation& other = *far->cells[column].plan.plan;
    if (*far->cells[column].throughput_ratio > g.paper->value)
      add_column_weakness(col.label, ours, other, facts);
    const PlanFacts o = plan_facts(ours);
    facts.push_back("exposed communication " + percent(o.comm_share) +
                    " of our slowest stage's micro-batch time");
    out += " (" + join(facts, "; ") + ")";
  }
  return out;
}

}  // namespace hapmoe
