#include "hapmoe/planner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "evaluate/rules.hpp"
#include "hapmoe/hetero_plan.hpp"
#include "hetero/hetero_evaluate.hpp"
#include "hetero/hetero_search.hpp"
#include "search/closest_plan.hpp"
#include "search/diagnosis.hpp"
#include "search/within_margin.hpp"
#include "search/search_budget.hpp"
#include "search/top_plans.hpp"

namespace hapmoe {

namespace {

// By search.objective (metrics.objective_value: iteration time for "time").
bool better(const PlanEvaluation& x, const PlanEvaluation& y) {
  return x.metrics.objective_value < y.metrics.objective_value;
}

// The planner's order: the plans within the memory margin (flagged by rank_by_memory_margin)
// first, each side by objective.
bool margin_then_objective(const PlanEvaluation& x, const PlanEvaluation& y) {
  if (x.metrics.within_memory_margin != y.metrics.within_memory_margin) return x.metrics.within_memory_margin;
  return better(x, y);
}

// The k first of plans (flagged by rank_by_memory_margin, ranked by margin_then_objective); when
// they would all be within the margin and a plan above it is better than the first, the last
// place goes to the best such plan (flagged: it is still the fastest if the prediction holds).
void keep_k_within_first(std::vector<PlanEvaluation>* plans, size_t k) {
  if (plans->size() <= k) return;
  const auto tight_first = std::find_if(plans->begin(), plans->end(),
                                        [](const PlanEvaluation& ev) { return !ev.metrics.within_memory_margin; });
  const size_t at = static_cast<size_t>(tight_first - plans->begin());
  if (k >= 2 && at >= k && tight_first != plans->end()) {
    const auto fastest_tight = std::min_element(tight_first, plans->end(), better);
    if (better(*fastest_tight, plans->front())) std::swap((*plans)[k - 1], *fastest_tight);
  }
  plans->resize(k);
}

// The note that says why slower plans (within the memory margin) rank above the fastest.
void note_within_first(const Scenario& s, SearchResult* r) {
  const char* best = s.search.objective == Objective::kCost ? "cheapest" : "fastest";
  char note[240];
  std::snprintf(note, sizeof note,
                "the %s plans leave less than %.0f%% of a GPU's memory free: the %s plans within that margin were "
                "searched for with them and are ranked first",
                best, 100 * s.search.memory_margin_fraction, best);
  r->notes.push_back(note);
}

// An engine's plans within the memory margin (SearchResult::within_margin, searched with its
// other plans in one pass), when its fastest plan is above the margin: with r's plans, each plan
// once, ranked within the margin first and each side by objective; the k best, the last place
// going to the fastest plan above the margin when all k would be within it; with `note`, says so
// (note_within_first).
void take_within_margin(const Scenario& s, SearchResult* r, bool note = true) {
  std::vector<PlanEvaluation> within = std::move(r->within_margin);
  r->within_margin.clear();
  const double margin = s.search.memory_margin_fraction;
  if (!(margin > 0) || r->plans.empty() || within.empty()) return;
  rank_by_memory_margin(s, r);  // flags them
  const auto fastest = std::min_element(r->plans.begin(), r->plans.end(), better);
  if (fastest->metrics.within_memory_margin) return;  // the best plan of all is within it
  if (note) note_within_first(s, r);
  for (PlanEvaluation& ev : r->plans) {
    const std::string key = plan_key(ev.plan);
    const bool seen = std::any_of(within.begin(), within.end(), [&](const PlanEvaluation& x) { return plan_key(x.plan) == key; });
    if (!seen) within.push_back(std::move(ev));
  }
  r->plans = std::move(within);
  rank_by_memory_margin(s, r);  // flags them
  std::stable_sort(r->plans.begin(), r->plans.end(), margin_then_objective);
  keep_k_within_first(&r->plans, static_cast<size_t>(std::max(1, s.search.top_k)));
  // stats.above_memory_margin: search_plans' last rank_by_memory_margin counts the plans kept.
}

// "hetero" mode: the hetero engine's plans; with baselines, the best upstream plan (drawing on
// what the hetero search left of the budget; a limit it reaches is the result's too) and the
// upstream baselines, rebased onto hetero's first plan.
Expected<SearchResult> hetero_mode(const Scenario& s, const SearchControl& control, const SearchBudget& budget) {
  auto h = hetero_search(s, scaled_control(control, 0, 0.9), budget);
  if (!h || h->stats.cancelled) return h;
  SearchResult r = std::move(h).value();
  if (s.search.baselines) {
    Scenario up = s;
    up.search.top_k = 1;
    up.search.pareto = false;
    up.search.memory_margin_fraction = 0;  // the comparison is with upstream's fastest plan
    auto u = upstream_search(up, scaled_control(control, 0.9, 0.1), remaining_budget(budget, r.stats.work));
    if (u) add_budget_use(u->stats, &r.stats);
    if (u && !u->plans.empty() && !r.plans.empty()) {
      r.upstream = Baseline{u->plans.front(), 0};
      r.megatron_default = u->megatron_default;
      r.uniform = u->uniform;
    }
  }
  take_within_margin(s, &r);
  rebase_baselines(&r);  // onto hetero's first plan
  return r;
}

// What the cluster's vendors mean for "auto" mode's plans ("" for one vendor).
std::string auto_vendor_note(const Scenario& s) {
  std::string v = mixed_vendor_note(s);
  if (v.empty()) return v;
  return "the cluster mixes GPU vendors: upstream Megatron-LM runs one collective library, so its plans use GPUs of "
         "one vendor only; FlagScale plans (runtime \"flagscale\") may span vendors";
}

void label(std::vector<PlanEvaluation>& plans, Runtime r) {
  for (PlanEvaluation& ev : plans) ev.plan.runtime = r;
}

// u's and h's plans ranked together (by objective; upstream first on ties, as the simpler
// runtime to deploy), the k best kept; u's baselines and diagnosis; the counters of both.
SearchResult rank_together(SearchResult u, SearchResult h, size_t k) {
  label(u.plans, Runtime::kMegatron);
  label(h.plans, Runtime::kFlagScale);
  label(u.pareto, Runtime::kMegatron);
  label(h.pareto, Runtime::kFlagScale);
  SearchResult out = std::move(u);
  const std::optional<PlanEvaluation> best_upstream =
      out.plans.empty() ? std::nullopt : std::optional<PlanEvaluation>(out.plans.front());
  for (PlanEvaluation& ev : h.plans) out.plans.push_back(std::move(ev));
  // The plans within the memory margin first (rank_by_memory_margin has flagged both lists), so
  // keeping the k best never drops one that would rank above a kept plan.
  std::stable_sort(out.plans.begin(), out.plans.end(), margin_then_objective);
  keep_k_within_first(&out.plans, k);
  out.pareto = merge_fronts(std::move(out.pareto), std::move(h.pareto));
  SearchStats& st = out.stats;
  st.candidates += h.stats.candidates;
  st.evaluated += h.stats.evaluated;
  st.stage_costs += h.stats.stage_costs;
  for (const auto& [rule, n] : h.stats.pruned) st.pruned[rule] += n;
  st.cancelled = st.cancelled || h.stats.cancelled;
  st.offload_retried = st.offload_retried && h.stats.offload_retried;  // nothing fit without, in either
  st.retried_after_budget = st.offload_retried && (st.retried_after_budget || h.stats.retried_after_budget);
  add_budget_use(h.stats, &st);
  if (out.plans.empty()) {
    if (!out.diagnosis) out.diagnosis = std::move(h.diagnosis);
    return out;
  }
  out.diagnosis.reset();
  if (best_upstream && out.plans.front().plan.runtime == Runtime::kFlagScale) out.upstream = Baseline{*best_upstream, 0};
  rebase_baselines(&out);
  return out;
}

// "auto" mode: the upstream engine first (the cheaper one, and its baselines are the result's),
// then the hetero engine on what it left of the budget.
Expected<SearchResult> auto_mode(const Scenario& s, const SearchControl& control, const SearchBudget& budget) {
  constexpr double kUpstreamShare = 0.3;
  auto u = upstream_search(s, scaled_control(control, 0, kUpstreamShare), budget);
  if (!u) return u;
  // The fastest plan of both engines (each engine's fastest is in its list before
  // take_within_margin): when it is above the margin and a plan within it ranks first, the note
  // says why, once.
  const double margin = s.search.memory_margin_fraction;
  double fastest = 1e300;
  bool fastest_within = true;
  auto see_fastest = [&](const SearchResult& x) {
    for (const PlanEvaluation& ev : x.plans) {
      if (ev.metrics.objective_value < fastest) {
        fastest = ev.metrics.objective_value;
        fastest_within = !(margin > 0) || within_margin(ev, margin);
      }
    }
  };
  see_fastest(*u);
  take_within_margin(s, &u.value(), false);
  SearchResult r = std::move(u).value();
  const size_t k = static_cast<size_t>(std::max(1, s.search.top_k));
  if (!r.stats.cancelled) {
    SearchBudget left = remaining_budget(budget, r.stats.work);
    for (const auto& p : front_points(r.pareto)) left.front_seed.push_back(p);  // rank_together merges the fronts
    // Upstream's k-th plan within the margin: a hetero plan within it must beat that to rank.
    size_t within = 0;
    for (const PlanEvaluation& ev : r.plans) {
      if (s.search.memory_margin_fraction > 0 && within_margin(ev, s.search.memory_margin_fraction) && ++within == k) {
        left.within_prune_above = ev.metrics.objective_value;
      }
    }
    auto h = hetero_search(s, scaled_control(control, kUpstreamShare, 1 - kUpstreamShare), left);
    if (h) {
      see_fastest(*h);
      take_within_margin(s, &h.value(), false);
      rank_by_memory_margin(s, &r);
      rank_by_memory_margin(s, &h.value());
      r = rank_together(std::move(r), std::move(h).value(), k);
    } else {
      label(r.plans, Runtime::kMegatron);
      r.notes.push_back("FlagScale plans not searched: " + h.error().message);
    }
  } else {
    label(r.plans, Runtime::kMegatron);
  }
  if (!fastest_within && !r.plans.empty() && r.plans.front().metrics.within_memory_margin) note_within_first(s, &r);
  if (const std::string v = auto_vendor_note(s); !v.empty()) r.notes.push_back(v);
  return r;
}

// Over memory with nothing cut short: the closest plan beside the diagnosis (the scenario the
// search last tried: with the offload fractions when it retried with them).
void add_closest_plan(const Scenario& s, SearchResult* r) {
  if (!r->plans.empty() || !r->diagnosis || !(r->diagnosis->shortfall_gib > 0) || r->stats.cancelled ||
      r->stats.budget_reached) {
    return;
  }
  const std::optional<Scenario> offload = r->stats.offload_retried ? offload_fallback_scenario(s) : std::nullopt;
  if (auto c = closest_infeasible_plan(offload ? *offload : s)) add_closest_plan(&*r->diagnosis, std::move(*c));
}

// time_within_budget with nothing within the budget: what a plan that fits would bill (the
// cheapest per token, searched without the budget) instead of a memory diagnosis.
void diagnose_budget(const Scenario& s, const SearchControl& control, const SearchBudget& budget, SearchResult* r) {
  if (s.search.objective != Objective::kTimeWithinBudget || !r->plans.empty() || r->stats.cancelled) return;
  const auto cut = r->stats.pruned.find("over_budget");
  if (cut == r->stats.pruned.end() || cut->second == 0) return;
  Scenario wide = s;
  wide.search.objective = Objective::kCost;
  wide.search.top_k = 1;
  wide.search.pareto = false;
  wide.search.baselines = false;
  SearchControl quiet;
  quiet.cancel = control.cancel;
  auto w = search_plans(wide, quiet, remaining_budget(budget, r->stats.work));
  if (!w) return;
  add_budget_use(w->stats, &r->stats);
  if (w->plans.empty()) return;  // nothing fits at any price: the memory diagnosis stands
  const PlanMetrics& m = w->plans.front().metrics;
  char text[400];
  std::snprintf(text, sizeof text,
                "no plan that fits bills at most %.4g USD per hour (search.budget_per_hour; %lld search entries over it "
                "were skipped, rule \"over_budget\"): the cheapest plan per token that fits bills %.4g USD per hour "
                "(%.4g s per iteration on %lld GPUs, %.4g USD per million tokens)",
                s.search.budget_per_hour, cut->second, m.cost_per_hour, m.iteration_time_s, m.gpus_used,
                m.cost_per_million_tokens);
  Diagnosis d;
  d.message = text;
  char raise[160];
  std::snprintf(raise, sizeof raise, "raise search.budget_per_hour to %.4g or more", m.cost_per_hour);
  d.suggestions = {raise, "lower a group's price_per_gpu_hour, or bill a group by use (billed \"used\")"};
  r->diagnosis = std::move(d);
}

}  // namespace

Expected<SearchResult> search_plans(const Scenario& s, const SearchControl& given_control, const SearchBudget& given) {
  const auto start = std::chrono::steady_clock::now();
  const SearchBudget budget = with_deadline(given);
  double last_progress = 0;
  const SearchControl control = monotone_control(given_control, &last_progress);
  Expected<SearchResult> r = Error{"internal", "no search mode", "search.mode"};
  switch (s.search.mode) {
    case SearchMode::kMegatron:
      r = upstream_search(s, control, budget);
      if (r) {
        take_within_margin(s, &r.value());
        if (const std::string v = mixed_vendor_note(s); !v.empty()) r->notes.push_back(v);
      }
      break;
    case SearchMode::kHetero:
      r = hetero_mode(s, control, budget);
      break;
    case SearchMode::kAuto:
      r = auto_mode(s, control, budget);
      break;
  }
  if (r) {
    rank_by_memory_margin(s, &r.value());
    diagnose_budget(s, control, budget, &r.value());
    add_closest_plan(s, &r.value());
    if (control.progress && !r->stats.cancelled) control.progress(1.0, r->stats.evaluated);
    r->stats.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  return r;
}

Runtime plan_runtime(const Scenario& s, const PlanSpec& plan) {
  if (plan.runtime) return *plan.runtime;
  return is_hetero_plan(plan) || s.search.mode == SearchMode::kHetero ? Runtime::kFlagScale : Runtime::kMegatron;
}

Expected<PlanEvaluation> evaluate_plan(const Scenario& s, const PlanSpec& plan) {
  if (plan.runtime == Runtime::kMegatron && has_stage_meshes(plan)) {
    return Error{"bad_value",
                 "plan.runtime \"megatron\": upstream Megatron-LM runs one mesh for every stage, and a stage "
                 "carries its own (tp, cp, dp, ep or etp); use runtime \"flagscale\" or drop the stage meshes",
                 "plan.runtime"};
  }
  Expected<PlanEvaluation> ev = plan_runtime(s, plan) == Runtime::kFlagScale ? evaluate_hetero_plan(s, plan)
                                                                              : evaluate_upstream_plan(s, plan);
  if (!ev) return ev;
  // Validated inputs keep every term finite; a result must never carry one (JSON writes null).
  bool finite = std::isfinite(ev->metrics.iteration_time_s) && std::isfinite(ev->time.pipeline_s) &&
                std::isfinite(ev->time.tail_s);
  for (const StageCost& c : ev->stages) {
    finite = finite && std::isfinite(c.per_microbatch_s()) && std::isfinite(c.tail_s()) && std::isfinite(c.peak_bytes());
  }
  if (finite) return ev;
  return Error{"non_finite", "the cost model gave a non-finite time or memory for this plan: an input figure is out of scale",
               "plan"};
}

}  // namespace hapmoe
