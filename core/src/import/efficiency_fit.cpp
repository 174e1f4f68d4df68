#include "import/efficiency_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/field_schema.hpp"
#include "hapmoe/stage_cost.hpp"

namespace hapmoe {

namespace {

constexpr double kMinScale = 1.0 / 20, kMaxScale = 20;
constexpr int kBisectionSteps = 60;

double round4(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return std::strtod(buf, nullptr);
}

// `v` rounded and kept within the field table's range of the GPU field `name`, so that the
// fitted spec is one `validate` accepts (a host time of 10^5 us divided by 1/20 is not).
double in_range(const char* name, double v) {
  const FieldDef* f = find_field(std::string("cluster.groups[].gpu.") + name);
  return f ? std::clamp(round4(v), f->min, f->max) : round4(v);
}

double eff(const char* name, double e, double k) { return in_range(name, e * k); }

Scenario with_gpu(const Scenario& s, const std::string& gpu_id, const GpuSpec& gpu) {
  Scenario out = s;
  for (NodeGroup& g : out.cluster.groups) {
    if (g.gpu.id == gpu_id) g.gpu = gpu;
  }
  return out;
}

const GpuSpec* find_gpu(const Scenario& s, const PlanSpec& plan, const std::string& gpu_id) {
  for (const StagePlan& st : plan.stages) {
    if (s.cluster.groups[st.group].gpu.id == gpu_id) return &s.cluster.groups[st.group].gpu;
  }
  return nullptr;
}

}  // namespace

GpuSpec scale_efficiency(const GpuSpec& gpu, double k) {
  GpuSpec g = gpu;
  g.gemm_efficiency = eff("gemm_efficiency", gpu.gemm_efficiency, k);
  g.attention_efficiency = eff("attention_efficiency", gpu.attention_efficiency, k);
  g.hbm_efficiency = eff("hbm_efficiency", gpu.hbm_efficiency, k);
  g.intra_node_efficiency = eff("intra_node_efficiency", gpu.intra_node_efficiency, k);
  g.inter_node_efficiency = eff("inter_node_efficiency", gpu.inter_node_efficiency, k);
  g.alltoall_intra_node_efficiency = eff("alltoall_intra_node_efficiency", gpu.alltoall_intra_node_efficiency, k);
  g.alltoall_inter_node_efficiency = eff("alltoall_inter_node_efficiency", gpu.alltoall_inter_node_efficiency, k);
  g.host_launch_us = in_range("host_launch_us", gpu.host_launch_us / k);
  return g;
}

Expected<EfficiencyFit> fit_efficiency(const Scenario& s, const PlanSpec& plan, const std::string& gpu_id,
                                       double target_iteration_s) {
  const GpuSpec* gpu = find_gpu(s, plan, gpu_id);
  if (!gpu) return Error{"bad_value", "no stage of the plan runs on GPU \"" + gpu_id + "\"", "plan.stages"};
  auto time_at = [&](double k) -> Expected<double> {
    const auto ev = evaluate_plan(with_gpu(s, gpu_id, scale_efficiency(*gpu, k)), plan);
    if (!ev) return ev.error();
    return ev->metrics.iteration_time_s;
  };
  const auto base = evaluate_plan(s, plan);
  if (!base) return base.error();
  EfficiencyFit fit;
  fit.analytical_iteration_s = base->metrics.iteration_time_s;
  double lo = std::log(kMinScale), hi = std::log(kMaxScale);  // time(lo) >= time(hi)
  for (int i = 0; i < kBisectionSteps; ++i) {
    const double mid = (lo + hi) / 2;
    const auto t = time_at(std::exp(mid));
    if (!t) return t.error();
    (t.value() > target_iteration_s ? lo : hi) = mid;
  }
  fit.scale = round4(std::exp((lo + hi) / 2));
  fit.gpu = scale_efficiency(*gpu, fit.scale);
  const auto t = time_at(fit.scale);
  if (!t) return t.error();
  fit.fitted_iteration_s = t.value();
  fit.reached = std::fabs(fit.fitted_iteration_s - target_iteration_s) <= 0.01 * target_iteration_s;
  return fit;
}

Expected<double> fit_reserved_memory_gib(const Scenario& s, const PlanSpec& plan, const std::string& gpu_id,
                                         const std::vector<RankPeak>& peaks) {
  const auto ev = evaluate_plan(s, plan);
  if (!ev) return ev.error();
  const long long stage_gpus = static_cast<long long>(plan.tp) * plan.cp * plan.dp;
  double best = -1;
  const GpuSpec* gpu = nullptr;
  for (const RankPeak& p : peaks) {
    const long long stage = p.rank / stage_gpus;
    if (stage >= plan.pp) continue;
    const GpuSpec& g = s.cluster.groups[plan.stages[stage].group].gpu;
    if (g.id != gpu_id) continue;
    // Everything the model allocates on that stage except the GPU's own reserved memory.
    const double allocated_gib = ev->stages[stage].peak_bytes() / kGiB - g.reserved_memory_gib;
    best = std::max(best, p.max_reserved_gib - allocated_gib);
    gpu = &g;
  }
  if (!gpu) return Error{"bad_value", "no memory line of a rank on a \"" + gpu_id + "\" stage", "log"};
  return std::clamp(round4(best), 0.0, round4(gpu->memory_gib * 0.999));
}

}  // namespace hapmoe
