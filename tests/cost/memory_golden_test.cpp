// Weights + gradients + optimizer state of a costed plan vs Megatron-LM's
// compute_weight_and_optimizer_memory (theoretical_memory_usage.py, megatron.md §3.1).
// The costed value goes through the real path: scenario JSON -> parse_scenario -> evaluate_plan.
// The golden value is an independent implementation of §3.1 from the models' raw dimensions.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hapmoe/cost_memory.hpp"
#include "hapmoe/evaluate.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/scenario_io.hpp"

namespace {

using nlohmann::json;

const hapmoe::PresetCatalog& presets() {
  static const hapmoe::PresetCatalog catalog = hapmoe::load_builtin_presets();
  return catalog;
}

// Megatron-LM arguments (None -> 0), filled in by hand from the published configs.
struct MemArgs {
  double num_layers = 0, hidden_size = 0, ffn_hidden_size = 0;
  double num_attention_heads = 0, num_query_groups = 0, kv_channels = 0, vocab_size = 0;
  bool swiglu = true, untied = true;
  double num_experts = 0, moe_ffn_hidden_size = 0, moe_shared_expert_intermediate_size = 0;
  std::vector<int> moe_layer_pattern;
  bool mla = false;
  double q_lora_rank = 0, kv_lora_rank = 0, qk_head_dim = 0, qk_pos_emb_head_dim = 0, v_head_dim = 0;
  double mtp_num_layers = 0;
};

struct Parallel {
  int tp = 1, pp = 1, dp = 1, ep = 1, etp = 1;
  long long world() const { return static_cast<long long>(tp) * pp * dp; }  // cp = 1
};

double padded_vocab(double vocab, int tp) {
  long long v = static_cast<long long>(vocab);
  while (v % (128LL * tp) != 0) ++v;
  return static_cast<double>(v);
}

// compute_weight_and_optimizer_memory as megatron.md §3.1 A states it (RMSNorm: n = 1; no
// linear biases; no moe_latent_size; no shared-expert gate). Bytes on the most loaded shard.
double megatron_weight_and_optimizer_bytes(const MemArgs& a, const Parallel& p, bool distopt) {
  const double h = a.hidden_size, heads = a.num_attention_heads, d = a.kv_channels;
  const double g = a.num_query_groups;
  const double n = 1;
  const double glu = a.swiglu ? 1.5 : 1;
  const double V = padded_vocab(a.vocab_size, p.tp);
  const double E = a.num_experts > 0 ? a.num_experts : 1;

  double n_dense = a.num_layers, n_moe = 0, last_is_moe = 0;
  if (a.num_experts > 0) {
    n_moe = 0;
    for (int x : a.moe_layer_pattern) n_moe += x;
    n_dense = a.num_layers - n_moe;
    last_is_moe = a.moe_layer_pattern.back();
  }
  const double mtp_moe = last_is_moe * a.mtp_num_layers;
  const double mtp_dense = (1 - last_is_moe) * a.mtp_num_layers;

  double attn = 0;
  if (a.mla) {
    const double qk = a.qk_head_dim + a.qk_pos_emb_head_dim;
    const double q_term = a.q_lora_rank > 0 ? a.q_lora_rank * (h + heads * qk + n) : h * heads * qk;
    attn = q_term + a.kv_lora_rank * (h + heads * (a.qk_head_dim + a.v_head_dim) + n) +
           h * a.qk_pos_emb_head_dim + heads * a.v_head_dim * h;
  } else {
    const double q_ratio = heads * d / h;
    attn = 2 * h * h * (1 + g / heads) * q_ratio;
  }
  const double embedding = h * V;
  const double final_norm = n * h;
  const double dense_mlp = 2 * h * a.ffn_hidden_size * glu;
  const double shared = 2 * h * a.moe_shared_expert_intermediate_size * glu;
  const double routed = 2 * h * a.moe_ffn_hidden_size * E * glu;
  const double layernorms = 2 * h * n;
  const double router = a.num_experts > 0 ? h * E : 0;

  const double tp_block = (attn + dense_mlp) * n_dense + (attn + shared) * n_moe;
  const double repl_block = layernorms * n_dense + (layernorms + router) * n_moe + final_norm;
  const double expert_block = routed * n_moe;
  const double tp_mtp = (attn + dense_mlp) * mtp_dense + (attn + shared) * mtp_moe;
  const double repl_mtp = layernorms * mtp_dense + (layernorms + router) * mtp_moe;
  const double expert_mtp = routed * mtp_moe;

  double tp_part = (tp_block / p.pp + tp_mtp + embedding) / p.tp;
  if (a.untied && p.pp == 1) tp_part += embedding / p.tp;
  const double repl_part = repl_block / p.pp + repl_mtp;
  const double expert_part = (expert_block / p.pp + expert_mtp) / (p.etp * p.ep);

  const double edp = static_cast<double>(p.world()) / (p.etp * p.ep * p.pp);
  auto bpp = [distopt](double shards) { return distopt ? 6 + 12 / shards : 18.0; };
  return (tp_part + repl_part) * bpp(p.dp) + expert_part * bpp(edp);
}

MemArgs llama2_7b() {
  MemArgs a;
  a.num_layers = 32; a.hidden_size = 4096; a.ffn_hidden_size = 11008;
  a.num_attention_heads = 32; a.num_query_groups = 32; a.kv_channels = 128; a.vocab_size = 32000;
  return a;
}

MemArgs mixtral_8x7b() {
  MemArgs a;
  a.num_layers = 32; a.hidden_size = 4096; a.ffn_hidden_size = 14336;
  a.num_attention_heads = 32; a.num_query_groups = 8; a.kv_channels = 128; a.vocab_size = 32000;
  a.num_experts = 8; a.moe_ffn_hidden_size = 14336;
  a.moe_layer_pattern = std::vector<int>(32, 1);
  return a;
}

MemArgs qwen3_30b() {
  MemArgs a;
  a.num_layers = 48; a.hidden_size = 2048; a.ffn_hidden_size = 6144;
  a.num_attention_heads = 32; a.num_query_groups = 4; a.kv_channels = 128; a.vocab_size = 151936;
  a.num_experts = 128; a.moe_ffn_hidden_size = 768;
  a.moe_layer_pattern = std::vector<int>(48, 1);
  return a;
}

MemArgs deepseek_v3_no_mtp() {
  MemArgs a;
  a.num_layers = 61; a.hidden_size = 7168; a.ffn_hidden_size = 18432;
  a.num_attention_heads = 128; a.num_query_groups = 128; a.kv_channels = 128; a.vocab_size = 129280;
  a.num_experts = 256; a.moe_ffn_hidden_size = 2048; a.moe_shared_expert_intermediate_size = 2048;
  a.moe_layer_pattern = std::vector<int>(3, 0);
  a.moe_layer_pattern.resize(61, 1);
  a.mla = true;
  a.q_lora_rank = 1536; a.kv_lora_rank = 512; a.qk_head_dim = 128; a.qk_pos_emb_head_dim = 64;
  a.v_head_dim = 128;
  a.mtp_num_layers = 0;  // Megatron's formula leaves out the MTP eh-proj; the core counts it
  return a;
}

// A scenario on world-size H100s (8 per node) holding `plan`; stage layers as given.
json scenario_doc(const json& model, const Parallel& p, const std::vector<int>& stage_layers,
                  bool distopt) {
  json stages = json::array();
  for (int l : stage_layers) stages.push_back({{"group", 0}, {"layers", l}, {"recompute", "none"}});
  const long long gpus = p.world();
  return {{"format", "hapmoe.scenario/1"},
          {"model", model},
          {"cluster", {{"groups", json::array({{{"gpu", "h100-sxm"}, {"nodes", (gpus + 7) / 8}}})}}},
          {"training",
           {{"global_batch_size", 1024},
            {"seq_length", 4096},
            {"use_distributed_optimizer", distopt},
            {"overlap_param_gather", distopt}}},
          {"plan",
           {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"ep", p.ep}, {"etp", p.etp},
            {"micro_batch_size", 1}, {"stages", stages}}}};
}

