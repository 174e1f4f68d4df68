#include "hapmoe/scenario_io.hpp"

#include <algorithm>

#include "io/profile_io.hpp"
#include "evaluate/stack_rules.hpp"
#include "spec/profile_check.hpp"
#include "io/json_read.hpp"
#include "io/recompute_io.hpp"

namespace hapmoe {

using detail::fail;
using detail::index_path;
using detail::InputFailure;
using detail::ObjectReader;
using nlohmann::json;

namespace {


// A preset id string, or an object optionally starting from {"preset": id}, merged into one
// object. `kind` names the preset family in messages.
json resolve_preset(const json& v, const std::string& path, const PresetSection& section,
                    const char* kind) {
  auto lookup = [&](const std::string& id, const std::string& at) -> json {
    const json* preset = section.find(id);
    if (!preset) {
      std::string ids;
      for (const std::string& known : section.ids()) ids += (ids.empty() ? "" : ", ") + known;
      fail("unknown_preset", at, std::string("unknown ") + kind + " preset \"" + id +
                                     "\"; known: " + ids);
    }
    json merged = *preset;
    merged["id"] = id;
    return merged;
  };
  if (v.is_string()) return lookup(v.get<std::string>(), path);
  if (!v.is_object()) {
    fail("wrong_type", path, std::string("expected a ") + kind +
                                 " preset id (string) or an object, got " +
                                 detail::json_type_name(v));
  }
  if (!v.contains("preset")) {
    json copy = v;
    if (!copy.contains("id")) copy["id"] = "custom";
    return copy;
  }
  const json& p = v.at("preset");
  if (!p.is_string()) fail("wrong_type", detail::join_path(path, "preset"), "expected a preset id string");
  json merged = lookup(p.get<std::string>(), detail::join_path(path, "preset"));
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key() != "preset") merged[it.key()] = it.value();
  }
  merged["id"] = p.get<std::string>();
  return merged;
}

constexpr const char* kGpuPattern = "cluster.groups[].gpu";

GpuSpec read_gpu(const json& v, const std::string& path, const PresetCatalog& presets) {
  const json obj = resolve_preset(v, path, presets.gpus, "GPU");
  ObjectReader r(obj, path, kGpuPattern);
  GpuSpec g;
  g.id = r.get_string("id", "custom");
  g.name = r.get_string("name", g.id);
  g.vendor = r.get_string("vendor");
  g.memory_gib = r.get_number("memory_gib");
  g.bf16_tflops = r.get_number("bf16_tflops");
  g.fp8_tflops = r.get_optional_number("fp8_tflops");
  g.hbm_gbps = r.get_number("hbm_gbps");
  g.intra_node_gbps = r.get_number("intra_node_gbps");
  g.inter_node_gbps = r.get_number("inter_node_gbps");
  g.gpus_per_node = static_cast<int>(r.get_int("gpus_per_node"));
  g.reserved_memory_gib = r.get_number("reserved_memory_gib");
  g.host_link_gbps = r.get_number("host_link_gbps");
  g.fp8_recipes = r.get_enum_list("fp8_recipes");
  g.cuda_arch = r.get_number("cuda_arch");
  g.generation = r.get_string("generation");
  g.gemm_efficiency = r.get_number("gemm_efficiency");
  g.fp8_gemm_speedup = r.get_number("fp8_gemm_speedup");
  g.attention_efficiency = r.get_number("attention_efficiency");
  g.sink_attention_efficiency = r.get_number("sink_attention_efficiency");
  g.grouped_gemm_half_tokens = r.get_number("grouped_gemm_half_tokens");
  g.host_launch_us = r.get_number("host_launch_us");
  g.host_backward_factor = r.get_number("host_backward_factor");
  g.hbm_efficiency = r.get_number("hbm_efficiency");
  g.intra_node_efficiency = r.get_number("intra_node_efficiency");
  g.inter_node_efficiency = r.get_number("inter_node_efficiency");
  g.alltoall_intra_node_efficiency = r.get_number("alltoall_intra_node_efficiency");
  g.alltoall_inter_node_efficiency = r.get_number("alltoall_inter_node_efficiency");
  g.assumed = r.get_enum_list("assumed");
  g.efficiency_source = r.get_string("efficiency_source");
  g.error_fraction = r.get_number("error_fraction");
  g.error_basis = r.get_string("error_basis");
  g.source = r.get_string("source");
  r.finish();
  if (g.reserved_memory_gib >= g.memory_gib) {
    fail("bad_value", detail::join_path(path, "reserved_memory_gib"),
         "expected reserved_memory_gib below memory_gib");
  }
  return g;
}

