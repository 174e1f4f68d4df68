#include "hapmoe/scenario_io.hpp"

#include <algorithm>

#include "json_read.hpp"

namespace hapmoe {

using detail::fail;
using detail::index_path;
using detail::InputFailure;
using detail::ObjectReader;
using nlohmann::json;

namespace {

constexpr long long kMaxDim = 1 << 20;  // generous bound on any model dimension

// A preset id string, or an object optionally starting from {"preset": id}, merged into one
// object. `kind` names the preset family in messages.
json resolve_preset(const json& v, const std::string& path, const json& section,
                    const char* kind) {
  auto lookup = [&](const std::string& id, const std::string& at) -> json {
    auto it = section.find(id);
    if (it == section.end()) {
      std::string ids;
      for (auto p = section.begin(); p != section.end(); ++p) ids += (ids.empty() ? "" : ", ") + p.key();
      fail("unknown_preset", at, std::string("unknown ") + kind + " preset \"" + id +
                                     "\"; known: " + ids);
    }
    json merged = *it;
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

// A list of strings, each one of `allowed` (an empty list is allowed); absent = {}.
std::vector<std::string> read_string_list(ObjectReader& r, const char* key,
                                          const std::vector<std::string>& allowed) {
  std::vector<std::string> out;
  if (!r.has(key)) {
    r.ignore(key);
    return out;
  }
  const json& v = r.raw(key);
  const std::string path = r.path(key);
  if (!v.is_array()) fail("wrong_type", path, "expected a list of strings");
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = index_path(path, i);
    if (!v[i].is_string()) fail("wrong_type", at, "expected a string");
    const std::string item = v[i].get<std::string>();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), item) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "\"" : ", \"") + a + "\"";
      fail("bad_value", at, "expected one of " + list + ", got \"" + item + "\"");
    }
    out.push_back(item);
  }
  return out;
}

GpuSpec read_gpu(const json& v, const std::string& path, const PresetCatalog& presets) {
  const json obj = resolve_preset(v, path, presets.gpus, "GPU");
  ObjectReader r(obj, path);
  GpuSpec g;
  g.id = r.get_string("id", std::string("custom"));
  g.name = r.get_string("name", g.id);
  g.vendor = r.get_string("vendor", std::string("nvidia"));
  g.memory_gib = r.get_number("memory_gib", 0, 1e5, std::nullopt, true);
  g.bf16_tflops = r.get_number("bf16_tflops", 0, 1e6, std::nullopt, true);
  g.fp8_tflops = r.get_nullable_number("fp8_tflops", 0, 1e6, true);
  g.hbm_gbps = r.get_number("hbm_gbps", 0, 1e6, std::nullopt, true);
  g.intra_node_gbps = r.get_number("intra_node_gbps", 0, 1e6, std::nullopt, true);
  g.inter_node_gbps = r.get_number("inter_node_gbps", 0, 1e6, std::nullopt, true);
  g.gpus_per_node = static_cast<int>(r.get_int("gpus_per_node", 1, 1024, 8));
  g.reserved_memory_gib = r.get_number("reserved_memory_gib", 0, 1e5, 5.0);
  g.host_link_gbps = r.get_number("host_link_gbps", 0, 1e6, g.host_link_gbps, true);
  g.fp8_recipes = read_string_list(r, "fp8_recipes", {"tensorwise", "blockwise", "mxfp8"});
  g.cuda_arch = r.get_number("cuda_arch", 0, 100, 0.0);
  g.generation = r.get_string("generation", std::string());
  g.gemm_efficiency = r.get_number("gemm_efficiency", 0, 1, g.gemm_efficiency, true);
  g.fp8_gemm_speedup = r.get_number("fp8_gemm_speedup", 0, 4, g.fp8_gemm_speedup, true);
  g.attention_efficiency = r.get_number("attention_efficiency", 0, 1, g.attention_efficiency, true);
  g.grouped_gemm_half_tokens =
      r.get_number("grouped_gemm_half_tokens", 0, 1e6, g.grouped_gemm_half_tokens);
  g.expert_host_us = r.get_number("expert_host_us", 0, 1e5, g.expert_host_us);
  g.layer_host_us = r.get_number("layer_host_us", 0, 1e5, g.layer_host_us);
  g.hbm_efficiency = r.get_number("hbm_efficiency", 0, 1, g.hbm_efficiency, true);
  g.intra_node_efficiency = r.get_number("intra_node_efficiency", 0, 1, g.intra_node_efficiency, true);
  g.inter_node_efficiency = r.get_number("inter_node_efficiency", 0, 1, g.inter_node_efficiency, true);
  g.alltoall_intra_node_efficiency =
      r.get_number("alltoall_intra_node_efficiency", 0, 1, g.alltoall_intra_node_efficiency, true);
  g.alltoall_inter_node_efficiency =
      r.get_number("alltoall_inter_node_efficiency", 0, 1, g.alltoall_inter_node_efficiency, true);
  g.assumed = read_string_list(
      r, "assumed",
      {"memory_gib", "bf16_tflops", "fp8_tflops", "hbm_gbps", "intra_node_gbps", "inter_node_gbps",
       "host_link_gbps", "reserved_memory_gib", "fp8_recipes", "gemm_efficiency", "fp8_gemm_speedup",
       "attention_efficiency", "grouped_gemm_half_tokens", "expert_host_us", "layer_host_us", "hbm_efficiency",
       "intra_node_efficiency", "inter_node_efficiency", "alltoall_intra_node_efficiency",
       "alltoall_inter_node_efficiency"});
  g.efficiency_source = r.get_string("efficiency_source", std::string());
  g.source = r.get_string("source", std::string());
  r.finish();
  if (g.reserved_memory_gib >= g.memory_gib) {
    fail("bad_value", detail::join_path(path, "reserved_memory_gib"),
         "expected reserved_memory_gib below memory_gib");
  }
  return g;
}

