// Memory terms per GPU: weights, gradients and optimizer state with Megatron's sharding rules
// (dense over DP x CP, routed experts over EDP), activations per layer (MoE-aware: top-k token
// copies, EP does not shrink them), in-flight micro-batches of the pipeline schedule.
#pragma once

#include "hapmoe/model_shape.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

inline constexpr double kParamBytes = 2;       // bf16 parameters
inline constexpr double kGradBytes = 4;        // fp32 main gradients
inline constexpr double kOptimizerBytes = 12;  // fp32 master weights + Adam m and v
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct WeightMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double total() const { return weights_bytes + gradients_bytes + optimizer_bytes; }
};

// dense_params / expert_params: parameters held by this GPU. With the distributed optimizer the
// optimizer state is sharded over dense_shards (DP x CP) and expert_shards (EDP): Megatron's
// 6 + 12/DP bytes per parameter (theoretical_memory_usage.py), 18 without it.
WeightMemory weight_memory(double dense_params, double expert_params, long long dense_shards,
                           long long expert_shards, bool distributed_optimizer);

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