std::vector<hapmoe::StageCost> costed_stages(const json& doc) {
  auto s = hapmoe::parse_scenario(doc, presets());
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().code + " " + s.error().field));
  REQUIRE(s->plan.has_value());
  auto ev = hapmoe::evaluate_plan(*s, *s->plan);
  REQUIRE_MESSAGE(ev.ok(), (ev.ok() ? std::string() : ev.error().code + " " + ev.error().message));
  return ev->stages;
}

void check_pp1(const json& model, const MemArgs& args, const Parallel& p) {
  for (bool distopt : {true, false}) {
    CAPTURE(p.tp);
    CAPTURE(p.dp);
    CAPTURE(p.ep);
    CAPTURE(p.etp);
    CAPTURE(distopt);
    const auto stages =
        costed_stages(scenario_doc(model, p, {static_cast<int>(args.num_layers)}, distopt));
    REQUIRE(stages.size() == 1);
    const double expected = megatron_weight_and_optimizer_bytes(args, p, distopt);
    const double got = stages[0].weights.total();
    CHECK(std::abs(got - expected) <= 1e-12 * expected);
  }
}

}  // namespace

TEST_CASE("golden: 18 / (6 + 12/DP) bytes per parameter on a hand-sized model") {
  // Sanity check of the golden function itself on numbers small enough to do by hand:
  // dense, h 8, 2 heads of 4 (MHA), F 16, 1 layer, vocab 128 (TP 1: V = 128), untied.
  MemArgs a;
  a.num_layers = 1; a.hidden_size = 8; a.ffn_hidden_size = 16;
  a.num_attention_heads = 2; a.num_query_groups = 2; a.kv_channels = 4; a.vocab_size = 128;
  // attn 4 h^2 = 256; MLP 3 x 8 x 16 = 384; norms 16; final norm 8; 2 x embedding 2 x 1024.
  // params = 256 + 384 + 16 + 8 + 2048 = 2712.
  Parallel p;
  p.dp = 4;
  CHECK(megatron_weight_and_optimizer_bytes(a, p, false) == 2712.0 * 18);
  CHECK(megatron_weight_and_optimizer_bytes(a, p, true) == 2712.0 * (6 + 12.0 / 4));
}

