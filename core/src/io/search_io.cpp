// Result JSON of a search (kept apart from the search loops, which build without exception
// support in wasm).
#include <algorithm>
#include <cstdio>

#include "evaluate/rule_text.hpp"
#include "io/budget_io.hpp"
#include "search/baselines.hpp"
#include "search/top_plans.hpp"
#include "hapmoe/result_io.hpp"
#include "hapmoe/scenario_io.hpp"

namespace hapmoe {

using nlohmann::json;

namespace {

// What the best upstream plan means beside the first plan: a gain only when the first plan is
// faster ("auto" mode labels its plans; there a FlagScale plan is first whenever this is set).
std::string upstream_note(const SearchResult& r) {
  const double first_s = r.plans.front().metrics.iteration_time_s;
  const double up_s = r.upstream->evaluation.metrics.iteration_time_s;
  char text[240];
  if (r.plans.front().plan.runtime) {
    std::snprintf(text, sizeof text,
                  "the first plan (FlagScale) gains %.3gx over the best upstream Megatron-LM plan: %.4g s vs %.4g s per iteration",
                  r.upstream->speedup, first_s, up_s);
  } else if (r.upstream->speedup >= 1) {
    std::snprintf(text, sizeof text, "hetero mode gains %.3gx over the best upstream (megatron mode) plan: %.4g s vs %.4g s per iteration",
                  r.upstream->speedup, first_s, up_s);
  } else {
    std::snprintf(text, sizeof text,
                  "the best upstream (megatron mode) plan is %.3gx faster than hetero mode's best: %.4g s vs %.4g s per "
                  "iteration; search.mode \"auto\" ranks the plans of both runtimes together",
                  1 / r.upstream->speedup, up_s, first_s);
  }
  return text;
}

// The plan closest to fitting: per stage its memory terms (GiB per GPU of that stage), their
// total against the GPU's memory, and how far over it is.
json closest_plan_to_json(const ClosestPlan& c) {
  const PlanEvaluation& ev = c.evaluation;
  json stages = json::array();
  for (size_t i = 0; i < ev.stages.size(); ++i) {
    const StageCost& st = ev.stages[i];
    stages.push_back({{"stage", i},
                      {"gpu", ev.plan.stages[i].gpu},
                      {"group", ev.plan.stages[i].group},
                      {"layers", ev.plan.stages[i].layers},
                      {"weights_gib", round_sig(st.weights.weights_bytes / kGiB)},
                      {"gradients_gib", round_sig(st.weights.gradients_bytes / kGiB)},
                      {"optimizer_state_gib", round_sig(st.weights.optimizer_bytes / kGiB)},
                      {"activations_gib", round_sig(st.activations_bytes / kGiB)},
                      {"reserved_gib", round_sig(st.reserved_bytes / kGiB)},
                      {"total_gib", round_sig(st.peak_bytes() / kGiB)},
                      {"capacity_gib", round_sig(st.capacity_bytes / kGiB)},
                      {"shortfall_gib", round_sig(std::max(0.0, st.peak_bytes() - st.capacity_bytes) / kGiB)}});
  }
  return {{"plan", plan_to_json(ev.plan)},
          {"fullest_stage", c.fullest_stage},
          {"shortfall_gib", round_sig(c.shortfall_gib)},
          {"stages", stages},
          {"basis", "the upstream candidates with the least static memory shortfall (weights, gradients and optimizer "
                    "state against the stages' free memory), each with the layer split that keeps its fullest stage "
                    "least over, costed by the memory model"}};
}

}  // namespace

// The Pareto front: each point's time and cost, and its place in `plans` (null when the k best
// leave it out: then the whole plan entry is beside it).
json pareto_to_json(const Scenario& s, const SearchResult& r) {
  json front = json::array();
  for (const PlanEvaluation& ev : r.pareto) {
    const PlanMetrics& m = ev.metrics;
    const std::string key = plan_key(ev.plan);
    json index = nullptr;
    for (size_t i = 0; i < r.plans.size(); ++i) {
      if (plan_key(r.plans[i].plan) == key) {
        index = i;
        break;
      }
    }
    json p = {{"iteration_time_s", round_sig(m.iteration_time_s)},
              {"tokens_per_s", round_sig(m.tokens_per_s)},
              {"cost_per_hour", round_sig(m.cost_per_hour)},
              {"cost_per_million_tokens", round_sig(m.cost_per_million_tokens)},
              {"gpus_used", m.gpus_used},
              {"plan_index", index},
              {"plan", plan_to_json(ev.plan)}};
    if (index.is_null()) p["entry"] = evaluation_to_json(s, ev);
    front.push_back(std::move(p));
  }
  return front;
}

json search_result_to_json(const Scenario& s, const SearchResult& r, bool include_timing) {
  json plans = json::array();
  for (const auto& ev : r.plans) plans.push_back(evaluation_to_json(s, ev));
  json baselines = json::object();
  auto baseline = [&](const std::optional<Baseline>& b) -> json {
    if (!b) return nullptr;
    json j = evaluation_to_json(s, b->evaluation);
    j["speedup"] = round_sig(b->speedup);
    return j;
  };
  baselines["megatron_default"] = baseline(r.megatron_default);
  baselines["uniform"] = baseline(r.uniform);
  if (r.upstream) baselines["upstream"] = baseline(r.upstream);
  if (r.megatron_default) baselines["megatron_default"]["rule"] = kMegatronDefaultRule;
  if (r.uniform) baselines["uniform"]["rule"] = kUniformRule;
  json pruned = json::object();
  json rule_sentences = json::object();  // what each counter with a count means
  std::vector<std::string> rule_names;
  for (const auto& [k, v] : r.stats.pruned) {
    pruned[k] = v;
    rule_names.push_back(k);
    if (v > 0) rule_sentences[k] = rule_sentence(k);
  }
  json stats = {{"candidates", r.stats.candidates}, {"evaluated", r.stats.evaluated},
                {"stage_costs", r.stats.stage_costs}, {"pruned", pruned}, {"rules", rule_sentences}, {"cancelled", r.stats.cancelled}};
  stats["above_memory_margin"] = r.stats.above_memory_margin;
  stats["objective"] = to_string(s.search.objective);
  stats["memory_margin_fraction"] = round_sig(s.search.memory_margin_fraction);
  if (r.stats.budget_reached) {
    stats["budget_reached"] = true;
    stats["budget"] = budget_to_json(r.stats);
  }
  json notes = json::array();
  if (r.stats.budget_reached) notes.push_back(budget_note(s, r.stats));
  if (r.upstream) {
    notes.push_back(upstream_note(r));
    stats["hetero_gain_over_upstream"] = round_sig(r.upstream->speedup);
  }
  if (r.stats.above_memory_margin > 0) {
    char tight[200];
    std::snprintf(tight, sizeof tight, "%lld of the %zu plans leave less than %.3g%% of a GPU's memory free (the memory margin): "
                  "they are flagged and ranked after the plans within it", r.stats.above_memory_margin, r.plans.size(),
                  s.search.memory_margin_fraction * 100);
    notes.push_back(tight);
  }
  if (r.stats.cancelled) notes.push_back("search cancelled: these are the best plans found before it stopped");
  if (r.stats.offload_retried) {
    notes.push_back(r.stats.retried_after_budget
                        ? "no plan was found without optimizer CPU offload before the search budget ran out: searched "
                          "again with offload fractions 0.5 and 1"
                        : "no plan fits without optimizer CPU offload: searched again with offload fractions 0.5 and 1");
  }
  for (const std::string& n : r.notes) notes.push_back(n);
  if (include_timing) stats["elapsed_ms"] = round_sig(r.stats.elapsed_ms);
  json out = {{"format", kResultFormat}, {"ok", true}, {"model", model_size_to_json(s.model)}, {"plans", plans}, {"baselines", baselines}, {"stats", stats}};
  if (!notes.empty()) out["notes"] = notes;
  if (s.cluster.priced()) out["pareto"] = pareto_to_json(s, r);
  if (r.diagnosis) {
    out["diagnosis"] = {{"message", r.diagnosis->message},
                        {"shortfall_gib", round_sig(r.diagnosis->shortfall_gib)},
                        {"suggestions", r.diagnosis->suggestions}};
    json named = json::array();
    for (const std::string& rule : rules_named_in(r.diagnosis->message, rule_names)) {
      json fields = json::array();
      if (const RuleText* t = find_rule_text(rule)) {
        for (std::string_view f : t->fields) fields.push_back(std::string(f));
      }
      named.push_back({{"rule", rule}, {"sentence", rule_sentence(rule)}, {"fields", fields}});
    }
    out["diagnosis"]["rules"] = named;
    if (r.diagnosis->closest) out["diagnosis"]["closest_plan"] = closest_plan_to_json(*r.diagnosis->closest);
  }
  return out;
}

}  // namespace hapmoe

