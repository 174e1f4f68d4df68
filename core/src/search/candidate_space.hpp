// The search space of "megatron" mode: mesh shapes (tp, cp, dp, ep, etp, micro-batch, vpp,
// recompute) x the GPU groups that hold stages x their order along the pipeline. Each used group
// contributes all the whole stages it can hold (a type is used fully or left idle) as one block of
// consecutive stages. Groups whose effective GPU spec and shape are identical are interchangeable:
// sets and orders are enumerated up to that symmetry (as multisets), never by preset id.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hapmoe/parallel_config.hpp"
#include "evaluate/rules.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

using PruneCounts = std::map<std::string, long long>;  // rule name -> candidates cut

// Rejections counted by rule name, then added to PruneCounts in one go: a string-keyed map
// look-up per rejected candidate was a large part of the enumeration.
class RuleTally {
 public:
  void count(std::string_view rule, long long n = 1) {
    // The rule counted last first: cuts come in runs of one rule (the entry build counts per shape).
    if (last_ >= counts_.size() || counts_[last_].first != rule) {
      auto known = std::find_if(counts_.begin(), counts_.end(), [&](const auto& c) { return c.first == rule; });
      if (known == counts_.end()) known = counts_.insert(counts_.end(), {std::string(rule), 0});
      last_ = static_cast<size_t>(known - counts_.begin());
    }
    counts_[last_].second += n;
  }
  void add_to(PruneCounts* pruned) const {
    for (const auto& [rule, n] : counts_) {
      if (n > 0) (*pruned)[rule] += n;
    }
  }

 private:
  std::vector<std::pair<std::string, long long>> counts_;
  size_t last_ = 0;  // counts_'s entry counted last
};

// A mesh shape without its pipeline size, and how many stages each node group can hold.
struct MeshShape {
  Mesh mesh;                     // pp = 0 until a group set is chosen
  bool ep_overlap_auto = false;  // search.ep_comm_overlap unset: overlap off where pp > 1 = vpp
  // Per cluster group: how many stages it holds (0 = it cannot hold this shape). Shared by the
  // shapes of one (tp, cp, dp), and kept by the CandidateSpace that made the shape (a copy per
  // shape was most of the enumeration's allocations).
  const std::vector<int>& stages_per_group() const { return *stages_; }
  const std::vector<int>* stages_ = nullptr;
  // Shapes that differ only in fields no stage cost model reads (dp, vpp, offload) and in the EP
  // overlap have one model class (0, 1, ...; -1 = none given): a search keeps each group's
  // models by (class, overlap) rather than hashing the mesh's fields again for every shape.
  int model_class = -1;
};

// Groups used by a candidate, ascending (shared by every shape that can use them; a shape's pp
// is the sum of its stages on these groups).
struct GroupSet {
  std::vector<int> groups;
};

class CandidateSpace {
 public:
  // Enumerates the mesh shapes that pass the group rules; rejections are counted into *pruned.
  // At most max_combinations combinations of the search lists are looked at (rules' cuts
  // included) and max_shapes shapes kept: past either the enumeration stops (complete() false).
  CandidateSpace(const Scenario& s, PruneCounts* pruned, long long max_combinations = 1LL << 62,
                 long long max_shapes = 1LL << 62);

  const std::vector<MeshShape>& shapes() const { return shapes_; }
  // Combinations of the search lists looked at, and whether that was all of them.
  long long combinations() const { return combinations_; }
  bool complete() const { return complete_; }
  // How many model classes the shapes have (MeshShape::model_class < this).
  int model_classes() const { return model_classes_; }
  // Class of each cluster group: equal classes <=> identical effective GPU spec and group shape.
  const std::vector<int>& group_class() const { return class_of_; }

  // Group sets of a shape up to identical groups (within a class, the lowest-index groups are
  // used first), each with its pp; sets whose pp the search or the model excludes are counted in
  // *cuts by rule name (a search walks thousands of shapes: the caller adds them to its
  // PruneCounts once). Stops early (returns false) when `fn` returns false, or once *sets_left
  // (when given: the sets it may still walk, cut ones too; counted down) reaches 0.
  template <class F>
  bool for_each_group_set(const MeshShape& shape, F fn, RuleTally* cuts, long long* sets_left = nullptr) const;

