// Costing candidates of the search: shared stage cost models, the layer-split problem of one
// candidate, and lower bounds on a candidate's iteration time that hold for every layer split
// (and, for a group set, every order of its groups), so pruning by them never loses the optimum.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "hapmoe/evaluate.hpp"
#include "search/layer_split_dp.hpp"
#include "hapmoe/model_shape.hpp"
#include "hapmoe/parallel_config.hpp"
#include "spec/stable_map.hpp"
#include "hapmoe/stage_cost.hpp"

namespace hapmoe {

// StageCostModels shared by every candidate with the same layer-level mesh fields (tp, cp, ep,
// etp, micro-batch, recompute, EP overlap) and node group. O(1) look-up by a hashed key. Groups that differ
// only in their node count share models (a stage's cost does not depend on how many nodes its
// group has).
class StageModelCache {
 public:
  explicit StageModelCache(const Scenario& s);
  // A cache for s, a scenario that differs from `models_from`'s only in its cluster: a group
  // whose node group (GPU, node size, scale-out bandwidth) is one of models_from's groups takes
  // its models from models_from (the same models; the Megatron-default baseline's
  // heterogeneity-blind cluster is the main GPU type's groups everywhere).
  StageModelCache(const Scenario& s, StageModelCache& models_from);
  const StageCostModel* get(const Mesh& mesh, int group);
  // Parameters of all layers on one GPU under `mesh` (TP-sharded dense + replicated, routed
  // experts over EP x ETP): what StageCostModel::total_*_params() give, without building one.
  std::pair<double, double> layer_params(const Mesh& mesh);

