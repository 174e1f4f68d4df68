#include "hapmoe/hetero_search.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "hapmoe/diagnosis.hpp"
#include "hapmoe/hetero_evaluate.hpp"
#include "hapmoe/hetero_plan.hpp"
#include "hapmoe/hetero_rules.hpp"
#include "hapmoe/hetero_split.hpp"

namespace hapmoe {

namespace {

std::vector<int> or_default(const std::vector<int>& given, std::vector<int> fallback) {
  return given.empty() ? fallback : given;
}

std::vector<int> powers_of_two_dividing(int n) {
  std::vector<int> out;
  for (int x = 1; x <= n; x *= 2) {
    if (n % x == 0) out.push_back(x);
  }
  return out;
}

bool allowed(const std::vector<int>& list, int v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

}  // namespace

std::vector<HeteroShape> hetero_group_shapes(const Scenario& s, int group) {
  const SearchSpec& sp = s.search;
  const NodeGroup& g = s.cluster.groups[group];
  const long long gpus = g.gpus();
  const std::vector<int> eps = or_default(sp.ep, s.model.is_moe() ? powers_of_two_dividing(s.model.num_experts) : std::vector<int>{1});
  std::vector<HeteroShape> out;
  for (int tp : or_default(sp.tp, powers_of_two_dividing(g.gpus_per_node))) {
    if (gpus % tp != 0) continue;
    for (long long pp = 1; pp <= gpus / tp && pp <= s.model.num_layers; ++pp) {
      if ((gpus / tp) % pp != 0) continue;
      const long long dp = gpus / tp / pp;
      const std::vector<int> etps = tp > 1 && s.model.is_moe() ? std::vector<int>{1, tp} : std::vector<int>{1};
      for (int ep : eps) {
        for (int etp : or_default(sp.etp, etps)) {
          Mesh m;
          m.tp = tp;
          m.dp = static_cast<int>(dp);
          m.pp = static_cast<int>(pp);
          m.ep = ep;
          m.etp = etp;
          m.sequence_parallel = tp > 1;
          if (check_shape_rules(s, m) || check_group_rules(s, m, group)) continue;
          out.push_back({tp, ep, etp, static_cast<int>(dp), static_cast<int>(pp)});
        }
      }
    }
  }
  return out;
}

std::string hetero_plan_key(const PlanSpec& p) {
  std::string k = std::to_string(p.pp) + "," + std::to_string(p.micro_batch_size);
  for (const auto& st : p.stages) {
    k += "|" + std::to_string(st.group) + ":" + std::to_string(st.layers) + ":" + to_string(st.recompute);
    for (int v : {st.tp, st.cp, st.dp, st.ep, st.etp}) k += "," + std::to_string(v);
  }
  return k;
}

namespace {

// Group orders along the pipeline: sequences of distinct groups in which groups of one device
// type are adjacent (rule_hetero_device_types_adjacent).
void group_orders(const Scenario& s, std::vector<int>& prefix, std::vector<bool>& used,
                  std::vector<std::vector<int>>& out) {
  if (!prefix.empty()) out.push_back(prefix);
  for (int g = 0; g < static_cast<int>(s.cluster.groups.size()); ++g) {
    if (used[g]) continue;
    const std::string type = device_type_of(s.cluster.groups[g].gpu);
    bool split_type = false;
    for (size_t i = 0; i + 1 < prefix.size(); ++i) {
      split_type = split_type || device_type_of(s.cluster.groups[prefix[i]].gpu) == type;
    }
    if (split_type && device_type_of(s.cluster.groups[prefix.back()].gpu) != type) continue;
    used[g] = true;
    prefix.push_back(g);
    group_orders(s, prefix, used, out);
    prefix.pop_back();
    used[g] = false;
  }
}

struct Entry {
  double bound_s;
  int order;
  std::vector<int> shapes;  // index into shapes[group] per order position
  int mbs;
};

// The plan of an entry with a given split and per-stage recompute.
PlanSpec entry_plan(const Scenario& s, const std::vector<int>& order, const std::vector<HeteroShape>& meshes, int mbs,
                    const std::vector<int>& layers, const std::vector<Recompute>& recompute) {
  PlanSpec p;
  p.micro_batch_size = mbs;
  p.vpp = 1;
  for (size_t k = 0; k < order.size(); ++k) {
    const HeteroShape& h = meshes[k];
    for (int j = 0; j < h.pp; ++j) {
      StagePlan st;
      st.group = order[k];
      st.gpu = s.cluster.groups[order[k]].gpu.id;
      st.tp = h.tp, st.cp = 1, st.dp = h.dp, st.ep = h.ep, st.etp = h.etp;
      p.stages.push_back(st);
    }
  }
  p.pp = static_cast<int>(p.stages.size());
  for (int i = 0; i < p.pp; ++i) {
    p.stages[i].layers = layers[i];
    p.stages[i].recompute = recompute[i];
  }
  const StagePlan& first = p.stages.front();
  p.tp = first.tp, p.cp = 1, p.dp = first.dp, p.ep = first.ep, p.etp = first.etp;
  p.sequence_parallel = p.tp > 1;
  return p;
}

// The recompute choices the DP is given per stage: "none"/"full" (chosen per stage) and, as a
// separate run, "selective" on every stage.
std::vector<std::vector<Recompute>> recompute_sets(const Scenario& s) {
  const std::vector<Recompute> all = s.search.recompute.empty()
                                         ? std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull}
                                         : s.search.recompute;
  std::vector<Recompute> per_stage;
  for (Recompute r : {Recompute::kNone, Recompute::kFull}) {
    if (std::find(all.begin(), all.end(), r) != all.end()) per_stage.push_back(r);
  }
  std::vector<std::vector<Recompute>> sets;
  if (!per_stage.empty()) sets.push_back(per_stage);
  if (std::find(all.begin(), all.end(), Recompute::kSelective) != all.end()) sets.push_back({Recompute::kSelective});
  return sets;
}

class TopPlans {
 public:
  explicit TopPlans(size_t k) : k_(k) {}
  double threshold() const { return best_.size() < k_ ? 1e300 : best_.back().first; }
  void offer(double objective, PlanEvaluation ev) {
    const std::string key = hetero_plan_key(ev.plan);
    for (const auto& b : best_) {
      if (hetero_plan_key(b.second.plan) == key) return;
    }
    auto at = std::upper_bound(best_.begin(), best_.end(), objective,
                               [](double v, const auto& b) { return v < b.first; });
    best_.insert(at, {objective, std::move(ev)});
    if (best_.size() > k_) best_.pop_back();
  }
  std::vector<std::pair<double, PlanEvaluation>>& plans() { return best_; }

