// profile_io.hpp and the profile hook in the cost model: errors name the field; measured points
// replace a layer's compute and mark the stage; a profile without points changes no result.
#include "io/profile_io.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api.hpp"
#include "hapmoe/evaluate.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/model_shape.hpp"
#include "hapmoe/scenario_io.hpp"
#include "spec/profile_check.hpp"

namespace {

using nlohmann::json;

const hapmoe::PresetCatalog& presets() {
  static const hapmoe::PresetCatalog catalog = hapmoe::load_builtin_presets();
  return catalog;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

json c3_with_profile(const json& profile) {
  json d = json::parse(read_text(std::string(HAPMOE_SOURCE_DIR) + "/examples/c3-qwen3-30b-a3b-h100-16.json"));
  d["profile"] = profile;
  return d;
}

json moe_point(double fwd_ms, double bwd_ms) {
  return {{"kind", "moe"}, {"ep", 8}, {"seq_length", 4096}, {"forward_ms", fwd_ms}, {"backward_ms", bwd_ms}};
}

void expect_error(const json& profile, const std::string& code, const std::string& field) {
  const auto s = hapmoe::parse_scenario(c3_with_profile(profile), presets());
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == code);
  CHECK(s.error().field == field);
}

}  // namespace

TEST_CASE("profile parsing: errors name the field") {
  const json ok = {{"gpus", {{"h100-sxm", {{"layers", json::array({moe_point(9, 18)})}}}}}};
  REQUIRE(hapmoe::parse_scenario(c3_with_profile(ok), presets()).ok());
  json p = ok;
  p["gpus"]["h100-sxm"]["layers"][0]["kind"] = "attention";
  expect_error(p, "bad_value", "profile.gpus.h100-sxm.layers[0].kind");
  p = ok;
  p["gpus"]["h100-sxm"]["layers"][0]["forward_ms"] = 0;
  expect_error(p, "out_of_range", "profile.gpus.h100-sxm.layers[0].forward_ms");
  p = ok;
  p["gpus"]["h100-sxm"]["layers"][0]["tpp"] = 2;
  expect_error(p, "unknown_field", "profile.gpus.h100-sxm.layers[0].tpp");
  p = ok;
  p["gpus"]["h100-sxm"]["layers"][0].erase("seq_length");
  expect_error(p, "missing_field", "profile.gpus.h100-sxm.layers[0].seq_length");
  p = ok;
  p["gpus"]["h100-sxm"]["collectives"] = json::array(
      {{{"op", "all_to_all"}, {"ranks", 1}, {"placement", "intra_node"}, {"bytes", 1024}, {"busbw_gbps", 10}}});
  expect_error(p, "out_of_range", "profile.gpus.h100-sxm.collectives[0].ranks");
  p = ok;
  p["gpus"]["a100-sxm"] = json::object();
  expect_error(p, "bad_value", "profile.gpus.a100-sxm");
  p = ok;
  p["gpus"]["h100-sxm"]["layers"] = json::array();
  for (size_t i = 0; i <= hapmoe::kMaxProfileLayerPoints; ++i) p["gpus"]["h100-sxm"]["layers"].push_back(moe_point(9, 18));
  expect_error(p, "too_many", "profile.gpus.h100-sxm.layers");
}

