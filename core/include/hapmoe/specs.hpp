// The planning problem as plain values: model, hardware, cluster, training setup, search
// constraints and a parallel plan. Field names follow docs/scenario.md (Megatron flag names in
// snake_case); units are in the names. Member initialisers equal the defaults of the field
// table (field_schema.hpp), which the parser applies; tests/spec/field_schema_test.cpp checks they agree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hapmoe/profile.hpp"

namespace hapmoe {

enum class Precision { kBf16, kFp8 };

// Megatron's --recompute-modules entries, one bit each (transformer_config.py recompute_modules).
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1u << 0,       // core_attn: the attention core (normal checkpoint)
  kRecomputeMoeAct = 1u << 1,         // moe_act: the experts' activation (output discarded)
  kRecomputeLayernorm = 1u << 2,      // layernorm: separate (non-fused) norms (output discarded)
  kRecomputeMlaUpProj = 1u << 3,      // mla_up_proj: MLA up-projections + RoPE (output discarded)
  kRecomputeMlp = 1u << 4,            // mlp: a dense layer's MLP (normal checkpoint)
  kRecomputeMoe = 1u << 5,            // moe: the whole MoE block (normal checkpoint)
  kRecomputeSharedExperts = 1u << 6,  // shared_experts: the shared expert MLP (normal checkpoint)
};
inline constexpr int kRecomputeModuleCount = 7;
// Megatron's name of module bit i (0 = core_attn ... 6 = shared_experts).
const char* recompute_module_name(int i);

// Activation recomputation: none, full layers, or Megatron's selective granularity with a set of
// modules ("selective" alone = Megatron's default set, core_attn). A value type: compare with ==.
struct Recompute {
  enum class Kind { kNone, kSelective, kFull };
  Kind kind = Kind::kNone;
  unsigned modules = 0;  // RecomputeModule bits; non-zero exactly when kind is kSelective

  static const Recompute kNone, kSelective, kFull;
  static constexpr Recompute of_modules(unsigned bits) {
    return bits == 0 ? Recompute{} : Recompute{Kind::kSelective, bits};
  }
  constexpr bool full() const { return kind == Kind::kFull; }
  constexpr bool has(RecomputeModule m) const { return kind == Kind::kSelective && (modules & m) != 0; }
  // A small integer unique per value (cache keys).
  constexpr int key() const { return kind == Kind::kFull ? -1 : static_cast<int>(modules); }
  friend constexpr bool operator==(const Recompute& a, const Recompute& b) {
    return a.kind == b.kind && a.modules == b.modules;
  }
  friend constexpr bool operator!=(const Recompute& a, const Recompute& b) { return !(a == b); }
};
inline constexpr Recompute Recompute::kNone{};
inline constexpr Recompute Recompute::kSelective{Recompute::Kind::kSelective, kRecomputeCoreAttn};
inline constexpr Recompute Recompute::kFull{Recompute::Kind::kFull, 0};

// training.moe_token_dispatcher_type: Megatron's --moe-token-dispatcher-type, or kAuto (searched
// over alltoall and the flex backends the GPUs support).
enum class Dispatcher { kAlltoall, kAllgather, kFlex, kAuto };
// training.moe_flex_dispatcher_backend: Megatron's --moe-flex-dispatcher-backend, or kAuto
// (searched over the backends the GPUs support).
enum class FlexBackend { kAuto, kDeepEp, kHybridEp };

// The token dispatcher a plan runs: --moe-token-dispatcher-type, and with flex its backend.
enum class Dispatch { kAlltoall, kAllgather, kDeepEp, kHybridEp };
inline constexpr bool is_flex(Dispatch d) { return d == Dispatch::kDeepEp || d == Dispatch::kHybridEp; }

// --cuda-graph-impl (transformer_config.py cuda_graph_impl).
enum class GraphImpl { kNone, kTransformerEngine, kLocal, kFullIteration };
// --cuda-graph-modules entries, one bit each (transformer_config.py CudaGraphModule).
enum GraphModule : unsigned {
  kGraphAttn = 1u << 0,           // attn: TransformerLayer._forward_attention()
  kGraphMlp = 1u << 1,            // mlp: a dense layer's MLP
  kGraphMoe = 1u << 2,            // moe: the whole MoE block (drop-and-pad only)
  kGraphMoeRouter = 1u << 3,      // moe_router: the MoE block up to the router (+ shared experts)
  kGraphMoePreprocess = 1u << 4,  // moe_preprocess: MoELayer.preprocess() (needs moe_router)
};
inline constexpr int kGraphModuleCount = 5;
// Megatron's name of module bit i (0 = attn ... 4 = moe_preprocess).
const char* graph_module_name(int i);

