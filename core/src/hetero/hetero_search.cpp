#include "hetero/hetero_search.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <unordered_map>

#include "search/candidate_cost.hpp"
#include "search/diagnosis.hpp"
#include "hetero/hetero_evaluate.hpp"
#include "hapmoe/hetero_plan.hpp"
#include "hetero/hetero_rules.hpp"
#include "hetero/hetero_space.hpp"
#include "hetero/hetero_split.hpp"
#include "search/search_budget.hpp"
#include "search/plan_sink.hpp"
#include "search/top_plans.hpp"

namespace hapmoe {

namespace {

struct Entry {
  double bound_s;
  int order;
  std::vector<int> shapes;  // index into shapes[group] per order position
  int mbs;
  double rate = 0;  // USD per hour its plans bill (every GPU of its groups' meshes)
};

// The plan of an entry with a given split, per-stage recompute and optimizer offload fraction.
PlanSpec entry_plan(const Scenario& s, const std::vector<int>& order,
                    const std::vector<HeteroShape>& meshes, int mbs, const std::vector<int>& layers,
                    const std::vector<Recompute>& recompute, double offload) {
  PlanSpec p;
  p.optimizer_offload_fraction = offload;
  p.micro_batch_size = mbs;
  p.vpp = 1;
  // FlagScale's Megatron-LM: alltoall or allgather, no CUDA graphs (hetero_rules.hpp).
  if (s.training.moe_token_dispatcher_type == Dispatcher::kAllgather) p.dispatch = Dispatch::kAllgather;
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

// Entries whose even-split seed is costed before any DP runs (an incumbent for the bounds).
constexpr size_t kSeededEntries = 1024;

class HeteroSearch {
 public:
  // offload: the plan-level optimizer offload fraction every stage's mesh gets.
  // Only plans faster than prune_above are kept.
  HeteroSearch(const Scenario& s, double offload, const SearchControl& control,
               const SearchBudget& budget, double prune_above, SearchResult& r)
      : s_(s),
        offload_(offload),
        control_(control),
        budget_(budget),
        r_(r),
        st_(r.stats),
        cache_(s),
        top_(s, static_cast<size_t>(std::max(1, s.search.top_k)), prune_above, budget.front_seed) {}

  void run() {
    build_entries();
    const auto sets = hetero_recompute_sets(s_);
    for (size_t e = 0; e < entries_.size() && e < kSeededEntries; ++e) {
      if (counters_.work() >= budget_.max_stage_costs / 2 || (e % 64 == 0 && past_deadline(budget_))) break;
      if (!objective_admits(s_.search, entries_[e].rate)) continue;  // over the budget
      for (size_t k = 0; k < sets.size(); ++k) split_entry(e, k, sets[k], true);
    }
    size_t done = 0;
    for (; done < entries_.size(); ++done) {
      if (control_.cancel && control_.cancel->load()) {
        st_.cancelled = true;
        break;
      }
      if (control_.progress && done % 64 == 0) report(done);
      if (!objective_admits(s_.search, entries_[done].rate)) {
        ++st_.pruned["over_budget"];
        continue;
      }
      // Entries are in order of their time bound; the least admitted rate's threshold bounds
      // every admitted one's.
      if (entries_[done].bound_s >= top_.threshold_s(least_rate_)) {
        st_.pruned["entry_lower_bound"] += static_cast<long long>(entries_.size() - done);
        break;
      }
      if (entries_[done].bound_s >= threshold_s(entries_[done])) {
        ++st_.pruned["entry_lower_bound"];
        continue;
      }
      const char* limit = st_.evaluated >= budget_.max_orders                 ? "orders"
                          : counters_.work() >= budget_.max_stage_costs      ? "stage_costs"
                          : past_deadline(budget_)                            ? "seconds"
                                                                               : nullptr;
      if (limit) st_.reached(limit);
      if (limit || dp_budget_reached_) {
        for (size_t e = done; e < entries_.size(); ++e) st_.entries_unsearched += entries_[e].bound_s < threshold_s(entries_[e]);
        break;
      }
      // One DP per recompute set: the order limit holds inside an entry too.
      for (size_t k = 0; k < sets.size() && st_.evaluated < budget_.max_orders; ++k) split_entry(done, k, sets[k], false);
    }
    if (control_.progress) control_.progress(1.0, st_.evaluated);
    st_.work = {budget_.max_combinations - combinations_left_, shapes_count_, 0, entry_work_, st_.evaluated,
                counters_.work()};
    st_.stage_costs = counters_.stage_costs;
    st_.pruned["stage_memory"] += counters_.memory;
    st_.pruned["dominated_split"] += counters_.dominated;
    st_.pruned["split_lower_bound"] += counters_.lower_bound;
    r_.plans = top_.take();
    r_.pareto = top_.take_front();
    if (r_.plans.empty()) r_.diagnosis = diagnose_no_plan(s_, counters_.min_shortfall_bytes, st_);
  }

 private:
  std::vector<HeteroShape> meshes_of(const Entry& e) const {
    std::vector<HeteroShape> m;
    for (size_t k = 0; k < e.shapes.size(); ++k)
      m.push_back(shapes_[orders_[e.order][k]][e.shapes[k]]);
    return m;
  }

  void build_entries() {
    for (const std::vector<Recompute>& set : hetero_recompute_sets(s_)) {
      for (Recompute r : set) {
        if (std::find(recompute_values_.begin(), recompute_values_.end(), r) == recompute_values_.end()) {
          recompute_values_.push_back(r);
        }
      }
    }
    // FlagScale's hetero mode runs CP 1 and no virtual pipeline: a search that excludes either
    // has nothing to plan.
    for (const auto& [values, rule] : {std::pair{&s_.search.cp, "hetero_cp_unsupported"},
                                       std::pair{&s_.search.vpp, "hetero_no_vpp"}}) {
      if (!search_allows(*values, 1)) {
        ++st_.pruned[rule];
        return;
      }
    }
    const bool all_orders =
        hetero_group_orders(s_, static_cast<size_t>(budget_.max_orders), orders_);
    combinations_left_ = budget_.max_combinations;
    for (int g = 0; g < static_cast<int>(s_.cluster.groups.size()); ++g) {
      shapes_.push_back(hetero_group_shapes(s_, g, &combinations_left_));
      shapes_count_ += static_cast<long long>(shapes_.back().size());
    }
    if (combinations_left_ == 0) st_.reached("combinations");
    const std::vector<int> mbss = search_values_or(s_.search.micro_batch_size, {1, 2});
    for (int o = 0; o < static_cast<int>(orders_.size()) && !st_.budget_reached; ++o) {
      std::vector<int> idx(orders_[o].size(), 0);
      bool empty = false;
      for (int g : orders_[o]) empty = empty || shapes_[g].empty();
      if (empty) continue;
      while (true) {
        for (int mbs : mbss) add_entry(o, idx, mbs);
        size_t k = 0;  // next combination of shapes (odometer)
        while (k < idx.size() && ++idx[k] == static_cast<int>(shapes_[orders_[o][k]].size()))
          idx[k++] = 0;
        if (k == idx.size() || st_.budget_reached) break;
      }
    }
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.bound_s < b.bound_s; });
    least_rate_ = 0;
    if (s_.cluster.priced() && !entries_.empty()) {
      least_rate_ = 1e300;
      for (const Entry& e : entries_) {
        if (objective_admits(s_.search, e.rate)) least_rate_ = std::min(least_rate_, e.rate);
      }
    }
    if (!all_orders) st_.reached("orders");
  }

