// presets/*.json: every preset parses, cites a public source (never a local file), GPU numbers
// are in physical ranges, and each model's parameter count matches what its publisher states.
// The published counts below are typed in from the cited model cards and papers, never computed.
#include "hapmoe/presets.hpp"

#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "hapmoe/model_shape.hpp"
#include "hapmoe/scenario_io.hpp"

namespace {

using nlohmann::json;

const hapmoe::PresetCatalog& presets() {
  static const hapmoe::PresetCatalog catalog = hapmoe::load_builtin_presets();
  return catalog;
}

// True when the text names a public source: a URL, an arXiv id, or a named public document
// (a datasheet / white paper, or a repository file such as aiconfigurator systems/b200_sxm.yaml).
bool cites_public_source(const std::string& s) {
  for (const char* marker : {"https://", "arXiv ", "datasheet", "data sheets", "white paper",
                             ".yaml", ".json", "README"}) {
    if (s.find(marker) != std::string::npos) return true;
  }
  return false;
}

// True when the text contains an absolute local path: a '/' that starts a token (URLs have
// "://" before their slashes, ratios such as "756 / 1,513" have a space after theirs).
bool cites_local_path(const std::string& s) {
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] != '/') continue;
    const bool token_start = i == 0 || s[i - 1] == ' ' || s[i - 1] == '(' || s[i - 1] == '\'';
    const unsigned char next = static_cast<unsigned char>(s[i + 1]);
    if (token_start && (std::isalnum(next) || next == '.' || next == '~')) return true;
  }
  return s.find("file:") != std::string::npos;
}

// GPU entries owned by another branch whose sources still end with the project's internal
// reference-table path; the lead removes that sentence at merge, then empties this list.
void check_sources(const char* kind, const json& entries) {
  for (const auto& [key, entry] : entries.items()) {
    const std::string id = key;  // clang 14 cannot capture a structured binding
    INFO((std::string(kind) + " " + id));
    REQUIRE(entry.contains("source"));
    const std::string source = entry["source"].get<std::string>();
    CHECK(source.size() > 40);
    CHECK(cites_public_source(source));
    CHECK_FALSE(cites_local_path(source));
  }
}

}  // namespace

TEST_CASE("the local-path detector") {
  CHECK(cites_local_path("see /srv/reference/hardware.md sec. 6"));
  CHECK(cites_local_path("(/opt/user/notes.md)"));
  CHECK(cites_local_path("file:///tmp/x.json"));
  CHECK_FALSE(cites_local_path("https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json"));
  CHECK_FALSE(cites_local_path("BF16 1,513 / 3,026 with sparsity, 8x400 Gb/s per node"));
  CHECK_FALSE(cites_public_source("from memory"));
  CHECK(cites_public_source("arXiv 2409.02060"));
}

namespace hapmoe::detail {
extern const char* const kPresetGpusJson;
extern const char* const kPresetModelsJson;
extern const char* const kPresetClustersJson;
}  // namespace hapmoe::detail

TEST_CASE("a preset section split without parsing holds exactly what a full parse of its file does") {
  const struct {
    const char* text;
    const char* section;
    const hapmoe::PresetSection& split;
  } files[] = {{hapmoe::detail::kPresetGpusJson, "gpus", presets().gpus},
               {hapmoe::detail::kPresetModelsJson, "models", presets().models},
               {hapmoe::detail::kPresetClustersJson, "clusters", presets().clusters}};
  for (const auto& f : files) {
    INFO("section ", f.section);
    const json full = json::parse(f.text).at(f.section);
    std::vector<std::string> keys;
    for (const auto& [key, value] : full.items()) keys.push_back(key);
    CHECK(f.split.ids() == keys);
    CHECK(f.split.size() == full.size());
    for (const auto& [key, value] : full.items()) {
      const json* got = f.split.find(key);
      REQUIRE(got != nullptr);
      CHECK(*got == value);
    }
    CHECK(f.split.all() == full);
    CHECK(f.split.find("no-such-preset") == nullptr);
    CHECK_THROWS_AS(f.split.at("no-such-preset"), json::out_of_range);
  }
}

