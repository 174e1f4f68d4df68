#include "evaluate/resilience.hpp"

#include <algorithm>
#include <cmath>

#include "hapmoe/cost_memory.hpp"
#include "hapmoe/model_shape.hpp"

namespace hapmoe {

double daly_interval_s(double write_s, double mtbf_s) {
  if (!(write_s < 2 * mtbf_s)) return mtbf_s;
  const double x = write_s / (2 * mtbf_s);
  return std::sqrt(2 * write_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - write_s;
}

double daly_goodput(double interval_s, double write_s, double mtbf_s, double restart_s) {
  const double wall_per_useful =
      mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + write_s) / mtbf_s) / interval_s;
  return 1 / wall_per_useful;
}

std::optional<Resilience> plan_resilience(const Scenario& s, const PlanEvaluation& ev) {
  const TrainingSpec& t = s.training;
  if (!(t.checkpoint_write_gbps > 0)) return std::nullopt;
  Resilience r;
  const WeightBytes bytes = weight_bytes(t, 0);
  r.checkpoint_bytes = total_params(s.model, derive_model_shape(s.model, 1)) * (bytes.param + bytes.optimizer);
  r.write_s = r.checkpoint_bytes / (t.checkpoint_write_gbps * 1e9);
  const std::vector<long long>& used = ev.metrics.gpus_used_per_group;
  for (size_t g = 0; g < used.size() && g < s.cluster.groups.size(); ++g) {
    const long long per_node = s.cluster.groups[g].gpus_per_node;
    r.nodes += (used[g] + per_node - 1) / per_node;
  }
  r.nodes = std::max(1LL, r.nodes);
  r.job_mtbf_s = 365.0 * 24 * 3600 / (t.node_failures_per_year * static_cast<double>(r.nodes));
  r.interval_s = daly_interval_s(r.write_s, r.job_mtbf_s);
  const double iteration = ev.metrics.iteration_time_s;
  // In iterations, at least 1; capped at 1e15 (a run of that many iterations is longer than any
  // job) so that the conversion stays in range for any accepted input.
  r.save_interval = static_cast<long long>(std::llround(std::clamp(r.interval_s / iteration, 1.0, 1e15)));
  r.goodput = daly_goodput(r.interval_s, r.write_s, r.job_mtbf_s, t.restart_s);
  return r;
}

}  // namespace hapmoe
