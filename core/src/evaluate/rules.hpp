// Validity rules for a plan: Megatron-LM's (megatron.md §2) for the flags a plan emits, and the
// placement rules of the search space. Each rule is one named function; the candidate enumerator,
// evaluate and the tests all call these, so `evaluate` rejects exactly what the search never
// returns, with the rule's name. A rule returns nullopt when the plan passes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evaluate/rule_result.hpp"
#include "hapmoe/parallel_config.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

// --- Mesh rules: depend on the mesh shape (incl. pp and vpp) only. ---
RuleResult rule_heads_divisible_by_tp(const Scenario& s, const Mesh& x);
RuleResult rule_query_groups_vs_tp(const Scenario& s, const Mesh& x);
RuleResult rule_expert_parallel_requires_experts(const Scenario& s, const Mesh& x);
RuleResult rule_experts_divisible_by_ep(const Scenario& s, const Mesh& x);
RuleResult rule_expert_grid(const Scenario& s, const Mesh& x);  // etp x ep divides tp x cp x dp
RuleResult rule_batch_divisible(const Scenario& s, const Mesh& x);
RuleResult rule_pp_within_layers(const Scenario& s, const Mesh& x);  // every stage needs a layer
RuleResult rule_vpp_requires_pp(const Scenario& s, const Mesh& x);
RuleResult rule_vpp_microbatches(const Scenario& s, const Mesh& x);
RuleResult rule_vpp_layers(const Scenario& s, const Mesh& x);  // pp x vpp <= num_layers
RuleResult rule_sequence_parallel_needs_tp(const Scenario& s, const Mesh& x);
RuleResult rule_cp_seq_divisible(const Scenario& s, const Mesh& x);
RuleResult rule_sp_seq_divisible(const Scenario& s, const Mesh& x);
// ep_comm_overlap (--overlap-moe-expert-parallel-comm) conditions, one rule each.
RuleResult rule_ep_overlap_needs_ep(const Scenario& s, const Mesh& x);
RuleResult rule_ep_overlap_recompute(const Scenario& s, const Mesh& x);   // no full, no "moe"
RuleResult rule_ep_overlap_mtp(const Scenario& s, const Mesh& x);         // mtp_num_layers <= 1
RuleResult rule_ep_overlap_vpp(const Scenario& s, const Mesh& x);         // vpp > 1 when pp > 1
// Recompute modules Megatron rejects for the model (mla_up_proj without MLA, moe_act without experts).
RuleResult rule_recompute_modules_apply(const Scenario& s, const Mesh& x);
// Optimizer CPU offload: precision-aware optimizer (emitted) needs the distributed optimizer; no
// fp8_param_gather (Megatron allows it only with the delayed recipe).
RuleResult rule_offload_needs_distributed_optimizer(const Scenario& s, const Mesh& x);
RuleResult rule_offload_vs_fp8_param_gather(const Scenario& s, const Mesh& x);
// Megatron's TransformerConfig: MoE with biases on the linear layers (add_bias_linear) needs
// expert tensor parallelism 1.
RuleResult rule_moe_bias_needs_etp1(const Scenario& s, const Mesh& x);
// The software-stack rules (dispatcher, token handling, CUDA graphs) are in stack_rules.hpp.
// The rules that do not depend on pp or vpp (checked once per mesh shape by the enumerator).
RuleResult check_shape_rules(const Scenario& s, const Mesh& x);
// check_shape_rules in two parts, in its order: the rules of the parallel grid alone (tp, cp, dp,
// ep, etp, micro-batch size, sequence parallelism: the same for the enumerator's many shapes of
// one grid), then the others (recompute, EP overlap, offload, the software stack).
RuleResult check_grid_rules(const Scenario& s, const Mesh& x);
RuleResult check_shape_rules_past_grid(const Scenario& s, const Mesh& x);
// The rules that involve pp or vpp (pipeline_within_layers, vpp_*, ep_overlap_vpp).
RuleResult check_pipeline_rules(const Scenario& s, const Mesh& x);
// All mesh rules in a fixed order (shape rules, then pipeline rules); the first violation.
RuleResult check_mesh_rules(const Scenario& s, const Mesh& x);

// --- Group rules: may this node group hold stages of mesh x? (tp, cp, dp and precision.) ---
RuleResult rule_tp_in_scale_up_domain(const Scenario& s, const Mesh& x, int group);
// A stage's tp x cp x dp GPUs fill whole nodes or tile one node evenly, so stages never straddle
// nodes unevenly (the search's placement; also what Megatron's contiguous rank order gives).
RuleResult rule_stage_node_alignment(const Scenario& s, const Mesh& x, int group);
RuleResult rule_fp8_needs_hardware(const Scenario& s, const Mesh& x, int group);
// FP8 training with a requested training.fp8_recipe: this group's GPU must run that recipe
// (GpuSpec.fp8_recipes); with none requested it must run some recipe.
RuleResult rule_fp8_recipe_supported(const Scenario& s, const Mesh& x, int group);
RuleResult check_group_rules(const Scenario& s, const Mesh& x, int group);

// --- Group-set rules: may these node groups hold the stages of one upstream job? ---
// FP8 with the default recipe: the groups' GPUs share at least one recipe (fp8_recipe_for).
RuleResult rule_fp8_common_recipe(const Scenario& s, const std::vector<int>& groups);
// Upstream Megatron-LM runs one NCCL-family collective library for the whole job, so every
// group has the same GPU vendor (nvidia with nvidia, amd with amd, huawei with huawei).
RuleResult rule_same_collective_library(const Scenario& s, const std::vector<int>& groups);
RuleResult check_group_set_rules(const Scenario& s, const std::vector<int>& groups);
// For results of upstream plans: when the cluster mixes vendors, what that means for the plans
// ("" otherwise; the planner adds it in "megatron" mode).
std::string mixed_vendor_note(const Scenario& s);

// --- Stage rules: the plan's stages. ---
RuleResult rule_stage_groups_valid(const Scenario& s, const PlanSpec& p);  // pp stages, known groups
RuleResult rule_recompute_uniform(const Scenario& s, const PlanSpec& p);
// Each stage holds at least vpp layers (each virtual chunk at least one).
RuleResult rule_stage_layers_at_least_vpp(const Scenario& s, const PlanSpec& p);
RuleResult rule_layers_sum(const Scenario& s, const PlanSpec& p);
RuleResult rule_stage_gpus_fit_group(const Scenario& s, const PlanSpec& p);

// Every rule for a complete plan: stage count and groups, mesh, group rules for each used group,
// stage rules. (Where the search places stages -- whole GPU groups, one block per group -- is a
// choice of its space, not a validity rule: evaluate accepts other placements.)
RuleResult check_plan_rules(const Scenario& s, const PlanSpec& plan);

}  // namespace hapmoe