namespace hapmoe {

json node_loss_to_json(const Scenario& s, const NodeLossResult& r, bool include_timing) {
  const PlanMetrics& m = r.selected.metrics;
  json selected = {{"iteration_time_s", round_sig(m.iteration_time_s)}, {"gpus_used", m.gpus_used}};
  if (m.priced) selected["cost_per_million_tokens"] = round_sig(m.cost_per_million_tokens);
  json losses = json::array();
  for (const NodeLoss& loss : r.losses) {
    const NodeGroup& g = s.cluster.groups[loss.group];
    json j = {{"group", loss.group},
              {"gpu", g.gpu.id},
              {"nodes_left", loss.nodes_left},
              {"group_removed", loss.nodes_left == 0},
              {"budget_reached", loss.budget_reached}};
    if (loss.best) {
      const PlanMetrics& b = loss.best->metrics;
      j["iteration_time_s"] = round_sig(b.iteration_time_s);
      j["slowdown"] = round_sig(b.iteration_time_s / m.iteration_time_s);
      if (b.priced) j["cost_per_million_tokens"] = round_sig(b.cost_per_million_tokens);
      j["entry"] = evaluation_to_json(loss.scenario, *loss.best);
    } else {
      j["iteration_time_s"] = nullptr;
      j["entry"] = nullptr;
      j["message"] = loss.message;
    }
    losses.push_back(std::move(j));
  }
  json out = {{"format", "hapmoe.node_loss/1"}, {"ok", true}, {"plan", selected}, {"losses", losses},
              {"cancelled", r.cancelled}};
  if (include_timing) out["elapsed_ms"] = round_sig(r.elapsed_ms);
  return out;
}

}  // namespace hapmoe
