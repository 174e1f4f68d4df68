// model_shape.hpp: parameter counts, padded vocabulary and Megatron-LM's model-FLOPs formula.
// Expected values are computed here from the raw model dimensions (the HF configs the presets
// cite), never taken from the function under test.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "hapmoe/model_shape.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/scenario_io.hpp"

namespace {

using hapmoe::ModelSpec;

const hapmoe::PresetCatalog& presets() {
  static const hapmoe::PresetCatalog catalog = hapmoe::load_builtin_presets();
  return catalog;
}

ModelSpec preset_model(const char* id) {
  auto m = hapmoe::parse_model(nlohmann::json(id), "model", presets());
  REQUIRE_MESSAGE(m.ok(), id);
  return m.value();
}

// Megatron-LM's arguments as they reach num_floating_point_operations (None -> 0), filled in by
// hand from each model's published config, independently of the preset parser.
struct MegatronArgs {
  double num_layers = 0, hidden_size = 0, ffn_hidden_size = 0;
  double num_attention_heads = 0, num_query_groups = 0, kv_channels = 0;
  double vocab_size = 0;
  bool swiglu = true;
  double num_experts = 0;  // 0 = None (dense)
  double moe_router_topk = 0, moe_ffn_hidden_size = 0, moe_shared_expert_intermediate_size = 0;
  std::vector<int> moe_layer_pattern;  // expanded --moe-layer-freq
  bool multi_latent_attention = false;
  double q_lora_rank = 0;  // 0 = None
  double kv_lora_rank = 0, qk_head_dim = 0, qk_pos_emb_head_dim = 0, v_head_dim = 0;
  double mtp_num_layers = 0;
};

// vocab_utils.py _vocab_size_with_padding: increment until divisible by 128 x TP.
double megatron_padded_vocab(double vocab, int tp) {
  const long long multiple = 128LL * tp;
  long long after = static_cast<long long>(vocab);
  while (after % multiple != 0) ++after;
  return static_cast<double>(after);
}

// num_floating_point_operations, transformer_flops path, as megatron.md §3.2 states it.
double golden_flops(const MegatronArgs& a, int tp, double batch, double seq) {
  const double h = a.hidden_size, heads = a.num_attention_heads, d = a.kv_channels;
  const double g = a.num_query_groups;
  const double T = batch * seq;         // total tokens
  const double S2 = batch * seq * seq;  // sum of squared sequence lengths
  const double ffn_exp = a.swiglu ? 3 : 2;
  const double V = megatron_padded_vocab(a.vocab_size, tp);

  double n_dense = a.num_layers, n_moe = 0, k = 0, last_is_moe = 0;
  if (a.num_experts > 0) {
    n_moe = 0;
    for (int x : a.moe_layer_pattern) n_moe += x;
    n_dense = a.num_layers - n_moe;
    k = a.moe_router_topk;
    last_is_moe = a.moe_layer_pattern.back();
  }
  const double mtp = a.mtp_num_layers;
  n_moe += last_is_moe * mtp;
  n_dense += (1 - last_is_moe) * mtp;
  const double layers_eff = a.num_layers + mtp;
  const double Fm = a.moe_ffn_hidden_size > 0 ? a.moe_ffn_hidden_size : a.ffn_hidden_size;
  const double Fs = a.moe_shared_expert_intermediate_size;

  double attn_linear = 0, attn_core = 0;
  if (a.multi_latent_attention) {
    const double qk = a.qk_head_dim + a.qk_pos_emb_head_dim;
    const double q_term = a.q_lora_rank > 0 ? a.q_lora_rank * (h + heads * qk + 1) : h * heads * qk;
    attn_linear = 6 * (q_term + a.kv_lora_rank * (h + heads * (a.qk_head_dim + a.v_head_dim) + 1) +
                       h * a.qk_pos_emb_head_dim + heads * a.v_head_dim * h);
    attn_core = 6 * (heads * qk / 2 + heads * a.v_head_dim / 2);
  } else {
    const double gate = 0;  // no --attention-output-gate
    attn_linear = 6 * (h * (heads * d + g * d + g * d + gate) + heads * d * h);
    attn_core = 6 * heads * d;
  }
  const double mlp = 6 * h * (a.ffn_hidden_size * ffn_exp * n_dense + Fm * k * ffn_exp * n_moe +
                              Fs * ffn_exp * n_moe);
  return T * (mlp + attn_linear * layers_eff + 6 * mtp * (3 * h + 2 * h * h) +
              6 * h * V * (mtp + 1)) +
         S2 * attn_core * layers_eff;
}

std::vector<int> all_moe(int layers) { return std::vector<int>(layers, 1); }

MegatronArgs mixtral_8x7b_args() {  // HF mistralai/Mixtral-8x7B-v0.1
  MegatronArgs a;
  a.num_layers = 32; a.hidden_size = 4096; a.ffn_hidden_size = 14336;
  a.num_attention_heads = 32; a.num_query_groups = 8; a.kv_channels = 128; a.vocab_size = 32000;
  a.num_experts = 8; a.moe_router_topk = 2; a.moe_ffn_hidden_size = 14336;
  a.moe_layer_pattern = all_moe(32);
  return a;
}

MegatronArgs deepseek_v3_args() {  // HF deepseek-ai/DeepSeek-V3
  MegatronArgs a;
  a.num_layers = 61; a.hidden_size = 7168; a.ffn_hidden_size = 18432;
  a.num_attention_heads = 128; a.num_query_groups = 128; a.kv_channels = 128; a.vocab_size = 129280;
  a.num_experts = 256; a.moe_router_topk = 8; a.moe_ffn_hidden_size = 2048;
  a.moe_shared_expert_intermediate_size = 2048;
  a.moe_layer_pattern = std::vector<int>(3, 0);  // first_k_dense_replace 3
  a.moe_layer_pattern.resize(61, 1);
  a.multi_latent_attention = true;
  a.q_lora_rank = 1536; a.kv_lora_rank = 512; a.qk_head_dim = 128; a.qk_pos_emb_head_dim = 64;
  a.v_head_dim = 128;
  a.mtp_num_layers = 1;
  return a;
}

MegatronArgs qwen3_30b_args() {  // HF Qwen/Qwen3-30B-A3B
  MegatronArgs a;
  a.num_layers = 48; a.hidden_size = 2048; a.ffn_hidden_size = 6144;
  a.num_attention_heads = 32; a.num_query_groups = 4; a.kv_channels = 128; a.vocab_size = 151936;
  a.num_experts = 128; a.moe_router_topk = 8; a.moe_ffn_hidden_size = 768;
  a.moe_layer_pattern = all_moe(48);
  return a;
}

MegatronArgs qwen3_235b_args() {  // HF Qwen/Qwen3-235B-A22B
  MegatronArgs a;
  a.num_layers = 94; a.hidden_size = 4096; a.ffn_hidden_size = 12288;
  a.num_attention_heads = 64; a.num_query_groups = 4; a.kv_channels = 128; a.vocab_size = 151936;
  a.num_experts = 128; a.moe_router_topk = 8; a.moe_ffn_hidden_size = 1536;
  a.moe_layer_pattern = all_moe(94);
  return a;
}

MegatronArgs gpt_oss_120b_args() {  // HF openai/gpt-oss-120b (sliding window not in the formula)
  MegatronArgs a;
  a.num_layers = 36; a.hidden_size = 2880; a.ffn_hidden_size = 2880;
  a.num_attention_heads = 64; a.num_query_groups = 8; a.kv_channels = 64; a.vocab_size = 201088;
  a.num_experts = 128; a.moe_router_topk = 4; a.moe_ffn_hidden_size = 2880;
  a.moe_layer_pattern = all_moe(36);
  return a;
}

MegatronArgs llama2_7b_args() {  // HF meta-llama/Llama-2-7b-hf: dense MHA
  MegatronArgs a;
  a.num_layers = 32; a.hidden_size = 4096; a.ffn_hidden_size = 11008;
  a.num_attention_heads = 32; a.num_query_groups = 32; a.kv_channels = 128; a.vocab_size = 32000;
  return a;
}

void check_golden_flops(const char* id, const MegatronArgs& args) {
  const ModelSpec m = preset_model(id);
  struct Case { int tp; double gbs, seq; };
  for (const Case c : {Case{1, 1024, 4096}, Case{8, 256, 8192}, Case{2, 3, 1000}}) {
    CAPTURE(id);
    CAPTURE(c.tp);
    CAPTURE(c.gbs);
    CAPTURE(c.seq);
    const double expected = golden_flops(args, c.tp, c.gbs, c.seq);
    const double got = hapmoe::megatron_model_flops(m, c.tp, c.gbs, c.seq);
    CHECK(std::abs(got - expected) <= 1e-12 * expected);
  }
}

}  // namespace

