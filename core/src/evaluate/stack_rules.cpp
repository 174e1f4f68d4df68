#include "evaluate/stack_rules.hpp"

#include <cmath>
#include <string>

#include "evaluate/violation.hpp"

namespace hapmoe {

using detail::violation;

namespace {
// An NVLink domain above one 8-GPU node: an NVL72 rack (multi-node NVLink, MNNVL).
constexpr int kMaxSingleNodeNvlink = 8;

bool any_moe_layer(const ModelSpec& m) {
  for (int i = 0; i < m.num_layers; ++i) {
    if (m.layer_is_moe(i)) return true;
  }
  return false;
}

bool any_dense_layer(const ModelSpec& m) {
  for (int i = 0; i < m.num_layers; ++i) {
    if (!m.layer_is_moe(i)) return true;
  }
  return false;
}

bool drop_and_pad(const TrainingSpec& t) { return t.moe_expert_capacity_factor > 0 && t.moe_pad_expert_input_to_capacity; }
}  // namespace

bool dispatch_runs_on(Dispatch d, const NodeGroup& g) {
  if (!is_flex(d)) return true;
  const GpuSpec& gpu = g.gpu;
  const int major = static_cast<int>(std::floor(gpu.cuda_arch));
  if (gpu.vendor != "nvidia" || major < 8) return false;
  if (d == Dispatch::kHybridEp) return major <= 10;
  return major <= 9 || (major == 10 && g.gpus_per_node <= kMaxSingleNodeNvlink);
}

RuleResult rule_flex_dispatcher_needs_tp_ep(const Scenario& s, const Mesh& x) {
  if (!s.model.is_moe() || !is_flex(x.dispatch) || static_cast<long long>(x.tp) * x.ep > 1) return std::nullopt;
  return violation("flex_dispatcher_needs_tp_ep", "plan.ep",
                   [&] { return "the flex dispatcher (DeepEP, HybridEP) needs tp x ep > 1"; });
}

RuleResult rule_ep_overlap_dispatcher(const Scenario&, const Mesh& x) {
  if (!x.ep_comm_overlap || x.dispatch != Dispatch::kAllgather) return std::nullopt;
  return violation("ep_overlap_dispatcher", "plan.ep_comm_overlap", [&] {
    return "ep_comm_overlap needs the alltoall or flex dispatcher (plan.moe_token_dispatcher_type)";
  });
}

RuleResult rule_deepep_no_pad_to_capacity(const Scenario& s, const Mesh& x) {
  if (x.dispatch != Dispatch::kDeepEp || !s.training.moe_pad_expert_input_to_capacity) return std::nullopt;
  return violation("deepep_no_pad_to_capacity", "plan.moe_flex_dispatcher_backend", [&] {
    return "the deepep backend does not support training.moe_pad_expert_input_to_capacity";
  });
}

RuleResult rule_rank_capacity_needs_hybridep(const Scenario& s, const Mesh& x) {
  if (s.training.moe_expert_rank_capacity_factor <= 0 || x.dispatch == Dispatch::kHybridEp) return std::nullopt;
  return violation("rank_capacity_needs_hybridep", "plan.moe_flex_dispatcher_backend", [&] {
    return "training.moe_expert_rank_capacity_factor needs the flex dispatcher's hybridep backend";
  });
}

RuleResult rule_graph_modules_need_per_layer_impl(const Scenario&, const Mesh& x) {
  if (x.cuda_graphs.modules == 0 || x.cuda_graphs.per_layer()) return std::nullopt;
  return violation("graph_modules_need_per_layer_impl", "plan.cuda_graph_modules", [&] {
    return std::string("cuda_graph_modules need cuda_graph_impl transformer_engine or local (got ") +
           to_string(x.cuda_graphs.impl) + ")";
  });
}

RuleResult rule_graph_moe_vs_moe_router(const Scenario&, const Mesh& x) {
  const unsigned m = x.cuda_graphs.modules;
  if (!x.cuda_graphs.per_layer() || (m & kGraphMoe) == 0 || (m & kGraphMoeRouter) == 0) return std::nullopt;
  return violation("graph_moe_vs_moe_router", "plan.cuda_graph_modules",
                   [&] { return "cuda_graph_modules must not contain both moe and moe_router"; });
}

RuleResult rule_graph_preprocess_needs_router(const Scenario&, const Mesh& x) {
  const unsigned m = x.cuda_graphs.modules;
  if (x.cuda_graphs.impl != GraphImpl::kTransformerEngine || (m & kGraphMoePreprocess) == 0 || (m & kGraphMoeRouter) != 0) {
    return std::nullopt;
  }
  return violation("graph_preprocess_needs_router", "plan.cuda_graph_modules",
                   [&] { return "the moe_preprocess CUDA graph is only supported with the moe_router one"; });
}

RuleResult rule_graph_moe_modules_need_experts(const Scenario& s, const Mesh& x) {
  const unsigned moe_bits = kGraphMoe | kGraphMoeRouter | kGraphMoePreprocess;
  if (!x.cuda_graphs.per_layer() || (x.cuda_graphs.modules & moe_bits) == 0 || any_moe_layer(s.model)) return std::nullopt;
  return violation("graph_moe_modules_need_experts", "plan.cuda_graph_modules",
                   [&] { return "moe, moe_router and moe_preprocess CUDA graphs need an MoE model"; });
}

RuleResult rule_graph_mlp_needs_dense_layers(const Scenario& s, const Mesh& x) {
  if (!x.cuda_graphs.per_layer() || (x.cuda_graphs.modules & kGraphMlp) == 0 || any_dense_layer(s.model)) {
    return std::nullopt;
  }
  return violation("graph_mlp_needs_dense_layers", "plan.cuda_graph_modules",
                   [&] { return "the mlp CUDA graph captures dense layers, and every layer is MoE"; });
}

RuleResult rule_graph_moe_needs_drop_pad(const Scenario& s, const Mesh& x) {
  const CudaGraphs& g = x.cuda_graphs;
  const bool moe_block = g.per_layer() && ((g.modules & kGraphMoe) != 0 || g.modules == 0);
  if (!moe_block || !any_moe_layer(s.model) || drop_and_pad(s.training)) return std::nullopt;
  return violation("graph_moe_needs_drop_pad", "plan.cuda_graph_modules", [&] {
    return "capturing the MoE block (module moe, or the whole layer) needs static shapes: "
           "training.moe_expert_capacity_factor with moe_pad_expert_input_to_capacity";
  });
}

RuleResult rule_graph_preprocess_host_sync(const Scenario& s, const Mesh& x) {
  const TrainingSpec& t = s.training;
  if (!x.cuda_graphs.per_layer() || (x.cuda_graphs.modules & kGraphMoePreprocess) == 0 ||
      x.dispatch != Dispatch::kAlltoall || t.moe_expert_capacity_factor <= 0 || drop_and_pad(t)) {
    return std::nullopt;
  }
  return violation("graph_preprocess_host_sync", "plan.cuda_graph_modules", [&] {
    return "the moe_preprocess CUDA graph cannot capture the alltoall dispatcher's host copies when "
           "tokens are dropped without padding";
  });
}

RuleResult rule_full_iteration_needs_static_moe(const Scenario& s, const Mesh& x) {
  if (x.cuda_graphs.impl != GraphImpl::kFullIteration || !any_moe_layer(s.model) ||
      s.training.static_moe_shapes(x.dispatch)) {
    return std::nullopt;
  }
  return violation("full_iteration_needs_static_moe", "plan.cuda_graph_impl", [&] {
    return "full-iteration CUDA graphs need static MoE shapes: a capacity factor with padding, or "
           "the hybridep backend with training.moe_expert_rank_capacity_factor";
  });
}

RuleResult rule_graphs_full_recompute(const Scenario&, const Mesh& x) {
  if (!x.cuda_graphs.any() || !x.recompute.full() || x.cuda_graphs.impl == GraphImpl::kFullIteration) {
    return std::nullopt;
  }
  return violation("graphs_full_recompute", "plan.cuda_graph_impl",
                   [&] { return "full recompute with CUDA graphs needs cuda_graph_impl full_iteration"; });
}

RuleResult rule_graph_te_moe_recompute(const Scenario&, const Mesh& x) {
  if (x.cuda_graphs.impl != GraphImpl::kTransformerEngine || !x.recompute.has(kRecomputeMoe) ||
      (x.cuda_graphs.modules & kGraphMoeRouter) == 0) {
    return std::nullopt;
  }
  return violation("graph_te_moe_recompute", "plan.cuda_graph_modules", [&] {
    return "the moe recompute module does not work with a transformer_engine moe_router CUDA graph";
  });
}

RuleResult rule_ep_overlap_graph_modules(const Scenario&, const Mesh& x) {
  if (!x.ep_comm_overlap || x.cuda_graphs.impl != GraphImpl::kTransformerEngine ||
      (x.cuda_graphs.modules & (kGraphMoe | kGraphMlp)) == 0) {
    return std::nullopt;
  }
  return violation("ep_overlap_graph_modules", "plan.cuda_graph_modules", [&] {
    return "transformer_engine CUDA graphs of moe or mlp do not work with ep_comm_overlap";
  });
}

RuleResult rule_graph_delay_wgrad_attn_bias(const Scenario& s, const Mesh& x) {
  const ModelSpec& m = s.model;
  if (!x.ep_comm_overlap || !s.training.overlap_grad_reduce || !x.cuda_graphs.per_layer() ||
      (x.cuda_graphs.modules & kGraphAttn) == 0 || (!m.add_bias_linear && !m.add_qkv_bias)) {
    return std::nullopt;
  }
  return violation("graph_delay_wgrad_attn_bias", "plan.cuda_graph_modules", [&] {
    return "an attn CUDA graph with --delay-wgrad-compute (EP overlap) and overlap_grad_reduce needs a model "
           "without attention biases (Megatron validate_args)";
  });
}

RuleResult rule_dispatch_supported(const Scenario& s, const Mesh& x, int group) {
  const NodeGroup& g = s.cluster.groups[group];
  if (!s.model.is_moe() || dispatch_runs_on(x.dispatch, g)) return std::nullopt;
  return violation("dispatch_supported", "plan.moe_flex_dispatcher_backend", [&] {
    return std::string(flex_backend_name(x.dispatch)) + " does not run on " + g.gpu.name +
           (x.dispatch == Dispatch::kDeepEp ? " (DeepEP: Ampere, Hopper, B200/B300 in 8-GPU nodes)"
                                           : " (HybridEP: NVIDIA compute capability 8.x to 10.x)");
  });
}

RuleResult rule_fp8_attention_sinks_need_blackwell(const Scenario& s, const Mesh&, int group) {
  const GpuSpec& gpu = s.cluster.groups[group].gpu;
  if (!s.training.fp8_dot_product_attention || s.model.softmax_type == "vanilla" || gpu.cuda_arch >= 10) {
    return std::nullopt;
  }
  return violation("fp8_attention_sinks_need_blackwell", "training.fp8_dot_product_attention", [&] {
    return "FP8 attention with attention sinks (softmax_type " + s.model.softmax_type + ") runs on Blackwell only; " +
           gpu.name + " has compute capability " + std::to_string(gpu.cuda_arch).substr(0, 4);
  });
}

}  // namespace hapmoe