 private:
  // Every mesh field a StageCostModel depends on (stage_cost.hpp: not dp, pp, vpp, offload).
  struct Key {
    int tp, cp, ep, etp, mbs, recompute, ep_overlap, sequence_parallel, dispatch, graphs, group;
    bool operator==(const Key& o) const {
      return tp == o.tp && cp == o.cp && ep == o.ep && etp == o.etp && mbs == o.mbs && recompute == o.recompute &&
             ep_overlap == o.ep_overlap && sequence_parallel == o.sequence_parallel && dispatch == o.dispatch &&
             graphs == o.graphs && group == o.group;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  const Scenario& s_;
  std::vector<int> model_group_;  // per group: the first group with the same GPU and node shape
  StageModelCache* from_ = nullptr;  // models_from, if any
  std::vector<int> from_group_;      // per group: the group of from_ that has its models (-1: none)
  const ModelShape& shape(int tp);
  std::unordered_map<int, std::unique_ptr<ModelShape>> shapes_;  // by tp
  std::unordered_map<long long, std::pair<double, double>> params_;  // by (tp, ep x etp)
  long long last_params_key_ = -1;                                   // the last one looked up
  std::pair<double, double> last_params_;
  StableMap<Key, StageCostModel, KeyHash> models_;  // by key
};

// The layer-split problem of `mesh` with stage i on node group stage_groups[i].
SplitProblem make_split_problem(const Scenario& s, const Mesh& mesh, const std::vector<int>& stage_groups,
                                StageModelCache& cache);

// Per node group: the cheapest per-micro-batch time of any layer (compute + exposed
// communication, without stage extras) and the sum over layers of that group's layer times.
struct GroupLayerTimes {
  double min_layer_s = 0;
  std::vector<double> layer_s;         // per layer
  std::vector<double> cheapest_sum_s;  // [n]: sum of the n cheapest layer times (n = 0..L)
  // The same over the MoE layers alone ([n], n = 0..number of MoE layers): a stage's MoE layers
  // are a part of its layers, so they bound it too (the dense layers are cheaper and lighter, and
  // only the stage that holds them can use them).
  std::vector<double> cheapest_moe_sum_s;
  // When built by kind: layer_s[l] == kind_s[(*kind_of)[l]] (kind indices mean the same kinds for
  // every model of a scenario: numbered by first layer).
  std::vector<double> kind_s;
  const std::vector<unsigned char>* kind_of = nullptr;
};
GroupLayerTimes group_layer_times(const StageCostModel& model, int num_layers);

// Lower bound on the iteration time of any split and any order of a set of groups holding
// stages[g] stages each (sum = pp): with m micro-batches and v virtual chunks,
//   T >= sum_c / v + (m - 1/v) max_c, where
//   sum_c >= sum over layers of the cheapest group's layer time, and
//   max_c >= the bottleneck: the least C with sum_g stages[g] x floor(C / min_layer_g) >= L, and
//            C >= vpp x min_layer_g for every group (each stage holds at least vpp layers).
// `fractional` drops the floor (cheaper, looser): C >= L / sum_g (stages[g] / min_layer_g).
// max_layers (optional, per group): at most that many layers fit on one stage of the group;
// a set whose stages cannot hold num_layers at all gets 1e300.
// layers_sum_c (optional): cheapest_layers_sum_s(times, num_layers), when the caller has it.
double set_lower_bound_s(const std::vector<const GroupLayerTimes*>& times, const std::vector<int>& stages,
                         int num_layers, long long num_microbatches, int vpp, bool fractional,
                         const std::vector<int>* max_layers = nullptr, const double* layers_sum_c = nullptr);
// Sum over layers of the layer's least time over `times` (the same for any order or repetition
// of the groups).
double cheapest_layers_sum_s(const std::vector<const GroupLayerTimes*>& times, int num_layers);
// Its two steps when every group has the same per-layer kinds (at most 8): least[k] = the least
// time of kind k over `times` (false, nothing set, otherwise); then the sum over the layers of
// their kind's least time, in layer order. The sum depends on `times` only through least[].
constexpr size_t kMaxLayerKinds = 8;
bool cheapest_kind_times(const std::vector<const GroupLayerTimes*>& times, int num_layers, double* least, size_t* kinds);
double kind_times_sum_s(const std::vector<unsigned char>& kind_of, const double* least);



// What the position-aware bounds need of one group's stages under one mesh.
struct GroupBoundTerms {
  const GroupLayerTimes* times = nullptr;
  double room_bytes = 0;        // memory capacity - reserved, per GPU
  // [n]: the n smallest per-layer weights + gradients + optimizer state (sharded), and the n
  // smallest per-layer activation bytes of one micro-batch (n = 0..L): any n layers need at least
  // lightest_bytes[n] + in_flight x lightest_act_bytes[n].
  std::vector<double> lightest_bytes, lightest_act_bytes;
  std::vector<double> lightest_moe_bytes, lightest_moe_act_bytes;  // the same over the MoE layers
  double first_extra_s = 0, last_extra_s = 0;  // embedding / output layer time per micro-batch
  // Memory a stage needs besides its layers, no more than any stage charges: weights, gradients
  // and optimizer state (sharded) of the first stage's / last stage's extra parameters and of the
  // embedding copy the last stage keeps when pp > 1; the first stage's extra activations per
  // micro-batch in flight, the last stage's (once); what every stage adds (recompute working
  // bytes), and the CUDA graph memory at pp = 1 and at pp > 1.
  double first_extra_bytes = 0, last_extra_bytes = 0, embedding_copy_bytes = 0;
  double first_extra_act_bytes = 0, last_extra_act_bytes = 0, every_stage_bytes = 0;
  double graph_bytes_single = 0, graph_bytes_pipelined = 0;
  int max_layers = 0;  // max_layers_in_memory(*this), found once (a search asks for every entry)
};
GroupBoundTerms group_bound_terms(const Scenario& s, const StageCostModel& model, const GroupLayerTimes& times,
                                  const Mesh& mesh);
// An upper bound on the layers one stage of the group can hold in memory at any position (one
// micro-batch in flight, the lightest layers, no stage extras).
int max_layers_in_memory(const GroupBoundTerms& t);

// Lower bounds on the iteration time of pipeline positions 0..pp-1 of one group set, where
// position i may hold a stage of any group in options[i] (indices into `terms`; one group per
// position: a fixed order or prefix; several: every order). Stage i of group g holds n layers
// only if lightest_bytes[n] + in_flight(i) x lightest_act_bytes[n] + the position's extra bytes
// (first / last stage extras, recompute working bytes, CUDA graphs) <= room, and costs at least
// cheapest_sum_s[n] (+ the end extras at positions 0 and pp-1); sum_c >= every layer on the set's
// cheapest group + the ends' least extras; max_c >= the least C at which the positions can hold
// all layers, and all MoE layers (counted alone, by the MoE layers' own times and bytes), each
// position >= vpp of them. Built once per (mesh, group set).
// The head of one run in smallest_of_sorted_runs: the run's n-th value.
struct SortedRunHead {
  double value;
  int run, n;
};
// out[r] (r = 1..limit) = the r-th smallest of the values value(i, n), n = 1..lengths[i], of runs
// each non-decreasing in n (out[0] = 0; 1e300 past their total count, which is returned, up to
// limit). A k-way merge: `limit` steps, never every value. Up to kLinearRuns runs, each step
// scans the heads (a pipeline's few positions: cheaper than a heap); more, a min-heap. heads: scratch.
template <class Value>
int smallest_of_sorted_runs(const std::vector<int>& lengths, Value value, int limit, std::vector<double>* out,
                            std::vector<SortedRunHead>* heads) {
  constexpr size_t kLinearRuns = 16;
  heads->clear();
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] >= 1) heads->push_back({value(static_cast<int>(i), 1), static_cast<int>(i), 1});
  }
  out->assign(static_cast<size_t>(limit) + 1, 1e300);
  double* const o = out->data();
  o[0] = 0;
  int r = 0;
  // Takes a head as the next smallest value; false when its run has no more.
  auto advance = [&](SortedRunHead& head) {
    o[++r] = head.value;
    if (head.n < lengths[head.run]) {
      ++head.n;
      head.value = value(head.run, head.n);
      return true;
    }
    return false;
  };
  if (heads->size() <= kLinearRuns) {
    SortedRunHead* const h = heads->data();
    size_t count = heads->size();
    while (r < limit && count > 0) {
      size_t least = 0;
      double least_value = h[0].value;
      for (size_t k = 1; k < count; ++k) {
        if (h[k].value < least_value) {
          least_value = h[k].value;
          least = k;
        }
      }
      if (!advance(h[least])) h[least] = h[--count];
    }
    return r;
  }
  auto later = [](const SortedRunHead& x, const SortedRunHead& y) { return x.value > y.value; };  // a min-heap
  std::make_heap(heads->begin(), heads->end(), later);
  while (r < limit && !heads->empty()) {
    std::pop_heap(heads->begin(), heads->end(), later);
    if (advance(heads->back())) {
      std::push_heap(heads->begin(), heads->end(), later);
    } else {
      heads->pop_back();
    }
  }
  return r;
}