TEST_CASE("padded_vocab_size pads to a multiple of 128 x TP") {
  CHECK(hapmoe::padded_vocab_size(32000, 1) == 32000);    // 32000 = 250 x 128
  CHECK(hapmoe::padded_vocab_size(32000, 8) == 32768);    // 1024 x 32 (31.25 -> 32)
  CHECK(hapmoe::padded_vocab_size(32000, 3) == 32256);    // 384 x 84 (83.3 -> 84)
  CHECK(hapmoe::padded_vocab_size(151936, 1) == 151936);  // 1187 x 128
  CHECK(hapmoe::padded_vocab_size(151936, 8) == 152576);  // 1024 x 149 (148.375 -> 149)
  CHECK(hapmoe::padded_vocab_size(129280, 4) == 129536);  // 512 x 253 (252.5 -> 253)
  CHECK(hapmoe::padded_vocab_size(1, 1) == 128);
  CHECK(hapmoe::padded_vocab_size(128, 1) == 128);
  CHECK(hapmoe::padded_vocab_size(129, 1) == 256);
  for (int tp : {1, 2, 4, 8, 16}) {
    CHECK(hapmoe::padded_vocab_size(201088, tp) == megatron_padded_vocab(201088, tp));
  }
}

TEST_CASE("Mixtral-8x7B parameter counts") {
  const ModelSpec m = preset_model("mixtral-8x7b");
  const double h = 4096, a = 32, g = 8, d = 128, F = 14336, E = 8, k = 2, L = 32, V = 32000;
  const hapmoe::ModelShape s = hapmoe::derive_model_shape(m, 1);

  CHECK(s.padded_vocab == 32000);
  CHECK(s.ffn_exp == 3);
  // Q and O: h x a x d each; K and V: h x g x d each.
  const double attn = 2 * h * a * d + 2 * h * g * d;  // 33,554,432 + 8,388,608 = 41,943,040
  CHECK(attn == 41943040.0);
  CHECK(s.attention_params == attn);
  CHECK(s.attention_gemm_params == attn);
  const double expert = 3 * h * F;  // gate, up, down: 176,160,768
  CHECK(s.expert_params == expert);
  CHECK(s.routed_experts_params == E * expert);
  CHECK(s.dense_mlp_params == 3 * h * F);
  CHECK(s.shared_expert_params == 0);
  CHECK(s.router_params == h * E);
  CHECK(s.layernorm_params == 2 * h);
  CHECK(s.final_norm_params == h);
  CHECK(s.embedding_params == h * V);
  CHECK(s.output_params == h * V);  // untied
  CHECK(s.mtp_extra_params == 2 * h * h + 3 * h);

  // Per-layer sharding classes (every layer is MoE).
  CHECK(s.layer_tp_sharded_params(m, 0) == attn);
  CHECK(s.layer_replicated_params(m, 5) == 2 * h + h * E);
  CHECK(s.layer_expert_params(m, 31) == E * expert);

  // Totals: 46.70 B total, 12.88 B active (Mistral quotes 46.7 B / 12.9 B).
  const double per_layer = attn + E * expert + h * E + 2 * h;
  const double total = 2 * h * V + h + L * per_layer;
  CHECK(total == 46702792704.0);
  CHECK(hapmoe::total_params(m, s) == total);
  const double active = total - L * (E - k) * expert;
  CHECK(active == 12879925248.0);
  CHECK(hapmoe::active_params(m, s) == active);

  // TP enlarges only the padded vocabulary.
  const hapmoe::ModelShape s8 = hapmoe::derive_model_shape(m, 8);
  CHECK(s8.padded_vocab == 32768);
  CHECK(s8.embedding_params == h * 32768);
  CHECK(s8.attention_params == attn);
}