// moe_layer_freq expanded to one 0/1 per layer; its list form must have num_layers entries.
std::vector<int> read_layer_freq(ObjectReader& r, int num_layers, int num_experts) {
  const char* key = "moe_layer_freq";
  (void)r.def(key);
  std::vector<int> freq;
  if (num_experts == 0) {
    r.ignore(key);
    return freq;
  }
  if (!r.has(key)) {
    r.ignore(key);
    return std::vector<int>(num_layers, 1);
  }
  const json& v = r.raw(key);
  if (v.is_array()) {
    if (v.size() != static_cast<size_t>(num_layers)) {
      fail("bad_value", r.path(key),
           "expected a list of 0/1 with one entry per layer (" + std::to_string(num_layers) +
               "), got " + std::to_string(v.size()) + " entries");
    }
    for (size_t i = 0; i < v.size(); ++i) {
      freq.push_back(static_cast<int>(detail::as_int(v[i], index_path(r.path(key), i), 0, 1)));
    }
  } else {
    const long long n = detail::as_int(v, r.path(key), 1, num_layers);
    for (int i = 0; i < num_layers; ++i) freq.push_back(i % n == 0 ? 1 : 0);
  }
  if (std::count(freq.begin(), freq.end(), 1) == 0) {
    fail("bad_value", r.path(key), "expected at least one MoE layer when num_experts > 0");
  }
  return freq;
}

int to_int(long long v) { return static_cast<int>(v); }  // table bounds keep every int in range

// The fields that only shape the emitted Megatron flags (normalization, rotary, biases,
// activation, router details, tokenizer).
void read_model_flag_fields(ObjectReader& r, ModelSpec& m) {
  m.normalization = r.get_enum("normalization");
  m.norm_epsilon = r.get_number("norm_epsilon");
  m.position_embedding_type = r.get_enum("position_embedding_type");
  m.rotary_base = to_int(r.get_int("rotary_base"));
  m.rotary_percent = r.get_number("rotary_percent");
  m.qk_layernorm = r.get_bool("qk_layernorm");
  m.add_bias_linear = r.get_bool("add_bias_linear");
  m.add_qkv_bias = r.get_bool("add_qkv_bias");
  m.quick_geglu = r.get_bool("quick_geglu");
  m.glu_linear_offset = r.get_number("glu_linear_offset");
  m.activation_func_clamp_value = r.get_optional_number("activation_func_clamp_value").value_or(0);
  m.softmax_type = r.get_enum("softmax_type");
  m.moe_router_score_function = r.get_enum("moe_router_score_function");
  m.moe_router_pre_softmax = r.get_bool("moe_router_pre_softmax");
  m.moe_router_enable_expert_bias = r.get_bool("moe_router_enable_expert_bias");
  m.moe_router_topk_scaling_factor = r.get_optional_number("moe_router_topk_scaling_factor").value_or(0);
  m.moe_router_load_balancing_type = r.get_enum("moe_router_load_balancing_type");
  m.moe_aux_loss_coeff = r.get_number("moe_aux_loss_coeff");
  m.moe_shared_expert_gate = r.get_bool("moe_shared_expert_gate");
  m.mtp_loss_scaling_factor = r.get_number("mtp_loss_scaling_factor");
  m.tokenizer_model = r.get_string("tokenizer_model");
}

// Megatron's TransformerConfig checks on those flags (megatron.md §2.7 rule 7; argument_utils:
// --quick-geglu sets the gated shape).
void check_model_flags(const ObjectReader& r, const ModelSpec& m) {
  if (m.quick_geglu && !m.swiglu) {
    fail("bad_value", r.path("quick_geglu"), "quick_geglu is a gated MLP: it needs swiglu true (the gated shape)");
  }
  if (m.moe_router_enable_expert_bias && m.moe_router_score_function != "sigmoid") {
    fail("bad_value", r.path("moe_router_enable_expert_bias"), "the expert bias needs moe_router_score_function sigmoid");
  }
  if (m.moe_shared_expert_gate && m.moe_shared_expert_intermediate_size == 0) {
    fail("bad_value", r.path("moe_shared_expert_gate"), "needs a shared expert (moe_shared_expert_intermediate_size)");
  }
}

