#include "hapmoe/cost_memory.hpp"

#include <algorithm>

namespace hapmoe {

double dtype_bytes(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "fp8") return 1;
  return 2;  // bf16, fp16
}

WeightBytes weight_bytes(const TrainingSpec& t, double offload_fraction) {
  WeightBytes b;
  const OptimizerSpec& o = t.optimizer;
  const bool bf16_grads =
      t.grad_reduce_in_bf16 || (o.precision_aware && o.main_grads_dtype == "bf16");
  b.grad = bf16_grads ? dtype_bytes("bf16") : kGradBytes;
  if (o.precision_aware) {
    b.optimizer = dtype_bytes(o.main_params_dtype) + dtype_bytes(o.exp_avg_dtype) +
                  dtype_bytes(o.exp_avg_sq_dtype);
  }
  if (offload_fraction > 0) {
    // HybridDeviceOptimizer (param_update_in_fp32): fp32 master copies and fp32 Adam moments on
    // both devices, whatever the precision-aware dtypes; offload_fraction of them on the host.
    b.optimizer = (1 - offload_fraction) * kOptimizerBytes;
  }
  if (t.precision == Precision::kFp8) {
    b.fp8_weight = kFp8WeightBytes;
    b.fp8_param_gather = t.fp8_param_gather;
  }
  return b;
}

WeightMemory weight_memory(double dense_params, double expert_params, long long dense_shards,
                           long long expert_shards, bool distributed_optimizer,
                           const WeightBytes& bytes, double fp8_gemm_params) {
  WeightMemory w;
  const double params = dense_params + expert_params;
  const double bf16_params = bytes.fp8_param_gather ? params - fp8_gemm_params : params;
  w.weights_bytes = bytes.param * bf16_params + bytes.fp8_weight * fp8_gemm_params;
  w.gradients_bytes = bytes.grad * params;
  if (distributed_optimizer) {
    w.optimizer_bytes = bytes.optimizer * (dense_params / static_cast<double>(dense_shards) +
                                           expert_params / static_cast<double>(expert_shards));
  } else {
    w.optimizer_bytes = bytes.optimizer * params;
  }
  return w;
}

double in_flight_microbatches(int stage, int pp, int vpp, long long num_microbatches) {
  if (vpp <= 1) return static_cast<double>(std::min<long long>(pp - stage, num_microbatches));
  const long long chunks = std::min<long long>(
      num_microbatches * vpp, 2LL * (pp - stage - 1) + static_cast<long long>(vpp - 1) * pp + 1);
  return static_cast<double>(chunks) / vpp;
}

namespace {
// Tokens whose hidden-size tensors a GPU stores: sequence parallel shards them over TP.
double sp_tokens(const ActivationInputs& in) {
  return in.sequence_parallel ? in.tokens / in.tp : in.tokens;
}
constexpr double kBf16 = 2;
}  // namespace

// Saved tensors follow Megatron's Transformer Engine layer spec (gpt_layer_specs.py): a GQA
// layer's input norm is fused into linear_qkv (TE LayerNormLinear saves its input and ln_out),
// an MLA layer's input norm is a separate TENorm, a dense MLP's norm is fused into linear_fc1,
// a MoE layer's pre-MLP norm is a separate TENorm. What each --recompute-modules entry frees
// (transformer_layer.py, experts.py, moe_layer.py, multi_latent_attention.py):
//   core_attn: checkpoint around fused attention; its inputs q, k, v are kept and its output
//     stays alive as linear_proj's input, so only the softmax statistics go (and in FP8 runs
//     the BF16 output copy the attention kernel saves beside linear_proj's FP8 copy);
//   layernorm: the outputs of the separate norms (MLA input norm, MoE pre-MLP norm);
//   mla_up_proj: MLA's up-projected q, k, v (the latents stay as up-projection inputs);
//   mlp: everything inside a dense MLP but its input;
//   moe: everything inside the MoE block but its input (the pre-MLP norm output);
//   moe_act: the experts' activation output (fc2 input; in FP8 fc2 saves the original input);
//   shared_experts: the shared expert's fc1 and activation outputs.
double attention_activation_bytes(const ModelSpec& m, const ActivationInputs& in) {
  const double h = m.hidden_size, a = m.num_attention_heads;
  const double t = in.tokens, tt = sp_tokens(in), tp = in.tp;
  const Recompute& rc = in.recompute;
  double qkv = 0, core_out = 0, latents = 0;
  if (m.multi_latent_attention) {
    const double qk = m.qk_head_dim + m.qk_pos_emb_head_dim;
    qkv = a * qk * 2 + a * m.v_head_dim;  // q, k (with rope part), v after up-projection
    core_out = a * m.v_head_dim;
    latents = (m.q_lora_rank + m.kv_lora_rank + m.qk_pos_emb_head_dim) * tp;  // replicated over TP
  } else {
    const double d = m.head_dim(), g = m.query_groups();
    qkv = (a + 2 * g) * d;
    core_out = a * d;
  }
  double bf16 = tt * h;  // norm input (residual)
  if (!(m.multi_latent_attention && rc.has(kRecomputeMlaUpProj))) {
    bf16 += t * qkv / tp;  // q, k, v (flash attention keeps them in BF16)
  }
  double gemm_in = t * core_out / tp  // attention output = out-projection input
                   + t * latents / tp;  // MLA latents = up-projection GEMM inputs
  // Norm output = QKV (or MLA down-projection) GEMM input; only MLA's norm is a separate module.
  if (!(m.multi_latent_attention && rc.has(kRecomputeLayernorm))) gemm_in += tt * h;
  double core_saved = 0;
  if (!rc.has(kRecomputeCoreAttn)) {
    core_saved = t * a / tp * 4;  // fp32 log-sum-exp per head
    // FP8: the attention kernel's own BF16 output, beside linear_proj's FP8 input copy.
    if (in.gemm_input_bytes < kBf16) core_saved += t * core_out / tp * kBf16;
  }
  return bf16 * kBf16 + gemm_in * in.gemm_input_bytes + core_saved;
}

