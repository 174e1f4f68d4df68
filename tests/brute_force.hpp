// Brute-force reference for the search (tests and benchmarks only): every mesh shape x every
// subset of the eligible GPU groups x every order of those groups x every layer split, costed with
// the same stage costs and objective as the search. It shares only the mesh-shape enumeration and
// the rules with the search -- not its symmetry reduction, bounds or DP.
#pragma once

#include <algorithm>
#include <functional>

#include "search/candidate_cost.hpp"
#include "search/candidate_space.hpp"
#include "search/layer_split_dp.hpp"
#include "evaluate/objective.hpp"
#include "evaluate/rules.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe::testing {

inline double compositions(int n, int k) {  // C(n-1, k-1): splits of n layers into k stages
  double c = 1;
  for (int i = 1; i < k; ++i) c = c * (n - i) / i;
  return c;
}

// Calls fn(mesh, stage_groups) for every candidate: subsets of eligible groups (each used group
// holds all its stages) in every order of the groups.
template <class F>
void for_each_brute_candidate(const Scenario& s, F fn) {
  PruneCounts pruned;
  const CandidateSpace space(s, &pruned);
  for (const MeshShape& shape : space.shapes()) {
    std::vector<int> eligible;
    for (size_t g = 0; g < shape.stages_per_group().size(); ++g) {
      if (shape.stages_per_group()[g] > 0) eligible.push_back(static_cast<int>(g));
    }
    const size_t n = eligible.size();
    for (unsigned long long mask = 1; mask < (1ull << n); ++mask) {
      std::vector<int> used;
      int pp = 0;
      for (size_t b = 0; b < n; ++b) {
        if (mask & (1ull << b)) {
          used.push_back(eligible[b]);
          pp += shape.stages_per_group()[eligible[b]];
        }
      }
      const auto& allowed = s.search.pp;
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), pp) == allowed.end()) continue;
      if (!s.search.layer_split.empty() && pp != static_cast<int>(s.search.layer_split.size())) continue;
      std::sort(used.begin(), used.end());
      const Mesh mesh = space.mesh_for(shape, GroupSet{used});
      if (check_pipeline_rules(s, mesh)) continue;
      if (check_group_set_rules(s, used)) continue;  // one vendor; a common FP8 recipe
      do {
        std::vector<int> stage_groups;
        for (int g : used) stage_groups.insert(stage_groups.end(), shape.stages_per_group()[g], g);
        fn(mesh, stage_groups);
      } while (std::next_permutation(used.begin(), used.end()));
    }
  }
}

// Best objective over the whole space (1e300 when nothing fits); -1 when the number of layer
// splits (written to *splits) exceeds budget.
// *best_recomputes: whether the best plan recomputes.
inline double brute_force_best_once(const Scenario& s, double budget, double* splits, bool* best_recomputes = nullptr) {
  double total = 0;
  for_each_brute_candidate(s, [&](const Mesh& m, const std::vector<int>&) { total += compositions(s.model.num_layers, m.pp); });
  if (splits) *splits = total;
  if (total > budget) return -1;
  StageModelCache cache(s);
  double best = 1e300;
  for_each_brute_candidate(s, [&](const Mesh& mesh, const std::vector<int>& stage_groups) {
    const SplitProblem p = make_split_problem(s, mesh, stage_groups, cache);
    const int min_n = std::max(1, mesh.vpp);
    std::vector<int> v(mesh.pp, min_n);
    SplitCounters k;
    std::function<void(int, int)> rec = [&](int i, int left) {
      if (i == mesh.pp - 1) {
        if (left < min_n) return;
        v[i] = left;
        if (auto obj = split_objective(p, v, &k); obj && *obj < best) {
          best = *obj;
          if (best_recomputes) *best_recomputes = !(mesh.recompute == Recompute::kNone);
        }
        return;
      }
      for (int n = min_n; n <= left - (mesh.pp - i - 1) * min_n; ++n) {
        v[i] = n;
        rec(i + 1, left - n);
      }
    };
    rec(0, s.model.num_layers);
  });
  return best;
}

// One brute-force candidate's best plan: its iteration time and the USD per hour it bills.
struct BrutePoint {
  double time_s;
  double rate;
};

// The best split of every candidate that fits (one point per (mesh, stage order): its other
// splits bill the same and are slower), without the offload fallback.
inline std::vector<BrutePoint> brute_force_points(const Scenario& s) {
  StageModelCache cache(s);
  std::vector<BrutePoint> out;
  for_each_brute_candidate(s, [&](const Mesh& mesh, const std::vector<int>& stage_groups) {
    const SplitProblem p = make_split_problem(s, mesh, stage_groups, cache);
    const int min_n = std::max(1, mesh.vpp);
    std::vector<int> v(mesh.pp, min_n);
    SplitCounters k;
    double best = 1e300;
    std::function<void(int, int)> rec = [&](int i, int left) {
      if (i == mesh.pp - 1) {
        if (left < min_n) return;
        v[i] = left;
        if (auto obj = split_objective(p, v, &k); obj && *obj < best) best = *obj;
        return;
      }
      for (int n = min_n; n <= left - (mesh.pp - i - 1) * min_n; ++n) {
        v[i] = n;
        rec(i + 1, left - n);
      }
    };
    rec(0, s.model.num_layers);
    if (best >= 1e300) return;
    std::vector<long long> used(s.cluster.groups.size(), 0);
    for (int g : stage_groups) used[g] += mesh.stage_gpus();
    out.push_back({best, billed_rate_per_hour(s.cluster, used)});
  });
  return out;
}

// The points no other point beats on both time and cost (rate x time), fastest first, one per
// (time, cost).
inline std::vector<BrutePoint> non_dominated(std::vector<BrutePoint> pts) {
  std::sort(pts.begin(), pts.end(), [](const BrutePoint& a, const BrutePoint& b) {
    if (a.time_s != b.time_s) return a.time_s < b.time_s;
    return a.rate * a.time_s < b.rate * b.time_s;
  });
  std::vector<BrutePoint> front;
  for (const BrutePoint& p : pts) {
    if (front.empty() || p.rate * p.time_s < front.back().rate * front.back().time_s) front.push_back(p);
  }
  return front;
}

// As search_plans: without offload first, then (offload unset, and nothing fits or the best plan
// recomputes) the better of that and the best with its fallbacks.
inline double brute_force_best(const Scenario& s, double budget = 1e300, double* splits = nullptr) {
  bool recomputes = false;
  const double best = brute_force_best_once(s, budget, splits, &recomputes);
  if (best < 0 || (best < 1e300 && !recomputes)) return best;
  const auto offload = offload_fallback_scenario(s);
  if (!offload) return best;
  const double with = brute_force_best_once(*offload, budget, splits);
  return with < 0 ? with : std::min(best, with);
}

}  // namespace hapmoe::testing
