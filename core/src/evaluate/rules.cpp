#include "evaluate/rules.hpp"

#include <algorithm>
#include <vector>

#include "evaluate/stack_rules.hpp"
#include "evaluate/violation.hpp"
#include "spec/recompute.hpp"
#include "hapmoe/hardware.hpp"

namespace hapmoe {

namespace {
thread_local bool names_only = false;  // RuleNamesOnly: skip building the messages
using detail::violation;
std::string str(long long v) { return std::to_string(v); }
}  // namespace

bool detail::rule_names_only() { return names_only; }

RuleNamesOnly::RuleNamesOnly() : was_(names_only) { names_only = true; }
RuleNamesOnly::~RuleNamesOnly() { names_only = was_; }

// ---------------------------------------------------------------- mesh rules

RuleResult rule_heads_divisible_by_tp(const Scenario& s, const Mesh& x) {
  if (s.model.num_attention_heads % x.tp == 0) return std::nullopt;
  return violation("heads_divisible_by_tp", "plan.tp", [&] {
    return "num_attention_heads (" + str(s.model.num_attention_heads) +
           ") must be divisible by tp (" + str(x.tp) + ")";
  });
}

RuleResult rule_query_groups_vs_tp(const Scenario& s, const Mesh& x) {
  const ModelSpec& m = s.model;
  if (m.multi_latent_attention || m.query_groups() % x.tp == 0 || x.tp % m.query_groups() == 0) return std::nullopt;
  return violation("query_groups_vs_tp", "plan.tp", [&] {
    return "num_query_groups (" + str(m.query_groups()) + ") and tp must divide one another";
  });
}

RuleResult rule_expert_parallel_requires_experts(const Scenario& s, const Mesh& x) {
  if (s.model.is_moe() || (x.ep <= 1 && x.etp <= 1)) return std::nullopt;
  return violation("expert_parallel_requires_experts", x.ep > 1 ? "plan.ep" : "plan.etp",
                   [&] { return "ep and etp above 1 need num_experts > 0"; });
}

RuleResult rule_experts_divisible_by_ep(const Scenario& s, const Mesh& x) {
  if (!s.model.is_moe() || s.model.num_experts % x.ep == 0) return std::nullopt;
  return violation("experts_divisible_by_ep", "plan.ep", [&] {
    return "num_experts (" + str(s.model.num_experts) + ") must be divisible by ep (" + str(x.ep) +
           ")";
  });
}

RuleResult rule_expert_grid(const Scenario&, const Mesh& x) {
  const long long grid = static_cast<long long>(x.ep) * x.etp;
  if (x.stage_gpus() % grid == 0) return std::nullopt;
  return violation("expert_grid", "plan.ep", [&] {
    return "etp x ep (" + str(grid) + ") must divide tp x cp x dp (" + str(x.stage_gpus()) +
           "): the expert layers re-fold the same ranks";
  });
}

RuleResult rule_batch_divisible(const Scenario& s, const Mesh& x) {
  const long long per_step = static_cast<long long>(x.micro_batch_size) * x.dp;
  if (s.training.global_batch_size % per_step == 0) return std::nullopt;
  return violation("batch_divisible", "plan.micro_batch_size", [&] {
    return "global_batch_size (" + str(s.training.global_batch_size) +
           ") must be divisible by micro_batch_size x dp (" + str(per_step) + ")";
  });
}

RuleResult rule_pp_within_layers(const Scenario& s, const Mesh& x) {
  if (x.pp <= s.model.num_layers) return std::nullopt;
  return violation("pp_within_layers", "plan.pp", [&] {
    return "pp (" + str(x.pp) + ") must not exceed num_layers (" + str(s.model.num_layers) +
           "): every pipeline stage needs a layer";
  });
}

RuleResult rule_vpp_requires_pp(const Scenario&, const Mesh& x) {
  if (x.vpp <= 1 || x.pp > 1) return std::nullopt;
  return violation("vpp_requires_pp", "plan.vpp",
                   [&] { return "virtual pipeline stages need pp > 1"; });
}

RuleResult rule_vpp_microbatches(const Scenario& s, const Mesh& x) {
  if (x.vpp <= 1) return std::nullopt;
  const long long micro = num_microbatches(s.training, x);
  if (micro >= x.pp && micro % x.pp == 0) return std::nullopt;
  return violation("vpp_microbatches", "plan.vpp", [&] {
    return "the interleaved schedule needs the number of micro-batches (" + str(micro) +
           ") to be a multiple of pp (" + str(x.pp) + ")";
  });
}

RuleResult rule_vpp_layers(const Scenario& s, const Mesh& x) {
  if (x.vpp <= 1 || static_cast<long long>(x.pp) * x.vpp <= s.model.num_layers) return std::nullopt;
  return violation("vpp_layers", "plan.vpp", [&] {
    return "pp x vpp (" + str(static_cast<long long>(x.pp) * x.vpp) +
           ") must not exceed num_layers (" + str(s.model.num_layers) +
           "): every virtual pipeline chunk needs a layer";
  });
}

RuleResult rule_sequence_parallel_needs_tp(const Scenario&, const Mesh& x) {
  if (!x.sequence_parallel || x.tp > 1) return std::nullopt;
  return violation("sequence_parallel_needs_tp", "plan.sequence_parallel",
                   [&] { return "sequence parallelism needs tp > 1"; });
}

RuleResult rule_cp_seq_divisible(const Scenario& s, const Mesh& x) {
  if (x.cp <= 1 || s.training.seq_length % (2 * x.cp) == 0) return std::nullopt;
  return violation("cp_seq_divisible", "plan.cp", [&] {
    return "seq_length (" + str(s.training.seq_length) + ") must be divisible by 2 x cp (" +
           str(2 * x.cp) + ")";
  });
}

RuleResult rule_sp_seq_divisible(const Scenario& s, const Mesh& x) {
  if (!x.sequence_parallel || (s.training.seq_length / x.cp) % x.tp == 0) return std::nullopt;
  return violation("sp_seq_divisible", "plan.tp", [&] {
    return "with sequence parallelism seq_length / cp must be divisible by tp";
  });
}

// --overlap-moe-expert-parallel-comm's conditions (transformer_config.py __post_init__). Its
// bf16/fp16 condition always holds: every emitted plan trains with --bf16.
RuleResult rule_ep_overlap_needs_ep(const Scenario&, const Mesh& x) {
  if (!x.ep_comm_overlap || x.ep > 1) return std::nullopt;
  return violation("ep_overlap_needs_ep", "plan.ep_comm_overlap", [&] {
    return "ep_comm_overlap (--overlap-moe-expert-parallel-comm) needs ep > 1";
  });
}

RuleResult rule_ep_overlap_recompute(const Scenario&, const Mesh& x) {
  if (!x.ep_comm_overlap || (!x.recompute.full() && !x.recompute.has(kRecomputeMoe))) return std::nullopt;
  return violation("ep_overlap_recompute", "plan.ep_comm_overlap", [&] {
    return "ep_comm_overlap is incompatible with full recompute and with the \"moe\" recompute "
           "module";
  });
}

RuleResult rule_ep_overlap_mtp(const Scenario& s, const Mesh& x) {
  if (!x.ep_comm_overlap || s.model.mtp_num_layers <= 1) return std::nullopt;
  return violation("ep_overlap_mtp", "plan.ep_comm_overlap",
                   [&] { return "ep_comm_overlap needs mtp_num_layers <= 1"; });
}

RuleResult rule_ep_overlap_vpp(const Scenario&, const Mesh& x) {
  if (!x.ep_comm_overlap || x.pp <= 1 || x.vpp > 1) return std::nullopt;
  return violation("ep_overlap_vpp", "plan.vpp",
                   [&] { return "ep_comm_overlap needs vpp > 1 when pp > 1"; });
}

RuleResult rule_recompute_modules_apply(const Scenario& s, const Mesh& x) {
  const unsigned bad = x.recompute.kind == Recompute::Kind::kSelective
                           ? x.recompute.modules & rejected_recompute_modules(s.model)
                           : 0u;
  if (bad == 0) return std::nullopt;
  return violation("recompute_modules_apply", "plan.stages", [&] {
    return (bad & kRecomputeMlaUpProj)
               ? "recompute module mla_up_proj needs multi_latent_attention"
               : "recompute module moe_act needs experts (--moe-grouped-gemm)";
  });
}

// --optimizer-cpu-offload's conditions (arguments.py validate_args, optimizer/__init__.py).
RuleResult rule_offload_needs_distributed_optimizer(const Scenario& s, const Mesh& x) {
  if (x.optimizer_offload_fraction <= 0 || s.training.use_distributed_optimizer) return std::nullopt;
  return violation("offload_needs_distributed_optimizer", "plan.optimizer_offload_fraction", [&] {
    return "optimizer offload needs --use-precision-aware-optimizer, which needs "
           "training.use_distributed_optimizer";
  });
}

RuleResult rule_offload_vs_fp8_param_gather(const Scenario& s, const Mesh& x) {
  if (x.optimizer_offload_fraction <= 0 || !s.training.fp8_param_gather) return std::nullopt;
  return violation("offload_vs_fp8_param_gather", "plan.optimizer_offload_fraction", [&] {
    return "optimizer offload with training.fp8_param_gather needs the delayed FP8 recipe, "
           "which the planner does not emit";
  });
}

RuleResult rule_moe_bias_needs_etp1(const Scenario& s, const Mesh& x) {
  if (!s.model.is_moe() || !s.model.add_bias_linear || x.etp <= 1) return std::nullopt;
  return violation("moe_bias_needs_etp1", "plan.etp", [&] {
    return "with biases on the linear layers (model.add_bias_linear) Megatron needs etp 1, got " +
           str(x.etp);
  });
}

namespace {
using MeshRule = RuleResult (*)(const Scenario&, const Mesh&);

template <size_t N>
RuleResult first_violation(const MeshRule (&rules)[N], const Scenario& s, const Mesh& x) {
  for (MeshRule r : rules) {
    if (auto v = r(s, x)) return v;
  }
  return std::nullopt;
}
}  // namespace

RuleResult check_grid_rules(const Scenario& s, const Mesh& x) {
  static constexpr MeshRule kRules[] = {
      rule_heads_divisible_by_tp,    rule_query_groups_vs_tp, rule_expert_parallel_requires_experts,
      rule_experts_divisible_by_ep,  rule_expert_grid,        rule_batch_divisible,
      rule_sequence_parallel_needs_tp, rule_cp_seq_divisible, rule_sp_seq_divisible};
  return first_violation(kRules, s, x);
}

RuleResult check_shape_rules_past_grid(const Scenario& s, const Mesh& x) {
  static constexpr MeshRule kRules[] = {
      rule_flex_dispatcher_needs_tp_ep, rule_recompute_modules_apply, rule_ep_overlap_needs_ep,
      rule_ep_overlap_dispatcher, rule_ep_overlap_recompute, rule_ep_overlap_mtp,
      rule_offload_needs_distributed_optimizer, rule_offload_vs_fp8_param_gather, rule_moe_bias_needs_etp1,
      rule_deepep_no_pad_to_capacity, rule_rank_capacity_needs_hybridep};
  // The CUDA graph rules come last, and each holds without graphs (no implementation, no
  // modules): skipped then (the enumerator checks thousands of meshes, most without graphs).
  static constexpr MeshRule kGraphRules[] = {
      rule_graph_modules_need_per_layer_impl, rule_graph_moe_vs_moe_router, rule_graph_preprocess_needs_router,
      rule_graph_moe_modules_need_experts, rule_graph_mlp_needs_dense_layers, rule_graph_moe_needs_drop_pad,
      rule_graph_preprocess_host_sync, rule_full_iteration_needs_static_moe, rule_graphs_full_recompute,
      rule_graph_te_moe_recompute, rule_ep_overlap_graph_modules, rule_graph_delay_wgrad_attn_bias};
  if (auto v = first_violation(kRules, s, x)) return v;
  if (!x.cuda_graphs.any() && x.cuda_graphs.modules == 0) return std::nullopt;
  return first_violation(kGraphRules, s, x);
}

RuleResult check_shape_rules(const Scenario& s, const Mesh& x) {
  if (auto v = check_grid_rules(s, x)) return v;
  return check_shape_rules_past_grid(s, x);
}

RuleResult check_pipeline_rules(const Scenario& s, const Mesh& x) {
  static constexpr MeshRule kRules[] = {rule_pp_within_layers, rule_vpp_requires_pp, rule_vpp_microbatches,
                                        rule_vpp_layers, rule_ep_overlap_vpp};
  return first_violation(kRules, s, x);
}

RuleResult check_mesh_rules(const Scenario& s, const Mesh& x) {
  if (auto v = check_shape_rules(s, x)) return v;
  return check_pipeline_rules(s, x);
}

// ---------------------------------------------------------------- group rules

RuleResult rule_tp_in_scale_up_domain(const Scenario& s, const Mesh& x, int group) {
  const NodeGroup& g = s.cluster.groups[group];
  if (x.tp <= g.gpus_per_node && g.gpus_per_node % x.tp == 0) return std::nullopt;
  return violation("tp_in_scale_up_domain", "plan.tp", [&] {
    return "tp (" + str(x.tp) + ") must divide the scale-up domain (" + str(g.gpus_per_node) +
           " GPUs per node) of group " + str(group);
  });
}

RuleResult rule_stage_node_alignment(const Scenario& s, const Mesh& x, int group) {
  const long long per_node = s.cluster.groups[group].gpus_per_node;
  const long long stage = x.stage_gpus();
  if (stage % per_node == 0 || per_node % stage == 0) return std::nullopt;
  return violation("stage_node_alignment", "plan.dp", [&] {
    return "a stage's tp x cp x dp (" + str(stage) +
           " GPUs) must fill whole nodes or tile one node of group " + str(group) + " (" +
           str(per_node) + " GPUs per node) evenly";
  });
}

RuleResult rule_fp8_needs_hardware(const Scenario& s, const Mesh&, int group) {
  const GpuSpec& gpu = s.cluster.groups[group].gpu;
  if (s.training.precision != Precision::kFp8 || gpu.fp8_tflops) return std::nullopt;
  return violation("fp8_needs_hardware", "training.precision",
                   [&] { return gpu.name + " has no FP8 tensor cores"; });
}

RuleResult rule_fp8_recipe_supported(const Scenario& s, const Mesh&, int group) {
  const GpuSpec& gpu = s.cluster.groups[group].gpu;
  const std::string& want = s.training.fp8_recipe;
  if (s.training.precision != Precision::kFp8) return std::nullopt;
  if (want.empty() && !gpu.fp8_recipes.empty()) return std::nullopt;
  if (!want.empty() && std::find(gpu.fp8_recipes.begin(), gpu.fp8_recipes.end(), want) != gpu.fp8_recipes.end()) {
    return std::nullopt;
  }
  return violation("fp8_recipe_supported", "training.fp8_recipe", [&] {
    return gpu.name + " runs no FP8 recipe" + (want.empty() ? std::string() : " \"" + want + "\"") +
           " (its fp8_recipes list)";
  });
}

RuleResult check_group_rules(const Scenario& s, const Mesh& x, int group) {
  if (auto v = rule_tp_in_scale_up_domain(s, x, group)) return v;
  if (auto v = rule_stage_node_alignment(s, x, group)) return v;
  if (auto v = rule_fp8_needs_hardware(s, x, group)) return v;
  if (auto v = rule_fp8_recipe_supported(s, x, group)) return v;
  if (auto v = rule_dispatch_supported(s, x, group)) return v;
  return rule_fp8_attention_sinks_need_blackwell(s, x, group);
}

// ---------------------------------------------------------------- group-set rules

RuleResult rule_fp8_common_recipe(const Scenario& s, const std::vector<int>& groups) {
  if (s.training.precision != Precision::kFp8 || !s.training.fp8_recipe.empty() || groups.size() < 2) {
    return std::nullopt;
  }
  std::vector<const GpuSpec*> gpus;
  for (int g : groups) gpus.push_back(&s.cluster.groups[g].gpu);
  if (!fp8_recipe_for("", gpus).empty()) return std::nullopt;
  return violation("fp8_common_recipe", "training.fp8_recipe", [&] {
    return "the stages' GPUs share no FP8 recipe (" + gpus.front()->name + " and " +
           gpus.back()->name + "): one --fp8-recipe runs on every rank";
  });
}

RuleResult rule_same_collective_library(const Scenario& s, const std::vector<int>& groups) {
  if (s.search.assume_cross_vendor_collectives) return std::nullopt;
  for (int g : groups) {
    const std::string& a = s.cluster.groups[groups.front()].gpu.vendor;
    const std::string& b = s.cluster.groups[g].gpu.vendor;
    if (a == b) continue;
    return violation("same_collective_library", "plan.stages", [&] {
      return "upstream Megatron-LM runs one collective library (NCCL, RCCL or HCCL): stages on " +
             a + " and " + b +
             " GPUs need search.mode \"hetero\" (FlagScale with the flagcx backend or "
             "CPU communication)";
    });
  }
  return std::nullopt;
}

RuleResult check_group_set_rules(const Scenario& s, const std::vector<int>& groups) {
  if (auto v = rule_same_collective_library(s, groups)) return v;
  return rule_fp8_common_recipe(s, groups);
}

std::string mixed_vendor_note(const Scenario& s) {
  std::vector<std::string> vendors;
  for (const NodeGroup& g : s.cluster.groups) {
    if (std::find(vendors.begin(), vendors.end(), g.gpu.vendor) == vendors.end()) vendors.push_back(g.gpu.vendor);
  }
  if (s.search.assume_cross_vendor_collectives || vendors.size() < 2) {
    return "";
  }
  std::string list;
  for (const std::string& v : vendors) list += (list.empty() ? "" : ", ") + v;
  return "the cluster mixes GPU vendors (" + list + "): upstream Megatron-LM runs one collective library, so "
         "these plans use GPUs of one vendor only; a plan spanning vendors needs search.mode \"hetero\" "
         "(FlagScale with the flagcx backend or CPU communication)";
}

// ---------------------------------------------------------------- stage rules

RuleResult rule_stage_groups_valid(const Scenario& s, const PlanSpec& p) {
  if (static_cast<long long>(p.stages.size()) != p.pp) {
    return violation("stage_count", "plan.stages", [&] {
      return "plan has " + str(static_cast<long long>(p.stages.size())) + " stages, pp is " +
             str(p.pp);
    });
  }
  for (const StagePlan& st : p.stages) {
    if (st.group < 0 || st.group >= static_cast<int>(s.cluster.groups.size())) {
      return violation("stage_group_exists", "plan.stages",
                       [&] { return "stage group " + str(st.group) + " is not a cluster group"; });
    }
  }
  return std::nullopt;
}

RuleResult rule_recompute_uniform(const Scenario&, const PlanSpec& p) {
  for (const StagePlan& st : p.stages) {
    if (st.recompute != p.stages.front().recompute) {
      return violation("recompute_uniform", "plan.stages", [&] {
        return "upstream Megatron-LM takes one --recompute-granularity for all stages";
      });
    }
  }
  return std::nullopt;
}

RuleResult rule_stage_layers_at_least_vpp(const Scenario&, const PlanSpec& p) {
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const int n = p.stages[i].layers;
    if (n < 1)
      return violation("stage_has_layers", "plan.stages",
                       [&] { return "every pipeline stage needs at least one layer"; });
    if (n < p.vpp) {
      return violation("stage_layers_at_least_vpp", "plan.stages", [&] {
        return "stage " + str(static_cast<long long>(i)) + " has " + str(n) + " layers for " +
               str(p.vpp) + " virtual pipeline chunks: each chunk needs at least one layer";
      });
    }
  }
  return std::nullopt;
}