  void add_entry(int o, const std::vector<int>& idx, int mbs) {
    // Counted per mesh (its shape and rules), per 8 stages (the plan the rules read) and per 64
    // layer costs of the bound: with 1024 layers on 512 stages an entry is ~30 units, ~13 us.
    entry_work_ += static_cast<long long>(idx.size());
    if (entry_work_ > budget_.max_entries || (++clock_checks_ % 1024 == 0 && past_deadline(budget_))) {
      st_.reached(entry_work_ > budget_.max_entries ? "entries" : "seconds");
      return;
    }
    Entry e{0, o, idx, mbs};
    const std::vector<HeteroShape> meshes = meshes_of(e);
    int pp = 0;
    for (const HeteroShape& h : meshes) pp += h.pp;
    if (pp > s_.model.num_layers || !search_allows(s_.search.pp, pp)) {
      ++st_.pruned[pp > s_.model.num_layers ? "pp_within_layers" : "pp_not_requested"];
      return;
    }
    entry_work_ += pp / 8;
    std::vector<int> layers(pp, 1);
    layers.back() = s_.model.num_layers - pp + 1;
    const PlanSpec plan = entry_plan(s_, orders_[o], meshes, mbs, layers,
                                     std::vector<Recompute>(pp, Recompute::kNone), offload_);
    if (auto v = check_hetero_plan_rules(s_, plan)) {
      ++st_.pruned[std::string(v->rule)];
      return;
    }
    ++st_.candidates;
    entry_work_ += static_cast<long long>(meshes.size()) * s_.model.num_layers / 64;
    e.bound_s = entry_bound_s(plan);
    if (s_.cluster.priced()) {
      e.rate = rates_.fixed();
      for (size_t k = 0; k < meshes.size(); ++k) {
        e.rate += rates_.used(orders_[o][k], static_cast<long long>(meshes[k].tp) * meshes[k].dp * meshes[k].pp);
      }
    }
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
    const double spread = sum + static_cast<double>(m - 1) * sum / plan.pp;
    return std::max(spread, capacity_bound_s(plan, m));
  }