// A plan's CUDA graphs: the implementation and, for the per-layer ones (local,
// transformer_engine), the captured modules; no modules there = the whole layer.
struct CudaGraphs {
  GraphImpl impl = GraphImpl::kNone;
  unsigned modules = 0;  // GraphModule bits

  bool any() const { return impl != GraphImpl::kNone; }
  bool per_layer() const { return impl == GraphImpl::kTransformerEngine || impl == GraphImpl::kLocal; }
  // Whether a layer part of this kind is replayed from a graph instead of launched by the host.
  bool captures(GraphModule m) const {
    if (impl == GraphImpl::kFullIteration) return true;
    return per_layer() && (modules == 0 || (modules & m) != 0);
  }
  // A small integer unique per value (cache keys).
  int key() const { return static_cast<int>(impl) << kGraphModuleCount | static_cast<int>(modules); }
  friend bool operator==(const CudaGraphs& a, const CudaGraphs& b) { return a.impl == b.impl && a.modules == b.modules; }
  friend bool operator!=(const CudaGraphs& a, const CudaGraphs& b) { return !(a == b); }
};
// One GPU type. Rates are dense; bandwidths are per GPU, one direction, 1e9 bytes/s.
struct GpuSpec {
  std::string id;  // preset id, or "custom"
  std::string name;
  std::string vendor;
  double memory_gib = 0;
  double bf16_tflops = 0;
  std::optional<double> fp8_tflops;
  double hbm_gbps = 0;
  double intra_node_gbps = 0;
  double inter_node_gbps = 0;
  int gpus_per_node = 8;
  double reserved_memory_gib = 5;
  double host_link_gbps = 25;  // GPU <-> host memory, one direction (PCIe Gen4 x16 ~25)
  // Megatron --fp8-recipe values this GPU runs (subset of tensorwise, blockwise, mxfp8), best
  // first; empty = no FP8.
  std::vector<std::string> fp8_recipes;
  double cuda_arch = 0;  // CUDA compute capability (9.0 Hopper, 10.0 Blackwell); 0 = not CUDA
  std::string generation;  // efficiency-constant family (e.g. "hopper"); display only
  // Efficiency factors (documented defaults = Hopper fit; see cost_compute.hpp / cost_comm.hpp).
  double gemm_efficiency = 0.62;         // large BF16 GEMM, fraction of bf16_tflops
  double fp8_gemm_speedup = 1.35;        // achieved FP8 / BF16 GEMM rate
  double attention_efficiency = 0.55;    // flash-attention forward, fraction of bf16_tflops
  // Attention with sinks (softmax_type learnable / off-by-one) in BF16: Transformer Engine turns
  // FlashAttention off for it and runs cuDNN's sink path (fitted; FP8 attention on Blackwell runs
  // the regular kernel).
  double sink_attention_efficiency = 0.045;
  double grouped_gemm_half_tokens = 96;  // tokens per local expert at half grouped-GEMM rate
  // Host (CPU) time per operation launched in eager mode: one PyTorch / Transformer Engine
  // module step and its kernel launches (stage_cost.cpp counts the operations of each layer part).
  double host_launch_us = 40;
  // Host time of a layer's backward pass over its forward pass's: dgrad and wgrad launches for
  // every forward GEMM, through one autograd function call per module (between 1 and 2).
  double host_backward_factor = 1.75;
  double hbm_efficiency = 0.75;          // elementwise kernels, fraction of hbm_gbps
  double intra_node_efficiency = 0.75;   // collective bus efficiency on the scale-up link
  double inter_node_efficiency = 0.8;    // collective bus efficiency on the scale-out link
  double alltoall_intra_node_efficiency = 0.75;  // all-to-all bus efficiency, scale-up link
  double alltoall_inter_node_efficiency = 0.65;  // all-to-all bus efficiency, scale-out link
  std::vector<std::string> assumed;  // fields whose value is an assumption, not published
  std::string efficiency_source;     // where the efficiency constants come from
  // Relative error band of a prediction on this GPU and where it comes from: the leave-one-out
  // error of its generation's published runs (calibration --fit), or a wide default uncalibrated.
  double error_fraction = 0.4;
  std::string error_basis;
  std::string source;
};