double dense_mlp_activation_bytes(const ModelSpec& m, int ffn_width, const ActivationInputs& in) {
  const double h = m.hidden_size, f = ffn_width, tt = sp_tokens(in), t = in.tokens, tp = in.tp;
  const double glu = m.swiglu ? 2 : 1;
  if (in.recompute.has(kRecomputeMlp)) return tt * h * kBf16;  // the checkpoint's input only
  const double bf16 = tt * h + t * f * glu / tp;  // norm input, fc1 output
  const double gemm_in = tt * h + t * f / tp;     // norm output (fc1 input), fc2 input
  return bf16 * kBf16 + gemm_in * in.gemm_input_bytes;
}

double moe_activation_bytes(const ModelSpec& m, const ActivationInputs& in) {
  const double h = m.hidden_size, tt = sp_tokens(in), t = in.tokens, tp = in.tp;
  const double k = m.moe_router_topk, fm = m.moe_ffn_hidden_size, glu = m.swiglu ? 2 : 1;
  const Recompute& rc = in.recompute;
  // Norm output = router (BF16 GEMM), dispatcher and shared-expert input.
  const double norm_out = rc.has(kRecomputeLayernorm) ? 0 : tt * h * kBf16;
  const double norm_in = tt * h * kBf16;
  if (rc.has(kRecomputeMoe)) return norm_in + norm_out;  // the checkpoint keeps its input only
  // Token copies a GPU's experts see: top-k per token, gathered over ETP, hottest expert.
  // The routing probabilities are applied inside the expert activation (TEGroupedMLP's
  // weighted_bias_swiglu / quick_geglu: "memory-efficient permutation"), so un-permuting is a
  // plain scatter-add whose backward needs no saved input: fc2's output is not kept.
  const double copies = k * t / tp * in.load_imbalance;
  const double bf16 = copies * fm * glu;  // fc1 output (width fm/etp, etp x tokens): the activation's input
  double gemm_in = copies * in.etp * h;   // permuted expert inputs = fc1 input
  if (!rc.has(kRecomputeMoeAct)) gemm_in += copies * fm;  // activation output = fc2 input
  double bytes = norm_in + norm_out + bf16 * kBf16 + gemm_in * in.gemm_input_bytes +
                 tt * m.num_experts * 4;  // + fp32 router probabilities
  const double fs = m.moe_shared_expert_intermediate_size;
  if (fs > 0 && !rc.has(kRecomputeSharedExperts)) {
    // Shared expert: fc1 output (BF16) and activation output (fc2 input); its input is the
    // norm output counted above.
    bytes += t * fs * glu / tp * kBf16 + t * fs / tp * in.gemm_input_bytes;
  }
  return bytes;
}

double layer_activation_bytes(const ModelSpec& m, int i, const ActivationInputs& in) {
  if (in.recompute.full()) return sp_tokens(in) * m.hidden_size * kBf16;
  const double mlp = m.layer_is_moe(i) ? moe_activation_bytes(m, in)
                                       : dense_mlp_activation_bytes(m, m.ffn_hidden_size, in);
  return attention_activation_bytes(m, in) + mlp;
}

double layer_working_bytes(const ModelSpec& m, int i, ActivationInputs in) {
  in.recompute = Recompute::kNone;
  return layer_activation_bytes(m, i, in);
}

double logits_activation_bytes(double tokens, int tp, int padded_vocab) {
  return tokens * padded_vocab / tp * 4;
}

}  // namespace hapmoe
