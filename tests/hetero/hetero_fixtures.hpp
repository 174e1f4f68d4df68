// Hetero-mode test fixtures: scenarios on a two-type cluster, and a brute force over the hetero
// space that shares none of hetero_search's bounds, DP or ordering (every group order, every mesh
// per group, every micro-batch size, every layer split and every per-stage recompute, each plan
// checked with the FlagScale rules and costed by evaluate_hetero_plan).
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hapmoe/hetero_plan.hpp"
#include "hetero/hetero_evaluate.hpp"
#include "hetero/hetero_space.hpp"
#include "test_scenarios.hpp"

namespace hapmoe::testing {

// Two groups of one node each: H800 and 910B (gpn GPUs per node each).
inline nlohmann::json two_type_cluster(double h800_gib = 80, double ascend_gib = 64, int gpn = 2) {
  return {{"name", "two"},
          {"groups",
           {{{"gpu", {{"preset", "h800-sxm"}, {"memory_gib", h800_gib}}},
             {"nodes", 1},
             {"gpus_per_node", gpn}},
            {{"gpu", {{"preset", "ascend-910b"}, {"memory_gib", ascend_gib}}},
             {"nodes", 1},
             {"gpus_per_node", gpn}}}},
          {"inter_group_gbps", 12.5}};
}

// A scenario in search.mode "hetero" (sequence seq_length, global batch 16 unless given).
inline Scenario hetero_scenario(nlohmann::json model, nlohmann::json cluster,
                                nlohmann::json search = nlohmann::json::object(),
                                int seq_length = 1024, int global_batch_size = 16) {
  search["mode"] = "hetero";
  return scenario_from({{"format", "hapmoe.scenario/1"},
                        {"model", model},
                        {"cluster", cluster},
                        {"training", {{"global_batch_size", global_batch_size}, {"seq_length", seq_length}}},
                        {"search", search}});
}

// One stage of a hetero plan (cp 1, as FlagScale requires).
inline StagePlan hetero_stage(int group, const std::string& gpu, int layers, int tp, int dp,
                              int ep = 1, int etp = 1) {
  StagePlan st;
  st.group = group;
  st.gpu = gpu;
  st.layers = layers;
  st.tp = tp, st.cp = 1, st.dp = dp, st.ep = ep, st.etp = etp;
  return st;
}

// Best iteration time over the hetero space (1e300 if nothing fits): meshes with tp over the
// powers of two up to gpus_per_node and ep over the powers of two up to num_experts (each filtered
// by search.tp / search.ep when set), etp 1 or tp, any pp dividing the group; micro-batch sizes of
// search.micro_batch_size ({1, 2} when unset); per-stage recompute "none"/"full", restricted to
// those of search.recompute when it lists any (so set search.recompute: unset, the search also
// tries selective sets this does not); every fraction of search.optimizer_offload_fraction (0
// when unset). *best_ignoring_memory (optional): the same minimum over every plan the rules pass,
// fitting in memory or not (memory binds where the two differ).
// *points (optional): (iteration time, USD per hour billed) of every plan that fits.
// *entries (optional): the best time of each (group classes in order, meshes, micro-batch,
// offload fraction) that fits -- the search keeps one plan of each (identical groups, the same
// class, are one entry).
inline double hetero_brute_force(const Scenario& s, double* best_ignoring_memory = nullptr,
                                 std::vector<std::pair<double, double>>* points = nullptr,
                                 std::map<std::string, double>* entries = nullptr) {
  const int L = s.model.num_layers, groups = static_cast<int>(s.cluster.groups.size());
  const std::vector<double> fractions = s.search.optimizer_offload_fraction.empty()
                                            ? std::vector<double>{0}
                                            : s.search.optimizer_offload_fraction;
  const std::vector<int> mbss =
      s.search.micro_batch_size.empty() ? std::vector<int>{1, 2} : s.search.micro_batch_size;
  std::vector<Recompute> per_stage;
  for (Recompute r : {Recompute::kNone, Recompute::kFull}) {
    const auto& rc = s.search.recompute;
    if (rc.empty() || std::find(rc.begin(), rc.end(), r) != rc.end()) per_stage.push_back(r);
  }
  const int choices = static_cast<int>(per_stage.size());
  double best = 1e300, any = 1e300;
  if (best_ignoring_memory) *best_ignoring_memory = any;
  if (choices == 0) return best;
  std::vector<std::vector<int>> orders;
  for (int mask = 1; mask < (1 << groups); ++mask) {
    std::vector<int> used;
    for (int g = 0; g < groups; ++g) {
      if (mask & (1 << g)) used.push_back(g);
    }
    do orders.push_back(used);
    while (std::next_permutation(used.begin(), used.end()));
  }
  for (const auto& order : orders) {
    std::vector<HeteroShape> meshes(order.size());
    std::function<void(size_t)> pick = [&](size_t k) {
      if (k == order.size()) {
        PlanSpec p;
        p.vpp = 1;
        for (size_t i = 0; i < order.size(); ++i) {
          for (int j = 0; j < meshes[i].pp; ++j) {
            p.stages.push_back(hetero_stage(order[i], s.cluster.groups[order[i]].gpu.id, 1,
                                            meshes[i].tp, meshes[i].dp, meshes[i].ep,
                                            meshes[i].etp));
          }
        }
        p.pp = static_cast<int>(p.stages.size());
        if (p.pp > L) return;
        p.tp = p.stages[0].tp, p.dp = p.stages[0].dp, p.ep = p.stages[0].ep,
        p.etp = p.stages[0].etp;
        for (int mbs : mbss) {
          p.micro_batch_size = mbs;
          std::function<void(int, int)> split = [&](int i, int left) {
            if (i == p.pp - 1) {
              p.stages[i].layers = left;
              long long combos = 1;
              for (int j = 0; j < p.pp; ++j) combos *= choices;
              for (long long rc = 0; rc < combos; ++rc) {
                long long code = rc;
                for (int j = 0; j < p.pp; ++j, code /= choices)
                  p.stages[j].recompute = per_stage[static_cast<size_t>(code % choices)];
                for (double f : fractions) {
                  p.optimizer_offload_fraction = f;
                  auto ev = evaluate_hetero_plan(s, p);
                  if (!ev.ok()) continue;
                  const double t = ev.value().metrics.iteration_time_s;
                  if (ev.value().metrics.fits_memory) best = std::min(best, t);
                  if (points && ev.value().metrics.fits_memory) points->emplace_back(t, ev.value().metrics.cost_per_hour);
                  if (entries && ev.value().metrics.fits_memory) {
                    std::string key = std::to_string(mbs) + "/" + std::to_string(f);
                    for (size_t i = 0; i < order.size(); ++i) {
                      int cls = order[i];  // the lowest-index identical group
                      for (int h = 0; h < order[i]; ++h) {
                        if (s.cluster.groups[h] == s.cluster.groups[order[i]]) { cls = h; break; }
                      }
                      key += "|" + std::to_string(cls) + ":" + std::to_string(meshes[i].tp) + "," +
                             std::to_string(meshes[i].ep) + "," + std::to_string(meshes[i].etp) + "," +
                             std::to_string(meshes[i].dp) + "," + std::to_string(meshes[i].pp);
                    }
                    auto it = entries->find(key);
                    if (it == entries->end() || t < it->second) (*entries)[key] = t;
                  }
                  if (best_ignoring_memory) any = std::min(any, t);
                }
              }
              return;
            }
            for (int n = 1; n <= left - (p.pp - 1 - i); ++n) {
              p.stages[i].layers = n;
              split(i + 1, left - n);
            }
          };
          split(0, L);
        }
        return;
      }
      const NodeGroup& g = s.cluster.groups[order[k]];
      auto allowed = [](const std::vector<int>& list, int v) {
        return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
      };
      for (int tp = 1; tp <= g.gpus_per_node; tp *= 2) {
        if (!allowed(s.search.tp, tp)) continue;
        for (int pp = 1; pp * tp <= g.gpus(); ++pp) {
          if (g.gpus() % (pp * tp) != 0) continue;
          for (int ep = 1; ep <= s.model.num_experts; ep *= 2) {
            if (!allowed(s.search.ep, ep)) continue;
            for (int etp : {1, tp}) {
              meshes[k] = {tp, ep, etp, static_cast<int>(g.gpus() / (pp * tp)), pp};
              pick(k + 1);
              if (tp == 1) break;  // etp {1, 1}: once
            }
          }
        }
      }
    };
    pick(0);
  }
  if (best_ignoring_memory) *best_ignoring_memory = any;
  return best;
}

}  // namespace hapmoe::testing