TEST_CASE("weights + optimizer match Megatron: dense llama2-7b, PP 1") {
  const MemArgs args = llama2_7b();
  for (auto [tp, dp] : std::vector<std::pair<int, int>>{{1, 8}, {2, 4}, {4, 2}, {8, 1}, {8, 4}}) {
    Parallel p;
    p.tp = tp;
    p.dp = dp;
    check_pp1("llama2-7b", args, p);
  }
}

TEST_CASE("weights + optimizer match Megatron: MoE, PP 1") {
  struct Combo { int tp, dp, ep, etp; };
  SUBCASE("mixtral-8x7b") {
    // EDP = W / (ETP x EP): 8/8 = 1, 8/4 = 2, 16/8 = 2, 64/8 = 8.
    for (Combo c : std::initializer_list<Combo>{{1, 8, 8, 1}, {2, 4, 4, 1}, {2, 8, 4, 2}, {4, 16, 8, 1}}) {
      check_pp1("mixtral-8x7b", mixtral_8x7b(), Parallel{c.tp, 1, c.dp, c.ep, c.etp});
    }
  }
  SUBCASE("qwen3-30b-a3b") {
    // EDP: 8/8 = 1, 32/16 = 2, 8/8 = 1, 64/32 = 2.
    for (Combo c : std::initializer_list<Combo>{{1, 8, 8, 1}, {2, 16, 16, 1}, {4, 2, 4, 2}, {8, 8, 32, 1}}) {
      check_pp1("qwen3-30b-a3b", qwen3_30b(), Parallel{c.tp, 1, c.dp, c.ep, c.etp});
    }
  }
  SUBCASE("deepseek-v3 without MTP") {
    const json model = {{"preset", "deepseek-v3"}, {"mtp_num_layers", 0}};
    // EDP: 128/64 = 2, 128/32 = 4, 8/8 = 1, 32/32 = 1.
    for (Combo c : std::initializer_list<Combo>{{8, 16, 64, 1}, {4, 32, 32, 1}, {1, 8, 8, 1}, {2, 16, 16, 2}}) {
      check_pp1(model, deepseek_v3_no_mtp(), Parallel{c.tp, 1, c.dp, c.ep, c.etp});
    }
  }
}

