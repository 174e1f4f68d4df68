#include "hapmoe/rules.hpp"

#include <map>

namespace hapmoe {

namespace {
std::optional<RuleViolation> violation(const char* rule, const char* field, std::string message) {
  return RuleViolation{rule, std::move(message), field};
}
std::string str(long long v) { return std::to_string(v); }
}  // namespace

Mesh mesh_of(const PlanSpec& p) {
  Mesh m;
  m.tp = p.tp; m.cp = p.cp; m.ep = p.ep; m.etp = p.etp; m.dp = p.dp; m.pp = p.pp; m.vpp = p.vpp;
  m.micro_batch_size = p.micro_batch_size;
  m.sequence_parallel = p.sequence_parallel;
  m.recompute = p.stages.empty() ? Recompute::kNone : p.stages.front().recompute;
  return m;
}

std::optional<RuleViolation> check_mesh_rules(const Scenario& s, const Mesh& x) {
  const ModelSpec& m = s.model;
  const TrainingSpec& t = s.training;
  if (m.num_attention_heads % x.tp != 0) {
    return violation("heads_divisible_by_tp", "plan.tp",
                     "num_attention_heads (" + str(m.num_attention_heads) + ") must be divisible by tp (" + str(x.tp) + ")");
  }
  if (!m.multi_latent_attention && m.query_groups() % x.tp != 0 && x.tp % m.query_groups() != 0) {
    return violation("query_groups_vs_tp", "plan.tp",
                     "num_query_groups (" + str(m.query_groups()) + ") and tp must divide one another");
  }
  if (!m.is_moe() && (x.ep > 1 || x.etp > 1)) {
    return violation("expert_parallel_requires_experts", x.ep > 1 ? "plan.ep" : "plan.etp",
                     "ep and etp above 1 need num_experts > 0");
  }
  if (m.is_moe() && m.num_experts % x.ep != 0) {
    return violation("experts_divisible_by_ep", "plan.ep",
                     "num_experts (" + str(m.num_experts) + ") must be divisible by ep (" + str(x.ep) + ")");
  }
  if (x.stage_gpus() % (static_cast<long long>(x.ep) * x.etp) != 0) {
    return violation("expert_grid", "plan.ep",
                     "etp x ep (" + str(static_cast<long long>(x.etp) * x.ep) + ") must divide tp x cp x dp (" +
                         str(x.stage_gpus()) + "): the expert layers re-fold the same ranks");
  }
  if (t.global_batch_size % (static_cast<long long>(x.micro_batch_size) * x.dp) != 0) {
    return violation("batch_divisible", "plan.micro_batch_size",
                     "global_batch_size (" + str(t.global_batch_size) + ") must be divisible by micro_batch_size x dp (" +
                         str(static_cast<long long>(x.micro_batch_size) * x.dp) + ")");
  }
  const long long micro = num_microbatches(t, x);
  if (x.vpp > 1) {
    if (x.pp <= 1) return violation("vpp_requires_pp", "plan.vpp", "virtual pipeline stages need pp > 1");
    if (micro < x.pp || micro % x.pp != 0) {
      return violation("vpp_microbatches", "plan.vpp",
                       "the interleaved schedule needs the number of micro-batches (" + str(micro) +
                           ") to be a multiple of pp (" + str(x.pp) + ")");
    }
  }
  if (x.sequence_parallel && x.tp <= 1) {
    return violation("sequence_parallel_needs_tp", "plan.sequence_parallel", "sequence parallelism needs tp > 1");
  }
  if (x.cp > 1 && t.seq_length % (2 * x.cp) != 0) {
    return violation("cp_seq_divisible", "plan.cp",
                     "seq_length (" + str(t.seq_length) + ") must be divisible by 2 x cp (" + str(2 * x.cp) + ")");
  }
  if (x.sequence_parallel && (t.seq_length / x.cp) % x.tp != 0) {
    return violation("sp_seq_divisible", "plan.tp",
                     "with sequence parallelism seq_length / cp must be divisible by tp");
  }
  if (m.is_moe() && t.moe_token_dispatcher_type == Dispatcher::kFlex && x.tp * x.ep <= 1) {
    return violation("flex_dispatcher_needs_tp_ep", "plan.ep", "the flex (DeepEP) dispatcher needs tp x ep > 1");
  }
  if (t.overlap_moe_expert_parallel_comm) {
    if (x.ep <= 1) return violation("ep_overlap_rules", "plan.ep", "overlap_moe_expert_parallel_comm needs ep > 1");
    if (x.pp > 1 && x.vpp <= 1) return violation("ep_overlap_rules", "plan.vpp", "overlap_moe_expert_parallel_comm needs vpp > 1 when pp > 1");
    if (t.moe_token_dispatcher_type == Dispatcher::kAllgather) {
      return violation("ep_overlap_rules", "training.moe_token_dispatcher_type", "overlap_moe_expert_parallel_comm needs the alltoall or flex dispatcher");
    }
    if (x.recompute == Recompute::kFull) return violation("ep_overlap_rules", "plan.stages", "overlap_moe_expert_parallel_comm is incompatible with full recompute");
    if (m.mtp_num_layers > 1) return violation("ep_overlap_rules", "model.mtp_num_layers", "overlap_moe_expert_parallel_comm needs mtp_num_layers <= 1");
  }
  return std::nullopt;
}

std::optional<RuleViolation> check_stage_rules(const Scenario& s, const Mesh& x, const PlanSpec& p) {
  std::map<int, long long> used;
  int layers = 0;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const StagePlan& st = p.stages[i];
    const NodeGroup& g = s.cluster.groups[st.group];
    if (x.tp > g.gpus_per_node || g.gpus_per_node % x.tp != 0) {
      return violation("tp_in_scale_up_domain", "plan.tp",
                       "tp (" + str(x.tp) + ") must divide the scale-up domain (" + str(g.gpus_per_node) +
                           " GPUs per node) of group " + str(st.group));
    }
    if (s.training.precision == Precision::kFp8 && !g.gpu.fp8_tflops) {
      return violation("fp8_needs_hardware", "training.precision", g.gpu.name + " has no FP8 tensor cores");
    }
    if (st.recompute != p.stages.front().recompute) {
      return violation("recompute_uniform", "plan.stages",
                       "upstream Megatron-LM takes one --recompute-granularity for all stages");
    }
    if (st.layers < 1) return violation("stage_has_layers", "plan.stages", "every pipeline stage needs at least one layer");
    used[st.group] += x.stage_gpus();
    layers += st.layers;
  }
  for (const auto& [group, gpus] : used) {
    if (gpus > s.cluster.groups[group].gpus()) {
      return violation("stage_gpus_fit_group", "plan.stages",
                       "stages on group " + str(group) + " need " + str(gpus) + " GPUs, the group has " +
                           str(s.cluster.groups[group].gpus()));
    }
  }
  if (layers != s.model.num_layers) {
    return violation("layers_sum", "plan.stages",
                     "stage layers add up to " + str(layers) + ", the model has " + str(s.model.num_layers));
  }
  return std::nullopt;
}

std::optional<RuleViolation> check_plan_rules(const Scenario& s, const PlanSpec& p) {
  const Mesh x = mesh_of(p);
  if (auto v = check_mesh_rules(s, x)) return v;
  return check_stage_rules(s, x, p);
}

}  // namespace hapmoe
