// Exact layer split for one mesh and one stage placement: a dynamic program over
// (stage, layers assigned) whose labels (sum c, max c, max tail) are kept Pareto-minimal, so it
// returns the exact minimum of iteration_time_s() -- the objective the plan reports -- subject
// to every stage fitting in memory and holding at least vpp layers. Bounds against an incumbent
// prune without losing the optimum.
//
// The DP runs stage by stage (IncrementalSplit), so the search can share the work of a common
// prefix of stages between every stage order that starts with it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "hapmoe/schedule.hpp"
#include "hapmoe/stage_cost.hpp"

namespace hapmoe {

struct SplitCounters {
  long long stage_costs = 0;      // stage costs the splits used (one reused from a StageCostMemo counts too)
  // Label transitions and dominance comparisons: with many layers and labels they, not the stage
  // costs, are the DPs' time (a 1024-layer push: ~10^8 of them), so the work budget counts them.
  long long label_steps = 0;
  // IncrementalSplit::push stops (returns false, sets `stopped`) once work() reaches this.
  long long max_work = 1LL << 62;
  bool stopped = false;
  // The work budget's measure: stage costs, with kLabelStepsPerStageCost label steps as one.
  static constexpr long long kLabelStepsPerStageCost = 16;
  long long work() const { return stage_costs + label_steps / kLabelStepsPerStageCost; }
  long long memory = 0;           // transitions cut because the stage does not fit
  long long lower_bound = 0;      // labels / transitions cut by the bound
  long long dominated = 0;        // labels dropped by Pareto dominance
  double min_shortfall_bytes = -1;  // smallest memory overflow seen (-1 = none)
};

struct SplitResult {
  std::vector<int> layers;  // per stage
  double objective_s = 0;
};

// The costs of layer ranges [j, j + n) already computed for one stage: one position, model and
// pair of links in one mesh. cost() depends on nothing else, so a cost read from here is the value
// cost() returned. IncrementalSplit::push reads and fills one; a walk over stage orders pushes the
// same stage many times (DeepSeek-V3 on 512 GPUs of 8 types: 60,608 pushes, 8,150 distinct).
class StageCostMemo {
 public:
  struct Item {
    double a = 0, b = 0;  // usable: per-micro-batch time and tail; else a: shortfall bytes (NaN: none)
    uint32_t stamp = 0;   // known when equal to the memo's stamp
    bool usable = false;
    bool within = false;  // usable, and its peak within the memory margin set() was given
  };
  // Forgets every cost, keeping the buffers.
  void clear();
  // Row j with room for n = 0..max_n.
  Item* row(int j, int max_n);
  bool known(const Item& item) const { return item.stamp == stamp_; }
  // margin: search.memory_margin_fraction, for Item::within (0: within = usable).
  void set(Item* item, const StageCost& c, double margin = 0) const;

 private:
  std::vector<std::vector<Item>> rows_;  // [j][n]
  uint32_t stamp_ = 1;
};

// Whether two stages' links are the same (bit for bit: a stage's cost depends on nothing else of
// them).
bool same_links(const StageLinks& a, const StageLinks& b);

// StageCostMemos by (position, model, links, and the mesh fields the model leaves out: dp and the
// offload fraction; one mesh's memos may leave them 0). Their number is bounded by their memory
// (past it, get() returns nullptr: push() then uses a memo of its own). A memo stays in place
// until the next reset().
class StageCostMemos {
 public:
  // A new mesh of num_layers layers: forgets every memo.
  void reset(int num_layers);
  // Keeps the memos (a cost does not depend on the search that reads it) unless num_layers
  // differs or fewer than `wanted` more memos fit: then reset(). Memos got before it must not be
  // used after it.
  void keep_or_reset(int num_layers, size_t wanted);
  StageCostMemo* get(int stage, const StageCostModel* model, const StageLinks& links, int dp = 0,
                     double offload = 0);

