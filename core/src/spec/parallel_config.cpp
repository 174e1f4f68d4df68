#include "hapmoe/parallel_config.hpp"

namespace hapmoe {

long long num_microbatches(const TrainingSpec& t, const Mesh& mesh) {
  return t.global_batch_size / (static_cast<long long>(mesh.micro_batch_size) * mesh.dp);
}

Mesh mesh_of(const PlanSpec& p) {
  Mesh m;
  m.tp = p.tp;
  m.cp = p.cp;
  m.ep = p.ep;
  m.etp = p.etp;
  m.dp = p.dp;
  m.pp = p.pp;
  m.vpp = p.vpp;
  m.micro_batch_size = p.micro_batch_size;
  m.sequence_parallel = p.sequence_parallel;
  m.recompute = p.stages.empty() ? Recompute::kNone : p.stages.front().recompute;
  m.ep_comm_overlap = p.ep_comm_overlap;
  m.optimizer_offload_fraction = p.optimizer_offload_fraction;
  m.dispatch = p.dispatch;
  m.cuda_graphs = p.cuda_graphs;
  return m;
}

PlanSpec plan_of(const Mesh& mesh, const ClusterSpec& cluster, const std::vector<int>& stage_groups,
                 const std::vector<int>& layers) {
  PlanSpec p;
  p.tp = mesh.tp;
  p.cp = mesh.cp;
  p.pp = mesh.pp;
  p.dp = mesh.dp;
  p.ep = mesh.ep;
  p.etp = mesh.etp;
  p.vpp = mesh.vpp;
  p.micro_batch_size = mesh.micro_batch_size;
  p.sequence_parallel = mesh.sequence_parallel;
  p.ep_comm_overlap = mesh.ep_comm_overlap;
  p.optimizer_offload_fraction = mesh.optimizer_offload_fraction;
  p.dispatch = mesh.dispatch;
  p.cuda_graphs = mesh.cuda_graphs;
  p.stages.reserve(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    const int g = stage_groups[i];
    p.stages.push_back({cluster.groups[g].gpu.id, g, layers[i], mesh.recompute});
  }
  return p;
}

}  // namespace hapmoe