 private:
  size_t k_;
  std::vector<std::pair<double, PlanEvaluation>> best_;
};

class HeteroSearch {
 public:
  HeteroSearch(const Scenario& s, const SearchControl& control, const SearchBudget& budget, SearchResult& r)
      : s_(s), control_(control), budget_(budget), r_(r), st_(r.stats), cache_(s), top_(std::max(1, s.search.top_k)) {}

  void run() {
    build_entries();
    const auto sets = recompute_sets(s_);
    size_t done = 0;
    for (; done < entries_.size(); ++done) {
      if (control_.cancel && control_.cancel->load()) {
        st_.cancelled = true;
        break;
      }
      if (control_.progress && done % 64 == 0) control_.progress(static_cast<double>(done) / entries_.size(), st_.evaluated);
      if (entries_[done].bound_s >= top_.threshold()) {
        st_.pruned["lower_bound"] += static_cast<long long>(entries_.size() - done);
        break;
      }
      if (st_.evaluated >= budget_.max_orders || counters_.stage_costs >= budget_.max_stage_costs) {
        st_.budget_reached = true;
        break;
      }
      for (const auto& set : sets) split_entry(entries_[done], set);
    }
    if (control_.progress) control_.progress(1.0, st_.evaluated);
    st_.stage_costs = counters_.stage_costs;
    st_.pruned["stage_memory"] += counters_.memory;
    st_.pruned["dominated_split"] += counters_.dominated;
    st_.pruned["split_lower_bound"] += counters_.lower_bound;
    for (auto& p : top_.plans()) r_.plans.push_back(std::move(p.second));
    if (r_.plans.empty()) r_.diagnosis = diagnose_no_plan(s_, counters_.min_shortfall_bytes, st_);
  }