 private:
  struct Key {
    int stage;
    const StageCostModel* model;
    StageLinks links;
    int dp;
    double offload;
    uint64_t hash;
  };
  static uint64_t hash_of(int stage, const StageCostModel* model, const StageLinks& links, int dp, double offload);
  int num_layers_ = -1;
  void place(size_t id);  // into the index (room known)
  std::vector<Key> keys_;            // of the memos in use, pool_[0..keys_.size())
  std::deque<StageCostMemo> pool_;   // kept across meshes with their buffers (and in place)
  size_t max_memos_ = 0;
  // The memos by key hash (collisions compared in full): a walk over many orders, or the merged
  // DP, holds hundreds of memos. Open addressing (linear probing, at most half full); a slot is
  // in use when its generation is the current one, so reset() clears nothing (an upstream search
  // resets it once per entry).
  std::vector<uint32_t> slot_id_, slot_gen_;
  uint32_t gen_ = 1;
};

// A label of the layer-split DPs: (sum c, max c, max tail) of a partial split over its stages,
// and where it came from.
struct SplitLabel {
  double sum_c, max_c, max_tail;
  int prev_layers;  // j of its predecessor, in the table it was pushed from
  int prev_label;   // the predecessor's index there
  int prev_table;   // that table's id (the caller's; IncrementalSplit: its depth)
  int prefix;       // the stage order it belongs to (order_dp.hpp; unused within one order)
  int option = 0;   // the stage's option (hetero_dp.hpp: its recompute; 0 elsewhere)
  // Every stage's peak within the memory margin (both engines search the plans within it with
  // the others; true without a margin).
  bool within = true;
};

// Whether label a is at least as good as b for every completion (the objective is
// sum_c x inv_v + coef x max c + max tail; a completion adds to the sum and raises each maximum):
// (a.sum - b.sum) inv_v + coef (a.max - b.max)+ + (a.tail - b.tail)+ <= 0, which holds when a is
// at most b in every term and is transitive; and a label above the memory margin never beats one
// within it (the plans within it are ranked first).
struct LabelDominance {
  double inv_v = 1, coef = 0;
  bool operator()(const SplitLabel& a, const SplitLabel& b) const {
    if (b.within && !a.within) return false;
    if (a.sum_c <= b.sum_c && a.max_c <= b.max_c && a.max_tail <= b.max_tail) return true;
    if (a.sum_c >= b.sum_c) return false;
    return (a.sum_c - b.sum_c) * inv_v + coef * std::max(0.0, a.max_c - b.max_c) +
               std::max(0.0, a.max_tail - b.max_tail) <= 0;
  }
};

// Adds `next` to `there` unless a label there dominates it, dropping those it dominates; false
// when it is dropped. (The labels of a state are an antichain.)
bool insert_label(std::vector<SplitLabel>& there, const SplitLabel& next, const LabelDominance& dominates,
                  SplitCounters* counters);
// The same keeping the k best prefixes (plans of distinct stage orders): `next` is dropped when a
// label of its own prefix dominates it, or labels of `distinct` other prefixes each do (its plans
// are then beaten by `distinct` plans of other orders); it drops the labels of its own prefix it
// dominates.
bool insert_label_distinct(std::vector<SplitLabel>& there, const SplitLabel& next, int distinct,
                           const LabelDominance& dominates, SplitCounters* counters);
// Labels per layer count j = 0..num_layers (layers on the stages pushed so far).
using SplitTable = std::vector<std::vector<SplitLabel>>;

// What every stage push of one pipeline shares (its stages, layers, micro-batches and the
// bound's per-layer minima), and the push itself: from a table of labels after stage i to the
// table after stage i + 1.
class SplitPipeline {
 public:
  // See IncrementalSplit::reset.
  void reset(const Mesh& mesh, int num_layers, long long num_microbatches, const std::vector<double>& layer_min_s,
             double last_extra_min_s, double margin = 0);
  // Adds stage i on `model` with its links to every label of `from` (table id from_id) and puts
  // the results into *to, which keeps what it holds (several pushes, of other stage orders too,
  // may merge into one table). A label is kept unless another is at least as good for every
  // completion (layer_split_dp.cpp: Dominance), whatever their orders: the best plan of the
  // pipelines pushed into a table is kept. The other arguments are IncrementalSplit::push's.
  // True when a label was added.
  bool push(int i, const SplitTable& from, int from_id, SplitTable* to, const StageCostModel& model,
            const StageLinks& links, double incumbent_s, double within_incumbent_s, SplitCounters* counters,
            long long layers_after_max, const std::vector<double>* rest_floor, StageCostMemo* memo) const;
  // The objective of a complete label.
  double objective(const SplitLabel& lab) const { return objective(lab.sum_c, lab.max_c, lab.max_tail); }
  // Lower bound on the objective of any completion of a label after `done` stages over j layers.
  double bound(const SplitLabel& lab, int done, int j) const;
  int pp() const { return pp_; }
  int num_layers() const { return L_; }
  int min_layers() const { return min_n_; }  // per stage (vpp)
  double margin() const { return margin_; }  // what StageCostMemo::set is given for its items
  // The largest per-micro-batch stage time a plan below incumbent_s can have (infinity when the
  // incumbent is): T >= sum_c / v + (m - 1/v) max c, with sum_c at least every layer's least time.
  double cap_s(double incumbent_s) const;
  // An empty table for this pipeline (num_layers + 1 states), keeping t's buffers.
  void clear(SplitTable* t) const;

