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
    default: return "alltoall";
  }
}

// Every field, so that groups differing in any override are never treated as interchangeable
// (add new GpuSpec fields here; tests/search/candidate_space_test.cpp perturbs each one).
bool operator==(const GpuSpec& a, const GpuSpec& b) {
  auto fields = [](const GpuSpec& g) {
    return std::tie(g.id, g.name, g.vendor, g.memory_gib, g.bf16_tflops, g.fp8_tflops, g.hbm_gbps, g.intra_node_gbps,
                    g.inter_node_gbps, g.gpus_per_node, g.reserved_memory_gib, g.host_link_gbps, g.fp8_recipes,
                    g.cuda_arch, g.generation, g.gemm_efficiency, g.fp8_gemm_speedup, g.attention_efficiency,
                    g.grouped_gemm_half_tokens, g.expert_host_us, g.layer_host_us, g.hbm_efficiency,
                    g.intra_node_efficiency, g.inter_node_efficiency, g.alltoall_intra_node_efficiency,
                    g.alltoall_inter_node_efficiency, g.assumed, g.efficiency_source, g.source);
  };
  return fields(a) == fields(b);
}

bool operator==(const NodeGroup& a, const NodeGroup& b) {
  return a.gpu == b.gpu && a.nodes == b.nodes && a.gpus_per_node == b.gpus_per_node && a.gpus_per_host == b.gpus_per_host &&
         a.inter_node_gbps == b.inter_node_gbps;
}

const char* to_string(SearchMode m) { return m == SearchMode::kHetero ? "hetero" : "megatron"; }

}  // namespace hapmoe
