// The k best plans found so far, best first: the one top-k list of both engines (the upstream
// search and the hetero search). Lower objective first; equal objectives by plan key, so the
// result does not depend on the order in which plans were offered.
//  - A plan whose key is kept already is dropped (one plan reached twice, e.g. by the even-split
//    seed and the layer-split DP).
//  - A tag >= 0 names where a plan came from (the hetero search's entry and recompute set): a
//    later plan with a kept plan's tag replaces it when better, so one source never takes two
//    places.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "hapmoe/evaluate.hpp"

namespace hapmoe {

// A plan's identity for the top-k list, the same for both engines: every field that makes two
// plans different runs (mesh, VPP, micro-batch, EP overlap, offload, dispatcher, graphs, and per
// stage its group, layers, recompute and own mesh).
std::string plan_key(const PlanSpec& p);

class TopPlans {
 public:
  // prune_above: plans at or above it are not wanted (a previous search's k-th best).
  explicit TopPlans(size_t k, double prune_above = 1e300) : k_(k), prune_above_(prune_above) {}

  // What a plan must beat to be kept.
  double threshold() const { return best_.size() < k_ ? prune_above_ : best_.back().objective; }
  // What a plan from `tag` must beat to be kept: the kept plan of that tag, if any.
  double threshold(long long tag) const {
    if (tag >= 0) {
      for (const Ranked& b : best_) {
        if (b.tag == tag) return b.objective;
      }
    }
    return threshold();
  }

  void offer(double objective, std::string key, PlanEvaluation ev, long long tag = -1) {
    for (size_t i = 0; i < best_.size(); ++i) {
      if (best_[i].key == key) return;
      if (tag >= 0 && best_[i].tag == tag) {
        if (best_[i].objective <= objective) return;
        best_.erase(best_.begin() + static_cast<long>(i));
        break;
      }
    }
    Ranked r{objective, tag, std::move(key), std::move(ev)};
    best_.insert(std::upper_bound(best_.begin(), best_.end(), r, better), std::move(r));
    if (best_.size() > k_) best_.pop_back();
  }

  size_t size() const { return best_.size(); }

  // The plans, best first; the list is empty afterwards.
  std::vector<PlanEvaluation> take() {
    std::vector<PlanEvaluation> out;
    out.reserve(best_.size());
    for (Ranked& b : best_) out.push_back(std::move(b.ev));
    best_.clear();
    return out;
  }

 private:
  struct Ranked {
    double objective;
    long long tag;
    std::string key;
    PlanEvaluation ev;
  };
  static bool better(const Ranked& a, const Ranked& b) {
    return a.objective < b.objective || (a.objective == b.objective && a.key < b.key);
  }
  size_t k_;
  double prune_above_;
  std::vector<Ranked> best_;
};

}  // namespace hapmoe