void read_model_fields(ObjectReader& r, ModelSpec& m) {
  m.id = r.get_string("id", "custom");
  m.name = r.get_string("name", m.id);
  m.num_layers = to_int(r.get_int("num_layers"));
  m.hidden_size = to_int(r.get_int("hidden_size"));
  m.num_attention_heads = to_int(r.get_int("num_attention_heads"));
  m.num_query_groups = to_int(r.get_int("num_query_groups", m.num_attention_heads));
  m.kv_channels = to_int(r.get_optional_int("kv_channels").value_or(0));
  m.vocab_size = to_int(r.get_int("vocab_size"));
  m.swiglu = r.get_bool("swiglu");
  m.untie_embeddings_and_output_weights = r.get_bool("untie_embeddings_and_output_weights");
  m.num_experts = to_int(r.get_int("num_experts"));
  m.moe_router_topk = to_int(r.get_int("moe_router_topk", m.num_experts > 0 ? 2 : 0));
  m.moe_layer_freq = read_layer_freq(r, m.num_layers, m.num_experts);
  const bool has_dense_layers =
      m.num_experts == 0 || std::count(m.moe_layer_freq.begin(), m.moe_layer_freq.end(), 0) > 0;
  if (has_dense_layers && !r.has("ffn_hidden_size")) {
    r.fail_missing("ffn_hidden_size", "an integer from 1 to " +
                                          std::to_string(static_cast<long long>(r.def("ffn_hidden_size").max)));
  }
  m.ffn_hidden_size = to_int(r.get_int("ffn_hidden_size", 0));
  if (has_dense_layers && m.ffn_hidden_size < 1) {
    fail("out_of_range", r.path("ffn_hidden_size"), "expected a positive integer: some layers are dense");
  }
  m.moe_ffn_hidden_size = to_int(r.get_int("moe_ffn_hidden_size", m.num_experts > 0 ? m.ffn_hidden_size : 0));
  m.moe_shared_expert_intermediate_size =
      to_int(r.get_optional_int("moe_shared_expert_intermediate_size").value_or(0));
  m.multi_latent_attention = r.get_bool("multi_latent_attention");
  m.q_lora_rank = to_int(r.get_optional_int("q_lora_rank").value_or(0));
  m.kv_lora_rank = to_int(r.get_optional_int("kv_lora_rank").value_or(0));
  m.qk_head_dim = to_int(r.get_optional_int("qk_head_dim").value_or(0));
  m.qk_pos_emb_head_dim = to_int(r.get_optional_int("qk_pos_emb_head_dim").value_or(0));
  m.v_head_dim = to_int(r.get_optional_int("v_head_dim").value_or(0));
  m.mtp_num_layers = to_int(r.get_optional_int("mtp_num_layers").value_or(0));
  m.moe_router_num_groups = to_int(r.get_optional_int("moe_router_num_groups").value_or(0));
  m.moe_router_group_topk = to_int(r.get_optional_int("moe_router_group_topk").value_or(0));
  m.window_size = to_int(r.get_optional_int("window_size").value_or(0));
  m.window_attn_skip_freq = to_int(r.get_optional_int("window_attn_skip_freq").value_or(0));
  read_model_flag_fields(r, m);
  m.source = r.get_string("source");
  r.finish();
}

// Megatron's own model checks (megatron.md §2.4 / §2.7), after every field is read.
void check_attention(const ObjectReader& r, const ModelSpec& m) {
  long long width = 0;  // widest attention projection, in 64 bits (heads x head dim)
  if (m.multi_latent_attention) {
    for (auto [key, val] : {std::pair<const char*, int>{"kv_lora_rank", m.kv_lora_rank},
                            {"qk_head_dim", m.qk_head_dim},
                            {"qk_pos_emb_head_dim", m.qk_pos_emb_head_dim},
                            {"v_head_dim", m.v_head_dim}}) {
      if (val <= 0) fail("missing_field", r.path(key), "required with multi_latent_attention: a positive integer");
    }
    width = static_cast<long long>(m.num_attention_heads) *
            std::max<long long>(static_cast<long long>(m.qk_head_dim) + m.qk_pos_emb_head_dim, m.v_head_dim);
  } else {
    if (m.kv_channels == 0 && m.hidden_size % m.num_attention_heads != 0) {
      fail("bad_value", r.path("num_attention_heads"),
           "hidden_size must be divisible by num_attention_heads when kv_channels is not given");
    }
    if (m.num_attention_heads % m.num_query_groups != 0) {
      fail("bad_value", r.path("num_query_groups"),
           "expected a divisor of num_attention_heads (" + std::to_string(m.num_attention_heads) + ")");
    }
    width = static_cast<long long>(m.num_attention_heads) * m.head_dim();
  }
  const long long max_width = static_cast<long long>(r.def("hidden_size").max);
  if (width > max_width) {
    fail("out_of_range", r.path("num_attention_heads"),
         "expected num_attention_heads x head dimension at most " + std::to_string(max_width) +
             " (the hidden_size limit), got " + std::to_string(width));
  }
}

void check_moe(const ObjectReader& r, const ModelSpec& m) {
  if (m.num_experts > 0) {
    if (m.moe_router_topk < 1 || m.moe_router_topk > m.num_experts) {
      fail("out_of_range", r.path("moe_router_topk"),
           "expected 1 to num_experts (" + std::to_string(m.num_experts) + ")");
    }
    if (m.moe_ffn_hidden_size < 1) fail("out_of_range", r.path("moe_ffn_hidden_size"), "expected a positive integer");
  } else if (m.moe_router_topk != 0 || m.moe_shared_expert_intermediate_size != 0) {
    fail("bad_value", r.path(m.moe_router_topk != 0 ? "moe_router_topk" : "moe_shared_expert_intermediate_size"),
         "MoE fields need num_experts > 0");
  }
  if ((m.moe_router_num_groups > 0) != (m.moe_router_group_topk > 0)) {
    fail("bad_value", r.path("moe_router_group_topk"),
         "moe_router_num_groups and moe_router_group_topk go together");
  }
  if (m.moe_router_num_groups > 0) {
    if (m.num_experts % m.moe_router_num_groups != 0) {
      fail("bad_value", r.path("moe_router_num_groups"), "expected a divisor of num_experts");
    }
    if (m.moe_router_group_topk > m.moe_router_num_groups) {
      fail("out_of_range", r.path("moe_router_group_topk"), "expected at most moe_router_num_groups");
    }
  }
}

