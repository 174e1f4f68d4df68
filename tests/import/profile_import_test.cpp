// profile_import.hpp, efficiency_fit.hpp, profile_import_io.hpp: nccl-tests outputs and
// Megatron-LM log excerpts (tests/profile/) read as written; fitting on one published run and
// predicting another configuration of the same model and cluster beats the analytical default.
#include "hapmoe/profile_import.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "api.hpp"
#include "import/efficiency_fit.hpp"
#include "hapmoe/profile_import_io.hpp"

namespace {

using nlohmann::json;

std::string input(const std::string& name) {
  std::ifstream f(std::string(HAPMOE_SOURCE_DIR) + "/tests/profile/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// tokens/s/GPU of evaluating `scenario` (a JSON document with a plan).
double tokens_per_gpu(const json& scenario) {
  const json r = json::parse(hapmoe::api::evaluate(scenario.dump()));
  REQUIRE(r.value("ok", false));
  return r["plans"][0]["metrics"]["tokens_per_s_per_gpu"].get<double>();
}

// Fits on run A's log, predicts run B; returns {analytical error, fitted error} against B's
// published tokens/s/GPU.
std::pair<double, double> fit_and_predict(const std::string& a, const std::string& b, double published_b) {
  const json request = {{"scenario", json::parse(input(a + ".json"))}, {"log", input(a + ".log")}};
  const json fit = json::parse(hapmoe::api::import_log(request.dump()));
  REQUIRE(fit.value("ok", false));
  CHECK(fit["fit"]["reached"] == true);
  CHECK(fit["fit"]["fitted_iteration_s"].get<double>() ==
        doctest::Approx(fit["fit"]["logged_iteration_s"].get<double>()).epsilon(0.01));
  json run_b = json::parse(input(b + ".json"));
  const double analytical = tokens_per_gpu(run_b);
  run_b["cluster"] = fit["scenario"]["cluster"];
  const double fitted = tokens_per_gpu(run_b);
  return {std::fabs(analytical / published_b - 1), std::fabs(fitted / published_b - 1)};
}

}  // namespace

TEST_CASE("nccl-tests all_reduce_perf, one host, -g 8") {
  const auto n = hapmoe::import_nccl_tests(input("nccl-all-reduce-h100-1x8.txt"), {});
  REQUIRE(n.ok());
  CHECK(n->op == hapmoe::CollectiveOp::kAllReduce);
  CHECK(n->ranks == 8);
  CHECK(n->placement == hapmoe::Placement::kIntraNode);
  CHECK(n->hosts == std::vector<std::string>{"dgx-h100-017"});
  CHECK(n->device == "NVIDIA H100 80GB HBM3");
  REQUIRE(n->points.size() == 11);  // 1 KiB .. 1 GiB in steps of 4x
  CHECK(n->points.back().bytes == 1073741824.0);
  CHECK(n->points.back().busbw_gbps == 478.89);  // the out-of-place busbw column
}

TEST_CASE("nccl-tests alltoall_perf over MPI on two hosts, and the options") {
  const std::string text = input("nccl-alltoall-h100-2x8.txt");
  auto n = hapmoe::import_nccl_tests(text, {});
  REQUIRE(n.ok());
  CHECK(n->op == hapmoe::CollectiveOp::kAllToAll);
  CHECK(n->ranks == 16);
  CHECK(n->placement == hapmoe::Placement::kInterNode);
  CHECK(n->hosts.size() == 2);
  hapmoe::NcclImportOptions o;
  o.placement = hapmoe::Placement::kInterGroup;
  CHECK(hapmoe::import_nccl_tests(text, o)->points.front().placement == hapmoe::Placement::kInterGroup);
  // Without the test-name line the op must be given.
  std::string no_name = text;
  no_name.replace(no_name.find("alltoall_perf"), 13, "something");
  const auto bad = hapmoe::import_nccl_tests(no_name, {});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "op");
  // A corrupt table row is reported with its line.
  std::string corrupt = text;
  const size_t row = corrupt.find("\n        1024 ") + 1;
  corrupt.replace(row, corrupt.find('\n', row) - row, "        1024           256     float    none      -1    12.00    0.09   abc");
  const auto c = hapmoe::import_nccl_tests(corrupt, {});
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().field.rfind("line ", 0) == 0);
}

TEST_CASE("import_nccl request: profile section for the GPU, errors name the request field") {
  const json request = {{"gpu", "h100-sxm"},
                        {"files", json::array({{{"name", "ar.txt"}, {"text", input("nccl-all-reduce-h100-1x8.txt")}},
                                               {{"name", "a2a.txt"}, {"text", input("nccl-alltoall-h100-2x8.txt")}}})}};
  const json r = json::parse(hapmoe::api::import_nccl(request.dump()));
  REQUIRE(r.value("ok", false));
  CHECK(r["profile"]["gpus"]["h100-sxm"]["collectives"].size() == 22);
  CHECK(r["imported"][1]["op"] == "all_to_all");
  CHECK(r["imported"][1]["placement"] == "inter_node");
  json bad = request;
  bad["placement"] = "rack";
  CHECK(json::parse(hapmoe::api::import_nccl(bad.dump()))["error"]["field"] == "placement");
  bad = request;
  bad.erase("gpu");
  CHECK(json::parse(hapmoe::api::import_nccl(bad.dump()))["error"]["field"] == "gpu");
  CHECK(json::parse(hapmoe::api::import_nccl("{"))["error"]["code"] == "bad_json");
}

