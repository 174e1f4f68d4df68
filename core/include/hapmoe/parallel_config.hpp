// The parallel configuration of a plan ("mesh"): TP, CP, PP, DP, EP, ETP, VPP, micro-batch size,
// sequence parallelism and recompute, the micro-batch count, and the conversions between a mesh
// and a PlanSpec. This is the one home of these fields; nothing else copies them one by one.
#pragma once

#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe {

// One mesh shape shared by all stages ("megatron" mode). Attention side: world = tp x cp x dp x pp;
// expert side (parallel folding): etp x ep x expert_dp() = tp x cp x dp.
struct Mesh {
  int tp = 1, cp = 1, ep = 1, etp = 1, dp = 1, pp = 1, vpp = 1;
  int micro_batch_size = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  bool ep_comm_overlap = false;           // EP all-to-all overlapped with another micro-batch
  double optimizer_offload_fraction = 0;  // share of the optimizer state kept in host memory
  Dispatch dispatch = Dispatch::kAlltoall;  // token dispatcher and flex backend
  CudaGraphs cuda_graphs;                   // CUDA graph implementation and captured modules

  // GPUs of one pipeline stage: tp x cp x dp.
  long long stage_gpus() const { return static_cast<long long>(tp) * cp * dp; }
  // Expert data-parallel size: stage_gpus / (ep x etp).
  long long expert_dp() const { return stage_gpus() / (static_cast<long long>(ep) * etp); }
  // GPUs of the whole plan: stage_gpus x pp.
  long long world_gpus() const { return stage_gpus() * pp; }
};

// Micro-batches per iteration: global_batch_size / (micro_batch_size x dp).
long long num_microbatches(const TrainingSpec& t, const Mesh& mesh);

// The mesh of a plan (recompute from its first stage; upstream flags are global).
Mesh mesh_of(const PlanSpec& plan);

// A plan with `mesh`'s fields; stage i runs on cluster group stage_groups[i] with layers[i] layers.
PlanSpec plan_of(const Mesh& mesh, const ClusterSpec& cluster, const std::vector<int>& stage_groups,
                 const std::vector<int>& layers);

}  // namespace hapmoe
