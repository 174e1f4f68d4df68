// The exact hetero search of one run (tokens per micro-batch B = mesh 0's dp x micro-batch, one
// recompute set, one optimizer offload fraction): a dynamic program over pipeline suffixes built
// from the last stage forward, whose states are (GPU-group classes placed, the front block -- a
// group class's mesh --, the stages placed, the last mesh's tp and dp when the first and last
// stage share the embedding), and whose labels are the layer-split DP's (layer_split_dp.hpp) with
// each stage's recompute option. Every group order and every mesh per group share the states
// they reach, so the work grows with the states, not with the orders x meshes (147^8 x 8! on 512
// GPUs of 8 types).
//
// A stage's cost depends on its position only through the stages after it (micro-batches in
// flight: min(stages from the end, m); the last stage's output layer), so a suffix's cost does
// not depend on what comes before it; a block's front stage is costed once the block in front of
// it (its prev link, with the reshard pieces of both meshes) is known, or as the first stage.
//
// Before the labels, under a cap on every stage's per-micro-batch time (what the plans to beat
// allow), a capacity table bounds how many layers the groups still to place can hold in front of
// a state (each group's best mesh for its position, the lightest layers, the cheapest layer
// times, each stage's least pipeline link, the last stage's output layer; a mesh goes only where
// each of its stages holds a layer): a label whose layers behind and that capacity do not reach
// every layer is dropped. The least cap at which all groups can hold every layer (and every MoE
// layer) bounds the run from below.
#pragma once

#include <deque>
#include <functional>
#include <vector>

#include "hetero/hetero_space.hpp"
#include "search/candidate_cost.hpp"
#include "search/layer_split_dp.hpp"
#include "spec/stable_map.hpp"