 private:
  std::vector<HeteroShape> meshes_of(const Entry& e) const {
    std::vector<HeteroShape> m;
    for (size_t k = 0; k < e.shapes.size(); ++k) m.push_back(shapes_[orders_[e.order][k]][e.shapes[k]]);
    return m;
  }

  void build_entries() {
    std::vector<int> prefix;
    std::vector<bool> used(s_.cluster.groups.size(), false);
    group_orders(s_, prefix, used, orders_);
    for (int g = 0; g < static_cast<int>(s_.cluster.groups.size()); ++g) shapes_.push_back(hetero_group_shapes(s_, g));
    const std::vector<int> mbss = or_default(s_.search.micro_batch_size, {1, 2});
    for (int o = 0; o < static_cast<int>(orders_.size()) && !st_.budget_reached; ++o) {
      std::vector<int> idx(orders_[o].size(), 0);
      bool empty = false;
      for (int g : orders_[o]) empty = empty || shapes_[g].empty();
      if (empty) continue;
      while (true) {
        for (int mbs : mbss) add_entry(o, idx, mbs);
        size_t k = 0;  // next combination of shapes (odometer)
        while (k < idx.size() && ++idx[k] == static_cast<int>(shapes_[orders_[o][k]].size())) idx[k++] = 0;
        if (k == idx.size() || st_.budget_reached) break;
      }
    }
    std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.bound_s < b.bound_s; });
  }

  void add_entry(int o, const std::vector<int>& idx, int mbs) {
    if (static_cast<long long>(entries_.size()) >= budget_.max_entries) {
      st_.budget_reached = true;
      return;
    }
    Entry e{0, o, idx, mbs};
    const std::vector<HeteroShape> meshes = meshes_of(e);
    int pp = 0;
    for (const HeteroShape& h : meshes) pp += h.pp;
    if (pp > s_.model.num_layers || !allowed(s_.search.pp, pp)) {
      ++st_.pruned[pp > s_.model.num_layers ? "pp_within_layers" : "pp_not_requested"];
      return;
    }
    std::vector<int> layers(pp, 1);
    layers.back() = s_.model.num_layers - pp + 1;
    const PlanSpec plan = entry_plan(s_, orders_[o], meshes, mbs, layers, std::vector<Recompute>(pp, Recompute::kNone));
    if (auto v = check_hetero_plan_rules(s_, plan)) {
      ++st_.pruned[v->rule];
      return;
    }
    ++st_.candidates;
    e.bound_s = entry_bound_s(plan);
    entries_.push_back(std::move(e));
  }

