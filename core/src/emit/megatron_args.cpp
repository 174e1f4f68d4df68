#include "emit/megatron_args.hpp"

#include <cstdio>

#include "emit/megatron_layout.hpp"

namespace hapmoe {

void FlagList::add(const std::string& flag) {
  if (!text_.empty()) text_ += ' ';
  text_ += flag;
}
void FlagList::add(const std::string& flag, const std::string& value) { add(flag + " " + value); }
void FlagList::add(const std::string& flag, long long value) { add(flag, std::to_string(value)); }
void FlagList::add_number(const std::string& flag, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", value);
  add(flag, buf);
}

namespace {
std::string quoted(const std::string& v) { return "\"" + v + "\""; }
}  // namespace

void add_parallel_args(const Scenario& s, const PlanSpec& p, FlagList& f) {
  f.add("--tensor-model-parallel-size", p.tp);
  f.add("--pipeline-model-parallel-size", p.pp);
  if (p.cp > 1) f.add("--context-parallel-size", p.cp);
  if (s.model.is_moe()) {
    f.add("--expert-model-parallel-size", p.ep);
    f.add("--expert-tensor-parallel-size", p.etp);
  }
  if (p.sequence_parallel) f.add("--sequence-parallel");
  const std::string layout = pipeline_layout(s.model, p);
  if (!layout.empty()) {
    f.add("--pipeline-model-parallel-layout", quoted(layout));
  } else if (p.vpp > 1) {
    f.add("--num-virtual-stages-per-pipeline-rank", p.vpp);
  }
  f.add("--micro-batch-size", p.micro_batch_size);
  f.add("--global-batch-size", s.training.global_batch_size);
  f.add("--seq-length", s.training.seq_length);
  f.add("--max-position-embeddings", s.training.seq_length);
}

namespace {
void add_attention_args(const ModelSpec& m, FlagList& f) {
  f.add("--num-attention-heads", m.num_attention_heads);
  if (m.multi_latent_attention) {
    f.add("--multi-latent-attention");
    if (m.q_lora_rank > 0) f.add("--q-lora-rank", m.q_lora_rank);
    f.add("--kv-lora-rank", m.kv_lora_rank);
    f.add("--qk-head-dim", m.qk_head_dim);
    f.add("--qk-pos-emb-head-dim", m.qk_pos_emb_head_dim);
    f.add("--v-head-dim", m.v_head_dim);
  } else {
    if (m.query_groups() != m.num_attention_heads) {
      f.add("--group-query-attention");
      f.add("--num-query-groups", m.query_groups());
    }
    if (m.kv_channels > 0) f.add("--kv-channels", m.kv_channels);
  }
  if (m.qk_layernorm) f.add("--qk-layernorm");
  if (m.softmax_type != "vanilla") f.add("--softmax-type", m.softmax_type);
  if (m.window_size > 0) {
    // TE's window (left, right) excludes the query itself: a window of W tokens is (W-1, 0), as
    // in Megatron-LM's GPT-OSS configuration (examples/gptoss: --window-size 127,0 for 128).
    f.add("--window-size", std::to_string(m.window_size - 1) + ",0");
    if (m.window_attn_skip_freq > 0) f.add("--window-attn-skip-freq", m.window_attn_skip_freq);
  }
}

void add_mlp_args(const ModelSpec& m, FlagList& f) {
  if (m.ffn_hidden_size > 0) f.add("--ffn-hidden-size", m.ffn_hidden_size);
  if (m.quick_geglu) {
    f.add("--quick-geglu");  // gated (argument_utils.py sets gated_linear_unit)
  } else if (m.swiglu) {
    f.add("--swiglu");
  }
  if (m.glu_linear_offset != 0) f.add_number("--glu-linear-offset", m.glu_linear_offset);
  if (m.activation_func_clamp_value > 0) {
    f.add_number("--activation-func-clamp-value", m.activation_func_clamp_value);
  }
  if (!m.add_bias_linear) {
    f.add("--disable-bias-linear");
    if (m.add_qkv_bias) f.add("--add-qkv-bias");
  }
}
}  // namespace

void add_model_args(const ModelSpec& m, FlagList& f) {
  f.add("--num-layers", m.num_layers);
  f.add("--hidden-size", m.hidden_size);
  add_attention_args(m, f);
  add_mlp_args(m, f);
  if (m.untie_embeddings_and_output_weights) f.add("--untie-embeddings-and-output-weights");
  // The presets' models train without dropout (HF attention_dropout 0.0); Megatron's default is
  // 0.1, and graphed attention recompute rejects attention dropout.
  f.add("--attention-dropout 0.0 --hidden-dropout 0.0");
  f.add("--normalization", m.normalization);
  f.add_number("--norm-epsilon", m.norm_epsilon);
  f.add("--position-embedding-type", m.position_embedding_type);
  if (m.position_embedding_type == "rope" || m.multi_latent_attention) {
    f.add("--rotary-base", m.rotary_base);
    if (m.rotary_percent != 1) f.add_number("--rotary-percent", m.rotary_percent);
  }
  if (m.mtp_num_layers > 0) {
    f.add("--mtp-num-layers", m.mtp_num_layers);
    f.add_number("--mtp-loss-scaling-factor", m.mtp_loss_scaling_factor);
  }
}

namespace {
void add_router_args(const ModelSpec& m, FlagList& f) {
  f.add("--moe-router-topk", m.moe_router_topk);
  f.add("--moe-router-score-function", m.moe_router_score_function);
  // Megatron requires pre-softmax for top-1 softmax routing (TransformerConfig).
  const bool top1_softmax = m.moe_router_topk == 1 && m.moe_router_score_function == "softmax";
  if (m.moe_router_pre_softmax || top1_softmax) f.add("--moe-router-pre-softmax");
  if (m.moe_router_enable_expert_bias) f.add("--moe-router-enable-expert-bias");
  if (m.moe_router_topk_scaling_factor > 0) {
    f.add_number("--moe-router-topk-scaling-factor", m.moe_router_topk_scaling_factor);
  }
  if (m.moe_router_num_groups > 0) {
    f.add("--moe-router-num-groups", m.moe_router_num_groups);
    f.add("--moe-router-group-topk", m.moe_router_group_topk);
  }
  f.add("--moe-router-load-balancing-type", m.moe_router_load_balancing_type);
  if (m.moe_aux_loss_coeff > 0) f.add_number("--moe-aux-loss-coeff", m.moe_aux_loss_coeff);
}
}  // namespace

void add_moe_args(const Scenario& s, const PlanSpec& p, FlagList& f) {
  const ModelSpec& m = s.model;
  const TrainingSpec& t = s.training;
  if (!m.is_moe()) return;
  f.add("--num-experts", m.num_experts);
  f.add("--moe-ffn-hidden-size", m.moe_ffn_hidden_size);
  if (m.moe_shared_expert_intermediate_size > 0) {
    f.add("--moe-shared-expert-intermediate-size", m.moe_shared_expert_intermediate_size);
    if (m.moe_shared_expert_gate) f.add("--moe-shared-expert-gate");
  }
  bool every = true;
  for (int x : m.moe_layer_freq) every = every && x == 1;
  if (!every) f.add("--moe-layer-freq", quoted(moe_layer_freq_expression(m.moe_layer_freq)));
  add_router_args(m, f);
  f.add("--moe-token-dispatcher-type", dispatcher_name(p.dispatch));
  if (is_flex(p.dispatch)) f.add("--moe-flex-dispatcher-backend", flex_backend_name(p.dispatch));
  f.add("--moe-grouped-gemm");
  if (t.moe_expert_capacity_factor > 0) {
    f.add_number("--moe-expert-capacity-factor", t.moe_expert_capacity_factor);
    if (t.moe_pad_expert_input_to_capacity) f.add("--moe-pad-expert-input-to-capacity");
  }
  if (t.moe_expert_rank_capacity_factor > 0) {
    // HybridEP's static budget needs the GroupedTensor path (transformer_config.py).
    f.add_number("--moe-expert-rank-capacity-factor", t.moe_expert_rank_capacity_factor);
    f.add("--moe-use-grouped-tensor");
    if (t.moe_paged_stash) f.add("--moe-paged-stash");
  }
  if (p.ep_comm_overlap) f.add("--overlap-moe-expert-parallel-comm --delay-wgrad-compute");
}

}  // namespace hapmoe