namespace hapmoe {

// One run of the hetero space.
struct HeteroRun {
  int tokens = 1;                    // B: sequences of one micro-batch over a mesh's DP ranks
  std::vector<Recompute> recompute;  // each stage's options
  double offload = 0;                // optimizer offload fraction of every mesh
};

// What the runs of one search share (owned by the search, outliving its DPs): the stage-cost
// memos (kept across runs and levels: StageCostMemos::keep_or_reset), the label tables' buffers,
// and per cost model what a run's build derives from it (a run's blocks use the models of many
// other runs: one build of every run redid this per run).
struct HeteroShared {
  StageCostMemos memos;
  std::deque<SplitTable> tables;  // a search's label tables (scratch: their buffers stay)
  // The most cells (tables x (layers + 1)) a search's tables may have; full once one needed
  // more (the search then ends as at its work budget: calls.stopped reports it).
  long long max_table_cells = 1LL << 62;
  bool tables_full = false;
  // A model's per-layer times.
  StableMap<const StageCostModel*, GroupLayerTimes, std::hash<const StageCostModel*>> layer_times;
  // The most of the lightest layers (all; MoE) a stage holds in memory at each distance d from
  // the end, [d] for d = 0..L+1 (0 unused), for a model at a dp, offload fraction and m
  // micro-batches (the bound terms they come from are not kept).
  struct CapKey {
    const StageCostModel* model;
    int dp;
    double offload;
    long long m;
    bool operator==(const CapKey& o) const {
      return model == o.model && dp == o.dp && offload == o.offload && m == o.m;
    }
  };
  struct CapKeyHash {
    size_t operator()(const CapKey& k) const;
  };
  struct CapRows {
    std::vector<int> all, moe;
  };
  StableMap<CapKey, CapRows, CapKeyHash> cap_rows;
  // Per list of a block's option models: [n], the least time of its n cheapest layers, each at
  // its least option (n = 0..L).
  struct ModelsHash {
    size_t operator()(const std::vector<const StageCostModel*>& models) const;
  };
  StableMap<std::vector<const StageCostModel*>, std::vector<double>, ModelsHash> least_sums;
  // Whether group g's shape (its index in the search's shapes[g]) at a micro-batch size and offload
  // fraction passes the mesh rules, and its stage mesh (recompute none).
  struct MeshKey {
    int group, shape, mbs;
    double offload;
    bool operator==(const MeshKey& o) const {
      return group == o.group && shape == o.shape && mbs == o.mbs && offload == o.offload;
    }
  };
  struct MeshKeyHash {
    size_t operator()(const MeshKey& k) const;
  };
  struct CheckedMesh {
    bool ok = false;
    Mesh mesh;
  };
  StableMap<MeshKey, CheckedMesh, MeshKeyHash> meshes;
};

// L layers over stages in proportion to their capacities `caps` (first_plan's split of a
// capacity assignment; pp = caps.size() <= L): each stage at least one, the largest remainders
// rounded up, and, when the caps hold every layer, none above its cap.
std::vector<int> proportional_layers(const std::vector<int>& caps, int L);

// A plan the DP found: groups front to back (one mesh each), per stage layers and option.
struct HeteroDpPlan {
  std::vector<int> order;
  std::vector<HeteroShape> meshes;
  int micro_batch_size = 1;  // mesh 0's
  std::vector<int> layers, option;
  double objective_s = 0;
  double rate = 0;     // USD per hour the plan bills
};

class HeteroDp {
 public:
  struct Calls {
    std::function<double(double rate)> threshold_s;  // what a plan billing `rate` must beat
    // ... when it is within the memory margin (search.memory_margin_fraction: the plans within it
    // are searched in the same pass, each label knowing whether its stages are; >= threshold_s)
    std::function<double(double rate)> within_threshold_s;
    std::function<bool()> stopped;                   // the budget is spent
    std::function<void(const HeteroDpPlan&)> offer;
  };
  // The run's blocks: every group's meshes that pass the rules with the run's micro-batch.
  // shapes[g]: hetero_group_shapes(s, g). distinct: the plans kept per run (top_k). counters
  // count the work (stage costs and label steps) and stop pushes at counters->max_work. shared:
  // what the runs of a search share.
  HeteroDp(const Scenario& s, StageModelCache& cache, const HeteroRun& run,
           const std::vector<std::vector<HeteroShape>>& shapes, int distinct, SplitCounters* counters,
           HeteroShared* shared);
  ~HeteroDp();
  HeteroDp(const HeteroDp&) = delete;
  HeteroDp& operator=(const HeteroDp&) = delete;

  // A lower bound on every plan of the run (1e300: none fits): the layers' least times plus
  // (m - 1) x the least cap at which the groups can hold the layers.
  // cap_hint (0: none): a cap near the least one (another run's: runs differ in little), where
  // the bisection for it starts.
  double lower_bound_s(double cap_hint = 0);
  // The least cap lower_bound_s found (0 before it, or when nothing fits); a DP built again for
  // the same run takes it instead of computing the bound again.
  double least_cap() const;
  void set_least_cap(double cap);
  // A valid plan at once (after lower_bound_s): the capacity table's best assignment of meshes,
  // split in proportion to the capacities and then exactly below that; false when it has none
  // (it breaks a pipeline rule or does not fit) or the budget ended it.
  bool first_plan(const Calls& calls);
  // Offers the run's best plans (up to `distinct` group orders and meshes) below both
  // calls.threshold_s and below_s. beam > 0: each state keeps its `beam` labels of least bound
  // and each stage count its beam x 16 states of least bound (not exact: a quick first plan).
  void search(const Calls& calls, double below_s, int beam = 0);
  // States the last search closed as the pipeline's front (complete plans tried) and states it
  // extended (each a set of groups placed with a front mesh and a stage count).
  long long closed() const;
  long long expanded() const;
  // The work of building the run, in the budget's entry units (its meshes' rules, cost models
  // and bound terms; ~0.4 us each natively).
  long long build_units() const;
  // The bytes its tables hold (capacity tables, least-time table, the last search's states):
  // what keeping it for the next search costs.
  size_t footprint_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> st_;
};

}  // namespace hapmoe