ModelSpec read_model(const json& v, const std::string& path, const PresetCatalog& presets) {
  const json obj = resolve_preset(v, path, presets.models, "model");
  ObjectReader r(obj, path, "model");
  ModelSpec m;
  read_model_fields(r, m);
  check_attention(r, m);
  check_moe(r, m);
  check_model_flags(r, m);
  if (m.window_attn_skip_freq > 0 && m.window_size == 0) {
    fail("bad_value", r.path("window_attn_skip_freq"), "needs window_size");
  }
  return m;
}

NodeGroup read_group(const json& v, const std::string& path, const PresetCatalog& presets) {
  ObjectReader r(v, path, "cluster.groups[]");
  NodeGroup g;
  g.gpu = read_gpu(r.raw("gpu"), detail::join_path(path, "gpu"), presets);
  g.nodes = to_int(r.get_int("nodes"));
  g.gpus_per_node = to_int(r.get_int("gpus_per_node", g.gpu.gpus_per_node));
  // SCENARIO.md: an NVL rack (more than 8 GPUs per scale-up domain) has 4 GPUs per host.
  const int default_host = g.gpus_per_node <= 8 || g.gpus_per_node % 4 != 0 ? g.gpus_per_node : 4;
  g.gpus_per_host = to_int(r.get_int("gpus_per_host", default_host));
  if (g.gpus_per_node % g.gpus_per_host != 0) {
    fail("bad_value", r.path("gpus_per_host"),
         "expected a divisor of gpus_per_node (" + std::to_string(g.gpus_per_node) +
             "): a scale-up domain is made of whole hosts");
  }
  g.inter_node_gbps = r.get_number("inter_node_gbps", g.gpu.inter_node_gbps);
  g.price_per_gpu_hour = r.get_optional_number("price_per_gpu_hour");
  g.billed_all = r.get_enum("billed") == "all";
  r.finish();
  return g;
}

ClusterSpec read_cluster(const json& v, const std::string& path, const PresetCatalog& presets) {
  const json obj = resolve_preset(v, path, presets.clusters, "cluster");
  ObjectReader r(obj, path, "cluster");
  ClusterSpec c;
  c.id = r.get_string("id", "custom");
  c.name = r.get_string("name", c.id);
  const json& groups = r.raw("groups");
  const std::string gpath = r.path("groups");
  const FieldDef& gdef = r.def("groups");
  if (!groups.is_array() || groups.empty()) {
    fail(groups.is_array() ? "bad_value" : "wrong_type", gpath, "expected a non-empty list of node groups");
  }
  if (groups.size() > static_cast<size_t>(gdef.max)) {
    fail("out_of_range", gpath, "expected at most " + std::to_string(static_cast<int>(gdef.max)) + " node groups");
  }
  long long total = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    c.groups.push_back(read_group(groups[i], index_path(gpath, i), presets));
    total += static_cast<long long>(c.groups.back().nodes) * c.groups.back().gpus_per_node;
  }
  if (total > kMaxGpus) fail("out_of_range", gpath, "expected at most " + std::to_string(kMaxGpus) + " GPUs in total");
  c.inter_group_gbps = r.get_optional_number("inter_group_gbps").value_or(0);
  c.source = r.get_string("source");
  r.finish();
  // Prices on all groups or on none: a plan's cost would otherwise leave some GPUs out.
  for (size_t i = 1; i < c.groups.size(); ++i) {
    if (c.groups[i].price_per_gpu_hour.has_value() != c.groups[0].price_per_gpu_hour.has_value()) {
      const size_t missing = c.groups[i].price_per_gpu_hour ? 0 : i;
      fail("bad_value", index_path(gpath, missing) + ".price_per_gpu_hour",
           "expected a price (USD per GPU-hour) here too: group " + std::to_string(missing ? 0 : i) +
               " has one; give every group a price (0 for GPUs already paid for) or none");
    }
  }

  return c;
}

Precision to_precision(const std::string& s) { return s == "fp8" ? Precision::kFp8 : Precision::kBf16; }

Dispatcher to_dispatcher(const std::string& s) {
  return s == "allgather" ? Dispatcher::kAllgather
         : s == "flex"    ? Dispatcher::kFlex
         : s == "auto"    ? Dispatcher::kAuto
                          : Dispatcher::kAlltoall;
}

FlexBackend to_flex_backend(const std::string& s) {
  return s == "deepep" ? FlexBackend::kDeepEp : s == "hybridep" ? FlexBackend::kHybridEp : FlexBackend::kAuto;
}

GraphImpl to_graph_impl(const std::string& s) {
  return s == "transformer_engine" ? GraphImpl::kTransformerEngine
         : s == "local"            ? GraphImpl::kLocal
         : s == "full_iteration"   ? GraphImpl::kFullIteration
                                   : GraphImpl::kNone;
}

