// Costing candidates of the search: shared stage cost models, the layer-split problem of one
// candidate, and lower bounds on a candidate's iteration time that hold for every layer split
// (and, for a group set, every order of its groups), so pruning by them never loses the optimum.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/layer_split_dp.hpp"
#include "hapmoe/model_shape.hpp"
#include "hapmoe/parallel_config.hpp"
#include "hapmoe/stage_cost.hpp"

namespace hapmoe {

// StageCostModels shared by every candidate with the same layer-level mesh fields (tp, cp, ep,
// etp, micro-batch, recompute) and node group. O(1) look-up by a packed key.
class StageModelCache {
 public:
  explicit StageModelCache(const Scenario& s) : s_(s) {}
  const StageCostModel* get(const Mesh& mesh, int group);

 private:
  struct Key {
    int tp, cp, ep, etp, mbs, recompute, group;
    bool operator==(const Key& o) const {
      return tp == o.tp && cp == o.cp && ep == o.ep && etp == o.etp && mbs == o.mbs && recompute == o.recompute &&
             group == o.group;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  const Scenario& s_;
  std::unordered_map<int, std::unique_ptr<ModelShape>> shapes_;  // by tp
  std::unordered_map<Key, std::unique_ptr<StageCostModel>, KeyHash> models_;
};

// The layer-split problem of `mesh` with stage i on node group stage_groups[i].
SplitProblem make_split_problem(const Scenario& s, const Mesh& mesh, const std::vector<int>& stage_groups,
                                StageModelCache& cache);

// Per node group: the cheapest per-micro-batch time of any layer (compute + exposed
// communication, without stage extras) and the sum over layers of that group's layer times.
struct GroupLayerTimes {
  double min_layer_s = 0;
  std::vector<double> layer_s;  // per layer
};
GroupLayerTimes group_layer_times(const StageCostModel& model, int num_layers);

// Lower bound on the iteration time of any split and any order of a set of groups holding
// stages[g] stages each (sum = pp): with m micro-batches and v virtual chunks,
//   T >= sum_c / v + (m - 1/v) max_c, where
//   sum_c >= sum over layers of the cheapest group's layer time, and
//   max_c >= the bottleneck: the least C with sum_g stages[g] x floor(C / min_layer_g) >= L, and
//            C >= vpp x min_layer_g for every group (each stage holds at least vpp layers).
// `fractional` drops the floor (cheaper, looser): C >= L / sum_g (stages[g] / min_layer_g).
// max_layers (optional, per group): at most that many layers fit on one stage of the group;
// a set whose stages cannot hold num_layers at all gets 1e300.
double set_lower_bound_s(const std::vector<const GroupLayerTimes*>& times, const std::vector<int>& stages,
                         int num_layers, long long num_microbatches, int vpp, bool fractional,
                         const std::vector<int>* max_layers = nullptr);

// An upper bound on the layers one stage of this model's group can hold in memory at any
// position: every layer costs at least the smallest per-layer weights + gradients + optimizer
// state (sharded as `mesh` shards them) + one micro-batch of activations; no stage extras.
int max_layers_in_memory(const Scenario& s, const StageCostModel& model, const Mesh& mesh);

// Weights, gradients and optimizer state of all layers (with distributed-optimizer sharding, the
// most favourable case) against the free memory of the stages. Returns the shortfall in bytes
// (<= 0 when they may fit).
// dense_params / expert_params: all layers' parameters on one GPU (TP / EP x ETP sharded).
double static_memory_shortfall_bytes(const Scenario& s, const Mesh& mesh, const std::vector<int>& groups,
                                     const std::vector<int>& stages_per_group, double dense_params,
                                     double expert_params);

}  // namespace hapmoe

namespace hapmoe {

// Costs a plan whose stages are those of split problem p (same stage cost models).
PlanEvaluation evaluate_split_problem(const Scenario& s, const SplitProblem& p, const PlanSpec& plan);

// Stage groups of a set in cluster order: each group's stages, groups ascending.
std::vector<int> stage_groups_in_cluster_order(const std::vector<int>& groups, const std::vector<int>& stages_per_group);

// The even split: num_layers / stages each, the first num_layers % stages stages one more.
std::vector<int> even_split(int num_layers, int stages);

}  // namespace hapmoe