  // How many group sets for_each_group_set walks for a shape (cut ones too; saturates at 2^62).
  long long group_set_count(const MeshShape& shape) const;

  // The pipeline size of a shape on a set: the sum of the set's stages.
  static int pp_of(const MeshShape& shape, const GroupSet& set);
  // The mesh of a shape and a set: pp is pp_of.
  Mesh mesh_for(const MeshShape& shape, const GroupSet& set) const;
  // The complete mesh of a shape and a set (pp filled in), or a violated rule's name (a literal).
  bool complete_mesh(const MeshShape& shape, const GroupSet& set, Mesh* out, std::string_view* rule) const;

  // Stage groups (one per pipeline stage) of every distinct order of the set's groups, up to
  // identical groups, built block by block: keep(prefix stage groups, groups still to place)
  // returning false skips every order that starts with that prefix. Stops early when `fn`
  // returns false.
  // leave(prefix) is called after the orders under a kept prefix are done.
  template <class Keep, class Leave, class F>
  bool for_each_order(const MeshShape& shape, const GroupSet& set, Keep keep, Leave leave, F fn) const;

 private:
  // One set of the group-set walk with its verdict.
  struct SetItem {
    int verdict;     // 0 = passes, -1 = its pp is out of range, k > 0 = rule set_rule_names_[k] cuts it
    uint32_t begin;  // its groups, ascending: walk_groups_[begin, begin + size)
    uint32_t size;
  };
  static constexpr size_t kSetChunk = size_t{1} << 14;  // items walked at a time (bounds the memory)
  static constexpr long long kReservedShapes = 8192;     // shapes reserved before the enumeration, at most

  bool next_set(const MeshShape& shape, std::vector<int>& counts) const;
  // Walks on from walk_counts_ (from_start: from the first set), replacing walk_items_ with up to
  // `items` (<= kSetChunk) items; true when the walk has ended.
  bool walk_sets(const MeshShape& shape, bool from_start, size_t items = kSetChunk) const;
  // check_group_set_rules' verdict for sorted groups as an index into set_rule_names_ (0 =
  // passes), kept by group bit mask (the same sets recur in every shape).
  int group_set_rule(const std::vector<int>& groups) const;
  mutable std::unordered_map<uint64_t, int> set_rules_;  // 17-64 groups
  mutable std::vector<int> set_rule_flat_;              // < 17 groups, by mask; -1 unknown
  mutable std::vector<std::string> set_rule_names_{std::string()};  // [0] = "" (passes)
  // complete_mesh's verdicts, direct mapped by every field its rules read (pp, vpp, the
  // micro-batches through micro-batch size x dp, the EP overlap; whether the search decides the
  // overlap is the same for every shape of a space): the many shapes that differ in other fields
  // share them (a search completes tens of thousands of meshes).
  struct PipelineVerdict {
    int pp = 0, vpp = 0;
    long long per_step = 0;  // micro-batch size x dp
    bool overlap = false;
    bool known = false;
    bool overlap_after = false;  // the complete mesh's EP overlap
    std::string_view rule;       // the first pipeline rule violated (a literal), empty if none
    bool same_key(const PipelineVerdict& o) const {
      return pp == o.pp && vpp == o.vpp && per_step == o.per_step && overlap == o.overlap;
    }
  };
  static constexpr size_t kPipelineVerdicts = 1024;
  mutable std::vector<PipelineVerdict> pipeline_verdicts_;
  // for_each_group_set's state, kept from one shape to the next (not reentrant). The sets and
  // their verdicts depend on a shape only through stages_per_group, which the shapes of one
  // (tp, cp, dp) share: a walk that ended within one chunk is replayed while that is the same.
  mutable std::vector<int> walk_counts_;  // the odometer: groups taken per class
  mutable std::vector<SetItem> walk_items_;
  mutable std::vector<int> walk_groups_;
  mutable std::vector<int> walk_key_;  // stages_per_group of walk_items_, when walk_whole_
  mutable bool walk_whole_ = false;
  mutable std::vector<long long> walk_rule_cuts_;  // by verdict
  mutable GroupSet walk_set_;
  const Scenario& s_;
  long long combinations_ = 0;
  bool complete_ = true;
  int model_classes_ = 0;
  std::vector<MeshShape> shapes_;
  std::vector<std::unique_ptr<const std::vector<int>>> stage_counts_;  // the shapes' stages_per_group
  std::vector<int> class_of_;
  std::vector<std::vector<int>> class_groups_;  // groups of each class, ascending
};