 private:
  double objective(double sum_c, double max_c, double tail) const {
    return (v_pow2_ ? sum_c * inv_v_ : sum_c / v_) + max_coef_ * max_c + tail;
  }
  Mesh mesh_;
  int pp_ = 0, L_ = 0, min_n_ = 1;
  double last_extra_ = 0;          // least last-stage extra
  double margin_ = 0;              // search.memory_margin_fraction (SplitLabel::within)
  std::vector<double> suffix_min_;  // [j]: sum of layer_min over layers j..L-1
  // iteration_time_s(sum_c, max_c, tail, m, vpp) with its constants kept: (m - 1/v) is the same
  // double every time, and for v a power of two sum_c / v == sum_c * (1 / v) exactly (both are
  // the correctly rounded sum_c / v).
  double v_ = 1, inv_v_ = 1, max_coef_ = 0;
  bool v_pow2_ = true;
  mutable StageCostMemo own_memo_;  // the stage's costs when push() is given no memo
};

// The DP over the stages of one pipeline, pushed one stage at a time in pipeline order (and
// popped to go back). Not copyable; reuse one per search to keep its buffers.
class IncrementalSplit {
 public:
  IncrementalSplit();
  ~IncrementalSplit();
  IncrementalSplit(const IncrementalSplit&) = delete;
  IncrementalSplit& operator=(const IncrementalSplit&) = delete;

