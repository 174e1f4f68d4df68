#include "hapmoe/result_io.hpp"
#include "evaluate/resilience.hpp"

#include <cstdio>
#include <cstdlib>

#include "emit/flagscale_emit.hpp"
#include "hapmoe/hetero_plan.hpp"
#include "emit/megatron_emit.hpp"
#include "emit/megatron_version.hpp"
#include "hapmoe/model_shape.hpp"
#include "hapmoe/scenario_io.hpp"

namespace hapmoe {

using nlohmann::json;

double round_sig(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return std::strtod(buf, nullptr);
}

namespace {
json rounded(const std::vector<double>& v) {
  json a = json::array();
  for (double x : v) a.push_back(round_sig(x));
  return a;
}

// Profile-calibrated terms (present only when some term came from the scenario's profile).
void add_measured(const StageCost& c, json* j) {
  if (c.measured_terms) (*j)["measured"] = measured_term_names(c.measured_terms);
  if (c.extrapolated_terms) (*j)["extrapolated"] = measured_term_names(c.extrapolated_terms);
}

json stage_breakdown(const PlanSpec& p, size_t i, const StageCost& c,
                     long long m) {
  const double mb = static_cast<double>(m);
  json j = {{"stage", i},
          {"gpu", p.stages[i].gpu},
          {"group", p.stages[i].group},
          {"layers", p.stages[i].layers},
          {"forward_s", round_sig(c.forward_s)},
          {"backward_s", round_sig(c.backward_s)},
          {"tp_comm_s", round_sig(c.tp_s * mb)},
          {"cp_comm_s", round_sig(c.cp_s * mb)},
          {"ep_comm_s", round_sig(c.ep_s * mb)},
          {"pp_comm_s", round_sig(c.pp_s * mb)},
          {"dp_comm_s", round_sig(c.dp_s)},
          {"optimizer_s", round_sig(c.optimizer_s)},
          {"per_microbatch_s", round_sig(c.per_microbatch_s())},
          {"in_flight_microbatches", round_sig(c.in_flight)},
          {"weights_gib", round_sig(c.weights.weights_bytes / kGiB)},
          {"gradients_gib", round_sig(c.weights.gradients_bytes / kGiB)},
          {"optimizer_state_gib", round_sig(c.weights.optimizer_bytes / kGiB)},
          {"activations_gib", round_sig(c.activations_bytes / kGiB)},
          {"reserved_gib", round_sig(c.reserved_bytes / kGiB)},
          {"peak_memory_gib", round_sig(c.peak_bytes() / kGiB)},
          {"memory_capacity_gib", round_sig(c.capacity_bytes / kGiB)},
          {"fits_memory", c.fits()}};
  add_measured(c, &j);
  return j;
}
}  // namespace

json metrics_to_json(const PlanMetrics& m) {
  const double err = m.iteration_time_error_fraction;
  json j = {{"iteration_time_s", round_sig(m.iteration_time_s)},
          {"iteration_time_error_fraction", err},
          {"iteration_time_range_s",
           json::array({round_sig(m.iteration_time_s * (1 - err)), round_sig(m.iteration_time_s * (1 + err))})},
          {"iteration_time_error_calibrated", m.error_calibrated},
          {"error_basis", m.error_basis},
          {"tokens_per_s", round_sig(m.tokens_per_s)},
          {"tokens_per_s_per_gpu", round_sig(m.tokens_per_s_per_gpu)},
          {"tflops_per_gpu", round_sig(m.tflops_per_gpu)},
          {"mfu", round_sig(m.mfu)},
          {"bubble_fraction", round_sig(m.bubble_fraction)},
          {"gpus_used", m.gpus_used},
          {"gpus_idle", m.gpus_idle},
          {"num_microbatches", m.num_microbatches},
          {"peak_memory_gib", rounded(m.peak_memory_gib)},
          {"memory_capacity_gib", rounded(m.memory_capacity_gib)},
          {"fits_memory", m.fits_memory},
          {"within_memory_margin", m.within_memory_margin}};
  if (m.priced) {
    j["cost_per_hour"] = round_sig(m.cost_per_hour);
    j["cost_per_million_tokens"] = round_sig(m.cost_per_million_tokens);
  }
  if (m.train_hours > 0) {
    j["train_hours"] = round_sig(m.train_hours);
    if (m.priced) j["train_cost"] = round_sig(m.train_cost);
  }
  return j;
}

json model_size_to_json(const ModelSpec& m) {
  const ModelShape shape = derive_model_shape(m, 1);
  return {{"name", m.name},
          {"parameters_total", round_sig(total_params(m, shape))},
          {"parameters_active", round_sig(active_params(m, shape))},
          {"parameters_basis", "Megatron-LM's count (megatron.md 3.1): vocabulary padded to 128, "
                               "no linear biases, MTP layers included"}};
}

json evaluation_to_json(const Scenario& s, const PlanEvaluation& ev) {
  json stages = json::array();
  const ModelShape shape = derive_model_shape(s.model, 1);
  int first_layer = 0;
  for (size_t i = 0; i < ev.stages.size(); ++i) {
    json st = stage_breakdown(ev.plan, i, ev.stages[i], ev.metrics.num_microbatches);
    const int n = ev.plan.stages[i].layers;
    // Layers counted as one contiguous block per stage (with vpp the chunks interleave, which
    // changes only which of dense and MoE layers a stage holds).
    st["parameters"] = round_sig(stage_params(s.model, shape, first_layer, n, i == 0, i + 1 == ev.stages.size()));
    first_layer += n;
    stages.push_back(std::move(st));
  }
  json out = {{"plan", plan_to_json(ev.plan)},
              {"metrics", metrics_to_json(ev.metrics)},
              {"breakdown", {{"stages", stages},
                             {"pipeline_s", round_sig(ev.time.pipeline_s)},
                             {"tail_s", round_sig(ev.time.tail_s)}}}};
  if (const std::optional<Resilience> r = plan_resilience(s, ev)) {
    out["metrics"]["resilience"] = {
        {"checkpoint_gib", round_sig(r->checkpoint_bytes / kGiB)},
        {"checkpoint_write_s", round_sig(r->write_s)},
        {"nodes_used", r->nodes},
        {"job_mtbf_hours", round_sig(r->job_mtbf_s / 3600)},
        {"checkpoint_interval_s", round_sig(r->interval_s)},
        {"save_interval_iterations", r->save_interval},
        {"expected_goodput", round_sig(r->goodput)},
        {"basis", "checkpoint: bf16 parameters + optimizer state (weight_bytes) of every parameter, written at "
                  "training.checkpoint_write_gbps while training waits; interval: Daly's higher-order optimum (FGCS "
                  "2006) for the job's MTBF over the nodes used; goodput: useful / wall time with exponential "
                  "failures and training.restart_s per restart"}};
  }
  if (has_stage_meshes(ev.plan)) {  // "hetero" mode: FlagScale's config instead of upstream flags
    const FlagscaleConfig fs = flagscale_config(s, ev.plan);
    out["flagscale"] = {{"yaml", fs.yaml}, {"experiment_yaml", fs.experiment_yaml}, {"hostfile", fs.hostfile}};
    out["warnings"] = fs.warnings;
    return out;
  }
  const MegatronCommand cmd = megatron_command(s, ev.plan);
  const MegatronVersionNeed need = megatron_version_needed(cmd.args);
  out["megatron"] = {{"args", cmd.args}, {"env", cmd.env}, {"launch", cmd.launch},
                     {"hostfile", cmd.hostfile}, {"layout", pipeline_layout(s.model, ev.plan)},
                     {"requires", {{"megatron_lm", need.release}, {"newest_flag", need.newest_flag}}}};
  out["warnings"] = cmd.warnings;
  return out;
}

json error_result(const Error& e) {
  return {{"format", kResultFormat},
          {"ok", false},
          {"error", {{"code", e.code}, {"message", e.message}, {"field", e.field}}}};
}

json evaluate_result(const Scenario& s, const PlanEvaluation& ev) {
  return {{"format", kResultFormat}, {"ok", true}, {"model", model_size_to_json(s.model)},
          {"plans", json::array({evaluation_to_json(s, ev)})}};
}

}  // namespace hapmoe