TEST_CASE("profile points: bounds that keep every term finite, one measurement per point") {
  const json coll = {{"op", "all_to_all"}, {"ranks", 8}, {"placement", "intra_node"}, {"bytes", 1048576}, {"busbw_gbps", 40}};
  auto with_colls = [](const json& list) { return json{{"gpus", {{"h100-sxm", {{"collectives", list}}}}}}; };
  REQUIRE(hapmoe::parse_scenario(c3_with_profile(with_colls(json::array({coll}))), presets()).ok());
  // A denormal bus bandwidth made every collective time infinite (nulls in the result).
  json c = coll;
  c["busbw_gbps"] = 5e-324;
  expect_error(with_colls(json::array({c})), "out_of_range", "profile.gpus.h100-sxm.collectives[0].busbw_gbps");
  c["busbw_gbps"] = 0.0009;
  expect_error(with_colls(json::array({c})), "out_of_range", "profile.gpus.h100-sxm.collectives[0].busbw_gbps");
  c = coll;
  c["bytes"] = 0.5;
  expect_error(with_colls(json::array({c})), "out_of_range", "profile.gpus.h100-sxm.collectives[0].bytes");
  json layers = {{"gpus", {{"h100-sxm", {{"layers", json::array({moe_point(1e-7, 18)})}}}}}};
  expect_error(layers, "out_of_range", "profile.gpus.h100-sxm.layers[0].forward_ms");
  // The same point twice: the same values are one measurement; other values are refused.
  REQUIRE(hapmoe::parse_scenario(c3_with_profile(with_colls(json::array({coll, coll}))), presets()).ok());
  c = coll;
  c["busbw_gbps"] = 4;
  expect_error(with_colls(json::array({coll, c})), "conflicting_points", "profile.gpus.h100-sxm.collectives[1]");
  c["busbw_gbps"] = 40;
  c["bytes"] = 2097152;  // another size: another point
  REQUIRE(hapmoe::parse_scenario(c3_with_profile(with_colls(json::array({coll, c}))), presets()).ok());
  layers["gpus"]["h100-sxm"]["layers"] = json::array({moe_point(9, 18), moe_point(9, 18), moe_point(9, 20)});
  expect_error(layers, "conflicting_points", "profile.gpus.h100-sxm.layers[2]");
  json other_seq = moe_point(9, 20);
  other_seq["seq_length"] = 2048;  // another shape
  layers["gpus"]["h100-sxm"]["layers"] = json::array({moe_point(9, 18), other_seq});
  REQUIRE(hapmoe::parse_scenario(c3_with_profile(layers), presets()).ok());
}

TEST_CASE("a layer point faster than the GPU's peak allows is refused") {
  // Qwen3-30B-A3B MoE layer, ep 8, 4096 tokens: 2 x (attention + 8 experts) x 4096 FLOPs at least.
  const auto s = hapmoe::parse_scenario(c3_with_profile(nullptr), presets());
  REQUIRE(s.ok());
  hapmoe::LayerPoint p;
  p.ep = 8;
  p.seq_length = 4096;
  const hapmoe::ModelShape shape = hapmoe::derive_model_shape(s->model, 1);
  const double flops = 2 * 4096 * (shape.attention_gemm_params + s->model.moe_router_topk * shape.expert_params +
                                   shape.shared_expert_params);
  const hapmoe::GpuSpec& h100 = s->cluster.groups[0].gpu;
  const double peak = std::max(h100.bf16_tflops, h100.fp8_tflops.value_or(0)) * 1e12;
  CHECK(hapmoe::least_layer_forward_s(s->model, p, peak) == doctest::Approx(flops / peak));
  p.tp = 2;  // the tokens' tp x cp shard
  CHECK(hapmoe::least_layer_forward_s(s->model, p, peak) == doctest::Approx(flops / peak / 2));
  const double least_ms = flops / peak * 1e3;
  json fast = {{"gpus", {{"h100-sxm", {{"layers", json::array({moe_point(0.9 * least_ms, 18)})}}}}}};
  expect_error(fast, "implausible_point", "profile.gpus.h100-sxm.layers[0].forward_ms");
  fast["gpus"]["h100-sxm"]["layers"][0] = moe_point(1.1 * least_ms, 1.9 * least_ms);  // backward: twice the GEMMs
  expect_error(fast, "implausible_point", "profile.gpus.h100-sxm.layers[0].backward_ms");
  fast["gpus"]["h100-sxm"]["layers"][0] = moe_point(1.1 * least_ms, 2.1 * least_ms);
  CHECK(hapmoe::parse_scenario(c3_with_profile(fast), presets()).ok());
}

