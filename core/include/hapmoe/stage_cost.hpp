// Cost of one pipeline stage: a contiguous range of layers on one GPU type under a mesh shape.
// Per-layer terms are precomputed once per (mesh, node group) and summed with prefix sums, so
// any layer range costs O(1): the layer-split DP and plan evaluation call the same function.
#pragma once

#include <optional>
#include <vector>

#include "hapmoe/cost_memory.hpp"
#include "hapmoe/hardware.hpp"
#include "hapmoe/model_shape.hpp"
#include "hapmoe/parallel_config.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

// Share of interleaved-schedule p2p left exposed (overlap_p2p_comm is on by default).
inline constexpr double kInterleavedP2pExposedFraction = 0.25;

// Per micro-batch terms of one layer on one GPU of the stage.
struct LayerCost {
  double fwd_s = 0;  // compute incl. elementwise and fixed overheads
  double bwd_s = 0;  // compute, incl. recompute
  double tp_s = 0, cp_s = 0, ep_s = 0;  // exposed communication, forward + backward (+ recompute)
  double fwd_comm_s = 0;                // the forward part of tp_s + cp_s + ep_s
  double dense_params = 0;              // on this GPU (TP-sharded + replicated)
  double expert_params = 0;             // on this GPU (routed experts / (ETP x EP))
  double activation_bytes = 0;          // kept for backward
  unsigned measured_terms = 0, extrapolated_terms = 0;  // MeasuredTerm bits (profile.hpp)
};

// Links of a stage to its neighbours (absent at the ends of the pipeline).
struct StageLinks {
  std::optional<Link> prev, next;
};

struct StageCost {
  double forward_s = 0, backward_s = 0;                 // per micro-batch compute
  double tp_s = 0, cp_s = 0, ep_s = 0, pp_s = 0;        // per micro-batch exposed communication
  double fwd_comm_s = 0;                                // the forward part of tp_s + cp_s + ep_s
  double dp_s = 0, optimizer_s = 0;                     // per iteration (exposed)
  WeightMemory weights;
  double activations_bytes = 0, reserved_bytes = 0, capacity_bytes = 0;
  double in_flight = 0;
  // MeasuredTerm bits (profile.hpp): terms whose per-layer or DP part came from the profile,
  // and those of them taken outside the measured points.
  unsigned measured_terms = 0, extrapolated_terms = 0;

  double per_microbatch_s() const { return forward_s + backward_s + tp_s + cp_s + ep_s + pp_s; }
  double tail_s() const { return dp_s + optimizer_s; }
  double peak_bytes() const { return weights.total() + activations_bytes + reserved_bytes; }
  bool fits() const { return peak_bytes() <= capacity_bytes; }
  // Leaves at least `margin` (search.memory_margin_fraction) of the capacity free.
  bool within_margin(double margin) const { return peak_bytes() <= (1 - margin) * capacity_bytes; }
};

// Memory CUDA graphs keep (GiB) at pipeline size pp.
double cuda_graph_memory_gib(const CudaGraphs& g, int pp);

// Per-layer terms depend on tp, cp, ep, etp, micro-batch, sequence parallelism and recompute
// only; dp, pp and vpp enter at cost() time, so one model serves every DP size and placement.
class StageCostModel {
 public:
  StageCostModel(const Scenario& s, const ModelShape& shape, const Mesh& mesh, int group);

  // Stage `stage` (0-based of mesh.pp) holding layers [first_layer, first_layer + num_layers);
  // `mesh` must share the layer-level fields of the constructor's mesh.
  StageCost cost(int stage, int first_layer, int num_layers, const StageLinks& links,
                 const Mesh& mesh) const;
  const LayerCost& layer(int i) const { return kinds_[kind_of_[i]]; }
  // The distinct layer kinds: layer(i) is kind(kind_of(i)); kind_layers(k) layers are of kind k.
  int num_layers() const { return static_cast<int>(kind_of_.size()); }
  int num_kinds() const { return static_cast<int>(kinds_.size()); }
  const LayerCost& kind(int k) const { return kinds_[k]; }
  int kind_of(int i) const { return kind_of_[i]; }
  const std::vector<unsigned char>& kinds_by_layer() const { return kind_of_; }
  int kind_layers(int k) const { return kind_layers_[k]; }
  // Parameters of all layers on one GPU of a stage (TP-sharded dense, EP x ETP-sharded experts).
  double total_dense_params() const { return sums().back().dense; }
  double total_expert_params() const { return sums().back().expert; }
  // Per-micro-batch time the first stage (input embedding) and the last stage (output layer,
  // loss, MTP) add on top of their layers.
  double first_extra_s() const { return first_extras_.fwd_s + first_extras_.bwd_s + first_extras_.tp_s + first_extras_.ep_s; }
  double last_extra_s() const { return last_extras_.fwd_s + last_extras_.bwd_s + last_extras_.tp_s + last_extras_.ep_s; }
  // A stage's pipeline time per micro-batch over one link (no virtual pipeline): what one link
  // adds to StageCost::pp_s.
  double link_s(const Link& link) const;
  int group() const { return group_; }
  // Memory terms of a stage besides its layers (for lower bounds): parameters and activation
  // bytes the first stage (input embedding, activations per micro-batch in flight) and the last
  // stage (output layer, loss, MTP; activations once) add, the embedding copy the last stage
  // keeps when pp > 1, and the recompute working bytes every stage adds.
  double first_extra_dense_params() const { return first_extras_.dense_params; }
  double first_extra_activation_bytes() const { return first_extras_.activation_bytes; }
  double last_extra_dense_params() const { return last_extras_.dense_params; }
  double last_extra_expert_params() const { return last_extras_.expert_params; }
  double last_extra_activation_bytes() const { return last_extras_.activation_bytes; }
  double embedding_copy_params() const { return embedding_copy_params_; }
  double working_bytes() const { return working_bytes_; }

 private:
  struct Extras {  // output layer + loss (+ MTP) or input embedding, per micro-batch
    double fwd_s = 0, bwd_s = 0, tp_s = 0, ep_s = 0, fwd_comm_s = 0;
    double dense_params = 0, expert_params = 0, activation_bytes = 0;
  };
  Extras first_extras_, last_extras_;
  std::vector<LayerCost> kinds_;         // the distinct layer kinds' terms (at most 4)
  std::vector<unsigned char> kind_of_;   // per layer: its index in kinds_
  std::vector<int> kind_layers_;         // per kind: how many layers
  struct Sums {  // of the LayerCost fields over layers [0, i)
    double fwd = 0, bwd = 0, tp = 0, cp = 0, ep = 0, fwd_comm = 0, dense = 0, expert = 0, act = 0;
  };
  // [i], i = 0..L; built on first use: most models of a search only give the bounds their
  // per-kind times, and never cost a stage. (Not thread-safe: a model serves one search.)
  mutable std::vector<Sums> sums_;
  const std::vector<Sums>& sums() const {
    if (sums_.empty()) build_sums();
    return sums_;
  }
  void build_sums() const;
  double working_bytes_ = 0;  // recompute: what one layer rebuilds before its backward
  double embedding_copy_params_ = 0;  // last stage keeps the embedding when tied or with MTP (pp > 1)
  double p2p_bytes_ = 0;
  const Scenario& s_;
  int group_;
  const GpuProfile* profile_ = nullptr;  // this group's measured points (null = none)
};

}  // namespace hapmoe
