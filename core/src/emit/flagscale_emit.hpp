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

// The FlagScale release the emitted config needs, as the YAML's second line: heterogeneous MoE
// training across chips (system.hetero, FlagCX) came with v0.8.0 (its release notes, 2025/04);
// v1.0.0-alpha.0 (2026/01) moved multi-chip support into plugins and keeps the older layout on
// its main-legacy branch.
inline constexpr const char* kFlagScaleNeeds =
    "# Needs FlagScale v0.8.0 or newer of the v0.x line (release/v0.9.0, or main-legacy after v1.0.0-alpha.0).";

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
