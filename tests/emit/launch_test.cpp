// The emitted launch and hostfile, run through a dry-run parser written here: it reads the
// hostfile lines and the script's NODE_RANK branches and torchrun lines as bash and torchrun's
// static rendezvous would (global rank = ranks of lower node ranks + local rank), takes TP, CP
// and PP from the script's ARGS, applies Megatron's tp-cp-ep-dp-pp rank order and recovers each
// rank's host, GPU type and pipeline stage; these must match the plan.
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include "emit/launch.hpp"
#include "emit/megatron_emit.hpp"
#include "evaluate/rules.hpp"
#include "test_scenarios.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/result_io.hpp"
#include "hapmoe/scenario_io.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {

struct Host {
  std::string name, type;
  int slots = 0;
};

struct DryRank {
  int host = 0;
  std::string type;
  int stage = 0;
};

std::vector<Host> parse_hostfile(const std::string& text) {
  std::vector<Host> out;
  std::istringstream in(text);
  std::string line;
  const std::regex re(R"(^(\S+) slots=(\d+) type=(\S+)$)");
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::smatch m;
    REQUIRE_MESSAGE(std::regex_match(line, m, re), "hostfile line: " << line);
    out.push_back({m[1], m[3], std::stoi(m[2])});
  }
  return out;
}

int int_flag(const std::string& text, const std::string& flag, int def) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(flag + " (\\d+)"))) return def;
  return std::stoi(m[1]);
}

// The script's `if/elif [ "$NODE_RANK" -lt N ]` branches: the torchrun line each NODE_RANK runs.
std::string torchrun_for(const std::string& script, int node_rank) {
  std::istringstream in(script);
  std::string line;
  const std::regex branch(R"(^(if|elif) \[ "\$NODE_RANK" -lt (\d+) \]; then)");
  bool taken = false;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, branch)) {
      taken = node_rank < std::stoi(m[2]);
      if (taken) {
        std::getline(in, line);
        return line;
      }
    }
  }
  return "";
}

std::string script_args(const std::string& script) {
  std::smatch m;
  REQUIRE(std::regex_search(script, m, std::regex(R"(\nARGS=\((.*)\)\n)")));
  return m[1];
}

// Every global rank's host, type and stage, as torchrun and Megatron would assign them.
std::vector<DryRank> dry_run(const std::string& script, const std::vector<Host>& hosts) {
  const std::string args = script_args(script);
  std::vector<DryRank> ranks;
  for (size_t h = 0; h < hosts.size(); ++h) {
    const std::string run = torchrun_for(script, static_cast<int>(h));
    REQUIRE_MESSAGE(!run.empty(), "no torchrun line for NODE_RANK " << h);
    CHECK(int_flag(run, "--nnodes", 0) == static_cast<int>(hosts.size()));
    const int nproc = int_flag(run, "--nproc-per-node", 0);
    CHECK_MESSAGE(nproc == hosts[h].slots, "host " << h << " runs " << nproc << " processes, hostfile slots "
                                                   << hosts[h].slots);
    for (int local = 0; local < nproc; ++local) ranks.push_back({static_cast<int>(h), hosts[h].type, 0});
  }
  const int tp = int_flag(args, "--tensor-model-parallel-size", 1);
  const int cp = int_flag(args, "--context-parallel-size", 1);
  const int pp = int_flag(args, "--pipeline-model-parallel-size", 1);
  const int world = static_cast<int>(ranks.size());
  REQUIRE(world % (tp * cp * pp) == 0);
  const int dp = world / (tp * cp * pp);
  for (int r = 0; r < world; ++r) ranks[r].stage = r / (tp * cp * dp);  // pp is the outermost axis
  return ranks;
}

// Mismatches between the recovered ranks and the plan ("" when they agree).
std::string compare(const std::vector<DryRank>& ranks, const Scenario& s, const PlanSpec& p) {
  const long long stage_gpus = static_cast<long long>(p.tp) * p.cp * p.dp;
  if (static_cast<long long>(ranks.size()) != stage_gpus * p.pp) return "world size differs from the plan";
  for (size_t r = 0; r < ranks.size(); ++r) {
    const StagePlan& st = p.stages[ranks[r].stage];
    if (ranks[r].type != s.cluster.groups[st.group].gpu.id) {
      return "rank " + std::to_string(r) + " (stage " + std::to_string(ranks[r].stage) + ") runs on " + ranks[r].type +
             ", the plan puts it on " + s.cluster.groups[st.group].gpu.id;
    }
  }
  return "";
}

