#include "search/closest_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hapmoe/search.hpp"
#include "search/candidate_cost.hpp"
#include "search/candidate_space.hpp"

namespace hapmoe {

namespace {

struct Near {
  double static_shortfall_bytes;
  Mesh mesh;
  std::vector<int> stage_groups;
};

// Least static shortfall first; on a tie (the bound leaves activations out) the shape likely to
// keep fewer activation bytes: full recompute, then the smaller micro-batch.
bool nearer(const Near& a, const Near& b) {
  if (a.static_shortfall_bytes != b.static_shortfall_bytes) return a.static_shortfall_bytes < b.static_shortfall_bytes;
  const bool fa = a.mesh.recompute == Recompute::kFull, fb = b.mesh.recompute == Recompute::kFull;
  if (fa != fb) return fa;
  return a.mesh.micro_batch_size < b.mesh.micro_batch_size;
}

// The candidates of the upstream space with the least static shortfall (static_memory_need_bytes
// - static_memory_room_bytes), at most kClosestPlanCosted of them, least first.
std::vector<Near> nearest_candidates(const Scenario& s, StageModelCache& cache) {
  PruneCounts pruned;
  CandidateSpace space(s, &pruned, 5'000'000, kClosestPlanMaxSets);
  std::vector<Near> best;
  long long sets_left = kClosestPlanMaxSets;
  RuleTally cuts;
  for (const MeshShape& shape : space.shapes()) {
    if (sets_left <= 0) break;
    const auto [dense, expert] = cache.layer_params(shape.mesh);
    const double need = static_memory_need_bytes(s, shape.mesh, dense, expert);
    space.for_each_group_set(shape, [&](const GroupSet& set) {
      Mesh mesh;
      std::string_view rule;
      if (!space.complete_mesh(shape, set, &mesh, &rule) || !rule.empty()) return true;
      const double over = need - static_memory_room_bytes(s, set.groups, shape.stages_per_group());
      Near n{over, mesh, {}};
      if (best.size() == kClosestPlanCosted && !nearer(n, best.back())) return true;
      for (int g : set.groups) n.stage_groups.insert(n.stage_groups.end(), shape.stages_per_group()[g], g);
      best.insert(std::upper_bound(best.begin(), best.end(), n, nearer), std::move(n));
      if (best.size() > kClosestPlanCosted) best.pop_back();
      return true;
    }, &cuts, &sets_left);
  }
  return best;
}

// Layers per stage that minimise the largest peak - capacity over the stages (a DP over
// (stage, first layer); each stage at least vpp layers); an even split when that is too much work.
std::vector<int> least_over_split(const Scenario& s, const Near& n, StageCostModel const* const* models) {
  const int pp = n.mesh.pp, L = s.model.num_layers, min_n = std::max(1, n.mesh.vpp);
  std::vector<int> even(pp, L / pp);
  for (int i = 0; i < L % pp; ++i) ++even[i];
  if (static_cast<double>(pp) * L * L > 4e6 || pp * min_n > L) return even;
  const std::vector<StageLinks> links = stage_links(s.cluster, n.mesh.stage_gpus(), n.stage_groups);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // worst[i][j]: the least largest overflow of stages i.. holding layers j..L-1; take[i][j] its first stage's layers.
  std::vector<std::vector<double>> worst(pp + 1, std::vector<double>(L + 1, kInf));
  std::vector<std::vector<int>> take(pp, std::vector<int>(L + 1, 0));
  worst[pp][L] = -kInf;
  for (int i = pp - 1; i >= 0; --i) {
    const int after = pp - 1 - i;
    for (int j = i * min_n; j + (after + 1) * min_n <= L; ++j) {
      for (int len = min_n; j + len + after * min_n <= L; ++len) {
        if (worst[i + 1][j + len] == kInf) continue;
        const StageCost c = models[i]->cost(i, j, len, links[i], n.mesh);
        const double over = std::max(c.peak_bytes() - c.capacity_bytes, worst[i + 1][j + len]);
        if (over < worst[i][j]) {
          worst[i][j] = over;
          take[i][j] = len;
        }
      }
    }
  }
  if (!(worst[0][0] < kInf)) return even;
  std::vector<int> layers;
  for (int i = 0, j = 0; i < pp; j += layers.back(), ++i) layers.push_back(take[i][j]);
  return layers;
}

// The fullest stage of ev (largest peak - capacity) into c.
void set_fullest(ClosestPlan* c) {
  const auto& st = c->evaluation.stages;
  double most = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < st.size(); ++i) {
    const double over = st[i].peak_bytes() - st[i].capacity_bytes;
    if (over > most) {
      most = over;
      c->fullest_stage = static_cast<int>(i);
    }
  }
  c->shortfall_gib = most / kGiB;
}

}  // namespace

std::optional<ClosestPlan> closest_infeasible_plan(const Scenario& s) {
  StageModelCache cache(s);
  std::optional<ClosestPlan> out;
  for (const Near& n : nearest_candidates(s, cache)) {
    std::vector<const StageCostModel*> models;
    for (int g : n.stage_groups) models.push_back(cache.get(n.mesh, g));
    const PlanSpec plan = plan_of(n.mesh, s.cluster, n.stage_groups, least_over_split(s, n, models.data()));
    auto ev = evaluate_upstream_plan(s, plan);
    if (!ev) continue;
    ClosestPlan c{std::move(ev).value(), 0, 0};
    set_fullest(&c);
    if (!std::isfinite(c.shortfall_gib)) continue;
    if (!out || c.shortfall_gib < out->shortfall_gib) out = std::move(c);
  }
  return out;
}

}  // namespace hapmoe
