#include "hapmoe/schedule.hpp"

#include <algorithm>

namespace hapmoe {

PipelineTime pipeline_time(const std::vector<double>& c, const std::vector<double>& tail,
                           long long num_microbatches, int vpp) {
  PipelineTime t;
  double sum = 0, mx = 0, max_tail = 0;
  for (double x : c) {
    sum += x;
    mx = std::max(mx, x);
  }
  for (double x : tail) max_tail = std::max(max_tail, x);
  t.iteration_s = iteration_time_s(sum, mx, max_tail, num_microbatches, vpp);
  t.tail_s = max_tail;
  t.pipeline_s = t.iteration_s - max_tail;
  if (t.pipeline_s > 0 && !c.empty()) {
    const double busy = sum * static_cast<double>(num_microbatches);
    const double bubble = 1 - busy / (static_cast<double>(c.size()) * t.pipeline_s);
    // A balanced pipeline with one micro-batch per stage has no bubble; what the division leaves
    // below kRoundingBubble is double rounding, reported as 0.
    constexpr double kRoundingBubble = 1e-12;
    t.bubble_fraction = bubble < kRoundingBubble ? 0.0 : bubble;
  }
  return t;
}

}  // namespace hapmoe
