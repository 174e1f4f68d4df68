#include "hetero/hetero_space.hpp"

#include <algorithm>

#include "hapmoe/hetero_plan.hpp"
#include "evaluate/rules.hpp"
#include "spec/recompute.hpp"

namespace hapmoe {

namespace {

std::vector<int> powers_of_two_dividing(int n) {
  std::vector<int> out;
  for (int x = 1; x <= n; x *= 2) {
    if (n % x == 0) out.push_back(x);
  }
  return out;
}

}  // namespace

bool search_allows(const std::vector<int>& list, int value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

std::vector<int> search_values_or(const std::vector<int>& list, std::vector<int> fallback) {
  return list.empty() ? fallback : list;
}

std::vector<HeteroShape> hetero_group_shapes(const Scenario& s, int group, long long* combinations_left) {
  const SearchSpec& sp = s.search;
  const NodeGroup& g = s.cluster.groups[group];
  const long long gpus = g.gpus();
  const std::vector<int> eps = search_values_or(
      sp.ep, s.model.is_moe() ? powers_of_two_dividing(s.model.num_experts) : std::vector<int>{1});
  std::vector<HeteroShape> out;
  for (int tp : search_values_or(sp.tp, powers_of_two_dividing(g.gpus_per_node))) {
    if (gpus % tp != 0) continue;
    for (long long pp = 1; pp <= gpus / tp && pp <= s.model.num_layers; ++pp) {
      if ((gpus / tp) % pp != 0) continue;
      const long long dp = gpus / tp / pp;
      const std::vector<int> etps =
          tp > 1 && s.model.is_moe() ? std::vector<int>{1, tp} : std::vector<int>{1};
      for (int ep : eps) {
        for (int etp : search_values_or(sp.etp, etps)) {
          // The enumeration budget: a combination here checks every rule (~100 ns, 8 units of
          // the upstream enumeration's ~12 ns).
          if (combinations_left && (*combinations_left -= 8) < 0) {
            *combinations_left = 0;
            return out;
          }
          Mesh m;
          m.tp = tp;
          m.dp = static_cast<int>(dp);
          m.pp = static_cast<int>(pp);
          m.ep = ep;
          m.etp = etp;
          m.sequence_parallel = tp > 1;
          if (check_shape_rules(s, m) || check_group_rules(s, m, group)) continue;
          out.push_back({tp, ep, etp, static_cast<int>(dp), static_cast<int>(pp)});
        }
      }
    }
  }
  return out;
}

bool hetero_group_orders(const Scenario& s, size_t max_orders, std::vector<std::vector<int>>& out) {
  const auto& groups = s.cluster.groups;
  const int n = static_cast<int>(groups.size());
  std::vector<std::string> type(n);
  for (int g = 0; g < n; ++g) type[g] = device_type_of(groups[g].gpu);
  auto extends = [&](const std::vector<int>& prefix, int g) {
    std::vector<bool> used(n, false);
    for (int x : prefix) used[x] = true;
    if (used[g]) return false;
    for (int h = 0; h < g; ++h) {
      if (!used[h] && groups[h] == groups[g]) return false;  // its identical twin h comes first
    }
    if (prefix.empty() || type[prefix.back()] == type[g]) return true;
    for (int x : prefix) {
      if (type[x] == type[g]) return false;  // this type's meshes would not be adjacent
    }
    return true;
  };
  std::vector<std::vector<int>> level = {{}};
  while (!level.empty()) {
    std::vector<std::vector<int>> next;
    for (const auto& prefix : level) {
      for (int g = 0; g < n; ++g) {
        if (!extends(prefix, g)) continue;
        if (out.size() >= max_orders) return false;
        next.push_back(prefix);
        next.back().push_back(g);
        out.push_back(next.back());
      }
    }
    level = std::move(next);
  }
  return true;
}

PlanSpec hetero_plan_of(const Scenario& s, const std::vector<int>& order, const std::vector<HeteroShape>& meshes,
                        int mbs, const std::vector<int>& layers, const std::vector<Recompute>& recompute,
                        double offload) {
  PlanSpec p;
  p.optimizer_offload_fraction = offload;
  p.micro_batch_size = mbs;
  p.vpp = 1;
  if (s.training.moe_token_dispatcher_type == Dispatcher::kAllgather) p.dispatch = Dispatch::kAllgather;
  for (size_t k = 0; k < order.size(); ++k) {
    const HeteroShape& h = meshes[k];
    for (int j = 0; j < h.pp; ++j) {
      StagePlan st;
      st.group = order[k];
      st.gpu = s.cluster.groups[order[k]].gpu.id;
      st.tp = h.tp, st.cp = 1, st.dp = h.dp, st.ep = h.ep, st.etp = h.etp;
      p.stages.push_back(st);
    }
  }
  p.pp = static_cast<int>(p.stages.size());
  for (int i = 0; i < p.pp; ++i) {
    p.stages[i].layers = layers[i];
    p.stages[i].recompute = recompute[i];
  }
  const StagePlan& first = p.stages.front();
  p.tp = first.tp, p.cp = 1, p.dp = first.dp, p.ep = first.ep, p.etp = first.etp;
  p.sequence_parallel = p.tp > 1;
  return p;
}

std::vector<std::vector<Recompute>> hetero_recompute_sets(const Scenario& s) {
  // The same choices as the upstream search (default_recompute_choices: none, the model's
  // --recompute-modules sets, full): FlagScale's pinned Megatron-LM (8479eb35, 2025-09-19) has
  // --recompute-modules with all seven modules.
  const std::vector<Recompute> all = s.search.recompute.empty() ? default_recompute_choices(s.model) : s.search.recompute;
  std::vector<Recompute> per_stage;  // FlagScale's per-stage switch: each stage none or full
  for (Recompute r : {Recompute::kNone, Recompute::kFull}) {
    if (std::find(all.begin(), all.end(), r) != all.end()) per_stage.push_back(r);
  }
  std::vector<std::vector<Recompute>> sets;
  if (!per_stage.empty()) sets.push_back(per_stage);
  // Selective recompute is one Megatron flag set for every stage.
  for (const Recompute& r : all) {
    if (r.kind == Recompute::Kind::kSelective) sets.push_back({r});
  }
  return sets;
}

}  // namespace hapmoe
