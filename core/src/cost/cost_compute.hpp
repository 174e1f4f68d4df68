// Compute-time terms on one GPU type: roofline with calibrated efficiencies. Every function is
// a single named term so the result can carry a breakdown and each term has a unit test.
#pragma once

#include "hapmoe/specs.hpp"

namespace hapmoe {

// Smallest GEMM dimension at which a GEMM reaches half of its large-GEMM rate.
inline constexpr double kGemmHalfRateDim = 128;
// Flash-attention backward / forward time (5 GEMM-like passes vs 2).
inline constexpr double kAttentionBackwardFactor = 3.5;
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
// Attention core runs in BF16 (also in FP8 training) at attention_efficiency of peak, or in FP8
// (--fp8-dot-product-attention) kFp8AttentionSpeedup times faster. With sinks (softmax_type other
// than vanilla) BF16 attention runs at sink_attention_efficiency; FP8 attention with sinks is the
// regular FP8 kernel (Transformer Engine's MXFP8 attention, cuDNN 9.21+ on Blackwell).
double attention_core_time_s(double flops, const GpuSpec& gpu, bool fp8 = false, bool sinks = false);
// FP8 over BF16 flash-attention throughput: FlashAttention-3 (Shah et al. 2024, arXiv 2407.08608)
// reaches ~1.2 PFLOPS in FP8 against ~0.74 in BF16 forward on H100 (1.6x); rounded down for the
// backward pass, which gains less. An assumption on other GPUs.
inline constexpr double kFp8AttentionSpeedup = 1.5;

// Tokens the busiest expert processes over its balanced share: the load imbalance; with a
// capacity factor at most that capacity; padded to capacity exactly the capacity factor.
double moe_tokens_factor(const TrainingSpec& t);
// Routed-expert activation memory over the balanced share: moe_tokens_factor, or HybridEP's static
// rank budget (moe_expert_rank_capacity_factor) where it is larger, unless the paged stash keeps
// only the real tokens.
double expert_activation_factor(const TrainingSpec& t);
// Memory-bound kernels: bytes / (hbm_gbps x hbm_efficiency).
double elementwise_time_s(double bytes, const GpuSpec& gpu);
// FP8 quantisation of a GEMM input: read 2 bytes (BF16), write 1 byte (FP8) per element.
inline constexpr double kFp8CastBytesPerElement = 3;
// Bytes an FP8 run adds to cast `elements` GEMM-input elements (0 in BF16).
double fp8_cast_bytes(double elements, Precision p);
// Memory traffic of one MoE layer's token handling on one GPU (forward), in bytes: permute and
// un-permute of `copies` token copies of `width` elements (read + write each, BF16), the expert
// activation (SwiGLU reads 2 x fm, writes fm; else reads fm, writes fm) and the fp32 router
// softmax / top-k over `router_tokens` x num_experts (read + write + write).
double moe_token_traffic_bytes(double copies, double width, double moe_ffn, bool swiglu,
                               double router_tokens, double num_experts);
// Adam step with fp32 master weights: bytes touched per optimizer-owned parameter.
inline constexpr double kOptimizerBytesPerOwnedParam = 36;
// Bytes touched per local parameter outside the owned shard (grad zeroing, bf16 copy).
inline constexpr double kOptimizerBytesPerLocalParam = 6;
// Fixed per-step cost (grad-norm all-reduce, multi-tensor launches).
inline constexpr double kOptimizerFixedS = 2e-3;
double optimizer_step_time_s(double owned_params, double local_params, const GpuSpec& gpu);

// Optimizer CPU offload (Megatron's HybridDeviceOptimizer with --overlap-cpu-optimizer-d2h-h2d).
// Host memory bandwidth per GPU for the CPU Adam step: an 8-GPU HGX host has two sockets of 8
// DDR5-4800 channels, 2 x 8 x 38.4 = 614 GB/s peak, about 70% of it reachable (STREAM triad),
// shared by 8 GPUs: ~54 GB/s per GPU, rounded down. An assumption for other hosts (Grace
// superchips have more: 512 GB/s LPDDR5X per Grace for 2 GPUs).
inline constexpr double kHostMemoryGbpsPerGpu = 50;
// torch.optim.AdamW (fused CPU kernel) on fp32 copies: reads param, grad, exp_avg, exp_avg_sq
// and writes param, exp_avg, exp_avg_sq, 4 bytes each.
inline constexpr double kCpuAdamBytesPerParam = 28;
// Host part of the step for `offloaded_params` parameters: gradients to the host (grad_bytes
// each) and updated parameters back (param_bytes each) over gpu.host_link_gbps, and the CPU Adam
// step. With the d2h/h2d overlap the three run as a per-parameter pipeline: the longest of them.
double optimizer_offload_time_s(double offloaded_params, double grad_bytes, double param_bytes,
                                const GpuSpec& gpu);

}  // namespace hapmoe
