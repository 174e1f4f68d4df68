// Brute-force reference for the search (tests and benchmarks only): every candidate of the
// space x every layer split, costed with the same stage costs and objective as the search.
#pragma once

#include <functional>
#include <map>

#include "hapmoe/layer_split_dp.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe::testing {

inline double compositions(int n, int k) {  // C(n-1, k-1): splits of n layers into k stages
  double c = 1;
  for (int i = 1; i < k; ++i) c = c * (n - i) / i;
  return c;
}

// Best objective over the whole space (1e300 when nothing fits); -1 when the number of layer
// splits (written to *splits) exceeds budget.
inline double brute_force_best(const Scenario& s, double budget = 1e300, double* splits = nullptr) {
  std::map<std::string, long long> pruned;
  const auto candidates = enumerate_candidates(s, &pruned);
  double total = 0;
  for (const auto& c : candidates) total += compositions(s.model.num_layers, c.mesh.pp);
  if (splits) *splits = total;
  if (total > budget) return -1;
  StageModelCache cache(s);
  double best = 1e300;
  for (const auto& c : candidates) {
    const SplitProblem p = make_split_problem(s, c, cache);
    std::vector<int> v(c.mesh.pp, 1);
    SplitCounters k;
    std::function<void(int, int)> rec = [&](int i, int left) {
      if (i == c.mesh.pp - 1) {
        v[i] = left;
        if (auto obj = split_objective(p, v, &k)) best = std::min(best, *obj);
        return;
      }
      for (int n = 1; n <= left - (c.mesh.pp - i - 1); ++n) {
        v[i] = n;
        rec(i + 1, left - n);
      }
    };
    rec(0, s.model.num_layers);
  }
  return best;
}

}  // namespace hapmoe::testing