RuleResult rule_layers_sum(const Scenario& s, const PlanSpec& p) {
  long long layers = 0;
  for (const StagePlan& st : p.stages) layers += st.layers;
  if (layers == s.model.num_layers) return std::nullopt;
  return violation("layers_sum", "plan.stages", [&] {
    return "stage layers add up to " + str(layers) + ", the model has " + str(s.model.num_layers);
  });
}

RuleResult rule_stage_gpus_fit_group(const Scenario& s, const PlanSpec& p) {
  std::vector<long long> used(s.cluster.groups.size(), 0);
  const long long stage = mesh_of(p).stage_gpus();
  for (const StagePlan& st : p.stages) used[st.group] += stage;
  for (size_t g = 0; g < used.size(); ++g) {
    if (used[g] > s.cluster.groups[g].gpus()) {
      return violation("stage_gpus_fit_group", "plan.stages", [&] {
        return "stages on group " + str(static_cast<long long>(g)) + " need " + str(used[g]) +
               " GPUs, the group has " + str(s.cluster.groups[g].gpus());
      });
    }
  }
  return std::nullopt;
}

RuleResult check_plan_rules(const Scenario& s, const PlanSpec& p) {
  if (auto v = rule_stage_groups_valid(s, p)) return v;
  const Mesh x = mesh_of(p);
  if (auto v = check_mesh_rules(s, x)) return v;
  std::vector<int> groups;
  for (const StagePlan& st : p.stages) {
    if (std::find(groups.begin(), groups.end(), st.group) == groups.end()) groups.push_back(st.group);
  }
  if (auto v = check_group_set_rules(s, groups)) return v;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    if (i > 0 && p.stages[i].group == p.stages[i - 1].group) continue;
    if (auto v = check_group_rules(s, x, p.stages[i].group)) return v;
  }
  using Rule = RuleResult (*)(const Scenario&, const PlanSpec&);
  static constexpr Rule kRules[] = {rule_recompute_uniform, rule_stage_layers_at_least_vpp, rule_stage_gpus_fit_group,
                                    rule_layers_sum};
  for (Rule r : kRules) {
    if (auto v = r(s, p)) return v;
  }
  return std::nullopt;
}

}  // namespace hapmoe