TEST_CASE("weights + optimizer vs Megatron: dense llama2-7b, PP 2") {
  // Megatron's "most loaded shard" for PP > 1 is 1/PP of the layer block *including* the final
  // norm (repl_block / PP carries final_norm / PP = h/2) plus the input embedding. Our stage 0
  // holds 16 layers and the embedding but no final norm; our stage 1 holds 16 layers, the
  // (untied) output layer - as large as the embedding - and the whole final norm. So:
  //   stage 0 = Megatron - (h/2) x bpp,   stage 1 = Megatron + (h/2) x bpp.
  const MemArgs args = llama2_7b();
  const double h = args.hidden_size;
  Parallel p;
  p.tp = 2;
  p.pp = 2;
  p.dp = 4;
  for (bool distopt : {true, false}) {
    CAPTURE(distopt);
    const double bpp = distopt ? 6 + 12.0 / p.dp : 18.0;
    const auto stages = costed_stages(scenario_doc("llama2-7b", p, {16, 16}, distopt));
    REQUIRE(stages.size() == 2);
    const double megatron = megatron_weight_and_optimizer_bytes(args, p, distopt);
    const double stage0 = megatron - h / 2 * bpp;
    const double stage1 = megatron + h / 2 * bpp;
    CHECK(std::abs(stages[0].weights.total() - stage0) <= 1e-12 * stage0);
    CHECK(std::abs(stages[1].weights.total() - stage1) <= 1e-12 * stage1);
  }
}

TEST_CASE("weight bytes split: bf16 params, fp32 grads, sharded optimizer") {
  // llama2-7b, TP 8, DP 2, DistOpt: params per GPU P, weights 2P, grads 4P, optimizer 12P/2.
  Parallel p;
  p.tp = 8;
  p.dp = 2;
  const auto stages = costed_stages(scenario_doc("llama2-7b", p, {32}, true));
  const double h = 4096, V = 32768;  // 32000 padded to 1024 x 32
  const double layer_tp = 4 * h * h + 3 * h * 11008;
  const double params = (32 * layer_tp + 2 * h * V) / 8 + 32 * 2 * h + h;
  CHECK(stages[0].weights.weights_bytes == doctest::Approx(2 * params).epsilon(1e-12));
  CHECK(stages[0].weights.gradients_bytes == doctest::Approx(4 * params).epsilon(1e-12));
  CHECK(stages[0].weights.optimizer_bytes == doctest::Approx(12 * params / 2).epsilon(1e-12));
}

// ---------------------------------------------------------------- memory per precision

