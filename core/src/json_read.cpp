#include "json_read.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace hapmoe::detail {

void fail(std::string code, std::string field, std::string message) {
  throw InputFailure{Error{std::move(code), std::move(message), std::move(field)}};
}

std::string join_path(const std::string& base, const std::string& key) {
  return base.empty() ? key : base + "." + key;
}

std::string index_path(const std::string& base, size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

std::string json_type_name(const json& j) {
  if (j.is_number_integer() || j.is_number_unsigned()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_null()) return "null";
  if (j.is_array()) return "a list";
  return "an object";
}

namespace {
std::string fmt_num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

long long as_int(const json& v, const std::string& path, long long lo, long long hi) {
  double d = 0;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<unsigned long long>() > 9e15) {
      fail("out_of_range", path, "expected an integer from " + std::to_string(lo) + " to " +
                                     std::to_string(hi));
    }
    d = static_cast<double>(v.get<long long>());
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
             v.get<double>() == std::floor(v.get<double>())) {
    d = v.get<double>();
  } else {
    fail("wrong_type", path, "expected an integer, got " + json_type_name(v));
  }
  if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
    fail("out_of_range", path,
         "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
             ", got " + fmt_num(d));
  }
  return static_cast<long long>(d);
}

double as_number(const json& v, const std::string& path, double lo, double hi,
                 bool lo_exclusive) {
  if (!v.is_number()) fail("wrong_type", path, "expected a number, got " + json_type_name(v));
  const double d = v.get<double>();
  const bool below = lo_exclusive ? !(d > lo) : !(d >= lo);
  if (!std::isfinite(d) || below || d > hi) {
    fail("out_of_range", path,
         std::string("expected a number ") + (lo_exclusive ? "greater than " : "from ") +
             fmt_num(lo) + (lo_exclusive ? " and at most " : " to ") + fmt_num(hi) + ", got " +
             fmt_num(d));
  }
  return d;
}

namespace {
// Every field name of the scenario format: a key spelled like one of these is never a typo.
const std::set<std::string> kKnownFields = {
    "attention_efficiency", "baselines", "bf16_tflops", "cluster", "cp", "dp", "ep", "etp",
    "expert_host_us", "ffn_hidden_size", "format", "fp8_param_gather", "fp8_recipes",
    "fp8_gemm_speedup", "fp8_recipe", "alltoall_intra_node_efficiency",
    "alltoall_inter_node_efficiency", "assumed", "grad_reduce_in_bf16", "cuda_arch", "efficiency_source", "cuda_graphs", "generation",
    "host_link_gbps", "optimizer", "precision_aware", "main_grads_dtype", "main_params_dtype",
    "exp_avg_dtype", "exp_avg_sq_dtype", "fp8_tflops", "gemm_efficiency", "global_batch_size",
    "gpu", "gpus_per_node", "group", "grouped_gemm_half_tokens", "groups", "hbm_efficiency",
    "hbm_gbps", "hidden_size", "id", "inter_group_gbps", "inter_node_efficiency",
    "inter_node_gbps", "intra_node_efficiency", "intra_node_gbps", "kv_channels", "kv_lora_rank",
    "layer_host_us", "layer_split", "layers", "memory_gib", "micro_batch_size", "mode",
    "model", "moe_ffn_hidden_size", "moe_layer_freq", "moe_load_imbalance",
    "moe_router_group_topk", "moe_router_num_groups", "moe_router_topk",
    "moe_shared_expert_intermediate_size", "moe_token_dispatcher_type", "mtp_num_layers",
    "multi_latent_attention", "name", "nodes", "num_attention_heads", "num_experts",
    "num_layers", "num_query_groups", "overlap_grad_reduce", "overlap_moe_expert_parallel_comm",
    "overlap_param_gather", "plan", "pp", "precision", "preset", "q_lora_rank", "qk_head_dim",
    "qk_pos_emb_head_dim", "recompute", "reserved_memory_gib", "search", "seq_length",
    "sequence_parallel", "source", "stages", "swiglu", "top_k", "tp", "training",
    "untie_embeddings_and_output_weights", "use_distributed_optimizer", "v_head_dim", "vendor",
    "vocab_size", "vpp", "window_attn_skip_freq", "window_size"};

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

void ObjectReader::fail_missing(const char* key, const std::string& expected) const {
  // A missing required field is most often a typo: name the misspelt field instead.
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (!seen_.count(it.key()) && !kKnownFields.count(it.key()) && edit_distance(it.key(), key) <= 2) {
      fail("unknown_field", join_path(path_, it.key()),
           "unknown field \"" + it.key() + "\"; did you mean \"" + key + "\"?");
    }
  }
  fail("missing_field", path(key), "required: " + expected);
}

