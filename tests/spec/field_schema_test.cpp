// field_schema.hpp: the table is sane (unique paths, defaults in range, enums non-empty), it and
// the parser agree in both directions (every table field is read, every field read is in the
// table), each bound rejects with the field named, and specs.hpp's member initialisers equal the
// table's defaults.
#include "hapmoe/field_schema.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "hapmoe/presets.hpp"
#include "hapmoe/scenario_io.hpp"

namespace {

using hapmoe::DefaultKind;
using hapmoe::FieldDef;
using hapmoe::FieldType;
using nlohmann::json;

const hapmoe::PresetCatalog& presets() {
  static const hapmoe::PresetCatalog catalog = hapmoe::load_builtin_presets();
  return catalog;
}

// A valid scenario in which every object the table describes is present as an object, so a
// field set in it is read by the parser (model and GPU start from presets).
json full_doc() {
  return {
      {"format", "hapmoe.scenario/1"},
      {"model", {{"preset", "mixtral-8x7b"}}},
      {"cluster", {{"groups", json::array({{{"gpu", {{"preset", "h100-sxm"}}}, {"nodes", 2}}})}}},
      {"training", {{"global_batch_size", 256}, {"seq_length", 4096}}},
      {"search", json::object()},
      {"plan",
       {{"tp", 2},
        {"pp", 2},
        {"dp", 4},
        {"ep", 8},
        {"stages", json::array({{{"layers", 16}}, {{"layers", 16}}})}}}};
}

// JSON pointer of a table pattern inside full_doc ("[]" -> first element).
json::json_pointer pointer_of(const std::string& pattern) {
  std::string ptr;
  std::string part;
  auto flush = [&] {
    if (part.empty()) return;
    const bool list = part.size() > 2 && part.compare(part.size() - 2, 2, "[]") == 0;
    ptr += "/" + (list ? part.substr(0, part.size() - 2) + "/0" : part);
    part.clear();
  };
  for (char c : pattern) {
    if (c == '.')
      flush();
    else
      part += c;
  }
  flush();
  return json::json_pointer(ptr);
}

// The concrete error path full_doc reports for a pattern.
std::string concrete(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    out += pattern[i];
    if (pattern[i] == '[' && i + 1 < pattern.size() && pattern[i + 1] == ']') out += '0';
  }
  return out;
}

bool is_leaf(const FieldDef& f) {
  return f.type != FieldType::kSpec && f.type != FieldType::kObject &&
         f.type != FieldType::kObjectList;
}

// Fields the preset merge owns: "preset" is consumed and "id" is replaced by the preset id.
bool preset_owned(const std::string& path) {
  const std::string last = path.substr(path.rfind('.') + 1);
  return last == "preset" || last == "id";
}

void expect_rejected(const json& doc, const std::string& code, const std::string& field) {
  const auto r = hapmoe::parse_scenario(doc, presets());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code);
  CHECK(r.error().field == field);
  CHECK_FALSE(r.error().message.empty());
}

}  // namespace

TEST_CASE("field table sanity") {
  std::set<std::string> paths;
  for (size_t i = 0; i < hapmoe::field_count(); ++i) {
    const FieldDef& f = hapmoe::field_table()[i];
    CAPTURE(f.path);
    CHECK(paths.insert(f.path).second);  // unique
    CHECK(std::string(f.help).size() > 10);
    CHECK(hapmoe::find_field(f.path) == &f);
    if (hapmoe::has_range(f)) {
      CHECK(f.min <= f.max);
      CHECK(std::isfinite(f.max));
    }
    if (f.type == FieldType::kEnum || f.type == FieldType::kEnumChoices || f.type == FieldType::kEnumList)
      CHECK(f.allowed[0] != '\0');
    if (f.type == FieldType::kInt || f.type == FieldType::kNumber) {
      if (f.default_kind == DefaultKind::kValue) {
        CHECK(f.default_number >= f.min);
        CHECK(f.default_number <= f.max);
      }
    }
    if (f.default_kind == DefaultKind::kValue && f.type == FieldType::kEnum) {
      const std::string allowed = std::string("|") + f.allowed + "|";
      CHECK(allowed.find(std::string("|") + f.default_text + "|") != std::string::npos);
    }
    if (f.default_kind == DefaultKind::kDerived) CHECK(f.default_text[0] != '\0');
    // Every parent object of a field is itself in the table.
    const std::string p = f.path;
    const size_t dot = p.rfind('.');
    if (dot != std::string::npos) {
      std::string parent = p.substr(0, dot);
      if (parent.size() > 2 && parent.compare(parent.size() - 2, 2, "[]") == 0)
        parent.resize(parent.size() - 2);
      CHECK(hapmoe::find_field(parent) != nullptr);
    }
  }
  CHECK(hapmoe::field_pattern("cluster.groups[12].gpu.memory_gib") ==
        "cluster.groups[].gpu.memory_gib");
  CHECK(hapmoe::is_known_field_name("num_layers"));
  CHECK_FALSE(hapmoe::is_known_field_name("num_layer"));
}

