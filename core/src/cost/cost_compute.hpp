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
// Host (CPU) time to launch the forward kernels of `local_experts` experts of one MoE layer:
// Megatron/TE launch a few kernels per local expert (grouped GEMM splits, per-expert casts).
double expert_host_launch_s(double local_experts, const GpuSpec& gpu);
// Host time to launch one layer's other forward kernels (norms, attention, router, dispatch).
double layer_host_launch_s(const GpuSpec& gpu);
// Backward launches dgrad and wgrad for every forward GEMM: twice the forward host time.
inline constexpr double kHostBackwardFactor = 2;
// A section of GPU work whose kernels the host launches in `host_s`. The host runs ahead of the
// GPU (asynchronous launches), so its time is hidden while the GPU is busier: max(gpu, host).
// With CUDA graphs the kernels replay without host launches: gpu_s.
double host_bound_time_s(double gpu_s, double host_s, bool cuda_graphs);

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