struct ModelSpec {
  std::string id;
  std::string name;
  int num_layers = 0;
  int hidden_size = 0;
  int ffn_hidden_size = 0;
  int num_attention_heads = 0;
  int num_query_groups = 0;  // 0 = heads (MHA)
  int kv_channels = 0;       // 0 = hidden / heads
  int vocab_size = 0;
  bool swiglu = true;
  bool untie_embeddings_and_output_weights = true;
  int num_experts = 0;
  int moe_router_topk = 0;
  int moe_ffn_hidden_size = 0;
  int moe_shared_expert_intermediate_size = 0;
  std::vector<int> moe_layer_freq;  // expanded: one 0/1 per layer (empty when dense)
  bool multi_latent_attention = false;
  int q_lora_rank = 0;  // 0 = none
  int kv_lora_rank = 0;
  int qk_head_dim = 0;
  int qk_pos_emb_head_dim = 0;
  int v_head_dim = 0;
  int mtp_num_layers = 0;
  int moe_router_num_groups = 0;  // 0 = none
  int moe_router_group_topk = 0;
  int window_size = 0;  // 0 = full attention
  int window_attn_skip_freq = 0;
  // Model-faithful Megatron flags (--normalization, --rotary-base, ...); defaults are the common
  // Llama-style choices, presets set each model's values from its HF config.json.
  std::string normalization = "RMSNorm";         // "RMSNorm" | "LayerNorm"
  double norm_epsilon = 1e-5;                    // --norm-epsilon
  std::string position_embedding_type = "rope";  // "rope" | "learned_absolute" | "none"
  int rotary_base = 10000;                       // --rotary-base (HF rope_theta)
  double rotary_percent = 1;                     // --rotary-percent (HF partial_rotary_factor)
  bool qk_layernorm = false;                     // --qk-layernorm (Qwen3; MLA latent norms)
  bool add_bias_linear = false;                  // biases on every linear layer (GPT-OSS)
  bool add_qkv_bias = false;                     // bias on the QKV projection only (Qwen2)
  bool quick_geglu = false;                      // gated quick-GELU instead of SiLU (GPT-OSS)
  double glu_linear_offset = 0;                  // --glu-linear-offset (GPT-OSS: 1)
  double activation_func_clamp_value = 0;        // --activation-func-clamp-value; 0 = none
  std::string softmax_type = "vanilla";          // "vanilla" | "off-by-one" | "learnable"
  std::string moe_router_score_function = "softmax";  // "softmax" | "sigmoid"
  bool moe_router_pre_softmax = false;           // softmax over all experts before top-k
  bool moe_router_enable_expert_bias = false;    // aux-loss-free balancing bias (DeepSeek-V3)
  double moe_router_topk_scaling_factor = 0;     // routed-weight scale; 0 = none
  std::string moe_router_load_balancing_type = "aux_loss";
  double moe_aux_loss_coeff = 0;
  bool moe_shared_expert_gate = false;           // sigmoid gate on the shared expert (Qwen2)
  double mtp_loss_scaling_factor = 0.1;          // --mtp-loss-scaling-factor
  std::string tokenizer_model;                   // HF tokenizer id for real data; "" = unknown
  std::string source;

  bool is_moe() const { return num_experts > 0; }
  bool layer_is_moe(int i) const { return is_moe() && moe_layer_freq[i] != 0; }
  // Sliding-window layer: every window_attn_skip_freq-th layer (1-based) uses full attention.
  bool layer_is_windowed(int i) const {
    if (window_size <= 0) return false;
    return window_attn_skip_freq <= 0 || (i + 1) % window_attn_skip_freq != 0;
  }
  int query_groups() const { return num_query_groups > 0 ? num_query_groups : num_attention_heads; }
  int head_dim() const { return kv_channels > 0 ? kv_channels : hidden_size / num_attention_heads; }
};

// A set of identical nodes.
struct NodeGroup {
  GpuSpec gpu;
  int nodes = 0;
  int gpus_per_node = 8;       // scale-up domain size
  int gpus_per_host = 8;       // GPUs per operating-system host (torchrun --nproc-per-node)
  double inter_node_gbps = 0;  // per GPU scale-out bandwidth inside the group
  // cluster.groups[].price_per_gpu_hour (USD per GPU-hour; unset = no price) and billed: "used"
  // bills only the GPUs a plan uses (on demand), "all" the whole group (owned or reserved nodes).
  std::optional<double> price_per_gpu_hour;
  bool billed_all = false;

  int gpus() const { return nodes * gpus_per_node; }
};

