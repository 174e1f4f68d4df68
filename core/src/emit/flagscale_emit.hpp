// FlagScale configuration for a "hetero" plan: the train YAML (system / model / data, with the
// system.hetero block and per-stage recompute as FlagScale names them), the experiment YAML that
// runs it, the hostfile with `type=` tags (hosts in pipeline-stage order) and the warnings a user
// must read first (e.g. the cross-vendor communicator). Key names follow FlagScale's examples
// (examples/*/conf/train/hetero.yaml) and flagscale/train/arguments.py.
#pragma once

#include <string>
#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe {

struct FlagscaleConfig {
  std::string yaml;             // conf/train/<name>.yaml: system, model, data
  std::string experiment_yaml;  // conf/<name>.yaml: experiment (runner, hostfile, envs)
  std::string hostfile;         // "<host> slots=<gpus> type=<device type>", stage order
  std::vector<std::string> warnings;
};

// Hetero-mode launch notes independent of the emitter: the cross-vendor communicator a plan
// whose stages span GPU vendors needs.
std::vector<std::string> hetero_plan_warnings(const Scenario& s, const PlanSpec& plan);

// recompute_*_per_stage_micro_batch entries: runs of stages with one value, each
// [stages, num_microbatches, value] (FlagScale's [n_stages, n_mb0, v0, ...] sub-lists).
std::vector<std::vector<long long>> per_stage_recompute_runs(
    const std::vector<int>& value_per_stage, long long num_microbatches);

FlagscaleConfig flagscale_config(const Scenario& s, const PlanSpec& plan);

}  // namespace hapmoe
