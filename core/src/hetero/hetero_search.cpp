#include "hetero/hetero_search.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>

#include "search/candidate_cost.hpp"
#include "search/diagnosis.hpp"
#include "hetero/hetero_evaluate.hpp"
#include "hapmoe/hetero_plan.hpp"
#include "hetero/hetero_rules.hpp"
#include "hetero/hetero_space.hpp"
#include "hetero/hetero_dp.hpp"
#include "search/search_budget.hpp"
#include "search/plan_sink.hpp"
#include "search/top_plans.hpp"

namespace hapmoe {

namespace {

// The DP of a run first looks for plans within this share above the run's lower bound, then
// twice that, and so on (a tight cap keeps its states few).
constexpr double kGuessOver = 0.02;
// ... up to this share above it; past it, below the k-th plan.
constexpr double kGuessMax = 1.0;
// The DPs kept between levels (the runs last searched): at most this many bytes of their tables
// (HeteroDp::footprint_bytes; with 6 DPs kept, building DPs again was 10% of DeepSeek-V3
// mixed-2048's hetero search: its runs' DPs are 0.1-1 MB each).
constexpr size_t kLiveBytes = 64u << 20;
// The share of the stage-cost budget the runs' bounds may take (build_runs).
constexpr double kBoundShare = 0.5;
// The bound of a run whose meshes cannot hold every layer.
constexpr double kInfeasibleRun = 1e299;

class HeteroSearch {
 public:
  // fractions: the optimizer offload fractions (one per plan, every mesh's) searched together.
  // Only plans faster than prune_above are kept.
  HeteroSearch(const Scenario& s, std::vector<double> fractions, const SearchControl& control,
               const SearchBudget& budget, double prune_above, SearchResult& r)
      : s_(s),
        fractions_(std::move(fractions)),
        control_(control),
        budget_(budget),
        r_(r),
        st_(r.stats),
        cache_(s),
        given_threshold_(prune_above < 1e300),
        top_(s, static_cast<size_t>(std::max(1, s.search.top_k)), prune_above, budget.front_seed,
             s.search.memory_margin_fraction, budget.within_prune_above) {}

  void run() {
    counters_.max_work = budget_.max_stage_costs;
    shared_.max_table_cells = budget_.max_table_cells;
    build_runs();
    search_runs();
    if (control_.progress) control_.progress(1.0, st_.evaluated);
    st_.work = {budget_.max_combinations - combinations_left_, shapes_count_, 0, entry_units_, st_.evaluated,
                counters_.work()};
    st_.stage_costs = counters_.stage_costs;
    st_.pruned["stage_memory"] += counters_.memory;
    st_.pruned["dominated_split"] += counters_.dominated;
    st_.pruned["split_lower_bound"] += counters_.lower_bound;
    r_.plans = top_.take();
    r_.within_margin = top_.take_within();
    r_.pareto = top_.take_front();
    if (r_.plans.empty()) r_.diagnosis = diagnose_no_plan(s_, counters_.min_shortfall_bytes, st_);
  }

 private:
  // One run: tokens per micro-batch B, a recompute set, an offload fraction; its lower bound.
  struct Run {
    double bound_s;
    HeteroRun run;
    double least_cap = 0;  // HeteroDp::least_cap, for the DP built again
    std::unique_ptr<HeteroDp> built;  // the DP build_runs made, until dp_of takes it
  };

  // A run's DP, with its bound computed: the last ones built are kept, up to kLiveBytes (a run is
  // searched once per level; each DP holds its meshes' bound terms and tables).
  HeteroDp& dp_of(size_t i) {
    for (auto& [id, dp] : live_) {
      if (id == i) return *dp;
    }
    std::unique_ptr<HeteroDp> dp = std::move(runs_[i].built);
    if (!dp) {
      dp = std::make_unique<HeteroDp>(s_, cache_, runs_[i].run, shapes_, std::max(1, s_.search.top_k), &counters_, &shared_);
      if (runs_[i].least_cap > 0) dp->set_least_cap(runs_[i].least_cap);
      else dp->lower_bound_s();
    }
    size_t bytes = dp->footprint_bytes();
    for (const auto& kept : live_) bytes += kept.second->footprint_bytes();
    for (; !live_.empty() && bytes > kLiveBytes; live_.erase(live_.begin())) bytes -= live_.front().second->footprint_bytes();
    live_.emplace_back(i, std::move(dp));
    return *live_.back().second;
  }

