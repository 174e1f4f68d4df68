// A "hetero" plan (FlagScale's heterogeneous Megatron): the pipeline is a sequence of process
// meshes, each a block of consecutive stages on one node group with its own TP, CP, EP, ETP, DP.
// Global DP is mesh 0's; mesh i runs micro-batches of DP0 x mbs / DPi sequences, so every mesh
// sees the same tokens per micro-batch and the same number of micro-batches
// (FlagScale flagscale/train/arguments.py, FSTrainArguments.pre_validate_args).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hapmoe/parallel_config.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

// One FlagScale process mesh: `pp` consecutive stages starting at `first_stage`.
struct HeteroMesh {
  int group = 0;
  int tp = 1, cp = 1, ep = 1, etp = 1, dp = 1, pp = 1;
  int first_stage = 0;
  long long gpus() const { return static_cast<long long>(tp) * cp * dp * pp; }
};

// True when a stage carries its own mesh field (the plan is a hetero plan whatever the mode).
bool has_stage_meshes(const PlanSpec& p);

// True when the plan is costed and emitted as a hetero plan: it runs on FlagScale (`runtime`,
// else the plan's own runtime) or a stage carries its own mesh field.
bool is_hetero_plan(const PlanSpec& p, std::optional<Runtime> runtime = std::nullopt);

// Stage i's own value of a mesh field, falling back to the plan's.
int stage_tp(const PlanSpec& p, int i);
int stage_cp(const PlanSpec& p, int i);
int stage_dp(const PlanSpec& p, int i);
int stage_ep(const PlanSpec& p, int i);
int stage_etp(const PlanSpec& p, int i);

// The meshes of a plan in pipeline order: maximal runs of stages with the same group and mesh.
std::vector<HeteroMesh> hetero_meshes(const PlanSpec& p);

// Micro-batch of a mesh with dp ranks: dp0 x mbs / dp (integer when the plan passes
// hetero_micro_batch_divisible).
int hetero_micro_batch(int dp0, int micro_batch_size, int dp);

// The Mesh stage i is costed with: its own tp/cp/ep/etp/dp, the rescaled micro-batch, the
// whole pipeline's pp, no VPP, SP when its tp > 1 (FlagScale turns SP off at tp 1), its recompute.
Mesh hetero_stage_mesh(const PlanSpec& p, int i);

// FlagScale device type of a GPU (hostfile `type=`, hetero_device_types): its preset id, or for a
// custom GPU its name with characters other than [A-Za-z0-9_.-] replaced by '_'.
std::string device_type_of(const GpuSpec& gpu);

// Sets every stage's own mesh fields from the plan's where they are unset (0).
void fill_stage_meshes(PlanSpec* p);

}  // namespace hapmoe