unsigned to_graph_modules(const std::vector<std::string>& names) {
  unsigned bits = 0;
  for (const std::string& n : names) {
    for (int i = 0; i < kGraphModuleCount; ++i) {
      if (n == graph_module_name(i)) bits |= 1u << i;
    }
  }
  return bits;
}

// training.optimizer: Megatron's precision-aware optimizer settings.
OptimizerSpec read_optimizer(const json& v, const std::string& path) {
  ObjectReader r(v, path, "training.optimizer");
  OptimizerSpec o;
  o.precision_aware = r.get_bool("precision_aware");
  o.main_grads_dtype = r.get_enum("main_grads_dtype");
  o.main_params_dtype = r.get_enum("main_params_dtype");
  o.exp_avg_dtype = r.get_enum("exp_avg_dtype");
  o.exp_avg_sq_dtype = r.get_enum("exp_avg_sq_dtype");
  r.finish();
  const bool lowered = o.main_grads_dtype != "fp32" || o.main_params_dtype != "fp32" || o.exp_avg_dtype != "fp32" ||
                       o.exp_avg_sq_dtype != "fp32";
  if (lowered && !o.precision_aware) {
    fail("bad_value", detail::join_path(path, "precision_aware"),
         "expected true: non-fp32 optimizer dtypes need Megatron's --use-precision-aware-optimizer");
  }
  return o;
}

TrainingSpec read_training(const json& v, const std::string& path) {
  ObjectReader r(v, path, "training");
  TrainingSpec t;
  t.global_batch_size = r.get_int("global_batch_size");
  t.seq_length = to_int(r.get_int("seq_length"));
  t.precision = to_precision(r.get_enum("precision"));
  t.use_distributed_optimizer = r.get_bool("use_distributed_optimizer");
  t.moe_token_dispatcher_type = to_dispatcher(r.get_enum("moe_token_dispatcher_type"));
  t.moe_flex_dispatcher_backend = to_flex_backend(r.get_enum("moe_flex_dispatcher_backend"));
  t.moe_load_imbalance = r.get_number("moe_load_imbalance");
  t.moe_expert_capacity_factor = r.get_optional_number("moe_expert_capacity_factor").value_or(0);
  t.moe_pad_expert_input_to_capacity = r.get_bool("moe_pad_expert_input_to_capacity");
  t.moe_expert_rank_capacity_factor = r.get_optional_number("moe_expert_rank_capacity_factor").value_or(0);
  t.moe_paged_stash = r.get_bool("moe_paged_stash");
  t.fp8_dot_product_attention = r.get_bool("fp8_dot_product_attention");
  t.overlap_grad_reduce = r.get_bool("overlap_grad_reduce");
  t.overlap_param_gather = r.get_bool("overlap_param_gather");
  if (r.has("optimizer")) t.optimizer = read_optimizer(r.raw("optimizer"), r.path("optimizer"));
  r.ignore("optimizer");
  t.fp8_recipe = r.has("fp8_recipe") ? r.get_enum("fp8_recipe") : (r.ignore("fp8_recipe"), std::string());
  t.fp8_param_gather = r.get_bool("fp8_param_gather");
  if (r.has("cuda_graph_impl")) t.cuda_graph_impl = to_graph_impl(r.get_enum("cuda_graph_impl"));
  r.ignore("cuda_graph_impl");
  if (r.has("cuda_graph_modules")) t.cuda_graph_modules = to_graph_modules(r.get_enum_list("cuda_graph_modules"));
  r.ignore("cuda_graph_modules");
  if (r.get_bool("cuda_graphs")) {  // deprecated spelling of full-iteration graphs
    if (t.cuda_graph_impl && *t.cuda_graph_impl != GraphImpl::kFullIteration) {
      fail("bad_value", r.path("cuda_graphs"), "expected false with cuda_graph_impl (cuda_graphs is its deprecated "
                                               "spelling of \"full_iteration\")");
    }
    t.cuda_graph_impl = GraphImpl::kFullIteration;
  }
  t.grad_reduce_in_bf16 = r.get_bool("grad_reduce_in_bf16");
  t.train_tokens = r.get_optional_number("train_tokens").value_or(0);
  t.checkpoint_write_gbps = r.get_optional_number("checkpoint_write_gbps").value_or(0);
  t.node_failures_per_year = r.get_number("node_failures_per_year");
  t.restart_s = r.get_number("restart_s");
  r.finish();
  if (t.moe_pad_expert_input_to_capacity && t.moe_expert_capacity_factor <= 0) {
    fail("bad_value", r.path("moe_pad_expert_input_to_capacity"),
         "needs moe_expert_capacity_factor (Megatron: padding is to the expert capacity)");
  }
  if (t.moe_paged_stash && t.moe_expert_rank_capacity_factor <= 0) {
    fail("bad_value", r.path("moe_paged_stash"), "needs moe_expert_rank_capacity_factor (Megatron rule)");
  }
  if (t.moe_expert_rank_capacity_factor > 0 && t.moe_token_dispatcher_type != Dispatcher::kFlex &&
      t.moe_token_dispatcher_type != Dispatcher::kAuto) {
    fail("bad_value", r.path("moe_expert_rank_capacity_factor"),
         "needs the flex dispatcher with the hybridep backend (moe_token_dispatcher_type \"flex\" or \"auto\")");
  }
  if (t.moe_expert_rank_capacity_factor > 0 && t.moe_flex_dispatcher_backend == FlexBackend::kDeepEp) {
    fail("bad_value", r.path("moe_expert_rank_capacity_factor"), "needs the hybridep backend, not deepep");
  }
  if (t.fp8_dot_product_attention && t.precision != Precision::kFp8) {
    fail("bad_value", r.path("fp8_dot_product_attention"), "needs precision \"fp8\"");
  }
  if (t.cuda_graph_modules && t.cuda_graph_impl && *t.cuda_graph_impl == GraphImpl::kFullIteration &&
      *t.cuda_graph_modules != 0) {
    fail("bad_value", r.path("cuda_graph_modules"), "expected empty with cuda_graph_impl \"full_iteration\" (Megatron rule)");
  }
  if (t.fp8_param_gather && !t.use_distributed_optimizer) {
    fail("bad_value", r.path("fp8_param_gather"), "needs use_distributed_optimizer (Megatron rule)");
  }
  if (t.overlap_param_gather && (!t.overlap_grad_reduce || !t.use_distributed_optimizer)) {
    fail("bad_value", r.path("overlap_param_gather"),
         "needs use_distributed_optimizer and overlap_grad_reduce (Megatron rule)");
  }
  return t;
}

