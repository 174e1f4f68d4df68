#include "hapmoe/layer_split_dp.hpp"

#include <algorithm>
#include <limits>

#include "hapmoe/schedule.hpp"

namespace hapmoe {

namespace {
struct Label {
  double sum_c, max_c, max_tail;
  int prev_layers;  // layers in the previous state (j of the predecessor)
  int prev_label;   // index of the predecessor label
};

bool dominates(const Label& a, const Label& b) {
  return a.sum_c <= b.sum_c && a.max_c <= b.max_c && a.max_tail <= b.max_tail;
}

}  // namespace

struct SplitScratch::Buffers {
  std::vector<std::vector<Label>> states;  // (stage, layers) -> labels, flattened
  std::vector<double> layer_min, suffix_min;
  std::vector<std::pair<double, double>> costs;
};

SplitScratch::SplitScratch() : buffers_(std::make_unique<Buffers>()) {}
SplitScratch::~SplitScratch() = default;

namespace {

void note_shortfall(SplitCounters* k, const StageCost& c) {
  const double over = c.peak_bytes() - c.capacity_bytes;
  if (k->min_shortfall_bytes < 0 || over < k->min_shortfall_bytes) k->min_shortfall_bytes = over;
}
}  // namespace

std::optional<double> split_objective(const SplitProblem& p, const std::vector<int>& layers,
                                      SplitCounters* k) {
  double sum = 0, mx = 0, tail = 0;
  int first = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const StageCost c = p.stage_models[i]->cost(static_cast<int>(i), first, layers[i], p.links[i], p.mesh);
    ++k->stage_costs;
    if (!c.fits()) {
      ++k->memory;
      note_shortfall(k, c);
      return std::nullopt;
    }
    sum += c.per_microbatch_s();
    mx = std::max(mx, c.per_microbatch_s());
    tail = std::max(tail, c.tail_s());
    first += layers[i];
  }
  return iteration_time_s(sum, mx, tail, p.num_microbatches, p.vpp);
}