TEST_CASE("Megatron log: iteration lines, warm-up skipped, median, joined memory lines") {
  const auto log = hapmoe::parse_megatron_log(input("qwen3-30b-a3b-h100-16-fp8-run-b.log"));
  REQUIRE(log.ok());
  REQUIRE(log->iterations.size() == 12);
  CHECK(log->iterations[0].iteration == 1);
  CHECK(log->iterations[0].global_batch_size == 1024);
  REQUIRE(log->memory.size() == 2);  // two ranks printed on one line
  CHECK(log->memory[1].rank == 8);
  CHECK(log->memory[1].max_reserved_mb == 68498.0);
  const auto steady = hapmoe::steady_iteration(log.value(), std::nullopt);
  REQUIRE(steady.ok());
  CHECK(steady->skipped == 1);
  CHECK(steady->used == 11);
  // Median of the 11 lines after iteration 1 (hand-sorted: the 6th value).
  CHECK(steady->median_ms == doctest::Approx(29459.9));
  CHECK_FALSE(hapmoe::steady_iteration(log.value(), 12).ok());
  CHECK_FALSE(hapmoe::parse_megatron_log("no iterations here\n").ok());
}

TEST_CASE("import_log: the GBS must match, the fitted scenario parses") {
  json request = {{"scenario", json::parse(input("qwen3-30b-a3b-h100-16-fp8-run-b.json"))},
                  {"log", input("qwen3-30b-a3b-h100-16-fp8-run-b.log")}};
  const json r = json::parse(hapmoe::api::import_log(request.dump()));
  REQUIRE(r.value("ok", false));
  CHECK(json::parse(hapmoe::api::validate(r["scenario"].dump()))["ok"] == true);
  CHECK(r["fit"]["fitted"]["reserved_memory_gib"].get<double>() > 0);
  CHECK(r["scenario"]["cluster"]["groups"][0]["gpu"]["efficiency_source"].get<std::string>().find("fitted") == 0);
  request["scenario"]["training"]["global_batch_size"] = 512;
  request["scenario"]["plan"]["dp"] = 16;
  const json bad = json::parse(hapmoe::api::import_log(request.dump()));
  CHECK(bad["error"]["field"] == "scenario.training.global_batch_size");
}

// Published: Megatron-Bridge docs/performance-summary-archive.md. The runs' recipe settings
// beyond the mesh are not published for B200; the scenarios state what is assumed.
TEST_CASE("fit on one published run, predict another mesh of the same model and cluster") {
  // DeepSeek-V3 on 256 x B200, MXFP8: PP16 EP8 (26.04: 2815 tok/s/GPU) -> PP8 VP2 EP32 (26.04.01: 3328).
  const auto ds = fit_and_predict("deepseek-v3-b200-256-pp16-ep8", "deepseek-v3-b200-256-pp8-vp2-ep32", 3328);
  MESSAGE("DeepSeek-V3 B200: analytical error " << ds.first << ", fitted error " << ds.second);
  CHECK(ds.second < ds.first);
  // Qwen3-30B-A3B on 16 x H100, FP8: PP1 EP16 (26.04: 8901) -> PP2 VP12 EP8 (26.02.01: 9058).
  const auto qw = fit_and_predict("qwen3-30b-a3b-h100-16-fp8-run-b", "qwen3-30b-a3b-h100-16-fp8-run-a", 9058);
  MESSAGE("Qwen3-30B-A3B H100: analytical error " << qw.first << ", fitted error " << qw.second);
  CHECK(qw.second < qw.first);
}

TEST_CASE("importer requests of the wrong shape are input errors, never internal ones") {
  for (const char* r : {"[]", "{\"gpu\": 3}", "{\"gpu\": \"h100-sxm\", \"files\": [{\"name\": 5, \"text\": \"x\"}]}",
                        "{\"gpu\": \"h100-sxm\", \"files\": [{\"text\": \"no table\"}]}", "{\"scenario\": 5}",
                        "{\"scenario\": {}, \"log\": 5}", "{\"scenario\": {}, \"log\": \"x\", \"log_name\": 7}", "1e999"}) {
    CAPTURE(r);
    for (const std::string& out : {hapmoe::api::import_nccl(r), hapmoe::api::import_log(r)}) {
      const json j = json::parse(out);
      CHECK(j["ok"] == false);
      CHECK(j["error"]["code"] != "internal");
    }
  }
  const json good_scenario = json::parse(input("qwen3-30b-a3b-h100-16-fp8-run-b.json"));
  const json r = json::parse(hapmoe::api::import_log(json{{"scenario", good_scenario}, {"log", "x"}, {"log_name", 7}}.dump()));
  CHECK(r["error"]["field"] == "log_name");
  CHECK(json::parse(hapmoe::api::import_log(json{{"scenario", 5}, {"log", "x"}}.dump()))["error"]["field"] == "scenario");
}
