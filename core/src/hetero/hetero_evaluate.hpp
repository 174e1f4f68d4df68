// Cost-model evaluation of a "hetero" plan: each stage is costed with its own mesh
// (hetero_stage_mesh: its TP/EP/ETP/DP and the rescaled micro-batch DP0 x mbs / DPi), the
// pipeline p2p where two meshes meet pays for resharding the activations, and the DP gradient
// reduce runs per mesh. Same objective and metrics as evaluate.hpp.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "hapmoe/evaluate.hpp"
#include "search/candidate_cost.hpp"

namespace hapmoe {

// Messages one rank of a mesh with `from_shards` shards of a dimension exchanges with a mesh of
// `to_shards` shards (FlagScale get_inter_mesh_tensor_slices: overlapping 1-D segments): the
// two partitions cut the dimension into from + to - gcd(from, to) pieces, spread over `from` ranks.
double reshard_pieces_per_rank(int from_shards, int to_shards);

// Links between consecutive stages of a hetero plan: inside a group as in stage_links (each
// mesh's stages on consecutive ranks of its group), between groups the inter-group link (for
// GPUs of different vendors: the cluster's inter-group link); where two meshes of different
// TP/DP meet, each side's latency is paid once per reshard piece.
std::vector<StageLinks> hetero_stage_links(const ClusterSpec& c, const PlanSpec& p);

// What the links between two meshes depend on besides their groups.
struct HeteroMeshShape {
  int tp = 1, cp = 1, dp = 1;
};
// The links where a mesh on group ga (its last stage: `next`) meets the next on group gb != ga
// (its first stage: `prev`): the inter-group link, each side's latency paid once per reshard piece.
StageLinks hetero_mesh_boundary(const ClusterSpec& c, int ga, const HeteroMeshShape& a, int gb,
                                const HeteroMeshShape& b);
// The link between two stages of one group whose ranks start at first_rank_a and end at
// last_rank_b: the scale-up link when both are on one node, else the scale-out link.
Link hetero_group_link(const NodeGroup& g, long long first_rank_a, long long last_rank_b);

// Hetero plans use the one stage-model cache (candidate_cost.hpp), keyed by every mesh field a
// stage's cost depends on.
using HeteroModelCache = StageModelCache;

// Costs a hetero plan that passed check_hetero_plan_rules.
PlanEvaluation evaluate_hetero_with_cache(const Scenario& s, const PlanSpec& plan,
                                          HeteroModelCache& cache);

// Checks the hetero rules, then costs the plan; a violation is an Error "rule:<name>".
Expected<PlanEvaluation> evaluate_hetero_plan(const Scenario& s, const PlanSpec& plan);

}  // namespace hapmoe