class PositionBound {
 public:
  using Options = std::vector<std::vector<int>>;
  // blocks (optional, per group): the consecutive stages each group holds, for free_from below.
  PositionBound(const std::vector<const GroupBoundTerms*>& terms, int pp, int num_layers, long long num_microbatches,
                int vpp, std::vector<int> blocks = {});
  // The same for another pipeline of the same terms (their current contents), keeping buffers.
  // A group's rows (below) are kept per (terms, pp, vpp, micro-batches): each GroupBoundTerms the
  // terms point to must keep its address and contents while this object lives (the search's
  // bound-terms cache does).
  void reset(int pp, int num_layers, long long num_microbatches, int vpp, const std::vector<int>& blocks = {});
  // free_from >= 0: positions free_from..pp-1 hold the blocks of the groups in options[free_from]
  // (each group's blocks[g] consecutive positions, each group once, in any order) and every
  // later position has those same options; the capacity is then maximised over the orders of
  // those blocks rather than position by position (exact over orders, so still a lower bound).
  // The bound (1e300 when no assignment fits in memory).
  double lower_bound_s(const Options& options, int free_from = -1) const;
  // bound >= threshold_s, decided with one capacity evaluation.
  bool reaches(const Options& options, double threshold_s, int free_from = -1) const;
  // Most layers positions from..pp-1 can hold in memory together under `options`.
  long long layers_fit_from(const Options& options, int from) const;
  // floor[r] (r = 0..num_layers): a lower bound on the largest per-micro-batch stage time of
  // positions from..pp-1 when they hold r layers together (each position's n-th layer needs at
  // least its group's n cheapest layers and its end extras; 1e300 when they cannot hold r).
  void least_time_for_layers(const Options& options, int from, std::vector<double>* floor) const;