std::vector<int> read_layer_freq(ObjectReader& r, int num_layers, int num_experts) {
  const char* key = "moe_layer_freq";
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
    if (static_cast<int>(v.size()) != num_layers) {
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

ModelSpec read_model(const json& v, const std::string& path, const PresetCatalog& presets) {
  const json obj = resolve_preset(v, path, presets.models, "model");
  ObjectReader r(obj, path);
  ModelSpec m;
  m.id = r.get_string("id", std::string("custom"));
  m.name = r.get_string("name", m.id);
  m.num_layers = static_cast<int>(r.get_int("num_layers", 1, 1024, std::nullopt));
  m.hidden_size = static_cast<int>(r.get_int("hidden_size", 1, kMaxDim, std::nullopt));
  m.num_attention_heads = static_cast<int>(r.get_int("num_attention_heads", 1, 4096, std::nullopt));
  m.num_query_groups = static_cast<int>(r.get_int("num_query_groups", 1, 4096, m.num_attention_heads));
  m.kv_channels = static_cast<int>(r.get_nullable_int("kv_channels", 1, kMaxDim).value_or(0));
  m.vocab_size = static_cast<int>(r.get_int("vocab_size", 1, 1 << 24, std::nullopt));
  m.swiglu = r.get_bool("swiglu", true);
  m.untie_embeddings_and_output_weights = r.get_bool("untie_embeddings_and_output_weights", true);
  m.num_experts = static_cast<int>(r.get_int("num_experts", 0, 8192, 0));
  m.moe_router_topk = static_cast<int>(r.get_int("moe_router_topk", 0, 8192, m.num_experts > 0 ? 2 : 0));
  m.moe_layer_freq = read_layer_freq(r, m.num_layers, m.num_experts);
  const bool has_dense_layers =
      m.num_experts == 0 || std::count(m.moe_layer_freq.begin(), m.moe_layer_freq.end(), 0) > 0;
  m.ffn_hidden_size = static_cast<int>(
      r.get_int("ffn_hidden_size", has_dense_layers ? 1 : 0, kMaxDim,
                has_dense_layers ? std::nullopt : std::optional<long long>(0)));
  m.moe_ffn_hidden_size = static_cast<int>(
      r.get_int("moe_ffn_hidden_size", 0, kMaxDim, m.num_experts > 0 ? m.ffn_hidden_size : 0));
  m.moe_shared_expert_intermediate_size =
      static_cast<int>(r.get_nullable_int("moe_shared_expert_intermediate_size", 0, kMaxDim).value_or(0));
  m.multi_latent_attention = r.get_bool("multi_latent_attention", false);
  m.q_lora_rank = static_cast<int>(r.get_nullable_int("q_lora_rank", 1, kMaxDim).value_or(0));
  m.kv_lora_rank = static_cast<int>(r.get_nullable_int("kv_lora_rank", 1, kMaxDim).value_or(0));
  m.qk_head_dim = static_cast<int>(r.get_nullable_int("qk_head_dim", 1, kMaxDim).value_or(0));
  m.qk_pos_emb_head_dim = static_cast<int>(r.get_nullable_int("qk_pos_emb_head_dim", 1, kMaxDim).value_or(0));
  m.v_head_dim = static_cast<int>(r.get_nullable_int("v_head_dim", 1, kMaxDim).value_or(0));
  m.mtp_num_layers = static_cast<int>(r.get_nullable_int("mtp_num_layers", 0, 16).value_or(0));
  m.moe_router_num_groups = static_cast<int>(r.get_nullable_int("moe_router_num_groups", 1, 8192).value_or(0));
  m.moe_router_group_topk = static_cast<int>(r.get_nullable_int("moe_router_group_topk", 1, 8192).value_or(0));
  m.window_size = static_cast<int>(r.get_nullable_int("window_size", 1, 1 << 24).value_or(0));
  m.window_attn_skip_freq = static_cast<int>(r.get_nullable_int("window_attn_skip_freq", 1, 1024).value_or(0));
  m.source = r.get_string("source", std::string());
  r.finish();

  // Cross-field rules (Megatron's own model checks, megatron.md §2.4 / §2.7).
  if (m.multi_latent_attention) {
    for (auto [key, val] : {std::pair<const char*, int>{"kv_lora_rank", m.kv_lora_rank},
                            {"qk_head_dim", m.qk_head_dim},
                            {"qk_pos_emb_head_dim", m.qk_pos_emb_head_dim},
                            {"v_head_dim", m.v_head_dim}}) {
      if (val <= 0) fail("missing_field", r.path(key), "required with multi_latent_attention: a positive integer");
    }
  } else {
    if (m.kv_channels == 0 && m.hidden_size % m.num_attention_heads != 0) {
      fail("bad_value", r.path("num_attention_heads"),
           "hidden_size must be divisible by num_attention_heads when kv_channels is not given");
    }
    if (m.num_attention_heads % m.num_query_groups != 0) {
      fail("bad_value", r.path("num_query_groups"),
           "expected a divisor of num_attention_heads (" + std::to_string(m.num_attention_heads) + ")");
    }
  }
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
  if (m.window_attn_skip_freq > 0 && m.window_size == 0) {
    fail("bad_value", r.path("window_attn_skip_freq"), "needs window_size");
  }
  return m;
}

ClusterSpec read_cluster(const json& v, const std::string& path, const PresetCatalog& presets) {
  const json obj = resolve_preset(v, path, presets.clusters, "cluster");
  ObjectReader r(obj, path);
  ClusterSpec c;
  c.id = r.get_string("id", std::string("custom"));
  c.name = r.get_string("name", c.id);
  const json& groups = r.raw("groups");
  const std::string gpath = r.path("groups");
  if (!groups.is_array() || groups.empty()) {
    fail(groups.is_array() ? "bad_value" : "wrong_type", gpath, "expected a non-empty list of node groups");
  }
  if (groups.size() > 64) fail("out_of_range", gpath, "expected at most 64 node groups");
  long long total = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string p = index_path(gpath, i);
    ObjectReader gr(groups[i], p);
    NodeGroup g;
    g.gpu = read_gpu(gr.raw("gpu"), detail::join_path(p, "gpu"), presets);
    g.nodes = static_cast<int>(gr.get_int("nodes", 1, 1 << 17, std::nullopt));
    g.gpus_per_node = static_cast<int>(gr.get_int("gpus_per_node", 1, 1024, g.gpu.gpus_per_node));
    g.inter_node_gbps = gr.get_number("inter_node_gbps", 0, 1e6, g.gpu.inter_node_gbps, true);
    gr.finish();
    total += static_cast<long long>(g.nodes) * g.gpus_per_node;
    c.groups.push_back(std::move(g));
  }
  if (total > (1 << 20)) fail("out_of_range", gpath, "expected at most 1048576 GPUs in total");
  c.inter_group_gbps = r.get_nullable_number("inter_group_gbps", 0, 1e6, true).value_or(0);
  c.source = r.get_string("source", std::string());
  r.finish();
  return c;
}

// training.optimizer: Megatron's precision-aware optimizer settings.
OptimizerSpec read_optimizer(const json& v, const std::string& path) {
  ObjectReader r(v, path);
  OptimizerSpec o;
  o.precision_aware = r.get_bool("precision_aware", false);
  o.main_grads_dtype = r.get_enum("main_grads_dtype", {"fp32", "bf16"}, std::string("fp32"));
  o.main_params_dtype = r.get_enum("main_params_dtype", {"fp32", "fp16"}, std::string("fp32"));
  o.exp_avg_dtype = r.get_enum("exp_avg_dtype", {"fp32", "bf16", "fp8"}, std::string("fp32"));
  o.exp_avg_sq_dtype = r.get_enum("exp_avg_sq_dtype", {"fp32", "bf16", "fp8"}, std::string("fp32"));
  r.finish();
  const bool lowered = o.main_grads_dtype != "fp32" || o.main_params_dtype != "fp32" ||
                       o.exp_avg_dtype != "fp32" || o.exp_avg_sq_dtype != "fp32";
  if (lowered && !o.precision_aware) {
    fail("bad_value", detail::join_path(path, "precision_aware"),
         "expected true: non-fp32 optimizer dtypes need Megatron's --use-precision-aware-optimizer");
  }
  return o;
}

TrainingSpec read_training(const json& v, const std::string& path) {
  ObjectReader r(v, path);
  TrainingSpec t;
  t.global_batch_size = r.get_int("global_batch_size", 1, 100000000, std::nullopt);
  t.seq_length = static_cast<int>(r.get_int("seq_length", 1, 1 << 24, std::nullopt));
  t.precision = r.get_enum("precision", {"bf16", "fp8"}, std::string("bf16")) == "fp8"
                    ? Precision::kFp8 : Precision::kBf16;
  t.use_distributed_optimizer = r.get_bool("use_distributed_optimizer", true);
  const std::string d = r.get_enum("moe_token_dispatcher_type", {"alltoall", "allgather", "flex"},
                                   std::string("alltoall"));
  t.moe_token_dispatcher_type = d == "allgather" ? Dispatcher::kAllgather
                                : d == "flex"    ? Dispatcher::kFlex
                                                 : Dispatcher::kAlltoall;
  t.moe_load_imbalance = r.get_number("moe_load_imbalance", 1.0, 1000.0, 1.0);
  t.overlap_grad_reduce = r.get_bool("overlap_grad_reduce", true);
  t.overlap_param_gather = r.get_bool("overlap_param_gather", true);
  t.overlap_moe_expert_parallel_comm = r.get_bool("overlap_moe_expert_parallel_comm", false);
  if (r.has("optimizer")) t.optimizer = read_optimizer(r.raw("optimizer"), r.path("optimizer"));
  r.ignore("optimizer");
  t.fp8_recipe = r.has("fp8_recipe") ? r.get_enum("fp8_recipe", {"tensorwise", "blockwise", "mxfp8"}, std::nullopt)
                                     : (r.ignore("fp8_recipe"), std::string());
  t.fp8_param_gather = r.get_bool("fp8_param_gather", false);
  t.cuda_graphs = r.get_bool("cuda_graphs", false);
  t.grad_reduce_in_bf16 = r.get_bool("grad_reduce_in_bf16", false);
  r.finish();
  if (t.fp8_param_gather && !t.use_distributed_optimizer) {
    fail("bad_value", r.path("fp8_param_gather"), "needs use_distributed_optimizer (Megatron rule)");
  }
  if (t.overlap_param_gather && (!t.overlap_grad_reduce || !t.use_distributed_optimizer)) {
    fail("bad_value", r.path("overlap_param_gather"),
         "needs use_distributed_optimizer and overlap_grad_reduce (Megatron rule)");
  }
  return t;
}

Recompute parse_recompute(const json& v, const std::string& path) {
  if (!v.is_string()) fail("wrong_type", path, "expected \"none\", \"selective\" or \"full\"");
  const std::string s = v.get<std::string>();
  if (s == "none") return Recompute::kNone;
  if (s == "selective") return Recompute::kSelective;
  if (s == "full") return Recompute::kFull;
  fail("bad_value", path, "expected \"none\", \"selective\" or \"full\", got \"" + s + "\"");
}

SearchSpec read_search(const json& v, const std::string& path) {
  ObjectReader r(v, path);
  SearchSpec s;
  s.tp = r.get_int_choices("tp", 1, 1024);
  s.cp = r.get_int_choices("cp", 1, 1024);
  s.pp = r.get_int_choices("pp", 1, 1024);
  s.ep = r.get_int_choices("ep", 1, 8192);
  s.etp = r.get_int_choices("etp", 1, 1024);
  s.vpp = r.get_int_choices("vpp", 1, 64);
  s.micro_batch_size = r.get_int_choices("micro_batch_size", 1, 4096);
  if (r.has("recompute")) {
    const json& rv = r.raw("recompute");
    if (rv.is_array()) {
      if (rv.empty()) fail("bad_value", r.path("recompute"), "expected a non-empty list");
      for (size_t i = 0; i < rv.size(); ++i) s.recompute.push_back(parse_recompute(rv[i], index_path(r.path("recompute"), i)));
    } else {
      s.recompute.push_back(parse_recompute(rv, r.path("recompute")));
    }
  } else {
    r.ignore("recompute");
  }
  s.mode = r.get_enum("mode", {"megatron", "hetero"}, std::string("megatron")) == "hetero"
               ? SearchMode::kHetero : SearchMode::kMegatron;
  s.top_k = static_cast<int>(r.get_int("top_k", 1, 100, 5));
  if (r.has("layer_split")) {
    const json& ls = r.raw("layer_split");
    if (ls.is_string()) {
      if (ls.get<std::string>() != "auto") fail("bad_value", r.path("layer_split"), "expected \"auto\" or a list of layers per stage");
    } else if (ls.is_array() && !ls.empty()) {
      for (size_t i = 0; i < ls.size(); ++i) {
        s.layer_split.push_back(static_cast<int>(detail::as_int(ls[i], index_path(r.path("layer_split"), i), 1, 1024)));
      }
    } else {
      fail("wrong_type", r.path("layer_split"), "expected \"auto\" or a non-empty list of layers per stage");
    }
  } else {
    r.ignore("layer_split");
  }
  s.baselines = r.get_bool("baselines", true);
  r.finish();
  return s;
}

PlanSpec read_plan(const json& v, const std::string& path, const ClusterSpec& cluster) {
  ObjectReader r(v, path);
  PlanSpec p;
  p.tp = static_cast<int>(r.get_int("tp", 1, 1024, 1));
  p.cp = static_cast<int>(r.get_int("cp", 1, 1024, 1));
  p.pp = static_cast<int>(r.get_int("pp", 1, 1024, 1));
  p.dp = static_cast<int>(r.get_int("dp", 1, 1 << 20, std::nullopt));
  p.ep = static_cast<int>(r.get_int("ep", 1, 8192, 1));
  p.etp = static_cast<int>(r.get_int("etp", 1, 1024, 1));
  p.vpp = static_cast<int>(r.get_int("vpp", 1, 64, 1));
  p.micro_batch_size = static_cast<int>(r.get_int("micro_batch_size", 1, 4096, 1));
  p.sequence_parallel = r.get_bool("sequence_parallel", p.tp > 1);
  const json& stages = r.raw("stages");
  const std::string spath = r.path("stages");
  if (!stages.is_array()) fail("wrong_type", spath, "expected a list of stages");
  if (static_cast<int>(stages.size()) != p.pp) {
    fail("bad_value", spath, "expected one stage per pipeline rank (pp = " + std::to_string(p.pp) +
                                 "), got " + std::to_string(stages.size()));
  }
  for (size_t i = 0; i < stages.size(); ++i) {
    const std::string sp = index_path(spath, i);
    ObjectReader sr(stages[i], sp);
    StagePlan st;
    st.group = static_cast<int>(sr.get_int("group", 0, static_cast<long long>(cluster.groups.size()) - 1, 0));
    st.gpu = sr.get_string("gpu", cluster.groups[st.group].gpu.id);
    if (st.gpu != cluster.groups[st.group].gpu.id) {
      fail("bad_value", detail::join_path(sp, "gpu"),
           "expected \"" + cluster.groups[st.group].gpu.id + "\", the GPU of cluster group " +
               std::to_string(st.group));
    }
    st.layers = static_cast<int>(sr.get_int("layers", 0, 1024, std::nullopt));
    st.recompute = sr.has("recompute") ? parse_recompute(sr.raw("recompute"), detail::join_path(sp, "recompute"))
                                       : Recompute::kNone;
    sr.ignore("recompute");
    sr.finish();
    p.stages.push_back(st);
  }
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
    ObjectReader r(doc, "");
    const std::string fmt = r.get_string("format", std::string(kScenarioFormat));
    if (fmt != kScenarioFormat) {
      fail("bad_value", "format", std::string("expected \"") + kScenarioFormat + "\", got \"" + fmt + "\"");
    }
    Scenario s;
    s.model = read_model(r.raw("model"), "model", presets);
    s.cluster = read_cluster(r.raw("cluster"), "cluster", presets);
    s.training = read_training(r.raw("training"), "training");
    if (r.has("search")) s.search = read_search(r.raw("search"), "search");
    r.ignore("search");
    if (r.has("plan")) s.plan = read_plan(r.raw("plan"), "plan", s.cluster);
    r.ignore("plan");
    r.finish();
    return s;
  });
}

Expected<Scenario> parse_scenario(const std::string& text, const PresetCatalog& presets) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    try {
      (void)json::parse(text);
    } catch (const json::parse_error& e) {
      return Error{"bad_json", std::string("not valid JSON: ") + e.what(), "$"};
    }
    return Error{"bad_json", "not valid JSON", "$"};
  }
  return parse_scenario(doc, presets);
}

json plan_to_json(const PlanSpec& p) {
  json stages = json::array();
  for (const auto& s : p.stages) {
    stages.push_back({{"gpu", s.gpu}, {"group", s.group}, {"layers", s.layers},
                      {"recompute", to_string(s.recompute)}});
  }
  return {{"tp", p.tp}, {"cp", p.cp}, {"pp", p.pp}, {"dp", p.dp}, {"ep", p.ep},
          {"etp", p.etp}, {"vpp", p.vpp}, {"micro_batch_size", p.micro_batch_size},
          {"sequence_parallel", p.sequence_parallel}, {"stages", stages}};
}

}  // namespace hapmoe
