#include "cost/cost_compute.hpp"

#include <algorithm>

#include "hapmoe/hardware.hpp"

namespace hapmoe {

double gemm_shape_factor(double min_dim) {
  if (min_dim <= 0) return 1;
  return min_dim / (min_dim + kGemmHalfRateDim);
}

double gemm_time_s(double flops, double min_dim, const GpuSpec& gpu, Precision p) {
  if (flops <= 0) return 0;
  return flops / (gemm_flops_per_s(gpu, p) * gemm_shape_factor(min_dim));
}

double grouped_gemm_efficiency(double tokens_per_expert, const GpuSpec& gpu) {
  if (tokens_per_expert <= 0) return 1;
  return tokens_per_expert / (tokens_per_expert + gpu.grouped_gemm_half_tokens);
}

double grouped_gemm_time_s(double flops, double tokens_per_expert, double min_dim,
                           const GpuSpec& gpu, Precision p) {
  if (flops <= 0) return 0;
  return flops / (gemm_flops_per_s(gpu, p) * gemm_shape_factor(min_dim) *
                  grouped_gemm_efficiency(tokens_per_expert, gpu));
}

double causal_attention_pairs(double seq_length, double window) {
  if (window <= 0 || window >= seq_length) return seq_length * seq_length / 2;
  return seq_length * window - window * window / 2;
}

double attention_core_fwd_flops(double seq_length, double window, double heads, double qk_dim,
                                double v_dim) {
  return 2 * causal_attention_pairs(seq_length, window) * heads * (qk_dim + v_dim);
}

double attention_core_time_s(double flops, const GpuSpec& gpu, bool fp8, bool sinks) {
  if (flops <= 0) return 0;
  if (fp8) return flops / (gpu.bf16_tflops * 1e12 * gpu.attention_efficiency * kFp8AttentionSpeedup);
  return flops / (gpu.bf16_tflops * 1e12 * (sinks ? gpu.sink_attention_efficiency : gpu.attention_efficiency));
}

double moe_tokens_factor(const TrainingSpec& t) {
  if (t.moe_expert_capacity_factor <= 0) return t.moe_load_imbalance;
  return t.moe_pad_expert_input_to_capacity ? t.moe_expert_capacity_factor
                                            : std::min(t.moe_load_imbalance, t.moe_expert_capacity_factor);
}

double expert_activation_factor(const TrainingSpec& t) {
  const double actual = moe_tokens_factor(t);
  if (t.moe_expert_rank_capacity_factor <= 0 || t.moe_paged_stash) return actual;
  return std::max(actual, t.moe_expert_rank_capacity_factor);
}

double elementwise_time_s(double bytes, const GpuSpec& gpu) {
  if (bytes <= 0) return 0;
  return bytes / (gpu.hbm_gbps * 1e9 * gpu.hbm_efficiency);
}

double fp8_cast_bytes(double elements, Precision p) {
  return p == Precision::kFp8 ? elements * kFp8CastBytesPerElement : 0;
}

double moe_token_traffic_bytes(double copies, double width, double moe_ffn, bool swiglu,
                               double router_tokens, double num_experts) {
  constexpr double kBf16 = 2, kFp32 = 4;    // bytes per element
  constexpr double kPermutePasses = 2 * 2;  // permute + un-permute, each read + write
  constexpr double kRouterPasses = 3;       // softmax read + write, top-k write
  const double permute = kPermutePasses * copies * width;
  const double act = copies * moe_ffn * (swiglu ? 3 : 2);  // SwiGLU: read 2 fm, write fm
  const double router = kRouterPasses * router_tokens * num_experts;
  return (permute + act) * kBf16 + router * kFp32;
}

double optimizer_step_time_s(double owned_params, double local_params, const GpuSpec& gpu) {
  return elementwise_time_s(owned_params * kOptimizerBytesPerOwnedParam +
                                local_params * kOptimizerBytesPerLocalParam,
                            gpu) +
         kOptimizerFixedS;
}

double optimizer_offload_time_s(double offloaded_params, double grad_bytes, double param_bytes,
                                const GpuSpec& gpu) {
  if (offloaded_params <= 0) return 0;
  const double link_bytes_per_s = gpu.host_link_gbps * 1e9;
  const double d2h_s = offloaded_params * grad_bytes / link_bytes_per_s;
  const double h2d_s = offloaded_params * param_bytes / link_bytes_per_s;
  const double cpu_s = offloaded_params * kCpuAdamBytesPerParam / (kHostMemoryGbpsPerGpu * 1e9);
  return std::max({d2h_s, h2d_s, cpu_s});
}

}  // namespace hapmoe