// "auto" (empty) or layers per stage: at most one stage per layer.
std::vector<int> read_layer_split(ObjectReader& r, int num_layers) {
  const char* key = "layer_split";
  const FieldDef& f = r.def(key);
  std::vector<int> out;
  if (!r.has(key)) {
    r.ignore(key);
    return out;
  }
  const json& ls = r.raw(key);
  if (ls.is_string()) {
    if (ls.get<std::string>() != "auto") fail("bad_value", r.path(key), "expected \"auto\" or a list of layers per stage");
    return out;
  }
  if (!ls.is_array() || ls.empty()) {
    fail("wrong_type", r.path(key), "expected \"auto\" or a non-empty list of layers per stage");
  }
  if (ls.size() > static_cast<size_t>(num_layers)) {
    fail("bad_value", r.path(key), "expected at most one stage per layer (" + std::to_string(num_layers) +
                                       "), got " + std::to_string(ls.size()) + " stages");
  }
  for (size_t i = 0; i < ls.size(); ++i) out.push_back(to_int(detail::as_int(ls[i], index_path(r.path(key), i), f)));
  return out;
}

SearchSpec read_search(const json& v, const std::string& path, const ModelSpec& model) {
  ObjectReader r(v, path, "search");
  SearchSpec s;
  s.tp = r.get_int_choices("tp");
  s.cp = r.get_int_choices("cp");
  s.pp = r.get_int_choices("pp");
  s.ep = r.get_int_choices("ep");
  s.etp = r.get_int_choices("etp");
  s.vpp = r.get_int_choices("vpp");
  s.micro_batch_size = r.get_int_choices("micro_batch_size");
  (void)r.def("recompute");
  s.recompute = detail::read_recompute_choices(r.has("recompute") ? &r.raw("recompute") : nullptr, r.path("recompute"));
  r.ignore("recompute");
  s.ep_comm_overlap = r.get_bool_choices("ep_comm_overlap");
  s.optimizer_offload_fraction = r.get_number_choices("optimizer_offload_fraction");
  const std::string mode = r.get_enum("mode");
  s.mode = mode == "hetero" ? SearchMode::kHetero : mode == "auto" ? SearchMode::kAuto : SearchMode::kMegatron;
  const std::string objective = r.get_enum("objective");
  s.objective = objective == "cost"                 ? Objective::kCost
                : objective == "time_within_budget" ? Objective::kTimeWithinBudget
                                                    : Objective::kTime;
  s.budget_per_hour = r.get_optional_number("budget_per_hour").value_or(0);
  if (s.objective == Objective::kTimeWithinBudget && !(s.budget_per_hour > 0)) {
    fail("bad_value", r.path("budget_per_hour"), "expected a budget in USD per hour with objective \"time_within_budget\"");
  }
  s.top_k = to_int(r.get_int("top_k"));
  s.memory_margin_fraction = r.get_number("memory_margin_fraction");
  s.layer_split = read_layer_split(r, model.num_layers);
  s.baselines = r.get_bool("baselines");
  r.finish();
  return s;
}