  // The capacity-aware bound of upstream's group sets (set_lower_bound_s) on the entry's meshes:
  // each group's stages hold at most the layers that fit one of its stages under any recompute
  // the entry's sets try (the most at one micro-batch in flight), at the layer times without
  // recompute (no option is faster), so the bottleneck stage is at least what the least loaded
  // spread of the layers over the stages costs. Where the stages cannot hold every layer the entry
  // has no plan: 1e299 sorts it after every other and cuts it once a plan is found, while with
  // none found it is still split (its DP reports the memory shortfall the diagnosis names).
  double capacity_bound_s(PlanSpec plan, long long m) {
    std::vector<const GroupLayerTimes*> times;
    std::vector<int> stages, caps;
    for (const HeteroMesh& hm : hetero_meshes(plan)) {
      plan.stages[hm.first_stage].recompute = Recompute::kNone;
      times.push_back(&layer_times(cache_.get(hetero_stage_mesh(plan, hm.first_stage), hm.group)));
      int cap = 0;
      for (Recompute r : recompute_values_) {
        plan.stages[hm.first_stage].recompute = r;
        const Mesh mesh = hetero_stage_mesh(plan, hm.first_stage);
        cap = std::max(cap, max_layers(cache_.get(mesh, hm.group), mesh));
      }
      stages.push_back(hm.pp);
      caps.push_back(cap);
    }
    const double b = set_lower_bound_s(times, stages, s_.model.num_layers, m, 1, false, &caps);
    return b < 1e300 ? b : 1e299;
  }

  const GroupLayerTimes& layer_times(const StageCostModel* model) {
    auto it = layer_times_.find(model);
    if (it == layer_times_.end()) it = layer_times_.emplace(model, group_layer_times(*model, s_.model.num_layers)).first;
    return it->second;
  }

  int max_layers(const StageCostModel* model, const Mesh& mesh) {
    auto it = max_layers_.find(model);
    if (it == max_layers_.end()) {
      it = max_layers_.emplace(model, max_layers_in_memory(group_bound_terms(s_, *model, layer_times(model), mesh))).first;
    }
    return it->second;
  }