  // Every (B, recompute set) with its lower bound, in order of the bound.
  void build_runs() {
    // FlagScale's hetero mode runs CP 1 and no virtual pipeline: a search that excludes either
    // has nothing to plan.
    for (const auto& [values, rule] : {std::pair{&s_.search.cp, "hetero_cp_unsupported"},
                                       std::pair{&s_.search.vpp, "hetero_no_vpp"}}) {
      if (!search_allows(*values, 1)) {
        ++st_.pruned[rule];
        return;
      }
    }
    combinations_left_ = budget_.max_combinations;
    for (int g = 0; g < static_cast<int>(s_.cluster.groups.size()); ++g) {
      shapes_.push_back(hetero_group_shapes(s_, g, &combinations_left_));
      shapes_count_ += static_cast<long long>(shapes_.back().size());
    }
    if (combinations_left_ == 0) st_.reached("combinations");
    // B = mesh 0's dp x micro-batch, for every mesh of every group that may come first.
    std::vector<int> tokens;
    for (const auto& shapes : shapes_) {
      for (const HeteroShape& h : shapes) {
        for (int mbs : search_values_or(s_.search.micro_batch_size, {1, 2})) {
          const long long b = static_cast<long long>(h.dp) * mbs;
          if (b <= s_.training.global_batch_size && s_.training.global_batch_size % b == 0) {
            tokens.push_back(static_cast<int>(b));
          }
        }
      }
    }
    std::sort(tokens.begin(), tokens.end());
    tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
    least_rate_ = 0;
    if (s_.cluster.priced()) {
      least_rate_ = 1e300;
      const BilledRates rates(s_.cluster);
      for (int g = 0; g < static_cast<int>(s_.cluster.groups.size()); ++g) {
        const double rate = rates.fixed() + rates.used(g, s_.cluster.groups[g].gpus());
        if (objective_admits(s_.search, rate)) least_rate_ = std::min(least_rate_, rate);
      }
    }
    double last_cap = 0;  // the least cap of the run built last (the next one's hint)
    for (double offload : fractions_) {
      for (int b : tokens) {
        for (const std::vector<Recompute>& set : hetero_recompute_sets(s_)) {
          if (past_deadline(budget_)) {
            st_.reached("seconds");
            return sort_runs();
          }
          if (entry_units_ >= budget_.max_entries) {
            st_.reached("entries");
            return sort_runs();
          }
          // A run's bound is work too (its capacity tables, about 20 of them): the runs' bounds
          // take at most kBoundShare of the budget, the rest is left for the runs built, their
          // first plans and the exact search (10 distinct groups of Mixtral-L: the bounds of 13
          // runs took it all, and no run was searched).
          if (counters_.work() >= static_cast<long long>(kBoundShare * static_cast<double>(budget_.max_stage_costs))) {
            st_.reached("stage_costs");
            return sort_runs();
          }
          const HeteroRun run{b, set, offload};
          auto dp = std::make_unique<HeteroDp>(s_, cache_, run, shapes_, std::max(1, s_.search.top_k), &counters_, &shared_);
          entry_units_ += dp->build_units();
          ++st_.candidates;
          double bound = dp->lower_bound_s(last_cap);
          if (dp->least_cap() > 0) last_cap = dp->least_cap();
          if (bound >= 1e300) {
            // No assignment of its meshes holds every layer: it sorts last, and is searched only
            // while no plan is found (its stage costs give the diagnosis its memory shortfall).
            ++st_.pruned["stage_memory_bound"];
            bound = kInfeasibleRun;
          }
          // The DP is kept for the first plan and the first level (within kLiveBytes for them all).
          const size_t bytes = dp->footprint_bytes();
          const bool keep = built_bytes_ + bytes <= kLiveBytes;
          if (keep) built_bytes_ += bytes;
          runs_.push_back({bound, run, dp->least_cap(), keep ? std::move(dp) : nullptr});
        }
      }
    }
    sort_runs();
  }

  void sort_runs() {
    std::stable_sort(runs_.begin(), runs_.end(), [](const Run& a, const Run& b) { return a.bound_s < b.bound_s; });
  }