TEST_CASE("every table field is read by the parser, and nothing else is") {
  REQUIRE(hapmoe::parse_scenario(full_doc(), presets()).ok());
  // A value of the wrong JSON type in each field is reported at that field: the parser reads
  // it (a field it did not read would be an unknown_field error, and a field it reads without
  // a table row is an internal error).
  for (size_t i = 0; i < hapmoe::field_count(); ++i) {
    const FieldDef& f = hapmoe::field_table()[i];
    if (!is_leaf(f) || preset_owned(f.path)) continue;
    CAPTURE(f.path);
    json d = full_doc();
    d[pointer_of(f.path)] = json::object({{"x", 1}});
    if (f.type == FieldType::kRecompute || f.type == FieldType::kRecomputeChoices) {
      // An object is a recompute value's {"modules": [...]} form: the list is missing.
      expect_rejected(d, "missing_field", concrete(f.path) + ".modules");
      continue;
    }
    expect_rejected(d, "wrong_type", concrete(f.path));
  }
  // A field outside the table is rejected by name.
  json d = full_doc();
  d["training"]["global_batch"] = 3;
  expect_rejected(d, "unknown_field", "training.global_batch");
}

TEST_CASE("each bound rejects with the field named") {
  for (size_t i = 0; i < hapmoe::field_count(); ++i) {
    const FieldDef& f = hapmoe::field_table()[i];
    const bool scalar = f.type == FieldType::kInt || f.type == FieldType::kNumber ||
                        f.type == FieldType::kIntChoices;
    if (!scalar) continue;
    CAPTURE(f.path);
    const double step = f.type == FieldType::kNumber ? std::max(f.min * 0.5, 1e-3) : 1;
    for (const double bad : {f.min - step, f.max + (f.type == FieldType::kNumber ? f.max : 1)}) {
      CAPTURE(bad);
      json d = full_doc();
      d[pointer_of(f.path)] =
          f.type == FieldType::kNumber ? json(bad) : json(static_cast<long long>(bad));
      expect_rejected(d, "out_of_range", concrete(f.path));
    }
    // The bounds themselves are accepted by the field (other rules may still object).
    json d = full_doc();
    d[pointer_of(f.path)] =
        f.type == FieldType::kNumber ? json(f.max) : json(static_cast<long long>(f.max));
    const auto r = hapmoe::parse_scenario(d, presets());
    if (!r.ok()) CHECK(r.error().code != "wrong_type");
  }
  // Layer split entries and the tiny positive values of the hardening report.
  json d = full_doc();
  d["search"]["layer_split"] = {16, 0};
  expect_rejected(d, "out_of_range", "search.layer_split[1]");
  d = full_doc();
  d["cluster"]["groups"][0]["gpu"]["bf16_tflops"] = 5e-324;
  expect_rejected(d, "out_of_range", "cluster.groups[0].gpu.bf16_tflops");
  d = full_doc();
  d["cluster"]["inter_group_gbps"] = 5e-324;
  expect_rejected(d, "out_of_range", "cluster.inter_group_gbps");
}

