// Validity rules of a "hetero" plan, one named function each, as FlagScale enforces them
// (flagscale/train/arguments.py FSTrainArguments.pre_validate_args; flagscale/train/hetero/
// parallel_context.py ParallelContext, ProcessMesh, RankMapper; the Megatron-LM arguments patch).
// The search, `evaluate` and the tests call these; a rule returns nullopt when the plan passes.
#pragma once

#include "evaluate/rules.hpp"

namespace hapmoe {

// No virtual pipeline: "virtual pipeline not support now!"
RuleResult rule_hetero_no_vpp(const Scenario& s, const PlanSpec& p);
// No EP overlap: Megatron allows --overlap-moe-expert-parallel-comm at pp > 1 only with vpp > 1
// (transformer_config.py), which hetero mode lacks, and the FlagScale config carries no such flag.
RuleResult rule_hetero_no_ep_overlap(const Scenario& s, const PlanSpec& p);
// "all hetero_process_meshes_cp ... should be the same!"
RuleResult rule_hetero_cp_equal(const Scenario& s, const PlanSpec& p);
// ParallelContext asserts context_parallel_size == 1: "Context parallelism is not supported."
RuleResult rule_hetero_cp_unsupported(const Scenario& s, const PlanSpec& p);
// pipeline_model_parallel_size == sum of the meshes' PP.
RuleResult rule_hetero_pp_sum(const Scenario& s, const PlanSpec& p);
// Mesh i's micro-batch is DP0 x mbs / DPi: DP0 x mbs divisible by every DPi.
RuleResult rule_hetero_micro_batch_divisible(const Scenario& s, const PlanSpec& p);
// Tied embeddings or MTP: the first and last stage share the embedding, so equal TP.
RuleResult rule_hetero_tied_first_last_tp(const Scenario& s, const PlanSpec& p);
// Tied embeddings or MTP with the distributed optimizer and different first/last DP: one DP
// divides the other (and --use-partial-reduce-for-shared-embedding, which the emitter sets).
RuleResult rule_hetero_tied_first_last_dp(const Scenario& s, const PlanSpec& p);
// RankMapper sorts ranks by the first index of their device type in hetero_device_types, so the
// meshes of one GPU type must be adjacent in the pipeline.
RuleResult rule_hetero_device_types_adjacent(const Scenario& s, const PlanSpec& p);
// The meshes on a group use at most its GPUs, and whole nodes (the hostfile lists whole hosts
// and FlagScale requires world size == sum of tp x cp x dp x pp over the meshes).
RuleResult rule_hetero_mesh_gpus(const Scenario& s, const PlanSpec& p);
// Per-stage recompute is FlagScale's per-stage full-recompute switch: either one recompute for
// every stage, or each stage "none" or "full".
RuleResult rule_hetero_recompute_per_stage(const Scenario& s, const PlanSpec& p);
// FlagScale's pinned Megatron-LM (8479eb35 + its patches) has no --moe-flex-dispatcher-backend
// and no --cuda-graph-impl: hetero plans use the alltoall or allgather dispatcher and no graphs.
RuleResult rule_hetero_flagscale_dispatcher(const Scenario& s, const PlanSpec& p);
RuleResult rule_hetero_flagscale_no_cuda_graphs(const Scenario& s, const PlanSpec& p);

// Every rule for a hetero plan: stage count and groups, layers, the hetero rules above, then
// Megatron's mesh rules and the group rules inside each mesh (with that mesh's TP, CP, EP, ETP,
// DP and micro-batch), as FlagScale applies them per mesh.
RuleResult check_hetero_plan_rules(const Scenario& s, const PlanSpec& p);

}  // namespace hapmoe
