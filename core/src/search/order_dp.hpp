// Every stage order of one (mesh shape, group set) entry at once: a dynamic program over (the
// groups placed so far as counts per class of identical groups, the class placed last, and the
// class before it when the last block is one stage), as Held and Karp's over subsets, whose
// states hold the layer-split DP's label tables (layer_split_dp.hpp). Orders that reach the same
// groups with the same last block share every later push, so the work grows with the subsets
// (2^8 x 8 for 8 groups), not with the orders (8! = 40,320).
//
// A block's last stage is pushed once the block after it is known (its next link); the prefix
// before it is the same for any later block, so the state is the table before that stage.
//
// A label is dropped when another, of any order, is as good for every completion: the result is
// the entry's best plan (its order and split), which is what the search keeps of an entry.
//
// Before the labels, a backward pass over the same states finds, for a cap on the per-micro-batch
// time of every stage (what the incumbent allows), the fewest layers each state's stages must
// hold for the rest to fit in memory and under the cap (a lower bound: every stage costs at most
// what a larger range of layers costs, so a range that fits contains only ranges that fit). The
// forward pass then pushes no label below it, and an entry whose first state needs more than
// nothing has no plan under the cap.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "search/layer_split_dp.hpp"

namespace hapmoe {

class OrderDp {
 public:
  // One class of identical groups in the entry's set: its groups in pipeline use order (the
  // lowest index first) and the stages each holds.
  struct Class {
    std::vector<int> groups;
    int stages = 1;
  };
  // Pushes stage `stage` (on `group`, with these links) from `from` (table id from_id) into *to
  // with the entry's bounds; later[p] for p > stage: the groups positions p may hold (the rest of
  // its block, then every group still to place); after it, at least min_reach layers are placed.
  using PushFn = std::function<bool(int stage, int group, const StageLinks& links,
                                    const std::vector<std::vector<int>>& later, int min_reach,
                                    const SplitTable& from, int from_id, SplitTable* to)>;
  // Per-micro-batch time of that stage over layers [j, j + n), or infinity when it does not fit.
  using TimeFn = std::function<double(int stage, int group, const StageLinks& links, int j, int n)>;
  // The link from the `la`-th stage of group a to the `lb`-th stage of group b.
  using LinkFn = std::function<Link(int a, long long la, int b, long long lb)>;
  // The entry's best plan: stage groups, layers per stage, objective.
  using OfferFn = std::function<void(const std::vector<int>& stage_groups, const std::vector<int>& layers, double objective_s)>;
  struct Calls {
    PushFn push;
    TimeFn time;
    LinkFn link;
    std::function<bool()> stopped;       // the work budget is spent: stop
    std::function<double()> incumbent_s;  // what the plan must beat
    // What a plan within the memory margin must beat (at least incumbent_s; unset: the same).
    std::function<double()> within_incumbent_s;
    OfferFn offer;
  };

  // Runs the DP over the classes' orders; `pipeline` must be reset for this entry's mesh (pp =
  // every class's groups x stages). The caller keeps node_count(classes) small enough to hold a
  // table per node (the search: kMaxMergedCells label cells). cap_s: no plan below the incumbent has a stage slower than
  // this. Offers the best plan when it beats the incumbent, and the best within the memory margin
  // (SplitLabel::within; the pipeline's margin) when that is another and beats its own. beam > 0: after each block, each state
  // keeps only its `beam` labels of least bound (not exact: a quick first guess). False, offering
  // nothing, once stopped() is true after a push (the work budget).
  bool run(const std::vector<Class>& classes, const SplitPipeline& pipeline, const Calls& calls, double cap_s,
           int beam = 0);

  // Nodes (sets x last classes) a run of these classes makes at most: the caller walks the
  // orders one by one instead when it is large (or the orders few).
  static long long node_count(const std::vector<Class>& classes);
  // Whether the last run's backward pass found that no plan fits under its cap.
  bool last_infeasible() const { return infeasible_; }

 private:
  struct Node {
    std::vector<int> placed;   // groups placed per class
    int prev = -1, last = -1;  // classes of the last two blocks (prev -1: none or not needed)
    int table = -1;            // labels before the last block's last stage
  };
  using Level = std::vector<Node>;
  // One stage push of the DP: position, group, links.
  struct Step {
    int stage, group;
    StageLinks links;
  };
  long long key_of(const std::vector<int>& placed, int prev, int last) const;
  // The node of (placed, prev, last) in `level` (index: its key -> position), made when new with
  // `table` (or a new empty one when table < 0).
  Node& node(Level& level, std::unordered_map<long long, int>& index, const std::vector<int>& placed, int prev,
             int last, int table = -1);
  int new_table(int depth);
  void trim(int table, int beam);
  int order_of(int parent, int cls);  // interned stage order: parent order, then one block of cls
  void offer_best(const SplitTable& final_table);
  // The plan of final label `best` (of `labels`, the pipeline's last table's) offered.
  void offer_label(const std::vector<SplitLabel>& labels, int best, double objective_s);

  // The steps of the DP: a class's first block but its last stage; a node's pending stage
  // before the block of class c2; the first stage of a block (after class `after`); and the
  // block's inner stage l.
  int depth_of(const std::vector<int>& placed) const;
  int group_of(const std::vector<int>& placed, int c, int back) const;
  std::optional<Link> pending_prev(const std::vector<int>& placed, int prev, int last) const;
  Step pending_step(const std::vector<int>& placed, int prev, int last, int c2) const;
  Step first_step(const std::vector<int>& placed, int after, int c2) const;
  Step inner_step(const std::vector<int>& placed, int c2, int l) const;
  Step start_step(int c, int l) const;

  // The backward pass (see above): the fewest layers before a node's pending stage, before a
  // step reaching `target`, before the first stage of a block of c2 placed after `after`.
  int need_node(const std::vector<int>& placed, int prev, int last);
  int need_before(const Step& step, int target) const;
  int need_block(const std::vector<int>& placed, int after, int c2);  // before its first stage
  int need_inner(const std::vector<int>& placed, int c2, int from_l);  // before inner stage from_l

  const std::vector<Class>* classes_ = nullptr;
  const SplitPipeline* pipeline_ = nullptr;
  const Calls* calls_ = nullptr;
  int total_ = 0;
  double cap_s_ = 0;
  int min_n_ = 1;
  bool infeasible_ = false;
  // need_node's results by key_of (dense: a run's keys are below node_count), and the run that
  // computed each (known when it is need_run_'s); per recursion depth, its next node's counts.
  std::vector<int> need_;
  std::vector<uint32_t> need_gen_;
  uint32_t need_run_ = 0;
  std::vector<std::vector<int>> need_scratch_;
  std::vector<std::vector<int>> later_;       // run()'s scratch: the PushFn's `later`
  std::vector<int> rest_;

  std::vector<SplitTable> tables_;  // the arena, kept across runs (tables_[0..used_) in use)
  size_t used_ = 0;
  std::vector<int> table_depth_;             // stages pushed before each table's labels
  std::vector<std::pair<int, int>> orders_;  // per order id: (parent id, class); 0 = the empty order
  std::unordered_map<long long, int> order_ids_;
};

}  // namespace hapmoe