TEST_CASE("numbers beyond double range are bad JSON, not internal errors") {
  const auto r = hapmoe::parse_scenario(
      std::string(
          R"({"model": "mixtral-8x7b", "cluster": "16-1", "training": )"
          R"({"global_batch_size": 256, "seq_length": 4096, "moe_load_imbalance": 1e999}})"),
      presets());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "bad_json");
  CHECK(r.error().field == "$");
}

TEST_CASE("enum fields reject values outside the allowed list") {
  for (size_t i = 0; i < hapmoe::field_count(); ++i) {
    const FieldDef& f = hapmoe::field_table()[i];
    if (f.type != FieldType::kEnum && f.type != FieldType::kEnumChoices) continue;
    CAPTURE(f.path);
    json d = full_doc();
    d[pointer_of(f.path)] = "no-such-value";
    expect_rejected(d, "bad_value", concrete(f.path));
  }
}

TEST_CASE("lists tied to the model and repeated search values") {
  json d = full_doc();
  d["model"]["moe_layer_freq"] = json::array({1, 0, 1});  // mixtral-8x7b has 32 layers
  expect_rejected(d, "bad_value", "model.moe_layer_freq");
  d = full_doc();
  d["search"]["layer_split"] = std::vector<int>(33, 1);  // more stages than layers
  expect_rejected(d, "bad_value", "search.layer_split");

  d = full_doc();
  d["search"] = {{"tp", {1, 1, 2, 1}}, {"recompute", {"full", "none", "full"}}};
  const auto r = hapmoe::parse_scenario(d, presets());
  REQUIRE(r.ok());
  CHECK(r->search.tp == std::vector<int>{1, 2});
  CHECK(r->search.recompute ==
        std::vector<hapmoe::Recompute>{hapmoe::Recompute::kFull, hapmoe::Recompute::kNone});
}

TEST_CASE("heads x head dimension is checked in 64 bits") {
  // 4096 heads x (2^20 + 2^20) = 2^33: wraps to 0 in 32 bits, so only a 64-bit product sees it.
  json d = full_doc();
  d["model"].update({{"num_attention_heads", 4096},
                     {"num_query_groups", 4096},
                     {"multi_latent_attention", true},
                     {"kv_lora_rank", 512},
                     {"qk_head_dim", 1 << 20},
                     {"qk_pos_emb_head_dim", 1 << 20},
                     {"v_head_dim", 128}});
  expect_rejected(d, "out_of_range", "model.num_attention_heads");
  d = full_doc();
  d["model"].update(
      {{"num_attention_heads", 4096}, {"num_query_groups", 4096}, {"kv_channels", 512}});
  expect_rejected(d, "out_of_range", "model.num_attention_heads");  // 2^21 > 2^20
}

