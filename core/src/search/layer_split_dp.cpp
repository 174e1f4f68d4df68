#include "search/layer_split_dp.hpp"

#include <algorithm>
#include <cmath>
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

// c's memory overflow, peak - capacity bytes (NaN when its peak is not a finite number): what a
// StageCostMemo keeps of an unusable cost.
double stage_shortfall_bytes(const StageCost& c) {
  return std::isfinite(c.peak_bytes()) ? c.peak_bytes() - c.capacity_bytes : std::numeric_limits<double>::quiet_NaN();
}

// Records a stage_shortfall_bytes() value in k->min_shortfall_bytes when it is the smallest seen.
void note_shortfall_bytes(SplitCounters* k, double over) {
  if (std::isnan(over)) return;
  if (k->min_shortfall_bytes < 0 || over < k->min_shortfall_bytes) k->min_shortfall_bytes = over;
}

}  // namespace

struct IncrementalSplit::State {
  Mesh mesh;
  int pp = 0, L = 0, min_n = 1, depth = 0;
  long long m = 1;
  double last_extra = 0;                         // least last-stage extra
  std::vector<double> suffix_min;                // [j]: sum of layer_min over layers j..L-1
  std::vector<std::vector<Label>> states;        // (stage, layers) -> labels, flattened
  StageCostMemo own_memo;                        // the stage's costs when push() is given no memo

  std::vector<Label>& state(int i, int j) { return states[static_cast<size_t>(i) * (L + 1) + j]; }
  const std::vector<Label>& state(int i, int j) const { return states[static_cast<size_t>(i) * (L + 1) + j]; }
  // iteration_time_s(sum_c, max_c, tail, m, vpp) with its constants kept: (m - 1/v) is the same
  // double every time, and for v a power of two sum_c / v == sum_c * (1 / v) exactly (both are
  // the correctly rounded sum_c / v).
  double v = 1, inv_v = 1, max_coef = 0;
  bool v_pow2 = true;
  void set_objective(long long microbatches, int vpp) {
    v = vpp;
    inv_v = 1 / v;
    v_pow2 = vpp > 0 && (vpp & (vpp - 1)) == 0;
    max_coef = static_cast<double>(microbatches) - 1 / v;
  }
  double objective(double sum_c, double max_c, double tail) const {
    return (v_pow2 ? sum_c * inv_v : sum_c / v) + max_coef * max_c + tail;
  }
  // Lower bound on the objective of any completion of a label after `done` stages over j layers.
  double bound(const Label& lab, int done, int j) const {
    const int left = pp - done;
    double max_c = lab.max_c, sum_c = lab.sum_c;
    if (left > 0) {  // the stages to come hold layers j.. and the last stage's extras
      max_c = std::max(max_c, (suffix_min[j] + last_extra) / left);
      sum_c += suffix_min[j] + last_extra;
    }
    return objective(sum_c, max_c, lab.max_tail);
  }
};

IncrementalSplit::IncrementalSplit() : st_(std::make_unique<State>()) {}
IncrementalSplit::~IncrementalSplit() = default;

void IncrementalSplit::reset(const Mesh& mesh, int num_layers, long long num_microbatches,
                             const std::vector<double>& layer_min_s, double last_extra_min_s) {
  State& s = *st_;
  s.last_extra = last_extra_min_s;
  s.mesh = mesh;
  s.pp = mesh.pp;
  s.L = num_layers;
  s.m = num_microbatches;
  s.min_n = std::max(1, mesh.vpp);  // each virtual chunk of a stage holds a layer
  s.set_objective(num_microbatches, mesh.vpp);
  s.depth = 0;
  s.suffix_min.assign(num_layers + 1, 0.0);
  for (int l = num_layers - 1; l >= 0; --l) s.suffix_min[l] = s.suffix_min[l + 1] + layer_min_s[l];
  const size_t num_states = static_cast<size_t>(s.pp + 1) * (num_layers + 1);
  if (s.states.size() < num_states) s.states.resize(num_states);
  for (int j = 0; j <= num_layers; ++j) s.state(0, j).clear();
  if (static_cast<long long>(s.pp) * s.min_n <= num_layers) s.state(0, 0).push_back({0, 0, 0, -1, -1});
}

int IncrementalSplit::depth() const { return st_->depth; }

void IncrementalSplit::pop() { --st_->depth; }

