// Compute-time terms on one GPU type: roofline with calibrated efficiencies. Every function is
// a single named term so the result can carry a breakdown and each term has a unit test.
#pragma once

#include "hapmoe/specs.hpp"

namespace hapmoe {

// Smallest GEMM dimension at which a GEMM reaches half of its large-GEMM rate.
inline constexpr double kGemmHalfRateDim = 24;
// Flash-attention backward / forward time (5 GEMM-like passes vs 2).
inline constexpr double kAttentionBackwardFactor = 2.5;
// GEMM backward (dgrad + wgrad) / forward.
inline constexpr double kGemmBackwardFactor = 2.0;

// min_dim / (min_dim + kGemmHalfRateDim): tiles waste work on thin GEMMs.
double gemm_shape_factor(double min_dim);
// Time of a dense GEMM workload of `flops` whose smallest dimension is min_dim.
double gemm_time_s(double flops, double min_dim, const GpuSpec& gpu, Precision p);
// Grouped-GEMM efficiency vs tokens per local expert: t / (t + grouped_gemm_half_tokens).
double grouped_gemm_efficiency(double tokens_per_expert, const GpuSpec& gpu);
double grouped_gemm_time_s(double flops, double tokens_per_expert, double min_dim,
                           const GpuSpec& gpu, Precision p);
// Query-key pairs of one causal sequence: s^2/2 (Megatron's count), or s*w - w^2/2 with a
// sliding window of w < s tokens.
double causal_attention_pairs(double seq_length, double window);
// Forward FLOPs of attention core (QK^T and PV) for one sequence, all heads.
double attention_core_fwd_flops(double seq_length, double window, double heads, double qk_dim,
                                double v_dim);
// Attention core runs in BF16 (also in FP8 training) at attention_efficiency of peak.
double attention_core_time_s(double flops, const GpuSpec& gpu);
// Memory-bound kernels: bytes / (hbm_gbps x hbm_efficiency).
double elementwise_time_s(double bytes, const GpuSpec& gpu);
// Fixed cost per local expert per MoE layer per micro-batch (forward): small grouped GEMMs,
// casts and permute kernels (DESIGN.md); FP8 adds per-expert quantisation (factor).
double expert_overhead_s(double local_experts, const GpuSpec& gpu, Precision p);
// Fixed launch cost per transformer layer per micro-batch (forward).
double layer_overhead_s(const GpuSpec& gpu);

// Adam step with fp32 master weights: bytes touched per optimizer-owned parameter.
inline constexpr double kOptimizerBytesPerOwnedParam = 36;
// Bytes touched per local parameter outside the owned shard (grad zeroing, bf16 copy).
inline constexpr double kOptimizerBytesPerLocalParam = 6;
// Fixed per-step cost (grad-norm all-reduce, multi-tensor launches).
inline constexpr double kOptimizerFixedS = 2e-3;
double optimizer_step_time_s(double owned_params, double local_params, const GpuSpec& gpu);

}  // namespace hapmoe