Scenario two_types(const json& groups) {
  return testing::scenario_from({{"model", testing::small_moe_model()},
                                 {"cluster", {{"groups", groups}}},
                                 {"training", {{"global_batch_size", 288}, {"seq_length", 4096}}}});
}

PlanSpec plan_of(int tp, int dp, int ep, const std::vector<std::pair<int, std::string>>& stages,
                 const std::vector<int>& layers) {
  PlanSpec p;
  p.tp = tp;
  p.dp = dp;
  p.ep = ep;
  p.pp = static_cast<int>(stages.size());
  p.sequence_parallel = tp > 1;
  for (size_t i = 0; i < stages.size(); ++i) p.stages.push_back({stages[i].second, stages[i].first, layers[i]});
  return p;
}

void check_round_trip(const Scenario& s, const PlanSpec& p) {
  const auto v = check_plan_rules(s, p);
  REQUIRE_MESSAGE(!v, (v ? v->message : std::string()));
  const MegatronCommand cmd = megatron_command(s, p);
  const auto ranks = dry_run(cmd.launch, parse_hostfile(cmd.hostfile));
  CHECK(compare(ranks, s, p) == "");
}

}  // namespace

TEST_CASE("hosts in stage order put every stage on its GPU type (H100 then A100, 8 per host)") {
  const Scenario s = two_types(json::array({{{"gpu", "h100-sxm"}, {"nodes", 2}}, {{"gpu", "a100-sxm-80gb"}, {"nodes", 2}}}));
  check_round_trip(s, plan_of(2, 4, 8, {{0, "h100-sxm"}, {0, "h100-sxm"}, {1, "a100-sxm-80gb"}, {1, "a100-sxm-80gb"}},
                              {3, 3, 1, 1}));
  // A100 first: the hostfile starts with the A100 hosts.
  const PlanSpec rev = plan_of(2, 4, 8, {{1, "a100-sxm-80gb"}, {1, "a100-sxm-80gb"}, {0, "h100-sxm"}, {0, "h100-sxm"}},
                               {1, 1, 3, 3});
  check_round_trip(s, rev);
  CHECK(parse_hostfile(megatron_command(s, rev).hostfile).front().type == "a100-sxm-80gb");
}

TEST_CASE("GB200 NVL72: 4 GPUs per host, 72 per NVLink domain, beside 8-GPU H100 hosts") {
  const Scenario s = two_types(json::array({{{"gpu", "gb200"}, {"nodes", 2}}, {{"gpu", "h100-sxm"}, {"nodes", 9}}}));
  REQUIRE(s.cluster.groups[0].gpus_per_node == 72);
  CHECK(s.cluster.groups[0].gpus_per_host == 4);  // SCENARIO.md default for NVL racks
  CHECK(s.cluster.groups[1].gpus_per_host == 8);
  const PlanSpec p = plan_of(4, 18, 8, {{0, "gb200"}, {0, "gb200"}, {1, "h100-sxm"}}, {3, 3, 2});
  check_round_trip(s, p);
  const MegatronCommand cmd = megatron_command(s, p);
  const auto hosts = parse_hostfile(cmd.hostfile);
  CHECK(hosts.size() == 36 + 9);
  CHECK(hosts[35].slots == 4);
  CHECK(hosts[36].slots == 8);
  // One torchrun line per host group, each with its own --nproc-per-node.
  CHECK(torchrun_for(cmd.launch, 0).find("--nproc-per-node 4 ") != std::string::npos);
  CHECK(torchrun_for(cmd.launch, 36).find("--nproc-per-node 8 ") != std::string::npos);
  CHECK(torchrun_for(cmd.launch, 45).empty());
}

