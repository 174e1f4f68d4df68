// Memory terms per GPU: weights, gradients and optimizer state with Megatron's sharding rules
// (dense over DP x CP, routed experts over EDP), activations per layer (MoE-aware: top-k token
// copies, EP does not shrink them), in-flight micro-batches of the pipeline schedule.
#pragma once

#include <string>

#include "hapmoe/model_shape.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

inline constexpr double kParamBytes = 2;       // bf16 parameters
inline constexpr double kGradBytes = 4;        // fp32 main gradients (Megatron's bf16 default)
inline constexpr double kOptimizerBytes = 12;  // fp32 master weights + Adam m and v
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// FP8 GEMM weights as Transformer Engine keeps them: a row-wise and a column-wise (transposed)
// FP8 copy, 1 byte each (cached across micro-batches; with --fp8-param-gather they are the
// parameter itself). MXFP8's per-32-element scales add 1/32 of that and are ignored.
inline constexpr double kFp8WeightBytes = 2;
// FP8 GEMM inputs are saved for backward as FP8 (1 byte) instead of BF16 (2 bytes).
inline constexpr double kFp8ActivationBytes = 1;
inline constexpr double kBf16ActivationBytes = 2;

// Bytes per element of "fp32" (4), "bf16"/"fp16" (2) or "fp8" (1).
double dtype_bytes(const std::string& dtype);

// Bytes per parameter by role, as Megatron allocates them for a training setup.
struct WeightBytes {
  double param = kParamBytes;          // model parameter (bf16)
  double fp8_weight = 0;               // extra per FP8 GEMM weight (TE's FP8 copies)
  bool fp8_param_gather = false;       // FP8 GEMM weights kept only as FP8 (no bf16 copy)
  double grad = kGradBytes;            // main-gradient buffer
  double optimizer = kOptimizerBytes;  // master params + exp_avg + exp_avg_sq
};
// Gradient buffer: fp32 unless --grad-reduce-in-bf16 or a bf16 main_grads_dtype; optimizer:
// main_params + exp_avg + exp_avg_sq dtypes (12 bytes without the precision-aware optimizer);
// FP8 runs add kFp8WeightBytes per GEMM weight (replacing the bf16 copy with fp8_param_gather).
// With optimizer CPU offload (offload_fraction > 0, Megatron's HybridDeviceOptimizer) the GPU
// keeps (1 - offload_fraction) x 12 bytes of optimizer state (fp32 master + moments).
WeightBytes weight_bytes(const TrainingSpec& t, double offload_fraction = 0);

struct WeightMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double total() const { return weights_bytes + gradients_bytes + optimizer_bytes; }
};

// dense_params / expert_params: parameters held by this GPU. With the distributed optimizer the
// optimizer state is sharded over dense_shards (DP x CP) and expert_shards (EDP): Megatron's
// 6 + 12/DP bytes per parameter (theoretical_memory_usage.py), 18 without it.
// `fp8_gemm_params` of the parameters are FP8 GEMM weights (transformer layers; the embedding
// and output layer stay BF16).
WeightMemory weight_memory(double dense_params, double expert_params, long long dense_shards,
                           long long expert_shards, bool distributed_optimizer,
                           const WeightBytes& bytes = {}, double fp8_gemm_params = 0);

// Micro-batches' worth of a stage's activations held at the peak of the schedule, in units of
// "all the stage's layers for one micro-batch". 1F1B: min(pp - stage, m). Interleaved with vpp
// chunks: min(m*vpp, 2(pp - stage - 1) + (vpp - 1) pp + 1) chunks of 1/vpp of the layers.
double in_flight_microbatches(int stage, int pp, int vpp, long long num_microbatches);

// What a layer keeps for backward, per micro-batch, on one GPU.
struct ActivationInputs {
  double tokens = 0;  // micro_batch_size x seq_length / cp
  int tp = 1;
  bool sequence_parallel = false;
  int etp = 1;
  double load_imbalance = 1;  // max/mean tokens per expert
  Recompute recompute = Recompute::kNone;
  double gemm_input_bytes = kBf16ActivationBytes;  // kFp8ActivationBytes in FP8 runs
};
double attention_activation_bytes(const ModelSpec& m, const ActivationInputs& in);
double dense_mlp_activation_bytes(const ModelSpec& m, int ffn_width, const ActivationInputs& in);
double moe_activation_bytes(const ModelSpec& m, const ActivationInputs& in);
// Layer i total; with full recompute only the layer input is kept.
double layer_activation_bytes(const ModelSpec& m, int i, const ActivationInputs& in);
// Full (non-recomputed) activation of layer i: the working set while it is recomputed.
double layer_working_bytes(const ModelSpec& m, int i, ActivationInputs in);
// Output layer: fp32 logits and cross-entropy state for one micro-batch.
double logits_activation_bytes(double tokens, int tp, int padded_vocab);

}  // namespace hapmoe