  // The best even split (num_layers / pp per stage, the first ones one more) with the same option
  // on every stage, or nullopt when none fits.
  std::optional<HeteroSplit> even_split_seed(const HeteroSplitProblem& prob) {
    const int pp = static_cast<int>(prob.options.size()), L = prob.num_layers;
    std::vector<int> layers(pp, L / pp);
    for (int i = 0; i < L % pp; ++i) ++layers[i];
    std::optional<HeteroSplit> best;
    for (int o = 0; o < static_cast<int>(prob.options.front().size()); ++o) {
      const std::vector<int> option(pp, o);
      const auto obj = hetero_split_objective(prob, layers, option, &counters_);
      if (obj && (!best || *obj < best->objective_s)) best = HeteroSplit{layers, option, *obj};
    }
    return best;
  }

  // Entry `index` with recompute set `set` (number k): its even-split seed, then (unless
  // seed_only) the exact DP below the seed and the k-th best plan.
  void split_entry(size_t index, size_t k, const std::vector<Recompute>& set, bool seed_only) {
    const Entry& e = entries_[index];
    const long long tag = static_cast<long long>(index) * 4 + static_cast<long long>(k);
    const std::vector<HeteroShape> meshes = meshes_of(e);
    int pp = 0;
    for (const HeteroShape& h : meshes) pp += h.pp;
    PlanSpec plan = entry_plan(s_, orders_[e.order], meshes, e.mbs, std::vector<int>(pp, 1),
                               std::vector<Recompute>(pp, set.front()), offload_);
    HeteroSplitProblem prob;
    prob.num_layers = s_.model.num_layers;
    prob.links = hetero_stage_links(s_.cluster, plan);
    prob.num_microbatches = num_microbatches(s_.training, hetero_stage_mesh(plan, 0));
    prob.incumbent_s = threshold_s(e);
    for (int i = 0; i < pp; ++i) {
      std::vector<StageOption> opts;
      for (Recompute r : set) {
        plan.stages[i].recompute = r;
        const Mesh mesh = hetero_stage_mesh(plan, i);
        opts.push_back({cache_.get(mesh, plan.stages[i].group), mesh});
      }
      prob.options.push_back(std::move(opts));
    }
    prob.max_stage_costs = budget_.max_stage_costs;
    prob.deadline_s = budget_.deadline_s;
    // The even split with one option on every stage: offered as it is, and an incumbent for the
    // DP, which then only looks for splits below it (the entry's result stays exact).
    const std::optional<HeteroSplit> seed = even_split_seed(prob);
    if (seed && seed->objective_s < threshold_s(e)) offer(tag, e, meshes, set, *seed);
    if (seed_only) return;
    if (seed) prob.incumbent_s = std::min(prob.incumbent_s, seed->objective_s);
    ++st_.evaluated;
    HeteroSplitStatus status;
    const std::optional<HeteroSplit> split = best_hetero_split(prob, &counters_, &status);
    if (status.budget_reached) {
      dp_budget_reached_ = true;
      st_.reached(status.past_deadline ? "seconds" : "stage_costs");
    }
    if (split) offer(tag, e, meshes, set, *split);
  }

  void offer(long long tag, const Entry& e, const std::vector<HeteroShape>& meshes,
             const std::vector<Recompute>& set, const HeteroSplit& split) {
    std::vector<Recompute> rc(split.layers.size());
    for (size_t i = 0; i < rc.size(); ++i) rc[i] = set[split.option[i]];
    const PlanSpec best =
        entry_plan(s_, orders_[e.order], meshes, e.mbs, split.layers, rc, offload_);
    PlanEvaluation ev = evaluate_hetero_with_cache(s_, best, cache_);
    std::string key = plan_key(ev.plan);
    top_.offer(split.objective_s, e.rate, std::move(key), std::move(ev), tag);
  }

  // What a plan of entry e must beat (PlanSink::threshold_s at its rate).
  double threshold_s(const Entry& e) const { return top_.threshold_s(e.rate); }