struct ClusterSpec {
  std::string id;
  std::string name;
  std::vector<NodeGroup> groups;
  double inter_group_gbps = 0;  // 0 = smaller of the two groups' scale-out bandwidths
  std::string source;

  int total_gpus() const {
    int n = 0;
    for (const auto& g : groups) n += g.gpus();
    return n;
  }
  // Every group has a price (the read scenario has prices on all groups or on none).
  bool priced() const {
    for (const auto& g : groups) {
      if (!g.price_per_gpu_hour) return false;
    }
    return !groups.empty();
  }
  // Per-GPU bandwidth between groups a and b (a != b).
  double link_between_groups_gbps(int a, int b) const;
};

// Megatron's precision-aware optimizer (--use-precision-aware-optimizer): dtypes of the main
// gradients, master parameters and Adam moments. Off: fp32 everywhere (Megatron's default).
struct OptimizerSpec {
  bool precision_aware = false;
  std::string main_grads_dtype = "fp32";  // "fp32" | "bf16"
  std::string main_params_dtype = "fp32";  // "fp32" | "fp16"
  std::string exp_avg_dtype = "fp32";      // "fp32" | "bf16" | "fp8"
  std::string exp_avg_sq_dtype = "fp32";   // "fp32" | "bf16" | "fp8"
};

struct TrainingSpec {
  long long global_batch_size = 0;  // sequences per iteration
  int seq_length = 0;
  Precision precision = Precision::kBf16;
  bool use_distributed_optimizer = true;
  Dispatcher moe_token_dispatcher_type = Dispatcher::kAlltoall;
  FlexBackend moe_flex_dispatcher_backend = FlexBackend::kAuto;
  double moe_load_imbalance = 1.0;
  // Token dropping (--moe-expert-capacity-factor; 0 = dropless) and padding every expert's input
  // to its capacity (--moe-pad-expert-input-to-capacity): static shapes, no host sync.
  double moe_expert_capacity_factor = 0;
  bool moe_pad_expert_input_to_capacity = false;
  // HybridEP's static per-EP-rank token budget (--moe-expert-rank-capacity-factor; 0 = none) and
  // the paged stash of routed-expert activations that goes with it (--moe-paged-stash).
  double moe_expert_rank_capacity_factor = 0;
  bool moe_paged_stash = false;
  bool fp8_dot_product_attention = false;  // --fp8-dot-product-attention: attention core in FP8
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  OptimizerSpec optimizer;
  std::string fp8_recipe;  // "" = the first recipe every stage's GPU supports
  bool fp8_param_gather = false;
  bool grad_reduce_in_bf16 = false;  // --grad-reduce-in-bf16: bf16 gradient buffer
  double train_tokens = 0;  // training.train_tokens: the whole run's tokens (0 = unset)
  // Checkpoints and failures (evaluate/resilience.hpp): the aggregate write bandwidth to storage
  // in GB/s (0 = unset: no checkpoint figures), failures per node per year, seconds to restart.
  double checkpoint_write_gbps = 0;
  double node_failures_per_year = 1.4;
  double restart_s = 600;
  // CUDA graphs fixed by the scenario (training.cuda_graph_impl / cuda_graph_modules); unset =
  // searched over what the plan's dispatcher and token handling allow.
  std::optional<GraphImpl> cuda_graph_impl;
  std::optional<unsigned> cuda_graph_modules;  // GraphModule bits
  // Static MoE shapes: every expert's input padded to capacity, or HybridEP's rank budget. Full
  // CUDA graphs need them, and they remove the dispatcher's host synchronisation.
  bool static_moe_shapes(Dispatch d) const {
    return (moe_expert_capacity_factor > 0 && moe_pad_expert_input_to_capacity) ||
           (d == Dispatch::kHybridEp && moe_expert_rank_capacity_factor > 0);
  }
};

// search.mode: "megatron" (plans upstream Megatron-LM runs), "hetero" (plans FlagScale's
// heterogeneous Megatron runs) or "auto" (both, ranked together). Only the planner reads it
// (hapmoe/planner.hpp); the engines each search one runtime's space.
enum class SearchMode { kMegatron, kHetero, kAuto };

// search.objective: "time" (least time per iteration), "cost" (least USD per million training
// tokens) or "time_within_budget" (least time among plans billing at most search.budget_per_hour).
// The cost objectives need cluster.groups[].price_per_gpu_hour (search/objective.hpp).
enum class Objective { kTime, kCost, kTimeWithinBudget };