TEST_CASE("the preset splitter reads nested values, strings with escapes and repeated ids") {
  const char* text = R"({"format": "x/1", "other": [1, {"a": "}"}], "gpus": {
    "a": {"s": "quote \" and brace } and \\", "n": [1, [2, {"k": null}]], "b": true},
    "b": {"x": -1.5e3},
    "a": {"last": 1}
  }, "tail": 0})";
  const hapmoe::PresetSection section(text, "gpus");
  CHECK(section.ids() == std::vector<std::string>{"a", "b"});
  CHECK(*section.find("a") == json::parse(R"({"last": 1})"));  // the last of a repeated id, as JSON parsers keep
  CHECK(section.at("b").at("x").get<double>() == -1500.0);
  CHECK(section.all() == json::parse(text).at("gpus"));
  CHECK_THROWS_AS(hapmoe::PresetSection(text, "models"), std::invalid_argument);
  CHECK_THROWS_AS(hapmoe::PresetSection(R"({"gpus": {"a": {"x": 1})", "gpus"), std::invalid_argument);
  CHECK_THROWS_AS(hapmoe::PresetSection(R"({"gpus": {"a": 1}})", "gpus"), std::invalid_argument);
}

TEST_CASE("every preset cites a public source and no local file") {
  const auto& catalog = presets();
  CHECK(catalog.gpus.size() >= 20);  // issue 10 item 12: at least 20 GPUs and 20 models
  CHECK(catalog.models.size() >= 20);
  check_sources("gpus", catalog.gpus.all());
  check_sources("models", catalog.models.all());
  for (const auto& [key, model] : catalog.models.all().items()) {
    const std::string id = key;  // clang 14 cannot capture a structured binding
    INFO("model ", id);
    const std::string source = model["source"].get<std::string>();
    const bool hf_config = source.find("https://huggingface.co/") != std::string::npos &&
                           source.find("config.json") != std::string::npos;
    const bool paper_only = source.find("arXiv") != std::string::npos;
    CHECK((hf_config || paper_only));
  }
  check_sources("clusters", catalog.clusters.all());
}

TEST_CASE("GPU presets parse and their numbers are physically plausible") {
  for (const auto& [key, entry] : presets().gpus.all().items()) {
    const std::string id = key;  // clang 14 cannot capture a structured binding
    INFO("gpu ", id);
    const auto parsed = hapmoe::parse_gpu(json(id), "gpu", presets());
    REQUIRE(parsed.ok());
    const hapmoe::GpuSpec& g = parsed.value();
    CHECK(g.memory_gib >= 16);
    CHECK(g.memory_gib <= 512);
    CHECK(g.bf16_tflops >= 100);  // dense tensor-core rate (V100's FP16 125 is the floor)
    CHECK(g.bf16_tflops <= 5000);
    if (g.fp8_tflops) {
      CHECK(*g.fp8_tflops >= g.bf16_tflops);
      CHECK(*g.fp8_tflops <= 2.05 * g.bf16_tflops);  // 4x would mean a sparse FP8 figure
    }
    CHECK(g.hbm_gbps >= 500);
    CHECK(g.hbm_gbps <= 20000);
    CHECK(g.intra_node_gbps >= 16);
    CHECK(g.intra_node_gbps <= 1000);  // one direction: NVLink5 is 900
    CHECK(g.inter_node_gbps >= 5);
    CHECK(g.inter_node_gbps <= 200);  // one direction: 1.6 Tb/s per GPU would be 200
    CHECK(g.gpus_per_node >= 1);
    CHECK(g.gpus_per_node <= 72);
    CHECK(g.reserved_memory_gib >= 1);
    CHECK(g.reserved_memory_gib <= 10);
  }
}

TEST_CASE("every cluster preset validates") {
  for (const auto& [key, entry] : presets().clusters.all().items()) {
    const std::string id = key;  // clang 14 cannot capture a structured binding
    INFO("cluster ", id);
    const json scenario = {{"format", hapmoe::kScenarioFormat},
                           {"model", "olmoe-1b-7b"},
                           {"cluster", id},
                           {"training", {{"global_batch_size", 256}, {"seq_length", 4096}}}};
    const auto parsed = hapmoe::parse_scenario(scenario, presets());
    CHECK_MESSAGE(parsed.ok(), (parsed.ok() ? std::string() : parsed.error().message));
  }
}