  // Least recompute time-wise among the allowed ones (none < selective < full).
  Recompute cheapest_recompute() const {
    const auto& rc = s_.search.recompute;
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      if (rc.empty() || std::find(rc.begin(), rc.end(), r) != rc.end()) return r;
    }
    return Recompute::kNone;
  }

  // Every split and recompute choice costs at least: sum c >= S (each layer at its cheapest over
  // the plan's meshes) and max c >= S / pp, so T >= S + (m - 1) S / pp.
  double entry_bound_s(PlanSpec plan) {
    std::vector<double> least(s_.model.num_layers, std::numeric_limits<double>::max());
    for (const HeteroMesh& hm : hetero_meshes(plan)) {
      plan.stages[hm.first_stage].recompute = cheapest_recompute();
      const Mesh mesh = hetero_stage_mesh(plan, hm.first_stage);
      const StageCostModel* model = cache_.get(mesh, hm.group);
      for (int l = 0; l < s_.model.num_layers; ++l) {
        const LayerCost& c = model->layer(l);
        least[l] = std::min(least[l], c.fwd_s + c.bwd_s + c.tp_s + c.cp_s + c.ep_s);
      }
    }
    double sum = 0;
    for (double x : least) sum += x;
    const long long m = num_microbatches(s_.training, hetero_stage_mesh(plan, 0));
    return sum + static_cast<double>(m - 1) * sum / plan.pp;
  }

  void split_entry(const Entry& e, const std::vector<Recompute>& set) {
    const std::vector<HeteroShape> meshes = meshes_of(e);
    int pp = 0;
    for (const HeteroShape& h : meshes) pp += h.pp;
    PlanSpec plan = entry_plan(s_, orders_[e.order], meshes, e.mbs, std::vector<int>(pp, 1),
                               std::vector<Recompute>(pp, set.front()));
    HeteroSplitProblem prob;
    prob.num_layers = s_.model.num_layers;
    prob.links = hetero_stage_links(s_.cluster, plan);
    prob.num_microbatches = num_microbatches(s_.training, hetero_stage_mesh(plan, 0));
    prob.incumbent_s = top_.threshold();
    for (int i = 0; i < pp; ++i) {
      std::vector<StageOption> opts;
      for (Recompute r : set) {
        plan.stages[i].recompute = r;
        const Mesh mesh = hetero_stage_mesh(plan, i);
        opts.push_back({cache_.get(mesh, plan.stages[i].group), mesh});
      }
      prob.options.push_back(std::move(opts));
    }
    ++st_.evaluated;
    const auto split = best_hetero_split(prob, &counters_);
    if (!split) return;
    std::vector<Recompute> rc(pp);
    for (int i = 0; i < pp; ++i) rc[i] = set[split->option[i]];
    const PlanSpec best = entry_plan(s_, orders_[e.order], meshes, e.mbs, split->layers, rc);
    top_.offer(split->objective_s, evaluate_hetero_with_cache(s_, best, cache_));
  }

  const Scenario& s_;
  const SearchControl& control_;
  const SearchBudget& budget_;
  SearchResult& r_;
  SearchStats& st_;
  HeteroModelCache cache_;
  TopPlans top_;
  SplitCounters counters_;
  std::vector<std::vector<int>> orders_;
  std::vector<std::vector<HeteroShape>> shapes_;  // per group
  std::vector<Entry> entries_;
};

// The best upstream ("megatron" mode) plan of the same scenario, its baselines, and the gain.
void compare_with_upstream(const Scenario& s, const SearchBudget& budget, SearchResult& r) {
  Scenario up = s;
  up.search.mode = SearchMode::kMegatron;
  up.search.top_k = 1;
  auto u = search_plans(up, {}, budget);
  if (!u || u->plans.empty() || r.plans.empty()) return;
  const double best = r.plans.front().metrics.iteration_time_s;
  auto rebase = [best](const PlanEvaluation& ev) { return Baseline{ev, ev.metrics.iteration_time_s / best}; };
  r.upstream = rebase(u->plans.front());
  if (u->megatron_default) r.megatron_default = rebase(u->megatron_default->evaluation);
  if (u->uniform) r.uniform = rebase(u->uniform->evaluation);
}

}  // namespace

Expected<SearchResult> hetero_search(const Scenario& s, const SearchControl& control, const SearchBudget& budget) {
  const auto start = std::chrono::steady_clock::now();
  if (!s.search.layer_split.empty()) {
    return Error{"unsupported", "search.layer_split is not supported in \"hetero\" mode (the split is searched)",
                 "search.layer_split"};
  }
  SearchResult r;
  if (control.progress) control.progress(0.0, 0);
  HeteroSearch(s, control, budget, r).run();
  if (s.search.baselines && !r.stats.cancelled) compare_with_upstream(s, budget, r);
  r.stats.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace hapmoe
