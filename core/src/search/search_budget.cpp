// SearchBudget's arithmetic: what is left of it after earlier searches, the wall-clock backstop,
// and how a search records the limits that cut it short.
#include "search/search_budget.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>

#include "hapmoe/search_types.hpp"

namespace hapmoe {

SearchControl scaled_control(const SearchControl& control, double from, double share) {
  SearchControl c = control;
  if (control.progress) {
    c.progress = [&control, from, share](double f, long long n) { control.progress(from + share * f, n); };
  }
  return c;
}

SearchControl monotone_control(const SearchControl& control, double* last) {
  SearchControl c = control;
  if (control.progress) {
    c.progress = [&control, last](double f, long long n) {
      *last = std::max(*last, f);
      control.progress(*last, n);
    };
  }
  return c;
}

std::vector<SearchBudget::FrontPoint> front_points(const std::vector<PlanEvaluation>& front) {
  std::vector<SearchBudget::FrontPoint> out;
  for (const PlanEvaluation& ev : front) out.push_back({ev.metrics.iteration_time_s, ev.metrics.cost_per_hour});
  return out;
}

SearchBudget remaining_budget(const SearchBudget& b, const SearchWork& used) {
  SearchBudget r = b;
  auto left = [](long long max, long long spent) { return std::max(0LL, max - spent); };
  r.max_combinations = left(b.max_combinations, used.combinations);
  r.max_shapes = left(b.max_shapes, used.shapes);
  r.max_group_sets = left(b.max_group_sets, used.group_sets);
  r.max_entries = left(b.max_entries, used.entries);
  r.max_orders = left(b.max_orders, used.orders);
  r.max_stage_costs = left(b.max_stage_costs, used.stage_costs);
  return r;
}

SearchBudget with_deadline(const SearchBudget& b) {
  SearchBudget r = b;
  if (r.deadline_s == std::numeric_limits<double>::infinity()) r.deadline_s = search_clock_s() + r.max_seconds;
  return r;
}

SearchWork& operator+=(SearchWork& a, const SearchWork& b) {
  a.combinations += b.combinations;
  a.shapes += b.shapes;
  a.group_sets += b.group_sets;
  a.entries += b.entries;
  a.orders += b.orders;
  a.stage_costs += b.stage_costs;
  return a;
}

void add_budget_use(const SearchStats& from, SearchStats* to) {
  to->work += from.work;
  for (const std::string& l : from.limits_reached) to->reached(l.c_str());
  to->budget_reached = to->budget_reached || from.budget_reached;
  to->shapes_cut_short += from.shapes_cut_short;
  to->entries_unsearched += from.entries_unsearched;
  to->entries_dropped += from.entries_dropped;
}

double search_clock_s() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

bool past_deadline(const SearchBudget& b) {
  return b.deadline_s < std::numeric_limits<double>::infinity() && search_clock_s() >= b.deadline_s;
}

long long fair_share_cap(const std::vector<long long>& given, long long budget) {
  // Within the budget, every count is served whole (the sorted walk below ends the same way):
  // known without sorting the thousands of shapes' counts.
  long long sum = 0;
  for (long long c : given) {
    sum += c;
    if (sum > budget) break;
  }
  if (sum <= budget) return 1LL << 62;
  std::vector<long long> counts = given;
  std::sort(counts.begin(), counts.end());
  long long below = 0;  // the counts served whole so far
  for (size_t i = 0; i < counts.size(); ++i) {
    const long long rest = static_cast<long long>(counts.size() - i);
    if (counts[i] > (budget - below) / rest) return std::max(0LL, (budget - below) / rest);
    below += counts[i];
  }
  return 1LL << 62;
}

std::vector<long long> walk_allowance(const std::vector<long long>& counts, long long budget) {
  const long long cap = fair_share_cap(counts, budget);
  std::vector<long long> allowed(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) allowed[i] = std::min(counts[i], cap);
  if (cap >= kMinPartialWalk) return allowed;
  // The shapes of few sets that the cap cuts: their share of the budget (cap each) goes to whole
  // walks of an evenly spread part of them: a shape is walked once the credit it and the shapes
  // before it earned (share / total per set) pays for all its sets.
  long long share = 0, total = 0;
  auto few = [&](long long c) { return c > cap && c <= kMinPartialWalk; };
  for (long long c : counts) {
    if (few(c)) share += cap, total += c;
  }
  long long credit = 0;  // in sets x total
  for (size_t i = 0; i < counts.size(); ++i) {
    if (!few(counts[i])) continue;
    credit += counts[i] * share;
    const bool chosen = credit >= counts[i] * total;
    allowed[i] = chosen ? counts[i] : 0;
    if (chosen) credit -= counts[i] * total;
  }
  return allowed;
}

void SearchStats::reached(const char* limit) {
  budget_reached = true;
  if (std::find(limits_reached.begin(), limits_reached.end(), limit) == limits_reached.end()) {
    limits_reached.push_back(limit);
  }
}

}  // namespace hapmoe
