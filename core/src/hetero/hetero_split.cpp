#include "hetero/hetero_split.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hapmoe/schedule.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe {

namespace {

struct Label {
  double sum_c, max_c, max_tail;
  int prev_layers, prev_label, option;
};

bool dominates(const Label& a, const Label& b) {
  return a.sum_c <= b.sum_c && a.max_c <= b.max_c && a.max_tail <= b.max_tail;
}


// Adds `next` to `there` unless a label there dominates it; drops the labels it dominates.
// k->label_steps counts the labels compared (work for the budget).
void insert_pareto(std::vector<Label>& there, const Label& next, SplitCounters* k) {
  k->label_steps += static_cast<long long>(there.size()) + 1;
  for (const Label& o : there) {
    if (dominates(o, next)) {
      ++k->dominated;
      return;
    }
  }
  const size_t before = there.size();
  there.erase(std::remove_if(there.begin(), there.end(),
                             [&](const Label& o) { return dominates(next, o); }),
              there.end());
  k->dominated += static_cast<long long>(before - there.size());
  there.push_back(next);
}

// Per-layer lower bound over every option of every stage, summed from each layer to the end.
std::vector<double> suffix_min_layer_times(const HeteroSplitProblem& p) {
  std::vector<double> least(p.num_layers, std::numeric_limits<double>::max());
  for (const auto& opts : p.options) {
    for (const StageOption& o : opts) {
      for (int l = 0; l < p.num_layers; ++l) {
        const LayerCost& c = o.model->layer(l);
        least[l] = std::min(least[l], c.fwd_s + c.bwd_s + c.tp_s + c.cp_s + c.ep_s);
      }
    }
  }
  std::vector<double> suffix(p.num_layers + 1, 0.0);
  for (int l = p.num_layers - 1; l >= 0; --l) suffix[l] = suffix[l + 1] + least[l];
  return suffix;
}
}  // namespace

std::optional<HeteroSplit> best_hetero_split(const HeteroSplitProblem& p, SplitCounters* k,
                                             HeteroSplitStatus* status) {
  const int pp = static_cast<int>(p.options.size()), L = p.num_layers;
  if (pp < 1 || pp > L) return std::nullopt;
  const std::vector<double> suffix = suffix_min_layer_times(p);
  auto objective = [&](double sum_c, double max_c, double tail) {
    return iteration_time_s(sum_c, max_c, tail, p.num_microbatches, 1);
  };
  // Lower bound of any completion of a label after `done` stages over j layers.
  auto bound = [&](const Label& lab, int done, int j) {
    const int left = pp - done;
    if (left == 0) return objective(lab.sum_c, lab.max_c, lab.max_tail);
    return objective(lab.sum_c + suffix[j], std::max(lab.max_c, suffix[j] / left), lab.max_tail);
  };
  unsigned clock_checks = 0;
  std::vector<std::vector<Label>> states(static_cast<size_t>(pp + 1) * (L + 1));
  auto state = [&](int i, int j) -> std::vector<Label>& {
    return states[static_cast<size_t>(i) * (L + 1) + j];
  };
  state(0, 0).push_back({0, 0, 0, -1, -1, -1});
  for (int i = 0; i < pp; ++i) {
    const int stages_after = pp - i - 1;
    for (int j = i; j <= L - (pp - i); ++j) {
      std::vector<Label>& here = state(i, j);
      if (here.empty()) continue;
      const int max_n = L - j - stages_after;
      for (int o = 0; o < static_cast<int>(p.options[i].size()); ++o) {
        const StageOption& opt = p.options[i][o];
        for (int n = 1; n <= max_n; ++n) {
          if (k->work() >= p.max_stage_costs) {
            if (status) status->budget_reached = true;
            return std::nullopt;
          }
          if (++clock_checks % 4096 == 0 && search_clock_s() >= p.deadline_s) {
            if (status) status->budget_reached = status->past_deadline = true;
            return std::nullopt;
          }
          const StageCost c = opt.model->cost(i, j, n, p.links[i], opt.mesh);
          ++k->stage_costs;
          if (!usable_stage_cost(c)) {  // memory only grows with n
            k->memory += max_n - n + 1;
            note_stage_shortfall(k, c);
            break;
          }
          if (p.margin > 0 && !c.within_margin(p.margin)) break;
          // grows: sum c with the later layers at their cheapest, max c and the label's tail. A
          // stage gains at least a layer's cheapest time per added layer, so it never decreases
          // with n: once it reaches the incumbent for every label, no larger n can win.
          double least_grows = 1e300;
          k->label_steps += static_cast<long long>(here.size());
          for (int li = 0; li < static_cast<int>(here.size()); ++li) {
            const Label& lab = here[li];
            const Label next{lab.sum_c + c.per_microbatch_s(),
                             std::max(lab.max_c, c.per_microbatch_s()),
                             std::max(lab.max_tail, c.tail_s()),
                             j,
                             li,
                             o};
            const double rest = stages_after > 0 ? suffix[j + n] : 0.0;
            least_grows =
                std::min(least_grows, objective(next.sum_c + rest, next.max_c, lab.max_tail));
            if (bound(next, i + 1, j + n) >= p.incumbent_s) {
              ++k->lower_bound;
              continue;
            }
            insert_pareto(state(i + 1, j + n), next, k);
          }
          if (least_grows >= p.incumbent_s) {
            k->lower_bound += max_n - n;
            break;
          }
        }
      }
    }
  }
  const std::vector<Label>& last = state(pp, L);
  int best = -1;
  double best_obj = p.incumbent_s;
  for (int li = 0; li < static_cast<int>(last.size()); ++li) {
    const double obj = objective(last[li].sum_c, last[li].max_c, last[li].max_tail);
    if (obj < best_obj) best_obj = obj, best = li;
  }
  if (best < 0) return std::nullopt;
  HeteroSplit r;
  r.objective_s = best_obj;
  r.layers.assign(pp, 0);
  r.option.assign(pp, 0);
  for (int i = pp, j = L, li = best; i > 0; --i) {
    const Label& lab = state(i, j)[li];
    r.layers[i - 1] = j - lab.prev_layers;
    r.option[i - 1] = lab.option;
    li = lab.prev_label;
    j = lab.prev_layers;
  }
  return r;
}

std::optional<double> hetero_split_objective(const HeteroSplitProblem& p,
                                             const std::vector<int>& layers,
                                             const std::vector<int>& option, SplitCounters* k) {
  return split_objective_by(layers, p.num_microbatches, 1, k, [&](int i, int first, int n) {
    const StageOption& o = p.options[i][option[i]];
    return o.model->cost(i, first, n, p.links[i], o.mesh);
  });
}

}  // namespace hapmoe
