#include "evaluate/plan_metrics.hpp"

#include "evaluate/objective.hpp"
#include "hapmoe/cost_memory.hpp"
#include "hapmoe/hardware.hpp"
#include "hapmoe/model_shape.hpp"

namespace hapmoe {

void fill_plan_metrics(const Scenario& s, const std::vector<StageSite>& sites, int flops_tp, long long microbatches,
                       PlanEvaluation* ev) {
  PlanMetrics& x = ev->metrics;
  x.iteration_time_s = ev->time.iteration_s;
  x.num_microbatches = microbatches;
  x.gpus_used = 0;
  double peak = 0;
  std::vector<const GpuSpec*> gpus;  // one per stage (error_band)
  for (size_t i = 0; i < sites.size(); ++i) {
    const GpuSpec& gpu = s.cluster.groups[sites[i].group].gpu;
    x.gpus_used += sites[i].gpus;
    peak += peak_tflops(gpu, s.training.precision) * 1e12 * static_cast<double>(sites[i].gpus);
    x.peak_memory_gib.push_back(ev->stages[i].peak_bytes() / kGiB);
    x.memory_capacity_gib.push_back(ev->stages[i].capacity_bytes / kGiB);
    x.fits_memory = x.fits_memory && ev->stages[i].fits();
    gpus.push_back(&gpu);
  }
  x.gpus_idle = s.cluster.total_gpus() - x.gpus_used;
  const double tokens = static_cast<double>(s.training.global_batch_size) * s.training.seq_length;
  x.tokens_per_s = tokens / x.iteration_time_s;
  x.tokens_per_s_per_gpu = x.tokens_per_s / static_cast<double>(x.gpus_used);
  const double flops = megatron_model_flops(s.model, flops_tp, static_cast<double>(s.training.global_batch_size),
                                            s.training.seq_length);
  x.tflops_per_gpu = flops / x.iteration_time_s / static_cast<double>(x.gpus_used) / 1e12;
  const ErrorBand band = error_band(gpus);
  x.iteration_time_error_fraction = band.fraction;
  x.error_basis = band.basis;
  x.error_calibrated = band.calibrated;
  x.mfu = flops / x.iteration_time_s / peak;
  x.bubble_fraction = ev->time.bubble_fraction;
  std::vector<long long> used(s.cluster.groups.size(), 0);
  for (const StageSite& site : sites) used[site.group] += site.gpus;
  const double rate = billed_rate_per_hour(s.cluster, used);
  x.gpus_used_per_group = used;
  x.priced = s.cluster.priced();
  if (x.priced) {
    x.cost_per_hour = rate;
    x.cost_per_million_tokens = cost_per_million_tokens(s.training, rate, x.iteration_time_s);
  }
  x.objective_value = objective_value(s.search, rate, x.iteration_time_s);
  if (s.training.train_tokens > 0) {
    x.train_hours = s.training.train_tokens / x.tokens_per_s / 3600;
    x.train_cost = x.train_hours * x.cost_per_hour;
  }
}

}  // namespace hapmoe
