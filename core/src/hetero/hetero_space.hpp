// The "hetero" mode search space: per node group, the process mesh shapes that use all of its
// GPUs; the group orders along the pipeline; the recompute choices per stage.
#pragma once

#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe {

// One node group's process mesh shape (cp = 1).
struct HeteroShape {
  int tp = 1, ep = 1, etp = 1, dp = 1, pp = 1;
};

// A search.<dim> list: empty allows any value.
bool search_allows(const std::vector<int>& list, int value);
// The list, or `fallback` when it is empty.
std::vector<int> search_values_or(const std::vector<int>& list, std::vector<int> fallback);

// Every mesh shape that uses all of `group`'s GPUs and passes Megatron's shape rules and the
// group rules (TP inside the scale-up domain, node alignment, FP8), within search.tp/ep/etp.
// *combinations_left (when given): what the enumeration budget still allows, counted down by 8
// per (tp, pp, ep, etp) combination looked at (each checks every rule); the shapes stop there
// once it reaches 0.
std::vector<HeteroShape> hetero_group_shapes(const Scenario& s, int group, long long* combinations_left = nullptr);

// Group orders along the pipeline, shortest first: sequences of distinct groups in which groups
// of one device type are adjacent (rule_hetero_device_types_adjacent). Identical groups are
// interchangeable (same GPUs, same links), so among them the lowest unused index comes first. At
// most max_orders orders; false when that cut the list.
bool hetero_group_orders(const Scenario& s, size_t max_orders, std::vector<std::vector<int>>& out);

// The plan of group order `order` with meshes[k] on order[k], mesh 0's micro-batch mbs, and per
// stage its layers and recompute; every mesh's optimizer offload fraction `offload`. FlagScale's
// Megatron-LM: the alltoall or allgather dispatcher, no CUDA graphs (hetero_rules.hpp).
PlanSpec hetero_plan_of(const Scenario& s, const std::vector<int>& order, const std::vector<HeteroShape>& meshes,
                        int mbs, const std::vector<int>& layers, const std::vector<Recompute>& recompute,
                        double offload);

// The recompute choices the DP is given per stage: "none"/"full" (chosen per stage) and, as a
// separate run, "selective" on every stage (within search.recompute).
std::vector<std::vector<Recompute>> hetero_recompute_sets(const Scenario& s);

}  // namespace hapmoe
