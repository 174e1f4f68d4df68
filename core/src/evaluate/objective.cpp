#include "evaluate/objective.hpp"

namespace hapmoe {

BilledRates::BilledRates(const ClusterSpec& c) : per_gpu_(c.groups.size(), 0) {
  for (size_t g = 0; g < c.groups.size(); ++g) {
    const NodeGroup& group = c.groups[g];
    if (!group.price_per_gpu_hour) continue;
    if (group.billed_all) {
      fixed_ += static_cast<double>(group.gpus()) * *group.price_per_gpu_hour;
    } else {
      per_gpu_[g] = *group.price_per_gpu_hour;
    }
  }
}

double billed_rate_per_hour(const ClusterSpec& c, const std::vector<long long>& used) {
  const BilledRates rates(c);
  double rate = rates.fixed();
  for (size_t g = 0; g < used.size() && g < c.groups.size(); ++g) rate += rates.used(static_cast<int>(g), used[g]);
  return rate;
}

double tokens_per_iteration(const TrainingSpec& t) {
  return static_cast<double>(t.global_batch_size) * static_cast<double>(t.seq_length);
}

double cost_per_million_tokens(const TrainingSpec& t, double rate_per_hour, double iteration_s) {
  return rate_per_hour * iteration_s / 3600.0 / tokens_per_iteration(t) * 1e6;
}

bool objective_admits(const SearchSpec& s, double rate_per_hour) {
  return s.objective != Objective::kTimeWithinBudget || rate_per_hour <= s.budget_per_hour * (1 + 1e-12);
}

double objective_weight(const SearchSpec& s, double rate_per_hour) {
  return s.objective == Objective::kCost ? rate_per_hour + 1e-9 : 1.0;
}

}  // namespace hapmoe