bool IncrementalSplit::push(const StageCostModel& model, const StageLinks& links, double incumbent_s,
                            SplitCounters* k, long long layers_after_max, const std::vector<double>* rest_floor,
                            StageCostMemo* memo) {
  State& s = *st_;
  if (!memo) {
    memo = &s.own_memo;
    memo->clear();
  }
  const int i = s.depth++;
  const int L = s.L, min_n = s.min_n, stages_after = s.pp - i - 1;
  for (int j = 0; j <= L; ++j) s.state(i + 1, j).clear();
  bool any = false;
  for (int j = i * min_n; j <= L - (s.pp - i) * min_n; ++j) {
    const std::vector<Label>& here = s.state(i, j);
    if (here.empty()) continue;
    if (k->work() >= k->max_work) {  // the work budget is spent: no split through this push
      k->stopped = true;
      return false;
    }
    // Stage i over layers [j, j + n) does not depend on the label: each n is costed once per
    // state (per_microbatch, tail), as far as some label needs it, and read from the memo when
    // an earlier push of this stage costed it.
    int fits_up_to = L + 1;  // first n that does not fit (peak memory only grows with n)
    const int max_n = L - j - stages_after * min_n;
    // The later stages cannot hold more than layers_after_max: this stage takes the rest.
    const int least_n = static_cast<int>(std::max<long long>(min_n, L - j - layers_after_max));
    if (least_n > max_n) {
      k->memory += static_cast<long long>(here.size());
      continue;
    }
    StageCostMemo::Item* const costs = memo->row(j, max_n);
    int costed = 0;  // n = least_n .. least_n + costed - 1 are costed (and usable) in this state
    for (int li = 0; li < static_cast<int>(here.size()); ++li) {
      const Label& lab = here[li];
      if (s.bound(lab, i, j) >= incumbent_s) {
        ++k->lower_bound;
        continue;
      }
      for (int n = least_n; n <= max_n; ++n) {
        if (n >= fits_up_to) {
          k->memory += max_n - n + 1;
          break;
        }
        ++k->label_steps;
        StageCostMemo::Item& c = costs[n];
        if (n - least_n >= costed) {
          if (!memo->known(c)) memo->set(&c, model.cost(i, j, n, links, s.mesh));
          ++k->stage_costs;
          if (!c.usable) {  // a non-finite time (degenerate input) is infeasible
            fits_up_to = n;
            k->memory += max_n - n + 1;
            note_shortfall_bytes(k, c.a);
            break;
          }
          ++costed;
        }
        const double c_mb = c.a, c_tail = c.b;
        Label next{lab.sum_c + c_mb, std::max(lab.max_c, c_mb), std::max(lab.max_tail, c_tail), j, li};
        // Non-decreasing in n (the stage only gets slower), so every larger n fails too.
        const double rest = stages_after > 0 ? s.suffix_min[j + n] + s.last_extra : 0.0;
        const double grows = s.objective(next.sum_c + rest, next.max_c, lab.max_tail);
        if (grows >= incumbent_s) {
          k->lower_bound += max_n - n + 1;
          break;
        }
        // The later stages' bottleneck: a label every completion of which reaches the incumbent
        // is dropped (a valid bound only drops labels that cannot reach a better final label, and
        // those never dominate one that can, so the final labels and their order stay the same).
        // Checked before the label's own bound: it cuts most (8 types: 5.0M of 11.7M steps), and
        // either cut counts the same.
        if (rest_floor && stages_after > 0 && (*rest_floor)[j + n] > next.max_c &&
            s.objective(next.sum_c + rest, (*rest_floor)[j + n], lab.max_tail) >= incumbent_s) {
          ++k->lower_bound;
          continue;
        }
        if (s.bound(next, i + 1, j + n) >= incumbent_s) {
          ++k->lower_bound;
          continue;
        }
        // One pass: the labels of a state are an antichain, so a label that dominates `next`
        // comes before any that `next` dominates could have been dropped (it would dominate
        // those too); the survivors keep their order, as with remove_if.
        std::vector<Label>& there = s.state(i + 1, j + n);
        const size_t before = there.size();
        k->label_steps += static_cast<long long>(before);
        size_t kept = 0;
        bool dominated = false;
        for (size_t r = 0; r < before; ++r) {
          const Label& o = there[r];
          if (dominates(o, next)) {
            dominated = true;
            break;
          }
          if (!dominates(next, o)) {
            if (kept != r) there[kept] = o;
            ++kept;
          }
        }
        if (dominated) {
          ++k->dominated;
          continue;
        }
        there.resize(kept);
        k->dominated += static_cast<long long>(before - kept);
        there.push_back(next);
        any = true;
      }
    }
  }
  return any;
}

std::optional<SplitResult> IncrementalSplit::best(double incumbent_s) const {
  const State& s = *st_;
  if (s.depth != s.pp) return std::nullopt;
  const std::vector<Label>& final_labels = s.state(s.pp, s.L);
  int best = -1;
  double best_obj = incumbent_s;
  for (int li = 0; li < static_cast<int>(final_labels.size()); ++li) {
    const Label& lab = final_labels[li];
    const double obj = s.objective(lab.sum_c, lab.max_c, lab.max_tail);
    if (obj < best_obj) {
      best_obj = obj;
      best = li;
    }
  }
  if (best < 0) return std::nullopt;
  SplitResult r;
  r.objective_s = best_obj;
  r.layers.assign(s.pp, 0);
  int j = s.L, li = best;
  for (int i = s.pp; i > 0; --i) {
    const Label& lab = s.state(i, j)[li];
    r.layers[i - 1] = j - lab.prev_layers;
    li = lab.prev_label;
    j = lab.prev_layers;
  }
  return r;
}

