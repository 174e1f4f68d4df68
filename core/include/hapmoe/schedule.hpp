// Pipeline iteration time from per-stage per-micro-batch times (DESIGN.md):
//   1F1B:        T = sum_i c_i + (m - 1) max_i c_i
//   interleaved: T = sum_i c_i / v + (m - 1/v) max_i c_i   (the bubble divided by v)
// plus the per-iteration tail (exposed DP communication + optimizer), max over stages.
#pragma once

#include <vector>

namespace hapmoe {

// The objective shared by plan evaluation and the layer-split DP (inline: the DP's bounds call
// it in their innermost loop).
inline double iteration_time_s(double sum_c, double max_c, double max_tail, long long num_microbatches,
                               int vpp) {
  const double v = vpp;
  return sum_c / v + (static_cast<double>(num_microbatches) - 1 / v) * max_c + max_tail;
}

struct PipelineTime {
  double pipeline_s = 0;  // forward/backward schedule incl. bubbles
  double tail_s = 0;      // exposed DP comm + optimizer
  double iteration_s = 0;
  double bubble_fraction = 0;  // idle share of stage-time in the pipeline part
};

// c: per-stage per-micro-batch time; tail: per-stage per-iteration tail.
PipelineTime pipeline_time(const std::vector<double>& c, const std::vector<double>& tail,
                           long long num_microbatches, int vpp);

}  // namespace hapmoe