  // Starts a pipeline of mesh.pp stages over num_layers layers. layer_min_s[l]: a lower bound on
  // layer l's per-micro-batch time on any stage still to come (the DP's bound uses its sums).
  // last_extra_min_s: a lower bound on the extra per-micro-batch time of the last stage (output
  // layer and loss), counted while the last stage is still to come. margin > 0: the labels know
  // whether every stage's peak is within the memory margin (SplitLabel::within), and the plans
  // within it are searched for in the same pass (push's within_incumbent_s, best()'s within).
  void reset(const Mesh& mesh, int num_layers, long long num_microbatches, const std::vector<double>& layer_min_s,
             double last_extra_min_s = 0, double margin = 0);
  // Adds stage depth() on `model` with its links. layers_after_max: an upper bound on the layers
  // the stages after it can hold in memory together (so this stage takes at least the rest).
  // Returns false when no label survives (every split through this prefix is infeasible or
  // cannot beat incumbent_s).
  // rest_floor (optional, [j] for j = 0..num_layers): a lower bound on the largest
  // per-micro-batch time of the stages after this one when this one ends at layer j.
  // memo (optional): this stage's StageCostMemo (same position, model and links, this mesh,
  // filled with the same margin). A label within the memory margin must beat within_incumbent_s
  // (at least incumbent_s: the k-th plan within the margin), one above it incumbent_s.
  bool push(const StageCostModel& model, const StageLinks& links, double incumbent_s, double within_incumbent_s,
            SplitCounters* counters, long long layers_after_max = 1LL << 40,
            const std::vector<double>* rest_floor = nullptr, StageCostMemo* memo = nullptr);
  void pop();
  int depth() const;
  // Best complete split (depth() == pp), or nullopt when none beats incumbent_s; within: the best
  // of those within the memory margin.
  std::optional<SplitResult> best(double incumbent_s, bool within = false) const;

 private:
  SplitPipeline pipeline_;
  std::vector<SplitTable> tables_;  // [depth]
  int depth_ = 0;
};

struct SplitProblem {
  std::vector<const StageCostModel*> stage_models;  // per stage (its group's model)
  std::vector<StageLinks> links;                    // per stage
  Mesh mesh;
  int num_layers = 0;
  long long num_microbatches = 1;
  int vpp = 1;
  double incumbent_s = 1e300;  // prune anything that cannot beat this
};

// Best split, or nullopt when no split fits (or none beats the incumbent).
std::optional<SplitResult> best_layer_split(const SplitProblem& p, SplitCounters* counters);

// Per-layer lower bound for the DP: the cheapest per-micro-batch time of each layer over models.
std::vector<double> cheapest_layer_times(const std::vector<const StageCostModel*>& models, int num_layers);
// The least last-stage extra (output layer, loss, MTP) over models.
double cheapest_last_extra_s(const std::vector<const StageCostModel*>& models);

// Objective of a given split with the same stage costs (for fixed splits and brute force).
// nullopt if a stage does not fit.
std::optional<double> split_objective(const SplitProblem& p, const std::vector<int>& layers,
                                      SplitCounters* counters);

// A stage cost a split may use: it fits in memory and its times are finite numbers.
bool usable_stage_cost(const StageCost& c);
// Records c's memory overflow in k->min_shortfall_bytes when it is the smallest seen.
void note_stage_shortfall(SplitCounters* k, const StageCost& c);

// Objective of a given split whose stage i, over layers [first, first + layers[i]), costs
// cost_of(i, first, layers[i]) (called in stage order); nullopt if a stage is not usable
// (counted in k->memory), or once the stages costed so far already give more than `above`: the
// objective only grows with each stage (sums and maxima of non-negative terms), so such a split
// ends above it too.
template <class CostOf>
std::optional<double> split_objective_by(const std::vector<int>& layers, long long num_microbatches, int vpp,
                                         SplitCounters* k, CostOf&& cost_of,
                                         double above = std::numeric_limits<double>::infinity()) {
  double sum = 0, mx = 0, tail = 0;
  int first = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const StageCost c = cost_of(static_cast<int>(i), first, layers[i]);
    ++k->stage_costs;
    if (!usable_stage_cost(c)) {
      ++k->memory;
      note_stage_shortfall(k, c);
      return std::nullopt;
    }
    sum += c.per_microbatch_s();
    mx = std::max(mx, c.per_microbatch_s());
    tail = std::max(tail, c.tail_s());
    first += layers[i];
    if (above < std::numeric_limits<double>::infinity() &&
        iteration_time_s(sum, mx, tail, num_microbatches, vpp) > above) {
      return std::nullopt;
    }
  }
  return iteration_time_s(sum, mx, tail, num_microbatches, vpp);
}

}  // namespace hapmoe
