#include "evaluate/rule_text.hpp"

#include <algorithm>

namespace hapmoe {

namespace {

// Rule names are those of evaluate/rules.cpp, evaluate/stack_rules.cpp, the hetero rules and the
// search's own counters (stats.pruned).
const std::vector<RuleText>& rule_table() {
  static const std::vector<RuleText> table = {
      {"tp_in_scale_up_domain", "TP must divide the GPUs of one node (its NVLink or scale-up domain): tensor-parallel GPUs exchange activations in every layer.",
       {"search.tp", "cluster.groups[].gpus_per_node"}},
      {"heads_divisible_by_tp", "The attention heads must split evenly over the TP GPUs.", {"search.tp", "model.num_attention_heads"}},
      {"query_groups_vs_tp", "The key/value head groups and TP must divide one another.", {"search.tp", "model.num_query_groups"}},
      {"sp_seq_divisible", "With sequence parallelism the sequence must split evenly over the TP GPUs.", {"search.tp", "training.seq_length"}},
      {"cp_seq_divisible", "The sequence must split evenly over the CP GPUs (two chunks each).", {"search.cp", "training.seq_length"}},
      {"expert_parallel_requires_experts", "EP and ETP above 1 need a model with experts.", {"search.ep", "search.etp"}},
      {"experts_divisible_by_ep", "The experts must split evenly over the EP GPUs.", {"search.ep", "model.num_experts"}},
      {"expert_grid", "EP × ETP must divide the GPUs of a pipeline stage (TP × CP × DP): the expert layers re-use the same GPUs.",
       {"search.ep", "search.etp"}},
      {"moe_bias_needs_etp1", "Linear biases on an MoE model need ETP 1.", {"search.etp"}},
      {"batch_divisible", "The global batch must split into micro-batches for every data-parallel copy.",
       {"training.global_batch_size", "search.micro_batch_size"}},
      {"pp_within_layers", "There can be no more pipeline stages than layers.", {"search.pp", "model.num_layers"}},
      {"pp_range", "The pipeline size a set of GPU groups gives is outside the allowed PP values or above the layers.", {"search.pp", "model.num_layers"}},
      {"vpp_requires_pp", "The interleaved schedule (VPP above 1) needs more than one pipeline stage.", {"search.vpp", "search.pp"}},
      {"vpp_microbatches", "The interleaved schedule needs the micro-batches to be a multiple of PP.", {"search.vpp", "training.global_batch_size"}},
      {"vpp_layers", "Every virtual pipeline chunk needs a layer: PP × VPP at most the layers.", {"search.vpp", "model.num_layers"}},
      {"stage_layers_at_least_vpp", "Every pipeline stage must hold at least VPP layers.", {"search.vpp", "model.num_layers"}},
      {"stage_node_alignment", "A pipeline stage's GPUs (TP × CP × DP) must fill whole nodes or divide one node evenly.",
       {"cluster.groups[].gpus_per_node", "cluster.groups[].nodes"}},
      {"fp8_needs_hardware", "FP8 training needs GPUs with FP8 tensor cores.", {"training.precision", "cluster.groups[].gpu"}},
      {"fp8_recipe_supported", "The FP8 recipe must be one each stage's GPU runs.", {"training.fp8_recipe", "cluster.groups[].gpu"}},
      {"fp8_common_recipe", "All stages' GPUs must share one FP8 recipe: one --fp8-recipe runs on every GPU.",
       {"training.fp8_recipe", "cluster.groups[].gpu"}},
      {"same_collective_library", "Upstream Megatron-LM uses one collective library (NCCL, RCCL or HCCL), so its stages use one vendor's GPUs; the FlagScale heterogeneous runtime spans vendors.",
       {"search.mode"}},
      {"sequence_parallel_needs_tp", "Sequence parallelism needs TP above 1.", {"search.tp"}},
      {"ep_overlap_needs_ep", "Overlapping the expert all-to-all needs EP above 1.", {"search.ep_comm_overlap", "search.ep"}},
      {"ep_overlap_recompute", "Overlapping the expert all-to-all rules out full recompute and recomputing the MoE module.",
       {"search.ep_comm_overlap", "search.recompute"}},
      {"ep_overlap_mtp", "Overlapping the expert all-to-all allows at most one MTP layer.", {"search.ep_comm_overlap", "model.mtp_num_layers"}},
      {"ep_overlap_vpp", "Overlapping the expert all-to-all with pipelining needs the interleaved schedule (VPP above 1).",
       {"search.ep_comm_overlap", "search.vpp"}},
      {"recompute_modules_apply", "A recompute module must exist in the model (mla_up_proj needs MLA, moe_act experts).", {"search.recompute"}},
      {"offload_needs_distributed_optimizer", "Optimizer CPU offload needs the distributed optimizer.",
       {"search.optimizer_offload_fraction", "training.use_distributed_optimizer"}},
      {"graph_te_moe_recompute", "Recomputing the MoE module does not work with a Transformer Engine CUDA graph of the router.",
       {"search.recompute"}},
      {"bottleneck_bound", "Skipped: the slowest stage they must have already makes them slower than the plans kept.", {}},
      {"graphs_full_recompute", "CUDA graphs do not combine with full recompute.", {"search.recompute"}},
      {"memory_bound", "Cut before costing: the weights, gradients and optimizer state alone do not fit in the stages' free GPU memory.",
       {"cluster.groups[].nodes"}},
      {"stage_memory_bound", "Cut before costing: some stage cannot fit its share of the layers in GPU memory.", {"cluster.groups[].nodes"}},
      {"stage_memory", "Layer splits cut because a stage does not fit in GPU memory.", {"cluster.groups[].nodes"}},
      {"entry_lower_bound", "Skipped: a lower bound on their iteration time shows they cannot beat the plans already kept.", {}},
      {"over_budget", "Skipped: their GPUs bill more per hour than search.budget_per_hour.",
       {"search.budget_per_hour", "cluster.groups[].price_per_gpu_hour"}},
      {"order_bound", "Stage orders skipped: a lower bound shows they cannot beat the plans already kept.", {}},
      {"order_split_bound", "Stage orders skipped: a bound on their best layer split cannot beat the plans already kept.", {}},
      {"order_reach_bound", "Skipped: in no order can their stages hold the layers within the stage time that beating the plans kept allows.", {}},
      {"split_lower_bound", "Partial layer splits cut: a lower bound shows they cannot beat the plans already kept.", {}},
      {"dominated_split", "Partial layer splits dropped: another one is at least as good in every term.", {}},
      {"dispatch_supported", "The token dispatcher must be one this model and GPU run.", {"training.moe_token_dispatcher_type"}},
  };
  return table;
}

}  // namespace

const RuleText* find_rule_text(std::string_view rule) {
  const auto& t = rule_table();
  auto it = std::find_if(t.begin(), t.end(), [&](const RuleText& r) { return r.rule == rule; });
  return it == t.end() ? nullptr : &*it;
}

std::string rule_sentence(std::string_view rule) {
  if (const RuleText* r = find_rule_text(rule)) return std::string(r->sentence);
  std::string words(rule);
  std::replace(words.begin(), words.end(), '_', ' ');
  return "It is one of the Megatron-LM rules the planner checks every plan against (\"" + words + "\").";
}

std::vector<std::string> rules_named_in(std::string_view text, const std::vector<std::string>& known) {
  std::vector<std::pair<size_t, std::string>> found;
  auto look = [&](std::string_view rule) {
    const std::string quoted = "\"" + std::string(rule) + "\"";
    const size_t at = text.find(quoted);
    if (at == std::string_view::npos) return;
    if (std::none_of(found.begin(), found.end(), [&](const auto& f) { return f.second == rule; })) found.emplace_back(at, rule);
  };
  for (const RuleText& r : rule_table()) look(r.rule);
  for (const std::string& k : known) look(k);
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

}  // namespace hapmoe
