// The search objective (search.objective) and what a plan costs: the USD per hour its GPUs bill
// (cluster.groups[].price_per_gpu_hour, billed "used" or "all") and its USD per million training
// tokens. Both engines and the planner rank and prune by objective_value, and both engines'
// bounds extend to it through objective_weight: a plan's value is its time times the weight of
// the rate its entry bills, and an entry fixes the GPUs it uses of each group (upstream: its
// stages per group times the stage's GPUs; hetero: every GPU of its groups), so an entry's
// lower bound on time times its weight bounds the value of every plan in it.
#pragma once

#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe {

// USD per hour billed by a plan that uses used[g] GPUs of group g: the used GPUs of "used"
// groups, every GPU of "all" groups (0 without prices).
double billed_rate_per_hour(const ClusterSpec& c, const std::vector<long long>& used);

// The table behind billed_rate_per_hour, for the engines to ask per entry without a vector per
// call: the rate of the "all" groups once, and each "used" group's price per GPU (0 for "all").
class BilledRates {
 public:
  explicit BilledRates(const ClusterSpec& c);
  // A plan's rate is fixed() plus used(g, its GPUs of g) for every group g it uses.
  double fixed() const { return fixed_; }
  double used(int group, long long gpus) const { return per_gpu_[static_cast<size_t>(group)] * static_cast<double>(gpus); }

 private:
  double fixed_ = 0;
  std::vector<double> per_gpu_;
};

// Tokens trained per iteration (global batch x sequence length).
double tokens_per_iteration(const TrainingSpec& t);

// USD per million training tokens at `rate_per_hour` and `iteration_s` seconds per iteration.
double cost_per_million_tokens(const TrainingSpec& t, double rate_per_hour, double iteration_s);

// Whether the objective admits a plan billing `rate_per_hour` (time_within_budget: at most the
// budget; the others: always).
bool objective_admits(const SearchSpec& s, double rate_per_hour);

// objective_value = iteration time x objective_weight: 1 for "time" and "time_within_budget";
// for "cost" the rate plus a tie-break of 1e-9 USD/hour (plans billing nothing are then ordered by
// time; the term moves no value above another's by more than 1e-9 of its rate). Positive.
double objective_weight(const SearchSpec& s, double rate_per_hour);
inline double objective_value(const SearchSpec& s, double rate_per_hour, double iteration_s) {
  return iteration_s * objective_weight(s, rate_per_hour);
}

}  // namespace hapmoe
