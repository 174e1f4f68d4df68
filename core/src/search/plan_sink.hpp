// Where both engines put the plans they find: the k best by the search objective (TopPlans over
// objective_value) and, with prices and search.pareto, the Pareto front of iteration time against
// cost (every plan that no other plan beats on both; objective.hpp). Both want a plan only below
// a time that depends on the rate its entry bills (threshold_s), so an engine's bounds, which are
// bounds on time, prune for either: an entry (or a prefix, or a split) whose time bound reaches
// threshold_s(its rate) holds no plan either keeps.
//  - The k best: a plan's value is time x objective_weight(rate), so a plan must be faster than
//    the k-th value / weight (and, for time_within_budget, bill within the budget).
//  - The front: points (t, c = rate x t). An entry's plans lie on c = rate x t, and a point (t', c')
//    weakly dominates all of them with t >= max(t', c'/rate): the threshold is the least such time
//    over the front. Only the fastest plan of a rate can be on the front.
// threshold_s is non-increasing in the rate, so threshold_s(least rate of any entry) bounds all.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "evaluate/objective.hpp"
#include "hapmoe/search_types.hpp"
#include "search/within_margin.hpp"
#include "search/top_plans.hpp"

namespace hapmoe {

// The non-dominated plans by (iteration time, rate x time), fastest first.
class ParetoFront {
 public:
  // The time below which a plan billing `rate` is not weakly dominated (1e300: no point yet).
  double threshold_s(double rate) const {
    double t = 1e300;
    for (const Point& p : points_) {
      const double at = rate > 0 ? std::max(p.time, p.cost / rate) : (p.cost > 0 ? 1e300 : p.time);
      t = std::min(t, at);
    }
    return t;
  }
  // Keeps the plan unless a kept point is at least as good on both; drops the points it beats.
  void offer(double time_s, double rate, std::string key, PlanEvaluation ev) { add(time_s, rate, false, std::move(key), std::move(ev)); }
  // A point of an earlier search's front (SearchBudget::front_seed): it prunes like a kept point
  // but is not returned (that search returns its plan).
  void seed(double time_s, double rate) { add(time_s, rate, true, {}, {}); }
  size_t size() const { return points_.size(); }
  // The plans, fastest first (seeds left out); the front is empty afterwards.
  std::vector<PlanEvaluation> take() {
    std::vector<PlanEvaluation> out;
    for (Point& p : points_) {
      if (!p.seed) out.push_back(std::move(p.ev));
    }
    points_.clear();
    return out;
  }

 private:
  struct Point {
    double time, cost;
    bool seed;
    std::string key;
    PlanEvaluation ev;
  };
  void add(double time_s, double rate, bool seed, std::string key, PlanEvaluation ev) {
    const double cost = rate * time_s;
    for (const Point& p : points_) {
      if (p.time <= time_s && p.cost <= cost) return;
    }
    points_.erase(std::remove_if(points_.begin(), points_.end(),
                                 [&](const Point& p) { return time_s <= p.time && cost <= p.cost; }),
                  points_.end());
    Point n{time_s, cost, seed, std::move(key), std::move(ev)};
    const auto at = std::upper_bound(points_.begin(), points_.end(), n,
                                     [](const Point& a, const Point& b) { return a.time < b.time; });
    points_.insert(at, std::move(n));
  }
  std::vector<Point> points_;
};

class PlanSink {
 public:
  // prune_above: the k best are wanted only below this objective value; front_seed: points of an
  // earlier front this one is merged with (SearchBudget::front_seed). margin > 0: the k best
  // plans within the memory margin (stages' peak within 1 - margin of their capacity) are kept
  // too, below within_prune_above.
  PlanSink(const Scenario& s, size_t k, double prune_above, const std::vector<SearchBudget::FrontPoint>& front_seed = {},
           double margin = 0, double within_prune_above = 1e300)
      : search_(s.search),
        top_(k, prune_above),
        front_on_(s.search.pareto && s.cluster.priced()),
        margin_(margin),
        within_(k, within_prune_above) {
    if (front_on_) {
      for (const SearchBudget::FrontPoint& p : front_seed) front_.seed(p.time_s, p.rate);
    }
  }

  // The time a plan of an entry billing `rate` per hour (offered with `tag`) must beat to be kept
  // by either.
  double threshold_s(double rate, long long tag = -1) const {
    const double top = objective_admits(search_, rate) ? top_.threshold(tag) / objective_weight(search_, rate) : 0;
    if (!front_on_) return top;
    return std::max(top, objective_admits(search_, rate) ? front_.threshold_s(rate) : 0);
  }
  // What a plan within the memory margin must beat to be kept by any of the three (threshold_s
  // without a margin).
  double within_threshold_s(double rate, long long tag = -1) const {
    const double any = threshold_s(rate, tag);
    if (!(margin_ > 0) || !objective_admits(search_, rate)) return any;
    return std::max(any, within_.threshold(tag) / objective_weight(search_, rate));
  }
  bool collects_front() const { return front_on_; }

  void offer(double time_s, double rate, std::string key, PlanEvaluation ev, long long tag = -1) {
    if (!objective_admits(search_, rate)) return;
    if (front_on_ && time_s < front_.threshold_s(rate)) front_.offer(time_s, rate, key, ev);
    const double value = time_s * objective_weight(search_, rate);
    if (margin_ > 0 && within_margin(ev, margin_)) within_.offer(value, key, ev, tag);
    top_.offer(value, std::move(key), std::move(ev), tag);
  }

  size_t size() const { return top_.size(); }
  std::vector<PlanEvaluation> take() { return top_.take(); }
  std::vector<PlanEvaluation> take_front() { return front_.take(); }
  std::vector<PlanEvaluation> take_within() { return within_.take(); }

 private:
  const SearchSpec& search_;
  TopPlans top_;
  bool front_on_;
  ParetoFront front_;
  double margin_;
  TopPlans within_;  // margin_ > 0: the k best within the margin
};

}  // namespace hapmoe
