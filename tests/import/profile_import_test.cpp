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

namespace {
// The one run of an nccl-tests output.
hapmoe::Expected<hapmoe::NcclRun> one_run(const std::string& text, const hapmoe::NcclImportOptions& o) {
  auto runs = hapmoe::import_nccl_tests(text, o);
  if (!runs) return runs.error();
  REQUIRE(runs->size() == 1);
  return runs->front();
}
}  // namespace

TEST_CASE("nccl-tests all_reduce_perf, one host, -g 8") {
  const auto n = one_run(input("nccl-all-reduce-h100-1x8.txt"), {});
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
  auto n = one_run(text, {});
  REQUIRE(n.ok());
  CHECK(n->op == hapmoe::CollectiveOp::kAllToAll);
  CHECK(n->ranks == 16);
  CHECK(n->placement == hapmoe::Placement::kInterNode);
  CHECK(n->hosts.size() == 2);
  hapmoe::NcclImportOptions o;
  o.placement = hapmoe::Placement::kInterGroup;
  CHECK(one_run(text, o)->points.front().placement == hapmoe::Placement::kInterGroup);
  // Without the test-name line the op must be given.
  std::string no_name = text;
  no_name.replace(no_name.find("alltoall_perf"), 13, "something");
  const auto bad = one_run(no_name, {});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "op");
  // A corrupt table row is reported with its line.
  std::string corrupt = text;
  const size_t row = corrupt.find("\n        1024 ") + 1;
  corrupt.replace(row, corrupt.find('\n', row) - row, "        1024           256     float    none      -1    12.00    0.09   abc");
  const auto c = one_run(corrupt, {});
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

namespace {
json nccl_request(std::vector<std::pair<std::string, std::string>> files) {
  json f = json::array();
  for (const auto& [name, text] : files) f.push_back({{"name", name}, {"text", text}});
  return {{"gpu", "h100-sxm"}, {"files", f}};
}
json import_nccl(const json& request) { return json::parse(hapmoe::api::import_nccl(request.dump())); }
}  // namespace

TEST_CASE("nccl-tests outputs joined in one text stay apart run by run; repeats are kept once") {
  const std::string ar = input("nccl-all-reduce-h100-1x8.txt"), a2a = input("nccl-alltoall-h100-2x8.txt");
  // The same output twice: two runs of 16 ranks (not one of 32), 11 points (not 22), and a note.
  const auto twice = hapmoe::import_nccl_tests(a2a + a2a, {});
  REQUIRE(twice.ok());
  REQUIRE(twice->size() == 2);
  CHECK((*twice)[0].ranks == 16);
  CHECK((*twice)[1].ranks == 16);
  CHECK((*twice)[1].first_line == 43);  // its "Collective test starting" line
  json r = import_nccl(nccl_request({{"a2a-twice.txt", a2a + a2a}}));
  REQUIRE(r.value("ok", false));
  CHECK(r["profile"]["gpus"]["h100-sxm"]["collectives"].size() == 11);
  CHECK(r["imported"].size() == 2);
  CHECK(r["imported"][1]["points"] == 0);
  CHECK(r["imported"][1]["repeated"] == 11);
  REQUIRE(r["notes"].size() == 1);
  CHECK(r["notes"][0].get<std::string>().find("a2a-twice.txt run 2: 11 of its 11 rows repeat") == 0);
  // The same file given twice in one request: the same.
  r = import_nccl(nccl_request({{"a.txt", a2a}, {"b.txt", a2a}}));
  CHECK(r["profile"]["gpus"]["h100-sxm"]["collectives"].size() == 11);
  // An all-to-all output followed by an all-reduce one: each keeps its op, ranks and busbw
  // (all-reduce's 478.89 GB/s went to the all-to-all, whose input says at most 40.85).
  r = import_nccl(nccl_request({{"both.txt", a2a + ar}}));
  REQUIRE(r.value("ok", false));
  const json& points = r["profile"]["gpus"]["h100-sxm"]["collectives"];
  REQUIRE(points.size() == 22);
  double a2a_max = 0;
  for (const json& p : points) {
    if (p["op"] == "all_to_all") a2a_max = std::max(a2a_max, p["busbw_gbps"].get<double>());
    CHECK(p["ranks"] == (p["op"] == "all_to_all" ? 16 : 8));
  }
  CHECK(a2a_max == 40.85);
  CHECK(r["imported"][0]["op"] == "all_to_all");
  CHECK(r["imported"][1]["op"] == "all_reduce");
}

