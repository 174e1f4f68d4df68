#include "hapmoe/specs.hpp"

#include <tuple>

namespace hapmoe {

const char* to_string(Precision p) { return p == Precision::kFp8 ? "fp8" : "bf16"; }

const char* recompute_module_name(int i) {
  static constexpr const char* kNames[kRecomputeModuleCount] = {
      "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"};
  return i >= 0 && i < kRecomputeModuleCount ? kNames[i] : "";
}

std::string to_string(Recompute r) {
  if (r.full()) return "full";
  if (r == Recompute::kNone) return "none";
  if (r == Recompute::kSelective) return "selective";
  std::string out;
  for (int i = 0; i < kRecomputeModuleCount; ++i) {
    if ((r.modules & (1u << i)) == 0) continue;
    if (!out.empty()) out += "+";
    out += recompute_module_name(i);
  }
  return out;
}

const char* to_string(Dispatcher d) {
  switch (d) {
    case Dispatcher::kAllgather: return "allgather";
    case Dispatcher::kFlex: return "flex";
    case Dispatcher::kAuto: return "auto";
    default: return "alltoall";
  }
}

const char* to_string(FlexBackend b) {
  switch (b) {
    case FlexBackend::kDeepEp: return "deepep";
    case FlexBackend::kHybridEp: return "hybridep";
    default: return "auto";
  }
}

const char* dispatcher_name(Dispatch d) {
  switch (d) {
    case Dispatch::kAllgather: return "allgather";
    case Dispatch::kDeepEp:
    case Dispatch::kHybridEp: return "flex";
    default: return "alltoall";
  }
}

const char* flex_backend_name(Dispatch d) {
  return d == Dispatch::kDeepEp ? "deepep" : d == Dispatch::kHybridEp ? "hybridep" : "";
}

const char* graph_module_name(int i) {
  static constexpr const char* kNames[kGraphModuleCount] = {"attn", "mlp", "moe", "moe_router", "moe_preprocess"};
  return i >= 0 && i < kGraphModuleCount ? kNames[i] : "";
}

const char* to_string(GraphImpl g) {
  switch (g) {
    case GraphImpl::kTransformerEngine: return "transformer_engine";
    case GraphImpl::kLocal: return "local";
    case GraphImpl::kFullIteration: return "full_iteration";
    default: return "none";
  }
}

std::string to_string(const CudaGraphs& g) {
  std::string out = to_string(g.impl);
  if (!g.per_layer()) return out;
  out += "[";
  bool first = true;
  for (int i = 0; i < kGraphModuleCount; ++i) {
    if ((g.modules & (1u << i)) == 0) continue;
    out += (first ? "" : ",") + std::string(graph_module_name(i));
    first = false;
  }
  return out + (g.modules == 0 ? "whole layer]" : "]");
}

// Every field, so that groups differing in any override are never treated as interchangeable
// (add new GpuSpec fields here; tests/search/candidate_space_test.cpp perturbs each one).
bool operator==(const GpuSpec& a, const GpuSpec& b) {
  auto fields = [](const GpuSpec& g) {
    return std::tie(g.id, g.name, g.vendor, g.memory_gib, g.bf16_tflops, g.fp8_tflops, g.hbm_gbps, g.intra_node_gbps,
                    g.inter_node_gbps, g.gpus_per_node, g.reserved_memory_gib, g.host_link_gbps, g.fp8_recipes,
                    g.cuda_arch, g.generation, g.gemm_efficiency, g.fp8_gemm_speedup, g.attention_efficiency, g.sink_attention_efficiency,
                    g.grouped_gemm_half_tokens, g.host_launch_us, g.host_backward_factor, g.hbm_efficiency,
                    g.intra_node_efficiency, g.inter_node_efficiency, g.alltoall_intra_node_efficiency,
                    g.alltoall_inter_node_efficiency, g.assumed, g.efficiency_source, g.error_fraction,
                    g.error_basis, g.source);
  };
  return fields(a) == fields(b);
}

bool operator==(const NodeGroup& a, const NodeGroup& b) {
  return a.gpu == b.gpu && a.nodes == b.nodes && a.gpus_per_node == b.gpus_per_node && a.gpus_per_host == b.gpus_per_host &&
         a.inter_node_gbps == b.inter_node_gbps && a.price_per_gpu_hour == b.price_per_gpu_hour &&
         a.billed_all == b.billed_all;  // a cheaper twin is not interchangeable
}

const char* to_string(SearchMode m) {
  return m == SearchMode::kHetero ? "hetero" : m == SearchMode::kAuto ? "auto" : "megatron";
}

const char* to_string(Objective o) {
  return o == Objective::kCost ? "cost" : o == Objective::kTimeWithinBudget ? "time_within_budget" : "time";
}

const char* to_string(Runtime r) { return r == Runtime::kFlagScale ? "flagscale" : "megatron"; }

}  // namespace hapmoe