StagePlan read_stage(const json& v, const std::string& path, const ClusterSpec& cluster) {
  ObjectReader r(v, path, "plan.stages[]");
  StagePlan st;
  const long long last_group = static_cast<long long>(cluster.groups.size()) - 1;
  st.group = to_int(r.get_int("group"));
  if (st.group > last_group) {
    fail("out_of_range", r.path("group"), "expected an integer from 0 to " + std::to_string(last_group) +
                                              " (a cluster group index), got " + std::to_string(st.group));
  }
  const std::string& gpu_id = cluster.groups[st.group].gpu.id;
  st.gpu = r.get_string("gpu", gpu_id);
  if (st.gpu != gpu_id) {
    fail("bad_value", r.path("gpu"),
         "expected \"" + gpu_id + "\", the GPU of cluster group " + std::to_string(st.group));
  }
  st.layers = to_int(r.get_int("layers"));
  if (r.has("recompute")) st.recompute = detail::read_recompute(r.raw("recompute"), r.path("recompute"), "plan.stages[].recompute");
  r.ignore("recompute");
  // "hetero" mode: the stage's own mesh; 0 = the plan's value.
  st.tp = to_int(r.get_int("tp", 0));
  st.cp = to_int(r.get_int("cp", 0));
  st.dp = to_int(r.get_int("dp", 0));
  st.ep = to_int(r.get_int("ep", 0));
  st.etp = to_int(r.get_int("etp", 0));
  r.finish();
  return st;
}

// The plan's dispatcher: plan.moe_token_dispatcher_type and plan.moe_flex_dispatcher_backend, else
// training's (alltoall for auto), the flex backend else deepep where every stage's group runs it,
// else hybridep (Megatron's own default is deepep).
Dispatch read_plan_dispatch(ObjectReader& r, const TrainingSpec& t, const ClusterSpec& cluster,
                            const std::vector<StagePlan>& stages) {
  const Dispatcher d = r.has("moe_token_dispatcher_type") ? to_dispatcher(r.get_enum("moe_token_dispatcher_type"))
                                                          : t.moe_token_dispatcher_type;
  r.ignore("moe_token_dispatcher_type");
  const bool backend_given = r.has("moe_flex_dispatcher_backend");
  FlexBackend b = backend_given ? to_flex_backend(r.get_enum("moe_flex_dispatcher_backend")) : t.moe_flex_dispatcher_backend;
  r.ignore("moe_flex_dispatcher_backend");
  if (d != Dispatcher::kFlex) {
    if (backend_given) fail("bad_value", r.path("moe_flex_dispatcher_backend"), "needs moe_token_dispatcher_type \"flex\"");
    return d == Dispatcher::kAllgather ? Dispatch::kAllgather : Dispatch::kAlltoall;
  }
  if (b == FlexBackend::kAuto) {
    b = FlexBackend::kDeepEp;
    for (const StagePlan& st : stages) {
      if (st.group >= 0 && st.group < static_cast<int>(cluster.groups.size()) &&
          !dispatch_runs_on(Dispatch::kDeepEp, cluster.groups[st.group])) {
        b = FlexBackend::kHybridEp;
      }
    }
  }
  return b == FlexBackend::kHybridEp ? Dispatch::kHybridEp : Dispatch::kDeepEp;
}

// The plan's CUDA graphs: plan.cuda_graph_impl / cuda_graph_modules, else training's, else none.
CudaGraphs read_plan_graphs(ObjectReader& r, const TrainingSpec& t) {
  CudaGraphs g;
  g.impl = r.has("cuda_graph_impl") ? to_graph_impl(r.get_enum("cuda_graph_impl"))
                                    : t.cuda_graph_impl.value_or(GraphImpl::kNone);
  r.ignore("cuda_graph_impl");
  g.modules = r.has("cuda_graph_modules") ? to_graph_modules(r.get_enum_list("cuda_graph_modules"))
              : g.per_layer()             ? t.cuda_graph_modules.value_or(0)
                                          : 0;
  r.ignore("cuda_graph_modules");
  return g;
}

PlanSpec read_plan(const json& v, const std::string& path, const ClusterSpec& cluster, const TrainingSpec& training) {
  ObjectReader r(v, path, "plan");
  PlanSpec p;
  p.tp = to_int(r.get_int("tp"));
  p.cp = to_int(r.get_int("cp"));
  p.pp = to_int(r.get_int("pp"));
  p.dp = to_int(r.get_int("dp"));
  p.ep = to_int(r.get_int("ep"));
  p.etp = to_int(r.get_int("etp"));
  p.vpp = to_int(r.get_int("vpp"));
  p.micro_batch_size = to_int(r.get_int("micro_batch_size"));
  p.sequence_parallel = r.get_bool("sequence_parallel", p.tp > 1);
  p.ep_comm_overlap = r.get_bool("ep_comm_overlap");
  p.optimizer_offload_fraction = r.get_number("optimizer_offload_fraction");
  if (r.has("runtime")) p.runtime = r.get_enum("runtime") == "flagscale" ? Runtime::kFlagScale : Runtime::kMegatron;
  const json& stages = r.raw("stages");
  const std::string spath = r.path("stages");
  if (!stages.is_array()) fail("wrong_type", spath, "expected a list of stages");
  if (stages.size() != static_cast<size_t>(p.pp)) {
    fail("bad_value", spath, "expected one stage per pipeline rank (pp = " + std::to_string(p.pp) +
                                 "), got " + std::to_string(stages.size()));
  }
  for (size_t i = 0; i < stages.size(); ++i) p.stages.push_back(read_stage(stages[i], index_path(spath, i), cluster));
  p.dispatch = read_plan_dispatch(r, training, cluster, p.stages);
  p.cuda_graphs = read_plan_graphs(r, training);
  r.finish();
  return p;
}