// Group sets are counted per class: counts[c] groups of class c (its lowest-index eligible ones).
template <class F>
bool CandidateSpace::for_each_group_set(const MeshShape& shape, F fn, RuleTally* cuts, long long* sets_left) const {
  // No more sets walked than the budget allows (a short budget per shape walked whole chunks),
  // and one more: a walk that ends within its budget is then seen to end in its first chunk, and
  // kept for replay (asked for exactly its sets, as the build does, it never was: the walk was
  // a quarter of the paper's Mixtral-L 32-2 build).
  auto chunk = [&] {
    return sets_left ? std::min<size_t>(kSetChunk, static_cast<size_t>(std::max(0LL, *sets_left)) + 1) : kSetChunk;
  };
  // Replaying a kept walk instead of walking again was a fifth of the 8-type search.
  bool ended = walk_whole_ && walk_key_ == shape.stages_per_group();
  if (!ended) {
    walk_counts_.assign(class_groups_.size(), 0);
    ended = walk_sets(shape, true, chunk());
  }
  // Cuts are counted here and added to *cuts once (not a look-up by name per set).
  long long pp_range = 0;
  walk_rule_cuts_.assign(set_rule_names_.size(), 0);
  auto count_cuts = [&]() {
    if (pp_range > 0) cuts->count("pp_range", pp_range);
    for (size_t k = 1; k < walk_rule_cuts_.size(); ++k) {
      if (walk_rule_cuts_[k] > 0) cuts->count(set_rule_names_[k], walk_rule_cuts_[k]);
    }
  };
  GroupSet& set = walk_set_;  // refilled for each set (fn sees it until it returns)
  for (;;) {
    for (const SetItem& item : walk_items_) {
      if (sets_left && (*sets_left)-- <= 0) {  // the walk budget is spent
        *sets_left = 0;
        count_cuts();
        return false;
      }
      if (item.verdict < 0) {
        ++pp_range;
      } else if (item.verdict > 0) {  // vendor, common FP8 recipe
        ++walk_rule_cuts_[item.verdict];
      } else {
        set.groups.assign(walk_groups_.begin() + item.begin, walk_groups_.begin() + item.begin + item.size);
        if (!fn(set)) {
          count_cuts();
          return false;
        }
      }
    }
    if (ended) break;
    ended = walk_sets(shape, false, chunk());
    walk_rule_cuts_.resize(set_rule_names_.size(), 0);
  }
  count_cuts();
  return true;
}

template <class Keep, class Leave, class F>
bool CandidateSpace::for_each_order(const MeshShape& shape, const GroupSet& set, Keep keep, Leave leave, F fn) const {
  // Depth-first over distinct orders of the set's classes, in lexicographic class order; the k-th
  // occurrence of a class takes the set's k-th group of that class (its lowest-index groups).
  std::vector<int> left(class_groups_.size(), 0), taken(class_groups_.size(), 0), remaining;
  for (int g : set.groups) ++left[class_of_[g]];
  std::vector<int> stage_groups;
  bool go_on = true;
  std::function<void(size_t)> place = [&](size_t placed) {
    if (placed == set.groups.size()) {
      go_on = fn(stage_groups);
      return;
    }
    for (size_t c = 0; c < left.size() && go_on; ++c) {
      if (left[c] == 0) continue;
      const int g = class_groups_[c][taken[c]];
      const size_t size = stage_groups.size();
      stage_groups.insert(stage_groups.end(), shape.stages_per_group()[g], g);
      --left[c];
      ++taken[c];
      remaining.clear();
      for (size_t r = 0; r < left.size(); ++r) {
        for (int k = 0; k < left[r]; ++k) remaining.push_back(class_groups_[r][taken[r] + k]);
      }
      if (placed + 1 == set.groups.size()) {
        place(placed + 1);
      } else if (keep(stage_groups, remaining)) {
        place(placed + 1);
        leave(stage_groups);
      }
      ++left[c];
      --taken[c];
      stage_groups.resize(size);
    }
  };
  place(0);
  return go_on;
}

}  // namespace hapmoe