std::optional<SplitResult> best_layer_split(const SplitProblem& p, SplitCounters* k) {
  const int pp = static_cast<int>(p.stage_models.size());
  const int L = p.num_layers;
  const int min_n = std::max(1, p.vpp);  // each virtual chunk of a stage holds a layer
  if (pp < 1 || L < static_cast<long long>(pp) * min_n) return std::nullopt;
  SplitScratch local;
  SplitScratch::Buffers& buf = p.scratch ? p.scratch->buffers() : local.buffers();
  // Lower bound on the per-micro-batch time still to come: cheapest cost of each remaining
  // layer over the remaining stages' GPU types (compute + communication, no extras).
  std::vector<double>& layer_min = buf.layer_min;
  layer_min.assign(L, std::numeric_limits<double>::max());
  for (size_t i = 0; i < p.stage_models.size(); ++i) {
    if (i > 0 && p.stage_models[i] == p.stage_models[i - 1]) continue;  // same model, same costs
    for (int l = 0; l < L; ++l) {
      const LayerCost& c = p.stage_models[i]->layer(l);
      layer_min[l] = std::min(layer_min[l], c.fwd_s + c.bwd_s + c.tp_s + c.cp_s + c.ep_s);
    }
  }
  std::vector<double>& suffix_min = buf.suffix_min;
  suffix_min.assign(L + 1, 0.0);
  for (int l = L - 1; l >= 0; --l) suffix_min[l] = suffix_min[l + 1] + layer_min[l];
  auto bound = [&](const Label& lab, int stage_done, int layers_done) {
    const int left = pp - stage_done;
    double max_c = lab.max_c;
    double sum_c = lab.sum_c;
    if (left > 0) {
      max_c = std::max(max_c, suffix_min[layers_done] / left);
      sum_c += suffix_min[layers_done];
    }
    return iteration_time_s(sum_c, max_c, lab.max_tail, p.num_microbatches, p.vpp);
  };

  // state(i, j): labels after i stages covering layers [0, j)
  std::vector<std::vector<Label>>& states = buf.states;
  const size_t num_states = static_cast<size_t>(pp + 1) * (L + 1);
  if (states.size() < num_states) states.resize(num_states);
  for (size_t x = 0; x < num_states; ++x) states[x].clear();
  auto state = [&](int i, int j) -> std::vector<Label>& { return states[static_cast<size_t>(i) * (L + 1) + j]; };
  state(0, 0).push_back({0, 0, 0, -1, -1});
  for (int i = 0; i < pp; ++i) {
    const int stages_after = pp - i - 1;
    for (int j = i * min_n; j <= L - (pp - i) * min_n; ++j) {
      const std::vector<Label>& here = state(i, j);
      // Stage i over layers [j, j + n) does not depend on the label: cost each n once per state
      // (per_microbatch, tail), computed as far as some label needs it.
      std::vector<std::pair<double, double>>& costs = buf.costs;
      costs.clear();
      int fits_up_to = L + 1;  // first n that does not fit (peak memory only grows with n)
      const int max_n = L - j - stages_after * min_n;
      for (int li = 0; li < static_cast<int>(here.size()); ++li) {
        const Label& lab = here[li];
        if (bound(lab, i, j) >= p.incumbent_s) {
          ++k->lower_bound;
          continue;
        }
        for (int n = min_n; n <= max_n; ++n) {
          if (n >= fits_up_to) {
            k->memory += max_n - n + 1;
            break;
          }
          if (n - min_n >= static_cast<int>(costs.size())) {
            const StageCost c = p.stage_models[i]->cost(i, j, n, p.links[i], p.mesh);
            ++k->stage_costs;
            if (!c.fits()) {
              fits_up_to = n;
              k->memory += max_n - n + 1;
              note_shortfall(k, c);
              break;
            }
            costs.emplace_back(c.per_microbatch_s(), c.tail_s());
          }
          const auto [c_mb, c_tail] = costs[n - min_n];
          Label next{lab.sum_c + c_mb, std::max(lab.max_c, c_mb), std::max(lab.max_tail, c_tail), j, li};
          // Non-decreasing in n (the stage only gets slower), so every larger n fails too.
          const double grows = iteration_time_s(next.sum_c + suffix_min[j + n], next.max_c, lab.max_tail,
                                                p.num_microbatches, p.vpp);
          if (grows >= p.incumbent_s) {
            k->lower_bound += max_n - n + 1;
            break;
          }
          if (bound(next, i + 1, j + n) >= p.incumbent_s) {
            ++k->lower_bound;
            continue;
          }
          std::vector<Label>& there = state(i + 1, j + n);
          bool dominated = false;
          for (const Label& o : there) {
            if (dominates(o, next)) {
              dominated = true;
              break;
            }
          }
          if (dominated) {
            ++k->dominated;
            continue;
          }
          const size_t before = there.size();
          there.erase(std::remove_if(there.begin(), there.end(),
                                     [&](const Label& o) { return dominates(next, o); }),
                      there.end());
          k->dominated += static_cast<long long>(before - there.size());
          there.push_back(next);
        }
      }
    }
  }
  const std::vector<Label>& final_labels = state(pp, L);
  int best = -1;
  double best_obj = p.incumbent_s;
  for (int li = 0; li < static_cast<int>(final_labels.size()); ++li) {
    const Label& lab = final_labels[li];
    const double obj = iteration_time_s(lab.sum_c, lab.max_c, lab.max_tail, p.num_microbatches, p.vpp);
    if (obj < best_obj) {
      best_obj = obj;
      best = li;
    }
  }
  if (best < 0) return std::nullopt;
  SplitResult r;
  r.objective_s = best_obj;
  r.layers.assign(pp, 0);
  int j = L, li = best;
  for (int i = pp; i > 0; --i) {
    const Label& lab = state(i, j)[li];
    r.layers[i - 1] = j - lab.prev_layers;
    li = lab.prev_label;
    j = lab.prev_layers;
  }
  return r;
}

}  // namespace hapmoe