TEST_CASE("DeepSeek-V3 MLA parameter counts") {
  const ModelSpec m = preset_model("deepseek-v3");
  const double h = 7168, a = 128, qlr = 1536, kvlr = 512, qk = 128, pos = 64, v = 128;
  const hapmoe::ModelShape s = hapmoe::derive_model_shape(m, 1);
  // q_term = q_lora (h + a (qk + pos) + n), n = 1 for RMSNorm.
  const double q_term = qlr * (h + a * (qk + pos) + 1);
  const double attn = q_term + kvlr * (h + a * (qk + v) + 1) + h * pos + a * v * h;
  CHECK(s.attention_params == attn);
  // The GEMM weights alone drop the two latent norms (q_lora + kv_lora elements).
  CHECK(s.attention_gemm_params == attn - qlr - kvlr);
  CHECK(s.shared_expert_params == 3 * h * 2048);
  CHECK(s.dense_mlp_params == 3 * h * 18432);
  // Layers 0-2 dense, 3.. MoE.
  CHECK(s.layer_tp_sharded_params(m, 2) == attn + 3 * h * 18432);
  CHECK(s.layer_tp_sharded_params(m, 3) == attn + 3 * h * 2048);
  CHECK(s.layer_expert_params(m, 2) == 0);
  CHECK(s.layer_expert_params(m, 3) == 256 * 3 * h * 2048);
  CHECK(s.layer_replicated_params(m, 2) == 2 * h);
  CHECK(s.layer_replicated_params(m, 3) == 2 * h + h * 256);
  // ~671 B in the main model plus ~14 B in the MTP module (DeepSeek's 685 B checkpoint size).
  const double total = hapmoe::total_params(m, s);
  CHECK(total == doctest::Approx(685e9).epsilon(0.01));
  // Active: ~37 B (+ the MTP layer's active share).
  CHECK(hapmoe::active_params(m, s) == doctest::Approx(37e9 + 2.4e9).epsilon(0.05));
}

