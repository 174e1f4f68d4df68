#include "search/layer_split_dp.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "hapmoe/schedule.hpp"
#include "spec/stable_map.hpp"

namespace hapmoe {

namespace {

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

// One pass: a label that dominates `next` comes before any that `next` dominates could have been
// dropped (it would dominate those too); the survivors keep their order, as with remove_if.
bool insert_label(std::vector<SplitLabel>& there, const SplitLabel& next, const LabelDominance& dominates,
                  SplitCounters* k) {
  const size_t before = there.size();
  k->label_steps += static_cast<long long>(before);
  size_t kept = 0;
  for (size_t r = 0; r < before; ++r) {
    const SplitLabel& o = there[r];
    if (dominates(o, next)) {
      ++k->dominated;
      return false;
    }
    if (!dominates(next, o)) {
      if (kept != r) there[kept] = o;
      ++kept;
    }
  }
  there.resize(kept);
  k->dominated += static_cast<long long>(before - kept);
  there.push_back(next);
  return true;
}

bool insert_label_distinct(std::vector<SplitLabel>& there, const SplitLabel& next, int distinct,
                           const LabelDominance& dominates, SplitCounters* k) {
  const size_t before = there.size();
  k->label_steps += static_cast<long long>(before);
  constexpr int kSeen = 128;  // >= search.top_k's limit (100)
  int seen[kSeen];
  int nseen = 0;
  for (size_t r = 0; r < before; ++r) {
    const SplitLabel& o = there[r];
    if (!dominates(o, next)) continue;
    if (o.prefix == next.prefix) {
      ++k->dominated;
      return false;
    }
    if (std::find(seen, seen + nseen, o.prefix) != seen + nseen) continue;
    seen[nseen++] = o.prefix;
    if (nseen >= distinct || nseen == kSeen) {
      ++k->dominated;
      return false;
    }
  }
  size_t kept = 0;
  for (size_t r = 0; r < before; ++r) {
    const SplitLabel& o = there[r];
    if (o.prefix == next.prefix && dominates(next, o)) continue;
    if (kept != r) there[kept] = o;
    ++kept;
  }
  there.resize(kept);
  k->dominated += static_cast<long long>(before - kept);
  there.push_back(next);
  return true;
}

void SplitPipeline::reset(const Mesh& mesh, int num_layers, long long num_microbatches,
                          const std::vector<double>& layer_min_s, double last_extra_min_s, double margin) {
  last_extra_ = last_extra_min_s;
  margin_ = margin;
  mesh_ = mesh;
  pp_ = mesh.pp;
  L_ = num_layers;
  min_n_ = std::max(1, mesh.vpp);  // each virtual chunk of a stage holds a layer
  v_ = mesh.vpp;
  inv_v_ = 1 / v_;
  v_pow2_ = mesh.vpp > 0 && (mesh.vpp & (mesh.vpp - 1)) == 0;
  max_coef_ = static_cast<double>(num_microbatches) - 1 / v_;
  suffix_min_.assign(num_layers + 1, 0.0);
  for (int l = num_layers - 1; l >= 0; --l) suffix_min_[l] = suffix_min_[l + 1] + layer_min_s[l];
}

double SplitPipeline::cap_s(double incumbent_s) const {
  if (incumbent_s >= 1e300 || max_coef_ <= 0) return std::numeric_limits<double>::infinity();
  const double sum = (suffix_min_.empty() ? 0.0 : suffix_min_[0]) + last_extra_;
  return (incumbent_s - (v_pow2_ ? sum * inv_v_ : sum / v_)) / max_coef_;
}

void SplitPipeline::clear(SplitTable* t) const {
  if (static_cast<int>(t->size()) < L_ + 1) t->resize(L_ + 1);
  for (auto& labels : *t) labels.clear();
}

// Lower bound on the objective of any completion of a label after `done` stages over j layers.
double SplitPipeline::bound(const SplitLabel& lab, int done, int j) const {
  const int left = pp_ - done;
  double max_c = lab.max_c, sum_c = lab.sum_c;
  if (left > 0) {  // the stages to come hold layers j.. and the last stage's extras
    max_c = std::max(max_c, (suffix_min_[j] + last_extra_) / left);
    sum_c += suffix_min_[j] + last_extra_;
  }
  return objective(sum_c, max_c, lab.max_tail);
}

bool SplitPipeline::push(int i, const SplitTable& from, int from_id, SplitTable* to, const StageCostModel& model,
                         const StageLinks& links, double incumbent_s, double within_incumbent_s, SplitCounters* k,
                         long long layers_after_max, const std::vector<double>* rest_floor,
                         StageCostMemo* memo) const {
  if (!memo) {
    memo = &own_memo_;
    memo->clear();
  }
  const int L = L_, min_n = min_n_, stages_after = pp_ - i - 1;
  const LabelDominance dominates{v_pow2_ ? inv_v_ : 1 / v_, max_coef_};
  bool any = false;
  for (int j = i * min_n; j <= L - (pp_ - i) * min_n; ++j) {
    const std::vector<SplitLabel>& here = from[j];
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
      const SplitLabel& lab = here[li];
      // A label within the memory margin must beat the k-th plan within it (not below the k-th
      // of all); one above the margin, the k-th of all.
      const double lab_incumbent_s = lab.within ? within_incumbent_s : incumbent_s;
      if (bound(lab, i, j) >= lab_incumbent_s) {
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
          if (!memo->known(c)) memo->set(&c, model.cost(i, j, n, links, mesh_), margin_);
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
        const SplitLabel next{lab.sum_c + c_mb, std::max(lab.max_c, c_mb), std::max(lab.max_tail, c_tail), j, li,
                              from_id, lab.prefix, 0, lab.within && c.within};
        const double next_incumbent_s = next.within ? within_incumbent_s : incumbent_s;
        // Non-decreasing in n (the stage only gets slower), so every larger n fails too (its
        // label is within the margin only if this one is: the peak only grows with n).
        const double rest = stages_after > 0 ? suffix_min_[j + n] + last_extra_ : 0.0;
        const double grows = objective(next.sum_c + rest, next.max_c, lab.max_tail);
        if (grows >= next_incumbent_s) {
          k->lower_bound += max_n - n + 1;
          break;
        }
        // The later stages' bottleneck: a label every completion of which reaches the incumbent
        // is dropped (a valid bound only drops labels that cannot reach a better final label, and
        // those never dominate one that can, so the final labels and their order stay the same).
        // Checked before the label's own bound: it cuts most (8 types: 5.0M of 11.7M steps), and
        // either cut counts the same.
        if (rest_floor && stages_after > 0 && (*rest_floor)[j + n] > next.max_c &&
            objective(next.sum_c + rest, (*rest_floor)[j + n], lab.max_tail) >= next_incumbent_s) {
          ++k->lower_bound;
          continue;
        }
        if (bound(next, i + 1, j + n) >= next_incumbent_s) {
          ++k->lower_bound;
          continue;
        }
        // The later stages' largest time is at least the floor, so the final max c is the same
        // whether this label's max c is below the floor or at it: raised to it, labels that differ
        // only below the floor dominate one another.
        SplitLabel kept = next;
        if (rest_floor && stages_after > 0) kept.max_c = std::max(kept.max_c, (*rest_floor)[j + n]);
        any = insert_label((*to)[j + n], kept, dominates, k) || any;
      }
    }
  }
  return any;
}

IncrementalSplit::IncrementalSplit() = default;
IncrementalSplit::~IncrementalSplit() = default;

void IncrementalSplit::reset(const Mesh& mesh, int num_layers, long long num_microbatches,
                             const std::vector<double>& layer_min_s, double last_extra_min_s, double margin) {
  pipeline_.reset(mesh, num_layers, num_microbatches, layer_min_s, last_extra_min_s, margin);
  depth_ = 0;
  if (tables_.size() < static_cast<size_t>(mesh.pp) + 1) tables_.resize(static_cast<size_t>(mesh.pp) + 1);
  pipeline_.clear(&tables_[0]);
  if (static_cast<long long>(mesh.pp) * std::max(1, mesh.vpp) <= num_layers) {
    tables_[0][0].push_back({0, 0, 0, -1, -1, -1, 0});
  }
}

int IncrementalSplit::depth() const { return depth_; }

void IncrementalSplit::pop() { --depth_; }

bool IncrementalSplit::push(const StageCostModel& model, const StageLinks& links, double incumbent_s,
                            double within_incumbent_s, SplitCounters* k, long long layers_after_max,
                            const std::vector<double>* rest_floor, StageCostMemo* memo) {
  const int i = depth_++;
  pipeline_.clear(&tables_[i + 1]);
  return pipeline_.push(i, tables_[i], i, &tables_[i + 1], model, links, incumbent_s, within_incumbent_s, k,
                        layers_after_max, rest_floor, memo);
}

std::optional<SplitResult> IncrementalSplit::best(double incumbent_s, bool within) const {
  const int pp = pipeline_.pp(), L = pipeline_.num_layers();
  if (depth_ != pp) return std::nullopt;
  const std::vector<SplitLabel>& final_labels = tables_[pp][L];
  int best = -1;
  double best_obj = incumbent_s;
  for (int li = 0; li < static_cast<int>(final_labels.size()); ++li) {
    if (within && !final_labels[li].within) continue;
    const double obj = pipeline_.objective(final_labels[li]);
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
    const SplitLabel& lab = tables_[i][j][li];
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
    if (!dp.push(*p.stage_models[i], p.links[i], p.incumbent_s, p.incumbent_s, k)) return std::nullopt;
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

void StageCostMemo::set(Item* item, const StageCost& c, double margin) const {
  item->stamp = stamp_;
  item->usable = usable_stage_cost(c);
  item->within = item->usable && (!(margin > 0) || c.within_margin(margin));
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

void StageCostMemos::keep_or_reset(int num_layers, size_t wanted) {
  if (num_layers != num_layers_ || keys_.size() + wanted > max_memos_) reset(num_layers);
}

void StageCostMemos::reset(int num_layers) {
  num_layers_ = num_layers;
  keys_.clear();
  if (++gen_ == 0) {  // wrapped: every slot's generation is old again
    std::fill(slot_gen_.begin(), slot_gen_.end(), 0);
    gen_ = 1;
  }
  // A memo holds at most one item per layer range: (L + 1)(L + 2) / 2.
  const size_t per_memo = static_cast<size_t>(num_layers + 1) * (num_layers + 2) / 2;
  max_memos_ = std::max<size_t>(1, kMemoItemBudget / std::max<size_t>(per_memo, 1));
}

bool same_links(const StageLinks& a, const StageLinks& b) {
  return same_link(a.prev, b.prev) && same_link(a.next, b.next);
}

uint64_t StageCostMemos::hash_of(int stage, const StageCostModel* model, const StageLinks& links, int dp,
                                 double offload) {
  Fnv1a h;
  h.add(static_cast<uint64_t>(stage));
  h.add(reinterpret_cast<uintptr_t>(model));
  h.add(static_cast<uint64_t>(dp));
  uint64_t offload_bits;
  std::memcpy(&offload_bits, &offload, sizeof offload_bits);
  h.add(offload_bits);
  for (const std::optional<Link>& l : {links.prev, links.next}) {
    h.add(l.has_value());
    if (!l) continue;
    for (double x : {l->gbps, l->efficiency, l->latency_s}) {
      uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      h.add(bits);
    }
  }
  return h.value();
}

void StageCostMemos::place(size_t id) {
  const size_t mask = slot_id_.size() - 1;
  size_t at = keys_[id].hash & mask;
  while (slot_gen_[at] == gen_) at = (at + 1) & mask;
  slot_gen_[at] = gen_;
  slot_id_[at] = static_cast<uint32_t>(id);
}

StageCostMemo* StageCostMemos::get(int stage, const StageCostModel* model, const StageLinks& links, int dp,
                                   double offload) {
  const uint64_t h = hash_of(stage, model, links, dp, offload);
  if (!slot_id_.empty()) {
    const size_t mask = slot_id_.size() - 1;
    for (size_t at = h & mask; slot_gen_[at] == gen_; at = (at + 1) & mask) {
      const Key& key = keys_[slot_id_[at]];
      if (key.hash == h && key.stage == stage && key.model == model && key.dp == dp && key.offload == offload &&
          same_links(key.links, links)) {
        return &pool_[slot_id_[at]];
      }
    }
  }
  if (keys_.size() >= max_memos_) return nullptr;
  keys_.push_back({stage, model, links, dp, offload, h});
  if (2 * keys_.size() > slot_id_.size()) {  // grow: every key placed again
    const size_t n = std::max<size_t>(64, 4 * keys_.size());
    size_t size = 1;
    while (size < n) size *= 2;
    slot_id_.assign(size, 0);
    slot_gen_.assign(size, 0);
    for (size_t id = 0; id < keys_.size(); ++id) place(id);
  } else {
    place(keys_.size() - 1);
  }
  if (pool_.size() < keys_.size()) pool_.emplace_back();
  StageCostMemo& memo = pool_[keys_.size() - 1];
  memo.clear();
  return &memo;
}

}  // namespace hapmoe
