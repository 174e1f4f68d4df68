// Cost-objective benchmark (issue 24): search time of the cost objectives against the time
// objective on the bench cases, in both engines. Each case is searched four times: without prices
// (the time objective as before), and with prices (illustrative: 3 USD per GPU-hour per 989 dense
// BF16 TFLOPS, i.e. an H100's) for the time objective (which then also collects the Pareto
// front), the cost objective and the time-within-budget objective (the budget: the rate of the
// front's middle point). Prints stats.elapsed_ms of each, the ratio cost / time-without-prices
// (target <= 2x), the same ratio of the searches alone ("search": memory_margin_fraction 0 and
// optimizer_offload_fraction [0]; where the cheapest plan is above the margin or recomputes and
// the fastest is not, the offload retry for the plans within the margin runs for the cost
// objective only), and the front's size.
// usage: build/cost_bench [CASE-SUBSTRING]
#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "hapmoe/planner.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/scenario_io.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {

struct Case {
  std::string model, cluster_name;
  json cluster;
  int gbs;
  const char* dispatcher;
  const char* mode;
};

json nodes_of(const std::vector<const char*>& gpus, int nodes) {
  json groups = json::array();
  for (const char* gpu : gpus) groups.push_back({{"gpu", gpu}, {"nodes", nodes}, {"gpus_per_node", 8}});
  return {{"name", "mixed"}, {"groups", groups}};
}

// The cluster's groups written out (a preset id resolved) with a price on each.
json priced(const PresetCatalog& presets, json cluster) {
  if (cluster.is_string()) cluster = presets.clusters.at(cluster.get<std::string>());
  for (json& g : cluster["groups"]) {
    const json& gpu = g["gpu"].is_string() ? presets.gpus.at(g["gpu"].get<std::string>()) : g["gpu"];
    g["price_per_gpu_hour"] = std::round(300.0 * gpu["bf16_tflops"].get<double>() / 989) / 100;
  }
  cluster["id"] = "custom";
  return cluster;
}

struct Run {
  double ms = 0;
  size_t front = 0;
  bool budget_reached = false;
  double best_s = 0;
  std::vector<double> front_rates;
};

Run run(const PresetCatalog& presets, json doc) {
  Run out;
  const auto s = parse_scenario(doc, presets);
  if (!s) {
    std::printf("  scenario: %s (%s)\n", s.error().message.c_str(), s.error().field.c_str());
    return out;
  }
  // Best of 3 (the smallest cases take milliseconds).
  auto r = search_plans(*s);
  if (!r) return out;
  out.ms = r->stats.elapsed_ms;
  for (int rep = 0; rep < 2 && out.ms < 500; ++rep) {
    auto again = search_plans(*s);
    if (again) out.ms = std::min(out.ms, again->stats.elapsed_ms);
  }
  out.front = r->pareto.size();
  out.budget_reached = r->stats.budget_reached;
  out.best_s = r->plans.empty() ? 0 : r->plans.front().metrics.iteration_time_s;
  for (const PlanEvaluation& ev : r->pareto) out.front_rates.push_back(ev.metrics.cost_per_hour);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  const PresetCatalog presets = load_builtin_presets();
  std::vector<Case> cases;
  for (const char* mode : {"megatron", "hetero"}) {
    for (const char* model : {"mixtral-s", "mixtral-l"}) {
      for (const char* c : {"16-1", "16-2", "16-3", "24-1", "24-2", "24-3", "32-1", "32-2", "32-3"}) {
        const bool small = std::string(model) == "mixtral-s";
        cases.push_back({model, c, c, small ? 256 : 512, small ? "allgather" : "alltoall", mode});
      }
    }
  }
  cases.push_back({"deepseek-v3", "mixed-2048", "mixed-2048", 8192, "flex", "megatron"});
  cases.push_back({"deepseek-v3", "512x8nvidia",
                   nodes_of({"h100-sxm", "h800-sxm", "h20", "h200-sxm", "a100-sxm-80gb", "a800", "b200", "a100-sxm-40gb"}, 8),
                   4096, "flex", "megatron"});
  cases.push_back({"deepseek-v3", "mixed-2048", "mixed-2048", 8192, "alltoall", "hetero"});
  cases.push_back({"deepseek-v3", "512x8types3v",
                   nodes_of({"h100-sxm", "h800-sxm", "h20", "h200-sxm", "a100-sxm-80gb", "b200", "mi300x", "ascend-910b"}, 8),
                   4096, "alltoall", "hetero"});
  std::printf("%-11s %-12s %-8s %9s %9s %9s %9s %7s %9s %6s\n", "model", "cluster", "mode", "time_ms", "front_ms",
              "cost_ms", "budget_ms", "cost/t", "search", "front");
  double worst = 0, worst0 = 0;
  for (const Case& c : cases) {
    if (!only.empty() && (c.model + " " + c.cluster_name + " " + c.mode).find(only) == std::string::npos) continue;
    json doc = {{"format", "hapmoe.scenario/1"},
                {"model", c.model},
                {"cluster", c.cluster},
                {"training", {{"global_batch_size", c.gbs}, {"seq_length", 4096}, {"moe_token_dispatcher_type", c.dispatcher}}},
                {"search", {{"mode", c.mode}}}};
    const Run plain = run(presets, doc);
    doc["cluster"] = priced(presets, c.cluster);
    const Run front = run(presets, doc);
    doc["search"]["objective"] = "cost";
    const Run cost = run(presets, doc);
    Run within;
    if (!front.front_rates.empty()) {
      doc["search"]["objective"] = "time_within_budget";
      doc["search"]["budget_per_hour"] = std::max(0.01, front.front_rates[front.front_rates.size() / 2]);
      within = run(presets, doc);
    }
    const double ratio = plain.ms > 0 ? cost.ms / plain.ms : 0;
    worst = std::max(worst, ratio);
    json bare = doc;
    bare["search"].erase("budget_per_hour");
    bare["search"]["memory_margin_fraction"] = 0;
    bare["search"]["optimizer_offload_fraction"] = json::array({0});
    bare["search"]["objective"] = "cost";
    const Run cost0 = run(presets, bare);
    bare["search"]["objective"] = "time";
    bare["cluster"] = c.cluster;
    const Run time0 = run(presets, bare);
    const double ratio0 = time0.ms > 0 ? cost0.ms / time0.ms : 0;
    worst0 = std::max(worst0, ratio0);
    const bool spent = plain.budget_reached || front.budget_reached || cost.budget_reached || within.budget_reached;
    std::printf("%-11s %-12s %-8s %9.1f %9.1f %9.1f %9.1f %6.2fx %8.2fx %6zu%s\n", c.model.c_str(), c.cluster_name.c_str(),
                c.mode, plain.ms, front.ms, cost.ms, within.ms, ratio, ratio0, front.front, spent ? " (budget reached)" : "");
  }
  std::printf("worst cost/time ratio: %.2fx (target <= 2x); of the searches alone: %.2fx\n", worst, worst0);
  return 0;
}
