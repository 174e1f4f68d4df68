#include "hapmoe/hetero_plan.hpp"

namespace hapmoe {

namespace {
int own_or(int own, int plan_value) { return own > 0 ? own : plan_value; }
}  // namespace

bool is_hetero_plan(const PlanSpec& p, std::optional<Runtime> runtime) {
  if (!runtime) runtime = p.runtime;
  return has_stage_meshes(p) || runtime == Runtime::kFlagScale;
}

bool has_stage_meshes(const PlanSpec& p) {
  for (const StagePlan& st : p.stages) {
    if (st.tp > 0 || st.cp > 0 || st.dp > 0 || st.ep > 0 || st.etp > 0) return true;
  }
  return false;
}

int stage_tp(const PlanSpec& p, int i) { return own_or(p.stages[i].tp, p.tp); }
int stage_cp(const PlanSpec& p, int i) { return own_or(p.stages[i].cp, p.cp); }
int stage_dp(const PlanSpec& p, int i) { return own_or(p.stages[i].dp, p.dp); }
int stage_ep(const PlanSpec& p, int i) { return own_or(p.stages[i].ep, p.ep); }
int stage_etp(const PlanSpec& p, int i) { return own_or(p.stages[i].etp, p.etp); }

std::vector<HeteroMesh> hetero_meshes(const PlanSpec& p) {
  std::vector<HeteroMesh> out;
  for (int i = 0; i < static_cast<int>(p.stages.size()); ++i) {
    const HeteroMesh m{p.stages[i].group,
                       stage_tp(p, i),
                       stage_cp(p, i),
                       stage_ep(p, i),
                       stage_etp(p, i),
                       stage_dp(p, i),
                       1,
                       i};
    if (!out.empty()) {
      HeteroMesh& b = out.back();
      if (b.group == m.group && b.tp == m.tp && b.cp == m.cp && b.ep == m.ep && b.etp == m.etp &&
          b.dp == m.dp) {
        ++b.pp;
        continue;
      }
    }
    out.push_back(m);
  }
  return out;
}

int hetero_micro_batch(int dp0, int micro_batch_size, int dp) {
  return static_cast<int>(static_cast<long long>(dp0) * micro_batch_size / dp);
}

Mesh hetero_stage_mesh(const PlanSpec& p, int i) {
  Mesh m;
  m.tp = stage_tp(p, i);
  m.cp = stage_cp(p, i);
  m.ep = stage_ep(p, i);
  m.etp = stage_etp(p, i);
  m.dp = stage_dp(p, i);
  m.pp = p.pp;
  m.vpp = 1;
  m.micro_batch_size =
      hetero_micro_batch(p.stages.empty() ? p.dp : stage_dp(p, 0), p.micro_batch_size, m.dp);
  m.sequence_parallel = m.tp > 1;
  m.recompute = p.stages[i].recompute;
  m.optimizer_offload_fraction = p.optimizer_offload_fraction;  // one fraction for the whole plan
  m.dispatch = p.dispatch;
  m.cuda_graphs = p.cuda_graphs;
  return m;
}

std::string device_type_of(const GpuSpec& gpu) {
  std::string t = gpu.id.empty() || gpu.id == "custom" ? gpu.name : gpu.id;
  for (char& c : t) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) c = '_';
  }
  return t.empty() ? "gpu" : t;
}

void fill_stage_meshes(PlanSpec* p) {
  for (int i = 0; i < static_cast<int>(p->stages.size()); ++i) {
    StagePlan& st = p->stages[i];
    st.tp = stage_tp(*p, i);
    st.cp = stage_cp(*p, i);
    st.dp = stage_dp(*p, i);
    st.ep = stage_ep(*p, i);
    st.etp = stage_etp(*p, i);
  }
}

}  // namespace hapmoe