TEST_CASE("nccl-tests rows an importer must not turn into points") {
  const std::string a2a = input("nccl-alltoall-h100-2x8.txt");
  auto with_row = [&](const std::string& from, const std::string& to) {
    std::string t = a2a;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  // Another run of the same test with another busbw at the same size: refused, naming both lines.
  const std::string other = with_row("24643.49   43.57   40.85", "24643.49   43.57   39.10");
  json r = import_nccl(nccl_request({{"a.txt", a2a}, {"b.txt", other}}));
  CHECK(r["error"]["code"] == "conflicting_points");
  CHECK(r["error"]["field"] == "files[1]");
  CHECK(r["error"]["message"].get<std::string>().find("b.txt line 37") == 0);
  CHECK(r["error"]["message"].get<std::string>().find("a.txt line 37 measured 40.85") != std::string::npos);
  // Sizes and bandwidths the profile section would refuse.
  const std::string huge = with_row("  1073741824     268435456", " 100000000000000000000000000000     268435456");
  r = import_nccl(nccl_request({{"huge.txt", huge}}));
  CHECK(r["error"]["code"] == "out_of_range");
  CHECK(r["error"]["message"].get<std::string>().find("huge.txt: line 37: size 1") == 0);
  r = import_nccl(nccl_request({{"fast.txt", with_row("24643.49   43.57   40.85", "24643.49   43.57   1e308")}}));
  CHECK(r["error"]["code"] == "out_of_range");
  // A size twice in one run, a rank twice in one run (tables or rank lists joined without headers).
  r = import_nccl(nccl_request({{"x.txt", with_row("  1073741824     268435456", "  268435456     268435456")}}));
  CHECK(r["error"]["message"].get<std::string>().find("appears again in the same run") != std::string::npos);
  r = import_nccl(nccl_request({{"x.txt", with_row("#  Rank 15 Group", "#  Rank 14 Group")}}));
  CHECK(r["error"]["message"].get<std::string>().find("rank 14 is listed again") != std::string::npos);
  // An op given that the output contradicts.
  json request = nccl_request({{"x.txt", a2a}});
  request["op"] = "all_reduce";
  const json contradicted = import_nccl(request);
  CHECK(contradicted["error"]["field"] == "files[0]");
  CHECK(contradicted["error"]["message"].get<std::string>().find("x.txt: op: the output runs alltoall_perf (line 3)") == 0);
}

TEST_CASE("Megatron log: numbers beyond any run are refused, a log given twice counts once") {
  const std::string log = input("qwen3-30b-a3b-h100-16-fp8-run-b.log");
  const auto twice = hapmoe::parse_megatron_log(log + log);
  REQUIRE(twice.ok());
  CHECK(twice->iterations.size() == 12);
  CHECK(twice->repeated_iterations == 12);
  CHECK(hapmoe::steady_iteration(twice.value(), std::nullopt)->used == 11);
  // Iteration 1 logged again with another time: two runs in one log.
  std::string other = log;
  const size_t at = other.find("elapsed time per iteration (ms): ") + 33;
  other.replace(at, 1, "9");
  const auto mixed = hapmoe::parse_megatron_log(log + other);
  REQUIRE_FALSE(mixed.ok());
  CHECK(mixed.error().code == "conflicting_points");
  // 1e308 ms per iteration gave a median of infinity, nulls and fit.reached true.
  const std::string slow = " iteration        2/     100 | consumed samples: 2048 | elapsed time per iteration (ms): 1e308 |\n";
  const auto bad = hapmoe::parse_megatron_log(slow);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "line 1");
  CHECK_FALSE(hapmoe::parse_megatron_log(" iteration 2/ 9 | elapsed time per iteration (ms): 5 | throughput per GPU (TFLOP/s/GPU): 1e300 |\n").ok());
  CHECK_FALSE(hapmoe::parse_megatron_log(" iteration 2/ 9 | elapsed time per iteration (ms): 5 |\n[Rank 0] (after 2 iterations) memory (MB) | allocated: 1 | max allocated: 1e300 | reserved: 1 | max reserved: 1 |\n").ok());
}

TEST_CASE("import_log: fitted factors stay within the field table, the output validates") {
  // A GPU at the top of the host-time range, fitted to a log far slower than the model says:
  // the factor reaches 1/20 and host_launch_us x 20 was 2e6, which validate refuses (at most 1e5).
  json request = {{"scenario", json::parse(input("qwen3-30b-a3b-h100-16-fp8-run-b.json"))}};
  request["scenario"]["cluster"] = {
      {"groups", json::array({{{"gpu", {{"preset", "h100-sxm"}, {"host_launch_us", 1e5}}},
                               {"nodes", 2}}})}};
  std::string slow;
  for (int i = 1; i <= 3; ++i) {
    slow += " iteration " + std::to_string(i) + "/ 9 | elapsed time per iteration (ms): 9e7 | global batch size: 1024 |\n";
  }
  request["log"] = slow;
  const json r = json::parse(hapmoe::api::import_log(request.dump()));
  REQUIRE(r.value("ok", false));
  CHECK(r["fit"]["scale"] == 0.05);
  CHECK(r["fit"]["reached"] == false);
  CHECK(r["fit"]["fitted"]["host_launch_us"] == 1e5);
  CHECK(json::parse(hapmoe::api::validate(r["scenario"].dump()))["ok"] == true);
}

TEST_CASE("import_log: a log given twice gives the same fit and says so") {
  json request = {{"scenario", json::parse(input("qwen3-30b-a3b-h100-16-fp8-run-b.json"))},
                  {"log", input("qwen3-30b-a3b-h100-16-fp8-run-b.log")}};
  const json r = json::parse(hapmoe::api::import_log(request.dump()));
  REQUIRE(r.value("ok", false));
  CHECK_FALSE(r.contains("notes"));
  request["log"] = input("qwen3-30b-a3b-h100-16-fp8-run-b.log") + input("qwen3-30b-a3b-h100-16-fp8-run-b.log");
  const json t = json::parse(hapmoe::api::import_log(request.dump()));
  REQUIRE(t.value("ok", false));
  CHECK(t["fit"]["scale"] == r["fit"]["scale"]);
  CHECK(t["fit"]["log"]["iterations_used"] == r["fit"]["log"]["iterations_used"]);
  CHECK(t["fit"]["log"]["iterations_repeated"] == 12);
  CHECK(t["notes"].size() == 1);
}
