// The concrete pipeline schedule behind the core's iteration time (schedule.hpp): every forward
// and backward of every micro-batch (and virtual chunk) on every stage, in Megatron's 1F1B /
// interleaved op order, plus each stage's per-iteration tail (exposed DP communication, then the
// optimizer step). Its pipeline part ends at pipeline_time(): see timeline.cpp for how.
#pragma once

#include <vector>

namespace hapmoe {

// One stage's per-micro-batch durations (whole stage, all virtual chunks) and per-iteration tail.
struct StageDurations {
  double forward_s = 0;   // forward compute + the exposed forward communication + half the p2p
  double backward_s = 0;  // backward compute (+ recompute) + the rest of the communication
  double comm_forward_s = 0, comm_backward_s = 0;  // the communication parts of the two above
  double dp_s = 0, optimizer_s = 0;                // per-iteration tail
};

enum class OpKind : char { kForward = 'F', kBackward = 'B' };

struct TimelineOp {
  int stage = 0;
  OpKind kind = OpKind::kForward;
  int chunk = 0;             // virtual chunk, 0..vpp-1
  long long microbatch = 0;  // 0..m-1
  double start_s = 0, end_s = 0;
  double comm_s = 0;         // exposed communication inside [start_s, end_s] (drawn at its end)
};

struct Timeline {
  std::vector<TimelineOp> ops;   // per stage in execution order, stage 0 first
  double pipeline_s = 0;         // end of the last backward
  double iteration_s = 0;        // pipeline_s + the longest tail
  double bubble_fraction = 0;    // idle share of stage-time in [0, pipeline_s]
  // Share of each stage's steady-state slack (bottleneck round minus its own) that the stage
  // waits per 1F1B round so the schedule ends at the cost model's pipeline time (0: none needed).
  double pacing_share = 0;
  bool matches_cost_model = true;  // false only if Megatron's order cannot reach the formula
};

// Largest p x vpp x m schedule build_timeline accepts (ops = 2x this); bigger plans are refused.
inline constexpr long long kMaxTimelineChunkSlots = 1 << 16;

// Megatron's per-rank op order: {kind, chunk, microbatch} for stage `rank` of `pp`.
struct OrderedOp {
  OpKind kind;
  int chunk;
  long long microbatch;
};
std::vector<OrderedOp> megatron_op_order(int rank, int pp, long long num_microbatches, int vpp);

// The schedule for per-stage durations, m micro-batches and vpp chunks (all >= 1;
// pp x vpp x m <= kMaxTimelineChunkSlots).
Timeline build_timeline(const std::vector<StageDurations>& stages, long long num_microbatches, int vpp);

}  // namespace hapmoe
