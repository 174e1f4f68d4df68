// Parameter counts per layer kind and Megatron-LM's model-FLOPs formula.
// Counts are elements (not bytes) and follow megatron.md §3.1 (theoretical_memory_usage.py)
// with RMSNorm (one parameter per normalised element) and no linear biases (--disable-bias-linear).
#pragma once

#include "hapmoe/specs.hpp"

namespace hapmoe {

// Megatron pads the vocabulary to a multiple of 128 x TP (vocab_utils.py).
int padded_vocab_size(int vocab_size, int tp);

struct ModelShape {
  int padded_vocab = 0;
  double attention_params = 0;         // Q/K/V/O (or MLA down/up projections and their norms)
  double attention_gemm_params = 0;    // the GEMM weights only (MLA norms excluded)
  double dense_mlp_params = 0;         // one dense MLP: ffn_exp x h x F
  double expert_params = 0;            // one routed expert: ffn_exp x h x Fm
  double routed_experts_params = 0;    // all routed experts of one MoE layer
  double shared_expert_params = 0;     // ffn_exp x h x Fs
  double router_params = 0;            // h x E
  double layernorm_params = 0;         // two RMSNorms per layer: 2h
  double final_norm_params = 0;        // h
  double embedding_params = 0;         // h x padded vocab
  double output_params = 0;            // h x padded vocab when untied, else 0 (shared)
  double mtp_extra_params = 0;         // per MTP layer beyond its transformer layer: eh-proj 2h^2 + 3 norms
  int ffn_exp = 3;                     // 3 matrices with SwiGLU, else 2

  // TP-sharded params of layer i (attention + dense MLP or shared expert).
  double layer_tp_sharded_params(const ModelSpec& m, int i) const;
  // Replicated params of layer i (norms, router).
  double layer_replicated_params(const ModelSpec& m, int i) const;
  // Routed-expert params of layer i (all experts; divide by ETP x EP per rank).
  double layer_expert_params(const ModelSpec& m, int i) const;
};

ModelShape derive_model_shape(const ModelSpec& m, int tp);

// Total parameters (elements), embedding and output included, MTP included.
double total_params(const ModelSpec& m, const ModelShape& s);
// Parameters used per token (routed experts counted top-k times).
double active_params(const ModelSpec& m, const ModelShape& s);
// Parameters held by a pipeline stage of layers [first_layer, first_layer + num_layers): its
// layers, the embedding on the first stage, the output layer, final norm and MTP on the last.
double stage_params(const ModelSpec& m, const ModelShape& s, int first_layer, int num_layers,
                    bool first_stage, bool last_stage);

// Megatron-LM num_floating_point_operations (training.py; megatron.md §3.2): model FLOPs of one
// global batch, forward + backward, no recompute. seq_length tokens per sequence.
double megatron_model_flops(const ModelSpec& m, int tp, double global_batch_size, double seq_length);

}  // namespace hapmoe
