#include "hapmoe/cost_memory.hpp"

#include <algorithm>

namespace hapmoe {

WeightMemory weight_memory(double dense_params, double expert_params, long long dense_shards,
                           long long expert_shards, bool distributed_optimizer) {
  WeightMemory w;
  const double params = dense_params + expert_params;
  w.weights_bytes = kParamBytes * params;
  w.gradients_bytes = kGradBytes * params;
  if (distributed_optimizer) {
    w.optimizer_bytes = kOptimizerBytes * (dense_params / static_cast<double>(dense_shards) +
                                           expert_params / static_cast<double>(expert_shards));
  } else {
    w.optimizer_bytes = kOptimizerBytes * params;
  }
  return w;
}

double in_flight_microbatches(int stage, int pp, int vpp, long long num_microbatches) {
  if (vpp <= 1) return static_cast<double>(std::min<long long>(pp - stage, num_microbatches));
  const long long chunks = std::min<long long>(num_microbatches * vpp,
                                               2LL * (pp - stage - 1) + static_cast<long long>(vpp - 1) * pp + 1);
  return static_cast<double>(chunks) / vpp;
}

namespace {
// Tokens whose hidden-size tensors a GPU stores: sequence parallel shards them over TP.
double sp_tokens(const ActivationInputs& in) {
  return in.sequence_parallel ? in.tokens / in.tp : in.tokens;
}
constexpr double kBf16 = 2;
}  // namespace

double attention_activation_bytes(const ModelSpec& m, const ActivationInputs& in) {
  const double h = m.hidden_size, a = m.num_attention_heads;
  const double t = in.tokens, tt = sp_tokens(in), tp = in.tp;
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
  double elems = tt * h             // norm input (residual)
                 + tt * h            // norm output = QKV GEMM input
                 + t * qkv / tp      // q, k, v
                 + t * core_out / tp  // attention output = out-projection input
                 + t * latents / tp;
  const double softmax_stats = t * a / tp * 4;  // fp32 log-sum-exp per head
  if (in.recompute == Recompute::kSelective) {
    // --recompute-modules core_attn layernorm (+ mla_up_proj): norm output and core output,
    // and MLA's up-projected q/k/v, are rebuilt in backward.
    elems -= tt * h + t * core_out / tp;
    if (m.multi_latent_attention) elems -= t * qkv / tp;
  }
  return elems * kBf16 + softmax_stats;
}

double dense_mlp_activation_bytes(const ModelSpec& m, int ffn_width, const ActivationInputs& in) {
  const double h = m.hidden_size, f = ffn_width, tt = sp_tokens(in), t = in.tokens, tp = in.tp;
  const double glu = m.swiglu ? 2 : 1;
  double elems = tt * h + tt * h + t * f * glu / tp + t * f / tp;
  if (in.recompute == Recompute::kSelective) elems -= tt * h;  // layernorm output
  return elems * kBf16;
}

double moe_activation_bytes(const ModelSpec& m, const ActivationInputs& in) {
  const double h = m.hidden_size, tt = sp_tokens(in), t = in.tokens, tp = in.tp;
  const double k = m.moe_router_topk, fm = m.moe_ffn_hidden_size, glu = m.swiglu ? 2 : 1;
  // Token copies a GPU's experts see: top-k per token, gathered over ETP, hottest expert.
  const double copies = k * t / tp * in.load_imbalance;
  double elems = tt * h                    // norm input
                 + tt * h                  // norm output = router / dispatch input
                 + copies * in.etp * h     // permuted expert inputs
                 + copies * fm * glu       // fc1 output (width fm/etp, etp x tokens)
                 + copies * fm             // activation output = fc2 input
                 + copies * in.etp * h;    // fc2 output before un-permute
  if (in.recompute == Recompute::kSelective) elems -= tt * h + copies * fm;  // layernorm, moe_act
  double bytes = elems * kBf16 + tt * m.num_experts * 4;  // + fp32 router probabilities
  if (m.moe_shared_expert_intermediate_size > 0) {
    ActivationInputs shared = in;
    bytes += dense_mlp_activation_bytes(m, m.moe_shared_expert_intermediate_size, shared) -
             2 * tt * h * kBf16;  // shares the norm tensors counted above
  }
  return bytes;
}

double layer_activation_bytes(const ModelSpec& m, int i, const ActivationInputs& in) {
  if (in.recompute == Recompute::kFull) return sp_tokens(in) * m.hidden_size * kBf16;
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