namespace {

// A publisher's parameter count and which parts its "active" figure includes. Publishers state
// counts without the MTP module (DeepSeek-V3 lists its 14B separately), so it is left out.
struct PublishedCount {
  const char* id;
  double total_b;   // billions
  double active_b;  // billions; 0 = not published
  bool active_has_input_embedding;
  bool active_has_output_layer;
  const char* source;
};

// clang-format off
const PublishedCount kPublished[] = {
  {"mixtral-8x7b", 46.7, 12.9, true, true, "Mistral AI, Mixtral of Experts, arXiv 2401.04088 (47B total, 13B active; HF card 46.7B)"},
  {"mixtral-8x22b", 141, 39, true, true, "Mistral AI announcement https://mistral.ai/news/mixtral-8x22b (141B total, 39B active)"},
  {"mixtral-l", 122, 0, true, true, "HAPMoE arXiv 2609.39350 sec. 5.1 (~122B)"},
  {"deepseek-v3", 671, 37, false, true, "DeepSeek-V3 report arXiv 2412.19437 (671B total, 37B activated; the 14B MTP module is excluded)"},
  {"qwen3-30b-a3b", 30.5, 3.3, true, true, "HF card https://huggingface.co/Qwen/Qwen3-30B-A3B (30.5B total, 3.3B activated)"},
  {"qwen3-235b-a22b", 235, 22, true, true, "HF card https://huggingface.co/Qwen/Qwen3-235B-A22B (235B total, 22B activated)"},
  {"gpt-oss-120b", 116.8, 5.1, false, true, "gpt-oss model card arXiv 2508.10925 (116.8B total, 5.1B active, embedding excluded)"},
  {"llama2-7b", 6.74, 6.74, true, true, "HF card https://huggingface.co/meta-llama/Llama-2-7b-hf (7B; 6.74B)"},
  {"llama2-13b", 13.0, 13.0, true, true, "HF card https://huggingface.co/meta-llama/Llama-2-13b-hf (13B)"},
  {"deepseek-v2", 236, 21, false, true, "DeepSeek-V2 paper arXiv 2405.04434 (236B total, 21B activated)"},
  {"deepseek-v2-lite", 15.7, 2.4, false, true, "DeepSeek-V2 paper arXiv 2405.04434, V2-Lite (15.7B total, 2.4B activated)"},
  {"kimi-k2", 1040, 32.6, true, true, "Kimi K2 report arXiv 2507.20534 (1.04T total, 32.6B activated)"},
  {"glm-4.5", 355, 32, false, false, "GLM-4.5 report arXiv 2508.06471 (355B total, 32B activated)"},
  {"glm-4.5-air", 106, 12, false, false, "GLM-4.5 report arXiv 2508.06471 (106B total, 12B activated)"},
  {"llama4-scout", 109, 17, true, true, "HF card https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E (109B total, 17B activated)"},
  {"llama4-maverick", 400, 17, true, true, "HF card https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E (400B total, 17B activated)"},
  {"olmoe-1b-7b", 6.9, 1.3, true, true, "OLMoE paper arXiv 2409.02060 (6.9B total, 1.3B active)"},
  {"dbrx", 132, 36, true, true, "https://www.databricks.com/blog/introducing-dbrx-new-state-art-open-llm (132B total, 36B active)"},
  {"gpt-oss-20b", 20.9, 3.6, false, true, "gpt-oss model card arXiv 2508.10925 (20.9B total, 3.6B active, embedding excluded)"},
  {"qwen2-57b-a14b", 57, 14, true, true, "Qwen2 report arXiv 2407.10671 (57B total, 14B activated)"},
  {"qwen1.5-moe-a2.7b", 14.3, 2.7, true, true, "https://qwenlm.github.io/blog/qwen-moe/ (14.3B total, 2.7B activated)"},
  {"phi-3.5-moe", 41.9, 6.6, true, true, "HF card https://huggingface.co/microsoft/Phi-3.5-MoE-instruct (41.9B total, 6.6B active)"},
};
// clang-format on

// Models with no published parameter count (a paper configuration that states none).
const std::set<std::string> kNoPublishedCount = {"mixtral-s"};

double relative_error(double ours, double published) { return std::fabs(ours / published - 1.0); }

}  // namespace

TEST_CASE("model parameter counts are within 3% of the published counts") {
  std::set<std::string> covered = kNoPublishedCount;
  for (const PublishedCount& p : kPublished) {
    INFO((std::string(p.id) + " - " + p.source));
    covered.insert(p.id);
    const auto parsed = hapmoe::parse_model(json(p.id), "model", presets());
    REQUIRE(parsed.ok());
    hapmoe::ModelSpec m = parsed.value();
    m.mtp_num_layers = 0;
    const hapmoe::ModelShape shape = hapmoe::derive_model_shape(m, 1);
    const double total_b = hapmoe::total_params(m, shape) / 1e9;
    INFO("total ", total_b, "B vs published ", p.total_b, "B");
    CHECK(relative_error(total_b, p.total_b) <= 0.03);
    if (p.active_b > 0) {
      double active = hapmoe::active_params(m, shape);
      if (!p.active_has_input_embedding) active -= shape.embedding_params;
      if (!p.active_has_output_layer) active -= shape.output_params;
      INFO("active ", active / 1e9, "B vs published ", p.active_b, "B");
      CHECK(relative_error(active / 1e9, p.active_b) <= 0.03);
    }
  }
  for (const auto& [key, model] : presets().models.all().items()) {
    const std::string id = key;  // clang 14 cannot capture a structured binding
    CHECK_MESSAGE(covered.count(id) == 1, "model preset without a published count: ", id);
  }
}