TEST_CASE("specs.hpp member initialisers equal the table defaults") {
  auto num = [](const char* path) {
    const FieldDef* f = hapmoe::find_field(path);
    REQUIRE(f != nullptr);
    REQUIRE(f->default_kind == DefaultKind::kValue);
    return f->default_number;
  };
  auto text = [](const char* path) {
    const FieldDef* f = hapmoe::find_field(path);
    REQUIRE(f != nullptr);
    REQUIRE(f->default_kind == DefaultKind::kValue);
    return std::string(f->default_text);
  };
  const std::string gpu = "cluster.groups[].gpu.";
  const hapmoe::GpuSpec g;
  CHECK(g.gpus_per_node == num((gpu + "gpus_per_node").c_str()));
  CHECK(g.reserved_memory_gib == num((gpu + "reserved_memory_gib").c_str()));
  CHECK(g.host_link_gbps == num((gpu + "host_link_gbps").c_str()));
  CHECK(g.fp8_recipes.empty());
  CHECK(g.cuda_arch == num((gpu + "cuda_arch").c_str()));
  CHECK(g.gemm_efficiency == num((gpu + "gemm_efficiency").c_str()));
  CHECK(g.fp8_gemm_speedup == num((gpu + "fp8_gemm_speedup").c_str()));
  CHECK(g.attention_efficiency == num((gpu + "attention_efficiency").c_str()));
  CHECK(g.grouped_gemm_half_tokens == num((gpu + "grouped_gemm_half_tokens").c_str()));
  CHECK(g.host_launch_us == num((gpu + "host_launch_us").c_str()));
  CHECK(g.error_fraction == num((gpu + "error_fraction").c_str()));
  CHECK(g.alltoall_intra_node_efficiency == num((gpu + "alltoall_intra_node_efficiency").c_str()));
  CHECK(g.alltoall_inter_node_efficiency == num((gpu + "alltoall_inter_node_efficiency").c_str()));
  CHECK(g.hbm_efficiency == num((gpu + "hbm_efficiency").c_str()));
  CHECK(g.intra_node_efficiency == num((gpu + "intra_node_efficiency").c_str()));
  CHECK(g.inter_node_efficiency == num((gpu + "inter_node_efficiency").c_str()));

  const hapmoe::ModelSpec m;
  CHECK(m.swiglu == (num("model.swiglu") != 0));
  CHECK(m.untie_embeddings_and_output_weights ==
        (num("model.untie_embeddings_and_output_weights") != 0));
  CHECK(m.num_experts == num("model.num_experts"));
  CHECK(m.multi_latent_attention == (num("model.multi_latent_attention") != 0));
  CHECK(m.normalization == text("model.normalization"));
  CHECK(m.norm_epsilon == num("model.norm_epsilon"));
  CHECK(m.position_embedding_type == text("model.position_embedding_type"));
  CHECK(m.rotary_base == num("model.rotary_base"));
  CHECK(m.rotary_percent == num("model.rotary_percent"));
  CHECK(m.qk_layernorm == (num("model.qk_layernorm") != 0));
  CHECK(m.add_bias_linear == (num("model.add_bias_linear") != 0));
  CHECK(m.add_qkv_bias == (num("model.add_qkv_bias") != 0));
  CHECK(m.quick_geglu == (num("model.quick_geglu") != 0));
  CHECK(m.glu_linear_offset == num("model.glu_linear_offset"));
  CHECK(m.softmax_type == text("model.softmax_type"));
  CHECK(m.moe_router_score_function == text("model.moe_router_score_function"));
  CHECK(m.moe_router_pre_softmax == (num("model.moe_router_pre_softmax") != 0));
  CHECK(m.moe_router_enable_expert_bias == (num("model.moe_router_enable_expert_bias") != 0));
  CHECK(m.moe_router_load_balancing_type == text("model.moe_router_load_balancing_type"));
  CHECK(m.moe_aux_loss_coeff == num("model.moe_aux_loss_coeff"));
  CHECK(m.moe_shared_expert_gate == (num("model.moe_shared_expert_gate") != 0));
  CHECK(m.mtp_loss_scaling_factor == num("model.mtp_loss_scaling_factor"));
  CHECK(m.tokenizer_model == text("model.tokenizer_model"));

  const hapmoe::TrainingSpec t;
  CHECK(hapmoe::to_string(t.precision) == text("training.precision"));
  CHECK(t.use_distributed_optimizer == (num("training.use_distributed_optimizer") != 0));
  CHECK(hapmoe::to_string(t.moe_token_dispatcher_type) ==
        text("training.moe_token_dispatcher_type"));
  CHECK(t.moe_load_imbalance == num("training.moe_load_imbalance"));
  CHECK(t.overlap_grad_reduce == (num("training.overlap_grad_reduce") != 0));
  CHECK(t.overlap_param_gather == (num("training.overlap_param_gather") != 0));
  CHECK(t.fp8_param_gather == (num("training.fp8_param_gather") != 0));
  CHECK_FALSE(t.cuda_graph_impl.has_value());  // unset = searched
  CHECK(num("training.cuda_graphs") == 0);    // its deprecated spelling is off by default
  CHECK(hapmoe::to_string(t.moe_flex_dispatcher_backend) == text("training.moe_flex_dispatcher_backend"));
  CHECK(t.moe_pad_expert_input_to_capacity == (num("training.moe_pad_expert_input_to_capacity") != 0));
  CHECK(t.moe_paged_stash == (num("training.moe_paged_stash") != 0));
  CHECK(t.fp8_dot_product_attention == (num("training.fp8_dot_product_attention") != 0));
  CHECK(t.grad_reduce_in_bf16 == (num("training.grad_reduce_in_bf16") != 0));
  CHECK(t.optimizer.precision_aware == (num("training.optimizer.precision_aware") != 0));
  CHECK(t.optimizer.main_grads_dtype == text("training.optimizer.main_grads_dtype"));
  CHECK(t.optimizer.exp_avg_dtype == text("training.optimizer.exp_avg_dtype"));

  const hapmoe::SearchSpec s;
  CHECK(hapmoe::to_string(s.mode) == text("search.mode"));
  CHECK(s.top_k == num("search.top_k"));
  CHECK(s.baselines == (num("search.baselines") != 0));

  const hapmoe::PlanSpec p;
  for (auto [v, field_path] : {std::pair<int, const char*>{p.tp, "plan.tp"},
                         {p.cp, "plan.cp"},
                         {p.pp, "plan.pp"},
                         {p.ep, "plan.ep"},
                         {p.etp, "plan.etp"},
                         {p.vpp, "plan.vpp"},
                         {p.micro_batch_size, "plan.micro_batch_size"},
                         {hapmoe::StagePlan{}.group, "plan.stages[].group"}}) {
    const char* path = field_path;  // clang 14 cannot capture a structured binding
    CAPTURE(path);
    CHECK(v == num(path));
  }
  CHECK(hapmoe::to_string(hapmoe::StagePlan{}.recompute) == text("plan.stages[].recompute"));
}