TEST_CASE("weight_bytes per training setup (Megatron's allocation per dtype)") {
  hapmoe::TrainingSpec t;
  auto b = hapmoe::weight_bytes(t);  // Megatron-LM bf16 default: 2 + 4 + 12
  CHECK(b.param == 2);
  CHECK(b.grad == 4);
  CHECK(b.optimizer == 12);
  CHECK(b.fp8_weight == 0);
  t.grad_reduce_in_bf16 = true;  // --grad-reduce-in-bf16
  CHECK(hapmoe::weight_bytes(t).grad == 2);
  t = {};
  t.optimizer.precision_aware = true;  // all fp32: the same bytes as without it
  CHECK(hapmoe::weight_bytes(t).optimizer == 12);
  CHECK(hapmoe::weight_bytes(t).grad == 4);
  // DeepSeek-V3 recipe (C5): fp32 master 4 + bf16 exp_avg 2 + bf16 exp_avg_sq 2; bf16 grads.
  t.optimizer.main_grads_dtype = "bf16";
  t.optimizer.exp_avg_dtype = "bf16";
  t.optimizer.exp_avg_sq_dtype = "bf16";
  CHECK(hapmoe::weight_bytes(t).optimizer == 8);
  CHECK(hapmoe::weight_bytes(t).grad == 2);
  t.optimizer.main_params_dtype = "fp16";
  t.optimizer.exp_avg_dtype = "fp8";
  t.optimizer.exp_avg_sq_dtype = "fp8";
  CHECK(hapmoe::weight_bytes(t).optimizer == 4);  // 2 + 1 + 1
  t = {};
  t.precision = hapmoe::Precision::kFp8;
  CHECK(hapmoe::weight_bytes(t).fp8_weight == 2);  // TE's row- and column-wise FP8 copies
  CHECK_FALSE(hapmoe::weight_bytes(t).fp8_param_gather);
  t.fp8_param_gather = true;
  CHECK(hapmoe::weight_bytes(t).fp8_param_gather);
}

TEST_CASE("weight_memory with FP8 GEMM weights and a precision-aware optimizer") {
  // 1e6 dense params over 4 shards, 2e6 expert params over 2; 2.5e6 of them are FP8 GEMM weights.
  hapmoe::TrainingSpec t;
  t.precision = hapmoe::Precision::kFp8;
  auto w = hapmoe::weight_memory(1e6, 2e6, 4, 2, true, hapmoe::weight_bytes(t), 2.5e6);
  CHECK(w.weights_bytes == 2 * 3e6 + 2 * 2.5e6);  // bf16 copy of all + FP8 copies = 11e6
  CHECK(w.gradients_bytes == 12e6);
  CHECK(w.optimizer_bytes == 15e6);
  t.fp8_param_gather = true;  // the FP8 weights are the parameters: 0.5e6 x 2 + 2.5e6 x 2
  w = hapmoe::weight_memory(1e6, 2e6, 4, 2, true, hapmoe::weight_bytes(t), 2.5e6);
  CHECK(w.weights_bytes == 6e6);
  t.optimizer.precision_aware = true;
  t.optimizer.main_grads_dtype = "bf16";
  t.optimizer.exp_avg_dtype = "bf16";
  t.optimizer.exp_avg_sq_dtype = "bf16";
  w = hapmoe::weight_memory(1e6, 2e6, 4, 2, true, hapmoe::weight_bytes(t), 2.5e6);
  CHECK(w.gradients_bytes == 6e6);                    // 2 x 3e6
  CHECK(w.optimizer_bytes == 8 * (1e6 / 4 + 2e6 / 2));  // 10e6
}

