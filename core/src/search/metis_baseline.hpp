// The Metis-style baseline of the HAPMoE paper (§5.1: it "searches heterogeneous PP/DP/TP/CP
// placement while fixing EP/TPE from homogeneous profiling"), defined on our search space:
//  1. EP and ETP are those of the best plan on the homogeneous cluster of the main GPU type
//     (homogeneous_cluster_like(cluster, main_gpu_group(cluster)): same nodes, every GPU the
//     type with the most GPUs, one fabric), with the scenario's own training setup and limits.
//     When that cluster has no plan (memory), the next type of gpu_types_by_count is tried:
//     Metis profiles EP/ETP per type, it does not need the whole model to fit one type;
//  2. on the real cluster, everything else is searched as our search does (TP, CP, DP, PP,
//     micro-batch, VPP, recompute, the GPU groups used, their order and the layer split) with
//     EP and ETP fixed to those values.
// It is a restriction of our search, so its iteration time is never below our best plan's.
#pragma once

#include <optional>
#include <string>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe {

inline constexpr const char* kMetisStyleRule =
    "EP and ETP fixed to those of the best plan on a homogeneous cluster of the main GPU type "
    "(most "
    "GPUs; the next type when that one has no plan), same node shape; everything else (TP, CP, DP, "
    "PP, micro-batch, VPP, recompute, stage GPU "
    "types, order, non-uniform layer split) searched on the real cluster";

struct MetisStyleBaseline {
  std::optional<int> ep, etp;            // from the homogeneous search (empty: none found a plan)
  std::optional<int> homogeneous_group;  // the group whose GPU type the homogeneous cluster used
  std::optional<PlanEvaluation> plan;    // best plan on the real cluster with that EP and ETP
  std::string no_plan_reason;            // why `plan` is empty, from the searches' diagnoses
  bool budget_reached = false;           // either search stopped at its work budget
};

// Runs the two searches of the definition above (each with the same budget).
MetisStyleBaseline metis_style_baseline(const Scenario& s, const SearchBudget& budget = {});

}  // namespace hapmoe