TEST_CASE("a stage run that does not fill its last host gets a host group of its own") {
  const Scenario s = two_types(json::array({{{"gpu", "h100-sxm"}, {"nodes", 1}}, {{"gpu", "a100-sxm-80gb"}, {"nodes", 1}}}));
  const PlanSpec p = plan_of(4, 1, 4, {{0, "h100-sxm"}, {0, "h100-sxm"}, {1, "a100-sxm-80gb"}}, {3, 3, 2});
  check_round_trip(s, p);
  const auto groups = launch_host_groups(s, p);
  REQUIRE(groups.size() == 2);
  CHECK(groups[1].procs_per_host == 4);
  CHECK(groups[1].first_stage == 2);
}

TEST_CASE("the dry run catches hosts listed out of stage order") {
  const Scenario s = two_types(json::array({{{"gpu", "h100-sxm"}, {"nodes", 2}}, {{"gpu", "a100-sxm-80gb"}, {"nodes", 2}}}));
  const PlanSpec p = plan_of(2, 4, 8, {{0, "h100-sxm"}, {0, "h100-sxm"}, {1, "a100-sxm-80gb"}, {1, "a100-sxm-80gb"}},
                             {3, 3, 1, 1});
  const MegatronCommand cmd = megatron_command(s, p);
  auto hosts = parse_hostfile(cmd.hostfile);
  std::reverse(hosts.begin(), hosts.end());
  CHECK(compare(dry_run(cmd.launch, hosts), s, p).find("rank 0 (stage 0) runs on a100-sxm-80gb") == 0);
}

TEST_CASE("launch carries env, data, tokenizer and training length") {
  const Scenario s = two_types(json::array({{{"gpu", "h100-sxm"}, {"nodes", 2}}}));
  const PlanSpec p = plan_of(2, 4, 8, {{0, "h100-sxm"}, {0, "h100-sxm"}}, {4, 4});
  const MegatronCommand cmd = megatron_command(s, p);
  CHECK(cmd.env.at("CUDA_DEVICE_MAX_CONNECTIONS") == "1");  // tp 2 on Hopper
  CHECK(cmd.launch.find("export CUDA_DEVICE_MAX_CONNECTIONS=1\n") != std::string::npos);
  CHECK(cmd.launch.find("DATA=(--mock-data --tokenizer-type NullTokenizer --vocab-size 32000)") != std::string::npos);
  CHECK(cmd.launch.find("# DATA+=(--tokenizer-type HuggingFaceTokenizer --tokenizer-model") != std::string::npos);
  CHECK(cmd.args.find("--train-iters 100 ") != std::string::npos);
  CHECK(cmd.args.find("--mock-data --tokenizer-type NullTokenizer --vocab-size 32000") != std::string::npos);
  // Blackwell does not need the variable (validate_args checks compute capability < 10).
  const Scenario b = two_types(json::array({{{"gpu", "b200"}, {"nodes", 2}}}));
  CHECK(megatron_command(b, plan_of(2, 4, 8, {{0, "b200"}, {0, "b200"}}, {4, 4})).env.empty());
}

TEST_CASE("the FlagScale YAMLs name the FlagScale release they need") {
  static const PresetCatalog presets = load_builtin_presets();
  const json doc = {{"model", "mixtral-l"}, {"cluster", "16-2"},
                    {"training", {{"global_batch_size", 512}, {"seq_length", 4096}}},
                    {"search", {{"mode", "hetero"}, {"top_k", 1}, {"baselines", false}}}};
  const auto s = parse_scenario(doc, presets);
  REQUIRE(s.ok());
  const auto r = search_plans(*s);
  REQUIRE(r.ok());
  REQUIRE(!r->plans.empty());
  const json j = search_result_to_json(*s, *r, false);
  for (const char* key : {"yaml", "experiment_yaml"}) {
    const std::string y = j["plans"][0]["flagscale"][key];
    const std::string second = y.substr(y.find('\n') + 1, y.find('\n', y.find('\n') + 1) - y.find('\n') - 1);
    CHECK(second == "# Needs FlagScale v0.8.0 or newer of the v0.x line (release/v0.9.0, or main-legacy after v1.0.0-alpha.0).");
  }
}