// The runtime that runs a plan: upstream Megatron-LM (one mesh for every stage) or FlagScale's
// heterogeneous Megatron (a mesh per GPU group).
enum class Runtime { kMegatron, kFlagScale };

// Each dimension: empty = searched over its natural range; otherwise the allowed values.
struct SearchSpec {
  std::vector<int> tp, cp, pp, ep, etp, vpp, micro_batch_size;
  std::vector<Recompute> recompute;  // empty = default_recompute_choices (recompute.hpp)
  std::vector<bool> ep_comm_overlap;  // empty = on wherever Megatron allows it, else off
  // Empty = 0, then the offload fractions of kOffloadFallbackFractions where nothing fits without.
  std::vector<double> optimizer_offload_fraction;
  SearchMode mode = SearchMode::kMegatron;
  Objective objective = Objective::kTime;
  double budget_per_hour = 0;  // USD per hour, with Objective::kTimeWithinBudget
  int top_k = 5;
  // Plans whose peak exceeds (1 - margin) of a stage's GPU memory are ranked after the others.
  double memory_margin_fraction = 0.05;
  std::vector<int> layer_split;  // empty = "auto"
  bool baselines = true;
  // Not a scenario field: the HAPMoE paper's assumption that one job spans vendors through a
  // cross-vendor communicator (its Megatron-Infinigence runs); set by `hapmoe reproduce` only.
  // Upstream Megatron-LM cannot, so the search keeps a plan on one vendor without it.
  bool assume_cross_vendor_collectives = false;
  // Not a scenario field: whether the engines collect the Pareto front of time against cost
  // (with prices); the planner's second searches (hetero mode's upstream comparison, the
  // budget diagnosis) turn it off.
  bool pareto = true;
};

struct StagePlan {
  std::string gpu;  // GPU preset id of the stage's group
  int group = 0;    // index into cluster.groups
  int layers = 0;   // transformer layers on this stage (MTP layers sit on the last stage extra)
  Recompute recompute = Recompute::kNone;
  // "hetero" mode: this stage's own mesh (FlagScale process mesh); 0 = the plan's value.
  int tp = 0, cp = 0, dp = 0, ep = 0, etp = 0;
};

struct PlanSpec {
  int tp = 1, cp = 1, pp = 1, dp = 1, ep = 1, etp = 1, vpp = 1;
  int micro_batch_size = 1;
  bool sequence_parallel = false;
  bool ep_comm_overlap = false;            // --overlap-moe-expert-parallel-comm --delay-wgrad-compute
  double optimizer_offload_fraction = 0;   // --optimizer-cpu-offload --optimizer-offload-fraction
  Dispatch dispatch = Dispatch::kAlltoall;  // --moe-token-dispatcher-type (+ flex backend)
  CudaGraphs cuda_graphs;                   // --cuda-graph-impl, --cuda-graph-modules
  std::vector<StagePlan> stages;  // pipeline order
  // plan.runtime: given, or set by the planner on the plans of search.mode "auto"; unset = the
  // runtime search.mode names (planner.hpp, plan_runtime).
  std::optional<Runtime> runtime;
};

struct Scenario {
  ModelSpec model;
  ClusterSpec cluster;
  TrainingSpec training;
  SearchSpec search;
  std::optional<PlanSpec> plan;
  ProfileSpec profile;  // measured points (empty = analytical model only)
};

// Field-by-field equality (group identity for the search's symmetry rule).
bool operator==(const GpuSpec& a, const GpuSpec& b);
bool operator==(const NodeGroup& a, const NodeGroup& b);

const char* to_string(Precision p);
// "none", "full", "selective" (core_attn only) or the modules joined by "+" ("moe_act+layernorm").
std::string to_string(Recompute r);
const char* to_string(Dispatcher d);
const char* to_string(FlexBackend b);
// Megatron's --moe-token-dispatcher-type of a dispatch ("alltoall", "allgather", "flex").
const char* dispatcher_name(Dispatch d);
// Its --moe-flex-dispatcher-backend ("deepep", "hybridep"), "" when not flex.
const char* flex_backend_name(Dispatch d);
const char* to_string(GraphImpl g);
// "none", "full_iteration", "transformer_engine[attn,moe_router]" style label.
std::string to_string(const CudaGraphs& g);
const char* to_string(SearchMode m);
const char* to_string(Objective o);
// "megatron" or "flagscale" (plan.runtime).
const char* to_string(Runtime r);

}  // namespace hapmoe
