#include "cost/host_timeline.hpp"

#include <algorithm>

namespace hapmoe {

namespace {
constexpr double kSecondsPerUs = 1e-6;

// FP8 input quantisation of one GEMM: amax + cast with per-tensor current scaling, one fused op
// with block scaling; none in BF16.
double quantise_ops(const std::string& recipe) {
  if (recipe.empty()) return 0;
  return recipe == "tensorwise" ? 2 : 1;
}
}  // namespace

HostOps forward_host_ops(const ModelSpec& m, const std::string& fp8_recipe, Dispatch d) {
  const double q = quantise_ops(fp8_recipe);
  HostOps o;
  if (m.multi_latent_attention) {
    // GEMMs: q (or q down + q up), kv down + kv up, projection; plus the latent norms, RoPE of q and
    // k, their concatenation, core attention and the residual add.
    const double gemms = (m.q_lora_rank > 0 ? 2 : 1) + 2 + 1;
    const double norms = (m.q_lora_rank > 0 ? 1 : 0) + 1;
    o.attention = gemms * (1 + q) + norms + 2 + 2 + 1 + 1;
  } else {
    // Norm + QKV and projection GEMMs, RoPE of q and k, core attention, residual (+ q/k norms).
    o.attention = 2 * (1 + q) + 2 + 1 + 1 + (m.qk_layernorm ? 2 : 0);
  }
  if (m.is_moe()) {
    // Pre-MLP norm, router GEMM, fused top-k/score and aux loss, counts per expert, their gather
    // over the TP x EP group and the split sizes (+ the expert-bias update).
    o.router = 1 + 1 + 2 + (m.moe_router_enable_expert_bias ? 1 : 0);
    o.preprocess = 3;
    // alltoall: permute, all-to-all, sort by local expert, activation, un-sort, all-to-all,
    // un-permute, residual; flex fuses the permutation into its dispatch and combine kernels.
    o.dispatch = is_flex(d) ? 6 : 8;
    o.per_expert = 2 * (1 + q);
    if (m.moe_shared_expert_intermediate_size > 0) o.shared = 3 + 2 * q + (m.moe_shared_expert_gate ? 1 : 0);
  }
  o.mlp = 2 * (1 + q) + 2;  // norm + fc1, fc2 GEMMs; activation; residual
  return o;
}

double host_launch_s(double ops, const GpuSpec& gpu) { return ops * gpu.host_launch_us * kSecondsPerUs; }

bool dispatcher_synchronises(const TrainingSpec& t, Dispatch d) { return !t.static_moe_shapes(d); }

double segment_time_s(const TimelinePart* parts, int n) {
  double gpu = 0, host = 0;  // when each timeline is done with the parts so far
  for (int i = 0; i < n; ++i) {
    const TimelinePart& p = parts[i];
    gpu = std::max(std::max(gpu, host) + p.gpu_s, host + p.host_s);
    host += p.host_s;
  }
  return std::max(gpu, host);
}

double unsynchronised_time_s(const TimelinePart* parts, int n) {
  double gpu = 0, host = 0;
  for (int i = 0; i < n; ++i) {
    gpu += parts[i].gpu_s;
    host += parts[i].host_s;
  }
  return std::max(gpu, host);
}

}  // namespace hapmoe