std::vector<double> cheapest_layer_times(const std::vector<const StageCostModel*>& models, int num_layers) {
  std::vector<double> out(num_layers, std::numeric_limits<double>::max());
  for (size_t i = 0; i < models.size(); ++i) {
    if (i > 0 && models[i] == models[i - 1]) continue;  // same model, same costs
    for (int l = 0; l < num_layers; ++l) {
      const LayerCost& c = models[i]->layer(l);
      out[l] = std::min(out[l], c.fwd_s + c.bwd_s + c.tp_s + c.cp_s + c.ep_s);
    }
  }
  return out;
}

double cheapest_last_extra_s(const std::vector<const StageCostModel*>& models) {
  double least = std::numeric_limits<double>::max();
  for (const StageCostModel* m : models) least = std::min(least, m->last_extra_s());
  return models.empty() ? 0.0 : least;
}

std::optional<SplitResult> best_layer_split(const SplitProblem& p, SplitCounters* k) {
  const int pp = static_cast<int>(p.stage_models.size());
  if (pp < 1) return std::nullopt;
  IncrementalSplit dp;
  Mesh mesh = p.mesh;
  mesh.pp = pp;
  mesh.vpp = p.vpp;
  dp.reset(mesh, p.num_layers, p.num_microbatches, cheapest_layer_times(p.stage_models, p.num_layers),
           p.stage_models.back()->last_extra_s());
  for (int i = 0; i < pp; ++i) {
    if (!dp.push(*p.stage_models[i], p.links[i], p.incumbent_s, k)) return std::nullopt;
  }
  return dp.best(p.incumbent_s);
}

std::optional<double> split_objective(const SplitProblem& p, const std::vector<int>& layers, SplitCounters* k) {
  return split_objective_by(layers, p.num_microbatches, p.vpp, k, [&](int i, int first, int n) {
    return p.stage_models[i]->cost(i, first, n, p.links[i], p.mesh);
  });
}

bool usable_stage_cost(const StageCost& c) {
  return c.fits() && std::isfinite(c.per_microbatch_s()) && std::isfinite(c.tail_s());
}

void note_stage_shortfall(SplitCounters* k, const StageCost& c) { note_shortfall_bytes(k, stage_shortfall_bytes(c)); }

void StageCostMemo::clear() {
  if (++stamp_ == 0) {  // wrapped: no item may look known
    for (std::vector<Item>& r : rows_) r.assign(r.size(), Item{});
    stamp_ = 1;
  }
}

StageCostMemo::Item* StageCostMemo::row(int j, int max_n) {
  if (static_cast<int>(rows_.size()) <= j) rows_.resize(j + 1);
  std::vector<Item>& r = rows_[j];
  if (static_cast<int>(r.size()) <= max_n) r.resize(max_n + 1);
  return r.data();
}

void StageCostMemo::set(Item* item, const StageCost& c) const {
  item->stamp = stamp_;
  item->usable = usable_stage_cost(c);
  item->a = item->usable ? c.per_microbatch_s() : stage_shortfall_bytes(c);
  item->b = item->usable ? c.tail_s() : 0;
}

namespace {
// Items all the memos of one mesh may hold together (24 bytes each: 24 MiB).
constexpr size_t kMemoItemBudget = size_t{1} << 20;

bool same_link(const std::optional<Link>& a, const std::optional<Link>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->gbps == b->gbps && a->efficiency == b->efficiency && a->latency_s == b->latency_s);
}
}  // namespace

void StageCostMemos::reset(int num_layers) {
  keys_.clear();
  // A memo holds at most one item per layer range: (L + 1)(L + 2) / 2.
  const size_t per_memo = static_cast<size_t>(num_layers + 1) * (num_layers + 2) / 2;
  max_memos_ = std::max<size_t>(1, kMemoItemBudget / std::max<size_t>(per_memo, 1));
}

StageCostMemo* StageCostMemos::get(int stage, const StageCostModel* model, const StageLinks& links) {
  for (size_t m = 0; m < keys_.size(); ++m) {
    const Key& key = keys_[m];
    if (key.stage == stage && key.model == model && same_link(key.links.prev, links.prev) &&
        same_link(key.links.next, links.next)) {
      return &pool_[m];
    }
  }
  if (keys_.size() >= max_memos_) return nullptr;
  keys_.push_back({stage, model, links});
  if (pool_.size() < keys_.size()) pool_.emplace_back();
  StageCostMemo& memo = pool_[keys_.size() - 1];
  memo.clear();
  return &memo;
}

}  // namespace hapmoe
