// Cost-model evaluation of a complete plan: per-stage costs, pipeline iteration time, and the
// metrics users compare (tokens/s, Megatron-comparable TFLOPS/GPU, MFU, memory per stage).
#pragma once

#include <optional>
#include <vector>

#include "hapmoe/error.hpp"
#include "hapmoe/model_shape.hpp"
#include "hapmoe/plan_evaluation.hpp"
#include "hapmoe/schedule.hpp"
#include "hapmoe/specs.hpp"
#include "hapmoe/stage_cost.hpp"
#include "hapmoe/timeline.hpp"

namespace hapmoe {

// Links between consecutive stages, given each stage's node group. Stages of one group sit on
// consecutive ranks of that group's nodes (Megatron's pp-outermost rank order).
std::vector<StageLinks> stage_links(const ClusterSpec& c, long long stage_gpus,
                                    const std::vector<int>& stage_groups);
// The same into *links, keeping its buffer (and seen's: scratch).
void stage_links(const ClusterSpec& c, long long stage_gpus, const std::vector<int>& stage_groups,
                 std::vector<StageLinks>* links, std::vector<long long>* seen);
// The link from a stage to the next: group ga's local_a-th stage to group gb's local_b-th (a
// stage's index among the stages on its group, in pipeline order).
Link stage_link(const ClusterSpec& c, long long stage_gpus, int ga, long long local_a, int gb, long long local_b);

// Costs a plan that already passed the rules, with one StageCostModel per node group built for
// the plan's mesh (models[g] is used for stages on group g).
PlanEvaluation evaluate_with_models(const Scenario& s, const PlanSpec& plan,
                                    const std::vector<const StageCostModel*>& models);

// The plan's concrete schedule (timeline.hpp): a stage's forward op is its forward compute, the
// forward part of its exposed TP/CP/EP communication and half its p2p; the backward op the rest of
// per_microbatch_s. Refused (nullopt) above kMaxTimelineChunkSlots.
std::optional<Timeline> plan_timeline(const PlanEvaluation& ev);

// An upstream Megatron-LM plan: checks the Megatron rules, then costs the plan. A rule violation
// is an Error whose code is "rule:<name>". (evaluate_plan, planner.hpp, picks the runtime.)
Expected<PlanEvaluation> evaluate_upstream_plan(const Scenario& s, const PlanSpec& plan);

}  // namespace hapmoe