TEST_CASE("profile round-trips through JSON") {
  const json ok = {{"gpus",
                    {{"h100-sxm",
                      {{"layers", json::array({moe_point(9, 18)})},
                       {"collectives", json::array({{{"op", "all_gather"}, {"ranks", 8}, {"placement", "intra_node"},
                                                     {"bytes", 1048576}, {"busbw_gbps", 120.5}}})},
                       {"source", "test"}}}}}};
  const auto s = hapmoe::parse_scenario(c3_with_profile(ok), presets());
  REQUIRE(s.ok());
  const json back = hapmoe::profile_to_json(s->profile);
  const auto again = hapmoe::parse_profile(back, "profile", s->cluster);
  REQUIRE(again.ok());
  CHECK(hapmoe::profile_to_json(again.value()) == back);
  CHECK(back["gpus"]["h100-sxm"]["collectives"][0]["busbw_gbps"] == 120.5);
}

TEST_CASE("measured MoE layer time replaces the analytical one and is marked") {
  const auto s = hapmoe::parse_scenario(
      c3_with_profile({{"gpus", {{"h100-sxm", {{"layers", json::array({moe_point(9.1, 18.7)})}}}}}}), presets());
  REQUIRE(s.ok());
  const auto ev = hapmoe::evaluate_plan(s.value(), *s->plan);
  REQUIRE(ev.ok());
  const hapmoe::StageCost& last = ev->stages.back();  // 24 MoE layers (+ output layer, analytical)
  const auto base = hapmoe::parse_scenario(c3_with_profile(nullptr), presets());
  const auto ev0 = hapmoe::evaluate_plan(base.value(), *base->plan);
  const hapmoe::StageCost& last0 = ev0->stages.back();
  // The stage's layers are all MoE: the difference is the layers' measured - analytical time.
  const hapmoe::ModelShape shape = hapmoe::derive_model_shape(base->model, 1);
  const hapmoe::StageCostModel analytical(base.value(), shape, hapmoe::mesh_of(*base->plan), 0);
  CHECK(last.forward_s - last0.forward_s == doctest::Approx(24 * (9.1e-3 - analytical.layer(30).fwd_s)));
  CHECK(last.backward_s - last0.backward_s == doctest::Approx(24 * (18.7e-3 - analytical.layer(30).bwd_s)));
  CHECK(last.measured_terms == (hapmoe::kTermForward | hapmoe::kTermBackward));
  CHECK(last.extrapolated_terms == 0);
  CHECK(last0.measured_terms == 0);
  const json result = json::parse(hapmoe::api::evaluate(c3_with_profile(
      {{"gpus", {{"h100-sxm", {{"layers", json::array({moe_point(9.1, 18.7)})}}}}}}).dump()));
  CHECK(result["plans"][0]["breakdown"]["stages"][1]["measured"] == json::array({"forward_s", "backward_s"}));
  CHECK_FALSE(result["plans"][0]["breakdown"]["stages"][1].contains("extrapolated"));
}

TEST_CASE("a profile without points leaves every example's result byte-identical") {
  const std::string dir = std::string(HAPMOE_SOURCE_DIR) + "/examples";
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() >= 5);
  for (const std::string& name : names) {
    CAPTURE(name);
    const json doc = json::parse(read_text(dir + "/" + name));
    const auto s = hapmoe::parse_scenario(doc, presets());
    REQUIRE(s.ok());
    json with = doc;
    for (const auto& g : s->cluster.groups) with["profile"]["gpus"][g.gpu.id] = json::object();
    if (doc.contains("plan")) {
      CHECK(hapmoe::api::evaluate(doc.dump()) == hapmoe::api::evaluate(with.dump()));
    } else if (name == "mixtral-s-16-1.json") {  // one search end to end (the others are slow)
      CHECK(hapmoe::api::plan(doc.dump()) == hapmoe::api::plan(with.dump()));
    }
  }
}
