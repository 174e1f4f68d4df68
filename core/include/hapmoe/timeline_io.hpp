// Timeline JSON (docs/scenario.md, "Timeline"): the schedule of timeline.hpp for one plan.
#pragma once

#include <nlohmann/json.hpp>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/timeline.hpp"

namespace hapmoe {

// {"pipeline_s", "iteration_s", "bubble_fraction", "pacing_share", "matches_cost_model",
//  "num_microbatches", "vpp", "stages": [{"stage", "gpu", "forward_op_s", "backward_op_s",
//  "forward_comm_op_s", "backward_comm_op_s", "kinds": "FF..B", "chunks", "microbatches",
//  "starts_s", "tail": {"start_s", "dp_s", "optimizer_s", "end_s"}}]}: op k of a stage is
//  kinds[k] of chunks[k] / microbatches[k], from starts_s[k] for its kind's *_op_s.
nlohmann::json timeline_to_json(const PlanEvaluation& ev, const Timeline& t);

}  // namespace hapmoe
