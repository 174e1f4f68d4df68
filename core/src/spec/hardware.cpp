#include "hapmoe/hardware.hpp"

#include <algorithm>

namespace hapmoe {

Link scale_up_link(const NodeGroup& g) {
  return {g.gpu.intra_node_gbps, g.gpu.intra_node_efficiency, kScaleUpLatencyS};
}

Link scale_out_link(const NodeGroup& g) {
  return {g.inter_node_gbps, g.gpu.inter_node_efficiency, kScaleOutLatencyS};
}

Link alltoall_scale_up_link(const NodeGroup& g) {
  return {g.gpu.intra_node_gbps, g.gpu.alltoall_intra_node_efficiency, kScaleUpLatencyS};
}

Link alltoall_scale_out_link(const NodeGroup& g) {
  return {g.inter_node_gbps, g.gpu.alltoall_inter_node_efficiency, kScaleOutLatencyS};
}

Link dispatch_scale_up_link(const NodeGroup& g, Dispatch d) {
  Link l = alltoall_scale_up_link(g);
  if (is_flex(d)) l.efficiency = kFlexScaleUpEfficiency;
  return l;
}

Link dispatch_scale_out_link(const NodeGroup& g, Dispatch d) {
  Link l = alltoall_scale_out_link(g);
  if (is_flex(d)) l.efficiency = kFlexScaleOutEfficiency;
  return l;
}

int ep_ranks_per_node(const NodeGroup& g, int ep, int etp) {
  const long long span = static_cast<long long>(ep) * etp;
  return span <= g.gpus_per_node ? ep : std::max(1, g.gpus_per_node / etp);
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

std::string fp8_recipe_for(const std::string& requested, const std::vector<const GpuSpec*>& gpus) {
  auto everywhere = [&gpus](const std::string& r) {
    for (const GpuSpec* g : gpus) {
      if (std::find(g->fp8_recipes.begin(), g->fp8_recipes.end(), r) == g->fp8_recipes.end())
        return false;
    }
    return true;
  };
  if (!requested.empty()) return everywhere(requested) ? requested : std::string();
  if (gpus.empty()) return "";
  for (const std::string& r : gpus.front()->fp8_recipes) {
    if (everywhere(r)) return r;
  }
  return "";
}

bool efficiency_calibrated(const GpuSpec& gpu) {
  for (const std::string& f : gpu.assumed) {
    if (f == "gemm_efficiency") return false;
  }
  return true;
}

ErrorBand error_band(const std::vector<const GpuSpec*>& gpus) {
  ErrorBand b;
  for (const GpuSpec* g : gpus) {
    b.calibrated = b.calibrated && efficiency_calibrated(*g);
    if (g->error_fraction > b.fraction || b.basis.empty()) {
      b.fraction = std::max(b.fraction, g->error_fraction);
      b.basis = g->error_basis.empty() ? "uncalibrated GPU (" + g->name + "): efficiency constants assumed, no "
                                         "published run of it fitted"
                                       : g->error_basis;
    }
  }
  return b;
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
