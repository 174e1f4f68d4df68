// The scenario field table itself (field_schema.hpp). Every bound says why it is where it is;
// bounds are physical (no 5e-324 TFLOPS, no 1e9 layers) yet wide enough for any hardware or
// model announced so far, with headroom of about 10x.
#include "hapmoe/field_schema.hpp"

namespace hapmoe {
namespace {

using T = FieldType;
using D = DefaultKind;

constexpr FieldDef req(const char* path, T type, const char* unit, double lo, double hi,
                       const char* help) {
  return {path, type, unit, lo, hi, D::kRequired, 0, "", "", help};
}
constexpr FieldDef val(const char* path, T type, const char* unit, double lo, double hi, double def,
                       const char* help) {
  return {path, type, unit, lo, hi, D::kValue, def, "", "", help};
}
constexpr FieldDef derived(const char* path, T type, const char* unit, double lo, double hi,
                           const char* rule, const char* help) {
  return {path, type, unit, lo, hi, D::kDerived, 0, rule, "", help};
}
constexpr FieldDef unset(const char* path, T type, const char* unit, double lo, double hi,
                         const char* meaning, const char* help) {
  return {path, type, unit, lo, hi, D::kUnset, 0, meaning, "", help};
}
constexpr FieldDef text(const char* path, D kind, const char* def, const char* help) {
  return {path, T::kString, "", 0, 0, kind, 0, def, "", help};
}
constexpr FieldDef choice(const char* path, const char* allowed, const char* def,
                          const char* help) {
  return {path, T::kEnum, "", 0, 0, D::kValue, 0, def, allowed, help};
}
constexpr FieldDef flag(const char* path, bool def, const char* help) {
  return {path, T::kBool, "", 0, 1, D::kValue, def ? 1.0 : 0.0, "", "", help};
}
constexpr FieldDef node(const char* path, T type, D kind, const char* help) {
  return {path, type, "", 0, 0, kind, 0, "", "", help};
}

// Model dimensions: 2^20 is 57x the widest published one (18432, DeepSeek-V3's dense FFN) and
// keeps every product of two dimensions below 2^40 (computed in 64 bits).
constexpr double kMaxDim = 1 << 20;
// Parallel sizes: one dimension never exceeds 1024 ranks in any published run (TP <= 8-72 in
// practice); EP may reach the number of experts.
constexpr double kMaxWays = 1024;
constexpr double kMaxExperts = 8192;  // 32x DeepSeek-V3's 256 routed experts
constexpr double kMaxLayers = 1024;   // 8x the deepest published LLM (~126 layers)
// Bandwidths in 1e9 B/s per GPU, one direction. 1e5 is ~100x NVLink 5 (900 GB/s per direction).
constexpr double kMaxGbps = 1e5;
// Scale-up domain: 1024 GPUs is ~2x the largest announced NVLink domain (NVL576).
constexpr double kMaxScaleUp = 1024;

const FieldDef kFields[] = {
    text("format", D::kValue, kScenarioFormat,
         "Version tag of the scenario format; only the default value is accepted."),

    // ---- model -------------------------------------------------------------------------
    node("model", T::kSpec, D::kRequired,
         "The model to train: a preset id such as \"mixtral-8x7b\", or an object with the fields "
         "below (start from a preset with {\"preset\": id} and override what differs)."),
    text("model.preset", D::kUnset, "no preset: every required field is given",
         "Preset id the object starts from; the other fields override the preset's values."),
    text("model.id", D::kDerived, "the preset id, else \"custom\"", "Identifier shown in results."),
    text("model.name", D::kDerived, "the id", "Display name shown in results."),
    req("model.num_layers", T::kInt, "layers", 1, kMaxLayers,
        "Number of transformer layers (Megatron --num-layers), split across the pipeline stages."),
    req("model.hidden_size", T::kInt, "dims", 1, kMaxDim,
        "Width of the residual stream (--hidden-size)."),
    req("model.num_attention_heads", T::kInt, "heads", 1, 4096,  // 32x the 128 heads of DeepSeek-V3
        "Attention heads per layer; TP must divide it."),
    derived("model.num_query_groups", T::kInt, "groups", 1, 4096, "num_attention_heads (MHA)",
            "Key/value head groups for grouped-query attention (GQA); must divide the heads."),
    unset("model.kv_channels", T::kInt, "dims", 1, 65536,  // 512x the usual 128
          "hidden_size / num_attention_heads", "Dimension of each attention head."),
    req("model.vocab_size", T::kInt, "tokens", 1, 1 << 24,  // 80x the largest (201088) vocabulary
        "Tokenizer vocabulary size; Megatron pads it to a multiple of 128 x TP."),
    flag("model.swiglu", true, "Gated (SwiGLU) MLP: three weight matrices per MLP instead of two."),
    flag("model.untie_embeddings_and_output_weights", true,
         "Separate input embedding and output projection matrices (more parameters on the "
         "first and last stage)."),
    val("model.num_experts", T::kInt, "experts", 0, kMaxExperts, 0,
        "Routed experts per MoE layer; 0 is a dense model."),
    derived(
        "model.moe_router_topk", T::kInt, "experts", 0, kMaxExperts,
        "2 when num_experts > 0, else 0",
        "Experts each token is sent to (top-k routing); from 1 to num_experts in an MoE model."),
    {"model.moe_layer_freq", T::kLayerFreq, "", 1, kMaxLayers, D::kDerived, 0,
     "1 (every layer is MoE) when num_experts > 0", "",
     "Which layers are MoE: an integer N (every N-th layer, starting with the first) or a list "
     "of 0/1 with one entry per layer."},
    derived("model.ffn_hidden_size", T::kInt, "dims", 0, kMaxDim,
            "required when some layer is dense, else 0",
            "Hidden size of the dense MLP (--ffn-hidden-size)."),
    derived("model.moe_ffn_hidden_size", T::kInt, "dims", 0, kMaxDim,
            "ffn_hidden_size when num_experts > 0, else 0",
            "Hidden size of each routed expert's MLP."),
    unset("model.moe_shared_expert_intermediate_size", T::kInt, "dims", 0, kMaxDim,
          "no shared expert",
          "Total hidden size of the shared experts every token also passes through (DeepSeek, "
          "Qwen)."),
    flag("model.multi_latent_attention", false,
         "Multi-latent attention (MLA, DeepSeek-V2/V3): keys and values through low-rank "
         "projections; needs the kv_lora_rank and head-dimension fields."),
    unset("model.q_lora_rank", T::kInt, "dims", 1, kMaxDim, "queries without low-rank projection",
          "MLA: rank of the query down-projection."),
    unset("model.kv_lora_rank", T::kInt, "dims", 1, kMaxDim, "required with MLA",
          "MLA: rank of the key/value down-projection."),
    unset("model.qk_head_dim", T::kInt, "dims", 1, kMaxDim, "required with MLA",
          "MLA: query/key head dimension without the rotary part."),
    unset("model.qk_pos_emb_head_dim", T::kInt, "dims", 1, kMaxDim, "required with MLA",
          "MLA: rotary (position) part of the query/key head dimension."),
    unset("model.v_head_dim", T::kInt, "dims", 1, kMaxDim, "required with MLA",
          "MLA: value head dimension."),
    unset("model.mtp_num_layers", T::kInt, "layers", 0, 16,  // DeepSeek-V3 uses 1
          "0: no multi-token prediction",
          "Multi-token-prediction layers, placed on the last pipeline stage in addition to its "
          "transformer layers."),
    unset("model.moe_router_num_groups", T::kInt, "groups", 1, kMaxExperts, "ungrouped routing",
          "Group-limited routing: experts are split into this many groups (must divide "
          "num_experts)."),
    unset("model.moe_router_group_topk", T::kInt, "groups", 1, kMaxExperts, "ungrouped routing",
          "Group-limited routing: groups each token may use; given together with "
          "moe_router_num_groups."),
    unset("model.window_size", T::kInt, "tokens", 1, 1 << 24,  // the seq_length limit
          "full attention on every layer",
          "Sliding-window attention: tokens each query attends to."),
    unset("model.window_attn_skip_freq", T::kInt, "layers", 1, kMaxLayers,
          "every layer uses the window",
          "With window_size: every N-th layer uses full attention instead of the window."),
    choice("model.normalization", "RMSNorm|LayerNorm", "RMSNorm",
           "Layer normalization (Megatron --normalization)."),
    // 1e-12 to 1e-2 spans every epsilon in use (1e-6 Qwen/DeepSeek, 1e-5 Llama/Mixtral).
    val("model.norm_epsilon", T::kNumber, "", 1e-12, 1e-2, 1e-5,
        "Epsilon of the normalization layers (--norm-epsilon; HF rms_norm_eps)."),
    choice("model.position_embedding_type", "rope|learned_absolute|none", "rope",
           "Position embedding (--position-embedding-type)."),
    // HF rope_theta; 1e9 is 100x the largest in use (10^7).
    val("model.rotary_base", T::kInt, "", 1, 1e9, 10000,
        "Rotary embedding base (--rotary-base; HF rope_theta)."),
    val("model.rotary_percent", T::kNumber, "fraction", 0.01, 1, 1,
        "Fraction of each head's dimensions that get rotary embedding (--rotary-percent; HF "
        "partial_rotary_factor, GLM-4.5: 0.5)."),
    flag("model.qk_layernorm", false,
         "Normalize queries and keys (--qk-layernorm; Qwen3, OLMoE; with MLA the latent norms of "
         "DeepSeek-V2/V3)."),
    flag("model.add_bias_linear", false,
         "Biases on every linear layer (GPT-OSS); Megatron then needs expert tensor parallelism 1."),
    flag("model.add_qkv_bias", false, "Bias on the query/key/value projection only (Qwen2, GLM-4.5)."),
    flag("model.quick_geglu", false,
         "Gated MLP with quick-GELU (x * sigmoid(1.702 x)) instead of SiLU (GPT-OSS); needs swiglu "
         "(the gated shape)."),
    // GPT-OSS adds 1 to the linear half of the gate; 10 is far beyond any published value.
    val("model.glu_linear_offset", T::kNumber, "", -10, 10, 0,
        "Offset added to the linear half of the gated MLP (--glu-linear-offset; GPT-OSS: 1)."),
    unset("model.activation_func_clamp_value", T::kNumber, "", 0.001, 1e6, "no clamp",
          "Clamp of the gated MLP's first projection (--activation-func-clamp-value; GPT-OSS "
          "swiglu_limit 7)."),
    choice("model.softmax_type", "vanilla|off-by-one|learnable", "vanilla",
           "Attention softmax (--softmax-type); learnable = GPT-OSS attention sinks."),
    choice("model.moe_router_score_function", "softmax|sigmoid", "softmax",
           "Router score function (--moe-router-score-function; DeepSeek-V3: sigmoid)."),
    flag("model.moe_router_pre_softmax", false,
         "Softmax over all experts before top-k, weights not renormalized (HF norm_topk_prob "
         "false); always on for top-1 softmax routing, as Megatron requires."),
    flag("model.moe_router_enable_expert_bias", false,
         "Aux-loss-free load balancing with a per-expert bias (DeepSeek-V3; needs the sigmoid "
         "score function)."),
    unset("model.moe_router_topk_scaling_factor", T::kNumber, "x", 0.001, 1000, "no scaling",
          "Scale of the routed experts' weights (--moe-router-topk-scaling-factor; HF "
          "routed_scaling_factor, DeepSeek-V3: 2.5)."),
    choice("model.moe_router_load_balancing_type", "aux_loss|seq_aux_loss|global_aux_loss|sinkhorn|none",
           "aux_loss", "Load-balancing loss (--moe-router-load-balancing-type; DeepSeek-V3: seq_aux_loss)."),
    val("model.moe_aux_loss_coeff", T::kNumber, "", 0, 10, 0,
        "Weight of the load-balancing loss (--moe-aux-loss-coeff; HF router_aux_loss_coef)."),
    flag("model.moe_shared_expert_gate", false,
         "Sigmoid gate on the shared expert's output (--moe-shared-expert-gate; Qwen2-MoE)."),
    val("model.mtp_loss_scaling_factor", T::kNumber, "", 0, 100, 0.1,
        "Weight of the multi-token-prediction loss (--mtp-loss-scaling-factor)."),
    text("model.tokenizer_model", D::kValue, "",
         "Hugging Face tokenizer id or path for real data (--tokenizer-model); the launch uses "
         "mock data and a null tokenizer until you switch."),
    text("model.source", D::kValue, "", "Where the model's numbers come from (free text)."),

    // ---- cluster -----------------------------------------------------------------------
    node("cluster", T::kSpec, D::kRequired,
         "The GPUs: a preset id such as \"16-1\", or an object with node groups."),
    text("cluster.preset", D::kUnset, "no preset: groups is given",
         "Preset id the object starts from; the other fields override the preset's values."),
    text("cluster.id", D::kDerived, "the preset id, else \"custom\"",
         "Identifier shown in results."),
    text("cluster.name", D::kDerived, "the id", "Display name shown in results."),
    {"cluster.groups", T::kObjectList, "groups", 1, kMaxGroups, D::kRequired, 0, "", "",
     "Groups of identical nodes (one GPU type, one node size); 1 to 64 groups, at most 1048576 "
     "GPUs in total."},
    node("cluster.groups[].gpu", T::kSpec, D::kRequired,
         "The group's GPU: a preset id such as \"h100-sxm\", or an object with the GPU fields "
         "below."),
    req("cluster.groups[].nodes", T::kInt, "nodes", 1, kMaxGpus,  // the GPU total is checked too
        "Number of nodes in the group."),
    derived("cluster.groups[].gpus_per_node", T::kInt, "GPUs", 1, kMaxScaleUp,
            "the GPU's gpus_per_node", "GPUs per node: the scale-up (NVLink) domain size."),
    derived("cluster.groups[].gpus_per_host", T::kInt, "GPUs", 1, kMaxScaleUp,
            "gpus_per_node when <= 8, else 4 (NVL racks; gpus_per_node when 4 does not divide it)",
            "GPUs per operating-system host: what torchrun --nproc-per-node and a hostfile count "
            "(GB200 NVL72: 4 per host, 72 per NVLink domain); must divide gpus_per_node."),
    derived("cluster.groups[].inter_node_gbps", T::kNumber, "GB/s", 0.1, kMaxGbps,
            "the GPU's inter_node_gbps",
            "Scale-out bandwidth per GPU, one direction, inside this group (1e9 bytes/s)."),
    // 1000 USD per GPU-hour is ~100x the list price of a B200 on demand in 2025.
    unset("cluster.groups[].price_per_gpu_hour", T::kNumber, "USD/GPU-hour", 0, 1000, "no price",
          "Price of one of this group's GPUs for an hour (0 for GPUs already paid for); with a "
          "price on every group, plans show their cost and search.objective can minimise it."),
    choice("cluster.groups[].billed", "used|all", "used",
           "used: only the GPUs a plan uses are billed (on demand); all: the whole group is billed "
           "whether a plan uses it or not (owned or reserved nodes)."),
    unset("cluster.inter_group_gbps", T::kNumber, "GB/s", 0.1, kMaxGbps,
          "the smaller of the two groups' inter_node_gbps",
          "Per-GPU bandwidth, one direction, between different groups (1e9 bytes/s)."),
    text("cluster.source", D::kValue, "", "Where the cluster's numbers come from (free text)."),

    // ---- GPU (inside each group) -------------------------------------------------------
    text("cluster.groups[].gpu.preset", D::kUnset, "no preset: every required field is given",
         "GPU preset id the object starts from; the other fields override the preset's values."),
    text("cluster.groups[].gpu.id", D::kDerived, "the preset id, else \"custom\"",
         "Identifier shown in results and stage plans."),
    text("cluster.groups[].gpu.name", D::kDerived, "the id", "Display name."),
    text("cluster.groups[].gpu.vendor", D::kValue, "nvidia",
         "Vendor (nvidia, amd, huawei, ...); informational."),
    // 1 GiB is below any training accelerator; 4096 GiB is ~14x the 288 GiB of the largest.
    req("cluster.groups[].gpu.memory_gib", T::kNumber, "GiB", 1, 4096,
        "Device memory usable by the framework, in GiB (2^30 bytes)."),
    // 1 TFLOPS is far below any accelerator used for LLM training; 1e5 is 40x GB200's 2500.
    req("cluster.groups[].gpu.bf16_tflops", T::kNumber, "TFLOPS", 1, 1e5,
        "Dense BF16 tensor-core peak (no sparsity), 1e12 FLOP/s."),
    unset("cluster.groups[].gpu.fp8_tflops", T::kNumber, "TFLOPS", 1, 2e5, "no FP8 support",
          "Dense FP8 tensor-core peak; absent or null means the GPU has no FP8 and runs BF16."),
    // 10 GB/s is below any HBM or GDDR device; 1e5 is 12x B200's 8000 GB/s.
    req("cluster.groups[].gpu.hbm_gbps", T::kNumber, "GB/s", 10, 1e5,
        "Memory bandwidth, 1e9 bytes/s."),
    // 1 GB/s is below PCIe 3 x1; anything slower cannot be a scale-up link.
    req("cluster.groups[].gpu.intra_node_gbps", T::kNumber, "GB/s", 1, kMaxGbps,
        "Scale-up (NVLink, Infinity Fabric, HCCS or PCIe) bandwidth per GPU, one direction."),
    // 0.1 GB/s is 1 Gb/s Ethernet, the slowest network anyone would plan training on.
    req("cluster.groups[].gpu.inter_node_gbps", T::kNumber, "GB/s", 0.1, kMaxGbps,
        "Scale-out (InfiniBand, RoCE) bandwidth per GPU, one direction."),
    val("cluster.groups[].gpu.gpus_per_node", T::kInt, "GPUs", 1, kMaxScaleUp, 8,
        "GPUs per node in this GPU's usual system (GB200 NVL72: 72)."),
    val("cluster.groups[].gpu.reserved_memory_gib", T::kNumber, "GiB", 0, 4096, 5,
        "Memory not available to the model: CUDA/ROCm context, communication buffers and "
        "allocator fragmentation; must be below memory_gib."),
    // PCIe Gen4 x16 ~25, Gen5 ~50, Grace C2C ~450 GB/s; 1e4 leaves 20x headroom.
    val("cluster.groups[].gpu.host_link_gbps", T::kNumber, "GB/s", 0.1, 1e4, 25,
        "GPU to host memory bandwidth, one direction (PCIe Gen4 x16 ~25, Gen5 ~50, Grace C2C "
        "~450); used for optimizer offload."),
    {"cluster.groups[].gpu.fp8_recipes", T::kEnumList, "", 0, 0, D::kValue, 0, "", "tensorwise|blockwise|mxfp8",
     "Megatron --fp8-recipe values this GPU runs, best first; empty = no FP8 training."},
    // Compute capability 0-100 covers every CUDA generation to date (Blackwell 10.x/12.x).
    val("cluster.groups[].gpu.cuda_arch", T::kNumber, "", 0, 100, 0,
        "CUDA compute capability (9.0 Hopper, 10.0 Blackwell); 0 = not a CUDA GPU."),
    text("cluster.groups[].gpu.generation", D::kValue, "",
         "GPU generation whose efficiency constants this GPU uses (e.g. hopper, blackwell)."),
    // Efficiencies are achieved / peak: above 1 is impossible, below 1% the model is meaningless.
    val("cluster.groups[].gpu.gemm_efficiency", T::kNumber, "fraction", 0.01, 1, 0.62,
        "Fraction of bf16_tflops a large BF16 matrix multiply reaches."),
    // FP8 can at most double the BF16 rate per tensor core generation; 4 leaves room.
    val("cluster.groups[].gpu.fp8_gemm_speedup", T::kNumber, "x", 0.25, 4, 1.35,
        "Achieved FP8 GEMM rate over the achieved BF16 rate (matrix multiplies only)."),
    val("cluster.groups[].gpu.sink_attention_efficiency", T::kNumber, "fraction", 0.001, 1, 0.045,
        "Fraction of bf16_tflops that BF16 attention with sinks (softmax_type learnable or "
        "off-by-one) reaches: Transformer Engine runs it on cuDNN's sink path, not FlashAttention."),
    val("cluster.groups[].gpu.attention_efficiency", T::kNumber, "fraction", 0.01, 1, 0.55,
        "Fraction of bf16_tflops that flash attention's forward pass reaches."),
    // 1e6 tokens per expert is beyond any micro-batch; 0 turns the small-GEMM penalty off.
    val("cluster.groups[].gpu.grouped_gemm_half_tokens", T::kNumber, "tokens", 0, 1e6, 96,
        "Tokens per local expert at which the grouped expert GEMM reaches half its large-GEMM "
        "rate; models the slowdown of small expert batches."),
    // 0.1 s of host time per expert per layer would be a broken launch path; 1e5 us keeps any
    // measured value.
    // 0.1 s of host time per launched operation would be a broken launch path; 1e5 us keeps any
    // measured value.
    val("cluster.groups[].gpu.host_launch_us", T::kNumber, "us", 0, 1e5, 40,
        "Host (CPU) time per operation launched in eager mode (one PyTorch / Transformer Engine "
        "module step and its kernels); hidden while the GPU is busier, except after the MoE "
        "dispatcher's host synchronisation; removed by CUDA graphs."),
    // Backward launches two GEMMs per forward GEMM through one autograd call: 1..2; 4 keeps any
    // measured value.
    val("cluster.groups[].gpu.host_backward_factor", T::kNumber, "x", 0.5, 4, 1.75,
        "Host time of a layer's backward pass over its forward pass (dgrad and wgrad launches "
        "through one autograd call per module)."),
    val("cluster.groups[].gpu.hbm_efficiency", T::kNumber, "fraction", 0.01, 1, 0.75,
        "Fraction of hbm_gbps that element-wise kernels reach."),
    val("cluster.groups[].gpu.intra_node_efficiency", T::kNumber, "fraction", 0.01, 1, 0.75,
        "Fraction of intra_node_gbps that collectives reach on the scale-up link."),
    val("cluster.groups[].gpu.inter_node_efficiency", T::kNumber, "fraction", 0.01, 1, 0.8,
        "Fraction of inter_node_gbps that collectives reach on the scale-out link."),
    val("cluster.groups[].gpu.alltoall_intra_node_efficiency", T::kNumber, "fraction", 0.01, 1, 0.75,
        "Fraction of intra_node_gbps the expert all-to-all reaches inside a node."),
    val("cluster.groups[].gpu.alltoall_inter_node_efficiency", T::kNumber, "fraction", 0.01, 1, 0.65,
        "Fraction of inter_node_gbps the expert all-to-all reaches across nodes."),
    {"cluster.groups[].gpu.assumed", T::kEnumList, "", 0, 0, D::kValue, 0, "",
     "memory_gib|bf16_tflops|fp8_tflops|hbm_gbps|intra_node_gbps|inter_node_gbps|host_link_gbps|"
     "reserved_memory_gib|fp8_recipes|gemm_efficiency|fp8_gemm_speedup|attention_efficiency|sink_attention_efficiency|"
     "grouped_gemm_half_tokens|host_launch_us|host_backward_factor|hbm_efficiency|intra_node_efficiency|"
     "inter_node_efficiency|alltoall_intra_node_efficiency|alltoall_inter_node_efficiency",
     "Fields whose value is an assumption rather than a published or fitted number."},
    text("cluster.groups[].gpu.efficiency_source", D::kValue, "",
         "Where the efficiency constants come from (the runs they were fitted on, or why assumed)."),
    // A band of 0.1% is tighter than any published run repeats; 10 (1000%) means "unknown".
    val("cluster.groups[].gpu.error_fraction", T::kNumber, "fraction", 0.001, 10, 0.4,
        "Relative error band of predicted step times on this GPU: its generation's leave-one-out "
        "error on published runs, or 40% for an uncalibrated GPU."),
    text("cluster.groups[].gpu.error_basis", D::kValue, "",
         "Where error_fraction comes from (shown with every plan's time range)."),
    text("cluster.groups[].gpu.source", D::kValue, "", "Where the GPU's numbers come from."),

    // ---- training ----------------------------------------------------------------------
    node("training", T::kObject, D::kRequired, "How the model is trained."),
    req("training.global_batch_size", T::kInt, "sequences", 1, 1e8,  // 1e8 x 4k = 4e11 tokens/step
        "Sequences per optimizer step, summed over all data-parallel ranks."),
    req("training.seq_length", T::kInt, "tokens", 1, 1 << 24,  // 16M-token context
        "Tokens per sequence."),
    choice("training.precision", "bf16|fp8", "bf16",
           "Number format of the matrix multiplies; fp8 uses fp8_tflops and the GPU's fp8_recipe."),
    flag("training.use_distributed_optimizer", true,
         "Shard optimizer state across data-parallel ranks (ZeRO-1), saving memory."),
    choice("training.moe_token_dispatcher_type", "alltoall|allgather|flex|auto", "alltoall",
           "How tokens reach their experts across EP ranks (Megatron "
           "--moe-token-dispatcher-type); auto: searched over alltoall and the flex backends the "
           "GPUs support."),
    choice("training.moe_flex_dispatcher_backend", "auto|deepep|hybridep", "auto",
           "Backend of the flex dispatcher (--moe-flex-dispatcher-backend): DeepEP (Ampere, Hopper, "
           "B200/B300) or HybridEP (also GB200/GB300 NVL72); auto: searched over those the GPUs "
           "support."),
    // Capacity factors: 0.01 keeps a token per 100 experts' share; 64 pads beyond any routing skew.
    unset("training.moe_expert_capacity_factor", T::kNumber, "x", 0.01, 64, "dropless (no capacity)",
          "Token dropping: each expert takes at most this many times its balanced share of tokens "
          "(--moe-expert-capacity-factor); changes the training numerics."),
    flag("training.moe_pad_expert_input_to_capacity", false,
         "Pad every expert's input to its capacity (--moe-pad-expert-input-to-capacity; needs "
         "moe_expert_capacity_factor): static shapes, no host synchronisation in the dispatcher, "
         "CUDA graphs of the whole MoE block."),
    unset("training.moe_expert_rank_capacity_factor", T::kNumber, "x", 0.01, 64, "none (dynamic)",
          "HybridEP's static per-EP-rank token budget, in multiples of the balanced share "
          "(--moe-expert-rank-capacity-factor); tokens above it are dropped. Makes dropless MoE "
          "capturable by full-iteration CUDA graphs."),
    flag("training.moe_paged_stash", false,
         "Stash routed-expert activations in pages holding only the real tokens "
         "(--moe-paged-stash; needs moe_expert_rank_capacity_factor)."),
    flag("training.fp8_dot_product_attention", false,
         "Run the attention core in FP8 (--fp8-dot-product-attention; needs precision fp8)."),
    // max/mean = 1 is perfect balance; 1000 exceeds any ratio a router with >=1 token per
    // expert can produce at today's expert counts.
    val("training.moe_load_imbalance", T::kNumber, "max/mean", 1, 1000, 1,
        "MoE load imbalance: tokens on the busiest expert divided by the average; the slowest "
        "expert sets the pace. 1 = perfectly balanced routing."),
    flag("training.overlap_grad_reduce", true,
         "Overlap the data-parallel gradient reduction with the backward pass."),
    flag("training.overlap_param_gather", true,
         "Overlap the parameter all-gather with the forward pass (needs the distributed "
         "optimizer and overlap_grad_reduce)."),
    node("training.optimizer", T::kObject, D::kUnset,
         "Megatron's precision-aware optimizer settings (--use-precision-aware-optimizer)."),
    flag("training.optimizer.precision_aware", false,
         "Use Megatron's precision-aware optimizer; needed for any non-fp32 dtype below."),
    choice("training.optimizer.main_grads_dtype", "fp32|bf16", "fp32", "Dtype of the main gradients."),
    choice("training.optimizer.main_params_dtype", "fp32|fp16", "fp32", "Dtype of the master weights."),
    choice("training.optimizer.exp_avg_dtype", "fp32|bf16|fp8", "fp32", "Dtype of Adam's first moment."),
    choice("training.optimizer.exp_avg_sq_dtype", "fp32|bf16|fp8", "fp32", "Dtype of Adam's second moment."),
    {"training.fp8_recipe", T::kEnum, "", 0, 0, D::kUnset, 0,
     "the best recipe every stage's GPU supports", "tensorwise|blockwise|mxfp8",
     "Megatron --fp8-recipe when precision is fp8."},
    flag("training.fp8_param_gather", false,
         "Keep FP8 weight copies and all-gather them in FP8 (--fp8-param-gather); needs the "
         "distributed optimizer."),
    {"training.cuda_graph_impl", T::kEnum, "", 0, 0, D::kUnset, 0,
     "searched: none, Transformer Engine graphs of the static layer parts, and full-iteration "
     "graphs where the MoE shapes are static",
     "none|transformer_engine|local|full_iteration",
     "CUDA graphs (--cuda-graph-impl): replay captured kernels instead of launching them from the "
     "host; cost graph memory."},
    {"training.cuda_graph_modules", T::kEnumList, "", 0, 0, D::kUnset, 0,
     "with transformer_engine or local: the static parts (attn, moe_router, moe_preprocess; a "
     "dense model's whole layer)",
     "attn|mlp|moe|moe_router|moe_preprocess",
     "Layer parts captured by per-layer CUDA graphs (--cuda-graph-modules); an empty list is the "
     "whole layer."},
    flag("training.cuda_graphs", false,
         "Deprecated: true is cuda_graph_impl \"full_iteration\"."),
    // 1e15 tokens is ~70x DeepSeek-V3's 14.8T pre-training run.
    unset("training.train_tokens", T::kNumber, "tokens", 1, 1e15, "no run totals",
          "Tokens of the whole training run: each plan then shows the run's hours and, with prices, "
          "its cost."),
    // 1e5 GB/s is ~10x the aggregate write bandwidth of the largest published AI storage systems.
    unset("training.checkpoint_write_gbps", T::kNumber, "GB/s", 0.01, 1e5, "no checkpoint figures",
          "Aggregate bandwidth at which the job writes a checkpoint to storage (1e9 bytes/s, all "
          "ranks together): with it each plan shows its checkpoint size and write time, the "
          "checkpoint interval that loses least to failures (Daly's optimum) and the expected goodput."),
    // Llama 3 (Dubey et al. 2024, section 3.3.4): 419 unexpected interruptions in 54 days on
    // 16,384 H100 GPUs (2,048 nodes of 8): 419 / (54 x 2048) x 365 = 1.38 per node-year.
    val("training.node_failures_per_year", T::kNumber, "failures/node-year", 0.001, 1000, 1.4,
        "Job-stopping failures per node per year (default: 1.4, from Llama 3's 419 unexpected "
        "interruptions in 54 days on 2,048 H100 nodes; Dubey et al. 2024, section 3.3.4)."),
    // A day: longer than any restart, shorter than a job.
    val("training.restart_s", T::kNumber, "s", 0, 86400, 600,
        "Seconds from a failure to training again, without the work lost: rescheduling, start-up "
        "and reading the checkpoint (default 600 s: an assumption; measure yours)."),
    flag("training.grad_reduce_in_bf16", false,
         "Reduce gradients across data-parallel ranks in BF16 instead of FP32."),

    // ---- search ------------------------------------------------------------------------
    node("search", T::kObject, D::kUnset,
         "Limits on what the planner tries; every field left out is searched over its full "
         "range."),
    unset("search.tp", T::kIntChoices, "ways", 1, kMaxWays, "searched",
          "Tensor parallelism (TP): each layer's matrices split across this many GPUs of a node."),
    unset("search.cp", T::kIntChoices, "ways", 1, kMaxWays, "searched",
          "Context parallelism (CP): each sequence split across this many GPUs (long contexts)."),
    unset("search.pp", T::kIntChoices, "stages", 1, kMaxWays, "searched",
          "Pipeline parallelism (PP): the layers split into this many consecutive stages."),
    unset("search.ep", T::kIntChoices, "ways", 1, kMaxExperts, "searched",
          "Expert parallelism (EP): the experts of each MoE layer spread across this many GPUs."),
    unset("search.etp", T::kIntChoices, "ways", 1, kMaxWays, "searched",
          "Expert tensor parallelism (ETP): each expert's matrices split across this many GPUs."),
    unset("search.vpp", T::kIntChoices, "chunks", 1, 64, "searched",  // 64 chunks per stage
          "Virtual pipeline (VPP): chunks per stage, interleaved to shrink the pipeline bubble."),
    // 4096 sequences per micro-batch exceeds any GPU's memory for a transformer layer.
    unset("search.micro_batch_size", T::kIntChoices, "sequences", 1, 4096, "searched",
          "Sequences per micro-batch: the unit that flows through the pipeline."),
    {"search.recompute", T::kRecomputeChoices, "", 0, 0, D::kUnset, 0,
     "MoE models: none, [moe_act, layernorm], with MLA [core_attn, moe_act, layernorm, "
     "mla_up_proj] else [layernorm, moe], full; dense models: none, selective, [core_attn, "
     "mlp], full",
     "none|selective|full",
     "Activation recomputation: re-run parts of the forward pass in the backward pass to save "
     "memory (selective: Megatron's default module, the attention core; {\"modules\": [...]}: "
     "those --recompute-modules; full: whole layers)."},
    {"search.recompute[].modules", T::kEnumList, "", 0, 0, D::kRequired, 0, "", "core_attn|moe_act|layernorm|mla_up_proj|mlp|moe|shared_experts",
     "Megatron --recompute-modules to re-run in the backward pass (at least one)."},
    {"search.ep_comm_overlap", T::kBoolChoices, "", 0, 1, D::kUnset, 0,
     "on wherever Megatron allows it (ep > 1, alltoall or flex dispatcher, no full or moe "
     "recompute, mtp_num_layers <= 1, vpp > 1 when pp > 1), else off", "",
     "Overlap the expert-parallel all-to-all of one micro-batch with another's computation "
     "(--overlap-moe-expert-parallel-comm --delay-wgrad-compute)."},
    {"search.optimizer_offload_fraction", T::kNumberChoices, "fraction", 0, 1, D::kUnset, 0,
     "0; when no plan fits, searched again with 0.5 and 1 (needs use_distributed_optimizer, "
     "no fp8_param_gather)", "",
     "Share of the optimizer state (fp32 master weights and Adam moments) kept in host memory "
     "and updated by the CPU (--optimizer-cpu-offload)."},
    choice("search.objective", "time|cost|time_within_budget", "time",
           "time: the fastest plans; cost: the least USD per million training tokens; "
           "time_within_budget: the fastest plans billing at most search.budget_per_hour (both need "
           "cluster.groups[].price_per_gpu_hour)."),
    // 1e8 USD/hour bills a million GPUs at 100 USD each.
    unset("search.budget_per_hour", T::kNumber, "USD/hour", 0.01, 1e8, "none",
          "With objective time_within_budget: the most the GPUs a plan bills may cost per hour."),
    choice("search.mode", "megatron|hetero|auto", "megatron",
           "megatron: one parallel layout for all stages (upstream Megatron-LM); hetero: a layout "
           "per GPU type (FlagScale's heterogeneous Megatron); auto: the plans of both ranked "
           "together, each with its plan.runtime."),
    // More than 100 plans is no longer a shortlist.
    val("search.top_k", T::kInt, "plans", 1, 100, 5, "Number of best plans returned."),
    // Up to half the memory: a larger margin would rule out plans that measured runs fit.
    val("search.memory_margin_fraction", T::kNumber, "fraction", 0, 0.5, 0.05,
        "Share of each GPU's memory a plan should leave free; plans whose peak is above "
        "(1 - margin) of a stage's memory are flagged and ranked after the plans within it, and "
        "the fastest plans within it are searched for in the same pass as the fastest plans."),
    {"search.layer_split", T::kLayerSplit, "layers", 1, kMaxLayers, D::kUnset, 0,
     "\"auto\": searched", "",
     "Layers per pipeline stage, first to last; \"auto\" lets the planner choose a "
     "non-uniform split."},
    flag("search.baselines", true,
         "Also cost the even layer split and Megatron's default layout, for comparison."),

    // ---- plan (for evaluate) -----------------------------------------------------------
    node("plan", T::kObject, D::kUnset,
         "A parallel plan to cost with `hapmoe evaluate` instead of searching."),
    val("plan.tp", T::kInt, "ways", 1, kMaxWays, 1, "Tensor parallelism (see search.tp)."),
    val("plan.cp", T::kInt, "ways", 1, kMaxWays, 1, "Context parallelism (see search.cp)."),
    val("plan.pp", T::kInt, "stages", 1, kMaxWays, 1,
        "Pipeline stages; plan.stages has this many."),
    req("plan.dp", T::kInt, "ways", 1, kMaxGpus,
        "Data parallelism: model replicas; tp x cp x pp x dp must equal the GPU count."),
    val("plan.ep", T::kInt, "ways", 1, kMaxExperts, 1, "Expert parallelism (see search.ep)."),
    val("plan.etp", T::kInt, "ways", 1, kMaxWays, 1, "Expert tensor parallelism (see search.etp)."),
    val("plan.vpp", T::kInt, "chunks", 1, 64, 1, "Virtual pipeline chunks per stage."),
    val("plan.micro_batch_size", T::kInt, "sequences", 1, 4096, 1, "Sequences per micro-batch."),
    derived("plan.sequence_parallel", T::kBool, "", 0, 1, "true when tp > 1",
            "Megatron sequence parallelism: shard layer-norm and dropout activations across TP."),
    flag("plan.ep_comm_overlap", false,
         "Overlap expert-parallel all-to-all with another micro-batch's computation (see "
         "search.ep_comm_overlap)."),
    {"plan.moe_token_dispatcher_type", T::kEnum, "", 0, 0, D::kDerived, 0,
     "training.moe_token_dispatcher_type (alltoall when auto)", "alltoall|allgather|flex",
     "The plan's token dispatcher (--moe-token-dispatcher-type)."},
    {"plan.moe_flex_dispatcher_backend", T::kEnum, "", 0, 0, D::kDerived, 0,
     "training.moe_flex_dispatcher_backend, else deepep where the GPUs run it, else hybridep",
     "deepep|hybridep", "The flex dispatcher's backend (with moe_token_dispatcher_type flex)."},
    {"plan.cuda_graph_impl", T::kEnum, "", 0, 0, D::kDerived, 0, "training.cuda_graph_impl, else none",
     "none|transformer_engine|local|full_iteration", "The plan's CUDA graphs (--cuda-graph-impl)."},
    {"plan.cuda_graph_modules", T::kEnumList, "", 0, 0, D::kDerived, 0,
     "training.cuda_graph_modules, else none (the whole layer)", "attn|mlp|moe|moe_router|moe_preprocess",
     "Layer parts captured by per-layer graphs (--cuda-graph-modules)."},
    val("plan.optimizer_offload_fraction", T::kNumber, "fraction", 0, 1, 0,
        "Share of the optimizer state on the host (see search.optimizer_offload_fraction)."),
    {"plan.runtime", T::kEnum, "", 0, 0, D::kDerived, 0,
     "flagscale when a stage has its own mesh or search.mode is hetero, else megatron",
     "megatron|flagscale",
     "The runtime that runs the plan: upstream Megatron-LM or FlagScale's heterogeneous Megatron "
     "(what search.mode auto labels each plan with)."},
    {"plan.stages", T::kObjectList, "stages", 1, kMaxWays, D::kRequired, 0, "", "",
     "One entry per pipeline stage, first to last."},
    val("plan.stages[].group", T::kInt, "", 0, kMaxGroups - 1, 0,
        "Index of the cluster group whose GPUs run this stage."),
    derived("plan.stages[].gpu", T::kString, "", 0, 0, "the group's GPU id",
            "GPU id of the stage; must match its group's GPU."),
    req("plan.stages[].layers", T::kInt, "layers", 0, kMaxLayers,
        "Transformer layers on this stage."),
    {"plan.stages[].recompute", T::kRecompute, "", 0, 0, D::kValue, 0, "none", "none|selective|full",
     "Activation recomputation on this stage (see search.recompute)."},
    {"plan.stages[].recompute.modules", T::kEnumList, "", 0, 0, D::kRequired, 0, "", "core_attn|moe_act|layernorm|mla_up_proj|mlp|moe|shared_experts",
     "Megatron --recompute-modules re-run on this stage (at least one)."},
    unset("plan.stages[].tp", T::kInt, "ways", 1, kMaxWays, "plan.tp",
          "Hetero mode: this stage's tensor parallelism (its FlagScale process mesh)."),
    unset("plan.stages[].cp", T::kInt, "ways", 1, kMaxWays, "plan.cp",
          "Hetero mode: this stage's context parallelism (FlagScale needs 1)."),
    unset("plan.stages[].dp", T::kInt, "ways", 1, kMaxGpus, "plan.dp",
          "Hetero mode: this stage's data parallelism; its micro-batch is plan.dp of stage 0 x "
          "micro_batch_size / dp."),
    unset("plan.stages[].ep", T::kInt, "ways", 1, kMaxExperts, "plan.ep",
          "Hetero mode: this stage's expert parallelism."),
    unset("plan.stages[].etp", T::kInt, "ways", 1, kMaxWays, "plan.etp",
          "Hetero mode: this stage's expert tensor parallelism."),
};

}  // namespace

const FieldDef* field_table() { return kFields; }
size_t field_count() { return sizeof(kFields) / sizeof(kFields[0]); }

}  // namespace hapmoe
