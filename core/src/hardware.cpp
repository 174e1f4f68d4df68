#include "hapmoe/hardware.hpp"

#include <algorithm>

namespace hapmoe {

Link scale_up_link(const NodeGroup& g) {
  return {g.gpu.intra_node_gbps, g.gpu.intra_node_efficiency, kScaleUpLatencyS};
}

Link scale_out_link(const NodeGroup& g) {
  return {g.inter_node_gbps, g.gpu.inter_node_efficiency, kScaleOutLatencyS};
}

Link group_link(const NodeGroup& g, long long span) {
  return span <= g.gpus_per_node ? scale_up_link(g) : scale_out_link(g);
}

double ClusterSpec::link_between_groups_gbps(int a, int b) const {
  if (inter_group_gbps > 0) return inter_group_gbps;
  return std::min(groups[a].inter_node_gbps, groups[b].inter_node_gbps);
}

Link inter_group_link(const ClusterSpec& c, int group_a, int group_b) {
  const double eff = std::min(c.groups[group_a].gpu.inter_node_efficiency,
                              c.groups[group_b].gpu.inter_node_efficiency);
  return {c.link_between_groups_gbps(group_a, group_b), eff, kScaleOutLatencyS};
}

double peak_tflops(const GpuSpec& gpu, Precision p) {
  if (p == Precision::kFp8 && gpu.fp8_tflops) return *gpu.fp8_tflops;
  return gpu.bf16_tflops;
}

double gemm_flops_per_s(const GpuSpec& gpu, Precision p) {
  double rate = gpu.bf16_tflops * 1e12 * gpu.gemm_efficiency;
  if (p == Precision::kFp8 && gpu.fp8_tflops) rate *= gpu.fp8_gemm_speedup;
  return rate;
}

}  // namespace hapmoe
