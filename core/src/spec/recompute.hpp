// Activation recomputation choices: the extra backward-pass work each --recompute-modules entry
// costs (it re-runs that module's forward), which modules act on a model, and the values the
// search tries by default. What each module frees is in cost_memory.hpp.
#pragma once

#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe {

// Forward time of one layer's recomputable parts, per micro-batch on one GPU (0 when the layer
// has no such part). Communication is the exposed forward time.
struct LayerForwardParts {
  double core_attn_s = 0;       // attention core (flash attention)
  double norms_s = 0;           // separate norms: MLA input norm, MoE pre-MLP norm
  double mla_up_proj_s = 0;     // MLA q / kv up-projections and RoPE
  double mlp_s = 0;             // a dense layer's MLP
  double moe_s = 0;             // the whole MoE block (router, experts, shared expert)
  double moe_act_s = 0;         // the experts' activation function
  double shared_experts_s = 0;  // the shared expert's MLP
  double mlp_tp_comm_s = 0;     // TP collectives of the dense MLP or of the shared expert
  double moe_ep_comm_s = 0;     // token dispatch + combine (and ETP gathers)
};

// Extra per-micro-batch backward work of a recompute choice.
struct RecomputeExtra {
  double compute_s = 0, tp_s = 0, ep_s = 0;
};

// Selective recompute re-runs each chosen module's forward before its backward (Megatron's
// checkpoint and CheckpointWithoutOutput both replay the forward); "moe" replays the whole MoE
// block, which contains moe_act and shared_experts, so those are not counted twice. Full
// recompute is the caller's (the whole layer forward, communication included).
RecomputeExtra selective_recompute_extra(const Recompute& rc, const LayerForwardParts& p);

// Modules that change anything on model m (RecomputeModule bits): core_attn always; layernorm
// with a separate norm (MoE layers, MLA); mla_up_proj with MLA; mlp with a dense layer; moe and
// moe_act with experts; shared_experts with a shared expert.
unsigned applicable_recompute_modules(const ModelSpec& m);

// Modules Megatron rejects on model m (RecomputeModule bits): mla_up_proj without MLA
// (transformer_config.py ValueError), moe_act without --moe-grouped-gemm (emitted for MoE only).
unsigned rejected_recompute_modules(const ModelSpec& m);

// search.recompute's default (4 values, so the search space grows by a third over none /
// selective / full): none; for MoE models [moe_act, layernorm], then with MLA [core_attn,
// moe_act, layernorm, mla_up_proj], else [layernorm, moe]; for dense models "selective"
// (core_attn) and [core_attn, mlp]; then full.
std::vector<Recompute> default_recompute_choices(const ModelSpec& m);

}  // namespace hapmoe