TEST_CASE("megatron_model_flops matches Megatron-LM num_floating_point_operations") {
  check_golden_flops("mixtral-8x7b", mixtral_8x7b_args());
  check_golden_flops("deepseek-v3", deepseek_v3_args());
  check_golden_flops("qwen3-30b-a3b", qwen3_30b_args());
  check_golden_flops("qwen3-235b-a22b", qwen3_235b_args());
  check_golden_flops("gpt-oss-120b", gpt_oss_120b_args());
  check_golden_flops("llama2-7b", llama2_7b_args());
}

TEST_CASE("megatron_model_flops of a tiny dense GQA model, by hand") {
  // h 64, 4 heads of 16, 2 query groups, F 128 (SwiGLU), 2 layers, vocab 1000.
  ModelSpec m = hapmoe::testing::tiny_dense_model();
  // Global batch 2 x 32 tokens: T = 64, S2 = 2 x 32^2 = 2048. TP 1: V = 1024 (8 x 128).
  //   attention linear / layer: 6 (64 (64 + 32 + 32) + 64 x 64) = 6 x 12,288 =  73,728
  //   MLP / layer:              6 x 64 x 128 x 3                   = 147,456
  //   logits:                   6 x 64 x 1024                      = 393,216
  //   per token: 2 (73,728 + 147,456) + 393,216 = 835,584;  x T = 53,477,376
  //   attention core: 6 x 4 x 16 = 384;  x S2 x 2 layers = 1,572,864
  CHECK(hapmoe::megatron_model_flops(m, 1, 2, 32) == 55050240.0);
  // TP 8 pads to 1024 as well; TP 16 pads to 2048: logits 6 x 64 x 2048 = 786,432,
  // per token 442,368 + 786,432 = 1,228,800; x 64 = 78,643,200; + 1,572,864.
  CHECK(hapmoe::megatron_model_flops(m, 8, 2, 32) == 55050240.0);
  CHECK(hapmoe::megatron_model_flops(m, 16, 2, 32) == 80216064.0);
  // Without SwiGLU the MLP is 2 matrices: 6 x 64 x 128 x 2 = 98,304 per layer, per token
  // 2 (73,728 + 98,304) + 393,216 = 737,280; x 64 = 47,185,920; + 1,572,864.
  m.swiglu = false;
  CHECK(hapmoe::megatron_model_flops(m, 1, 2, 32) == 48758784.0);
}

TEST_CASE("megatron_model_flops: MTP layer follows the last layer's type") {
  // A tiny MoE model with one MTP layer: layers [dense, moe], so the MTP layer is MoE.
  ModelSpec m;
  m.num_layers = 2;
  m.hidden_size = 64;
  m.ffn_hidden_size = 128;
  m.num_attention_heads = 4;
  m.num_query_groups = 4;
  m.kv_channels = 16;
  m.vocab_size = 128;
  m.num_experts = 4;
  m.moe_router_topk = 2;
  m.moe_ffn_hidden_size = 32;
  m.moe_layer_freq = {0, 1};
  m.mtp_num_layers = 1;
  // T = 1 x 16 = 16, S2 = 256, V = 128. n_dense = 1, n_moe = 1 + 1 (MTP), layers_eff = 3.
  //   MLP:    6 x 64 (128 x 3 x 1 + 32 x 2 x 3 x 2) = 384 x (384 + 384) = 294,912
  //   attn:   6 (64 (64 + 64 + 64) + 64 x 64) = 6 x 16,384 = 98,304; x 3 = 294,912
  //   MTP:    6 x 1 x (3 x 64 + 2 x 64^2) = 6 x 8,384 = 50,304
  //   logits: 6 x 64 x 128 x 2 = 98,304
  //   per token 294,912 + 294,912 + 50,304 + 98,304 = 738,432; x 16 = 11,814,912
  //   core:   6 x 64 = 384; x 256 x 3 = 294,912
  CHECK(hapmoe::megatron_model_flops(m, 1, 1, 16) == 12109824.0);
}