  const Scenario& s_;
  double offload_;
  const SearchControl& control_;
  const SearchBudget& budget_;
  SearchResult& r_;
  SearchStats& st_;
  HeteroModelCache cache_;
  // capacity_bound_s's: every recompute value of the entries' sets, and per stage cost model its
  // layer times and the most layers one of its stages holds (the models stay in cache_).
  std::vector<Recompute> recompute_values_;
  std::unordered_map<const StageCostModel*, GroupLayerTimes> layer_times_;
  std::unordered_map<const StageCostModel*, int> max_layers_;
  PlanSink top_;
  BilledRates rates_{s_.cluster};
  double least_rate_ = 0;  // the least rate of any entry (0 without prices)
  SplitCounters counters_;
  std::vector<std::vector<int>> orders_;
  std::vector<std::vector<HeteroShape>> shapes_;  // per group
  // Progress: the larger of the entries read and the order and stage-cost budgets used (the
  // budget ends the search, so its use moves with time).
  void report(size_t done) {
    double f = static_cast<double>(done) / static_cast<double>(std::max<size_t>(1, entries_.size()));
    f = std::max(f, static_cast<double>(st_.evaluated) / static_cast<double>(std::max(1LL, budget_.max_orders)));
    f = std::max(f, static_cast<double>(counters_.work()) / static_cast<double>(std::max(1LL, budget_.max_stage_costs)));
    last_progress_ = std::max(last_progress_, std::min(1.0, f));
    control_.progress(last_progress_, st_.evaluated);
  }

  std::vector<Entry> entries_;
  long long entry_work_ = 0;
  long long combinations_left_ = 0;  // of budget_.max_combinations, after the group shapes
  long long shapes_count_ = 0;
  unsigned clock_checks_ = 0;
  double last_progress_ = 0;
  bool dp_budget_reached_ = false;
};

// One hetero search per offload fraction of search.optimizer_offload_fraction (0 when unset),
// merged into the k best, each on what the earlier ones left of the budget; fraction i of n
// reports progress within [i / n, (i + 1) / n].
Expected<SearchResult> search_fractions(const Scenario& s, const SearchControl& control, const SearchBudget& budget,
                                        double prune_above) {
  const auto& given = s.search.optimizer_offload_fraction;
  const std::vector<double> fractions = given.empty() ? std::vector<double>{0} : given;
  const size_t k = static_cast<size_t>(std::max(1, s.search.top_k));
  std::optional<SearchResult> out;
  SearchWork spent;
  for (size_t i = 0; i < fractions.size(); ++i) {
    SearchResult r;
    const double n = static_cast<double>(fractions.size());
    SearchBudget left = remaining_budget(budget, spent);
    if (out) {  // the fronts are merged: the earlier fractions' points prune this one's
      for (const auto& p : front_points(out->pareto)) left.front_seed.push_back(p);
    }
    HeteroSearch(s, fractions[i], scaled_control(control, i / n, 1 / n), left, prune_above, r).run();
    spent += r.stats.work;
    const bool cancelled = r.stats.cancelled;
    out = out ? merge_results(std::move(*out), std::move(r), k) : std::move(r);
    out->stats.cancelled = out->stats.cancelled || cancelled;
    if (cancelled) break;
  }
  return std::move(*out);
}

}  // namespace

Expected<SearchResult> hetero_search(const Scenario& s, const SearchControl& control,
                                     const SearchBudget& given) {
  const SearchBudget budget = with_deadline(given);
  const auto start = std::chrono::steady_clock::now();
  if (!s.search.layer_split.empty()) {
    return Error{"unsupported",
                 "search.layer_split is not supported in \"hetero\" mode (the split is searched)",
                 "search.layer_split"};
  }
  auto r = search_with_offload_fallback(s, control, budget, search_fractions);
  if (!r) return r;
  r->stats.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace hapmoe