  // The runs' plans below the k-th plan, by rising levels: every run whose bound is below the
  // level is searched for plans below it (a tight cap keeps a run's states few), until what the
  // sink still wants is below the level just searched; past kGuessMax above the least bound,
  // each run below the k-th plan is searched without a level. Runs are read in order of their
  // bound; the first at or above what the sink wants ends a pass.
  void search_runs() {
    if (runs_.empty()) return;
    const double base = runs_.front().bound_s;
    if (base >= kInfeasibleRun) {  // nothing fits: the runs' stage costs name the shortfall
      search_pass(1e300, -1);
      return;
    }
    // First plans, at once: each run's best capacity assignment, split (a plan to return when
    // the budget ends the exact passes, and an incumbent for them).
    for (size_t i = 0; i < runs_.size() && runs_[i].bound_s < kInfeasibleRun; ++i) {
      if (runs_[i].bound_s >= top_.within_threshold_s(least_rate_)) break;
      first_plan(i);
    }
    // The levels guess that the best plan lies just above the least bound. A search given the
    // k-th plan of a search it extends (the offload retry: the k-th plan found without offload,
    // exactly) looks below that at once, as its best plans are near it (DeepSeek-V3 mixed-2048:
    // bound 17.2 s, k-th plan 21.7 s, the retry's best 21.2 s; levels 2-16% above the bound
    // found nothing and were 40% of the retry's work).
    double over = given_threshold_ ? 2 * kGuessMax : kGuessOver;
    for (int level = 0; over <= kGuessMax; ++level) {
      const double below = base * (1 + over);
      if (below >= top_.within_threshold_s(least_rate_)) break;
      if (!search_pass(below, level)) return;
      if (top_.within_threshold_s(least_rate_) <= below) return;
      // Each level searches its runs afresh: doubling keeps the levels' work within about twice
      // the last one's (steps of 1.25 once the first plans were found took the whole budget on
      // DeepSeek-V3 mixed-2048: eight levels of run 0 alone).
      over *= 2;
    }
    search_pass(1e300, -1);
  }

  // Searches every run whose bound is below both `below` and the sink's threshold; false when the
  // budget (or a cancel) ended it.
  bool search_pass(double below, int level) {
    for (size_t i = 0; i < runs_.size(); ++i) {
      if (control_.cancel && control_.cancel->load()) {
        st_.cancelled = true;
        return false;
      }
      if (control_.progress) report(i);
      const double threshold = top_.within_threshold_s(least_rate_);
      if (runs_[i].bound_s >= std::min(below, threshold)) {
        if (level < 0) st_.pruned["entry_lower_bound"] += static_cast<long long>(runs_.size() - i);
        break;
      }
      if (!search_run(i, below)) {
        for (size_t e = i; e < runs_.size(); ++e) st_.entries_unsearched += runs_[e].bound_s < top_.within_threshold_s(least_rate_);
        return false;
      }
    }
    return true;
  }

  // The run's first plan (HeteroDp::first_plan).
  void first_plan(size_t i) {
    HeteroDp& dp = dp_of(i);
    dp.first_plan(calls_of(i, dp));
  }

  // One run's plans below `below` and the sink's threshold; false when the budget ended it.
  bool search_run(size_t i, double below) {
    HeteroDp& dp = dp_of(i);
    const HeteroDp::Calls calls = calls_of(i, dp);
    dp.search(calls, below);
    st_.evaluated += dp.closed();
    return !calls.stopped() && !counters_.stopped && !st_.cancelled;
  }

