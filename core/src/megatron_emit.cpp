#include "hapmoe/megatron_emit.hpp"

#include <sstream>
#include <vector>

#include "hapmoe/hardware.hpp"

namespace hapmoe {

namespace {
// Compute capability from which Megatron no longer needs CUDA_DEVICE_MAX_CONNECTIONS=1.
constexpr double kCudaArchNoMaxConnections = 10;

std::string repeat_t(int n) {
  if (n <= 0) return "";
  if (n == 1) return "t";
  return "t*" + std::to_string(n);
}

// Layers of each (virtual chunk, pp rank) in layout order: chunk-major, as Megatron lists them.
std::vector<std::vector<int>> chunk_layers(const PlanSpec& p) {
  std::vector<std::vector<int>> chunks(p.vpp, std::vector<int>(p.pp, 0));
  for (int r = 0; r < p.pp; ++r) {
    const int n = p.stages[r].layers;
    for (int c = 0; c < p.vpp; ++c) chunks[c][r] = n / p.vpp + (c < n % p.vpp ? 1 : 0);
  }
  return chunks;
}
}  // namespace

std::string pipeline_layout(const ModelSpec& m, const PlanSpec& p) {
  if (p.pp <= 1) return "";
  bool uniform = m.num_layers % p.pp == 0 && (m.num_layers / p.pp) % p.vpp == 0;
  for (const auto& st : p.stages) uniform = uniform && st.layers == m.num_layers / p.pp;
  if (uniform) return "";
  const auto chunks = chunk_layers(p);
  std::string out;
  for (int c = 0; c < p.vpp; ++c) {
    for (int r = 0; r < p.pp; ++r) {
      std::string stage;
      if (c == 0 && r == 0) stage += "E";
      stage += repeat_t(chunks[c][r]);
      if (c == p.vpp - 1 && r == p.pp - 1) {
        for (int i = 0; i < m.mtp_num_layers; ++i) stage += "m";
        stage += "L";
      }
      if (!out.empty() || c > 0 || r > 0) out += "|";
      out += stage;
    }
  }
  return out;
}

std::string moe_layer_freq_expression(const std::vector<int>& pattern) {
  std::string out;
  size_t i = 0;
  while (i < pattern.size()) {
    size_t j = i;
    while (j < pattern.size() && pattern[j] == pattern[i]) ++j;
    if (!out.empty()) out += "+";
    out += "[" + std::to_string(pattern[i]) + "]*" + std::to_string(j - i);
    i = j;
  }
  return "(" + out + ")";
}

MegatronCommand megatron_command(const Scenario& s, const PlanSpec& p) {
  const ModelSpec& m = s.model;
  const TrainingSpec& t = s.training;
  std::ostringstream a;
  auto flag = [&a](const std::string& f) { a << (a.tellp() > 0 ? " " : "") << f; };
  auto kv = [&flag](const std::string& f, const auto& v) {
    std::ostringstream o;
    o << f << " " << v;
    flag(o.str());
  };
  // Parallelism
  kv("--tensor-model-parallel-size", p.tp);
  kv("--pipeline-model-parallel-size", p.pp);
  if (p.cp > 1) kv("--context-parallel-size", p.cp);
  if (m.is_moe()) {
    kv("--expert-model-parallel-size", p.ep);
    kv("--expert-tensor-parallel-size", p.etp);
  }
  if (p.sequence_parallel) flag("--sequence-parallel");
  const std::string layout = pipeline_layout(m, p);
  if (!layout.empty()) {
    kv("--pipeline-model-parallel-layout", "\"" + layout + "\"");
  } else if (p.vpp > 1) {
    kv("--num-virtual-stages-per-pipeline-rank", p.vpp);
  }
  kv("--micro-batch-size", p.micro_batch_size);
  kv("--global-batch-size", t.global_batch_size);
  kv("--seq-length", t.seq_length);
  kv("--max-position-embeddings", t.seq_length);
  // Model
  kv("--num-layers", m.num_layers);
  kv("--hidden-size", m.hidden_size);
  if (m.ffn_hidden_size > 0) kv("--ffn-hidden-size", m.ffn_hidden_size);
  kv("--num-attention-heads", m.num_attention_heads);
  if (m.multi_latent_attention) {
    flag("--multi-latent-attention");
    if (m.q_lora_rank > 0) kv("--q-lora-rank", m.q_lora_rank);
    kv("--kv-lora-rank", m.kv_lora_rank);
    kv("--qk-head-dim", m.qk_head_dim);
    kv("--qk-pos-emb-head-dim", m.qk_pos_emb_head_dim);
    kv("--v-head-dim", m.v_head_dim);
  } else {
    if (m.query_groups() != m.num_attention_heads) {
      flag("--group-query-attention");
      kv("--num-query-groups", m.query_groups());
    }
    if (m.kv_channels > 0) kv("--kv-channels", m.kv_channels);
  }
  if (m.window_size > 0) {
    kv("--window-size", std::to_string(m.window_size) + ",0");
    if (m.window_attn_skip_freq > 0) kv("--window-attn-skip-freq", m.window_attn_skip_freq);
  }
  kv("--vocab-size", m.vocab_size);
  if (m.swiglu) flag("--swiglu");
  if (m.untie_embeddings_and_output_weights) flag("--untie-embeddings-and-output-weights");
  flag("--normalization RMSNorm --position-embedding-type rope --disable-bias-linear");
  if (m.mtp_num_layers > 0) kv("--mtp-num-layers", m.mtp_num_layers);
  if (m.is_moe()) {
    kv("--num-experts", m.num_experts);
    kv("--moe-router-topk", m.moe_router_topk);
    kv("--moe-ffn-hidden-size", m.moe_ffn_hidden_size);
    if (m.moe_shared_expert_intermediate_size > 0) {
      kv("--moe-shared-expert-intermediate-size", m.moe_shared_expert_intermediate_size);
    }
    bool every = true;
    for (int f : m.moe_layer_freq) every = every && f == 1;
    if (!every) kv("--moe-layer-freq", "\"" + moe_layer_freq_expression(m.moe_layer_freq) + "\"");
    if (m.moe_router_num_groups > 0) {
      kv("--moe-router-num-groups", m.moe_router_num_groups);
      kv("--moe-router-group-topk", m.moe_router_group_topk);
    }
    if (m.moe_router_topk == 1) flag("--moe-router-pre-softmax");
    kv("--moe-token-dispatcher-type", to_string(t.moe_token_dispatcher_type));
    if (t.moe_token_dispatcher_type == Dispatcher::kFlex) kv("--moe-flex-dispatcher-backend", "deepep");
    flag("--moe-grouped-gemm");
    if (p.ep_comm_overlap) flag("--overlap-moe-expert-parallel-comm --delay-wgrad-compute");
  }
  // Optimizer, precision, overlap
  if (t.use_distributed_optimizer) flag("--use-distributed-optimizer");
  if (t.overlap_grad_reduce) flag("--overlap-grad-reduce");
  if (t.overlap_param_gather) flag("--overlap-param-gather");
  flag("--bf16");
  if (t.precision == Precision::kFp8) {
    std::vector<const GpuSpec*> gpus;
    for (const auto& st : p.stages) gpus.push_back(&s.cluster.groups[st.group].gpu);
    const std::string recipe = fp8_recipe_for(t.fp8_recipe, gpus);
    kv("--fp8-format", recipe == "mxfp8" ? "e4m3" : "hybrid");
    kv("--fp8-recipe", recipe.empty() ? "tensorwise" : recipe);
    if (t.fp8_param_gather) flag("--fp8-param-gather");
  }
  if (t.grad_reduce_in_bf16) flag("--grad-reduce-in-bf16");
  if (t.optimizer.precision_aware) {
    flag("--use-precision-aware-optimizer");
    kv("--main-grads-dtype", t.optimizer.main_grads_dtype);
    kv("--main-params-dtype", t.optimizer.main_params_dtype);
    kv("--exp-avg-dtype", t.optimizer.exp_avg_dtype);
    kv("--exp-avg-sq-dtype", t.optimizer.exp_avg_sq_dtype);
  }
  if (p.optimizer_offload_fraction > 0) {
    // Megatron's CPU offload reuses the precision-aware optimizer's code path (validate_args).
    if (!t.optimizer.precision_aware) flag("--use-precision-aware-optimizer");
    kv("--optimizer-cpu-offload --optimizer-offload-fraction", p.optimizer_offload_fraction);
    flag("--overlap-cpu-optimizer-d2h-h2d");
  }
  if (t.cuda_graphs) {
    flag("--cuda-graph-impl local --cuda-graph-scope full_iteration --te-rng-tracker");
  }
  // Recompute (one setting for all stages in upstream Megatron-LM)
  // (the modules the cost model priced, in Megatron's order).
  const Recompute rc = p.stages.front().recompute;
  if (rc.kind == Recompute::Kind::kSelective) {
    std::string modules;
    for (int i = 0; i < kRecomputeModuleCount; ++i) {
      if (rc.modules & (1u << i)) modules += (modules.empty() ? "" : " ") + std::string(recompute_module_name(i));
    }
    kv("--recompute-granularity selective --recompute-modules", modules);
  } else if (rc.full()) {
    flag("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
  }

  MegatronCommand cmd;
  cmd.args = a.str();
  // Megatron asks for CUDA_DEVICE_MAX_CONNECTIONS=1 with TP or CP > 1 before compute
  // capability 10 (megatron.md, validate_args rule 5).
  bool pre_blackwell = false;
  for (const auto& st : p.stages) {
    const double arch = s.cluster.groups[st.group].gpu.cuda_arch;
    pre_blackwell = pre_blackwell || arch < kCudaArchNoMaxConnections;
  }
  if ((p.tp > 1 || p.cp > 1) && pre_blackwell) cmd.env["CUDA_DEVICE_MAX_CONNECTIONS"] = "1";
  const int gpn = s.cluster.groups[p.stages.front().group].gpus_per_node;
  const long long world = static_cast<long long>(p.tp) * p.cp * p.dp * p.pp;
  const long long nodes = (world + gpn - 1) / gpn;
  std::ostringstream l;
  l << "# " << world << " GPUs on " << nodes
    << " nodes; list the nodes in pipeline-stage order (stage 0 first) so that ranks follow the plan\n"
    << "torchrun --nnodes " << nodes << " --nproc-per-node " << std::min<long long>(gpn, world)
    << " --node-rank $NODE_RANK --master-addr $MASTER_ADDR --master-port 6000 pretrain_gpt.py "
    << cmd.args;
  cmd.launch = l.str();
  return cmd;
}

}  // namespace hapmoe
