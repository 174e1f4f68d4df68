#include "hetero/hetero_evaluate.hpp"

#include <numeric>

#include "hapmoe/hardware.hpp"
#include "hapmoe/hetero_plan.hpp"
#include "evaluate/plan_metrics.hpp"
#include "hetero/hetero_rules.hpp"

namespace hapmoe {

double reshard_pieces_per_rank(int from_shards, int to_shards) {
  if (from_shards < 1 || to_shards < 1) return 1;
  const int g = std::gcd(from_shards, to_shards);
  return static_cast<double>(from_shards + to_shards - g) / from_shards;
}

namespace {
// Sequence shards of a mesh as FlagScale's inter-mesh slicing counts them: tp x cp, or cp when
// both meshes have tp 1.
int seq_shards(int tp, int cp, int other_tp) { return tp == 1 && other_tp == 1 ? cp : tp * cp; }

// One past the last rank (inside its group) of stage i.
long long used_after(const std::vector<long long>& first_rank, const PlanSpec& p, int i) {
  return first_rank[i] + static_cast<long long>(stage_tp(p, i)) * stage_cp(p, i) * stage_dp(p, i);
}

Link with_pieces(Link l, double pieces) {
  l.latency_s *= pieces;
  return l;
}
}  // namespace

Link hetero_group_link(const NodeGroup& g, long long first_rank_a, long long last_rank_b) {
  // Both stages' ranks on one node: the scale-up link; else the group's scale-out link.
  return first_rank_a / g.gpus_per_node == last_rank_b / g.gpus_per_node ? scale_up_link(g) : scale_out_link(g);
}

StageLinks hetero_mesh_boundary(const ClusterSpec& c, int ga, const HeteroMeshShape& a, int gb,
                                const HeteroMeshShape& b) {
  const Link l = inter_group_link(c, ga, gb);
  const int sa = seq_shards(a.tp, a.cp, b.tp), sb = seq_shards(b.tp, b.cp, a.tp);
  StageLinks out;
  out.next = with_pieces(l, reshard_pieces_per_rank(sa, sb) * reshard_pieces_per_rank(a.dp, b.dp));
  out.prev = with_pieces(l, reshard_pieces_per_rank(sb, sa) * reshard_pieces_per_rank(b.dp, a.dp));
  return out;
}

std::vector<StageLinks> hetero_stage_links(const ClusterSpec& c, const PlanSpec& p) {
  const int n = static_cast<int>(p.stages.size());
  std::vector<StageLinks> links(n);
  std::vector<long long> first_rank(n, 0);  // of each stage inside its group
  std::vector<long long> used(c.groups.size(), 0);
  for (int i = 0; i < n; ++i) {
    first_rank[i] = used[p.stages[i].group];
    used[p.stages[i].group] +=
        static_cast<long long>(stage_tp(p, i)) * stage_cp(p, i) * stage_dp(p, i);
  }
  for (int i = 0; i + 1 < n; ++i) {
    const int ga = p.stages[i].group, gb = p.stages[i + 1].group;
    const HeteroMeshShape a{stage_tp(p, i), stage_cp(p, i), stage_dp(p, i)};
    const HeteroMeshShape b{stage_tp(p, i + 1), stage_cp(p, i + 1), stage_dp(p, i + 1)};
    if (ga != gb) {
      const StageLinks l = hetero_mesh_boundary(c, ga, a, gb, b);
      links[i].next = l.next;
      links[i + 1].prev = l.prev;
      continue;
    }
    const Link l = hetero_group_link(c.groups[ga], first_rank[i], used_after(first_rank, p, i + 1) - 1);
    const int sa = seq_shards(a.tp, a.cp, b.tp), sb = seq_shards(b.tp, b.cp, a.tp);
    links[i].next = with_pieces(l, reshard_pieces_per_rank(sa, sb) * reshard_pieces_per_rank(a.dp, b.dp));
    links[i + 1].prev = with_pieces(l, reshard_pieces_per_rank(sb, sa) * reshard_pieces_per_rank(b.dp, a.dp));
  }
  return links;
}

PlanEvaluation evaluate_hetero_with_cache(const Scenario& s, const PlanSpec& plan,
                                          HeteroModelCache& cache) {
  PlanEvaluation ev;
  ev.plan = plan;
  fill_stage_meshes(&ev.plan);
  const std::vector<StageLinks> links = hetero_stage_links(s.cluster, plan);
  std::vector<double> c, tail;
  int first = 0;
  std::vector<StageSite> sites;
  for (int i = 0; i < plan.pp; ++i) {
    const Mesh mesh = hetero_stage_mesh(plan, i);
    const StagePlan& st = plan.stages[i];
    ev.stages.push_back(cache.get(mesh, st.group)->cost(i, first, st.layers, links[i], mesh));
    first += st.layers;
    const StageCost& sc = ev.stages.back();
    c.push_back(sc.per_microbatch_s());
    tail.push_back(sc.tail_s());
    sites.push_back(StageSite{st.group, mesh.stage_gpus()});
  }
  const long long m = num_microbatches(s.training, hetero_stage_mesh(plan, 0));
  ev.time = pipeline_time(c, tail, m, 1);
  fill_plan_metrics(s, sites, stage_tp(plan, 0), m, &ev);
  return ev;
}

Expected<PlanEvaluation> evaluate_hetero_plan(const Scenario& s, const PlanSpec& plan) {
  if (auto v = check_hetero_plan_rules(s, plan)) {
    const std::string rule(v->rule);
    return Error{"rule:" + rule, "FlagScale hetero rule \"" + rule + "\": " + v->message, v->field};
  }
  HeteroModelCache cache(s);
  return evaluate_hetero_with_cache(s, plan, cache);
}

}  // namespace hapmoe
