#include "spec/profile_check.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "hapmoe/model_shape.hpp"

namespace hapmoe {

namespace {

// The highest dense peak of the GPU, FLOP/s.
double top_peak_flops_per_s(const GpuSpec& g) {
  return std::max(g.bf16_tflops, g.fp8_tflops.value_or(0)) * 1e12;
}

const GpuSpec* gpu_of(const Scenario& s, const std::string& id) {
  for (const NodeGroup& g : s.cluster.groups) {
    if (g.gpu.id == id) return &g.gpu;
  }
  return nullptr;
}

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", ms);
  return buf;
}

}  // namespace

double least_layer_forward_s(const ModelSpec& m, const LayerPoint& p, double peak_flops_per_s) {
  const ModelShape shape = derive_model_shape(m, 1);  // whole-layer parameter counts
  double params = shape.attention_gemm_params;
  if (p.kind == LayerKind::kMoe && m.is_moe()) {
    params += m.moe_router_topk * shape.expert_params + shape.shared_expert_params;
  } else {
    params += shape.dense_mlp_params;
  }
  const double tokens_per_gpu = p.tokens() / (static_cast<double>(p.tp) * p.cp);
  return 2 * params * tokens_per_gpu / peak_flops_per_s;
}

std::optional<Error> check_profile_against_model(const Scenario& s) {
  for (const auto& [id, g] : s.profile.gpus) {
    const GpuSpec* gpu = gpu_of(s, id);
    if (!gpu) continue;  // parse_profile checked the ids
    const double peak = top_peak_flops_per_s(*gpu);
    for (size_t i = 0; i < g.layers.size(); ++i) {
      const LayerPoint& p = g.layers[i];
      const double fwd_ms = least_layer_forward_s(s.model, p, peak) * 1e3;
      const bool forward = p.forward_ms < fwd_ms;
      if (!forward && p.backward_ms >= 2 * fwd_ms) continue;
      const std::string field = "profile.gpus." + id + ".layers[" + std::to_string(i) + "]." +
                                (forward ? "forward_ms" : "backward_ms");
      const double least = forward ? fwd_ms : 2 * fwd_ms;
      return Error{"implausible_point",
                   ms_text(forward ? p.forward_ms : p.backward_ms) + " ms is faster than the layer's GEMMs run at " +
                       gpu->name + "'s peak (" + ms_text(peak / 1e12) + " TFLOP/s): expected at least " +
                       ms_text(least) + " ms for this kind, tp, cp, micro_batch_size and seq_length",
                   field};
    }
  }
  return std::nullopt;
}

}  // namespace hapmoe