 private:
  bool prepare(const Options& options, double* sum_c, double* floor_c) const;
  bool holds(const Options& options, double c, int free_from) const;
  double objective(double sum_c, double max_c) const;
  const std::vector<const GroupBoundTerms*>& terms_;  // owned by the caller (e.g. its cache)
  int pp_, num_layers_;
  long long m_;
  int vpp_;
  // One group's rows, by position, two to a buffer: ints = layers that fit in memory, then MoE
  // layers that fit (when num_moe_ > 0); reals = end extras, then the least time of vpp layers
  // (1e300: none fit).
  struct Rows {
    std::vector<int> ints;
    std::vector<double> reals;
  };
  struct RowsKey {
    const GroupBoundTerms* terms;
    int pp, vpp;
    long long m;
    bool moe;
    bool operator==(const RowsKey& o) const {
      return terms == o.terms && pp == o.pp && vpp == o.vpp && m == o.m && moe == o.moe;
    }
  };
  struct RowsKeyHash {
    size_t operator()(const RowsKey& k) const;
  };
  Rows make_rows(const GroupBoundTerms& t) const;
  StableMap<RowsKey, Rows, RowsKeyHash> rows_;  // bounded: cleared past kMaxRows
  size_t rows_count_ = 0;
  std::vector<const int*> fit_, fit_moe_;          // [group][position], the groups' Rows
  std::vector<const double*> extra_, floor_;
  int num_moe_ = 0;                                // MoE layers, when the model also has dense ones (else 0)
  double layers_sum_c_ = 0;
  std::vector<int> blocks_;
  mutable std::vector<long long> most_sum_, most_moe_sum_, best_, best_moe_;  // holds() scratch
  mutable std::vector<int> start_;
  mutable std::vector<double> in_time_left_;       // holds() scratch, per group
  mutable std::vector<int> in_time_, in_time_moe_;
  std::vector<const GroupLayerTimes*> times_;  // reset() scratch
  mutable std::vector<int> lengths_;  // least_time_for_layers() scratch
  mutable std::vector<SortedRunHead> heads_;
};

// Weights, gradients and optimizer state of all layers (with distributed-optimizer sharding, the
// most favourable case) against the free memory of the stages: the set is out of memory when
// need - room > 0 (its shortfall in bytes). The need depends on the mesh's sharding and offload
// only, so it is the same for every group set of a mesh shape.
// dense_params / expert_params: all layers' parameters on one GPU (TP / EP x ETP sharded).
double static_memory_need_bytes(const Scenario& s, const Mesh& mesh, double dense_params, double expert_params);
// The free bytes of the set's stages.
double static_memory_room_bytes(const Scenario& s, const std::vector<int>& groups, const std::vector<int>& stages_per_group);

}  // namespace hapmoe

namespace hapmoe {

// Costs a plan whose stages are those of split problem p (same stage cost models).
PlanEvaluation evaluate_split_problem(const Scenario& s, const SplitProblem& p, const PlanSpec& plan);

// Stage groups of a set in cluster order: each group's stages, groups ascending.
std::vector<int> stage_groups_in_cluster_order(const std::vector<int>& groups, const std::vector<int>& stages_per_group);
// The same into *out, keeping its buffer (the baselines call it for every entry they read).
void stage_groups_in_cluster_order(const std::vector<int>& groups, const std::vector<int>& stages_per_group,
                                   std::vector<int>* out);

// The even split: num_layers / stages each, the first num_layers % stages stages one more.
std::vector<int> even_split(int num_layers, int stages);
// The same into *out, keeping its buffer.
void even_split(int num_layers, int stages, std::vector<int>* out);

}  // namespace hapmoe
