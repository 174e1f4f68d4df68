// Hetero mode vs upstream mode on the paper's heterogeneous clusters (HAPMoE Table 1: 16-1 ...
// 32-3) with Mixtral-S and Mixtral-L: the best upstream ("megatron" mode) plan, the best hetero
// plan (a mesh per GPU type, FlagScale), the gain, the hetero meshes and the search time. Also
// the best upstream plan on the GPUs of one vendor only (upstream Megatron-LM cannot join two
// collective libraries: the vendor rule of issue 9 item 3) and the gain over that.
// At scale: DeepSeek-V3 on mixed-2048 and on 512 GPUs of 8 types from three vendors.
// Usage: build/hetero_bench [CASE-SUBSTRING]   (matched against "model cluster")
#include <chrono>
#include <cstdio>
#include <string>

#include "hapmoe/hetero_plan.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/scenario_io.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/search.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {

// "h800-sxm tp1 ep8 etp1 dp4 pp2 | ..." and the per-stage layers and full-recompute stages.
std::string describe(const Scenario& s, const PlanSpec& p) {
  std::string out;
  for (const HeteroMesh& m : hetero_meshes(p)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s%s tp%d ep%d etp%d dp%d pp%d", out.empty() ? "" : " | ",
                  s.cluster.groups[m.group].gpu.id.c_str(), m.tp, m.ep, m.etp, m.dp, m.pp);
    out += buf;
  }
  out += " layers";
  for (const StagePlan& st : p.stages)
    out += " " + std::to_string(st.layers) + (st.recompute == Recompute::kFull ? "F" : "");
  out += " mbs" + std::to_string(p.micro_batch_size);
  if (p.optimizer_offload_fraction > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " offload%g", p.optimizer_offload_fraction);
    out += buf;
  }
  return out;
}

// Best upstream ("megatron" mode) iteration time using the groups of one vendor only (0 = none).
double one_vendor_upstream_s(const Scenario& s) {
  double best = 0;
  for (const NodeGroup& g : s.cluster.groups) {
    Scenario one = s;
    one.search.mode = SearchMode::kMegatron;
    one.search.baselines = false;
    one.cluster.groups.clear();
    for (const NodeGroup& h : s.cluster.groups) {
      if (h.gpu.vendor == g.gpu.vendor) one.cluster.groups.push_back(h);
    }
    auto r = search_plans(one);
    if (!r.ok() || r.value().plans.empty()) continue;
    const double t = r.value().plans.front().metrics.iteration_time_s;
    if (best == 0 || t < best) best = t;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  const PresetCatalog presets = load_builtin_presets();
  std::printf("%-11s %-11s %11s %11s %7s %11s %7s %9s  %s\n", "model", "cluster", "upstream_s",
              "hetero_s", "gain", "1vendor_s", "gain1v", "search_ms",
              "hetero plan (F = full recompute)");
  struct Case {
    std::string model, cluster;
    json cluster_doc;  // inline when not a preset id
    int gbs;
    const char* dispatcher;
  };
  std::vector<Case> cases;
  for (const char* model : {"mixtral-s", "mixtral-l"}) {
    for (const char* cluster :
         {"16-1", "16-2", "16-3", "24-1", "24-2", "24-3", "32-1", "32-2", "32-3"}) {
      const bool small = std::string(model) == "mixtral-s";
      cases.push_back({model, cluster, cluster, small ? 256 : 512, small ? "allgather" : "alltoall"});
    }
  }
  // At scale (issue 21): DeepSeek-V3 on the 2048-GPU three-type cluster, and on 512 GPUs of 8
  // types from three vendors (NVIDIA, AMD, Huawei; illustrative, 8 nodes of 8 each).
  cases.push_back({"deepseek-v3", "mixed-2048", "mixed-2048", 8192, "alltoall"});
  json groups = json::array();
  for (const char* gpu : {"h100-sxm", "h800-sxm", "h20", "h200-sxm", "a100-sxm-80gb", "b200", "mi300x", "ascend-910b"}) {
    groups.push_back({{"gpu", gpu}, {"nodes", 8}, {"gpus_per_node", 8}});
  }
  cases.push_back({"deepseek-v3", "512x8types3v", json{{"name", "mixed"}, {"groups", groups}}, 4096, "alltoall"});
  for (const Case& c : cases) {
    if (!only.empty() && (c.model + " " + c.cluster).find(only) == std::string::npos) continue;
    const char* model = c.model.c_str();
    const char* cluster = c.cluster.c_str();
    {
      const json doc = {{"format", "hapmoe.scenario/1"},
                        {"model", c.model},
                        {"cluster", c.cluster_doc},
                        {"training",
                         {{"global_batch_size", c.gbs},
                          {"seq_length", 4096},
                          {"moe_token_dispatcher_type", c.dispatcher}}},
                        {"search", {{"mode", "hetero"}, {"top_k", 1}}}};
      auto s = parse_scenario(doc, presets);
      if (!s.ok()) {
        std::printf("%s %s: %s\n", model, cluster, s.error().message.c_str());
        return 1;
      }
      const auto t0 = std::chrono::steady_clock::now();
      auto r = search_plans(s.value());
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!r.ok()) return 1;
      const SearchResult& x = r.value();
      const double hetero = x.plans.empty() ? 0 : x.plans.front().metrics.iteration_time_s;
      const double upstream = x.upstream ? x.upstream->evaluation.metrics.iteration_time_s : 0;
      char up[32] = "none", gain[32] = "-", up1[32] = "none", gain1[32] = "-";
      if (x.upstream) std::snprintf(up, sizeof up, "%.3f", upstream);
      if (x.upstream) std::snprintf(gain, sizeof gain, "%.2fx", x.upstream->speedup);
      const double one_vendor = one_vendor_upstream_s(s.value());
      if (one_vendor > 0) std::snprintf(up1, sizeof up1, "%.3f", one_vendor);
      if (one_vendor > 0 && hetero > 0)
        std::snprintf(gain1, sizeof gain1, "%.2fx", one_vendor / hetero);
      std::printf("%-11s %-11s %11s %11.3f %7s %11s %7s %9.0f  %s%s\n", model, cluster, up, hetero,
                  gain, up1, gain1, ms,
                  x.plans.empty() ? "no plan" : describe(s.value(), x.plans.front().plan).c_str(),
                  x.stats.budget_reached ? " (budget reached)" : "");
    }
  }
  return 0;
}
