#include "hapmoe/evaluate.hpp"

#include <cmath>
#include <memory>

#include "hapmoe/hardware.hpp"
#include "evaluate/plan_metrics.hpp"
#include "evaluate/rules.hpp"

namespace hapmoe {

std::vector<StageLinks> stage_links(const ClusterSpec& c, long long stage_gpus,
                                    const std::vector<int>& stage_groups) {
  std::vector<StageLinks> links;
  std::vector<long long> seen;
  stage_links(c, stage_gpus, stage_groups, &links, &seen);
  return links;
}

void stage_links(const ClusterSpec& c, long long stage_gpus, const std::vector<int>& stage_groups,
                 std::vector<StageLinks>* links, std::vector<long long>* seen) {
  const size_t n = stage_groups.size();
  links->assign(n, StageLinks{});
  seen->assign(c.groups.size(), 0);  // stages so far per group
  long long local = n > 0 ? (*seen)[stage_groups[0]]++ : 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    const long long next_local = (*seen)[stage_groups[i + 1]]++;
    const Link l = stage_link(c, stage_gpus, stage_groups[i], local, stage_groups[i + 1], next_local);
    (*links)[i].next = l;
    (*links)[i + 1].prev = l;
    local = next_local;
  }
}

Link stage_link(const ClusterSpec& c, long long stage_gpus, int ga, long long local_a, int gb, long long local_b) {
  if (ga != gb) return inter_group_link(c, ga, gb);
  const NodeGroup& g = c.groups[ga];
  const long long node_a = local_a * stage_gpus / g.gpus_per_node;
  const long long node_b = local_b * stage_gpus / g.gpus_per_node;
  return (stage_gpus < g.gpus_per_node && node_a == node_b) ? scale_up_link(g) : scale_out_link(g);
}

PlanEvaluation evaluate_with_models(const Scenario& s, const PlanSpec& plan,
                                    const std::vector<const StageCostModel*>& models) {
  PlanEvaluation ev;
  ev.plan = plan;
  const Mesh mesh = mesh_of(plan);
  std::vector<int> groups;
  for (const auto& st : plan.stages) groups.push_back(st.group);
  const std::vector<StageLinks> links = stage_links(s.cluster, mesh.stage_gpus(), groups);
  std::vector<double> c, tail;
  int first = 0;
  for (int i = 0; i < plan.pp; ++i) {
    const StagePlan& st = plan.stages[i];
    ev.stages.push_back(models[st.group]->cost(i, first, st.layers, links[i], mesh));
    first += st.layers;
    c.push_back(ev.stages.back().per_microbatch_s());
    tail.push_back(ev.stages.back().tail_s());
  }
  const long long m = num_microbatches(s.training, mesh);
  ev.time = pipeline_time(c, tail, m, plan.vpp);

  std::vector<StageSite> sites;
  for (const StagePlan& st : plan.stages) sites.push_back(StageSite{st.group, mesh.stage_gpus()});
  fill_plan_metrics(s, sites, plan.tp, m, &ev);
  return ev;
}

std::optional<Timeline> plan_timeline(const PlanEvaluation& ev) {
  const long long m = ev.metrics.num_microbatches;
  const long long slots = static_cast<long long>(ev.stages.size()) * ev.plan.vpp;
  if (m < 1 || slots < 1 || m > kMaxTimelineChunkSlots / slots) return std::nullopt;
  std::vector<StageDurations> d;
  for (const StageCost& c : ev.stages) {
    StageDurations x;
    x.comm_forward_s = c.fwd_comm_s + c.pp_s / 2;
    x.comm_backward_s = c.tp_s + c.cp_s + c.ep_s - c.fwd_comm_s + c.pp_s / 2;
    x.forward_s = c.forward_s + x.comm_forward_s;
    x.backward_s = c.per_microbatch_s() - x.forward_s;
    x.dp_s = c.dp_s;
    x.optimizer_s = c.optimizer_s;
    d.push_back(x);
  }
  return build_timeline(d, m, ev.plan.vpp);
}


Expected<PlanEvaluation> evaluate_upstream_plan(const Scenario& s, const PlanSpec& plan) {
  if (auto v = check_plan_rules(s, plan)) {
    const std::string rule(v->rule);
    return Error{"rule:" + rule, "Megatron rule \"" + rule + "\": " + v->message, v->field};
  }
  const ModelShape shape = derive_model_shape(s.model, plan.tp);
  const Mesh mesh = mesh_of(plan);
  std::vector<std::unique_ptr<StageCostModel>> owned(s.cluster.groups.size());
  std::vector<const StageCostModel*> models(s.cluster.groups.size(), nullptr);
  for (const auto& st : plan.stages) {
    if (!owned[st.group]) {
      owned[st.group] = std::make_unique<StageCostModel>(s, shape, mesh, st.group);
      models[st.group] = owned[st.group].get();
    }
  }
  return evaluate_with_models(s, plan, models);
}

}  // namespace hapmoe