TEST_CASE("schema JSON carries every row") {
  const json s = hapmoe::schema_to_json();
  CHECK(s["format"] == "hapmoe.schema/1");
  CHECK(s["scenario_format"] == hapmoe::kScenarioFormat);
  REQUIRE(s["fields"].size() == hapmoe::field_count());
  const json& layers =
      s["fields"]
       [static_cast<size_t>(hapmoe::find_field("model.num_layers") - hapmoe::field_table())];
  CHECK(layers["path"] == "model.num_layers");
  CHECK(layers["type"] == "int");
  CHECK(layers["min"] == 1);
  CHECK(layers["default_kind"] == "required");
  const json& prec =
      s["fields"]
       [static_cast<size_t>(hapmoe::find_field("training.precision") - hapmoe::field_table())];
  CHECK(prec["allowed"] == json::array({"bf16", "fp8"}));
  CHECK(prec["default"] == "bf16");
}

TEST_CASE("derived defaults do what the table's text says") {
  // A custom MoE model with only the required fields.
  json d = full_doc();
  d["model"] = {{"num_layers", 4},     {"hidden_size", 1024}, {"num_attention_heads", 8},
                {"vocab_size", 32000}, {"num_experts", 8},    {"ffn_hidden_size", 2048}};
  d.erase("plan");
  const auto r = hapmoe::parse_scenario(d, presets());
  REQUIRE(r.ok());
  CHECK(std::string(hapmoe::find_field("model.num_query_groups")->default_text) ==
        "num_attention_heads (MHA)");
  CHECK(r->model.num_query_groups == 8);
  CHECK(std::string(hapmoe::find_field("model.moe_router_topk")->default_text) ==
        "2 when num_experts > 0, else 0");
  CHECK(r->model.moe_router_topk == 2);
  CHECK(r->model.moe_ffn_hidden_size == 2048);  // "ffn_hidden_size when num_experts > 0"
  CHECK(r->model.moe_layer_freq == std::vector<int>(4, 1));
  CHECK(r->model.id == "custom");
  CHECK(r->cluster.groups[0].gpus_per_node == r->cluster.groups[0].gpu.gpus_per_node);
  CHECK(r->cluster.groups[0].inter_node_gbps == r->cluster.groups[0].gpu.inter_node_gbps);
}