ObjectReader::ObjectReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
  if (!j_.is_object()) {
    fail("wrong_type", path_.empty() ? "$" : path_,
         "expected an object, got " + json_type_name(j_));
  }
}

bool ObjectReader::has(const char* key) const {
  auto it = j_.find(key);
  return it != j_.end() && !it->is_null();
}

const json& ObjectReader::raw(const char* key) {
  seen_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) fail_missing(key, "this field");
  return *it;
}

long long ObjectReader::get_int(const char* key, long long lo, long long hi,
                                std::optional<long long> def) {
  seen_.insert(key);
  if (!has(key)) {
    if (def) return *def;
    fail_missing(key, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return as_int(j_.at(key), path(key), lo, hi);
}

double ObjectReader::get_number(const char* key, double lo, double hi, std::optional<double> def,
                                bool lo_exclusive) {
  seen_.insert(key);
  if (!has(key)) {
    if (def) return *def;
    fail_missing(key, "a number");
  }
  return as_number(j_.at(key), path(key), lo, hi, lo_exclusive);
}

std::optional<double> ObjectReader::get_nullable_number(const char* key, double lo, double hi,
                                                        bool lo_exclusive) {
  seen_.insert(key);
  if (!has(key)) return std::nullopt;
  return as_number(j_.at(key), path(key), lo, hi, lo_exclusive);
}

std::optional<long long> ObjectReader::get_nullable_int(const char* key, long long lo,
                                                        long long hi) {
  seen_.insert(key);
  if (!has(key)) return std::nullopt;
  return as_int(j_.at(key), path(key), lo, hi);
}

bool ObjectReader::get_bool(const char* key, std::optional<bool> def) {
  seen_.insert(key);
  if (!has(key)) {
    if (def) return *def;
    fail_missing(key, "true or false");
  }
  const json& v = j_.at(key);
  if (!v.is_boolean()) fail("wrong_type", path(key), "expected true or false, got " + json_type_name(v));
  return v.get<bool>();
}

std::string ObjectReader::get_string(const char* key, std::optional<std::string> def) {
  seen_.insert(key);
  if (!has(key)) {
    if (def) return *def;
    fail_missing(key, "a string");
  }
  const json& v = j_.at(key);
  if (!v.is_string()) fail("wrong_type", path(key), "expected a string, got " + json_type_name(v));
  return v.get<std::string>();
}

std::string ObjectReader::get_enum(const char* key, std::initializer_list<const char*> allowed,
                                   std::optional<std::string> def) {
  std::string choices;
  for (const char* a : allowed) choices += (choices.empty() ? "\"" : ", \"") + std::string(a) + "\"";
  seen_.insert(key);
  if (!has(key) && !def) fail_missing(key, "one of " + choices);
  const std::string s = get_string(key, def);
  for (const char* a : allowed) {
    if (s == a) return s;
  }
  fail("bad_value", path(key), "expected one of " + choices + ", got \"" + s + "\"");
}

std::vector<int> ObjectReader::get_int_choices(const char* key, long long lo, long long hi) {
  seen_.insert(key);
  std::vector<int> out;
  if (!has(key)) return out;
  const json& v = j_.at(key);
  if (v.is_array()) {
    if (v.empty()) fail("bad_value", path(key), "expected a non-empty list of integers");
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back(static_cast<int>(as_int(v[i], index_path(path(key), i), lo, hi)));
    }
  } else {
    out.push_back(static_cast<int>(as_int(v, path(key), lo, hi)));
  }
  return out;
}

void ObjectReader::finish() const {
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (!seen_.count(it.key())) {
      fail("unknown_field", join_path(path_, it.key()),
           "unknown field \"" + it.key() + "\" (check the spelling against SCENARIO.md)");
    }
  }
}

}  // namespace hapmoe::detail
