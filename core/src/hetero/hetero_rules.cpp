#include "hetero/hetero_rules.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "hapmoe/hetero_plan.hpp"

namespace hapmoe {

namespace {
RuleResult violation(const char* rule, std::string field, std::string message) {
  return RuleViolation{rule, std::move(message), std::move(field)};
}
std::string str(long long v) { return std::to_string(v); }
std::string stage_field(int i, const char* name) {
  return "plan.stages[" + std::to_string(i) + "]." + name;
}
bool shares_embedding(const Scenario& s) {
  return !s.model.untie_embeddings_and_output_weights || s.model.mtp_num_layers > 0;
}
}  // namespace

RuleResult rule_hetero_no_vpp(const Scenario&, const PlanSpec& p) {
  if (p.vpp == 1) return std::nullopt;
  return violation("hetero_no_vpp", "plan.vpp",
                   "FlagScale hetero mode has no virtual pipeline (vpp must be 1)");
}

RuleResult rule_hetero_no_ep_overlap(const Scenario&, const PlanSpec& p) {
  if (!p.ep_comm_overlap) return std::nullopt;
  return violation("hetero_no_ep_overlap", "plan.ep_comm_overlap",
                   "ep_comm_overlap is not available in hetero mode: Megatron's "
                   "--overlap-moe-expert-parallel-comm needs vpp > 1 when pp > 1, FlagScale's hetero "
                   "mode has no virtual pipeline, and its config is emitted without the flag");
}

RuleResult rule_hetero_cp_equal(const Scenario&, const PlanSpec& p) {
  for (int i = 1; i < static_cast<int>(p.stages.size()); ++i) {
    if (stage_cp(p, i) != stage_cp(p, 0)) {
      return violation("hetero_cp_equal", stage_field(i, "cp"),
                       "every process mesh must have the same cp (stage 0 has " +
                           str(stage_cp(p, 0)) + ", stage " + str(i) + " has " +
                           str(stage_cp(p, i)) + ")");
    }
  }
  return std::nullopt;
}

RuleResult rule_hetero_cp_unsupported(const Scenario&, const PlanSpec& p) {
  for (int i = 0; i < static_cast<int>(p.stages.size()); ++i) {
    if (stage_cp(p, i) != 1) {
      return violation("hetero_cp_unsupported", stage_field(i, "cp"),
                       "FlagScale's heterogeneous parallel context supports cp = 1 only");
    }
  }
  return std::nullopt;
}

RuleResult rule_hetero_pp_sum(const Scenario&, const PlanSpec& p) {
  long long sum = 0;
  for (const HeteroMesh& m : hetero_meshes(p)) sum += m.pp;
  if (sum == p.pp) return std::nullopt;
  return violation(
      "hetero_pp_sum", "plan.pp",
      "pipeline size " + str(p.pp) + " must equal the sum of the meshes' pp (" + str(sum) + ")");
}

RuleResult rule_hetero_micro_batch_divisible(const Scenario&, const PlanSpec& p) {
  if (p.stages.empty()) return std::nullopt;
  const long long dp0_mbs = static_cast<long long>(stage_dp(p, 0)) * p.micro_batch_size;
  for (int i = 0; i < static_cast<int>(p.stages.size()); ++i) {
    if (dp0_mbs % stage_dp(p, i) != 0) {
      return violation("hetero_micro_batch_divisible", stage_field(i, "dp"),
                       "dp of mesh 0 x micro_batch_size (" + str(dp0_mbs) +
                           ") must be divisible by every mesh's dp (" + str(stage_dp(p, i)) +
                           "): mesh i runs micro-batches of dp0 x mbs / dp_i sequences");
    }
  }
  return std::nullopt;
}

RuleResult rule_hetero_tied_first_last_tp(const Scenario& s, const PlanSpec& p) {
  if (!shares_embedding(s) || p.stages.empty()) return std::nullopt;
  const int last = static_cast<int>(p.stages.size()) - 1;
  if (stage_tp(p, 0) == stage_tp(p, last)) return std::nullopt;
  return violation("hetero_tied_first_last_tp", stage_field(last, "tp"),
                   "with tied embeddings or MTP the first and last stage share the embedding: "
                   "their tp must be equal (" +
                       str(stage_tp(p, 0)) + " vs " + str(stage_tp(p, last)) + ")");
}

RuleResult rule_hetero_tied_first_last_dp(const Scenario& s, const PlanSpec& p) {
  if (!shares_embedding(s) || p.stages.empty() || !s.training.use_distributed_optimizer)
    return std::nullopt;
  const int last = static_cast<int>(p.stages.size()) - 1;
  const int a = stage_dp(p, 0), b = stage_dp(p, last);
  if (a == b || a % b == 0 || b % a == 0) return std::nullopt;
  return violation(
      "hetero_tied_first_last_dp", stage_field(last, "dp"),
      "with tied embeddings or MTP and the distributed optimizer, the first and last dp (" +
          str(a) + ", " + str(b) + ") must divide one another");
}

RuleResult rule_hetero_device_types_adjacent(const Scenario& s, const PlanSpec& p) {
  std::vector<std::string> seen;
  for (const HeteroMesh& m : hetero_meshes(p)) {
    if (m.group < 0 || m.group >= static_cast<int>(s.cluster.groups.size())) continue;
    const std::string type = device_type_of(s.cluster.groups[m.group].gpu);
    if (!seen.empty() && seen.back() == type) continue;
    if (std::find(seen.begin(), seen.end(), type) != seen.end()) {
      return violation("hetero_device_types_adjacent", stage_field(m.first_stage, "group"),
                       "meshes of device type \"" + type +
                           "\" are not adjacent: FlagScale orders ranks by device type, so one "
                           "type's meshes must "
                           "follow one another");
    }
    seen.push_back(type);
  }
  return std::nullopt;
}

RuleResult rule_hetero_mesh_gpus(const Scenario& s, const PlanSpec& p) {
  std::vector<long long> used(s.cluster.groups.size(), 0);
  for (const HeteroMesh& m : hetero_meshes(p)) {
    if (m.group >= 0 && m.group < static_cast<int>(used.size())) used[m.group] += m.gpus();
  }
  for (size_t g = 0; g < used.size(); ++g) {
    const NodeGroup& ng = s.cluster.groups[g];
    if (used[g] > ng.gpus()) {
      return violation("hetero_mesh_gpus", "plan.stages",
                       "meshes on group " + str(static_cast<long long>(g)) + " need " +
                           str(used[g]) + " GPUs (tp x cp x dp per stage), the group has " +
                           str(ng.gpus()));
    }
    if (used[g] % ng.gpus_per_node != 0) {
      return violation("hetero_mesh_gpus", "plan.stages",
                       "meshes on group " + str(static_cast<long long>(g)) + " use " +
                           str(used[g]) + " GPUs: whole nodes of " + str(ng.gpus_per_node) +
                           " are needed (the hostfile lists hosts)");
    }
  }
  return std::nullopt;
}

RuleResult rule_hetero_recompute_per_stage(const Scenario&, const PlanSpec& p) {
  bool uniform = true, full_or_none = true;
  for (const StagePlan& st : p.stages) {
    uniform = uniform && st.recompute == p.stages.front().recompute;
    full_or_none =
        full_or_none && (st.recompute == Recompute::kNone || st.recompute == Recompute::kFull);
  }
  if (uniform || full_or_none) return std::nullopt;
  return violation("hetero_recompute_per_stage", "plan.stages",
                   "per-stage recompute in FlagScale switches full recompute on or off per stage: "
                   "use one recompute "
                   "for all stages, or \"none\"/\"full\" per stage");
}

RuleResult rule_hetero_flagscale_dispatcher(const Scenario& s, const PlanSpec& p) {
  if (!s.model.is_moe() || !is_flex(p.dispatch)) return std::nullopt;
  return violation("hetero_flagscale_dispatcher", "plan.moe_token_dispatcher_type",
                   "FlagScale's Megatron-LM has no --moe-flex-dispatcher-backend: hetero plans use the alltoall "
                   "or allgather dispatcher");
}

RuleResult rule_hetero_flagscale_no_cuda_graphs(const Scenario&, const PlanSpec& p) {
  if (!p.cuda_graphs.any()) return std::nullopt;
  return violation("hetero_flagscale_no_cuda_graphs", "plan.cuda_graph_impl",
                   "FlagScale's Megatron-LM has no --cuda-graph-impl: hetero plans run without CUDA graphs");
}

RuleResult check_hetero_plan_rules(const Scenario& s, const PlanSpec& p) {
  if (auto v = rule_stage_groups_valid(s, p)) return v;
  using Rule = RuleResult (*)(const Scenario&, const PlanSpec&);
  static constexpr Rule kRules[] = {rule_stage_layers_at_least_vpp,
                                    rule_layers_sum,
                                    rule_hetero_no_vpp,
                                    rule_hetero_no_ep_overlap,
                                    rule_hetero_cp_equal,
                                    rule_hetero_cp_unsupported,
                                    rule_hetero_pp_sum,
                                    rule_hetero_micro_batch_divisible,
                                    rule_hetero_tied_first_last_tp,
                                    rule_hetero_tied_first_last_dp,
                                    rule_hetero_device_types_adjacent,
                                    rule_hetero_mesh_gpus,
                                    rule_hetero_recompute_per_stage,
                                    rule_hetero_flagscale_dispatcher,
                                    rule_hetero_flagscale_no_cuda_graphs};
  for (Rule r : kRules) {
    if (auto v = r(s, p)) return v;
  }
  for (const HeteroMesh& m : hetero_meshes(p)) {
    const Mesh x = hetero_stage_mesh(p, m.first_stage);
    RuleResult v = check_mesh_rules(s, x);
    if (!v) v = check_group_rules(s, x, m.group);
    if (v) {
      v->message = "mesh of stage " + str(m.first_stage) + ": " + v->message;
      v->field = stage_field(m.first_stage, v->field.substr(v->field.rfind('.') + 1).c_str());
      return v;
    }
  }
  return std::nullopt;
}

}  // namespace hapmoe
