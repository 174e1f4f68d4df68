#include "hapmoe/specs.hpp"

namespace hapmoe {

const char* to_string(Precision p) { return p == Precision::kFp8 ? "fp8" : "bf16"; }

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
    default: return "none";
  }
}

const char* to_string(Dispatcher d) {
  switch (d) {
    case Dispatcher::kAllgather: return "allgather";
    case Dispatcher::kFlex: return "flex";
    default: return "alltoall";
  }
}

// Every field, so that groups differing in any override are never treated as interchangeable
// (add new GpuSpec fields here; tests/candidate_space_test.cpp perturbs each one).
bool operator==(const GpuSpec& a, const GpuSpec& b) {
  return a.id == b.id && a.name == b.name && a.vendor == b.vendor && a.memory_gib == b.memory_gib &&
         a.bf16_tflops == b.bf16_tflops && a.fp8_tflops == b.fp8_tflops && a.hbm_gbps == b.hbm_gbps &&
         a.intra_node_gbps == b.intra_node_gbps && a.inter_node_gbps == b.inter_node_gbps &&
         a.gpus_per_node == b.gpus_per_node && a.reserved_memory_gib == b.reserved_memory_gib &&
         a.fp8_recipe == b.fp8_recipe && a.gemm_efficiency == b.gemm_efficiency &&
         a.fp8_gemm_speedup == b.fp8_gemm_speedup && a.attention_efficiency == b.attention_efficiency &&
         a.grouped_gemm_half_tokens == b.grouped_gemm_half_tokens && a.expert_overhead_us == b.expert_overhead_us &&
         a.fp8_expert_overhead_factor == b.fp8_expert_overhead_factor && a.layer_overhead_us == b.layer_overhead_us &&
         a.hbm_efficiency == b.hbm_efficiency && a.intra_node_efficiency == b.intra_node_efficiency &&
         a.inter_node_efficiency == b.inter_node_efficiency && a.source == b.source;
}

bool operator==(const NodeGroup& a, const NodeGroup& b) {
  return a.gpu == b.gpu && a.nodes == b.nodes && a.gpus_per_node == b.gpus_per_node &&
         a.inter_node_gbps == b.inter_node_gbps;
}

const char* to_string(SearchMode m) { return m == SearchMode::kHetero ? "hetero" : "megatron"; }

}  // namespace hapmoe