template <class F>
auto catching(F&& f) -> Expected<decltype(f())> {
  try {
    return f();
  } catch (const InputFailure& e) {
    return e.error;
  } catch (const nlohmann::json::exception& e) {
    return Error{"bad_json", std::string("malformed JSON value: ") + e.what(), "$"};
  }
}

}  // namespace

Expected<GpuSpec> parse_gpu(const json& v, const std::string& path, const PresetCatalog& presets) {
  return catching([&] { return read_gpu(v, path, presets); });
}

Expected<ModelSpec> parse_model(const json& v, const std::string& path, const PresetCatalog& presets) {
  return catching([&] { return read_model(v, path, presets); });
}

Expected<Scenario> parse_scenario(const json& doc, const PresetCatalog& presets) {
  return catching([&] {
    ObjectReader r(doc, "", "");
    const std::string fmt = r.get_string("format");
    if (fmt != kScenarioFormat) {
      fail("bad_value", "format", std::string("expected \"") + kScenarioFormat + "\", got \"" + fmt + "\"");
    }
    Scenario s;
    s.model = read_model(r.raw("model"), "model", presets);
    s.cluster = read_cluster(r.raw("cluster"), "cluster", presets);
    s.training = read_training(r.raw("training"), "training");
    if (r.has("search")) s.search = read_search(r.raw("search"), "search", s.model);
    r.ignore("search");
    if (s.search.objective != Objective::kTime && !s.cluster.priced()) {
      fail("bad_value", "cluster.groups[0].price_per_gpu_hour",
           std::string("expected a price (USD per GPU-hour) on every cluster group: search.objective \"") +
               to_string(s.search.objective) + "\" compares what plans cost");
    }
    if (r.has("plan")) s.plan = read_plan(r.raw("plan"), "plan", s.cluster, s.training);
    r.ignore("plan");
    if (r.has("profile")) {  // keyed by GPU id: read outside the field table (profile_io.hpp)
      Expected<ProfileSpec> p = parse_profile(doc.at("profile"), "profile", s.cluster);
      if (!p) throw InputFailure{p.error()};
      s.profile = std::move(p).value();
      if (auto e = check_profile_against_model(s)) throw InputFailure{*e};
    }
    r.ignore("profile");
    r.finish();
    return s;
  });
}

Expected<Scenario> parse_scenario(const std::string& text, const PresetCatalog& presets) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // syntax, and numbers beyond double range (1e999)
    return Error{"bad_json", std::string("not valid JSON: ") + e.what(), "$"};
  }
  return parse_scenario(doc, presets);
}

json plan_to_json(const PlanSpec& p) {
  json stages = json::array();
  for (const auto& s : p.stages) {
    json st = {{"gpu", s.gpu}, {"group", s.group}, {"layers", s.layers}, {"recompute", detail::recompute_to_json(s.recompute)}};
    const std::pair<const char*, int> own[] = {{"tp", s.tp}, {"cp", s.cp}, {"dp", s.dp}, {"ep", s.ep}, {"etp", s.etp}};
    for (const auto& [key, v] : own) {
      if (v > 0) st[key] = v;  // "hetero" mode: the stage's own mesh
    }
    stages.push_back(st);
  }
  json out = {{"tp", p.tp}, {"cp", p.cp}, {"pp", p.pp}, {"dp", p.dp}, {"ep", p.ep},
              {"etp", p.etp}, {"vpp", p.vpp}, {"micro_batch_size", p.micro_batch_size},
              {"sequence_parallel", p.sequence_parallel}, {"ep_comm_overlap", p.ep_comm_overlap},
              {"optimizer_offload_fraction", p.optimizer_offload_fraction},
              {"moe_token_dispatcher_type", dispatcher_name(p.dispatch)}};
  if (is_flex(p.dispatch)) out["moe_flex_dispatcher_backend"] = flex_backend_name(p.dispatch);
  out["cuda_graph_impl"] = to_string(p.cuda_graphs.impl);
  if (p.cuda_graphs.per_layer()) {
    json modules = json::array();
    for (int i = 0; i < kGraphModuleCount; ++i) {
      if (p.cuda_graphs.modules & (1u << i)) modules.push_back(graph_module_name(i));
    }
    out["cuda_graph_modules"] = modules;
  }
  if (p.runtime) out["runtime"] = to_string(*p.runtime);
  out["stages"] = stages;
  return out;
}

}  // namespace hapmoe