  // What run i's DP calls: the sink's threshold, the budget (its plans tried count as orders),
  // the sink.
  HeteroDp::Calls calls_of(size_t i, HeteroDp& dp) {
    HeteroDp::Calls calls;
    calls.threshold_s = [this](double rate) { return top_.threshold_s(rate); };
    calls.within_threshold_s = [this](double rate) { return top_.within_threshold_s(rate); };
    calls.stopped = [this, &dp] {
      if (st_.evaluated + dp.closed() >= budget_.max_orders) st_.reached("orders");
      else if (counters_.work() >= budget_.max_stage_costs) st_.reached("stage_costs");
      else if (shared_.tables_full) st_.reached("table_cells");
      else if (++clock_checks_ % 256 == 0 && past_deadline(budget_)) st_.reached("seconds");
      else if (control_.cancel && control_.cancel->load()) st_.cancelled = true;
      else {
        // Progress moves within a run too, every 0.5% of the stage-cost budget (a run may take
        // most of a search: 6 one-node groups of distinct GPUs moved in 10 steps in 1.4 s).
        if (control_.progress && counters_.work() >= next_report_work_) report(runs_done_);
        return false;
      }
      return true;
    };
    calls.offer = [this, i](const HeteroDpPlan& p) {
      const Run& run = runs_[i];
      std::vector<Recompute> rc;
      for (int o : p.option) rc.push_back(run.run.recompute[static_cast<size_t>(o)]);
      const PlanSpec plan = hetero_plan_of(s_, p.order, p.meshes, p.micro_batch_size, p.layers, rc, run.run.offload);
      PlanEvaluation ev = evaluate_hetero_with_cache(s_, plan, cache_);
      std::string key = plan_key(ev.plan);
      top_.offer(p.objective_s, p.rate, std::move(key), std::move(ev), entry_tag(i, p));
    };
    return calls;
  }

  // The sink's tag of a plan's entry: run i's group order and meshes, the same whichever of the
  // run's searches (a first plan, a level, a DP built again) found it, so that an entry keeps one
  // place in the top k. (The DP's own prefix ids are its search's: with them, an entry's best and,
  // found again by a later level, its best within the memory margin took two places.)
  long long entry_tag(size_t i, const HeteroDpPlan& p) {
    std::vector<int> key{static_cast<int>(i), p.micro_batch_size};
    for (size_t g = 0; g < p.order.size(); ++g) {
      const HeteroShape& m = p.meshes[g];
      key.insert(key.end(), {p.order[g], m.tp, m.ep, m.etp, m.dp, m.pp});
    }
    return entry_tags_.emplace(std::move(key), static_cast<long long>(entry_tags_.size())).first->second;
  }

  // Progress: the larger of the runs read and the stage-cost budget used.
  void report(size_t done) {
    runs_done_ = done;
    next_report_work_ = counters_.work() + std::max(1LL, budget_.max_stage_costs / 200);
    double f = static_cast<double>(done) / static_cast<double>(std::max<size_t>(1, runs_.size()));
    f = std::max(f, static_cast<double>(counters_.work()) / static_cast<double>(std::max(1LL, budget_.max_stage_costs)));
    last_progress_ = std::max(last_progress_, std::min(1.0, f));
    control_.progress(last_progress_, st_.evaluated);
  }

  const Scenario& s_;
  std::vector<double> fractions_;
  const SearchControl& control_;
  const SearchBudget& budget_;
  SearchResult& r_;
  SearchStats& st_;
  HeteroModelCache cache_;
  bool given_threshold_;  // prune_above is an earlier search's k-th plan
  PlanSink top_;
  double least_rate_ = 0;  // the least rate of any plan (0 without prices)
  SplitCounters counters_;
  HeteroShared shared_;  // what the runs share: stage costs, label tables, models' terms, checked meshes
  std::vector<std::vector<HeteroShape>> shapes_;  // per group
  std::vector<Run> runs_;
  std::vector<std::pair<size_t, std::unique_ptr<HeteroDp>>> live_;  // dp_of's, oldest first
  std::map<std::vector<int>, long long> entry_tags_;                // entry_tag's
  size_t built_bytes_ = 0;  // of the DPs build_runs kept (Run::built)
  long long combinations_left_ = 0;  // of budget_.max_combinations, after the group shapes
  long long shapes_count_ = 0;
  long long entry_units_ = 0;  // the runs built, in the budget's entry units
  unsigned clock_checks_ = 0;
  double last_progress_ = 0;
  size_t runs_done_ = 0;            // the runs read when progress was last reported
  long long next_report_work_ = 0;  // the work at which calls.stopped reports progress again
};

// The hetero search over every offload fraction of search.optimizer_offload_fraction (0 when
// unset), their runs read together by bound.
Expected<SearchResult> search_fractions(const Scenario& s, const SearchControl& control, const SearchBudget& budget,
                                        double prune_above) {
  const auto& given = s.search.optimizer_offload_fraction;
  SearchResult r;
  HeteroSearch(s, given.empty() ? std::vector<double>{0} : given, control, budget, prune_above, r).run();
  return r;
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
