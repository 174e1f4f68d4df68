#include "hapmoe/model_shape.hpp"

#include <algorithm>

namespace hapmoe {

namespace {
// Normalisation params per element: 1 for RMSNorm (all supported models), 2 for LayerNorm.
constexpr double kNormN = 1;

double mla_q_term(const ModelSpec& m, double norm_n) {
  const double h = m.hidden_size, a = m.num_attention_heads;
  const double qk = m.qk_head_dim + m.qk_pos_emb_head_dim;
  if (m.q_lora_rank > 0) return m.q_lora_rank * (h + a * qk + norm_n);
  return h * a * qk;
}

// MLA projection params (megatron.md §3.1): norm_n = n for memory, 1 in the FLOPs formula,
// 0 for the GEMM weights alone.
double mla_params(const ModelSpec& m, double norm_n) {
  const double h = m.hidden_size, a = m.num_attention_heads;
  return mla_q_term(m, norm_n) +
         m.kv_lora_rank * (h + a * (m.qk_head_dim + m.v_head_dim) + norm_n) +
         h * m.qk_pos_emb_head_dim + a * m.v_head_dim * h;
}

double gqa_params(const ModelSpec& m) {
  const double h = m.hidden_size, a = m.num_attention_heads, g = m.query_groups(), d = m.head_dim();
  return h * (a * d + 2 * g * d) + a * d * h;
}

int count_moe_layers(const ModelSpec& m) {
  int n = 0;
  for (int i = 0; i < m.num_layers; ++i) n += m.layer_is_moe(i) ? 1 : 0;
  return n;
}
}  // namespace

int padded_vocab_size(int vocab_size, int tp) {
  const long long mult = 128LL * tp;
  return static_cast<int>((vocab_size + mult - 1) / mult * mult);
}

ModelShape derive_model_shape(const ModelSpec& m, int tp) {
  ModelShape s;
  const double h = m.hidden_size;
  s.ffn_exp = m.swiglu ? 3 : 2;
  s.padded_vocab = padded_vocab_size(m.vocab_size, tp);
  if (m.multi_latent_attention) {
    s.attention_params = mla_params(m, kNormN);
    s.attention_gemm_params = mla_params(m, 0);
  } else {
    s.attention_params = gqa_params(m);
    s.attention_gemm_params = s.attention_params;
  }
  s.dense_mlp_params = s.ffn_exp * h * m.ffn_hidden_size;
  s.expert_params = s.ffn_exp * h * m.moe_ffn_hidden_size;
  s.routed_experts_params = s.expert_params * m.num_experts;
  s.shared_expert_params = s.ffn_exp * h * m.moe_shared_expert_intermediate_size;
  s.router_params = h * m.num_experts;
  s.layernorm_params = 2 * h * kNormN;
  s.final_norm_params = h * kNormN;
  s.embedding_params = h * s.padded_vocab;
  s.output_params = m.untie_embeddings_and_output_weights ? h * s.padded_vocab : 0;
  s.mtp_extra_params = 2 * h * h + 3 * h * kNormN;
  return s;
}

double ModelShape::layer_tp_sharded_params(const ModelSpec& m, int i) const {
  return attention_params + (m.layer_is_moe(i) ? shared_expert_params : dense_mlp_params);
}

double ModelShape::layer_replicated_params(const ModelSpec& m, int i) const {
  return layernorm_params + (m.layer_is_moe(i) ? router_params : 0);
}

double ModelShape::layer_expert_params(const ModelSpec& m, int i) const {
  return m.layer_is_moe(i) ? routed_experts_params : 0;
}

double total_params(const ModelSpec& m, const ModelShape& s) {
  double total = s.embedding_params + s.output_params + s.final_norm_params;
  for (int i = 0; i < m.num_layers; ++i) {
    total += s.layer_tp_sharded_params(m, i) + s.layer_replicated_params(m, i) +
             s.layer_expert_params(m, i);
  }
  const int last = m.num_layers - 1;
  total += m.mtp_num_layers * (s.layer_tp_sharded_params(m, last) + s.layer_replicated_params(m, last) +
                               s.layer_expert_params(m, last) + s.mtp_extra_params);
  return total;
}

double stage_params(const ModelSpec& m, const ModelShape& s, int first_layer, int num_layers,
                    bool first_stage, bool last_stage) {
  double total = first_stage ? s.embedding_params : 0;
  const int end = std::min(m.num_layers, first_layer + num_layers);
  for (int i = std::max(0, first_layer); i < end; ++i) {
    total += s.layer_tp_sharded_params(m, i) + s.layer_replicated_params(m, i) + s.layer_expert_params(m, i);
  }
  if (last_stage) {
    const int last = m.num_layers - 1;
    total += s.output_params + s.final_norm_params +
             m.mtp_num_layers * (s.layer_tp_sharded_params(m, last) + s.layer_replicated_params(m, last) +
                                 s.layer_expert_params(m, last) + s.mtp_extra_params);
  }
  return total;
}

double active_params(const ModelSpec& m, const ModelShape& s) {
  double total = total_params(m, s);
  const int moe_layers = count_moe_layers(m) + (m.layer_is_moe(m.num_layers - 1) ? m.mtp_num_layers : 0);
  total -= moe_layers * s.expert_params * (m.num_experts - m.moe_router_topk);
  return total;
}

double megatron_model_flops(const ModelSpec& m, int tp, double global_batch_size, double seq_length) {
  const double h = m.hidden_size, a = m.num_attention_heads;
  const double T = global_batch_size * seq_length;
  const double S2 = global_batch_size * seq_length * seq_length;
  const double ffn_exp = m.swiglu ? 3 : 2;
  const double V = padded_vocab_size(m.vocab_size, tp);
  const int mtp = m.mtp_num_layers;
  int n_moe = count_moe_layers(m);
  int n_dense = m.num_layers - n_moe;
  if (m.layer_is_moe(m.num_layers - 1)) n_moe += mtp; else n_dense += mtp;
  const double layers_eff = m.num_layers + mtp;

  double attn_linear = 0, attn_core = 0;
  if (m.multi_latent_attention) {
    attn_linear = 6 * mla_params(m, 1);
    attn_core = 6 * (a * (m.qk_head_dim + m.qk_pos_emb_head_dim) / 2 + a * m.v_head_dim / 2);
  } else {
    attn_linear = 6 * gqa_params(m);
    attn_core = 6 * a * m.head_dim();
  }
  const double mlp = 6 * h *
                     (static_cast<double>(m.ffn_hidden_size) * ffn_exp * n_dense +
                      static_cast<double>(m.moe_ffn_hidden_size) * m.moe_router_topk * ffn_exp * n_moe +
                      static_cast<double>(m.moe_shared_expert_intermediate_size) * ffn_exp * n_moe);
  const double per_token = mlp + attn_linear * layers_eff + 6.0 * mtp * (3 * h + 2 * h * h) +
                           6 * h * V * (mtp + 1);
  return T * per_token + S2 * attn_core * layers_eff;
}

}  // namespace hapmoe
