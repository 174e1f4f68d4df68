// Validity rules of a plan's software stack: the MoE token dispatcher and its flex backend, token
// dropping and static shapes, and CUDA graphs (Megatron-LM's TransformerConfig.__post_init__ and
// validate_args, megatron.md §2; Megatron-Bridge's flex_dispatcher_backend.py for which GPUs run
// which backend). One named function each, like rules.hpp, which lists them among the mesh and
// group rules.
#pragma once

#include "evaluate/rule_result.hpp"
#include "hapmoe/parallel_config.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

// Whether a node group's GPUs run a dispatcher: DeepEP on CUDA compute capability 8.x and 9.x
// (Ampere, Hopper) and on B200/B300 (10.x in 8-GPU NVLink nodes, not an NVL72 domain); HybridEP on
// 8.x-10.x, NVL72 included (Megatron: "only hybridep supports the MNNVL case"); alltoall and
// allgather wherever NCCL-family collectives run.
bool dispatch_runs_on(Dispatch d, const NodeGroup& g);

// --- Mesh rules (the dispatcher and CUDA graphs are mesh fields). ---
RuleResult rule_flex_dispatcher_needs_tp_ep(const Scenario& s, const Mesh& x);
RuleResult rule_ep_overlap_dispatcher(const Scenario& s, const Mesh& x);  // alltoall or flex
// DeepEP cannot pad expert inputs to capacity (transformer_config.py).
RuleResult rule_deepep_no_pad_to_capacity(const Scenario& s, const Mesh& x);
// --moe-expert-rank-capacity-factor is HybridEP's (or ncclep's) budget.
RuleResult rule_rank_capacity_needs_hybridep(const Scenario& s, const Mesh& x);
// --cuda-graph-modules only with a per-layer implementation (empty with full_iteration).
RuleResult rule_graph_modules_need_per_layer_impl(const Scenario& s, const Mesh& x);
RuleResult rule_graph_moe_vs_moe_router(const Scenario& s, const Mesh& x);
RuleResult rule_graph_preprocess_needs_router(const Scenario& s, const Mesh& x);
RuleResult rule_graph_moe_modules_need_experts(const Scenario& s, const Mesh& x);
RuleResult rule_graph_mlp_needs_dense_layers(const Scenario& s, const Mesh& x);
// Capturing the MoE block (module moe, or a whole MoE layer) needs its shapes static: capacity
// factor with padding.
RuleResult rule_graph_moe_needs_drop_pad(const Scenario& s, const Mesh& x);
// moe_preprocess may not capture the alltoall dispatcher's host copies (dropping without padding).
RuleResult rule_graph_preprocess_host_sync(const Scenario& s, const Mesh& x);
// Full-iteration graphs capture the dispatcher too: an MoE model needs static shapes.
RuleResult rule_full_iteration_needs_static_moe(const Scenario& s, const Mesh& x);
RuleResult rule_graphs_full_recompute(const Scenario& s, const Mesh& x);  // full recompute: full_iteration only
RuleResult rule_graph_te_moe_recompute(const Scenario& s, const Mesh& x);
RuleResult rule_ep_overlap_graph_modules(const Scenario& s, const Mesh& x);  // TE graphs of moe/mlp
// validate_args: with --delay-wgrad-compute (emitted with EP overlap) and --overlap-grad-reduce, a
// graph of the attention needs a model without attention biases.
RuleResult rule_graph_delay_wgrad_attn_bias(const Scenario& s, const Mesh& x);

// --- Group rules. ---
// The group's GPUs run the plan's dispatcher (dispatch_runs_on).
RuleResult rule_dispatch_supported(const Scenario& s, const Mesh& x, int group);
// FP8 attention with sinks (softmax_type other than vanilla) runs only on Blackwell (Transformer
// Engine: FusedAttention needs compute capability 10 and cuDNN 9.21 for it, and the unfused
// backend does not take FP8 with sinks).
RuleResult rule_fp8_attention_sinks_need_blackwell(const Scenario& s, const Mesh& x, int group);

}  // namespace hapmoe