TEST_CASE("activations: FP8 runs save GEMM inputs as FP8") {
  // tiny model (h 64, 4 heads of 16, 2 groups, F 128, 8 experts top-2 of width 32), 100 tokens,
  // TP 2, no SP. BF16 values are the hand-computed ones of cost_terms_test.
  hapmoe::ModelSpec m;
  m.num_layers = 2; m.hidden_size = 64; m.ffn_hidden_size = 128; m.num_attention_heads = 4;
  m.num_query_groups = 2; m.kv_channels = 16; m.vocab_size = 1000; m.swiglu = true;
  m.num_experts = 8; m.moe_router_topk = 2; m.moe_ffn_hidden_size = 32; m.moe_layer_freq = {0, 1};
  hapmoe::ActivationInputs in;
  in.tokens = 100;
  in.tp = 2;
  in.gemm_input_bytes = hapmoe::kFp8ActivationBytes;
  // Attention: BF16 norm input 6400 + q/k/v 100 x 128 / 2 = 6400 -> 25,600 B; FP8 norm output
  // 6400 + core output 100 x 64 / 2 = 3200 -> 9600 B; softmax stats 800 B; the attention
  // kernel keeps its own BF16 output (3200 x 2 B) beside linear_proj's FP8 copy. BF16 run: 45,600
  // (one shared output tensor there).
  CHECK(hapmoe::attention_activation_bytes(m, in) == 42400);
  // Dense MLP: BF16 norm input 6400 + fc1 out 100 x 256 / 2 = 12,800 -> 38,400 B; FP8 norm
  // output 6400 + fc2 input 6400 -> 12,800 B. BF16 run: 64,000.
  CHECK(hapmoe::dense_mlp_activation_bytes(m, 128, in) == 51200);
  // MoE (100 copies): BF16 norm in/out 12,800 + fc1 out 6400 -> 38,400 B (fc2's output is not
  // kept); FP8 permuted input 6400 + fc2 input 3200 -> 9600 B; router probs 3200 B. BF16 run:
  // 60,800.
  CHECK(hapmoe::moe_activation_bytes(m, in) == 51200);
  in.gemm_input_bytes = hapmoe::kBf16ActivationBytes;
  CHECK(hapmoe::attention_activation_bytes(m, in) == 45600);
  CHECK(hapmoe::dense_mlp_activation_bytes(m, 128, in) == 64000);
  CHECK(hapmoe::moe_activation_bytes(m, in) == 60800);
}

namespace {
std::string read_example(const std::string& name) {
  std::ifstream f(std::string(HAPMOE_SOURCE_DIR) + "/examples/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("published memory point: Qwen3-30B-A3B on 16 x H100, BF16, EP 16, within 10%") {
  // Megatron-Bridge qwen3-30b-a3b verification card: under 65 GiB; 61.35 GB in a smoke run
  // (calibration.md). Megatron-Bridge recipe: TP 1, PP 1, EP 16, bf16 gradient reduce.
  json doc = json::parse(read_example("c3-qwen3-30b-a3b-h100-16.json"));
  doc["training"] = {{"global_batch_size", 512}, {"seq_length", 4096}, {"precision", "bf16"},
                     {"moe_token_dispatcher_type", "alltoall"}, {"grad_reduce_in_bf16", true}};
  doc["plan"]["pp"] = 1;
  doc["plan"]["vpp"] = 1;
  doc["plan"]["dp"] = 16;
  doc["plan"]["ep"] = 16;
  doc["plan"]["stages"] = json::array({{{"group", 0}, {"layers", 48}, {"recompute", "none"}}});
  const auto stages = costed_stages(doc);
  REQUIRE(stages.size() == 1);
  const double peak_gib = stages[0].peak_bytes() / hapmoe::kGiB;
  const double allocated_gib = (stages[0].peak_bytes() - stages[0].reserved_bytes) / hapmoe::kGiB;
  MESSAGE("predicted peak " << peak_gib << " GiB, allocator-visible " << allocated_gib << " GiB");
  CHECK(std::abs(peak_gib - 61.35) <= 0.10 * 61.35);
  CHECK(std::abs(allocated_gib - 61.35) <= 0.10 * 61.35);
  CHECK(peak_gib < 79.65);
}

TEST_CASE("every calibration row's published configuration fits in memory") {
  for (const char* name : {"c1-mixtral-8x7b-h100-64.json", "c2-gpt-oss-120b-h100-64.json",
                           "c3-qwen3-30b-a3b-h100-16.json", "c4-qwen3-235b-a22b-h100-256.json",
                           "c5-deepseek-v3-gb200-256.json"}) {
    CAPTURE(name);
    const auto stages = costed_stages(json::parse(read_example(name)));
    for (size_t i = 0; i < stages.size(); ++i) {
      CAPTURE(i);
      CHECK(stages[i].fits());
    }
  }
}
